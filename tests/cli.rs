//! The `decide` program as a user runs it: exit codes, stdin, atomic `--output`, `--rules`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn decide(args: &[&str]) -> Output {
    common::run(args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn decides_an_example_with_exit_0() {
    let out = decide(&["examples/lora-7b-4090.yaml", "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("# GPU procurement memo: Support-bot 7B LoRA"));
    assert!(md.contains("- [ ] **Physical passthrough.**"));
}

#[test]
fn bad_profile_exits_1_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, "name: x\nworkload:\n  task: lora_finetune\n  model_params_b: 7\nusage:\n  gpus: 0\n  hours_per_gpu_month: 600\n").unwrap();
    let out = decide(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("usage.gpus"), "{err}");
    assert!(err.contains("bad.yaml:6:"), "{err}");
    assert!(err.contains("at least 1"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn unknown_offer_in_proposal_suggests_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.yaml");
    std::fs::write(&path, "name: x\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 10}\nproposal:\n  offer: h100-x8-ningxia\n").unwrap();
    let out = decide(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("unknown offer id `h100-x8-ningxia`"), "{err}");
    assert!(err.contains("did you mean `h100-x8-ningxia1`?"), "{err}");
    assert!(err.contains("p.yaml:5:10"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(decide(&[]).status.code(), Some(2));
    assert_eq!(
        decide(&["examples/lora-7b-4090.yaml", "--as-of", "2026-13-01"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        decide(&["examples/lora-7b-4090.yaml", "--format", "pdf"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(decide(&["--help"]).status.code(), Some(0));
}

#[test]
fn missing_file_and_directory_exit_1() {
    let out = decide(&["examples/nope.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("file not found"));
    let out = decide(&["examples"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is a directory"));
}

#[test]
fn reads_the_profile_from_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["-", "--format", "json", "--as-of", common::AS_OF])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let profile = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/partial-node-2gpus.yaml"),
    )
    .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &profile).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["deployment"], "container");
    assert_eq!(json["offer"], "rtx4090-container");
}

#[test]
fn output_is_written_atomically_and_kept_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("memo.md");
    let out = decide(&[
        "examples/lora-7b-4090.yaml",
        "--as-of",
        common::AS_OF,
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.contains("RTX 4090 24G ×8"));
    // A failing run leaves the existing file exactly as it was, and no temporary file behind.
    std::fs::write(&target, "previous memo").unwrap();
    let out = decide(&["examples/nope.yaml", "-o", target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous memo");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1);
    // The memo is created with the mode any new file gets here (the umask's), not the
    // temporary file's private 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        std::fs::remove_file(&target).unwrap();
        let out = decide(&["examples/lora-7b-4090.yaml", "-o", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(mode(&target), mode(&plain));
        std::fs::remove_file(&plain).unwrap();
    }
    // A failing run creates no file where there was none.
    let fresh = dir.path().join("new.md");
    let out = decide(&["examples/nope.yaml", "-o", fresh.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!fresh.exists());
}

/// `-o` onto what is not a plain file: a device and a descriptor are written in place (never
/// replaced by a file), a link to a file keeps being a link and the file keeps its mode, a FIFO
/// is written to its reader, and the profile itself is refused.
#[cfg(unix)]
#[test]
fn output_onto_devices_links_fifos_and_the_input() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let example = "examples/lora-7b-4090.yaml";
    let expected = decide(&[example, "--as-of", common::AS_OF]).stdout;
    assert!(!expected.is_empty());

    // /dev/null stays the character device it is, and the run succeeds.
    let out = decide(&[example, "--as-of", common::AS_OF, "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );

    // /dev/stdout and /proc/self/fd/1 are the process's standard output, wherever it goes.
    for path in ["/dev/stdout", "/proc/self/fd/1"] {
        let out = decide(&[example, "--as-of", common::AS_OF, "-o", path]);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", stderr(&out));
        assert_eq!(out.stdout, expected, "{path}");
    }

    // A link to a private file: the link stays, the file gets the memo and keeps 0600.
    let file = dir.path().join("memo.md");
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("latest.md");
    std::os::unix::fs::symlink("memo.md", &link).unwrap();
    let out = decide(&[
        example,
        "--as-of",
        common::AS_OF,
        "-o",
        link.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&file).unwrap(), expected);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // No temporary file is left, in either folder.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);

    // A dangling link makes its file, as a shell redirection would.
    let dangling = dir.path().join("next.md");
    std::os::unix::fs::symlink("made.md", &dangling).unwrap();
    let out = decide(&[
        example,
        "--as-of",
        common::AS_OF,
        "-o",
        dangling.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.path().join("made.md")).unwrap(), expected);

    // A FIFO is written to whoever reads it.
    let fifo = dir.path().join("pipe");
    let mkfifo = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(mkfifo.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = decide(&[
        example,
        "--as-of",
        common::AS_OF,
        "-o",
        fifo.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(reader.join().unwrap(), expected);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    // The profile as its own output, by its name or through a link: refused, left as it was.
    let profile = dir.path().join("p.yaml");
    std::fs::copy(example, &profile).unwrap();
    let before = std::fs::read(&profile).unwrap();
    let to_profile = dir.path().join("p-link.yaml");
    std::os::unix::fs::symlink(&profile, &to_profile).unwrap();
    for output in [&profile, &to_profile] {
        let out = decide(&[profile.to_str().unwrap(), "-o", output.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the output is one of the inputs"),
            "{}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(&profile).unwrap(), before);
    }
}

/// `-o` never replaces the profile read, however the two are named: the file behind standard
/// input (`decide - -o p.yaml < p.yaml`), another spelling of its path (`./p.yaml`), a hard
/// link to it, for one profile and for a batch's JSON lines. Each is refused with exit 2 before
/// anything is written, and the profile is left byte for byte as it was.
#[cfg(unix)]
#[test]
fn the_output_is_never_the_profile_read_whatever_its_name_or_behind_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.yaml");
    std::fs::copy("examples/lora-7b-4090.yaml", &profile).unwrap();
    let hard_link = dir.path().join("same.yaml");
    std::fs::hard_link(&profile, &hard_link).unwrap();
    let before = std::fs::read(&profile).unwrap();
    let run = |args: &[&str], stdin: &Path| {
        Command::new(env!("CARGO_BIN_EXE_decide"))
            .args(args)
            .current_dir(dir.path())
            .stdin(std::fs::File::open(stdin).unwrap())
            .output()
            .unwrap()
    };
    let cases: [(&[&str], &Path); 5] = [
        (&["-", "-o", "p.yaml"], &profile),
        (&["-", "--output", "./p.yaml", "--format", "json"], &profile),
        (&["-", "-o", "same.yaml"], &profile),
        (&["p.yaml", "-o", "./same.yaml"], &hard_link),
        (&["batch", "-", "--output", "p.yaml"], &profile),
    ];
    for (args, stdin) in cases {
        let out = run(args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the output is one of the inputs"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(std::fs::read(&profile).unwrap(), before, "{args:?}");
    }
    // Standard input from a pipe is no file to replace: the memo is written.
    let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["-", "--as-of", common::AS_OF, "-o", "memo.md"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &before).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(dir.path().join("memo.md").exists());
}

#[test]
fn a_price_edit_in_a_rules_copy_changes_the_decision() {
    // At 8 GPUs × 520 h the 4090 box (¥7,920) beats containers (¥8,154): bare metal.
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.yaml");
    std::fs::write(&profile, "name: edge\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 8, hours_per_gpu_month: 520}\n").unwrap();
    let run = |rules: Option<&Path>| {
        let mut args = vec![
            profile.to_str().unwrap().to_owned(),
            "-f".into(),
            "json".into(),
            "--as-of".into(),
            common::AS_OF.into(),
        ];
        if let Some(r) = rules {
            args.extend(["--rules".into(), r.to_str().unwrap().to_owned()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = decide(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let before = run(None);
    assert_eq!(before["deployment"], "bare_metal");
    // The box's price rises to ¥9,000: now containers are cheaper at 520 h.
    let rules = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,11250,9000,CNY",
    )]);
    let after = run(Some(rules.path()));
    assert_eq!(after["deployment"], "container");
    assert_eq!(after["policy"]["rules"], rules.path().display().to_string());
    assert!(after["costs"]["breakeven_hours_per_gpu"].as_f64().unwrap() > 520.0);
}

/// The command lines whose `--help` has examples: the top level and every command.
const HELP_COMMANDS: &[&[&str]] = &[
    &[],
    &["validate"],
    &["schema"],
    &["graph"],
    &["test"],
    &["diff"],
    &["batch"],
    &["completions"],
    &["man"],
    &["init"],
    &["offers"],
    &["quotes", "check"],
    &["rules", "export"],
    &["rules", "sample"],
    &["serve"],
];

#[test]
fn every_command_lists_examples_in_its_help() {
    for command in HELP_COMMANDS {
        let mut args: Vec<&str> = command.to_vec();
        args.push("--help");
        let out = decide(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        let examples = help.split("Examples").nth(1).unwrap_or_default();
        let name = command.join(" ");
        assert!(
            examples.contains(&format!("decide {name}").trim_end().to_owned()),
            "{args:?}: {help}"
        );
    }
    let top = String::from_utf8(decide(&["--help"]).stdout).unwrap();
    for name in [
        "validate",
        "schema",
        "graph",
        "test",
        "diff",
        "batch",
        "completions",
        "init",
        "offers",
        "quotes check",
        "rules export",
        "serve",
    ] {
        assert!(
            top.contains(&format!("  decide {name}")),
            "no example of {name}: {top}"
        );
    }
}

#[test]
fn the_trace_is_written_only_with_trace() {
    let profile = "examples/lora-7b-4090.yaml";
    let memo = common::run_ok(&[profile, "--as-of", common::AS_OF]);
    assert!(!memo.contains("## Appendix: decision trace"), "{memo}");
    let traced = common::run_ok(&[profile, "--as-of", common::AS_OF, "--trace"]);
    assert!(traced.starts_with(&memo));
    assert!(traced[memo.len()..].starts_with("\n## Appendix: decision trace\n"));
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![profile, "-f", "json", "--as-of", common::AS_OF];
        args.extend_from_slice(extra);
        serde_json::from_str(&common::run_ok(&args)).unwrap()
    };
    let (lean, full) = (json(&[]), json(&["--trace"]));
    assert!(lean.get("trace").is_none());
    assert!(!lean["sensitivity"].as_array().unwrap().is_empty());
    assert!(!full["trace"].as_array().unwrap().is_empty());
    let mut without = full.clone();
    without.as_object_mut().unwrap().remove("trace");
    assert_eq!(without, lean);
    let help = common::run_ok(&["--help"]);
    assert!(help.contains("--trace"), "{help}");
    assert!(help.contains("  decide profile.yaml --trace"), "{help}");
}

#[test]
fn completions_and_man_page_are_generated_from_the_same_definition() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = decide(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for command in ["validate", "batch", "diff", "schema"] {
            assert!(text.contains(command), "{shell} completions lack {command}");
        }
        assert!(text.contains("as-of"), "{shell} completions lack --as-of");
    }
    assert_eq!(decide(&["completions", "tcsh"]).status.code(), Some(2));
    let man = decide(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    let man = String::from_utf8(man.stdout).unwrap();
    assert!(man.contains(".TH decide 1"), "{man}");
    assert!(man.contains(".SH SYNOPSIS"), "{man}");
    assert!(
        man.contains("decide\\-validate(1)") || man.contains("validate"),
        "{man}"
    );
    assert!(man.contains("Exit codes"), "{man}");
}

#[test]
fn errors_are_plain_when_not_on_a_terminal_or_with_no_color() {
    let out = Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(["no-such.yaml"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\u{1b}'));
    let out = decide(&["no-such.yaml"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\u{1b}'));
}

/// `decide` with `DECIDE_BROWSER` set to `browser` (and a Chinese font, as fontconfig says).
fn decide_with_browser(browser: &str, args: &[&str]) -> Output {
    let (_fonts, path) = common::fonts_for_chinese("WenQuanYi Micro Hei\n");
    Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(args)
        .env("DECIDE_BROWSER", browser)
        .env("PATH", path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn pdf_needs_a_file_and_a_browser_and_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("memo.pdf");
    let example = "examples/lora-7b-4090.yaml";
    let out = decide(&[example, "--format", "pdf"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs `-o FILE`"), "{}", stderr(&out));

    let out = decide_with_browser(
        "/no/such/browser",
        &[example, "--format", "pdf", "-o", target.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("DECIDE_BROWSER is /no/such/browser, which is not a program"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());

    // A "browser" that exits without printing: the error says so, the old file stays.
    std::fs::write(&target, "previous memo").unwrap();
    let out = decide_with_browser(
        "/bin/true",
        &[example, "--format", "pdf", "-o", target.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the browser /bin/true failed: it printed no PDF"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous memo");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let out = decide_with_browser("/bin/true", &["batch", example, "--format", "pdf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`--format pdf` writes one memo per profile and needs `--out DIR`"),
        "{}",
        stderr(&out)
    );
}

/// Runs the binary in `dir`, far from the project's files, as an installed `decide` runs.
fn decide_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap()
}

/// Every shipped file is in the exported folder `p`, byte for byte (but for the editor's schema
/// line, which points into the folder's own `schema/`), where a rules folder holds it, and
/// nothing else is; every schema line names a schema the folder holds, the committed one.
fn assert_exported_as_shipped(p: &Path) {
    const MARK: &str = "# yaml-language-server: $schema=";
    let mut pointed = 0;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (from, to) in [
        ("rules", ""),
        ("rules/quotes", "quotes"),
        ("rules/measurements", "measurements"),
        ("rules/tests", "tests"),
        ("templates", "templates"),
        ("examples", "examples"),
    ] {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(root.join(from)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let name = path.file_name().unwrap().to_owned();
                let copy = p.join(to).join(&name);
                let shipped = std::fs::read_to_string(&path).unwrap();
                let exported = std::fs::read_to_string(&copy).unwrap_or_default();
                let line = |text: &str| {
                    text.lines()
                        .find(|l| l.starts_with(MARK))
                        .map(str::to_owned)
                };
                if let Some(line) = line(&exported) {
                    let target = copy.parent().unwrap().join(&line[MARK.len()..]);
                    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("schema")
                        .join(target.file_name().unwrap());
                    assert_eq!(
                        std::fs::read_to_string(&target).ok(),
                        std::fs::read_to_string(&committed).ok(),
                        "{}: `{line}` names no schema of the folder, or another one",
                        copy.display()
                    );
                    assert!(target.starts_with(p), "{line} points outside the folder");
                    pointed += 1;
                }
                let unpointed = |text: &str| match line(text) {
                    Some(l) => text.replacen(&l, MARK, 1),
                    None => text.to_owned(),
                };
                assert_eq!(
                    unpointed(&shipped),
                    unpointed(&exported),
                    "{} is not exported as {}",
                    path.display(),
                    copy.display()
                );
                names.push(name);
            }
        }
        let exported = std::fs::read_dir(p.join(to))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().is_file())
            .count();
        assert_eq!(exported, names.len(), "{to}/ holds files {from}/ does not");
    }
    assert!(pointed > 40, "only {pointed} files name a schema");
    assert_eq!(
        std::fs::read_dir(p.join("schema")).unwrap().count(),
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema"))
            .unwrap()
            .count(),
        "schema/ holds other files than the project's"
    );
}

#[test]
fn an_example_named_where_there_is_none_says_how_to_get_the_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let out = decide_in(tmp.path(), &["examples/lora-7b-4090.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("file not found"), "{err}");
    assert!(
        err.contains("`decide rules export my-rules` writes them to my-rules/examples/"),
        "{err}"
    );
    // Any other missing file is only missing.
    let out = decide_in(tmp.path(), &["mine.yaml"]);
    assert!(!stderr(&out).contains("rules export"), "{}", stderr(&out));
}

/// What the README promises an installed binary: from an empty folder, export the embedded
/// policy, change a price, and see what the change does with `decide diff embedded DIR`.
#[test]
fn an_installed_binary_exports_its_policy_and_diffs_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path();
    let out = decide_in(here, &["rules", "export", "p"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("decide diff embedded p p/examples/"),
        "{said}"
    );
    assert_exported_as_shipped(&here.join("p"));

    // Unchanged, the folder is the embedded policy (its files are the shipped ones, byte for
    // byte, so `decide validate` finds what it finds in rules/): its tests pass, no decision
    // differs, the same memo.
    for args in [
        &["test", "--rules", "p"][..],
        &[
            "diff",
            "embedded",
            "p",
            "p/examples/",
            "--as-of",
            common::AS_OF,
        ],
    ] {
        let out = decide_in(here, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let memo = |rules: &str| {
        let out = decide_in(
            here,
            &[
                "p/examples/lora-7b-4090.yaml",
                "--rules",
                rules,
                "--as-of",
                common::AS_OF,
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        memo("p").replace("rules: p)", "rules: embedded)"),
        memo("embedded")
    );

    // A second export onto the folder is refused, and leaves it as it was.
    let sheet = here.join("p/quotes/2026-09-04-marketplace.csv");
    let before = std::fs::read_to_string(&sheet).unwrap();
    let again = decide_in(here, &["rules", "export", "p"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("not an empty folder"),
        "{}",
        stderr(&again)
    );
    assert_eq!(std::fs::read_to_string(&sheet).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(here).unwrap().count(),
        1,
        "a scratch folder was left"
    );

    // The 4090 box the 7B LoRA memo rents gets ten times dearer: its decision changes, and
    // diff says so.
    let dearer = before.replace(
        "rtx4090-x8-sichuan2,marketplace,the jygpu.com marketplace,极智算,month,9900,7920,",
        "rtx4090-x8-sichuan2,marketplace,the jygpu.com marketplace,极智算,month,99000,79200,",
    );
    assert_ne!(dearer, before, "the container's quote line has moved");
    std::fs::write(&sheet, dearer).unwrap();
    let out = decide_in(
        here,
        &[
            "diff",
            "embedded",
            "p",
            "p/examples/lora-7b-4090.yaml",
            "--as-of",
            common::AS_OF,
        ],
    );
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}{}", stderr(&out));
    assert!(report.contains("- Old: `embedded`"), "{report}");
    assert!(report.contains("**1 changed**"), "{report}");
}

#[test]
fn export_into_a_file_or_a_full_folder_is_refused_and_an_empty_folder_is_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path();
    std::fs::write(here.join("file"), "mine").unwrap();
    std::fs::create_dir(here.join("full")).unwrap();
    std::fs::write(here.join("full/keep.yaml"), "mine").unwrap();
    for taken in ["file", "full"] {
        let out = decide_in(here, &["rules", "export", taken]);
        assert_eq!(out.status.code(), Some(2), "{taken}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(here.join("file")).unwrap(), "mine");
    assert_eq!(std::fs::read_dir(here.join("full")).unwrap().count(), 1);
    std::fs::create_dir(here.join("empty")).unwrap();
    let out = decide_in(here, &["rules", "export", "empty"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(here.join("empty/policy.yaml").is_file());
    // A folder that cannot be written into: an error with the folder's name, nothing left.
    let out = decide_in(here, &["rules", "export", "no/such/parent/p"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no/such/parent/p"),
        "{}",
        stderr(&out)
    );
}

/// The example lines of `decide [COMMAND] --help`, each without its `(comment)`.
fn help_examples(command: &[&str]) -> Vec<String> {
    let mut args = command.to_vec();
    args.push("--help");
    let help = String::from_utf8(decide(&args).stdout).unwrap();
    help.split("Examples")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.trim().strip_prefix("decide "))
        .map(|l| l.split("  (").next().unwrap().trim().to_owned())
        .collect()
}

/// Help examples work from any folder: none points into the project's source tree, every
/// shipped file one names is where `decide rules export my-rules` writes it, and every line that
/// needs nothing else (no file of the user's own, no browser, no prompt) runs there, exit 0.
#[test]
fn help_examples_work_from_any_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path();
    let out = decide_in(here, &["rules", "export", "my-rules"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut ran = 0;
    let mut seen = std::collections::HashSet::new();
    for &command in HELP_COMMANDS {
        for line in help_examples(command) {
            // What runs: the line up to its first pipe, redirection or `&&`.
            let run = ["|", ">", "&&"]
                .iter()
                .filter_map(|cut| line.find(&format!(" {cut} ")))
                .min()
                .map_or(line.as_str(), |at| &line[..at]);
            let words: Vec<&str> = run.split_whitespace().collect();
            let mut needs_own_file = false;
            for (i, word) in words.iter().enumerate() {
                assert!(
                    !word.starts_with("examples/") && !word.starts_with("rules/"),
                    "`decide {line}` (help of {command:?}) names a file of the source tree"
                );
                let output = i > 0 && ["-o", "--output", "--out"].contains(&words[i - 1]);
                let file_like = word.ends_with('/')
                    || [".yaml", ".csv", ".jsonl"]
                        .iter()
                        .any(|x| word.ends_with(x));
                if word.starts_with("my-rules/") {
                    assert!(
                        here.join(word).exists(),
                        "`decide {line}`: {word} is not in an exported rules folder"
                    );
                } else if file_like && !output {
                    needs_own_file = true;
                }
            }
            let interactive = words.first() == Some(&"init");
            // A server runs until it is stopped: tests/serve.rs starts and stops it.
            let server = words.first() == Some(&"serve") || line.contains("decide serve");
            // `decide validate` searches thousands of profiles (minutes in a debug build); the
            // exported folder holds the shipped files, which tests/validate.rs checks.
            let searched = words.first() == Some(&"validate");
            // A line several helps show runs once.
            let again = !seen.insert(words.join(" "));
            let browser = words.contains(&"pdf");
            // The export line itself ran above.
            let exported = words.starts_with(&["rules", "export"]);
            if needs_own_file || interactive || server || browser || exported || searched || again {
                continue;
            }
            let out = decide_in(here, &words);
            assert_eq!(
                out.status.code(),
                Some(0),
                "`decide {line}` from an empty folder: {}",
                stderr(&out)
            );
            ran += 1;
        }
    }
    assert!(ran >= 22, "only {ran} help examples ran");
}

/// `decide` with `args` and the environment variables `env` set (and the colour ones cleared).
fn decide_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_decide"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

#[test]
fn color_always_colours_a_pipe_and_never_leaves_it_plain() {
    let has_escape = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains('\u{1b}');
    // An error on standard error.
    let error = |color: &str, env: &[(&str, &str)]| {
        let out = decide_env(&["graph", "--focus", "no_such_node", "--color", color], env);
        assert_eq!(out.status.code(), Some(2));
        has_escape(&out.stderr)
    };
    assert!(error("always", &[]));
    assert!(!error("never", &[]));
    assert!(!error("auto", &[]), "a pipe is not a terminal");
    assert!(error("auto", &[("CLICOLOR_FORCE", "1")]));
    assert!(!error("never", &[("CLICOLOR_FORCE", "1")]));
    assert!(!error(
        "auto",
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]
    ));
    assert!(error("always", &[("NO_COLOR", "1")]), "the flag wins");
    // The offers table on standard output: its header in bold, the rest the same.
    let table = |color: &str| {
        let out = decide_env(
            &[
                "offers",
                "--as-of",
                "2026-09-04",
                "--format",
                "table",
                "--color",
                color,
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let (coloured, plain) = (table("always"), table("never"));
    assert!(coloured.contains("\u{1b}[1mOffer "), "{coloured}");
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert_eq!(
        coloured.replace("\u{1b}[1m", "").replace("\u{1b}[0m", ""),
        plain
    );
    // Before the subcommand too, and clap's own messages follow it.
    let out = decide_env(&["--color", "always", "offers", "--format", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        has_escape(&out.stderr),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = decide_env(&["offers", "--format", "nope", "--color=never"], &[]);
    assert!(!has_escape(&out.stderr));
    // Not a choice: a usage error naming the choices.
    let out = decide_env(&["offers", "--color", "sometimes"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("always"));
}

/// `decide rules sample`: as many profiles as asked, the same bytes every time, each one a
/// profile the rules decide (a batch of them has no error record), varying the fields the policy
/// reads.
#[test]
fn rules_sample_gives_profiles_to_check_a_change_on() {
    let args = [
        "rules",
        "sample",
        "--count",
        "300",
        "--as-of",
        common::AS_OF,
    ];
    let first = decide(&args);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(first.stdout, decide(&args).stdout, "not deterministic");
    let text = String::from_utf8(first.stdout).unwrap();
    let profiles: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(profiles.len(), 300);
    assert_eq!(profiles[0]["name"], "sample 1");
    assert_eq!(profiles[299]["name"], "sample 300");
    let distinct = |path: &str| {
        profiles
            .iter()
            .map(|p| p.pointer(path).map(ToString::to_string))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    for path in ["/workload/task", "/usage/gpus", "/workload/model_params_b"] {
        assert!(distinct(path) > 2, "{path} hardly varies");
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sample.jsonl");
    std::fs::write(&file, &text).unwrap();
    let out = decide(&["batch", file.to_str().unwrap(), "--as-of", common::AS_OF]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let records = String::from_utf8(out.stdout).unwrap();
    assert_eq!(records.lines().count(), 300);
    assert!(!records.contains("\"error\""), "a sample profile failed");
}
