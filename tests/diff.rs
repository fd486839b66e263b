//! `decide diff`: the policy-change review a CI job gates on (exit 0 unchanged, 1 changed,
//! 2 error), shown on a copy of the rules with one price raised.

mod common;

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
    insta::assert_snapshot!(text);
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
