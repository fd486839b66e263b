//! The helpers of the expression and template language: date arithmetic, rounding, the number
//! formats of the memo (yuan, hours, percentages) and Markdown escaping; the rule language calls
//! them from [`super::code`], and the memo's templates through [`super::jinja::environment`].
//! Rule expressions, rule texts and the memo's templates share them, so a policy author learns
//! one notation.

use minijinja::{Error as MjError, ErrorKind as MjErrorKind};

use crate::value::{Kind, Value};

/// The most whole numbers one `range(a, b)` gives, as many as minijinja's own `range` gives
/// templates: a search's candidates are bounded work.
pub const RANGE_MAX: i64 = 100_000;

/// The whole numbers from `from` up to `to`, `to` left out (none where `to <= from`); more
/// than [`RANGE_MAX`] of them is an error.
pub(crate) fn range(from: i64, to: i64) -> Result<Vec<i64>, MjError> {
    if to.saturating_sub(from) > RANGE_MAX {
        return Err(MjError::new(
            MjErrorKind::InvalidOperation,
            format!(
                "range({from}, {to}) would give {} numbers, more than the {RANGE_MAX} a range may give",
                i128::from(to) - i128::from(from)
            ),
        ));
    }
    Ok((from..to).collect())
}

/// Whole days from date `from` to date `to` (both `YYYY-MM-DD`); negative when `to` is earlier.
pub(crate) fn days_between(from: &str, to: &str) -> Result<i64, MjError> {
    let parse = |s: &str| {
        s.parse::<jiff::civil::Date>().map_err(|e| {
            MjError::new(
                MjErrorKind::InvalidOperation,
                format!("days_between: `{s}` is not a date YYYY-MM-DD ({e})"),
            )
        })
    };
    let (a, b) = (parse(from)?, parse(to)?);
    let span = a
        .until((jiff::Unit::Day, b))
        .map_err(|e| MjError::new(MjErrorKind::InvalidOperation, e.to_string()))?;
    Ok(i64::from(span.get_days()))
}

/// `1234567.891` → `1,234,568` (or with `digits` decimals).
#[must_use]
pub fn group_thousands(value: f64, digits: usize) -> String {
    // A whole number below 2^53 prints exactly as its integer (and `digits` zeros): the
    // common case (prices, bills, counts), without the float formatter's exact-digits search.
    let text = if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // whole, within 2^53, not negative
        let whole = value.abs() as u64;
        match digits {
            0 => whole.to_string(),
            _ => format!("{whole}.{:0<digits$}", ""),
        }
    } else {
        format!("{:.*}", digits, value.abs())
    };
    let (int, frac) = text
        .split_once('.')
        .map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    if value < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// `value` as a number for a format filter: a number, or `true`/`false` as 1 and 0.
fn number(value: &Value, filter: &str) -> Result<f64, MjError> {
    value.as_f64().ok_or_else(|| {
        MjError::new(
            MjErrorKind::InvalidOperation,
            format!(
                "`{filter}` expects a number, got {value} ({})",
                value.kind()
            ),
        )
    })
}

/// Most decimals `cny` and `num` write: an `f64` holds about 17 significant digits, so more
/// would print noise (and Rust's formatter panics at a precision of 65,536 or more).
pub const MAX_DECIMALS: usize = 20;

/// `digits` when a filter may write that many decimals; an error naming the filter otherwise.
fn decimals(digits: Option<usize>, filter: &str) -> Result<Option<usize>, MjError> {
    match digits {
        Some(d) if d > MAX_DECIMALS => Err(MjError::new(
            MjErrorKind::InvalidOperation,
            format!("`{filter}` writes 0 to {MAX_DECIMALS} decimals, not {d}"),
        )),
        d => Ok(d),
    }
}

/// Yuan: `¥12,345`; amounts under ¥100 keep two decimals (`¥2.50`, `¥29.44`).
pub(crate) fn cny(value: &Value, digits: Option<usize>) -> Result<String, MjError> {
    let digits = decimals(digits, "cny")?;
    let v = number(value, "cny")?;
    let digits = digits.unwrap_or(if v.abs() < 100.0 && v.fract() != 0.0 {
        2
    } else {
        0
    });
    Ok(format!("¥{}", group_thousands(v, digits)))
}

/// A number with thousands separators and `digits` decimals (default: none for whole numbers,
/// else up to two, trailing zeros dropped).
pub(crate) fn num(value: &Value, digits: Option<usize>) -> Result<String, MjError> {
    let digits = decimals(digits, "num")?;
    let v = number(value, "num")?;
    if let Some(digits) = digits {
        return Ok(group_thousands(v, digits));
    }
    let text = group_thousands(v, 2);
    Ok(text.trim_end_matches('0').trim_end_matches('.').to_owned())
}

/// Hours: `505 h`, one decimal when not whole.
pub(crate) fn hours(value: &Value) -> Result<String, MjError> {
    let v = number(value, "hours")?;
    let digits = usize::from((v - v.round()).abs() >= 0.05);
    Ok(format!("{} h", group_thousands(v, digits)))
}

/// A fraction as a percentage: `0.7014` → `70.1%`, `0.3` → `30%`.
pub(crate) fn pct(value: &Value) -> Result<String, MjError> {
    let v = number(value, "pct")? * 100.0;
    let digits = usize::from((v - v.round()).abs() >= 0.05);
    Ok(format!("{}%", group_thousands(v, digits)))
}

/// Scientific notation with three significant digits: `1.932e21` → `1.93e21`.
pub(crate) fn sci(value: &Value) -> Result<String, MjError> {
    Ok(format!("{:.2e}", number(value, "sci")?))
}

/// The month of a date: `2026-07-01` → `2026-07`.
pub(crate) fn month(value: &Value) -> Result<String, MjError> {
    value
        .as_str()
        .and_then(|s| s.parse::<jiff::civil::Date>().ok())
        .map(|d| d.strftime("%Y-%m").to_string())
        .ok_or_else(|| {
            MjError::new(
                MjErrorKind::InvalidOperation,
                format!("`month` needs a date (YYYY-MM-DD), not {value}"),
            )
        })
}

/// Escapes text so that Markdown renders it literally and no HTML or link gets through.
#[must_use]
pub fn md_escape(text: &str) -> String {
    // Control characters become `\u{1b}` first; the backslash is then escaped like any other.
    let text = crate::message::visible(text);
    escaped(&text, |b| {
        Some(match b {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'\n' | b'\r' => " ",
            b'\\' => "\\\\",
            b'`' => "\\`",
            b'*' => "\\*",
            b'_' => "\\_",
            b'[' => "\\[",
            b']' => "\\]",
            b'#' => "\\#",
            b'|' => "\\|",
            b'~' => "\\~",
            _ => return None,
        })
    })
}

/// The `md` filter: [`md_escape`] of a text, or the text as it is when it is escaped already.
pub fn md_filter(value: &Value) -> Result<Value, MjError> {
    escape_once(value, md_escape)
}

/// The `cell` filter: [`table_cell`] of a text, or the text as it is when it is escaped already.
pub fn cell_filter(value: &Value) -> Result<Value, MjError> {
    escape_once(value, table_cell)
}

/// `escape` of `value`'s text, or `value` itself when it is a safe string: a vendor's text of a
/// quote sheet, which the catalog holds Markdown-escaped (and so fit for a table cell too), and
/// which a second escape would show with its backslashes.
fn escape_once(value: &Value, escape: fn(&str) -> String) -> Result<Value, MjError> {
    if value.is_safe() {
        return Ok(value.clone());
    }
    let text = value
        .as_str()
        .ok_or_else(|| MjError::new(MjErrorKind::InvalidOperation, "value is not a string"))?;
    Ok(Value::from(escape(text)))
}

/// `text` with each ASCII byte for which `special` gives a replacement replaced by it; the
/// runs between are copied whole (an ASCII byte is never part of a longer UTF-8 character).
fn escaped(text: &str, special: impl Fn(u8) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if let Some(replacement) = special(b) {
            out.push_str(&text[start..i]);
            out.push_str(replacement);
            start = i + 1;
        }
    }
    out.push_str(&text[start..]);
    out
}

/// `2 | plural("GPU")` → `2 GPUs`, `1 | plural("GPU")` → `1 GPU`.
pub(crate) fn plural(value: &Value, noun: &str) -> Result<String, MjError> {
    let n = number(value, "plural")?;
    let count = group_thousands(n, 0);
    Ok(if (n - 1.0).abs() < f64::EPSILON {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    })
}

/// A rendered text template as one paragraph: every run of whitespace becomes one space,
/// except that whitespace between two East Asian wide characters (CJK ideographs, kana,
/// Hangul, full-width punctuation) disappears: Chinese puts no spaces between them, and a
/// folded YAML line break (`>-`) arrives here as a space. So a Chinese text may be wrapped
/// anywhere in its YAML (CSS Text 3 treats segment breaks the same way). And a Chinese
/// character next to a Latin letter or a digit gets one space between them (`变为 H100`,
/// `为 70B 模型`), however the sentence and the values put into it were written: the one
/// place the memos' Chinese spacing is decided.
#[must_use]
pub fn flow_text(text: &str) -> String {
    let flowed = flow_whitespace(text);
    if flowed.is_ascii() {
        flowed
    } else {
        spaced_between_scripts(&flowed)
    }
}

/// `text` with a space between each Han character (or kana, Hangul) and a Latin letter or
/// digit written against it.
fn spaced_between_scripts(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut before: Option<char> = None;
    for c in text.chars() {
        if let Some(b) = before
            && ((is_letter_of_cjk(b) && c.is_ascii_alphanumeric())
                || (b.is_ascii_alphanumeric() && is_letter_of_cjk(c)))
        {
            out.push(' ');
        }
        out.push(c);
        before = Some(c);
    }
    out
}

/// A Han character, kana or Hangul: a letter of CJK text, not its punctuation or a full-width
/// form of a Latin letter.
fn is_letter_of_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x3041..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0x20000..=0x3FFFD)
}

/// [`flow_text`]'s whitespace rule alone.
fn flow_whitespace(text: &str) -> String {
    if text.is_ascii() {
        // No wide characters: words joined by one space (the loop below, without its checks).
        let mut out = String::with_capacity(text.len());
        for word in text.split(char::is_whitespace).filter(|w| !w.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
        return out;
    }
    let mut rest = text.trim();
    let mut out = String::with_capacity(rest.len());
    // Words are copied whole; each run of whitespace between them becomes one space or none.
    while let Some(at) = rest.find(char::is_whitespace) {
        let (word, gap) = rest.split_at(at);
        out.push_str(word);
        rest = gap.trim_start();
        let before = out.chars().next_back();
        let after = rest.chars().next();
        // No space between two wide characters, nor next to full-width punctuation.
        if !((before.is_some_and(is_wide) && after.is_some_and(is_wide))
            || before.is_some_and(is_wide_punctuation)
            || after.is_some_and(is_wide_punctuation))
        {
            out.push(' ');
        }
    }
    out.push_str(rest);
    out
}

/// CJK and full-width punctuation (`，。：；（）、` and the like).
fn is_wide_punctuation(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

/// East Asian wide or full-width characters (the blocks Chinese text is written in).
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD)
}

/// Makes text safe inside a Markdown table cell: no pipes, HTML or line breaks.
#[must_use]
pub fn table_cell(text: &str) -> String {
    escaped(&crate::message::visible(text), |b| match b {
        b'|' => Some("\\|"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'\n' | b'\r' => Some(" "),
        _ => None,
    })
}

/// `list | each(map)`: each item of `list` replaced by `map`'s entry for it (a word for each
/// value, `['data', 'tensor'] | each({'data': '数据并行', 'tensor': '张量并行'})`); an item the
/// map has no entry for is an error.
pub(crate) fn each(list: &Value, map: &Value) -> Result<Value, MjError> {
    let invalid = |detail: String| MjError::new(MjErrorKind::InvalidOperation, detail);
    if map.kind() != Kind::Map {
        return Err(invalid(format!("`each` takes a map, not {}", map.kind())));
    }
    let items = list
        .try_iter()
        .ok_or_else(|| invalid(format!("`each` goes over a list, not {}", list.kind())))?;
    items
        .map(|item| match map.get_item(&item) {
            v if !v.is_undefined() => Ok(v),
            _ => Err(invalid(format!(
                "`each`: the map has no entry for {item:?}"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::from)
}

/// A short, readable rendering of any value: numbers to two decimals, maps as `key: value`.
pub(crate) fn brief(value: &Value) -> String {
    let mut out = String::new();
    write_brief(value, &mut out);
    out
}

/// [`brief`] of `value`, appended to `out`.
fn write_brief(value: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match value.kind() {
        Kind::Undefined | Kind::None => out.push_str("none"),
        Kind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        Kind::Number if value.is_integer() => {
            let _ = write!(out, "{value}");
        }
        Kind::Number => {
            let v = value.as_f64().unwrap_or(f64::NAN);
            let start = out.len();
            let _ = write!(out, "{v:.2}");
            let kept = out[start..]
                .trim_end_matches('0')
                .trim_end_matches('.')
                .len();
            out.truncate(start + kept);
        }
        Kind::Text => out.push_str(value.as_str().unwrap_or_default()),
        Kind::List => write_items(value, '[', ']', out, write_brief),
        Kind::Map => write_items(value, '{', '}', out, |key, out| {
            write_brief(key, out);
            out.push_str(": ");
            write_brief(&value.get_item(key), out);
        }),
    }
}

/// The items of `value` (a map's keys), each written by `each`, comma-separated in brackets.
fn write_items(
    value: &Value,
    open: char,
    close: char,
    out: &mut String,
    mut each: impl FnMut(&Value, &mut String),
) {
    out.push(open);
    for (i, item) in value.try_iter().into_iter().flatten().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(&item, out);
    }
    out.push(close);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_text_into_one_paragraph() {
        assert_eq!(flow_text("  a\n   b  c \n"), "a b c");
        // A line break between Chinese characters is not a space; one next to Latin text is.
        assert_eq!(
            flow_text("需要约\n  显存（模型状态\n 1,120 GB）"),
            "需要约显存（模型状态 1,120 GB）"
        );
        assert_eq!(flow_text("显存，\n分摊"), "显存，分摊");
        assert_eq!(flow_text("显存 （模型"), "显存（模型");
        assert_eq!(flow_text("库存。 H100 需要排期。"), "库存。H100 需要排期。");
        assert_eq!(
            flow_text("模型状态 1,120 GB， 分摊"),
            "模型状态 1,120 GB，分摊"
        );
        // Spaces typed on one line stay.
        assert_eq!(flow_text("8 张 GPU"), "8 张 GPU");
        // A Chinese character against a Latin letter or a digit gets a space, either way; not
        // against punctuation, a sign or a mark.
        assert_eq!(flow_text("变为H100"), "变为 H100");
        assert_eq!(flow_text("目前为70B 模型"), "目前为 70B 模型");
        assert_eq!(flow_text("8张GPU"), "8 张 GPU");
        assert_eq!(
            flow_text("（`h100-x8`）的**¥7,920**，共3台。"),
            "（`h100-x8`）的**¥7,920**，共 3 台。"
        );
        assert_eq!(flow_text("増値 VAT"), "増値 VAT");
    }

    /// `flow_text`'s whitespace rule written character by character, as it was first
    /// implemented, then the spacing between scripts.
    fn flow_text_by_chars(text: &str) -> String {
        let flowed = flow_whitespace_by_chars(text);
        if flowed.is_ascii() {
            flowed
        } else {
            spaced_between_scripts(&flowed)
        }
    }

    fn flow_whitespace_by_chars(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.trim().chars().peekable();
        while let Some(c) = chars.next() {
            if !c.is_whitespace() {
                out.push(c);
                continue;
            }
            while chars.peek().is_some_and(|next| next.is_whitespace()) {
                chars.next();
            }
            let (before, after) = (out.chars().next_back(), chars.peek().copied());
            if !((before.is_some_and(is_wide) && after.is_some_and(is_wide))
                || before.is_some_and(is_wide_punctuation)
                || after.is_some_and(is_wide_punctuation))
            {
                out.push(' ');
            }
        }
        out
    }

    proptest::proptest! {
        /// Copying words whole gives the same text as the rule applied character by character,
        /// on mixes of Latin, Chinese, full-width punctuation and every kind of whitespace.
        #[test]
        fn flowing_by_words_is_flowing_by_characters(
            text in "[a-z1-9 \\t\\n\u{3000}\u{a0}需要显存，。（）GB]{0,40}",
        ) {
            proptest::prop_assert_eq!(flow_text(&text), flow_text_by_chars(&text));
        }
    }

    proptest::proptest! {
        /// ASCII text (its own quicker path) flows as the character rule says, with every
        /// ASCII whitespace character, vertical tab and form feed included.
        #[test]
        fn ascii_text_flows_as_by_characters(text in "[a-z1-9,.( \t\n\r\x0b\x0c]{0,40}") {
            proptest::prop_assert_eq!(flow_text(&text), flow_text_by_chars(&text));
        }

        /// A whole number (its own quicker path) prints as the float formatter prints it,
        /// grouped in thousands.
        #[test]
        fn whole_numbers_print_as_the_formatter_does(
            whole in -9_007_199_254_740_991_i64..9_007_199_254_740_991,
            digits in 0usize..4,
        ) {
            #[allow(clippy::cast_precision_loss)] // within 2^53: exact
            let v = whole as f64;
            proptest::prop_assert_eq!(
                group_thousands(v, digits).replace(',', ""),
                format!("{v:.digits$}")
            );
        }
    }

    #[test]
    fn escapes_markdown_and_html() {
        assert_eq!(
            md_escape("<script>[x](http://e)|*a*"),
            "&lt;script&gt;\\[x\\](http://e)\\|\\*a\\*"
        );
        assert_eq!(md_escape("客服 7B"), "客服 7B");
        assert_eq!(
            md_escape("a\\b`c_d#e~f&g\r\n客"),
            "a\\\\b\\`c\\_d\\#e\\~f&amp;g  客"
        );
        assert_eq!(table_cell("a|b<c>\r\nd 客服"), "a\\|b&lt;c&gt;  d 客服");
    }
}
