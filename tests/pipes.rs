//! A reader that goes away (`decide ... | head`) ends the run quietly: no panic (exit 101), no
//! message, and the exit code the run had: 0 for output cut short, 1 for an error whose message
//! could not be written.

use crate::common;

use std::io::Read;
use std::process::{Child, Command, Stdio};

/// The write end of a pipe whose read end is already closed: the first write fails.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

fn spawn(args: &[&str], stdout: Stdio, stderr: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Runs `args` with standard output closed before the first write; standard error is kept.
fn stdout_closed(args: &[&str]) -> (Option<i32>, String) {
    let out = spawn(args, closed_pipe(), Stdio::piped())
        .wait_with_output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `args` with both streams into one pipe, reads `n` bytes of it and closes it, as
/// `decide ... 2>&1 | head -c N` does.
fn read_then_close(args: &[&str], n: usize) -> Option<i32> {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = spawn(
        args,
        Stdio::from(writer.try_clone().unwrap()),
        Stdio::from(writer),
    );
    let mut first = vec![0; n];
    reader.read_exact(&mut first).unwrap();
    drop(reader);
    child.wait().unwrap().code()
}

#[test]
fn a_memo_to_a_closed_pipe_ends_quietly() {
    let (code, err) = stdout_closed(&["examples/lora-7b-4090.yaml", "--as-of", common::AS_OF]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    let code = read_then_close(&["examples/pretrain-70b-job.yaml", "--trace"], 5);
    assert_eq!(code, Some(0));
}

#[test]
fn a_batch_to_a_closed_pipe_ends_quietly() {
    let args = [
        "batch",
        "examples",
        "--format",
        "json",
        "--as-of",
        common::AS_OF,
    ];
    let (code, err) = stdout_closed(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // No summary: the run was cut short, so it would count profiles never written.
    assert!(!err.contains("profiles:"), "{err}");
    let traced = [
        "batch",
        "examples",
        "--format",
        "json",
        "--trace",
        "--as-of",
        common::AS_OF,
    ];
    assert_eq!(read_then_close(&traced, 100), Some(0));
}

#[test]
fn a_batch_whose_error_stream_is_closed_stops_with_exit_1() {
    // A bad profile's message cannot be written: the run stops, failed.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "name: [\n").unwrap();
    let args = [
        "batch",
        "examples",
        bad.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
    ];
    let out = spawn(&args, Stdio::null(), closed_pipe())
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn help_to_a_closed_pipe_ends_quietly() {
    let (code, err) = stdout_closed(&["--help"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(read_then_close(&["batch", "--help"], 5), Some(0));
}

#[test]
fn an_error_to_a_closed_pipe_keeps_its_exit_code() {
    let out = spawn(&["no-such-profile.yaml"], Stdio::piped(), closed_pipe())
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let out = spawn(&["--no-such-flag"], Stdio::piped(), closed_pipe())
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
