//! The engine's own map values: a per-offer fact's values by catalog position, and the records
//! that map literals build; both read by templates and expressions as the maps they stand for.
//!
//! minijinja's own map is an index map hashed with `SipHash`: right for maps of any size and
//! origin, but a per-offer fact is one value per catalog offer, known by position, and a map
//! literal (`{'offer': offer.id, 'monthly_cny': ...}`) has a handful of keys fixed when the rule
//! is compiled. Built and read a few hundred times per decision, they are a vector and a
//! key list here, looked up by position or by comparing a few short keys.

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};

/// The values of a per-offer fact, by catalog position.
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
        Value::from_object(PerOffer { ids, values })
    }

    /// The value for the offer at catalog position `i`, if the fact gives one.
    pub(crate) fn at(&self, i: usize) -> Option<&Value> {
        self.values.get(i)?.as_ref()
    }
}

impl Object for PerOffer {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = self.ids.iter().position(|id| id == key)?;
        self.values[i].clone()
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        let i = self.ids.iter().position(|id| id.as_str() == Some(key))?;
        self.values[i].clone()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys: Vec<Value> = self
            .ids
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| v.is_some())
            .map(|(id, _)| id.clone())
            .collect();
        Enumerator::Values(keys)
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.values.iter().filter(|v| v.is_some()).count())
    }
}

/// A map with text keys fixed at compile time (distinct, in the order written) and one value
/// per key: what a map literal with constant keys evaluates to on the fast path.
#[derive(Debug)]
pub struct Record {
    keys: Arc<[Value]>,
    values: Vec<Value>,
}

impl Record {
    /// The map value of `values` under `keys` (as many, in the same order).
    pub fn value(keys: Arc<[Value]>, values: Vec<Value>) -> Value {
        debug_assert_eq!(keys.len(), values.len());
        Value::from_object(Record { keys, values })
    }

    /// The value under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        let i = self.keys.iter().position(|k| k.as_str() == Some(key))?;
        self.values.get(i)
    }
}

impl Object for Record {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = self.keys.iter().position(|k| k == key)?;
        self.values.get(i).cloned()
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.get(key).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.keys.to_vec())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.keys.len())
    }
}
