//! The rule language's compiler and evaluator: a syntax tree ([`super::ast`]) compiled once
//! into a tree whose names are resolved to evaluation slots (or to the node's bound item,
//! `offer`, `job`, ...), evaluated directly against the slots.
//!
//! Two reads are prepared at compile time. Where a node binds a catalog offer (a per-offer
//! fact's `offer`, a select's item over `offers`), `offer.a.b` is a column worked out once per
//! graph and `fact[offer.id]` / `offer.id in fact` read a per-offer fact by the offer's position
//! ([`objects::PerOffer`](super::objects::PerOffer)), instead of looking keys up in maps. A map
//! literal with constant keys builds a [`Record`] (keys fixed, values in order) rather than a
//! hashed map. Both give the values minijinja gives, and fall back to the general form when the
//! item is not a catalog offer. Constant operations are folded at compile time.
//!
//! Values are still minijinja's, and minijinja is still the reference for what is not modelled
//! here: whenever evaluation meets anything that minijinja would turn into an error or an
//! undefined value (a missing attribute, a division by zero, `none` in arithmetic, an integer
//! overflow, a function failing, ...) it gives up on that expression and the caller evaluates it
//! with minijinja, so values and error messages stay minijinja's. Where it answers, it computes
//! what minijinja 3.1 computes, operation by operation (`value::ops` and the built-in filters
//! are private to minijinja, so their number rules are restated here: integer arithmetic in
//! `i128`, `/` always a float, floored `//` and `%`, `and`/`or` giving an operand);
//! `tests/interp.rs` checks that on every shipped rule expression over generated profiles.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use minijinja::value::{Value, ValueKind};

use super::Slots;
use super::ast::{BinaryOp, Lit, Term, TermKind, UnaryOp};
use super::objects::{PerOffer, Record};

/// The item a node binds (`offer` in a per-offer fact, a select's `item:`), and its position in
/// the catalog when it is one of the catalog's offers (then the offer's attributes and its
/// entries in per-offer facts are read by position).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound<'a> {
    pub value: &'a Value,
    pub offer: Option<usize>,
}

/// An expression compiled for the fast path.
#[derive(Debug)]
pub(crate) struct Fast(FastNode);

#[derive(Debug)]
enum FastNode {
    Const(Value),
    /// A root or node value, by slot.
    Slot(usize),
    /// A name a text template set before (`{% set p = ... %}`), by its position among them.
    Local(usize),
    /// The item the node binds (`offer` in a per-offer fact, a select's item).
    Bound,
    Attr(Box<FastNode>, Box<str>),
    Item(Box<FastNode>, Box<FastNode>),
    Not(Box<FastNode>),
    Neg(Box<FastNode>),
    And(Box<FastNode>, Box<FastNode>),
    Or(Box<FastNode>, Box<FastNode>),
    Bin(BinaryOp, Box<FastNode>, Box<FastNode>),
    If(Box<FastNode>, Box<FastNode>, Option<Box<FastNode>>),
    List(Vec<FastNode>),
    Map(Vec<(FastNode, FastNode)>),
    /// A map literal with distinct constant text keys: a [`Record`].
    Record(Arc<[Value]>, Vec<FastNode>),
    Call(Func, Vec<FastNode>),
    /// `item.a.b` with the item bound: the path's value for each catalog offer, worked out at
    /// compile time (`None` where it is undefined), used when the item is a catalog offer; the
    /// general form otherwise.
    OfferPath(Box<[Option<Value>]>, Box<FastNode>),
    /// `fact[item.id]` with a catalog offer bound and `fact` (a slot) a per-offer fact: the
    /// fact's value for that offer, by position; the general form otherwise.
    PerOfferItem(usize, Box<FastNode>),
    /// `item.id in fact` (or `not in`, when the flag is set), likewise.
    PerOfferHas(usize, bool, Box<FastNode>),
}

/// The filters, tests and functions the fast path knows. The subject of a filter or test is
/// its first argument.
#[derive(Debug, Clone, Copy)]
enum Func {
    Round,
    Max,
    Min,
    Length,
    Abs,
    Default,
    IsNone,
    IsDefined,
    IsUndefined,
    Ceil,
    Floor,
    DaysBetween,
    // This crate's own filters (`crate::expr`), called directly.
    Cny,
    Num,
    Hours,
    Pct,
    Plural,
    Md,
    Cell,
    Brief,
    Join,
    List,
}

impl Fast {
    /// The fast form of `text`, or `None` if it uses anything the fast path does not model.
    /// `bound` is the name the node binds (at most one), `names` the slots, `offers` the
    /// catalog's offers in order (what a bound item's position refers to).
    #[cfg(test)]
    pub(crate) fn compile(
        text: &str,
        names: &Slots,
        bound: &[&str],
        offers: &[Value],
    ) -> Option<Fast> {
        let expr = super::parser::parse(text).ok()?;
        Self::from_tree(&expr, names, bound, offers)
    }

    /// The fast form of an expression already parsed (see [`Fast::compile`]).
    pub(crate) fn from_tree(
        expr: &Term,
        names: &Slots,
        bound: &[&str],
        offers: &[Value],
    ) -> Option<Fast> {
        Self::with_locals(expr, names, bound, &[], offers)
    }

    /// The fast form of an expression of a text template, where `locals` are the names the
    /// template set before it, in order (a later one shadows an earlier one of the same name,
    /// and both shadow every other name); it reads them from the values
    /// [`Fast::eval_with_locals`] is given, by position.
    pub(crate) fn with_locals(
        expr: &Term,
        names: &Slots,
        bound: &[&str],
        locals: &[&str],
        offers: &[Value],
    ) -> Option<Fast> {
        let c = Compiler {
            names,
            bound,
            locals,
            offers,
        };
        c.node(expr).map(Fast)
    }

    /// The value of the expression, or `None` where minijinja must answer (an error or an
    /// undefined value on the way, or a case not modelled).
    pub(crate) fn eval(
        &self,
        slots: &[OnceLock<Value>],
        bound: Option<Bound<'_>>,
    ) -> Option<Value> {
        self.eval_with_locals(slots, bound, &[])
    }

    /// [`Fast::eval`] with the values of the names a text template set before the expression
    /// (see [`Fast::with_locals`]).
    pub(crate) fn eval_with_locals(
        &self,
        slots: &[OnceLock<Value>],
        bound: Option<Bound<'_>>,
        locals: &[Value],
    ) -> Option<Value> {
        Eval {
            slots,
            bound,
            locals,
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

impl Compiler<'_> {
    fn node(&self, expr: &Term) -> Option<FastNode> {
        if expr.is_const() {
            return Some(FastNode::Const(constant(expr)?));
        }
        let boxed = |e: &Term| self.node(e).map(Box::new);
        let node = match &expr.kind {
            TermKind::Lit(_) => FastNode::Const(constant(expr)?),
            TermKind::Var(name) => self.var(name)?,
            TermKind::Unary(UnaryOp::Not, e) => FastNode::Not(boxed(e)?),
            TermKind::Unary(UnaryOp::Neg, e) => FastNode::Neg(boxed(e)?),
            TermKind::Binary(op, l, r) => {
                let general = |op| Some(FastNode::Bin(op, boxed(l)?, boxed(r)?));
                match op {
                    BinaryOp::And => FastNode::And(boxed(l)?, boxed(r)?),
                    BinaryOp::Or => FastNode::Or(boxed(l)?, boxed(r)?),
                    BinaryOp::In | BinaryOp::NotIn => {
                        let negated = *op == BinaryOp::NotIn;
                        let op = if negated {
                            BinaryOp::NotIn
                        } else {
                            BinaryOp::In
                        };
                        match self.per_offer_fact(r, l) {
                            Some(slot) => {
                                FastNode::PerOfferHas(slot, negated, Box::new(general(op)?))
                            }
                            None => general(op)?,
                        }
                    }
                    op => general(*op)?,
                }
            }
            TermKind::If { test, yes, no } => FastNode::If(
                boxed(test)?,
                boxed(yes)?,
                match no {
                    Some(e) => Some(boxed(e)?),
                    None => None,
                },
            ),
            TermKind::Attr(e, name) => {
                let general = FastNode::Attr(boxed(e)?, name.clone());
                match self.offer_path(expr) {
                    Some(column) => FastNode::OfferPath(column, Box::new(general)),
                    None => general,
                }
            }
            TermKind::Item(e, key) => {
                let general = FastNode::Item(boxed(e)?, boxed(key)?);
                match self.per_offer_fact(e, key) {
                    Some(slot) => FastNode::PerOfferItem(slot, Box::new(general)),
                    None => general,
                }
            }
            TermKind::List(items) => {
                FastNode::List(items.iter().map(|e| self.node(e)).collect::<Option<_>>()?)
            }
            TermKind::Map(pairs) => self.map(pairs)?,
            TermKind::Filter { .. } | TermKind::Test { .. } | TermKind::Call { .. } => {
                self.call(expr)?
            }
        };
        Some(fold(node))
    }

    /// A filter, a test or a function call.
    fn call(&self, expr: &Term) -> Option<FastNode> {
        Some(match &expr.kind {
            TermKind::Filter {
                name,
                subject,
                args,
            } => {
                let func = filter(&name.text, args.len())?;
                if matches!(func, Func::Round) && !args.iter().all(is_precision) {
                    return None;
                }
                let mut all = vec![self.node(subject)?];
                all.extend(self.args(args)?);
                FastNode::Call(func, all)
            }
            TermKind::Test {
                name,
                subject,
                negated,
            } => {
                let func = match &*name.text {
                    "none" => Func::IsNone,
                    "defined" => Func::IsDefined,
                    "undefined" => Func::IsUndefined,
                    _ => return None,
                };
                let test = FastNode::Call(func, vec![self.node(subject)?]);
                if *negated {
                    FastNode::Not(Box::new(test))
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
                    return None;
                }
                let func = match (id, args.len()) {
                    ("ceil", 1) => Func::Ceil,
                    ("floor", 1) => Func::Floor,
                    ("days_between", 2) => Func::DaysBetween,
                    _ => return None,
                };
                FastNode::Call(func, self.args(args)?)
            }
            _ => return None,
        })
    }

    fn var(&self, name: &str) -> Option<FastNode> {
        if let Some(i) = self.locals.iter().rposition(|l| *l == name) {
            return Some(FastNode::Local(i));
        }
        if self.bound.first() == Some(&name) {
            return Some(FastNode::Bound);
        }
        self.names.index.get(name).map(|&i| FastNode::Slot(i))
    }

    /// A map literal: a record when its keys are distinct constant strings.
    fn map(&self, pairs: &[(Term, Term)]) -> Option<FastNode> {
        if let Some(keys) = constant_keys(pairs) {
            let values: Option<Vec<FastNode>> = pairs.iter().map(|(_, e)| self.node(e)).collect();
            return Some(FastNode::Record(keys, values?));
        }
        Some(FastNode::Map(
            pairs
                .iter()
                .map(|(k, v)| Some((self.node(k)?, self.node(v)?)))
                .collect::<Option<_>>()?,
        ))
    }

    /// For `item.a.b` with the bound item at its root: the path's value for each catalog offer
    /// (`None` where undefined). `None` when the expression is not such a path.
    fn offer_path(&self, expr: &Term) -> Option<Box<[Option<Value>]>> {
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
        Some(
            self.offers
                .iter()
                .map(|offer| {
                    names.iter().rev().try_fold(offer.clone(), |value, name| {
                        defined(value.get_attr(name).ok()?)
                    })
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

    fn args(&self, args: &[Term]) -> Option<Vec<FastNode>> {
        args.iter().map(|a| self.node(a)).collect()
    }
}

/// The value of a literal, or of a list or map of them, as minijinja builds it.
fn constant(expr: &Term) -> Option<Value> {
    Some(match &expr.kind {
        TermKind::Lit(Lit::None) => Value::from(()),
        TermKind::Lit(Lit::Bool(b)) => Value::from(*b),
        TermKind::Lit(Lit::Int(i)) => Value::from(*i),
        TermKind::Lit(Lit::Float(f)) => Value::from(*f),
        TermKind::Lit(Lit::Str(s)) => Value::from(&**s),
        TermKind::List(items) => {
            Value::from(items.iter().map(constant).collect::<Option<Vec<_>>>()?)
        }
        TermKind::Map(pairs) => Value::from_pairs(
            pairs
                .iter()
                .map(|(k, v)| Some((constant(k)?, constant(v)?)))
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    })
}

/// A node whose operands are all constants, folded into its value where it has one (as
/// minijinja folds constants before generating code); the node as it is otherwise.
fn fold(node: FastNode) -> FastNode {
    let operands_const = match &node {
        FastNode::Not(e) | FastNode::Neg(e) => matches!(**e, FastNode::Const(_)),
        FastNode::Bin(_, l, r) => {
            matches!(**l, FastNode::Const(_)) && matches!(**r, FastNode::Const(_))
        }
        _ => false,
    };
    if !operands_const {
        return node;
    }
    let eval = Eval {
        slots: &[],
        bound: None,
        locals: &[],
    };
    match eval.eval(&node) {
        Some(v) => FastNode::Const(v.into_owned()),
        None => node,
    }
}

/// The keys of a map literal when all are distinct constant strings, in the order written.
fn constant_keys(pairs: &[(Term, Term)]) -> Option<Arc<[Value]>> {
    let mut keys: Vec<Value> = Vec::with_capacity(pairs.len());
    for (k, _) in pairs {
        let TermKind::Lit(Lit::Str(key)) = &k.kind else {
            return None;
        };
        let key = Value::from(&**key);
        if keys.contains(&key) {
            return None;
        }
        keys.push(key);
    }
    Some(keys.into())
}

/// The fast path's function for filter `name` with `args` arguments besides its subject.
fn filter(name: &str, args: usize) -> Option<Func> {
    Some(match (name, args) {
        ("round", 0 | 1) => Func::Round,
        ("max", 0) => Func::Max,
        ("min", 0) => Func::Min,
        ("length" | "count", 0) => Func::Length,
        ("abs", 0) => Func::Abs,
        ("default" | "d", 0 | 1) => Func::Default,
        ("cny", 0 | 1) => Func::Cny,
        ("num", 0 | 1) => Func::Num,
        ("hours", 0) => Func::Hours,
        ("pct", 0) => Func::Pct,
        ("plural", 1) => Func::Plural,
        ("md", 0) => Func::Md,
        ("cell", 0) => Func::Cell,
        ("brief", 0) => Func::Brief,
        ("join", 0 | 1) => Func::Join,
        ("list", 0) => Func::List,
        _ => return None,
    })
}

/// `round`'s precision: a literal whole number the fast path rounds exactly like minijinja.
fn is_precision(arg: &Term) -> bool {
    matches!(arg.kind, TermKind::Lit(Lit::Int(p)) if (0..=1074).contains(&p))
}

/// Evaluation borrows what it can (slots, the bound item, constants) and owns what it makes.
struct Eval<'a> {
    slots: &'a [OnceLock<Value>],
    bound: Option<Bound<'a>>,
    locals: &'a [Value],
}

type Val<'a> = Cow<'a, Value>;

/// `Some(v)` unless `v` is undefined or invalid, which the fast path leaves to minijinja.
fn defined<V: std::borrow::Borrow<Value>>(v: V) -> Option<V> {
    (!matches!(v.borrow().kind(), ValueKind::Undefined | ValueKind::Invalid)).then_some(v)
}

impl<'a> Eval<'a> {
    /// The bound item's catalog position, when it is a catalog offer.
    fn offer(&self) -> Option<usize> {
        self.bound?.offer
    }

    /// The per-offer fact in `slot` and the bound offer's position in it, when both are.
    fn per_offer(&self, slot: usize) -> Option<(&'a PerOffer, usize)> {
        let i = self.offer()?;
        let fact = self.slots[slot].get()?.downcast_object_ref::<PerOffer>()?;
        Some((fact, i))
    }

    fn eval(&self, node: &'a FastNode) -> Option<Val<'a>> {
        Some(match node {
            FastNode::Const(v) => Cow::Borrowed(defined(v)?),
            FastNode::Slot(i) => Cow::Borrowed(defined(self.slots[*i].get()?)?),
            FastNode::Local(i) => Cow::Borrowed(defined(self.locals.get(*i)?)?),
            FastNode::Bound => Cow::Borrowed(defined(self.bound?.value)?),
            FastNode::Attr(e, name) => Cow::Owned(defined(self.eval(e)?.get_attr(name).ok()?)?),
            FastNode::Item(e, key) => {
                let v = self.eval(e)?;
                Cow::Owned(defined(v.get_item(&*self.eval(key)?).ok()?)?)
            }
            FastNode::Not(e) => Cow::Owned(Value::from(!self.eval(e)?.is_true())),
            FastNode::Neg(e) => Cow::Owned(match num(&*self.eval(e)?)? {
                Num::Int(i) => int_value(i.checked_neg()?),
                Num::Float(f) => Value::from(-f),
            }),
            FastNode::And(l, r) => {
                let l = self.eval(l)?;
                if l.is_true() { self.eval(r)? } else { l }
            }
            FastNode::Or(l, r) => {
                let l = self.eval(l)?;
                if l.is_true() { l } else { self.eval(r)? }
            }
            FastNode::Bin(op, l, r) => Cow::Owned(binary(*op, &*self.eval(l)?, &*self.eval(r)?)?),
            FastNode::If(test, yes, no) => {
                if self.eval(test)?.is_true() {
                    self.eval(yes)?
                } else {
                    // Without `else`, minijinja gives a silent undefined: its answer.
                    self.eval(no.as_deref()?)?
                }
            }
            FastNode::List(items) => Cow::Owned(Value::from(
                items
                    .iter()
                    .map(|e| self.eval(e).map(Cow::into_owned))
                    .collect::<Option<Vec<_>>>()?,
            )),
            FastNode::Map(pairs) => {
                let pairs = pairs
                    .iter()
                    .map(|(k, v)| Some((self.eval(k)?.into_owned(), self.eval(v)?.into_owned())))
                    .collect::<Option<Vec<_>>>()?;
                Cow::Owned(Value::from_pairs(pairs))
            }
            FastNode::Record(keys, values) => Cow::Owned(Record::value(
                keys.clone(),
                values
                    .iter()
                    .map(|e| self.eval(e).map(Cow::into_owned))
                    .collect::<Option<Vec<_>>>()?,
            )),
            FastNode::OfferPath(column, general) => match self.offer() {
                Some(i) => Cow::Borrowed(column.get(i)?.as_ref()?),
                None => self.eval(general)?,
            },
            FastNode::PerOfferItem(slot, general) => match self.per_offer(*slot) {
                Some((fact, i)) => Cow::Borrowed(defined(fact.at(i)?)?),
                None => self.eval(general)?,
            },
            FastNode::PerOfferHas(slot, negated, general) => match self.per_offer(*slot) {
                Some((fact, i)) => Cow::Owned(Value::from(fact.at(i).is_some() != *negated)),
                None => self.eval(general)?,
            },
            FastNode::Call(func, args) => {
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

/// A number as minijinja's arithmetic sees it: integers widened to `i128`, or a float.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Value) -> Option<Num> {
    if v.kind() != ValueKind::Number {
        return None;
    }
    if v.is_integer() {
        // Integers beyond `i64` (minijinja's wide integers) are left to minijinja.
        v.as_i64().map(|i| Num::Int(i128::from(i)))
    } else {
        f64::try_from(v.clone()).ok().map(Num::Float)
    }
}

/// Both numbers as floats if either is one (minijinja's lossy coercion), else both integers.
fn coerce(a: Num, b: Num) -> Result<(i128, i128), (f64, f64)> {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => Ok((a, b)),
        (Num::Float(a), Num::Float(b)) => Err((a, b)),
        (Num::Float(a), Num::Int(b)) => Err((a, b as f64)),
        (Num::Int(a), Num::Float(b)) => Err((a as f64, b)),
    }
}

/// An integer result as minijinja stores it: `i64` when it fits.
fn int_value(i: i128) -> Value {
    match i64::try_from(i) {
        Ok(small) => Value::from(small),
        Err(_) => Value::from(i),
    }
}

fn as_float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn binary(op: BinaryOp, l: &Value, r: &Value) -> Option<Value> {
    let arith =
        |int: fn(i128, i128) -> Option<i128>, float: fn(f64, f64) -> Option<f64>| match coerce(
            num(l)?,
            num(r)?,
        ) {
            Ok((a, b)) => int(a, b).map(int_value),
            Err((a, b)) => float(a, b).map(Value::from),
        };
    match op {
        BinaryOp::Eq => Some(Value::from(l == r)),
        BinaryOp::Ne => Some(Value::from(l != r)),
        BinaryOp::Lt => Some(Value::from(l < r)),
        BinaryOp::Lte => Some(Value::from(l <= r)),
        BinaryOp::Gt => Some(Value::from(l > r)),
        BinaryOp::Gte => Some(Value::from(l >= r)),
        BinaryOp::In => contains(r, l).map(Value::from),
        BinaryOp::NotIn => contains(r, l).map(|c| Value::from(!c)),
        // Two lists concatenate (minijinja gives an iterator; `| list` makes it a list again).
        BinaryOp::Add if l.kind() == ValueKind::Seq && r.kind() == ValueKind::Seq => {
            Some(Value::from(
                l.try_iter()
                    .ok()?
                    .chain(r.try_iter().ok()?)
                    .collect::<Vec<_>>(),
            ))
        }
        BinaryOp::Add => arith(i128::checked_add, |a, b| Some(a + b)),
        BinaryOp::Sub => arith(i128::checked_sub, |a, b| Some(a - b)),
        BinaryOp::Mul => arith(i128::checked_mul, |a, b| Some(a * b)),
        BinaryOp::Div => {
            let (a, b) = (as_float(num(l)?), as_float(num(r)?));
            (b != 0.0).then(|| Value::from(a / b))
        }
        BinaryOp::FloorDiv => arith(
            |a, b| int_div_rem_floor(a, b).map(|(q, _)| q),
            |a, b| (b != 0.0).then(|| float_div_rem_floor(a, b).0),
        ),
        BinaryOp::Rem => arith(
            |a, b| int_div_rem_floor(a, b).map(|(_, r)| r),
            |a, b| (b != 0.0).then(|| float_div_rem_floor(a, b).1),
        ),
        // Short-circuiting: nodes of their own ([`FastNode::And`], [`FastNode::Or`]).
        BinaryOp::And | BinaryOp::Or => None,
        BinaryOp::Concat => {
            // Safe (markup) strings have their own rules; leave them to minijinja.
            if l.is_safe()
                || r.is_safe()
                || l.kind() == ValueKind::Bytes
                || r.kind() == ValueKind::Bytes
            {
                return None;
            }
            Some(Value::from(match (l.as_str(), r.as_str()) {
                (Some(a), Some(b)) => [a, b].concat(),
                _ => format!("{l}{r}"),
            }))
        }
    }
}

/// minijinja's floored integer division and remainder (`None` on division by zero or overflow).
fn int_div_rem_floor(a: i128, b: i128) -> Option<(i128, i128)> {
    let mut quotient = a.checked_div(b)?;
    let mut remainder = a.checked_rem(b)?;
    if remainder != 0 && (remainder < 0) != (b < 0) {
        quotient = quotient.checked_sub(1)?;
        remainder = remainder.checked_add(b)?;
    }
    Some((quotient, remainder))
}

/// minijinja's (and Python's) floored float division and remainder; `b` is not zero.
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

/// `value in container`, as minijinja's `ops::contains` (`None` where it fails).
fn contains(container: &Value, value: &Value) -> Option<bool> {
    if let Some(s) = container.as_str() {
        return Some(match value.as_str() {
            Some(v) => s.contains(v),
            None => s.contains(&value.to_string()),
        });
    }
    match container.kind() {
        // minijinja asks the map object itself: a key is in it if the object gives a value.
        ValueKind::Map => Some(container.as_object()?.get_value(value).is_some()),
        ValueKind::Seq => {
            for item in container.try_iter().ok()? {
                if item.kind() == ValueKind::Invalid {
                    return None;
                }
                if &item == value {
                    return Some(true);
                }
            }
            Some(false)
        }
        _ => None,
    }
}

/// `func` applied to `subject` and its second argument, if any.
fn call(func: Func, subject: &Value, second: Option<&Value>) -> Option<Value> {
    match func {
        Func::IsNone => Some(Value::from(subject.is_none())),
        // The fast path never holds an undefined value.
        Func::IsDefined => Some(Value::from(true)),
        Func::IsUndefined => Some(Value::from(false)),
        Func::Default => Some(subject.clone()),
        Func::Length => subject.len().map(Value::from),
        Func::Round => round(subject, second),
        Func::Max => min_max(subject, std::cmp::Ordering::Greater),
        Func::Min => min_max(subject, std::cmp::Ordering::Less),
        Func::Abs => match num(subject)? {
            Num::Int(i) if i >= 0 => Some(subject.clone()),
            Num::Int(i) => Some(Value::from(i64::try_from(i.checked_abs()?).ok()?)),
            Num::Float(f) => Some(Value::from(f.abs())),
        },
        Func::Ceil | Func::Floor => {
            let x = f64::try_from(subject.clone()).ok()?;
            let x = if matches!(func, Func::Ceil) {
                x.ceil()
            } else {
                x.floor()
            };
            Some(Value::from(x as i64))
        }
        Func::Cny | Func::Num => {
            // The optional digits, as minijinja converts them to `Option<usize>`.
            let digits = match second {
                None => None,
                Some(d) if d.is_none() => None,
                Some(d) if d.is_integer() => Some(usize::try_from(d.as_i64()?).ok()?),
                Some(_) => return None,
            };
            let text = if matches!(func, Func::Cny) {
                crate::expr::cny(subject, digits)
            } else {
                crate::expr::num(subject, digits)
            };
            text.ok().map(Value::from)
        }
        Func::Hours => crate::expr::hours(subject).ok().map(Value::from),
        Func::Pct => crate::expr::pct(subject).ok().map(Value::from),
        Func::Plural => crate::expr::plural(subject, second?.as_str()?)
            .ok()
            .map(Value::from),
        Func::Md => Some(Value::from(crate::expr::md_escape(subject.as_str()?))),
        Func::Cell => Some(Value::from(crate::expr::table_cell(subject.as_str()?))),
        Func::Brief => Some(Value::from(crate::expr::brief(subject))),
        // Sequences only: minijinja also joins the characters of a string.
        Func::Join if subject.kind() == ValueKind::Seq => {
            let sep = match second {
                Some(s) => s.as_str()?,
                None => "",
            };
            let mut out = String::new();
            for (i, item) in subject.try_iter().ok()?.enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                out.push_str(&item.to_string());
            }
            Some(Value::from(out))
        }
        Func::List if matches!(subject.kind(), ValueKind::Seq | ValueKind::Iterable) => {
            Some(Value::from(subject.try_iter().ok()?.collect::<Vec<_>>()))
        }
        Func::Join | Func::List => None,
        Func::DaysBetween => crate::expr::days_between(subject.as_str()?, second?.as_str()?)
            .ok()
            .map(Value::from),
    }
}

/// minijinja's `round` filter for a precision in `0..=1074`: integers unchanged, floats through
/// their decimal rendering (round-half-even, as Python).
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

/// minijinja's `min`/`max` filters over a list without keyword arguments: the first item whose
/// key compares strictly as `wanted`. Text compares case-insensitively there; left to it.
fn min_max(list: &Value, wanted: std::cmp::Ordering) -> Option<Value> {
    if list.kind() != ValueKind::Seq {
        return None;
    }
    let mut best: Option<Value> = None;
    for item in list.try_iter().ok()? {
        if matches!(item.kind(), ValueKind::Invalid | ValueKind::String) {
            return None;
        }
        if best.as_ref().is_none_or(|b| item.cmp(b) == wanted) {
            best = Some(item);
        }
    }
    defined(best?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast path's and minijinja's answers for `text` over a few named values (and `item`
    /// bound to 3).
    fn both(text: &str, x: Value, y: Value) -> (Option<Value>, Result<Value, String>) {
        let vars: Vec<(&str, Value)> = vec![
            ("a", Value::from(7)),
            ("b", Value::from(2.5)),
            ("n", Value::from(())),
            ("s", Value::from("cat")),
            ("m", Value::from_pairs([("x", 1)])),
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
        let fast = Fast::compile(text, &names, &["item"], &[])
            .unwrap_or_else(|| panic!("`{text}` has no fast form"))
            .eval(&slots, Some(bound));
        let mut root = vars;
        root.push(("item", item));
        let slow = crate::expr::environment()
            .compile_expression(text)
            .unwrap()
            .eval(Value::from_pairs(root))
            .map_err(|e| e.to_string());
        (fast, slow)
    }

    /// Equal values of the same kind, both integers or both floats, rendered alike (NaN is
    /// the same as NaN here).
    fn same(a: &Value, b: &Value) -> bool {
        let nan = |v: &Value| {
            v.kind() == ValueKind::Number && f64::try_from(v.clone()).is_ok_and(f64::is_nan)
        };
        (a == b || nan(a) && nan(b))
            && a.kind() == b.kind()
            && a.is_integer() == b.is_integer()
            && a.to_string() == b.to_string()
    }

    /// The fast path answers `text`, with minijinja's value; returns it rendered.
    fn agrees(text: &str) -> String {
        let (fast, slow) = both(text, Value::UNDEFINED, Value::UNDEFINED);
        let fast = fast.unwrap_or_else(|| panic!("`{text}` fell back: {slow:?}"));
        let slow = slow.unwrap();
        assert!(
            same(&fast, &slow),
            "`{text}`: fast {fast:?}, minijinja {slow:?}"
        );
        format!("{fast} ({})", fast.kind())
    }

    /// The fast path leaves `text` to minijinja; returns minijinja's answer.
    fn falls_back(text: &str) -> Result<Value, String> {
        let (fast, slow) = both(text, Value::UNDEFINED, Value::UNDEFINED);
        assert!(
            fast.is_none(),
            "`{text}` answered {fast:?}, minijinja {slow:?}"
        );
        slow
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
            Value::from(minijinja::value::Serde(
                serde_json::json!({"id": "o1", "price": {"cny": 5}}),
            )),
            Value::from(minijinja::value::Serde(
                serde_json::json!({"id": "o2", "price": {"cny": 2.5}}),
            )),
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
            let fast = Fast::compile(text, &names, &["offer"], &offers).unwrap();
            for (i, offer) in offers.iter().enumerate() {
                let slow = crate::expr::environment()
                    .compile_expression(text)
                    .unwrap()
                    .eval(Value::from_pairs([
                        ("f", per_offer.clone()),
                        ("a", Value::from(7)),
                        ("offer", offer.clone()),
                    ]))
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
        // An offer the fact gives nothing for, and a missing attribute: minijinja's answers.
        for text in ["f[offer.id]", "offer.missing"] {
            let fast = Fast::compile(text, &names, &["offer"], &offers).unwrap();
            let bound = Bound {
                value: &offers[1],
                offer: Some(1),
            };
            assert!(fast.eval(&slots, Some(bound)).is_none(), "{text}");
        }
    }

    #[test]
    fn errors_and_undefined_values_are_left_to_minijinja() {
        let err = |text: &str| falls_back(text).unwrap_err();
        assert!(err("a / 0").contains("unable to calculate 7 / 0"));
        assert!(err("b % 0").contains("unable to calculate 2.5 % 0"));
        assert!(err("a // 0").contains("unable to calculate 7 // 0"));
        assert!(err("n + 1").contains("unsupported types none and number"));
        assert!(err("big * big * big").contains("unable to calculate"));
        assert!(err("'x' in a").contains("containment check"));
        assert!(err("s | cny").contains("`cny` expects a number"));
        assert!(err("b | num(-1)").contains("cannot convert"));
        assert!(err("a | plural(1)").contains("not a string"));
        assert!(err("days_between('2026-13-04', '2026-10-04')").contains("not a date"));
        assert!(falls_back("m.missing").unwrap().is_undefined());
        assert!(falls_back("a if n").unwrap().is_undefined());
        assert!(falls_back("['b', 'A'] | max").is_ok());
        for unsupported in [
            "s | upper",
            "a ** 2",
            "1 < a < 9",
            "range(3)",
            "m | default(1, true)",
        ] {
            let names = Slots {
                index: [("a", 0), ("s", 1), ("m", 2)]
                    .map(|(k, i)| (k.to_owned(), i))
                    .into(),
            };
            assert!(
                Fast::compile(unsupported, &names, &[], &[]).is_none(),
                "{unsupported}"
            );
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
            let text = format!("x {op} y");
            let (fast, slow) = both(&text, x.clone(), y.clone());
            if let Some(fast) = fast {
                let slow = slow.unwrap_or_else(|e| panic!("{x:?} {op} {y:?}: minijinja failed: {e}"));
                prop_assert!(same(&fast, &slow), "{:?} {} {:?}: fast {:?}, minijinja {:?}", x, op, y, fast, slow);
            }
        }
    }
}
