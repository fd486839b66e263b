//! `decide_lang`: the rule language of `decide`. An expression's text cut into tokens ([`lexer`]), parsed into a syntax
//! tree with the place of every part ([`parser`], [`ast`]), its calls checked against what the
//! language offers ([`vocabulary`]), typed ([`types`]), then compiled and evaluated against an
//! evaluation's slots ([`code`]). What an expression gives is the language's own [`Value`]
//! ([`value`]: one equality, order, `Display` and serialisation).
//!
//! The surface is Jinja's expression syntax, so a policy author learns one notation for
//! conditions, texts and memos; the grammar is ours, and what a rule does not need (`**`,
//! chained comparisons, tuples, slices, keyword arguments, unknown filters) is refused when the
//! rules load, with the place it is written. minijinja renders the memo and the rules' prose
//! templates ([`text`] reads their tags with [`template`] for a fast form), and is the reference
//! the evaluator is tested against (`tests/interp.rs`); it does not evaluate rule expressions,
//! and it sees the language's values only through one adapter ([`jinja`]).

pub mod ast;
pub mod code;
pub mod cover;
mod functions;
pub mod jinja;
pub mod lexer;
pub mod limits;
pub mod measure;
pub mod message;
pub mod numbers;
pub mod parser;
pub mod template;
pub mod text;
pub mod types;
pub mod unary;
pub mod value;
pub mod vocabulary;

use serde_saphyr::Location;

pub(crate) use functions::{brief, cny, days_between, hours, num, pct, plural};
pub use functions::{cell_filter, flow_text, group_thousands, md_escape, md_filter, table_cell};
pub use jinja::{FUEL, environment};

pub use code::Slots;
pub use value::Value;

/// A compiled expression with where it was written.
#[derive(Debug)]
pub struct Expr<'a> {
    /// The expression compiled: what it means.
    pub code: code::Code,
    /// What it gives, as far as the rules declare the names it reads ([`types`]).
    pub ty: types::Type,
    /// The variables the expression reads (the roots of the names in its tree).
    pub names: Box<[String]>,
    pub text: &'a str,
    pub file: usize,
    pub location: Location,
}

/// [`environment`], built once per process: for what minijinja is asked outside a graph's own
/// environment (the names a text beyond the fast form reads; the reference expressions of
/// `decide_tools::check::reference`).
pub fn shared_environment() -> &'static minijinja::Environment<'static> {
    static ENVIRONMENT: std::sync::OnceLock<minijinja::Environment<'static>> =
        std::sync::OnceLock::new();
    ENVIRONMENT.get_or_init(environment)
}
