//! What the rule-file targets share: turning fuzz input into rule files, and fixed inputs.
//!
//! The first input byte chooses the mode: `k = (byte - '0') % (N + 1)` with `N` the number of
//! embedded rule files (13: catalog, checklist, criteria, facts, invariants, memory, plans,
//! policy, questions, scenarios, sensitivity, training, warnings, in name order), so ASCII digits
//! and the characters after them (`:` is 10, `=` is 13) select modes directly. The seeds in
//! `seeds/rules/` are named `replace-K-FILE.yaml` and `split-all.yaml` after the mode they pick.
//! - `k < N`: the rest of the input replaces embedded rule file `k`, so the rest of the policy
//!   is valid and the fuzzer gets past loading into compiling, analysing and evaluating;
//! - `k == N`: the rest is the whole policy, split into files on lines `---FILE---`.
//!
//! Inputs that are not UTF-8 are skipped: `Source::read` refuses them before parsing.

use std::sync::LazyLock;

use decide_engine::{Graph, Policy, Source};
use decide_tools::{Format, Memo};

/// The line that separates files in the split mode.
pub const SEPARATOR: &str = "\n---FILE---\n";

/// The embedded rule files (YAML), without the quote sheets: the modes below number these.
pub static EMBEDDED: LazyLock<Vec<Source>> = LazyLock::new(|| {
    Policy::embedded_sources()
        .into_iter()
        .filter(|s| !decide_engine::policy::is_sheet(s))
        .collect()
});
/// The embedded quote sheets, added to every policy an input stands for (the `quotes` target
/// fuzzes the sheets themselves).
pub static SHEETS: LazyLock<Vec<Source>> = LazyLock::new(|| {
    Policy::embedded_sources()
        .into_iter()
        .filter(decide_engine::policy::is_sheet)
        .collect()
});
pub static MEMO: LazyLock<Memo> = LazyLock::new(|| Memo::embedded().expect("embedded templates"));
pub static AS_OF: LazyLock<jiff::civil::Date> =
    LazyLock::new(|| "2026-09-04".parse().expect("a valid date"));

/// Example profiles decided with every policy that loads (bare metal, container, domestic,
/// a job with wall hours, a proposal, a budget).
pub static PROFILES: LazyLock<Vec<Source>> = LazyLock::new(|| {
    [
        (
            "examples/lora-7b-4090.yaml",
            include_str!("../../examples/lora-7b-4090.yaml"),
        ),
        (
            "examples/container-light-inference.yaml",
            include_str!("../../examples/container-light-inference.yaml"),
        ),
        (
            "examples/domestic-70b-lora-910b.yaml",
            include_str!("../../examples/domestic-70b-lora-910b.yaml"),
        ),
        (
            "examples/pretrain-70b-job.yaml",
            include_str!("../../examples/pretrain-70b-job.yaml"),
        ),
        (
            "examples/mistake-7b-on-h100.yaml",
            include_str!("../../examples/mistake-7b-on-h100.yaml"),
        ),
        (
            "examples/over-budget-multinode.yaml",
            include_str!("../../examples/over-budget-multinode.yaml"),
        ),
    ]
    .into_iter()
    .map(|(name, text)| Source::new(name, text))
    .collect()
});

/// The rule files an input stands for, or `None` to skip it.
pub fn sources(data: &[u8]) -> Option<Vec<Source>> {
    let (&selector, rest) = data.split_first()?;
    let text = std::str::from_utf8(rest).ok()?;
    let n = EMBEDDED.len();
    // ASCII digits select modes 0..=9 directly, so the seeds read `0catalog...`, `1...`.
    let mode = usize::from(selector.wrapping_sub(b'0')) % (n + 1);
    let mut sources: Vec<Source> = if mode < n {
        let mut sources = EMBEDDED.clone();
        sources[mode] = Source::new(sources[mode].name.clone(), text);
        sources
    } else {
        text.split(SEPARATOR)
            .enumerate()
            .map(|(i, part)| Source::new(format!("rules/fuzz-{i}.yaml"), part))
            .collect()
    };
    // The prices: the embedded quote sheets.
    sources.extend(SHEETS.iter().cloned());
    // Same limit as `Source::read`.
    let too_big = sources
        .iter()
        .any(|s| s.text.len() as u64 > decide_engine::source::MAX_FILE_BYTES);
    (!too_big).then_some(sources)
}

/// Decides `profile` with `graph` and renders both formats, as `decide PROFILE` does.
pub fn decide_and_render(graph: &Graph, profile: &Source) {
    match decide_tools::decide(graph, profile, *AS_OF) {
        Ok((profile, evaluation)) => {
            for format in [Format::Markdown, Format::Html, Format::Json] {
                match MEMO.render(graph, &profile, &evaluation, format) {
                    Ok(out) => assert!(out.ends_with('\n'), "output ends with a newline"),
                    Err(e) => {
                        let _ = e.render();
                    }
                }
            }
        }
        Err(e) => {
            let _ = e.render();
        }
    }
}

/// The value of `result`, or `None` with its error rendered as the CLI prints it.
#[allow(dead_code)] // every target includes this module; not every one renders an error
pub fn or_render<T>(result: decide_engine::Result<T>) -> Option<T> {
    result.map_err(|e| e.render()).ok()
}
