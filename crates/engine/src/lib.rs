//! `decide_engine`: the rules-based decision engine of `decide`, procurement of GPU compute.
//!
//! The data flow is one pass, left to right, and the modules are named after it:
//!
//! ```text
//! profile.yaml ─► profile::Profile ─────────────┐
//! rules/*.yaml ─► policy::Policy ─► graph::Graph ┴► eval (Evaluation/Decision)
//! ```
//!
//! The rules are a language of their own, a crate of its own ([`decide_lang`]: lexer, parser,
//! typechecker, compiler and the evaluator); `policy` reads the rule files and quote sheets as
//! written, `graph` compiles them into one graph of typed nodes, `eval` runs it over a profile
//! and `decision` is the record it returns.
//!
//! The engine knows node kinds (fact, criterion, table, select, warning, checklist) and nothing
//! about GPUs: every number, offer and sentence of the policy is in `rules/` and `templates/`.
//! What is built on it (the memo, what would change the answer, batches, the policy owner's
//! toolkit) is the `decide-tools` crate, and the command line is the `decide` binary's: this
//! crate depends on neither, so an arrow up into them does not compile.
//! `tests/architecture.rs` keeps the modules inside it free of import cycles and backward arrows.

// `println!` and `eprintln!` panic when the reader of a pipe goes away: the library writes to
// no terminal, and the program's writes (`src/cli/stdio.rs`, in the binary) end quietly instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod canonical;
pub mod decision;
pub mod error;
pub mod eval;
pub mod graph;
pub mod kind;
pub mod lang;
pub mod places;
pub mod policy;
pub mod profile;
pub mod revision;
pub mod source;
pub mod today;

pub use decision::Decision;
pub use error::{Error, ErrorKind, Fault, Result};
pub use eval::Evaluation;
pub use graph::Graph;
pub use lang::Lang;
pub use policy::Policy;
pub use profile::{Profile, Syntax};
pub use source::Source;
