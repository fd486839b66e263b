//! The fast expression path (`src/expr/fast.rs`) against minijinja, on the shipped rules.
//!
//! For generated profiles, every rule expression (per offer and per select item where the node
//! binds one) is evaluated both ways over the same node values: wherever the fast path answers,
//! its value equals minijinja's in value, kind, integer-or-float and rendering. Most of the
//! rules' expressions must have a fast form, and faults in the rules still give minijinja's
//! messages.

mod common;

use std::sync::LazyLock;

use decide::{Graph, Profile, Source};
use proptest::prelude::*;

static GRAPH: LazyLock<Graph> = LazyLock::new(common::graph);

fn profile(value: &serde_json::Value) -> Profile {
    Profile::from_source(&Source::new("generated.yaml", value.to_string())).unwrap()
}

/// Every disagreement between the two paths for one profile, and how many answers the fast path
/// gave.
fn disagreements(graph: &Graph, profile: &Profile) -> (Vec<String>, usize) {
    let checks = graph.fast_path_checks(profile, common::as_of()).unwrap();
    let answered = checks.iter().filter(|c| c.fast.is_some()).count();
    let wrong = checks
        .iter()
        .filter(|c| !c.agrees())
        .map(|c| {
            format!(
                "{} (item {:?}): fast {:?}, minijinja {:?}",
                c.expr, c.bound, c.fast, c.minijinja
            )
        })
        .collect();
    (wrong, answered)
}

#[test]
fn most_rule_expressions_have_a_fast_form_and_it_answers() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml"),
    )
    .unwrap();
    let p = Profile::from_source(&Source::new("pretrain-70b-job.yaml", text)).unwrap();
    let checks = GRAPH.fast_path_checks(&p, common::as_of()).unwrap();
    let with_form: Vec<&str> = checks
        .iter()
        .filter(|c| c.has_fast_form)
        .map(|c| c.expr.as_str())
        .collect();
    let without: Vec<&str> = checks
        .iter()
        .filter(|c| !c.has_fast_form)
        .map(|c| c.expr.as_str())
        .collect();
    // Not an error in the rules (minijinja evaluates these, and `decide validate` notes them),
    // but each costs the VM again: the shipped policy keeps to what src/expr/fast.rs models.
    assert!(
        without.is_empty(),
        "rule expressions with no fast form: {without:#?}"
    );
    assert!(with_form.len() > 200, "{} evaluations", with_form.len());
    let (wrong, answered) = disagreements(&GRAPH, &p);
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Left to minijinja here: only `map:` on select items that its `where:` drops (this check
    // evaluates every expression on every item), where minijinja fails too.
    assert!(
        answered * 10 >= checks.len() * 9,
        "{answered} of {}",
        checks.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_fast_path_agrees_with_minijinja_on_every_rule_expression(
        p in common::profile_strategy(&GRAPH),
    ) {
        let (wrong, answered) = disagreements(&GRAPH, &profile(&p));
        prop_assert!(wrong.is_empty(), "{:#?}\n{}", wrong, p);
        prop_assert!(answered > 100);
    }
}

/// A rules fault found at run time reads exactly as minijinja words it.
#[test]
fn faults_in_the_rules_keep_minijinja_messages() {
    let cases = [
        (
            "container_gpus * profile.usage.hours_per_gpu_month",
            "profile.usage.gpus / 0",
            "node `container_hours` failed: unable to calculate 8 / 0 (invalid operation)",
        ),
        (
            "container_gpus * profile.usage.hours_per_gpu_month",
            "profile.budget.monthly_cny + 1",
            "node `container_hours` failed: tried to use + operator on unsupported types none and number (invalid operation)",
        ),
        (
            "container_gpus * profile.usage.hours_per_gpu_month",
            "9223372036854775807 * 9223372036854775807 * 9223372036854775807",
            "node `container_hours` failed: unable to calculate",
        ),
        (
            "container_gpus * profile.usage.hours_per_gpu_month",
            "profile.usage.gpus * container_offer.price.no_such_price",
            "node `container_hours` failed: tried to use * operator on unsupported types number and undefined (invalid operation)",
        ),
    ];
    for (from, to, message) in cases {
        let dir = common::edited_rules(&[("facts.yaml", from, to)]);
        let graph = common::compile_dir(dir.path()).unwrap();
        let yaml = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n";
        let err = common::decide_text(&graph, yaml).unwrap_err().render();
        assert!(err.contains(message), "{to}:\n{err}");
    }
}

/// Values agree only when a reader could not tell them apart: `2` and `2.0` are equal to
/// minijinja but print differently, so they disagree.
#[test]
fn agreement_means_the_same_value_kind_and_rendering() {
    use minijinja::value::Value;
    assert!(decide::check::fast_path::agree(
        &Value::from(2),
        &Value::from(2)
    ));
    assert!(!decide::check::fast_path::agree(
        &Value::from(2),
        &Value::from(2.0)
    ));
    assert!(!decide::check::fast_path::agree(
        &Value::from("2"),
        &Value::from(2)
    ));
    assert!(decide::check::fast_path::agree(
        &Value::from(vec![1, 2]),
        &Value::from(vec![1, 2])
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
