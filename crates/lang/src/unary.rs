//! Unary tests: a decision-table cell (`-`, `'a', 'b'`, `< 10`, `[7..10)`, `!= 'x'`, `not
//! none`) read with the rule language's lexer, typed against its input, and tested against the
//! input's value. A cell that is none of these is an expression where `$` is the input.

use std::ops::Range;

use crate::value::{Kind, Value};

use super::ast::Lit;
use super::lexer::SyntaxError;
use super::lexer::{Token, tokenize};
use super::types::Type;

/// What a cell tests its input for.
#[derive(Debug, Clone, PartialEq)]
pub enum UnaryTest {
    /// `-` or no cell: any value.
    Any,
    /// One literal, or several separated by commas: equal to one of them.
    OneOf(Vec<Lit>),
    /// `!= literal`: anything but it (none included, unless it is none).
    Not(Lit),
    /// `not none`.
    NotNone,
    /// `< 10`, `>= 7`, `[7..10)`: a number in the interval (never none or text).
    Range(Interval),
}

/// One end of an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalEnd {
    pub at: f64,
    /// The end itself is in the interval.
    pub closed: bool,
}

/// Numbers between two ends; an end left out is unbounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: Option<IntervalEnd>,
    pub high: Option<IntervalEnd>,
}

impl Interval {
    /// Whether `x` is in the interval.
    #[must_use]
    #[allow(clippy::float_cmp)] // an end is a literal of the rules, met exactly
    pub fn contains(&self, x: f64) -> bool {
        let above = self.low.is_none_or(|l| x > l.at || (l.closed && x == l.at));
        let below = self
            .high
            .is_none_or(|h| x < h.at || (h.closed && x == h.at));
        above && below
    }
}

/// What is valid in a cell, for error messages.
pub const VALID: &str = "a cell is `-` (any value), a literal (`'inference'`, `7`, `true`, `none`), literals separated by commas (`'pretrain', 'full_finetune'`), `< 10`, `<= 10`, `> 7`, `>= 7`, `!= 'x'`, an interval (`[7..10]`, `(7..10]`, `[7..10)`), `not none`, or an expression where `$` is the input (`$ > other_fact`)";

/// The name a cell's expression reads its input by (`$` as written).
pub const INPUT_NAME: &str = "_";

/// Reads a cell: its unary test, `None` when it is an expression (to compile as one), or an
/// error located in the text where it starts like a unary test but is not one.
///
/// # Errors
/// A comparison with something other than a number, `!=` with something other than a
/// literal, or an interval that is not `[a..b]` with number ends.
pub fn parse(text: &str) -> Result<Option<UnaryTest>, SyntaxError> {
    let trimmed = text.trim();
    let offset = text.len() - text.trim_start().len();
    if trimmed.is_empty() || trimmed == "-" {
        return Ok(Some(UnaryTest::Any));
    }
    if (trimmed.starts_with('[') || trimmed.starts_with('(')) && trimmed.contains("..") {
        return interval(trimmed, offset).map(|i| Some(UnaryTest::Range(i)));
    }
    let Ok(tokens) = tokenize(text) else {
        return Ok(None);
    };
    let whole = offset..offset + trimmed.len();
    match tokens.as_slice() {
        [(Token::Ident("not"), _), (Token::Ident("none"), _)] => Ok(Some(UnaryTest::NotNone)),
        [(op @ (Token::Lt | Token::Lte | Token::Gt | Token::Gte), span), rest @ ..] => {
            let Some(at) = number(rest) else {
                return Err(SyntaxError {
                    message: format!(
                        "`{}` in a cell compares the input with one number",
                        &text[span.clone()]
                    ),
                    span: span.end.min(whole.end)..whole.end,
                    help: Some(
                        "write a number after it (`< 10`), or an expression with `$` for the input (`$ < other_fact`)"
                            .to_owned(),
                    ),
                });
            };
            let end = |closed| Some(IntervalEnd { at, closed });
            let interval = match op {
                Token::Lt => Interval { low: None, high: end(false) },
                Token::Lte => Interval { low: None, high: end(true) },
                Token::Gt => Interval { low: end(false), high: None },
                _ => Interval { low: end(true), high: None },
            };
            Ok(Some(UnaryTest::Range(interval)))
        }
        [(Token::Ne, span), rest @ ..] => match literal(rest) {
            Some(lit) => Ok(Some(UnaryTest::Not(lit))),
            None => Err(SyntaxError {
                message: "`!=` in a cell compares the input with one literal".to_owned(),
                span: span.end.min(whole.end)..whole.end,
                help: Some(
                    "write a literal after it (`!= 'inference'`, `!= 0`, `!= none`), or an expression with `$` (`$ != other_fact`)"
                        .to_owned(),
                ),
            }),
        },
        tokens => {
            let mut lits = Vec::new();
            for group in tokens.split(|(t, _)| *t == Token::Comma) {
                match literal(group) {
                    Some(lit) => lits.push(lit),
                    None => return Ok(None),
                }
            }
            Ok(Some(UnaryTest::OneOf(lits)))
        }
    }
}

/// `[a..b]`, `(a..b]`, `[a..b)`, `(a..b)` at `offset` in the cell.
fn interval(text: &str, offset: usize) -> Result<Interval, SyntaxError> {
    let fail = |message: String, span: Range<usize>| {
        SyntaxError {
        message,
        span: offset + span.start..offset + span.end,
        help: Some(
            "an interval is `[7..10]` (both ends in), `(7..10]`, `[7..10)` or `(7..10)`, its ends numbers"
                .to_owned(),
        ),
    }
    };
    let open_low = text.starts_with('(');
    let last = text.len() - 1;
    let closed_high = match text.as_bytes()[last] {
        b']' => true,
        b')' => false,
        _ => {
            return Err(fail(
                "an interval ends with `]` or `)`".to_owned(),
                last..text.len(),
            ));
        }
    };
    let inner = &text[1..last];
    let dots = inner.find("..").unwrap_or(0);
    let end = |part: &str, from: usize| -> Result<f64, SyntaxError> {
        let tokens = tokenize(part).ok();
        tokens.as_deref().and_then(number).ok_or_else(|| {
            let lead = part.len() - part.trim_start().len();
            let span = if part.trim().is_empty() {
                from..from + part.len().max(1)
            } else {
                from + lead..from + lead + part.trim().len()
            };
            fail(
                format!(
                    "`{}` is not a number: the ends of an interval are numbers",
                    part.trim()
                ),
                span,
            )
        })
    };
    let low = end(&inner[..dots], 1)?;
    let high = end(&inner[dots + 2..], 1 + dots + 2)?;
    if low > high {
        return Err(fail(
            format!("the interval is empty: {low} is above {high}"),
            0..text.len(),
        ));
    }
    Ok(Interval {
        low: Some(IntervalEnd {
            at: low,
            closed: !open_low,
        }),
        high: Some(IntervalEnd {
            at: high,
            closed: closed_high,
        }),
    })
}

/// A number written as tokens (`7`, `-0.5`).
fn number(tokens: &[(Token<'_>, Range<usize>)]) -> Option<f64> {
    match literal(tokens)? {
        Lit::Int(i) => Some(i as f64),
        Lit::Float(f) => Some(f),
        _ => None,
    }
}

/// A literal written as tokens: a number (with a sign), a string, `true`, `false` or `none`.
fn literal(tokens: &[(Token<'_>, Range<usize>)]) -> Option<Lit> {
    match tokens {
        [(Token::Int(i), _)] => Some(Lit::Int(*i)),
        [(Token::Float(f), _)] => Some(Lit::Float(*f)),
        [(Token::Minus, _), (Token::Int(i), _)] => Some(Lit::Int(-*i)),
        [(Token::Minus, _), (Token::Float(f), _)] => Some(Lit::Float(-*f)),
        [(Token::Str(s), _)] => Some(Lit::Str(s.clone())),
        [(Token::Ident("true"), _)] => Some(Lit::Bool(true)),
        [(Token::Ident("false"), _)] => Some(Lit::Bool(false)),
        [(Token::Ident("none"), _)] => Some(Lit::None),
        _ => None,
    }
}

/// Why `test` can never hold for an input of type `input` (a number test on a text input, a
/// text literal for a number), or `None` when it can.
#[must_use]
pub fn type_problem(test: &UnaryTest, input: &Type) -> Option<String> {
    let fits = |lit: &Lit| match (lit, input) {
        (Lit::None, _) | (_, Type::Any) => true,
        (Lit::Bool(_), t) => *t == Type::Bool,
        (Lit::Int(_) | Lit::Float(_), t) => t.is_number_or_none(),
        (Lit::Str(_), t) => *t == Type::Text,
    };
    match test {
        UnaryTest::Any | UnaryTest::NotNone => None,
        UnaryTest::Range(_) => (*input != Type::Any && !input.is_number_or_none())
            .then(|| format!("a number test on an input that gives {}", input.name())),
        UnaryTest::OneOf(lits) => lits
            .iter()
            .find(|l| !fits(l))
            .map(|l| format!("{} on an input that gives {}", describe(l), input.name())),
        UnaryTest::Not(l) => {
            (!fits(l)).then(|| format!("{} on an input that gives {}", describe(l), input.name()))
        }
    }
}

/// How an error names a literal.
#[must_use]
pub fn describe(lit: &Lit) -> String {
    match lit {
        Lit::None => "none".to_owned(),
        Lit::Bool(b) => format!("the literal {b}"),
        Lit::Int(i) => format!("the number {i}"),
        Lit::Float(f) => format!("the number {f}"),
        Lit::Str(s) => format!("the text '{s}'"),
    }
}

/// A literal as the text a cell writes it (`'inference'`, `7`, `none`).
#[must_use]
pub fn written(lit: &Lit) -> String {
    match lit {
        Lit::None => "none".to_owned(),
        Lit::Bool(b) => b.to_string(),
        Lit::Int(i) => i.to_string(),
        Lit::Float(f) => f.to_string(),
        Lit::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
    }
}

/// Whether `value` equals `lit` as the rule language's `==` has it for these values: none
/// (or undefined) for `none`, a number of the same value, the same text, the same boolean.
#[must_use]
pub fn equals(lit: &Lit, value: &Value) -> bool {
    match lit {
        Lit::None => value.is_none() || value.is_undefined(),
        Lit::Bool(b) => value.kind() == Kind::Bool && value.is_true() == *b,
        Lit::Int(i) => value.as_number() == Some(*i as f64),
        Lit::Float(f) => value.as_number() == Some(*f),
        Lit::Str(s) => value.as_str() == Some(&**s),
    }
}

impl UnaryTest {
    /// Whether the input's `value` passes the test.
    #[must_use]
    pub fn matches(&self, value: &Value) -> bool {
        match self {
            UnaryTest::Any => true,
            UnaryTest::OneOf(lits) => lits.iter().any(|l| equals(l, value)),
            UnaryTest::Not(lit) => !equals(lit, value),
            UnaryTest::NotNone => !(value.is_none() || value.is_undefined()),
            UnaryTest::Range(interval) => value.as_number().is_some_and(|x| interval.contains(x)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(text: &str) -> UnaryTest {
        parse(text).unwrap().unwrap()
    }

    #[test]
    fn cells_read_as_unary_tests() {
        assert_eq!(test("-"), UnaryTest::Any);
        assert_eq!(test("  "), UnaryTest::Any);
        assert_eq!(
            test("'inference'"),
            UnaryTest::OneOf(vec![Lit::Str("inference".into())])
        );
        assert_eq!(
            test("'pretrain', 'full_finetune'"),
            UnaryTest::OneOf(vec![
                Lit::Str("pretrain".into()),
                Lit::Str("full_finetune".into())
            ])
        );
        assert_eq!(test("-3"), UnaryTest::OneOf(vec![Lit::Int(-3)]));
        assert_eq!(test("none"), UnaryTest::OneOf(vec![Lit::None]));
        assert_eq!(test("not none"), UnaryTest::NotNone);
        assert_eq!(test("!= 'x'"), UnaryTest::Not(Lit::Str("x".into())));
        let UnaryTest::Range(r) = test("[7..10)") else {
            panic!()
        };
        assert!(r.contains(7.0) && r.contains(9.99) && !r.contains(10.0) && !r.contains(6.9));
        let UnaryTest::Range(r) = test("(7..10.5]") else {
            panic!()
        };
        assert!(!r.contains(7.0) && r.contains(10.5));
        let UnaryTest::Range(r) = test("<= 10") else {
            panic!()
        };
        assert!(r.contains(10.0) && r.contains(-1e9) && !r.contains(10.01));
        let UnaryTest::Range(r) = test("> -0.5") else {
            panic!()
        };
        assert!(r.contains(0.0) && !r.contains(-0.5));
    }

    #[test]
    fn other_cells_are_expressions() {
        assert_eq!(parse("$ > other_fact").unwrap(), None);
        assert_eq!(parse("x in [1, 2]").unwrap(), None);
    }

    #[test]
    fn malformed_tests_are_errors_at_their_place() {
        let e = parse("< other").unwrap_err();
        assert_eq!(e.span, 1..7);
        let e = parse("[7..x]").unwrap_err();
        assert!(e.message.contains("`x` is not a number"), "{}", e.message);
        assert_eq!(e.span, 4..5);
        let e = parse("[7..10").unwrap_err();
        assert!(e.message.contains("ends with"));
        assert!(parse("[10..7]").unwrap_err().message.contains("empty"));
        assert!(parse("!= a + 1").is_err());
    }

    #[test]
    fn values_are_tested_as_the_language_compares_them() {
        let v = |j: serde_json::Value| crate::Value::from_serialize(&j);
        assert!(test("7").matches(&v(serde_json::json!(7.0))));
        assert!(!test("7").matches(&v(serde_json::json!("7"))));
        assert!(test("none").matches(&Value::from(())));
        assert!(!test("not none").matches(&Value::from(())));
        assert!(!test("< 10").matches(&Value::from(())), "none is no number");
        assert!(test("!= 'x'").matches(&Value::from(())));
        assert!(test("true").matches(&Value::from(true)));
        assert!(!test("true").matches(&Value::from(1)));
    }

    #[test]
    fn tests_are_typed_against_their_input() {
        assert!(type_problem(&test("< 10"), &Type::Text).is_some());
        assert!(type_problem(&test("'a'"), &Type::Number).is_some());
        assert!(type_problem(&test("'a', none"), &Type::Text).is_none());
        assert!(type_problem(&test("7"), &Type::Any).is_none());
        assert!(type_problem(&test("true"), &Type::Bool).is_none());
    }
}
