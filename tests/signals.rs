//! Signals during `decide batch --output FILE` (SIGINT, SIGTERM, and SIGHUP, SIGQUIT, SIGALRM,
//! SIGUSR1 that would end it as well): the batch stops, its temporary file is removed, the old
//! FILE keeps its bytes, and the exit code is 128 + the signal (130, 143, 129, ...).

#![cfg(unix)]

use crate::common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fleet(path: &Path, count: usize) {
    let mut text = String::new();
    for i in 0..count {
        let task = ["lora_finetune", "full_finetune", "pretrain", "inference"][i % 4];
        let _ = writeln!(
            text,
            r#"{{"name": "p{i}", "workload": {{"task": "{task}", "model_params_b": {}}}, "usage": {{"gpus": {}, "hours_per_gpu_month": {}}}}}"#,
            1 + i % 90,
            1 + i % 16,
            (i * 37) % 745
        );
    }
    std::fs::write(path, text).unwrap();
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".decide-"))
        .collect()
}

fn interrupted_by(signal: &str, code: i32) {
    let input = tempfile::tempdir().unwrap();
    let path = input.path().join("fleet.jsonl");
    fleet(&path, 50_000);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("decisions.jsonl");
    std::fs::write(&file, "the old decisions\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args([
            "batch",
            path.to_str().unwrap(),
            "--output",
            file.to_str().unwrap(),
        ])
        .args(["--as-of", common::AS_OF])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Started: its temporary file is there (it is created once the policy is compiled).
    let start = Instant::now();
    while temp_files(out.path()).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let killed = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(code), "{err}");
    assert!(
        err.contains(&format!("interrupted by SIG{signal}")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the old decisions\n"
    );
    assert_eq!(temp_files(out.path()), Vec::<String>::new());
    assert!(done.stdout.is_empty());
}

#[test]
fn sigint_leaves_the_old_output_whole_and_exits_130() {
    interrupted_by("INT", 130);
}

#[test]
fn sigterm_leaves_the_old_output_whole_and_exits_143() {
    interrupted_by("TERM", 143);
}

#[test]
fn the_other_signals_that_end_a_process_leave_no_temporary_file() {
    for (signal, code) in [("HUP", 129), ("QUIT", 131), ("ALRM", 142), ("USR1", 138)] {
        interrupted_by(signal, code);
    }
}
