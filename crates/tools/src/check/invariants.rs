//! The invariant search of `decide validate`: generated profiles looking for a decision that
//! breaks an invariant, and the smallest such profile, printed so that it can be run.
//!
//! The profiles: the base profile (every required field at its first or lowest value), every
//! value of every field the invariants read (directly or through the nodes they read) on its own,
//! combinations of those values sampled evenly, and seeded random profiles over the same fields
//! (random numbers within the values' range too). The fields and values are those of the
//! decision-table analysis ([`super::space`]), with the offer fields (proposal, job hours) over
//! the catalog's offers. Everything is deterministic: the same policy gives the same search.
//!
//! "Smallest" is an order: fewer fields differing from the base profile first, then a smaller
//! sum of the numbers in those fields, then the profile's JSON text. The smallest breaking
//! profile found is shrunk further: each differing field is reset to the base value, and each
//! value replaced by a smaller value tried, while the invariant stays broken.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};

use rayon::prelude::*;
use serde_json::{Map, Value as J};

use super::space::{Dimension, base_value, input_space, sample_index, set_path};
use super::tables::thousands;
use decide_engine::error::{Error, ErrorKind, Fault};
use decide_engine::graph::Graph;
use decide_engine::graph::reach::reached_from;
use decide_engine::profile::Profile;

/// Profiles combining several fields' values, sampled evenly from all combinations.
pub const COMBINATIONS: usize = 3_000;
/// Seeded random profiles.
pub const RANDOM: usize = 6_000;
/// Seeded random profiles the search proof adds to the boundary values: fewer than the
/// invariants', as each profile is decided twice over every count of the `reference:` lists.
pub const SEARCH_RANDOM: usize = 1_500;
/// The seed of the random profiles (any fixed number: the output must be stable).
const SEED: u64 = 0x00de_c1de_5eed;
/// At most this many rounds of shrinking a counterexample.
const SHRINK_ROUNDS: usize = 8;

/// What the search found.
#[derive(Debug, Clone, Default)]
pub struct InvariantReport {
    /// Invariants declared.
    pub invariants: usize,
    /// Distinct generated profiles evaluated (the shrinking's tries not counted).
    pub searched: usize,
    /// Of which built from the values tried per field (the rest are random).
    pub boundary: usize,
    /// Generated profiles the profile format refuses (contradicting fields, say), left out.
    pub failed: usize,
    /// Generated profiles the format takes but the rules fail on (a text or an expression that
    /// errs): each is a fault in the rules, reported as a finding with the smallest such profile.
    pub errors: usize,
    /// The ids of the invariants some profile breaks, in policy order.
    pub violated: Vec<String>,
    /// One warning per broken invariant, with its smallest counterexample.
    pub findings: Vec<Error>,
}

/// One generated profile: a value per dimension.
type Assignment = Vec<J>;

/// What deciding one generated profile gave.
enum Tried {
    /// Decided: the invariants it breaks (indices).
    Decided(Vec<usize>),
    /// The profile format refuses it (contradicting fields, say).
    Refused,
    /// The format takes it, and the rules fail on it.
    Failed,
}

/// Searches generated profiles for decisions that break the graph's invariants.
#[must_use]
pub fn search(graph: &Graph, as_of: jiff::civil::Date) -> InvariantReport {
    let c = graph.compiled();
    let mut report = InvariantReport {
        invariants: c.invariants.len(),
        ..InvariantReport::default()
    };
    if c.invariants.is_empty() {
        return report;
    }
    let space = Space::new(graph);
    let (boundary, random) = space.generate(RANDOM);
    report.boundary = boundary.len();
    let profiles: Vec<Assignment> = boundary.into_iter().chain(random).collect();
    let results: Vec<Tried> = profiles
        .par_iter()
        .map(|a| space.broken(graph, a, as_of))
        .collect();
    // Per invariant: the smallest breaking profile, and how many break it; and the smallest
    // profile the rules fail on.
    let mut best: Vec<Option<(Key, usize)>> = vec![None; c.invariants.len()];
    let mut counts = vec![0usize; c.invariants.len()];
    let mut failing: Option<(Key, usize)> = None;
    for (k, result) in results.iter().enumerate() {
        match result {
            Tried::Decided(broken) => {
                report.searched += 1;
                for &i in broken {
                    counts[i] += 1;
                    let key = space.key(&profiles[k]);
                    if best[i].as_ref().is_none_or(|(b, _)| key < *b) {
                        best[i] = Some((key, k));
                    }
                }
            }
            Tried::Refused => report.failed += 1,
            Tried::Failed => {
                report.searched += 1;
                report.errors += 1;
                let key = space.key(&profiles[k]);
                if failing.as_ref().is_none_or(|(b, _)| key < *b) {
                    failing = Some((key, k));
                }
            }
        }
    }
    if let Some((_, k)) = failing {
        report
            .findings
            .push(space.failure(graph, &profiles[k], report.errors, as_of));
    }
    for (i, found) in best.iter().enumerate() {
        let Some((_, k)) = found else { continue };
        let smallest = space.shrink(graph, i, profiles[*k].clone(), as_of);
        let invariant = &c.invariants[i];
        report.violated.push(invariant.id.to_owned());
        report
            .findings
            .push(space.finding(graph, i, &smallest, counts[i], report.searched, as_of));
    }
    report
}

/// What the proof of the searches found: every search whose variables have `reference:` lists,
/// searched over those too on generated profiles.
#[derive(Debug, Clone, Default)]
pub struct SearchProof {
    /// Searches with reference lists.
    pub searches: usize,
    /// Generated profiles decided and searched both ways.
    pub searched: usize,
    /// One warning per search whose `over:` lists lost a cheaper candidate, with the smallest
    /// profile found.
    pub findings: Vec<Error>,
}

/// Searches the generated profiles (the boundary values of the fields the searches read, and
/// [`SEARCH_RANDOM`] random ones) for one where a search's `reference:` lists find a candidate that meets every
/// constraint and costs less than the one its `over:` lists gave: the proof that narrowing a
/// search's lists loses nothing.
#[must_use]
pub fn prove_searches(graph: &Graph, as_of: jiff::civil::Date) -> SearchProof {
    let c = graph.compiled();
    let searches: Vec<usize> = (0..c.nodes.len())
        .filter(|&i| {
            matches!(&c.nodes[i].body, decide_engine::graph::Body::Search(s)
                if s.variables.iter().any(|v| v.reference.is_some()))
        })
        .collect();
    let mut proof = SearchProof {
        searches: searches.len(),
        ..SearchProof::default()
    };
    if searches.is_empty() {
        return proof;
    }
    let space = Space::over(graph, &searches, BTreeSet::new(), Vec::new());
    let (boundary, random) = space.generate(SEARCH_RANDOM);
    let profiles: Vec<Assignment> = boundary.into_iter().chain(random).collect();
    let results: Vec<Option<Vec<(usize, String)>>> = profiles
        .par_iter()
        .map(|a| {
            let profile = space.profile(a)?;
            graph.search_gaps(&profile, as_of).ok()
        })
        .collect();
    // Per search: the smallest profile where it lost a candidate, and how many.
    let mut smallest: Vec<Option<(Key, usize, String)>> = vec![None; c.nodes.len()];
    let mut counts = vec![0usize; c.nodes.len()];
    for (k, result) in results.iter().enumerate() {
        let Some(gaps) = result else { continue };
        proof.searched += 1;
        for (node, gap) in gaps {
            counts[*node] += 1;
            let key = space.key(&profiles[k]);
            if smallest[*node].as_ref().is_none_or(|(b, _, _)| key < *b) {
                smallest[*node] = Some((key, k, gap.clone()));
            }
        }
    }
    for &i in &searches {
        let Some((_, k, gap)) = &smallest[i] else {
            continue;
        };
        let node = &c.nodes[i];
        let json =
            serde_json::to_string_pretty(&space.profile_json(&profiles[*k])).unwrap_or_default();
        proof.findings.push(
            graph
                .policy()
                .error_at(
                    node.file,
                    node.location,
                    format!("search `{}` leaves out a cheaper candidate: {gap}", node.id),
                )
                .field(format!("{}.variables", node.id))
                .help(format!(
                    "{} of {} generated profiles show it; the smallest:\n{json}",
                    thousands(counts[i] as u128),
                    thousands(proof.searched as u128)
                ))
                .help("widen the variables' `over:` lists to hold every candidate their `reference:` lists find")
                .as_warning(),
        );
    }
    proof
}

/// The order of counterexamples: fields differing from the base, sum of their numbers, text.
#[derive(Debug, Clone, PartialEq)]
struct Key(usize, f64, String);

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(
            self.0
                .cmp(&other.0)
                .then(self.1.total_cmp(&other.1))
                .then_with(|| self.2.cmp(&other.2)),
        )
    }
}

/// `count` generated profiles over every field the policy's nodes read, as JSON, for checking a
/// change of the rules or of the engine against the decisions before it (`decide rules
/// sample`): in turn, one of the boundary (the base profile, each value tried alone, then
/// combinations spread evenly over the space) and one random, each named `sample N`, so that a
/// count smaller than the boundary still varies every field. Only profiles the format accepts
/// are given; the same rules give the same profiles, in the same order.
/// The profiles are made one at a time as the iterator is read, so a caller that writes each
/// as it comes holds one profile, not the sample.
pub fn sample(graph: &Graph, count: usize) -> impl Iterator<Item = J> {
    let c = graph.compiled();
    let deps: Vec<usize> = (0..c.nodes.len()).collect();
    let space = Space::over(graph, &deps, BTreeSet::new(), Vec::new());
    let (boundary, random) = space.generate(count);
    let (mut boundary, mut random) = (boundary.into_iter(), random.into_iter());
    std::iter::repeat_with(move || [boundary.next(), random.next()])
        .take_while(|pair| pair.iter().any(Option::is_some))
        .flatten()
        .flatten()
        .filter_map(move |a| space.profile(&a).is_some().then(|| space.profile_json(&a)))
        .take(count)
        .enumerate()
        .map(|(i, mut profile)| {
            profile["name"] = J::from(format!("sample {}", i + 1));
            profile
        })
}

/// The fields the invariants read, with the values tried, and the base profile.
struct Space {
    dimensions: Vec<Dimension>,
    /// The base profile as generated (required fields only).
    base: J,
    /// Per dimension: its value in the base profile as read (defaults filled in; null if none).
    base_values: Assignment,
}

impl Space {
    /// The space of the fields the invariants read, directly or through the nodes they read.
    fn new(graph: &Graph) -> Self {
        let c = graph.compiled();
        let deps: Vec<usize> = c
            .invariants
            .iter()
            .flat_map(|i| i.deps.iter().copied())
            .collect();
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        let mut texts: Vec<&str> = Vec::new();
        for invariant in &c.invariants {
            paths.extend(invariant.profile_paths.iter().map(String::as_str));
            texts.push(invariant.holds.text);
        }
        Self::over(graph, &deps, paths, texts)
    }

    /// The space of the fields `paths` and the nodes `deps` read (with the nodes they read),
    /// with the numbers of `texts` and of those nodes' expressions as values tried.
    fn over<'g>(
        graph: &'g Graph,
        deps: &[usize],
        mut paths: BTreeSet<&'g str>,
        mut texts: Vec<&'g str>,
    ) -> Self {
        let c = graph.compiled();
        let reached = reached_from(graph, deps);
        for &i in &reached {
            paths.extend(c.nodes[i].profile_paths.iter().map(String::as_str));
        }
        // In evaluation order, so that the numbers (and so the values tried) do not depend on
        // the order a hash set gives.
        for &i in c.order.iter().filter(|i| reached.contains(i)) {
            texts.extend(c.nodes[i].expr_texts());
        }
        let offers: Vec<&str> = graph.policy().offer_ids().collect();
        let dimensions = input_space(paths, &texts, &offers);
        let base = base_value();
        let read = serde_json::from_value::<Profile>(base.clone())
            .ok()
            .and_then(|p| serde_json::to_value(p).ok())
            .unwrap_or_else(|| base.clone());
        let base_values = dimensions
            .iter()
            .map(|d| {
                d.path
                    .iter()
                    .try_fold(&read, |v, k| v.get(k))
                    .cloned()
                    .unwrap_or(J::Null)
            })
            .collect();
        let mut space = Space {
            dimensions,
            base,
            base_values,
        };
        // Values the profile format refuses (a number the rules write that is out of a field's
        // range) are not tried: each is checked once, on the base profile.
        for d in 0..space.dimensions.len() {
            let values = std::mem::take(&mut space.dimensions[d].values);
            let kept = values
                .into_iter()
                .filter(|v| {
                    let mut a = space.base_values.clone();
                    a[d] = v.clone();
                    space.profile(&a).is_some()
                })
                .collect();
            space.dimensions[d].values = kept;
        }
        let (dimensions, base_values) = space
            .dimensions
            .into_iter()
            .zip(space.base_values)
            .filter(|(d, _)| !d.values.is_empty())
            .unzip();
        space.dimensions = dimensions;
        space.base_values = base_values;
        space
    }

    /// The boundary profiles (the base, each value alone, sampled combinations) and the random
    /// ones, each without duplicates and without those the profile format refuses (two fields
    /// that contradict each other, such as more machines than GPUs).
    fn generate(&self, random: usize) -> (Vec<Assignment>, Vec<Assignment>) {
        let mut seen: HashSet<String> = HashSet::new();
        let mut keep = |a: Assignment, out: &mut Vec<Assignment>| {
            if seen.insert(J::Array(a.clone()).to_string()) && self.profile(&a).is_some() {
                out.push(a);
            }
        };
        let mut boundary = Vec::new();
        keep(self.base_values.clone(), &mut boundary);
        for (d, dim) in self.dimensions.iter().enumerate() {
            for v in &dim.values {
                let mut a = self.base_values.clone();
                a[d] = v.clone();
                keep(a, &mut boundary);
            }
        }
        let combinations: u128 = self
            .dimensions
            .iter()
            .fold(1u128, |n, d| n.saturating_mul(d.values.len() as u128));
        let samples = usize::try_from(combinations.min(COMBINATIONS as u128)).unwrap_or(0);
        for k in 0..samples {
            let mut index = sample_index(k, combinations, samples);
            let mut a = Vec::with_capacity(self.dimensions.len());
            for d in self.dimensions.iter().rev() {
                let n = d.values.len() as u128;
                a.push(d.values[usize::try_from(index % n).unwrap_or(0)].clone());
                index /= n;
            }
            a.reverse();
            keep(a, &mut boundary);
        }
        let mut rng = SplitMix(SEED);
        let mut out = Vec::new();
        for _ in 0..random {
            let a = self
                .dimensions
                .iter()
                .zip(&self.base_values)
                .map(|(d, base)| random_value(&mut rng, d, base))
                .collect();
            keep(a, &mut out);
        }
        (boundary, out)
    }

    /// The profile of an assignment, as written: the base with every differing field set.
    fn profile_json(&self, a: &[J]) -> J {
        let mut value = self.base.clone();
        for ((d, v), base) in self.dimensions.iter().zip(a).zip(&self.base_values) {
            if v != base {
                set_path(&mut value, &d.path, v.clone());
            }
        }
        value
    }

    /// The profile of an assignment, read as a user's file would be (offer ids keep their
    /// place, which reading a JSON value directly cannot give); `None` if the format refuses it.
    fn profile(&self, a: &[J]) -> Option<Profile> {
        let text = self.profile_json(a).to_string();
        Profile::from_source(&decide_engine::source::Source::new(
            "generated profile",
            text,
        ))
        .ok()
    }

    /// The invariants `a` breaks (indices); or that the format refuses it, or the rules fail on it.
    fn broken(&self, graph: &Graph, a: &[J], as_of: jiff::civil::Date) -> Tried {
        let Some(profile) = self.profile(a) else {
            return Tried::Refused;
        };
        match graph.violations(&profile, as_of) {
            Ok(violations) => Tried::Decided(violations.into_iter().map(|(i, _)| i).collect()),
            Err(_) => Tried::Failed,
        }
    }

    /// The finding for a valid profile the rules fail on: the rules' own error (its place in
    /// the rules), with the profile and how many generated profiles fail so.
    fn failure(&self, graph: &Graph, a: &[J], count: usize, as_of: jiff::civil::Date) -> Error {
        let json = self.profile_json(a);
        let fields = self.key(a).0;
        let error = self
            .profile(a)
            .and_then(|p| graph.violations(&p, as_of).err())
            .unwrap_or_else(|| {
                Error::new(
                    ErrorKind::Eval,
                    "a generated profile failed, then was decided",
                )
            });
        error.help(format!(
            "{} generated profiles the profile format accepts cannot be decided; the smallest ({} away from the base profile):\n{}",
            thousands(count as u128),
            fields_away(fields),
            to_yaml(&json).trim_end()
        ))
    }

    fn key(&self, a: &[J]) -> Key {
        let mut fields = 0;
        let mut sum = 0.0;
        for (v, base) in a.iter().zip(&self.base_values) {
            if v != base {
                fields += 1;
                sum += magnitude(v);
            }
        }
        Key(fields, sum, J::Array(a.to_vec()).to_string())
    }

    /// Makes a counterexample of invariant `i` smaller while it stays one: resets fields to
    /// the base value, or replaces them with smaller values tried.
    fn shrink(
        &self,
        graph: &Graph,
        i: usize,
        mut a: Assignment,
        as_of: jiff::civil::Date,
    ) -> Assignment {
        let breaks = |a: &[J]| matches!(self.broken(graph, a, as_of), Tried::Decided(broken) if broken.contains(&i));
        for _ in 0..SHRINK_ROUNDS {
            let mut changed = false;
            for d in 0..a.len() {
                if a[d] == self.base_values[d] {
                    continue;
                }
                let now = self.key(&a);
                // The base value first, then the smaller values tried, smallest first.
                let mut tries: Vec<Assignment> = std::iter::once(&self.base_values[d])
                    .chain(&self.dimensions[d].values)
                    .map(|v| {
                        let mut b = a.clone();
                        b[d] = v.clone();
                        b
                    })
                    .filter(|b| self.key(b) < now)
                    .collect();
                tries.sort_by(|x, y| {
                    self.key(x)
                        .partial_cmp(&self.key(y))
                        .unwrap_or(Ordering::Equal)
                });
                // A few at a time on every core; the first (smallest) that still breaks wins.
                let found = tries
                    .chunks(rayon::current_num_threads().max(1) * 2)
                    .find_map(|chunk| {
                        let ok: Vec<bool> = chunk.par_iter().map(|b| breaks(b)).collect();
                        ok.iter().position(|&x| x).map(|p| chunk[p].clone())
                    });
                if let Some(b) = found {
                    a = b;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        a
    }

    /// The finding for invariant `i`, broken by `a` (and by `count` of `searched` profiles).
    fn finding(
        &self,
        graph: &Graph,
        i: usize,
        a: &[J],
        count: usize,
        searched: usize,
        as_of: jiff::civil::Date,
    ) -> Error {
        let c = graph.compiled();
        let invariant = &c.invariants[i];
        let json = self.profile_json(a);
        let violation = self
            .profile(a)
            .and_then(|p| graph.violations(&p, as_of).ok())
            .and_then(|v| v.into_iter().find(|(j, _)| *j == i))
            .map(|(_, e)| e);
        let (message, verdict) = match violation.as_ref().and_then(Error::fault) {
            Some(Fault::InvariantViolated {
                message,
                holds,
                verdict,
                ..
            }) => (message.clone(), format!("`holds: {holds}` {verdict}")),
            _ => (String::new(), String::new()),
        };
        let fields = self.key(a).0;
        graph
            .policy()
            .error_at(
                invariant.file,
                invariant.holds.location,
                format!(
                    "invariant `{}` can be violated: {message}",
                    invariant.id
                ),
            )
            .help(format!("invariant: {}", invariant.title))
            .help(verdict)
            .help(format!(
                "{} of {} generated profiles violate it; the smallest ({} away from the base profile), which `decide` refuses:\n{}",
                thousands(count as u128),
                thousands(searched as u128),
                fields_away(fields),
                to_yaml(&json).trim_end()
            ))
            .help("fix the rules so that no decision violates it, or correct the invariant if it asks too much")
            .as_warning()
    }
}

/// How far a counterexample is from the base profile, in words: `1 field`, `3 fields`.
fn fields_away(fields: usize) -> String {
    if fields == 1 {
        "1 field".to_owned()
    } else {
        format!("{fields} fields")
    }
}

/// The sum of the numbers in a value (its magnitude in the order of counterexamples).
fn magnitude(v: &J) -> f64 {
    match v {
        J::Number(n) => n.as_f64().unwrap_or(0.0).abs(),
        J::Array(list) => list.iter().map(magnitude).sum(),
        J::Object(map) => map.values().map(magnitude).sum(),
        _ => 0.0,
    }
}

/// A random value for one dimension: a quarter the base value, a quarter a number drawn from
/// the range of the values tried (for number fields; else a value tried), half a value tried.
/// Job hours take a random subset of the offers, each at a value tried or a random number.
fn random_value(rng: &mut SplitMix, d: &Dimension, base: &J) -> J {
    let pick = |rng: &mut SplitMix| d.values[rng.below(d.values.len())].clone();
    match rng.below(4) {
        0 => base.clone(),
        1 => {
            if let J::Object(base_map) = base {
                // A map of numbers by key (job hours): several keys at once.
                let keys: Vec<(String, J)> = d
                    .values
                    .iter()
                    .filter_map(J::as_object)
                    .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
                    .collect();
                if keys.is_empty() {
                    return J::Object(base_map.clone());
                }
                let mut map = Map::new();
                for _ in 0..=rng.below(3) {
                    let (k, v) = &keys[rng.below(keys.len())];
                    map.insert(k.clone(), v.clone());
                }
                return J::Object(map);
            }
            random_number(rng, &d.values).unwrap_or_else(|| pick(rng))
        }
        _ => pick(rng),
    }
}

/// A number between the smallest and the largest number of `values` (none if they hold no
/// number): whole if every value is whole or the range is wide, else to one decimal.
fn random_number(rng: &mut SplitMix, values: &[J]) -> Option<J> {
    let numbers: Vec<f64> = values.iter().filter_map(J::as_f64).collect();
    let lo = numbers.iter().copied().reduce(f64::min)?;
    let hi = numbers.iter().copied().reduce(f64::max)?;
    #[allow(clippy::cast_precision_loss)]
    let x = lo + (hi - lo) * (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let whole = values.iter().all(|v| v.is_i64() || v.is_u64()) || hi - lo >= 10.0;
    if whole {
        #[allow(clippy::cast_possible_truncation)]
        let n = x.round().clamp(lo.ceil(), hi.floor()) as i64;
        Some(J::from(n))
    } else {
        Some(J::from(((x * 10.0).round() / 10.0).clamp(lo, hi)))
    }
}

/// splitmix64: a tiny, seeded, well-mixed generator (no dependency for a fixed sample).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A profile as block YAML a person can save and run: mappings by indentation, lists in flow
/// style, text quoted when it would otherwise read as something else.
#[must_use]
pub fn to_yaml(value: &J) -> String {
    fn scalar(v: &J) -> String {
        match v {
            J::Null => "null".to_owned(),
            J::String(s) => {
                let plain = s.chars().next().is_some_and(char::is_alphabetic)
                    && s.chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.'))
                    && !s.ends_with(' ')
                    && !matches!(
                        s.to_ascii_lowercase().as_str(),
                        "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
                    );
                if plain {
                    s.clone()
                } else {
                    J::String(s.clone()).to_string()
                }
            }
            J::Array(list) => format!(
                "[{}]",
                list.iter().map(scalar).collect::<Vec<_>>().join(", ")
            ),
            J::Object(map) => format!(
                "{{{}}}",
                map.iter()
                    .map(|(k, v)| format!("{}: {}", scalar(&J::from(k.as_str())), scalar(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => other.to_string(),
        }
    }
    fn block(map: &Map<String, J>, indent: usize, out: &mut String) {
        for (k, v) in map {
            out.push_str(&" ".repeat(indent));
            out.push_str(&scalar(&J::from(k.as_str())));
            out.push(':');
            match v {
                J::Object(inner) if !inner.is_empty() => {
                    out.push('\n');
                    block(inner, indent + 2, out);
                }
                other => {
                    out.push(' ');
                    out.push_str(&scalar(other));
                    out.push('\n');
                }
            }
        }
    }
    let mut out = String::new();
    match value {
        J::Object(map) => block(map, 0, &mut out),
        other => out.push_str(&scalar(other)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_reads_back_as_the_same_profile() {
        let value = serde_json::json!({
            "name": "generated profile",
            "workload": {"task": "pretrain", "model_params_b": 70.5, "parallelism": ["data", "tensor"]},
            "usage": {"gpus": 8, "hours_per_gpu_month": 600},
            "job": {"hours": {"h100-x8-ningxia1": 168}, "cadence": "weekly"},
            "budget": {"monthly_cny": 10000},
        });
        let text = to_yaml(&value);
        let source = decide_engine::source::Source::new("p.yaml", text.as_str());
        let read = Profile::from_source(&source).expect(&text);
        let again = serde_json::from_value::<Profile>(value).unwrap();
        assert_eq!(
            serde_json::to_value(read).unwrap(),
            serde_json::to_value(again).unwrap()
        );
        assert!(
            text.starts_with("name: generated profile\nworkload:\n  task: pretrain\n"),
            "{text}"
        );
        assert_eq!(to_yaml(&J::from("yes")), "\"yes\"");
    }

    #[test]
    fn the_random_sequence_is_fixed() {
        let mut a = SplitMix(SEED);
        let mut b = SplitMix(SEED);
        let xs: Vec<u64> = (0..4).map(|_| a.next()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next()).collect();
        assert_eq!(xs, ys);
        assert!(xs.windows(2).all(|w| w[0] != w[1]));
    }
}
