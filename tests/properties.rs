//! Properties that must hold for every profile, not just the examples (proptest).
//!
//! Profiles are generated over the whole format: every task, sizes from 0.1B to 1,000B, 1 to 200
//! GPUs, 0 to 744 hours, each requirement flag, budgets, job hours on any catalog offer (some
//! measured) and any proposal, all within the format's bounds (`tests/bounds.rs` tries the
//! bounds themselves). The properties: every valid profile is decided and rendered; the same
//! input gives the same bytes; more busy hours or one more requirement never turns bare metal
//! into containers; a mutated profile (a value below or above its field's range among them) is
//! refused with a message that names the field; no decision breaks one of the policy's
//! invariants (over 10,000 profiles). With quote sheets: a later quote that raises an offer's
//! price never lowers what a profile's recommendation costs in all, and the same profile, rules and `--as-of` give
//! the same bytes at any date.

use crate::common;

use std::sync::LazyLock;

use decide_engine::{ErrorKind, Graph, Policy, Source};
use decide_tools::{Format, Memo};
use proptest::prelude::*;
use serde_json::{Value, json};

static GRAPH: LazyLock<Graph> = LazyLock::new(common::graph);
/// The shipped policy priced at [`RAISED_FROM`], the day a raised quote takes effect.
static AT_RAISED_FROM: LazyLock<Graph> = LazyLock::new(|| {
    Graph::compile(Policy::embedded().unwrap().at(RAISED_FROM.parse().unwrap())).unwrap()
});
static MEMO: LazyLock<Memo> = LazyLock::new(|| Memo::embedded().unwrap());

/// A valid profile, as the JSON value of its YAML.
fn profile() -> impl Strategy<Value = Value> {
    common::profile_strategy(&GRAPH)
}

/// Decides a profile value and renders both formats.
fn decide(value: &Value) -> decide_engine::Result<(String, String, String)> {
    let source = Source::new("generated.yaml", serde_json::to_string(value).unwrap());
    let (profile, evaluation) = decide_tools::decide(&GRAPH, &source, common::as_of())?;
    let md = MEMO.render(&GRAPH, &profile, &evaluation, Format::Markdown)?;
    let json = MEMO.render(&GRAPH, &profile, &evaluation, Format::Json)?;
    Ok((evaluation.decision.deployment, md, json))
}

/// The deployment alone (no trace, no sensitivity analysis, nothing rendered): what the
/// monotonicity properties compare.
fn deployment(value: &Value) -> String {
    let source = Source::new("generated.yaml", serde_json::to_string(value).unwrap());
    match decide_tools::decide_with(&GRAPH, &source, common::as_of(), decide_tools::Detail::LEAN) {
        Ok((_, evaluation)) => evaluation.decision.deployment,
        Err(e) => panic!("{}\n{value}", e.render()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // Failing inputs found so far are replayed first, from the committed file
        // `tests/properties.proptest-regressions`.
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_valid_profile_is_decided_and_rendered(p in profile()) {
        let decided = decide(&p);
        prop_assert!(decided.is_ok(), "{}\n{p}", decided.unwrap_err().render());
        let (_, md, json) = decided.unwrap();
        prop_assert!(md.starts_with("# GPU procurement memo: generated\n"));
        prop_assert!(serde_json::from_str::<Value>(&json).is_ok());
    }

    #[test]
    fn the_same_profile_gives_the_same_bytes(p in profile()) {
        let a = decide(&p).map_err(|e| e.render());
        let b = decide(&p).map_err(|e| e.render());
        prop_assert_eq!(a, b);
    }

    #[test]
    fn more_busy_hours_never_turn_bare_metal_into_containers(
        p in profile(),
        extra in 0.0f64..744.0,
    ) {
        if deployment(&p) == "bare_metal" {
            let mut more = p.clone();
            let hours = p["usage"]["hours_per_gpu_month"].as_f64().unwrap();
            more["usage"]["hours_per_gpu_month"] = json!((hours + extra).min(744.0));
            prop_assert_eq!(deployment(&more), "bare_metal", "{}", more);
        }
    }

    #[test]
    fn one_more_requirement_never_turns_bare_metal_into_containers(
        p in profile(),
        flag in prop::sample::select(vec![
            "physical_isolation", "domestic_accelerator", "custom_kernel", "custom_network",
        ]),
    ) {
        if deployment(&p) == "bare_metal" {
            let mut more = p.clone();
            more["requirements"][flag] = json!(true);
            prop_assert_eq!(deployment(&more), "bare_metal", "{}", more);
        }
    }

    #[test]
    fn mutated_profiles_are_refused_with_a_message_naming_the_field(
        p in profile(),
        mutation in 0usize..12,
    ) {
        let mut bad = p.clone();
        let field = match mutation {
            0 => { bad["usage"]["gpus"] = json!(0); "usage.gpus" }
            1 => { bad["usage"]["hours_per_gpu_month"] = json!(745.5); "usage.hours_per_gpu_month" }
            2 => { bad["workload"]["model_params_b"] = json!(-1.0); "workload.model_params_b" }
            3 => { bad["workload"]["task"] = json!("training"); "workload.task" }
            4 => { bad["usage"]["gpus"] = json!("eight"); "usage.gpus" }
            5 => { bad["requirements"]["physical_isolaton"] = json!(true); "requirements.physical_isolaton" }
            6 => { bad["proposal"]["offer"] = json!("no-such-offer"); "proposal.offer" }
            7 => { bad["job"]["measured"] = json!(["no-such-offer"]); "job.measured" }
            // Above the upper bounds of the format.
            8 => { bad["workload"]["model_params_b"] = json!(1e300); "workload.model_params_b" }
            9 => { bad["usage"]["gpus"] = json!(1_000_001); "usage.gpus" }
            10 => { bad["usage"]["months"] = json!(121); "usage.months" }
            _ => { bad["budget"]["monthly_cny"] = json!(0); "budget.monthly_cny" }
        };
        let err = decide(&bad).err();
        prop_assert!(err.is_some(), "accepted: {bad}");
        let err = err.unwrap();
        prop_assert_eq!(err.kind(), ErrorKind::Profile);
        let shown = err.render();
        prop_assert!(shown.contains(field), "{shown}");
        prop_assert!(shown.contains("generated.yaml:1:"), "{shown}");
    }
}

/// Generated profiles the invariant property decides.
const INVARIANT_CASES: usize = 10_000;

/// No generated profile gives a decision that breaks one of the embedded policy's invariants
/// (any number of them; the property holds trivially for a policy with none). The profiles come
/// from the same strategy as the properties above, with a fixed seed so that a failure is
/// reproduced by rerunning, and are decided on every core.
#[test]
fn no_generated_profile_breaks_an_invariant() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use rayon::prelude::*;

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let strategy = profile();
    let profiles: Vec<Value> = (0..INVARIANT_CASES)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let broken: Vec<String> = profiles
        .par_iter()
        .filter_map(|p| {
            let source = Source::new("generated.yaml", serde_json::to_string(p).unwrap());
            match decide_tools::decide_with(
                &GRAPH,
                &source,
                common::as_of(),
                decide_tools::Detail::LEAN,
            ) {
                Err(e) if e.kind() == ErrorKind::Invariant => Some(format!("{}\n{p}", e.render())),
                _ => None,
            }
        })
        .collect();
    assert!(
        broken.is_empty(),
        "{} of {INVARIANT_CASES} generated profiles break an invariant; the first:\n{}",
        broken.len(),
        broken[0]
    );
}

/// The shipped rules with one more quote sheet, valid from 2026-10-01, that raises one offer's
/// prices by `factor`, priced at that day.
fn raised(offer: &str, unit: &str, list: f64, discounted: f64, factor: f64) -> Graph {
    let sheet = format!(
        "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,min_term,vat,\
         invoice,valid_from,source\n{offer},marketplace,{unit},{:.2},{:.2},CNY,month,1 month,\
         unknown,unknown,2026-10-01,property test\n",
        list * factor,
        discounted * factor
    );
    let mut sources = Policy::embedded_sources();
    sources.push(Source::new("rules/quotes/2026-10-01-raise.csv", sheet));
    let policy =
        Policy::from_sources(&sources, decide_engine::policy::PolicyOrigin::Embedded).unwrap();
    Graph::compile(policy.at(RAISED_FROM.parse().unwrap())).unwrap()
}

const RAISED_FROM: &str = "2026-10-01";

/// What the recommendation `graph` makes for a profile at `as_of` costs in all (the record's
/// `contract_total_cny`: the job as billed, or every month of the contract). Offers are ranked
/// on it, not on the month: a raised price may turn a one-off job to an offer cheaper by the month
/// that bills more months, so the monthly bill is no measure of it.
fn plan_cost(graph: &Graph, value: &Value, as_of: jiff::civil::Date) -> f64 {
    let source = Source::new("generated.yaml", serde_json::to_string(value).unwrap());
    match decide_tools::decide_with(graph, &source, as_of, decide_tools::Detail::LEAN) {
        Ok((_, e)) => e.decision.costs["contract_total_cny"].as_number().unwrap(),
        Err(e) => panic!("{}\n{value}", e.render()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Each case compiles a policy with one more sheet.
        cases: 48,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_raised_quote_never_lowers_what_the_plan_costs(
        p in profile(),
        quote in prop::sample::select(vec![
            ("rtx4090-x8-sichuan2", "month", 9900.0, 7920.0),
            ("ascend910b-x8-huawei", "month", 26500.0, 21200.0),
            ("h100-x8-ningxia1", "month", 108_600.0, 86880.0),
            ("rtx4090-container", "gpu_hour", 1.96, 1.57),
        ]),
        factor in 1.0f64..2.0,
    ) {
        let (offer, unit, list, discounted) = quote;
        let as_of = RAISED_FROM.parse().unwrap();
        let before = plan_cost(&AT_RAISED_FROM, &p, as_of);
        let after = plan_cost(&raised(offer, unit, list, discounted, factor), &p, as_of);
        prop_assert!(after >= before - 1e-6, "{offer} × {factor}: {before} → {after}\n{p}");
    }

    #[test]
    fn the_same_profile_rules_and_date_give_the_same_bytes(
        p in profile(),
        days in 0i32..600,
    ) {
        let as_of = common::as_of() + jiff::Span::new().days(days);
        let render = || {
            let graph = Graph::compile(Policy::embedded().unwrap().at(as_of)).unwrap();
            let source = Source::new("generated.yaml", serde_json::to_string(&p).unwrap());
            let (profile, evaluation) = decide_tools::decide(&graph, &source, as_of).unwrap();
            MEMO.render(&graph, &profile, &evaluation, Format::Markdown).unwrap()
        };
        prop_assert_eq!(render(), render());
    }
}
