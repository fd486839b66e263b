//! Every number of the profile has an upper bound, declared in the profile type: the schema
//! shows it (`maximum`), a profile at the bound is decided, and one just above it is refused
//! with a message naming the field, the value and the bound.
//!
//! Data-driven: each row of [`BOUNDS`] sets one field of a base example to its bound, then to
//! the next value above it (bound + 1 for whole numbers, bound × 1.000001 for the others).

use crate::common;

use std::sync::LazyLock;

use decide_engine::{ErrorKind, Graph, Source};
use serde_json::{Value, json};

static GRAPH: LazyLock<Graph> = LazyLock::new(common::graph);

/// (field path, bound, whole number, base example). The example gives the field a context in
/// which it means something (a KV cache for the inference fields, a job for the job's, a
/// service for the serving targets).
const BOUNDS: &[(&str, f64, bool, &str)] = &[
    ("workload.model_params_b", 100_000.0, false, "lora-7b-4090"),
    ("workload.active_params_b", 100_000.0, false, "lora-7b-4090"),
    ("workload.nodes", 100_000.0, true, "pretrain-70b-job"),
    ("workload.tokens_b", 1_000_000.0, false, "pretrain-70b-job"),
    (
        "workload.context_tokens",
        100_000_000.0,
        true,
        "long-context-70b-inference",
    ),
    (
        "workload.concurrent_sequences",
        10_000_000.0,
        true,
        "long-context-70b-inference",
    ),
    ("usage.gpus", 1_000_000.0, true, "lora-7b-4090"),
    ("usage.hours_per_gpu_month", 744.0, false, "lora-7b-4090"),
    ("usage.months", 120.0, true, "lora-7b-4090"),
    (
        "budget.monthly_cny",
        100_000_000_000.0,
        false,
        "lora-7b-4090",
    ),
    (
        "job.hours.h100-x8-ningxia1",
        87_600.0,
        false,
        "pretrain-70b-job",
    ),
    ("job.deadline_days", 3_650.0, false, "pretrain-70b-job"),
    (
        "serving.peak_output_tokens_per_s",
        1_000_000_000.0,
        false,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.prompt_tokens",
        100_000_000.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.output_tokens",
        100_000_000.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.time_per_output_token_ms",
        3_600_000.0,
        false,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.time_to_first_token_ms",
        3_600_000.0,
        false,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.batch",
        10_000_000.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.tensor_parallel",
        1_024.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.measured_output_tokens_per_s.h100-x8-ningxia1",
        1_000_000_000.0,
        false,
        "serving-70b-h100-or-910b",
    ),
];

fn example(name: &str) -> Value {
    let path = format!("{}/examples/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The profile as YAML text, with the field at `path` written as `literal` (so that the test
/// says exactly what a person would type).
/// Fields a field must not exceed (`workload.nodes` at most `usage.gpus`, the active parameters
/// at most all of them), each with the value it is raised to when that field is set, so the
/// field is tried at its own bound and not refused for contradicting the other.
const COMPANIONS: &[(&str, &str, f64)] = &[
    ("workload.nodes", "usage.gpus", 1_000_000.0),
    (
        "workload.active_params_b",
        "workload.model_params_b",
        100_000.0,
    ),
    // A benchmark states the shape it ran at.
    (
        "serving.measured_output_tokens_per_s.h100-x8-ningxia1",
        "serving.tensor_parallel",
        4.0,
    ),
    (
        "serving.measured_output_tokens_per_s.h100-x8-ningxia1",
        "serving.batch",
        32.0,
    ),
];

/// The map fields keyed by offer id: a row's path is the map, a dot and the key.
const OFFER_MAPS: &[&str] = &["job.hours", "serving.measured_output_tokens_per_s"];

/// The map and the key of a row's path in one of [`OFFER_MAPS`], if it is one.
fn map_entry(path: &str) -> Option<(&'static str, &str)> {
    OFFER_MAPS.iter().find_map(|&map| {
        path.strip_prefix(map)
            .and_then(|rest| rest.strip_prefix('.'))
            .map(|key| (map, key))
    })
}

fn with_field(base: &Value, path: &str, literal: &str) -> String {
    let mut value = base.clone();
    for &(field, other, at) in COMPANIONS {
        if field == path {
            let (section, key) = other.split_once('.').unwrap();
            value[section][key] = json!(at);
        }
    }
    let segments: Vec<&str> = path.split('.').collect();
    let mut node = &mut value;
    for key in &segments[..segments.len() - 1] {
        if !node.get(*key).is_some_and(Value::is_object) {
            node[*key] = json!({});
        }
        node = &mut node[*key];
    }
    node[*segments.last().unwrap()] = json!("PLACEHOLDER");
    serde_json::to_string(&value)
        .unwrap()
        .replace("\"PLACEHOLDER\"", literal)
}

fn decide_text(text: &str) -> decide_engine::Result<String> {
    let source = Source::new("bound.yaml", text);
    let decided =
        decide_tools::decide(&GRAPH, &source, common::as_of()).map(|(_, e)| e.decision.deployment);
    // The same text as a line of JSON lines (read with serde_json, as `decide batch` does):
    // the same answer, or the same error worded the same way.
    let as_json_line = decide_tools::decide_text(
        &GRAPH,
        &source,
        decide_engine::Syntax::Json,
        common::as_of(),
        decide_tools::Detail::DEFAULT,
    )
    .map(|(_, e)| e.decision.deployment);
    let shown = |r: &decide_engine::Result<String>| {
        r.as_ref().map_err(decide_engine::Error::render).cloned()
    };
    assert_eq!(shown(&as_json_line), shown(&decided), "{text}");
    decided
}

/// The schema node of the field at `path` (through `$ref`s; map values for [`OFFER_MAPS`]).
fn schema_field<'a>(schema: &'a Value, path: &str) -> &'a Value {
    let resolve = |node: &'a Value| -> &'a Value {
        let node = ["allOf", "anyOf"]
            .iter()
            .find_map(|k| {
                node.get(*k)?
                    .as_array()?
                    .iter()
                    .find(|p| p.get("$ref").is_some())
            })
            .unwrap_or(node);
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => &schema["definitions"][r.trim_start_matches("#/definitions/")],
            None => node,
        }
    };
    let mut node = schema;
    for key in path.split('.') {
        let parent = resolve(node);
        node = match parent["properties"].get(key) {
            Some(field) => field,
            None => &parent["additionalProperties"],
        };
    }
    node
}

#[test]
fn the_schema_shows_every_bound_and_every_number_has_one() {
    let schema = decide_engine::profile::json_schema();
    for &(path, bound, whole, _) in BOUNDS {
        let field = schema_field(&schema, path);
        assert_eq!(field["maximum"].as_f64(), Some(bound), "{path}: {field:#}");
        let types = field["type"].to_string();
        assert!(
            types.contains(if whole { "integer" } else { "number" }),
            "{path}: {types}"
        );
        let description = field["description"].as_str().unwrap_or_default();
        if map_entry(path).is_none() {
            assert!(
                description.contains("at most") || description.contains(" to "),
                "{path}: {description}"
            );
        }
    }
    // No number of the profile without a bound: every `number` or `integer` node of the
    // schema has a `maximum`, and is one of the rows above.
    let mut unbounded = Vec::new();
    let mut numbers = 0;
    walk(&schema, &mut |node| {
        let types = node["type"].to_string();
        if types.contains("number") || types.contains("integer") {
            numbers += 1;
            if node.get("maximum").is_none() {
                unbounded.push(node.to_string());
            }
        }
    });
    assert!(
        unbounded.is_empty(),
        "numbers without a bound: {unbounded:#?}"
    );
    assert_eq!(
        numbers,
        BOUNDS.len(),
        "a number of the schema has no row in BOUNDS"
    );
}

fn walk(node: &Value, visit: &mut impl FnMut(&Value)) {
    match node {
        Value::Object(map) => {
            visit(node);
            for v in map.values() {
                walk(v, visit);
            }
        }
        Value::Array(items) => {
            for v in items {
                walk(v, visit);
            }
        }
        _ => {}
    }
}

#[test]
fn every_number_at_its_bound_is_decided() {
    for &(path, bound, _, base) in BOUNDS {
        let text = with_field(&example(base), path, &format!("{bound}"));
        let decided = decide_text(&text);
        assert!(
            decided.is_ok(),
            "{path} = {bound} refused:\n{}\n{text}",
            decided.unwrap_err().render()
        );
    }
}

#[test]
fn every_number_just_above_its_bound_is_refused_naming_field_value_and_bound() {
    for &(path, bound, whole, base) in BOUNDS {
        let above = if whole {
            format!("{}", bound + 1.0)
        } else {
            format!("{}", bound * 1.000_001)
        };
        let text = with_field(&example(base), path, &above);
        let err = decide_text(&text).expect_err(&format!("{path} = {above} accepted"));
        assert_eq!(err.kind(), ErrorKind::Profile);
        let shown = err.render();
        // The field (a map's entry by its map and key), the value as written, and the bound.
        let (field, key) = map_entry(path).map_or((path, None), |(map, key)| (map, Some(key)));
        assert!(
            shown.contains(&format!("error: {field}")),
            "{path}:\n{shown}"
        );
        if let Some(key) = key {
            assert!(shown.contains(&format!("`{key}`")), "{path}:\n{shown}");
        }
        assert!(shown.contains(&above), "{path}: no {above}:\n{shown}");
        let bound = format!("{bound}");
        assert!(
            shown.replace(&above, "").contains(&bound),
            "{path}: no bound {bound}:\n{shown}"
        );
        assert!(shown.contains("bound.yaml:1:"), "{path}:\n{shown}");
    }
}

/// The case: a model of 10^300 billion parameters on 8 GPUs was decided (containers at
/// ¥157 a month); it is refused, in exponent notation rather than three hundred digits.
#[test]
fn absurd_magnitudes_are_refused_and_shown_short() {
    let text = with_field(&example("lora-7b-4090"), "workload.model_params_b", "1e300");
    let shown = decide_text(&text).unwrap_err().render();
    assert!(
        shown.contains("workload.model_params_b: must be at most 100000, got 1e300"),
        "{shown}"
    );
    let text = with_field(&example("lora-7b-4090"), "usage.gpus", "4294967295");
    let shown = decide_text(&text).unwrap_err().render();
    assert!(
        shown.contains(
            "integer `4294967295`, expected a whole number of at least 1 and at most 1000000"
        ),
        "{shown}"
    );
}

/// (field path, lower bound, whole number, base example): the smallest value each number
/// takes. A smaller positive value (`model_params_b: 1e-300`) left the rules' arithmetic
/// nothing to work with and ended in "fact … gave inf".
const LOWER: &[(&str, f64, bool, &str)] = &[
    ("workload.model_params_b", 0.001, false, "pretrain-70b-job"),
    ("workload.active_params_b", 0.001, false, "pretrain-70b-job"),
    ("workload.nodes", 1.0, true, "pretrain-70b-job"),
    ("workload.tokens_b", 0.000_001, false, "pretrain-70b-job"),
    (
        "workload.context_tokens",
        1.0,
        true,
        "long-context-70b-inference",
    ),
    (
        "workload.concurrent_sequences",
        1.0,
        true,
        "long-context-70b-inference",
    ),
    ("usage.gpus", 1.0, true, "lora-7b-4090"),
    ("usage.hours_per_gpu_month", 0.0, false, "lora-7b-4090"),
    ("usage.months", 1.0, true, "lora-7b-4090"),
    ("budget.monthly_cny", 1.0, false, "lora-7b-4090"),
    (
        "job.hours.h100-x8-ningxia1",
        0.01,
        false,
        "pretrain-70b-job",
    ),
    ("job.deadline_days", 0.01, false, "pretrain-70b-job"),
    (
        "serving.peak_output_tokens_per_s",
        0.01,
        false,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.prompt_tokens",
        1.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.output_tokens",
        1.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.time_per_output_token_ms",
        0.01,
        false,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.time_to_first_token_ms",
        0.01,
        false,
        "serving-70b-h100-or-910b",
    ),
    ("serving.batch", 1.0, true, "serving-70b-h100-or-910b"),
    (
        "serving.tensor_parallel",
        1.0,
        true,
        "serving-70b-h100-or-910b",
    ),
    (
        "serving.measured_output_tokens_per_s.h100-x8-ningxia1",
        0.01,
        false,
        "serving-70b-h100-or-910b",
    ),
];

#[test]
fn every_number_at_its_lower_bound_is_decided_and_below_it_refused() {
    let schema = decide_engine::profile::json_schema();
    assert_eq!(
        LOWER.len(),
        BOUNDS.len(),
        "a number without a lower bound row"
    );
    for &(path, bound, whole, base) in LOWER {
        let field = schema_field(&schema, path);
        assert_eq!(field["minimum"].as_f64(), Some(bound), "{path}: {field:#}");
        assert!(field.get("exclusiveMinimum").is_none(), "{path}: {field:#}");
        let text = with_field(&example(base), path, &format!("{bound}"));
        let decided = decide_text(&text);
        assert!(
            decided.is_ok(),
            "{path} = {bound} refused:\n{}\n{text}",
            decided.unwrap_err().render()
        );
        let below = if whole {
            format!("{}", bound - 1.0)
        } else if bound == 0.0 {
            "-0.001".to_owned()
        } else {
            format!("{:e}", bound / 2.0)
        };
        let text = with_field(&example(base), path, &below);
        let err = decide_text(&text).expect_err(&format!("{path} = {below} accepted"));
        assert_eq!(err.kind(), ErrorKind::Profile);
        let shown = err.render();
        let field = map_entry(path).map_or(path, |(map, _)| map);
        assert!(
            shown.contains(&format!("error: {field}")),
            "{path}:\n{shown}"
        );
        assert!(
            shown.contains(&format!("{bound}")),
            "{path}: no bound:\n{shown}"
        );
    }
    // The case: a thousandth of the smallest model with a job's hours.
    let text = with_field(
        &example("pretrain-70b-job"),
        "workload.model_params_b",
        "1e-300",
    );
    let shown = decide_text(&text).unwrap_err().render();
    assert!(
        shown.contains("must be at least 0.001, got 1e-300"),
        "{shown}"
    );
}

/// A name is at most 200 characters, whatever they are: one at the limit is decided in both
/// memos, and a long one (the 600,000 `/`, 900,000 `&`, 1,000,000 `<`, which ran the
/// HTML memo out of its template budget and was blamed on the rules) is refused where it is
/// read, naming the field, its length and the limit.
#[test]
fn a_name_at_its_length_limit_is_decided_and_a_longer_one_refused_where_it_is_read() {
    let base = example("lora-7b-4090");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("named.yaml");
    let path_arg = path.to_str().unwrap();
    for c in ['/', '&', '<', '中'] {
        let name = serde_json::to_string(&c.to_string().repeat(200)).unwrap();
        std::fs::write(&path, with_field(&base, "name", &name)).unwrap();
        for format in ["md", "html"] {
            common::run_ok(&[path_arg, "--as-of", "2026-09-04", "--format", format]);
        }
    }
    for (c, count) in [('/', 600_000), ('&', 900_000), ('<', 1_000_000)] {
        let name = serde_json::to_string(&c.to_string().repeat(count)).unwrap();
        std::fs::write(&path, with_field(&base, "name", &name)).unwrap();
        let out = common::run(&[path_arg, "--as-of", "2026-09-04", "--format", "html"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "error: name: is {count} characters long; a name has at most 200"
            )),
            "{err}"
        );
        assert!(err.contains("named.yaml:1:"), "{err}");
        assert!(
            err.contains("help: name the workload in a few words"),
            "{err}"
        );
        assert!(!err.contains("template"), "{err}");
    }
    // Read as a line of JSON lines, the same refusal.
    let text = with_field(
        &base,
        "name",
        &serde_json::to_string(&"x".repeat(201)).unwrap(),
    );
    let err = decide_text(&text).expect_err("a 201-character name accepted");
    assert_eq!(err.kind(), ErrorKind::Profile);
    assert!(
        err.render().contains("is 201 characters long"),
        "{}",
        err.render()
    );
}

/// Whole numbers are decimal, as numbers are: the YAML 1.1 spellings an integer reader takes
/// (`1_0` for 10 GPUs, `0x8`, `0o10`, `0b1000`, `+0x8` for 8) are refused with the field named
/// and the bound, in every whole-number field, from a file and from a line of JSON lines alike.
#[test]
fn whole_numbers_are_decimal_and_yaml_1_1_spellings_are_refused_naming_the_field() {
    for &(path, bound, _, base) in BOUNDS.iter().filter(|b| b.2) {
        for spelling in ["1_0", "0x8", "0o10", "0b1000", "+0x8", "0X8"] {
            let text = with_field(&example(base), path, spelling);
            let err = decide_text(&text).expect_err(&format!("{path}: {spelling} accepted"));
            assert_eq!(err.kind(), ErrorKind::Profile);
            let shown = err.render();
            assert!(
                shown.contains(&format!(
                    "error: {path}: expected a whole number of at least 1 and at most {bound}"
                )),
                "{path} = {spelling}:\n{shown}"
            );
            assert!(
                shown.contains("decimal digits"),
                "{path} = {spelling}:\n{shown}"
            );
        }
        // Written in decimal, the same field is decided.
        decide_text(&with_field(&example(base), path, "8"))
            .unwrap_or_else(|e| panic!("{path} = 8: {}", e.render()));
    }
}
