//! Evaluating a compiled graph over one profile: values, type checks, texts and the trace.
//!
//! Evaluation is pure: the same graph, profile and `as_of` date give the same [`Decision`].
//! All nodes read one shared context object whose slots are filled in evaluation order, so no
//! context is cloned per node. Every value is checked against what the node promises (a
//! `when:` must be true or false, a fact its declared type), because minijinja's strict mode
//! lets some undefined or mistyped results through.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use minijinja::value::{Enumerator, Object, Value, ValueKind};
use serde_saphyr::Location;

use crate::decision::{
    ChecklistOutcome, CriterionOutcome, Decision, PolicyStamp, TraceEntry, WarningOutcome,
};
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Body, Compiled, Expr, Graph, Invariant, Names, Node};
use crate::policy::PolicyOrigin;
use crate::policy::rules::{FieldType, HitPolicy, NoMatch, Pick};
use crate::profile::Profile;
use crate::source::Source;

/// A decision plus every node's value, for templates that want more than the record.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub decision: Decision,
    /// Node id → value, in evaluation order.
    pub values: IndexMap<String, Value>,
}

/// The root object expressions see: roots and node values by name, plus one bound item.
#[derive(Debug)]
struct Context {
    names: Arc<Names>,
    slots: Arc<[OnceLock<Value>]>,
    bound: Option<(Value, Value)>,
}

impl Object for Context {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if let Some((name, value)) = &self.bound
            && name == key
        {
            return Some(value.clone());
        }
        let index = *self.names.index.get(key.as_str()?)?;
        self.slots[index].get().cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }
}

struct Run<'g> {
    graph: &'g Graph,
    compiled: &'g Compiled<'g>,
    slots: Arc<[OnceLock<Value>]>,
    root: Value,
    profile_name: &'g str,
}

impl Graph {
    /// Checks the profile's references into the catalog (proposal and job offer ids), then that
    /// every measured offer has claimed hours.
    pub fn check_profile(&self, profile: &Profile, source: &Source) -> Result<()> {
        let ids: Vec<&str> = self.policy().offer_ids().collect();
        for (offer, field) in profile.offer_references() {
            if !ids.contains(&offer.value.as_str()) {
                let mut err = Error::new(
                    ErrorKind::Profile,
                    format!("unknown offer id `{}`", offer.value),
                )
                .at(
                    &source.name,
                    &source.text,
                    crate::policy::position(offer.referenced),
                )
                .field(field);
                if let Some(s) = crate::error::suggest(&offer.value, ids.iter().copied()) {
                    err = err.help(format!("did you mean `{s}`?"));
                }
                return Err(err.help(format!("offers in the catalog: {}", ids.join(", "))));
            }
        }
        profile.check_measured(source)
    }

    /// Evaluates every node over `profile` at date `as_of`, reads off the decision and checks
    /// the policy's invariants: a decision that breaks one is an [`ErrorKind::Invariant`] error
    /// (the first broken, in policy order), never a decision.
    pub fn evaluate(&self, profile: &Profile, as_of: jiff::civil::Date) -> Result<Evaluation> {
        let run = Run::new(self, profile, as_of);
        let evaluation = run.all(profile, as_of, true)?;
        run.check_invariants(profile)?;
        Ok(evaluation)
    }

    /// Like [`Graph::evaluate`], without building the trace (the record's `trace` is empty):
    /// for batches that do not print it.
    pub fn evaluate_without_trace(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
    ) -> Result<Evaluation> {
        let run = Run::new(self, profile, as_of);
        let evaluation = run.all(profile, as_of, false)?;
        run.check_invariants(profile)?;
        Ok(evaluation)
    }

    /// Evaluates `profile` in full (no trace) and checks every invariant, not only up to the
    /// first broken: the violation error of each broken one, by index into the compiled
    /// invariants. An error is an evaluation that failed for another reason (a rules fault, or
    /// an invariant whose `holds:` cannot be evaluated). This is what `decide validate`'s
    /// search runs.
    pub(crate) fn violations(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
    ) -> Result<Vec<(usize, Error)>> {
        let run = Run::new(self, profile, as_of);
        run.all(profile, as_of, false)?;
        let mut out = Vec::new();
        for (i, invariant) in self.compiled().invariants.iter().enumerate() {
            if let Some(e) = run.invariant(invariant, profile)? {
                out.push((i, e));
            }
        }
        Ok(out)
    }

    /// Which rows of table node `table` match `profile`, each row's condition evaluated on its
    /// own (whatever the hit policy). Only the nodes the table reads are evaluated. This is
    /// what `decide validate` uses to look for gaps, overlaps and shadowed rows.
    pub(crate) fn table_rows_matching(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        table: usize,
        needed: &[usize],
    ) -> Result<Vec<bool>> {
        let run = Run::new(self, profile, as_of);
        let c = self.compiled();
        for &i in needed {
            let node = &c.nodes[i];
            let value = run.node(node)?;
            let _ = run.slots[self.owner().names.index[node.id]].set(value);
        }
        let node = &c.nodes[table];
        let Body::Table { rows, .. } = &node.body else {
            return Ok(Vec::new());
        };
        rows.iter()
            .map(|(when, _)| run.condition(when, node, None).map(|v| v.is_true()))
            .collect()
    }
}

/// What the sensitivity analysis watches: a node's value, or an output expression.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Watch<'a> {
    Node(usize),
    Output(&'a Expr<'a>),
}

impl Graph {
    /// Re-evaluates `dirty` (node indices, in evaluation order) over `profile`, taking every
    /// other node's value from `base` (by node index), and returns the `watch` values. Texts,
    /// warnings and the trace are skipped: this is the inner loop of the sensitivity analysis.
    pub(crate) fn probe(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        base: &[Value],
        dirty: &[usize],
        watch: &[Watch<'_>],
    ) -> Result<Vec<Value>> {
        let run = Run::new(self, profile, as_of);
        let c = self.compiled();
        let index = &self.owner().names.index;
        let mut is_dirty = vec![false; c.nodes.len()];
        for &i in dirty {
            is_dirty[i] = true;
        }
        for (i, node) in c.nodes.iter().enumerate() {
            if !is_dirty[i] {
                let _ = run.slots[index[node.id]].set(base[i].clone());
            }
        }
        for &i in dirty {
            let node = &c.nodes[i];
            let value = run.node(node)?;
            let _ = run.slots[index[node.id]].set(value);
        }
        watch
            .iter()
            .map(|w| match w {
                Watch::Node(i) => Ok(run.slots[index[c.nodes[*i].id]]
                    .get()
                    .cloned()
                    .unwrap_or_default()),
                Watch::Output(e) => run.eval(e, "outputs", None),
            })
            .collect()
    }
}

impl<'g> Run<'g> {
    fn new(graph: &'g Graph, profile: &'g Profile, as_of: jiff::civil::Date) -> Self {
        let owner = graph.owner();
        let slots: Arc<[OnceLock<Value>]> = (0..owner.names.index.len())
            .map(|_| OnceLock::new())
            .collect();
        let set = |name: &str, value: Value| {
            let _ = slots[owner.names.index[name]].set(value);
        };
        set("profile", Value::from(minijinja::value::Serde(profile)));
        set("offers", owner.offers.clone());
        set("catalog", owner.catalog.clone());
        set("as_of", Value::from(as_of.to_string()));
        let root = Value::from_object(Context {
            names: owner.names.clone(),
            slots: slots.clone(),
            bound: None,
        });
        Run {
            graph,
            compiled: graph.compiled(),
            slots,
            root,
            profile_name: &profile.name,
        }
    }
}

impl Run<'_> {
    #[allow(clippy::too_many_lines)] // one pass: nodes, texts, trace, outputs
    fn all(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        keep_trace: bool,
    ) -> Result<Evaluation> {
        let c = self.compiled;
        let mut values = IndexMap::with_capacity(c.nodes.len());
        let mut criteria = Vec::new();
        let mut warnings = Vec::new();
        let mut checklist = Vec::new();
        // Values that read no profile field are computed once per `as_of` and reused.
        let cached = self
            .graph
            .profile_free
            .lock()
            .ok()
            .and_then(|c| c.clone())
            .filter(|c| c.as_of == as_of);
        let mut cached_at: Vec<Option<&Value>> = vec![None; c.nodes.len()];
        if let Some(cache) = &cached {
            for (i, v) in cache.values.iter() {
                cached_at[*i] = Some(v);
            }
        }
        // Node values by node index, beside `values` (by id) for the reads below.
        let mut by_node = vec![Value::UNDEFINED; c.nodes.len()];
        for &i in &c.order {
            let node = &c.nodes[i];
            let value = match cached_at[i] {
                Some(v) => v.clone(),
                None => self.node(node)?,
            };
            let _ = self.slots[c.slot[i]].set(value.clone());
            by_node[i] = value.clone();
            values.insert(node.id.to_owned(), value);
        }
        if cached.is_none() {
            let free: Arc<[(usize, Value)]> = c
                .order
                .iter()
                .filter(|&&i| c.profile_free[i])
                .map(|&i| (i, by_node[i].clone()))
                .collect();
            if let Ok(mut slot) = self.graph.profile_free.lock() {
                *slot = Some(crate::graph::ProfileFree {
                    as_of,
                    values: free,
                });
            }
        }
        // Texts render once every value is known; outcomes are listed in policy order.
        let mut why = Vec::with_capacity(c.nodes.len());
        for (node, value) in c.nodes.iter().zip(&by_node) {
            let reason = match &node.body {
                // Only the trace shows these reasons.
                Body::Constant(_)
                | Body::Fact { .. }
                | Body::Table { .. }
                | Body::Select { .. }
                    if !keep_trace =>
                {
                    String::new()
                }
                Body::Criterion { met, not_met, .. } => {
                    let is_met = value.is_true();
                    let reason = self.text(node, if is_met { met } else { not_met })?;
                    criteria.push(CriterionOutcome {
                        id: node.id.to_owned(),
                        title: node.title.to_owned(),
                        met: is_met,
                        reason: reason.clone(),
                    });
                    reason
                }
                Body::Warning { message, .. } if value.is_true() => {
                    let text = self.text(node, message)?;
                    warnings.push(WarningOutcome {
                        id: node.id.to_owned(),
                        title: node.title.to_owned(),
                        message: text.clone(),
                    });
                    text
                }
                Body::Warning { .. } => "not raised".to_owned(),
                Body::Check { text, .. } if value.is_true() => {
                    let text = self.text(node, text)?;
                    checklist.push(ChecklistOutcome {
                        id: node.id.to_owned(),
                        title: node.title.to_owned(),
                        text,
                    });
                    "applies".to_owned()
                }
                Body::Check { .. } => "does not apply".to_owned(),
                Body::Table { .. } => match value.get_attr("title") {
                    Ok(t) if !t.is_undefined() => {
                        format!("row `{}`: {t}", value.get_attr("id").unwrap_or_default())
                    }
                    _ if value.kind() == ValueKind::Seq => {
                        format!("{} rows matched", value.len().unwrap_or(0))
                    }
                    _ => "no row matched".to_owned(),
                },
                _ => node.because.unwrap_or(node.title).to_owned(),
            };
            why.push(reason);
        }
        let trace = c
            .order
            .iter()
            .filter(|_| keep_trace)
            .map(|&i| {
                let node = &c.nodes[i];
                TraceEntry {
                    id: node.id.to_owned(),
                    kind: node.kind,
                    value: trace_value(&by_node[i]),
                    inputs: node
                        .deps
                        .iter()
                        .map(|&d| c.nodes[d].id.to_owned())
                        .collect(),
                    why: std::mem::take(&mut why[i]),
                }
            })
            .collect();

        let outputs = &c.outputs;
        let deployment = self.output_string(&outputs.deployment, "deployment")?;
        if deployment != "bare_metal" && deployment != "container" {
            return Err(self.fail_expr(
                &outputs.deployment,
                "outputs",
                &format!(
                    "`outputs.deployment` gave `{deployment}`, expected `bare_metal` or `container`"
                ),
            ));
        }
        let offer = self.output_string(&outputs.offer, "offer")?;
        if !self.graph.policy().offer_ids().any(|id| id == offer) {
            return Err(self.fail_expr(
                &outputs.offer,
                "outputs",
                &format!("`outputs.offer` gave `{offer}`, which is not an offer id of the catalog"),
            ));
        }
        let scenario = match &outputs.scenario {
            Some(e) => {
                let v = self.eval(e, "outputs", None)?;
                match v.kind() {
                    ValueKind::None => None,
                    ValueKind::String => Some(v.to_string()),
                    _ => {
                        return Err(self.fail_expr(
                            e,
                            "outputs",
                            &format!(
                                "`outputs.scenario` gave {v} ({}), expected a row id or none",
                                v.kind()
                            ),
                        ));
                    }
                }
            }
            None => None,
        };
        let mut costs = IndexMap::with_capacity(outputs.costs.len());
        for (name, e) in &outputs.costs {
            let v = self.eval(e, "outputs", None)?;
            if v.is_undefined() {
                return Err(self.fail_expr(
                    e,
                    "outputs",
                    &format!("`outputs.costs.{name}` is undefined"),
                ));
            }
            costs.insert((*name).to_owned(), to_json(&v));
        }
        let mut sections = IndexMap::with_capacity(outputs.sections.len());
        for (name, e) in &outputs.sections {
            let v = self.eval(e, "outputs", None)?;
            if v.is_undefined() {
                return Err(self.fail_expr(
                    e,
                    "outputs",
                    &format!("`outputs.sections.{name}` is undefined"),
                ));
            }
            sections.insert((*name).to_owned(), to_json(&v));
        }
        let policy = self.graph.policy();
        let decision = Decision {
            profile: profile.name.clone(),
            as_of: as_of.to_string(),
            policy: PolicyStamp {
                name: policy.meta.name.get(self.graph.lang()).to_owned(),
                version: policy.meta.version.clone(),
                rules: match &policy.origin {
                    PolicyOrigin::Embedded => "embedded".to_owned(),
                    PolicyOrigin::Folder(p) => p.display().to_string(),
                },
                revision: policy.revision.clone(),
            },
            deployment,
            offer,
            criteria,
            scenario,
            costs,
            sections,
            sensitivity: None,
            warnings,
            checklist,
            trace,
            audit: crate::decision::Audit {
                decide_version: env!("CARGO_PKG_VERSION").to_owned(),
                profile_revision: None,
            },
        };
        Ok(Evaluation { decision, values })
    }

    /// The first invariant (in policy order) the evaluated decision breaks, as an error.
    fn check_invariants(&self, profile: &Profile) -> Result<()> {
        for invariant in &self.compiled.invariants {
            if let Some(e) = self.invariant(invariant, profile)? {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Whether one invariant holds once every node is evaluated: `None` if `holds` is true,
    /// else the violation (`Err` if `holds` or the message cannot be evaluated).
    fn invariant(&self, invariant: &Invariant<'_>, profile: &Profile) -> Result<Option<Error>> {
        let holds = &invariant.holds;
        let label = || format!("invariant `{}`", invariant.id);
        let v = self.eval_labelled(holds, &label, None)?;
        let verdict = match v.kind() {
            ValueKind::Bool if v.is_true() => return Ok(None),
            ValueKind::Bool => "gave false".to_owned(),
            _ => format!("gave {}, which is not true or false", show(&v)),
        };
        let message = self.render(&invariant.message, invariant.file, holds.location, &label())?;
        let policy = self.graph.policy();
        let source = &policy.sources[invariant.file];
        let profile_revision = profile.revision().unwrap_or_default();
        Ok(Some(
            Error::new(
                ErrorKind::Invariant,
                format!("invariant `{}` violated: {message}", invariant.id),
            )
            .at(
                &source.name,
                &source.text,
                crate::policy::position(holds.location),
            )
            .help(format!("invariant: {}", invariant.title))
            .help(format!("`holds: {}` {verdict}", holds.text.trim()))
            .help(format!(
                "profile `{}`, revision {profile_revision}",
                self.profile_name
            ))
            .help(format!(
                "policy `{}` {}, revision {}",
                policy.meta.name.get(self.graph.lang()),
                policy.meta.version,
                policy.revision
            ))
            .help(
                "a decision that contradicts itself is not written: fix the rules, or the invariant if it is the one at fault",
            ),
        ))
    }

    fn output_string(&self, e: &Expr<'_>, name: &str) -> Result<String> {
        let v = self.eval(e, "outputs", None)?;
        v.as_str().map(str::to_owned).ok_or_else(|| {
            self.fail_expr(
                e,
                "outputs",
                &format!("`outputs.{name}` gave {v} ({}), expected text", v.kind()),
            )
        })
    }

    fn node(&self, node: &Node<'_>) -> Result<Value> {
        match &node.body {
            Body::Constant(v) => Ok(v.clone()),
            Body::Fact {
                expr,
                ty,
                nullable,
                per_offer: false,
            } => {
                let v = self.eval(expr, node.id, None)?;
                self.check(expr, node, &v, *ty, *nullable)?;
                Ok(v)
            }
            Body::Fact {
                expr,
                ty,
                nullable,
                per_offer: true,
            } => {
                let offers = &self.graph.owner().offers;
                let mut out = Vec::new();
                for offer in offers.try_iter().into_iter().flatten() {
                    let v = self.eval(expr, node.id, Some(("offer", offer.clone())))?;
                    if v.is_none() {
                        continue;
                    }
                    self.check(expr, node, &v, *ty, *nullable)?;
                    out.push((offer.get_attr("id").unwrap_or_default(), v));
                }
                Ok(Value::from_pairs(out))
            }
            Body::Criterion { when, .. } | Body::Warning { when, .. } => {
                self.condition(when, node, None)
            }
            Body::Check { when, .. } => match when {
                Some(when) => self.condition(when, node, None),
                None => Ok(Value::from(true)),
            },
            Body::Table {
                hit,
                rows,
                default,
                no_match,
            } => {
                let value = self.table(node, *hit, rows, default.as_ref())?;
                let empty =
                    value.is_none() || (*hit == HitPolicy::Collect && value.len() == Some(0));
                if empty && *no_match == NoMatch::Error {
                    return Err(self
                        .fail_at(
                            node.file,
                            node.location,
                            &format!(
                                "table `{}`: no row matches, and the table says `no_match: error`",
                                node.id
                            ),
                        )
                        .help("run `decide validate` to see which inputs the rows miss"));
                }
                Ok(value)
            }
            Body::Select {
                from,
                item,
                filter,
                order_by,
                map,
                pick,
            } => self.select(
                node,
                from,
                item,
                filter.as_ref(),
                order_by.as_ref(),
                map.as_ref(),
                *pick,
            ),
        }
    }

    fn table(
        &self,
        node: &Node<'_>,
        hit: HitPolicy,
        rows: &[(Expr<'_>, Value)],
        default: Option<&Value>,
    ) -> Result<Value> {
        let mut matched: Vec<&Value> = Vec::new();
        for (when, row) in rows {
            if self.condition(when, node, None)?.is_true() {
                if hit == HitPolicy::First {
                    return Ok(row.clone());
                }
                if hit == HitPolicy::Unique && !matched.is_empty() {
                    let first = matched[0].get_attr("id").unwrap_or_default();
                    let second = row.get_attr("id").unwrap_or_default();
                    return Err(self.fail_expr(when, node.id, &format!(
                        "table `{}` has hit policy `unique` but rows `{first}` and `{second}` both match",
                        node.id
                    )));
                }
                matched.push(row);
            }
        }
        Ok(match hit {
            HitPolicy::Collect => {
                if matched.is_empty() {
                    Value::from(default.into_iter().cloned().collect::<Vec<_>>())
                } else {
                    Value::from(matched.into_iter().cloned().collect::<Vec<_>>())
                }
            }
            _ => matched
                .first()
                .copied()
                .or(default)
                .cloned()
                .unwrap_or(Value::from(())),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn select(
        &self,
        node: &Node<'_>,
        from: &Expr<'_>,
        item: &str,
        filter: Option<&Expr<'_>>,
        order_by: Option<&Expr<'_>>,
        map: Option<&Expr<'_>>,
        pick: Pick,
    ) -> Result<Value> {
        let list = self.eval(from, node.id, None)?;
        let iter = list.try_iter().map_err(|_| {
            self.fail_expr(
                from,
                node.id,
                &format!("`from` gave {list} ({}), expected a list", list.kind()),
            )
        })?;
        let mut kept: Vec<(Value, Value)> = Vec::new();
        for candidate in iter {
            let bound = Some((item, candidate.clone()));
            if let Some(filter) = filter
                && !self.condition(filter, node, bound.clone())?.is_true()
            {
                continue;
            }
            let key = match order_by {
                Some(e) => {
                    let k = self.eval(e, node.id, bound.clone())?;
                    if !matches!(
                        k.kind(),
                        ValueKind::Number | ValueKind::String | ValueKind::Seq
                    ) {
                        return Err(self.fail_expr(e, node.id, &format!("`order_by` gave {k} ({}), expected a number, text or a list of them", k.kind())));
                    }
                    k
                }
                None => Value::from(()),
            };
            let value = match map {
                Some(e) => self.eval(e, node.id, bound)?,
                None => candidate,
            };
            kept.push((key, value));
        }
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        let mut values = kept.into_iter().map(|(_, v)| v);
        Ok(match pick {
            Pick::First => values.next().unwrap_or(Value::from(())),
            Pick::All => Value::from(values.collect::<Vec<_>>()),
        })
    }

    fn condition(
        &self,
        when: &Expr<'_>,
        node: &Node<'_>,
        bound: Option<(&str, Value)>,
    ) -> Result<Value> {
        let v = self.eval(when, node.id, bound)?;
        if v.kind() == ValueKind::Bool {
            Ok(v)
        } else {
            Err(self
                .fail_expr(
                    when,
                    node.id,
                    &format!(
                        "node `{}`: condition gave {}, expected true or false",
                        node.id,
                        show(&v)
                    ),
                )
                .help("compare explicitly, e.g. `x > 0` or `x is not none`"))
        }
    }

    fn check(
        &self,
        expr: &Expr<'_>,
        node: &Node<'_>,
        v: &Value,
        ty: FieldType,
        nullable: bool,
    ) -> Result<()> {
        if let Some(problem) = type_problem(v, ty, nullable) {
            return Err(self.fail_expr(
                expr,
                node.id,
                &format!("fact `{}` gave {}: {problem}", node.id, show(v)),
            ));
        }
        Ok(())
    }

    fn eval(&self, expr: &Expr<'_>, node: &str, bound: Option<(&str, Value)>) -> Result<Value> {
        self.eval_labelled(expr, &|| format!("node `{node}`"), bound)
    }

    /// [`Run::eval`], with what failed named by `label` (called only on failure).
    fn eval_labelled(
        &self,
        expr: &Expr<'_>,
        label: &dyn Fn() -> String,
        bound: Option<(&str, Value)>,
    ) -> Result<Value> {
        let fast = expr.fast.as_ref();
        if let Some(v) = fast.and_then(|f| f.eval(&self.slots, bound.as_ref().map(|(_, v)| v))) {
            return Ok(v);
        }
        let ctx = match bound {
            None => self.root.clone(),
            Some((name, value)) => Value::from_object(Context {
                names: self.graph.owner().names.clone(),
                slots: self.slots.clone(),
                bound: Some((Value::from(name), value)),
            }),
        };
        expr.compiled.eval(ctx).map_err(|e| {
            self.fail_expr(expr, "", &format!("{} failed: {}", label(), mj_message(&e)))
        })
    }

    fn text(&self, node: &Node<'_>, template: &str) -> Result<String> {
        self.render(
            template,
            node.file,
            node.location,
            &format!("node `{}`", node.id),
        )
    }

    /// Renders text template `template` of `label` (written at `file`, `location`).
    fn render(
        &self,
        template: &str,
        file: usize,
        location: Location,
        label: &str,
    ) -> Result<String> {
        let env = &self.graph.owner().env;
        env.get_template(template)
            .and_then(|t| t.render(self.root.clone()))
            .map(|s| crate::expr::flow_text(&s))
            .map_err(|e| {
                self.fail_at(
                    file,
                    location,
                    &format!("text `{template}` of {label} failed: {}", mj_message(&e)),
                )
            })
    }

    fn fail_expr(&self, expr: &Expr<'_>, _node: &str, message: &str) -> Error {
        self.fail_at(expr.file, expr.location, message)
            .help(format!("the expression is: {}", expr.text.trim()))
    }

    fn fail_at(&self, file: usize, location: Location, message: &str) -> Error {
        let policy = self.graph.policy();
        let source = &policy.sources[file];
        Error::new(ErrorKind::Eval, message)
            .at(
                &source.name,
                &source.text,
                crate::policy::position(location),
            )
            .help(format!(
                "while deciding profile `{}`; this is a fault in the rules",
                self.profile_name
            ))
    }
}

fn mj_message(e: &minijinja::Error) -> String {
    match e.detail() {
        Some(d) => format!("{d} ({})", e.kind()),
        None => e.kind().to_string(),
    }
}

fn show(v: &Value) -> String {
    match v.kind() {
        ValueKind::Undefined => "an undefined value".to_owned(),
        ValueKind::None => "none".to_owned(),
        kind => format!("{v} ({kind})"),
    }
}

/// What is wrong with `v` as a value of type `ty`, if anything.
fn type_problem(v: &Value, ty: FieldType, nullable: bool) -> Option<String> {
    match v.kind() {
        ValueKind::Undefined => return Some("a name or attribute does not exist".to_owned()),
        ValueKind::None if nullable => return None,
        ValueKind::None => {
            return Some(
                "it may not be none (mark the fact `nullable: true` if it can)".to_owned(),
            );
        }
        _ => {}
    }
    let ok = match ty {
        FieldType::Number => {
            v.kind() == ValueKind::Number && f64::try_from(v.clone()).is_ok_and(f64::is_finite)
        }
        FieldType::Integer => v.is_integer(),
        FieldType::Bool => v.kind() == ValueKind::Bool,
        FieldType::String => v.kind() == ValueKind::String,
        FieldType::Date => v
            .as_str()
            .is_some_and(|s| s.parse::<jiff::civil::Date>().is_ok()),
        FieldType::List => v.kind() == ValueKind::Seq,
        FieldType::Map => v.kind() == ValueKind::Map,
        FieldType::Any => true,
    };
    (!ok).then(|| format!("expected {}", crate::policy::type_name(ty)))
}

fn to_json(v: &Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// The value shown in the trace: offers and rows (maps with an `id`) are named by their id
/// rather than dumped whole.
fn trace_value(v: &Value) -> serde_json::Value {
    let id_of = |v: &Value| match v.get_attr("id") {
        Ok(id) if !id.is_undefined() && v.kind() == ValueKind::Map => Some(to_json(&id)),
        _ => None,
    };
    match v.kind() {
        ValueKind::Map => id_of(v).unwrap_or_else(|| to_json(v)),
        ValueKind::Seq => serde_json::Value::Array(
            v.try_iter()
                .into_iter()
                .flatten()
                .map(|x| id_of(&x).unwrap_or_else(|| to_json(&x)))
                .collect(),
        ),
        _ => to_json(v),
    }
}
