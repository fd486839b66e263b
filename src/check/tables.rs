//! Decision-table analysis: gaps, overlaps and shadowed rows, each shown with an example profile.
//!
//! Row conditions are arbitrary expressions over profile fields and facts, so instead of solving
//! them symbolically we evaluate them over a generated set of profiles that covers every
//! enumerated value, both booleans, none where a field is optional, and each number the
//! conditions (and the facts they read) mention together with its neighbours. Every finding
//! therefore comes with a real profile that shows it. The flip side, said in every message: a
//! row reported as never winning is so over the generated set, which is built to hit each
//! boundary the rules write down, not over every conceivable profile.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use minijinja::machinery::{Token, tokenize};
use serde_json::{Map, Value as J};

use crate::error::Error;
use crate::graph::{Body, Graph, Kind};
use crate::policy::rules::{HitPolicy, NoMatch};
use crate::profile::Profile;

/// At most this many generated profiles per table; larger spaces are sampled evenly.
pub const MAX_SAMPLES: usize = 50_000;

/// What the analysis of one table found.
#[derive(Debug, Clone)]
pub struct TableReport {
    pub id: String,
    pub hit: HitPolicy,
    pub rows: usize,
    /// Profiles evaluated, and how many combinations the input space has.
    pub evaluated: usize,
    pub combinations: u128,
    /// Generated profiles the rules could not evaluate (left out of the analysis).
    pub failed: usize,
    /// The profile fields varied.
    pub inputs: Vec<String>,
    pub findings: Vec<Error>,
}

/// One input dimension: a profile leaf path (without `profile.`) and the values tried.
struct Dimension {
    path: Vec<String>,
    values: Vec<J>,
}

/// Analyses every table of the graph.
#[must_use]
pub fn analyse(graph: &Graph, as_of: jiff::civil::Date) -> Vec<TableReport> {
    let c = graph.compiled();
    let schema = crate::profile::json_schema();
    (0..c.nodes.len())
        .filter(|&i| c.nodes[i].kind == Kind::Table)
        .map(|i| analyse_table(graph, &schema, i, as_of))
        .collect()
}

#[allow(clippy::too_many_lines)] // generate, evaluate, then one block per kind of finding
fn analyse_table(graph: &Graph, schema: &J, table: usize, as_of: jiff::civil::Date) -> TableReport {
    let c = graph.compiled();
    let node = &c.nodes[table];
    let Body::Table {
        hit,
        rows,
        default,
        no_match,
    } = &node.body
    else {
        unreachable!("only tables are analysed")
    };
    let ancestors = ancestors(graph, table);
    let needed: Vec<usize> = c
        .order
        .iter()
        .copied()
        .filter(|i| ancestors.contains(i))
        .collect();

    // The input space: the profile fields the table reads, directly or through facts.
    let mut paths: BTreeSet<&str> = BTreeSet::new();
    let mut texts: Vec<&str> = rows.iter().map(|(e, _)| e.text).collect();
    for &i in needed.iter().chain(std::iter::once(&table)) {
        paths.extend(c.nodes[i].profile_paths.iter().map(String::as_str));
        texts.extend(c.nodes[i].expr_texts());
    }
    let constants = numeric_constants(&texts);
    let mut dimensions = Vec::new();
    let mut seen = HashSet::new();
    for path in paths {
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
    // In the order the profile format lists its fields, so examples read like a profile.
    let order = schema_order(schema, schema, &mut Vec::new());
    dimensions.sort_by_key(|d| order.iter().position(|p| *p == d.path));
    let base = base_value(schema, schema);
    // Saturating: a huge space is sampled all the same (found by reading the fuzz findings: a
    // row listing thousands of numbers overflowed the product and the stride).
    let combinations: u128 = dimensions
        .iter()
        .fold(1u128, |n, d| n.saturating_mul(d.values.len() as u128));
    let samples = usize::try_from(combinations.min(MAX_SAMPLES as u128)).unwrap_or(MAX_SAMPLES);

    let mut report = TableReport {
        id: node.id.to_owned(),
        hit: *hit,
        rows: rows.len(),
        evaluated: 0,
        combinations,
        failed: 0,
        inputs: dimensions.iter().map(|d| d.path.join(".")).collect(),
        findings: Vec::new(),
    };
    let n = rows.len();
    // Per row: some profile it matches; some profile where it wins (first) and, if it never
    // wins, the earlier row that took its first match. Per pair: a profile both match.
    let mut matches: Vec<Option<J>> = vec![None; n];
    let mut wins = vec![false; n];
    let mut taken_by: Vec<Option<usize>> = vec![None; n];
    let mut overlaps: BTreeMap<(usize, usize), J> = BTreeMap::new();
    let mut gap: Option<(J, usize)> = None;
    let mut first_failure: Option<Error> = None;
    for k in 0..samples {
        let index = sample_index(k, combinations, samples);
        let assignment = decode(index, &dimensions);
        let mut value = base.clone();
        for (d, v) in dimensions.iter().zip(&assignment) {
            set_path(&mut value, &d.path, (*v).clone());
        }
        let Ok(profile) = serde_json::from_value::<Profile>(value) else {
            continue; // the profile format refuses this combination
        };
        match graph.table_rows_matching(&profile, as_of, table, &needed) {
            Ok(hits) => {
                report.evaluated += 1;
                let example = || example(&dimensions, &assignment);
                let mut first = None;
                for (j, &m) in hits.iter().enumerate() {
                    if !m {
                        continue;
                    }
                    if matches[j].is_none() {
                        matches[j] = Some(example());
                    }
                    match first {
                        None => {
                            first = Some(j);
                            wins[j] = true;
                        }
                        Some(f) => {
                            if taken_by[j].is_none() {
                                taken_by[j] = Some(f);
                            }
                            if *hit == HitPolicy::Unique {
                                overlaps.entry((f, j)).or_insert_with(example);
                            }
                        }
                    }
                }
                if first.is_none() {
                    match &mut gap {
                        Some((_, count)) => *count += 1,
                        None => gap = Some((example(), 1)),
                    }
                }
            }
            Err(e) => {
                report.failed += 1;
                first_failure.get_or_insert(e);
            }
        }
    }

    let policy = graph.policy();
    let row_expr = |j: usize| &rows[j].0;
    let row_id = |j: usize| {
        rows[j]
            .1
            .get_attr("id")
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    let over = format!(
        "over {} generated profiles",
        thousands(report.evaluated as u128)
    );
    let at_row = |j: usize, message: String| {
        let e = row_expr(j);
        policy
            .error_at(e.file, e.location, message)
            .field(format!("{}.rows.{}", node.id, row_id(j)))
            .as_warning()
    };
    if report.evaluated == 0 {
        let mut e = policy
            .error_at(
                node.file,
                node.location,
                format!(
                    "table `{}`: no generated profile could be evaluated, so it was not analysed",
                    node.id
                ),
            )
            .as_warning();
        if let Some(f) = first_failure {
            e = e.help(format!("the first failure: {}", f.message()));
        }
        report.findings.push(e);
        return report;
    }
    for j in 0..n {
        if matches[j].is_none() {
            report.findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` never matches ({over})",
                        node.id,
                        row_id(j)
                    ),
                )
                .help("its condition may contradict itself, or ask for a value the profile cannot have"),
            );
        } else if *hit == HitPolicy::First && !wins[j] {
            let by = taken_by[j].map(row_id).unwrap_or_default();
            report.findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` is shadowed: every profile it matches is taken by an earlier row, e.g. `{by}` ({over})",
                        node.id,
                        row_id(j)
                    ),
                )
                .help(format!("example profile it matches, where `{by}` wins: {}", show(matches[j].as_ref())))
                .help("move the row above the rows that take its cases, or narrow those rows"),
            );
        }
    }
    for ((a, b), profile) in &overlaps {
        report.findings.push(
            at_row(
                *b,
                format!(
                    "table `{}`: rows `{}` and `{}` overlap, and hit policy `unique` forbids it",
                    node.id,
                    row_id(*a),
                    row_id(*b)
                ),
            )
            .help(format!(
                "example profile both match: {}",
                show(Some(profile))
            ))
            .help("narrow one of the rows, or use `hit: first` if the order settles it"),
        );
    }
    if default.is_none()
        && *no_match == NoMatch::Error
        && let Some((profile, count)) = gap
    {
        report.findings.push(
            policy
                .error_at(
                    node.file,
                    node.location,
                    format!(
                        "table `{}`: a gap: {} of {} generated profiles match no row, and the table says `no_match: error`",
                        node.id,
                        thousands(count as u128),
                        thousands(report.evaluated as u128)
                    ),
                )
                .field(format!("{}.rows", node.id))
                .help(format!("example profile no row matches: {}", show(Some(&profile))))
                .help("add a row that covers it, a `default:` row, or `no_match: none` if no row is a valid answer")
                .as_warning(),
        );
    }
    report
}

/// The `k`-th of `samples` combinations spread over `combinations`: k × stride modulo the space,
/// with the stride (about combinations / samples) made coprime to the space. An even spacing
/// whose stride shares a factor with the space would never vary the dimensions that factor
/// covers (with a stride divisible by 8, the last three yes/no fields were always `false`, so a
/// row needing one of them looked dead); a coprime stride visits distinct combinations that
/// vary every dimension. Never exceeds the space, however large.
fn sample_index(k: usize, combinations: u128, samples: usize) -> u128 {
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

/// Every node `target` reads, directly or through others.
pub(crate) fn ancestors(graph: &Graph, target: usize) -> HashSet<usize> {
    let c = graph.compiled();
    let mut seen = HashSet::new();
    let mut stack = c.nodes[target].deps.clone();
    while let Some(i) = stack.pop() {
        if seen.insert(i) {
            stack.extend(&c.nodes[i].deps);
        }
    }
    seen
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
    let schema = crate::graph::resolve_ref(root, schema);
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
fn leaves(
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
fn schema_order(root: &J, schema: &J, prefix: &mut Vec<String>) -> Vec<Vec<String>> {
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
fn candidates(root: &J, ps: &[&J], constants: &BTreeSet<OrderedF64>) -> Vec<J> {
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
fn base_value(root: &J, schema: &J) -> J {
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
fn decode(mut index: u128, dimensions: &[Dimension]) -> Vec<&J> {
    let mut out = Vec::with_capacity(dimensions.len());
    for d in dimensions.iter().rev() {
        let n = d.values.len() as u128;
        out.push(&d.values[usize::try_from(index % n).unwrap_or(0)]);
        index /= n;
    }
    out.reverse();
    out
}

use crate::profile::set_field as set_path;

/// The varied fields of one generated profile, nested as in a profile file.
fn example(dimensions: &[Dimension], assignment: &[&J]) -> J {
    let mut value = J::Object(Map::new());
    for (d, v) in dimensions.iter().zip(assignment) {
        set_path(&mut value, &d.path, (*v).clone());
    }
    value
}

/// An example profile on one line, in YAML flow style (`none` for null).
fn show(example: Option<&J>) -> String {
    fn flow(v: &J, out: &mut String) {
        match v {
            J::Null => out.push_str("none"),
            J::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    flow(v, out);
                }
                out.push('}');
            }
            J::Array(list) => {
                out.push('[');
                for (i, v) in list.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    flow(v, out);
                }
                out.push(']');
            }
            J::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    match example {
        Some(J::Object(map)) => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                out.push_str(k);
                out.push_str(": ");
                flow(v, &mut out);
            }
        }
        Some(v) => flow(v, &mut out),
        None => out.push_str("none"),
    }
    out
}

/// `12345` as `12,345`.
#[must_use]
pub fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_a_huge_space_does_not_overflow() {
        // Found from the fuzz findings: thousands of literals over every profile field.
        let huge = [1000u128; 20]
            .iter()
            .fold(1u128, |n, d| n.saturating_mul(*d));
        assert_eq!(huge, u128::MAX);
        let last = sample_index(MAX_SAMPLES - 1, huge, MAX_SAMPLES);
        assert!(last < huge);
        assert!(last > huge / 2, "samples spread over the whole space");
        assert_eq!(sample_index(7, 100, 100), 7);
    }

    #[test]
    fn sampling_varies_the_last_dimensions() {
        // 1,200,000 combinations, 50,000 samples: an even stride of 24 would keep the last
        // three yes/no digits (index % 8) at 0 in every sample.
        let combinations = 1_200_000u128;
        let mut low = std::collections::BTreeSet::new();
        let mut seen = std::collections::HashSet::new();
        for k in 0..MAX_SAMPLES {
            let i = sample_index(k, combinations, MAX_SAMPLES);
            assert!(i < combinations);
            low.insert(i % 8);
            seen.insert(i);
        }
        assert_eq!(low.len(), 8);
        assert_eq!(seen.len(), MAX_SAMPLES, "distinct combinations");
    }
}
