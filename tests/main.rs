//! The integration tests, one binary (as `just` keeps them): a module per subject, each a file
//! beside this one, sharing `common/`. One binary links once and lets the harness spread every
//! test over the cores, where 27 binaries each linked the engine and ran one after another.
//! The browser test (`browser.rs`) stays a binary of its own: it runs its own harness, so that
//! a test this machine cannot run shows as ignored, with what to install.

mod common;

/// `insta::assert_snapshot!` with the policy revision masked: a snapshot holds what a change
/// to the rules does to the output, not the hash every change to the rules moves.
macro_rules! assert_snapshot {
    ($($arg:tt)*) => {
        insta::with_settings!({ filters => common::REVISION_FILTERS.to_vec() }, {
            insta::assert_snapshot!($($arg)*);
        })
    };
}

mod architecture;
mod audit;
mod bad_input;
mod batch;
mod bounds;
mod cli;
mod diff;
mod docs;
mod examples;
mod graph;
mod html;
mod init;
mod interp;
mod invariants;
mod names;
mod pipes;
mod policy_test;
mod properties;
mod proposal;
mod quotes;
mod rules;
mod schema;
mod sensitivity;
mod serve;
mod serving;
mod signals;
mod templates;
mod units;
mod validate;
mod zen_peer;
