//! Rule files: arbitrary bytes through what `decide PROFILE --rules DIR` does.
//!
//! The input becomes rule files (see `common.rs`: replace one embedded file, or a whole
//! split policy), which are loaded, compiled and, when they load cleanly, used to decide and
//! render a few fixed example profiles. Every error is rendered, as the CLI prints it. Any error
//! is fine; a panic, hang or OOM is a bug. `decide validate`'s analysis, which costs about
//! 12,000 evaluations per policy, has its own target (`validate`) so this one stays fast.
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
    let policy = match Policy::from_sources(&sources, PolicyOrigin::Embedded) {
        Ok(policy) => policy,
        Err(e) => {
            let _ = e.render();
            return;
        }
    };
    let graph = match Graph::compile(policy) {
        Ok(graph) => graph,
        Err(e) => {
            let _ = e.render();
            return;
        }
    };
    for profile in common::PROFILES.iter() {
        common::decide_and_render(&graph, profile);
    }
});
