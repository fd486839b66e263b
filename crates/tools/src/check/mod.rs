//! `decide validate`'s checks beyond loading: unused nodes, offer ids the catalog lacks, the
//! decision-table analysis of [`tables`] and the search for broken invariants of
//! [`invariants`]. ([`reference`] holds the rule language to minijinja for the tests.)
//!
//! Loading and compiling already refuse what cannot run (schema, expressions, references,
//! cycles, duplicate ids, fallbacks, catalog fields), all faults at once. What is left are
//! mistakes that still run but are almost certainly not meant: a fact nobody reads, a row that
//! can never win, `catalog['h100-x8']` when the catalog says `h100-x8-ningxia1`. Those are
//! findings: warnings that make `decide validate` exit 1.

pub(crate) mod exact;
pub mod invariants;
pub mod reference;
pub(crate) mod space;
pub mod tables;

use std::collections::HashSet;

use decide_lang::lexer::{Token, tokens};
use decide_lang::template::{Segment, segments};
use serde_saphyr::Location;

use decide_engine::error::Error;
use decide_engine::graph::Graph;
use decide_engine::kind::NodeKind;

pub use invariants::{InvariantReport, SearchProof};
pub use tables::TableReport;

/// Everything `decide validate` found in a policy that compiles.
#[derive(Debug)]
pub struct Report {
    /// Likely mistakes, each a warning with file, line and a fix.
    pub findings: Vec<Error>,
    /// One entry per decision table.
    pub tables: Vec<TableReport>,
    /// The search for profiles that break an invariant.
    pub invariants: InvariantReport,
    /// The proof that each search's `over:` lists lose nothing its `reference:` lists find.
    pub searches: SearchProof,
    /// What the rules' expressions and texts compiled to.
    pub expressions: ExpressionReport,
    /// How many nodes of each kind, in the order kinds are written.
    pub counts: Vec<(NodeKind, usize)>,
    pub offers: usize,
    pub files: usize,
}

impl Report {
    /// Every finding, the table analysis's and the invariant search's included.
    pub fn all_findings(&self) -> impl Iterator<Item = &Error> {
        self.findings
            .iter()
            .chain(self.tables.iter().flat_map(|t| t.findings.iter()))
            .chain(self.invariants.findings.iter())
            .chain(self.searches.findings.iter())
    }
}

/// Runs every check that needs a compiled graph. `witnesses` are the profiles of the policy's
/// own test cases, which the decision-table analysis takes as proof that a row it did not meet
/// is alive ([`tables::analyse`]).
#[must_use]
pub fn check(
    graph: &Graph,
    as_of: jiff::civil::Date,
    witnesses: &[decide_engine::profile::Profile],
) -> Report {
    check_with(graph, as_of, witnesses, &mut |_| {})
}

/// The checks [`check_with`] runs, in order, for a caller that shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Unused nodes and offer ids.
    Nodes,
    /// The decision tables: gaps, overlaps, rows no profile reaches.
    Tables,
    /// The search for a decision that breaks an invariant.
    Invariants,
    /// Each configuration search held to its reference lists.
    Searches,
}

impl Phase {
    /// Every phase, in the order run.
    pub const ALL: [Phase; 4] = [
        Phase::Nodes,
        Phase::Tables,
        Phase::Invariants,
        Phase::Searches,
    ];

    /// What the phase does, as a progress line says it.
    #[must_use]
    pub fn doing(self) -> &'static str {
        match self {
            Phase::Nodes => "checking nodes and offer ids",
            Phase::Tables => "analysing the decision tables",
            Phase::Invariants => "searching generated profiles for a broken invariant",
            Phase::Searches => "holding each configuration search to its reference lists",
        }
    }
}

/// Like [`check`], calling `on_phase` as each phase starts.
pub fn check_with(
    graph: &Graph,
    as_of: jiff::civil::Date,
    witnesses: &[decide_engine::profile::Profile],
    on_phase: &mut dyn FnMut(Phase),
) -> Report {
    let policy = graph.policy();
    on_phase(Phase::Nodes);
    let mut findings = unused_nodes(graph);
    findings.extend(unknown_offer_ids(graph));
    let mut counts: Vec<(NodeKind, usize)> = Vec::new();
    for node in &graph.compiled().nodes {
        match counts.iter_mut().find(|(k, _)| *k == node.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((node.kind, 1)),
        }
    }
    on_phase(Phase::Tables);
    let tables = tables::analyse(graph, as_of, witnesses);
    on_phase(Phase::Invariants);
    let invariants = invariants::search(graph, as_of);
    on_phase(Phase::Searches);
    let searches = invariants::prove_searches(graph, as_of);
    Report {
        findings,
        tables,
        invariants,
        searches,
        expressions: ExpressionReport::of(graph),
        counts,
        offers: policy.offers.len(),
        files: policy.sources.len(),
    }
}

/// What the rules' expressions and texts compiled to (each expression was typed and compiled
/// when the rules loaded, or they would not have loaded).
#[derive(Debug, Default)]
pub struct ExpressionReport {
    /// Rule expressions, outputs included.
    pub expressions: usize,
    /// Of those, the ones that give a number of a declared unit (`cny/month`), or a record or
    /// list of them.
    pub measured: usize,
    /// The facts, the offer fields and the profile fields that declare what their numbers
    /// measure (`quantity:`, `offer_quantities:`, `profile_quantities:`).
    pub declared: usize,
    /// Text templates rendered from an evaluation (criteria, warnings, checklist items,
    /// invariant messages).
    pub texts: usize,
    /// The texts of criteria, warnings, checklist items and invariants (`met`, `not_met`,
    /// `message`, `text`).
    pub explanations: usize,
    /// Of those, the ones written as rows of condition and sentence.
    pub explained_as_rows: usize,
    /// Their rows, phrases' rows included, and their phrases.
    pub rows: usize,
    pub phrases: usize,
    /// The others whose template holds logic of its own (`{% %}` tags), by name (`id.part`).
    pub programs: Vec<String>,
}

impl ExpressionReport {
    fn of(graph: &Graph) -> Self {
        let c = graph.compiled();
        let texts = graph.owner().texts.values().filter(|t| t.from_evaluation);
        let exprs = || {
            c.nodes
                .iter()
                .flat_map(|n| n.exprs())
                .chain(c.outputs.exprs())
        };
        let policy = graph.policy();
        ExpressionReport {
            expressions: exprs().count(),
            measured: exprs().filter(|e| e.ty.measures()).count(),
            declared: policy.offer_quantities.len()
                + policy.profile_quantities.len()
                + policy
                    .nodes
                    .iter()
                    .filter(|n| {
                        matches!(&n.item, decide_engine::policy::rules::RuleNode::Fact(f)
                            if f.measure().is_some())
                    })
                    .count(),
            texts: texts.count(),
            ..Self::default()
        }
        .with_explanations(graph)
    }

    /// Counts the texts of criteria, warnings, checklist items and invariants, as rows or as
    /// templates.
    fn with_explanations(mut self, graph: &Graph) -> Self {
        use decide_engine::policy::rules::{Explanation, Phrase, RuleNode};
        let policy = graph.policy();
        let nodes = policy.nodes.iter().filter_map(|n| {
            let (texts, phrases) = match &n.item {
                RuleNode::Criterion(c) => (
                    vec![("met", &c.met.value), ("not_met", &c.not_met.value)],
                    &c.phrases,
                ),
                RuleNode::Warning(w) => (vec![("message", &w.message.value)], &w.phrases),
                RuleNode::Checklist(c) => (vec![("text", &c.text.value)], &c.phrases),
                _ => return None,
            };
            Some((n.item.id().value.as_str(), texts, phrases))
        });
        let invariants = policy.invariants.iter().map(|n| {
            let i = &n.item;
            (
                i.id.value.as_str(),
                vec![("message", &i.message.value)],
                &i.phrases,
            )
        });
        for (id, texts, phrases) in nodes.chain(invariants) {
            for (part, text) in texts {
                self.explanations += 1;
                match text {
                    Explanation::Rows(rows) => {
                        self.explained_as_rows += 1;
                        self.rows += rows.len();
                    }
                    Explanation::Template(words) => {
                        if words.en.contains("{%")
                            || words.zh.as_deref().is_some_and(|z| z.contains("{%"))
                        {
                            self.programs.push(format!("{id}.{part}"));
                        }
                    }
                }
            }
            self.phrases += phrases.len();
            self.rows += phrases
                .values()
                .map(|p| Phrase::rows(p).len())
                .sum::<usize>();
        }
        self
    }
}

/// Facts, tables and selects whose value nothing reads: no node, no text, no output, no
/// invariant and not the memo template. Criteria, warnings and checklist items are read by the memo itself.
fn unused_nodes(graph: &Graph) -> Vec<Error> {
    let c = graph.compiled();
    let mut used: HashSet<usize> = c.output_deps.iter().copied().collect();
    for node in &c.nodes {
        used.extend(&node.deps);
        used.extend(&node.text_deps);
    }
    for invariant in &c.invariants {
        used.extend(&invariant.deps);
        used.extend(&invariant.text_deps);
    }
    // The templates this policy's memo is written from: a rules folder's `templates/` over
    // the embedded ones (an unreadable folder is reported when a memo is written).
    let rules = match &graph.policy().origin {
        decide_engine::policy::PolicyOrigin::Folder(dir) => Some(dir.as_path()),
        decide_engine::policy::PolicyOrigin::Embedded => None,
    };
    let templates = crate::memo::Templates::for_rules(rules).unwrap_or_default();
    let mut in_templates: HashSet<&str> = HashSet::new();
    for (_, file) in templates.iter() {
        for segment in segments(&file.text).unwrap_or_default() {
            let Segment::Tag { inner, .. } = segment else {
                continue;
            };
            for token in tokens(inner).flatten() {
                if let Token::Ident(name) = token.0 {
                    in_templates.insert(name);
                }
            }
        }
    }
    c.nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            matches!(
                n.kind,
                NodeKind::Fact | NodeKind::Table | NodeKind::Select | NodeKind::Search
            )
                && !used.contains(i)
                && !in_templates.contains(n.id)
        })
        .map(|(_, n)| {
            graph
                .policy()
                .error_at(
                    n.file,
                    n.location,
                    format!(
                        "{} `{}` is never used: no node, text, output or memo template reads it",
                        n.kind, n.id
                    ),
                )
                .field(n.id.to_owned())
                .help("delete it, or mention it where it was meant to count (check for a misspelt name there)")
                .as_warning()
        })
        .collect()
}

/// Offer ids written in the rules that the catalog does not have: `catalog['x']`, a per-offer
/// fact's `['x']`, `….id == 'x'` / `!= 'x'` / `in ['x', ...]`, and table `then:` values under
/// a key `offer` or ending in `_offer`.
fn unknown_offer_ids(graph: &Graph) -> Vec<Error> {
    let policy = graph.policy();
    let c = graph.compiled();
    // Every offer the policy has at any date: a rule may name one not on offer yet.
    let all = policy.all_offer_ids();
    let known: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut keyed: HashSet<&str> = HashSet::from(["catalog"]);
    keyed.extend(c.nodes.iter().filter(|n| n.is_per_offer()).map(|n| n.id));
    let mut found = Vec::new();
    let mut report = |file: usize, location: Location, id: &str, how: &str| {
        if known.contains(&id) {
            return;
        }
        let mut e = policy
            .error_at(
                file,
                location,
                format!("offer id `{id}` ({how}) is not in the catalog"),
            )
            .as_warning();
        if let Some(s) = decide_engine::error::suggest(id, known.iter().copied()) {
            e = e.help(format!("did you mean `{s}`?"));
        }
        found.push(e.help(format!("offers in the catalog: {}", known.join(", "))));
    };
    for e in c.exprs() {
        for (id, how) in offer_literals(e.text, &keyed) {
            report(e.file, e.location, &id, how);
        }
    }
    for t in policy.tables() {
        for row in t.item.rows.iter().chain(&t.item.default) {
            for (key, value) in &row.then {
                if (key == "offer" || key.ends_with("_offer"))
                    && let Some(id) = value.as_str()
                {
                    report(t.file, row.id.referenced, id, "a row's `then:` value");
                }
            }
        }
    }
    found
}

/// String literals in `text` that stand for offer ids, with how they were used.
fn offer_literals(text: &str, keyed: &HashSet<&str>) -> Vec<(String, &'static str)> {
    let tokens: Vec<Token<'_>> = tokens(text).flatten().map(|(t, _)| t).collect();
    let literal = |t: &Token<'_>| match t {
        Token::Str(s) => Some(s.to_string()),
        _ => None,
    };
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let next = |k: usize| tokens.get(i + k);
        match t {
            Token::Ident(name) if keyed.contains(name) => {
                if let (Some(Token::BracketOpen), Some(lit)) = (next(1), next(2).and_then(literal))
                {
                    out.push((lit, "a catalog or per-offer lookup"));
                }
            }
            Token::Dot if matches!(next(1), Some(Token::Ident("id"))) => match next(2) {
                Some(Token::Eq | Token::Ne) => {
                    if let Some(lit) = next(3).and_then(literal) {
                        out.push((lit, "compared with an offer's id"));
                    }
                }
                Some(Token::Ident("in")) if matches!(next(3), Some(Token::BracketOpen)) => {
                    out.extend(
                        tokens[i + 4..]
                            .iter()
                            .take_while(|t| !matches!(t, Token::BracketClose))
                            .filter_map(literal)
                            .map(|lit| (lit, "compared with an offer's id")),
                    );
                }
                _ => {}
            },
            _ => {}
        }
    }
    out
}
