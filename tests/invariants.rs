//! Invariants: a decision that breaks one is refused everywhere a decision is made (`decide`,
//! `decide batch`, `decide test`, the library), never in the sensitivity analysis's partial
//! re-evaluations; `decide validate`'s counterexample is a profile that can be run.

use crate::common;

use std::path::Path;

use decide_engine::{ErrorKind, Fault, Graph, Policy, Source};

/// A copy of the shipped rules with `invariants.yaml` holding `yaml`.
fn rules_with(yaml: &str) -> tempfile::TempDir {
    let dir = common::edited_rules(&[]);
    std::fs::write(dir.path().join("invariants.yaml"), yaml).unwrap();
    dir
}

/// Busy small models are put on bare metal, so this invariant is wrong for them.
const SMALL_MODELS_RENT_CONTAINERS: &str = r#"
invariants:
  - id: offer_matches_deployment
    title: {en: "The recommended offer is of the deployment's kind", zh: "推荐方案与部署方式一致"}
    holds: recommended_offer.kind == deployment or (deployment == 'mixed' and recommended_offer.kind == 'bare_metal')
    message: {en: "the deployment is {{ deployment }}, but the offer is {{ recommended_offer.kind }}", zh: "部署方式为 {{ deployment }}，方案却是 {{ recommended_offer.kind }}"}
  - id: small_models_rent_containers
    title: {en: "Models under 10B parameters rent containers", zh: "10B 以下的模型租容器"}
    holds: profile.workload.model_params_b >= 10 or deployment == 'container'
    message: {en: "a {{ profile.workload.model_params_b | num }}B model is put on {{ recommended_offer.id }}", zh: "{{ profile.workload.model_params_b | num }}B 模型被放在 {{ recommended_offer.id }} 上"}
"#;

fn rules_arg(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// `decide ARGS... --as-of AS_OF --rules RULES`.
fn run_with(rules: &Path, args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(["--as-of", common::AS_OF, "--rules", rules_arg(rules)]);
    common::run(&all)
}

#[test]
fn a_violation_exits_1_names_the_invariant_and_writes_no_file() {
    let rules = rules_with(SMALL_MODELS_RENT_CONTAINERS);
    let out_dir = tempfile::tempdir().unwrap();
    let output = out_dir.path().join("memo.md");
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--as-of",
        common::AS_OF,
        "--rules",
        rules_arg(rules.path()),
        "--output",
        output.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        !output.exists(),
        "no memo is written for a broken invariant"
    );
    assert_eq!(
        std::fs::read_dir(out_dir.path()).unwrap().count(),
        0,
        "no temporary file is left behind"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "error: invariant `small_models_rent_containers` violated: a 7B model is put on rtx4090-x8-sichuan2"
        ),
        "{err}"
    );
    assert!(err.contains("invariants.yaml:9:12"), "{err}");
    assert!(
        err.contains("help: invariant: Models under 10B parameters rent containers"),
        "{err}"
    );
    assert!(
        err.contains("help: profile `Support-bot 7B LoRA`, revision sha256:"),
        "{err}"
    );
    assert!(
        err.contains("help: policy `GPU procurement policy"),
        "{err}"
    );

    // Without the invariant the same profile is decided.
    let out = run_with(
        rules_with("invariants: []\n").path(),
        &["examples/lora-7b-4090.yaml"],
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_library_returns_an_invariant_error() {
    let rules = rules_with(SMALL_MODELS_RENT_CONTAINERS);
    let graph =
        Graph::compile(Policy::from_dir(rules.path()).unwrap().at(common::as_of())).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lora-7b-4090.yaml"),
    )
    .unwrap();
    let err = common::decide_text(&graph, &text).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invariant);
    assert_eq!(err.exit_code(), 1);
    // What broke, as data: the invariant, its message for this profile, what did not hold.
    assert_eq!(
        err.fault(),
        Some(&Fault::InvariantViolated {
            id: "small_models_rent_containers".to_owned(),
            message: "a 7B model is put on rtx4090-x8-sichuan2".to_owned(),
            holds: "profile.workload.model_params_b >= 10 or deployment == 'container'".to_owned(),
            verdict: "gave false".to_owned(),
        }),
        "{}",
        err.render()
    );
    // A container case keeps both invariants and is decided.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/container-light-inference.yaml"),
    )
    .unwrap();
    assert!(common::decide_text(&graph, &text).is_ok());
}

#[test]
fn the_sensitivity_analysis_does_not_check_invariants() {
    // 200 busy hours on bare metal for compliance: the analysis varies the busy hours upwards
    // (still bare metal) and so evaluates profiles that break this invariant, yet the profile
    // itself keeps it and its memo (with the analysis) is written.
    let rules = rules_with(
        r#"
invariants:
  - id: bare_metal_under_300_hours
    title: Bare metal only under 300 busy hours
    holds: profile.usage.hours_per_gpu_month < 300 or deployment == 'container'
    message: "bare metal at {{ profile.usage.hours_per_gpu_month }} hours"
"#,
    );
    let out = run_with(rules.path(), &["examples/compliance-only.yaml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let memo = String::from_utf8(out.stdout).unwrap();
    assert!(memo.contains("What would change the answer"), "{memo}");
    // The same profile at 400 busy hours, decided in full, is refused.
    let dir = tempfile::tempdir().unwrap();
    let busier = dir.path().join("busier.yaml");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/compliance-only.yaml"),
    )
    .unwrap();
    std::fs::write(
        &busier,
        text.replace("hours_per_gpu_month: 200", "hours_per_gpu_month: 400"),
    )
    .unwrap();
    let out = run_with(rules.path(), &[busier.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_batch_reports_the_violating_profile_and_decides_the_rest() {
    let rules = rules_with(SMALL_MODELS_RENT_CONTAINERS);
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let stream = format!(
        "{}---\n{}---\n{}",
        read("container-light-inference.yaml"),
        read("lora-7b-4090.yaml"),
        read("pretrain-70b-job.yaml")
    );
    let fleet = dir.path().join("fleet.yaml");
    std::fs::write(&fleet, &stream).unwrap();
    let second = stream
        .lines()
        .position(|l| l == "---")
        .map(|i| i + 2)
        .unwrap();
    let out = run_with(rules.path(), &["batch", fleet.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The violating profile's record is its error, in its place, at the line its document
    // starts at.
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[1]["line"], second, "{}", lines[1]);
    assert_eq!(lines[1]["error"]["kind"], "invariant", "{}", lines[1]);
    let names: Vec<&str> = lines.iter().filter_map(|r| r["profile"].as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(!names.contains(&"Support-bot 7B LoRA"), "{names:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invariant `small_models_rent_containers` violated"),
        "{err}"
    );
    assert!(
        err.contains(&format!("the profile is at {}:{second}", fleet.display())),
        "{err}"
    );
    assert!(err.contains("3 profiles: 2 decided, 1 failed."), "{err}");
}

#[test]
fn decide_test_names_the_violated_invariant() {
    let rules = rules_with(SMALL_MODELS_RENT_CONTAINERS);
    let out = common::run(&["test", "--rules", rules_arg(rules.path())]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("FAIL"), "{text}");
    assert!(
        text.contains("error: invariant `small_models_rent_containers` violated"),
        "{text}"
    );
    assert!(!text.contains("offer_matches_deployment"), "{text}");
}

#[test]
fn an_unknown_name_in_holds_is_a_load_error_with_a_suggestion() {
    let rules = rules_with(
        r#"
invariants:
  - id: offer_matches_deployment
    title: The recommended offer is of the deployment's kind
    holds: recommended_offer.kind == deploymnet
    message: "{{ deployment }}"
"#,
    );
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("invariant `offer_matches_deployment`: unknown name `deploymnet` in `holds`"),
        "{err}"
    );
    assert!(err.contains("did you mean `deployment`?"), "{err}");
    assert!(err.contains("invariants.yaml:5:12"), "{err}");
}

#[test]
fn invariant_ids_are_unique_among_nodes_and_invariants() {
    let rules = rules_with(
        r#"
invariants:
  - id: offer_matches_deployment
    title: one
    holds: "true"
    message: one
  - id: offer_matches_deployment
    title: two
    holds: "true"
    message: two
"#,
    );
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("duplicate id `offer_matches_deployment`"),
        "{err}"
    );
}

#[test]
fn a_node_read_only_by_an_invariant_is_used() {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("zz-extra.yaml"),
        r#"
facts:
  - id: extra_floor_cny
    title: {en: "A floor only the invariant reads", zh: "只有不变量读取的下限"}
    value: 0
    type: number
invariants:
  - id: costs_are_not_negative
    title: {en: "The monthly cost is not negative", zh: "月费不为负"}
    holds: recommended_monthly_cny >= extra_floor_cny
    message: {en: "a monthly cost of {{ recommended_monthly_cny }}", zh: "月费为 {{ recommended_monthly_cny }}"}
"#,
    )
    .unwrap();
    let out = run_with(rules.path(), &["validate"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("never used"), "{text}");
    let shipped = decide_engine::Policy::embedded().unwrap().invariants.len();
    assert!(
        text.contains(&format!("Invariants ({}): ", shipped + 1)),
        "{text}"
    );
    assert!(text.contains("none violated.\n"), "{text}");
    assert!(text.ends_with("Clean: no findings.\n"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn the_counterexample_validate_prints_is_a_profile_that_breaks_the_invariant() {
    let rules = rules_with(SMALL_MODELS_RENT_CONTAINERS);
    let out = run_with(rules.path(), &["validate"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("warning: invariant `small_models_rent_containers` can be violated: "),
        "{text}"
    );
    // The violation's verdict, read from the error's fault.
    assert!(
        text.contains(
            "help: `holds: profile.workload.model_params_b >= 10 or deployment == 'container'` \
             gave false\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(": 1 violated (`small_models_rent_containers`).\n")
            && text.ends_with("\n1 finding.\n"),
        "{text}"
    );
    // The YAML under the finding's help, unindented.
    let mut lines = text
        .lines()
        .skip_while(|l| !l.ends_with(" name: generated profile"));
    let first = lines.next().expect("a counterexample");
    let indent = first.len() - "name: generated profile".len();
    let mut yaml = String::new();
    for line in std::iter::once(first)
        .chain(lines.take_while(|l| l.len() > indent && l[..indent].trim().is_empty()))
    {
        yaml.push_str(&line[indent..]);
        yaml.push('\n');
    }
    let source = Source::new("counterexample.yaml", yaml.as_str());
    let graph =
        Graph::compile(Policy::from_dir(rules.path()).unwrap().at(common::as_of())).unwrap();
    let err = decide_tools::decide(&graph, &source, common::as_of()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invariant, "{yaml}");
    assert!(
        matches!(
            err.fault(),
            Some(Fault::InvariantViolated { id, .. }) if id == "small_models_rent_containers"
        ),
        "{yaml}\n{}",
        err.render()
    );
}
