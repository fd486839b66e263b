//! Rule files: arbitrary bytes through what `decide validate --rules DIR` does.
//!
//! The input becomes rule files (see `common.rs`), which are loaded leniently (every fault at
//! once), compiled even when loading found faults, and then analysed with every `validate`
//! check, the decision-table analysis included. Every error and finding is rendered. Any
//! error is fine; a panic, hang or OOM is a bug. Each input that compiles costs the table
//! analysis (thousands of evaluations), so this target is slow by nature.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

use decide_engine::policy::PolicyOrigin;
use decide_engine::{Graph, Policy};

fuzz_target!(|data: &[u8]| {
    let Some(sources) = common::sources(data) else {
        return;
    };
    let (policy, errors) = Policy::from_sources_lenient(&sources, PolicyOrigin::Embedded);
    for e in &errors {
        let _ = e.render();
    }
    let Some(policy) = policy else {
        return;
    };
    let graph = match Graph::compile(policy) {
        Ok(graph) => graph,
        Err(e) => {
            let _ = e.render();
            return;
        }
    };
    // No witnesses: a fuzzed folder has no test cases to prove a table row alive.
    let report = decide_tools::check::check(&graph, *common::AS_OF, &[]);
    for finding in report.all_findings() {
        let _ = finding.render();
    }
    if errors.is_empty() {
        common::decide_and_render(&graph, &common::PROFILES[0]);
    }
});
