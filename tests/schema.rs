//! The committed `schema/*.schema.json` match the types, `decide schema` prints them, and every
//! example and rule file points the YAML language server at its schema.
//!
//! Regenerate with `DECIDE_WRITE_SCHEMA=1 cargo test --test schema`.

use crate::common;

use std::path::{Path, PathBuf};

use decide_tools::schema::{self, Draft};

const PROFILE_LINE: &str = "# yaml-language-server: $schema=../schema/profile.schema.json";
const RULES_LINE: &str = "# yaml-language-server: $schema=../schema/rules.schema.json";
const CASES_LINE: &str = "# yaml-language-server: $schema=../../schema/cases.schema.json";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Compares `schema/<name>` with `fresh`, first rewriting it when `DECIDE_WRITE_SCHEMA` is set,
/// and returns the committed schema.
fn check_committed(name: &str, fresh: &serde_json::Value) -> serde_json::Value {
    let path = root().join("schema").join(name);
    let fresh = schema::to_text(fresh);
    if std::env::var_os("DECIDE_WRITE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "schema/{name} is out of date; run DECIDE_WRITE_SCHEMA=1 cargo test --test schema"
    );
    serde_json::from_str(&committed).unwrap()
}

fn decide_schema(args: &[&str]) -> String {
    let mut all = vec!["schema"];
    all.extend_from_slice(args);
    common::run_ok(&all)
}

/// The `*.yaml` files of a project folder, sorted.
fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{dir}/ has no YAML files");
    files
}

#[test]
fn committed_profile_schema_is_current() {
    let schema = check_committed("profile.schema.json", &schema::profile(Draft::Draft7));
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(
        schema["$id"],
        "https://decide.invalid/schema/profile.schema.json"
    );
    assert_eq!(
        schema["required"],
        serde_json::json!(["name", "workload", "usage"])
    );
    assert_eq!(schema, decide_engine::profile::json_schema());
}

#[test]
fn committed_rules_schema_is_current() {
    let schema = check_committed("rules.schema.json", &schema::rules(Draft::Draft7));
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(
        schema["$id"],
        "https://decide.invalid/schema/rules.schema.json"
    );
    assert_eq!(schema["title"], "decide rule file");
    assert_eq!(schema["additionalProperties"], false);
    let sections: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for section in [
        "policy",
        "outputs",
        "offer_fields",
        "offers",
        "facts",
        "criteria",
        "tables",
        "selects",
        "warnings",
        "checklist",
    ] {
        assert!(
            sections.contains(&section),
            "no `{section}` in {sections:?}"
        );
    }
}

#[test]
fn committed_cases_schema_is_current() {
    let schema = check_committed("cases.schema.json", &schema::cases(Draft::Draft7));
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["title"], "decide policy test cases");
    assert_eq!(schema["required"], serde_json::json!(["cases"]));
}

#[test]
fn committed_quote_sheet_schema_is_current() {
    let schema = check_committed(
        "quote-sheet.schema.json",
        &schema::quote_sheet(Draft::Draft7),
    );
    assert_eq!(schema["title"], "decide quote sheet row");
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    for column in [
        "offer",
        "vendor",
        "unit",
        "discounted_price",
        "currency",
        "valid_from",
        "source",
    ] {
        assert!(required.contains(&column), "{column} in {required:?}");
    }
    assert_eq!(decide_schema(&["quotes"]), schema::to_text(&schema));
}

#[test]
fn draft_2020_12_uses_its_meta_schema_and_defs() {
    for (what, fresh) in [
        ("profile", schema::profile(Draft::Draft2020_12)),
        ("rules", schema::rules(Draft::Draft2020_12)),
        ("cases", schema::cases(Draft::Draft2020_12)),
    ] {
        assert_eq!(
            fresh["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{what}"
        );
        assert!(
            fresh.get("$defs").is_some_and(serde_json::Value::is_object),
            "{what}"
        );
        assert!(fresh.get("definitions").is_none(), "{what}");
        let text = fresh.to_string();
        assert!(text.contains("\"#/$defs/"), "{what}");
        assert!(!text.contains("\"#/definitions/"), "{what}");
        let printed = decide_schema(&[what, "--draft", "2020-12"]);
        assert_eq!(printed, schema::to_text(&fresh), "{what}");
    }
}

#[test]
fn decide_schema_prints_the_committed_files_byte_for_byte() {
    for what in ["profile", "rules", "cases"] {
        let committed =
            std::fs::read_to_string(root().join(format!("schema/{what}.schema.json"))).unwrap();
        assert_eq!(decide_schema(&[what]), committed, "decide schema {what}");
        assert_eq!(
            decide_schema(&[what, "--draft", "7"]),
            committed,
            "decide schema {what} --draft 7"
        );
    }
}

#[test]
fn every_example_and_rule_file_names_its_schema_on_the_first_line() {
    for (dir, line) in [
        ("examples", PROFILE_LINE),
        ("rules", RULES_LINE),
        ("rules/tests", CASES_LINE),
    ] {
        for path in yaml_files(dir) {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                text.lines().next(),
                Some(line),
                "{} must start with `{line}`",
                path.display()
            );
        }
    }
}
