//! What would change the answer: the nearest single change to the profile that flips each
//! criterion, the deployment and the offer, found by re-evaluating the rules.
//!
//! The policy lists the fields to vary (`sensitivity.fields`); the profile's field model
//! ([`crate::profile::fields`]) says what each is (a number and its bounds, a flag, a choice). Flags are toggled and every other
//! choice is tried. Numbers are searched outward from the profile's value in both directions,
//! over candidates that include every number the rules write down (with its neighbours one
//! step away, as `decide validate`'s table analysis does) and doubling steps up to the
//! field's bounds; where a watched value changes between two candidates, bisection finds the
//! first value at which it differs, to the field's step. Only the nodes that read the varied
//! field (directly or through other nodes) are re-evaluated, and only those the watched values
//! need; texts, warnings and the trace are not rendered.
//!
//! The flip side, as with the table analysis: a change that exists only between two tried
//! values that are equal (a band no rule literal bounds) can be missed. The rules are
//! evaluated, not solved.

use std::collections::{BTreeSet, HashMap, HashSet};

use minijinja::value::Value;
use rayon::prelude::*;
use serde::Deserialize as _;
use serde_json::Value as J;

use crate::decision::Flip;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Evaluation, Watch};
use crate::expr::numbers::{OrderedF64, numeric_constants};
use crate::graph::reach::ancestors;
use crate::graph::{Body, Graph};
use crate::kind::NodeKind;
use crate::policy::ROOT_NAMES;
use crate::policy::rules::FieldType;
use crate::profile::{FieldKind, Profile};

/// Most doubling steps tried in one direction from the profile's value.
const MAX_DOUBLINGS: u32 = 16;
/// An unbounded number is searched up to this many times its value.
const UNBOUNDED_FACTOR: f64 = 100.0;

/// One watched value: a criterion or an output.
struct Target<'g> {
    id: String,
    title: String,
    watch: Watch<'g>,
    /// Indices of every node the value depends on (itself included for nodes).
    needs: HashSet<usize>,
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
}

/// Everything one analysis shares: the graph, the watched values and the profile as it is.
struct Study<'a, 'g> {
    graph: &'g Graph,
    as_of: jiff::civil::Date,
    targets: Vec<Target<'g>>,
    watch: Vec<Watch<'g>>,
    needed: HashSet<usize>,
    base_values: Vec<Value>,
    config: &'a crate::policy::rules::Sensitivity,
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
    let study = Study {
        graph,
        as_of,
        watch: targets.iter().map(|t| t.watch).collect(),
        needed: targets
            .iter()
            .flat_map(|t| t.needs.iter().copied())
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

    // Fields are searched independently: on as many threads as there are cores (the results
    // keep the policy's field order).
    let results: Vec<FieldResult> = (0..config.fields.len())
        .into_par_iter()
        .filter_map(|i| study.field(i, &base_json, &before, None))
        .collect();
    let mut flips = Vec::new();
    for r in &results {
        for (order, found) in r.found.iter().enumerate() {
            let Some(found) = found else { continue };
            let t = &study.targets[order];
            let ctx = minijinja::context! {
                id => t.id.as_str(),
                field => r.path.as_str(),
                target => t.title.as_str(),
                before => study.words(t, &before[order]),
                after => study.words(t, &found.becomes),
                direction => found.direction,
                change => study.says(r.probe, found.edge.as_ref().unwrap_or(&found.at))?,
                now => study.says(r.probe, &r.current)?,
            };
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
                    text: study.text("sensitivity.text", ctx)?,
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
                crate::profile::set_field(&mut json, &g_path, gf.at.clone());
                let extra = dirty_nodes(graph, &g.path, &study.needed);
                let Some(line) = study
                    .field(r.probe, &json, &[], Some(&extra))
                    .and_then(|under| under.found.into_iter().nth(order).flatten())
                else {
                    continue;
                };
                let ctx = minijinja::context! {
                    id => t.id.as_str(),
                    field => r.path.as_str(),
                    target => t.title.as_str(),
                    before => study.words(t, &before[order]),
                    name => study.name(r.probe),
                    now => study.says(r.probe, &r.current)?,
                    given => study.says(g.probe, &gf.at)?,
                    line => study.says(r.probe, &line.at)?,
                };
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
                        given: Some(crate::decision::Given {
                            field: g.path.clone(),
                            value: gf.at.clone(),
                        }),
                        text: study.text("sensitivity.unchanged", ctx)?,
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
        let ty = &crate::profile::field(&probe.field.value)?.kind;
        if !matches!(
            *ty,
            FieldKind::Bool | FieldKind::Enum(_) | FieldKind::Number(_)
        ) {
            return None;
        }
        let current = get_path(json, &path).cloned()?;
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
            prober.at(&current)?
        } else {
            before.to_vec()
        };
        let mut numeric = false;
        let found = match ty {
            FieldKind::Bool => {
                prober.changes_at(&J::from(!current.as_bool()?), &before, "set", 1.0)
            }
            FieldKind::Enum(choices) => {
                let mut found: Vec<Option<Found>> = before.iter().map(|_| None).collect();
                let values = choices.iter().map(|c| J::from(&*c.value));
                for v in values.filter(|v| *v != current) {
                    for (slot, f) in found
                        .iter_mut()
                        .zip(prober.changes_at(&v, &before, "set", 1.0))
                    {
                        if slot.is_none() {
                            *slot = f;
                        }
                    }
                }
                found
            }
            FieldKind::Number(range) => {
                numeric = true;
                let now = current.as_f64()?;
                let step = if range.integer {
                    1.0
                } else {
                    probe.step.filter(|s| *s > 0.0).unwrap_or(1.0)
                };
                let constants = constants_read(self.graph, &dirty);
                let space = SearchRange {
                    now,
                    step,
                    integer: range.integer,
                    min: range.lowest().unwrap_or(f64::NEG_INFINITY),
                    max: range
                        .max
                        .unwrap_or_else(|| (now.abs() * UNBOUNDED_FACTOR).max(step * 1000.0)),
                };
                // Up and down are searched at once, each with its own memory of answers.
                let mut down_prober = prober.clone();
                let (up, down) = rayon::join(
                    || prober.search(&space, &constants, &before, true),
                    || down_prober.search(&space, &constants, &before, false),
                );
                up.into_iter()
                    .zip(down)
                    .map(|(u, d)| match (u, d) {
                        (Some(u), Some(d)) => Some(if d.distance < u.distance { d } else { u }),
                        (u, d) => u.or(d),
                    })
                    .collect()
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

    /// A decision value in words: an offer's title, or the policy's word for it.
    fn words(&self, target: &Target<'_>, v: &Value) -> String {
        let owner = self.graph.owner();
        if target.id == "offer"
            && let Ok(o) = owner.catalog.get_item(v)
            && let Ok(title) = o.get_attr("title")
            && !title.is_undefined()
        {
            return title.to_string();
        }
        let key = if v.kind() == minijinja::value::ValueKind::Bool {
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
            &format!("sensitivity.says.{probe}"),
            minijinja::context! { value => Value::from(minijinja::value::Serde(value)) },
        )
    }

    fn text(&self, name: &str, ctx: Value) -> Result<String> {
        self.graph
            .owner()
            .env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map(|s| crate::expr::flow_text(&s))
            .map_err(|e| text_error(name, &e))
    }
}

/// The deployment, the offer, then every criterion, each with the nodes it needs.
fn targets<'g>(graph: &'g Graph, config: &crate::policy::rules::Sensitivity) -> Vec<Target<'g>> {
    let c = graph.compiled();
    let lang = graph.lang();
    let word = |id: &str| {
        config
            .targets
            .get(id)
            .map_or_else(|| id.to_owned(), |w| w.get(lang).to_owned())
    };
    // An output needs the nodes its expression names, and everything they read.
    let output_needs = |e: &crate::expr::Expr<'_>| {
        let names = &e.names;
        needs(
            graph,
            (0..c.nodes.len()).filter(|&i| names.iter().any(|n| n == c.nodes[i].id)),
        )
    };
    let mut out = vec![
        Target {
            id: "deployment".to_owned(),
            title: word("deployment"),
            watch: Watch::Output(&c.outputs.deployment),
            needs: output_needs(&c.outputs.deployment),
        },
        Target {
            id: "offer".to_owned(),
            title: word("offer"),
            watch: Watch::Output(&c.outputs.offer),
            needs: output_needs(&c.outputs.offer),
        },
    ];
    for (i, node) in c.nodes.iter().enumerate() {
        if node.kind == NodeKind::Criterion {
            out.push(Target {
                id: node.id.to_owned(),
                title: node.title.to_owned(),
                watch: Watch::Node(i),
                needs: needs(graph, [i]),
            });
        }
    }
    out
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
    /// refuses that value or the rules cannot evaluate it.
    fn at(&mut self, value: &J) -> Option<Vec<Value>> {
        let key = value.to_string();
        if let Some(hit) = self.cache.get(&key) {
            return hit.clone();
        }
        crate::profile::set_field(&mut self.json, self.path, value.clone());
        let result = Profile::deserialize(&self.json).ok().and_then(|p| {
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
                })
            })
            .collect()
    }

    /// Per target: the first value from the current one outward (up or down) at which it
    /// changes.
    fn search(
        &mut self,
        space: &SearchRange,
        constants: &BTreeSet<OrderedF64>,
        before: &[Value],
        up: bool,
    ) -> Vec<Option<Found>> {
        let sign = if up { 1.0 } else { -1.0 };
        let limit = if up { space.max } else { space.min };
        let beyond = |v: f64| if up { v > space.now } else { v < space.now };
        let mut candidates: Vec<f64> = Vec::new();
        for k in 0..MAX_DOUBLINGS {
            candidates.push(space.now + sign * space.step * f64::from(1u32 << k));
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
        for v in candidates {
            if found.iter().all(Option::is_some) {
                break;
            }
            let Some(values) = self.at(&space.to_json(v)) else {
                continue;
            };
            for t in 0..n {
                if found[t].is_some() {
                    continue;
                }
                if values[t] == before[t] {
                    last_equal[t] = v;
                    continue;
                }
                // It changed between last_equal[t] and v: find the first value that differs.
                let (mut lo, mut hi) = (last_equal[t], v);
                let mut becomes = values[t].clone();
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
                        }
                        Some(_) => lo = mid,
                        None => break,
                    }
                }
                let scale = if space.now.abs() > 0.0 {
                    space.now.abs()
                } else {
                    (space.max - space.min).abs().max(1.0)
                };
                // One step past a number the rules write: the change is at that edge (a table
                // row's `>= 70` turns below 70, not "at 69.5"). Whole-number fields keep their
                // value: "at 9 GPUs" says it plainly.
                let edge_at = hi + if up { -space.step } else { space.step };
                let edge = (!space.integer && constants.contains(&OrderedF64(edge_at)))
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
                });
            }
        }
        found
    }
}

/// Every number the nodes in `dirty` write in their expressions or read from constant facts
/// (thresholds such as 30B or ¥10,000): the boundaries a number field's search must try. Nodes
/// that read the catalog also get the catalog's whole-number fields (GPUs per box, per
/// instance): a bill in whole boxes turns at their multiples, and a search that doubles its
/// way out from 2 GPUs would step over 8.
fn constants_read(graph: &Graph, dirty: &[usize]) -> BTreeSet<OrderedF64> {
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
    constants.extend(counts);
    let read: HashSet<usize> = dirty
        .iter()
        .flat_map(|&i| c.nodes[i].deps.iter().copied())
        .collect();
    for i in read {
        if let Body::Constant(v) = &c.nodes[i].body {
            collect_numbers(v, &mut constants);
        }
    }
    constants
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
    use minijinja::value::ValueKind;
    match v.kind() {
        ValueKind::Number => {
            if let Ok(f) = f64::try_from(v.clone())
                && f.is_finite()
            {
                out.insert(OrderedF64(f));
            }
        }
        ValueKind::Seq => {
            for item in v.try_iter().into_iter().flatten() {
                collect_numbers(&item, out);
            }
        }
        ValueKind::Map => {
            for key in v.try_iter().into_iter().flatten() {
                collect_numbers(&v.get_item(&key).unwrap_or_default(), out);
            }
        }
        _ => {}
    }
}

fn text_error(name: &str, e: &minijinja::Error) -> Error {
    Error::new(
        ErrorKind::Eval,
        format!(
            "text `{name}` failed: {}",
            e.detail().unwrap_or("template error")
        ),
    )
    .help("this is a fault in the rules' `sensitivity:` section")
}

fn internal(message: &str) -> Error {
    Error::new(ErrorKind::Eval, format!("sensitivity analysis: {message}"))
}

fn to_json(v: &Value) -> J {
    serde_json::to_value(v).unwrap_or(J::Null)
}
