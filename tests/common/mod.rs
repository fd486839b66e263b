//! Helpers shared by the integration tests: the embedded graph, profiles from text, and
//! rules folders copied from `rules/` with edits.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use decide::{Evaluation, Graph, Policy, Source};

/// The date every snapshot is taken at: the day the catalog's prices were listed.
pub const AS_OF: &str = "2026-09-04";

pub fn as_of() -> jiff::civil::Date {
    AS_OF.parse().unwrap()
}

pub fn graph() -> Graph {
    Graph::compile(Policy::embedded().expect("embedded rules load"))
        .expect("embedded rules compile")
}

/// Decides a profile given as YAML text with the embedded policy.
pub fn decide_text(graph: &Graph, yaml: &str) -> decide::Result<Evaluation> {
    let source = Source::new("profile.yaml", yaml);
    decide::decide(graph, &source, as_of()).map(|(_, e)| e)
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

/// Loads and compiles a rules folder, returning the rendered error on failure.
pub fn compile_dir(dir: &Path) -> Result<Graph, String> {
    Policy::from_dir(dir)
        .and_then(Graph::compile)
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
