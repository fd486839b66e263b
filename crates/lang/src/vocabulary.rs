//! What a rule expression may call: the language's filters, tests and functions, with how many
//! arguments each takes, and the check that refuses anything else when the rules load.

use std::ops::RangeInclusive;

use super::ast::{Name, Term, TermKind};
use super::lexer::SyntaxError;

/// What a filter, test or function does: the evaluator's name for it ([`super::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Abs,
    Brief,
    Cell,
    Cny,
    Length,
    Default,
    Each,
    Hours,
    Join,
    List,
    Lower,
    Max,
    Md,
    Min,
    Num,
    Pct,
    Plural,
    Round,
    IsDefined,
    IsNone,
    IsUndefined,
    Ceil,
    Cover,
    DaysBetween,
    Floor,
    Range,
    Int,
    Month,
    Sci,
}

/// The filters (`value | name(args)`), each with how many arguments it takes besides its value.
pub const FILTERS: &[(&str, RangeInclusive<usize>, Builtin)] = &[
    ("abs", 0..=0, Builtin::Abs),
    ("brief", 0..=0, Builtin::Brief),
    ("cell", 0..=0, Builtin::Cell),
    ("cny", 0..=1, Builtin::Cny),
    ("count", 0..=0, Builtin::Length),
    ("d", 0..=1, Builtin::Default),
    ("default", 0..=1, Builtin::Default),
    ("each", 1..=1, Builtin::Each),
    ("hours", 0..=0, Builtin::Hours),
    ("int", 0..=0, Builtin::Int),
    ("join", 0..=1, Builtin::Join),
    ("length", 0..=0, Builtin::Length),
    ("list", 0..=0, Builtin::List),
    ("lower", 0..=0, Builtin::Lower),
    ("max", 0..=0, Builtin::Max),
    ("md", 0..=0, Builtin::Md),
    ("min", 0..=0, Builtin::Min),
    ("month", 0..=0, Builtin::Month),
    ("num", 0..=1, Builtin::Num),
    ("pct", 0..=0, Builtin::Pct),
    ("sci", 0..=0, Builtin::Sci),
    ("plural", 1..=1, Builtin::Plural),
    ("round", 0..=1, Builtin::Round),
];

/// The tests (`value is name`, `value is not name`).
pub const TESTS: &[(&str, RangeInclusive<usize>, Builtin)] = &[
    ("defined", 0..=0, Builtin::IsDefined),
    ("none", 0..=0, Builtin::IsNone),
    ("undefined", 0..=0, Builtin::IsUndefined),
];

/// The functions (`name(args)`), each with how many arguments it takes.
pub const FUNCTIONS: &[(&str, RangeInclusive<usize>, Builtin)] = &[
    ("ceil", 1..=1, Builtin::Ceil),
    ("cover", 2..=2, Builtin::Cover),
    ("days_between", 2..=2, Builtin::DaysBetween),
    ("floor", 1..=1, Builtin::Floor),
    ("range", 2..=2, Builtin::Range),
];

/// What `name` is in `table` (one of [`FILTERS`], [`TESTS`], [`FUNCTIONS`]), when it is there
/// and takes `given` arguments.
#[must_use]
pub fn builtin(
    table: &[(&str, RangeInclusive<usize>, Builtin)],
    name: &str,
    given: usize,
) -> Option<Builtin> {
    table
        .iter()
        .find(|(n, arity, _)| *n == name && arity.contains(&given))
        .map(|(_, _, b)| *b)
}

/// Checks that every filter, test and function `expr` calls is one of the language's, with as
/// many arguments as it takes.
///
/// # Errors
/// The first call that is not, with its place in the expression's text.
pub fn check(expr: &Term) -> Result<(), SyntaxError> {
    match &expr.kind {
        TermKind::Lit(_) | TermKind::Var(_) => Ok(()),
        TermKind::Attr(e, _) | TermKind::Unary(_, e) => check(e),
        TermKind::Item(a, b) | TermKind::Binary(_, a, b) => check(a).and_then(|()| check(b)),
        TermKind::If { test, yes, no } => {
            check(test)?;
            check(yes)?;
            no.as_deref().map_or(Ok(()), check)
        }
        TermKind::List(items) => items.iter().try_for_each(check),
        TermKind::Map(pairs) => pairs
            .iter()
            .try_for_each(|(k, v)| check(k).and_then(|()| check(v))),
        TermKind::Filter {
            name,
            subject,
            args,
        } => {
            known(name, args.len(), FILTERS, "filter")?;
            if &*name.text == "round"
                && let Some(precision) = args.first()
                && !matches!(precision.kind, TermKind::Lit(super::ast::Lit::Int(0..=15)))
            {
                return Err(SyntaxError {
                    message:
                        "`round` takes a whole number of decimals from 0 to 15, written as a number"
                            .to_owned(),
                    span: precision.span.clone(),
                    help: None,
                });
            }
            check(subject)?;
            args.iter().try_for_each(check)
        }
        TermKind::Test { name, subject, .. } => {
            if builtin(TESTS, &name.text, 0).is_none() {
                return Err(unknown(name, "test", TESTS.iter().map(|(n, _, _)| *n)));
            }
            check(subject)
        }
        TermKind::Call { name, args } => {
            known(name, args.len(), FUNCTIONS, "function")?;
            args.iter().try_for_each(check)
        }
    }
}

fn known(
    name: &Name,
    given: usize,
    table: &[(&str, RangeInclusive<usize>, Builtin)],
    what: &str,
) -> Result<(), SyntaxError> {
    let Some((_, arity, _)) = table.iter().find(|(n, _, _)| *n == &*name.text) else {
        return Err(unknown(name, what, table.iter().map(|(n, _, _)| *n)));
    };
    if arity.contains(&given) {
        return Ok(());
    }
    let takes = if arity.start() == arity.end() {
        plural(*arity.start())
    } else {
        format!("{} or {}", arity.start(), plural(*arity.end()))
    };
    Err(SyntaxError {
        message: format!("the {what} `{}` takes {takes}, not {given}", name.text),
        span: name.span.clone(),
        help: None,
    })
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 argument".to_owned()
    } else {
        format!("{n} arguments")
    }
}

fn unknown<'a>(
    name: &Name,
    what: &str,
    valid: impl Iterator<Item = &'a str> + Clone,
) -> SyntaxError {
    let list: Vec<String> = valid.clone().map(|n| format!("`{n}`")).collect();
    let help = match crate::message::suggest(&name.text, valid) {
        Some(s) => format!("did you mean `{s}`? the {what}s are {}", list.join(", ")),
        None => format!("the {what}s are {}", list.join(", ")),
    };
    SyntaxError {
        message: format!("unknown {what} `{}`", name.text),
        span: name.span.clone(),
        help: Some(help),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        check(&crate::parser::parse(text).unwrap())
            .unwrap_err()
            .message
    }

    #[test]
    fn only_the_languages_calls_with_their_arguments() {
        for fine in [
            "x | round(1) | num",
            "x | default(0) is none",
            "ceil(x / 8) + days_between(a, b)",
            "[1, 2] | join(', ')",
        ] {
            assert_eq!(
                check(&crate::parser::parse(fine).unwrap()),
                Ok(()),
                "{fine}"
            );
        }
        assert_eq!(error("x | sum"), "unknown filter `sum`");
        assert_eq!(error("x is even"), "unknown test `even`");
        assert_eq!(error("sqrt(x)"), "unknown function `sqrt`");
        assert_eq!(
            error("x | plural"),
            "the filter `plural` takes 1 argument, not 0"
        );
        assert_eq!(
            error("ceil(a, b)"),
            "the function `ceil` takes 1 argument, not 2"
        );
        assert!(error("x | round(p)").contains("whole number of decimals"));
    }
}
