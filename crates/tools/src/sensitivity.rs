//! What would change the answer: the nearest single change to the profile that flips each
//! criterion, the deployment and the offer, found by re-evaluating the rules.
//!
//! The policy lists the fields to vary (`sensitivity.fields`); the profile's field model
//! ([`decide_engine::profile::fields`]) says what each is (a number and its bounds, a flag, a choice, a
//! list of choices). Flags are toggled, every other choice is tried, and each choice of a list
//! is added where it is absent and removed where it is present. A field with a `when` is
//! searched only where that is true of the decision being explained (machines per job change
//! nothing for serving replicas). Numbers are searched outward from the profile's value in both
//! directions, over candidates that include every number the rules write down (with its
//! neighbours one step away, as `decide validate`'s table analysis does) and doubling steps up
//! to the field's bounds; where a watched value changes between two candidates, bisection finds
//! a value at which it differs, to the field's step. Only the nodes that read the varied field
//! (directly or through other nodes) are re-evaluated, and only those the watched values and
//! the headline cost (said beside a change of the deployment or the offer) need; texts,
//! warnings and the trace are not rendered.
//!
//! **Whole-number fields** (GPUs, machines, sequences) are billed in whole boxes, so a bill is a
//! sawtooth in them and a watched value can change and change back between two candidates.
//! Their search adds, within bounds:
//!
//! - the [`DENSE_STEPS`] values nearest the profile's each side, one by one (spaced by the
//!   field's `step`: 1 for a count);
//! - for a count, both ends of each whole unit, `k·c` and `k·c + 1`, for every whole-number
//!   count `c` of 2 and more the catalog writes and the varied nodes read (GPUs per box, per
//!   instance), [`COUNT_MULTIPLES`] multiples each side: a bill in whole units of `c` is flat
//!   between them, so a line that the rest of the bill (linear in the count) crosses once per
//!   unit is bracketed inside its unit and bisected there;
//! - after bisection, every value between the last unchanged candidate and the change, nearest
//!   first, when there are at most [`GAP_SCAN`] of them: the change reported is then the first.
//!
//! So for a count the nearest change is exact within `DENSE_STEPS` of the profile's value, and
//! within `COUNT_MULTIPLES` whole units wherever the watched values change only at the ends of
//! a unit or once inside it (whole boxes against a per-GPU price). The cost is bounded: at most
//! `2 × (DENSE_STEPS + 2 × (COUNT_MULTIPLES + 1) × counts)` candidates per field beyond the
//! doubling ones and the rules' numbers, and `GAP_SCAN` more per watched value that changes
//! (answers are remembered, so a value tried twice is evaluated once). A search stops once
//! every watched value that reads a re-evaluated node has changed.
//!
//! **Decimal fields** (model size, context) set whole units too (the units a replica takes), so
//! the answer is the cheapest of several step functions and can change and change back between
//! two tried values that agree. Between two consecutive candidates that differ in any watched
//! value or in the headline cost, within the profile's value of it (from 0 to twice the value),
//! the interval is halved, nearer half first, until its ends agree or no value of the field's
//! step lies between them ([`HIDDEN_PROBES`] values at most per direction).
//!
//! Where the halving runs out of values to try before it has looked everywhere between two
//! candidates, the search in that direction stops there: a change past that point may not be
//! the first, so it is not said (the memo says only changes it has checked are the nearest).
//!
//! The flip side, as with the table analysis: beyond those bounds, a change that exists only
//! between two tried values that agree on every watched value and the headline cost (a band
//! no rule literal or catalog count bounds) can be missed, and a change bisected over a wider
//! gap may not be the first. The rules are evaluated, not solved.

use std::collections::{BTreeSet, HashMap, HashSet};

use decide_lang::Value;
use rayon::prelude::*;
use serde::Deserialize as _;
use serde_json::Value as J;

use decide_engine::decision::Flip;
use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::eval::{Evaluation, Watch};
use decide_engine::graph::reach::ancestors;
use decide_engine::graph::{Body, Graph};
use decide_engine::kind::NodeKind;
use decide_engine::policy::ROOT_NAMES;
use decide_engine::policy::rules::FieldType;
use decide_engine::profile::{FieldKind, Profile};
use decide_lang::numbers::{OrderedF64, numeric_constants};

/// Most doubling steps tried in one direction from the profile's value.
const MAX_DOUBLINGS: u32 = 16;
/// An unbounded number is searched up to this many times its value.
const UNBOUNDED_FACTOR: f64 = 100.0;
/// Whole-number fields: every value this many steps each side of the profile's is tried (with
/// 8-GPU boxes, the nearest two boxes each side).
const DENSE_STEPS: u32 = 16;
/// Whole-number fields: multiples of each catalog count tried each side of the profile's
/// value (with 8 GPUs a box, ±128 GPUs), both ends of each whole unit.
const COUNT_MULTIPLES: u32 = 16;
/// Whole-number fields: most values tried one by one between the last unchanged candidate and
/// the change bisection found.
const GAP_SCAN: u32 = 64;
/// Decimal fields: most values tried, per direction, between two candidates that differ in a
/// watched value or the headline cost, looking for a change that comes and goes between them
/// (only within the profile's value of it: from 0 to twice the value).
const HIDDEN_PROBES: u32 = 64;

/// One watched value: a criterion or an output.
struct Target<'g> {
    id: String,
    title: String,
    watch: Watch<'g>,
    /// Indices of every node the value depends on (itself included for nodes).
    needs: HashSet<usize>,
    /// The fields it is searched under (none: every field).
    fields: Option<Vec<String>>,
}

/// A change found for one target on one field.
struct Found {
    at: J,
    becomes: Value,
    direction: &'static str,
    distance: f64,
    /// A number the rules write (a table's edge, say 70B) just past which the change happens:
    /// the change is said as "below 70B" rather than "at 69.5B".
    edge: Option<J>,
    /// The item of a list field added or removed (`direction` says which).
    item: Option<J>,
    /// The headline cost at `at` (none when the policy names none).
    cost: Value,
}

/// Everything one analysis shares: the graph, the watched values and the profile as it is.
struct Study<'a, 'g> {
    graph: &'g Graph,
    as_of: jiff::civil::Date,
    targets: Vec<Target<'g>>,
    /// The targets' watches, then the headline cost's when the policy names one.
    watch: Vec<Watch<'g>>,
    needed: HashSet<usize>,
    base_values: Vec<Value>,
    config: &'a decide_engine::policy::rules::Sensitivity,
}

/// What one field's search found, per target.
struct FieldResult {
    probe: usize,
    path: String,
    current: J,
    numeric: bool,
    found: Vec<Option<Found>>,
}

/// For every criterion and for the deployment and offer, the nearest change of each probed
/// field that changes it, nearest first within each target. Empty when the policy has no
/// `sensitivity:` section.
#[allow(clippy::too_many_lines)] // two passes read top to bottom: single changes, then lines
pub fn analyse(
    graph: &Graph,
    profile: &Profile,
    as_of: jiff::civil::Date,
    evaluation: &Evaluation,
) -> Result<Vec<Flip>> {
    let Some(config) = &graph.policy().sensitivity else {
        return Ok(Vec::new());
    };
    let config = &config.item;
    let c = graph.compiled();
    let targets = targets(graph, config);
    // The answer's headline cost is watched beside the targets (and reported with a change).
    let cost = graph
        .policy()
        .outputs
        .item
        .promises
        .headline_cost
        .as_ref()
        .and_then(|name| c.outputs.costs.iter().find(|(k, _)| *k == name.as_str()))
        .map(|(_, e)| e);
    let study = Study {
        graph,
        as_of,
        watch: targets
            .iter()
            .map(|t| t.watch)
            .chain(cost.map(Watch::Output))
            .collect(),
        needed: targets
            .iter()
            .flat_map(|t| t.needs.iter().copied())
            .chain(cost.into_iter().flat_map(|e| output_needs(graph, e)))
            .collect(),
        base_values: c
            .nodes
            .iter()
            .map(|n| evaluation.values.get(n.id).cloned().unwrap_or_default())
            .collect(),
        targets,
        config,
    };
    let before: Vec<Value> = study
        .targets
        .iter()
        .map(|t| match t.watch {
            Watch::Node(i) => study.base_values[i].clone(),
            Watch::Output(_) => Value::from(match t.id.as_str() {
                "deployment" => evaluation.decision.deployment.as_str(),
                _ => evaluation.decision.offer.as_str(),
            }),
        })
        .collect();
    let base_json = serde_json::to_value(profile).map_err(|e| internal(&e.to_string()))?;

    // A field whose `when` is false of this decision is not searched.
    let applies = (0..config.fields.len())
        .map(|i| study.applies(i, profile))
        .collect::<Result<Vec<bool>>>()?;
    // Fields are searched independently: on as many threads as there are cores (the results
    // keep the policy's field order), unless this already runs on one of rayon's threads (a
    // batch deciding profiles in parallel). There, nested parallelism gains nothing, and a thread
    // waiting in a join would steal the batch's next profile onto its own stack, and the next,
    // until the stack overflows (a batch of 1,500 memos with the analysis did).
    let search = |i: usize| {
        if applies[i] {
            study.field(i, &base_json, &before, None)
        } else {
            None
        }
    };
    let results: Vec<FieldResult> = if nested() {
        (0..config.fields.len()).filter_map(search).collect()
    } else {
        (0..config.fields.len())
            .into_par_iter()
            .filter_map(search)
            .collect()
    };
    let mut flips = Vec::new();
    for r in &results {
        for (order, found) in r.found.iter().enumerate() {
            let Some(found) = found else { continue };
            let t = &study.targets[order];
            let values = [
                ("id", Value::from(t.id.as_str())),
                ("field", Value::from(r.path.as_str())),
                ("target", Value::from(t.title.as_str())),
                ("before", Value::from(study.words(t, &before[order]))),
                ("after", Value::from(study.words(t, &found.becomes))),
                ("direction", Value::from(found.direction)),
                ("change", Value::from(study.says_change(r.probe, found)?)),
                ("now", Value::from(study.says(r.probe, &r.current)?)),
                ("cost", found.cost.clone()),
            ];
            flips.push((
                order,
                Flip {
                    id: t.id.clone(),
                    field: r.path.clone(),
                    from: r.current.clone(),
                    flips_at: found.at.clone(),
                    edge: found.edge.clone(),
                    becomes: to_json(&found.becomes),
                    distance: Some((found.distance * 1000.0).round() / 1000.0),
                    given: None,
                    cost: (!found.cost.is_none() && !found.cost.is_undefined())
                        .then(|| to_json(&found.cost)),
                    text: study.text("text", &values)?,
                },
            ));
        }
    }
    // The deployment and the offer: say which number fields no value of changes, and where
    // their line lies under the nearest change of another number field that does.
    if config.unchanged.is_some() {
        for (order, t) in study.targets.iter().enumerate().take(2) {
            for r in results
                .iter()
                .filter(|r| r.numeric && r.found[order].is_none())
            {
                // Where this field's line lies under the change of the field it is paired with.
                let Some(pair) = &config.fields[r.probe].line_under else {
                    continue;
                };
                let Some((g, gf)) = results
                    .iter()
                    .find(|g| &g.path == pair)
                    .and_then(|g| g.found[order].as_ref().map(|gf| (g, gf)))
                else {
                    continue;
                };
                let mut json = base_json.clone();
                let g_path: Vec<&str> = g.path.split('.').collect();
                decide_engine::profile::set_field(&mut json, &g_path, gf.at.clone());
                let extra = dirty_nodes(graph, &g.path, &study.needed);
                let Some(line) = study
                    .field(r.probe, &json, &[], Some(&extra))
                    .and_then(|under| under.found.into_iter().nth(order).flatten())
                else {
                    continue;
                };
                let values = [
                    ("id", Value::from(t.id.as_str())),
                    ("field", Value::from(r.path.as_str())),
                    ("target", Value::from(t.title.as_str())),
                    ("before", Value::from(study.words(t, &before[order]))),
                    ("name", Value::from(study.name(r.probe))),
                    ("now", Value::from(study.says(r.probe, &r.current)?)),
                    ("given", Value::from(study.says(g.probe, &gf.at)?)),
                    ("line", Value::from(study.says(r.probe, &line.at)?)),
                ];
                flips.push((
                    order,
                    Flip {
                        id: t.id.clone(),
                        field: r.path.clone(),
                        from: r.current.clone(),
                        flips_at: line.at.clone(),
                        edge: None,
                        becomes: to_json(&line.becomes),
                        distance: None,
                        given: Some(decide_engine::decision::Given {
                            field: g.path.clone(),
                            value: gf.at.clone(),
                        }),
                        cost: None,
                        text: study.text("unchanged", &values)?,
                    },
                ));
            }
        }
    }
    // Targets in order (deployment, offer, then the criteria), nearest change first; fields
    // that change nothing last.
    flips.sort_by(|(a, fa), (b, fb)| {
        a.cmp(b).then(
            fa.distance
                .unwrap_or(f64::INFINITY)
                .total_cmp(&fb.distance.unwrap_or(f64::INFINITY)),
        )
    });
    Ok(flips.into_iter().map(|(_, f)| f).collect())
}

impl Study<'_, '_> {
    /// Searches one field of the profile `json`. `before` are the watched values at `json`
    /// (empty: evaluate them); `extra` are nodes to re-evaluate besides the field's own (when
    /// `json` differs from the evaluated profile in another field too).
    fn field(
        &self,
        probe_index: usize,
        json: &J,
        before: &[Value],
        extra: Option<&[usize]>,
    ) -> Option<FieldResult> {
        let c = self.graph.compiled();
        let probe = &self.config.fields[probe_index];
        let path: Vec<&str> = probe.field.value.split('.').collect();
        let ty = &decide_engine::profile::field(&probe.field.value)?.kind;
        let searchable = match ty {
            FieldKind::Bool | FieldKind::Enum(_) | FieldKind::Number(_) => true,
            FieldKind::List(item) => matches!(**item, FieldKind::Enum(_)),
            _ => false,
        };
        if !searchable {
            return None;
        }
        let current = match get_path(json, &path) {
            Some(v) => v.clone(),
            // `unset` is a choice's only (checked when the rules load).
            None if probe.unset => J::Null,
            None => return None,
        };
        let mut dirty = dirty_nodes(self.graph, &probe.field.value, &self.needed);
        if dirty.is_empty() {
            return None;
        }
        if let Some(extra) = extra {
            let set: HashSet<usize> = dirty.iter().chain(extra).copied().collect();
            dirty = c
                .order
                .iter()
                .copied()
                .filter(|i| set.contains(i))
                .collect();
        }
        let mut prober = Prober {
            graph: self.graph,
            as_of: self.as_of,
            json: json.clone(),
            base_values: &self.base_values,
            dirty: &dirty,
            watch: &self.watch,
            path: &path,
            cache: HashMap::new(),
        };
        let before = if before.is_empty() {
            let mut at = prober.at(&current)?;
            at.truncate(self.targets.len());
            at
        } else {
            before.to_vec()
        };
        let mut numeric = false;
        let found = match ty {
            FieldKind::Bool => {
                prober.changes_at(&J::from(!current.as_bool()?), &before, "set", 1.0)
            }
            FieldKind::Enum(choices) => others(&mut prober, choices, &current, &before),
            FieldKind::List(item) => {
                let FieldKind::Enum(choices) = &**item else {
                    return None;
                };
                toggles(&mut prober, choices, current.as_array()?, &before)
            }
            FieldKind::Number(range) => {
                numeric = true;
                self.numbers(
                    &mut prober,
                    probe,
                    *range,
                    current.as_f64()?,
                    &dirty,
                    &before,
                )
            }
            _ => return None,
        };
        Some(FieldResult {
            probe: probe_index,
            path: probe.field.value.clone(),
            current,
            numeric,
            found,
        })
    }

    /// A number field: per target, the nearer of the first changes up and down from `now`.
    fn numbers(
        &self,
        prober: &mut Prober<'_, '_>,
        probe: &decide_engine::policy::rules::Probe,
        range: decide_engine::profile::fields::Bounds,
        now: f64,
        dirty: &[usize],
        before: &[Value],
    ) -> Vec<Option<Found>> {
        let step = if range.integer {
            1.0
        } else {
            probe.step.filter(|s| *s > 0.0).unwrap_or(1.0)
        };
        let (constants, counts) = constants_read(self.graph, dirty);
        let space = SearchRange {
            now,
            step,
            integer: range.integer,
            dense: probe.step.filter(|s| *s >= 1.0).map_or(1.0, f64::round),
            min: range.lowest().unwrap_or(f64::NEG_INFINITY),
            max: range
                .max
                .unwrap_or_else(|| (now.abs() * UNBOUNDED_FACTOR).max(step * 1000.0)),
        };
        // A target that reads none of the re-evaluated nodes cannot change: the search
        // stops once every other one has changed.
        // A watched node kept to some fields is not searched under the others.
        let live: Vec<bool> = self
            .targets
            .iter()
            .map(|t| {
                dirty.iter().any(|d| t.needs.contains(d))
                    && t.fields
                        .as_ref()
                        .is_none_or(|f| f.contains(&probe.field.value))
            })
            .collect();
        let sets = Sets {
            constants: &constants,
            counts: &counts,
            live: &live,
        };
        // Up and down are searched at once, each with its own memory of answers.
        let mut down_prober = prober.clone();
        let (up, down) = if nested() {
            (
                prober.search(&space, &sets, before, true),
                down_prober.search(&space, &sets, before, false),
            )
        } else {
            rayon::join(
                || prober.search(&space, &sets, before, true),
                || down_prober.search(&space, &sets, before, false),
            )
        };
        up.into_iter()
            .zip(down)
            .map(|(u, d)| match (u, d) {
                (Some(u), Some(d)) => Some(if d.distance < u.distance { d } else { u }),
                (u, d) => u.or(d),
            })
            .collect()
    }

    /// A decision value in words: an offer's title, or the policy's word for it.
    fn words(&self, target: &Target<'_>, v: &Value) -> String {
        let owner = self.graph.owner();
        if target.id == "offer"
            && let title = owner.catalog.get_item(v).get_attr("title")
            && !title.is_undefined()
        {
            return title.to_string();
        }
        let key = if v.kind() == decide_lang::value::Kind::Bool {
            if v.is_true() { "true" } else { "false" }.to_owned()
        } else {
            v.to_string()
        };
        self.config
            .values
            .get(&key)
            .map_or(key, |w| w.get(self.graph.lang()).to_owned())
    }

    /// The field's name in a sentence.
    fn name(&self, probe: usize) -> String {
        let p = &self.config.fields[probe];
        p.name.as_ref().map_or_else(
            || p.field.value.clone(),
            |w| w.get(self.graph.lang()).to_owned(),
        )
    }

    /// The field at `value`, in the policy's words.
    fn says(&self, probe: usize, value: &J) -> Result<String> {
        self.text(
            &format!("says.{probe}"),
            &[("value", Value::from_serialize(value))],
        )
    }

    /// The field as `found` changes it, in the policy's words: at the rules' edge where the
    /// change is just past one, with the item added or removed for a list.
    fn says_change(&self, probe: usize, found: &Found) -> Result<String> {
        let mut values = vec![(
            "value",
            Value::from_serialize(found.edge.as_ref().unwrap_or(&found.at)),
        )];
        match (found.direction, &found.item) {
            ("add", Some(item)) => values.push(("added", Value::from_serialize(item))),
            ("remove", Some(item)) => values.push(("removed", Value::from_serialize(item))),
            _ => {}
        }
        self.text(&format!("says.{probe}"), &values)
    }

    /// Whether field `probe` is searched for this decision: its `when`, evaluated over the
    /// evaluated nodes and the profile (true without one).
    fn applies(&self, probe: usize, profile: &Profile) -> Result<bool> {
        let c = self.graph.compiled();
        let Some(Some(when)) = c.sensitivity_when.get(probe) else {
            return Ok(true);
        };
        let v = self.graph.probe(
            profile,
            self.as_of,
            &self.base_values,
            &[],
            &[Watch::Output(when)],
        )?;
        match v.first() {
            Some(v) if v.kind() == decide_lang::value::Kind::Bool => Ok(v.is_true()),
            v => Err(internal(&format!(
                "the `when` of `{}` gave {}, expected true or false",
                self.config.fields[probe].field.value,
                v.map_or_else(|| "nothing".to_owned(), ToString::to_string)
            ))),
        }
    }

    /// Sentence `part` of the policy's `sensitivity:` rendered with `values`.
    fn text(&self, part: &str, values: &[(&str, Value)]) -> Result<String> {
        self.graph
            .sensitivity_sentence(part, values)
            .map_err(|why| text_error(part, &why))
    }
}

/// The deployment, the offer, then every criterion, each with the nodes it needs.
fn targets<'g>(
    graph: &'g Graph,
    config: &decide_engine::policy::rules::Sensitivity,
) -> Vec<Target<'g>> {
    let c = graph.compiled();
    let lang = graph.lang();
    let word = |id: &str| {
        config
            .targets
            .get(id)
            .map_or_else(|| id.to_owned(), |w| w.get(lang).to_owned())
    };
    let output_needs = |e| output_needs(graph, e);
    let mut out = vec![
        Target {
            id: "deployment".to_owned(),
            title: word("deployment"),
            watch: Watch::Output(&c.outputs.deployment),
            needs: output_needs(&c.outputs.deployment),
            fields: None,
        },
        Target {
            id: "offer".to_owned(),
            title: word("offer"),
            watch: Watch::Output(&c.outputs.offer),
            needs: output_needs(&c.outputs.offer),
            fields: None,
        },
    ];
    for watched in &config.watch {
        if let Some(i) = c.nodes.iter().position(|n| n.id == watched.node.value) {
            out.push(Target {
                id: watched.node.value.clone(),
                title: watched.title.get(lang).to_owned(),
                watch: Watch::Node(i),
                needs: needs(graph, [i]),
                fields: (!watched.fields.is_empty()).then(|| watched.fields.clone()),
            });
        }
    }
    for (i, node) in c.nodes.iter().enumerate() {
        if node.kind == NodeKind::Criterion {
            out.push(Target {
                id: node.id.to_owned(),
                title: node.title.to_owned(),
                watch: Watch::Node(i),
                needs: needs(graph, [i]),
                fields: None,
            });
        }
    }
    out
}

/// The nodes an output expression names, and every node they read.
fn output_needs(graph: &Graph, e: &decide_lang::Expr<'_>) -> HashSet<usize> {
    let c = graph.compiled();
    let names = &e.names;
    needs(
        graph,
        (0..c.nodes.len()).filter(|&i| names.iter().any(|n| n == c.nodes[i].id)),
    )
}

/// `start` and every node they read, directly or through others.
fn needs(graph: &Graph, start: impl IntoIterator<Item = usize>) -> HashSet<usize> {
    let mut set = HashSet::new();
    for i in start {
        set.insert(i);
        set.extend(ancestors(graph, i));
    }
    set
}

/// The nodes (in evaluation order, among `needed`) whose value can change with `field`.
fn dirty_nodes(graph: &Graph, field: &str, needed: &HashSet<usize>) -> Vec<usize> {
    let c = graph.compiled();
    let full = format!("profile.{field}");
    let related = |p: &str| {
        p == full
            || p == "profile"
            || full.starts_with(&format!("{p}."))
            || p.starts_with(&format!("{full}."))
    };
    let mut dirty = vec![false; c.nodes.len()];
    let mut out = Vec::new();
    for &i in &c.order {
        let node = &c.nodes[i];
        if node.profile_paths.iter().any(|p| related(p)) || node.deps.iter().any(|&d| dirty[d]) {
            dirty[i] = true;
            if needed.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}

/// The numbers one field is searched over.
struct SearchRange {
    now: f64,
    step: f64,
    integer: bool,
    /// For whole numbers, the spacing of the values tried one by one near `now` (the probe's
    /// `step`, default 1: a count, also tried at both ends of each whole box).
    dense: f64,
    min: f64,
    max: f64,
}

impl SearchRange {
    /// `v` on the field's grid (whole numbers for integers, multiples of `step` from the
    /// current value otherwise), within bounds.
    fn snap(&self, v: f64) -> f64 {
        let v = if self.integer {
            v.round()
        } else {
            self.now + ((v - self.now) / self.step).round() * self.step
        };
        let v = v.clamp(self.min, self.max);
        // Decimal steps accumulate float error: keep what a person would write.
        (v * 1e6).round() / 1e6
    }

    fn to_json(&self, v: f64) -> J {
        if self.integer {
            #[allow(clippy::cast_possible_truncation)] // within the schema's u32 bounds
            J::from(v as i64)
        } else {
            J::from(v)
        }
    }
}

/// What a number field's search tries and watches besides its own range.
#[derive(Clone, Copy)]
struct Sets<'a> {
    /// The numbers the varied nodes write or read (with their neighbours, candidates).
    constants: &'a BTreeSet<OrderedF64>,
    /// The catalog's whole-number counts they read (for a whole-number count, both ends of
    /// each whole unit are tried).
    counts: &'a BTreeSet<OrderedF64>,
    /// Per target: whether it reads any re-evaluated node (one that does not cannot change).
    live: &'a [bool],
}

/// Evaluates the watched values at changed values of one field, remembering each answer.
#[derive(Clone)]
struct Prober<'a, 'g> {
    graph: &'g Graph,
    as_of: jiff::civil::Date,
    /// The profile being probed: the evaluated one with `path` set to the last value tried
    /// (only `path` ever changes, so each probe sets it in place instead of copying).
    json: J,
    base_values: &'a [Value],
    dirty: &'a [usize],
    watch: &'a [Watch<'g>],
    path: &'a [&'a str],
    cache: HashMap<String, Option<Vec<Value>>>,
}

impl Prober<'_, '_> {
    /// The watched values with the field set to `value`, or none when the profile format
    /// refuses that value (or it contradicts another field) or the rules cannot evaluate it.
    fn at(&mut self, value: &J) -> Option<Vec<Value>> {
        let key = value.to_string();
        if let Some(hit) = self.cache.get(&key) {
            return hit.clone();
        }
        decide_engine::profile::set_field(&mut self.json, self.path, value.clone());
        let result = Profile::deserialize(&self.json)
            .ok()
            .filter(|p| p.contradiction().is_none())
            .and_then(|p| {
                self.graph
                    .probe(&p, self.as_of, self.base_values, self.dirty, self.watch)
                    .ok()
            });
        self.cache.insert(key, result.clone());
        result
    }

    /// Per target: what it becomes at `value`, if that differs from `before`.
    fn changes_at(
        &mut self,
        value: &J,
        before: &[Value],
        direction: &'static str,
        distance: f64,
    ) -> Vec<Option<Found>> {
        let Some(values) = self.at(value) else {
            return before.iter().map(|_| None).collect();
        };
        let cost = cost_of(&values, before);
        values
            .into_iter()
            .zip(before)
            .map(|(v, b)| {
                (v != *b).then(|| Found {
                    at: value.clone(),
                    becomes: v,
                    direction,
                    distance,
                    edge: None,
                    item: None,
                    cost: cost.clone(),
                })
            })
            .collect()
    }

    /// Per target: the first value from the current one outward (up or down) at which it
    /// changes.
    #[allow(clippy::too_many_lines)] // candidates, then per target: bracket, bisect, confirm
    fn search(
        &mut self,
        space: &SearchRange,
        sets: &Sets<'_>,
        before: &[Value],
        up: bool,
    ) -> Vec<Option<Found>> {
        let Sets {
            constants,
            counts,
            live,
        } = *sets;
        let sign = if up { 1.0 } else { -1.0 };
        let limit = if up { space.max } else { space.min };
        let beyond = |v: f64| if up { v > space.now } else { v < space.now };
        let mut candidates: Vec<f64> = Vec::new();
        for k in 0..MAX_DOUBLINGS {
            candidates.push(space.now + sign * space.step * f64::from(1u32 << k));
            // And, for a decimal field, halfway to the next doubling: an answer that changes and
            // changes back (a bill in whole boxes) is missed less often between two far-apart
            // tries. A whole-number field is tried one by one near its value already.
            if !space.integer {
                candidates.push(space.now + sign * space.step * 1.5 * f64::from(1u32 << k));
            }
        }
        if space.integer {
            for k in 1..=DENSE_STEPS {
                candidates.push(space.now + sign * space.dense * f64::from(k));
            }
            for OrderedF64(c) in counts.iter().filter(|_| space.dense <= 1.0) {
                let base = (space.now / c).floor();
                for k in 0..=COUNT_MULTIPLES {
                    let m = (base + sign * f64::from(k)) * c;
                    candidates.extend([m, m + 1.0]);
                }
            }
        }
        for OrderedF64(c) in constants {
            for v in [c - space.step, *c, c + space.step] {
                candidates.push(v);
            }
        }
        candidates.push(limit);
        let mut candidates: Vec<f64> = candidates
            .into_iter()
            .map(|v| space.snap(v))
            .filter(|v| beyond(*v))
            .collect();
        candidates.sort_by(|a, b| (a - space.now).abs().total_cmp(&(b - space.now).abs()));
        candidates.dedup();

        let n = before.len();
        let mut found: Vec<Option<Found>> = (0..n).map(|_| None).collect();
        let mut last_equal = vec![space.now; n];
        // The last candidate evaluated, and what it gave: a decimal field looks between it and
        // the next for a change that comes and goes (see `hidden_change`); a whole-number field
        // keeps none, and so evaluates nothing more.
        let mut previous: Option<(f64, Vec<Value>)> = if space.integer {
            None
        } else {
            self.at(&space.to_json(space.now))
                .map(|values| (space.now, values))
        };
        let mut budget = HIDDEN_PROBES;
        for candidate in candidates {
            if (0..n).all(|t| found[t].is_some() || !live[t]) {
                break;
            }
            let Some(at_candidate) = self.at(&space.to_json(candidate)) else {
                continue;
            };
            let mut points = Vec::with_capacity(2);
            if !space.integer
                && let Some((from, at_from)) = previous.take()
            {
                let open: Vec<bool> = (0..n).map(|t| found[t].is_none() && live[t]).collect();
                let ends = (from, at_from, candidate, at_candidate.clone());
                if let Some(x) = self.hidden_change(space, ends, before, &open, &mut budget) {
                    points.push(x);
                } else if budget == 0 {
                    // The halving ran out before it had looked everywhere between the two: a
                    // change at the candidate or beyond may not be the first, so none is said.
                    break;
                }
            }
            points.push(candidate);
            if !space.integer {
                previous = Some((candidate, at_candidate));
            }
            for v in points {
                let Some(values) = self.at(&space.to_json(v)) else {
                    continue;
                };
                for t in 0..n {
                    if found[t].is_some() || !live[t] {
                        continue;
                    }
                    if values[t] == before[t] {
                        last_equal[t] = v;
                        continue;
                    }
                    // It changed between last_equal[t] and v: find a value that differs with an
                    // equal one just before it.
                    let (mut lo, mut hi) = (last_equal[t], v);
                    let mut becomes = values[t].clone();
                    let mut cost = cost_of(&values, before);
                    loop {
                        let mid = space.snap(f64::midpoint(lo, hi));
                        // Snapped values are exact copies: equal bits mean no value lies between.
                        if mid.to_bits() == lo.to_bits() || mid.to_bits() == hi.to_bits() {
                            break;
                        }
                        match self.at(&space.to_json(mid)) {
                            Some(m) if m[t] != before[t] => {
                                hi = mid;
                                becomes = m[t].clone();
                                cost = cost_of(&m, before);
                            }
                            Some(_) => lo = mid,
                            None => break,
                        }
                    }
                    // A whole-number field can change and change back between last_equal and lo
                    // (a bill in whole boxes): where they are few, try the values there one by
                    // one, nearest first.
                    if space.integer && (lo - last_equal[t]).abs() <= f64::from(GAP_SCAN) {
                        let mut x = last_equal[t] + sign;
                        while (lo - x) * sign > 0.0 {
                            if let Some(m) = self.at(&space.to_json(x))
                                && m[t] != before[t]
                            {
                                hi = x;
                                becomes = m[t].clone();
                                cost = cost_of(&m, before);
                                break;
                            }
                            x += sign;
                        }
                    }
                    let scale = if space.now.abs() > 0.0 {
                        space.now.abs()
                    } else {
                        (space.max - space.min).abs().max(1.0)
                    };
                    // One step past a number the rules write: the change is at that edge (a table
                    // row's `>= 70` turns below 70, not "at 69.5"), when it has already happened a
                    // quarter step past the number (a number the rules write for something else,
                    // such as 8 GPUs a box, is no edge of a deadline that turns at 7.8 days).
                    // Whole-number fields keep their value: "at 9 GPUs" says it plainly.
                    let edge_at = hi + if up { -space.step } else { space.step };
                    let inside = ((edge_at + sign * space.step / 4.0) * 1e6).round() / 1e6;
                    // Not the profile's own value: "below 10 days (now 10 days)" says nothing.
                    let edge = (!space.integer
                        && edge_at.to_bits() != space.now.to_bits()
                        && constants.contains(&OrderedF64(edge_at))
                        && self.at(&J::from(inside)).is_some_and(|m| m[t] != before[t]))
                    .then(|| space.to_json(edge_at));
                    found[t] = Some(Found {
                        at: space.to_json(hi),
                        becomes,
                        direction: match (&edge, up) {
                            (Some(_), true) => "above",
                            (Some(_), false) => "below",
                            (None, true) => "up",
                            (None, false) => "down",
                        },
                        distance: (hi - space.now).abs() / scale,
                        edge,
                        item: None,
                        cost,
                    });
                }
            }
        }
        found
    }

    /// A decimal field: the nearest value strictly between `a` and `b` (the ends of `ends`,
    /// with what each gave) at which a target still open differs from `before`, though it does
    /// not at either end. A bill in whole units is a step function of a decimal field too (the
    /// model's size sets the units a replica takes), so the answer can change and change back
    /// between two tried values; where the ends differ in any watched value or the headline
    /// cost, the interval is halved (nearer half first) until the ends agree or no value of
    /// the field's step lies between them. At most `budget` values are tried in all.
    fn hidden_change(
        &mut self,
        space: &SearchRange,
        ends: (f64, Vec<Value>, f64, Vec<Value>),
        before: &[Value],
        open: &[bool],
        budget: &mut u32,
    ) -> Option<f64> {
        let (a, at_a, b, at_b) = ends;
        if at_a == at_b || *budget == 0 {
            return None;
        }
        let mid = space.snap(f64::midpoint(a, b));
        if mid.to_bits() == a.to_bits() || mid.to_bits() == b.to_bits() {
            return None;
        }
        *budget -= 1;
        let at_mid = self.at(&space.to_json(mid))?;
        let differs = (0..before.len()).any(|t| open[t] && at_mid[t] != before[t]);
        let nearer =
            self.hidden_change(space, (a, at_a, mid, at_mid.clone()), before, open, budget);
        if differs {
            return nearer.or(Some(mid));
        }
        nearer.or_else(|| self.hidden_change(space, (mid, at_mid, b, at_b), before, open, budget))
    }
}

/// A choice: per target, the first change among the other choices, in order.
fn others(
    prober: &mut Prober<'_, '_>,
    choices: &[decide_engine::profile::fields::Choice],
    current: &J,
    before: &[Value],
) -> Vec<Option<Found>> {
    let mut found: Vec<Option<Found>> = before.iter().map(|_| None).collect();
    let values = choices.iter().map(|c| J::from(&*c.value));
    for v in values.filter(|v| v != current) {
        first_changes(&mut found, prober.changes_at(&v, before, "set", 1.0));
    }
    found
}

/// A list of choices: per target, the first change of each choice in turn, added where it is
/// absent from `items` and removed where present.
fn toggles(
    prober: &mut Prober<'_, '_>,
    choices: &[decide_engine::profile::fields::Choice],
    items: &[J],
    before: &[Value],
) -> Vec<Option<Found>> {
    let mut found: Vec<Option<Found>> = before.iter().map(|_| None).collect();
    for choice in choices {
        let choice = J::from(&*choice.value);
        let (list, direction): (Vec<J>, _) = if items.contains(&choice) {
            (
                items.iter().filter(|i| **i != choice).cloned().collect(),
                "remove",
            )
        } else {
            (items.iter().chain([&choice]).cloned().collect(), "add")
        };
        let mut changes = prober.changes_at(&J::from(list), before, direction, 1.0);
        for f in changes.iter_mut().flatten() {
            f.item = Some(choice.clone());
        }
        first_changes(&mut found, changes);
    }
    found
}

/// The headline cost among a probe's `values` (after the targets' `before`), or none.
fn cost_of(values: &[Value], before: &[Value]) -> Value {
    values.get(before.len()).cloned().unwrap_or(Value::from(()))
}

/// Keeps, per target, the first change found.
fn first_changes(found: &mut [Option<Found>], changes: Vec<Option<Found>>) {
    for (slot, f) in found.iter_mut().zip(changes) {
        if slot.is_none() {
            *slot = f;
        }
    }
}

/// Every number the nodes in `dirty` write in their expressions or read from constant facts
/// (thresholds such as 30B or ¥10,000): the boundaries a number field's search must try. Nodes
/// that read the catalog also get the catalog's whole-number fields (GPUs per box, per
/// instance): a bill in whole boxes turns at their multiples, and a search that doubles its
/// way out from 2 GPUs would step over 8. Second, those counts of 2 and more, whose multiples a
/// whole-number field's search tries.
fn constants_read(graph: &Graph, dirty: &[usize]) -> (BTreeSet<OrderedF64>, BTreeSet<OrderedF64>) {
    let c = graph.compiled();
    let policy = graph.policy();
    let reads_catalog = dirty.iter().any(|&i| {
        c.nodes[i]
            .root_deps
            .iter()
            .any(|&r| matches!(ROOT_NAMES[r], "offers" | "catalog"))
    });
    let mut counts = BTreeSet::new();
    if reads_catalog {
        for (path, ty) in &policy.offer_fields {
            if *ty != FieldType::Integer {
                continue;
            }
            for offer in &policy.offers {
                let mut node = offer.item.fields.get(path.split('.').next().unwrap_or(""));
                for key in path.split('.').skip(1) {
                    node = node.and_then(|n| n.get(key));
                }
                if let Some(n) = node.and_then(serde_json::Value::as_f64) {
                    counts.insert(OrderedF64(n));
                }
            }
        }
    }
    let texts: Vec<&str> = dirty
        .iter()
        .flat_map(|&i| c.nodes[i].expr_texts())
        .collect();
    let mut constants = numeric_constants(&texts);
    constants.extend(counts.iter().copied());
    let counts = counts
        .into_iter()
        .filter(|OrderedF64(c)| *c >= 2.0 && c.fract() == 0.0)
        .collect();
    let read: HashSet<usize> = dirty
        .iter()
        .flat_map(|&i| c.nodes[i].deps.iter().copied())
        .collect();
    for i in read {
        if let Body::Constant(v) = &c.nodes[i].body {
            collect_numbers(v, &mut constants);
        }
    }
    (constants, counts)
}

fn get_path<'a>(json: &'a J, path: &[&str]) -> Option<&'a J> {
    let mut node = json;
    for key in path {
        node = node.get(*key)?;
    }
    (!node.is_null()).then_some(node)
}

/// Every number in a constant's value (maps and lists included).
fn collect_numbers(v: &Value, out: &mut BTreeSet<OrderedF64>) {
    use decide_lang::value::Kind;
    match v.kind() {
        Kind::Number => {
            if let Some(f) = v.as_number()
                && f.is_finite()
            {
                out.insert(OrderedF64(f));
            }
        }
        Kind::List => {
            for item in v.try_iter().into_iter().flatten() {
                collect_numbers(&item, out);
            }
        }
        Kind::Map => {
            for (_, value) in v.pairs().into_iter().flatten() {
                collect_numbers(value, out);
            }
        }
        _ => {}
    }
}

fn text_error(part: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Eval,
        format!("sentence `sensitivity.{part}` failed: {why}"),
    )
    .help("this is a fault in the rules' `sensitivity:` section")
}

fn internal(message: &str) -> Error {
    Error::new(ErrorKind::Eval, format!("sensitivity analysis: {message}"))
}

fn to_json(v: &Value) -> J {
    serde_json::to_value(v).unwrap_or(J::Null)
}

/// Whether this runs on one of rayon's threads already (see [`analyse`]): then the analysis
/// runs on that thread alone.
fn nested() -> bool {
    rayon::current_thread_index().is_some()
}
