//! What would change the answer: the flip points are found from the rules (they move when a
//! price does), the nearest across whole boxes (checked by brute force), lines under another
//! field's change are reported, list fields are toggled, a field whose `when` is false is not
//! probed, every reported change is what the rules decide there and says its price, and the
//! words follow the language.

use crate::common;

use decide_engine::decision::Flip;
use decide_engine::{Evaluation, Graph, Lang, Policy, Profile, Source};
use decide_tools::Detail;

fn flips(graph: &Graph, path: &str) -> Vec<Flip> {
    let text = std::fs::read_to_string(path).unwrap();
    let (_, e) = decide_tools::decide(graph, &Source::new(path, text), common::as_of()).unwrap();
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
    let policy = common::policy();
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
    let mistake = flips(&graph, "examples/mistake-70b-on-4090.yaml");
    // The interconnect criterion holds from a 30B model (criteria.yaml): it stops holding just
    // below. The nearest value (29.5B at the field's 0.5 step) stays in `flips_at`; the words
    // say the edge.
    let size = find(&mistake, "interconnect", "workload.model_params_b");
    assert_eq!(size.flips_at, serde_json::json!(29.5));
    assert_eq!(size.edge, Some(serde_json::json!(30.0)));
    assert!(size.text.contains("below a 30B model"), "{}", size.text);
    // An edge at the profile's own value says nothing ("below a 70B model (now a 70B model)"):
    // the scenario row `pretrain_70b_100b` starts at 70B, this profile's size, and the change
    // is said at the value found.
    let job = flips(&graph, "examples/mistake-70b-on-4090.yaml");
    let size = find(&job, "offer", "workload.model_params_b");
    assert_eq!(size.flips_at, serde_json::json!(69.5));
    assert_eq!(size.edge, None);
    assert!(size.text.contains("at a 69.5B model"), "{}", size.text);
    // Whole numbers keep their value: "at 9 GPUs", not "above 8".
    let gpus = flips(&graph, "examples/lora-7b-4090.yaml");
    let gpus = find(&gpus, "deployment", "usage.gpus");
    assert_eq!(gpus.edge, None);
    assert!(gpus.text.contains("at 7 GPUs busy"), "{}", gpus.text);
    // A value no rule writes is no edge: four 910B boxes need 128.3 h for this job, after 5
    // days of porting and with a tenth of the deadline to spare ((128.3 + 120) / 0.9 = 275.8 h,
    // 11.5 days), so the offer turns to them at 11.5 days (the field's step is half a day).
    let job = flips(&graph, "examples/measured-claim-h100.yaml");
    let deadline = find(&job, "offer", "job.deadline_days");
    assert_eq!(deadline.flips_at, serde_json::json!(11.5));
    assert_eq!(deadline.edge, None);
    assert!(
        deadline.text.contains("at a deadline of 11.5 days"),
        "{}",
        deadline.text
    );
}

/// 7B `lora_finetune` jobs, each inside one box or instance (no parallelism listed), over `gpus`
/// busy GPUs at 600 h each a month: the box bill is a sawtooth in the GPU count (whole 8-GPU
/// boxes), the container bill a line.
fn sawtooth(gpus: u32) -> String {
    format!(
        "name: sawtooth\nworkload: {{task: lora_finetune, model_params_b: 7}}\n\
         usage: {{gpus: {gpus}, hours_per_gpu_month: 600, months: 6}}\n"
    )
}

/// The record's `sensitivity` for `yaml`.
fn flips_of(graph: &Graph, yaml: &str) -> Vec<Flip> {
    let (_, e) =
        decide_tools::decide(graph, &Source::new("p.yaml", yaml), common::as_of()).unwrap();
    e.decision.sensitivity.unwrap()
}

/// What target `id` (the deployment, the offer or a criterion) is for `yaml`, decided without
/// the sensitivity analysis.
fn value_of(graph: &Graph, yaml: &str, id: &str) -> serde_json::Value {
    let source = Source::new("profile.yaml", yaml);
    let (_, e) = decide_tools::decide_with(graph, &source, common::as_of(), Detail::LEAN).unwrap();
    match id {
        "deployment" => serde_json::json!(e.decision.deployment),
        "offer" => serde_json::json!(e.decision.offer),
        _ => serde_json::to_value(&e.values[id]).unwrap(),
    }
}

#[test]
fn across_whole_boxes_the_nearest_gpu_count_that_flips_is_found() {
    let graph = common::graph();
    let now = 64;
    let yaml = sawtooth(now);
    let flips = flips_of(&graph, &yaml);
    // Eight full boxes (¥63,360) beat 64 GPUs of containers; at 49 GPUs seven boxes bill
    // ¥55,440 but 49 committed container GPUs ¥55,389.60 (and 41, 33 likewise), so the usage
    // criterion turns there. Doubling down from 64 (63, 62, 60, 56, 48, 32) lands on full boxes
    // only, and the search used to report "at 28 GPUs busy".
    let usage = find(&flips, "usage", "usage.gpus");
    assert_eq!(usage.flips_at, serde_json::json!(49), "{usage:#?}");
    assert_eq!(usage.becomes, serde_json::json!(false));
    // The deployment turns one GPU either side: 63 GPUs are seven boxes and seven committed
    // container GPUs (¥63,352.80, ¥7.20 under eight boxes), 65 are eight boxes and one
    // container GPU (¥64,490.40, under nine boxes): both mixed plans (rules/mixed.yaml).
    let deployment = find(&flips, "deployment", "usage.gpus");
    assert!(
        [serde_json::json!(63), serde_json::json!(65)].contains(&deployment.flips_at),
        "{deployment:#?}"
    );
    assert_eq!(deployment.becomes, serde_json::json!("mixed"));
    // Every flip by the GPU count is the nearest: brute force over every count nearer than it,
    // on both sides, finds the target unchanged, and at it changed to what the record says.
    let by_gpus: Vec<&Flip> = flips.iter().filter(|f| f.field == "usage.gpus").collect();
    assert!(by_gpus.len() >= 2, "{by_gpus:#?}");
    for flip in by_gpus {
        let at = u32::try_from(flip.flips_at.as_u64().unwrap()).unwrap();
        let before = value_of(&graph, &yaml, &flip.id);
        let reach = at.abs_diff(now);
        for gpus in (now.saturating_sub(reach - 1)).max(1)..now + reach {
            assert_eq!(
                value_of(&graph, &sawtooth(gpus), &flip.id),
                before,
                "{} already changes at {gpus} GPUs, nearer than {at}",
                flip.id
            );
        }
        assert_eq!(value_of(&graph, &sawtooth(at), &flip.id), flip.becomes);
    }
}

/// `yaml` decided (without the sensitivity analysis) with profile field `field` (a dotted
/// path) set to `value`.
fn decide_changed(graph: &Graph, yaml: &str, field: &str, value: &serde_json::Value) -> Evaluation {
    let profile = Profile::from_source(&Source::new("profile.yaml", yaml)).unwrap();
    let mut json = serde_json::to_value(&profile).unwrap();
    let mut node = &mut json;
    for key in field.split('.') {
        node = node
            .as_object_mut()
            .unwrap()
            .entry(key)
            .or_insert(serde_json::json!({}));
    }
    *node = value.clone();
    let source = Source::new("changed.json", json.to_string());
    decide_tools::decide_with(graph, &source, common::as_of(), Detail::LEAN)
        .unwrap()
        .1
}

/// Yuan as the rules' `cny` filter writes a monthly bill: whole, with thousands separators.
fn cny(v: f64) -> String {
    let digits = format!("{:.0}", v.round());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("¥{out}")
}

#[test]
fn every_reported_change_is_what_the_rules_decide_there_and_says_its_price() {
    let graph = common::graph();
    let mut fields = std::collections::BTreeSet::new();
    for example in [
        "examples/lora-7b-4090.yaml",
        "examples/pretrain-70b-job.yaml",
        "examples/inference-13b-high-concurrency.yaml",
        "examples/measured-claim-h100.yaml",
        "examples/long-context-70b-inference.yaml",
        "examples/qlora-70b-4090.yaml",
    ] {
        let yaml = std::fs::read_to_string(example).unwrap();
        for flip in flips(&graph, example).iter().filter(|f| f.given.is_none()) {
            let e = decide_changed(&graph, &yaml, &flip.field, &flip.flips_at);
            let now = match flip.id.as_str() {
                "deployment" => serde_json::json!(e.decision.deployment),
                "offer" => serde_json::json!(e.decision.offer),
                id => serde_json::to_value(&e.values[id]).unwrap(),
            };
            assert_eq!(now, flip.becomes, "{example}: {flip:#?}");
            // A change of the answer, or of the GPUs rented, says what the answer then costs.
            if matches!(flip.id.as_str(), "deployment" | "offer" | "gpus_rented") {
                let cost = e.decision.costs["recommended_monthly_cny"]
                    .as_number()
                    .unwrap();
                let said = format!("{} a month then", cny(cost));
                assert!(
                    flip.text.contains(&said),
                    "{example}: {said} in {}",
                    flip.text
                );
            } else {
                assert!(!flip.text.contains("a month then"), "{}", flip.text);
            }
            fields.insert(flip.field.clone());
        }
    }
    // The job's fields (given by measured-claim-h100) and the list of parallelism are probed.
    for field in [
        "job.deadline_days",
        "workload.tokens_b",
        "workload.parallelism",
    ] {
        assert!(fields.contains(field), "no change by {field} in {fields:?}");
    }
}

#[test]
fn a_kind_of_parallelism_is_added_or_removed_and_said_so() {
    let graph = common::graph();
    let flips = flips(&graph, "examples/lora-7b-4090.yaml");
    // The 4090 box's PCIe links carry data parallelism only: with tensor parallelism it is out.
    let tensor = flips
        .iter()
        .find(|f| {
            f.field == "workload.parallelism" && f.flips_at == serde_json::json!(["data", "tensor"])
        })
        .unwrap_or_else(|| panic!("no change with tensor parallelism in {flips:#?}"));
    assert_eq!(tensor.from, serde_json::json!(["data"]));
    assert_eq!(tensor.distance, Some(1.0));
    assert!(
        tensor
            .text
            .contains(" with tensor parallelism (now data parallelism"),
        "{}",
        tensor.text
    );
    let zh = Graph::compile_in(common::policy(), Lang::Zh).unwrap();
    let zh_flips = self::flips(&zh, "examples/lora-7b-4090.yaml");
    let tensor = find(&zh_flips, &tensor.id, "workload.parallelism");
    assert!(
        tensor.text.starts_with("加上张量并行时，"),
        "{}",
        tensor.text
    );
    assert!(tensor.text.contains("目前为数据并行"), "{}", tensor.text);
}

#[test]
fn a_field_whose_when_is_false_is_not_probed() {
    // Serving replicas (`layout` is `replicas`, no pipeline stages): a replica spans no
    // machines, so machines per job apply only as a bill for boxes asked for and not used, and
    // `workload.nodes` is not searched.
    let graph = common::graph();
    let serving = "examples/inference-13b-high-concurrency.yaml";
    let by_nodes = |flips: &[Flip]| flips.iter().any(|f| f.field == "workload.nodes");
    assert!(!by_nodes(&flips(&graph, serving)));
    // Without the `when`, the search reports "containers at 2 machines per job" (a second box
    // billed for nothing), so it is the `when` that leaves it out.
    let dir = common::edited_rules(&[(
        "sensitivity.yaml",
        "      when: layout == 'sharded' or 'pipeline' in profile.workload.parallelism\n",
        "",
    )]);
    let unguarded = common::compile_dir(dir.path()).unwrap();
    assert!(by_nodes(&flips(&unguarded, serving)));
    // A job sharded over its machines (data parallelism) is still probed on them.
    assert!(by_nodes(&flips(&graph, "examples/lora-7b-4090.yaml")));
}

#[test]
fn a_when_is_checked_when_the_rules_load() {
    let dir = common::edited_rules(&[(
        "sensitivity.yaml",
        "when: layout == 'sharded'",
        "when: layuot == 'sharded'",
    )]);
    let err = common::compile_dir(dir.path()).unwrap_err();
    assert!(err.contains("unknown name `layuot`"), "{err}");
    assert!(err.contains("did you mean `layout`?"), "{err}");
    assert!(err.contains("sensitivity.yaml:"), "{err}");
}

/// A long-context service on 12 GPUs at `model_b`: the cheapest option turns between boxes
/// and containers every few billion parameters (the units a replica takes step with the model),
/// so the answer changes and changes back between the values a doubling search tries.
fn banded(model_b: f64) -> String {
    format!(
        "name: banded\nworkload: {{task: inference, model_params_b: {model_b}, context_tokens: 32768, concurrent_sequences: 32}}\n\
         usage: {{gpus: 12, hours_per_gpu_month: 200}}\n"
    )
}

#[test]
fn across_model_sizes_the_nearest_change_is_found_where_the_answer_comes_and_goes() {
    let graph = common::graph();
    for now in [45.0_f64, 60.0, 80.0] {
        let yaml = banded(now);
        let flips = flips_of(&graph, &yaml);
        let by_size: Vec<&Flip> = flips
            .iter()
            .filter(|f| f.field == "workload.model_params_b" && f.edge.is_none())
            .collect();
        assert!(
            by_size.iter().any(|f| f.id == "deployment"),
            "{now}B: {by_size:#?}"
        );
        // Every value of the field's step nearer than the change reported leaves the target as
        // it is, and at the change it is what the record says.
        for flip in by_size {
            let at = flip.flips_at.as_f64().unwrap();
            let before = value_of(&graph, &yaml, &flip.id);
            let mut k = 1.0;
            while 0.5 * k < (at - now).abs() {
                for m in [now - 0.5 * k, now + 0.5 * k] {
                    if m > 0.0 {
                        assert_eq!(
                            value_of(&graph, &banded(m), &flip.id),
                            before,
                            "{}: at {now}B it already changes at {m}B, nearer than {at}B",
                            flip.id
                        );
                    }
                }
                k += 1.0;
            }
            assert_eq!(
                value_of(&graph, &banded(at), &flip.id),
                flip.becomes,
                "{now}B"
            );
        }
    }
}

/// Every profile the project ships: the examples and the policy's test cases, as YAML text.
fn shipped_profiles() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = common::examples()
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/tests");
    for file in common::yaml_files(&dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let cases: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        for (i, case) in cases["cases"].as_array().unwrap().iter().enumerate() {
            out.push((
                format!("{} case {}", file.display(), i + 1),
                case["profile"].to_string(),
            ));
        }
    }
    out
}

/// Values of a field strictly between `from` and `to`: every step of the policy's probe of it
/// (`rules/sensitivity.yaml`) where there are at most [`BETWEEN_MAX`] of them, else that many
/// evenly spaced on the same grid of steps (the probe's `step` is the resolution the analysis
/// promises: a window of another answer narrower than a step, such as a mixed plan between
/// 32.3B and 32.5B at a step of 0.5B, lies between two of its values); whole numbers where the
/// profile model says so.
fn between(policy: &Policy, field: &str, from: f64, to: f64) -> Vec<serde_json::Value> {
    const BETWEEN_MAX: u32 = 60;
    let whole = common::bounds(field).integer;
    let probe_step = policy
        .sensitivity
        .as_ref()
        .and_then(|s| s.item.fields.iter().find(|p| p.field.value == field))
        .and_then(|p| p.step);
    let step = probe_step.unwrap_or(if whole {
        1.0
    } else {
        (to - from).abs() / f64::from(BETWEEN_MAX)
    });
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a small count"
    )]
    let steps = ((to - from).abs() / step).round() as u32;
    let n = steps.min(BETWEEN_MAX);
    let mut out: Vec<serde_json::Value> = Vec::new();
    for i in 1..n {
        let mut v = from + (to - from) * f64::from(i) / f64::from(n);
        if let Some(step) = probe_step {
            v = from + ((v - from) / step).round() * step;
        }
        let value = if whole {
            serde_json::json!(v.round())
        } else {
            serde_json::json!(v)
        };
        if !out.contains(&value)
            && value != serde_json::json!(from)
            && value != serde_json::json!(to)
        {
            out.push(value);
        }
    }
    out
}

/// What would change the answer is exact on every profile the project ships: each line's
/// answer at `flips_at` is `becomes`, and at the values between `from` and `flips_at` (every
/// step of the field where there are at most 60, else 60 evenly spaced) it is what it is now.
#[test]
fn every_line_of_every_shipped_profile_is_exact() {
    let graph = common::graph();
    let policy = common::policy();
    let mut lines = 0;
    for (name, yaml) in shipped_profiles() {
        let (_, e) = decide_tools::decide(
            &graph,
            &Source::new("p.yaml", yaml.as_str()),
            common::as_of(),
        )
        .unwrap_or_else(|err| panic!("{name}: {}", err.render()));
        let now = |id: &str, e: &Evaluation| match id {
            "deployment" => serde_json::json!(e.decision.deployment),
            "offer" => serde_json::json!(e.decision.offer),
            _ => serde_json::to_value(&e.values[id]).unwrap(),
        };
        for flip in e.decision.sensitivity.iter().flatten() {
            if flip.given.is_some() {
                continue;
            }
            lines += 1;
            let at = decide_changed(&graph, &yaml, &flip.field, &flip.flips_at);
            assert_eq!(now(&flip.id, &at), flip.becomes, "{name}: {flip:#?}");
            let (Some(from), Some(to)) = (flip.from.as_f64(), flip.flips_at.as_f64()) else {
                continue;
            };
            if flip.from.is_boolean() {
                continue;
            }
            for value in between(&policy, &flip.field, from, to) {
                let there = decide_changed(&graph, &yaml, &flip.field, &value);
                assert_eq!(
                    now(&flip.id, &there),
                    now(&flip.id, &e),
                    "{name}: {} changes at {value}, before {}: {flip:#?}",
                    flip.id,
                    flip.flips_at
                );
            }
        }
    }
    assert!(lines > 200, "{lines} lines checked");
}

/// A cliff inside the answer is said with its price: the 34B fine-tune due in twelve days takes
/// two 910B boxes, and a deadline a day and a half shorter (10.5 days) leaves too little after
/// the port and the margin for two: a third box, half as much again for the month. One more GPU for a container service costs in proportion and is no cliff: it is
/// in the record, not in the memo. A `watch` naming no node is refused where it is written.
#[test]
fn a_cliff_in_the_count_is_said_with_its_price() {
    let graph = common::graph();
    let all = flips(&graph, "examples/deadline-several-boxes.yaml");
    let deadline = find(&all, "gpus_rented", "job.deadline_days");
    assert_eq!(deadline.from, serde_json::json!(12.0));
    assert_eq!(deadline.flips_at, serde_json::json!(10.5));
    assert_eq!(deadline.becomes, serde_json::json!(24));
    assert_eq!(deadline.cost, Some(serde_json::json!(63600)));
    for (lang, said) in [
        (
            "en",
            "- The number of GPUs rented turns from 16 to 24 at a deadline of 10.5 days (now a deadline of 12 days; ¥63,600 a month then).",
        ),
        (
            "zh",
            "- 10.5 天的截止期限时，租用的 GPU 数由 16 变为 24（目前为 12 天的截止期限；届时每月 ¥63,600）。",
        ),
    ] {
        let memo = common::run_ok(&[
            "examples/deadline-several-boxes.yaml",
            "--as-of",
            common::AS_OF,
            "--lang",
            lang,
        ]);
        assert!(memo.contains(said), "{lang}:\n{memo}");
    }

    let service = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 3, hours_per_gpu_month: 200}\n";
    let (_, e) =
        decide_tools::decide(&graph, &Source::new("t.yaml", service), common::as_of()).unwrap();
    assert_eq!(e.decision.deployment, "container");
    let all = e.decision.sensitivity.unwrap();
    let more = find(&all, "gpus_rented", "usage.gpus");
    assert_eq!(more.becomes, serde_json::json!(4));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.yaml");
    std::fs::write(&path, service).unwrap();
    let memo = common::run_ok(&[path.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert!(!memo.contains("The number of GPUs rented"), "{memo}");

    let rules = common::edited_rules(&[(
        "sensitivity.yaml",
        "    - node: gpus_rented\n",
        "    - node: gpus_rentd\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("sensitivity: `watch` names `gpus_rentd`, which is no node of the policy"),
        "{err}"
    );
    assert!(err.contains("did you mean `gpus_rented`?"), "{err}");
    assert!(err.contains("sensitivity.yaml:"), "{err}");
}

/// A sentence of what would change the answer reads only the values the analysis gives it (a
/// field's `says`: `value`, `added`, `removed`): another name, even one a change's sentence
/// gets, is refused when the rules load, at the sentence.
#[test]
fn a_sentence_reads_only_the_values_the_analysis_gives_it() {
    let dir = common::edited_rules(&[(
        "sensitivity.yaml",
        "says: {en: \"no physical-isolation requirement\"",
        "says: {en: \"no physical-isolation requirement ({{ cost }})\"",
    )]);
    let err = common::compile_dir(dir.path()).unwrap_err();
    assert!(err.contains("`cost`"), "{err}");
    assert!(err.contains("sensitivity.yaml:"), "{err}");
    assert!(err.contains("says"), "{err}");
}

/// A case inside a sentence of `sensitivity:` is refused as in every rule text: it is a row.
#[test]
fn a_sensitivity_sentence_holds_no_tag() {
    let dir = common::edited_rules(&[(
        "sensitivity.yaml",
        "says: {en: \"no physical-isolation requirement\"",
        "says: {en: \"{% if value %}x{% endif %}no physical-isolation requirement\"",
    )]);
    let err = common::compile_dir(dir.path()).unwrap_err();
    assert!(err.contains("has a `{% %}` tag"), "{err}");
    assert!(err.contains("sensitivity.yaml:"), "{err}");
}
