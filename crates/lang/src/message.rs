//! What a message shows of what a person wrote: characters that would act on a terminal or a
//! page escaped, and the name they probably meant.

/// Whether `c` would act on a terminal or a page instead of showing: a control character (C0
/// but tab and line breaks, DEL, C1) or a bidirectional override or isolate (which reorders
/// what a reader sees, CVE-2021-42574).
#[must_use]
pub fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe_char`] shown as an escape, `\u{1b}` for ESC, as a careful
/// terminal program shows them: for messages and plain text, and for text escaped after (a
/// Markdown escape then doubles the backslash, so the page shows one).
#[must_use]
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    escaped_where(text, is_unsafe_char)
}

/// `text` with every character for which `unsafe_char` holds shown as its escape,
/// `\u{1b}` for ESC: [`visible`] with another choice of characters (a terminal's line, where
/// a line break or a tab of the rules is no more the program's own than an ESC).
#[must_use]
pub fn escaped_where(text: &str, unsafe_char: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    if !text.chars().any(&unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The longest word a did-you-mean is looked for: longer than any name a policy or profile uses.
pub const MAX_SUGGESTED_LEN: usize = 100;

/// The closest of `candidates` to `word`, if any is close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // A typo is about as long as the word meant. Jaro-Winkler takes time in the product of the
    // two lengths: a 200,000-letter name (found by the `folder` fuzz target) took seconds
    // against every name of the policy, for no suggestion anyone could use.
    if word.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_far_longer_than_any_name_gets_no_suggestion() {
        assert_eq!(suggest("budgt", ["budget", "usage"]), Some("budget"));
        // Found by the `folder` fuzz target: 195,404 letters took seconds to compare.
        let long = "o".repeat(195_404);
        assert_eq!(suggest(&long, ["one", "oo", "offer"]), None);
    }
}
