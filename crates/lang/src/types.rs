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

use std::sync::Arc;

use super::ast::{BinaryOp, Lit, Term, TermKind, UnaryOp};
use super::lexer::SyntaxError;
use super::measure::Measure;

/// A rule value's type, as far as the rules declare it: structural, so a list knows its items',
/// a record its fields and a per-offer map its values' types.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// Not declared: any value.
    Any,
    Bool,
    /// A number of no declared dimension.
    Number,
    /// A number of a declared dimension (`cny/hour`): a fact's or a catalog field's
    /// `quantity:`, and what arithmetic makes of them. Added, compared or chosen beside a
    /// number of another dimension, it is an error when the rules load.
    Quantity(Measure),
    Text,
    Null,
    /// A list of items of a type (`List(Any)`: of anything).
    List(Arc<Type>),
    /// A map of keys not known when the rules load.
    Map,
    /// A map of known fields ([`RecordType`]).
    Record(Arc<RecordType>),
    /// A map by offer id (a per-offer fact, select or search) of values of a type: what
    /// `fact[offer.id]` gives.
    PerOffer(Arc<Type>),
    /// A catalog offer: its fields are typed as the catalog's offers have them.
    Offer,
    /// A value of a type, or none: what a table without a default row or a select that picks
    /// the first item gives where nothing is chosen.
    Nullable(Arc<Type>),
}

/// The fields of a map known when the rules load, each with its type. A closed record has no
/// other field (a map literal's, a search's), so reading another is an error at load; an open
/// one may (a table's row, whose rows give different fields).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordType {
    pub fields: Vec<(Box<str>, Type)>,
    pub closed: bool,
}

/// What kind of value a type is, for the checks that ask only that (an operator's operands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKind {
    Bool,
    Number,
    Text,
    Null,
    List,
    Map,
}

impl Type {
    /// A list of anything.
    #[must_use]
    pub fn list() -> Type {
        Type::List(Arc::new(Type::Any))
    }

    /// A list of items of `item`.
    #[must_use]
    pub fn list_of(item: Type) -> Type {
        Type::List(Arc::new(item))
    }

    /// A map or none: a chosen row or item.
    #[must_use]
    pub fn map_or_none() -> Type {
        Type::Nullable(Arc::new(Type::Map))
    }

    /// A record of `fields`.
    #[must_use]
    pub fn record(fields: Vec<(Box<str>, Type)>, closed: bool) -> Type {
        Type::Record(Arc::new(RecordType { fields, closed }))
    }

    /// What kind of value the type is (`None`: any, or a value or none).
    #[must_use]
    pub fn shape(&self) -> Option<TypeKind> {
        Some(match self {
            Type::Any | Type::Nullable(_) => return None,
            Type::Bool => TypeKind::Bool,
            Type::Number | Type::Quantity(_) => TypeKind::Number,
            Type::Text => TypeKind::Text,
            Type::Null => TypeKind::Null,
            Type::List(_) => TypeKind::List,
            Type::Map | Type::Record(_) | Type::PerOffer(_) | Type::Offer => TypeKind::Map,
        })
    }

    /// Whether the type is a map or none (a chosen row or item).
    #[must_use]
    pub fn is_map_or_none(&self) -> bool {
        matches!(self, Type::Nullable(t) if t.shape() == Some(TypeKind::Map))
    }

    /// How an error names a value of the type.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Type::Any => "anything".to_owned(),
            Type::Bool => "true or false".to_owned(),
            Type::Number => "a number".to_owned(),
            Type::Quantity(d) if d.is_one() => "a plain number".to_owned(),
            Type::Quantity(d) => format!("a number in {d}"),
            Type::Text => "text".to_owned(),
            Type::List(_) => "a list".to_owned(),
            Type::Map | Type::Record(_) | Type::PerOffer(_) | Type::Offer => "a map".to_owned(),
            Type::Nullable(t) => format!("{} or none", t.name()),
            Type::Null => "none".to_owned(),
        }
    }

    /// The type of a JSON value (a constant fact's `value:`): a list's items' where they all
    /// have one, an object's fields (a closed record).
    #[must_use]
    pub fn of_json(value: &serde_json::Value) -> Type {
        match value {
            serde_json::Value::Null => Type::Null,
            serde_json::Value::Bool(_) => Type::Bool,
            serde_json::Value::Number(_) => Type::Number,
            serde_json::Value::String(_) => Type::Text,
            serde_json::Value::Array(items) => {
                Type::list_of(common(items.iter().map(Type::of_json)))
            }
            serde_json::Value::Object(fields) => Type::record(
                fields
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), Type::of_json(v)))
                    .collect(),
                true,
            ),
        }
    }

    /// The type with every record in it open: for values whose fields vary (a catalog offer's,
    /// a table row's), where a field missing from the ones seen may still be read.
    #[must_use]
    pub fn opened(&self) -> Type {
        match self {
            Type::Record(r) => Type::record(
                r.fields
                    .iter()
                    .map(|(f, t)| (f.clone(), t.opened()))
                    .collect(),
                false,
            ),
            Type::List(t) => Type::list_of(t.opened()),
            Type::PerOffer(t) => Type::PerOffer(Arc::new(t.opened())),
            Type::Nullable(t) => Type::Nullable(Arc::new(t.opened())),
            t => t.clone(),
        }
    }

    /// Whether `v` is a value of this type: the typechecker's claim about what an expression
    /// gives, checked against what it gave (`tests/interp.rs`). Undefined stands for any type
    /// (reading a field some values lack gives it, and only the tests of definedness take it).
    #[must_use]
    pub fn admits(&self, v: &crate::value::Value) -> bool {
        use crate::value::Kind;
        if v.is_undefined() {
            return true;
        }
        match self {
            Type::Any => true,
            Type::Bool => v.kind() == Kind::Bool,
            Type::Number | Type::Quantity(_) => v.is_number(),
            Type::Text => v.kind() == Kind::Text,
            Type::Null => v.is_none(),
            Type::List(item) => v
                .as_list()
                .is_some_and(|items| items.iter().all(|i| item.admits(i))),
            Type::Map | Type::Offer => v.kind() == Kind::Map,
            Type::PerOffer(value) => {
                v.kind() == Kind::Map
                    && v.pairs()
                        .into_iter()
                        .flatten()
                        .all(|(_, x)| value.admits(x))
            }
            Type::Record(r) => {
                v.kind() == Kind::Map
                    && r.fields.iter().all(|(f, t)| t.admits(&v.get_attr(f)))
                    && (!r.closed
                        || v.pairs().into_iter().flatten().all(|(k, _)| {
                            k.as_str()
                                .is_some_and(|k| r.fields.iter().any(|(f, _)| &**f == k))
                        }))
            }
            Type::Nullable(t) => v.is_none() || t.admits(v),
        }
    }

    /// Whether a value of the type is or holds a number of a declared unit.
    #[must_use]
    pub fn measures(&self) -> bool {
        match self {
            Type::Quantity(_) => true,
            Type::Record(r) => r.fields.iter().any(|(_, t)| t.measures()),
            Type::List(t) | Type::PerOffer(t) | Type::Nullable(t) => t.measures(),
            _ => false,
        }
    }

    /// The type with unit `from` replaced by dimension `to` in every dimension in it.
    #[must_use]
    pub fn with_unit(&self, from: &str, to: &Measure) -> Type {
        match self {
            Type::Quantity(d) => Type::Quantity(d.replaced(from, to)),
            Type::Record(r) => Type::record(
                r.fields
                    .iter()
                    .map(|(f, t)| (f.clone(), t.with_unit(from, to)))
                    .collect(),
                r.closed,
            ),
            Type::List(t) => Type::list_of(t.with_unit(from, to)),
            Type::PerOffer(t) => Type::PerOffer(Arc::new(t.with_unit(from, to))),
            Type::Nullable(t) => Type::Nullable(Arc::new(t.with_unit(from, to))),
            t => t.clone(),
        }
    }

    /// The dimension of a number of a declared unit, or of such a number or none (a profile's
    /// number it may leave out).
    #[must_use]
    pub fn dimension(&self) -> Option<&Measure> {
        match self {
            Type::Quantity(d) => Some(d),
            Type::Nullable(t) => match &**t {
                Type::Quantity(d) => Some(d),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a value of this type is a number, or a number or none.
    #[must_use]
    pub fn is_number_or_none(&self) -> bool {
        match self {
            Type::Nullable(t) => t.shape() == Some(TypeKind::Number),
            t => t.shape() == Some(TypeKind::Number),
        }
    }

    fn known(&self) -> bool {
        *self != Type::Any
    }

    /// Whether a value of this type may stand where one of `wanted` is needed (a map or none
    /// where a map is: some profiles give the map; a number or none where a number is: a
    /// profile's number of a declared unit that it may leave out, read as an undeclared one
    /// would be, where a test of it is the rules' to write).
    fn fits(&self, wanted: &[TypeKind]) -> bool {
        match self {
            Type::Any => true,
            Type::Nullable(t) => t.shape().is_some_and(|s| {
                matches!(s, TypeKind::Map | TypeKind::Number) && wanted.contains(&s)
            }),
            t => t.shape().is_some_and(|s| wanted.contains(&s)),
        }
    }

    /// The type of field `name` of a value of this type (or of this type or none), where the
    /// type knows it, else anything; `Err` with the fields it has where it knows there is no
    /// such field (a closed record).
    ///
    /// # Errors
    /// A closed record without the field: its fields.
    pub fn field(&self, name: &str) -> Result<Type, Vec<&str>> {
        match self {
            Type::Record(r) => match r.fields.iter().find(|(f, _)| &**f == name) {
                Some((_, t)) => Ok(t.clone()),
                None if r.closed => Err(r.fields.iter().map(|(f, _)| &**f).collect()),
                None => Ok(Type::Any),
            },
            Type::Nullable(t) => t.field(name),
            _ => Ok(Type::Any),
        }
    }
}

/// The type all of `types` have in common (`Any` for none).
#[must_use]
pub fn common(mut types: impl Iterator<Item = Type>) -> Type {
    let Some(first) = types.next() else {
        return Type::Any;
    };
    types.fold(first, |a, b| unify(&a, &b))
}

/// The most a value of type `a` or of type `b` is known to be: the type itself where they are
/// the same; the fields both records have (an open record); a list or per-offer map of what
/// their items have in common; a map where both are maps; else anything.
#[must_use]
pub fn unify(a: &Type, b: &Type) -> Type {
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (Type::Record(left), Type::Record(right)) => Type::record(
            left.fields
                .iter()
                .filter_map(|(field, t)| {
                    let (_, other) = right.fields.iter().find(|(g, _)| g == field)?;
                    Some((field.clone(), unify(t, other)))
                })
                .collect(),
            false,
        ),
        (Type::List(left), Type::List(right)) => Type::list_of(unify(left, right)),
        (Type::PerOffer(left), Type::PerOffer(right)) => {
            Type::PerOffer(Arc::new(unify(left, right)))
        }
        // Numbers of different dimensions, or of one and of none: a number.
        _ if a.shape() == Some(TypeKind::Number) && b.shape() == Some(TypeKind::Number) => {
            Type::Number
        }
        _ if a.shape() == Some(TypeKind::Map) && b.shape() == Some(TypeKind::Map) => Type::Map,
        _ => Type::Any,
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

    /// What a price unit an offer's `price.unit` may name measures (a box's `month` a month, a
    /// container GPU's `gpu_hour` an hour), where the rules say: else a unit of that name.
    fn price_unit(&self, unit: &str) -> Measure {
        Measure::unit(unit)
    }
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
            if !t.fits(&[TypeKind::Map]) {
                return Err(wrong(
                    e,
                    &t,
                    &format!("has no field `{field}`: only a map or an offer has fields"),
                ));
            }
            t.field(field)
                .map_err(|fields| no_field(e, &t, field, &fields))?
        }
        TermKind::Item(e, key) => item(e, key, &ty(e)?, &ty(key)?)?,
        TermKind::Unary(UnaryOp::Not, e) => {
            ty(e)?;
            Type::Bool
        }
        TermKind::Unary(UnaryOp::Neg, e) => {
            let t = ty(e)?;
            number(e, &t, "cannot be negated")?;
            if t.dimension().is_some() {
                t
            } else {
                Type::Number
            }
        }
        // The right of `and` is read where the left holds, of `or` where it does not.
        TermKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), l, r) => {
            let right = refined(r, l, *op == BinaryOp::And, names)?;
            binary(*op, l, r, &ty(l)?, &right)?
        }
        TermKind::Binary(op, l, r) => binary(*op, l, r, &ty(l)?, &ty(r)?)?,
        TermKind::If { test, yes, no } => choice(test, yes, no.as_deref(), names)?,
        TermKind::List(items) => {
            let types = items.iter().map(ty).collect::<Result<Vec<_>, _>>()?;
            Type::list_of(common(types.into_iter()))
        }
        TermKind::Map(pairs) => {
            let mut values = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                ty(k)?;
                values.push(ty(v)?);
            }
            match super::ast::record_keys(pairs) {
                Some(keys) => {
                    Type::record(keys.into_iter().map(Into::into).zip(values).collect(), true)
                }
                None => Type::Map,
            }
        }
        TermKind::Filter {
            name: filter,
            subject,
            args,
        } => {
            let args = args.iter().map(ty).collect::<Result<Vec<_>, _>>()?;
            if let Some(d) = least_or_greatest(&filter.text, subject, names)? {
                filtered(&filter.text, subject, &ty(subject)?, &args)?;
                return Ok(Type::Quantity(d));
            }
            filtered(&filter.text, subject, &ty(subject)?, &args)?
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

/// What `yes if test else no` gives: a number of the unit both share where either has one
/// (the branch a test of an offer's price unit chooses read with that unit), the type both
/// have, else anything.
fn choice(
    test: &Term,
    yes: &Term,
    no: Option<&Term>,
    names: &dyn Names,
) -> Result<Type, SyntaxError> {
    let ty = |t: &Term| infer(t, names);
    ty(test)?;
    // Where the test says what an offer's price is for (`o.price.unit == 'month'`, or
    // `!= 'month'` for the `else`), its prices per that unit are per it in that branch.
    let yes_type = refined(yes, test, true, names)?;
    Ok(match no {
        Some(no) => {
            let no_type = refined(no, test, false, names)?;
            let numbers = [&yes_type, &no_type]
                .iter()
                .all(|t| t.fits(&[TypeKind::Number]) || **t == Type::Null);
            // Both branches share a unit; the choice is a number of it only where neither
            // branch may be something else (`none`), else a number of it or none.
            let unit = if numbers {
                same_measure(no, &yes_type, &no_type, "chosen beside")?
            } else {
                None
            };
            let both = [&yes_type, &no_type]
                .iter()
                .all(|t| t.shape() == Some(TypeKind::Number));
            // A number of a unit or none (`x if c else none`), and a choice of two such.
            let or_none = |t: &Type| *t == Type::Null || t.dimension().is_some();
            if let (Some(d), true) = (unit.clone(), both) {
                Type::Quantity(d)
            } else if let (Some(d), true) = (unit, or_none(&yes_type) && or_none(&no_type)) {
                Type::Nullable(Arc::new(Type::Quantity(d)))
            } else if no_type == yes_type {
                yes_type
            } else {
                Type::Any
            }
        }
        None => Type::Any,
    })
}

/// The unit of `[a, b] | min` (or `max`): the one the numbers listed share, where any has
/// one (a list may hold numbers of different units, as a sort key does, but not weighed
/// against each other).
fn least_or_greatest(
    filter: &str,
    subject: &Term,
    names: &dyn Names,
) -> Result<Option<Measure>, SyntaxError> {
    let ("min" | "max", TermKind::List(items)) = (filter, &subject.kind) else {
        return Ok(None);
    };
    let mut unit: Option<Measure> = None;
    for item in items {
        let t = infer(item, names)?;
        let first = unit.clone().map_or(Type::Any, Type::Quantity);
        if let Some(d) = same_measure(item, &first, &t, "weighed against")? {
            unit = Some(d);
        }
    }
    Ok(unit)
}

/// What calling `function` on `args` gives: `days_between` takes dates (text), `cover` a
/// length and a list of terms, the others numbers; `range` gives a list, `cover` a record of
/// its bill or none, the others a number.
fn call(function: &str, args: &[Term], names: &dyn Names) -> Result<Type, SyntaxError> {
    let mut first = None;
    for (i, arg) in args.iter().enumerate() {
        let (wanted, name) = match (function, i) {
            ("days_between", _) => (TypeKind::Text, "text"),
            ("cover", 1) => (TypeKind::List, "a list of terms as its second argument"),
            _ => (TypeKind::Number, "a number"),
        };
        let t = infer(arg, names)?;
        if !t.fits(&[wanted]) {
            return Err(wrong(
                arg,
                &t,
                &format!("cannot go to `{function}`: it takes {name}"),
            ));
        }
        if i == 0 {
            first = Some(t);
        }
    }
    // A cover's amounts are in yuan; its lengths (a part's: of one term) in the unit of the
    // length covered, where that is declared.
    let cny = || Type::Quantity(Measure::unit("cny"));
    let length = match &first {
        Some(t) if function == "cover" => t.dimension().cloned(),
        _ => None,
    };
    let hours = || length.clone().map_or(Type::Number, Type::Quantity);
    Ok(match function {
        "range" => Type::list_of(Type::Number),
        // A whole number of the same unit.
        "ceil" | "floor" => match first.as_ref().and_then(Type::dimension) {
            Some(d) => Type::Quantity(d.clone()),
            None => Type::Number,
        },
        "cover" => Type::Nullable(Arc::new(Type::record(
            vec![
                ("cny".into(), cny()),
                ("paid".into(), cny()),
                ("length".into(), hours()),
                (
                    "refund".into(),
                    Type::Nullable(Arc::new(Type::record(
                        vec![
                            ("unit".into(), Type::Any),
                            ("length".into(), hours()),
                            ("share".into(), Type::Number),
                            ("cny".into(), cny()),
                        ],
                        true,
                    ))),
                ),
                (
                    "parts".into(),
                    Type::list_of(Type::record(
                        vec![
                            ("unit".into(), Type::Any),
                            ("count".into(), Type::Number),
                            ("length".into(), hours()),
                            ("cny".into(), cny()),
                        ],
                        true,
                    )),
                ),
            ],
            true,
        ))),
        _ => Type::Number,
    })
}

/// What `e[key]` gives, `e` of type `t` and `key` of type `k`: a list's item, a record's field
/// by a constant key, a per-offer node's value where the key is an offer's id
/// (`fact[offer.id]`); else undeclared.
fn item(e: &Term, key: &Term, t: &Type, k: &Type) -> Result<Type, SyntaxError> {
    if !t.fits(&[TypeKind::Map, TypeKind::List, TypeKind::Text]) {
        return Err(wrong(e, t, "cannot be read with `[ ]`"));
    }
    if t.shape() == Some(TypeKind::List) && !k.fits(&[TypeKind::Number]) {
        return Err(wrong(key, k, "cannot index a list: a position is a number"));
    }
    let by_offer_id = matches!(&key.kind, TermKind::Attr(item, field)
        if &**field == "id" && item.path().is_some());
    Ok(match (t, &key.kind) {
        (Type::List(item), _) => (**item).clone(),
        (Type::PerOffer(value), _) if by_offer_id => (**value).clone(),
        (Type::Record(_), TermKind::Lit(Lit::Str(field))) => t
            .field(field)
            .map_err(|fields| no_field(key, t, field, &fields))?,
        _ => Type::Any,
    })
}

/// The error for reading `field` of a record that has only `fields`.
fn no_field(term: &Term, t: &Type, field: &str, fields: &[&str]) -> SyntaxError {
    let help = match crate::message::suggest(field, fields.iter().copied()) {
        Some(near) => format!("did you mean `{near}`? it has {}", fields.join(", ")),
        None => format!("it has {}", fields.join(", ")),
    };
    SyntaxError {
        message: format!("this is {} and has no field `{field}`", t.name()),
        span: term.span.clone(),
        help: Some(help),
    }
}

/// What filter `filter` gives for `subject` (of type `s`) and arguments of types `args`.
fn filtered(filter: &str, subject: &Term, s: &Type, args: &[Type]) -> Result<Type, SyntaxError> {
    let takes = |wanted: &[TypeKind], what: &str| {
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
        "abs" | "round" | "int" => {
            takes(&[TypeKind::Number], "it takes a number")?;
            // A number of a unit keeps it (and none stays none).
            if s.dimension().is_some() {
                s.clone()
            } else {
                Type::Number
            }
        }
        "cny" | "num" | "pct" | "hours" | "plural" | "sci" => {
            takes(&[TypeKind::Number], "it writes a number")?;
            Type::Text
        }
        "length" | "count" => {
            takes(
                &[TypeKind::List, TypeKind::Map, TypeKind::Text],
                "it counts a list, a map or text",
            )?;
            Type::Number
        }
        "join" => {
            takes(&[TypeKind::List], "it joins a list")?;
            Type::Text
        }
        "each" => {
            takes(&[TypeKind::List], "it goes over a list")?;
            Type::list()
        }
        "list" => {
            takes(
                &[TypeKind::List, TypeKind::Map, TypeKind::Text],
                "it lists a list, a map or text",
            )?;
            match s {
                Type::List(_) => s.clone(),
                Type::Text => Type::list_of(Type::Text),
                _ => Type::list(),
            }
        }
        "max" | "min" => {
            takes(&[TypeKind::List], "it reads a list")?;
            match s {
                Type::List(item) if matches!(**item, Type::Number | Type::Quantity(_)) => {
                    (**item).clone()
                }
                _ => Type::Any,
            }
        }
        "month" => {
            takes(&[TypeKind::Text], "it reads a date (YYYY-MM-DD)")?;
            Type::Text
        }
        "lower" => {
            takes(&[TypeKind::Text], "it writes text in lower case")?;
            Type::Text
        }
        "md" | "cell" => {
            takes(&[TypeKind::Text], "it escapes text")?;
            Type::Text
        }
        "brief" => Type::Text,
        // `default` gives its value, or the fallback where the value is undefined.
        _ => match args.first() {
            Some(fallback) if fallback == s => s.clone(),
            _ => Type::Any,
        },
    })
}

fn binary(op: BinaryOp, l: &Term, r: &Term, lt: &Type, rt: &Type) -> Result<Type, SyntaxError> {
    Ok(match op {
        BinaryOp::And | BinaryOp::Or => {
            if *lt == Type::Bool && *rt == Type::Bool {
                Type::Bool
            } else {
                Type::Any
            }
        }
        BinaryOp::Eq | BinaryOp::Ne => {
            if lt.fits(&[TypeKind::Number]) && rt.fits(&[TypeKind::Number]) {
                same_measure(r, lt, rt, "compared with")?;
            }
            Type::Bool
        }
        BinaryOp::Lt | BinaryOp::Lte | BinaryOp::Gt | BinaryOp::Gte => {
            let ordered = [TypeKind::Number, TypeKind::Text];
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
            if lt.known()
                && rt.known()
                && !(lt.is_number_or_none() && rt.is_number_or_none())
                && lt.shape() != rt.shape()
            {
                return Err(wrong(
                    r,
                    rt,
                    &format!("cannot be compared with {} by `{}`", lt.name(), op.symbol()),
                ));
            }
            if lt.fits(&[TypeKind::Number]) && rt.fits(&[TypeKind::Number]) {
                same_measure(r, lt, rt, "compared with")?;
            }
            Type::Bool
        }
        BinaryOp::In | BinaryOp::NotIn => {
            if !rt.fits(&[TypeKind::List, TypeKind::Map, TypeKind::Text]) {
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
        BinaryOp::Add
            if lt.shape() == Some(TypeKind::List) || rt.shape() == Some(TypeKind::List) =>
        {
            for (side, t) in [(l, lt), (r, rt)] {
                if !t.fits(&[TypeKind::List]) {
                    return Err(wrong(side, t, "cannot be added to a list"));
                }
            }
            match (lt, rt) {
                (Type::List(a), Type::List(b)) if a == b => lt.clone(),
                _ => Type::list(),
            }
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
            if let Some(d) = arithmetic_measure(op, l, r, lt, rt)? {
                Type::Quantity(d)
            } else if op == BinaryOp::Add && (!lt.known() || !rt.known()) {
                // Two undeclared values may be lists.
                Type::Any
            } else {
                Type::Number
            }
        }
    })
}

/// The unit an offer's own prices are for, in the dimensions of its fields (`cny/price_unit`):
/// `price.unit`, a value of each offer, which a test of it names.
pub const PRICE_UNIT: &str = "price_unit";

/// The type of `term` read where `test` is `holds` (true or false): with the price units the
/// test then says (`o.price.unit == 'month'` where it holds, `!= 'month'` where it does not).
fn refined(term: &Term, test: &Term, holds: bool, names: &dyn Names) -> Result<Type, SyntaxError> {
    let mut units = Vec::new();
    price_units(test, holds, &mut units);
    if units.is_empty() {
        infer(term, names)
    } else {
        infer(
            term,
            &Refined {
                names,
                units: &units,
            },
        )
    }
}

/// The offers whose price unit `test` says where it is `holds` (`o.price.unit == 'month'`
/// holding, either side of an `and`; `!=` not holding, either side of an `or`; `not` turns
/// it), each as the path of the offer and the unit.
fn price_units(test: &Term, holds: bool, out: &mut Vec<(String, String)>) {
    match &test.kind {
        TermKind::Binary(BinaryOp::And, a, b) if holds => {
            price_units(a, holds, out);
            price_units(b, holds, out);
        }
        TermKind::Binary(BinaryOp::Or, a, b) if !holds => {
            price_units(a, holds, out);
            price_units(b, holds, out);
        }
        TermKind::Unary(UnaryOp::Not, e) => price_units(e, !holds, out),
        TermKind::Binary(op @ (BinaryOp::Eq | BinaryOp::Ne), a, b)
            if holds == (*op == BinaryOp::Eq) =>
        {
            for (path, unit) in [(a, b), (b, a)] {
                if let (Some(path), TermKind::Lit(Lit::Str(unit))) = (path.path(), &unit.kind)
                    && let Some(offer) = path.strip_suffix(".price.unit")
                {
                    out.push((offer.to_owned(), unit.to_string()));
                }
            }
        }
        _ => {}
    }
}

/// The names of an expression in a branch where the price units of some offers are known:
/// their fields' dimensions have the unit for [`PRICE_UNIT`].
struct Refined<'a> {
    names: &'a dyn Names,
    units: &'a [(String, String)],
}

impl Names for Refined<'_> {
    fn path(&self, path: &str) -> Result<Option<Type>, Unknown> {
        let found = self.names.path(path)?;
        Ok(found.map(|t| {
            self.units
                .iter()
                .filter(|(offer, _)| {
                    path.strip_prefix(offer.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
                })
                .fold(t, |t, (_, unit)| {
                    t.with_unit(PRICE_UNIT, &self.names.price_unit(unit))
                })
        }))
    }

    fn price_unit(&self, unit: &str) -> Measure {
        self.names.price_unit(unit)
    }
}

/// The dimension of `l op r` (`+`, `-`, `%`: the one both sides share; `*`, `/`, `//`: the
/// product or quotient of theirs, a literal a plain number), where it is known: `None` where a
/// side of unknown dimension leaves it unknown.
fn arithmetic_measure(
    op: BinaryOp,
    l: &Term,
    r: &Term,
    lt: &Type,
    rt: &Type,
) -> Result<Option<Measure>, SyntaxError> {
    let of = |term: &Term, t: &Type| match t.dimension() {
        Some(d) => Some(d.clone()),
        None if literal(term).is_some() => Some(Measure::one()),
        None => None,
    };
    Ok(match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Rem => {
            let doing = match op {
                BinaryOp::Add => "added to",
                BinaryOp::Sub => "taken from",
                _ => "divided with remainder by",
            };
            same_measure(r, lt, rt, doing)?
        }
        // Two literals make a plain number of no declared unit.
        _ if !quantity(lt, rt) => None,
        BinaryOp::Mul => of(l, lt).zip(of(r, rt)).map(|(a, b)| a.times(&b)),
        BinaryOp::Div | BinaryOp::FloorDiv => of(l, lt).zip(of(r, rt)).map(|(a, b)| a.per(&b)),
        _ => None,
    })
}

/// Whether either side is of a declared dimension.
fn quantity(lt: &Type, rt: &Type) -> bool {
    lt.dimension().is_some() || rt.dimension().is_some()
}

/// The dimension two numbers must share to be added, compared or chosen one for the other
/// (`doing`: how the error says it): the declared one where either side declares one (a side of
/// unknown dimension is taken to have it, and so is a number written in the expression: `x > 0`,
/// `months if m is defined else 1`), `None` where neither does; an error where they declare
/// different ones.
fn same_measure(
    r: &Term,
    lt: &Type,
    rt: &Type,
    doing: &str,
) -> Result<Option<Measure>, SyntaxError> {
    let mixed = |side: &Term, this: &Measure, other: &Measure| {
        SyntaxError {
        message: format!(
            "this is {} and cannot be {doing} {}",
            Type::Quantity(this.clone()).name(),
            Type::Quantity(other.clone()).name()
        ),
        span: side.span.clone(),
        help: Some(
            "numbers of different units never meet: convert one first, through a fact whose `quantity:` is the unit between them (e.g. `hours_per_month`, `quantity: hour/month`)"
                .to_owned(),
        ),
    }
    };
    Ok(match (lt.dimension(), rt.dimension()) {
        (Some(a), Some(b)) if a != b => return Err(mixed(r, b, a)),
        (Some(d), _) | (_, Some(d)) => Some(d.clone()),
        (None, None) => None,
    })
}

/// The value of a number written in the expression (`5`, `-0.5`), else `None`.
fn literal(term: &Term) -> Option<f64> {
    match &term.kind {
        #[allow(clippy::cast_precision_loss)]
        TermKind::Lit(Lit::Int(i)) => Some(*i as f64),
        TermKind::Lit(Lit::Float(f)) => Some(*f),
        TermKind::Unary(UnaryOp::Neg, e) => literal(e).map(|v| -v),
        _ => None,
    }
}

/// A number where one is needed: its type, or the error.
fn number(term: &Term, t: &Type, what: &str) -> Result<Type, SyntaxError> {
    if t.fits(&[TypeKind::Number]) {
        Ok(Type::Number)
    } else {
        Err(wrong(term, t, what))
    }
}

fn wrong(term: &Term, t: &Type, what: &str) -> SyntaxError {
    let help = match t {
        Type::Text => Some("`~` joins texts; arithmetic, ordering and number filters need numbers"),
        Type::Null => Some("`none` is no value: test it first (`x is none`) or give a default"),
        t if t.is_map_or_none() => Some(
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
                "l" => Type::list(),
                "m" => Type::Map,
                "o" => Type::PerOffer(Arc::new(Type::Number)),
                "s" => Type::map_or_none(),
                "r" => Type::record(
                    vec![("k".into(), Type::Number), ("t".into(), Type::Text)],
                    true,
                ),
                "ln" => Type::list_of(Type::Number),
                "m.gone" => {
                    return Err(Unknown {
                        message: "no value has `gone`".to_owned(),
                        help: None,
                    });
                }
                _ => return Ok(None),
            }))
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
            ("l + [1]", Type::list()),
            ("ln + [1]", Type::list_of(Type::Number)),
            ("ln[0] * 2", Type::Number),
            ("r.k", Type::Number),
            ("r['t'] ~ '!'", Type::Text),
            ("{'a': 1, 'b': t}.b", Type::Text),
            ("[1, 2] | max", Type::Number),
            ("range(1, 3)", Type::list_of(Type::Number)),
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
            ("r.kk", "this is a map and has no field `kk`"),
            ("{'a': 1}.b + 1", "this is a map and has no field `b`"),
            (
                "r.t * 2",
                "this is text and is not a number: `*` is arithmetic",
            ),
            (
                "ln[0] ~ 'a' | cny",
                "this is text and cannot go through `cny`: it writes a number",
            ),
            (
                "o[x.id] ~ 'a' if b else o[x.id] | join(',')",
                "this is a number and cannot go through `join`: it joins a list",
            ),
        ] {
            assert_eq!(infer_text(text), Err(message.to_owned()), "{text}");
        }
    }

    #[test]
    fn a_type_admits_the_values_it_claims() {
        use crate::value::Value;
        let pair = |k: &str, v: Value| (Value::from(k), v);
        let record = Type::record(vec![("k".into(), Type::Number)], true);
        assert!(record.admits(&Value::from_pairs([pair("k", Value::from(1.5))])));
        assert!(!record.admits(&Value::from_pairs([pair("k", Value::from("x"))])));
        assert!(
            !record.admits(&Value::from_pairs([
                pair("k", Value::from(1)),
                pair("extra", Value::None)
            ])),
            "a closed record has no other field"
        );
        assert!(record.opened().admits(&Value::from_pairs([
            pair("k", Value::from(1)),
            pair("extra", Value::None)
        ])));
        assert!(Type::Nullable(Arc::new(record.clone())).admits(&Value::None));
        assert!(!record.admits(&Value::None));
        let numbers = Type::list_of(Type::Number);
        assert!(numbers.admits(&[1, 2].into_iter().map(Value::from).collect()));
        assert!(!numbers.admits(&Value::from(vec![Value::from("1")])));
        assert!(
            Type::Number.admits(&Value::Undefined),
            "undefined is checked where it is used"
        );
    }
}

/// The typechecker's units against what an expression computes: an expression it accepts, of
/// numbers of declared dimensions, gives the same answer in any units (Kennedy's scale
/// invariance: measure every yuan in fen and every hour in minutes, and a number of `cny/hour`
/// is multiplied by 100/60, a comparison unchanged), so that no answer it lets through can
/// depend on adding a price per hour to a price per month.
#[cfg(test)]
mod scale {
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::*;
    use crate::code::Code;
    use crate::value::Value;

    /// The units a rescaling changes, and the dimensions of the names the expressions read:
    /// the kinds of the quote sheets' price columns (a row's own price per its unit, a day's,
    /// an hour's, a term's price and length), a length of time, an amount.
    const UNITS: [&str; 5] = ["cny", "hour", "day", "month", "term"];
    const NAMES: [(&str, &str); 8] = [
        ("monthly", "cny/month"),
        ("other_monthly", "cny/month"),
        ("daily", "cny/day"),
        ("hourly", "cny/hour"),
        ("term_cny", "cny/term"),
        ("term_hours", "hour/term"),
        ("month_hours", "hour/month"),
        ("hours", "hour"),
    ];

    struct Columns;

    impl Names for Columns {
        fn path(&self, path: &str) -> Result<Option<Type>, Unknown> {
            Ok(NAMES
                .iter()
                .find(|(n, _)| *n == path)
                .map(|(_, d)| Type::Quantity(Measure::parse(d).unwrap())))
        }
    }

    /// A random expression over the names: sums, differences, products, quotients, orderings,
    /// choices, least and greatest; a number written in it only ever a factor (a number beside
    /// a sum is read in the sum's unit, which no rescaling can follow).
    fn expression() -> impl Strategy<Value = String> {
        let leaf = (0..NAMES.len()).prop_map(|i| NAMES[i].0.to_owned());
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} - {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} * {b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} / {b})")),
                (inner.clone(), 1..5u8).prop_map(|(a, k)| format!("({k} * {a})")),
                (inner.clone(), inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c, d)| format!("({a} if {b} < {c} else {d})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("([{a}, {b}] | max)")),
                (inner.clone(), inner).prop_map(|(a, b)| format!("({a} <= {b})")),
            ]
        })
    }

    /// The expression's value with each name at its value times its dimension's factor under
    /// `scale` (each unit's factor, a power of two, so that the rescaling is exact).
    fn value(text: &str, values: &[f64], scale: &[i32]) -> Option<Value> {
        let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        let (_, code) = Code::over(text, &names).unwrap();
        let slots: Vec<OnceLock<Value>> = NAMES
            .iter()
            .zip(values)
            .map(|((_, d), v)| {
                OnceLock::from(Value::from(v * factor(&Measure::parse(d).unwrap(), scale)))
            })
            .collect();
        code.eval_partial(&slots).ok()
    }

    fn factor(d: &Measure, scale: &[i32]) -> f64 {
        d.units()
            .iter()
            .map(|(unit, power)| {
                let i = UNITS.iter().position(|u| *u == &**unit).unwrap();
                2f64.powi(scale[i] * i32::from(*power))
            })
            .product()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn what_the_typechecker_accepts_gives_the_same_answer_in_any_units(
            text in expression(),
            values in proptest::collection::vec(1u32..1000, NAMES.len()),
            scale in proptest::collection::vec(-6i32..6, UNITS.len()),
        ) {
            let tree = crate::parser::parse(&text).unwrap();
            let Ok(ty) = infer(&tree, &Columns) else {
                return Ok(());
            };
            let values: Vec<f64> = values.into_iter().map(f64::from).collect();
            let plain = value(&text, &values, &vec![0; UNITS.len()]);
            let scaled = value(&text, &values, &scale);
            match (ty, plain, scaled) {
                (Type::Quantity(d), Some(plain), Some(scaled)) => {
                    let (p, s) = (plain.as_number().unwrap(), scaled.as_number().unwrap());
                    // Exact: every factor is a power of two.
                    prop_assert_eq!(s.to_bits(), (p * factor(&d, &scale)).to_bits(), "{} in {}", text, d);
                }
                (Type::Bool, Some(plain), Some(scaled)) => {
                    prop_assert_eq!(plain.is_true(), scaled.is_true(), "{}", text);
                }
                // A division by zero fails in every unit alike.
                (_, plain, scaled) => prop_assert_eq!(plain.is_some(), scaled.is_some(), "{}", text),
            }
        }

        #[test]
        fn numbers_of_different_units_never_meet(
            a in 0..NAMES.len(),
            b in 0..NAMES.len(),
            op in prop::sample::select(vec!["+", "-", "<", ">=", "==", "%"]),
        ) {
            let text = format!("{} {op} {}", NAMES[a].0, NAMES[b].0);
            let result = infer(&crate::parser::parse(&text).unwrap(), &Columns);
            let same = NAMES[a].1 == NAMES[b].1;
            prop_assert_eq!(result.is_ok(), same, "{}", text);
            if let Err(e) = result {
                prop_assert!(e.message.contains(NAMES[a].1) && e.message.contains(NAMES[b].1), "{}", e.message);
            }
        }
    }

    #[test]
    fn a_choice_and_a_least_of_different_units_are_refused_and_a_conversion_is_not() {
        let infer_text = |text: &str| infer(&crate::parser::parse(text).unwrap(), &Columns);
        for refused in [
            "monthly if hours > 3 else daily",
            "[monthly, hourly * 720] | min",
            "monthly + hourly * 720",
            "hours < month_hours",
        ] {
            assert!(infer_text(refused).is_err(), "{refused}");
        }
        let month = Type::Quantity(Measure::parse("cny/month").unwrap());
        for converted in [
            "hourly * month_hours",
            "monthly if hours > 3 else hourly * month_hours",
            "[monthly, hourly * month_hours] | min",
            "term_cny / term_hours * month_hours + other_monthly",
        ] {
            assert_eq!(infer_text(converted).unwrap(), month, "{converted}");
        }
    }

    /// An offer's price per its unit, an hourly and a monthly price; a GPU-hour is an hour.
    struct Priced;

    impl Names for Priced {
        fn path(&self, path: &str) -> Result<Option<Type>, Unknown> {
            let d = |text: &str| Some(Type::Quantity(Measure::parse(text).unwrap()));
            Ok(match path {
                "o.price.list_cny" => d("cny/price_unit"),
                "hourly" => d("cny/hour"),
                "monthly" => d("cny/month"),
                _ => None,
            })
        }

        fn price_unit(&self, unit: &str) -> Measure {
            match unit {
                "gpu_hour" => Measure::unit("hour"),
                other => Measure::unit(other),
            }
        }
    }

    #[test]
    fn a_test_of_the_price_unit_says_it_where_the_test_is_known_to_hold_or_not() {
        let infer_text = |text: &str| infer(&crate::parser::parse(text).unwrap(), &Priced);
        // Where `o.price.unit` is known to be a GPU-hour, its price is one an hour: in the
        // branch a test chooses, its `else` after `!=` or `not`, and the right of `and`
        // (where the left holds) or of `or` (where it does not).
        for accepted in [
            "o.price.list_cny < hourly if o.price.unit == 'gpu_hour' else false",
            "false if o.price.unit != 'gpu_hour' else o.price.list_cny < hourly",
            "false if not (o.price.unit == 'gpu_hour') else o.price.list_cny < hourly",
            "false if o.gpus > 1 or o.price.unit != 'gpu_hour' else o.price.list_cny < hourly",
            "o.price.unit == 'gpu_hour' and o.price.list_cny < hourly",
            "o.price.unit != 'gpu_hour' or o.price.list_cny < hourly",
            "o.price.unit == 'month' and o.price.list_cny < monthly",
        ] {
            assert!(infer_text(accepted).is_ok(), "{accepted}");
        }
        // Nowhere else: not where it may be either, nor where it is another unit.
        for refused in [
            "o.price.list_cny < hourly",
            "o.price.list_cny < hourly if o.price.unit != 'gpu_hour' else false",
            "false if o.gpus > 1 and o.price.unit != 'gpu_hour' else o.price.list_cny < hourly",
            "o.price.unit == 'gpu_hour' or o.price.list_cny < hourly",
            "o.price.unit == 'month' and o.price.list_cny < hourly",
            "o.gpus > 1 or o.price.unit == 'gpu_hour' and o.price.list_cny < monthly",
        ] {
            assert!(infer_text(refused).is_err(), "{refused}");
        }
    }

    /// A profile's number of a unit that it may leave out (a deadline in days).
    struct Deadline;

    impl Names for Deadline {
        fn path(&self, path: &str) -> Result<Option<Type>, Unknown> {
            let d = |text: &str| Type::Quantity(Measure::parse(text).unwrap());
            Ok(match path {
                "deadline_days" => Some(Type::Nullable(Arc::new(d("day")))),
                "hours_per_day" => Some(d("hour/day")),
                "job_hours" => Some(d("hour")),
                _ => None,
            })
        }
    }

    #[test]
    fn a_number_of_a_unit_or_none_keeps_its_unit_and_stays_none_able() {
        let infer_text = |text: &str| infer(&crate::parser::parse(text).unwrap(), &Deadline);
        let day = Type::Quantity(Measure::unit("day"));
        // Read alone it may be none; where it is a number, it is one of days.
        assert_eq!(
            infer_text("deadline_days").unwrap(),
            Type::Nullable(Arc::new(day.clone()))
        );
        assert_eq!(
            infer_text("deadline_days | round").unwrap(),
            Type::Nullable(Arc::new(day.clone()))
        );
        assert_eq!(infer_text("deadline_days * 2").unwrap(), day);
        assert_eq!(infer_text("ceil(deadline_days)").unwrap(), day);
        // Days meet hours only through the hours in a day.
        for refused in [
            "job_hours <= deadline_days * 24",
            "job_hours + deadline_days",
            "job_hours if deadline_days is none else deadline_days",
            "[job_hours, deadline_days] | min",
        ] {
            let err = infer_text(refused).unwrap_err();
            assert!(
                err.message.contains("a number in day") && err.message.contains("a number in hour"),
                "{refused}: {}",
                err.message
            );
        }
        assert_eq!(
            infer_text("deadline_days * hours_per_day").unwrap(),
            Type::Quantity(Measure::unit("hour"))
        );
        assert_eq!(
            infer_text("job_hours <= deadline_days * hours_per_day").unwrap(),
            Type::Bool
        );
        // A choice of it or none is a number of its unit or none, not claimed a number.
        assert_eq!(
            infer_text("deadline_days * hours_per_day if deadline_days is not none else none")
                .unwrap(),
            Type::Nullable(Arc::new(Type::Quantity(Measure::unit("hour"))))
        );
        assert!(
            infer_text("job_hours + (deadline_days if deadline_days > 2 else none)")
                .unwrap_err()
                .message
                .contains("a number in day")
        );
        assert!(infer_text("deadline_days > 3 and deadline_days < 30").is_ok());
    }
}
