//! `decide init` walked end to end through a pseudo-terminal, answering as a person would;
//! and refused without a terminal.

use crate::common;

use std::path::Path;
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
    if c.is_ascii_alphanumeric() || c == ' ' || c == '-' || !c.is_ascii() {
        c.to_string()
    } else {
        format!("\\{c}")
    }
}

/// Questions only an inference workload is asked.
const INFERENCE_ONLY: &[&str] = &[
    "how much concurrency?",
    "which number format do the weights run in?",
    "tokens of context per sequence?",
    "sequences served at once?",
    "traffic at its peak",
    "Output tokens a second across the whole service",
];

/// Profile fields only an inference workload is asked for.
const INFERENCE_FIELDS: &[&str] = &[
    "concurrency",
    "precision",
    "context_tokens",
    "concurrent_sequences",
];

/// No budget ceiling; a purchase by inquiry (`y`) or not (the default, no).
fn no_budget_by_inquiry(p: &mut rexpect::session::PtySession, by_inquiry: bool) {
    p.exp_string("Monthly budget ceiling").unwrap();
    keys(p, ENTER);
    p.exp_string("purchase by inquiry").unwrap();
    keys(
        p,
        &if by_inquiry {
            format!("y{ENTER}")
        } else {
            ENTER.to_owned()
        },
    );
}

/// A job's cadence left unset and its checkpoints left at no (the defaults).
fn no_cadence_no_checkpoints(p: &mut rexpect::session::PtySession) {
    p.exp_string("delivered once, or run again every week?")
        .unwrap();
    keys(p, ENTER); // none
    p.exp_string("save checkpoints").unwrap();
    keys(p, ENTER); // no
}

/// Answers the four yes/no criteria and the custom-operators question with no.
fn no_requirements(p: &mut rexpect::session::PtySession) {
    for question in [
        "dedicated physical machine?",
        "your own kernel",
        "your own network set-up",
        "domestic (Xinchuang) accelerator required?",
        "outside mainland China",
        "custom CUDA operators",
    ] {
        p.exp_string(question).unwrap();
        keys(p, &format!("n{ENTER}"));
    }
}

/// The terminal got the memo's answer (`said`, as read: a char a byte) and not the memo, which
/// is beside the profile `file` and starts with `title`.
fn answer_said_and_memo_beside(said: &str, file: &Path, title: &str) {
    let said: Vec<u8> = said.chars().map(|c| c as u8).collect();
    let said = String::from_utf8_lossy(&said);
    let memo = std::fs::read_to_string(file.with_extension("memo.md")).unwrap();
    assert!(memo.starts_with(title), "{memo}");
    let answer = memo.lines().find(|l| l.starts_with("> **")).unwrap();
    let answer = answer.trim_start_matches("> **").trim_end_matches("**");
    let start: String = answer.chars().take(16).collect();
    assert!(said.contains(&start), "{start} is not in: {said}");
    assert!(!said.contains("## "), "the terminal got the memo: {said}");
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
    go_back_twice_to_the_hours_a_month(&mut p);
    p.exp_string("For how many months?").unwrap();
    keys(&mut p, ENTER);
    no_requirements(&mut p);
    // A purchase by inquiry: the memo then warns when fewer than three vendors quote.
    no_budget_by_inquiry(&mut p, true);
    p.exp_string("one job to cost").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    // The deadline comes before the hours on each offer.
    let shown = next_question(&mut p, "within a number of days?");
    assert!(!shown.contains("Wall-clock hours on"), "{shown}");
    keys(&mut p, &format!("10{ENTER}"));
    answer_job_hours(&mut p);
    // Measured: a choice among the two offers given hours; space picks the first.
    p.exp_string("Which of those hours were measured").unwrap();
    keys(&mut p, &format!(" {ENTER}"));
    no_cadence_no_checkpoints(&mut p);
    p.exp_string("already considering an offer?").unwrap();
    // Offers are listed by title and price, and found by typing part of a title.
    p.exp_regex(&wrapped(&as_read("H100 80G ×8 (Ningxia zone 1), ¥")))
        .unwrap();
    keys(&mut p, &format!("H100{ENTER}"));
    p.exp_string("name: Pilot 7B full").unwrap();
    p.exp_string("Write this profile?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("Wrote ").unwrap();
    p.exp_string("Decide it now?").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    let said = p.exp_string("The whole memo").unwrap();
    p.exp_eof().unwrap();
    answer_said_and_memo_beside(&said, &file, "# GPU procurement memo: Pilot 7B full");

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
    assert_eq!(profile["usage"]["hours_per_gpu_month"], 720, "{text}");
    assert_eq!(profile["workload"]["model_params_b"], 7, "{text}");
    // By inquiry, and one vendor quotes the hardware: the memo warns.
    assert_eq!(profile["requirements"]["inquiry"], true, "{text}");
    let warned = record["warnings"].to_string();
    assert!(warned.contains(r#""id":"too_few_quotes""#), "{warned}");
    for field in INFERENCE_FIELDS {
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
    assert_eq!(profile["proposal"]["offer"], "h100-x8-ningxia1", "{text}");
    assert_eq!(profile["job"]["deadline_days"], 10, "{text}");
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
    p.exp_string("which number format do the weights run in?")
        .unwrap();
    keys(&mut p, &format!("FP8{ENTER}"));
    // Without the traffic: what sizes the memory is asked instead.
    p.exp_string("traffic at its peak").unwrap();
    keys(&mut p, &format!("n{ENTER}"));
    p.exp_string("For inference: how much concurrency?")
        .unwrap();
    keys(&mut p, &format!("High{ENTER}"));
    p.exp_string("tokens of context per sequence?").unwrap();
    keys(&mut p, &format!("8192{ENTER}"));
    go_back_through_a_number_a_choice_and_a_yes_no(&mut p);
    // The traffic, this time: the serving targets, and concurrency and context not asked.
    p.exp_string("traffic at its peak").unwrap();
    keys(&mut p, &format!("y{ENTER}"));
    p.exp_string("Output tokens a second across the whole service")
        .unwrap();
    keys(&mut p, &format!("1500{ENTER}"));
    p.exp_string("Prompt tokens of a typical request?").unwrap();
    keys(&mut p, &format!("2k{ENTER}"));
    p.exp_string("Output tokens of a typical request?").unwrap();
    keys(&mut p, &format!("300{ENTER}"));
    p.exp_string("between two output tokens").unwrap();
    keys(&mut p, &format!("50ms{ENTER}")); // the unit the question names is read
    p.exp_string("wait for the first token").unwrap();
    keys(&mut p, ENTER); // none
    let shown = next_question(&mut p, "How many GPUs are kept busy at once?");
    for question in [
        "how many tokens, in billions?",
        "how much concurrency?",
        "tokens of context per sequence?",
        "sequences served at once?",
    ] {
        assert!(!shown.contains(question), "asked {question:?}:\n{shown}");
    }
    keys(&mut p, &format!("2 GPUs{ENTER}"));
    p.exp_string("How many hours a month").unwrap();
    keys(&mut p, &format!("300h{ENTER}"));
    p.exp_string("For how many months?").unwrap();
    keys(&mut p, ENTER);
    no_requirements(&mut p);
    no_budget_by_inquiry(&mut p, false);
    p.exp_string("one job to cost").unwrap();
    keys(&mut p, &format!("n{ENTER}"));
    // No job: its measured hours, deadline and cadence are not asked.
    let shown = next_question(&mut p, "already considering an offer?");
    for question in [
        "Which of those hours were measured",
        "within a number of days?",
        "delivered once, or run again every week?",
        "save checkpoints",
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
    assert_eq!(profile["workload"]["precision"], "fp8", "{text}");
    // The answers undone by going back are not in the profile: the traffic is said once.
    for field in ["concurrency", "context_tokens", "concurrent_sequences"] {
        assert!(profile["workload"].get(field).is_none(), "{field}: {text}");
    }
    assert_eq!(profile["usage"]["gpus"], 2, "{text}");
    assert_eq!(profile["usage"]["hours_per_gpu_month"], 300, "{text}");
    assert!(profile["workload"].get("tokens_b").is_none(), "{text}");
    assert!(profile.get("job").is_none(), "{text}");
    assert_eq!(
        profile["serving"]["peak_output_tokens_per_s"], 1500,
        "{text}"
    );
    assert_eq!(profile["serving"]["prompt_tokens"], 2048, "{text}");
    assert_eq!(profile["serving"]["output_tokens"], 300, "{text}");
    assert_eq!(profile["serving"]["time_per_output_token_ms"], 50, "{text}");
    assert!(
        profile["serving"].get("time_to_first_token_ms").is_none(),
        "{text}"
    );
    let out = common::run(&[file.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let memo = String::from_utf8_lossy(&out.stdout);
    assert!(
        memo.contains("The service must carry **1,500 output tokens a second**"),
        "{memo}"
    );
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
fn ctrl_c_exits_130() {
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
}

/// `init --lang zh` asks, checks, confirms and decides in Chinese, and reads numbers as a
/// Chinese speaker types them: full-width digits, 万 and 亿, 7×24; each echoed as understood.
#[test]
fn lang_zh_asks_checks_and_decides_in_chinese_reading_full_width_digits_and_wan() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zh.yaml");
    let mut p = session(&[file.to_str().unwrap(), "--lang", "zh"]);
    p.exp_string(&as_read("这个工作负载叫什么？")).unwrap();
    keys(&mut p, &format!("中文试点{ENTER}"));
    p.exp_string(&as_read("GPU 主要用来做什么？")).unwrap();
    // The list's keys are explained in Chinese.
    p.exp_string(&as_read("回车确认")).unwrap();
    keys(&mut p, &format!("全参数{ENTER}")); // typed Chinese filters the list
    p.exp_string(&as_read("模型有多大")).unwrap();
    keys(&mut p, &format!("七{ENTER}")); // refused, in Chinese
    p.exp_string(&as_read("“七”不是数字")).unwrap();
    keys(&mut p, "\u{7f}");
    keys(&mut p, &format!("70亿{ENTER}")); // 7 billion parameters: 7 in the question's unit
    p.exp_string(&as_read("70亿 → 7 十亿参数")).unwrap();
    p.exp_string(&as_read("单个任务如何在多卡间切分？"))
        .unwrap();
    keys(&mut p, &format!(" {ENTER}"));
    p.exp_string(&as_read("单个训练任务跨几台机器？")).unwrap();
    keys(&mut p, ENTER);
    p.exp_string(&as_read("训练用多少 token")).unwrap();
    keys(&mut p, &format!("２０亿{ENTER}")); // full-width digits and 亿: 2 billion tokens
    p.exp_string(&as_read("２０亿 → 2 十亿 token")).unwrap();
    p.exp_string(&as_read("同时有多少张 GPU 在忙？")).unwrap();
    keys(&mut p, &format!("８张{ENTER}")); // the unit the question counts in is read
    p.exp_string(&as_read("８张 → 8 张卡")).unwrap();
    p.exp_string(&as_read("每张卡每月忙多少小时？")).unwrap();
    keys(&mut p, &format!("８００{ENTER}")); // above the bound: refused in Chinese
    p.exp_string(&as_read("不能大于 744")).unwrap();
    keys(&mut p, &"\u{7f}".repeat(3));
    keys(&mut p, &format!("7×24{ENTER}")); // around the clock, as the rules define it
    p.exp_string(&as_read("7×24 → 720 小时/月")).unwrap();
    p.exp_string(&as_read("持续几个月？")).unwrap();
    keys(&mut p, ENTER);
    p.exp_string(&as_read("数据是否必须放在独占的物理机上？"))
        .unwrap();
    // The yes/no hint says the default in words (Chinese has no capital letter to show it).
    p.exp_string(&as_read("是/否，默认否")).unwrap();
    keys(&mut p, &format!("好{ENTER}")); // neither yes nor no: asked again, in Chinese
    p.exp_string(&as_read("请输入“是”或“否”")).unwrap();
    keys(&mut p, "\u{7f}");
    keys(&mut p, &format!("否{ENTER}"));
    for question in [
        "是否需要自定义内核",
        "是否需要自定义网络",
        "是否必须使用国产（信创）加速卡？",
        "数据是否可以在中国大陆境外处理",
        "代码是否依赖自定义 CUDA 算子",
    ] {
        p.exp_string(&as_read(question)).unwrap();
        keys(&mut p, &format!("否{ENTER}"));
    }
    p.exp_string(&as_read("每月预算上限（元）？")).unwrap();
    keys(&mut p, &format!("２万{ENTER}"));
    p.exp_string(&as_read("２万 → 20,000 元/月")).unwrap();
    p.exp_string(&as_read("是否为询价采购")).unwrap();
    keys(&mut p, &format!("否{ENTER}"));
    p.exp_string(&as_read("是否要在具体配置上估算某个任务的费用"))
        .unwrap();
    keys(&mut p, &format!("否{ENTER}"));
    p.exp_string(&as_read("团队是否已有意向配置？")).unwrap();
    // The offers by their Chinese titles, with the price.
    p.exp_regex(&wrapped(&as_read("RTX 4090 24G ×8（四川二区），每月 ¥")))
        .unwrap();
    keys(&mut p, ENTER); // none
    p.exp_string(&as_read("写入该文件？")).unwrap();
    p.exp_string(&as_read("是/否，默认是")).unwrap();
    keys(&mut p, &format!("是{ENTER}"));
    p.exp_string(&as_read("已写入 ")).unwrap();
    p.exp_string(&as_read("现在就用它做决策？")).unwrap();
    keys(&mut p, &format!("是{ENTER}"));
    // The answer and where the memo went are said in Chinese; the memo is the Chinese one:
    // its title and the workload's name.
    let said = p.exp_string(&as_read("完整备忘录")).unwrap();
    p.exp_eof().unwrap();
    answer_said_and_memo_beside(&said, &file, "# GPU 采购备忘录：中文试点");

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# 由 `decide init` 生成"), "{text}");
    let profile: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(profile["name"], "中文试点", "{text}");
    assert_eq!(profile["workload"]["task"], "full_finetune", "{text}");
    assert_eq!(profile["workload"]["model_params_b"], 7, "{text}");
    assert_eq!(profile["workload"]["tokens_b"], 2, "{text}");
    assert_eq!(profile["usage"]["gpus"], 8, "{text}");
    assert_eq!(profile["usage"]["hours_per_gpu_month"], 720, "{text}");
    assert_eq!(profile["budget"]["monthly_cny"], 20_000, "{text}");
    assert_eq!(
        profile["requirements"]["physical_isolation"], false,
        "{text}"
    );
    let out = common::run(&[file.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// At the months question: `<` goes back to the hours a month (the answers before it kept), and
/// so does Esc's "go back"; the hours are then given as `24/7`.
fn go_back_twice_to_the_hours_a_month(p: &mut rexpect::session::PtySession) {
    p.exp_string("For how many months?").unwrap();
    keys(p, &format!("<{ENTER}"));
    // The answer given before is offered again: Enter keeps it, typing replaces it.
    p.exp_string("How many hours a month").unwrap();
    p.exp_string("(600)").unwrap();
    keys(p, &format!("500{ENTER}"));
    p.exp_string("For how many months?").unwrap();
    // Esc asks before anything is thrown away; going back from there works too.
    keys(p, "\u{1b}");
    p.exp_string("Stop here?").unwrap();
    keys(p, &format!("back{ENTER}")); // type to filter: "Go back one question"
    p.exp_string("How many hours a month").unwrap();
    p.exp_string("(500)").unwrap();
    keys(p, &format!("24/7{ENTER}"));
    p.exp_string(&as_read("24/7 → 720 hours a month")).unwrap();
}

/// At the sequences question (after no traffic, high concurrency and 8,192 tokens of context):
/// `<` goes back through a number, a choice (by Esc's menu) and a yes/no, each with the answer
/// given before offered again, to the number format, kept as it was (FP8).
fn go_back_through_a_number_a_choice_and_a_yes_no(p: &mut rexpect::session::PtySession) {
    p.exp_string("sequences served at once?").unwrap();
    keys(p, &format!("<{ENTER}"));
    p.exp_string("tokens of context per sequence?").unwrap();
    p.exp_string("(8192)").unwrap();
    keys(p, &format!("<{ENTER}"));
    p.exp_string("how much concurrency?").unwrap();
    keys(p, "\u{1b}");
    p.exp_string("Stop here?").unwrap();
    keys(p, &format!("back{ENTER}"));
    p.exp_string("traffic at its peak").unwrap();
    p.exp_string("y/N").unwrap(); // no, as answered
    keys(p, &format!("<{ENTER}"));
    p.exp_string("which number format do the weights run in?")
        .unwrap();
    keys(p, ENTER); // FP8, where the cursor is
}

/// Esc does not throw the answers away at once: it asks, and going on asks the same question
/// again; quitting from there writes nothing.
#[test]
fn escape_asks_before_quitting_without_saving() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("esc.yaml");
    let mut p = session(&[file.to_str().unwrap()]);
    p.exp_string("What is this workload called?").unwrap();
    keys(&mut p, &format!("Pilot{ENTER}"));
    p.exp_string("What will the GPUs do?").unwrap();
    keys(&mut p, "\u{1b}");
    p.exp_string("Stop here?").unwrap();
    keys(&mut p, ENTER); // the first choice: go on with this question
    p.exp_string("What will the GPUs do?").unwrap();
    keys(&mut p, "\u{1b}");
    p.exp_string("Stop here?").unwrap();
    keys(&mut p, &format!("Quit{ENTER}"));
    p.exp_string("cancelled: no profile was written").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), Some(2), "quitting is a cancelled usage");
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

/// Answers one hours question per catalog offer, in catalog order, each asked by the offer's
/// title and price: hours on two of them, after a number above the bound is refused as it is
/// typed.
fn answer_job_hours(p: &mut rexpect::session::PtySession) {
    for (title, hours) in [
        ("RTX 4090 24G ×8 (Sichuan zone 2), ¥", "300"),
        ("RTX 5090 32G ×8 (Anhui zone 1), ¥", ""),
        ("Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core), ¥", ""),
        (
            "Ascend 910B 64G ×8 (Sichuan zone 1, Kunpeng 48-core), ¥",
            "",
        ),
        ("H100 80G ×8 (Ningxia zone 1), ¥", "120"),
        // The global clouds' H100s (RunPod's two clouds, Lambda) and 4090s, quoted from
        // 2026-09-25, after the marketplace's own container.
        ("H100 80G SXM container (per GPU-hour), ¥", ""),
        ("H100 80G SXM container (per GPU-hour), ¥", ""),
        ("H100 80G SXM container (per GPU-hour), ¥", ""),
        ("RTX 4090 24G container (per GPU-hour), ¥", ""),
        ("RTX 4090 24G container (per GPU-hour), ¥", ""),
        ("RTX 4090 24G container (per GPU-hour), ¥", ""),
    ] {
        p.exp_regex(&wrapped(&as_read(&format!("Wall-clock hours on {title}"))))
            .unwrap();
        if hours == "300" {
            // Above the ten years of hours a job may take: refused as typed, with the bound.
            keys(p, &format!("87601{ENTER}"));
            p.exp_string("must be at most 87600").unwrap();
            keys(p, &"\u{7f}".repeat(5));
        }
        keys(p, &format!("{hours}{ENTER}"));
    }
}

/// A rules folder is input: a question, its help and a choice holding ESC sequences (retitle
/// the terminal, clear the screen) are shown escaped (`\u{1b}`), never sent to the terminal.
#[test]
fn control_characters_in_the_questions_are_shown_escaped() {
    let rules = common::edited_rules(&[
        (
            "questions.yaml",
            "What is this workload called?",
            "What is\\e]0;pwned\\a this workload called?",
        ),
        (
            "questions.yaml",
            "Shown at the top",
            "Shown\\e[2J at the top",
        ),
        (
            "questions.yaml",
            "\"LoRA fine-tuning\"",
            "\"LoRA\\e[31m fine-tuning\"",
        ),
    ]);
    let rules = rules.path();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    let mut p = session(&[file.to_str().unwrap(), "--rules", rules.to_str().unwrap()]);
    let before = p
        .exp_string("What is\\u{1b}]0;pwned\\u{7} this workload called?")
        .unwrap();
    let help = p.exp_string("Shown\\u{1b}[2J at the top").unwrap();
    keys(&mut p, &format!("x{ENTER}"));
    let asked = p.exp_string("LoRA\\u{1b}[31m fine-tuning").unwrap();
    for shown in [before, help, asked] {
        for raw in ["\u{1b}]0;pwned", "\u{1b}[2J", "\u{1b}[31m"] {
            assert!(
                !shown.contains(raw),
                "{raw:?} reached the terminal: {shown:?}"
            );
        }
    }
    keys(&mut p, "\u{3}"); // Ctrl-C: interrupted, nothing written
    p.exp_string("interrupted: no profile was written").unwrap();
    p.exp_eof().unwrap();
}
