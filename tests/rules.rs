//! Rule-file faults found at load time, and behaviour of the graph and each criterion.

use crate::common;

use decide_engine::{ErrorKind, Evaluation, Fault};
use std::path::Path;

#[test]
fn the_embedded_policy_compiles_and_orders_every_node() {
    let graph = common::graph();
    let nodes = graph.nodes();
    // Each node comes after everything it reads.
    let position = |id: &str| nodes.iter().position(|(n, _, _)| *n == id).unwrap();
    for (id, _, deps) in &nodes {
        for dep in deps {
            assert!(position(dep) < position(id), "{dep} must come before {id}");
        }
    }
    assert!(nodes.iter().any(|(id, _, _)| *id == "deployment"));
}

#[test]
fn a_cycle_is_reported_with_every_node_on_it() {
    // usage → offer_container_monthly_cny → container_best_monthly_cny → … → usage
    let rules = common::edited_rules(&[(
        "facts.yaml",
        "      if offer.kind == 'container' and offer.price.unit == 'gpu_hour' else none\n    type: number",
        "      if usage and offer.kind == 'container' and offer.price.unit == 'gpu_hour' else none\n    type: number",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("the rules have a cycle: bare_metal_choice_basis → container_prefers_scenario → usage_rival → usage_bare_metal_monthly_cny → usage → offer_container_monthly_cny → container_best_monthly_cny → bare_metal_choice_basis"), "{err}");
    assert!(err.contains("`usage` (criterion) is at"), "{err}");
}

#[test]
fn an_unknown_reference_suggests_the_nearest_name() {
    let rules = common::edited_rules(&[(
        "criteria.yaml",
        "and usage_bare_metal_monthly_cny < container_best_monthly_cny",
        "and usage_bare_metal_monthly_cny < container_best_montly_cny",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("unknown name `container_best_montly_cny`"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `container_best_monthly_cny`?"),
        "{err}"
    );
    assert!(err.contains("criteria.yaml:"), "{err}");
}

#[test]
fn a_profile_path_that_does_not_exist_is_caught_at_load() {
    let rules = common::edited_rules(&[(
        "criteria.yaml",
        "when: profile.requirements.physical_isolation",
        "when: profile.requirements.physical_isolaton",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("`profile.requirements.physical_isolaton` is not a profile field"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `profile.requirements.physical_isolation`?"),
        "{err}"
    );
}

#[test]
fn expressions_that_do_not_compile_name_file_node_and_line() {
    let rules = common::edited_rules(&[(
        "facts.yaml",
        "expr: container_gpus * profile.usage.hours_per_gpu_month",
        "expr: container_gpus * (profile.usage.hours_per_gpu_month",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("node `container_hours`: `expr` does not compile"),
        "{err}"
    );
    assert!(err.contains("facts.yaml:"), "{err}");
}

/// The typechecker: what no profile could make right is a rules error when the rules load,
/// pointing at the term in the file, before any profile is read.
#[test]
fn expressions_wrong_for_every_profile_are_refused_where_they_are_written() {
    let rules = common::edited_rules(&[
        (
            "facts.yaml",
            "expr: container_gpus * profile.usage.hours_per_gpu_month",
            "expr: container_gpus * profile.workload.task",
        ),
        (
            "facts.yaml",
            "expr: profile.workload.task in training_tasks",
            "expr: profile.workload.model_params_b * 2",
        ),
    ]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    let facts = std::fs::read_to_string(rules.path().join("facts.yaml")).unwrap();
    let line = |text: &str| facts.lines().position(|l| l.contains(text)).unwrap() + 1;
    // Arithmetic on text (an enumerated profile field), under the term.
    assert!(
        err.contains("node `container_hours`: `expr` is wrong for every profile: this is text and is not a number: `*` is arithmetic"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "facts.yaml:{}:28",
            line("container_gpus * profile.workload.task")
        )),
        "{err}"
    );
    // A fact declared true-or-false whose expression gives a number.
    assert!(
        err.contains("fact `is_training` is declared `type: bool`, and its `expr` gives a number"),
        "{err}"
    );
}

#[test]
fn a_condition_that_is_not_true_or_false_is_refused_when_the_rules_load() {
    let rules = common::edited_rules(&[(
        "checklist.yaml",
        "    when: serving_peak_tokens_s is not none and recommended_offer.id in serving_plan and recommended_offer.id not in serving_measured_ratio\n",
        "    when: profile.usage.gpus * 2\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("`when` is wrong for every profile: a condition gives true or false, and this gives a plain number"),
        "{err}"
    );
    assert!(err.contains("help: compare it"), "{err}");
}

/// A bound catalog offer's field that no offer has is a rules error at the term, naming the
/// field and listing the fields there are at that level, with the nearest one.
#[test]
fn a_field_no_offer_has_is_refused_with_the_fields_there_are() {
    let err = edited_error(&[
        (
            "sizing.yaml",
            "expr: offer.gpus * offer.gpu.memory_gb * memory_usable_fraction",
            "expr: offer.gpus * offer.gpu.memory_gbs * memory_usable_fraction",
        ),
        (
            "scenarios.yaml",
            "       offer.price.list_cny]",
            "       offer.prices.list_cny]",
        ),
    ]);
    assert_snapshot!(err);
}

/// A bound catalog offer's fields have the types the catalog's offers give them: arithmetic on
/// an offer's text is refused (in a per-offer fact and in a select's item from `offers`), joining
/// its number as text is not; a field a quote may give (`price.daily_cny`) is known at any date.
#[test]
fn a_catalog_offers_fields_are_typed() {
    let err = edited_error(&[
        (
            "sizing.yaml",
            "expr: offer.gpus * offer.gpu.memory_gb * memory_usable_fraction",
            "expr: offer.title * 2",
        ),
        (
            "scenarios.yaml",
            "where: offer.kind == 'container'",
            "where: offer.kind + 1 > 0",
        ),
    ]);
    assert_snapshot!(err);
    let rules = common::edited_rules(&[
        (
            "scenarios.yaml",
            "       offer.price.list_cny]",
            "       offer.gpu.memory_gb ~ 'x']",
        ),
        (
            "scenarios.yaml",
            "where: offer.kind == 'container'",
            "where: offer.kind == 'container' and offer.price.daily_cny is not defined",
        ),
    ]);
    common::compile_dir(rules.path()).unwrap();
}

/// A per-offer fact read by an offer's id (`fact[offer.id]`, `fact[container_offer.id]`) has
/// the fact's declared type: a number joined as a list, true-or-false in arithmetic or
/// ordering are refused when the rules load.
#[test]
fn a_per_offer_fact_read_by_an_offer_id_has_its_declared_type() {
    let err = edited_error(&[
        (
            "scenarios.yaml",
            "where: offer.kind == 'bare_metal' and offer_fits[offer.id]",
            "where: offer.kind == 'bare_metal' and offer_fits[offer.id] > 0",
        ),
        (
            "scenarios.yaml",
            "order_by: \"[offer_plan_cny[offer.id], offer_monthly_cny[offer.id]]\"",
            "order_by: offer_monthly_cny[offer.id] | join(', ')",
        ),
        (
            "sizing.yaml",
            "expr: offer.gpus * offer.gpu.memory_gb * memory_usable_fraction",
            "expr: offer.gpus * offer_fits[container_offer.id]",
        ),
    ]);
    assert_snapshot!(err);
    // Where the fact's value is a condition, it is one.
    let rules = common::edited_rules(&[(
        "scenarios.yaml",
        "where: offer.kind == 'bare_metal' and offer_fits[offer.id]",
        "where: offer_fits[offer.id]",
    )]);
    common::compile_dir(rules.path()).unwrap();
}

/// Tables and selects give a type: a select that picks the first offer is a map or none (and
/// its fields are the catalog offers'), one that picks all a list, a table's row a map whose
/// `then:` values are typed where every row gives one JSON type.
#[test]
fn tables_and_selects_give_a_type() {
    let err = edited_error(&[
        (
            "sizing.yaml",
            "expr: offer.gpus * offer.gpu.memory_gb * memory_usable_fraction",
            "expr: offer.gpus * container_offer",
        ),
        (
            "plans.yaml",
            "when: cadence == 'weekly' and fastest_job is not none and cadence_keepers | length == 0",
            "when: cadence == 'weekly' and fastest_job is not none and cadence_keepers > 0",
        ),
        (
            "scenarios.yaml",
            "and offer.gpu.family == scenario.gpu_family and offer_fits[offer.id]",
            "and offer.gpu.family == scenario.gpu_family * 2 and offer_fits[offer.id]",
        ),
        (
            "scenarios.yaml",
            "offer.gpu.family == container_offer.gpu.family",
            "offer.gpu.family == container_offer.gpu.famly",
        ),
    ]);
    assert_snapshot!(err);
}

/// Records know their fields: a select's items mapped by a map literal and a search's record
/// (read per offer) are records, so a field none of them has is refused when the rules load,
/// with the fields it has and the nearest one, and a field's own type (a search's `searched`
/// is a number) is checked where it is used. (A select's mapped values are not typed yet: the
/// nodes are compiled in file order, not in the order they read each other.)
#[test]
fn a_records_fields_are_known() {
    let wall = format!(
        "sizing.yaml:{}:",
        line_of(
            "sizing.yaml",
            "and count_search[offer.id].best.wall is not none"
        )
    );
    for (file, from, to, wanted) in [
        (
            "checklist.yaml",
            "rival_quotes[0].more_cny | abs,",
            "rival_quotes[0].more_cyn | abs,",
            [
                "has no field `more_cyn`",
                "did you mean `more_cny`?",
                "checklist.yaml:40:",
            ],
        ),
        (
            "sizing.yaml",
            "and count_search[offer.id].best.wall is not none",
            "and count_search[offer.id].bets is not none",
            ["has no field `bets`", "did you mean `best`?", &wall],
        ),
        (
            "sizing.yaml",
            "and count_search[offer.id].best.wall is not none",
            "and count_search[offer.id].searched | join(', ') != ''",
            [
                "this is a number and cannot go through `join`",
                "it joins a list",
                &wall,
            ],
        ),
    ] {
        let err = edited_error(&[(file, from, to)]);
        for w in wanted {
            assert!(err.contains(w), "{to}: {w}\n{err}");
        }
    }
}

#[test]
fn texts_that_do_not_compile_name_file_node_and_line() {
    let rules = common::edited_rules(&[(
        "checklist.yaml",
        "The {{ phrases.units }} on these machines",
        "The {{ work spans {{ phrases.units }} on these machines",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("node `network`: a sentence of `phrases.fabric` does not compile: unexpected identifier, expected end of variable block"),
        "{err}"
    );
    // At the sentence at fault: a phrase's row, in English.
    assert!(err.contains("checklist.yaml:258:13"), "{err}");
}

/// A text the engine's text form cannot render (a `set` inside a branch, a macro) is refused
/// when the rules load, at the text, saying what a text may hold; nothing is left to render it.
#[test]
fn a_text_beyond_the_engines_form_is_refused_when_the_rules_load() {
    let rules = common::edited_rules(&[(
        "checklist.yaml",
        "Ask whether snapshots are supported",
        "{% if rents_boxes %}{% set n = 1 %}{% endif %}Ask whether snapshots are supported",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("node `reinstall_snapshot`: `text` cannot be rendered: it uses a tag a rule text does not have"),
        "{err}"
    );
    assert!(err.contains("write the cases as rows"), "{err}");
    assert!(err.contains("checklist.yaml:"), "{err}");
}

/// A text mentioning a name that is neither a node nor a root is refused when the rules load,
/// and a name the text sets itself is not one it mentions.
#[test]
fn texts_mention_only_known_names() {
    let rules = common::edited_rules(&[(
        "checklist.yaml",
        "Ask whether snapshots are supported",
        "{% set m = multi_machine %}{% if m and multi_machines %}{% endif %}Ask whether snapshots are supported",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("multi_machines"), "{err}");
    assert!(err.contains("did you mean `multi_machine`?"), "{err}");
    assert!(!err.contains("`m`"), "{err}");
}

#[test]
fn duplicate_ids_and_missing_prices_are_refused() {
    let rules =
        common::edited_rules(&[("facts.yaml", "id: stale_after_days", "id: hours_per_month")]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("duplicate id `hours_per_month`"), "{err}");
    assert!(err.contains("first defined at"), "{err}");

    let rules = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,19888,15910,CNY",
        "month,19888,,CNY",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("discounted_price: the price is empty"),
        "{err}"
    );
    assert!(
        err.contains("quotes/2026-09-04-marketplace.csv:7:"),
        "{err}"
    );
}

/// Where the rules declare no type (a profile field that may be left out), a condition that
/// gives no true or false is still refused when a profile reaches it.
#[test]
fn a_condition_that_is_not_boolean_fails_naming_the_node() {
    let rules = common::edited_rules(&[(
        "criteria.yaml",
        "when: profile.requirements.physical_isolation",
        "when: profile.workload.concurrent_sequences",
    )]);
    let graph = common::compile_dir(rules.path()).unwrap();
    let err = common::decide_text(&graph, "name: x\nworkload: {task: inference, model_params_b: 7, concurrent_sequences: 4}\nusage: {gpus: 2, hours_per_gpu_month: 100}\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Eval);
    assert!(
        err.message()
            .contains("node `compliance`: condition gave 4 (number), expected true or false"),
        "{}",
        err.render()
    );
}

fn criteria(yaml: &str) -> Vec<(String, bool)> {
    let graph = common::graph();
    let e = common::decide_text(&graph, yaml).unwrap_or_else(|e| panic!("{}", e.render()));
    e.decision
        .criteria
        .iter()
        .map(|c| (c.id.clone(), c.met))
        .collect()
}

fn met(yaml: &str) -> Vec<String> {
    criteria(yaml)
        .into_iter()
        .filter(|(_, m)| *m)
        .map(|(id, _)| id)
        .collect()
}

const BASE: &str = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 100}\n";

#[test]
fn no_criterion_means_containers() {
    assert!(met(BASE).is_empty());
    let graph = common::graph();
    let d = common::decide_text(&graph, BASE).unwrap().decision;
    assert_eq!(d.deployment, "container");
    // A container buyer gets the container items and the contract's open terms, none of the
    // bare-metal acceptance checks.
    let ids: Vec<&str> = d.checklist.iter().map(|c| c.id.as_str()).collect();
    for id in [
        "container_image",
        "container_storage",
        "container_availability",
        "container_billing",
    ] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    for id in [
        "passthrough",
        "topology",
        "network",
        "storage_io",
        "sla",
        "delivery",
    ] {
        assert!(!ids.contains(&id), "{ids:?}");
    }
}

#[test]
fn interconnect_criterion() {
    let tensor = "name: t\nworkload: {task: lora_finetune, model_params_b: 7, parallelism: [tensor]}\nusage: {gpus: 2, hours_per_gpu_month: 100}\n";
    assert_eq!(met(tensor), ["interconnect"]);
    // Serving is replicas: tensor parallelism inside one box or instance runs over its own links,
    // and replicas on several machines need no fabric; a replica across machines does.
    let serving_tensor = "name: t\nworkload: {task: inference, model_params_b: 13, parallelism: [tensor]}\nusage: {gpus: 4, hours_per_gpu_month: 100}\n";
    assert!(met(serving_tensor).is_empty());
    let replicas = "name: t\nworkload: {task: inference, model_params_b: 13, nodes: 2}\nusage: {gpus: 16, hours_per_gpu_month: 100}\n";
    assert!(met(replicas).is_empty());
    let spanning = "name: t\nworkload: {task: inference, model_params_b: 405, parallelism: [pipeline], nodes: 2}\nusage: {gpus: 16, hours_per_gpu_month: 100}\n";
    assert_eq!(met(spanning), ["interconnect"]);
    let nodes = "name: t\nworkload: {task: lora_finetune, model_params_b: 7, nodes: 2}\nusage: {gpus: 16, hours_per_gpu_month: 100}\n";
    assert!(met(nodes).contains(&"interconnect".to_owned()));
    let small_dp = "name: t\nworkload: {task: lora_finetune, model_params_b: 13, parallelism: [data]}\nusage: {gpus: 4, hours_per_gpu_month: 100}\n";
    assert!(met(small_dp).is_empty());
    let large_dp = "name: t\nworkload: {task: lora_finetune, model_params_b: 30, parallelism: [data]}\nusage: {gpus: 4, hours_per_gpu_month: 100}\n";
    assert_eq!(met(large_dp), ["interconnect"]);
}

#[test]
fn usage_criterion_compares_whole_bills_at_the_gpus_used() {
    // 8 GPUs: the article's line (505 h) holds.
    let at = |gpus: u32, hours: u32| {
        format!(
            "name: t\nworkload: {{task: inference, model_params_b: 7}}\nusage: {{gpus: {gpus}, hours_per_gpu_month: {hours}}}\n"
        )
    };
    assert!(met(&at(8, 500)).is_empty());
    assert_eq!(met(&at(8, 510)), ["usage"]);
    // 2 GPUs busy all month: ¥2,822 in containers, far below ¥7,920.
    assert!(met(&at(2, 720)).is_empty());
    // 9 GPUs need two boxes (¥15,840): containers win until 9 × h × 1.96 > 15,840, i.e. 898 h.
    assert!(met(&at(9, 720)).is_empty());
}

#[test]
fn compliance_and_custom_stack_criteria() {
    let iso = format!("{BASE}requirements: {{physical_isolation: true}}\n");
    assert_eq!(met(&iso), ["compliance"]);
    let kernel = format!("{BASE}requirements: {{custom_kernel: true}}\n");
    assert_eq!(met(&kernel), ["custom_stack"]);
    let net = format!("{BASE}requirements: {{custom_network: true}}\n");
    assert_eq!(met(&net), ["custom_stack"]);
}

#[test]
fn the_article_numbers_come_out() {
    let graph = common::graph();
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/pretrain-70b-job.yaml"
    ))
    .unwrap();
    // The article's job as the article states it: claimed hours, no token count, so the claims
    // are the only estimate of time.
    let yaml = example.replace("  tokens_b: 4.6\n", "");
    assert_ne!(yaml, example);
    let d = common::decide_text(&graph, &yaml).unwrap().decision;
    // The record's figures as its JSON gives them.
    let costs = |d: &decide_engine::Decision| serde_json::to_value(&d.costs).unwrap();
    let d = costs(&d);
    assert_eq!(d["breakeven_hours_per_gpu"], 505.1);
    assert_eq!(d["breakeven_hours_per_gpu_discounted"], 630.6);
    assert_eq!(d["usage_box_gpu_month_cny"], 990.0);
    // A job row is an offer at a count: the count the profile asks for (one box, the article's)
    // and, where more boxes are needed to meet the deadline, the sized count.
    let job = |jobs: &serde_json::Value, id: &str, units: u64, field: &str| {
        jobs.as_array()
            .unwrap()
            .iter()
            .find(|j| j["offer"] == id && j["units"] == units)
            .unwrap_or_else(|| panic!("no row of {id} at {units}: {jobs:#}"))[field]
            .clone()
    };
    let jobs = &d["jobs"];
    // Amortised, the article's arithmetic: monthly price / 720 h × job hours, one box each.
    let amortised = |id: &str| job(jobs, id, 1, "cost_cny").as_f64().unwrap();
    assert!((amortised("h100-x8-ningxia1") - 20_272.0).abs() < 0.5);
    assert!((amortised("ascend910b-x8-huawei") - 12_367.0).abs() < 0.5);
    // Billed: a box sold by the month bills a whole month for a 168 h or 420 h job.
    assert_eq!(
        job(jobs, "h100-x8-ningxia1", 1, "billed_cny"),
        serde_json::json!(86880)
    );
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 1, "billed_cny"),
        serde_json::json!(21200)
    );
    // 420 h on one 910B box misses the 10 days. By the memory model that one box ran with the
    // optimizer offloaded (2× the step time); three boxes hold the job in GPU memory and, at the
    // fabric's 80% scaling efficiency, take 420 / 2 / (3 × 0.8) = 87.5 h: ¥63,600, less than
    // one H100 box, and the one-off deadline makes that cheapest configuration the answer
    // (article §4).
    assert_eq!(job(jobs, "ascend910b-x8-huawei", 1, "as_asked"), true);
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 3, "hours"),
        serde_json::json!(87.5)
    );
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 3, "billed_cny"),
        serde_json::json!(63600)
    );
    let article = common::decide_text(&graph, &yaml).unwrap().decision;
    assert_eq!(article.offer, "ascend910b-x8-huawei");

    // With the token count, every verdict uses the one estimate (memory and offload included),
    // not the claims: at one box each, 339.7 h on H100 (2× for the offloaded optimizer) and
    // 820.8 h on 910B, both past the deadline; sized, 2 H100 boxes with offload meet it, and
    // on the 910B, after 5 days of porting and with a tenth of the deadline to spare, 6 boxes in
    // GPU memory (5 would take 102.6 h: in time on their own, not after the port).
    let d = common::decide_text(&graph, &example).unwrap().decision;
    let jobs = &costs(&d)["jobs"];
    assert_eq!(
        job(jobs, "h100-x8-ningxia1", 1, "hours"),
        serde_json::json!(339.7)
    );
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 1, "hours"),
        serde_json::json!(820.8)
    );
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 1, "billed_cny"),
        serde_json::json!(42400)
    );
    assert_eq!(
        job(jobs, "h100-x8-ningxia1", 2, "hours"),
        serde_json::json!(212.4)
    );
    assert_eq!(
        job(jobs, "ascend910b-x8-huawei", 6, "billed_cny"),
        serde_json::json!(127_200)
    );
    let meets = &serde_json::to_value(&d.sections["estimates"]).unwrap()["meets_deadline"];
    assert_eq!(
        meets["h100-x8-ningxia1"], true,
        "212.4 h on 2 boxes is within 10 days"
    );
    assert_eq!(d.offer, "ascend910b-x8-huawei");
}

#[test]
fn stale_prices_are_flagged_after_the_policy_window() {
    let late: jiff::civil::Date = "2026-11-29".parse().unwrap();
    let graph = decide_engine::Graph::compile(common::policy().at(late)).unwrap();
    let source = decide_engine::Source::new("p.yaml", BASE);
    let d = decide_tools::decide(&graph, &source, late)
        .unwrap()
        .1
        .decision;
    let stale = d
        .warnings
        .iter()
        .find(|w| w.id == "stale_prices")
        .expect("stale warning");
    // Named by title, never by id: the recommended offer's quote among the stale ones.
    let title = graph
        .policy()
        .offers
        .iter()
        .find(|o| o.item.id == d.offer)
        .map(|o| o.item.fields["title"]["en"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(
        stale.message.starts_with(&format!(
            "The prices of 9 offers, the recommended {title} among them, were listed more than 30 days before 2026-11-29"
        )),
        "{}",
        stale.message
    );
    assert!(!stale.message.contains(&d.offer), "{}", stale.message);
    let fresh = decide_tools::decide(&common::graph(), &source, common::as_of())
        .unwrap()
        .1
        .decision;
    assert!(fresh.warnings.iter().all(|w| w.id != "stale_prices"));
}

#[test]
fn user_text_cannot_inject_markup_into_the_memo() {
    let graph = common::graph();
    let yaml = BASE.replace(
        "name: t",
        "name: \"<img src=x onerror=alert(1)> [click](http://evil) | x\"",
    );
    let source = decide_engine::Source::new("p.yaml", yaml);
    let (profile, e) = decide_tools::decide(&graph, &source, common::as_of()).unwrap();
    let md = decide_tools::Memo::embedded()
        .unwrap()
        .render(&graph, &profile, &e, decide_tools::Format::Markdown)
        .unwrap();
    let title = md.lines().next().unwrap();
    assert!(!title.contains("<img"), "{title}");
    assert!(!title.contains("[click]"), "{title}");
    assert!(title.contains("&lt;img"), "{title}");
    assert_tables_intact(&md);
}

#[test]
fn a_newline_in_the_name_cannot_start_a_heading_or_break_a_table() {
    let graph = common::graph();
    let yaml = BASE.replace(
        "name: t",
        "name: \"x\\n# Approved | ok |\\n<script>alert(1)</script>\"",
    );
    let source = decide_engine::Source::new("p.yaml", yaml);
    let (profile, e) = decide_tools::decide(&graph, &source, common::as_of()).unwrap();
    let md = decide_tools::Memo::embedded()
        .unwrap()
        .render(&graph, &profile, &e, decide_tools::Format::Markdown)
        .unwrap();
    assert!(!md.lines().any(|l| l.starts_with("# Approved")), "{md}");
    assert!(!md.contains("<script>"), "{md}");
    assert_tables_intact(&md);
}

/// Every row of every Markdown table has as many cells as the table's header.
fn assert_tables_intact(md: &str) {
    let cells = |line: &str| {
        let mut n = 0;
        let mut escaped = false;
        for c in line.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '|' if !escaped => n += 1,
                _ => escaped = false,
            }
        }
        n
    };
    let mut header: Option<usize> = None;
    for line in md.lines() {
        if line.starts_with('|') {
            let n = cells(line);
            match header {
                None => header = Some(n),
                Some(h) => assert_eq!(n, h, "table row breaks its table: {line}"),
            }
        } else {
            header = None;
        }
    }
}

/// The record's contract is the policy's: a promised cost the outputs do not define stops the
/// rules from loading, with the costs that are defined and the nearest name.
#[test]
fn a_promised_cost_must_be_defined() {
    let dir = common::edited_rules(&[(
        "policy.yaml",
        "      - container_monthly_cny\n      - jobs\n",
        "      - container_monthly_cny\n      - jobs\n      - contianer_monthly_cny_x\n",
    )]);
    let err = common::compile_dir(dir.path()).unwrap_err();
    assert!(
        err.contains("`outputs.promises` names the cost `contianer_monthly_cny_x`, which `outputs.costs` does not define"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `container_monthly_cny`?"),
        "{err}"
    );
    assert!(err.contains("policy.yaml:"), "{err}");
}

/// A deployment outside the promised values is a fault in the rules, said with the values the
/// policy promises; without `promises.deployment` any text is a deployment.
#[test]
fn the_deployment_keeps_to_the_promised_values() {
    let yaml = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n";
    let dir = common::edited_rules(&[(
        "policy.yaml",
        "  deployment: deployment\n",
        "  deployment: \"'colo'\"\n",
    )]);
    let graph = common::compile_dir(dir.path()).unwrap();
    let err = common::decide_text(&graph, yaml).unwrap_err().render();
    assert!(
        err.contains("`outputs.deployment` gave `colo`, but the policy promises one of: bare_metal, container, mixed"),
        "{err}"
    );
    let dir = common::edited_rules(&[
        (
            "policy.yaml",
            "  deployment: deployment\n",
            "  deployment: \"'colo'\"\n",
        ),
        (
            "policy.yaml",
            "    deployment: [bare_metal, container, mixed]\n",
            "",
        ),
    ]);
    let graph = common::compile_dir(dir.path()).unwrap();
    let e = common::decide_text(&graph, yaml).unwrap();
    assert_eq!(e.decision.deployment, "colo");
}

/// Without promises, a policy needs no placeholder costs, and has no headline cost to compare.
#[test]
fn a_policy_without_promises_needs_no_placeholder_costs() {
    let mut from = String::new();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/policy.yaml"),
    )
    .unwrap();
    let start = text.find("  promises:\n").unwrap();
    from.push_str(&text[start..]);
    let end = from
        .find("headline_cost: recommended_monthly_cny\n")
        .unwrap()
        + "headline_cost: recommended_monthly_cny\n".len();
    let promises = &from[..end];
    let dir = common::edited_rules(&[
        ("policy.yaml", promises, ""),
        (
            "policy.yaml",
            "    jobs: (job_costs + job_costs_as_asked) | list\n",
            "",
        ),
        (
            "policy.yaml",
            "    breakeven_hours_per_gpu: \"breakeven_hours_per_gpu | round(1) if breakeven_hours_per_gpu is not none else none\"\n",
            "",
        ),
    ]);
    let graph = common::compile_dir(dir.path()).unwrap();
    assert_eq!(graph.headline_cost(), None);
    let yaml = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n";
    let e = common::decide_text(&graph, yaml).unwrap();
    assert!(!e.decision.costs.contains_key("jobs"));
    assert!(!e.decision.costs.contains_key("breakeven_hours_per_gpu"));
    assert_eq!(
        common::graph().headline_cost(),
        Some("recommended_monthly_cny")
    );
}

/// The network item of the contract checklist gives each of the recommended offer's network
/// commands (`tools.network.commands`) a code span of its own and says what they check
/// (`tools.network.what`) in words, in the memo's language; an offer without one is asked for
/// the fabric in writing all the same.
#[test]
fn the_network_check_names_each_command_as_code_and_says_what_it_checks_in_words() {
    let shipped = "network: {commands: [hccn_tool], what: {en: \"link, IP and RoCE checks\", zh: \"链路、IP 与 RoCE 检查\"}}";
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml");
    let source = decide_engine::Source::read(&example, ErrorKind::Profile).unwrap();
    let network_item = |commands: &str, lang: decide_engine::Lang| {
        let rules = common::edited_rules(&[(
            "catalog.yaml",
            shipped,
            &shipped.replace("[hccn_tool]", commands),
        )]);
        let policy = decide_engine::Policy::from_dir(rules.path()).unwrap();
        let graph = decide_engine::Graph::compile_in(policy.at(common::as_of()), lang).unwrap();
        let decision = decide_tools::decide(&graph, &source, common::as_of())
            .unwrap()
            .1
            .decision;
        assert_eq!(
            decision.offer, "ascend910b-x8-huawei",
            "the edited offer is recommended"
        );
        decision
            .checklist
            .into_iter()
            .find(|c| c.text.contains("InfiniBand"))
            .expect("the item on the fabric between machines")
            .text
    };
    let en = network_item("[hccn_tool, ping, ib_write_bw]", decide_engine::Lang::En);
    assert!(
        en.contains(", check it with `hccn_tool` and `ping` and `ib_write_bw` (link, IP and RoCE checks), and order"),
        "{en}"
    );
    let zh = network_item("[hccn_tool, ping, ib_write_bw]", decide_engine::Lang::Zh);
    assert!(
        zh.contains(
            "写进合同，用 `hccn_tool`、`ping`、`ib_write_bw`（链路、IP 与 RoCE 检查）实测，并且"
        ),
        "{zh}"
    );
    let en = network_item("[]", decide_engine::Lang::En);
    assert!(en.contains("in writing, and order every machine"), "{en}");
    assert!(!en.contains('`') && !en.contains("RoCE checks"), "{en}");
    let zh = network_item("[]", decide_engine::Lang::Zh);
    assert!(zh.contains("写进合同，并且所有机器"), "{zh}");
    assert!(!zh.contains('`') && !zh.contains("检查"), "{zh}");
}

/// The delivery item suggests bridging with hourly containers only where containers could do
/// the work: not where the profile needs a custom kernel or network set-up (criterion 4), which
/// a container cannot have.
#[test]
fn no_bridge_with_containers_where_a_custom_stack_rules_them_out() {
    let graph = common::graph();
    let delivery = |requirements: &str| {
        let yaml = format!(
            "name: t\nworkload: {{task: lora_finetune, model_params_b: 7}}\n\
             usage: {{gpus: 8, hours_per_gpu_month: 600}}\nrequirements: {{{requirements}}}\n"
        );
        let e = common::decide_text(&graph, &yaml).unwrap();
        assert_eq!(e.decision.deployment, "bare_metal", "{requirements}");
        e.decision
            .checklist
            .into_iter()
            .find(|c| c.id == "delivery")
            .expect("bare metal has a delivery item")
            .text
    };
    let bridge = "Bridge with hourly containers until the box arrives.";
    assert!(
        delivery("").contains(bridge),
        "busy enough for a box, containers still run it"
    );
    assert!(!delivery("custom_kernel: true").contains(bridge));
    assert!(!delivery("custom_network: true").contains(bridge));
    assert!(!delivery("physical_isolation: true").contains(bridge));
}

/// Control characters and bidirectional overrides in the profile's text are shown escaped in
/// both memos and in error messages, never passed on to a terminal or a page.
#[test]
fn control_characters_are_shown_escaped_in_memos_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.yaml");
    std::fs::write(
        &profile,
        BASE.replace("name: t", "name: \"red \\e[31m \\u202Eexe.pdf\""),
    )
    .unwrap();
    let p = profile.to_str().unwrap();
    for format in ["md", "html"] {
        let out = common::run_ok(&[p, "--as-of", common::AS_OF, "--format", format]);
        assert!(!out.contains('\u{1b}'), "{format}: ESC reached the memo");
        assert!(
            !out.contains('\u{202e}'),
            "{format}: U+202E reached the memo"
        );
        assert!(out.contains("u{1b}") && out.contains("u{202e}"), "{format}");
    }
    std::fs::write(
        &profile,
        BASE.replace("name: t", "name: t\nextra\u{1b}[2J\u{202e}: 1"),
    )
    .unwrap();
    let out = common::run(&[p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(err.contains("\\u{1b}[2J"), "{err}");
}

#[test]
fn a_questionnaire_word_that_drops_or_invents_a_placeholder_is_a_rules_error() {
    let rules = common::edited_rules(&[(
        "questions.yaml",
        "at_most: {en: \"must be at most {bound}\", zh: \"不能大于 {bound}\"}",
        "at_most: {en: \"must be at most {limit}\", zh: \"不能大于\"}",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "questionnaire word `at_most` leaves out `{bound}`: \"must be at most {limit}\""
        ),
        "{err}"
    );
    assert!(
        err.contains("questionnaire word `at_most` leaves out `{bound}`: \"不能大于\""),
        "{err}"
    );
    assert!(
        err.contains("questionnaire word `at_most` has an unknown placeholder `{limit}`"),
        "{err}"
    );
    assert!(err.contains("questions.yaml:"), "{err}");
}

#[test]
fn a_questionnaire_word_without_chinese_is_a_rules_error() {
    let rules = common::edited_rules(&[(
        "questions.yaml",
        "whole: {en: \"must be a whole number\", zh: \"必须是整数\"}",
        "whole: must be a whole number",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("questionnaire word `whole` has no Chinese"),
        "{err}"
    );
}

#[test]
fn questions_without_a_questionnaire_section_are_a_rules_error() {
    let rules = common::edited_rules(&[("questions.yaml", "questionnaire:", "unused_key:")]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    // The section is gone (an unknown key is refused too), and the questions say what they miss.
    assert!(err.contains("unused_key"), "{err}");
    let rules = common::edited_rules(&[]);
    let text = std::fs::read_to_string(rules.path().join("questions.yaml")).unwrap();
    let start = text.find("questionnaire:").unwrap();
    let end = text.find("\nquestions:").unwrap();
    std::fs::write(
        rules.path().join("questions.yaml"),
        format!("{}{}", &text[..start], &text[end..]),
    )
    .unwrap();
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("the rules have questions but no `questionnaire:` section"),
        "{err}"
    );
}

#[test]
fn a_shorthand_that_reads_as_a_number_or_is_not_positive_is_a_rules_error() {
    let rules = common::edited_rules(&[(
        "questions.yaml",
        "shorthands: {k: 1000, M: 1000000, 千: 1000, 万: 10000, 亿: 100000000}",
        "shorthands: {\"1,000\": 1000, M: -1, 千: 1000, 万: 10000, 亿: 100000000}",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("shorthand `1,000` reads as a number or is empty"),
        "{err}"
    );
    assert!(err.contains("shorthand `M` stands for -1"), "{err}");
}

#[test]
fn a_unit_on_a_question_that_is_not_a_number_is_a_rules_error() {
    let rules = common::edited_rules(&[(
        "questions.yaml",
        "help: {en: \"Shown at the top of the memo.\", zh: \"显示在备忘录标题中。\"}",
        "help: {en: \"Shown at the top of the memo.\", zh: \"显示在备忘录标题中。\"}\n    unit: {en: words, zh: 字}",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("question `name`: `unit`, `symbols` and `shorthands` are for number answers"),
        "{err}"
    );
}

#[test]
fn a_question_when_may_read_a_section_opened_before_it_but_not_a_field_answered_after_it() {
    // The shipped deadline question reads `profile.job`, opened by the question before it,
    // though the hours after it fill `job.hours`: accepted.
    let shipped = common::edited_rules(&[]);
    common::compile_dir(shipped.path()).unwrap();
    // Reading the hours, which are answered after the deadline, is refused.
    let rules = common::edited_rules(&[(
        "questions.yaml",
        "  - field: job.deadline_days\n    when: profile.job is defined",
        "  - field: job.deadline_days\n    when: profile.job.hours is defined",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "question `job.deadline_days`: `when` reads `profile.job.hours`, which is not answered before it"
        ),
        "{err}"
    );
}

/// A rules error of a copy of `rules/` edited by `edits`, with the folder written `[RULES]`.
fn edited_error(edits: &[(&str, &str, &str)]) -> String {
    let rules = common::edited_rules(edits);
    let err = common::compile_dir(rules.path()).unwrap_err();
    err.replace(&rules.path().display().to_string(), "[RULES]")
}

/// A decision table's cell that starts like a unary test but is not one is refused when the
/// rules load, at the place in the cell, with what a cell may be.
#[test]
fn a_table_cell_that_is_no_unary_test_is_refused_at_the_cell() {
    let err = edited_error(&[(
        "scenarios.yaml",
        r#"cells: {task: "'lora_finetune'", params_b: "[7..10]"}"#,
        r#"cells: {task: "'lora_finetune'", params_b: "[7..ten]"}"#,
    )]);
    assert_snapshot!(err);
}

/// Each cell is typed against its input: a number test on a text input, a text on a number
/// input, a value an enumerated profile field does not have.
#[test]
fn a_table_cell_is_typed_against_its_input() {
    let err = edited_error(&[
        (
            "scenarios.yaml",
            r#"cells: {task: "'lora_finetune'", params_b: "[7..10]"}"#,
            r#"cells: {task: "< 10", params_b: "[7..10]"}"#,
        ),
        (
            "scenarios.yaml",
            r#"cells: {task: "'inference'", concurrency: "'high'", params_b: "[7..13]"}"#,
            r#"cells: {task: "'inferance'", concurrency: "'high'", params_b: "'13'"}"#,
        ),
    ]);
    assert_snapshot!(err);
}

/// A table uses one form: `when:` rows, or `inputs:` and `cells:`; a cell names an input.
#[test]
fn a_table_uses_when_or_cells_and_a_cell_names_an_input() {
    let err = edited_error(&[
        (
            "scenarios.yaml",
            r#"        cells: {training: "true", budget_cny: "<= 10000"}"#,
            "        when: is_training",
        ),
        (
            "scenarios.yaml",
            r#"cells: {domestic: "true", training: "true", params_b: "[30..70]"}"#,
            r#"cells: {domestic: "true", trainig: "true", params_b: "[30..70]"}"#,
        ),
        (
            "memory.yaml",
            "    inputs:\n      - {id: model, expr: profile.workload.model}\n      - {id: params_b, expr: profile.workload.model_params_b}\n",
            "",
        ),
    ]);
    assert_snapshot!(err);
}

/// The `when:` form still loads (a rules folder exported before tables had inputs), and a
/// cell may be an expression where `$` is the input: both decide as the shipped cells do.
#[test]
fn when_rows_and_expression_cells_decide_as_unary_tests_do() {
    let rules = common::edited_rules(&[
        (
            "memory.yaml",
            "    inputs:\n      - {id: model, expr: profile.workload.model}\n      - {id: params_b, expr: profile.workload.model_params_b}\n",
            "",
        ),
        (
            "memory.yaml",
            r#"cells: {model: "'mixtral-8x7b', 'mixtral-8x7b-instruct'"}"#,
            "when: profile.workload.model in ['mixtral-8x7b', 'mixtral-8x7b-instruct']",
        ),
        (
            "memory.yaml",
            r#"cells: {model: "'mixtral-8x22b', 'mixtral-8x22b-instruct'"}"#,
            "when: profile.workload.model in ['mixtral-8x22b', 'mixtral-8x22b-instruct']",
        ),
        (
            "memory.yaml",
            r#"cells: {model: "'deepseek-v3', 'deepseek-r1', 'deepseek-v3-0324'"}"#,
            "when: profile.workload.model in ['deepseek-v3', 'deepseek-r1', 'deepseek-v3-0324']",
        ),
        (
            "memory.yaml",
            r#"cells: {model: "'qwen3-235b-a22b'"}"#,
            "when: profile.workload.model in ['qwen3-235b-a22b']",
        ),
        (
            "memory.yaml",
            r#"cells: {model: "'qwen3-30b-a3b'"}"#,
            "when: profile.workload.model in ['qwen3-30b-a3b']",
        ),
        (
            "memory.yaml",
            r#"cells: {params_b: "<= 10"}"#,
            "when: profile.workload.model_params_b <= 10",
        ),
        (
            "memory.yaml",
            r#"cells: {params_b: "<= 40"}"#,
            "when: profile.workload.model_params_b <= 40",
        ),
        (
            "memory.yaml",
            r#"cells: {params_b: "<= 80"}"#,
            "when: profile.workload.model_params_b <= 80",
        ),
        (
            "scenarios.yaml",
            r#"budget_cny: "<= 10000""#,
            r#"budget_cny: "$ is not none and $ <= 10000""#,
        ),
    ]);
    let edited = common::compile_dir(rules.path()).unwrap();
    let shipped = common::graph();
    let mut seen = std::collections::BTreeSet::new();
    for example in common::examples() {
        let text = std::fs::read_to_string(&example).unwrap();
        let a = common::decide_text(&shipped, &text).unwrap();
        let b = common::decide_text(&edited, &text).unwrap();
        for node in ["kv_cache_model", "scenario"] {
            let (x, y) = (a.values[node].to_string(), b.values[node].to_string());
            assert_eq!(x, y, "{node} of {}", example.display());
            seen.insert(format!("{node}={x}"));
        }
    }
    assert!(seen.len() > 4, "the examples reach several rows: {seen:?}");
}

/// Explanations written as rows are checked when the rules load, each fault where it is
/// written: a row that is not last without `when:`, a last row with one, a `{% %}` tag in a
/// sentence, a value chosen in a sentence (`x if c else y`), a condition that is not true or false, an unknown phrase (with the nearest name),
/// and a phrase no sentence inserts. One run reports them all.
#[test]
fn explanation_rows_are_checked_where_they_are_written() {
    let err = edited_error(&[
        // The first of three rows loses its `when:`.
        (
            "criteria.yaml",
            "        - when: profile.requirements.custom_kernel and profile.requirements.custom_network\n",
            "        - \n",
        ),
        // The interconnect's last `met` row gains one.
        (
            "criteria.yaml",
            "      - says:\n          en: >-\n            Data-parallel training",
            "      - when: is_training\n        says:\n          en: >-\n            Data-parallel training",
        ),
        // A sentence with a tag.
        (
            "warnings.yaml",
            "          says: {en: The proposed, zh: 提议的}",
            "          says: {en: 'The {% if true %}proposed{% endif %}', zh: 提议的}",
        ),
        // A value chosen inside a sentence.
        (
            "plans.yaml",
            "          says: {en: train, zh: 训练}",
            "          says: {en: \"{{ 'train' if is_training else 'run' }}\", zh: 训练}",
        ),
        // A condition that gives a number.
        (
            "warnings.yaml",
            "        - when: undersized_units > 1",
            "        - when: undersized_units * 2",
        ),
        // An unknown phrase, in English only (Chinese still inserts the right one).
        (
            "plans.yaml",
            "Models native\n            to Ascend may {{ phrases.work }}",
            "Models native\n            to Ascend may {{ phrases.wrok }}",
        ),
        // A phrase no sentence inserts.
        (
            "serving.yaml",
            "    phrases:\n      targets:",
            "    phrases:\n      unused:\n        - says: never said\n      targets:",
        ),
    ]);
    assert_snapshot!(err);
}

/// A fact's sentence rows insert phrases as a text's rows do, and the phrases are checked the
/// same way at load: a name that is no phrase of the fact, a phrase never inserted, a phrase
/// said for each item of something that is not a list, a `when:` that is no condition.
#[test]
fn a_facts_phrases_are_checked_as_a_texts_are() {
    let err = edited_error(&[
        (
            "plans.yaml",
            "**{{ phrases.heading }}.** {{ phrases.ties }}.",
            "**{{ phrases.heading }}.** {{ phrases.tiez }}.",
        ),
        (
            "facts.yaml",
            "    phrases:\n      nothing:",
            "    phrases:\n      unused:\n        - says: never said\n      nothing:",
        ),
        (
            "calibration.yaml",
            "        each: model_band_rivals\n",
            "        each: recommended_plan_cny\n",
        ),
        (
            "training.yaml",
            "        - when: training_speedup != 1\n",
            "        - when: training_speedup * 2\n",
        ),
    ]);
    for said in [
        "`phrases.tiez` is not a phrase of this node",
        "did you mean `phrases.ties`?",
        "answer_said.phrases.unused",
        "the phrase `unused` is never inserted",
        "model_error_said.phrases.rival.each",
        "not a list of items to say",
        "training_estimate_said.phrases.speedup[0].when",
        "plans.yaml:",
        "facts.yaml:",
        "calibration.yaml:",
        "training.yaml:",
    ] {
        assert!(err.contains(said), "{said} not in\n{err}");
    }
}

/// A fact's phrase said for each item of a list joins the items' sentences in each language,
/// each item with its own phrases: the plans a model error could put ahead, each with its own
/// error and its own verb.
#[test]
fn a_facts_phrase_said_for_each_item_joins_the_items() {
    let profile = "examples/serving-70b-h100-or-910b.yaml";
    let said = |lang: &str, from: &str, to: &str| {
        let memo = common::run_ok(&[profile, "--as-of", "2026-09-04", "--lang", lang]);
        let start = memo.find(from).unwrap_or_else(|| panic!("{memo}")) + from.len();
        let end = memo[start..].find(to).unwrap_or_else(|| panic!("{memo}")) + start;
        memo[start..end].to_owned()
    };
    let en = said(
        "en",
        "That error could change the answer: ",
        ", less than that error.",
    );
    let items: Vec<&str> = en.split("; ").collect();
    assert_eq!(items.len(), 3, "{en}");
    for item in &items {
        assert!(item.contains(" more (¥"), "{item}");
        assert!(item.ends_with("at the 90th percentile)"), "{item}");
    }
    // Boxes "cost"; a count of container GPUs "costs".
    assert!(
        items[0].contains(" × ") && items[0].contains(" cost "),
        "{}",
        items[0]
    );
    assert!(
        items[2].contains("container GPUs of ") && items[2].contains(" costs "),
        "{}",
        items[2]
    );
    let zh = said("zh", "这一偏差可能改变结论：", "，小于上述偏差。");
    assert_eq!(zh.split('；').count(), 3, "{zh}");
    assert!(
        zh.contains("台 RTX 5090") || zh.contains("台RTX 5090"),
        "{zh}"
    );
}

/// Phrases may insert phrases, but not in a cycle; a phrase said for each item goes over a
/// list; a sentence that does not compile is reported at its row.
#[test]
fn phrase_cycles_lists_and_sentences_are_checked_at_load() {
    let err = edited_error(&[
        (
            "warnings.yaml",
            "            zh: ，并推荐用 {{ mixed_plan.boxes | num }} 台整机",
            "            zh: ，并推荐用 {{ phrases.es }} {{ mixed_plan.boxes | num }} 台整机",
        ),
        (
            "warnings.yaml",
            "          says: {en: es, zh: \"\"}",
            "          says: {en: es, zh: \"{{ phrases.mixed }}\"}",
        ),
        (
            "training.yaml",
            "each: implausible_job_claims",
            "each: profile.usage.gpus",
        ),
    ]);
    assert_snapshot!(err);
    let err = edited_error(&[(
        "plans.yaml",
        "          says: {en: train, zh: 训练}",
        "          says: {en: \"train {{ is_training \", zh: 训练}",
    )]);
    assert!(
        err.contains("node `porting_effort`: a sentence of `phrases.work` does not compile"),
        "{err}"
    );
    assert!(err.contains("plans.yaml:"), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("plans.yaml:"))
        .unwrap_or_default()
        .to_owned();
    let rules =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/plans.yaml")).unwrap();
    let at: usize = line
        .rsplit("plans.yaml:")
        .next()
        .and_then(|l| l.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        rules
            .lines()
            .nth(at - 1)
            .is_some_and(|l| l.contains("says: {en: train")),
        "the error points at line {at}, not the row: {err}"
    );
}

/// A row's sentence without Chinese is reported like any text without it, at the row; an empty
/// sentence (a phrase that says nothing) is no text to translate, and the shipped rules lack
/// no translation.
#[test]
fn a_row_sentence_without_chinese_is_reported_at_the_row() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let missing = decide_engine::policy::missing_languages(
        &decide_engine::Policy::read_dir(&shipped).unwrap(),
    );
    assert!(
        missing.is_empty(),
        "{:?}",
        missing
            .iter()
            .map(decide_engine::Error::render)
            .collect::<Vec<_>>()
    );
    let rules = common::edited_rules(&[(
        "plans.yaml",
        "          says: {en: train, zh: 训练}",
        "          says: {en: train}",
    )]);
    let missing = decide_engine::policy::missing_languages(
        &decide_engine::Policy::read_dir(rules.path()).unwrap(),
    );
    let text: Vec<String> = missing.iter().map(decide_engine::Error::render).collect();
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(
        text[0].contains("this text has `en` but no `zh`"),
        "{text:?}"
    );
    assert!(
        text[0].contains("warnings[0].phrases.work[0].says"),
        "{text:?}"
    );
}

/// A rules folder is input: a catalog title holding ESC sequences (retitle the terminal, clear
/// the screen), printed as written by the memo's templates, reaches neither memo raw: both
/// show it escaped, `\u{1b}`, as they show a profile's or a vendor's.
#[test]
fn a_control_character_in_a_rules_text_is_shown_escaped_in_both_memos() {
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "title: {en: \"RTX 4090 24G ×8 (Sichuan zone 2)\"",
        "title: {en: \"RTX 4090\\e]0;pwned\\a\\e[2J 24G ×8 (Sichuan zone 2)\"",
    )]);
    for format in ["md", "html"] {
        let memo = common::run_ok(&[
            "examples/lora-7b-4090.yaml",
            "--as-of",
            "2026-09-04",
            "--format",
            format,
            "--rules",
            rules.path().to_str().unwrap(),
        ]);
        assert!(
            !memo.contains(['\u{1b}', '\u{7}']),
            "{format}: a raw control character"
        );
        assert!(
            memo.contains("RTX 4090\\u{1b}]0;pwned\\u{7}\\u{1b}[2J 24G"),
            "{format}"
        );
    }
}

/// The month cliff: nine 910B boxes are the fewest that finish 300B tokens of a 13B model in 45
/// days (after 5 days of porting, with a tenth of the deadline to spare), billed two months; ten
/// finish within one billed month and cost less. The count search takes the ten, says why, and
/// the plan judged is the plan searched.
const MONTH_CLIFF: &str = "name: month cliff
workload: {task: pretrain, model_params_b: 13, parallelism: [data, tensor], tokens_b: 300}
usage: {gpus: 8, hours_per_gpu_month: 720}
job: {cadence: one_off, deadline_days: 45}
";

#[test]
fn a_job_billed_by_whole_months_gets_the_count_that_costs_least() {
    let graph = common::graph();
    let e = common::decide_text(&graph, MONTH_CLIFF).unwrap();
    let json = |id: &str| serde_json::to_value(&e.values[id]).unwrap();
    let offer = "ascend910b-x8-huawei";
    assert_eq!(e.decision.offer, offer);
    let search = &json("count_search")[offer];
    assert_eq!(search["first"]["units"], 9, "{search:#}");
    assert_eq!(
        search["first"]["billed"]["parts"][0]["unit"], "month",
        "{search:#}"
    );
    assert_eq!(
        search["first"]["billed"]["parts"][0]["count"], 2,
        "{search:#}"
    );
    assert_eq!(search["first"]["paid_cny"], 381_600, "{search:#}");
    assert_eq!(search["best"]["units"], 10, "{search:#}");
    assert_eq!(
        search["best"]["billed"]["parts"][0]["count"], 1,
        "{search:#}"
    );
    assert_eq!(search["best"]["paid_cny"], 212_000, "{search:#}");
    assert_eq!(json("boxes_needed")[offer], 10);
    assert_eq!(json("count_basis")[offer], "billing");
    // What the job table bills is what the search paid.
    let jobs = json("job_costs");
    let row = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["offer"] == offer)
        .unwrap();
    assert_eq!(row["units"], 10);
    assert_eq!(row["billed_cny"], 212_000.0);
    assert_eq!(row["hours"], search["best"]["hours"]);
    for (lang, said) in [
        (
            "en",
            "10 boxes cost least for the job: they finish in 696.2 h, billed as 1 month (¥212,000), where the 9 that are the fewest to meet every constraint take 773.6 h, billed as 2 months (¥381,600).",
        ),
        (
            "zh",
            "10 台是该作业花费最少的规模：需 696.2 h，计费 1 个月（¥212,000）；满足全部约束的最少规模 9 台需 773.6 h，计费 2 个月（¥381,600）。",
        ),
    ] {
        assert_memo_says(MONTH_CLIFF, lang, said);
    }
}

const JOB_BILL: &str = "name: job bill
workload: {task: pretrain, model_params_b: 70, parallelism: [data, tensor, pipeline], tokens_b: 430}
usage: {gpus: 64, hours_per_gpu_month: 720, months: 1}
job: {cadence: one_off, deadline_days: 42}
";

/// Offers are ranked on what the job bills: 28 × H100, dearer by the month, finish in one billed
/// month for less than 61 × 910B in two (the most the deadline leaves them); the memo's total is
/// that bill, and a rules folder that ranks boxes by the month is caught.
#[test]
fn offers_are_ranked_on_what_the_job_bills() {
    let graph = common::graph();
    let e = common::decide_text(&graph, JOB_BILL).unwrap();
    let json = |id: &str| serde_json::to_value(&e.values[id]).unwrap();
    assert_eq!(e.decision.offer, "h100-x8-ningxia1");
    assert_eq!(json("offer_plan_cny")["h100-x8-ningxia1"], 2_432_640);
    assert_eq!(json("offer_plan_cny")["ascend910b-x8-huawei"], 2_586_400);
    assert!(
        json("offer_monthly_cny")["ascend910b-x8-huawei"].as_f64()
            < json("offer_monthly_cny")["h100-x8-ningxia1"].as_f64()
    );
    let costs = serde_json::to_value(&e.decision.costs).unwrap();
    assert_eq!(costs["contract_total_cny"], 2_432_640.0, "{costs:#}");
    assert_eq!(costs["recommended_monthly_cny"], 2_432_640.0, "{costs:#}");
    for (lang, said) in [
        (
            "en",
            "| Billed for the job | ¥2,432,640 (28 boxes × 1 month) |",
        ),
        ("en", "| ¥153,760 more for the job |"),
        ("zh", "| 作业计费合计 | ¥2,432,640（28 台 × 1 个月） |"),
        ("zh", "| 该作业贵 ¥153,760 |"),
    ] {
        assert_memo_says(JOB_BILL, lang, said);
    }
    // Boxes ranked by the month: the 910B's two months are recommended over a plan cheaper
    // for the job (and sooner), and the invariants refuse it.
    let (id, message) = violation(
        &[(
            "scenarios.yaml",
            "    where: offer.kind == 'bare_metal' and offer_fits[offer.id]\n    order_by: \"[offer_plan_cny[offer.id], offer_monthly_cny[offer.id]]\"",
            "    where: offer.kind == 'bare_metal' and offer_fits[offer.id]\n    order_by: offer_monthly_cny[offer.id]",
        )],
        JOB_BILL,
    );
    assert_eq!(id, "cheaper_options_say_why_they_lost");
    assert!(
        message.contains("cheaper than the recommendation with no reason given: h100-x8-ningxia1"),
        "{message}"
    );
}

/// Asserts that the memo of `profile` (YAML text, written to a file and decided by the binary)
/// in `lang` says `said`.
fn assert_memo_says(profile: &str, lang: &str, said: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, profile).unwrap();
    let memo = common::run_ok(&[
        path.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
        "--lang",
        lang,
    ]);
    assert!(memo.contains(said), "{lang}:\n{memo}");
}

/// Every example and policy test case: searching every count from one (the search's
/// `reference:` lists) finds nothing cheaper than the count chosen; and a rules folder whose
/// search stops at the fewest count that meets every constraint is caught, on the month cliff
/// and by `decide validate`'s proof over generated profiles.
#[test]
fn the_count_search_loses_nothing_an_exhaustive_search_finds() {
    let graph = common::graph();
    let mut profiles: Vec<String> = common::examples()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    profiles.push(MONTH_CLIFF.to_owned());
    for (i, text) in profiles.iter().enumerate() {
        let profile = decide_engine::Profile::from_source(&decide_engine::Source::new(
            "p.yaml",
            text.as_str(),
        ))
        .unwrap();
        let gaps = graph.search_gaps(&profile, common::as_of()).unwrap();
        assert!(gaps.is_empty(), "profile {i}: {gaps:?}");
    }
    let narrowed = common::edited_rules(&[(
        "sizing.yaml",
        "over: range(units_sized[offer.id], count_most[offer.id] + 1)",
        "over: range(units_sized[offer.id], units_sized[offer.id] + 1)",
    )]);
    let broken = common::compile_dir(narrowed.path()).unwrap();
    let profile =
        decide_engine::Profile::from_source(&decide_engine::Source::new("p.yaml", MONTH_CLIFF))
            .unwrap();
    let gaps = broken.search_gaps(&profile, common::as_of()).unwrap();
    assert!(
        gaps.iter().any(|(_, g)| g.contains(
            "search `count_search` for offer `ascend910b-x8-huawei`: the `over:` lists give units = 9 (objective [381600, 9]), the reference lists units = 10 (objective [212000, 10])"
        )),
        "{gaps:?}"
    );
    let report = decide_tools::check::check(&broken, common::as_of(), &[]);
    assert_eq!(report.searches.searches, 1);
    assert!(
        report.searches.searched > 1000,
        "{}",
        report.searches.searched
    );
    let finding = report
        .searches
        .findings
        .first()
        .map(decide_engine::Error::render)
        .unwrap_or_default();
    assert!(
        finding.contains("search `count_search` leaves out a cheaper candidate"),
        "{finding}"
    );
    let shipped = decide_tools::check::check(&graph, common::as_of(), &[]);
    assert!(
        shipped.searches.findings.is_empty(),
        "{:?}",
        shipped
            .searches
            .findings
            .iter()
            .map(decide_engine::Error::render)
            .collect::<Vec<_>>()
    );
    // A `bound:` that overstates what larger counts pay stops the search at the first count
    // that meets every constraint: the reference lists, searched without it, show the loss.
    let overstated = common::edited_rules(&[(
        "sizing.yaml",
        "[units * (offer_least_term[offer.id].cny if job_is_billed",
        "[units * offer.price.discounted_cny * 10, units] if true else [units * (offer_least_term[offer.id].cny if job_is_billed",
    )]);
    let broken = common::compile_dir(overstated.path()).unwrap();
    let e = common::decide_text(&broken, MONTH_CLIFF).unwrap();
    let search = serde_json::to_value(&e.values["count_search"]).unwrap();
    assert_eq!(
        search["ascend910b-x8-huawei"]["best"]["units"], 9,
        "{search:#}"
    );
    assert_eq!(search["ascend910b-x8-huawei"]["searched"], 1, "{search:#}");
    let gaps = broken.search_gaps(&profile, common::as_of()).unwrap();
    assert!(
        gaps.iter().any(|(_, g)| g.contains(
            "the `over:` lists give units = 9 (objective [381600, 9]), the reference lists units = 10 (objective [212000, 10])"
        )),
        "{gaps:?}"
    );
    // The shipped bound stops the same search once no larger count can pay less.
    let e = common::decide_text(&graph, MONTH_CLIFF).unwrap();
    let search = serde_json::to_value(&e.values["count_search"]).unwrap();
    assert_eq!(
        search["ascend910b-x8-huawei"]["best"]["units"], 10,
        "{search:#}"
    );
    assert!(
        search["ascend910b-x8-huawei"]["searched"].as_u64().unwrap() <= 4,
        "{search:#}"
    );
}

/// A 7B data-parallel pre-training on 64 GPUs (issue: 26 RTX 4090 boxes "on one machine").
const CONSUMER_CLUSTER: &str = "name: consumer cluster
workload: {task: pretrain, model_params_b: 7, parallelism: [data], tokens_b: 1000}
usage: {gpus: 64, hours_per_gpu_month: 720}
job: {cadence: one_off, deadline_days: 60}
";

/// A 383B service whose replica is larger than one box (issue: six-box pipelines of RTX 4090 boxes).
const PIPELINED_SERVICE: &str = "name: pipelined service
workload: {task: inference, model_params_b: 383, parallelism: [tensor, pipeline], context_tokens: 8192, concurrent_sequences: 16}
usage: {gpus: 8, hours_per_gpu_month: 720}
";

/// One data-parallel job on nine GPUs: two boxes, within what consumer boxes may span.
const TWO_BOXES: &str = "name: two boxes
workload: {task: lora_finetune, model_params_b: 1, parallelism: [data]}
usage: {gpus: 9, hours_per_gpu_month: 1}
";

/// The criteria read the configuration being recommended: the machines one job or replica of
/// the plan spans, the links inside its boxes. Boxes without NVLink-class links carry one job
/// over at most `slow_link_boxes_max` boxes (article §7).
#[test]
fn the_criteria_judge_the_plan_not_the_profile() {
    let graph = common::graph();
    let e = common::decide_text(&graph, CONSUMER_CLUSTER).unwrap();
    let json = |e: &Evaluation, id: &str| serde_json::to_value(&e.values[id]).unwrap();
    assert_eq!(e.decision.offer, "ascend910b-x8-huawei");
    assert_eq!(json(&e, "boxes_needed")["ascend910b-x8-huawei"], 17);
    assert_eq!(json(&e, "offer_job_machines")["ascend910b-x8-huawei"], 17);
    assert_eq!(json(&e, "interconnect"), true);
    for consumer in ["rtx4090-x8-sichuan2", "rtx5090-x8-anhui1"] {
        assert_eq!(json(&e, "offer_reason")[consumer], "span", "{consumer}");
        assert_eq!(json(&e, "offer_span_units_max")[consumer], 2, "{consumer}");
    }
    let e = common::decide_text(&graph, PIPELINED_SERVICE).unwrap();
    assert_eq!(e.decision.offer, "ascend910b-x8-huawei");
    assert_eq!(json(&e, "offer_job_machines")["ascend910b-x8-huawei"], 3);
    assert_eq!(json(&e, "interconnect"), true);
    assert_eq!(json(&e, "offer_reason")["rtx4090-x8-sichuan2"], "memory");
    let e = common::decide_text(&graph, TWO_BOXES).unwrap();
    assert_eq!(e.decision.offer, "rtx4090-x8-sichuan2");
    assert_eq!(json(&e, "boxes_needed")["rtx4090-x8-sichuan2"], 2);
    assert_eq!(json(&e, "interconnect"), true);

    let cases = [
        (
            CONSUMER_CLUSTER,
            "en",
            "One job of the plan spans 17 machines (17 × Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core)), which needs a fabric between them (InfiniBand or RoCE) that containers cannot join; inside each box its NVLink/HCCS-class links carry it.",
        ),
        (
            CONSUMER_CLUSTER,
            "en",
            "one job on 8 boxes spans machines, which needs NVLink/HCCS-class links inside each box; this offer has PCIe 4.0, no NVLink (multi-machine training on it is inefficient, article §7)",
        ),
        (
            PIPELINED_SERVICE,
            "en",
            "does not fit: one replica needs 6 boxes; its links (PCIe 4.0, no NVLink) carry no replica across boxes, so quantise the weights",
        ),
        (
            TWO_BOXES,
            "en",
            "inside each box it runs over PCIe, inefficiently (article §7), which this policy allows over at most 2 boxes (`slow_link_boxes_max`).",
        ),
        (
            CONSUMER_CLUSTER,
            "zh",
            "本方案一个作业跨 17 台机器（17 台昇腾 910B 64G ×8（华为专区，鲲鹏 96 核））",
        ),
        (
            CONSUMER_CLUSTER,
            "zh",
            "一个作业跨 8 台机器，需要每台机器内有 NVLink/HCCS 级互联；该方案为 PCIe 4.0，无 NVLink（在其上做多机训练效率低，文章第七节）",
        ),
        (
            PIPELINED_SERVICE,
            "zh",
            "放不下：一个副本需要 6 台；其互联（PCIe 4.0，无 NVLink）不能让副本跨机，请量化权重",
        ),
    ];
    for (profile, lang, said) in cases {
        assert_memo_says(profile, lang, said);
    }
}

/// A criterion that reads the profile's `nodes` instead of the plan is caught by the invariant
/// `criteria_read_the_plan`, with consumer boxes bounded or not.
#[test]
fn a_criterion_that_reads_the_profile_breaks_an_invariant() {
    // The criterion read from the profile again: a 64-GPU job "on one machine".
    let (id, message) = violation(
        &[(
            "criteria.yaml",
            "needs_fast_links or (offer_job_machines[box_choice.id] > 1 and not container_possible)",
            "needs_fast_links",
        )],
        CONSUMER_CLUSTER,
    );
    assert_eq!(id, "criteria_read_the_plan");
    assert!(
        message.contains("one job of the recommended 17 × Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core) spans 17 machines, while the interconnect criterion says it needs no fabric"),
        "{message}"
    );
    // PCIe boxes allowed to span any number, and the 910B made as slow as the policy once took
    // it (so that the RTX 4090 boxes cost least): a cluster of them, caught too.
    let (id, message) = violation(
        &[
            (
                "criteria.yaml",
                "needs_fast_links or (offer_job_machines[box_choice.id] > 1 and not container_possible)",
                "needs_fast_links",
            ),
            (
                "sizing.yaml",
                "value: 2\n    type: integer",
                "value: 64\n    type: integer",
            ),
            ("training.yaml", "ascend910b: 0.55}", "ascend910b: 0.2}"),
        ],
        CONSUMER_CLUSTER,
    );
    assert_eq!(id, "criteria_read_the_plan");
    assert!(
        message.contains(
            "one job of the recommended 59 × RTX 4090 24G ×8 (Sichuan zone 2) spans 59 machines"
        ),
        "{message}"
    );
}

/// A weekly 70B full fine-tune: the scenario row's H100 needs the optimizer offloaded.
const DOMINATED_PREFERENCE: &str = "name: weekly 70B full fine-tune
workload: {task: full_finetune, model_params_b: 70, parallelism: [data, tensor], tokens_b: 2}
usage: {gpus: 8, hours_per_gpu_month: 720, months: 6}
job: {cadence: weekly}
";

/// A scenario row is a preference: it never buys boxes both slower and dearer than boxes that
/// meet every constraint (`scenario_dominator`); the invariant `no_dominated_preference`
/// catches a rules folder that lets it.
#[test]
fn a_preference_never_buys_a_slower_dearer_plan() {
    let graph = common::graph();
    let e = common::decide_text(&graph, DOMINATED_PREFERENCE).unwrap();
    let json = |id: &str| serde_json::to_value(&e.values[id]).unwrap();
    assert_eq!(e.decision.offer, "ascend910b-x8-huawei");
    assert_eq!(e.decision.scenario.as_deref(), Some("pretrain_70b_100b"));
    assert_eq!(json("bare_metal_choice_basis"), "dominated");
    assert_eq!(json("boxes_needed")["ascend910b-x8-huawei"], 3);
    assert_eq!(json("offer_finish_hours")["ascend910b-x8-huawei"], 74.3);
    assert_eq!(json("offer_finish_hours")["h100-x8-ningxia1"], 147.6);
    // The row's own box lost as both slower and dearer, and says so.
    assert_eq!(json("offer_reason")["h100-x8-ningxia1"], "dominated");

    for (lang, said) in [
        (
            "en",
            "The row calls for H100 80G ×8 (Ningxia zone 1), but a row is a preference, and a preference never buys a plan both slower and dearer than one that meets every constraint: **3 × Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core)** finish the job in 74.3 h for ¥63,600 a month, where the row's takes 147.6 h for ¥86,880.",
        ),
        (
            "en",
            "| the box the article's scenario table (70B-100B full-parameter pre-training) calls for, but it finishes the job later (147.6 h against 74.3 h) and costs more (¥521,280 against ¥381,600 in all): a preference never buys a plan both slower and dearer |",
        ),
        (
            "zh",
            "完成作业需 74.3 h，每月 ¥63,600；该行推荐的机器需 147.6 h，每月 ¥86,880。",
        ),
        (
            "zh",
            "| 场景匹配表的“70B-100B 全参预训练”一行推荐的机器，但完成作业更晚（147.6 h，推荐方案 74.3 h）且更贵（总费用 ¥521,280，推荐方案 ¥381,600）：偏好不能选出既慢又贵的方案 |",
        ),
    ] {
        assert_memo_says(DOMINATED_PREFERENCE, lang, said);
    }

    // The row obeyed whatever it costs: refused by the invariant.
    let (id, message) = violation(
        &[(
            "scenarios.yaml",
            "is_training and scenario_offer is not none and offer.kind == 'bare_metal'",
            "false and scenario_offer is not none and offer.kind == 'bare_metal'",
        )],
        DOMINATED_PREFERENCE,
    );
    assert_eq!(id, "no_dominated_preference");
    assert!(
        message.contains("H100 80G ×8 (Ningxia zone 1) is recommended (¥521,280 in all, the job done in 147.6 h), while Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core) (¥381,600, 74.3 h)"),
        "{message}"
    );
}

/// A mixture-of-experts model is sized by its own figures: memory by every parameter, the
/// arithmetic by those each token runs through, the KV cache by its attention (the policy's
/// `kv_cache_model` rows); a model the policy does not know is a dense model of its size, said.
#[test]
fn a_mixture_of_experts_model_is_sized_by_its_own_figures() {
    let graph = common::graph();
    let value = |yaml: &str, id: &str| {
        let e = common::decide_text(&graph, yaml).unwrap();
        serde_json::to_value(&e.values[id]).unwrap()
    };
    let service = |model: &str| {
        format!(
            "name: t\nworkload: {{task: inference, {model}model_params_b: 46.7, context_tokens: 4096, concurrent_sequences: 64}}\nusage: {{gpus: 8, hours_per_gpu_month: 720}}\n"
        )
    };
    // Mixtral 8x7B, however it is written: 128 KiB a token, 12.9 of 46.7B parameters computed.
    for written in [
        "model: Mixtral 8x7B, ",
        "model: mixtral_8x7b, ",
        "model: MIXTRAL-8X7B, ",
    ] {
        let yaml = service(written);
        assert_eq!(
            value(&yaml, "kv_cache_model")["id"],
            "mixtral_8x7b",
            "{written}"
        );
        assert_eq!(value(&yaml, "kv_cache_model")["kib_per_token"], 128);
        let active = value(&yaml, "compute_params_b").as_f64().unwrap();
        assert!((active - 12.9).abs() < 0.01, "{active}");
        assert!(
            (value(&yaml, "serving_gflop_per_token").as_f64().unwrap() - 2.0 * active).abs() < 1e-9
        );
        assert_eq!(value(&yaml, "memory_model_state_gb"), 93.4);
    }
    // Dense, or a model the policy does not know: the 40-80B row, every parameter active.
    for yaml in [service(""), service("model: mixtral-8x8b, ")] {
        assert_eq!(value(&yaml, "kv_cache_model")["kib_per_token"], 320);
        assert_eq!(value(&yaml, "compute_params_b"), 46.7);
    }
    // The profile's own active parameters win over the policy's share.
    let given = service("model: mixtral-8x7b, active_params_b: 13, ");
    assert_eq!(value(&given, "compute_params_b"), 13.0);
    // Training FLOPs are 6 × the active parameters × the tokens, plus attention over the
    // sequence by the model's own layers and width (12 × layers × hidden × tokens a sequence).
    let training = "name: t\nworkload: {task: full_finetune, model: qwen3-30b-a3b, model_params_b: 30.5, parallelism: [data], tokens_b: 20}\nusage: {gpus: 8, hours_per_gpu_month: 720}\n";
    let flops = value(training, "training_flops").as_f64().unwrap();
    let shape = value(training, "kv_cache_model");
    let attention = 12.0
        * shape["layers"].as_f64().unwrap()
        * shape["hidden"].as_f64().unwrap()
        * value(training, "training_sequence_tokens")
            .as_f64()
            .unwrap();
    let expected = (6.0 * 30.5 * 0.1082 * 1e9 + attention) * 20e9;
    assert!((flops - expected).abs() < 1e9, "{flops} against {expected}");

    for (lang, said) in [
        (
            "en",
            "plus 34.36 GB of KV cache (4,096 tokens × 64 sequences × 128 KiB per token, Mixtral 8x7B (32 layers, 8 KV heads of 128; 12.9B of its 46.7B parameters active))",
        ),
        (
            "en",
            "computes 2 FLOPs a parameter a token (over the 12.9B of its parameters each token runs through)",
        ),
        (
            "zh",
            "（4,096 token × 64 个并发序列 × 每 token 128 KiB，Mixtral 8x7B（32 层，8 个 128 维 KV 头；46.7B 参数中激活 12.9B））",
        ),
    ] {
        assert_memo_says(&service("model: Mixtral 8x7B, "), lang, said);
    }
    for (lang, said) in [
        (
            "en",
            "The policy has no figures for the model `mixtral-8x8b`: its KV cache (320 KiB a token) and layers are taken as a typical dense model's of 46.7B",
        ),
        ("zh", "策略中没有模型 `mixtral-8x8b` 的数据"),
    ] {
        assert_memo_says(&service("model: Mixtral 8x8B, "), lang, said);
    }
    assert_memo_says(
        training,
        "en",
        "3.3B parameters (the part of the 30.5B each token runs through) × 20 billion tokens × 6 FLOPs per parameter and token",
    );
}

/// Fields that contradict each other are refused when the profile is read, naming both, at the
/// field at fault; generated profiles never hold such a pair.
#[test]
fn contradicting_fields_are_refused_naming_both() {
    let graph = common::graph();
    let err = |yaml: &str| common::decide_text(&graph, yaml).err().unwrap().render();
    let nodes = err(
        "name: t\nworkload: {task: pretrain, model_params_b: 7, parallelism: [data], nodes: 4}\nusage: {gpus: 2, hours_per_gpu_month: 720}\n",
    );
    assert!(
        nodes.contains(
            "error: workload.nodes: is 4, more machines than the 2 GPUs of `usage.gpus` can fill"
        ),
        "{nodes}"
    );
    assert!(
        nodes.contains(":2:"),
        "points at the line of `nodes`: {nodes}"
    );
    let active = err(
        "name: t\nworkload:\n  task: inference\n  model_params_b: 46.7\n  active_params_b: 129\nusage: {gpus: 8, hours_per_gpu_month: 720}\n",
    );
    assert!(active.contains("error: workload.active_params_b: is 129, more than the 46.7 of `workload.model_params_b`"), "{active}");
    assert!(
        active.contains(":5:"),
        "points at the line of `active_params_b`: {active}"
    );
    // As many machines as GPUs is no contradiction.
    common::decide_text(&graph, "name: t\nworkload: {task: pretrain, model_params_b: 7, parallelism: [data], nodes: 2}\nusage: {gpus: 2, hours_per_gpu_month: 720}\n").unwrap();
}

const THREE_GPU_REPLICAS: &str = "name: 26B service on containers
workload: {task: inference, model_params_b: 26, concurrency: high}
usage: {gpus: 9, hours_per_gpu_month: 200, months: 3}
";

/// A container replica runs on a tensor-parallel degree the policy lists: a 26B replica fills
/// three 24 GB GPUs and runs on four, so 9 busy GPUs take three replicas, 12 GPUs, not "9 GPUs
/// in one instance"; a rules folder that rents the three is refused by the invariant.
#[test]
fn a_container_replica_runs_on_a_listed_degree() {
    let graph = common::graph();
    let e = common::decide_text(&graph, THREE_GPU_REPLICAS).unwrap();
    let json = |id: &str| serde_json::to_value(&e.values[id]).unwrap();
    assert_eq!(e.decision.offer, "rtx4090-container");
    assert_eq!(json("units_per_replica")["rtx4090-container"], 4);
    assert_eq!(json("container_gpus"), 12);
    for (lang, said) in [
        (
            "en",
            "it runs on 4 container GPUs inside one instance, the tensor-parallel degree the policy lists that holds the 64 sequences served at once on the fewest GPUs",
        ),
        (
            "en",
            "The 9 GPUs asked for take 3 whole replicas of 4 GPUs, which hold the KV cache of 64 sequences at once: 12 container GPUs, and the memo prices 12.",
        ),
        (
            "en",
            "whether 12 GPUs in instances of 4 (a replica each, or more to an instance) are in stock",
        ),
        (
            "zh",
            "需求所列的 9 张卡需要 3 个完整副本、每个 4 张卡，可容纳同时 64 条序列的 KV 缓存：共 12 张容器 GPU",
        ),
    ] {
        assert_memo_says(THREE_GPU_REPLICAS, lang, said);
    }
    let (id, message) = violation(
        &[(
            "sizing.yaml",
            "(replica_degree[offer.id] if offer.id in replica_degree",
            "(replica_degree[offer.id] if false",
        )],
        THREE_GPU_REPLICAS,
    );
    assert_eq!(id, "replicas_on_listed_degrees");
    assert!(
        message.contains("a replica runs on 3 container GPUs, a tensor-parallel degree the policy does not list (1, 2, 4, 8)"),
        "{message}"
    );
}

/// A search's `bound:` that gives no number is a fault in the rules, named with its search.
#[test]
fn a_bound_that_gives_no_number_is_an_error() {
    let err = refusal(
        &[(
            "sizing.yaml",
            "else offer_contract_cover[offer.id].cny), units]\n      if offer.kind == 'bare_metal'",
            "else offer_contract_cover[offer.id].cny), units] if false else 'cheap'\n      if offer.kind == 'bare_metal'",
        )],
        MONTH_CLIFF,
    );
    assert!(
        err.contains(
            "error: search `count_search`: `bound` gave cheap (string), expected a number or a list of numbers (or none, for no bound)"
        ),
        "{err}"
    );
    assert!(err.contains("sizing.yaml:"), "{err}");
}

/// The invariant deciding `profile` with a copy of the rules edited by `edits` finds broken, as
/// the typed fault says it (`Fault::InvariantViolated`): its id and its message for this profile.
/// Panics, with the error as rendered, where the profile is decided or refused otherwise.
fn violation(edits: &[(&str, &str, &str)], profile: &str) -> (String, String) {
    let rules = common::edited_rules(edits);
    let graph = common::compile_dir(rules.path()).unwrap();
    match common::decide_text(&graph, profile) {
        Err(e) => match e.fault() {
            Some(Fault::InvariantViolated { id, message, .. }) => (id.clone(), message.clone()),
            _ => panic!("refused, but by no invariant:\n{}", e.render()),
        },
        Ok(e) => panic!("decided, as {}", e.decision.offer),
    }
}

/// What deciding `profile` with a copy of the rules edited by `edits` refuses with, rendered
/// (empty where it is decided).
fn refusal(edits: &[(&str, &str, &str)], profile: &str) -> String {
    let rules = common::edited_rules(edits);
    let graph = common::compile_dir(rules.path()).unwrap();
    common::decide_text(&graph, profile)
        .err()
        .map(|e| e.render())
        .unwrap_or_default()
}

/// A profile just under the article's break-even line: 8 container GPUs × 500 h cost ¥7,840 a
/// month, one RTX 4090 box ¥7,920.
const NEAR_BREAK_EVEN: &str = "name: near break-even
workload: {task: lora_finetune, model_params_b: 7, parallelism: [data]}
usage: {gpus: 8, hours_per_gpu_month: 500}
";

/// Two plans within the policy's near-tie share (`near_tie_share`, 2%) are a near tie: the
/// record lists the other plan with what it costs more and what else differs, and the memo says
/// so in both languages; 20 hours fewer (¥7,526, the box 5.2% dearer) is no tie, and a rules
/// folder with a share of nought finds none.
#[test]
fn a_near_tie_is_said_with_what_else_differs() {
    let graph = common::graph();
    let e = common::decide_text(&graph, NEAR_BREAK_EVEN).unwrap();
    assert_eq!(e.decision.offer, "rtx4090-container");
    let ties = serde_json::to_value(&e.decision.sections["near_ties"]).unwrap();
    assert_eq!(ties.as_array().map(Vec::len), Some(1), "{ties:#}");
    assert_eq!(ties[0]["offer"], "rtx4090-x8-sichuan2", "{ties:#}");
    assert_eq!(ties[0]["extra_cny"], 80.0, "{ties:#}");
    assert_eq!(ties[0]["exclusive_host"], true, "{ties:#}");
    assert_eq!(ties[0]["gpus"], 8, "{ties:#}");
    for (lang, said) in [
        (
            "en",
            "**A near tie.** RTX 4090 24G ×8 (Sichuan zone 2) costs ¥80 more in all (1%), with a host of its own. Plans within 2% of each other cost the same",
        ),
        (
            "zh",
            "**几乎持平。** RTX 4090 24G ×8（四川二区）总费用多 ¥80（1%），不同在于：独占主机。",
        ),
    ] {
        assert_memo_says(NEAR_BREAK_EVEN, lang, said);
    }
    let farther = NEAR_BREAK_EVEN.replace("500", "480");
    let e = common::decide_text(&graph, &farther).unwrap();
    let ties = serde_json::to_value(&e.decision.sections["near_ties"]).unwrap();
    assert_eq!(ties, serde_json::json!([]));
    let rules = common::edited_rules(&[("plans.yaml", "    value: 0.02\n", "    value: 0\n")]);
    let graph = common::compile_dir(rules.path()).unwrap();
    let e = common::decide_text(&graph, NEAR_BREAK_EVEN).unwrap();
    let ties = serde_json::to_value(&e.decision.sections["near_ties"]).unwrap();
    assert_eq!(ties, serde_json::json!([]));
}

/// The line of the first line of `file` (under `rules/`) holding `text`, 1-based.
fn line_of(file: &str, text: &str) -> usize {
    let source = common::repo_text(&format!("rules/{file}"));
    1 + source
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("rules/{file} has no line with {text:?}"))
}

/// A record written as YAML (`map:` of `field: expression` lines): an error in one field names
/// the field and its own line, not the record's.
#[test]
fn a_record_fields_error_names_the_field_and_its_line() {
    let field = "prefill_s: serving_prefill_gflop / (c.tp * c.pp";
    let rules = common::edited_rules(&[(
        "serving.yaml",
        field,
        "prefill_s: serving_prefil_gflop / (c.tp * c.pp",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("unknown name `serving_prefil_gflop`"), "{err}");
    assert!(err.contains("serving_shapes.map.prefill_s"), "{err}");
    let line = line_of("serving.yaml", field);
    assert!(err.contains(&format!("serving.yaml:{line}:")), "{err}");
}

/// A select's record is typed by its fields: reading a field it does not write is refused
/// when the rules load, with the fields it has.
#[test]
fn a_record_is_typed_by_its_fields() {
    let rules = common::edited_rules(&[(
        "serving.yaml",
        "from: \"serving_shapes[offer.id] if offer.id in serving_shapes else []\"",
        "from: \"serving_shapes[offer.id] if offer.id in serving_shapes and serving_shapes[offer.id][0].gpu > 0 else []\"",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("did you mean `gpus`?"), "{err}");
}

/// Cases are first-hit rows: each but the last has a `when:`, the last has none; each
/// mistake is refused at its row.
#[test]
fn cases_need_a_condition_on_every_row_but_the_last() {
    let middle = "      - when: offer_offload_fits[offer.id]\n        then: \"'offload'\"";
    let rules = common::edited_rules(&[("sizing.yaml", middle, "      - then: \"'offload'\"")]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("node `count_basis`: every row of cases but the last needs a `when:`"),
        "{err}"
    );
    assert!(err.contains("count_basis.expr.6"), "{err}");

    let last = "      - then: \"'memory'\"";
    let rules = common::edited_rules(&[(
        "sizing.yaml",
        last,
        "      - when: offer_memory_fits[offer.id]\n        then: \"'memory'\"",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("the last row of cases has no `when:` (it is what holds otherwise)"),
        "{err}"
    );
    assert!(err.contains("count_basis.expr.7"), "{err}");
}

/// A row's condition is typed as every `when:` is: a map is refused when the rules load.
#[test]
fn a_case_condition_gives_true_or_false() {
    let rules = common::edited_rules(&[(
        "plans.yaml",
        "      - when: container_two_terms\n",
        "      - when: container_offer\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("container_other_terms.expr.0.when"), "{err}");
    assert!(
        err.contains("a condition gives true or false, and this gives a map or none"),
        "{err}"
    );
}

/// No expression of the shipped rules is longer than 600 characters: a long map literal is a
/// record, a long chain of `if ... else` is cases, prose is rows of sentences in each language.
#[test]
fn no_shipped_expression_is_longer_than_600_characters() {
    let graph = common::graph();
    let compiled = graph.compiled();
    let long: Vec<(&str, usize)> = compiled
        .nodes
        .iter()
        .flat_map(|n| {
            n.exprs()
                .into_iter()
                .map(move |e| (n.id, e.text.chars().count()))
        })
        .filter(|(_, chars)| *chars > 600)
        .collect();
    assert!(
        long.is_empty(),
        "expressions over 600 characters (node, characters): {long:?}"
    );
    // The check sees long expressions: the longest is well over a line.
    let longest = compiled
        .nodes
        .iter()
        .flat_map(|n| n.exprs())
        .map(|e| e.text.chars().count())
        .max();
    assert!(longest.is_some_and(|n| n > 200), "{longest:?}");
}

/// A row may say a sentence (`says:`) instead of giving a value: the value is the sentence in
/// the graph's language, with the offer or item it is said for bound. The memory note of each
/// box is such rows: English in an English record, Chinese in a Chinese one (where the Chinese
/// record used to carry the English note).
#[test]
fn a_sentence_row_gives_the_sentence_in_the_graphs_language() {
    let profile = common::repo_text("examples/qlora-70b-4090.yaml");
    let notes = |lang: &str| -> Vec<String> {
        let out = common::run_ok(&[
            "examples/qlora-70b-4090.yaml",
            "--format",
            "json",
            "--lang",
            lang,
            "--as-of",
            common::AS_OF,
        ]);
        let record: serde_json::Value = serde_json::from_str(&out).expect("a JSON record");
        record["memory"]
            .as_array()
            .expect("memory rows")
            .iter()
            .map(|m| m["note"].as_str().expect("a note").to_owned())
            .collect()
    };
    assert!(profile.contains("qlora"), "the example is the one meant");
    let (en, zh) = (notes("en"), notes("zh"));
    assert_eq!(en.len(), zh.len());
    assert!(
        en.iter().any(|n| n
            .starts_with("fits: uses 24.1% of the usable GPU memory; with no parallelism listed")),
        "{en:?}"
    );
    assert!(
        zh.iter()
            .any(|n| n.starts_with("可以：占可用显存的 24.1%；未设并行方式时")),
        "{zh:?}"
    );
    assert!(zh.iter().all(|n| !n.contains("fits")), "{zh:?}");
}

/// A sentence only inserts values: a `{% %}` tag in one is refused when the rules load, at
/// the row, as in every other rule text; a name it reads must exist.
#[test]
fn a_sentence_row_is_checked_when_the_rules_load() {
    let rules = common::edited_rules(&[(
        "memory.yaml",
        "zh: \"放不下：请量化权重或增加 GPU{{",
        "zh: \"放不下：{% if true %}请{% endif %}量化权重或增加 GPU{{",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(err.contains("memory_by_offer.map.note.7.says"), "{err}");
    assert!(
        err.contains("has a `{% %}` tag: a sentence only inserts values"),
        "{err}"
    );

    let rules = common::edited_rules(&[(
        "memory.yaml",
        "does not fit: quantise the weights or add GPUs{{ memory_note_parallelism[offer.id] }}",
        "does not fit: quantise the weights or add GPUs{{ memory_note_paralelism[offer.id] }}",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("unknown name `memory_note_paralelism`"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `memory_note_parallelism`?"),
        "{err}"
    );
}
