//! Evaluating a compiled graph over one profile: values, type checks, texts and the trace.
//!
//! Evaluation is pure: the same graph, profile and `as_of` date give the same [`Decision`].
//! All nodes read one shared context object whose slots are filled in evaluation order, so no
//! context is cloned per node. Every value is checked against what the node promises (a
//! `when:` must be true or false, a fact its declared type), because minijinja's strict mode
//! lets some undefined or mistyped results through.

use std::sync::Arc;

use decide_lang::value::{Kind, Value};
use indexmap::IndexMap;

use crate::decision::{Decision, PolicyStamp, TraceEntry};
use crate::error::{Error, Fault, Result};
use crate::graph::nodes::{self, Outcomes};
use crate::graph::run::{Run, show};
use crate::graph::{Body, Graph, InvariantCheck};
use crate::policy::PolicyOrigin;
use crate::profile::Profile;
use crate::source::Source;
use decide_lang::Expr;

/// A decision plus every node's value, for templates that want more than the record.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub decision: Decision,
    /// Node id → value, in evaluation order.
    pub values: IndexMap<Arc<str>, Value>,
}

impl Graph {
    /// Checks the profile's references into the catalog (proposal and job offer ids) and that
    /// every measured offer has claimed hours: every fault at once.
    pub fn check_profile(&self, profile: &Profile, source: &Source) -> Result<()> {
        let ids: Vec<&str> = self.policy().offer_ids().collect();
        let mut faults = Vec::new();
        for (offer, field) in profile.offer_references() {
            if !ids.contains(&offer.value.as_str()) {
                let mut err = Error::of(Fault::UnknownOffer {
                    id: offer.value.clone(),
                })
                .at(
                    &source.name,
                    &source.text,
                    crate::policy::position(offer.referenced),
                )
                .field(field);
                if let Some(s) = crate::error::suggest(&offer.value, ids.iter().copied()) {
                    err = err.help(format!("did you mean `{s}`?"));
                }
                faults.push(err.help(format!("offers in the catalog: {}", ids.join(", "))));
            }
        }
        // Every offer id the catalog does not have, then the measured hours, at once.
        let unknown: Vec<&str> = faults
            .iter()
            .filter_map(|e| match e.fault() {
                Some(Fault::UnknownOffer { id }) => Some(id.as_str()),
                _ => None,
            })
            .collect();
        let measured = profile.check_measured(source, &unknown).err();
        faults.extend(measured);
        Error::many(faults).map_or(Ok(()), Err)
    }

    /// Evaluates every node over `profile` at date `as_of`, reads off the decision and checks
    /// the policy's invariants: a decision that breaks one is an [`ErrorKind::Invariant`](crate::error::ErrorKind::Invariant) error
    /// (the first broken, in policy order), never a decision.
    pub fn evaluate(&self, profile: &Profile, as_of: jiff::civil::Date) -> Result<Evaluation> {
        let run = Run::new(self, profile, as_of);
        let evaluation = run.all(profile, as_of, true)?;
        run.check_invariants(profile)?;
        Ok(evaluation)
    }

    /// Like [`Graph::evaluate_without_trace`], evaluating only the nodes the decision record
    /// needs ([`Compiled::record_order`]): `values` lacks the rest (the memo's sentences, read
    /// by nothing else), so the evaluation renders no memo. For batches of records.
    pub fn evaluate_record(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
    ) -> Result<Evaluation> {
        let run = Run::new(self, profile, as_of);
        let evaluation =
            run.nodes_then_outputs(profile, as_of, false, &self.compiled().record_order)?;
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
    pub fn violations(
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

    /// Evaluates `profile` in full (no trace) and, for every search whose variables have
    /// `reference:` lists, searches those too: a sentence for each search (each offer's, per
    /// offer) where they find a candidate that beats the one the `over:` lists gave. This is
    /// what `decide validate`'s proof of the searches runs. Each sentence comes with the index
    /// of its search among the graph's nodes.
    ///
    /// # Errors
    /// The evaluation's, as [`Graph::evaluate`] gives them (its invariants unchecked).
    pub fn search_gaps(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
    ) -> Result<Vec<(usize, String)>> {
        let run = Run::new(self, profile, as_of);
        run.all(profile, as_of, false)?;
        let mut out = Vec::new();
        for (i, node) in self.compiled().nodes.iter().enumerate() {
            if let Body::Search(s) = &node.body {
                out.extend(
                    nodes::search::reference_gaps(&run, node, s)?
                        .into_iter()
                        .map(|gap| (i, gap)),
                );
            }
        }
        Ok(out)
    }

    /// Which rows of table node `table` match `profile`, each row's condition evaluated on its
    /// own (whatever the hit policy). Only the nodes the table reads are evaluated. This is
    /// what `decide validate` uses to look for gaps, overlaps and shadowed rows.
    pub fn table_rows_matching(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        table: usize,
        needed: &[usize],
    ) -> Result<Vec<bool>> {
        let run = self.run_needed(profile, as_of, needed)?;
        let node = &self.compiled().nodes[table];
        let Body::Table(table) = &node.body else {
            return Ok(Vec::new());
        };
        nodes::table::row_hits(&run, node, table)
    }

    /// A run over `profile` with the nodes `needed` evaluated, in that order.
    fn run_needed<'g>(
        &'g self,
        profile: &'g Profile,
        as_of: jiff::civil::Date,
        needed: &[usize],
    ) -> Result<Run<'g>> {
        let run = Run::new(self, profile, as_of);
        let c = self.compiled();
        for &i in needed {
            let value = nodes::evaluate(&run, &c.nodes[i])?;
            let _ = run.slots[c.slot[i]].set(value);
        }
        Ok(run)
    }

    /// The values of table `table`'s inputs over `profile`, evaluating `needed` first.
    pub fn table_inputs(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        table: usize,
        needed: &[usize],
    ) -> Result<Vec<Value>> {
        let run = self.run_needed(profile, as_of, needed)?;
        let node = &self.compiled().nodes[table];
        let Body::Table(table) = &node.body else {
            return Ok(Vec::new());
        };
        nodes::table::input_values(&run, node, table)
    }
}

/// What the sensitivity analysis watches: a node's value, or an output expression.
#[derive(Debug, Clone, Copy)]
pub enum Watch<'a> {
    Node(usize),
    Output(&'a Expr<'a>),
}

impl Graph {
    /// Re-evaluates `dirty` (node indices, in evaluation order) over `profile`, taking every
    /// other node's value from `base` (by node index), and returns the `watch` values. Texts,
    /// warnings and the trace are skipped: this is the inner loop of the sensitivity analysis.
    pub fn probe(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        base: &[Value],
        dirty: &[usize],
        watch: &[Watch<'_>],
    ) -> Result<Vec<Value>> {
        let run = Run::new(self, profile, as_of);
        let c = self.compiled();
        let mut is_dirty = vec![false; c.nodes.len()];
        for &i in dirty {
            is_dirty[i] = true;
        }
        for i in 0..c.nodes.len() {
            if !is_dirty[i] {
                let _ = run.slots[c.slot[i]].set(base[i].clone());
            }
        }
        for &i in dirty {
            let value = nodes::evaluate(&run, &c.nodes[i])?;
            let _ = run.slots[c.slot[i]].set(value);
        }
        watch
            .iter()
            .map(|w| match w {
                Watch::Node(i) => Ok(run.slots[c.slot[*i]].get().cloned().unwrap_or_default()),
                Watch::Output(e) => run.eval(e, "outputs", None),
            })
            .collect()
    }
}

impl Run<'_> {
    /// Evaluates every node in order, then the texts, the trace (when `keep_trace`) and the
    /// outputs: the whole evaluation.
    pub fn all(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        keep_trace: bool,
    ) -> Result<Evaluation> {
        self.nodes_then_outputs(profile, as_of, keep_trace, &self.compiled.order)
    }

    /// Like [`Run::all`], evaluating only the nodes of `order` (the others stay undefined and
    /// out of the values): [`Compiled::record_order`] for a record alone.
    #[allow(clippy::too_many_lines)] // one pass: nodes, texts, trace, outputs
    fn nodes_then_outputs(
        &self,
        profile: &Profile,
        as_of: jiff::civil::Date,
        keep_trace: bool,
        order: &[usize],
    ) -> Result<Evaluation> {
        let c = self.compiled;
        let mut values = IndexMap::with_capacity(c.nodes.len());
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
        let mut by_node = vec![Value::Undefined; c.nodes.len()];
        let mut evaluated = vec![false; c.nodes.len()];
        for &i in order {
            evaluated[i] = true;
            let node = &c.nodes[i];
            let value = match cached_at[i] {
                Some(v) => v.clone(),
                None => nodes::evaluate(self, node)?,
            };
            let _ = self.slots[c.slot[i]].set(value.clone());
            by_node[i] = value.clone();
            values.insert(c.ids[i].clone(), value);
        }
        if cached.is_none() {
            let free: Arc<[(usize, Value)]> = order
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
        let mut outcomes = Outcomes::default();
        let mut why = Vec::with_capacity(c.nodes.len());
        for ((node, value), &evaluated) in c.nodes.iter().zip(&by_node).zip(&evaluated) {
            if !evaluated {
                why.push(String::new());
                continue;
            }
            why.push(nodes::explain(
                self,
                node,
                value,
                keep_trace,
                &mut outcomes,
            )?);
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
        if let Some(allowed) = &self.graph.policy().outputs.item.promises.deployment
            && !allowed.contains(&deployment)
        {
            return Err(self.fail_expr(
                &outputs.deployment,
                "outputs",
                &format!(
                    "`outputs.deployment` gave `{deployment}`, but the policy promises one of: {}",
                    allowed.join(", ")
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
                    Kind::None => None,
                    Kind::Text => Some(v.to_string()),
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
        let costs = self.named_outputs("costs", &outputs.costs)?;
        let sections = self.named_outputs("sections", &outputs.sections)?;
        let calibration = outputs
            .calibration
            .as_ref()
            .map(|e| self.eval(e, "outputs", None))
            .transpose()?;
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
            criteria: outcomes.criteria,
            scenario,
            costs,
            sections,
            calibration,
            sensitivity: None,
            warnings: outcomes.warnings,
            checklist: outcomes.checklist,
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
    fn invariant(
        &self,
        invariant: &InvariantCheck<'_>,
        profile: &Profile,
    ) -> Result<Option<Error>> {
        let holds = &invariant.holds;
        let label = || format!("invariant `{}`", invariant.id);
        let v = self.eval_labelled(holds, &label, None)?;
        let verdict = match v.kind() {
            Kind::Bool if v.is_true() => return Ok(None),
            Kind::Bool => "gave false".to_owned(),
            _ => format!("gave {}, which is not true or false", show(&v)),
        };
        let message = self.render(&invariant.message, invariant.file, holds.location, &label())?;
        let policy = self.graph.policy();
        let source = &policy.sources[invariant.file];
        let profile_revision = profile.revision().unwrap_or_default();
        let holds_text = holds.text.trim().to_owned();
        let holds_hint = format!("`holds: {holds_text}` {verdict}");
        Ok(Some(
            Error::of(Fault::InvariantViolated {
                id: invariant.id.to_string(),
                message,
                holds: holds_text,
                verdict,
            })
            .at(
                &source.name,
                &source.text,
                crate::policy::position(holds.location),
            )
            .help(format!("invariant: {}", invariant.title))
            .help(holds_hint)
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

    /// The values of a named group of outputs (`costs`, `sections`), in policy order, as JSON;
    /// an undefined one is a fault in the rules.
    fn named_outputs(
        &self,
        group: &str,
        exprs: &[(&str, Expr<'_>)],
    ) -> Result<IndexMap<String, Value>> {
        let mut out = IndexMap::with_capacity(exprs.len());
        for (name, e) in exprs {
            let v = self.eval(e, "outputs", None)?;
            if v.is_undefined() {
                return Err(self.fail_expr(
                    e,
                    "outputs",
                    &format!("`outputs.{group}.{name}` is undefined"),
                ));
            }
            out.insert((*name).to_owned(), v);
        }
        Ok(out)
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
}

/// The value shown in the trace: offers and rows (maps with an `id`) are named by their id
/// rather than dumped whole.
fn trace_value(v: &Value) -> serde_json::Value {
    let id_of = |v: &Value| match v.get_attr("id") {
        id if !id.is_undefined() && v.kind() == Kind::Map => Some(crate::decision::to_json(&id)),
        _ => None,
    };
    match v.kind() {
        Kind::Map => id_of(v).unwrap_or_else(|| crate::decision::to_json(v)),
        Kind::List => serde_json::Value::Array(
            v.try_iter()
                .into_iter()
                .flatten()
                .map(|x| id_of(&x).unwrap_or_else(|| crate::decision::to_json(&x)))
                .collect(),
        ),
        _ => crate::decision::to_json(v),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use decide_lang::Value;

    use decide_lang::value::{PerOffer, Record};

    /// `decision::to_json` and the record's own serialisation write what serde writes, for
    /// every kind a record holds.
    #[test]
    fn json_of_a_value_is_what_serde_makes_of_it() {
        let record = Record::value(
            [Value::from("a"), Value::from("b")].into(),
            vec![
                Value::from(1.5),
                Value::from(vec![Value::from(()), Value::from(true)]),
            ],
        );
        let ids: Arc<[Value]> = [Value::from("x"), Value::from("y"), Value::from("z")].into();
        let per_offer = PerOffer::value(
            ids,
            vec![Some(Value::from("t")), None, Some(record.clone())],
        );
        let values = [
            Value::Undefined,
            Value::from(()),
            Value::from(false),
            Value::from(-7),
            Value::from(u64::MAX),
            Value::from(i128::MIN),
            Value::from(0.1 + 0.2),
            Value::from(f64::NAN),
            Value::from(f64::INFINITY),
            Value::from("¥1,130.40 <b>"),
            Value::safe("<i>safe</i>"),
            record,
            per_offer,
            Value::from_pairs([
                (Value::from("k"), Value::from(1)),
                (Value::from("j"), Value::from(2)),
            ]),
            Value::from_pairs([(Value::from(3), Value::from("int key"))]),
            Value::from(vec![Value::from(1), Value::from(vec![Value::from("deep")])]),
            decide_lang::Value::from_serialize(
                &serde_json::json!({"nested": {"list": [1, 2.5, null, "s"]}}),
            ),
        ];
        for v in &values {
            let serde = serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
            assert_eq!(crate::decision::to_json(v), serde, "{v:?}");
            // Same text when written, so the record's bytes do not depend on the path taken.
            let direct = crate::decision::to_json(v).to_string();
            assert_eq!(direct, serde.to_string(), "{v:?}");
            // And the record, which serializes the value itself, writes the same text too, but
            // for an integer beyond 64 bits, which it writes whole (a JSON tree cannot hold it).
            let written = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
            if serde_json::to_value(v).is_ok() {
                assert_eq!(written, direct);
            } else {
                assert_eq!(written, "-170141183460469231731687303715884105728");
            }
        }
    }
}
