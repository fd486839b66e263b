//! The number literals of expressions, read with the rule language's tokenizer: the constants
//! the rules write, which `decide validate` and the sensitivity analysis try values around.

use std::collections::BTreeSet;

use super::lexer::{Token, tokens};

/// Every integer and decimal literal in `texts`, read with the rule language's tokenizer (so
/// that digits inside strings and names are not mistaken for numbers).
pub fn numeric_constants(texts: &[&str]) -> BTreeSet<OrderedF64> {
    let mut out = BTreeSet::new();
    for text in texts {
        for token in tokens(text).flatten() {
            match token.0 {
                #[allow(clippy::cast_precision_loss)] // policy constants are small
                Token::Int(i) => {
                    out.insert(OrderedF64(i as f64));
                }
                Token::Float(f) if f.is_finite() => {
                    out.insert(OrderedF64(f));
                }
                _ => {}
            }
        }
    }
    out
}

/// A finite float with a total order, for sets of constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderedF64(pub f64);
impl Eq for OrderedF64 {}
impl PartialOrd for OrderedF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrderedF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
