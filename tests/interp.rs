//! The rule language's evaluator (`crates/lang/src/code.rs`) held to minijinja, the
//! reference for Jinja's expression semantics, on the shipped rules (a differential test, as
//! Cedar tests its evaluator against its reference).
//!
//! For generated profiles, every rule expression (per offer and per select item where the node
//! binds one) is evaluated both ways over the same node values: where minijinja answers, the
//! engine gives the same value, kind, integer-or-float and rendering; where minijinja fails, the
//! engine fails too. Every text's fast form renders as minijinja renders it. A fault in the
//! rules found at run time is reported in the language's own words. The names an expression
//! reads, off the engine's syntax tree, are minijinja's undeclared variables.

use crate::common;

use std::sync::LazyLock;

use std::collections::HashSet;

use decide_engine::{Graph, Profile, Source};
use proptest::prelude::*;

static GRAPH: LazyLock<Graph> = LazyLock::new(common::graph);

fn profile(value: &serde_json::Value) -> Profile {
    Profile::from_source(&Source::new("generated.yaml", value.to_string())).unwrap()
}

/// Every disagreement between the engine and minijinja for one profile, and every value of
/// another type than the typechecker said, and how many expressions the engine answered (rather
/// than failed on).
fn disagreements(graph: &Graph, profile: &Profile) -> (Vec<String>, usize) {
    let checks =
        decide_tools::check::reference::reference_checks(graph, profile, common::as_of()).unwrap();
    let answered = checks.iter().filter(|c| c.ours.is_ok()).count();
    let mut wrong: Vec<String> = checks
        .iter()
        .filter(|c| !c.agrees())
        .map(|c| {
            format!(
                "{} (item {:?}): ours {:?}, minijinja {:?}",
                c.expr, c.bound, c.ours, c.minijinja
            )
        })
        .collect();
    // The typechecker's claims hold: every value an expression gave is of the type it was given
    // when the rules loaded.
    wrong.extend(checks.iter().filter(|c| !c.well_typed()).map(|c| {
        format!(
            "{} (item {:?}): gave {:?}, typed {:?}",
            c.expr, c.bound, c.ours, c.ty
        )
    }));
    (wrong, answered)
}

#[test]
fn the_engine_agrees_with_minijinja_on_an_example() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml"),
    )
    .unwrap();
    let p = Profile::from_source(&Source::new("pretrain-70b-job.yaml", text)).unwrap();
    let checks =
        decide_tools::check::reference::reference_checks(&GRAPH, &p, common::as_of()).unwrap();
    assert!(checks.len() > 200, "{} evaluations", checks.len());
    let (wrong, answered) = disagreements(&GRAPH, &p);
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The sentences of rows (`says:`) are among them, said for each offer or item, and the
    // ones said where their row applies render alike (the others fail in both).
    let sentences: Vec<_> = checks
        .iter()
        .filter(|c| c.expr.contains(": sentence `") && c.ours.is_ok())
        .collect();
    assert!(sentences.len() >= 10, "{sentences:#?}");
    // Failing here, in both: only `map:` on select items that its `where:` drops (this check
    // evaluates every expression on every item).
    assert!(
        answered * 10 >= checks.len() * 9,
        "{answered} of {}",
        checks.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_engine_agrees_with_minijinja_on_every_rule_expression(
        p in common::profile_strategy(&GRAPH),
    ) {
        let (wrong, answered) = disagreements(&GRAPH, &profile(&p));
        prop_assert!(wrong.is_empty(), "{:#?}\n{}", wrong, p);
        prop_assert!(answered > 100);
    }
}

/// A rules fault found at run time says, in the language's words, what went wrong, in which
/// node, for which profile, with the expression.
#[test]
fn faults_in_the_rules_are_reported_in_the_languages_words() {
    let cases = [
        // Each of the fact's unit (hours a month), or of none declared, so that the rules load.
        (
            "profile.usage.hours_per_gpu_month / 0",
            "node `container_hours` failed: 600.0 / 0 divides by zero",
        ),
        (
            "profile.workload.active_params_b + profile.usage.hours_per_gpu_month",
            "node `container_hours` failed: `+` needs two numbers, and was given none and a number",
        ),
        (
            "9223372036854775807 * 9223372036854775807 * 9223372036854775807",
            "is too large a whole number",
        ),
        // A key no map has (a field no offer has is refused when the rules load).
        (
            "profile.usage.gpus * catalog[profile.workload.task]",
            "node `container_hours` failed: `*` was given an undefined value",
        ),
    ];
    for (to, message) in cases {
        let dir = common::edited_rules(&[(
            "facts.yaml",
            "container_gpus * profile.usage.hours_per_gpu_month",
            to,
        )]);
        let graph = common::compile_dir(dir.path()).unwrap();
        let yaml = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n";
        let err = common::decide_text(&graph, yaml).unwrap_err().render();
        assert!(err.contains(message), "{to}:\n{err}");
        assert!(err.contains("the expression is: "), "{to}:\n{err}");
    }
}

/// A fault at run time points at the part of the expression that failed, in the rule file.
#[test]
fn a_fault_at_run_time_points_at_the_part_that_failed() {
    let to = "profile.usage.gpus * catalog[profile.workload.task].price";
    let dir = common::edited_rules(&[(
        "facts.yaml",
        "container_gpus * profile.usage.hours_per_gpu_month",
        to,
    )]);
    let graph = common::compile_dir(dir.path()).unwrap();
    let yaml = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n";
    let err = common::decide_text(&graph, yaml).unwrap_err().render();
    let text = std::fs::read_to_string(dir.path().join("facts.yaml")).unwrap();
    let (line, column) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            l.find("catalog[profile.workload.task]")
                .map(|c| (i + 1, c + 1))
        })
        .unwrap();
    assert!(
        err.contains("`price` was read from an undefined value")
            && err.contains(&format!("facts.yaml:{line}:{column}")),
        "{err}"
    );
}

/// Values agree only when a reader could not tell them apart: `2` and `2.0` are equal to
/// minijinja but print differently, so they disagree.
#[test]
fn agreement_means_the_same_value_kind_and_rendering() {
    use decide_lang::Value;
    let list = |items: [i32; 2]| Value::from(items.map(Value::from).to_vec());
    assert!(decide_tools::check::reference::agree(
        &Value::from(2),
        &Value::from(2)
    ));
    assert!(!decide_tools::check::reference::agree(
        &Value::from(2),
        &Value::from(2.0)
    ));
    assert!(!decide_tools::check::reference::agree(
        &Value::from("2"),
        &Value::from(2)
    ));
    assert!(decide_tools::check::reference::agree(
        &list([1, 2]),
        &list([1, 2])
    ));
}

/// What the rule language does not have (here `**`) is refused when the rules load, with the
/// place in the file where it is written and what to write instead: it never reaches an
/// evaluator.
#[test]
fn an_expression_outside_the_rule_language_is_refused_where_it_is_written() {
    let dir = common::edited_rules(&[(
        "facts.yaml",
        "container_gpus * profile.usage.hours_per_gpu_month",
        "container_gpus * profile.usage.hours_per_gpu_month ** 1",
    )]);
    let rules = dir.path().to_str().unwrap();
    let out = common::run(&["validate", "--rules", rules, "--as-of", "2026-09-04"]);
    // `decide validate` reports what stops the rules from loading on its standard output.
    let stderr = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = std::fs::read_to_string(dir.path().join("facts.yaml"))
        .unwrap()
        .lines()
        .position(|l| l.contains("hours_per_gpu_month ** 1"))
        .unwrap()
        + 1;
    let column = "    expr: container_gpus * profile.usage.hours_per_gpu_month ".len() + 1;
    assert!(
        stderr.contains(
            "node `container_hours`: `expr` does not compile: `**` is not part of the rule language"
        ) && stderr.contains(&format!("facts.yaml:{line}:{column}"))
            && stderr.contains("help: multiply"),
        "{stderr}"
    );
}

/// The names `text` reads by the engine's syntax tree (`Term::paths`) are minijinja's
/// undeclared variables, with and without their attribute paths.
fn reads_what_minijinja_says(text: &str) {
    let env = decide_lang::environment();
    let compiled = env.compile_expression(text).unwrap();
    let paths = decide_lang::parser::parse(text).unwrap().paths();
    let nested: HashSet<String> = paths.iter().cloned().collect();
    let roots: HashSet<String> = paths
        .iter()
        .map(|p| p.split('.').next().unwrap_or(p).to_owned())
        .collect();
    assert_eq!(nested, compiled.undeclared_variables(true), "{text}");
    assert_eq!(roots, compiled.undeclared_variables(false), "{text}");
}

#[test]
fn every_kind_of_expression_reads_what_minijinja_says() {
    for text in [
        "a",
        "a.b.c",
        "a.b[c].d",
        "a[b.c]",
        "f(a.b, c.d)",
        "a | f(b.c) | g",
        "a is defined and b.c is not none",
        "not a.b and -c or d ~ e",
        "a.b < c.d",
        "a.b not in c.d",
        "a.b if c.d else e.f",
        "a.b if c",
        "[a.b, [c, d.e]]",
        "{a.b: c.d, 'k': e}",
        "(a | f).b",
        "1 + 2",
        "f(a).b.c",
        "-a.b[c]",
    ] {
        reads_what_minijinja_says(text);
    }
}

#[test]
fn every_shipped_expression_reads_what_minijinja_says() {
    let exprs: Vec<&decide_lang::Expr<'_>> = GRAPH.compiled().exprs().collect();
    assert!(exprs.len() > 150);
    for e in exprs {
        reads_what_minijinja_says(e.text);
    }
}
