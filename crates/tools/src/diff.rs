//! Policy diff: two policies evaluated on the same profiles, and what changed, in Markdown or
//! JSON.
//!
//! A price or threshold edit is reviewed like a code change: before merging it, the owner sees
//! which real profiles it moves (deployment, offer, warnings, monthly cost), from what to what,
//! and where in the graph the change starts: the nodes whose values differ while none of their
//! inputs do. That is the answer to "why did this memo change?" without reading two traces.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde_json::{Value, json};

use decide_engine::decision::{Decision, TraceEntry};
use decide_engine::error::Result;
use decide_engine::graph::Graph;
use decide_engine::source::Source;
use decide_lang::{group_thousands, md_escape, table_cell};

/// How one profile fared under both policies.
#[derive(Debug)]
pub struct ProfileDiff {
    pub file: String,
    pub name: String,
    pub old: Decision,
    pub new: Decision,
    /// The headline cost each policy names (`outputs.promises.headline_cost`), with its value
    /// in each decision.
    pub headline: Headline,
}

/// A value where a change starts: a node, or one key of a node's map.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeStart {
    /// The node id, or `node['key']`.
    pub at: String,
    /// The value before (`None`: the node or key was not there).
    pub old: Option<Value>,
    /// The value after (`None`: the key is no longer there).
    pub new: Option<Value>,
    /// Whether the old policy has the node at all.
    pub in_old_policy: bool,
}

/// The cost both policies headline, as each decision gives it.
#[derive(Debug, Default)]
pub struct Headline {
    /// The `costs` entries the old and the new policy name.
    pub names: (Option<String>, Option<String>),
    pub old: Option<f64>,
    pub new: Option<f64>,
}

impl ProfileDiff {
    /// Whether the decision changed: deployment, offer, warnings or monthly cost.
    #[must_use]
    pub fn decision_changed(&self) -> bool {
        self.old.deployment != self.new.deployment
            || self.old.offer != self.new.offer
            || warning_ids(&self.old) != warning_ids(&self.new)
            || self.headline.old != self.headline.new
    }

    /// Cost figures that differ, other than the monthly cost: (name, old, new), values on one
    /// line and long ones cut (for the Markdown report).
    #[must_use]
    pub fn other_figures(&self) -> Vec<(String, String, String)> {
        self.figure_changes()
            .into_iter()
            .map(|(k, a, b)| (k, brief_json(a.as_ref()), brief_json(b.as_ref())))
            .collect()
    }

    /// Cost figures that differ, other than the monthly cost: (name, old, new), in full
    /// (`None`: the decision has no such figure).
    #[must_use]
    pub fn figure_changes(&self) -> Vec<(String, Option<Value>, Option<Value>)> {
        let mut names: Vec<&String> = self.old.costs.keys().collect();
        names.extend(
            self.new
                .costs
                .keys()
                .filter(|k| !self.old.costs.contains_key(*k)),
        );
        names
            .into_iter()
            .filter(|k| {
                let name = Some(k.as_str());
                name != self.headline.names.0.as_deref() && name != self.headline.names.1.as_deref()
            })
            .filter_map(|k| {
                let json = |v: Option<&decide_lang::Value>| v.map(decide_engine::decision::to_json);
                let (a, b) = (json(self.old.costs.get(k)), json(self.new.costs.get(k)));
                (a != b).then(|| (k.clone(), a, b))
            })
            .collect()
    }

    /// The nodes where the change starts: their value differs and none of their inputs' does
    /// (a node only one policy has counts as differing); values on one line, long ones cut.
    #[must_use]
    pub fn first_differences(&self) -> Vec<(String, String, String)> {
        self.change_starts()
            .into_iter()
            .map(|c| {
                let before = if c.in_old_policy {
                    brief_json(c.old.as_ref())
                } else {
                    "(not in the old policy)".to_owned()
                };
                (c.at, before, brief_json(c.new.as_ref()))
            })
            .collect()
    }

    /// The nodes where the change starts, as [`ProfileDiff::first_differences`], with their
    /// values in full. A map's (a per-offer fact's) changed keys are listed one by one, as
    /// `node['key']`.
    #[must_use]
    pub fn change_starts(&self) -> Vec<ChangeStart> {
        let old: HashMap<&str, &TraceEntry> =
            self.old.trace.iter().map(|t| (t.id.as_str(), t)).collect();
        let differs = |t: &TraceEntry| old.get(t.id.as_str()).is_none_or(|o| o.value != t.value);
        let changed: BTreeSet<&str> = self
            .new
            .trace
            .iter()
            .filter(|t| differs(t))
            .map(|t| t.id.as_str())
            .collect();
        self.new
            .trace
            .iter()
            .filter(|t| changed.contains(t.id.as_str()))
            .filter(|t| !t.inputs.iter().any(|i| changed.contains(i.as_str())))
            .flat_map(|t| match old.get(t.id.as_str()) {
                None => vec![ChangeStart {
                    at: t.id.clone(),
                    old: None,
                    new: Some(t.value.clone()),
                    in_old_policy: false,
                }],
                Some(o) => value_changes(&t.id, &o.value, &t.value)
                    .into_iter()
                    .map(|(at, old, new)| ChangeStart {
                        at,
                        old,
                        new,
                        in_old_policy: true,
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Both policies' decisions for every profile, in the order given.
///
/// # Errors
/// The first profile either policy cannot decide (a bad profile, an unknown offer id under one
/// catalog, a rules fault found at run time).
pub fn run(
    old: &Graph,
    new: &Graph,
    profiles: &[Source],
    as_of: jiff::civil::Date,
) -> Result<Vec<ProfileDiff>> {
    profiles
        .iter()
        .map(|source| Ok(pair((old, source), (new, source), as_of)?.0))
        .collect()
}

/// Two profiles decided under one policy, to be read side by side: what differs in the
/// profiles, and (in `diff`, `old` being the first profile) how and where the decisions part.
#[derive(Debug)]
pub struct Comparison {
    pub diff: ProfileDiff,
    /// The profile fields whose values differ, defaults filled in: (path, first, second);
    /// `None` where a profile has no such field.
    pub fields: Vec<(String, Option<Value>, Option<Value>)>,
}

/// `first` and `second` decided under `graph` at `as_of`, and compared.
///
/// # Errors
/// The first profile that cannot be decided (its error names its source).
pub fn profiles(
    graph: &Graph,
    first: &Source,
    second: &Source,
    as_of: jiff::civil::Date,
) -> Result<Comparison> {
    let (diff, [a, b]) = pair((graph, first), (graph, second), as_of)?;
    let as_json =
        |p: &decide_engine::profile::Profile| serde_json::to_value(p).unwrap_or(Value::Null);
    let (a, b) = (as_json(&a), as_json(&b));
    let mut fields = Vec::new();
    leaf_changes("", Some(&a), Some(&b), &mut fields);
    Ok(Comparison { diff, fields })
}

/// The leaves of two JSON values that differ, by dotted path (list items as `[i]`).
fn leaf_changes(
    at: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    out: &mut Vec<(String, Option<Value>, Option<Value>)>,
) {
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().collect();
            keys.extend(y.keys().filter(|k| !x.contains_key(*k)));
            for k in keys {
                leaf_changes(&join(k), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Object(x)), None) => {
            for (k, v) in x {
                leaf_changes(&join(k), Some(v), None, out);
            }
        }
        (None, Some(Value::Object(y))) => {
            for (k, v) in y {
                leaf_changes(&join(k), None, Some(v), out);
            }
        }
        (a, b) if a != b => out.push((at.to_owned(), a.cloned(), b.cloned())),
        _ => {}
    }
}

/// One profile under one graph against one (maybe the same) under another (maybe the same).
fn pair(
    (old, old_source): (&Graph, &Source),
    (new, new_source): (&Graph, &Source),
    as_of: jiff::civil::Date,
) -> Result<(ProfileDiff, [decide_engine::profile::Profile; 2])> {
    // The traces say which node changed first.
    let (profile, before) = crate::decide_with(old, old_source, as_of, crate::Detail::FULL)?;
    let (other, after) = crate::decide_with(new, new_source, as_of, crate::Detail::FULL)?;
    let cost = |graph: &Graph, d: &Decision| {
        d.costs
            .get(graph.headline_cost()?)
            .and_then(decide_lang::Value::as_number)
    };
    let headline = Headline {
        names: (
            old.headline_cost().map(str::to_owned),
            new.headline_cost().map(str::to_owned),
        ),
        old: cost(old, &before.decision),
        new: cost(new, &after.decision),
    };
    let diff = ProfileDiff {
        file: old_source.name.clone(),
        name: profile.name.clone(),
        old: before.decision,
        new: after.decision,
        headline,
    };
    Ok((diff, [profile, other]))
}

/// The Markdown report: a summary table of changed profiles, then each one's details.
#[must_use]
pub fn report(old: &Graph, new: &Graph, diffs: &[ProfileDiff], as_of: jiff::civil::Date) -> String {
    let mut out = String::from("# Policy diff\n\n");
    let label = |g: &Graph| {
        let p = g.policy();
        let origin = match &p.origin {
            decide_engine::policy::PolicyOrigin::Embedded => "embedded".to_owned(),
            decide_engine::policy::PolicyOrigin::Folder(dir) => dir.display().to_string(),
        };
        format!(
            "`{}` ({}, version {}, revision `{}`)",
            md_escape(&origin),
            md_escape(p.meta.name.get(decide_engine::Lang::En)),
            md_escape(&p.meta.version),
            p.revision
        )
    };
    // Changed profiles, the weightiest change first: deployment, then offer, then the rest.
    let mut changed: Vec<&ProfileDiff> = diffs.iter().filter(|d| d.decision_changed()).collect();
    changed.sort_by_key(|d| {
        (
            d.old.deployment == d.new.deployment,
            d.old.offer == d.new.offer,
        )
    });
    let _ = writeln!(out, "- Old: {}", label(old));
    let _ = writeln!(out, "- New: {}", label(new));
    let _ = writeln!(
        out,
        "- {} {} decided at {as_of}: **{} changed**, {} unchanged.\n",
        diffs.len(),
        if diffs.len() == 1 {
            "profile"
        } else {
            "profiles"
        },
        changed.len(),
        diffs.len() - changed.len()
    );
    if changed.is_empty() {
        out.push_str("No decision changed: deployment, offer, warnings and monthly cost are the same for every profile.\n");
    } else {
        out.push_str(
            "| Profile | Deployment | Offer | Monthly cost | Warnings |\n|---|---|---|---|---|\n",
        );
        for d in &changed {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                table_cell(&md_escape(&d.name)),
                arrow(&d.old.deployment, &d.new.deployment),
                arrow(&format!("`{}`", d.old.offer), &format!("`{}`", d.new.offer)),
                money_change(d.headline.old, d.headline.new),
                warnings_change(&d.old, &d.new),
            );
        }
    }
    let rule_changes = policy_changes(old, new);
    out.push_str("\n## What changed in the rules\n\n");
    if rule_changes.is_empty() {
        out.push_str("Nothing: the two policies have the same catalog, constants and expressions (texts may differ).\n");
    }
    for line in &rule_changes {
        let _ = writeln!(out, "- {line}");
    }
    for d in &changed {
        details(&mut out, d);
    }
    let figures_only: Vec<String> = diffs
        .iter()
        .filter(|d| !d.decision_changed())
        .filter_map(|d| {
            let names: Vec<String> = d
                .other_figures()
                .into_iter()
                .map(|(n, _, _)| format!("`{n}`"))
                .collect();
            (!names.is_empty()).then(|| {
                format!(
                    "- {} (`{}`): {}",
                    md_escape(&d.name),
                    md_escape(&d.file),
                    names.join(", ")
                )
            })
        })
        .collect();
    if !figures_only.is_empty() {
        out.push_str("\n## Same decision, other figures differ\n\n");
        for line in figures_only {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The report as JSON: both policies, a count, what changed in the rules, then every profile
/// in the order given with its decision before and after. Values are given in full, as the
/// decision records have them: nothing is cut.
#[must_use]
pub fn report_json(
    old: &Graph,
    new: &Graph,
    diffs: &[ProfileDiff],
    as_of: jiff::civil::Date,
) -> String {
    let policy = |g: &Graph| {
        let p = g.policy();
        let origin = match &p.origin {
            decide_engine::policy::PolicyOrigin::Embedded => "embedded".to_owned(),
            decide_engine::policy::PolicyOrigin::Folder(dir) => dir.display().to_string(),
        };
        json!({
            "rules": origin,
            "name": p.meta.name.get(decide_engine::Lang::En),
            "version": p.meta.version,
            "revision": p.revision,
        })
    };
    let pair = |a: Value, b: Value| json!({ "old": a, "new": b });
    let profiles: Vec<Value> = diffs
        .iter()
        .map(|d| {
            let (a, b) = (warning_ids(&d.old), warning_ids(&d.new));
            let added: Vec<&&str> = b.iter().filter(|w| !a.contains(w)).collect();
            let removed: Vec<&&str> = a.iter().filter(|w| !b.contains(w)).collect();
            json!({
                "file": d.file,
                "name": d.name,
                "changed": d.decision_changed(),
                "deployment": pair(json!(d.old.deployment), json!(d.new.deployment)),
                "offer": pair(json!(d.old.offer), json!(d.new.offer)),
                "headline_cost": {
                    "old": { "name": d.headline.names.0, "value": d.headline.old },
                    "new": { "name": d.headline.names.1, "value": d.headline.new },
                },
                "warnings": pair(json!(a), json!(b)),
                "warnings_added": added,
                "warnings_removed": removed,
                "other_figures": d
                    .figure_changes()
                    .into_iter()
                    .map(|(name, old, new)| json!({ "name": name, "old": old, "new": new }))
                    .collect::<Vec<_>>(),
                "change_starts": d.change_starts().into_iter().map(|c| json!({
                    "node": c.at,
                    "old": c.old,
                    "new": c.new,
                    "in_old_policy": c.in_old_policy,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let changed = diffs.iter().filter(|d| d.decision_changed()).count();
    let report = json!({
        "old": policy(old),
        "new": policy(new),
        "as_of": as_of.to_string(),
        "profiles_decided": diffs.len(),
        "changed": changed,
        "unchanged": diffs.len() - changed,
        "rule_changes": policy_changes_in(old, new, Style::Full),
        "profiles": profiles,
    });
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

/// One changed profile: the decision before and after, figures, and where the change starts.
fn details(out: &mut String, d: &ProfileDiff) {
    let _ = writeln!(
        out,
        "\n## {} (`{}`)\n",
        md_escape(&d.name),
        md_escape(&d.file)
    );
    let _ = writeln!(
        out,
        "- Deployment: {}",
        arrow(&d.old.deployment, &d.new.deployment)
    );
    let _ = writeln!(
        out,
        "- Offer: {}",
        arrow(&format!("`{}`", d.old.offer), &format!("`{}`", d.new.offer))
    );
    let _ = writeln!(
        out,
        "- Monthly cost: {}",
        money_change(d.headline.old, d.headline.new)
    );
    let _ = writeln!(out, "- Warnings: {}", warnings_change(&d.old, &d.new));
    for (id, before, after) in d.other_figures() {
        let _ = writeln!(
            out,
            "- `{id}`: {} → {}",
            md_escape(&before),
            md_escape(&after)
        );
    }
    let firsts = d.first_differences();
    if !firsts.is_empty() {
        out.push_str(
            "\nWhere the change starts (values that differ while their inputs do not):\n\n",
        );
        for (id, before, after) in firsts {
            let _ = writeln!(
                out,
                "- `{id}`: {} → {}",
                md_escape(&before),
                md_escape(&after)
            );
        }
    }
}

/// How a node's value changed; for maps (per-offer facts), only the keys that changed.
fn value_changes(
    id: &str,
    old: &Value,
    new: &Value,
) -> Vec<(String, Option<Value>, Option<Value>)> {
    match (old, new) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().collect();
            keys.extend(b.keys().filter(|k| !a.contains_key(*k)));
            keys.into_iter()
                .filter(|k| a.get(*k) != b.get(*k))
                .map(|k| (format!("{id}['{k}']"), a.get(k).cloned(), b.get(k).cloned()))
                .collect()
        }
        _ => vec![(id.to_owned(), Some(old.clone()), Some(new.clone()))],
    }
}

/// Quote rows added, removed or changed between two policies' sheets, matched by hardware,
/// vendor and first day.
fn quote_changes(
    old: &decide_engine::policy::Policy,
    new: &decide_engine::policy::Policy,
    style: Style,
) -> Vec<String> {
    use decide_engine::policy::quotes::Quote;
    let key = |q: &Quote| (q.hardware.clone(), q.vendor.clone(), q.valid_from);
    let place = |p: &decide_engine::policy::Policy, q: &Quote| {
        let name = &p.sources[q.sheet].name;
        let file = decide_engine::source::file_name(name);
        format!("`{}`:{}", style.text(file), q.line)
    };
    let what = |q: &Quote| {
        format!(
            "quote of `{}` from {}, valid from {}",
            q.hardware, q.vendor, q.valid_from
        )
    };
    let cells = |q: &Quote| {
        q.cells
            .iter()
            .filter(|(c, _)| c.ends_with("_price") || c == "unit")
            .map(|(c, v)| format!("{c} {}", style.text(v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for a in &old.quotes {
        match new.quotes.iter().find(|b| key(b) == key(a)) {
            None => out.push(format!(
                "{} removed (was {}; {})",
                what(a),
                cells(a),
                place(old, a)
            )),
            Some(b) => {
                let mut columns: Vec<&String> = a.cells.iter().map(|(c, _)| c).collect();
                columns.extend(
                    b.cells
                        .iter()
                        .map(|(c, _)| c)
                        .filter(|c| !a.cells.iter().any(|(x, _)| x == *c)),
                );
                let get = |q: &Quote, c: &str| {
                    q.cells
                        .iter()
                        .find(|(x, _)| x == c)
                        .map_or_else(|| "(empty)".to_owned(), |(_, v)| style.text(v))
                };
                for c in columns {
                    let (va, vb) = (get(a, c), get(b, c));
                    if va != vb {
                        out.push(format!(
                            "{}: `{c}` {va} → {vb} ({})",
                            what(b),
                            place(new, b)
                        ));
                    }
                }
            }
        }
    }
    for b in new
        .quotes
        .iter()
        .filter(|b| !old.quotes.iter().any(|a| key(a) == key(b)))
    {
        out.push(format!(
            "{} added ({}; {})",
            what(b),
            cells(b),
            place(new, b)
        ));
    }
    out
}

/// How a report writes the values it quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Markdown: text escaped, long values cut with `...`.
    Markdown,
    /// Plain text for a JSON string: nothing escaped, nothing cut.
    Full,
}

impl Style {
    fn text(self, text: &str) -> String {
        match self {
            Style::Markdown => md_escape(text),
            Style::Full => text.to_owned(),
        }
    }

    fn value(self, v: Option<&Value>) -> String {
        match self {
            Style::Markdown => brief_json(v),
            Style::Full => v.map_or_else(|| "(none)".to_owned(), |v| one_line_json(v, None)),
        }
    }
}

/// What changed in the rules themselves: catalog fields, constants, nodes added or removed,
/// and nodes whose expressions were rewritten; as Markdown lines, long values cut.
#[must_use]
pub fn policy_changes(old: &Graph, new: &Graph) -> Vec<String> {
    policy_changes_in(old, new, Style::Markdown)
}

fn policy_changes_in(old: &Graph, new: &Graph, style: Style) -> Vec<String> {
    let (po, pn) = (old.policy(), new.policy());
    // With quote sheets on both sides, prices are compared as quote rows; the offers' own
    // fields are compared without what their quotes give.
    let quoted = po.quote_sheets.is_some() && pn.quote_sheets.is_some();
    let mut out = if quoted {
        quote_changes(po, pn, style)
    } else {
        Vec::new()
    };
    let offers = |p: &decide_engine::policy::Policy| -> Vec<(String, serde_json::Value)> {
        p.offers
            .iter()
            .map(|o| {
                let fields = o
                    .item
                    .fields
                    .iter()
                    .filter(|(k, _)| {
                        !quoted
                            || !decide_engine::policy::quotes::QUOTED_FIELDS.contains(&k.as_str())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                (o.item.id.clone(), serde_json::Value::Object(fields))
            })
            .collect()
    };
    let (oa, ob) = (offers(po), offers(pn));
    for (id, a) in &oa {
        match ob.iter().find(|(i, _)| i == id) {
            None => out.push(format!("offer `{id}` removed from the catalog")),
            Some((_, b)) => {
                let mut fa = Vec::new();
                let mut fb = Vec::new();
                flatten("", a, &mut fa, style);
                flatten("", b, &mut fb, style);
                for (path, va) in &fa {
                    match fb.iter().find(|(p, _)| p == path) {
                        Some((_, vb)) if vb == va => {}
                        Some((_, vb)) => out.push(format!("offer `{id}`: `{path}` {va} → {vb}")),
                        None => out.push(format!("offer `{id}`: `{path}` removed (was {va})")),
                    }
                }
                for (path, vb) in fb.iter().filter(|(p, _)| !fa.iter().any(|(q, _)| q == p)) {
                    out.push(format!("offer `{id}`: `{path}` added ({vb})"));
                }
            }
        }
    }
    for (id, _) in ob.iter().filter(|(i, _)| !oa.iter().any(|(j, _)| j == i)) {
        out.push(format!("offer `{id}` added to the catalog"));
    }
    let (ca, cb) = (old.compiled(), new.compiled());
    for a in &ca.nodes {
        match cb.nodes.iter().find(|b| b.id == a.id) {
            None => out.push(format!("{} `{}` removed", a.kind, a.id)),
            Some(b) => {
                let constant = |n: &decide_engine::graph::Node<'_>| match &n.body {
                    decide_engine::graph::Body::Constant(v) => Some(v.to_string()),
                    _ => None,
                };
                match (constant(a), constant(b)) {
                    (Some(x), Some(y)) if x != y => {
                        out.push(format!("constant `{}`: {x} → {y}", a.id));
                    }
                    _ if a.expr_texts() != b.expr_texts() => {
                        out.push(format!("{} `{}`: an expression changed", a.kind, a.id));
                    }
                    _ => {}
                }
            }
        }
    }
    for b in cb
        .nodes
        .iter()
        .filter(|b| !ca.nodes.iter().any(|a| a.id == b.id))
    {
        out.push(format!("{} `{}` added", b.kind, b.id));
    }
    out
}

/// Leaf values of a JSON tree as dotted paths (lists count as leaves).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>, style: Style) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, out, style);
            }
        }
        other => out.push((prefix.to_owned(), style.value(Some(other)))),
    }
}

fn warning_ids(d: &Decision) -> Vec<&str> {
    d.warnings.iter().map(|w| w.id.as_str()).collect()
}

fn arrow(old: &str, new: &str) -> String {
    if old == new {
        format!("{old} (same)")
    } else {
        format!("{old} → **{new}**")
    }
}

fn cny(v: f64) -> String {
    format!(
        "¥{}",
        group_thousands(v, if v.fract() == 0.0 { 0 } else { 2 })
    )
}

fn money_change(old: Option<f64>, new: Option<f64>) -> String {
    match (old, new) {
        (Some(a), Some(b)) if (a - b).abs() < 0.005 => format!("{} (same)", cny(a)),
        (Some(a), Some(b)) => {
            let delta = b - a;
            let sign = if delta > 0.0 { "+" } else { "−" };
            let pct = if a.abs() > 0.0 {
                format!(", {sign}{:.1}%", (delta / a * 100.0).abs())
            } else {
                String::new()
            };
            format!(
                "{} → **{}** ({sign}{}{pct})",
                cny(a),
                cny(b),
                cny(delta.abs())
            )
        }
        _ => "n/a".to_owned(),
    }
}

fn warnings_change(old: &Decision, new: &Decision) -> String {
    let (a, b) = (warning_ids(old), warning_ids(new));
    let mut parts: Vec<String> = b
        .iter()
        .filter(|w| !a.contains(w))
        .map(|w| format!("+ `{w}`"))
        .collect();
    parts.extend(
        a.iter()
            .filter(|w| !b.contains(w))
            .map(|w| format!("− `{w}`")),
    );
    if parts.is_empty() {
        "(same)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A JSON value on one line, long ones cut.
fn brief_json(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "(none)".to_owned();
    };
    one_line_json(v, Some(80))
}

/// A JSON value on one line (numbers as money is written, strings bare), cut to `max`
/// characters with `...` when given.
fn one_line_json(v: &Value, max: Option<usize>) -> String {
    let text = match v {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => format!("{f:.2}"),
            #[allow(clippy::cast_possible_truncation)] // whole and within i64 (checked)
            Some(f) if f.abs() < 9e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match max {
        Some(max) if text.chars().count() > max => {
            let cut: String = text.chars().take(max - 3).collect();
            format!("{cut}...")
        }
        _ => text,
    }
}
