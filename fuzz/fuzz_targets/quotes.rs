//! Quote sheets: arbitrary bytes as a CSV quote sheet of the embedded policy.
//!
//! The first input byte chooses where the sheet goes: an even byte replaces the embedded
//! sheet of 2026-09-04 (the listing every decision prices with), an odd byte adds it beside
//! the embedded sheets. The policy is loaded (every bad row rendered as the CLI prints it),
//! checked for quotes dated after 2026-09-04 as `decide quotes check` does, and, when it loads,
//! priced at three dates (before, at and after the listing), listed as `decide offers` does and
//! used to decide a few example profiles in both formats. Any error is fine; a panic, hang or
//! OOM is a bug.
#![no_main]

// The rule-file targets' helpers; this target uses only the fixed inputs of them.
#[path = "common.rs"]
#[allow(dead_code)]
mod common;

use libfuzzer_sys::fuzz_target;

use decide_engine::policy::{PolicyOrigin, quotes};
use decide_engine::{Graph, Policy, Source};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if text.len() as u64 > decide_engine::source::MAX_FILE_BYTES {
        return;
    }
    let mut sources: Vec<Source> = common::EMBEDDED.clone();
    let sheet = Source::new("rules/quotes/fuzz.csv", text);
    for s in common::SHEETS.iter() {
        if selector % 2 == 0 && s.name.ends_with("2026-09-04-marketplace.csv") {
            continue;
        }
        sources.push(s.clone());
    }
    sources.push(sheet);
    let fuzzed = sources.len() - 1;
    let (policy, errors) = Policy::from_sources_lenient(&sources, PolicyOrigin::Embedded);
    for e in &errors {
        let _ = e.render();
    }
    let Some(policy) = policy else {
        return;
    };
    let listing_date = *common::AS_OF;
    for e in quotes::in_the_future(&sources, &policy.quotes, &[fuzzed], listing_date) {
        let _ = e.render();
    }
    if !errors.is_empty() {
        return;
    }
    for date in ["2026-07-15", "2026-09-04", "2027-01-01"] {
        let date: jiff::civil::Date = date.parse().expect("a valid date");
        let priced = policy.at(date);
        let listing = decide_tools::catalog::listing(&priced, date);
        let _ = decide_tools::catalog::markdown(&listing);
        let graph = match Graph::compile(priced) {
            Ok(graph) => graph,
            Err(e) => {
                let _ = e.render();
                continue;
            }
        };
        for profile in common::PROFILES.iter().take(3) {
            match decide_tools::decide(&graph, profile, date) {
                Ok((profile, evaluation)) => {
                    for format in [
                        decide_tools::Format::Markdown,
                        decide_tools::Format::Html,
                        decide_tools::Format::Json,
                    ] {
                        if let Err(e) = common::MEMO.render(&graph, &profile, &evaluation, format) {
                            let _ = e.render();
                        }
                    }
                }
                Err(e) => {
                    let _ = e.render();
                }
            }
        }
    }
});
