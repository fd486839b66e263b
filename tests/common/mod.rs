//! Helpers shared by the integration tests: the embedded graph, profiles from text, and
//! rules folders copied from `rules/` with edits.

#![allow(dead_code)]

pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use decide_engine::profile::{self, Field, FieldKind};
use decide_engine::{Evaluation, Graph, Policy, Source};
use proptest::prelude::*;
use serde_json::json;

/// The date every snapshot is taken at: the day the catalog's prices were listed.
pub const AS_OF: &str = "2026-09-04";

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A text file of the repository, by its path from the root.
pub fn repo_text(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `.rs` file under a crate's `src/` (`crates/engine`), in path order: (its path under
/// `src/` with `/`, its text).
pub fn rust_files(dir: &str) -> Vec<(String, String)> {
    fn walk(folder: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(folder).expect("a folder of src/") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = root().join(dir).join("src");
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    paths.sort();
    let read = |p: &PathBuf| {
        let relative = p.strip_prefix(&src).expect("under src/").to_string_lossy();
        (
            relative.replace('\\', "/"),
            std::fs::read_to_string(p).expect("a source file"),
        )
    };
    paths.iter().map(read).collect()
}

pub fn as_of() -> jiff::civil::Date {
    AS_OF.parse().unwrap()
}

/// The embedded policy priced at [`AS_OF`], the date every test decides at (a policy priced at
/// its newest quotes refuses to decide at an earlier date whose prices differ).
pub fn policy() -> Policy {
    Policy::embedded().expect("embedded rules load").at(as_of())
}

pub fn graph() -> Graph {
    Graph::compile(policy()).expect("embedded rules compile")
}

/// Decides a profile given as YAML text with the embedded policy.
pub fn decide_text(graph: &Graph, yaml: &str) -> decide_engine::Result<Evaluation> {
    let source = Source::new("profile.yaml", yaml);
    decide_tools::decide(graph, &source, as_of()).map(|(_, e)| e)
}

/// A copy of the project's `rules/` in a temporary folder, with `(file, from, to)` text edits.
pub fn edited_rules(edits: &[(&str, &str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    copy_dir(&rules, dir.path());
    for (file, from, to) in edits {
        let path: PathBuf = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} does not contain {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
    dir
}

/// Loads a rules folder and compiles it priced at [`AS_OF`] (as [`policy`] is), returning the
/// rendered error on failure.
pub fn compile_dir(dir: &Path) -> Result<Graph, String> {
    Policy::from_dir(dir)
        .and_then(|p| Graph::compile(p.priced_at(as_of())))
        .map_err(|e| e.render())
}

/// Copies the files of `from` into `to`, folders (such as `tests/`) included.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// Runs the `decide` binary with `args` in the project folder.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// A folder holding an `fc-list` that answers `fc-list :lang=zh family` with `listed`, and
/// `PATH` with it first: `--format pdf` asks fontconfig whether a font covers the memo's
/// Chinese (its terms are quoted in Chinese in every language), and a test with a fake browser
/// must not pass or fail by the fonts of the machine it runs on.
pub fn fonts_for_chinese(listed: &str) -> (tempfile::TempDir, String) {
    let bin = tempfile::tempdir().unwrap();
    write_fc_list(bin.path(), listed);
    let path = path_with(bin.path());
    (bin, path)
}

/// Writes into `dir` an `fc-list` that prints `listed` (see [`fonts_for_chinese`]).
pub fn write_fc_list(dir: &Path, listed: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let fc_list = dir.join("fc-list");
    std::fs::write(&fc_list, format!("#!/bin/sh\nprintf '{listed}'\n")).unwrap();
    std::fs::set_permissions(&fc_list, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `PATH` with `dir` first.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Standard output of a `decide` run that must succeed (exit 0).
pub fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The values of an enumerated profile field, or of a list field's items, from the profile
/// model.
pub fn choices(path: &str) -> Vec<String> {
    let field = profile::field(path).unwrap_or_else(|| panic!("{path} is a profile field"));
    let kind = match &field.kind {
        FieldKind::List(item) => &**item,
        kind => kind,
    };
    let FieldKind::Enum(choices) = kind else {
        panic!("{path} is not a choice");
    };
    choices.iter().map(|c| c.value.clone()).collect()
}

/// The bounds of a number field of the profile, from the profile model.
pub fn bounds(path: &str) -> profile::fields::Bounds {
    *profile::field(path)
        .and_then(Field::bounds)
        .unwrap_or_else(|| panic!("{path} is a number field"))
}

/// A valid profile over the whole format, as the JSON value of its YAML: every task, sizes
/// from 0.1B to 1,000B (some a mixture of experts, some named), 1 to 200 GPUs, 0 to 744 hours, each requirement flag, budgets, job hours
/// on any of `graph`'s offers (some of them measured) and any proposal.
pub fn profile_strategy(graph: &Graph) -> impl Strategy<Value = serde_json::Value> + use<> {
    let ids: Vec<String> = graph.policy().offer_ids().map(str::to_owned).collect();
    let workload = (
        prop::sample::select(choices("workload.task")),
        prop_oneof![0.1f64..20.0, 20.0f64..1000.0],
        prop::sample::subsequence(choices("workload.parallelism"), 0..=3),
        1u32..=4,
        prop::option::of(0.1f64..20_000.0),
        prop::option::of(prop::sample::select(choices("workload.concurrency"))),
        prop::option::of((1u32..=1_000_000, 1u32..=10_000)),
        any::<bool>(),
        // A mixture of experts: the share of the parameters active, and a model by name (some
        // the policy knows, one it does not).
        prop::option::of(0.01f64..=1.0),
        prop::option::of(prop::sample::select(vec![
            "mixtral-8x7b",
            "DeepSeek-V3",
            "qwen3_30b_a3b",
            "some-model",
        ])),
    )
        .prop_map(
            |(task, params, parallelism, nodes, tokens, concurrency, kv, cuda, active, model)| {
                json!({"task": task, "model_params_b": params, "parallelism": parallelism,
                   "nodes": nodes, "tokens_b": tokens, "concurrency": concurrency,
                   "context_tokens": kv.map(|(c, _)| c), "concurrent_sequences": kv.map(|(_, s)| s),
                   "custom_cuda_operators": cuda,
                   "active_params_b": active.map(|share| (params * share).max(0.001)),
                   "model": model})
            },
        );
    let hours = bounds("usage.hours_per_gpu_month");
    let usage = (
        1u32..=200,
        hours.min.unwrap()..=hours.max.unwrap(),
        1u32..=36,
    )
        .prop_map(|(gpus, hours, months)| {
            json!({"gpus": gpus, "hours_per_gpu_month": hours, "months": months})
        });
    // Every flag of `requirements`, each on or off.
    let flags: Vec<&str> = profile::fields::children("requirements")
        .filter(|f| f.kind == FieldKind::Bool)
        .map(Field::name)
        .collect();
    let requirements = prop::collection::vec(any::<bool>(), flags.len()).prop_map(move |on| {
        serde_json::Value::Object(
            flags
                .iter()
                .zip(on)
                .map(|(flag, on)| ((*flag).to_owned(), on.into()))
                .collect(),
        )
    });
    let budget = prop::option::of(100.0f64..500_000.0);
    let job = (
        prop::collection::btree_map(prop::sample::select(ids.clone()), 1.0f64..5000.0, 0..4)
            .prop_flat_map(|hours| {
                // `measured`: any subset of the offers given hours, in their order.
                let keys: Vec<String> = hours.keys().cloned().collect();
                let n = keys.len();
                (Just(hours), prop::sample::subsequence(keys, 0..=n))
            }),
        prop::option::of(0.5f64..400.0),
        prop::option::of(prop::sample::select(choices("job.cadence"))),
    )
        .prop_map(|((hours, measured), deadline, cadence)| {
            json!({"hours": hours, "measured": measured, "deadline_days": deadline,
                   "cadence": cadence})
        });
    let proposal = prop::option::of(prop::sample::select(ids));
    (workload, usage, requirements, budget, job, proposal).prop_map(
        |(mut workload, usage, requirements, budget, job, proposal)| {
            // A job spans at most as many machines as it has GPUs.
            workload["nodes"] = json!(workload["nodes"].as_u64().min(usage["gpus"].as_u64()));
            json!({
                "name": "generated",
                "workload": workload,
                "usage": usage,
                "requirements": requirements,
                "budget": {"monthly_cny": budget},
                "job": job,
                "proposal": {"offer": proposal},
            })
        },
    )
}

/// How many example profiles `examples/` holds (tests that decide them all count on it).
#[allow(dead_code)]
pub fn example_count() -> usize {
    std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        })
        .count()
}

/// The example profiles of `examples/`, in name order.
pub fn examples() -> Vec<PathBuf> {
    let files = yaml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"));
    assert!(files.len() > 10, "the examples are there");
    files
}

/// The `.yaml` files of folder `dir`, in name order.
pub fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// The `value:` of the constant fact `id` in the shipped rule file `file`, as a number (a
/// test that reads a policy constant instead of restating it).
pub fn rules_value(file: &str, id: &str) -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    doc["facts"]
        .as_array()
        .and_then(|facts| facts.iter().find(|f| f["id"] == id))
        .and_then(|f| f["value"].as_f64())
        .unwrap_or_else(|| panic!("no numeric fact `{id}` in rules/{file}"))
}

/// Where a policy revision is written (the JSON record's `policy.revision`, the memo's audit
/// line in both languages, an error's help line), masked in snapshots as `sha256:[policy]`.
/// A profile's revision is kept: it changes only with the profile.
pub const REVISION_FILTERS: [(&str, &str); 4] = [
    (
        r#"("revision": ")sha256:[0-9a-f]{16}"#,
        "${1}sha256:[policy]",
    ),
    (
        r"([Pp]olicy revision (?:`|<code>)?)sha256:[0-9a-f]{16}",
        "${1}sha256:[policy]",
    ),
    (
        r"(策略修订 ?(?:`|<code>)?)sha256:[0-9a-f]{16}",
        "${1}sha256:[policy]",
    ),
    (
        r"(\d{4}\.\d{2}\.\d{2}(?:,? revision|，修订) (?:`|<code>)?)sha256:[0-9a-f]{16}",
        "${1}sha256:[policy]",
    ),
];
