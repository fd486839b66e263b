//! The ZEN peer decision as a `decide` rules folder (`benches/zen-peer/rules`) against the
//! peer's plain-Rust oracle, on the peer's generated profiles: 0 mismatches.
//!
//! The profiles go the way a user's do: JSON text, parsed and checked by `decide_tools::decide_with`,
//! the record serialised to JSON and read back, so the check sees what `decide --format json`
//! prints. `benches/peer.rs` measures the same folder; `scripts/bench-peer.sh` puts it beside
//! ZEN.

#[path = "../benches/zen-peer/gen.rs"]
mod zen;

use std::collections::BTreeMap;
use std::path::Path;

use decide_engine::{Graph, Policy, Source};
use decide_tools::Detail;

/// How many of the peer's profiles go through the engine (the peer checks 100,000; these take a
/// few seconds in a debug build).
const CHECKED: usize = 10_000;

fn graph() -> Graph {
    Graph::compile(Policy::from_dir(Path::new(zen::RULES)).unwrap()).unwrap()
}

fn as_of() -> jiff::civil::Date {
    "2026-09-04".parse().unwrap()
}

/// The generator is the peer's: on its 100,000 profiles, the oracle's answers add up to the mix
/// the peer reports for ZEN (offers and bare metal), and the boundary draws are there.
#[test]
// The boundary draws are exact copies of the peer's constants.
#[allow(clippy::float_cmp)]
fn generator_draws_the_peers_profiles() {
    let profiles = zen::generate(100_000, zen::SEED);
    let mut offers = BTreeMap::<&str, usize>::new();
    let mut bare_metal = 0;
    for p in &profiles {
        let e = zen::oracle(p);
        *offers.entry(e.offer).or_default() += 1;
        bare_metal += usize::from(e.bare_metal);
    }
    assert_eq!(
        offers,
        BTreeMap::from([
            ("ascend910bx8", 3916),
            ("h100x8", 75661),
            ("rtx4090x8", 20423)
        ])
    );
    assert_eq!(bare_metal, 67876);
    for edge in [7.0, 10.0, 13.0, 30.0, 70.0, 100.0] {
        assert!(
            profiles.iter().any(|p| p.model_params_b == edge),
            "no profile of {edge}B"
        );
    }
    assert!(profiles.iter().any(|p| p.budget_cny_month == 10000.0));
    assert!(profiles.iter().any(|p| p.gpu_hours_per_gpu_month > 744.0));
}

/// `decide` on the rules folder answers what the oracle answers, on every one of the first
/// `CHECKED` profiles, with and without the trace.
#[test]
fn rules_folder_agrees_with_the_oracle() {
    let graph = graph();
    let as_of = as_of();
    let mut mismatches = Vec::new();
    let mut offers = BTreeMap::<String, usize>::new();
    for (i, p) in zen::generate(CHECKED, zen::SEED).iter().enumerate() {
        let expected = zen::oracle(p);
        let source = Source::new(format!("zen-{i}.json"), p.to_profile_json(i));
        // One profile in ten with the trace, the way `decide --trace` evaluates.
        let detail = Detail {
            trace: i % 10 == 0,
            ..Detail::LEAN
        };
        let (_, evaluation) = decide_tools::decide_with(&graph, &source, as_of, detail)
            .unwrap_or_else(|e| panic!("profile {i} {}: {}", source.text, e.render()));
        assert_eq!(detail.trace, !evaluation.decision.trace.is_empty());
        let record: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&evaluation.decision).unwrap()).unwrap();
        *offers
            .entry(record["offer"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
        if let Err(e) = zen::check_record(&record, &expected) {
            mismatches.push(format!("profile {i} {}: {e}", source.text));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches of {CHECKED}, the first:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(5)].join("\n")
    );
    // Every offer of the table is reached.
    assert_eq!(offers.len(), 3, "{offers:?}");
}

/// The one-shot run's profile (`benches/zen-peer/pretrain-70b.json`, used by
/// `scripts/bench-peer.sh`) is the peer's default one-shot profile, and gets its answer:
/// bare metal on `h100x8`.
#[test]
fn one_shot_profile_is_the_peers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/zen-peer/pretrain-70b.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let zen_default = zen::ZenProfile {
        model_params_b: 70.0,
        task: "pretrain",
        gpu_hours_per_gpu_month: 600.0,
        needs_multi_gpu_interconnect: true,
        compliance_isolation: false,
        custom_kernel_or_network: false,
        domestic_required: false,
        budget_cny_month: 100_000.0,
    };
    let expected = zen::oracle(&zen_default);
    assert_eq!((expected.bare_metal, expected.offer), (true, "h100x8"));
    let (_, evaluation) = decide_tools::decide_with(
        &graph(),
        &Source::new("pretrain-70b.json", text),
        as_of(),
        Detail::LEAN,
    )
    .unwrap();
    let record = serde_json::to_value(&evaluation.decision).unwrap();
    zen::check_record(&record, &expected).unwrap();
}
