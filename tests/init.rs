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

/// Waits for `question` and returns what the terminal showed since the last answer (lines the
/// terminal wrapped joined again), to check which questions were not asked on the way.
fn next_question(p: &mut rexpect::session::PtySession, question: &str) -> String {
    p.exp_string(question).unwrap().replace("\r\n", "")
}

/// A regular expression matching `text` as an 80-column terminal shows it: possibly wrapped
/// anywhere.
fn wrapped(text: &str) -> String {
    text.chars()
        .map(regex_escape)
        .collect::<Vec<_>>()
        .join("(?:\r\n)?")
}

fn regex_escape(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == ' ' || c == '-' {
        c.to_string()
    } else {
        format!("\\{c}")
    }
}

/// Questions only an inference workload is asked.
const INFERENCE_ONLY: &[&str] = &[
    "how much concurrency?",
    "tokens of context per sequence?",
    "sequences served at once?",
];

/// Answers the four yes/no criteria and the custom-operators question with no.
fn no_requirements(p: &mut rexpect::session::PtySession) {
    for question in [
        "dedicated physical machine?",
        "your own kernel",
        "your own network set-up",
        "domestic (Xinchuang) accelerator required?",
        "custom CUDA operators",
    ] {
        p.exp_string(question).unwrap();
        keys(p, &format!("n{ENTER}"));
    }
}

#[test]
fn a_full_fine_tune_is_not_asked_the_inference_questions_and_gets_a_profile_and_a_memo() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pilot.yaml");
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, &format!("Pilot 7B full{ENTER}"));
    p.exp_string("What will the GPUs do?").unwrap();
    keys(&mut p, &format!("Full{ENTER}")); // type to filter, enter to pick
    p.exp_string("How large is the model").unwrap();
    keys(&mut p, &format!("seven{ENTER}")); // refused as typed...
    p.exp_string("is not a number").unwrap();
    keys(&mut p, &"\u{7f}".repeat(5));
    keys(&mut p, &format!("200000{ENTER}")); // above the schema's bound: refused as typed...
    p.exp_string("must be at most 100000").unwrap();
    keys(&mut p, &"\u{7f}".repeat(6));
    keys(&mut p, &format!("7{ENTER}")); // ...then a valid answer
    p.exp_string("How is one job split across GPUs?").unwrap();
    keys(&mut p, &format!(" {ENTER}")); // space picks the first: data parallel
    p.exp_string("How many machines does one training job span?")
        .unwrap();
    keys(&mut p, ENTER); // default 1
    let shown = next_question(&mut p, "how many tokens, in billions?");
    for question in INFERENCE_ONLY {
        assert!(!shown.contains(question), "asked {question:?}:\n{shown}");
    }
    keys(&mut p, &format!("2{ENTER}"));
    let shown = next_question(&mut p, "How many GPUs are kept busy at once?");
    for question in INFERENCE_ONLY {
        assert!(!shown.contains(question), "asked {question:?}:\n{shown}");
    }
    keys(&mut p, &format!("8{ENTER}"));
    p.exp_string("How many hours a month").unwrap();
    keys(&mut p, &format!("800{ENTER}"));
    p.exp_string("must be at most 744").unwrap();
    keys(&mut p, "\u{7f}\u{7f}\u{7f}");
    keys(&mut p, &format!("600{ENTER}"));
    p.exp_string("For how many months?").unwrap();
    keys(&mut p, ENTER);
    no_requirements(&mut p);
    p.exp_string("Monthly budget ceiling").unwrap();
    keys(&mut p, ENTER);
    p.exp_string("one job to cost").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    answer_job_hours(&mut p);
    // Measured: a choice among the two offers given hours; space picks the first.
    p.exp_string("Which of those hours were measured").unwrap();
    keys(&mut p, &format!(" {ENTER}"));
    p.exp_string("within a number of days?").unwrap();
    keys(&mut p, ENTER); // no deadline
    p.exp_string("delivered once, or run again every week?")
        .unwrap();
    keys(&mut p, ENTER); // none
    p.exp_string("already considering an offer?").unwrap();
    keys(&mut p, ENTER); // none
    p.exp_string("name: Pilot 7B full").unwrap();
    p.exp_string("Write this profile?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("Wrote ").unwrap();
    p.exp_string("Decide it now?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("# GPU procurement memo: Pilot 7B full")
        .unwrap();
    p.exp_eof().unwrap();

    // The file is a profile `decide` accepts, with the answers in it and no inference fields.
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
    assert_eq!(record["profile"], "Pilot 7B full");
    let profile: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(profile["workload"]["task"], "full_finetune", "{text}");
    assert_eq!(profile["workload"]["tokens_b"], 2, "{text}");
    assert_eq!(profile["workload"]["parallelism"][0], "data", "{text}");
    assert_eq!(profile["usage"]["hours_per_gpu_month"], 600, "{text}");
    for field in ["concurrency", "context_tokens", "concurrent_sequences"] {
        assert!(profile["workload"].get(field).is_none(), "{text}");
    }
    assert_eq!(
        profile["job"]["hours"],
        serde_json::json!({"rtx4090-x8-sichuan2": 300, "h100-x8-ningxia1": 120}),
        "{text}"
    );
    assert_eq!(
        profile["job"]["measured"],
        serde_json::json!(["rtx4090-x8-sichuan2"]),
        "{text}"
    );
}

#[test]
fn an_inference_workload_is_asked_the_inference_questions_and_not_the_training_or_job_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bot.yaml");
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, &format!("Support bot 13B{ENTER}"));
    p.exp_string("What will the GPUs do?").unwrap();
    keys(&mut p, &format!("Inference{ENTER}"));
    p.exp_string("How large is the model").unwrap();
    keys(&mut p, &format!("13{ENTER}"));
    p.exp_string("How is one job split across GPUs?").unwrap();
    keys(&mut p, ENTER); // none: replicas
    // Serving is asked about machines of replicas, not machines one job spans.
    p.exp_string("On how many machines do the replicas run")
        .unwrap();
    keys(&mut p, ENTER);
    p.exp_string("For inference: how much concurrency?")
        .unwrap();
    keys(&mut p, &format!("High{ENTER}"));
    p.exp_string("tokens of context per sequence?").unwrap();
    keys(&mut p, &format!("8192{ENTER}"));
    p.exp_string("sequences served at once?").unwrap();
    keys(&mut p, &format!("32{ENTER}"));
    let shown = next_question(&mut p, "How many GPUs are kept busy at once?");
    assert!(!shown.contains("how many tokens, in billions?"), "{shown}");
    keys(&mut p, &format!("2{ENTER}"));
    p.exp_string("How many hours a month").unwrap();
    keys(&mut p, &format!("300{ENTER}"));
    p.exp_string("For how many months?").unwrap();
    keys(&mut p, ENTER);
    no_requirements(&mut p);
    p.exp_string("Monthly budget ceiling").unwrap();
    keys(&mut p, ENTER);
    p.exp_string("one job to cost").unwrap();
    keys(&mut p, &format!("n{ENTER}"));
    // No job: its measured hours, deadline and cadence are not asked.
    let shown = next_question(&mut p, "already considering an offer?");
    for question in [
        "Which of those hours were measured",
        "within a number of days?",
        "delivered once, or run again every week?",
    ] {
        assert!(!shown.contains(question), "asked {question:?}:\n{shown}");
    }
    keys(&mut p, ENTER); // none
    p.exp_string("Write this profile?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("Decide it now?").unwrap();
    keys(&mut p, &format!("n{ENTER}"));
    p.exp_eof().unwrap();

    let text = std::fs::read_to_string(&file).unwrap();
    let profile: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(profile["workload"]["task"], "inference", "{text}");
    assert_eq!(profile["workload"]["concurrency"], "high", "{text}");
    assert_eq!(profile["workload"]["context_tokens"], 8192, "{text}");
    assert_eq!(profile["workload"]["concurrent_sequences"], 32, "{text}");
    assert!(profile["workload"].get("tokens_b").is_none(), "{text}");
    assert!(profile.get("job").is_none(), "{text}");
    let out = common::run(&[file.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(0), "{text}");
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
    keys(&mut p, "\u{3}"); // Ctrl-C: interrupted, nothing written
    p.exp_string("interrupted: no profile was written").unwrap();
    p.exp_eof().unwrap();
    assert!(!file.exists());
}

/// The exit status of a finished session.
fn exit_code(p: &rexpect::session::PtySession) -> Option<i32> {
    match p.process.wait().unwrap() {
        rexpect::process::wait::WaitStatus::Exited(_, code) => Some(code),
        _ => None,
    }
}

#[test]
fn ctrl_c_exits_130_and_esc_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    // Ctrl-C at the first question: 130, as a shell expects of an interrupted command.
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, "\u{3}");
    p.exp_string("interrupted: no profile was written").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), Some(130));
    assert!(!file.exists());
    // Esc cancels: a usage ending, 2.
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, "\u{1b}");
    p.exp_string("cancelled: no profile was written").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), Some(2));
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

/// Answers one hours question per catalog offer, in catalog order: hours on two of them, after
/// a number above the bound is refused as it is typed.
fn answer_job_hours(p: &mut rexpect::session::PtySession) {
    // One number per catalog offer, in catalog order: hours on two of them.
    for (offer, hours) in [
        ("rtx4090-x8-sichuan2", "300"),
        ("rtx5090-x8-anhui1", ""),
        ("ascend910b-x8-huawei", ""),
        ("ascend910b-x8-sichuan1", ""),
        ("h100-x8-ningxia1", "120"),
        ("rtx4090-container", ""),
    ] {
        p.exp_regex(&wrapped(&format!("({offer})?"))).unwrap();
        if offer == "rtx4090-x8-sichuan2" {
            // Above the ten years of hours a job may take: refused as typed, with the bound.
            keys(p, &format!("87601{ENTER}"));
            p.exp_string("must be at most 87600").unwrap();
            keys(p, &"\u{7f}".repeat(5));
        }
        keys(p, &format!("{hours}{ENTER}"));
    }
}
