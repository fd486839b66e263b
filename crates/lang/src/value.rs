//! The rule language's value: what an expression gives, what a node holds, what a decision
//! records. One enum with one equality, one order, one `Display` and one `Serialize`.
//!
//! Whole numbers and decimals are kept apart (`Int`, `Float`); texts are shared (`Arc<str>`),
//! and a text already escaped for Markdown is marked `Safe`. Beside the list and the map (an
//! index map: keys in the order written) there are two map-like values the engine builds many
//! times an evaluation and reads by position: a [`Record`] (a map literal with keys fixed when
//! the rule is compiled) and a [`PerOffer`] fact (one value per catalog offer). *Undefined*
//! is what reading a field or key that is not there gives; only `is defined`, `is undefined`,
//! `is none` and `default` take it.
//!
//! The memo's templates are rendered by minijinja, and the rules' semantics are the ones
//! minijinja 3.1 gives Jinja (the evaluator is held to it as a reference, `tests/interp.rs`): so
//! equality, order, truth, `Display` and serialisation here are minijinja's, restated over this
//! enum. minijinja sees these values only through [`crate::jinja`], the adapter at the template
//! boundary.
#![allow(clippy::float_cmp)] // numbers are equal exactly or not at all, as in the language

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use indexmap::IndexMap;
use serde::ser::{SerializeMap, SerializeSeq};

mod serializer;

pub use serializer::{SerializeError, to_value};

/// A map value: keys in the order they were written, hashed with foldhash (a map is built and
/// read several times an evaluation; `SipHash`'s resistance to chosen keys buys nothing for keys
/// the rules and a profile write, and the order never depends on the hash).
pub type Map = IndexMap<Value, Value, foldhash::fast::FixedState>;

/// A value of the rule language.
#[derive(Clone, Default)]
pub enum Value {
    /// A field or key that is not there.
    #[default]
    Undefined,
    /// `none` (a YAML `null`).
    None,
    Bool(bool),
    /// A whole number (arithmetic in `i128`: an overflow is an error, not a wrap).
    Int(i128),
    /// A decimal.
    Float(f64),
    Text(Arc<str>),
    /// A text escaped for Markdown already (what `md` and `cell` give): templates print it as
    /// is, and `md` does not escape it twice.
    Safe(Arc<str>),
    List(Arc<[Value]>),
    Map(Arc<Map>),
    Record(Arc<Record>),
    PerOffer(Arc<PerOffer>),
}

/// What kind of value a value is, in minijinja's order of kinds (which orders values of
/// different kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Undefined,
    None,
    Bool,
    Number,
    Text,
    List,
    Map,
}

impl fmt::Display for Kind {
    /// minijinja's name of the kind (what a template filter's error says).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Undefined => "undefined",
            Kind::None => "none",
            Kind::Bool => "bool",
            Kind::Number => "number",
            Kind::Text => "string",
            Kind::List => "sequence",
            Kind::Map => "map",
        })
    }
}

/// A map with text keys fixed at compile time (distinct, in the order written) and one value
/// per key: what a map literal with constant keys evaluates to.
#[derive(Debug)]
pub struct Record {
    keys: Arc<[Value]>,
    values: Vec<Value>,
}

impl Record {
    /// The map value of `values` under `keys` (as many, in the same order).
    pub fn value(keys: Arc<[Value]>, values: Vec<Value>) -> Value {
        debug_assert_eq!(keys.len(), values.len());
        Value::Record(Arc::new(Record { keys, values }))
    }

    /// The value under the text `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        let i = self.keys.iter().position(|k| k.as_str() == Some(key))?;
        self.values.get(i)
    }

    fn get_value(&self, key: &Value) -> Option<&Value> {
        let i = self.keys.iter().position(|k| k == key)?;
        self.values.get(i)
    }

    fn pairs(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.keys.iter().zip(&self.values)
    }
}

/// The values of a per-offer fact, by catalog position: a map from offer id to value.
#[derive(Debug)]
pub struct PerOffer {
    /// The catalog's offer ids, in order (shared by every per-offer fact).
    ids: Arc<[Value]>,
    /// Per offer: its value, or `None` where the fact gives none.
    values: Vec<Option<Value>>,
}

impl PerOffer {
    /// The map value of `values` (by catalog position) over the offers `ids`.
    pub fn value(ids: Arc<[Value]>, values: Vec<Option<Value>>) -> Value {
        Value::PerOffer(Arc::new(PerOffer { ids, values }))
    }

    /// The value for the offer at catalog position `i`, if the fact gives one.
    pub fn at(&self, i: usize) -> Option<&Value> {
        self.values.get(i)?.as_ref()
    }

    fn get_value(&self, key: &Value) -> Option<&Value> {
        let i = self.ids.iter().position(|id| id == key)?;
        self.values[i].as_ref()
    }

    fn pairs(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.ids
            .iter()
            .zip(&self.values)
            .filter_map(|(id, v)| Some((id, v.as_ref()?)))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(i: $t) -> Self {
                Value::Int(i128::from(i))
            }
        }
    )*};
}
from_int!(i32, i64, u32, u64, i128);

impl From<usize> for Value {
    fn from(i: usize) -> Self {
        Value::Int(i128::try_from(i).unwrap_or(i128::MAX))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s.into())
    }
}

impl From<Arc<str>> for Value {
    fn from(s: Arc<str>) -> Self {
        Value::Text(s)
    }
}

impl From<()> for Value {
    fn from((): ()) -> Self {
        Value::None
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::List(items.into())
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Self {
        Value::Map(Arc::new(map))
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::None, Into::into)
    }
}

impl FromIterator<Value> for Value {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        Value::List(iter.into_iter().collect())
    }
}

impl Value {
    /// A text escaped for Markdown already.
    pub fn safe(text: impl Into<Arc<str>>) -> Value {
        Value::Safe(text.into())
    }

    /// `v` (a profile, a rule file's constant, a JSON document) through its serde form;
    /// undefined where it has none (a map keyed by lists).
    pub fn from_serialize<T: serde::Serialize + ?Sized>(v: &T) -> Value {
        to_value(v).unwrap_or_default()
    }

    /// A map of `pairs` (a later key replaces an earlier one, keeping its place).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
        Value::from(pairs.into_iter().collect::<Map>())
    }

    pub fn kind(&self) -> Kind {
        match self {
            Value::Undefined => Kind::Undefined,
            Value::None => Kind::None,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) | Value::Float(_) => Kind::Number,
            Value::Text(_) | Value::Safe(_) => Kind::Text,
            Value::List(_) => Kind::List,
            Value::Map(_) | Value::Record(_) | Value::PerOffer(_) => Kind::Map,
        }
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined)
    }

    pub fn is_none(&self) -> bool {
        matches!(self, Value::None)
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Float(_))
    }

    /// Whether the value is a whole number.
    pub fn is_integer(&self) -> bool {
        matches!(self, Value::Int(_))
    }

    pub fn is_safe(&self) -> bool {
        matches!(self, Value::Safe(_))
    }

    /// Whether the value counts as true: `false`, `none`, undefined, zero, an empty text, list
    /// or map do not.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Undefined | Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Text(s) | Value::Safe(s) => !s.is_empty(),
            _ => self.len() != Some(0),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) | Value::Safe(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a whole number, where it is one: a whole number in range, `true` or
    /// `false` (1 and 0), or a decimal with no fraction.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Bool(b) => Some(i64::from(b)),
            Value::Int(i) => i64::try_from(i).ok(),
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            Value::Float(f) if f as i64 as f64 == f => Some(f as i64),
            _ => None,
        }
    }

    /// The value as a whole number in `i128` (as [`Value::as_i64`], wider).
    pub fn as_i128(&self) -> Option<i128> {
        match *self {
            Value::Int(i) => Some(i),
            _ => self.as_i64().map(i128::from),
        }
    }

    /// The value as a decimal: a number or `true`/`false` (1.0 and 0.0).
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// A number as a decimal (`None` for anything else, `true` and `false` too).
    #[allow(clippy::cast_precision_loss)]
    pub fn as_number(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// A list's items.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// How many characters, items or entries the value has; `None` for a value of another
    /// kind.
    pub fn len(&self) -> Option<usize> {
        match self {
            Value::Text(s) | Value::Safe(s) => Some(s.chars().count()),
            Value::List(items) => Some(items.len()),
            Value::Map(map) => Some(map.len()),
            Value::Record(r) => Some(r.keys.len()),
            Value::PerOffer(p) => Some(p.values.iter().filter(|v| v.is_some()).count()),
            _ => None,
        }
    }

    /// Whether the value is an empty text, list or map.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The entries of a map-like value (map, record, per-offer fact), in order; `None` for a
    /// value of another kind.
    pub fn pairs(&self) -> Option<Box<dyn Iterator<Item = (&Value, &Value)> + '_>> {
        Some(match self {
            Value::Map(map) => Box::new(map.iter()),
            Value::Record(r) => Box::new(r.pairs()),
            Value::PerOffer(p) => Box::new(p.pairs()),
            _ => return None,
        })
    }

    /// What iterating the value gives: a list's items, a map's keys, a text's characters
    /// (nothing for `none` or undefined); `None` for a value of another kind.
    pub fn try_iter(&self) -> Option<Box<dyn Iterator<Item = Value> + '_>> {
        Some(match self {
            Value::Undefined | Value::None => Box::new(std::iter::empty()),
            Value::List(items) => Box::new(items.iter().cloned()),
            Value::Text(s) | Value::Safe(s) => {
                Box::new(s.chars().map(|c| Value::from(c.to_string())))
            }
            _ => Box::new(self.pairs()?.map(|(k, _)| k.clone())),
        })
    }

    /// The value under `key` of a map-like value.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match self {
            Value::Map(map) => map.get(key),
            Value::Record(r) => r.get_value(key),
            Value::PerOffer(p) => p.get_value(key),
            _ => None,
        }
    }

    /// Field `name` of a map-like value; undefined where there is none (or the value is not a
    /// map).
    #[must_use]
    pub fn get_attr(&self, name: &str) -> Value {
        let found = match self {
            Value::Record(r) => r.get(name),
            Value::Map(map) => map.get(&TextKey(name)),
            Value::PerOffer(p) => p
                .ids
                .iter()
                .position(|id| id.as_str() == Some(name))
                .and_then(|i| p.values[i].as_ref()),
            _ => None,
        };
        found.cloned().unwrap_or_default()
    }

    /// Entry `key`: a map's key, a list's or text's position (negative from the end);
    /// undefined where there is none.
    #[must_use]
    pub fn get_item(&self, key: &Value) -> Value {
        let index = |len: usize| match key.as_i64().and_then(|i| isize::try_from(i).ok()) {
            Some(i) if i < 0 => len.checked_sub(i.unsigned_abs()),
            Some(i) => usize::try_from(i).ok(),
            None => None,
        };
        match self {
            Value::List(items) => index(items.len())
                .and_then(|i| items.get(i))
                .cloned()
                .unwrap_or_default(),
            Value::Text(s) | Value::Safe(s) => index(s.chars().count())
                .and_then(|i| s.chars().nth(i))
                .map_or(Value::Undefined, |c| Value::from(c.to_string())),
            _ => self.get(key).cloned().unwrap_or_default(),
        }
    }

    /// The value as minijinja prints it inside a list or map (texts quoted).
    fn repr(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Undefined => f.write_str("undefined"),
            Value::Float(x) => fmt::Debug::fmt(x, f),
            Value::Text(s) | Value::Safe(s) => quoted(s, f),
            _ => fmt::Display::fmt(self, f),
        }
    }
}

/// A text key looked up in a map without building a value for it: it hashes as a
/// [`Value::Text`] of it does (its `str`), and is equivalent to a text key that reads the same.
#[derive(Hash)]
struct TextKey<'a>(&'a str);

impl indexmap::Equivalent<Value> for TextKey<'_> {
    fn equivalent(&self, key: &Value) -> bool {
        key.as_str() == Some(self.0)
    }
}

/// A text as Python (and minijinja) write it in a list: in single quotes unless it holds one
/// and no double quote.
fn quoted(value: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let quote = if value.contains('\'') && !value.contains('"') {
        '"'
    } else {
        '\''
    };
    f.write_char(quote)?;
    for c in value.chars() {
        match c {
            '\'' if quote == '\'' => f.write_str("\\'")?,
            '"' if quote == '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{{{:04x}}}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char(quote)
}

/// Wraps a value so that `Debug` prints it as a list item.
struct Repr<'a>(&'a Value);

impl fmt::Debug for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.repr(f)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Undefined => Ok(()),
            Value::None => f.write_str("None"),
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_nan() => f.write_str("NaN"),
            Value::Float(x) if x.is_infinite() => {
                f.write_str(if x.is_sign_negative() { "-inf" } else { "inf" })
            }
            Value::Float(x) => {
                let text = x.to_string();
                f.write_str(&text)?;
                if !text.contains('.') {
                    f.write_str(".0")?;
                }
                Ok(())
            }
            Value::Text(s) | Value::Safe(s) => f.write_str(s),
            Value::List(items) => f.debug_list().entries(items.iter().map(Repr)).finish(),
            _ => {
                let mut map = f.debug_map();
                for (k, v) in self.pairs().into_iter().flatten() {
                    map.entry(&Repr(k), &Repr(v));
                }
                map.finish()
            }
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.repr(f)
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Undefined | Value::None => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => match i64::try_from(*i) {
                Ok(small) => s.serialize_i64(small),
                Err(_) => s.serialize_i128(*i),
            },
            Value::Float(x) => s.serialize_f64(*x),
            Value::Text(t) | Value::Safe(t) => s.serialize_str(t),
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            _ => {
                let mut map = s.serialize_map(None)?;
                for (k, v) in self.pairs().into_iter().flatten() {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Two numbers (or `true`/`false`, as 1 and 0) as minijinja compares them: both whole, or
/// both decimal where the whole one converts exactly; `None` where it does not.
enum Coerced {
    Int(i128, i128),
    Float(f64, f64),
}

/// A whole number as a decimal, where the decimal is exact (as minijinja's checked cast:
/// by `i64` for what fits one, by `i128` beyond).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn exact_f64(i: i128) -> Option<f64> {
    let f = i as f64;
    let exact = match i64::try_from(i) {
        Ok(small) => f as i64 == small,
        Err(_) => f as i128 == i,
    };
    exact.then_some(f)
}

fn coerce(a: &Value, b: &Value) -> Option<Coerced> {
    let whole = |v: &Value| match *v {
        Value::Bool(x) => Some(i128::from(x)),
        Value::Int(i) => Some(i),
        _ => None,
    };
    let float = |v: &Value| match *v {
        Value::Float(f) => Some(f),
        Value::Bool(x) => Some(if x { 1.0 } else { 0.0 }),
        Value::Int(i) => exact_f64(i),
        _ => None,
    };
    match (a, b) {
        (Value::Float(x), _) => Some(Coerced::Float(*x, float(b)?)),
        (_, Value::Float(y)) => Some(Coerced::Float(float(a)?, *y)),
        _ => Some(Coerced::Int(whole(a)?, whole(b)?)),
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    if a == b {
        Ordering::Equal
    } else {
        a.total_cmp(&b)
    }
}

/// A decimal against a whole number that does not convert exactly (minijinja's order).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn cmp_f64_i128(a: f64, b: i128) -> Ordering {
    match cmp_f64(a, b as f64) {
        Ordering::Equal if a.is_finite() => {
            if a >= i128::MAX as f64 {
                Ordering::Greater
            } else {
                let trunc = a.trunc();
                (trunc as i128)
                    .cmp(&b)
                    .then_with(|| a.partial_cmp(&trunc).unwrap_or(Ordering::Equal))
            }
        }
        other => other,
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::None, Value::None) | (Value::Undefined, Value::Undefined) => true,
            (Value::Text(a) | Value::Safe(a), Value::Text(b) | Value::Safe(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            _ if self.kind() == Kind::Map && other.kind() == Kind::Map => {
                self.len() == other.len()
                    && self
                        .pairs()
                        .into_iter()
                        .flatten()
                        .all(|(k, v)| other.get(k) == Some(v))
            }
            _ => match coerce(self, other) {
                Some(Coerced::Int(a, b)) => a == b,
                Some(Coerced::Float(a, b)) => a == b,
                None => false,
            },
        }
    }
}

impl Eq for Value {}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        // `true` and `false` against a number count as 1 and 0.
        match (self, other) {
            (Value::Bool(a), _) if other.is_number() => {
                return Value::Int(i128::from(*a)).cmp(other);
            }
            (_, Value::Bool(b)) if self.is_number() => {
                return self.cmp(&Value::Int(i128::from(*b)));
            }
            _ => {}
        }
        match self.kind().cmp(&other.kind()) {
            Ordering::Equal => {}
            different => return different,
        }
        match (self, other) {
            (Value::Text(a) | Value::Safe(a), Value::Text(b) | Value::Safe(b)) => a.cmp(b),
            (Value::List(a), Value::List(b)) => a.iter().cmp(b.iter()),
            (Value::Undefined | Value::None, _) => Ordering::Equal,
            _ if self.kind() == Kind::Map => {
                let a = self.pairs().into_iter().flatten();
                let b = other.pairs().into_iter().flatten();
                a.cmp(b)
            }
            _ => match coerce(self, other) {
                Some(Coerced::Int(a, b)) => a.cmp(&b),
                Some(Coerced::Float(a, b)) => cmp_f64(a, b),
                None => match (self, other) {
                    (Value::Float(a), Value::Int(b)) => cmp_f64_i128(*a, *b),
                    (Value::Int(a), Value::Float(b)) => cmp_f64_i128(*b, *a).reverse(),
                    _ => Ordering::Equal,
                },
            },
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::Undefined | Value::None => 0u8.hash(state),
            Value::Text(s) | Value::Safe(s) => s.hash(state),
            Value::Bool(b) => i64::from(*b).hash(state),
            Value::Int(_) | Value::Float(_) => match self.as_i64() {
                Some(i) => i.hash(state),
                None => self.as_f64().map(f64::to_bits).hash(state),
            },
            // Equal lists and maps hash alike: by kind and length.
            _ => (self.kind(), self.len()).hash(state),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_across_whole_and_decimal() {
        assert_eq!(Value::from(1), Value::from(1.0));
        assert_eq!(Value::from(true), Value::from(1));
        assert_ne!(Value::from(true), Value::from("True"));
        assert!(Value::from(2) > Value::from(1.5));
        assert!(Value::from(false) < Value::from(0.5));
        assert!(Value::None < Value::from(false));
        assert!(Value::from(9) < Value::from("1"), "numbers before texts");
        assert_ne!(Value::None, Value::Undefined);
    }

    #[test]
    fn display_and_repr_are_minijinjas() {
        let list = Value::from(vec![
            Value::from(1),
            Value::from(2.0),
            Value::from("it's"),
            Value::None,
            Value::from(true),
        ]);
        assert_eq!(list.to_string(), r#"[1, 2.0, "it's", None, True]"#);
        assert_eq!(Value::from(1e21).to_string(), "1000000000000000000000.0");
        assert_eq!(Value::from(0.1).to_string(), "0.1");
        let map = Value::from_pairs([(Value::from("a"), Value::from(vec![]))]);
        assert_eq!(map.to_string(), "{'a': []}");
        assert_eq!(Value::Undefined.to_string(), "");
    }

    #[test]
    fn records_and_per_offer_facts_are_maps() {
        let keys: Arc<[Value]> = vec![Value::from("x"), Value::from("y")].into();
        let record = Record::value(keys.clone(), vec![Value::from(1), Value::from(2)]);
        let map = Value::from_pairs([
            (Value::from("y"), Value::from(2)),
            (Value::from("x"), Value::from(1)),
        ]);
        assert_eq!(record, map, "equal entries in any order");
        assert_eq!(
            map.get_attr("x"),
            Value::from(1),
            "a map's field, read by its text"
        );
        assert!(map.get_attr("z").is_undefined());
        assert_eq!(record.get_attr("y"), Value::from(2));
        assert!(record.get_attr("z").is_undefined());
        let fact = PerOffer::value(keys, vec![None, Some(Value::from("b"))]);
        assert_eq!(fact.len(), Some(1));
        assert_eq!(fact.get_item(&Value::from("y")), Value::from("b"));
        assert!(fact.get_item(&Value::from("x")).is_undefined());
        assert_eq!(fact.to_string(), "{'y': 'b'}");
        assert_eq!(serde_json::to_string(&fact).unwrap(), r#"{"y":"b"}"#);
    }

    #[test]
    fn lists_index_from_either_end() {
        let list: Value = [1, 2, 3].into_iter().map(Value::from).collect();
        assert_eq!(list.get_item(&Value::from(-1)), Value::from(3));
        assert_eq!(list.get_item(&Value::from(1.0)), Value::from(2));
        assert!(list.get_item(&Value::from(3)).is_undefined());
        assert!(list.get_attr("x").is_undefined());
    }
}
