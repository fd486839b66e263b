//! A text template cut into raw text and tags (`{{ … }}`, `{% … %}`), with minijinja's
//! whitespace control applied to the raw text, so that the rule language can read the tags
//! itself: the names a text mentions, its fast form, the bounds on its size.
//!
//! minijinja still renders every template and is the meaning of one; this scanner restates its
//! lexer's rules for the syntax the rules configure ([`super::jinja::syntax`]: `trim_blocks`,
//! `lstrip_blocks`, `keep_trailing_newline`, the default delimiters):
//!
//! - `{%-`, `{{-`, `{#-` remove all whitespace before the tag; `-%}`, `-}}`, `-#}` all after it;
//! - a block tag or comment that ends without `-` or `+` also removes one newline after it
//!   (`trim_blocks`);
//! - a block tag or comment that starts a line (only spaces or tabs before it on the line)
//!   removes those (`lstrip_blocks`), unless it starts with `{%+`;
//! - a tag ends at the first `}}` or `%}` outside strings and brackets.
//!
//! `tests` renders templates both ways (`super::text`).

use std::ops::Range;

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'s> {
    /// Text written as it stands (whitespace control applied), never empty.
    Raw(&'s str),
    /// `{{ inner }}` or `{% inner %}`: the text between the delimiters and their whitespace
    /// marks, and where that text starts in the template.
    Tag {
        block: bool,
        inner: &'s str,
        at: usize,
    },
    /// `{% raw %}…{% endraw %}`: written as it stands, never read as tags.
    Verbatim(&'s str),
}

/// What the scanner cannot read: an unclosed tag or comment, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unclosed {
    pub what: &'static str,
    pub at: Range<usize>,
}

/// The segments of `source`, in order.
pub fn segments(source: &str) -> Result<Vec<Segment<'_>>, Unclosed> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    // Set by a tag that ended with `-`: the next raw text loses its leading whitespace.
    let mut trim_leading = false;
    loop {
        if trim_leading {
            pos += leading_whitespace(&source[pos..]);
        }
        let Some(start) = next_marker(bytes, pos) else {
            push_raw(&mut out, &source[pos..]);
            return Ok(out);
        };
        let marker = bytes[start + 1];
        let ws = bytes.get(start + 2).copied();
        let mut raw = &source[pos..start];
        match ws {
            Some(b'-') => raw = raw.trim_end(),
            Some(b'+') => {}
            _ if marker != b'{' && starts_line(&source[..start]) => raw = lstrip_block(raw),
            _ => {}
        }
        push_raw(&mut out, raw);
        let body = start + 2 + usize::from(matches!(ws, Some(b'-' | b'+')));
        if marker == b'#' {
            let Some(end) = source[body..].find("#}") else {
                return Err(Unclosed {
                    what: "a comment `{#` is not closed with `#}`",
                    at: start..source.len(),
                });
            };
            let close_ws = (body + end)
                .checked_sub(1)
                .filter(|&i| i >= body)
                .map(|i| bytes[i]);
            pos = body + end + 2;
            (pos, trim_leading) = tail(source, pos, close_ws);
        } else {
            let block = marker == b'%';
            if block && let Some((len, ws_start)) = raw_block_start(&source[body..]) {
                let (verbatim, next) = raw_block(source, body + len, ws_start, start)?;
                out.push(Segment::Verbatim(verbatim));
                pos = next.0;
                trim_leading = next.1;
                continue;
            }
            let close: &[u8] = if block { b"%}" } else { b"}}" };
            let Some((inner_end, close_ws, after)) = tag_end(bytes, body, close) else {
                return Err(Unclosed {
                    what: if block {
                        "a tag `{%` is not closed with `%}`"
                    } else {
                        "a tag `{{` is not closed with `}}`"
                    },
                    at: start..source.len(),
                });
            };
            out.push(Segment::Tag {
                block,
                inner: &source[body..inner_end],
                at: body,
            });
            pos = after;
            if block {
                (pos, trim_leading) = tail(source, pos, close_ws);
            } else {
                trim_leading = close_ws == Some(b'-');
            }
        }
    }
}

/// After a block tag or comment: `-` trims the whitespace after it, nothing trims one newline.
fn tail(source: &str, mut pos: usize, close_ws: Option<u8>) -> (usize, bool) {
    match close_ws {
        Some(b'-') => (pos, true),
        Some(b'+') => (pos, false),
        _ => {
            let bytes = source.as_bytes();
            if bytes.get(pos) == Some(&b'\r') {
                pos += 1;
            }
            if bytes.get(pos) == Some(&b'\n') {
                pos += 1;
            }
            (pos, false)
        }
    }
}

fn push_raw<'s>(out: &mut Vec<Segment<'s>>, raw: &'s str) {
    if !raw.is_empty() {
        out.push(Segment::Raw(raw));
    }
}

fn leading_whitespace(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

/// The next `{{`, `{%` or `{#` at or after `from`.
fn next_marker(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = bytes[at..].iter().position(|&b| b == b'{') {
        let i = at + i;
        if matches!(bytes.get(i + 1), Some(b'{' | b'%' | b'#')) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// Whether a block tag after `prefix` starts its line: only whitespace other than newlines
/// since the last newline (or the start).
fn starts_line(prefix: &str) -> bool {
    for c in prefix.chars().rev() {
        if c == '\n' || c == '\r' {
            return true;
        }
        if !c.is_whitespace() {
            return false;
        }
    }
    true
}

/// minijinja's `lstrip_block`: the spaces and tabs that end `s`, removed when they follow a
/// newline or are all of `s`.
fn lstrip_block(s: &str) -> &str {
    let trimmed = s.trim_end_matches(|c: char| c.is_whitespace() && c != '\n' && c != '\r');
    if trimmed.is_empty() || trimmed.ends_with('\n') {
        trimmed
    } else {
        s
    }
}

/// Where a tag that opens at `body` ends: the end of its inner text, the whitespace mark
/// before the closing delimiter (`-` or `+`), and the position after the delimiter. `None`
/// when it never closes.
fn tag_end(bytes: &[u8], body: usize, close: &[u8]) -> Option<(usize, Option<u8>, usize)> {
    let mut depth = 0usize;
    let mut at = body;
    while at < bytes.len() {
        let c = bytes[at];
        match c {
            b'\'' | b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != c {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                at += 1;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            if matches!(c, b'-' | b'+') && bytes[at + 1..].starts_with(close) {
                return Some((at, Some(c), at + 1 + close.len()));
            }
            if bytes[at..].starts_with(close) {
                return Some((at, None, at + close.len()));
            }
        }
        at += 1;
    }
    None
}

/// `[-+]? ws* raw ws* [-+]? %}` at the start of a block tag's body: its length and the
/// whitespace mark before `%}`.
fn raw_block_start(body: &str) -> Option<(usize, Option<u8>)> {
    basic_tag(body, "raw", false)
}

fn basic_tag(text: &str, name: &str, skip_ws_control: bool) -> Option<(usize, Option<u8>)> {
    let mut rest = text;
    if skip_ws_control {
        rest = rest.strip_prefix(['-', '+']).unwrap_or(rest);
    }
    rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    rest = rest.strip_prefix(name)?;
    rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let ws = rest
        .as_bytes()
        .first()
        .copied()
        .filter(|b| matches!(b, b'-' | b'+'));
    if ws.is_some() {
        rest = &rest[1..];
    }
    rest = rest.strip_prefix("%}")?;
    Some((text.len() - rest.len(), ws))
}

/// The text of a raw block whose opening tag ends at `from`, up to its `{% endraw %}`, and
/// where scanning goes on (with whether it trims leading whitespace).
fn raw_block(
    source: &str,
    from: usize,
    _ws_start: Option<u8>,
    opened: usize,
) -> Result<(&str, (usize, bool)), Unclosed> {
    let mut at = from;
    while let Some(i) = source[at..].find("{%") {
        let tag = at + i + 2;
        if let Some((len, ws)) = basic_tag(&source[tag..], "endraw", true) {
            let after = tag + len;
            let (pos, trim) = tail(source, after, ws);
            return Ok((&source[from..at + i], (pos, trim)));
        }
        at = tag;
    }
    Err(Unclosed {
        what: "a `{% raw %}` block is not closed with `{% endraw %}`",
        at: opened..source.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(source: &str) -> Vec<String> {
        segments(source)
            .unwrap()
            .into_iter()
            .map(|s| match s {
                Segment::Raw(r) => format!("raw {r:?}"),
                Segment::Tag { block, inner, .. } => {
                    format!("{} {:?}", if block { "block" } else { "var" }, inner.trim())
                }
                Segment::Verbatim(v) => format!("verbatim {v:?}"),
            })
            .collect()
    }

    #[test]
    fn tags_and_whitespace_control() {
        assert_eq!(
            show("a {{ x }} b"),
            ["raw \"a \"", "var \"x\"", "raw \" b\""]
        );
        assert_eq!(
            show("a\n  {% if x %}\n  y\n  {% endif %}\nz"),
            [
                "raw \"a\\n\"",
                "block \"if x\"",
                "raw \"  y\\n\"",
                "block \"endif\"",
                "raw \"z\""
            ]
        );
        assert_eq!(
            show("a  {%- if x -%}  b  {{- y -}}  c"),
            [
                "raw \"a\"",
                "block \"if x\"",
                "raw \"b\"",
                "var \"y\"",
                "raw \"c\""
            ]
        );
        assert_eq!(
            show("{{ {'a': '}}'} }}x"),
            ["var \"{'a': '}}'}\"", "raw \"x\""]
        );
        assert_eq!(show("a {# note #}\nb"), ["raw \"a \"", "raw \"b\""]);
        assert_eq!(show("x {%+ if a %}"), ["raw \"x \"", "block \"if a\""]);
        assert_eq!(
            show("{% raw %}{{ x }}{% endraw %}!"),
            ["verbatim \"{{ x }}\"", "raw \"!\""]
        );
        assert!(segments("{{ x").is_err());
        assert!(segments("{% if x }}").is_err());
    }
}
