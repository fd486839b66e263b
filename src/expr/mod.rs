//! The expression language behind one facade: a rule expression compiled once, evaluated by the
//! fast path where it has a form there and by minijinja otherwise.
//!
//! Rules are written in minijinja's expression language, so a policy author learns one language
//! for conditions, texts and memos. Compiling an expression gives an [`Expr`]: minijinja's own
//! compiled form (the reference meaning, and the fallback) plus, when every part of it is
//! modelled, a fast form ([`fast`]) that reads evaluation slots directly. An expression without a
//! fast form is slower, never wrong: `decide validate` lists such expressions as notes and runs
//! both paths over generated profiles to find any disagreement.

pub(crate) mod fast;
mod functions;
pub(crate) mod numbers;
pub(crate) mod objects;

use std::collections::HashMap;

use minijinja::Expression;
use serde_saphyr::Location;

pub use functions::{FUNCTIONS, environment, flow_text, group_thousands, md_escape, table_cell};
pub(crate) use functions::{brief, cny, days_between, hours, num, pct, plural};

/// Names expressions can look up, each with its slot in an evaluation: roots first, then nodes.
#[derive(Debug)]
pub(crate) struct Slots {
    pub index: HashMap<String, usize>,
}

/// A compiled expression with where it was written.
#[derive(Debug)]
pub(crate) struct Expr<'a> {
    /// minijinja's compiled form: the meaning of the expression, and the fallback.
    pub compiled: Expression<'a, 'static>,
    /// The same expression for the fast path, when it models every part of it.
    pub fast: Option<fast::Fast>,
    pub text: &'a str,
    pub file: usize,
    pub location: Location,
}
