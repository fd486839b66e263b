//! A rules folder's own `templates/`: its files replace the embedded ones of the same name (or
//! add to them), a broken one is reported with its file and line, and only Markdown compiles.

use crate::common;

use std::path::Path;

/// A copy of `rules/` with `templates/` holding `files` (name, text).
fn rules_with_templates(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = common::edited_rules(&[]);
    let templates = dir.path().join("templates");
    std::fs::create_dir(&templates).unwrap();
    for (name, text) in files {
        std::fs::write(templates.join(name), text).unwrap();
    }
    dir
}

/// The project's template `name`, as shipped.
fn shipped(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("templates")
            .join(name),
    )
    .unwrap()
}

fn memo(rules: Option<&Path>, lang: &str) -> String {
    let mut args = vec![
        "examples/pretrain-70b-job.yaml",
        "--as-of",
        common::AS_OF,
        "--lang",
        lang,
    ];
    if let Some(r) = rules {
        args.extend(["--rules", r.to_str().unwrap()]);
    }
    common::run_ok(&args)
}

/// The 1-based number of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line contains {needle:?}"))
        + 1
}

#[test]
fn a_words_file_in_the_rules_folder_changes_that_language_only() {
    let words = shipped("words.en.j2").replace(
        "{% set contract_checklist = \"Contract checklist\" %}",
        "{% set contract_checklist = \"Before you sign\" %}",
    );
    assert_ne!(words, shipped("words.en.j2"), "the edit must apply");
    let rules = rules_with_templates(&[("words.en.j2", &words)]);
    let (before, after) = (memo(None, "en"), memo(Some(rules.path()), "en"));
    assert!(before.contains("\n## Contract checklist\n"), "{before}");
    assert!(after.contains("\n## Before you sign\n"), "{after}");
    // Nothing else moved but the policy's origin, under the sign-off.
    let differing: Vec<(&str, &str)> = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(before.lines().count(), after.lines().count());
    assert_eq!(differing.len(), 2, "{differing:#?}");
    assert!(
        differing
            .iter()
            .any(|(a, _)| a.starts_with("This sign-off is for") && a.contains("(rules: "))
    );
    // The Chinese memo still comes from the embedded Chinese words.
    let zh = memo(Some(rules.path()), "zh");
    assert!(zh.contains("\n## 合同确认清单\n"), "{zh}");
}

#[test]
fn a_template_the_embedded_set_lacks_is_added() {
    // The folder's memo includes a partial of its own; every other file stays embedded.
    let memo_text = shipped("memo.md.j2").replace(
        "## {{ w.sign_off }}\n",
        "{% include \"approvals.md.j2\" %}\n## {{ w.sign_off }}\n",
    );
    let rules = rules_with_templates(&[
        ("memo.md.j2", &memo_text),
        (
            "approvals.md.j2",
            "Approvals needed above {{ v.recommended_monthly_cny | cny }} a month: the CFO.\n\n",
        ),
    ]);
    let out = memo(Some(rules.path()), "en");
    assert!(
        out.contains("Approvals needed above ¥127,200 a month: the CFO.\n\n## Sign-off"),
        "{out}"
    );
}

#[test]
fn a_template_syntax_error_names_the_file_and_line_and_exits_1() {
    let broken = "# {{ d.profile }}\n\n{% if d.offer %}recommended{% endfor %}\n";
    let rules = rules_with_templates(&[("memo.md.j2", broken)]);
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let file = rules.path().join("templates").join("memo.md.j2");
    assert!(err.contains("memo template failed"), "{err}");
    assert!(err.contains(&format!("{}:3:", file.display())), "{err}");
    assert!(err.contains("endfor"), "{err}");
    assert!(
        err.contains("{% if d.offer %}recommended{% endfor %}"),
        "{err}"
    );

    // The decision record needs no template, so the broken memo does not stop it.
    let json = common::run_ok(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(json.contains("\"offer\""), "{json}");

    // `decide validate` compiles every template of the folder and names the same place.
    let out = common::run(&["validate", "--rules", rules.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!("{}:3:", file.display())),
        "{report}"
    );
}

#[test]
fn an_error_while_rendering_names_the_words_file_and_line() {
    let needle = "{% macro memo_title(name) %}";
    let words = shipped("words.zh.j2").replace(
        "{% macro memo_title(name) %}GPU 采购备忘录：{{ name }}{% endmacro %}",
        "{% macro memo_title(name) %}GPU 采购备忘录：{{ name.no_such_field }}{% endmacro %}",
    );
    assert_ne!(words, shipped("words.zh.j2"), "the edit must apply");
    let line = line_of(&words, needle);
    let rules = rules_with_templates(&[("words.zh.j2", &words)]);
    let args = [
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ];
    let out = common::run(&[&args[..], &["--lang", "zh"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let file = rules.path().join("templates").join("words.zh.j2");
    assert!(
        err.contains(&format!("{}:{line}:", file.display())),
        "{err}"
    );
    assert!(err.contains("undefined"), "{err}");
    // English never reads the Chinese words.
    common::run_ok(&args);
}
