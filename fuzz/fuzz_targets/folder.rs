//! A rules folder on disk, as `decide PROFILE --rules DIR` reads it, with the input grown into
//! the shapes a hostile folder takes: deep and huge expressions, deep and long templates, and
//! quote-sheet cells with markup and line breaks.
//!
//! The first byte chooses the mode (`% 4`), the second how many times the rest (a fragment,
//! `f`) is repeated (1 + 40 × the byte: up to some 10,000 times, past every bound of
//! `expr::limits`):
//! - 0: a fact whose `expr` is `f` repeated (`1+`, `not `, `(`, `'a' ~ ` grow deep trees);
//! - 1: a warning whose message is `f` repeated (a text template);
//! - 2: `templates/memo.md.j2` starting with `f` repeated (nested blocks, long tags, loops
//!   that only the work budget stops);
//! - 3: a quote sheet whose `source` and `min_term` cells are `f` (once) for the 4090 box, from
//!   a vendor the catalog keeps apart: the memos must show it as text (no raw `<` tag, no line
//!   that starts a heading or a checklist item from it).
//!
//! The folder is written to a temporary directory and read from disk, through the same
//! checks as the command line (file kinds, links, the folder's size). Any error is fine; a
//! panic, a stack overflow, a hang or an OOM is a bug, and so is vendor text that reaches a
//! memo as markup.
#![no_main]

#[path = "common.rs"]
#[allow(dead_code)]
mod common;

use std::path::Path;

use libfuzzer_sys::fuzz_target;

use decide_engine::{Graph, Policy};
use decide_tools::{Format, Memo};

fuzz_target!(|data: &[u8]| {
    let [mode, times, rest @ ..] = data else {
        return;
    };
    let Ok(fragment) = std::str::from_utf8(rest) else {
        return;
    };
    if fragment.is_empty() || fragment.len() > 256 {
        return;
    }
    let times = 1 + usize::from(*times) * 40;
    let dir = tempfile::tempdir().expect("a temporary folder");
    write_rules(dir.path());
    match mode % 4 {
        0 => append(
            dir.path(),
            "facts.yaml",
            &format!(
                "\n  - id: fuzz_fact\n    title: fuzz\n    expr: |-\n      {}\n",
                one_line(&fragment.repeat(times))
            ),
            "facts:\n",
        ),
        1 => append(
            dir.path(),
            "warnings.yaml",
            &format!(
                "\n  - id: fuzz_warning\n    title: {{en: fuzz, zh: fuzz}}\n    because: {{en: fuzz, zh: fuzz}}\n    when: \"true\"\n    message:\n      en: |-\n        {}\n      zh: x\n",
                one_line(&fragment.repeat(times))
            ),
            "warnings:\n",
        ),
        2 => {
            let templates = dir.path().join("templates");
            std::fs::create_dir(&templates).expect("templates folder");
            let memo = decide_engine::policy::embedded_templates()
                .iter()
                .find(|(name, _)| *name == "memo.md.j2")
                .map(|(_, text)| *text)
                .expect("the embedded memo template");
            std::fs::write(
                templates.join("memo.md.j2"),
                format!("{}\n{memo}", fragment.repeat(times)),
            )
            .expect("template written");
        }
        _ => {
            let cell = format!("\"{}\"", fragment.replace('"', "\"\""));
            std::fs::write(
                dir.path().join("quotes").join("2026-09-01-fuzz.csv"),
                format!(
                    "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,min_term,vat,invoice,valid_from,source\n\
                     rtx4090-x8-sichuan2,fuzz,month,9900,7000,CNY,month,{cell},unknown,unknown,2026-09-01,{cell}\n"
                ),
            )
            .expect("sheet written");
        }
    }
    decide_from(dir.path(), fragment, mode % 4 == 3);
});

/// The shipped rules written to `dir`: the rule files and the quote sheets.
fn write_rules(dir: &Path) {
    std::fs::create_dir(dir.join("quotes")).expect("quotes folder");
    for source in common::EMBEDDED.iter().chain(common::SHEETS.iter()) {
        let name = source.name.trim_start_matches("rules/");
        std::fs::write(dir.join(name), &*source.text).expect("rule file written");
    }
}

/// Adds `text` after the first `section` line of the rule file `file`.
fn append(dir: &Path, file: &str, text: &str, section: &str) {
    let path = dir.join(file);
    let old = std::fs::read_to_string(&path).expect("rule file");
    let Some(at) = old.find(section) else {
        return;
    };
    let at = at + section.len();
    let new = format!(
        "{}{}{}",
        &old[..at],
        text.trim_start_matches('\n'),
        &old[at..]
    );
    std::fs::write(&path, new).expect("rule file written");
}

/// `text` on one line, so that it stays inside its YAML block scalar.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Loads the folder, decides the example profiles and renders them; with `vendor_text`, checks
/// that `fragment` (a quote sheet's cells) reached no memo as markup.
fn decide_from(dir: &Path, fragment: &str, vendor_text: bool) {
    let Some(policy) = common::or_render(Policy::from_dir(dir)) else {
        return;
    };
    let Some(memo) = common::or_render(Memo::for_rules(Some(dir))) else {
        return;
    };
    let Some(graph) = common::or_render(Graph::compile(policy.priced_at(*common::AS_OF))) else {
        return;
    };
    for profile in common::PROFILES.iter().take(3) {
        let Some((profile, evaluation)) =
            common::or_render(decide_tools::decide(&graph, profile, *common::AS_OF))
        else {
            continue;
        };
        for format in [Format::Markdown, Format::Html] {
            let Some(out) = common::or_render(memo.render(&graph, &profile, &evaluation, format))
            else {
                continue;
            };
            if vendor_text {
                check_text(&out, fragment, format);
            }
        }
    }
}

/// Vendor text in a memo is text: a tag it holds is not a tag there, and a line of it does
/// not become a heading or a checklist item.
fn check_text(out: &str, fragment: &str, format: Format) {
    // Neither memo has scripts, images, frames or links of its own (the charts are inline SVG).
    for tag in ["<script", "<img", "<iframe", "<a "] {
        if fragment.to_ascii_lowercase().contains(tag) {
            assert!(
                !out.to_ascii_lowercase().contains(tag),
                "{tag} from a quote cell reached the {format:?} memo as markup"
            );
        }
    }
    if format == Format::Markdown {
        for line in fragment.lines().skip(1) {
            let line = line.trim();
            if line.len() > 2 && (line.starts_with("# ") || line.starts_with("- [ ]")) {
                assert!(
                    !out.lines().any(|l| l.trim() == line),
                    "a line of a quote cell became its own Markdown line: {line:?}"
                );
            }
        }
    }
}
