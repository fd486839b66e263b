//! `decide batch`: order kept, a bad profile reported without stopping the rest, stdin, folders,
//! JSON lines and YAML streams, memos into a folder, and records equal to single runs.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn decide(args: &[&str]) -> Output {
    common::run(args)
}

fn profile_json(i: usize, gpus: u32) -> String {
    let task = ["lora_finetune", "full_finetune", "pretrain", "inference"][i % 4];
    format!(
        r#"{{"name": "p{i:04}", "workload": {{"task": "{task}", "model_params_b": {}}}, "usage": {{"gpus": {gpus}, "hours_per_gpu_month": {}}}}}"#,
        1 + i % 90,
        (i * 37) % 745
    )
}

fn names(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["profile"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn json_lines_keep_input_order_and_a_bad_profile_does_not_stop_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    let mut text = String::new();
    for i in 0..300 {
        // Profile 123 is bad (no GPUs); every other one is valid.
        text.push_str(&profile_json(
            i,
            if i == 123 { 0 } else { 1 + (i % 16) as u32 },
        ));
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let out = decide(&["batch", path.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(1));
    let expected: Vec<String> = (0..300)
        .filter(|&i| i != 123)
        .map(|i| format!("p{i:04}"))
        .collect();
    assert_eq!(names(&out.stdout), expected);
    let err = String::from_utf8_lossy(&out.stderr);
    // The bad profile is named by its file and its line in the file (line 124).
    assert!(err.contains("usage.gpus"), "{err}");
    assert!(err.contains("fleet.jsonl:124:"), "{err}");
    assert!(
        err.contains("300 profiles: 299 decided, 1 failed."),
        "{err}"
    );
    assert!(err.contains("By deployment: "), "{err}");
    assert!(err.contains("Total monthly cost: ¥"), "{err}");
}

#[test]
fn a_record_equals_the_single_run_record_with_or_without_trace_and_sensitivity() {
    let single = decide(&[
        "examples/pretrain-70b-job.yaml",
        "--format",
        "json",
        "--trace",
        "--as-of",
        common::AS_OF,
    ]);
    let full: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    let traced = decide(&[
        "batch",
        "examples/pretrain-70b-job.yaml",
        "--trace",
        "--sensitivity",
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(traced.status.code(), Some(0));
    let line: serde_json::Value = serde_json::from_slice(&traced.stdout).unwrap();
    assert_eq!(line, full);
    let lean = decide(&[
        "batch",
        "examples/pretrain-70b-job.yaml",
        "--as-of",
        common::AS_OF,
    ]);
    let mut line: serde_json::Value = serde_json::from_slice(&lean.stdout).unwrap();
    assert!(line.get("trace").is_none());
    // Without `--sensitivity` the record has no `sensitivity` at all (not an empty list, which
    // would say that nothing changes the answer).
    assert!(line.get("sensitivity").is_none());
    assert!(!full["sensitivity"].as_array().unwrap().is_empty());
    line["trace"] = full["trace"].clone();
    line["sensitivity"] = full["sensitivity"].clone();
    assert_eq!(line, full);
}

#[test]
fn folders_and_yaml_streams_and_stdin() {
    // A folder: every example, in file-name order.
    let out = decide(&["batch", "examples", "--as-of", common::AS_OF]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names(&out.stdout).len(), common::example_count());
    assert_eq!(names(&out.stdout)[0], "Startup 13B LoRA on a budget"); // budget-training-4090.yaml

    // A YAML stream on standard input, with a bad document in the middle.
    let stream = "name: a\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 100}\n---\nname: b\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 900}\n---\n# the third\nname: c\nworkload: {task: pretrain, model_params_b: 70}\nusage: {gpus: 8, hours_per_gpu_month: 700}\n";
    let out = batch_stdin(stream);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&out.stdout), ["a", "c"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:7:"), "{err}");
    assert!(err.contains("usage.hours_per_gpu_month"), "{err}");
    assert!(err.contains("3 profiles: 2 decided, 1 failed."), "{err}");
}

#[test]
fn markdown_memos_go_into_a_folder_one_per_profile() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("memos");
    let out = decide(&[
        "batch",
        "examples/lora-7b-4090.yaml",
        "examples/pretrain-70b-job.yaml",
        "--format",
        "md",
        "--out",
        out_dir.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let memo = std::fs::read_to_string(out_dir.join("pretrain-70b-job.md")).unwrap();
    let single = decide(&["examples/pretrain-70b-job.yaml", "--as-of", common::AS_OF]);
    assert_eq!(memo.as_bytes(), single.stdout.as_slice());
    assert!(out_dir.join("lora-7b-4090.md").is_file());

    let out = decide(&["batch", "examples", "--format", "md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs `--out DIR`"));
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("decisions.jsonl");
    let out = decide(&[
        "batch",
        "examples",
        "--output",
        file.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().lines().count(),
        common::example_count()
    );
}

#[test]
fn a_missing_input_stops_before_anything_is_decided() {
    let out = decide(&["batch", "examples/lora-7b-4090.yaml", "no-such.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such.yaml"));
}

/// Two good lines, a bad one, a blank line and a good one, as a JSON-lines fleet file.
const MIXED_JSON_LINES: &str = "{\"name\": \"one\", \"workload\": {\"task\": \"inference\", \"model_params_b\": 7}, \"usage\": {\"gpus\": 1, \"hours_per_gpu_month\": 100}}\n\
{\"name\": \"two\", \"workload\": {\"task\": \"lora_finetune\", \"model_params_b\": 13}, \"usage\": {\"gpus\": 8, \"hours_per_gpu_month\": 600}}\n\
garbage{\n\
\n\
{\"name\": \"four\", \"workload\": {\"task\": \"pretrain\", \"model_params_b\": 70}, \"usage\": {\"gpus\": 8, \"hours_per_gpu_month\": 700}}\n";

fn batch_stdin(input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["batch", "-", "--as-of", common::AS_OF])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn json_lines_are_read_line_by_line_and_a_bad_line_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    std::fs::write(&path, MIXED_JSON_LINES).unwrap();
    let out = decide(&["batch", path.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&out.stdout), ["one", "two", "four"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fleet.jsonl:3:"), "{err}");
    assert!(err.contains("garbage{"), "{err}");
    assert!(err.contains("4 profiles: 3 decided, 1 failed."), "{err}");

    // Standard input is told apart by its first line.
    let out = batch_stdin(MIXED_JSON_LINES);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&out.stdout), ["one", "two", "four"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:3:"), "{err}");
    assert!(err.contains("4 profiles: 3 decided, 1 failed."), "{err}");
}

#[test]
fn records_are_written_before_the_input_ends() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["batch", "-", "--as-of", common::AS_OF])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..3 {
        writeln!(stdin, "{}", profile_json(i, 8)).unwrap();
    }
    stdin.flush().unwrap();
    // Standard input is still open: the first record must come all the same.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .unwrap();
        tx.send(first).unwrap();
    });
    let first = rx.recv_timeout(std::time::Duration::from_secs(60));
    drop(stdin);
    child.wait().unwrap();
    let first = first.expect("no record before the input ended");
    assert!(first.contains("\"p0000\""), "{first}");
}
