//! What would change the answer: the flip points are found from the rules (they move when a
//! price does), lines under another field's change are reported, and the words follow the
//! language.

mod common;

use decide::decision::Flip;
use decide::{Graph, Lang, Policy, Source};

fn flips(graph: &Graph, path: &str) -> Vec<Flip> {
    let text = std::fs::read_to_string(path).unwrap();
    let (_, e) = decide::decide(graph, &Source::new(path, text), common::as_of()).unwrap();
    e.decision
        .sensitivity
        .expect("decide computes the sensitivity")
}

fn find<'a>(flips: &'a [Flip], id: &str, field: &str) -> &'a Flip {
    flips
        .iter()
        .find(|f| f.id == id && f.field == field)
        .unwrap_or_else(|| panic!("no flip of {id} by {field} in {flips:#?}"))
}

#[test]
fn the_break_even_line_is_found_from_the_rules() {
    let graph = common::graph();
    let flips = flips(&graph, "examples/lora-7b-4090.yaml");
    // ¥7,920 / 8 GPUs / ¥1.96 = 505.1 h: at 505 h and below containers are cheaper.
    let hours = find(&flips, "deployment", "usage.hours_per_gpu_month");
    assert_eq!(hours.from, serde_json::json!(600.0));
    assert_eq!(hours.flips_at, serde_json::json!(505.0));
    assert_eq!(hours.becomes, serde_json::json!("container"));
    assert!(hours.given.is_none());
    assert!(
        hours.text.contains("505 h") && hours.text.contains("containers"),
        "{}",
        hours.text
    );
    // Seven GPUs on a committed container month cost 7 × ¥1,130.40 = ¥7,912.80, less than the
    // box. (A ninth GPU no longer flips: one data-parallel job on 9 GPUs does not fit one
    // container instance, so it stays on bare metal, two boxes.)
    let gpus = find(&flips, "deployment", "usage.gpus");
    assert_eq!(gpus.flips_at, serde_json::json!(7));
    // The same line is the `usage` criterion's.
    assert_eq!(
        find(&flips, "usage", "usage.hours_per_gpu_month").flips_at,
        serde_json::json!(505.0)
    );
    // Nearest first within each target, deployment first.
    assert_eq!(flips[0].id, "deployment");
    let distances: Vec<f64> = flips
        .iter()
        .filter(|f| f.id == "deployment")
        .filter_map(|f| f.distance)
        .collect();
    assert!(distances.windows(2).all(|w| w[0] <= w[1]), "{distances:?}");
}

#[test]
fn a_price_edit_moves_the_flip_point() {
    let dir = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,10625,8500,CNY",
    )]);
    let graph = common::compile_dir(dir.path()).unwrap();
    let cheaper = flips(&graph, "examples/lora-7b-4090.yaml");
    // ¥8,500 / 8 / ¥1.96 = 542.1 h: the line moves from 505 h to 542 h.
    let hours = find(&cheaper, "deployment", "usage.hours_per_gpu_month");
    assert_eq!(hours.flips_at, serde_json::json!(542.0));
    assert_eq!(hours.becomes, serde_json::json!("container"));

    // At ¥9,500 the box costs more than a committed container month for its 8 GPUs
    // (8 × 720 h × ¥1.57 = ¥9,043.20): no number of busy hours makes it cheaper.
    let dir = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,11875,9500,CNY",
    )]);
    let graph = common::compile_dir(dir.path()).unwrap();
    let dearer = flips(&graph, "examples/lora-7b-4090.yaml");
    let hours = dearer
        .iter()
        .find(|f| f.id == "deployment" && f.field == "usage.hours_per_gpu_month");
    assert!(
        hours.is_none_or(|f| f.given.is_some()),
        "busy hours alone cannot flip it: {hours:#?}"
    );
}

#[test]
fn a_field_that_changes_nothing_alone_gets_its_line_under_the_paired_change() {
    let graph = common::graph();
    let flips = flips(&graph, "examples/partial-node-2gpus.yaml");
    // Two GPUs busy: no number of hours makes the box cheaper. Eight GPUs would (seven on a
    // committed month still cost 7 × 720 h × ¥1.57 = ¥7,912.80, below the ¥7,920 box), and at
    // eight the line is ¥7,920 / (8 × ¥1.96) = 505.1 h.
    let gpus = find(&flips, "deployment", "usage.gpus");
    assert_eq!(gpus.flips_at, serde_json::json!(8));
    let hours = find(&flips, "deployment", "usage.hours_per_gpu_month");
    let given = hours.given.as_ref().expect("a line under another change");
    assert_eq!(given.field, "usage.gpus");
    assert_eq!(given.value, serde_json::json!(8));
    assert_eq!(hours.flips_at, serde_json::json!(505.0));
    assert_eq!(hours.distance, None);
    assert!(
        hours
            .text
            .starts_with("No number of busy hours per GPU alone"),
        "{}",
        hours.text
    );
}

#[test]
fn flags_and_choices_are_tried_and_the_words_follow_the_language() {
    let policy = Policy::embedded().unwrap();
    let graph = Graph::compile_in(policy, Lang::Zh).unwrap();
    let flips = flips(&graph, "examples/container-light-inference.yaml");
    let isolation = find(&flips, "deployment", "requirements.physical_isolation");
    assert_eq!(isolation.flips_at, serde_json::json!(true));
    assert_eq!(isolation.becomes, serde_json::json!("bare_metal"));
    assert!(isolation.text.contains("物理隔离"), "{}", isolation.text);
    assert!(isolation.text.contains("裸金属"), "{}", isolation.text);
}

#[test]
fn a_policy_without_a_sensitivity_section_reports_none() {
    let dir = common::edited_rules(&[]);
    std::fs::remove_file(dir.path().join("sensitivity.yaml")).unwrap();
    let graph = common::compile_dir(dir.path()).unwrap();
    assert!(flips(&graph, "examples/lora-7b-4090.yaml").is_empty());
}

#[test]
fn a_change_just_past_a_table_edge_is_said_as_the_edge() {
    let graph = common::graph();
    let job = flips(&graph, "examples/mistake-70b-on-4090.yaml");
    // The scenario row `pretrain_70b_100b` starts at 70B: the offer changes just below it. The
    // nearest value (69.5B at the field's 0.5 step) stays in `flips_at`; the words say the edge.
    let size = find(&job, "offer", "workload.model_params_b");
    assert_eq!(size.flips_at, serde_json::json!(69.5));
    assert_eq!(size.edge, Some(serde_json::json!(70.0)));
    assert!(size.text.contains("below a 70B model"), "{}", size.text);
    // Whole numbers keep their value: "at 9 GPUs", not "above 8".
    let gpus = flips(&graph, "examples/lora-7b-4090.yaml");
    let gpus = find(&gpus, "deployment", "usage.gpus");
    assert_eq!(gpus.edge, None);
    assert!(gpus.text.contains("at 7 GPUs busy"), "{}", gpus.text);
}
