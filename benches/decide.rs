//! Benchmarks (divan): loading the embedded policy (rule files and quote sheets), pricing it at
//! a date, reading the quote sheets, compiling the embedded policy, deciding one profile on the compiled graph
//! (trace kept), deciding plus JSON, deciding plus the Markdown memo, a JSON line to its record,
//! batch throughput, and the cheapest cover of a length by a box's terms, with and without a
//! refunded term ended early.
//!
//! Run with `cargo bench`; numbers and the machine are in `docs/performance.md`.

use std::fmt::Write as _;
use std::sync::LazyLock;

use decide_engine::{Graph, Policy, Profile, Source};
use decide_tools::batch::{self, Item, Options};
use decide_tools::{Format, Memo};

fn main() {
    divan::main();
}

static GRAPH: LazyLock<Graph> =
    LazyLock::new(|| Graph::compile(Policy::embedded().unwrap().at(as_of())).unwrap());
static MEMO: LazyLock<Memo> = LazyLock::new(|| Memo::embedded().unwrap());

const PROFILE: &str = include_str!("../examples/pretrain-70b-job.yaml");

fn as_of() -> jiff::civil::Date {
    "2026-09-04".parse().unwrap()
}

fn profile() -> Profile {
    Profile::from_source(&Source::new("pretrain-70b-job.yaml", PROFILE)).unwrap()
}

/// Loading and compiling the embedded policy and the memo templates (once per process).
#[divan::bench]
fn compile_policy() -> (Graph, Memo) {
    (
        Graph::compile(Policy::embedded().unwrap()).unwrap(),
        Memo::embedded().unwrap(),
    )
}

/// Loading the embedded policy: its rule files (YAML) and quote sheets (CSV), checked, and
/// the offers priced with the newest quotes.
#[divan::bench]
fn load_policy() -> Policy {
    Policy::embedded().unwrap()
}

/// Pricing a loaded policy at a date: the quotes in force resolved into offers.
#[divan::bench]
fn price_policy_at(b: divan::Bencher) {
    let policy = Policy::embedded().unwrap();
    let day = as_of();
    b.bench(|| policy.at(day));
}

/// Reading the quote sheets alone (both shipped sheets, every row checked).
#[divan::bench]
fn read_quote_sheets(b: divan::Bencher) {
    let sources = Policy::embedded_sources();
    let policy = Policy::embedded().unwrap();
    let vocabulary = &policy.quote_sheets.as_ref().unwrap().item;
    let ids: Vec<&str> = policy.hardware.iter().map(|h| h.item.id.as_str()).collect();
    let sheets: Vec<usize> = (0..sources.len())
        .filter(|&i| decide_engine::policy::is_sheet(&sources[i]))
        .collect();
    b.bench(|| {
        sheets
            .iter()
            .map(|&i| {
                decide_engine::policy::quotes::read_sheet(&sources, i, vocabulary, &ids)
                    .0
                    .len()
            })
            .sum::<usize>()
    });
}

/// Parsing one profile from YAML.
#[divan::bench]
fn parse_profile(b: divan::Bencher) {
    let source = Source::new("pretrain-70b-job.yaml", PROFILE);
    b.bench(|| Profile::from_source(divan::black_box(&source)).unwrap());
}

/// The 70B example as one line of JSON lines, as a fleet for `decide batch` is written.
const JSON_LINE: &str = r#"{"name":"70B continued pre-training","workload":{"task":"pretrain","model_params_b":70,"parallelism":["data","tensor","pipeline"],"tokens_b":4.6},"usage":{"gpus":8,"hours_per_gpu_month":720},"job":{"cadence":"one_off","deadline_days":10,"hours":{"h100-x8-ningxia1":168,"ascend910b-x8-huawei":420}}}"#;

/// One JSON line read as a batch reads it.
fn json_line_item() -> Item {
    batch::split(&Source::new("fleet.jsonl", format!("{JSON_LINE}\n")))
        .pop()
        .unwrap()
        .unwrap()
}

/// The profile's revision (`audit.profile_revision`), computed for every record.
#[divan::bench]
fn profile_revision(b: divan::Bencher) {
    let profile = profile();
    b.bench(|| divan::black_box(&profile).revision());
}

/// Parsing one line of JSON lines into a profile, as a batch does.
#[divan::bench]
fn parse_json_line(b: divan::Bencher) {
    let item = json_line_item();
    b.bench(|| Profile::from_json(&divan::black_box(&item).source).unwrap());
}

/// JSON text in, JSON record out: one line of JSON lines parsed, checked, decided (no trace or
/// sensitivity, as `decide batch` writes by default) and written as its JSON line, on one core.
#[divan::bench]
fn json_line_to_record(b: divan::Bencher) {
    let item = json_line_item();
    let options = Options {
        format: Format::Json,
        as_of: as_of(),
        trace: false,
        sensitivity: false,
    };
    b.bench(|| batch::decide_one(&GRAPH, &MEMO, divan::black_box(&item), options).unwrap());
}

/// Evaluating one parsed profile on the compiled graph, trace kept.
#[divan::bench]
fn evaluate(b: divan::Bencher) {
    let (graph, profile, as_of) = (&*GRAPH, profile(), as_of());
    b.bench(|| graph.evaluate(divan::black_box(&profile), as_of).unwrap());
}

/// Evaluating one parsed profile without the trace: the decision record as `decide` and
/// `decide batch` build it by default.
#[divan::bench]
fn evaluate_without_trace(b: divan::Bencher) {
    let (graph, profile, as_of) = (&*GRAPH, profile(), as_of());
    b.bench(|| {
        graph
            .evaluate_without_trace(divan::black_box(&profile), as_of)
            .unwrap()
    });
}

/// Evaluating one parsed profile for its record alone: the nodes the record needs, not the
/// memo's sentences (`decide batch` of JSON lines).
#[divan::bench]
fn evaluate_record(b: divan::Bencher) {
    let (graph, profile, as_of) = (&*GRAPH, profile(), as_of());
    b.bench(|| {
        graph
            .evaluate_record(divan::black_box(&profile), as_of)
            .unwrap()
    });
}

/// Evaluating plus the JSON record.
#[divan::bench]
fn evaluate_json(b: divan::Bencher) {
    let (graph, memo, profile, as_of) = (&*GRAPH, &*MEMO, profile(), as_of());
    b.bench(|| {
        let e = graph.evaluate(divan::black_box(&profile), as_of).unwrap();
        memo.render(graph, &profile, &e, Format::Json).unwrap()
    });
}

/// Evaluating plus the Markdown memo.
#[divan::bench]
fn evaluate_markdown(b: divan::Bencher) {
    let (graph, memo, profile, as_of) = (&*GRAPH, &*MEMO, profile(), as_of());
    b.bench(|| {
        let e = graph.evaluate(divan::black_box(&profile), as_of).unwrap();
        memo.render(graph, &profile, &e, Format::Markdown).unwrap()
    });
}

/// What would change the answer: the sensitivity analysis of one evaluated profile (a few
/// hundred partial re-evaluations), as `decide` adds to every record.
#[divan::bench(sample_count = 20)]
fn sensitivity(b: divan::Bencher) {
    let (graph, profile, as_of) = (&*GRAPH, profile(), as_of());
    let e = graph.evaluate(&profile, as_of).unwrap();
    b.bench(|| {
        decide_tools::sensitivity::analyse(graph, divan::black_box(&profile), as_of, &e).unwrap()
    });
}

/// Batch throughput: 10,000 JSON-lines profiles parsed, decided in parallel and written as JSON
/// lines (no trace), as `decide batch` does.
#[divan::bench(sample_count = 10)]
fn batch_10k(b: divan::Bencher) {
    let mut text = String::new();
    for i in 0..10_000 {
        let task = ["lora_finetune", "full_finetune", "pretrain", "inference"][i % 4];
        let _ = writeln!(
            text,
            "{{\"name\": \"p{i}\", \"workload\": {{\"task\": \"{task}\", \"model_params_b\": {}}}, \"usage\": {{\"gpus\": {}, \"hours_per_gpu_month\": {}}}}}",
            1 + i % 90,
            1 + i % 16,
            (i * 37) % 745
        );
    }
    let items: Vec<Item> = batch::split(&Source::new("fleet.jsonl", text))
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    let options = Options {
        format: Format::Json,
        as_of: as_of(),
        trace: false,
        sensitivity: false,
    };
    b.counter(divan::counter::ItemsCount::new(items.len()))
        .bench(|| batch::decide_all(&GRAPH, &MEMO, &items, options));
}

/// A box sold by the hour, day, week, month and year, each refunding `refund` of its unused
/// time after `notice` hours.
fn box_terms(refund: f64, notice: f64) -> decide_lang::Value {
    use decide_lang::Value;
    let term = |unit: &str, length: f64, cny: f64| {
        Value::from_pairs([
            (Value::from("unit"), Value::from(unit)),
            (Value::from("length"), Value::from(length)),
            (Value::from("cny"), Value::from(cny)),
            (Value::from("refund"), Value::from(refund)),
            (Value::from("notice"), Value::from(notice)),
        ])
    };
    Value::from(vec![
        term("hour", 1.0, 20.0),
        term("day", 24.0, 400.0),
        term("week", 168.0, 2500.0),
        term("month", 720.0, 7920.0),
        term("year", 8760.0, 85536.0),
    ])
}

/// `cover` of a 13-day job and of 11 months of use by the five terms, without refunds.
#[divan::bench(args = [312.0, 7920.0])]
fn cover_by_five_terms(b: divan::Bencher, hours: f64) {
    let terms = box_terms(0.0, 0.0);
    let length = decide_lang::Value::from(hours);
    b.bench(|| decide_lang::cover::cover(&length, &terms).unwrap());
}

/// The same with every term refunding 80% after 7 days' notice: each term is also tried as
/// the one ended early.
#[divan::bench(args = [312.0, 7920.0])]
fn cover_ended_early(b: divan::Bencher, hours: f64) {
    let terms = box_terms(0.8, 168.0);
    let length = decide_lang::Value::from(hours);
    b.bench(|| decide_lang::cover::cover(&length, &terms).unwrap());
}
