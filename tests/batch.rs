//! `decide batch`: order kept, a bad profile reported without stopping the rest and recorded in
//! its place, every record's source and line, stdin, folders, JSON lines and YAML streams, memos
//! into a folder, records equal to single runs, the summary's warnings, and progress.

use crate::common;

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

fn records(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Each record's profile name, or `error` for an error record.
fn names(stdout: &[u8]) -> Vec<String> {
    records(stdout)
        .iter()
        .map(|v| match (v["profile"].as_str(), v.get("error")) {
            (Some(name), None) => name.to_owned(),
            (None, Some(_)) => "error".to_owned(),
            _ => panic!("neither a decision nor an error: {v}"),
        })
        .collect()
}

/// Each record's `source` and `line`.
fn places(stdout: &[u8]) -> Vec<(String, u64)> {
    records(stdout)
        .iter()
        .map(|v| {
            let source = v["source"].as_str().unwrap_or_else(|| panic!("{v}"));
            (
                source.to_owned(),
                v["line"].as_u64().unwrap_or_else(|| panic!("{v}")),
            )
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
    // One record per profile, in input order: the bad one has an error record in its place,
    // so that record i is line i + 1 of the input.
    let expected: Vec<String> = (0..300)
        .map(|i| {
            if i == 123 {
                "error".to_owned()
            } else {
                format!("p{i:04}")
            }
        })
        .collect();
    assert_eq!(names(&out.stdout), expected);
    let file = path.display().to_string();
    let lines: Vec<(String, u64)> = (1..=300).map(|n| (file.clone(), n)).collect();
    assert_eq!(places(&out.stdout), lines);
    let failed = &records(&out.stdout)[123];
    assert_eq!(failed["error"]["kind"], "profile", "{failed}");
    assert_eq!(failed["error"]["field"], "usage.gpus", "{failed}");
    assert_eq!(failed["error"]["at"]["file"], file.as_str(), "{failed}");
    assert_eq!(failed["error"]["at"]["line"], 124, "{failed}");
    let err = String::from_utf8_lossy(&out.stderr);
    // The error record's message is the first line of the report on stderr.
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        err.contains(&format!("error: {message}\n")),
        "{message}\n{err}"
    );
    // The bad profile is named by its file and its line in the file (line 124).
    assert!(err.contains("usage.gpus"), "{err}");
    assert!(err.contains("fleet.jsonl:124:"), "{err}");
    assert!(
        err.contains("300 profiles: 299 decided, 1 failed."),
        "{err}"
    );
    assert!(err.contains("By deployment: "), "{err}");
    assert!(err.contains("Monthly cost a profile: median ¥"), "{err}");
    assert!(
        err.contains(" for the 299 together, where they are one fleet's)."),
        "{err}"
    );
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
    assert_eq!(
        without_place(line, "examples/pretrain-70b-job.yaml", 1),
        full
    );
    let lean = decide(&[
        "batch",
        "examples/pretrain-70b-job.yaml",
        "--as-of",
        common::AS_OF,
    ]);
    let line: serde_json::Value = serde_json::from_slice(&lean.stdout).unwrap();
    let mut line = without_place(line, "examples/pretrain-70b-job.yaml", 1);
    assert!(line.get("trace").is_none());
    // Without `--sensitivity` the record has no `sensitivity` at all (not an empty list, which
    // would say that nothing changes the answer).
    assert!(line.get("sensitivity").is_none());
    assert!(!full["sensitivity"].as_array().unwrap().is_empty());
    line["trace"] = full["trace"].clone();
    line["sensitivity"] = full["sensitivity"].clone();
    assert_eq!(line, full);
}

/// A batch record without the `source` and `line` it starts with, after checking them: the
/// record `decide --format json` writes for the same profile.
fn without_place(record: serde_json::Value, source: &str, line: u64) -> serde_json::Value {
    let serde_json::Value::Object(mut fields) = record else {
        panic!("not an object: {record}");
    };
    let first: Vec<&String> = fields.keys().take(3).collect();
    assert_eq!(first, ["source", "line", "profile"]);
    assert_eq!(fields.shift_remove("source"), Some(source.into()));
    assert_eq!(fields.shift_remove("line"), Some(line.into()));
    serde_json::Value::Object(fields)
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
    // A file of one profile: the file's path as the command line led to it, line 1.
    let files: Vec<(String, u64)> = common::examples()
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            (format!("examples/{name}"), 1)
        })
        .collect();
    assert_eq!(places(&out.stdout), files);

    // A YAML stream on standard input, with a bad document in the middle.
    let stream = "name: a\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 100}\n---\nname: b\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 900}\n---\n# the third\nname: c\nworkload: {task: pretrain, model_params_b: 70}\nusage: {gpus: 8, hours_per_gpu_month: 700}\n";
    let out = batch_stdin(stream);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&out.stdout), ["a", "error", "c"]);
    // Each document at the line after its `---`.
    let stdin = |line| ("<stdin>".to_owned(), line);
    assert_eq!(places(&out.stdout), [stdin(1), stdin(5), stdin(9)]);
    let failed = &records(&out.stdout)[1]["error"];
    assert_eq!(failed["field"], "usage.hours_per_gpu_month", "{failed}");
    assert_eq!(failed["at"]["line"], 7, "{failed}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:7:"), "{err}");
    assert!(err.contains("usage.hours_per_gpu_month"), "{err}");
    assert!(err.contains("3 profiles: 2 decided, 1 failed."), "{err}");

    // A document with two faults: its record lists both, at the stream's lines.
    let stream = "name: a\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 100}\n---\nname: b\nworkload: {task: inference, model_params_b: 0}\nusage: {gpus: 1, hours_per_gpu_month: 900}\n";
    let out = batch_stdin(stream);
    let record = &records(&out.stdout)[1];
    let lines: Vec<(&str, u64)> = record["errors"]
        .as_array()
        .expect("every fault of the document")
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap(),
                e["at"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("workload.model_params_b", 6),
            ("usage.hours_per_gpu_month", 7)
        ],
        "{record}"
    );
    assert_eq!(record["error"], record["errors"][0]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>: 2 faults, each shown above"), "{err}");
}

#[test]
fn html_memos_go_into_a_folder_one_per_profile_as_the_single_command_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("pages");
    let out = decide(&[
        "batch",
        "examples/lora-7b-4090.yaml",
        "examples/pretrain-70b-job.yaml",
        "--format",
        "html",
        "--out",
        out_dir.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
        "--lang",
        "zh",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(out_dir.join("pretrain-70b-job.html")).unwrap();
    let single = decide(&[
        "examples/pretrain-70b-job.yaml",
        "--format",
        "html",
        "--lang",
        "zh",
        "--as-of",
        common::AS_OF,
    ]);
    assert_eq!(page.as_bytes(), single.stdout.as_slice());
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(out_dir.join("lora-7b-4090.html").is_file());
    assert!(!out_dir.join("lora-7b-4090.md").exists());

    let out = decide(&["batch", "examples", "--format", "html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`--format html` writes one memo"));
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
fn a_memo_that_cannot_be_written_is_reported_and_the_rest_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("memos");
    // A folder where one memo would go.
    std::fs::create_dir_all(out_dir.join("lora-7b-4090.md")).unwrap();
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
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("lora-7b-4090.md"), "{err}");
    assert!(err.contains("it is a folder"), "{err}");
    assert!(!err.contains("--output"), "{err}");
    assert!(err.contains("1 memos could not be written"), "{err}");
    assert!(err.contains("2 profiles: 2 decided, 0 failed."), "{err}");
    assert!(out_dir.join("pretrain-70b-job.md").is_file());
}

#[test]
fn flags_for_another_format_and_an_output_that_is_an_input_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = decide(&["batch", "examples", "--out", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`--out DIR` is for memos"));
    let file = dir.path().join("x.jsonl");
    let f = file.to_str().unwrap();
    let out = decide(&[
        "batch", "examples", "--format", "md", "--out", d, "--output", f,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`--output FILE` is for `--format json`")
    );
    assert!(!file.exists());
    // The JSON lines written over one of the profiles read.
    let fleet = dir.path().join("fleet.jsonl");
    std::fs::write(&fleet, format!("{}\n", profile_json(1, 1))).unwrap();
    let before = std::fs::read(&fleet).unwrap();
    let out = decide(&[
        "batch",
        fleet.to_str().unwrap(),
        "--output",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the output is one of the inputs"));
    assert_eq!(std::fs::read(&fleet).unwrap(), before);
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
    batch_stdin_with(input, &[])
}

/// `decide batch -` with `args`, given `input` on standard input.
fn batch_stdin_with(input: &str, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["batch", "-", "--as-of", common::AS_OF])
        .args(args)
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
    assert_eq!(names(&out.stdout), ["one", "two", "error", "four"]);
    // The blank line 4 is no profile: the fourth record is line 5's.
    let file = path.display().to_string();
    let lines: Vec<(String, u64)> = [1, 2, 3, 5].map(|n| (file.clone(), n)).to_vec();
    assert_eq!(places(&out.stdout), lines);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fleet.jsonl:3:"), "{err}");
    assert!(err.contains("garbage{"), "{err}");
    assert!(err.contains("4 profiles: 3 decided, 1 failed."), "{err}");

    // Standard input is told apart by its first line.
    let out = batch_stdin(MIXED_JSON_LINES);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&out.stdout), ["one", "two", "error", "four"]);
    let stdin: Vec<(String, u64)> = [1, 2, 3, 5].map(|n| ("<stdin>".to_owned(), n)).to_vec();
    assert_eq!(places(&out.stdout), stdin);
    assert_eq!(
        records(&out.stdout)[2],
        serde_json::json!({
            "source": "<stdin>",
            "line": 3,
            "error": {
                "kind": "profile",
                "message": "expected a mapping (key: value lines)",
                "at": {"file": "<stdin>", "line": 3, "column": 1}
            }
        })
    );
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

/// The embedded graph and memo, compiled once for the in-process tests below.
static GRAPH: std::sync::LazyLock<decide_engine::Graph> = std::sync::LazyLock::new(common::graph);
static MEMO: std::sync::LazyLock<decide_tools::Memo> =
    std::sync::LazyLock::new(|| decide_tools::Memo::embedded().unwrap());

/// Each profile of a JSON-lines text decided as `decide batch` decides it (trace and
/// sensitivity kept): its record, or its error as shown.
fn decide_lines(text: &str) -> Vec<Result<serde_json::Value, String>> {
    let options = decide_tools::batch::Options {
        format: decide_tools::Format::Json,
        as_of: common::as_of(),
        trace: true,
        sensitivity: true,
    };
    decide_tools::batch::split(&decide_engine::Source::new("fleet.jsonl", text))
        .into_iter()
        .map(|item| {
            let item = item.map_err(|unread| unread.error.render())?;
            assert_eq!(item.syntax, decide_engine::Syntax::Json);
            decide_tools::batch::decide_one(&GRAPH, &MEMO, &item, options)
                .map(|d| serde_json::from_str(&d.text).unwrap())
                .map_err(|e| e.render())
        })
        .collect()
}

/// A YAML profile as one line of compact JSON.
fn json_line(yaml: &str) -> String {
    let value: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
    value.to_string()
}

#[test]
fn a_json_line_is_decided_as_the_same_profile_in_yaml_with_the_same_revision() {
    let mut paths: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    let yamls: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let lines: String = yamls.iter().map(|y| json_line(y) + "\n").collect();
    for line in lines.lines() {
        // Read by serde_json itself, not by the YAML reader `from_json` falls back to.
        let direct = serde_json::from_str::<decide_engine::Profile>(line);
        assert!(direct.is_ok(), "{line}: {:?}", direct.err());
    }
    let records = decide_lines(&lines);
    assert_eq!(records.len(), paths.len());
    for (i, ((path, yaml), record)) in paths.iter().zip(&yamls).zip(records).enumerate() {
        let source = decide_engine::Source::new(path.display().to_string(), yaml.as_str());
        let (_, single) =
            decide_tools::decide_with(&GRAPH, &source, common::as_of(), decide_tools::Detail::FULL)
                .unwrap();
        let single = serde_json::to_value(&single.decision).unwrap();
        let record = record.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let record = without_place(record, "fleet.jsonl", i as u64 + 1);
        assert!(
            record["audit"]["profile_revision"]
                .as_str()
                .is_some_and(|r| r.starts_with("sha256:")),
            "{record}"
        );
        assert_eq!(record, single, "{}", path.display());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any valid profile written as a JSON line (full-precision numbers included) reads to the
    /// profile its YAML reading gives: the same revision, and the revision of its JSON value.
    #[test]
    fn a_json_line_reads_to_the_profile_its_yaml_reading_gives(
        value in common::profile_strategy(&GRAPH)
    ) {
        let source = decide_engine::Source::new("fleet.jsonl", value.to_string());
        // Read by serde_json itself, not by the YAML reader `from_json` falls back to.
        let direct = serde_json::from_str::<decide_engine::Profile>(&source.text);
        proptest::prop_assert!(direct.is_ok(), "{:?}", direct.err());
        let json = decide_engine::Profile::from_json(&source).unwrap();
        let yaml = decide_engine::Profile::from_source(&source).unwrap();
        let revision = json.revision().unwrap();
        proptest::prop_assert_eq!(&revision, &yaml.revision().unwrap());
        let as_value = serde_json::to_value(&yaml).unwrap();
        proptest::prop_assert_eq!(&revision, &decide_engine::revision::value(&as_value));
    }
}

/// Lines that each break one rule of the profile format, after a good one.
const BAD_JSON_LINES: &[(&str, &str)] = &[
    (
        r#"{"name": "wrong type", "workload": {"task": "inference", "model_params_b": 7}, "usage": {"gpus": "eight", "hours_per_gpu_month": 100}}"#,
        "\"eight\"",
    ),
    (
        r#"{"name": "unknown field", "workload": {"task": "inference", "model_params_b": 7}, "usage": {"gpus": 1, "hours_per_gpu_mnth": 100}}"#,
        "\"hours_per_gpu_mnth\"",
    ),
    (
        r#"{"name": "bad enum", "workload": {"task": "inferense", "model_params_b": 7}, "usage": {"gpus": 1, "hours_per_gpu_month": 100}}"#,
        "\"inferense\"",
    ),
    (
        r#"{"name": "over the bound", "workload": {"task": "inference", "model_params_b": 7}, "usage": {"gpus": 1, "hours_per_gpu_month": 745}}"#,
        "745",
    ),
    (
        r#"{"name": "missing usage", "workload": {"task": "inference", "model_params_b": 7}}"#,
        // Where the YAML reader says a mapping's missing field is (its last key).
        "\"workload\"",
    ),
    (
        r#"{"name": "unknown offer", "workload": {"task": "pretrain", "model_params_b": 70}, "usage": {"gpus": 8, "hours_per_gpu_month": 700}, "job": {"hours": {"h100-x8-ningxia": 168}}}"#,
        "\"h100-x8-ningxia\"",
    ),
    (
        r#"{"name": "twice", "workload": {"task": "pretrain", "model_params_b": 70}, "usage": {"gpus": 8, "hours_per_gpu_month": 700}, "job": {"hours": {"h100-x8-ningxia1": 168, "h100-x8-ningxia1": 200}}}"#,
        "\"h100-x8-ningxia1\": 200",
    ),
    (
        r#"{"name": "measured", "workload": {"task": "pretrain", "model_params_b": 70}, "usage": {"gpus": 8, "hours_per_gpu_month": 700}, "job": {"hours": {"h100-x8-ningxia1": 168}, "measured": ["ascend910b-x8-huawei"]}}"#,
        "\"ascend910b-x8-huawei\"",
    ),
];

#[test]
fn a_bad_json_line_is_reported_at_its_line_column_and_field_as_the_same_yaml_would_be() {
    let good = r#"{"name": "good", "workload": {"task": "inference", "model_params_b": 7}, "usage": {"gpus": 1, "hours_per_gpu_month": 100}}"#;
    let mut text = format!("{good}\n\n");
    for (line, _) in BAD_JSON_LINES {
        text.push_str(line);
        text.push('\n');
    }
    let results = decide_lines(&text);
    assert_eq!(results.len(), 1 + BAD_JSON_LINES.len());
    assert!(results[0].is_ok(), "{:?}", results[0]);
    let mut shown = Vec::new();
    for (i, ((line, at), result)) in BAD_JSON_LINES.iter().zip(&results[1..]).enumerate() {
        let err = result.as_ref().expect_err(line);
        // The file's line (a good line and a blank one come first) and the column of the value
        // at fault, in characters from 1.
        let column = line.find(at).unwrap() + 1;
        let place = format!("fleet.jsonl:{}:{column}", i + 3);
        assert!(err.contains(&place), "{place}:\n{err}");
        // A snippet of the line (long lines are cut around the caret), showing the value.
        let snippet = format!("{} | ", i + 3);
        assert!(
            err.contains(&snippet) && err.contains(at),
            "no snippet:\n{err}"
        );
        // Worded exactly as the same profile written as YAML (a flow mapping) is.
        let yaml = decide_engine::Source::new("fleet.jsonl", *line);
        let as_yaml =
            decide_tools::decide_with(&GRAPH, &yaml, common::as_of(), decide_tools::Detail::LEAN)
                .map(|_| ())
                .unwrap_err()
                .starting_at_line(i + 3)
                .render();
        assert_eq!(err, &as_yaml);
        shown.push(err.lines().next().unwrap().to_owned());
    }
    assert_eq!(
        shown,
        [
            "error: usage.gpus: expected a whole number of at least 1 and at most 1000000",
            "error: usage.hours_per_gpu_mnth: unknown field `hours_per_gpu_mnth`, expected one of gpus, hours_per_gpu_month, months",
            "error: workload.task: unknown variant `inferense`, expected one of lora_finetune, qlora_finetune, full_finetune, pretrain, inference",
            "error: usage.hours_per_gpu_month: must be between 0 and 744 hours (a 31-day month), got 745",
            "error: the required field `usage` is missing",
            "error: job.hours: unknown offer id `h100-x8-ningxia`",
            "error: job.hours: the key `h100-x8-ningxia1` is given twice; each key may appear once",
            "error: job.measured: `ascend910b-x8-huawei` has no claimed hours in job.hours",
        ]
    );
}

#[test]
fn a_line_of_yaml_flow_mapping_in_json_lines_is_still_decided() {
    // Not JSON (bare keys), but YAML: read as it always was.
    let line = "{name: bare keys, workload: {task: inference, model_params_b: 7}, usage: {gpus: 1, hours_per_gpu_month: 100}}\n";
    let records = decide_lines(line);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].as_ref().unwrap()["profile"], "bare keys");
}

/// A rule that cannot be written (65,536 decimals: Rust's formatter panics at that precision,
/// and a panic on a worker used to leave the batch waiting for ever) fails every profile with
/// the error at the rule, and the batch ends with its summary. (A warning's condition: the
/// record reads every warning.)
#[test]
fn a_fact_that_cannot_be_written_fails_each_profile_and_the_batch_ends() {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("zz-precision.yaml"),
        "warnings:\n  - id: absurd_precision\n    title: t\n    when: \"(7920 | cny(65536)) == ''\"\n    message: m\n",
    )
    .unwrap();
    let out = decide(&[
        "batch",
        "examples/lora-7b-4090.yaml",
        "examples/mixed-plan-nine-gpus.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`cny` writes 0 to 20 decimals, not 65536"),
        "{err}"
    );
    assert!(err.contains("2 profiles: 0 decided, 2 failed."), "{err}");
    // Each profile has its error record, pointing at the fact in the rule file.
    assert_eq!(names(&out.stdout), ["error", "error"]);
    let profiles = [
        ("examples/lora-7b-4090.yaml".to_owned(), 1),
        ("examples/mixed-plan-nine-gpus.yaml".to_owned(), 1),
    ];
    assert_eq!(places(&out.stdout), profiles);
    for record in records(&out.stdout) {
        let at = record["error"]["at"]["file"].as_str().unwrap();
        assert!(at.ends_with("zz-precision.yaml"), "{record}");
        assert!(
            record["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`cny` writes 0 to 20 decimals, not 65536"),
            "{record}"
        );
    }
}

/// A fact no record reads is not evaluated for a batch of records (`Graph::evaluate_record`):
/// the same unwritable fact fails each memo, which reads every value, and no record.
#[test]
fn a_fact_only_a_memo_reads_fails_the_memos_and_not_the_records() {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("zz-precision.yaml"),
        "facts:\n  - id: absurd_precision\n    title: t\n    expr: \"7920 | cny(65536)\"\n    type: string\n",
    )
    .unwrap();
    let rules_dir = rules.path().to_str().unwrap();
    let profiles = [
        "examples/lora-7b-4090.yaml",
        "examples/mixed-plan-nine-gpus.yaml",
    ];
    let records = decide(&["batch", profiles[0], profiles[1], "--rules", rules_dir]);
    assert_eq!(
        records.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&records.stderr)
    );
    assert_eq!(names(&records.stdout).len(), 2);
    let out = tempfile::tempdir().unwrap();
    let memos = decide(&[
        "batch",
        profiles[0],
        profiles[1],
        "--rules",
        rules_dir,
        "--format",
        "md",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(memos.status.code(), Some(1));
    let err = String::from_utf8_lossy(&memos.stderr);
    assert!(
        err.contains("`cny` writes 0 to 20 decimals, not 65536"),
        "{err}"
    );
    assert!(err.contains("2 profiles: 0 decided, 2 failed."), "{err}");
}

/// A folder's entry that is not a regular file is one failed profile, named, not one left out
/// (a link to nothing) or a read that never ends (a FIFO).
#[cfg(unix)]
#[test]
fn a_folder_entry_that_cannot_be_read_is_a_failed_profile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("examples/lora-7b-4090.yaml", dir.path().join("a.yaml")).unwrap();
    std::os::unix::fs::symlink("gone.yaml", dir.path().join("b.yaml")).unwrap();
    let fifo = dir.path().join("c.yaml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = decide(&[
        "batch",
        dir.path().to_str().unwrap(),
        "--as-of",
        common::AS_OF,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("b.yaml"), "{err}");
    assert!(
        err.contains("is a link to a file that does not exist"),
        "{err}"
    );
    assert!(err.contains("c.yaml"), "{err}");
    assert!(
        err.contains("is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    assert!(err.contains("3 profiles: 1 decided, 2 failed."), "{err}");
    assert_eq!(
        names(&out.stdout),
        ["Support-bot 7B LoRA", "error", "error"]
    );
    let entries: Vec<(String, u64)> = ["a.yaml", "b.yaml", "c.yaml"]
        .map(|name| (dir.path().join(name).display().to_string(), 1))
        .to_vec();
    assert_eq!(places(&out.stdout), entries);
    let fifo = &records(&out.stdout)[2]["error"];
    assert_eq!(fifo["kind"], "profile", "{fifo}");
    assert!(
        fifo["message"]
            .as_str()
            .unwrap()
            .contains("is a FIFO (named pipe), not a regular file"),
        "{fifo}"
    );
}

/// The deepest trees the expression bounds allow (999 tokens: a `not` chain, a sum) are
/// decided on the batch's worker threads, whose stacks are smaller than the main thread's.
#[test]
fn expressions_at_the_size_bound_are_decided_on_worker_threads() {
    let deep = format!(
        "facts:\n  - id: deep_not\n    title: deep\n    expr: \"{}true\"\n  - id: deep_sum\n    title: deep\n    expr: \"{}\"\n",
        "not ".repeat(998),
        vec!["1"; 500].join("+")
    );
    let rules = common::edited_rules(&[]);
    std::fs::write(rules.path().join("zz-deep.yaml"), deep).unwrap();
    let out = decide(&[
        "batch",
        "examples",
        "--rules",
        rules.path().to_str().unwrap(),
        "--as-of",
        common::AS_OF,
        "--trace",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let value = |id: &str| {
        first["trace"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .map(|n| n["value"].clone())
    };
    assert_eq!(value("deep_sum"), Some(serde_json::json!(500)));
    assert_eq!(value("deep_not"), Some(serde_json::json!(true)));
}

/// The summary's `Warnings:` line as the records say it should read: each id with how many
/// profiles raised it (most first, then by id), and how many raised any.
fn warnings_line(records: &[serde_json::Value]) -> String {
    let mut by_id = std::collections::BTreeMap::<String, usize>::new();
    let (mut decided, mut warned) = (0, 0);
    for record in records.iter().filter(|r| r.get("error").is_none()) {
        decided += 1;
        let ids: std::collections::BTreeSet<&str> = record["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["id"].as_str().unwrap())
            .collect();
        warned += usize::from(!ids.is_empty());
        for id in ids {
            *by_id.entry(id.to_owned()).or_default() += 1;
        }
    }
    if warned == 0 {
        return "Warnings: none.".to_owned();
    }
    let mut pairs: Vec<(String, usize)> = by_id.into_iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let pairs: Vec<String> = pairs.iter().map(|(id, n)| format!("{id} {n}")).collect();
    format!(
        "Warnings: {} ({warned} of {decided} decided with at least one).",
        pairs.join(", ")
    )
}

#[test]
fn the_summary_counts_warnings_by_id() {
    // Every example: the summary agrees with the records, and names several warnings.
    let out = decide(&["batch", "examples", "--as-of", common::AS_OF]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let line = warnings_line(&records(&out.stdout));
    assert!(
        line.contains("over_budget 1,") || line.contains("over_budget 1 "),
        "{line}"
    );
    assert!(err.lines().any(|l| l == line), "{line}\n{err}");

    // Three profiles over a budget of ¥1, one without a budget, one that fails (not counted).
    let over = |name: &str| {
        format!(
            r#"{{"name": "{name}", "workload": {{"task": "inference", "model_params_b": 7}}, "usage": {{"gpus": 8, "hours_per_gpu_month": 700}}, "budget": {{"monthly_cny": 1}}}}"#
        )
    };
    let fleet = [
        over("a"),
        profile_json(1, 1),
        over("b"),
        profile_json(2, 0),
        over("c"),
    ]
    .join("\n");
    let out = batch_stdin(&fleet);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("5 profiles: 4 decided, 1 failed."), "{err}");
    let line = warnings_line(&records(&out.stdout));
    assert!(line.contains("over_budget 3"), "{line}");
    assert!(line.ends_with("decided with at least one)."), "{line}");
    assert!(err.lines().any(|l| l == line), "{line}\n{err}");

    // A profile that raises none.
    let out = decide(&[
        "batch",
        "examples/lora-7b-4090.yaml",
        "--as-of",
        common::AS_OF,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(warnings_line(&records(&out.stdout)), "Warnings: none.");
    assert!(err.lines().any(|l| l == "Warnings: none."), "{err}");
}

/// The lines of a run's stderr before its summary (`N profiles: ...`): its progress, when
/// stderr is not a terminal, and any error reports.
fn before_summary(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .take_while(|l| !l.contains(" decided, "))
        .map(str::to_owned)
        .collect()
}

const THREE: [&str; 3] = [
    "examples/lora-7b-4090.yaml",
    "examples/pretrain-70b-job.yaml",
    "examples/over-budget-multinode.yaml",
];

#[test]
fn progress_when_asked_starts_at_the_first_profile_with_the_total_and_an_eta() {
    let mut args = vec!["batch"];
    args.extend(THREE);
    args.extend(["--as-of", common::AS_OF]);
    // Off a terminal stderr stays quiet unless asked.
    let quiet = decide(&args);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(before_summary(&quiet.stderr), Vec::<String>::new());

    args.push("--progress");
    let out = decide(&args);
    assert_eq!(out.status.code(), Some(0));
    // Progress is on stderr only: the records are the same bytes.
    assert_eq!(out.stdout, quiet.stdout);
    let lines = before_summary(&out.stderr);
    // Plain lines (no terminal to redraw on): the total before anything is decided, then the
    // first profile with its rate and ETA, then (at most one a second) more, then the end.
    assert_eq!(lines[0], "0/3 profiles (0%)", "{lines:?}");
    assert!(lines[1].starts_with("1/3 profiles (33%), "), "{lines:?}");
    assert!(lines[1].contains("/s, ETA "), "{lines:?}");
    let last = lines.last().unwrap();
    assert!(last.starts_with("3 profiles in "), "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| !l.contains('\r') && !l.contains('\x1b'))
    );

    let never = decide(&[&args[..args.len() - 1], &["--progress=never"]].concat());
    assert_eq!(before_summary(&never.stderr), Vec::<String>::new());
}

#[test]
fn progress_counts_a_file_of_json_lines_up_front_and_a_stream_as_it_comes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    std::fs::write(&path, MIXED_JSON_LINES).unwrap();
    let out = decide(&[
        "batch",
        path.to_str().unwrap(),
        "--progress",
        "--as-of",
        common::AS_OF,
    ]);
    let lines = before_summary(&out.stderr);
    // Four profiles (the blank line is none), the bad one counted as failed once reached.
    assert_eq!(lines[0], "0/4 profiles (0%)", "{lines:?}");
    assert!(lines[1].starts_with("1/4 profiles (25%), "), "{lines:?}");
    let last = lines.last().unwrap();
    assert!(last.starts_with("4 profiles in "), "{lines:?}");
    assert!(last.ends_with(", 1 failed"), "{lines:?}");

    // Standard input can be read once: no total, the count so far and the rate.
    let out = batch_stdin_with(MIXED_JSON_LINES, &["--progress"]);
    let lines = before_summary(&out.stderr);
    assert_eq!(lines[0], "0 profiles", "{lines:?}");
    assert!(lines[1].starts_with("1 profile, "), "{lines:?}");
    assert!(lines[1].ends_with("/s"), "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains("ETA")), "{lines:?}");
}

/// On a terminal progress is one line redrawn in place, shown by default, and ended before
/// the summary; records printed to the same terminal are left alone.
#[cfg(unix)]
#[test]
fn progress_on_a_terminal_is_redrawn_in_place_unless_the_records_go_there() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("decisions.jsonl");
    let terminal = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_decide"));
        command.args(args).env("TERM", "xterm").env("NO_COLOR", "1");
        let mut session = rexpect::session::spawn_command(command, Some(120_000)).unwrap();
        session.exp_eof().unwrap()
    };
    let shown = terminal(&[
        "batch",
        "examples",
        "--output",
        file.to_str().unwrap(),
        "--as-of",
        common::AS_OF,
    ]);
    let total = common::example_count();
    assert!(
        shown.starts_with(&format!("\r0/{total} profiles (0%)\x1b[K")),
        "{shown:?}"
    );
    assert!(
        shown.contains(&format!("\r1/{total} profiles (")),
        "{shown:?}"
    );
    // The last line replaces the redrawn one and ends it; the summary starts a line.
    let end = format!("\r{total} profiles in ");
    let after = &shown[shown.find(&end).unwrap_or_else(|| panic!("{shown:?}"))..];
    let summary = format!("\r\n{total} profiles: {total} decided, 0 failed.");
    assert!(after.contains(&summary), "{after:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().lines().count(),
        total
    );

    // The records on the terminal: no progress in among them.
    let records = terminal(&["batch", "examples", "--as-of", common::AS_OF]);
    assert!(!records.contains('\x1b'), "{records:?}");
    assert!(!records.contains("profiles ("), "{records:?}");
    assert!(records.contains(&format!("{total} profiles: {total} decided")));
}
