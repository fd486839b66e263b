//! The generated profiles of `decide validate`: the profile format's fields as input
//! dimensions, each with the values worth trying.
//!
//! Every enumerated value, both booleans, none where a field is optional, and each number the
//! rules mention together with its neighbours (within the field's range). The decision-table
//! analysis ([`super::tables`]) combines them over the fields a table reads; the invariant
//! search ([`super::invariants`]) over the fields the invariants read, and samples beyond them.

use std::collections::{BTreeSet, HashSet};

use minijinja::machinery::{Token, tokenize};
use serde_json::{Map, Value as J};

use crate::profile::{OFFER_FIELD, OFFER_HOURS_FIELD};

/// The input dimensions of `paths` (profile paths as rule expressions read them, `profile.…`),
/// with the numbers in `texts` and their neighbours as the values tried for numbers, in the
/// order the profile format lists its fields (so examples read like a profile). With `offers`
/// (catalog ids), the fields that name offers are dimensions too: the proposal is each offer or
/// none, the job hours none or one offer at each number tried.
pub(crate) fn input_space<'a>(
    schema: &J,
    paths: impl IntoIterator<Item = &'a str>,
    texts: &[&str],
    offers: &[&str],
) -> Vec<Dimension> {
    let constants = numeric_constants(texts);
    let paths: Vec<&str> = paths.into_iter().collect();
    let mut dimensions = Vec::new();
    let mut seen = HashSet::new();
    for path in &paths {
        let parts: Vec<String> = path.split('.').skip(1).map(str::to_owned).collect();
        leaves(
            schema,
            schema,
            parts,
            &constants,
            &mut dimensions,
            &mut seen,
        );
    }
    let read = |field: &str| {
        let full = format!("profile.{field}");
        paths.iter().any(|p| {
            full == *p || full.starts_with(&format!("{p}.")) || p.starts_with(&format!("{full}."))
        })
    };
    let split = |field: &str| field.split('.').map(str::to_owned).collect::<Vec<_>>();
    if !offers.is_empty() && read(OFFER_FIELD) {
        let mut values: Vec<J> = offers.iter().map(|&id| J::from(id)).collect();
        values.push(J::Null);
        dimensions.push(Dimension {
            path: split(OFFER_FIELD),
            values,
        });
    }
    if !offers.is_empty() && read(OFFER_HOURS_FIELD) {
        let positive = serde_json::json!({"type": "number", "exclusiveMinimum": 0,
                                          "maximum": crate::profile::MAX_JOB_HOURS});
        let numbers = candidates(&positive, &[&positive], &constants);
        let mut values = vec![J::Object(Map::new())];
        for &id in offers {
            for n in &numbers {
                values.push(J::Object(Map::from_iter([(id.to_owned(), n.clone())])));
            }
        }
        dimensions.push(Dimension {
            path: split(OFFER_HOURS_FIELD),
            values,
        });
    }
    let order = schema_order(schema, schema, &mut Vec::new());
    dimensions.sort_by_key(|d| order.iter().position(|p| *p == d.path));
    dimensions
}

/// One input dimension: a profile leaf path (without `profile.`) and the values tried.
pub(crate) struct Dimension {
    pub path: Vec<String>,
    pub values: Vec<J>,
}

/// The `k`-th of `samples` combinations spread over `combinations`: k × stride modulo the space,
/// with the stride (about combinations / samples) made coprime to the space. An even spacing
/// whose stride shares a factor with the space would never vary the dimensions that factor
/// covers (with a stride divisible by 8, the last three yes/no fields were always `false`, so a
/// row needing one of them looked dead); a coprime stride visits distinct combinations that
/// vary every dimension. Never exceeds the space, however large.
pub(crate) fn sample_index(k: usize, combinations: u128, samples: usize) -> u128 {
    if combinations <= samples as u128 {
        return k as u128;
    }
    let mut stride = (combinations / samples.max(1) as u128).max(1);
    while gcd(stride, combinations) != 1 {
        stride += 1;
    }
    ((k as u128) % combinations).wrapping_mul(stride) % combinations
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Every integer and decimal literal in `texts`, read with minijinja's own tokenizer (so that
/// digits inside strings and names are not mistaken for numbers).
pub(crate) fn numeric_constants(texts: &[&str]) -> BTreeSet<OrderedF64> {
    let mut out = BTreeSet::new();
    for text in texts {
        for token in tokenize(text, true, minijinja::syntax::SyntaxConfig::default()).flatten() {
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
pub(crate) struct OrderedF64(pub f64);
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

/// Resolves `$ref`, and `allOf` / `anyOf` wrappers of one schema, into its parts; `nullable` is
/// set when one part is `{type: null}`.
pub(crate) fn parts<'a>(root: &'a J, schema: &'a J, out: &mut Vec<&'a J>, nullable: &mut bool) {
    let schema = crate::graph::scope::resolve_ref(root, schema);
    let mut wrapped = false;
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = schema.get(key).and_then(J::as_array) {
            wrapped = true;
            for sub in list {
                parts(root, sub, out, nullable);
            }
        }
    }
    if schema.get("type") == Some(&J::from("null")) {
        *nullable = true;
    } else if !wrapped || schema.get("type").is_some() || schema.get("enum").is_some() {
        out.push(schema);
    }
}

/// The leaf dimensions under `path` (a profile field, or an object whose fields all count).
pub(crate) fn leaves(
    root: &J,
    schema: &J,
    path: Vec<String>,
    constants: &BTreeSet<OrderedF64>,
    out: &mut Vec<Dimension>,
    seen: &mut HashSet<Vec<String>>,
) {
    // Walk down to the field.
    let mut node = schema;
    for key in &path {
        let mut ps = Vec::new();
        parts(root, node, &mut ps, &mut false);
        let Some(next) = ps
            .iter()
            .find_map(|p| p.get("properties").and_then(|props| props.get(key)))
        else {
            return; // inside an open map (e.g. job hours by offer): not varied
        };
        node = next;
    }
    let mut ps = Vec::new();
    let mut nullable = false;
    parts(root, node, &mut ps, &mut nullable);
    if let Some(props) = ps
        .iter()
        .find_map(|p| p.get("properties").and_then(J::as_object))
    {
        for key in props.keys() {
            let mut sub = path.clone();
            sub.push(key.clone());
            leaves(root, schema, sub, constants, out, seen);
        }
        return;
    }
    if !seen.insert(path.clone()) {
        return;
    }
    let mut values = candidates(root, &ps, constants);
    if values.is_empty() {
        return;
    }
    if nullable || types(&ps).contains("null") {
        values.push(J::Null);
    }
    out.push(Dimension { path, values });
}

pub(crate) fn types<'a>(ps: &[&'a J]) -> BTreeSet<&'a str> {
    let mut out = BTreeSet::new();
    for p in ps {
        match p.get("type") {
            Some(J::String(t)) => {
                out.insert(t.as_str());
            }
            Some(J::Array(list)) => out.extend(list.iter().filter_map(J::as_str)),
            _ => {}
        }
    }
    out
}

/// Every field path of the schema, depth first in the order the schema lists them.
pub(crate) fn schema_order(root: &J, schema: &J, prefix: &mut Vec<String>) -> Vec<Vec<String>> {
    let mut ps = Vec::new();
    parts(root, schema, &mut ps, &mut false);
    let mut out = Vec::new();
    if let Some(props) = ps
        .iter()
        .find_map(|p| p.get("properties").and_then(J::as_object))
    {
        for (key, sub) in props {
            prefix.push(key.clone());
            out.push(prefix.clone());
            out.extend(schema_order(root, sub, prefix));
            prefix.pop();
        }
    }
    out
}

/// The values tried for one leaf field.
pub(crate) fn candidates(root: &J, ps: &[&J], constants: &BTreeSet<OrderedF64>) -> Vec<J> {
    if let Some(list) = ps.iter().find_map(|p| p.get("enum").and_then(J::as_array)) {
        return list.iter().filter(|v| !v.is_null()).cloned().collect();
    }
    let types = types(ps);
    if types.contains("boolean") {
        return vec![J::from(false), J::from(true)];
    }
    if types.contains("array") {
        // A set of enumerated values: try empty and each value alone.
        let items = ps.iter().find_map(|p| p.get("items"));
        let mut item_parts = Vec::new();
        if let Some(items) = items {
            parts(root, items, &mut item_parts, &mut false);
        }
        let Some(list) = item_parts
            .iter()
            .find_map(|p| p.get("enum").and_then(J::as_array))
        else {
            return Vec::new();
        };
        let mut out = vec![J::Array(Vec::new())];
        out.extend(list.iter().map(|v| J::Array(vec![v.clone()])));
        return out;
    }
    let integer = types.contains("integer");
    if !integer && !types.contains("number") {
        return Vec::new();
    }
    let bound = |key: &str| ps.iter().find_map(|p| p.get(key).and_then(J::as_f64));
    let (min, exclusive_min, max) = (
        bound("minimum"),
        bound("exclusiveMinimum"),
        bound("maximum"),
    );
    let lowest = min
        .or(exclusive_min.map(|e| e + 1.0))
        .unwrap_or(0.0)
        .max(1.0);
    let mut values: BTreeSet<OrderedF64> = BTreeSet::from([OrderedF64(lowest)]);
    for &OrderedF64(c) in constants {
        for v in [c - 1.0, c, c + 1.0] {
            values.insert(OrderedF64(v));
        }
    }
    values
        .into_iter()
        .map(|OrderedF64(v)| v)
        .filter(|&v| {
            min.is_none_or(|m| v >= m)
                && exclusive_min.is_none_or(|m| v > m)
                && max.is_none_or(|m| v <= m)
                && (!integer || v.fract() == 0.0)
        })
        .map(|v| {
            #[allow(clippy::cast_possible_truncation)] // checked whole and small above
            if v.fract() == 0.0 && v.abs() < 1e15 {
                J::from(v as i64)
            } else {
                J::from(v)
            }
        })
        .collect()
}

/// The smallest valid profile: every required field with its first or lowest value.
pub(crate) fn base_value(root: &J, schema: &J) -> J {
    let mut ps = Vec::new();
    parts(root, schema, &mut ps, &mut false);
    if let Some(props) = ps
        .iter()
        .find_map(|p| p.get("properties").and_then(J::as_object))
    {
        let required: BTreeSet<&str> = ps
            .iter()
            .filter_map(|p| p.get("required").and_then(J::as_array))
            .flatten()
            .filter_map(J::as_str)
            .collect();
        let mut map = Map::new();
        for (key, sub) in props {
            if required.contains(key.as_str()) {
                map.insert(key.clone(), base_value(root, sub));
            }
        }
        return J::Object(map);
    }
    if types(&ps).contains("string") && !ps.iter().any(|p| p.get("enum").is_some()) {
        return J::from("generated profile");
    }
    candidates(root, &ps, &BTreeSet::new())
        .into_iter()
        .next()
        .unwrap_or(J::Null)
}

/// The `index`-th combination of the dimensions' values (mixed radix).
pub(crate) fn decode(mut index: u128, dimensions: &[Dimension]) -> Vec<&J> {
    let mut out = Vec::with_capacity(dimensions.len());
    for d in dimensions.iter().rev() {
        let n = d.values.len() as u128;
        out.push(&d.values[usize::try_from(index % n).unwrap_or(0)]);
        index /= n;
    }
    out.reverse();
    out
}

pub(crate) use crate::profile::set_field as set_path;

/// The varied fields of one generated profile, nested as in a profile file.
pub(crate) fn example(dimensions: &[Dimension], assignment: &[&J]) -> J {
    let mut value = J::Object(Map::new());
    for (d, v) in dimensions.iter().zip(assignment) {
        set_path(&mut value, &d.path, (*v).clone());
    }
    value
}
