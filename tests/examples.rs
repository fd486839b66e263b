//! Every example profile decides and renders; its memo and JSON record are snapshotted, and so
//! is its Chinese memo (`--lang zh`), all without the decision trace, as `decide` writes them by
//! default; one example is also snapshotted with its trace (`--trace`).
//!
//! One `glob!` in this file only (insta counts glob failures process-wide).

use crate::common;

use std::collections::BTreeSet;

use decide_engine::{Graph, Lang, Profile, Source};
use decide_tools::{Format, Memo};

/// The embedded policy compiled for `lang`, as `decide --lang` does.
fn graph_in(lang: Lang) -> Graph {
    Graph::compile_in(common::policy(), lang).expect("embedded rules compile")
}

#[test]
fn every_example_decides_and_renders() {
    let graph = common::graph();
    let graph_zh = graph_in(Lang::Zh);
    let memo = Memo::embedded().unwrap();
    insta::glob!("../examples", "*.yaml", |path| {
        let source = Source::read(path, decide_engine::ErrorKind::Profile).unwrap();
        let (profile, evaluation): (Profile, _) =
            decide_tools::decide(&graph, &source, common::as_of())
                .unwrap_or_else(|e| panic!("{}", e.render()));
        let md = memo
            .render(&graph, &profile, &evaluation, Format::Markdown)
            .unwrap();
        let json = memo
            .render(&graph, &profile, &evaluation, Format::Json)
            .unwrap();
        // Same input, same bytes.
        let again = decide_tools::decide(&graph, &source, common::as_of())
            .unwrap()
            .1;
        assert_eq!(
            json,
            memo.render(&graph, &profile, &again, Format::Json).unwrap()
        );
        let (profile_zh, zh) = decide_tools::decide(&graph_zh, &source, common::as_of())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let md_zh = memo
            .render(&graph_zh, &profile_zh, &zh, Format::Markdown)
            .unwrap();
        for text in [&md, &md_zh] {
            assert!(!text.contains("\n\n\n"), "a run of blank lines: {text}");
        }
        // A memo that cites "article §N" says which article that is and what §N covers.
        let cited = graph
            .policy()
            .meta
            .source
            .as_ref()
            .expect("the policy names its source");
        assert!(
            md.contains("article §") && md.contains(cited.get(Lang::En)),
            "{md}"
        );
        assert!(md_zh.contains(cited.get(Lang::Zh)), "{md_zh}");
        assert_snapshot!("memo", md);
        assert_snapshot!("json", json);
        assert_snapshot!("memo_zh", md_zh);
    });
}

/// One example with the decision trace (`decide --trace`), in snapshots of their own: its memo
/// with the appendix (English and Chinese) and its record with `trace`. The snapshots above are
/// without it, as `decide` writes by default.
#[test]
fn one_example_with_its_trace() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml");
    let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
    let memo = Memo::embedded().unwrap();
    for (graph, name) in [(common::graph(), "en"), (graph_in(Lang::Zh), "zh")] {
        let (profile, evaluation) =
            decide_tools::decide_with(&graph, &source, common::as_of(), decide_tools::Detail::FULL)
                .unwrap_or_else(|e| panic!("{}", e.render()));
        let md = memo
            .render(&graph, &profile, &evaluation, Format::Markdown)
            .unwrap();
        let json = memo
            .render(&graph, &profile, &evaluation, Format::Json)
            .unwrap();
        // The trace adds the appendix and `trace`, and changes nothing else.
        let (_, lean) = decide_tools::decide(&graph, &source, common::as_of()).unwrap();
        let lean_md = memo
            .render(&graph, &profile, &lean, Format::Markdown)
            .unwrap();
        assert!(md.starts_with(&lean_md), "{name}");
        assert!(md[lean_md.len()..].starts_with("\n## "), "{name}");
        let mut record: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(!record["trace"].as_array().unwrap().is_empty());
        record.as_object_mut().unwrap().remove("trace");
        let lean_json = memo.render(&graph, &profile, &lean, Format::Json).unwrap();
        assert_eq!(
            record,
            serde_json::from_str::<serde_json::Value>(&lean_json).unwrap()
        );
        if name == "en" {
            assert_snapshot!("pretrain-70b-job_memo_trace", md);
            assert_snapshot!("pretrain-70b-job_json_trace", json);
        } else {
            assert_snapshot!("pretrain-70b-job_memo_zh_trace", md);
        }
    }
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
        let source = Source::read(path, decide_engine::ErrorKind::Profile).unwrap();
        let en = decide_tools::decide(&graph, &source, common::as_of())
            .unwrap()
            .1;
        let zh = decide_tools::decide(&graph_zh, &source, common::as_of())
            .unwrap()
            .1;
        let (en, zh) = (en.decision, zh.decision);
        let name = path.file_name().unwrap().to_string_lossy();
        assert_eq!(
            (&en.deployment, &en.offer, &en.scenario, &en.costs),
            (&zh.deployment, &zh.offer, &zh.scenario, &zh.costs),
            "{name}"
        );
        let warnings = |d: &decide_engine::Decision| -> Vec<String> {
            d.warnings.iter().map(|w| w.id.clone()).collect()
        };
        let checklist = |d: &decide_engine::Decision| -> Vec<String> {
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

/// The English of every text the catalog writes in two languages with a different Chinese
/// (`{en, zh}`: an offer's title, region, accelerator name, ...), found anywhere in `value`.
fn english_of_two_language_texts(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    use serde_json::Value as J;
    match value {
        J::Object(m) if decide_engine::lang::is_words(value) => {
            if let (Some(J::String(en)), Some(J::String(zh))) = (m.get("en"), m.get("zh"))
                && en != zh
            {
                out.insert(en.clone());
            }
        }
        J::Object(m) => m
            .values()
            .for_each(|v| english_of_two_language_texts(v, out)),
        J::Array(items) => items
            .iter()
            .for_each(|v| english_of_two_language_texts(v, out)),
        _ => {}
    }
}

/// An offer's texts in English only that its English title has and its Chinese title
/// translates (such as the accelerator's name `Ascend 910B 64G` of `昇腾 910B 64G ×8（...）`);
/// codes (`container`, `ascend910b`) are not texts.
fn english_the_chinese_title_translates(
    value: &serde_json::Value,
    title: (&str, &str),
    out: &mut BTreeSet<String>,
) {
    use serde_json::Value as J;
    match value {
        J::String(text)
            if !is_code(text)
                && title.0.contains(text.as_str())
                && !title.1.contains(text.as_str()) =>
        {
            out.insert(text.clone());
        }
        J::Object(m) if !decide_engine::lang::is_words(value) => m
            .values()
            .for_each(|v| english_the_chinese_title_translates(v, title, out)),
        _ => {}
    }
}

/// Whether `text` is a code (lowercase letters, digits, `_` and `-`), not words.
fn is_code(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A Chinese memo names the catalog's offers in Chinese wherever it names them: no example's
/// Chinese memo, Markdown or HTML, checklist and warnings included, holds the English of a
/// catalog text that has its own Chinese, or an English-only text that the offer's Chinese
/// title translates (such as an accelerator's name in the checklist), once the profile's own
/// name (the user's words) is taken out.
#[test]
fn a_chinese_memo_says_the_catalogs_texts_in_chinese() {
    let policy = common::policy();
    let mut english = BTreeSet::new();
    for offer in &policy.offers {
        let fields = serde_json::Value::Object(offer.item.fields.clone());
        english_of_two_language_texts(&fields, &mut english);
        if let (Some(en), Some(zh)) = (
            fields["title"]["en"].as_str(),
            fields["title"]["zh"].as_str(),
        ) {
            let mut rest = offer.item.fields.clone();
            rest.remove("title");
            english_the_chinese_title_translates(
                &serde_json::Value::Object(rest),
                (en, zh),
                &mut english,
            );
        }
    }
    assert!(
        english.len() > 5,
        "the catalog's two-language texts: {english:?}"
    );
    let graph_zh = graph_in(Lang::Zh);
    let memo = Memo::embedded().unwrap();
    let mut found = Vec::new();
    for path in common::examples() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
        let (profile, zh) = decide_tools::decide(&graph_zh, &source, common::as_of()).unwrap();
        for format in [Format::Markdown, Format::Html] {
            let page = memo
                .render(&graph_zh, &profile, &zh, format)
                .unwrap()
                .replace(&profile.name, "");
            for text in english.iter().filter(|t| page.contains(t.as_str())) {
                found.push(format!("{name} ({format:?}): {text}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "English catalog texts in Chinese memos:\n{}",
        found.join("\n")
    );
}

/// What a text's code spans (between backticks) hold.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// A checklist's code spans hold commands, never words: in every example's checklist, in both
/// languages, no code span holds Chinese or what a catalog tool checks (`tools.network.what`),
/// and an item that names the recommended offer's network check gives each of its commands a
/// code span of its own.
#[test]
fn checklist_code_spans_hold_commands_only() {
    let policy = common::policy();
    let network = |id: &str| {
        let offer = policy.offers.iter().find(|o| o.item.id == id)?;
        offer.item.fields.get("tools")?.get("network").cloned()
    };
    let mut what = BTreeSet::new();
    for offer in &policy.offers {
        let words = &network(&offer.item.id).expect("every offer has tools.network")["what"];
        for lang in [Lang::En, Lang::Zh] {
            what.insert(
                decide_engine::lang::localize(words, lang)
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    let mut named = 0;
    for lang in [Lang::En, Lang::Zh] {
        let graph = graph_in(lang);
        for path in common::examples() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
            let decision = decide_tools::decide(&graph, &source, common::as_of())
                .unwrap()
                .1
                .decision;
            let commands: Vec<String> = network(&decision.offer)
                .and_then(|n| serde_json::from_value(n["commands"].clone()).ok())
                .unwrap_or_default();
            for item in &decision.checklist {
                let spans = code_spans(&item.text);
                for span in &spans {
                    assert!(
                        !has_cjk(span) && !what.iter().any(|w| span.contains(w.as_str())),
                        "{name} ({lang}): checklist `{}` has words in a code span: `{span}`",
                        item.id
                    );
                }
                if commands.iter().any(|c| item.text.contains(c.as_str())) {
                    named += 1;
                    for c in &commands {
                        assert!(
                            spans.contains(&c.as_str()),
                            "{name} ({lang}): `{c}` is not a code span of its own in {}",
                            item.text
                        );
                    }
                }
            }
        }
    }
    assert!(named > 0, "some example's checklist names a network check");
}

/// The memo's first part is for the signer: in every example, in both languages, it names each
/// offer by its title, never by its catalog id, and no warning by its rule id; it holds each
/// checklist item a signer gets in writing in full, and names each engineer's check, whose text
/// is in the appendix only.
#[test]
fn the_signers_part_speaks_in_titles_and_leaves_the_engineers_checks_to_the_appendix() {
    let policy = common::policy();
    let ids: Vec<&str> = policy.offer_ids().collect();
    let memo = Memo::embedded().unwrap();
    let mut engineer_items = 0;
    for lang in [Lang::En, Lang::Zh] {
        let graph = graph_in(lang);
        let stop = if lang == Lang::En { "." } else { "。" };
        for path in common::examples() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
            let (profile, evaluation) =
                decide_tools::decide(&graph, &source, common::as_of()).unwrap();
            let md = memo
                .render(&graph, &profile, &evaluation, Format::Markdown)
                .unwrap();
            // The appendix is the memo's second heading of the first level.
            let split = md[1..].find("\n# ").expect("the memo has an appendix") + 1;
            let (signer, appendix) = md.split_at(split);
            for id in &ids {
                assert!(
                    !signer.contains(id),
                    "{name} ({lang:?}): the signer's part names offer `{id}` by its id:\n{signer}"
                );
            }
            let decision = &evaluation.decision;
            for w in &decision.warnings {
                assert!(!signer.contains(&format!("`{}`", w.id)), "{name}: {}", w.id);
            }
            for c in &decision.checklist {
                let full = format!("**{}{stop}**", c.title);
                let part = serde_json::to_value(c.part).unwrap();
                if part == "engineer" {
                    engineer_items += 1;
                    assert!(!signer.contains(&full), "{name} ({lang:?}): {}", c.id);
                    assert!(
                        signer.contains(&format!("**{}**", c.title)),
                        "{name} ({lang:?}): the signer's part does not name {}",
                        c.id
                    );
                    assert!(appendix.contains(&full), "{name} ({lang:?}): {}", c.id);
                } else {
                    assert_eq!(part, "signer");
                    assert!(signer.contains(&full), "{name} ({lang:?}): {}", c.id);
                    assert!(!appendix.contains(&full), "{name} ({lang:?}): {}", c.id);
                }
            }
        }
    }
    assert!(engineer_items > 0, "some example has an engineer's check");
}

/// The job chart shows every option that can run the job within the profile's constraints: in
/// every example with a job, each option considered that holds the workload (with offload or
/// without), has the links it needs, meets the domestic requirement and the budget, and has an
/// estimate of the job's hours is a point of the chart, at its count.
#[test]
fn the_job_chart_shows_every_option_that_meets_the_constraints() {
    let graph = common::graph();
    let mut checked = 0;
    for path in common::examples() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
        let evaluation = decide_tools::decide(&graph, &source, common::as_of())
            .unwrap()
            .1;
        let Some(points) = evaluation.values.get("trade_chart_points") else {
            continue;
        };
        let labels: Vec<String> = decide_engine::decision::to_json(points)
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| p["label"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let record = serde_json::to_value(&evaluation.decision).unwrap();
        for a in record["alternatives"].as_array().into_iter().flatten() {
            let fits = a["memory_fits"] == true || a["memory_fits_with_offload"] == true;
            let allowed = a["interconnect_fits"] == true
                && a["domestic_fits"] == true
                && a["within_budget"] == true;
            if a["job_hours"].is_null() || !fits || !allowed || a.get("mixed").is_some() {
                continue;
            }
            let offer = a["offer"].as_str().unwrap();
            let title = graph
                .policy()
                .offers
                .iter()
                .find(|o| o.item.id == offer)
                .map(|o| {
                    decide_engine::lang::localize(&o.item.fields["title"], Lang::En)
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .unwrap();
            let units = a["units"].as_u64().unwrap();
            let named = if units > 1 {
                format!("{units} × {title}: ")
            } else {
                format!("{title}: ")
            };
            assert!(
                labels.iter().any(|l| l.starts_with(&named)),
                "{name}: the job chart leaves out {named}(points: {labels:#?})"
            );
            checked += 1;
        }
    }
    assert!(checked > 5, "options on job charts checked: {checked}");
}
