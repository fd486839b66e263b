//! Policy test suites: case files (a profile and the decision expected of it), run with coverage.
//!
//! A policy is code that procurement leads edit, so it gets tests like code (`opa test` is the
//! model). A case file is YAML: `cases:`, each a full profile plus the parts of the decision it
//! pins down (deployment, offer, scenario row, criteria, warnings, checklist, costs); what a case
//! leaves out is not checked. Coverage says which criteria outcomes, table rows, warnings and
//! checklist conditions no passing case exercised (a failing case covers nothing), so a row
//! nobody tests is visible before it is wrong.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use decide_lang::value::{Kind, Value};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use decide_engine::error::{Error, ErrorKind, Position, Result};
use decide_engine::eval::Evaluation;
use decide_engine::graph::{Body, Graph};
use decide_engine::kind::NodeKind;
use decide_engine::policy::rules::{HitPolicy, NoMatch};
use decide_engine::profile::Profile;
use decide_engine::source::Source;

/// One case file as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "decide policy test cases", extend("$id" = "https://decide.invalid/schema/cases.schema.json"))]
pub struct CaseFile {
    /// The date every case of the file is decided at (YYYY-MM-DD), so that price-age warnings
    /// do not change with the calendar. A case without a date here or of its own is refused:
    /// judged at today's date, it would fail by itself once the quotes age.
    #[serde(default)]
    pub as_of: Option<String>,
    pub cases: Vec<Case>,
}

/// A profile and what the policy must decide for it. The case is named by the profile's name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// This case's date, instead of the file's.
    #[serde(default)]
    pub as_of: Option<String>,
    pub profile: Profile,
    pub expect: Expect,
}

/// The parts of the decision a case checks; every part is optional.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// One of the deployments the policy promises (`outputs.promises.deployment`): with the
    /// default rules `bare_metal`, `container` or `mixed`.
    #[serde(default)]
    pub deployment: Option<String>,
    /// The recommended offer id.
    #[serde(default)]
    pub offer: Option<String>,
    /// The scenario row id, or `none` for "no row matches".
    #[serde(default)]
    pub scenario: Option<String>,
    /// Criterion id → met; criteria not listed are not checked.
    #[serde(default)]
    pub criteria: IndexMap<String, bool>,
    /// Exactly the warnings raised (ids, any order).
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
    /// Exactly the checklist items that apply (ids, any order).
    #[serde(default)]
    pub checklist: Option<Vec<String>>,
    /// Cost figures of the record (numbers within 0.01); figures not listed are not checked.
    #[serde(default)]
    pub costs: IndexMap<String, serde_json::Value>,
}

/// What happened to one case.
#[derive(Debug)]
pub struct CaseResult {
    pub file: String,
    pub name: String,
    /// Each difference between what was expected and what was decided; empty when it passed.
    pub differences: Vec<String>,
    /// The error that stopped the case, if the policy could not decide it.
    pub error: Option<Error>,
}

impl CaseResult {
    #[must_use]
    pub fn passed(&self) -> bool {
        self.differences.is_empty() && self.error.is_none()
    }
}

/// Something a case can exercise: a criterion outcome, a table row, a warning, a checklist
/// condition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CoverageItem {
    pub kind: &'static str,
    pub id: String,
}

/// What the passing cases exercised, out of what the policy has.
#[derive(Debug, Default)]
pub struct Coverage {
    pub all: BTreeSet<CoverageItem>,
    pub hit: BTreeSet<CoverageItem>,
}

impl Coverage {
    /// The policy's items no case exercised, by kind and id.
    #[must_use]
    pub fn missed(&self) -> Vec<&CoverageItem> {
        self.all.difference(&self.hit).collect()
    }

    /// The share of the policy's items that passing cases exercised, in percent (100 for a
    /// policy with nothing to exercise).
    #[must_use]
    pub fn percent(&self) -> f64 {
        let all = self.all.len();
        if all == 0 {
            return 100.0;
        }
        let hit = self.hit.intersection(&self.all).count();
        hit as f64 * 100.0 / all as f64
    }

    /// Covered items of `kind`, and all of them.
    #[must_use]
    pub fn count(&self, kind: &str) -> (usize, usize) {
        let hit = self.hit.intersection(&self.all).filter(|i| i.kind == kind);
        let all = self.all.iter().filter(|i| i.kind == kind);
        (hit.count(), all.count())
    }
}

/// The kinds of coverage item, in report order.
pub const ITEM_KINDS: &[(&str, &str)] = &[
    ("criterion", "criterion outcomes"),
    ("table row", "table rows"),
    ("warning", "warnings"),
    ("checklist item", "checklist conditions"),
];

/// The results of a whole run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub results: Vec<CaseResult>,
    pub coverage: Coverage,
}

/// Runs every case of every file in `sources` against `graph`.
///
/// A case file that does not parse is an error (it names file, line and field); a case the
/// policy cannot decide is a failed case, and the run goes on. Every case also checks every
/// invariant: a decision that breaks one fails the case with the error naming the invariant.
pub fn run(graph: &Graph, sources: &[Source]) -> Result<Outcome> {
    let mut outcome = Outcome {
        coverage: Coverage {
            all: universe(graph),
            hit: BTreeSet::new(),
        },
        ..Outcome::default()
    };
    let mut errors = Vec::new();
    for source in sources {
        match source.parse_yaml::<CaseFile>(ErrorKind::Profile) {
            Ok(file) => run_file(graph, source, file, &mut outcome)?,
            Err(e) => errors.push(e),
        }
    }
    match Error::many(errors) {
        Some(e) => Err(e),
        None => Ok(outcome),
    }
}

fn run_file(graph: &Graph, source: &Source, file: CaseFile, outcome: &mut Outcome) -> Result<()> {
    let date = |text: &str| {
        text.parse::<jiff::civil::Date>().map_err(|e| {
            Error::new(
                ErrorKind::Profile,
                format!("`as_of: {text}` is not a date YYYY-MM-DD ({e})"),
            )
            .in_file(&source.name)
            .field("as_of")
        })
    };
    let file_as_of = file.as_of.as_deref().map(date).transpose()?;
    for (index, case) in file.cases.into_iter().enumerate() {
        let as_of = match (&case.as_of, file_as_of) {
            (Some(text), _) => date(text)?,
            (None, Some(as_of)) => as_of,
            (None, None) => return Err(undated(graph, source, index, &case.profile.name)),
        };
        let name = case.profile.name.clone();
        // A case dated where other quotes are in force is decided with the policy priced then.
        let dated = if graph.policy().prices_hold_at(as_of) {
            None
        } else {
            Some(Graph::compile_in(graph.policy().at(as_of), graph.lang())?)
        };
        let priced = dated.as_ref().unwrap_or(graph);
        let decided = priced
            .check_profile(&case.profile, source)
            .and_then(|()| priced.evaluate(&case.profile, as_of));
        let result = match decided {
            Ok(evaluation) => {
                let differences = compare(&case.expect, &evaluation);
                // A failing case covers nothing: what it exercised is not what it checks.
                if differences.is_empty() {
                    exercise(graph, &evaluation, &mut outcome.coverage.hit);
                }
                CaseResult {
                    file: source.name.clone(),
                    name,
                    differences,
                    error: None,
                }
            }
            Err(e) => CaseResult {
                file: source.name.clone(),
                name,
                differences: Vec::new(),
                error: Some(e),
            },
        };
        outcome.results.push(result);
    }
    Ok(())
}

/// The fault of a case with no date: the file's `as_of:` and the case's are both missing.
fn undated(graph: &Graph, source: &Source, index: usize, name: &str) -> Error {
    let newest = graph.policy().newest_quote_date();
    Error::new(
        ErrorKind::Profile,
        format!(
            "case `{name}` has no date: a policy test is decided at the date it names, so that \
             it passes or fails the same on every day"
        ),
    )
    .at(
        &source.name,
        &source.text,
        Some(Position { line: 1, column: 1 }),
    )
    .field(format!("cases[{index}].as_of"))
    .help(match newest {
        Some(day) => format!(
            "write `as_of: {day}` (the newest quote sheet's date) at the top of the file for \
             every case, or in the case for that one"
        ),
        None => "write `as_of: YYYY-MM-DD` at the top of the file for every case, or in the \
                 case for that one"
            .to_owned(),
    })
}

/// Every difference between `expect` and the decision, as a line a person reads.
fn compare(expect: &Expect, evaluation: &Evaluation) -> Vec<String> {
    let d = &evaluation.decision;
    let mut out = Vec::new();
    let mut same = |what: &str, expected: &str, got: &str| {
        if expected != got {
            out.push(format!("{what}: expected `{expected}`, got `{got}`"));
        }
    };
    if let Some(e) = &expect.deployment {
        same("deployment", e, &d.deployment);
    }
    if let Some(e) = &expect.offer {
        same("offer", e, &d.offer);
    }
    if let Some(e) = &expect.scenario {
        same("scenario", e, d.scenario.as_deref().unwrap_or("none"));
    }
    for (id, met) in &expect.criteria {
        match d.criteria.iter().find(|c| c.id == *id) {
            Some(c) if c.met == *met => {}
            Some(c) => out.push(format!(
                "criterion `{id}`: expected {}, got {} ({})",
                met_word(*met),
                met_word(c.met),
                c.reason
            )),
            None => out.push(format!(
                "criterion `{id}`: the policy has no such criterion"
            )),
        }
    }
    let ids = |list: &mut dyn Iterator<Item = &String>| list.cloned().collect::<BTreeSet<_>>();
    let mut sets = |what: &str, expected: &Option<Vec<String>>, got: BTreeSet<String>| {
        let Some(expected) = expected else { return };
        let expected = ids(&mut expected.iter());
        let missing: Vec<&String> = expected.difference(&got).collect();
        let extra: Vec<&String> = got.difference(&expected).collect();
        if !missing.is_empty() || !extra.is_empty() {
            let mut line = format!("{what}:");
            if !missing.is_empty() {
                let _ = write!(line, " expected but not raised: {}", join(&missing));
            }
            if !extra.is_empty() {
                if !missing.is_empty() {
                    line.push(';');
                }
                let _ = write!(line, " raised but not expected: {}", join(&extra));
            }
            out.push(line);
        }
    };
    sets(
        "warnings",
        &expect.warnings,
        ids(&mut d.warnings.iter().map(|w| &w.id)),
    );
    sets(
        "checklist",
        &expect.checklist,
        ids(&mut d.checklist.iter().map(|c| &c.id)),
    );
    for (name, expected) in &expect.costs {
        match d.costs.get(name).map(decide_engine::decision::to_json) {
            Some(got) if json_close(expected, &got) => {}
            Some(got) => out.push(format!("costs.{name}: expected {expected}, got {got}")),
            None => out.push(format!("costs.{name}: the record has no such figure")),
        }
    }
    out
}

fn met_word(met: bool) -> &'static str {
    if met { "met" } else { "not met" }
}

fn join(ids: &[&String]) -> String {
    ids.iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Equal JSON, with numbers equal within 0.01 (money and hours are rounded to cents).
fn json_close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 0.01,
        _ => a == b,
    }
}

/// Everything the policy has that a case can exercise.
fn universe(graph: &Graph) -> BTreeSet<CoverageItem> {
    let mut all = BTreeSet::new();
    let item = |kind, id: String| CoverageItem { kind, id };
    for node in &graph.compiled().nodes {
        match &node.body {
            Body::Criterion(_) => {
                all.insert(item("criterion", format!("{} met", node.id)));
                all.insert(item("criterion", format!("{} not met", node.id)));
            }
            Body::Table(t) => {
                for row in t.rows.iter().map(|row| &row.value).chain(&t.default) {
                    all.insert(item("table row", format!("{}.{}", node.id, row_id(row))));
                }
                if t.default.is_none() && t.no_match == NoMatch::None && t.hit != HitPolicy::Collect
                {
                    all.insert(item("table row", format!("{}: no row", node.id)));
                }
            }
            Body::Warning(_) => {
                all.insert(item("warning", node.id.to_owned()));
            }
            Body::Checklist(c) if c.when.is_some() => {
                all.insert(item("checklist item", node.id.to_owned()));
            }
            _ => {}
        }
    }
    all
}

/// Records what one decision exercised.
fn exercise(graph: &Graph, evaluation: &Evaluation, hit: &mut BTreeSet<CoverageItem>) {
    let d = &evaluation.decision;
    for c in &d.criteria {
        hit.insert(CoverageItem {
            kind: "criterion",
            id: format!("{} {}", c.id, met_word(c.met)),
        });
    }
    for w in &d.warnings {
        hit.insert(CoverageItem {
            kind: "warning",
            id: w.id.clone(),
        });
    }
    for c in &d.checklist {
        hit.insert(CoverageItem {
            kind: "checklist item",
            id: c.id.clone(),
        });
    }
    for node in &graph.compiled().nodes {
        if node.kind != NodeKind::Table {
            continue;
        }
        let Some(value) = evaluation.values.get(node.id) else {
            continue;
        };
        let rows: Vec<Value> = match value.kind() {
            Kind::List => value.try_iter().into_iter().flatten().collect(),
            Kind::None => {
                hit.insert(CoverageItem {
                    kind: "table row",
                    id: format!("{}: no row", node.id),
                });
                Vec::new()
            }
            _ => vec![value.clone()],
        };
        for row in rows {
            hit.insert(CoverageItem {
                kind: "table row",
                id: format!("{}.{}", node.id, row_id(&row)),
            });
        }
    }
}

fn row_id(row: &Value) -> String {
    row.get_attr("id").to_string()
}
