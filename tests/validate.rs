//! `decide validate` on the shipped rules and on copies with one kind of fault each.
//!
//! Data-driven: every `tests/validate/*.yaml` lists edits to a copy of `rules/` (an `append:` to
//! a file the copy does not have creates it); the test runs `decide validate` on the copy and
//! snapshots what a policy author sees, with the exit code.

use crate::common;

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    edits: Vec<Edit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    file: String,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    with: Option<String>,
    #[serde(default)]
    append: Option<String>,
}

fn validate(rules: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", common::AS_OF, "--rules"])
        .arg(rules)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.replace(&rules.display().to_string(), "[RULES]");
    (out.status.code(), text)
}

/// A copy of the rules with the edits of the case file `path`.
fn edited_copy(path: &Path) -> tempfile::TempDir {
    let case: Case = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rules = common::edited_rules(&[]);
    for edit in &case.edits {
        let file = rules.path().join(&edit.file);
        // A new rule file may be written whole with `append:`.
        let mut text = if edit.replace.is_none() && !file.exists() {
            String::new()
        } else {
            std::fs::read_to_string(&file).unwrap()
        };
        if let Some(from) = &edit.replace {
            assert!(
                text.contains(from.as_str()),
                "{}: {from:?} not found",
                edit.file
            );
            text = text.replacen(from.as_str(), edit.with.as_deref().unwrap_or(""), 1);
        }
        if let Some(more) = &edit.append {
            text.push_str(more);
        }
        std::fs::write(&file, text).unwrap();
    }
    rules
}

#[test]
fn validate_cases() {
    // Each case is a whole `decide validate` (about a minute in a debug build): they run on
    // every core first, then their outputs are compared with the snapshots in order.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validate");
    let mut cases: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    cases.sort();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outputs = std::sync::Mutex::new(std::collections::HashMap::new());
    let workers = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(path) = cases.get(i) else { break };
                    let rules = edited_copy(path);
                    let (code, output) = validate(rules.path());
                    let shown = format!("exit code: {code:?}\n\n{output}");
                    outputs
                        .lock()
                        .unwrap()
                        .insert(std::fs::canonicalize(path).unwrap(), shown);
                }
            });
        }
    });
    let outputs = outputs.into_inner().unwrap();
    // The shipped rules, unchanged (`clean.yaml`), are clean, and the table analysis really ran
    // over the scenario table's inputs, exactly: 5 tasks, 3 concurrencies (none included), 13
    // model sizes (6 bounds and the 7 intervals around them), 2 x 2 flags, 4 budgets (below, at
    // and above 10,000, none). The policy's test cases show three of its rows alive and the
    // first thousand generated profiles the other two, so no more are evaluated.
    let clean = &outputs[&std::fs::canonicalize(dir.join("clean.yaml")).unwrap()];
    assert!(clean.starts_with("exit code: Some(0)\n"), "{clean}");
    assert!(clean.ends_with("Clean: no findings.\n"), "{clean}");
    assert!(clean.contains("Table `scenario` (hit first, 5 rows): analysed exactly, over all 3,120 elementary cells of its inputs (task, concurrency, params_b, domestic, training, budget_cny), with 1,000 generated profiles for examples: no shadowed or dead rows (3 shown alive by the policy's test cases, the others by generated profiles)"), "{clean}");
    insta::glob!("validate/*.yaml", |path| {
        assert_snapshot!(outputs[&std::fs::canonicalize(path).unwrap()]);
    });
}

#[test]
fn the_shipped_rules_are_clean_on_the_first_sheets_day() {
    // `validate_cases` runs the shipped rules at the usual date (`clean.yaml`). Here the first
    // sheet's day, when no container is quoted: the rows for that day and those for a day with
    // containers are each alive at one of the two dates, so neither day reports the other's
    // rows as dead.
    let early = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", "2026-07-01"])
        .output()
        .unwrap();
    let early_text = String::from_utf8_lossy(&early.stdout);
    assert_eq!(early.status.code(), Some(0), "{early_text}");
    assert!(
        early_text.ends_with("Clean: no findings.\n"),
        "{early_text}"
    );
}

#[test]
fn validate_with_progress_says_each_step_as_it_starts_and_the_time_at_the_end() {
    // Off a terminal, `--progress` writes a line a step to stderr; the report on stdout is the
    // one printed without it.
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", common::AS_OF, "--progress"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(report.ends_with("Clean: no findings.\n"), "{report}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"Validating the embedded rules at 2026-09-04"),
        "{err}"
    );
    let steps: Vec<&str> = lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "[1/5] loading and compiling the rules and templates",
            "[2/5] checking nodes and offer ids",
            "[3/5] analysing the decision tables",
            "[4/5] searching generated profiles for a broken invariant",
            "[5/5] holding each configuration search to its reference lists",
        ],
        "{err}"
    );
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("Checked in ") && last.ends_with('s'),
        "{err}"
    );
    // Rules that do not load end the progress there.
    let rules = common::edited_rules(&[("criteria.yaml", "criteria:", "criteria: [")]);
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--progress", "--rules"])
        .arg(rules.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("Loaded with faults in "),
        "{err}"
    );
    assert!(!err.contains("[2/5]"), "{err}");
}

/// The reports of `decide validate`'s table analysis on the shipped rules plus `extra.yaml`
/// holding `tables` (YAML under `tables:`), for the tables it adds.
fn table_reports(tables: &str) -> Vec<decide_tools::check::tables::TableReport> {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("extra.yaml"),
        format!("tables:\n{tables}"),
    )
    .unwrap();
    let graph = common::compile_dir(rules.path()).unwrap();
    decide_tools::check::tables::analyse(&graph, common::as_of(), &[])
        .into_iter()
        .filter(|r| r.id.starts_with("t_"))
        .collect()
}

fn messages(report: &decide_tools::check::tables::TableReport) -> String {
    report
        .findings
        .iter()
        .map(decide_engine::Error::render)
        .collect::<Vec<_>>()
        .join("\n")
}

const TITLE: &str = "{en: t, zh: t}";

/// A gap half a billion parameters wide, between `<= 10` and `> 10.5` (10.5 included), written as one interval: the exact analysis cuts
/// the range at both bounds and finds the open interval between, whatever profiles are
/// generated; a table with a `when:` row is sampled, and says so.
#[test]
fn the_exact_analysis_finds_a_narrow_gap() {
    let reports = table_reports(&format!(
        r#"  - id: t_gap
    title: {TITLE}
    hit: first
    no_match: error
    inputs: [{{id: params_b, expr: profile.workload.model_params_b}}]
    rows:
      - {{id: small, title: {TITLE}, cells: {{params_b: "<= 10"}}}}
      - {{id: large, title: {TITLE}, cells: {{params_b: "> 10.5"}}}}
  - id: t_sampled
    title: {TITLE}
    hit: first
    no_match: none
    rows:
      - {{id: any, title: {TITLE}, when: "profile.workload.model_params_b > 1"}}
"#
    ));
    let gap = &reports[0];
    assert_eq!(gap.id, "t_gap");
    // (0, 10), 10, (10, 10.5), 10.5, (10.5, max]: the field is positive and bounded.
    assert_eq!(gap.exact, Some(5));
    assert_eq!(gap.findings.len(), 1, "{}", messages(gap));
    let text = messages(gap);
    assert!(
        text.contains("a gap: no row matches in 2 of the 5 elementary cells"),
        "{text}"
    );
    // Above 10 and up to 10.5 itself, which `> 10.5` leaves out.
    assert!(text.contains("where params_b in (10, 10.5]"), "{text}");
    let sampled = &reports[1];
    assert_eq!(sampled.exact, None);
    assert!(
        sampled
            .sampled_because
            .as_deref()
            .is_some_and(|w| w.contains("`when:`")),
        "{:?}",
        sampled.sampled_because
    );
}

/// `hit: unique` rows that share one point (`[7..10]` and `>= 10`): the overlap is exactly
/// that point; and a row an earlier one takes whole is reported as never winning, a row whose
/// cell no value passes as never matching.
#[test]
fn the_exact_analysis_finds_overlaps_and_rows_that_never_win() {
    let reports = table_reports(&format!(
        r#"  - id: t_unique
    title: {TITLE}
    hit: unique
    no_match: none
    inputs: [{{id: params_b, expr: profile.workload.model_params_b}}]
    rows:
      - {{id: mid, title: {TITLE}, cells: {{params_b: "[7..10]"}}}}
      - {{id: high, title: {TITLE}, cells: {{params_b: ">= 10"}}}}
  - id: t_first
    title: {TITLE}
    hit: first
    no_match: none
    inputs:
      - {{id: task, expr: profile.workload.task}}
      - {{id: concurrency, expr: profile.workload.concurrency}}
      - {{id: params_b, expr: profile.workload.model_params_b}}
    rows:
      - {{id: serving, title: {TITLE}, cells: {{task: "'inference'"}}}}
      - {{id: busy, title: {TITLE}, cells: {{task: "'inference'", concurrency: "'high'"}}}}
      - {{id: negative, title: {TITLE}, cells: {{params_b: "< 0"}}}}
      - {{id: other, title: {TITLE}, cells: {{task: "!= 'inference'"}}}}
"#
    ));
    let unique = messages(&reports[0]);
    assert_eq!(reports[0].findings.len(), 1, "{unique}");
    assert!(
        unique.contains("rows `mid` and `high` overlap in 1 elementary cells"),
        "{unique}"
    );
    assert!(unique.contains("where params_b = 10"), "{unique}");
    let first = messages(&reports[1]);
    assert_eq!(reports[1].findings.len(), 2, "{first}");
    assert!(
        first.contains("row `busy` never wins")
            && first.contains("taken by an earlier row, e.g. `serving`"),
        "{first}"
    );
    assert!(
        first.contains("where task = 'inference', concurrency = 'high'"),
        "{first}"
    );
    assert!(first.contains("row `negative` never matches"), "{first}");
    assert!(!first.contains("row `other`"), "{first}");
}

/// Inputs tied through facts (`training` is read from `task`): the exact analysis reports the
/// combinations no profile can have as they are, and says plainly that no generated profile
/// reaches them.
#[test]
fn a_region_no_profile_reaches_is_said_so() {
    let reports = table_reports(&format!(
        r#"  - id: t_tied
    title: {TITLE}
    hit: first
    no_match: error
    inputs:
      - {{id: task, expr: profile.workload.task}}
      - {{id: training, expr: is_training}}
    rows:
      - {{id: trains, title: {TITLE}, cells: {{training: "true"}}}}
      - {{id: serves, title: {TITLE}, cells: {{task: "'inference'"}}}}
"#
    ));
    let text = messages(&reports[0]);
    assert_eq!(reports[0].findings.len(), 1, "{text}");
    assert!(text.contains("a gap"), "{text}");
    assert!(text.contains("training = false"), "{text}");
    assert!(text.contains("no generated profile"), "{text}");
}
