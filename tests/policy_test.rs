//! `decide test`: the shipped policy tests pass with full coverage; failures and coverage gaps
//! read clearly; a rules folder brings its own `tests/`.

use crate::common;

use std::process::Output;

fn decide(args: &[&str]) -> Output {
    common::run(args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_shipped_cases_pass_and_cover_every_row_and_warning() {
    let out = decide(&["test"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("79 passed, 0 failed."), "{text}");
    assert!(text.contains("  table rows: 26 of 26\n"), "{text}");
    assert!(text.contains("  warnings: 19 of 19\n"), "{text}");
    assert!(text.contains("  criterion outcomes: 8 of 8\n"), "{text}");
    assert!(
        text.ends_with(
            "Every criterion outcome, table row, warning and checklist condition is exercised.\n"
        ),
        "{text}"
    );
}

#[test]
fn a_failing_case_shows_every_difference_and_exits_1() {
    let out = decide(&["test", "tests/cases/failing.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert_snapshot!(stdout(&out));
}

#[test]
fn a_case_with_an_invalid_profile_names_file_line_and_field() {
    let out = decide(&["test", "tests/cases/bad-profile.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cases[0].profile.usage.gpus"), "{err}");
    assert!(err.contains("tests/cases/bad-profile.yaml:6:"), "{err}");
}

#[test]
fn a_rules_folder_runs_its_own_tests_and_a_price_change_fails_the_pinned_cost() {
    // The scenario case pins the 4090 box at ¥7,920 a month; a new price must fail it.
    let rules = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,9900,8100,CNY",
    )]);
    let out = decide(&["test", "--rules", rules.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("costs.recommended_monthly_cny: expected 7920, got 8100"),
        "{text}"
    );
}

/// A case file of one case (a `LoRA` fine-tune), expecting `expect` (YAML flow mapping).
fn one_case(dir: &std::path::Path, name: &str, expect: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "as_of: 2026-09-04\ncases:\n  - profile:\n      name: LoRA on eight cards\n      \
             workload: {{task: lora_finetune, model_params_b: 7, parallelism: [data]}}\n      \
             usage: {{gpus: 8, hours_per_gpu_month: 600}}\n    expect: {expect}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_case_without_a_date_is_refused_with_the_newest_quote_date_to_write() {
    // Judged at today's date, the case would pass today and fail by itself once the quotes are
    // older than the policy allows: a policy test names its day.
    let dir = tempfile::tempdir().unwrap();
    let dated = one_case(dir.path(), "dated.yaml", "{deployment: bare_metal}");
    let text = std::fs::read_to_string(&dated).unwrap();
    let undated = dir.path().join("undated.yaml");
    std::fs::write(&undated, text.replace("as_of: 2026-09-04\n", "")).unwrap();
    let out = decide(&["test", undated.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("case `LoRA on eight cards` has no date"),
        "{err}"
    );
    assert!(err.contains("cases[0].as_of"), "{err}");
    assert!(err.contains("undated.yaml:1:1"), "{err}");
    assert!(err.contains("write `as_of: 2026-11-09`"), "{err}");
    // The case's own date is enough.
    let own = dir.path().join("own.yaml");
    std::fs::write(
        &own,
        text.replace("as_of: 2026-09-04\n", "")
            .replace("  - profile:", "  - as_of: 2026-09-04\n    profile:"),
    )
    .unwrap();
    let out = decide(&["test", own.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// The percentage after "Coverage (by passing cases): ".
fn coverage_of(text: &str) -> f64 {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("Coverage (by passing cases): "))
        .unwrap_or_else(|| panic!("no coverage line in:\n{text}"));
    line.trim_end_matches('%').parse().unwrap()
}

#[test]
fn a_failing_case_covers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let passing = one_case(dir.path(), "pass.yaml", "{deployment: bare_metal}");
    let failing = one_case(dir.path(), "fail.yaml", "{deployment: container}");
    let out = decide(&["test", &passing]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(coverage_of(&text) > 0.0, "{text}");
    // The same decision, now expected wrongly: it exercises the same rows but covers none.
    let out = decide(&["test", &failing]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 failed."), "{text}");
    assert!((coverage_of(&text) - 0.0).abs() < f64::EPSILON, "{text}");
    assert!(text.contains("  table rows: 0 of "), "{text}");
}

#[test]
fn min_coverage_fails_below_the_threshold_and_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let passing = one_case(dir.path(), "pass.yaml", "{deployment: bare_metal}");
    let text = stdout(&decide(&["test", &passing]));
    let pct = coverage_of(&text);
    assert!(pct < 100.0, "{text}");
    // At or under what one case reaches: passes.
    let at = format!("{}", pct.floor());
    let out = decide(&["test", &passing, "--min-coverage", &at]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Above it: exit 1, the percentages and each uncovered item on standard error.
    let out = decide(&["test", &passing, "--min-coverage", "100"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("coverage {pct:.1}% is below --min-coverage 100%")),
        "{err}"
    );
    let missed = text
        .split("Not exercised by any passing case:\n")
        .nth(1)
        .unwrap();
    for line in missed.lines() {
        assert!(err.contains(line), "{line:?} missing from:\n{err}");
    }
    // The shipped suite covers everything.
    let out = decide(&["test", "--min-coverage", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Not a percentage: a usage error.
    let out = decide(&["test", "--min-coverage", "120"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("from 0 to 100"));
}

/// A start or end tag: its name, attributes, and whether it closes (`</x>`) or is empty (`<x/>`).
#[derive(Debug)]
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
    close: bool,
    empty: bool,
}

impl Tag {
    fn attr(&self, name: &str) -> &str {
        &self.attrs.iter().find(|(k, _)| k == name).unwrap().1
    }
}

/// Reads XML just far enough to check it is well formed: the declaration, tags that nest and
/// close, attributes quoted, and no bare `<` or `&` in text. Returns the tags in order.
fn parse_xml(xml: &str) -> Vec<Tag> {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("XML declaration");
    let mut tags = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        check_text(&rest[..open]);
        let end = rest[open..].find('>').expect("unclosed tag") + open;
        let inner = &rest[open + 1..end];
        rest = &rest[end + 1..];
        let (close, inner) = match inner.strip_prefix('/') {
            Some(i) => (true, i),
            None => (false, inner),
        };
        let (empty, inner) = match inner.strip_suffix('/') {
            Some(i) => (true, i),
            None => (false, inner),
        };
        let name_end = inner.find(' ').unwrap_or(inner.len());
        let name = inner[..name_end].to_owned();
        let mut attrs = Vec::new();
        let mut a = inner[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a.find("=\"").expect("attribute without =\"");
            let key = a[..eq].to_owned();
            let after = &a[eq + 2..];
            let q = after.find('"').expect("unterminated attribute");
            check_text(&after[..q]);
            attrs.push((key, unescape(&after[..q])));
            a = after[q + 1..].trim_start();
        }
        if close {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.as_str()),
                "mismatched </{name}>"
            );
        } else if !empty {
            stack.push(name.clone());
        }
        tags.push(Tag {
            name,
            attrs,
            close,
            empty,
        });
    }
    assert!(
        rest.trim().is_empty() && stack.is_empty(),
        "unclosed: {stack:?}"
    );
    tags
}

fn check_text(text: &str) {
    assert!(!text.contains('<'), "bare < in {text:?}");
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e + 1)];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity),
            "bad entity {entity:?}"
        );
    }
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[test]
fn junit_has_one_testcase_per_case_and_each_failure_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let passing = one_case(dir.path(), "pass.yaml", "{deployment: bare_metal}");
    let xml_path = dir.path().join("report.xml");
    let out = decide(&[
        "test",
        "tests/cases/failing.yaml",
        &passing,
        "--junit",
        xml_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    let tags = parse_xml(&xml);
    let opened =
        |name: &str| -> Vec<&Tag> { tags.iter().filter(|t| t.name == name && !t.close).collect() };
    let root = opened("testsuites")[0];
    let cases = opened("testcase");
    let failures = opened("failure");
    // As many cases and failures as the text report counts.
    let passed: usize = text.lines().filter(|l| l.starts_with("ok  ")).count();
    let failed: usize = text.lines().filter(|l| l.starts_with("FAIL")).count();
    assert_eq!((passed, failed), (2, 1), "{text}");
    assert_eq!(cases.len(), passed + failed);
    assert_eq!(failures.len(), failed);
    // A passing case is an empty element; a failing one holds its failure.
    assert_eq!(cases.iter().filter(|c| c.empty).count(), passed);
    assert_eq!(root.attr("tests"), (passed + failed).to_string());
    assert_eq!(root.attr("failures"), failed.to_string());
    assert_eq!(root.attr("errors"), "0");
    // One suite per file, each counting its own cases.
    let suites = opened("testsuite");
    assert_eq!(suites.len(), 2);
    assert_eq!(suites[0].attr("name"), "tests/cases/failing.yaml");
    assert_eq!(
        (suites[0].attr("tests"), suites[0].attr("failures")),
        ("2", "1")
    );
    assert_eq!(
        (suites[1].attr("tests"), suites[1].attr("failures")),
        ("1", "0")
    );
    // The failure carries the first difference as its message, every difference as its text.
    let first_diff = text
        .lines()
        .skip_while(|l| !l.starts_with("FAIL"))
        .nth(1)
        .unwrap()
        .trim();
    assert_eq!(failures[0].attr("message"), first_diff);
    assert_eq!(
        cases[0].attr("name"),
        "Expects the wrong offer and a warning that is not raised"
    );
    // Nothing else was left in the folder (written through a temporary file, then renamed).
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A rules folder is input: a case name holding ESC sequences (retitle the terminal, clear the
/// screen) and a line break is shown escaped on the FAIL line, never written to the terminal.
#[test]
fn a_case_name_with_control_characters_is_shown_escaped() {
    let rules = common::edited_rules(&[
        (
            "tests/criteria.yaml",
            "name: Just under the break-even line stays in containers",
            "name: \"Just under\\e]0;pwned\\a\\e[2J\\nok    the line\\u009b\\u007f\"",
        ),
        (
            "tests/criteria.yaml",
            "offer: rtx4090-container",
            "offer: rtx5090-x8-anhui1",
        ),
    ]);
    let rules = rules.path();
    let out = decide(&["test", "--rules", rules.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{7f}'] {
        assert!(
            !text.contains(c) && !err.contains(c),
            "{c:?} raw:\n{text}{err}"
        );
    }
    let line = text.lines().find(|l| l.contains("Just under")).unwrap();
    assert!(line.starts_with("FAIL  "), "{text}");
    assert!(
        line.ends_with(
            ": Just under\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{a}ok    the line\\u{9b}\\u{7f}"
        ),
        "{text}"
    );
}
