//! `JUnit` XML for `decide test --junit`: one `testsuite` per case file, one `testcase` per case,
//! the differences of a failed case as its `failure`, an error that stopped it as its `error`.
//!
//! Written by hand: the format is a few elements, and escaping is all it needs.

use std::fmt::Write as _;

use decide_tools::suite::{CaseResult, Outcome};

/// The run as a `JUnit` XML document (the shape Jenkins, GitLab and GitHub reporters read).
pub fn report(outcome: &Outcome) -> String {
    let results = &outcome.results;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"decide test\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        results.len(),
        count(results.iter(), failed),
        count(results.iter(), errored),
    );
    // Files in the order they ran; a file's cases are consecutive.
    let mut start = 0;
    while start < results.len() {
        let file = &results[start].file;
        let end = start
            + results[start..]
                .iter()
                .take_while(|r| r.file == *file)
                .count();
        suite(&mut out, &results[start..end]);
        start = end;
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite(out: &mut String, cases: &[CaseResult]) {
    let file = escape(&cases[0].file);
    let _ = writeln!(
        out,
        "  <testsuite name=\"{file}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        cases.len(),
        count(cases.iter(), failed),
        count(cases.iter(), errored),
    );
    for case in cases {
        let name = escape(&case.name);
        if case.passed() {
            let _ = writeln!(out, "    <testcase name=\"{name}\" classname=\"{file}\"/>");
            continue;
        }
        let _ = writeln!(out, "    <testcase name=\"{name}\" classname=\"{file}\">");
        if let Some(e) = &case.error {
            let text = e.render();
            let first = text.lines().next().unwrap_or_default();
            let _ = writeln!(
                out,
                "      <error message=\"{}\">{}</error>",
                escape(first),
                escape(&text)
            );
        } else {
            let _ = writeln!(
                out,
                "      <failure message=\"{}\">{}</failure>",
                escape(&case.differences[0]),
                escape(&case.differences.join("\n"))
            );
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n");
}

fn failed(r: &CaseResult) -> bool {
    r.error.is_none() && !r.differences.is_empty()
}

fn errored(r: &CaseResult) -> bool {
    r.error.is_some()
}

fn count<'a>(
    results: impl Iterator<Item = &'a CaseResult>,
    pred: fn(&CaseResult) -> bool,
) -> usize {
    results.filter(|r| pred(r)).count()
}

/// `text` as XML character data or an attribute value: markup escaped, and the characters XML
/// 1.0 forbids (control characters other than tab, newline and return) left out.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}
