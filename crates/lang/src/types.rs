//! The rule language's types: every rule expression gets one when the rules load, from the
//! types of the names it reads (a fact's declared `type:`, a constant's value, a criterion's
//! true-or-false, the roots, a bound catalog offer's fields as the catalog gives them, a
//! per-offer fact's values read by an offer's id, a table's row, a select's list or item), and
//! what no profile could make right is a rules error then, with its place: a condition that is
//! not true or false, arithmetic on text, a comparison of a number with text, a filter or
//! function given what it cannot take, a field no catalog offer has.
//!
//! The typing is gradual, as Cedar's validator is strict: where a name's type is not declared
//! (`anything`), nothing is assumed and nothing is refused; the check at run time still stands
//! behind it.

use super::ast::{BinaryOp, Lit, Term, TermKind, UnaryOp};
use super::lexer::SyntaxError;

/// A rule value's type, as far as the rules declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// Not declared: any value.
    Any,
    Bool,
    Number,
    Text,
    List,
    Map,
    /// A map, or none: what a table without a default row or a select that picks the first
    /// item gives where nothing is chosen.
    MapOrNone,
    Null,
}

impl Type {
    /// How an error names a value of the type.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Type::Any => "anything",
            Type::Bool => "true or false",
            Type::Number => "a number",
            Type::Text => "text",
            Type::List => "a list",
            Type::Map => "a map",
            Type::MapOrNone => "a map or none",
            Type::Null => "none",
        }
    }

    /// The type of a JSON value (a constant fact's `value:`).
    #[must_use]
    pub fn of_json(value: &serde_json::Value) -> Type {
        match value {
            serde_json::Value::Null => Type::Null,
            serde_json::Value::Bool(_) => Type::Bool,
            serde_json::Value::Number(_) => Type::Number,
            serde_json::Value::String(_) => Type::Text,
            serde_json::Value::Array(_) => Type::List,
            serde_json::Value::Object(_) => Type::Map,
        }
    }

    fn known(self) -> bool {
        self != Type::Any
    }

    /// Whether a value of this type may stand where `wanted` is needed (a map or none where a
    /// map is: some profiles give the map).
    fn fits(self, wanted: &[Type]) -> bool {
        !self.known()
            || wanted.contains(&self)
            || (self == Type::MapOrNone && wanted.contains(&Type::Map))
    }
}

/// What the typechecker asks about the names an expression reads.
pub trait Names {
    /// The type of a name or of a field path (`profile.usage.gpus`, `offer.gpu.memory_gb`):
    /// `Ok(None)` where it declares none, an error where no value could have the path (a field
    /// no catalog offer has).
    ///
    /// # Errors
    /// Why no value has the path, in the language's words.
    fn path(&self, path: &str) -> Result<Option<Type>, Unknown>;

    /// The type of the values of node `name`, a map by offer id (a per-offer fact or
    /// select), where it declares one: what `name[offer.id]` gives.
    fn per_offer(&self, name: &str) -> Option<Type>;
}

/// A path no value has: what to say, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub message: String,
    pub help: Option<String>,
}

/// The type of `term`, reading the types of names and of their fields (`profile.usage.gpus`)
/// from `names`; or the first thing in it no value could make right.
///
/// # Errors
/// An operator, filter or function given a type it cannot take, or a field no value has, with
/// its place.
pub fn infer(term: &Term, names: &dyn Names) -> Result<Type, SyntaxError> {
    let ty = |t: &Term| infer(t, names);
    let declared = |path: &str| {
        names.path(path).map_err(|u| SyntaxError {
            message: u.message,
            span: term.span.clone(),
            help: u.help,
        })
    };
    if let TermKind::Attr(..) = term.kind
        && let Some(path) = term.path()
        && let Some(t) = declared(&path)?
    {
        return Ok(t);
    }
    Ok(match &term.kind {
        TermKind::Lit(Lit::None) => Type::Null,
        TermKind::Lit(Lit::Bool(_)) => Type::Bool,
        TermKind::Lit(Lit::Int(_) | Lit::Float(_)) => Type::Number,
        TermKind::Lit(Lit::Str(_)) => Type::Text,
        TermKind::Var(n) => declared(n)?.unwrap_or(Type::Any),
        TermKind::Attr(e, field) => {
            let t = ty(e)?;
            if !t.fits(&[Type::Map]) {
                return Err(wrong(
                    e,
                    t,
                    &format!("has no field `{field}`: only a map or an offer has fields"),
                ));
            }
            Type::Any
        }
        TermKind::Item(e, key) => item(e, key, ty(e)?, ty(key)?, names)?,
        TermKind::Unary(UnaryOp::Not, e) => {
            ty(e)?;
            Type::Bool
        }
        TermKind::Unary(UnaryOp::Neg, e) => number(e, ty(e)?, "cannot be negated")?,
        TermKind::Binary(op, l, r) => binary(*op, l, r, ty(l)?, ty(r)?)?,
        TermKind::If { test, yes, no } => {
            ty(test)?;
            let yes = ty(yes)?;
            match no {
                Some(no) if ty(no)? == yes => yes,
                _ => Type::Any,
            }
        }
        TermKind::List(items) => {
            for item in items {
                ty(item)?;
            }
            Type::List
        }
        TermKind::Map(pairs) => {
            for (k, v) in pairs {
                ty(k)?;
                ty(v)?;
            }
            Type::Map
        }
        TermKind::Filter {
            name: filter,
            subject,
            args,
        } => {
            let args = args.iter().map(ty).collect::<Result<Vec<_>, _>>()?;
            filtered(&filter.text, subject, ty(subject)?, &args)?
        }
        TermKind::Test { subject, .. } => {
            ty(subject)?;
            Type::Bool
        }
        TermKind::Call {
            name: function,
            args,
        } => call(&function.text, args, names)?,
    })
}

/// What calling `function` on `args` gives: `days_between` takes dates (text), the others
/// numbers; `range` gives a list, the others a number.
fn call(function: &str, args: &[Term], names: &dyn Names) -> Result<Type, SyntaxError> {
    let wanted = if function == "days_between" {
        Type::Text
    } else {
        Type::Number
    };
    for arg in args {
        let t = infer(arg, names)?;
        if !t.fits(&[wanted]) {
            return Err(wrong(
                arg,
                t,
                &format!("cannot go to `{function}`: it takes {}", wanted.name()),
            ));
        }
    }
    Ok(if function == "range" {
        Type::List
    } else {
        Type::Number
    })
}

/// What `e[key]` gives, `e` of type `t` and `key` of type `k`: a per-offer node's value where
/// the key is an offer's id (`fact[offer.id]`), else undeclared.
fn item(e: &Term, key: &Term, t: Type, k: Type, names: &dyn Names) -> Result<Type, SyntaxError> {
    if !t.fits(&[Type::Map, Type::List, Type::Text]) {
        return Err(wrong(e, t, "cannot be read with `[ ]`"));
    }
    if t == Type::List && !k.fits(&[Type::Number]) {
        return Err(wrong(key, k, "cannot index a list: a position is a number"));
    }
    let by_offer_id = matches!(&key.kind, TermKind::Attr(item, field)
        if &**field == "id" && item.path().is_some());
    Ok(match &e.kind {
        TermKind::Var(n) if by_offer_id => names.per_offer(n).unwrap_or(Type::Any),
        _ => Type::Any,
    })
}

/// What filter `filter` gives for `subject` (of type `s`) and arguments of types `args`.
fn filtered(filter: &str, subject: &Term, s: Type, args: &[Type]) -> Result<Type, SyntaxError> {
    let takes = |wanted: &[Type], what: &str| {
        if s.fits(wanted) {
            Ok(())
        } else {
            Err(wrong(
                subject,
                s,
                &format!("cannot go through `{filter}`: {what}"),
            ))
        }
    };
    Ok(match filter {
        "abs" | "round" => {
            takes(&[Type::Number], "it takes a number")?;
            Type::Number
        }
        "cny" | "num" | "pct" | "hours" | "plural" => {
            takes(&[Type::Number], "it writes a number")?;
            Type::Text
        }
        "length" | "count" => {
            takes(
                &[Type::List, Type::Map, Type::Text],
                "it counts a list, a map or text",
            )?;
            Type::Number
        }
        "join" => {
            takes(&[Type::List], "it joins a list")?;
            Type::Text
        }
        "each" => {
            takes(&[Type::List], "it goes over a list")?;
            Type::List
        }
        "list" => {
            takes(
                &[Type::List, Type::Map, Type::Text],
                "it lists a list, a map or text",
            )?;
            Type::List
        }
        "max" | "min" => {
            takes(&[Type::List], "it reads a list")?;
            Type::Any
        }
        "md" | "cell" => {
            takes(&[Type::Text], "it escapes text")?;
            Type::Text
        }
        "brief" => Type::Text,
        // `default` gives its value, or the fallback where the value is undefined.
        _ => match args.first() {
            Some(&fallback) if fallback == s => s,
            _ => Type::Any,
        },
    })
}

fn binary(op: BinaryOp, l: &Term, r: &Term, lt: Type, rt: Type) -> Result<Type, SyntaxError> {
    Ok(match op {
        BinaryOp::And | BinaryOp::Or => {
            if lt == Type::Bool && rt == Type::Bool {
                Type::Bool
            } else {
                Type::Any
            }
        }
        BinaryOp::Eq | BinaryOp::Ne => Type::Bool,
        BinaryOp::Lt | BinaryOp::Lte | BinaryOp::Gt | BinaryOp::Gte => {
            let ordered = [Type::Number, Type::Text];
            for (side, t) in [(l, lt), (r, rt)] {
                if !t.fits(&ordered) {
                    return Err(wrong(
                        side,
                        t,
                        &format!(
                            "cannot be compared with `{}`: only numbers and texts are ordered",
                            op.symbol()
                        ),
                    ));
                }
            }
            if lt.known() && rt.known() && lt != rt {
                return Err(wrong(
                    r,
                    rt,
                    &format!("cannot be compared with {} by `{}`", lt.name(), op.symbol()),
                ));
            }
            Type::Bool
        }
        BinaryOp::In | BinaryOp::NotIn => {
            if !rt.fits(&[Type::List, Type::Map, Type::Text]) {
                return Err(wrong(
                    r,
                    rt,
                    &format!(
                        "cannot hold anything: `{}` looks in a list, a map or text",
                        op.symbol()
                    ),
                ));
            }
            Type::Bool
        }
        BinaryOp::Concat => Type::Text,
        BinaryOp::Add if lt == Type::List || rt == Type::List => {
            for (side, t) in [(l, lt), (r, rt)] {
                if !t.fits(&[Type::List]) {
                    return Err(wrong(side, t, "cannot be added to a list"));
                }
            }
            Type::List
        }
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Rem => {
            let what = format!("is not a number: `{}` is arithmetic", op.symbol());
            number(l, lt, &what)?;
            number(r, rt, &what)?;
            if op == BinaryOp::Add && (!lt.known() || !rt.known()) {
                // Two undeclared values may be lists.
                Type::Any
            } else {
                Type::Number
            }
        }
    })
}

/// A number where one is needed: its type, or the error.
fn number(term: &Term, t: Type, what: &str) -> Result<Type, SyntaxError> {
    if t.fits(&[Type::Number]) {
        Ok(Type::Number)
    } else {
        Err(wrong(term, t, what))
    }
}

fn wrong(term: &Term, t: Type, what: &str) -> SyntaxError {
    let help = match t {
        Type::Text => Some("`~` joins texts; arithmetic, ordering and number filters need numbers"),
        Type::Null => Some("`none` is no value: test it first (`x is none`) or give a default"),
        Type::MapOrNone => Some(
            "a chosen item or row is a map, and none where nothing is chosen: read one of its fields (`x.field`) or test it (`x is not none`)",
        ),
        _ => None,
    };
    SyntaxError {
        message: format!("this is {} and {what}", t.name()),
        span: term.span.clone(),
        help: help.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of each type; `o` a map by offer id of numbers; `m.gone` a path no value has.
    struct Test;

    impl Names for Test {
        fn path(&self, name: &str) -> Result<Option<Type>, Unknown> {
            Ok(Some(match name {
                "n" | "m.n" => Type::Number,
                "t" => Type::Text,
                "b" => Type::Bool,
                "l" => Type::List,
                "m" | "o" => Type::Map,
                "s" => Type::MapOrNone,
                "m.gone" => {
                    return Err(Unknown {
                        message: "no value has `gone`".to_owned(),
                        help: None,
                    });
                }
                _ => return Ok(None),
            }))
        }

        fn per_offer(&self, name: &str) -> Option<Type> {
            (name == "o").then_some(Type::Number)
        }
    }

    fn infer_text(text: &str) -> Result<Type, String> {
        infer(&crate::parser::parse(text).unwrap(), &Test).map_err(|e| e.message)
    }

    #[test]
    fn what_each_expression_gives() {
        for (text, ty) in [
            ("n * 2 + 1", Type::Number),
            ("x + 1", Type::Any),
            ("n > 3 and b", Type::Bool),
            ("x and b", Type::Any),
            ("t ~ n", Type::Text),
            ("n | cny", Type::Text),
            ("l | length", Type::Number),
            ("l + [1]", Type::List),
            ("x is defined", Type::Bool),
            ("1 if b else 2", Type::Number),
            ("1 if b else 'x'", Type::Any),
            ("ceil(n / 8)", Type::Number),
            ("m.k", Type::Any),
            ("m.n", Type::Number),
            ("x.k * 2", Type::Number),
            ("days_between(t, x)", Type::Number),
            ("o[x.id] * 2", Type::Number),
            ("s.k", Type::Any),
            ("s is none", Type::Bool),
            ("s.k * 2", Type::Number),
            ("'a' in s", Type::Bool),
            ("s | length", Type::Number),
            ("o[x.id]", Type::Number),
            ("o['a']", Type::Any),
            ("m[x.id]", Type::Any),
        ] {
            assert_eq!(infer_text(text), Ok(ty), "{text}");
        }
    }

    #[test]
    fn what_no_value_could_make_right_is_refused() {
        for (text, message) in [
            (
                "t * 2",
                "this is text and is not a number: `*` is arithmetic",
            ),
            ("-t", "this is text and cannot be negated"),
            (
                "n < t",
                "this is text and cannot be compared with a number by `<`",
            ),
            (
                "l < 3",
                "this is a list and cannot be compared with `<`: only numbers and texts are ordered",
            ),
            (
                "x in n",
                "this is a number and cannot hold anything: `in` looks in a list, a map or text",
            ),
            (
                "t | cny",
                "this is text and cannot go through `cny`: it writes a number",
            ),
            (
                "n | join(', ')",
                "this is a number and cannot go through `join`: it joins a list",
            ),
            (
                "n.k",
                "this is a number and has no field `k`: only a map or an offer has fields",
            ),
            (
                "ceil(t)",
                "this is text and cannot go to `ceil`: it takes a number",
            ),
            (
                "none + 1",
                "this is none and is not a number: `+` is arithmetic",
            ),
            ("l + 1", "this is a number and cannot be added to a list"),
            ("m.gone + 1", "no value has `gone`"),
            (
                "s + 1",
                "this is a map or none and is not a number: `+` is arithmetic",
            ),
            (
                "s < 3",
                "this is a map or none and cannot be compared with `<`: only numbers and texts are ordered",
            ),
            ("1 + (m.gone | abs)", "no value has `gone`"),
            (
                "o[x.id] ~ 'a' if b else o[x.id] | join(',')",
                "this is a number and cannot go through `join`: it joins a list",
            ),
        ] {
            assert_eq!(infer_text(text), Err(message.to_owned()), "{text}");
        }
    }
}
