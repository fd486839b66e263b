//! The rule language's compiler and evaluator: a syntax tree ([`super::ast`]) compiled once,
//! when the rules load, into [`Code`] whose names are resolved to evaluation slots (or to the
//! node's bound item, `offer`, `job`, ...), evaluated directly against the slots. This is what a
//! rule expression means: there is no other evaluator behind it.
//!
//! Two reads are prepared at compile time. Where a node binds a catalog offer (a per-offer
//! fact's `offer`, a select's item over `offers`), `offer.a.b` is a column worked out once per
//! graph and `fact[offer.id]` / `offer.id in fact` read a per-offer fact by the offer's position
//! ([`PerOffer`]), instead of looking keys up in maps. A map
//! literal with constant keys builds a [`Record`] (keys fixed, values in order) rather than a
//! hashed map. Constant operations are folded at compile time.
//!
//! **Values** are the language's own ([`Value`]); minijinja reads them through the adapter at
//! the template boundary ([`crate::jinja`]).
//! **Numbers**: whole numbers stay whole (arithmetic in `i128`, an overflow is an error), `/`
//! always gives a decimal, `//` and `%` are floored, a whole number and a decimal together give
//! a decimal. **Undefined**: reading a field or key a value does not have gives *undefined*,
//! which only `is defined`, `is undefined`, `is none` and `| default(...)` accept, and which a
//! list or map may hold; anything else done with it is an error that says so. `and` and `or`
//! give one of their operands. These are Jinja's rules as minijinja 3.1 implements them with
//! strict undefined values, and `tests/interp.rs` holds the evaluator to minijinja, as a
//! reference, on every shipped rule expression over generated profiles: where minijinja
//! answers, this gives the same value; where minijinja fails, this fails. It is stricter in
//! three places, on purpose: arithmetic on true or false (minijinja counts them as 1 and 0),
//! `+` or `*` on texts (`~` joins texts; minijinja also repeats a text), and `min`/`max` over
//! anything but numbers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::ast::{BinaryOp, Lit, Term, TermKind, UnaryOp};
use super::lexer::SyntaxError;
use super::value::{Kind, PerOffer, Record, Value};
use super::vocabulary::{self, Builtin};

/// Names expressions can look up, each with its slot in an evaluation: roots first, then nodes.
#[derive(Debug)]
pub struct Slots {
    pub index: HashMap<String, usize>,
}

impl Slots {
    /// Slots for `names`, each at its position (values of a text's or an expression's own).
    #[must_use]
    pub fn of(names: &[&str]) -> Slots {
        Slots {
            index: names
                .iter()
                .enumerate()
                .map(|(i, n)| ((*n).to_owned(), i))
                .collect(),
        }
    }
}

/// The item a node binds (`offer` in a per-offer fact, a select's `item:`), and its position in
/// the catalog when it is one of the catalog's offers (then the offer's attributes and its
/// entries in per-offer facts are read by position).
#[derive(Debug, Clone, Copy)]
pub struct Bound<'a> {
    pub value: &'a Value,
    pub offer: Option<usize>,
}

/// An expression compiled to code.
#[derive(Debug)]
pub struct Code(Op);

/// Why an evaluation failed, in the rule language's words, and the part of the expression's
/// text that failed (byte range), where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub message: String,
    pub span: Option<Range<usize>>,
}

impl Fail {
    fn new(message: String) -> Self {
        Fail {
            message,
            span: None,
        }
    }

    /// The failure placed at `span`, unless a part inside it is already named.
    fn within(mut self, span: &Range<usize>) -> Self {
        if self.span.is_none() {
            self.span = Some(span.clone());
        }
        self
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One operation of compiled code: a value, a read, or an operation on the values of its parts.
#[derive(Debug)]
enum Op {
    /// A part that can fail, with its place in the text (what an error points at).
    At(Range<usize>, Box<Op>),
    Const(Value),
    /// A root or node value, by slot.
    Slot(usize),
    /// A name a text template set before (`{% set p = ... %}`), by its position among them.
    Local(usize),
    /// The item the node binds (`offer` in a per-offer fact, a select's item).
    Bound,
    Attr(Box<Op>, Box<str>),
    Item(Box<Op>, Box<Op>),
    Not(Box<Op>),
    Neg(Box<Op>),
    And(Box<Op>, Box<Op>),
    Or(Box<Op>, Box<Op>),
    Bin(BinaryOp, Box<Op>, Box<Op>),
    If(Box<Op>, Box<Op>, Box<Op>),
    List(Vec<Op>),
    Map(Vec<(Op, Op)>),
    /// A map literal with distinct constant text keys: a [`Record`].
    Record(Arc<[Value]>, Vec<Op>),
    Call(Builtin, Vec<Op>),
    /// `item.a.b` with the item bound: the path's value for each catalog offer, worked out at
    /// compile time ([`Column`]), used when the item is a catalog offer; the general form
    /// otherwise.
    OfferPath(Box<[Column]>, Box<Op>),
    /// `fact[item.id]` with a catalog offer bound and `fact` (a slot) a per-offer fact: the
    /// fact's value for that offer, by position; the general form otherwise.
    PerOfferItem(usize, Box<Op>),
    /// `item.id in fact` (or `not in`, when the flag is set), likewise.
    PerOfferHas(usize, bool, Box<Op>),
}

/// One catalog offer's value of a path `offer.a.b`: the value (undefined when the last field is
/// missing), or the field that is missing before the end, which makes reading the path an
/// error.
#[derive(Debug)]
enum Column {
    Value(Value),
    Missing(Box<str>),
}

impl Code {
    /// `text` compiled (for tests: the rules compile their parsed trees, [`Code::with_locals`]).
    #[cfg(test)]
    pub(crate) fn compile(
        text: &str,
        names: &Slots,
        bound: &[&str],
        offers: &[Value],
    ) -> Result<Code, SyntaxError> {
        let expr = super::parser::parse(text)?;
        Self::with_locals(&expr, names, bound, &[], offers)
    }

    /// `text` parsed, its calls checked against the language's, and compiled over values of
    /// its own, `names` in order (the values [`Code::eval`] or [`Code::eval_partial`] is then
    /// given by position): a question's `when` over the answers so far. Gives the tree too, for
    /// the paths it reads.
    ///
    /// # Errors
    /// Why it does not parse or compile, with its place in `text`.
    pub fn over(text: &str, names: &[&str]) -> Result<(Term, Code), SyntaxError> {
        let tree = super::parser::parse(text)?;
        super::vocabulary::check(&tree)?;
        let code = Self::with_locals(&tree, &Slots::of(names), &[], &[], &[])?;
        Ok((tree, code))
    }

    /// An expression of a text template compiled, where `locals` are the names the template
    /// set before it, in order (a later one shadows an earlier one of the same name, and both
    /// shadow every other name); it reads them from the values [`Code::eval_with_locals`] is
    /// given, by position.
    pub fn with_locals(
        expr: &Term,
        names: &Slots,
        bound: &[&str],
        locals: &[&str],
        offers: &[Value],
    ) -> Result<Code, SyntaxError> {
        let c = Compiler {
            names,
            bound,
            locals,
            offers,
        };
        c.node(expr).map(Code)
    }

    /// The value of the expression.
    ///
    /// # Errors
    /// What went wrong, in the language's words (a division by zero, `none` in arithmetic, an
    /// undefined value used, ...).
    pub fn eval(&self, slots: &[OnceLock<Value>], bound: Option<Bound<'_>>) -> Result<Value, Fail> {
        self.eval_with_locals(slots, bound, &[])
    }

    /// [`Code::eval`] with the values of the names a text template set before the expression
    /// (see [`Code::with_locals`]).
    pub fn eval_with_locals(
        &self,
        slots: &[OnceLock<Value>],
        bound: Option<Bound<'_>>,
        locals: &[Value],
    ) -> Result<Value, Fail> {
        Eval {
            slots,
            bound,
            locals,
            partial: false,
        }
        .eval(&self.0)
        .map(Cow::into_owned)
    }

    /// The value over a record still being filled in (a questionnaire's answers so far): a
    /// field read below one that is not there is undefined rather than an error, an undefined
    /// value counts as false, and `==` / `!=` compare it (it equals nothing but itself). Every
    /// other use of an undefined value fails as in [`Code::eval`].
    ///
    /// # Errors
    /// What went wrong, as [`Code::eval`] says it.
    pub fn eval_partial(&self, slots: &[OnceLock<Value>]) -> Result<Value, Fail> {
        Eval {
            slots,
            bound: None,
            locals: &[],
            partial: true,
        }
        .eval(&self.0)
        .map(Cow::into_owned)
    }
}

struct Compiler<'a> {
    names: &'a Slots,
    bound: &'a [&'a str],
    locals: &'a [&'a str],
    offers: &'a [Value],
}

/// A compile error at `expr`.
fn refuse(expr: &Term, message: String, help: &str) -> SyntaxError {
    SyntaxError {
        message,
        span: expr.span.clone(),
        help: Some(help.to_owned()),
    }
}

impl Compiler<'_> {
    fn node(&self, expr: &Term) -> Result<Op, SyntaxError> {
        if expr.is_const() {
            return Ok(Op::Const(constant(expr)));
        }
        let boxed = |e: &Term| self.node(e).map(Box::new);
        let node = match &expr.kind {
            TermKind::Lit(_) => Op::Const(constant(expr)),
            TermKind::Var(name) => self.var(name),
            TermKind::Unary(UnaryOp::Not, e) => Op::Not(boxed(e)?),
            TermKind::Unary(UnaryOp::Neg, e) => Op::Neg(boxed(e)?),
            TermKind::Binary(op, l, r) => match op {
                BinaryOp::And => Op::And(boxed(l)?, boxed(r)?),
                BinaryOp::Or => Op::Or(boxed(l)?, boxed(r)?),
                BinaryOp::In | BinaryOp::NotIn => {
                    let general = Op::Bin(*op, boxed(l)?, boxed(r)?);
                    match self.per_offer_fact(r, l) {
                        Some(slot) => {
                            Op::PerOfferHas(slot, *op == BinaryOp::NotIn, Box::new(general))
                        }
                        None => general,
                    }
                }
                op => Op::Bin(*op, boxed(l)?, boxed(r)?),
            },
            TermKind::If { test, yes, no } => {
                let Some(no) = no else {
                    return Err(refuse(
                        expr,
                        "an `if` needs an `else` in a rule expression".to_owned(),
                        "say what the value is otherwise: `a if c else b`",
                    ));
                };
                Op::If(boxed(test)?, boxed(yes)?, boxed(no)?)
            }
            TermKind::Attr(e, name) => {
                let general = Op::Attr(boxed(e)?, name.clone());
                match self.offer_path(expr) {
                    Some(column) => Op::OfferPath(column, Box::new(general)),
                    None => general,
                }
            }
            TermKind::Item(e, key) => {
                let general = Op::Item(boxed(e)?, boxed(key)?);
                match self.per_offer_fact(e, key) {
                    Some(slot) => Op::PerOfferItem(slot, Box::new(general)),
                    None => general,
                }
            }
            TermKind::List(items) => Op::List(
                items
                    .iter()
                    .map(|e| self.node(e))
                    .collect::<Result<_, _>>()?,
            ),
            TermKind::Map(pairs) => self.map(pairs)?,
            TermKind::Filter { .. } | TermKind::Test { .. } | TermKind::Call { .. } => {
                self.call(expr)?
            }
        };
        Ok(match fold(node) {
            node @ (Op::Const(_)
            | Op::Slot(_)
            | Op::Local(_)
            | Op::Bound
            | Op::List(_)
            | Op::Map(_)
            | Op::Record(..)
            | Op::PerOfferItem(..)
            | Op::PerOfferHas(..)) => node,
            node => Op::At(expr.span.clone(), Box::new(node)),
        })
    }

    /// A filter, a test or a function call, as the language's vocabulary names them.
    fn call(&self, expr: &Term) -> Result<Op, SyntaxError> {
        let unknown = |what: &str, name: &str| {
            refuse(
                expr,
                format!("`{name}` is not a {what} of the rule language with these arguments"),
                "the language's filters, tests and functions are listed in docs/policy.md",
            )
        };
        Ok(match &expr.kind {
            TermKind::Filter {
                name,
                subject,
                args,
            } => {
                let func = vocabulary::builtin(vocabulary::FILTERS, &name.text, args.len())
                    .ok_or_else(|| unknown("filter", &name.text))?;
                if func == Builtin::Round && !args.iter().all(is_precision) {
                    return Err(unknown("filter", &name.text));
                }
                let mut all = vec![self.node(subject)?];
                all.extend(self.args(args)?);
                Op::Call(func, all)
            }
            TermKind::Test {
                name,
                subject,
                negated,
            } => {
                let func = vocabulary::builtin(vocabulary::TESTS, &name.text, 0)
                    .ok_or_else(|| unknown("test", &name.text))?;
                let test = Op::Call(func, vec![self.node(subject)?]);
                if *negated {
                    Op::Not(Box::new(test))
                } else {
                    test
                }
            }
            TermKind::Call { name, args } => {
                // A plain function call: a global name that no node, root or item shadows.
                let id = &*name.text;
                if self.names.index.contains_key(id)
                    || self.bound.contains(&id)
                    || self.locals.contains(&id)
                {
                    return Err(refuse(
                        expr,
                        format!("`{id}` names a value here, so it cannot be called"),
                        "rename the node, or the item the node binds",
                    ));
                }
                let func = vocabulary::builtin(vocabulary::FUNCTIONS, id, args.len())
                    .ok_or_else(|| unknown("function", id))?;
                Op::Call(func, self.args(args)?)
            }
            _ => unreachable!("only calls are compiled here"),
        })
    }

    /// A name: a text's local, the bound item, or a slot. A name that is none of them (the
    /// rules refuse it when they load; a text may read one) reads as undefined.
    fn var(&self, name: &str) -> Op {
        if let Some(i) = self.locals.iter().rposition(|l| *l == name) {
            return Op::Local(i);
        }
        if self.bound.first() == Some(&name) {
            return Op::Bound;
        }
        match self.names.index.get(name) {
            Some(&i) => Op::Slot(i),
            None => Op::Const(Value::Undefined),
        }
    }

    /// A map literal: a record when its keys are distinct constant strings.
    fn map(&self, pairs: &[(Term, Term)]) -> Result<Op, SyntaxError> {
        if let Some(keys) = constant_keys(pairs) {
            let values = pairs
                .iter()
                .map(|(_, e)| self.node(e))
                .collect::<Result<_, _>>()?;
            return Ok(Op::Record(keys, values));
        }
        Ok(Op::Map(
            pairs
                .iter()
                .map(|(k, v)| Ok((self.node(k)?, self.node(v)?)))
                .collect::<Result<_, SyntaxError>>()?,
        ))
    }

    /// For `item.a.b` with the bound item at its root: the path's value for each catalog offer.
    /// `None` when the expression is not such a path.
    fn offer_path(&self, expr: &Term) -> Option<Box<[Column]>> {
        let mut names = Vec::new();
        let mut at = expr;
        while let TermKind::Attr(e, name) = &at.kind {
            names.push(&**name);
            at = e;
        }
        let TermKind::Var(v) = &at.kind else {
            return None;
        };
        if self.bound.first() != Some(&&**v) || names.is_empty() || self.offers.is_empty() {
            return None;
        }
        names.reverse();
        Some(
            self.offers
                .iter()
                .map(|offer| {
                    let mut value = offer.clone();
                    for name in &names {
                        match attr(&value, name) {
                            Ok(v) => value = v,
                            Err(_) => return Column::Missing((*name).into()),
                        }
                    }
                    Column::Value(value)
                })
                .collect(),
        )
    }

    /// For `fact` and `item.id` (a slot and the bound item's id): the slot, read by offer
    /// position when it holds a per-offer fact.
    fn per_offer_fact(&self, map: &Term, key: &Term) -> Option<usize> {
        let TermKind::Attr(item, name) = &key.kind else {
            return None;
        };
        let (TermKind::Var(item), TermKind::Var(fact)) = (&item.kind, &map.kind) else {
            return None;
        };
        if &**name != "id"
            || self.bound.first() != Some(&&**item)
            || self.bound.contains(&&**fact)
            || self.locals.contains(&&**fact)
        {
            return None;
        }
        self.names.index.get(&**fact).copied()
    }

    fn args(&self, args: &[Term]) -> Result<Vec<Op>, SyntaxError> {
        args.iter().map(|a| self.node(a)).collect()
    }
}

/// The value of a literal, or of a list or map of them (the caller has checked
/// [`Term::is_const`]).
fn constant(expr: &Term) -> Value {
    match &expr.kind {
        TermKind::Lit(Lit::None) => Value::from(()),
        TermKind::Lit(Lit::Bool(b)) => Value::from(*b),
        TermKind::Lit(Lit::Int(i)) => Value::from(*i),
        TermKind::Lit(Lit::Float(f)) => Value::from(*f),
        TermKind::Lit(Lit::Str(s)) => Value::from(&**s),
        TermKind::List(items) => Value::from(items.iter().map(constant).collect::<Vec<_>>()),
        TermKind::Map(pairs) => Value::from_pairs(
            pairs
                .iter()
                .map(|(k, v)| (constant(k), constant(v)))
                .collect::<Vec<_>>(),
        ),
        _ => Value::Undefined,
    }
}

/// A node whose operands are all constants, folded into its value where it has one; the node
/// as it is otherwise (an error is left to evaluation, which reports it for a profile).
fn fold(node: Op) -> Op {
    let operands_const = match &node {
        Op::Not(e) | Op::Neg(e) => matches!(**e, Op::Const(_)),
        Op::Bin(_, l, r) => matches!(**l, Op::Const(_)) && matches!(**r, Op::Const(_)),
        _ => false,
    };
    if !operands_const {
        return node;
    }
    let eval = Eval {
        slots: &[],
        bound: None,
        locals: &[],
        partial: false,
    };
    match eval.eval(&node) {
        Ok(v) => Op::Const(v.into_owned()),
        Err(_) => node,
    }
}

/// The keys of a map literal when all are distinct constant strings, in the order written.
fn constant_keys(pairs: &[(Term, Term)]) -> Option<Arc<[Value]>> {
    super::ast::record_keys(pairs).map(|keys| keys.into_iter().map(Value::from).collect())
}

/// `round`'s precision: a literal whole number of decimals.
fn is_precision(arg: &Term) -> bool {
    matches!(arg.kind, TermKind::Lit(Lit::Int(p)) if (0..=1074).contains(&p))
}

/// Evaluation borrows what it can (slots, the bound item, constants) and owns what it makes.
struct Eval<'a> {
    slots: &'a [OnceLock<Value>],
    bound: Option<Bound<'a>>,
    locals: &'a [Value],
    /// Over a partial record ([`Code::eval_partial`]): a field below a missing one is
    /// undefined, an undefined value is false, and `==`/`!=` compare it.
    partial: bool,
}

type Val<'a> = Cow<'a, Value>;

/// What a value is, for messages: "a number", "none", "an undefined value", ...
fn what(v: &Value) -> &'static str {
    match v.kind() {
        Kind::Undefined => "an undefined value",
        Kind::None => "none",
        Kind::Bool => "true or false",
        Kind::Number => "a number",
        Kind::Text => "a text",
        Kind::List => "a list",
        Kind::Map => "a map",
    }
}

/// The error for an undefined value given to `to`.
fn undefined_in(to: &str) -> Fail {
    Fail::new(format!(
        "{to} was given an undefined value (a field or key the value does not have); test it \
         with `is defined`, or give a default with `| default(...)`"
    ))
}

/// `v`, unless it is undefined, which `to` cannot take.
fn defined<'v>(v: &'v Value, to: &str) -> Result<&'v Value, Fail> {
    if v.is_undefined() {
        Err(undefined_in(to))
    } else {
        Ok(v)
    }
}

/// Whether `v` counts as true (`false`, `none`, zero, an empty text, list or map do not).
fn truth(v: &Value, to: &str) -> Result<bool, Fail> {
    Ok(defined(v, to)?.is_true())
}

/// Field `name` of `v`: undefined when `v` has none; an error when `v` is undefined itself.
fn attr(v: &Value, name: &str) -> Result<Value, Fail> {
    if v.is_undefined() {
        return Err(Fail::new(format!(
            "`{name}` was read from an undefined value (a field or key the value does not have)"
        )));
    }
    Ok(v.get_attr(name))
}

/// Entry `key` of `v` (a map's key, a list's position, negative from the end): undefined when
/// there is none; an error when `v` is undefined itself.
fn item(v: &Value, key: &Value) -> Result<Value, Fail> {
    if v.is_undefined() {
        return Err(Fail::new(format!(
            "`[{key}]` was read from an undefined value (a field or key the value does not have)"
        )));
    }
    Ok(v.get_item(key))
}

impl<'a> Eval<'a> {
    /// Whether `v` counts as true ([`truth`]); over a partial record an undefined value is
    /// false.
    fn truth(&self, v: &Value, to: &str) -> Result<bool, Fail> {
        if self.partial && v.is_undefined() {
            return Ok(false);
        }
        truth(v, to)
    }

    /// Field `name` of `v` ([`attr`]); over a partial record, undefined below an undefined value.
    fn attr(&self, v: Val<'a>, name: &str) -> Result<Val<'a>, Fail> {
        if self.partial && v.is_undefined() {
            return Ok(v);
        }
        attr(&v, name).map(Cow::Owned)
    }

    /// Entry `key` of `v` ([`item`]); over a partial record, undefined below an undefined value.
    fn item(&self, v: Val<'a>, key: &Value) -> Result<Val<'a>, Fail> {
        if self.partial && v.is_undefined() {
            return Ok(v);
        }
        item(&v, key).map(Cow::Owned)
    }

    /// `l op r` ([`binary`]); over a partial record `==` and `!=` compare an undefined value.
    fn binary(&self, op: BinaryOp, l: &Value, r: &Value) -> Result<Value, Fail> {
        match op {
            BinaryOp::Eq if self.partial => Ok(Value::from(l == r)),
            BinaryOp::Ne if self.partial => Ok(Value::from(l != r)),
            _ => binary(op, l, r),
        }
    }

    /// The bound item's catalog position, when it is a catalog offer.
    fn offer(&self) -> Option<usize> {
        self.bound?.offer
    }

    /// The per-offer fact in `slot` and the bound offer's position in it, when both are.
    fn per_offer(&self, slot: usize) -> Option<(&'a PerOffer, usize)> {
        let i = self.offer()?;
        match self.slots[slot].get()? {
            Value::PerOffer(fact) => Some((fact, i)),
            _ => None,
        }
    }

    fn eval(&self, node: &'a Op) -> Result<Val<'a>, Fail> {
        const UNDEFINED: Val<'static> = Cow::Owned(Value::Undefined);
        Ok(match node {
            Op::At(span, inner) => return self.eval(inner).map_err(|f| f.within(span)),
            Op::Const(v) => Cow::Borrowed(v),
            Op::Slot(i) => self.slots[*i].get().map_or(UNDEFINED, Cow::Borrowed),
            Op::Local(i) => self.locals.get(*i).map_or(UNDEFINED, Cow::Borrowed),
            Op::Bound => self.bound.map_or(UNDEFINED, |b| Cow::Borrowed(b.value)),
            Op::Attr(e, name) => self.attr(self.eval(e)?, name)?,
            Op::Item(e, key) => {
                let v = self.eval(e)?;
                self.item(v, &*self.eval(key)?)?
            }
            Op::Not(e) => Cow::Owned(Value::from(!self.truth(&*self.eval(e)?, "`not`")?)),
            Op::Neg(e) => {
                let v = self.eval(e)?;
                Cow::Owned(match num(defined(&v, "`-`")?) {
                    Some(Num::Int(i)) => Value::Int(i.checked_neg().ok_or_else(|| overflow(&v))?),
                    Some(Num::Float(f)) => Value::from(-f),
                    None => return Err(Fail::new(format!("`-` needs a number, not {}", what(&v)))),
                })
            }
            Op::And(l, r) => {
                let l = self.eval(l)?;
                if self.truth(&l, "`and`")? {
                    self.eval(r)?
                } else {
                    l
                }
            }
            Op::Or(l, r) => {
                let l = self.eval(l)?;
                if self.truth(&l, "`or`")? {
                    l
                } else {
                    self.eval(r)?
                }
            }
            Op::Bin(op, l, r) => Cow::Owned(self.binary(*op, &*self.eval(l)?, &*self.eval(r)?)?),
            Op::If(test, yes, no) => {
                if self.truth(&*self.eval(test)?, "`if`")? {
                    self.eval(yes)?
                } else {
                    self.eval(no)?
                }
            }
            Op::List(items) => Cow::Owned(Value::from(
                items
                    .iter()
                    .map(|e| self.eval(e).map(Cow::into_owned))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            Op::Map(pairs) => {
                let pairs = pairs
                    .iter()
                    .map(|(k, v)| Ok((self.eval(k)?.into_owned(), self.eval(v)?.into_owned())))
                    .collect::<Result<Vec<_>, Fail>>()?;
                Cow::Owned(Value::from_pairs(pairs))
            }
            Op::Record(keys, values) => Cow::Owned(Record::value(
                keys.clone(),
                values
                    .iter()
                    .map(|e| self.eval(e).map(Cow::into_owned))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            Op::OfferPath(column, general) => match self.offer().and_then(|i| column.get(i)) {
                Some(Column::Value(v)) => Cow::Borrowed(v),
                Some(Column::Missing(name)) => {
                    return Err(attr(&Value::Undefined, name).unwrap_err());
                }
                None => self.eval(general)?,
            },
            Op::PerOfferItem(slot, general) => match self.per_offer(*slot) {
                Some((fact, i)) => fact.at(i).map_or(UNDEFINED, Cow::Borrowed),
                None => self.eval(general)?,
            },
            Op::PerOfferHas(slot, negated, general) => match self.per_offer(*slot) {
                Some((fact, i)) => Cow::Owned(Value::from(fact.at(i).is_some() != *negated)),
                None => self.eval(general)?,
            },
            Op::Call(func, args) => {
                let subject = self.eval(&args[0])?;
                let second = match args.get(1) {
                    Some(e) => Some(self.eval(e)?),
                    None => None,
                };
                Cow::Owned(call(*func, &subject, second.as_deref())?)
            }
        })
    }
}

/// A number as the arithmetic sees it: whole numbers widened to `i128`, or a decimal.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Value) -> Option<Num> {
    match *v {
        Value::Int(i) => Some(Num::Int(i)),
        Value::Float(f) => Some(Num::Float(f)),
        _ => None,
    }
}

/// Both numbers as decimals if either is one, else both whole.
fn coerce(a: Num, b: Num) -> Result<(i128, i128), (f64, f64)> {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => Ok((a, b)),
        (Num::Float(a), Num::Float(b)) => Err((a, b)),
        (Num::Float(a), Num::Int(b)) => Err((a, b as f64)),
        (Num::Int(a), Num::Float(b)) => Err((a as f64, b)),
    }
}

fn as_float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn overflow(v: &Value) -> Fail {
    Fail::new(format!(
        "the result of an operation on {v} is too large a whole number"
    ))
}

#[allow(clippy::many_single_char_names)] // operands and their numbers, as the operators read
fn binary(op: BinaryOp, l: &Value, r: &Value) -> Result<Value, Fail> {
    let sym = op.symbol();
    if l.is_undefined() || r.is_undefined() {
        return Err(undefined_in(&format!("`{sym}`")));
    }
    let numbers = || match (num(l), num(r)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(Fail::new(format!(
            "`{sym}` needs two numbers, and was given {} and {}",
            what(l),
            what(r)
        ))),
    };
    let too_large = || Fail::new(format!("{l} {sym} {r} is too large a whole number"));
    let by_zero = || Fail::new(format!("{l} {sym} {r} divides by zero"));
    let arith = |int: fn(i128, i128) -> Option<i128>, float: fn(f64, f64) -> f64| {
        let (a, b) = numbers()?;
        Ok(match coerce(a, b) {
            Ok((a, b)) => Value::Int(int(a, b).ok_or_else(too_large)?),
            Err((a, b)) => Value::from(float(a, b)),
        })
    };
    match op {
        BinaryOp::Eq => Ok(Value::from(l == r)),
        BinaryOp::Ne => Ok(Value::from(l != r)),
        BinaryOp::Lt => Ok(Value::from(l < r)),
        BinaryOp::Lte => Ok(Value::from(l <= r)),
        BinaryOp::Gt => Ok(Value::from(l > r)),
        BinaryOp::Gte => Ok(Value::from(l >= r)),
        BinaryOp::In => contains(r, l).map(Value::from),
        BinaryOp::NotIn => contains(r, l).map(|c| Value::from(!c)),
        // Two lists concatenate.
        BinaryOp::Add if l.kind() == Kind::List && r.kind() == Kind::List => Ok(l
            .try_iter()
            .into_iter()
            .flatten()
            .chain(r.try_iter().into_iter().flatten())
            .collect()),
        BinaryOp::Add => arith(i128::checked_add, |a, b| a + b),
        BinaryOp::Sub => arith(i128::checked_sub, |a, b| a - b),
        BinaryOp::Mul => arith(i128::checked_mul, |a, b| a * b),
        BinaryOp::Div => {
            let (a, b) = numbers()?;
            let (a, b) = (as_float(a), as_float(b));
            if b == 0.0 {
                return Err(by_zero());
            }
            Ok(Value::from(a / b))
        }
        BinaryOp::FloorDiv | BinaryOp::Rem => {
            let (a, b) = numbers()?;
            let quotient = op == BinaryOp::FloorDiv;
            Ok(match coerce(a, b) {
                Ok((_, 0)) | Err((_, 0.0)) => return Err(by_zero()),
                Ok((a, b)) => {
                    let (q, m) = int_div_rem_floor(a, b).ok_or_else(too_large)?;
                    Value::Int(if quotient { q } else { m })
                }
                Err((a, b)) => {
                    let (q, m) = float_div_rem_floor(a, b);
                    Value::from(if quotient { q } else { m })
                }
            })
        }
        // Short-circuiting: nodes of their own ([`Op::And`], [`Op::Or`]).
        BinaryOp::And | BinaryOp::Or => unreachable!("`and` and `or` are nodes of their own"),
        BinaryOp::Concat => Ok(Value::from(match (l.as_str(), r.as_str()) {
            (Some(a), Some(b)) => [a, b].concat(),
            _ => format!("{l}{r}"),
        })),
    }
}

/// Floored whole-number division and remainder (`None` on overflow; `b` is not zero).
fn int_div_rem_floor(a: i128, b: i128) -> Option<(i128, i128)> {
    let mut quotient = a.checked_div(b)?;
    let mut remainder = a.checked_rem(b)?;
    if remainder != 0 && (remainder < 0) != (b < 0) {
        quotient = quotient.checked_sub(1)?;
        remainder = remainder.checked_add(b)?;
    }
    Some((quotient, remainder))
}

/// Floored decimal division and remainder, as Python and minijinja compute them; `b` is not
/// zero.
#[allow(clippy::if_not_else)] // kept as minijinja writes it
fn float_div_rem_floor(a: f64, b: f64) -> (f64, f64) {
    let mut remainder = a % b;
    let mut quotient = (a - remainder) / b;
    if remainder != 0.0 {
        if (remainder < 0.0) != (b < 0.0) {
            remainder += b;
            quotient -= 1.0;
        }
    } else {
        remainder = 0.0f64.copysign(b);
    }
    if quotient != 0.0 {
        let mut floored = quotient.floor();
        if quotient - floored > 0.5 {
            floored += 1.0;
        }
        quotient = floored;
    } else {
        quotient = 0.0f64.copysign(a / b);
    }
    (quotient, remainder)
}

/// `value in container`: a text in a text, an item in a list, a key in a map.
fn contains(container: &Value, value: &Value) -> Result<bool, Fail> {
    if let Some(s) = container.as_str() {
        return Ok(match value.as_str() {
            Some(v) => s.contains(v),
            None => s.contains(&value.to_string()),
        });
    }
    match container {
        Value::List(items) => Ok(items.iter().any(|item| item == value)),
        _ if container.kind() == Kind::Map => Ok(container.get(value).is_some()),
        _ => Err(Fail::new(format!(
            "`in` looks in a list, a map or a text, and was given {}",
            what(container)
        ))),
    }
}

/// A helper's own error (a filter of `functions.rs`), as the language reports it.
fn helper<T>(r: Result<T, minijinja::Error>) -> Result<T, Fail> {
    r.map_err(|e| Fail::new(e.detail().map_or_else(|| e.to_string(), str::to_owned)))
}

/// How messages name a builtin.
fn builtin_name(func: Builtin) -> &'static str {
    match func {
        Builtin::IsDefined | Builtin::IsUndefined | Builtin::IsNone | Builtin::Default => "",
        Builtin::Abs => "`abs`",
        Builtin::Brief => "`brief`",
        Builtin::Lower => "`lower`",
        Builtin::Cell => "`cell`",
        Builtin::Cny => "`cny`",
        Builtin::Length => "`length`",
        Builtin::Hours => "`hours`",
        Builtin::Each => "`each`",
        Builtin::Join => "`join`",
        Builtin::List => "`list`",
        Builtin::Max => "`max`",
        Builtin::Md => "`md`",
        Builtin::Min => "`min`",
        Builtin::Num => "`num`",
        Builtin::Pct => "`pct`",
        Builtin::Plural => "`plural`",
        Builtin::Round => "`round`",
        Builtin::Ceil => "`ceil`",
        Builtin::Cover => "`cover`",
        Builtin::DaysBetween => "`days_between`",
        Builtin::Floor => "`floor`",
        Builtin::Range => "`range`",
        Builtin::Int => "`int`",
        Builtin::Month => "`month`",
        Builtin::Sci => "`sci`",
    }
}

/// `func` applied to `subject` and its second argument, if any.
fn call(func: Builtin, subject: &Value, second: Option<&Value>) -> Result<Value, Fail> {
    match func {
        Builtin::IsNone => return Ok(Value::from(subject.is_none())),
        Builtin::IsDefined => return Ok(Value::from(!subject.is_undefined())),
        Builtin::IsUndefined => return Ok(Value::from(subject.is_undefined())),
        Builtin::Default => {
            return Ok(if subject.is_undefined() {
                second.cloned().unwrap_or_else(|| Value::from(""))
            } else {
                subject.clone()
            });
        }
        _ => {}
    }
    defined(subject, builtin_name(func))?;
    if let Some(second) = second {
        defined(second, builtin_name(func))?;
    }
    apply(func, subject, second)
}

/// `func` (one that takes no undefined value) applied to `subject` and its second argument.
#[allow(clippy::too_many_lines)] // one arm a builtin
fn apply(func: Builtin, subject: &Value, second: Option<&Value>) -> Result<Value, Fail> {
    let name = || builtin_name(func);
    let needs =
        |what_: &str, v: &Value| Fail::new(format!("{} needs {what_}, not {}", name(), what(v)));
    let text = |v: &'_ Value| {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| needs("a text", v))
    };
    match func {
        Builtin::IsNone | Builtin::IsDefined | Builtin::IsUndefined | Builtin::Default => {
            unreachable!("answered above")
        }
        Builtin::Length => subject
            .len()
            .map(Value::from)
            .ok_or_else(|| needs("a list, a map or a text", subject)),
        Builtin::Round => round(subject, second).ok_or_else(|| needs("a number", subject)),
        Builtin::Max => min_max(subject, std::cmp::Ordering::Greater, &needs),
        Builtin::Min => min_max(subject, std::cmp::Ordering::Less, &needs),
        Builtin::Abs => match num(subject) {
            Some(Num::Int(i)) => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| overflow(subject)),
            Some(Num::Float(f)) => Ok(Value::from(f.abs())),
            None => Err(needs("a number", subject)),
        },
        Builtin::Ceil | Builtin::Floor => {
            let x = num(subject)
                .map(as_float)
                .ok_or_else(|| needs("a number", subject))?;
            let x = if func == Builtin::Ceil {
                x.ceil()
            } else {
                x.floor()
            };
            #[allow(clippy::cast_possible_truncation)] // saturating, as the memo's helper
            Ok(Value::from(x as i64))
        }
        Builtin::Cny | Builtin::Num => {
            let digits = match second {
                None => None,
                Some(d) if d.is_none() => None,
                Some(d) => Some(
                    d.as_i64()
                        .filter(|_| d.is_integer())
                        .and_then(|d| usize::try_from(d).ok())
                        .ok_or_else(|| needs("a whole number of decimals", d))?,
                ),
            };
            helper(if func == Builtin::Cny {
                crate::cny(subject, digits)
            } else {
                crate::num(subject, digits)
            })
            .map(Value::from)
        }
        Builtin::Hours => helper(crate::hours(subject)).map(Value::from),
        Builtin::Pct => helper(crate::pct(subject)).map(Value::from),
        Builtin::Sci => helper(crate::functions::sci(subject)).map(Value::from),
        Builtin::Month => helper(crate::functions::month(subject)).map(Value::from),
        // minijinja's `int` of a number: a decimal truncated toward zero.
        Builtin::Int => match num(subject) {
            Some(Num::Int(i)) => Ok(Value::Int(i)),
            #[allow(clippy::cast_possible_truncation)] // saturating, as minijinja's `int`
            Some(Num::Float(f)) => Ok(Value::from(f as i64)),
            None => Err(needs("a number", subject)),
        },
        Builtin::Plural => {
            let noun = second.map(text).transpose()?.unwrap_or_default();
            helper(crate::plural(subject, &noun)).map(Value::from)
        }
        // A vendor's text is escaped already (see `crate::md_filter`).
        Builtin::Md | Builtin::Cell if subject.is_safe() => Ok(subject.clone()),
        Builtin::Md => Ok(Value::from(crate::md_escape(&text(subject)?))),
        Builtin::Cell => Ok(Value::from(crate::table_cell(&text(subject)?))),
        Builtin::Brief => Ok(Value::from(crate::brief(subject))),
        Builtin::Lower => Ok(Value::from(text(subject)?.to_lowercase())),
        Builtin::Join => {
            let sep = second.map(text).transpose()?.unwrap_or_default();
            let items = subject.try_iter().ok_or_else(|| needs("a list", subject))?;
            let mut out = String::new();
            for (i, item) in items.enumerate() {
                if i > 0 {
                    out.push_str(&sep);
                }
                out.push_str(&item.to_string());
            }
            Ok(Value::from(out))
        }
        Builtin::Each => {
            let map = second.expect("`each` takes a map");
            helper(crate::functions::each(subject, map))
        }
        Builtin::List => Ok(subject
            .try_iter()
            .ok_or_else(|| needs("a list", subject))?
            .collect()),
        Builtin::Range => {
            let to = second.expect("`range` takes two arguments");
            let whole = |v: &Value| {
                v.as_i64()
                    .filter(|_| v.is_integer())
                    .ok_or_else(|| needs("whole numbers", v))
            };
            helper(crate::functions::range(whole(subject)?, whole(to)?))
                .map(|items| items.into_iter().map(Value::from).collect())
        }
        Builtin::Cover => {
            let terms = second.expect("`cover` takes two arguments");
            crate::cover::cover(subject, terms).map_err(Fail::new)
        }
        Builtin::DaysBetween => {
            let to = second.expect("`days_between` takes two arguments");
            helper(crate::days_between(&text(subject)?, &text(to)?)).map(Value::from)
        }
    }
}

/// `round` to a literal whole number of decimals: whole numbers unchanged, decimals through
/// their decimal rendering (round half to even, as Python). `None` for a value that is not a
/// number.
fn round(v: &Value, precision: Option<&Value>) -> Option<Value> {
    let precision = match precision {
        Some(p) => usize::try_from(p.as_i64()?).ok()?,
        None => 0,
    };
    match num(v)? {
        Num::Int(_) => Some(v.clone()),
        Num::Float(f) => Some(Value::from(format!("{f:.precision$}").parse::<f64>().ok()?)),
    }
}

/// `min`/`max` over a list of numbers: the first item that compares strictly as `wanted`;
/// undefined for an empty list.
fn min_max(
    list: &Value,
    wanted: std::cmp::Ordering,
    needs: &dyn Fn(&str, &Value) -> Fail,
) -> Result<Value, Fail> {
    let Some(items) = list.as_list() else {
        return Err(needs("a list of numbers", list));
    };
    let mut best: Option<&Value> = None;
    for item in items {
        if !item.is_number() {
            return Err(needs("a list of numbers", item));
        }
        if best.is_none_or(|b| item.cmp(b) == wanted) {
            best = Some(item);
        }
    }
    Ok(best.cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jinja::{from_jinja, to_jinja};
    use proptest::prelude::*;

    /// Over a partial record (a questionnaire's answers so far) the evaluator answers a
    /// question's condition as minijinja's chainable undefined does, an undefined answer false.
    #[test]
    fn partial_records_read_as_chainable_undefined() {
        let conditions = [
            "profile.workload.task != 'inference'",
            "profile.workload.task == 'inference'",
            "profile.serving is defined",
            "profile.job.hours is defined",
            "profile.job.hours is not defined",
            "not profile.job",
            "profile.job and profile.job.hours > 3",
            "profile.job.hours",
            "profile.usage.gpus == 8 or profile.job is defined",
            "profile['job']['hours'] is defined",
            "profile.job.hours == none",
        ];
        let answers = [
            serde_json::json!({}),
            serde_json::json!({"workload": {}}),
            serde_json::json!({"workload": {"task": "inference"}}),
            serde_json::json!({"job": {"hours": 5}}),
            serde_json::json!({"job": {}}),
            serde_json::json!({"job": null}),
            serde_json::json!({"serving": {"x": 1}, "usage": {"gpus": 8}}),
        ];
        let answer = |v: &Value| match v.kind() {
            Kind::Bool => Some(v.is_true()),
            Kind::Undefined | Kind::None => Some(false),
            _ => None,
        };
        let mut env = crate::environment();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
        for condition in conditions {
            let (_, code) = Code::over(condition, &["profile"]).unwrap();
            for a in &answers {
                let ours = code
                    .eval_partial(&[OnceLock::from(Value::from_serialize(a))])
                    .ok()
                    .and_then(|v| answer(&v));
                let theirs = env
                    .compile_expression(condition)
                    .unwrap()
                    .eval(minijinja::context! { profile => minijinja::value::Serde(a) })
                    .ok()
                    .and_then(|v| answer(&from_jinja(&v)));
                assert_eq!(ours, theirs, "`{condition}` over {a}");
            }
        }
        // Strictly, reading below a missing field is an error.
        let (_, code) = Code::over("profile.job.hours is defined", &["profile"]).unwrap();
        let empty = [OnceLock::from(Value::from_serialize(
            &serde_json::json!({}),
        ))];
        assert!(code.eval(&empty, None).is_err());
        assert_eq!(code.eval_partial(&empty).unwrap(), Value::from(false));
    }

    /// The evaluator's and minijinja's answers for `text` over a few named values (and `item`
    /// bound to 3).
    fn both(text: &str, x: Value, y: Value) -> (Result<Value, Fail>, Result<Value, String>) {
        let vars: Vec<(&str, Value)> = vec![
            ("a", Value::from(7)),
            ("b", Value::from(2.5)),
            ("n", Value::from(())),
            ("s", Value::from("cat")),
            ("m", Value::from_pairs([(Value::from("x"), Value::from(1))])),
            ("l", Value::from(vec![Value::from(1), Value::from(2.0)])),
            ("big", Value::from(i64::MAX)),
            ("x", x),
            ("y", y),
        ];
        let names = Slots {
            index: vars
                .iter()
                .enumerate()
                .map(|(i, (k, _))| ((*k).to_owned(), i))
                .collect(),
        };
        let slots: Vec<OnceLock<Value>> = vars.iter().map(|(_, v)| v.clone().into()).collect();
        let item = Value::from(3);
        let bound = Bound {
            value: &item,
            offer: None,
        };
        let fast = Code::compile(text, &names, &["item"], &[])
            .unwrap_or_else(|e| panic!("`{text}` does not compile: {}", e.message))
            .eval(&slots, Some(bound));
        let mut root = vars;
        root.push(("item", item));
        let slow = crate::environment()
            .compile_expression(text)
            .unwrap()
            .eval(minijinja::Value::from_pairs(
                root.iter()
                    .map(|(k, v)| (*k, to_jinja(v)))
                    .collect::<Vec<_>>(),
            ))
            .map(|v| from_jinja(&v))
            .map_err(|e| e.to_string());
        (fast, slow)
    }

    /// Equal values of the same kind, both integers or both floats, rendered alike (NaN is
    /// the same as NaN here).
    fn same(a: &Value, b: &Value) -> bool {
        let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
        (a == b || nan(a) && nan(b))
            && a.kind() == b.kind()
            && a.is_integer() == b.is_integer()
            && a.to_string() == b.to_string()
    }

    /// The evaluator answers `text`, with minijinja's value; returns it rendered.
    fn agrees(text: &str) -> String {
        let (fast, slow) = both(text, Value::Undefined, Value::Undefined);
        let fast = fast.unwrap_or_else(|e| panic!("`{text}` failed: {e}; minijinja: {slow:?}"));
        let slow = slow.unwrap();
        assert!(
            same(&fast, &slow),
            "`{text}`: fast {fast:?}, minijinja {slow:?}"
        );
        format!("{fast} ({})", fast.kind())
    }

    /// The evaluator fails on `text`, and so does minijinja; returns both messages.
    fn fails(text: &str) -> (String, String) {
        let (fast, slow) = both(text, Value::Undefined, Value::Undefined);
        match (fast, slow) {
            (Err(fast), Err(slow)) => (fast.message, slow),
            (fast, slow) => panic!("`{text}`: {fast:?}, minijinja {slow:?}"),
        }
    }

    #[test]
    fn arithmetic_keeps_integers_and_floats_apart() {
        for (text, want) in [
            ("a / 7", "1.0 (number)"),
            ("7 / 2", "3.5 (number)"),
            ("a // 2", "3 (number)"),
            ("-a // 2", "-4 (number)"),
            ("a % -3", "-2 (number)"),
            ("b // 1", "2.0 (number)"),
            ("-b % 1", "0.5 (number)"),
            ("a * b", "17.5 (number)"),
            ("a + 1 - item", "5 (number)"),
            ("big + 1", "9223372036854775808 (number)"),
            (
                "big * big",
                "85070591730234615847396907784232501249 (number)",
            ),
            ("-big - 1", "-9223372036854775808 (number)"),
            ("ceil(a / 2)", "4 (number)"),
            ("floor(b)", "2 (number)"),
            ("2.675 | round(2)", "2.67 (number)"),
            ("b | round", "2.0 (number)"),
            ("a | round(1)", "7 (number)"),
            ("(0 - b) | abs", "2.5 (number)"),
            ("[a, b, 7.0] | max", "7 (number)"),
            ("[a, b] | min", "2.5 (number)"),
        ] {
            assert_eq!(agrees(text), want, "{text}");
        }
    }

    #[test]
    fn logic_comparisons_and_lookups_follow_jinja() {
        for (text, want) in [
            ("n or a", "7 (number)"),
            ("a and s", "cat (string)"),
            ("0 and a", "0 (number)"),
            ("not n", "True (bool)"),
            ("a == 7.0", "True (bool)"),
            ("b < a", "True (bool)"),
            ("'a' in s", "True (bool)"),
            ("1 in l and 2 in l and 3 not in l", "True (bool)"),
            ("'x' in m and 'y' not in m", "True (bool)"),
            ("a if n else b", "2.5 (number)"),
            (
                "n is none and a is not none and a is defined",
                "True (bool)",
            ),
            ("s ~ a ~ b", "cat72.5 (string)"),
            ("m.x + m['x'] + l[0] + l[-1]", "5.0 (number)"),
            ("{'k': a, 'k': item}", "{'k': 3} (map)"),
            ("{'k': a, 'j': item}", "{'k': 7, 'j': 3} (map)"),
            ("{'k': a, 'j': s}.j ~ {'k': a}['k']", "cat7 (string)"),
            ("{'x': 1} == m and {'x': 2} != m", "True (bool)"),
            (
                "'j' in {'k': a, 'j': n} and {'k': a, 'j': n} | length",
                "2 (number)",
            ),
            ("{'k': a, 'j': b} | brief", "{k: 7, j: 2.5} (string)"),
            ("[item, s] | length", "2 (number)"),
            ("days_between('2026-09-04', '2026-10-04')", "30 (number)"),
            (
                "b | cny ~ ' ' ~ big | num ~ ' ' ~ a | num(1)",
                "¥2.50 9,223,372,036,854,775,808 7.0 (string)",
            ),
            (
                "0.3 | pct ~ ' ' ~ b | hours ~ ' ' ~ a | plural('GPU')",
                "30% 2.5 h 7 GPUs (string)",
            ),
            (
                "'<x|y>' | md ~ ' ' ~ 'a|b' | cell ~ ' ' ~ {'k': b} | brief",
                "&lt;x\\|y&gt; a\\|b {k: 2.5} (string)",
            ),
            ("b | cny(none)", "¥2.50 (string)"),
            (
                "big | sci ~ ' ' ~ 1932000000000000000000.0 | sci ~ ' ' ~ b | sci",
                "9.22e18 1.93e21 2.50e0 (string)",
            ),
            ("(b | int) + (-b | int) + (a | int)", "7 (number)"),
            (
                "'2026-07-01' | month ~ ' ' ~ '2027-12-31' | month",
                "2026-07 2027-12 (string)",
            ),
        ] {
            assert_eq!(agrees(text), want, "{text}");
        }
    }

    /// Expressions over a catalog offer bound as `offer`, read by position on the fast path
    /// (and through the general form when the item is not known as a catalog offer), against
    /// minijinja reading the same offer by name.
    #[test]
    fn catalog_offers_are_read_by_position_with_minijinja_answers() {
        let offers = vec![
            Value::from_serialize(&serde_json::json!({"id": "o1", "price": {"cny": 5}})),
            Value::from_serialize(&serde_json::json!({"id": "o2", "price": {"cny": 2.5}})),
        ];
        let ids: Arc<[Value]> = [Value::from("o1"), Value::from("o2")].into();
        let per_offer = PerOffer::value(ids.clone(), vec![Some(Value::from(10)), None]);
        let names = Slots {
            index: [("f", 0), ("a", 1)].map(|(k, i)| (k.to_owned(), i)).into(),
        };
        let slots: Vec<OnceLock<Value>> = vec![per_offer.clone().into(), Value::from(7).into()];
        for (text, want) in [
            ("offer.price.cny * a", ["35", "17.5"]),
            ("offer.id in f", ["True", "False"]),
            ("offer.id not in f", ["False", "True"]),
            (
                "f[offer.id] if offer.id in f else offer.price.cny",
                ["10", "2.5"],
            ),
        ] {
            let fast = Code::compile(text, &names, &["offer"], &offers).unwrap();
            for (i, offer) in offers.iter().enumerate() {
                let slow = crate::environment()
                    .compile_expression(text)
                    .unwrap()
                    .eval(minijinja::Value::from_pairs([
                        ("f", to_jinja(&per_offer)),
                        ("a", minijinja::Value::from(7)),
                        ("offer", to_jinja(offer)),
                    ]))
                    .map(|v| from_jinja(&v))
                    .unwrap();
                assert_eq!(slow.to_string(), want[i], "{text} (minijinja)");
                for position in [Some(i), None] {
                    let bound = Bound {
                        value: offer,
                        offer: position,
                    };
                    let got = fast.eval(&slots, Some(bound)).unwrap();
                    assert!(same(&got, &slow), "{text} at {position:?}: {got:?}");
                }
            }
        }
        // An offer the fact gives nothing for, and a missing attribute: undefined, as in
        // minijinja; a field read beyond a missing one: an error, as in minijinja.
        for (text, defined) in [
            ("f[offer.id]", false),
            ("offer.missing", false),
            ("offer.missing is defined", true),
            ("offer.price.missing | default(4)", true),
        ] {
            let code = Code::compile(text, &names, &["offer"], &offers).unwrap();
            for position in [Some(1), None] {
                let bound = Bound {
                    value: &offers[1],
                    offer: position,
                };
                let got = code.eval(&slots, Some(bound)).unwrap();
                assert_eq!(!got.is_undefined(), defined, "{text} at {position:?}");
            }
        }
        let code = Code::compile("offer.missing.deeper", &names, &["offer"], &offers).unwrap();
        for position in [Some(1), None] {
            let bound = Bound {
                value: &offers[1],
                offer: position,
            };
            let err = code.eval(&slots, Some(bound)).unwrap_err();
            assert!(
                err.message
                    .contains("`deeper` was read from an undefined value"),
                "{err}"
            );
        }
    }

    /// Where minijinja fails, the evaluator fails too, in the language's own words.
    #[test]
    #[allow(clippy::too_many_lines)] // one table of cases
    fn errors_are_the_languages_own_and_undefined_values_are_strict() {
        for (text, ours, theirs) in [
            (
                "a / 0",
                "7 / 0 divides by zero",
                "unable to calculate 7 / 0",
            ),
            (
                "b % 0",
                "2.5 % 0 divides by zero",
                "unable to calculate 2.5 % 0",
            ),
            (
                "a // 0",
                "7 // 0 divides by zero",
                "unable to calculate 7 // 0",
            ),
            (
                "n + 1",
                "`+` needs two numbers, and was given none and a number",
                "unsupported types none and number",
            ),
            (
                "big * big * big",
                "too large a whole number",
                "unable to calculate",
            ),
            (
                "'x' in a",
                "`in` looks in a list, a map or a text, and was given a number",
                "containment check",
            ),
            (
                "s | cny",
                "`cny` expects a number",
                "`cny` expects a number",
            ),
            (
                "b | num(-1)",
                "`num` needs a whole number of decimals, not a number",
                "cannot convert",
            ),
            (
                "a | plural(1)",
                "`plural` needs a text, not a number",
                "not a string",
            ),
            (
                "days_between('2026-13-04', '2026-10-04')",
                "not a date",
                "not a date",
            ),
            (
                "m.missing + 1",
                "`+` was given an undefined value",
                "undefined",
            ),
            (
                "m.missing.x",
                "`x` was read from an undefined value",
                "undefined",
            ),
            (
                "not m.missing",
                "`not` was given an undefined value",
                "undefined",
            ),
            (
                "m.missing | length",
                "`length` was given an undefined value",
                "undefined",
            ),
            (
                "m.missing == 1",
                "`==` was given an undefined value",
                "undefined",
            ),
        ] {
            let (fast, slow) = fails(text);
            assert!(fast.contains(ours), "{text}: {fast}");
            assert!(slow.contains(theirs), "{text} (minijinja): {slow}");
        }
        // Undefined where minijinja keeps it: a value of its own, which the tests and
        // `default` take.
        assert_eq!(agrees("m.missing is defined"), "False (bool)");
        assert_eq!(
            agrees("m.missing is undefined and m.x is defined"),
            "True (bool)"
        );
        assert_eq!(agrees("m.missing | default(4)"), "4 (number)");
        assert_eq!(agrees("m.missing is none"), "False (bool)");
        assert_eq!(agrees("[m.missing] | length"), "1 (number)");
        // Stricter than minijinja on purpose: arithmetic on true or false, `+` on texts, and
        // `max` over texts.
        for text in ["true + 1", "s + s", "s * 2", "['b', 'A'] | max"] {
            let (fast, slow) = both(text, Value::Undefined, Value::Undefined);
            assert!(fast.is_err() && slow.is_ok(), "{text}: {fast:?} {slow:?}");
        }
        let names = Slots {
            index: [("a", 0), ("s", 1), ("m", 2)]
                .map(|(k, i)| (k.to_owned(), i))
                .into(),
        };
        for (refused, why) in [
            ("a if s", "an `if` needs an `else`"),
            ("a(1)", "`a` names a value here"),
            ("s | upper", "`upper` is not a filter"),
            ("range(3)", "`range` is not a function"),
        ] {
            let err = Code::compile(refused, &names, &[], &[])
                .map(|_| ())
                .unwrap_err();
            assert!(err.message.contains(why), "{refused}: {}", err.message);
        }
    }

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-1000i64..1000).prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![0.0, -0.0, 0.5, -2.5, 1e300, f64::INFINITY])
                .prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            Just(Value::from(())),
            Just(Value::from(true)),
            Just(Value::from("7")),
            Just(Value::Undefined),
        ]
    }

    proptest! {
        #[test]
        fn binary_operators_agree_with_minijinja(
            x in number(),
            y in number(),
            op in prop::sample::select(vec![
                "+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "~",
            ]),
        ) {
            // Where minijinja answers, the same answer; where it fails, a failure. Stricter on
            // purpose: arithmetic on true or false (minijinja counts them as 1 and 0), `+` on
            // texts (minijinja joins them) and `*` on a text (minijinja repeats it).
            let text = format!("x {op} y");
            let (fast, slow) = both(&text, x.clone(), y.clone());
            let arithmetic = ["+", "-", "*", "/", "//", "%"].contains(&op);
            let text = |v: &Value| v.kind() == Kind::Text;
            let strict = (arithmetic && (x.kind() == Kind::Bool || y.kind() == Kind::Bool))
                || (op == "+" && text(&x) && text(&y))
                || (op == "*" && (text(&x) || text(&y)));
            match (fast, slow) {
                (Ok(fast), Ok(slow)) => prop_assert!(same(&fast, &slow), "{:?} {} {:?}: {:?}, minijinja {:?}", x, op, y, fast, slow),
                (Err(_), Err(_)) => {}
                (Err(fast), Ok(slow)) => prop_assert!(strict, "{:?} {} {:?}: {}, minijinja {:?}", x, op, y, fast, slow),
                (Ok(fast), Err(slow)) => prop_assert!(false, "{:?} {} {:?}: {:?}, minijinja failed: {}", x, op, y, fast, slow),
            }
        }
    }
}
