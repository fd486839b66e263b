//! Every example profile decides and renders; its memo and JSON record are snapshotted, and so
//! is its Chinese memo (`--lang zh`).
//!
//! One `glob!` in this file only (insta counts glob failures process-wide).

mod common;

use decide::{Format, Graph, Lang, Memo, Policy, Profile, Source};

/// The embedded policy compiled for `lang`, as `decide --lang` does.
fn graph_in(lang: Lang) -> Graph {
    Graph::compile_in(Policy::embedded().expect("embedded rules load"), lang)
        .expect("embedded rules compile")
}

#[test]
fn every_example_decides_and_renders() {
    let graph = common::graph();
    let graph_zh = graph_in(Lang::Zh);
    let memo = Memo::embedded().unwrap();
    insta::glob!("../examples", "*.yaml", |path| {
        let source = Source::read(path, decide::ErrorKind::Profile).unwrap();
        let (profile, evaluation): (Profile, _) = decide::decide(&graph, &source, common::as_of())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let md = memo
            .render(&graph, &profile, &evaluation, Format::Markdown)
            .unwrap();
        let json = memo
            .render(&graph, &profile, &evaluation, Format::Json)
            .unwrap();
        // Same input, same bytes.
        let again = decide::decide(&graph, &source, common::as_of()).unwrap().1;
        assert_eq!(
            json,
            memo.render(&graph, &profile, &again, Format::Json).unwrap()
        );
        let (profile_zh, zh) = decide::decide(&graph_zh, &source, common::as_of())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let md_zh = memo
            .render(&graph_zh, &profile_zh, &zh, Format::Markdown)
            .unwrap();
        insta::assert_snapshot!("memo", md);
        insta::assert_snapshot!("json", json);
        insta::assert_snapshot!("memo_zh", md_zh);
    });
}

/// Texts whose Chinese is not written yet (their English is being rewritten), as
/// `(kind, id)`; remove an entry when its `zh` lands.
const ENGLISH_ONLY: &[(&str, &str)] = &[("warning", "oversized"), ("warning", "undersized")];

fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// A Chinese record is the same decision as the English one, and none of its reasons, warning
/// messages or checklist items falls back to English.
#[test]
fn chinese_records_are_the_same_decision_in_chinese_words() {
    let graph = common::graph();
    let graph_zh = graph_in(Lang::Zh);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "examples: {paths:?}");
    let mut english = Vec::new();
    let mut seen = (0, 0, 0);
    for path in &paths {
        let source = Source::read(path, decide::ErrorKind::Profile).unwrap();
        let en = decide::decide(&graph, &source, common::as_of()).unwrap().1;
        let zh = decide::decide(&graph_zh, &source, common::as_of())
            .unwrap()
            .1;
        let (en, zh) = (en.decision, zh.decision);
        let name = path.file_name().unwrap().to_string_lossy();
        assert_eq!(
            (&en.deployment, &en.offer, &en.scenario, &en.costs),
            (&zh.deployment, &zh.offer, &zh.scenario, &zh.costs),
            "{name}"
        );
        let warnings = |d: &decide::Decision| -> Vec<String> {
            d.warnings.iter().map(|w| w.id.clone()).collect()
        };
        let checklist = |d: &decide::Decision| -> Vec<String> {
            d.checklist.iter().map(|c| c.id.clone()).collect()
        };
        assert_eq!(warnings(&en), warnings(&zh), "{name}");
        assert_eq!(checklist(&en), checklist(&zh), "{name}");
        let mut check = |kind: &'static str, id: &str, what: &str, text: &str| {
            if !has_cjk(text) && !ENGLISH_ONLY.contains(&(kind, id)) {
                english.push(format!("{name}: {kind} `{id}` {what}: {text}"));
            }
        };
        for c in &zh.criteria {
            check("criterion", &c.id, "title", &c.title);
            check("criterion", &c.id, "reason", &c.reason);
            seen.0 += 1;
        }
        for w in &zh.warnings {
            check("warning", &w.id, "title", &w.title);
            check("warning", &w.id, "message", &w.message);
            seen.1 += 1;
        }
        for c in &zh.checklist {
            check("checklist", &c.id, "title", &c.title);
            check("checklist", &c.id, "text", &c.text);
            seen.2 += 1;
        }
    }
    assert!(
        english.is_empty(),
        "English in Chinese records:\n{}",
        english.join("\n")
    );
    // The examples exercise every kind of text.
    assert!(seen.0 > 0 && seen.1 > 0 && seen.2 > 0, "{seen:?}");
}
