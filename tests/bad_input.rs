//! The bad-input suite: every class of broken profile or rule file gets a message a person can
//! act on (file, line and column where there is one, the field, what would be valid), exit 1,
//! and nothing on standard output. Never a panic, never a hang.
//!
//! Data-driven: each file in `tests/bad-input/profile/` is decided as a profile; each file in
//! `tests/bad-input/rules/` is added to a copy of the shipped rules (as `zz-bad.yaml`), and each
//! file in `tests/bad-input/quotes/` to its quote sheets (`quotes/`, under its own name); an
//! example is decided with them. The error text is snapshotted. Cases that need no file (a
//! missing file, a directory, a file over the size limit) are tests below.

mod common;

use std::path::Path;
use std::process::Output;

/// Exit code and standard error, with the temporary rules folder's path made stable.
fn shown(out: &Output, rules: Option<&Path>) -> String {
    assert!(
        out.stdout.is_empty(),
        "a failed run must print nothing on stdout"
    );
    let mut err = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Some(rules) = rules {
        err = err.replace(&rules.display().to_string(), "[RULES]");
    }
    assert!(!err.contains("panicked"), "{err}");
    format!("exit code: {:?}\n\n{err}", out.status.code())
}

#[test]
fn bad_profiles() {
    insta::glob!("bad-input/profile/*", |path| {
        let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let out = common::run(&[rel.to_str().unwrap(), "--as-of", common::AS_OF]);
        assert_eq!(out.status.code(), Some(1), "{}", rel.display());
        insta::assert_snapshot!(shown(&out, None));
    });
}

#[test]
fn bad_rule_files() {
    insta::glob!("bad-input/rules/*", |path| {
        let rules = common::edited_rules(&[]);
        std::fs::copy(path, rules.path().join("zz-bad.yaml")).unwrap();
        let out = common::run(&[
            "examples/lora-7b-4090.yaml",
            "--as-of",
            common::AS_OF,
            "--rules",
            rules.path().to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        insta::assert_snapshot!(shown(&out, Some(rules.path())));
    });
}

/// Each file of `tests/bad-input/quotes/` joins a copy of the shipped rules' quote sheets
/// (under its own name) and an example is decided with them.
#[test]
fn bad_quote_sheets() {
    insta::glob!("bad-input/quotes/*", |path| {
        let rules = common::edited_rules(&[]);
        let target = rules.path().join("quotes").join(path.file_name().unwrap());
        std::fs::copy(path, target).unwrap();
        let out = common::run(&[
            "examples/lora-7b-4090.yaml",
            "--as-of",
            common::AS_OF,
            "--rules",
            rules.path().to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        insta::assert_snapshot!(shown(&out, Some(rules.path())));
    });
}

#[test]
fn a_missing_profile_is_named() {
    let out = common::run(&["examples/no-such-profile.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(err.contains("file not found"), "{err}");
    assert!(err.contains("examples/no-such-profile.yaml"), "{err}");
}

#[test]
fn a_directory_is_not_a_profile() {
    let out = common::run(&["examples"]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(
        err.contains("is a directory, expected a YAML file"),
        "{err}"
    );
}

#[test]
fn files_over_the_size_limit_are_refused_with_the_limit_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let mut text = String::from("name: big\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&big, &text).unwrap();
    let out = common::run(&[big.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(
        err.contains("larger than the limit of 1048576 bytes (1 MiB)"),
        "{err}"
    );

    let rules = common::edited_rules(&[]);
    std::fs::write(rules.path().join("zz-big.yaml"), &text).unwrap();
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(err.contains("zz-big.yaml"), "{err}");
    assert!(err.contains("1 MiB"), "{err}");
}

#[test]
fn a_missing_or_file_rules_folder_is_named() {
    let out = common::run(&["examples/lora-7b-4090.yaml", "--rules", "no-such-rules"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(shown(&out, None).contains("rules folder not found"));
    let out = common::run(&["examples/lora-7b-4090.yaml", "--rules", "README.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(shown(&out, None).contains("--rules expects a folder of YAML files, not a file"));
}
