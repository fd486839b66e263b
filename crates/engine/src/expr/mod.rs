//! The rule language: an expression's text cut into tokens ([`lexer`]), parsed into a syntax
//! tree with the place of every part ([`parser`], [`ast`]), its calls checked against what the
//! language offers ([`vocabulary`]), then compiled and evaluated against an evaluation's slots
//! ([`fast`]).
//!
//! The surface is Jinja's expression syntax, so a policy author learns one notation for
//! conditions, texts and memos; the grammar is ours, and what a rule does not need (`**`,
//! chained comparisons, tuples, slices, keyword arguments, unknown filters) is refused when the
//! rules load, with the place it is written. minijinja renders the memo and the rules' prose
//! templates ([`text`] reads their tags with [`template`] for a fast form), and is the reference
//! the evaluator is tested against: where evaluation meets an error or an undefined value, the
//! expression's minijinja form answers, with minijinja's words.

pub mod ast;
pub(crate) mod fast;
mod functions;
pub mod lexer;
pub mod limits;
pub(crate) mod numbers;
pub(crate) mod objects;
pub mod parser;
pub(crate) mod template;
pub(crate) mod text;
pub mod types;
pub mod unary;
pub mod vocabulary;

use std::collections::HashMap;
use std::sync::OnceLock;

use minijinja::{Environment, Expression};
use serde_saphyr::Location;

pub use functions::{
    FUEL, FUNCTIONS, environment, flow_text, group_thousands, md_escape, table_cell,
};
pub(crate) use functions::{brief, cny, days_between, hours, num, pct, plural};

/// Names expressions can look up, each with its slot in an evaluation: roots first, then nodes.
#[derive(Debug)]
pub(crate) struct Slots {
    pub index: HashMap<String, usize>,
}

/// A compiled expression with where it was written.
#[derive(Debug)]
pub(crate) struct Expr<'a> {
    /// minijinja's compiled form: the meaning of the expression, and the fallback; compiled
    /// the first time it is needed ([`Expr::compiled`]), since the fast path answers most.
    compiled: OnceLock<Expression<'static, 'static>>,
    /// The same expression for the fast path, when it models every part of it.
    pub fast: Option<fast::Fast>,
    /// What it gives, as far as the rules declare the names it reads ([`types`]).
    pub ty: types::Type,
    /// The variables the expression reads (minijinja's `undeclared_variables(false)`).
    pub names: Box<[String]>,
    pub text: &'a str,
    pub file: usize,
    pub location: Location,
}

impl<'a> Expr<'a> {
    /// An expression `text` (already parsed without error, so minijinja compiles it too), with
    /// its fast form and the variables it reads.
    pub(crate) fn new(
        text: &'a str,
        fast: Option<fast::Fast>,
        ty: types::Type,
        names: Box<[String]>,
        file: usize,
        location: Location,
    ) -> Self {
        Expr {
            compiled: OnceLock::new(),
            fast,
            ty,
            names,
            text,
            file,
            location,
        }
    }

    /// minijinja's compiled form, compiled on first use in [`expression_environment`]. (Its
    /// parser accepted the text when the graph was compiled, and compiling after parsing cannot
    /// fail; an error is passed on.)
    pub(crate) fn compiled(&self) -> Result<&Expression<'static, 'static>, minijinja::Error> {
        if let Some(compiled) = self.compiled.get() {
            return Ok(compiled);
        }
        let compiled = expression_environment().compile_expression_owned(self.text.to_owned())?;
        Ok(self.compiled.get_or_init(|| compiled))
    }
}

/// The environment rule expressions are compiled in: [`environment`], once per process. A
/// graph's own environment is the same plus its text templates, which no expression can
/// reach, so an expression means the same in both.
fn expression_environment() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(environment)
}
