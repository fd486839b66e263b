//! Benchmarks (divan) of `decide` on the ZEN peer decision (`benches/zen-peer/rules`), measured
//! the way the peer measures ZEN, so `scripts/bench-peer.sh` can put both side by side.
//!
//! Per profile, cycling through the peer's first 10,000 generated profiles (`zen-peer/gen.rs`),
//! each result dropped inside the timed region as the peer's loop does: evaluation of a parsed
//! profile without and with the trace, and JSON text in -> JSON record out (parse one JSON line
//! into a profile, check and evaluate it with [`decide_tools::Detail::LEAN`], serialise the record,
//! as `decide batch` does for a JSON line). Once: loading and compiling the rules folder.
//!
//! Run with `cargo bench --bench peer`.

#[path = "zen-peer/gen.rs"]
mod zen;

use std::hint::black_box;
use std::path::Path;
use std::sync::LazyLock;

use decide_engine::{Graph, Policy, Profile, Source};
use decide_tools::Detail;

fn main() {
    divan::main();
}

/// Distinct profiles cycled through (the peer evaluates 100,000 distinct ones per pass; these
/// are enough to mix the table's rows). Each per-profile benchmark takes 10,000 samples of 10
/// calls, 100,000 calls like one pass of the peer's; a sample's time is the mean of its calls.
/// Samples stay well under a scheduler time slice, so on a busy machine the median is still
/// an undisturbed sample (longer ones, 2.5 ms of JSON calls, were mostly preempted).
const PROFILES: usize = 10_000;

static GRAPH: LazyLock<Graph> =
    LazyLock::new(|| Graph::compile(Policy::from_dir(Path::new(zen::RULES)).unwrap()).unwrap());

/// The profiles as JSON lines, in `decide`'s format.
static LINES: LazyLock<Vec<String>> = LazyLock::new(|| {
    zen::generate(PROFILES, zen::SEED)
        .iter()
        .enumerate()
        .map(|(i, p)| p.to_profile_json(i))
        .collect()
});

/// The profiles parsed (outside the timed region, as the peer builds its inputs).
static PARSED: LazyLock<Vec<Profile>> = LazyLock::new(|| {
    LINES
        .iter()
        .map(|l| Profile::from_source(&Source::new("zen.json", l.as_str())).unwrap())
        .collect()
});

fn as_of() -> jiff::civil::Date {
    "2026-09-04".parse().unwrap()
}

/// The next item of `items`, round and round.
fn cycle<'a, T>(items: &'a [T]) -> impl FnMut() -> &'a T {
    let mut i = 0;
    move || {
        let item = &items[i];
        i = (i + 1) % items.len();
        item
    }
}

/// Reading and compiling the rules folder (ZEN: reading and parsing the graph file, creating
/// the decision, `Decision::compile`).
#[divan::bench]
fn compile() -> Graph {
    Graph::compile(Policy::from_dir(Path::new(zen::RULES)).unwrap()).unwrap()
}

/// One parsed profile evaluated without the trace (ZEN: a compiled decision, polled once).
#[divan::bench(sample_count = 10_000, sample_size = 10)]
fn evaluate_no_trace(b: divan::Bencher) {
    let (graph, as_of) = (&*GRAPH, as_of());
    let mut next = cycle(&PARSED);
    b.bench_local(|| {
        black_box(
            graph
                .evaluate_without_trace(black_box(next()), as_of)
                .unwrap(),
        );
    });
}

/// One parsed profile evaluated with the trace (ZEN: the same, trace on).
#[divan::bench(sample_count = 10_000, sample_size = 10)]
fn evaluate_trace(b: divan::Bencher) {
    let (graph, as_of) = (&*GRAPH, as_of());
    let mut next = cycle(&PARSED);
    b.bench_local(|| {
        black_box(graph.evaluate(black_box(next()), as_of).unwrap());
    });
}

/// One JSON line in, one JSON record out (ZEN: JSON string -> `Variable` -> evaluate -> JSON
/// string).
#[divan::bench(sample_count = 10_000, sample_size = 10)]
fn json_in_json_out(b: divan::Bencher) {
    let (graph, as_of) = (&*GRAPH, as_of());
    let mut next = cycle(&LINES);
    b.bench_local(|| {
        let source = Source::new("zen.jsonl", black_box(next()).as_str());
        // A line of JSON lines, read as `decide batch` reads one: with serde_json.
        let (_, evaluation) = decide_tools::decide_text(
            graph,
            &source,
            decide_engine::Syntax::Json,
            as_of,
            Detail::LEAN,
        )
        .unwrap();
        black_box(serde_json::to_string(&evaluation.decision).unwrap());
    });
}
