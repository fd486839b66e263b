//! `decide validate` on the shipped rules and on copies with one kind of fault each.
//!
//! Data-driven: every `tests/validate/*.yaml` lists edits to a copy of `rules/` (an `append:` to
//! a file the copy does not have creates it); the test runs `decide validate` on the copy and
//! snapshots what a policy author sees, with the exit code.

mod common;

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    edits: Vec<Edit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    file: String,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    with: Option<String>,
    #[serde(default)]
    append: Option<String>,
}

fn validate(rules: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", common::AS_OF, "--rules"])
        .arg(rules)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.replace(&rules.display().to_string(), "[RULES]");
    (out.status.code(), text)
}

/// A copy of the rules with the edits of the case file `path`.
fn edited_copy(path: &Path) -> tempfile::TempDir {
    let case: Case = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rules = common::edited_rules(&[]);
    for edit in &case.edits {
        let file = rules.path().join(&edit.file);
        // A new rule file may be written whole with `append:`.
        let mut text = if edit.replace.is_none() && !file.exists() {
            String::new()
        } else {
            std::fs::read_to_string(&file).unwrap()
        };
        if let Some(from) = &edit.replace {
            assert!(
                text.contains(from.as_str()),
                "{}: {from:?} not found",
                edit.file
            );
            text = text.replacen(from.as_str(), edit.with.as_deref().unwrap_or(""), 1);
        }
        if let Some(more) = &edit.append {
            text.push_str(more);
        }
        std::fs::write(&file, text).unwrap();
    }
    rules
}

#[test]
fn validate_cases() {
    // Each case is a whole `decide validate` (about a minute in a debug build): they run on
    // every core first, then their outputs are compared with the snapshots in order.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validate");
    let mut cases: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    cases.sort();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outputs = std::sync::Mutex::new(std::collections::HashMap::new());
    let workers = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(path) = cases.get(i) else { break };
                    let rules = edited_copy(path);
                    let (code, output) = validate(rules.path());
                    let shown = format!("exit code: {code:?}\n\n{output}");
                    outputs
                        .lock()
                        .unwrap()
                        .insert(std::fs::canonicalize(path).unwrap(), shown);
                }
            });
        }
    });
    let outputs = outputs.into_inner().unwrap();
    insta::glob!("validate/*.yaml", |path| {
        insta::assert_snapshot!(outputs[&std::fs::canonicalize(path).unwrap()]);
    });
}

#[test]
fn the_shipped_rules_are_clean() {
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", common::AS_OF])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.ends_with("Clean: no findings.\n"), "{text}");
    // Also on the first sheet's day, when no container is quoted: the rows for that day and
    // those for a day with containers are each alive at one of the two dates, so neither day
    // reports the other's rows as dead.
    let early = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["validate", "--as-of", "2026-07-01"])
        .output()
        .unwrap();
    let early_text = String::from_utf8_lossy(&early.stdout);
    assert_eq!(early.status.code(), Some(0), "{early_text}");
    assert!(
        early_text.ends_with("Clean: no findings.\n"),
        "{early_text}"
    );
    // The table analysis really ran over the scenario table's inputs.
    assert!(text.contains("Table `scenario` (hit first, 5 rows): 15,180 generated profiles over workload.task, workload.model_params_b, workload.concurrency, requirements.domestic_accelerator, budget.monthly_cny"), "{text}");
}
