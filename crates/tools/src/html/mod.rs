//! The HTML memo's helpers: escaping, the words files' inline Markdown marks as HTML, and charts as inline SVG.
//!
//! The HTML memo (`templates/memo.html.j2`) calls the same words macros as the Markdown memo.
//! minijinja runs a macro with its caller's auto-escaping, so inside the HTML memo every value a
//! macro prints is HTML-escaped; the `md` and `cell` filters, which backslash-escape user text
//! for Markdown, here escape it for HTML instead and also turn `*` and `` ` `` into character
//! references, so user text can never form a mark. What is left of Markdown in a macro's output
//! is the words files' own `**bold**` and `` `code` ``, which [`marks`] turns into tags.
//!
//! For print, [`wbr`] lets an id break only after its `-` and `_`, and [`css_content`] puts a
//! words text (the running title, "page N of M") into the page's margin boxes.
//!
//! The charts are drawn in [`chart`].

mod chart;

use std::fmt::Write as _;

use decide_lang::jinja::{from_jinja, to_jinja};
use minijinja::Value;
use minijinja::{AutoEscape, Environment, State};

/// Adds the HTML memo's filters and functions to `env`: `md` and `cell` that escape for the
/// output at hand, `rich` for the record's Markdown texts, `marks`, `wbr` for ids,
/// `css_content` for the page's margin boxes, and the charts `line_chart` and `scatter_chart`.
pub fn register(env: &mut Environment<'static>) {
    env.add_filter("md", md);
    env.add_filter("rich", rich);
    env.add_filter("cell", cell);
    env.add_filter("marks", marks);
    env.add_filter("wbr", wbr);
    env.add_filter("css_content", css_content);
    env.add_function("line_chart", |v: &Value| {
        chart::line_chart(&from_jinja(v)).map(|svg| to_jinja(&svg))
    });
    env.add_function("scatter_chart", |v: &Value| {
        chart::scatter_chart(&from_jinja(v)).map(|svg| to_jinja(&svg))
    });
}

/// Whether `state` renders HTML (a `.html.j2` template, or a macro it calls).
fn is_html(state: &State) -> bool {
    matches!(state.auto_escape(), AutoEscape::Html)
}

/// `text` with `&`, `<`, `>`, `"`, `'` and `/` as character references, as minijinja's
/// auto-escaping writes them.
#[must_use]
pub fn escape(text: &str) -> String {
    minijinja::HtmlEscape(text).to_string()
}

/// What a page being printed may load: its inline styles and `data:` images and fonts, and
/// nothing else: no script, no frame, no object, no fetch of any file or address, no form, no
/// `<base>`. The printer's browser is held off the network and the page off other files too;
/// this is the page's own fence, whatever a `--rules` folder's template writes.
pub const PRINT_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'";

/// `html` as the page a browser prints: [`PRINT_POLICY`] as the document's first element,
/// before anything of `html` is parsed, so that it holds for every element the memo's
/// template wrote (a policy can only be narrowed by later ones, never widened). The document's
/// own `<!doctype>`, where it leads, is replaced by the one written here (standards mode
/// either way).
#[must_use]
pub fn print_page(html: &str) -> String {
    let body = html.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let rest = match body.get(..9) {
        Some(head) if head.eq_ignore_ascii_case("<!doctype") => {
            body.find('>').map_or(body, |end| &body[end + 1..])
        }
        _ => body,
    };
    format!(
        "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{PRINT_POLICY}\">{rest}"
    )
}

/// User text for HTML: escaped, on one line, and with the characters of the words files'
/// marks (`*`, `` ` ``) as character references so that [`marks`] leaves them alone.
fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in escape(&decide_engine::error::visible(text)).chars() {
        match c {
            '*' => out.push_str("&#42;"),
            '`' => out.push_str("&#96;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The `md` filter: Markdown escaping in the Markdown memo, [`inert`] HTML in the HTML memo. A
/// vendor's text, which the catalog holds Markdown-escaped (a safe string), is left as it is in
/// the Markdown memo and read back from its escapes in the HTML memo.
fn md(state: &State, value: &Value) -> Result<Value, minijinja::Error> {
    if !is_html(state) {
        return decide_lang::md_filter(&from_jinja(value)).map(|v| to_jinja(&v));
    }
    html_text(value, inert)
}

/// A text as HTML in the HTML memo: `plain` of a text as written, [`from_markdown_text`] of a
/// vendor's Markdown-escaped one.
fn html_text(value: &Value, plain: fn(&str) -> String) -> Result<Value, minijinja::Error> {
    let text = value.as_str().ok_or_else(|| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            "value is not a string",
        )
    })?;
    Ok(Value::from_safe_string(if value.is_safe() {
        from_markdown_text(text)
    } else {
        plain(text)
    }))
}

/// The `rich` filter: a text of the record (a checklist item, which may quote a vendor's cell
/// escaped by the rules' `md`) as it is in the Markdown memo, and as HTML in the HTML memo,
/// where the Markdown escapes show as their characters and the marks stay for [`marks`].
fn rich(state: &State, text: &str) -> Value {
    if is_html(state) {
        Value::from_safe_string(from_markdown_text(text))
    } else {
        Value::from(text)
    }
}

/// The `cell` filter: a Markdown table cell in the Markdown memo, escaped HTML on one line in
/// the HTML memo (an HTML cell needs no escaping of `|`). Its text is the policy's (an outcome,
/// a memory note, a trace step's reason), written with the same `` `code` `` and `**bold**`
/// marks as the Markdown memo shows, so [`marks`] may still turn them into tags; user text goes
/// through `md` instead, which leaves no mark for `marks` to find.
fn cell(state: &State, value: &Value) -> Result<Value, minijinja::Error> {
    if !is_html(state) {
        return decide_lang::cell_filter(&from_jinja(value)).map(|v| to_jinja(&v));
    }
    html_text(value, |text| {
        escape(&decide_engine::error::visible(text)).replace(['\n', '\r'], " ")
    })
}

/// The `marks` filter: a words macro's output as HTML. Text not yet escaped (a plain string) is
/// escaped first; then each `` `code` `` becomes `<code>` and each `**bold**` `<strong>`. A
/// mark without its closing twin stays as it is.
fn marks(value: &Value) -> Value {
    let text = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    let html = if value.is_safe() {
        text
    } else {
        from_markdown_text(&text)
    };
    Value::from_safe_string(inline(&html))
}

/// Text of the record (Markdown with the marks of the words files) as escaped HTML: what the
/// `md` filter escaped in it (`\_`, `\*`, `&lt;` in a rule text that quotes a vendor's cell)
/// shows as the character itself, and an escaped `*` or `` ` `` as a character reference so
/// that [`inline`] takes it for no mark.
fn from_markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let next = rest[c.len_utf8()..].chars().next();
        if c == '\\' && next.is_some_and(|n| n.is_ascii_punctuation()) {
            let n = next.unwrap_or_default();
            match n {
                '*' => out.push_str("&#42;"),
                '`' => out.push_str("&#96;"),
                n => out.push_str(&escape(n.encode_utf8(&mut [0; 4]))),
            }
            rest = &rest[1 + n.len_utf8()..];
        } else if let Some(entity) = ["&lt;", "&gt;", "&amp;"]
            .iter()
            .find(|e| rest.starts_with(**e))
        {
            out.push_str(entity);
            rest = &rest[entity.len()..];
        } else {
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The `wbr` filter: an id (`pretrain_70b_100b`, `rtx4090-x8-sichuan2`) as escaped HTML with a
/// `<wbr>` after each `-` and `_`. The memo's `code` does not break anywhere else
/// (`overflow-wrap: normal`), so a long id in a narrow column breaks between its parts, never
/// inside a word (`pretrain_70` / `b_100b`).
fn wbr(value: &Value) -> Value {
    let text = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    let html = if value.is_safe() { text } else { escape(&text) };
    Value::from_safe_string(break_points(&html))
}

/// Escaped HTML with a `<wbr>` after each `-` and `_` (an escaped character is `&...;`, which
/// has neither).
fn break_points(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + 16);
    for c in html.chars() {
        out.push(c);
        if c == '-' || c == '_' {
            out.push_str("<wbr>");
        }
    }
    out
}

/// The `css_content` filter: a words text as the value of a CSS `content` property, for the
/// page's margin boxes (`@top-left`, `@bottom-right`): `{page}` and `{pages}` become the page
/// counters, the rest quoted strings. A style sheet is no HTML, so an escaped text (a macro's
/// output, which may quote the profile's name) is first read back to its characters; then every
/// ASCII character but letters, digits and spaces is written as a CSS escape (`\3c `), so no
/// text can end the string, the rule or the `<style>` element.
fn css_content(value: &Value) -> Value {
    let text = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    let text = if value.is_safe() {
        unescape(&text)
    } else {
        text
    };
    let mut parts = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let next = ["{pages}", "{page}"]
            .iter()
            .filter_map(|token| rest.find(token).map(|at| (at, *token)))
            .min();
        let Some((at, token)) = next else {
            parts.push(css_string(rest));
            break;
        };
        if at > 0 {
            parts.push(css_string(&rest[..at]));
        }
        parts.push(format!("counter({})", &token[1..token.len() - 1]));
        rest = &rest[at + token.len()..];
    }
    if parts.is_empty() {
        parts.push("\"\"".to_owned());
    }
    Value::from_safe_string(parts.join(" "))
}

/// `text` as a quoted CSS string in which only letters, digits, spaces and non-ASCII
/// characters stand for themselves; a control character is dropped.
fn css_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push('"');
    for c in text.chars() {
        if c.is_control() {
            continue;
        }
        if c.is_ascii_alphanumeric() || c == ' ' || !c.is_ascii() {
            out.push(c);
        } else {
            let _ = write!(out, "\\{:x} ", u32::from(c));
        }
    }
    out.push('"');
    out
}

/// Escaped HTML read back to its characters: the character references that [`escape`] and
/// [`inert`] write (`&amp;`, `&lt;`, `&#x27;`, `&#42;`, ...); tags are dropped.
fn unescape(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(end) = rest.find('>')
        {
            rest = &rest[end + 1..];
            continue;
        }
        if c == '&'
            && let Some(end) = rest.find(';').filter(|&e| e <= 10)
        {
            let name = &rest[1..end];
            let decoded = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            if let Some(d) = decoded {
                out.push(d);
                rest = &rest[end + 1..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// [`marks`] on escaped HTML; an id in `` `code` `` (one without spaces) may break after its
/// `-` and `_` ([`wbr`]).
fn inline(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + 16);
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        if c == '`'
            && let Some(end) = rest[1..].find('`')
        {
            let code = &rest[1..=end];
            if code.contains(char::is_whitespace) {
                // A command (`npu-smi info -t topo`) breaks at its spaces, not after `-t`'s `-`.
                let _ = write!(out, "<code>{code}</code>");
            } else {
                let _ = write!(out, "<code>{}</code>", break_points(code));
            }
            rest = &rest[end + 2..];
        } else if rest.starts_with("**")
            && let Some(end) = rest[2..].find("**").filter(|&e| e > 0)
        {
            let _ = write!(out, "<strong>{}</strong>", inline(&rest[2..end + 2]));
            rest = &rest[end + 4..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_of_record_text_show_as_their_characters() {
        let shown = from_markdown_text(r"1 month\_ paid &lt;b&gt; \*x\* a\\b & <i>");
        assert_eq!(
            inline(&shown),
            "1 month_ paid &lt;b&gt; &#42;x&#42; a\\b &amp; &lt;i&gt;"
        );
        // The words' own marks still become tags.
        assert_eq!(
            inline(&from_markdown_text("**Bold** `id`")),
            "<strong>Bold</strong> <code>id</code>"
        );
    }

    #[test]
    fn a_printed_page_opens_with_its_policy_before_anything_of_the_memo() {
        let policy =
            format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{PRINT_POLICY}\">");
        for memo in [
            "<!DOCTYPE html>\n<html><script>x</script>",
            "\u{feff}  <!doctype html><html>",
            "<html><iframe src=\"file:///etc/passwd\">",
            "",
        ] {
            let page = print_page(memo);
            let opening = format!("<!doctype html><meta charset=\"utf-8\">{policy}");
            assert!(page.starts_with(&opening), "{page}");
            // One doctype, then the memo whole.
            assert_eq!(
                page.to_ascii_lowercase().matches("<!doctype").count(),
                1,
                "{page}"
            );
            let rest = &page[opening.len()..];
            assert!(memo.ends_with(rest), "{page}");
        }
    }

    #[test]
    fn ids_break_only_after_a_hyphen_or_an_underscore() {
        assert_eq!(
            wbr(&Value::from("pretrain_70b-x8")).to_string(),
            "pretrain_<wbr>70b-<wbr>x8"
        );
        assert_eq!(
            wbr(&Value::from("<a>_")).to_string(),
            "&lt;a&gt;_<wbr>",
            "plain text is escaped first"
        );
        assert_eq!(
            inline("see `rtx4090-x8_a` and rtx-b"),
            "see <code>rtx4090-<wbr>x8_<wbr>a</code> and rtx-b",
            "only ids in code break"
        );
        assert_eq!(
            inline("run `npu-smi info -t topo`"),
            "run <code>npu-smi info -t topo</code>",
            "a command breaks at its spaces"
        );
    }

    #[test]
    fn margin_box_content_is_quoted_escaped_and_counts_pages() {
        let content = |text: &str, safe: bool| {
            let value = if safe {
                Value::from_safe_string(text.to_owned())
            } else {
                Value::from(text)
            };
            css_content(&value).to_string()
        };
        assert_eq!(
            content("Page {page} of {pages}", false),
            r#""Page " counter(page) " of " counter(pages)"#
        );
        assert_eq!(
            content("第 {page} 页，共 {pages} 页", false),
            r#""第 " counter(page) " 页，共 " counter(pages) " 页""#
        );
        // A name that tries to end the string, the rule and the style sheet, as the memo's
        // title macro writes it (HTML-escaped).
        let hostile = escape("memo: a\"}</style><b>&\\");
        let css = content(&hostile, true);
        assert_eq!(
            css,
            r#""memo\3a  a\22 \7d \3c \2f style\3e \3c b\3e \26 \5c ""#
        );
        assert_eq!(content("", false), r#""""#);
    }

    #[test]
    fn marks_become_tags_and_escaped_text_stays_text() {
        assert_eq!(
            inline("**Bold:** `id` and a * star"),
            "<strong>Bold:</strong> <code>id</code> and a * star"
        );
        assert_eq!(inline("**a `b` c**"), "<strong>a <code>b</code> c</strong>");
        assert_eq!(inline("unclosed ` and **"), "unclosed ` and **");
        assert_eq!(
            inline(&inert("**<b>** `x`")),
            "&#42;&#42;&lt;b&gt;&#42;&#42; &#96;x&#96;"
        );
    }
}
