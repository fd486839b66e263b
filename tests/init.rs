//! `decide init` walked end to end through a pseudo-terminal, answering as a person would;
//! and refused without a terminal.

mod common;

use std::time::Duration;

use rexpect::session::spawn_command;

const ENTER: &str = "\r";

/// Types `text` at the terminal (sent at once, like a person's keystrokes reaching the program).
fn keys(p: &mut rexpect::session::PtySession, text: &str) {
    p.send(text).unwrap();
    p.flush().unwrap();
}

/// rexpect reads the terminal byte by byte as Latin-1; match UTF-8 text the same way.
fn as_read(text: &str) -> String {
    text.bytes().map(char::from).collect()
}

fn session(args: &[&str]) -> rexpect::session::PtySession {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_decide"));
    command.arg("init").args(args).env("NO_COLOR", "1");
    spawn_command(command, Some(Duration::from_secs(20).as_millis() as u64)).unwrap()
}

#[test]
fn a_person_answers_the_questionnaire_and_gets_a_profile_and_a_memo() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pilot.yaml");
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, &format!("Pilot 7B LoRA{ENTER}"));
    p.exp_string("What will the GPUs do?").unwrap();
    keys(&mut p, &format!("LoRA{ENTER}")); // type to filter, enter to pick
    p.exp_string("How large is the model").unwrap();
    keys(&mut p, &format!("seven{ENTER}")); // refused as typed...
    p.exp_string("is not a number").unwrap();
    keys(&mut p, &"\u{7f}".repeat(5));
    keys(&mut p, &format!("7{ENTER}")); // ...then a valid answer
    p.exp_string("How is one job split across GPUs?").unwrap();
    keys(&mut p, &format!(" {ENTER}")); // space picks the first: data parallel
    p.exp_string("How many machines does one job span?")
        .unwrap();
    keys(&mut p, ENTER); // default 1
    p.exp_string("For inference: how much concurrency?")
        .unwrap();
    keys(&mut p, ENTER); // none
    for optional in [
        "how many tokens, in billions?",
        "tokens of context per sequence?",
        "sequences served at once?",
    ] {
        p.exp_string(optional).unwrap();
        keys(&mut p, ENTER); // skipped
    }
    p.exp_string("How many GPUs are kept busy at once?")
        .unwrap();
    keys(&mut p, &format!("8{ENTER}"));
    p.exp_string("How many hours a month").unwrap();
    keys(&mut p, &format!("800{ENTER}"));
    p.exp_string("must be at most 744").unwrap();
    keys(&mut p, "\u{7f}\u{7f}\u{7f}");
    keys(&mut p, &format!("600{ENTER}"));
    p.exp_string("For how many months?").unwrap();
    keys(&mut p, ENTER);
    for question in [
        "dedicated physical machine?",
        "your own kernel",
        "your own network set-up",
        "domestic (Xinchuang) accelerator required?",
        "custom CUDA operators",
    ] {
        p.exp_string(question).unwrap();
        keys(&mut p, &format!("n{ENTER}"));
    }
    p.exp_string("Monthly budget ceiling").unwrap();
    keys(&mut p, ENTER);
    p.exp_string("one job to cost").unwrap();
    keys(&mut p, &format!("n{ENTER}"));
    p.exp_string("within a number of days?").unwrap();
    keys(&mut p, ENTER); // no deadline
    p.exp_string("delivered once, or run again every week?")
        .unwrap();
    keys(&mut p, ENTER); // none
    p.exp_string("already considering an offer?").unwrap();
    keys(&mut p, ENTER); // none
    p.exp_string("name: Pilot 7B LoRA").unwrap();
    p.exp_string("Write this profile?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("Wrote ").unwrap();
    p.exp_string("Decide it now?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("# GPU procurement memo: Pilot 7B LoRA")
        .unwrap();
    p.exp_string(&as_read(
        "Rent bare metal: RTX 4090 24G ×8 (Sichuan zone 2)",
    ))
    .unwrap();
    p.exp_eof().unwrap();

    // The file is a profile `decide` accepts, with the answers in it.
    let text = std::fs::read_to_string(&file).unwrap();
    let out = common::run(&[
        file.to_str().unwrap(),
        "-f",
        "json",
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["profile"], "Pilot 7B LoRA");
    assert_eq!(record["deployment"], "bare_metal");
    assert!(text.contains("hours_per_gpu_month: 600"), "{text}");
    assert!(text.contains("- data"), "{text}");
}

#[test]
fn an_existing_file_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken.yaml");
    std::fs::write(&file, "keep me\n").unwrap();
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("the file already exists").unwrap();
    p.exp_string("--force").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me\n");
}

#[test]
fn questions_come_in_chinese_with_lang_zh() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zh.yaml");
    let mut p = session(&[file.to_str().unwrap(), "--lang", "zh"]);
    p.exp_string(&as_read("这个工作负载叫什么？")).unwrap();
    keys(&mut p, "\u{3}"); // Ctrl-C: cancelled, nothing written
    p.exp_string("cancelled: no profile was written").unwrap();
    p.exp_eof().unwrap();
    assert!(!file.exists());
}

#[test]
fn without_a_terminal_init_is_refused_with_exit_2() {
    let out = common::run(&["init", "x.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a terminal"), "{err}");
    assert!(!std::path::Path::new("x.yaml").exists());
}
