//! Profiles: arbitrary bytes through what `decide PROFILE` does, against the embedded policy.
//!
//! The input is read like a profile file (the CLI refuses invalid UTF-8 before parsing, so such
//! inputs are skipped), decided at a fixed date and rendered in both formats. Errors are
//! rendered too, as the CLI prints them. Any error is fine; a panic, hang or OOM is a bug.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

use decide_engine::{Graph, Source};
use decide_tools::{Format, Memo};

static GRAPH: LazyLock<Graph> = LazyLock::new(|| {
    Graph::compile(decide_engine::Policy::embedded().expect("embedded policy loads"))
        .expect("embedded policy compiles")
});
static MEMO: LazyLock<Memo> = LazyLock::new(|| Memo::embedded().expect("embedded templates"));
static AS_OF: LazyLock<jiff::civil::Date> =
    LazyLock::new(|| "2026-09-04".parse().expect("a valid date"));

fuzz_target!(|data: &[u8]| {
    // Same limit as `Source::read` (the 1 MiB refusal happens before parsing).
    if data.len() as u64 > decide_engine::source::MAX_FILE_BYTES {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = Source::new("profile.yaml", text);
    match decide_tools::decide(&GRAPH, &source, *AS_OF) {
        Ok((profile, evaluation)) => {
            for format in [Format::Markdown, Format::Html, Format::Json] {
                match MEMO.render(&GRAPH, &profile, &evaluation, format) {
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
});
