//! `decide diff`: the policy-change review a CI job gates on (exit 0 unchanged, 1 changed,
//! 2 error), shown on a copy of the rules with one price raised.

use crate::common;

use std::process::Output;

fn decide(args: &[&str]) -> Output {
    common::run(args)
}

#[test]
fn identical_policies_change_nothing_and_exit_0() {
    let copy = common::edited_rules(&[]);
    let out = decide(&[
        "diff",
        "rules",
        copy.path().to_str().unwrap(),
        "examples",
        "--as-of",
        common::AS_OF,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let n = common::example_count();
    assert!(
        text.contains(&format!(
            "- {n} profiles decided at 2026-09-04: **0 changed**, {n} unchanged."
        )),
        "{text}"
    );
    assert!(text.contains("No decision changed"), "{text}");
    assert!(
        text.contains("Nothing: the two policies have the same catalog"),
        "{text}"
    );
}

#[test]
fn a_raised_4090_price_moves_profiles_to_containers_and_exits_1() {
    // The 4090 box from ¥7,920 to ¥9,500 a month: the break-even line moves from 505 h to
    // 606 h per GPU, so the two 600 h LoRA profiles now rent containers.
    let new = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,9900,9500,CNY",
    )]);
    let out = decide(&[
        "diff",
        "rules",
        new.path().to_str().unwrap(),
        "examples",
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.replace(&new.path().display().to_string(), "[NEW]");
    assert_snapshot!(text);
}

#[test]
fn a_profile_that_cannot_be_decided_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "name: x\nworkload: {task: lora_finetune, model_params_b: -7}\nusage: {gpus: 1, hours_per_gpu_month: 1}\n").unwrap();
    let out = decide(&["diff", "rules", "rules", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workload.model_params_b"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_rules_folder_exits_2() {
    let out = decide(&["diff", "rules", "no-such-rules", "examples"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rules folder not found"));
}

/// Every string in a JSON tree.
fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(m) => m.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[test]
fn json_format_gives_every_value_in_full_where_markdown_cuts() {
    let new = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,9900,9500,CNY",
    )]);
    let args = |format: &'static str| {
        vec![
            "diff".to_owned(),
            "rules".to_owned(),
            new.path().to_str().unwrap().to_owned(),
            "examples".to_owned(),
            "--as-of".to_owned(),
            common::AS_OF.to_owned(),
            "--format".to_owned(),
            format.to_owned(),
        ]
    };
    let run = |format| {
        let a = args(format);
        decide(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let md = run("md");
    let json = run("json");
    assert_eq!(md.status.code(), Some(1));
    assert_eq!(json.status.code(), Some(1), "same exit code as Markdown");
    let md = String::from_utf8(md.stdout).unwrap();
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    // The counts agree with the Markdown summary.
    let (n, changed) = (
        report["profiles_decided"].as_u64().unwrap(),
        report["changed"].as_u64().unwrap(),
    );
    assert_eq!(n, common::example_count() as u64);
    assert!(
        md.contains(&format!("**{changed} changed**, {} unchanged", n - changed)),
        "{md}"
    );
    let profiles = report["profiles"].as_array().unwrap();
    assert_eq!(profiles.len() as u64, n);
    assert_eq!(
        profiles.iter().filter(|p| p["changed"] == true).count() as u64,
        changed
    );
    // Markdown cuts long values; the same figure in JSON is the whole value, a JSON value
    // (not a string), whose start is what Markdown shows.
    assert!(md.contains("- `jobs`: \\[{\"offer\""), "{md}");
    let jobs: Vec<&serde_json::Value> = profiles
        .iter()
        .flat_map(|p| p["other_figures"].as_array().unwrap())
        .filter(|f| f["name"] == "jobs")
        .collect();
    assert!(!jobs.is_empty(), "{report:#}");
    for f in &jobs {
        let full = serde_json::to_string(&f["new"]).unwrap();
        assert!(f["new"].is_array(), "{f}");
        assert!(full.chars().count() > 80, "{full}");
        assert!(
            full.starts_with("[{\"offer\":\"rtx4090-x8-sichuan2\""),
            "{full}"
        );
    }
    // Nothing in the JSON is cut.
    let mut all = Vec::new();
    strings(&report, &mut all);
    assert!(all.iter().all(|s| !s.ends_with("...")), "a cut value");
    // The rule change is there as text.
    let rules = report["rule_changes"].as_array().unwrap();
    assert!(
        rules.iter().any(|r| r
            .as_str()
            .unwrap()
            .contains("`discounted_price` 7920 → 9500")),
        "{rules:?}"
    );
}
