//! A per-offer fact's value: one slot per catalog offer, read as a map from offer id to value.
//!
//! Built once per fact and profile, so it is a vector in catalog order rather than a hashed map;
//! templates and expressions read it as the map it stands for (the offers it gives none for are
//! not keys).

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};

/// The values of a per-offer fact, by catalog position.
#[derive(Debug)]
pub(crate) struct PerOffer {
    /// The catalog's offer ids, in order (shared by every per-offer fact).
    ids: Arc<[Value]>,
    /// Per offer: its value, or `None` where the fact gives none.
    values: Vec<Option<Value>>,
}

impl PerOffer {
    /// The map value of `values` (by catalog position) over the offers `ids`.
    pub(crate) fn value(ids: Arc<[Value]>, values: Vec<Option<Value>>) -> Value {
        Value::from_object(PerOffer { ids, values })
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
