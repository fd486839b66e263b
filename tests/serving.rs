//! Serving sized by throughput and latency (rules/serving.yaml): the model's figures against
//! published measurements on the same hardware and model size, and what the serving targets do
//! to a decision.
//!
//! The published figures, each with its source:
//! - RTX 4090, FP16, one request (`llama.cpp`, XiongjieDai/GPU-Benchmarks-on-LLM-Inference,
//!   README): Llama-2-7B 60.78 tokens/s, Llama-3-8B 54.84 tokens/s.
//! - A100-80GB SXM, FP16, Llama-2-7B, 1 prompt and 128 output tokens (lmdeploy
//!   `docs/en/benchmark/a100_fp16.md`): 100.02 tokens/s at batch 1; 1,505 at 16; 4,155 at 64 (and
//!   2,137 at 32, a point off the table's own curve: see the test). Llama-2-70B over 4 × A100 (tensor parallel 4), batch 1: 33.94 tokens/s.
//! - A100, `LLaMA` 7B, batch 1, a 2,048-token prompt (NVIDIA/TensorRT-LLM
//!   `docs/source/performance.md`, v0.5): first token in 133 ms.
//!
//! `MLPerf` Inference's Llama 2 70B results on 8 × H100 (about 21,000-24,500 tokens/s) are not
//! used: NVIDIA's submissions run FP8 weights and KV cache, which this model does not (it reads
//! 2 bytes a parameter), and the dataset's mean prompt length is not published in the logs.
//!
//! The A100 is not in the shipped catalog: the tests add it (an `a100-80g` container offer, one
//! instance of up to 4 GPUs) with NVIDIA's A100 80GB SXM datasheet figures: 2,039 GB/s, 312 dense
//! BF16 TFLOPS, `NVLink`.

use crate::common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// How far the model may be from a published measurement, either way: the model reads the
/// bytes and FLOPs of a typical model of the size (memory.yaml's KV and shape table), not those
/// of the exact checkpoint, and the measurements come from different serving stacks.
const TOLERANCE: f64 = 0.25;

const A100_OFFER: &str = r#"
  - id: a100-80g
    title: "A100 80G SXM container (test hardware)"
    id_vendor: marketplace
    kind: container
    region: test
    gpus: 1
    gpu: {model: A100 80G SXM, family: a100, memory_gb: 80, dense_tflops: 312, memory_bandwidth_gb_s: 2039, domestic: false, cuda: true, consumer: false}
    interconnect: {kind: NVLink 600 GB/s, bandwidth_gb_s: 600, fast: true}
    fabric: none
    host: {cpu: shared, memory: shared, storage: shared, memory_gb: 0}
    instance_gpus_max: 4
    tools: {inventory: nvidia-smi, topology: nvidia-smi topo -m, network: {commands: [], what: none}}
    delivery: {scheduled: false, western: false}
"#;

// (Appended to the shipped sheet: its vendor names left empty, so the vendor's id is its name.)
const A100_QUOTE: &str = "a100-80g,marketplace,,,gpu_hour,10,8,CNY,none,1 GPU-hour,1 卡时,unknown,unknown,2026-09-04,test hardware (NVIDIA A100 80GB datasheet),测试硬件\n";

/// The shipped rules with the A100 test offer quoted.
fn rules_with_a100() -> tempfile::TempDir {
    // A new accelerator family needs its training MFU too (Llama 2 70B on A100s implies 43%,
    // meta-llama/llama MODEL_CARD.md), though serving does not read it; its serving
    // efficiencies are the policy's default for a family without measurements.
    let dir = common::edited_rules(&[(
        "training.yaml",
        "value: {h100: 0.43,",
        "value: {a100: 0.43, h100: 0.43,",
    )]);
    let catalog = dir.path().join("catalog.yaml");
    let mut text = std::fs::read_to_string(&catalog).unwrap();
    text.push_str(A100_OFFER);
    std::fs::write(&catalog, text).unwrap();
    let sheet = dir.path().join("quotes/2026-09-04-marketplace.csv");
    let mut rows = std::fs::read_to_string(&sheet).unwrap();
    rows.push_str(A100_QUOTE);
    std::fs::write(&sheet, rows).unwrap();
    dir
}

/// The JSON record of `profile` decided with the rules in `rules` (the embedded ones if none).
fn record(rules: Option<&Path>, profile: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, profile).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decide"));
    cmd.arg(&path)
        .args(["--format", "json", "--as-of", common::AS_OF]);
    if let Some(rules) = rules {
        cmd.arg("--rules").arg(rules);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The serving figures of `offer` in a record.
fn serving<'a>(record: &'a Value, offer: &str) -> &'a Value {
    record["serving"]
        .as_array()
        .expect("a serving section")
        .iter()
        .find(|s| s["offer"] == offer)
        .unwrap_or_else(|| panic!("{offer} in {}", record["serving"]))
}

/// The replica shape of `tp` GPUs of `offer`.
fn shape<'a>(record: &'a Value, offer: &str, tp: u64) -> &'a Value {
    serving(record, offer)["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tp"] == tp)
        .unwrap_or_else(|| panic!("tp {tp} of {offer}: {}", serving(record, offer)))
}

/// Output tokens a second of a replica shape at `batch` sequences, on the model's own lines:
/// the step takes the larger of its two lines (reads first, arithmetic first), each a fixed
/// part plus a part per sequence.
fn tokens_s(shape: &Value, batch: f64) -> f64 {
    let line = |name: &str| {
        shape[format!("{name}_fixed_ms")].as_f64().unwrap()
            + shape[format!("{name}_per_sequence_ms")].as_f64().unwrap() * batch
    };
    batch * 1000.0 / line("mem").max(line("cmp"))
}

fn within(model: f64, published: f64, what: &str) {
    let off = model / published - 1.0;
    assert!(
        off.abs() <= TOLERANCE,
        "{what}: the model gives {model:.1}, published {published}, {:+.0}% (tolerance ±{:.0}%)",
        off * 100.0,
        TOLERANCE * 100.0
    );
}

fn inference(params_b: f64, prompt: u32, output: u32) -> String {
    format!(
        "name: benchmark\nworkload: {{task: inference, model_params_b: {params_b}}}\n\
         usage: {{gpus: 1, hours_per_gpu_month: 720}}\n\
         serving: {{prompt_tokens: {prompt}, output_tokens: {output}}}\n"
    )
}

#[test]
fn one_request_on_an_rtx_4090_is_as_fast_as_llama_cpp_measures() {
    // llama.cpp FP16, batch 1: generation speed (the prompt is short next to 512 generated).
    for (model, params_b, published) in [("Llama-2-7B", 6.74, 60.78), ("Llama-3-8B", 8.03, 54.84)] {
        let r = record(None, &inference(params_b, 16, 512));
        let one = shape(&r, "rtx4090-container", 1);
        within(
            tokens_s(one, 1.0),
            published,
            &format!("{model} on one RTX 4090"),
        );
    }
}

#[test]
fn llama_2_7b_on_an_a100_follows_lmdeploys_batch_curve() {
    let rules = rules_with_a100();
    let r = record(Some(rules.path()), &inference(6.74, 1, 128));
    let one = shape(&r, "a100-80g", 1);
    for (batch, published) in [(1.0, 100.02), (16.0, 1505.0), (64.0, 4155.0)] {
        within(
            tokens_s(one, batch),
            published,
            &format!("Llama-2-7B on one A100 at batch {batch}"),
        );
    }
    // The table's batch of 32 (2,137 tokens/s) is left out, and this says why: its time per
    // token (32 / 2,137 = 14.97 ms) is within 3% of the batch of 64's (64 / 4,155 = 15.40 ms)
    // though the step reads and computes twice the sequences, which no model of bandwidth and
    // arithmetic reproduces; the model gives about 2,830 there (+32%).
    let step = |batch: f64, published: f64| batch / published;
    assert!(step(32.0, 2137.0) / step(64.0, 4155.0) > 0.97);
    let at_32 = tokens_s(one, 32.0);
    assert!(at_32 > 2137.0 && at_32 < 4155.0, "{at_32}");
    // The first token after a 2,048-token prompt (TensorRT-LLM, LLaMA 7B, batch 1).
    let long = record(Some(rules.path()), &inference(6.74, 2048, 128));
    // TensorRT-LLM's figure is the engine's own, without a server in front: the policy's
    // request overhead (tokenising, scheduling, the network) is taken off the model's.
    let overhead = common::rules_value("serving.yaml", "serving_request_overhead_ms");
    let first = shape(&long, "a100-80g", 1)["ttft_ms"].as_f64().unwrap() - overhead;
    within(
        first,
        133.0,
        "first token of LLaMA 7B after 2,048 tokens on one A100",
    );
}

#[test]
fn llama_2_70b_over_four_a100s_is_as_fast_as_lmdeploy_measures() {
    let rules = rules_with_a100();
    let r = record(Some(rules.path()), &inference(68.98, 1, 128));
    let four = shape(&r, "a100-80g", 4);
    within(
        tokens_s(four, 1.0),
        33.94,
        "Llama-2-70B over 4 × A100 (tensor parallel 4) at batch 1",
    );
    // Two A100s cannot hold it (138 GB of weights × 1.2 against 144 GB usable): no such shape.
    let shapes = serving(&r, "a100-80g")["shapes"].as_array().unwrap();
    assert!(shapes.iter().all(|s| s["tp"] == 4), "{shapes:?}");
}

/// A profile of a 7B chat service at `peak` output tokens a second and `tpot` ms a token.
fn chat(peak: u32, tpot: f64) -> String {
    format!(
        "name: chat\nworkload: {{task: inference, model_params_b: 7}}\n\
         usage: {{gpus: 8, hours_per_gpu_month: 720}}\n\
         serving: {{peak_output_tokens_per_s: {peak}, prompt_tokens: 512, output_tokens: 256, \
         time_per_output_token_ms: {tpot}}}\n"
    )
}

/// The value of fact `id` in `rules/<file>` as the embedded policy ships it.
fn rule_fact(file: &str, id: &str) -> Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules")
            .join(file),
    )
    .unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no fact {id} in rules/{file}"))["value"]
        .clone()
}

#[test]
fn the_peak_sets_the_count_and_the_recommendation_carries_it() {
    let small = record(None, &chat(2_000, 50.0));
    let large = record(None, &chat(40_000, 50.0));
    let offer = large["offer"].as_str().unwrap();
    let s = serving(&large, offer);
    let units = s["units"].as_u64().unwrap();
    assert!(
        units > serving(&small, offer)["units"].as_u64().unwrap(),
        "20 times the peak takes more units: {s}"
    );
    // On the memo's own figures: the replicas carry the peak, each within the target and at
    // most the policy's share of its capacity busy (`serving_peak_utilisation`).
    let busy = rule_fact("serving.yaml", "serving_peak_utilisation")
        .as_f64()
        .unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "{busy}");
    let capacity = s["capacity_tokens_s"].as_f64().unwrap();
    assert!(capacity * busy >= 40_000.0, "{s}");
    assert!(s["tpot_ms"].as_f64().unwrap() <= 50.0, "{s}");
    // And one unit fewer would not: the count is the fewest.
    let per_unit = capacity / units as f64;
    assert!(per_unit * (units - 1) as f64 * busy <= 40_000.0, "{s}");
    // Every offer that carries the peak and costs less would have been chosen.
    let monthly = large["costs"]["recommended_monthly_cny"].as_f64().unwrap();
    for other in large["serving"].as_array().unwrap() {
        if other["meets"] == true && other["offer"] != offer {
            let alt = large["alternatives"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["offer"] == other["offer"])
                .unwrap();
            assert!(
                alt["monthly_cny"].as_f64().unwrap() >= monthly || alt["reason"] != "costlier",
                "{alt}"
            );
        }
    }
}

#[test]
fn a_tighter_latency_target_runs_smaller_batches() {
    let loose = record(None, &chat(2_000, 80.0));
    let tight = record(None, &chat(2_000, 25.0));
    let offer = "h100-x8-ningxia1";
    let (l, t) = (serving(&loose, offer), serving(&tight, offer));
    assert!(
        t["batch"].as_u64().unwrap() < l["batch"].as_u64().unwrap(),
        "{t} against {l}"
    );
    assert!(t["tpot_ms"].as_f64().unwrap() <= 25.0, "{t}");
}

#[test]
fn a_latency_no_offer_meets_is_a_warning_naming_the_nearest() {
    let r = record(None, &chat(2_000, 1.0));
    let warning = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == "serving_targets_unmet")
        .unwrap_or_else(|| panic!("{}", r["warnings"]));
    let message = warning["message"].as_str().unwrap();
    // The fastest single sequence of the catalog is the H100's, over 8 GPUs.
    assert!(message.contains("The nearest is H100 80G ×8"), "{message}");
    assert!(
        r["serving"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["meets"] == false),
        "{}",
        r["serving"]
    );
}

#[test]
fn serving_targets_on_a_training_profile_are_said_to_be_unused() {
    let r = record(
        None,
        "name: t\nworkload: {task: lora_finetune, model_params_b: 7}\n\
         usage: {gpus: 1, hours_per_gpu_month: 100}\n\
         serving: {peak_output_tokens_per_s: 100}\n",
    );
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["id"] == "serving_targets_ignored"),
        "{}",
        r["warnings"]
    );
    assert!(
        r.get("serving")
            .is_none_or(|s| s.as_array().unwrap().is_empty())
    );
}

#[test]
fn a_bad_serving_target_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.yaml");
    std::fs::write(
        &path,
        "name: t\nworkload: {task: inference, model_params_b: 7}\n\
         usage: {gpus: 1, hours_per_gpu_month: 100}\n\
         serving:\n  peak_output_tokens_per_s: 100\n  time_per_output_token_ms: 0\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .arg(&path)
        .args(["--as-of", common::AS_OF])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":6:"), "{err}");
    assert!(err.contains("serving.time_per_output_token_ms"), "{err}");
    assert!(err.contains("at least 0.01"), "{err}");
}

/// `decide calibrate` with `args`, as JSON.
fn calibration(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .arg("calibrate")
        .args(["--format", "json", "--as-of", common::AS_OF])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The error of one group of the calibration: (compared, median, p90).
fn group(calibration: &Value, name: &str) -> (u64, f64, f64) {
    let g = calibration["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == name)
        .unwrap_or_else(|| panic!("no group {name}: {}", calibration["groups"]));
    (
        g["compared"].as_u64().unwrap(),
        g["median"].as_f64().unwrap(),
        g["p90"].as_f64().unwrap(),
    )
}

/// The error the models may have against the shipped measurements: (median, p90) of
/// |model ÷ measured − 1|, as the issue bounds them: serving 25% / 50% at every number format,
/// training 20% / 35% in BF16. Training in FP8 misses that bound (docs/models.md: the published
/// FP8 runs of two stacks differ 1.7× at the same model and GPUs, and the profile does not say
/// the stack), so it is held to its calibrated error only, in [`AS_CALIBRATED`].
const ERROR_BOUNDS: &[(&str, f64, f64)] =
    &[("serving", 0.25, 0.50), ("training at bf16", 0.20, 0.35)];

/// The error `decide calibrate` gives today (docs/models.md), by group: (median, p90). A change
/// to a model or a measurement that worsens either by more than [`REGRESSION`] fails here, as
/// NVIDIA's `AIConfigurator` flags a change that worsens its error against its silicon sample.
const AS_CALIBRATED: &[(&str, f64, f64)] = &[
    ("serving", 0.11, 0.32),
    ("training at bf16", 0.06, 0.21),
    ("training at fp8", 0.31, 0.59),
];

/// How far the error may worsen from [`AS_CALIBRATED`] before the test fails: five points.
const REGRESSION: f64 = 0.05;

/// The fewest rows of each kind the models must be compared on.
const COMPARED_MIN: u64 = 20;

#[test]
fn the_models_are_within_their_calibrated_error_of_published_measurements() {
    let c = calibration(&[]);
    let rows = c["rows"].as_array().unwrap();
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    for &(kind, median, p90) in ERROR_BOUNDS {
        let (compared, m, p) = group(&c, kind);
        assert!(
            compared >= COMPARED_MIN,
            "{kind}: only {compared} rows compared"
        );
        assert!(
            m <= median,
            "{kind}: median error {} (bound {})",
            pct(m),
            pct(median)
        );
        assert!(
            p <= p90,
            "{kind}: p90 error {} (bound {})",
            pct(p),
            pct(p90)
        );
    }
    for &(kind, now_median, now_p90) in AS_CALIBRATED {
        let (_, m, p) = group(&c, kind);
        assert!(
            m <= now_median + REGRESSION && p <= now_p90 + REGRESSION,
            "{kind}: the error worsened to a median of {} and a p90 of {} (calibrated: {} and {})",
            pct(m),
            pct(p),
            pct(now_median),
            pct(now_p90)
        );
    }
    // Every row not compared says why.
    for row in rows.iter().filter(|r| r["ratio"].is_null()) {
        assert!(
            row["skipped"].as_str().is_some_and(|s| !s.is_empty()),
            "{row}"
        );
    }
}

/// A measurement sheet `ours.csv` of the header and `row`, in a temporary folder (kept alive by
/// the first of the pair).
fn one_row_sheet(row: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let sheet = dir.path().join("ours.csv");
    let header = decide_tools::calibrate::COLUMNS.join(",");
    std::fs::write(&sheet, format!("{header}\n{row}\n")).unwrap();
    (dir, sheet)
}

#[test]
fn a_buyers_own_measurement_is_checked_beside_the_published_ones() {
    let (_dir, sheet) = one_row_sheet(
        "ours-h100-8b,serving,h100,1,1,1,none,Our 8B,8,8,bf16,bf16,vLLM,512,256,1,,\
         tpot_ms,7.5,our lab,2026-11-30,one request",
    );
    let c = calibration(&["--measurements", sheet.to_str().unwrap()]);
    let ours = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "ours-h100-8b")
        .expect("the buyer's row is compared");
    let predicted = ours["predicted"].as_f64().unwrap();
    assert_eq!(ours["offer"], "h100-x8-ningxia1");
    assert!(
        (ours["ratio"].as_f64().unwrap() - predicted / 7.5).abs() < 1e-9,
        "{ours}"
    );
    // The same figure the memo's serving table shows for one sequence on one H100.
    let r = record(None, &inference(8.0, 512, 256));
    let one = shape(&r, "h100-x8-ningxia1", 1);
    assert!(
        (one["tpot_one_ms"].as_f64().unwrap() - predicted).abs() < 1e-9,
        "{one}"
    );
}

#[test]
fn a_bad_measurement_sheet_is_refused_at_its_cell() {
    let (_dir, sheet) = one_row_sheet(
        "ours,serving,h100,1,1,1,none,Our 8B,8,8,bf16,bf16,vLLM,512,256,1,,\
         tokens_per_second,7.5,our lab,2026-11-30,one request",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["calibrate", "--as-of", common::AS_OF, "--measurements"])
        .arg(&sheet)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ours.csv:2:"), "{err}");
    assert!(err.contains("metric"), "{err}");
    assert!(err.contains("output_tokens_s, tpot_ms, ttft_ms"), "{err}");
}

#[test]
fn the_error_the_memo_quotes_is_what_calibrate_prints() {
    // `model_error_by_family` (rules/calibration.yaml) is what the memo tells the signer; it is
    // kept by hand from `decide calibrate`, and must say what the command prints today: each
    // family's rows compared in each regime, and the median and 90th percentile to the
    // hundredth.
    let c = calibration(&[]);
    let quoted = rule_fact("calibration.yaml", "model_error_by_family");
    let mut printed = serde_json::Map::new();
    for g in c["groups"].as_array().unwrap() {
        let name = g["group"].as_str().unwrap();
        let Some((regime, family)) = name.split_once(" on ") else {
            continue;
        };
        let regimes = [
            "serving at low load",
            "serving at load",
            "training in one box",
            "training across boxes",
            "training in one box at fp8",
            "training across boxes at fp8",
        ];
        if !regimes.contains(&regime) {
            continue;
        }
        let round = |x: &Value| (x.as_f64().unwrap() * 100.0).round() / 100.0;
        let entry = printed
            .entry(family.to_owned())
            .or_insert_with(|| serde_json::json!({}));
        entry[regime] = serde_json::json!({
            "compared": g["compared"],
            "median": round(&g["median"]),
            "p90": round(&g["p90"]),
        });
    }
    assert_eq!(
        quoted,
        Value::Object(printed),
        "update `model_error_by_family` in rules/calibration.yaml to what `decide calibrate` prints"
    );
}
