//! The bad-input suite: every class of broken profile or rule file gets a message a person can
//! act on (file, line and column where there is one, the field, what would be valid), exit 1,
//! and nothing on standard output. Never a panic, never a hang.
//!
//! Data-driven: each file in `tests/bad-input/profile/` is decided as a profile; each file in
//! `tests/bad-input/rules/` is added to a copy of the shipped rules (as `zz-bad.yaml`), and each
//! file in `tests/bad-input/quotes/` to its quote sheets (`quotes/`, under its own name); an
//! example is decided with them. The error text is snapshotted. Cases that need no file (a
//! missing file, a directory, a file over the size limit) are tests below.

use crate::common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

/// Exit code and standard error, with the temporary rules folder's path made stable.
fn shown(out: &Output, rules: Option<&Path>) -> String {
    assert!(
        out.stdout.is_empty(),
        "a failed run must print nothing on stdout"
    );
    let mut err = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Some(rules) = rules {
        err = err.replace(&rules.display().to_string(), "[RULES]");
    }
    assert!(!err.contains("panicked"), "{err}");
    format!("exit code: {:?}\n\n{err}", out.status.code())
}

#[test]
fn bad_profiles() {
    insta::glob!("bad-input/profile/*", |path| {
        let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let out = common::run(&[rel.to_str().unwrap(), "--as-of", common::AS_OF]);
        assert_eq!(out.status.code(), Some(1), "{}", rel.display());
        assert_snapshot!(shown(&out, None));
    });
}

#[test]
fn bad_rule_files() {
    insta::glob!("bad-input/rules/*", |path| {
        let rules = common::edited_rules(&[]);
        std::fs::copy(path, rules.path().join("zz-bad.yaml")).unwrap();
        let out = common::run(&[
            "examples/lora-7b-4090.yaml",
            "--as-of",
            common::AS_OF,
            "--rules",
            rules.path().to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        assert_snapshot!(shown(&out, Some(rules.path())));
    });
}

/// Each file of `tests/bad-input/quotes/` joins a copy of the shipped rules' quote sheets
/// (under its own name) and an example is decided with them.
#[test]
fn bad_quote_sheets() {
    insta::glob!("bad-input/quotes/*", |path| {
        let rules = common::edited_rules(&[]);
        let target = rules.path().join("quotes").join(path.file_name().unwrap());
        std::fs::copy(path, target).unwrap();
        let out = common::run(&[
            "examples/lora-7b-4090.yaml",
            "--as-of",
            common::AS_OF,
            "--rules",
            rules.path().to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        assert_snapshot!(shown(&out, Some(rules.path())));
    });
}

#[test]
fn a_missing_profile_is_named() {
    let out = common::run(&["examples/no-such-profile.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(err.contains("file not found"), "{err}");
    assert!(err.contains("examples/no-such-profile.yaml"), "{err}");
}

#[test]
fn a_directory_is_not_a_profile() {
    let out = common::run(&["examples"]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(
        err.contains("is a directory, expected a YAML file"),
        "{err}"
    );
}

#[test]
fn files_over_the_size_limit_are_refused_with_the_limit_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let mut text = String::from("name: big\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&big, &text).unwrap();
    let out = common::run(&[big.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(
        err.contains("larger than the limit of 1048576 bytes (1 MiB)"),
        "{err}"
    );

    let rules = common::edited_rules(&[]);
    std::fs::write(rules.path().join("zz-big.yaml"), &text).unwrap();
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = shown(&out, None);
    assert!(err.contains("zz-big.yaml"), "{err}");
    assert!(err.contains("1 MiB"), "{err}");
}

#[test]
fn a_missing_or_file_rules_folder_is_named() {
    let out = common::run(&["examples/lora-7b-4090.yaml", "--rules", "no-such-rules"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(shown(&out, None).contains("rules folder not found"));
    let out = common::run(&["examples/lora-7b-4090.yaml", "--rules", "README.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(shown(&out, None).contains("--rules expects a folder of YAML files, not a file"));
}

/// Runs `decide` on an example with `rules` and returns the exit code and stderr.
fn with_rules(rules: &Path) -> (Option<i32>, String) {
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).replace(&rules.display().to_string(), "[RULES]");
    (out.status.code(), err)
}

/// A rules folder's files are read or the run stops naming the one that is not: a link to
/// nothing, a FIFO named `*.yaml` (which would block the read for ever), a link out of the
/// folder (a template that would make the memo another file's text).
#[cfg(unix)]
#[test]
fn a_rules_file_that_cannot_be_read_or_leads_out_of_the_folder_stops_the_run() {
    let rules = common::edited_rules(&[]);
    let dangling = rules.path().join("zz-gone.yaml");
    std::os::unix::fs::symlink("nowhere.yaml", &dangling).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("zz-gone.yaml"), "{err}");
    assert!(
        err.contains("is a link to nowhere.yaml, which does not exist"),
        "{err}"
    );
    std::fs::remove_file(&dangling).unwrap();

    let fifo = rules.path().join("zz-pipe.yaml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("zz-pipe.yaml"), "{err}");
    assert!(
        err.contains("is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    std::fs::remove_file(&fifo).unwrap();

    // A quote sheet and a template linked from outside the folder.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "the outside file's text").unwrap();
    let sheet = rules.path().join("quotes").join("2026-12-01-elsewhere.csv");
    std::os::unix::fs::symlink(&secret, &sheet).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("2026-12-01-elsewhere.csv"), "{err}");
    assert!(err.contains("outside the rules folder"), "{err}");
    std::fs::remove_file(&sheet).unwrap();
    std::fs::create_dir(rules.path().join("templates")).unwrap();
    let template = rules.path().join("templates").join("memo.md.j2");
    std::os::unix::fs::symlink(&secret, &template).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("memo.md.j2"), "{err}");
    assert!(err.contains("outside the rules folder"), "{err}");
    assert!(!err.contains("the outside file's text"), "{err}");

    // A link that stays inside the folder is read as the file it names.
    std::fs::remove_file(&template).unwrap();
    std::fs::copy(
        "templates/memo.md.j2",
        rules.path().join("templates/base.md.j2"),
    )
    .unwrap();
    std::os::unix::fs::symlink("base.md.j2", &template).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(0), "{err}");
}

/// A memo template over a bound of `expr::limits` is refused at its line, before minijinja's
/// parser recurses over it (100,000 nested `{% if %}` blocks or terms aborted the process).
#[test]
fn a_memo_template_too_deep_or_too_long_is_refused_at_its_line() {
    let rules = common::edited_rules(&[]);
    std::fs::create_dir(rules.path().join("templates")).unwrap();
    let memo = std::fs::read_to_string("templates/memo.md.j2").unwrap();
    let template = rules.path().join("templates").join("memo.md.j2");
    let nested = format!(
        "title\n{}x{}\n{memo}",
        "{% if true %}".repeat(33),
        "{% endif %}".repeat(33)
    );
    std::fs::write(&template, nested).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("more than 32 blocks open at once"), "{err}");
    assert!(err.contains("memo.md.j2:2:1"), "{err}");
    let long = format!("{{{{ {} }}}}\n{memo}", vec!["'a'"; 501].join(" ~ "));
    std::fs::write(&template, long).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("expression longer than 1000 tokens"), "{err}");
    // At the bounds, the memo is rendered.
    let fits = format!(
        "{{{{ {} }}}}{}x{}\n{memo}",
        vec!["'a'"; 500].join(" ~ "),
        "{% if true %}".repeat(32),
        "{% endif %}".repeat(32)
    );
    std::fs::write(&template, fits).unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(0), "{err}");
}

/// A quote sheet's header of 60,000 columns (one unknown-column error each, with its column
/// found by scanning the line, was quadratic) is refused in one error.
#[test]
fn a_header_of_sixty_thousand_columns_is_one_error() {
    let rules = common::edited_rules(&[]);
    let header: Vec<String> = (0..60_000).map(|i| format!("c{i}")).collect();
    std::fs::write(
        rules.path().join("quotes").join("2026-09-01-wide.csv"),
        format!("{}\n", header.join(",")),
    )
    .unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the header has 60000 columns; a quote sheet has at most 64"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}

/// A memo template that would loop 10^10 times stops at the work budget with an error at its
/// line, instead of running for ever.
#[test]
fn a_template_that_never_ends_stops_at_the_work_budget() {
    let rules = common::edited_rules(&[]);
    std::fs::create_dir(rules.path().join("templates")).unwrap();
    let memo = std::fs::read_to_string("templates/memo.md.j2").unwrap();
    std::fs::write(
        rules.path().join("templates").join("memo.md.j2"),
        format!(
            "{{% for i in range(100000) %}}{{% for j in range(100000) %}}{{% endfor %}}{{% endfor %}}\n{memo}"
        ),
    )
    .unwrap();
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("ran out of fuel"), "{err}");
    assert!(err.contains("more than 1000000 steps (the limit)"), "{err}");
    assert!(err.contains("memo.md.j2:1:1"), "{err}");
}

/// More quotes than a policy holds (10,000) are refused with one error naming the sheet where
/// the count passes the limit; each sheet is still held to 1 MiB and the folder to 8 MiB.
#[test]
fn more_quotes_than_the_limit_are_refused() {
    let rules = common::edited_rules(&[]);
    let header = "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,\
                  min_term,vat,invoice,valid_from,source\n";
    let mut day = jiff::civil::date(2000, 1, 1);
    for sheet in 0..2 {
        let mut text = String::from(header);
        for _ in 0..5_001 {
            let _ = writeln!(
                text,
                "rtx4090-x8-sichuan2,marketplace,month,9900,7920,CNY,month,1 month,unknown,unknown,{day},s"
            );
            day = day.tomorrow().unwrap();
        }
        std::fs::write(
            rules
                .path()
                .join("quotes")
                .join(format!("2000-01-0{}-bulk.csv", sheet + 1)),
            text,
        )
        .unwrap();
    }
    let (code, err) = with_rules(rules.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the quote sheets hold more than 10000 quotes (the limit)"),
        "{err}"
    );
    assert!(err.contains("2000-01-02-bulk.csv"), "{err}");
}
