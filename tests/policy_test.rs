//! `decide test`: the shipped policy tests pass with full coverage; failures and coverage gaps
//! read clearly; a rules folder brings its own `tests/`.

mod common;

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
    assert!(text.contains("44 passed, 0 failed."), "{text}");
    assert!(text.contains("  table rows: 19 of 19\n"), "{text}");
    assert!(text.contains("  warnings: 12 of 12\n"), "{text}");
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
    insta::assert_snapshot!(stdout(&out));
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
