//! The decision graph: every node's expressions compiled once, edges derived from the names
//! they reference, and an evaluation order.
//!
//! Nobody writes edges by hand: a node depends on the nodes its expressions mention (found with
//! minijinja's `undeclared_variables`). That gives three load-time checks for free: a name that
//! is neither a node nor a root (`profile`, `offers`, `catalog`, `as_of`) is an error with a
//! suggestion, a `profile.` path that the profile does not have is an error, and a cycle is
//! reported with every node on it. Text templates (`met:`, `message:`, `text:`) are rendered after
//! the whole graph is evaluated, so they may mention any node without adding edges. Invariants
//! (`holds:`) are compiled like the outputs: they read nodes and are no node themselves.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use minijinja::value::Value;
use minijinja::{Environment, Expression};
use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;
use serde_saphyr::{Location, Spanned};

use crate::error::suggest as suggest_name;
use crate::error::{Error, Result};
use crate::expr;
use crate::lang::Lang;
use crate::policy::rules::{Fact, FieldType, HitPolicy, NoMatch, Pick, Select, Table, Template};
use crate::policy::{Policy, ROOT_NAMES};

/// The kinds of node a policy is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Fact,
    Criterion,
    Table,
    Select,
    Warning,
    Checklist,
}

impl Kind {
    /// `n` nodes of this kind in words: "1 table", "4 criteria", "6 checklist items".
    #[must_use]
    pub fn count(self, n: usize) -> String {
        let (one, many) = match self {
            Kind::Fact => ("fact", "facts"),
            Kind::Criterion => ("criterion", "criteria"),
            Kind::Table => ("table", "tables"),
            Kind::Select => ("select", "selects"),
            Kind::Warning => ("warning", "warnings"),
            Kind::Checklist => ("checklist item", "checklist items"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Fact => "fact",
            Kind::Criterion => "criterion",
            Kind::Table => "table",
            Kind::Select => "select",
            Kind::Warning => "warning",
            Kind::Checklist => "checklist",
        })
    }
}

/// Names expressions can look up, each with its slot in an evaluation: roots first, then nodes.
#[derive(Debug)]
pub(crate) struct Names {
    pub index: HashMap<String, usize>,
}

/// A compiled expression with where it was written.
#[derive(Debug)]
pub(crate) struct Expr<'a> {
    pub compiled: Expression<'a, 'static>,
    /// The same expression for the fast path, when it models every part of it.
    pub fast: Option<crate::interp::Fast>,
    pub text: &'a str,
    pub file: usize,
    pub location: Location,
}

#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // a handful of nodes per policy; boxing buys nothing
pub(crate) enum Body<'a> {
    Constant(Value),
    Fact {
        expr: Expr<'a>,
        ty: FieldType,
        nullable: bool,
        per_offer: bool,
    },
    Criterion {
        when: Expr<'a>,
        met: String,
        not_met: String,
    },
    Table {
        hit: HitPolicy,
        rows: Vec<(Expr<'a>, Value)>,
        default: Option<Value>,
        no_match: NoMatch,
    },
    Select {
        from: Expr<'a>,
        item: &'a str,
        filter: Option<Expr<'a>>,
        order_by: Option<Expr<'a>>,
        map: Option<Expr<'a>>,
        pick: Pick,
    },
    Warning {
        when: Expr<'a>,
        message: String,
    },
    Check {
        when: Option<Expr<'a>>,
        text: String,
    },
}

#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub id: &'a str,
    pub kind: Kind,
    pub title: &'a str,
    pub because: Option<&'a str>,
    pub file: usize,
    pub location: Location,
    pub body: Body<'a>,
    /// Indices (into `nodes`) of the nodes this one reads.
    pub deps: Vec<usize>,
    /// Indices of the nodes this one's text templates mention.
    pub text_deps: Vec<usize>,
    /// The `profile.` paths this node's expressions read, as written.
    pub profile_paths: Vec<String>,
    /// Indices into [`ROOT_NAMES`] of the roots this node's expressions read.
    pub root_deps: Vec<usize>,
}

impl<'a> Node<'a> {
    /// Every expression of this node (not its text templates).
    pub fn exprs(&self) -> Vec<&Expr<'a>> {
        let mut out = Vec::new();
        match &self.body {
            Body::Constant(_) => {}
            Body::Fact { expr, .. } => out.push(expr),
            Body::Criterion { when, .. } | Body::Warning { when, .. } => out.push(when),
            Body::Check { when, .. } => out.extend(when.iter()),
            Body::Table { rows, .. } => out.extend(rows.iter().map(|(e, _)| e)),
            Body::Select {
                from,
                filter,
                order_by,
                map,
                ..
            } => {
                out.push(from);
                out.extend([filter, order_by, map].into_iter().flatten());
            }
        }
        out
    }

    /// The text of every expression of this node.
    pub fn expr_texts(&self) -> Vec<&'a str> {
        self.exprs().into_iter().map(|e| e.text).collect()
    }
}

impl<'a> Outputs<'a> {
    /// Every expression of the outputs.
    pub fn exprs(&self) -> Vec<&Expr<'a>> {
        let mut out = vec![&self.deployment, &self.offer];
        out.extend(self.scenario.iter());
        out.extend(self.costs.iter().map(|(_, e)| e));
        out.extend(self.sections.iter().map(|(_, e)| e));
        out
    }
}

#[derive(Debug)]
pub(crate) struct Outputs<'a> {
    pub deployment: Expr<'a>,
    pub offer: Expr<'a>,
    pub scenario: Option<Expr<'a>>,
    pub costs: Vec<(&'a str, Expr<'a>)>,
    pub sections: Vec<(&'a str, Expr<'a>)>,
}

/// A compiled invariant: like an output expression, it reads nodes and adds none.
#[derive(Debug)]
pub(crate) struct Invariant<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub holds: Expr<'a>,
    /// The name of its `message:` template.
    pub message: String,
    pub file: usize,
    /// Indices of the nodes `holds` reads.
    pub deps: Vec<usize>,
    /// Indices of the nodes the message mentions.
    pub text_deps: Vec<usize>,
    /// The `profile.` paths `holds` reads, as written.
    pub profile_paths: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Compiled<'a> {
    pub nodes: Vec<Node<'a>>,
    /// Node indices in evaluation order.
    pub order: Vec<usize>,
    /// Per node: its slot in an evaluation ([`Names`]).
    pub slot: Vec<usize>,
    pub outputs: Outputs<'a>,
    /// Indices of the nodes the outputs read.
    pub output_deps: Vec<usize>,
    /// Indices into [`ROOT_NAMES`] of the roots the outputs read.
    pub output_roots: Vec<usize>,
    /// Per node: whether its value is the same for every profile (it reads no profile field,
    /// directly or through the nodes it reads).
    pub profile_free: Vec<bool>,
    /// The policy's invariants, checked after every full evaluation.
    pub invariants: Vec<Invariant<'a>>,
}

#[derive(Debug)]
pub(crate) struct Owner {
    pub env: Environment<'static>,
    pub policy: Policy,
    pub names: Arc<Names>,
    /// The catalog as a list and as a map by id, built once.
    pub offers: Value,
    pub catalog: Value,
    /// The language the graph's texts are in.
    pub lang: Lang,
}

self_cell::self_cell!(
    struct Cell {
        owner: Owner,
        #[covariant]
        dependent: Compiled,
    }
    impl {Debug}
);

/// A policy compiled into an evaluable graph. Build it once; evaluate it for many profiles.
#[derive(Debug)]
pub struct Graph {
    cell: Cell,
    /// Values of the nodes that read no profile field, for the last `as_of` date evaluated:
    /// they are the same for every profile (a batch computes them once).
    pub(crate) profile_free: std::sync::Mutex<Option<ProfileFree>>,
}

/// Node values that do not depend on the profile, for one `as_of` date.
#[derive(Debug, Clone)]
pub(crate) struct ProfileFree {
    pub as_of: jiff::civil::Date,
    pub values: Arc<[(usize, Value)]>,
}

/// The `costs` entries the decision record promises (its stable JSON contract).
pub const REQUIRED_COSTS: &[&str] = &[
    crate::diff::MONTHLY_COST,
    "breakeven_hours_per_gpu",
    "breakeven_hours_per_gpu_discounted",
    "bare_metal_monthly_cny",
    "container_monthly_cny",
    "jobs",
];

impl Graph {
    /// Compiles every expression and template of `policy` and orders the nodes.
    pub fn compile(policy: Policy) -> Result<Self> {
        Self::compile_in(policy, Lang::En)
    }

    /// Compiles `policy` with its texts (titles, reasons, messages) in `lang`; a text with no
    /// version in `lang` is taken in English.
    pub fn compile_in(policy: Policy, lang: Lang) -> Result<Self> {
        let owner = build_owner(policy, lang)?;
        Cell::try_new(owner, compile_nodes).map(|cell| Graph {
            cell,
            profile_free: std::sync::Mutex::new(None),
        })
    }

    /// The language the graph's texts are in.
    #[must_use]
    pub fn lang(&self) -> Lang {
        self.owner().lang
    }

    pub(crate) fn owner(&self) -> &Owner {
        self.cell.borrow_owner()
    }

    pub(crate) fn compiled(&self) -> &Compiled<'_> {
        self.cell.borrow_dependent()
    }

    /// The policy this graph was compiled from.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.owner().policy
    }

    /// Node ids in evaluation order with their kind and the ids they read.
    #[must_use]
    pub fn nodes(&self) -> Vec<(&str, Kind, Vec<&str>)> {
        let c = self.compiled();
        c.order
            .iter()
            .map(|&i| {
                let n = &c.nodes[i];
                (
                    n.id,
                    n.kind,
                    n.deps.iter().map(|&d| c.nodes[d].id).collect(),
                )
            })
            .collect()
    }
}

fn build_owner(policy: Policy, lang: Lang) -> Result<Owner> {
    let mut env = expr::environment();
    let mut index = HashMap::new();
    for name in ROOT_NAMES {
        index.insert((*name).to_owned(), index.len());
    }
    let add_text =
        |env: &mut Environment<'static>, file: usize, id: &str, part: &str, text: &Template| {
            let name = format!("{id}.{part}");
            env.add_template_owned(name.clone(), text.value.get(lang).to_owned())
                .map_err(|e| template_error(&policy, file, text, id, part, &e))?;
            Ok::<_, Error>(())
        };
    for n in &policy.criteria {
        add_text(&mut env, n.file, &n.item.id.value, "met", &n.item.met)?;
        add_text(
            &mut env,
            n.file,
            &n.item.id.value,
            "not_met",
            &n.item.not_met,
        )?;
    }
    // Warnings and invariants both have a `message:` (an invariant's is shown only when broken).
    let messages = policy
        .warnings
        .iter()
        .map(|n| (n.file, &n.item.id.value, &n.item.message))
        .chain(
            policy
                .invariants
                .iter()
                .map(|n| (n.file, &n.item.id.value, &n.item.message)),
        );
    for (file, id, message) in messages {
        add_text(&mut env, file, id, "message", message)?;
    }
    for n in &policy.checklist {
        add_text(&mut env, n.file, &n.item.id.value, "text", &n.item.text)?;
    }
    if let Some(n) = &policy.sensitivity {
        add_text(&mut env, n.file, "sensitivity", "text", &n.item.text)?;
        if let Some(unchanged) = &n.item.unchanged {
            add_text(&mut env, n.file, "sensitivity", "unchanged", unchanged)?;
        }
        for (i, probe) in n.item.fields.iter().enumerate() {
            add_text(
                &mut env,
                n.file,
                "sensitivity",
                &format!("says.{i}"),
                &probe.says,
            )?;
        }
    }
    for id in node_ids(&policy) {
        index.insert(id.to_owned(), index.len());
    }
    let offers: Vec<Value> = policy
        .offers
        .iter()
        .map(|o| {
            let fields = serde_json::Value::Object(o.item.fields.clone());
            Value::from(minijinja::value::Serde(crate::lang::localize(
                &fields, lang,
            )))
        })
        .collect();
    let catalog = Value::from_pairs(
        policy
            .offers
            .iter()
            .zip(&offers)
            .map(|(o, v)| (o.item.id.clone(), v.clone())),
    );
    Ok(Owner {
        env,
        names: Arc::new(Names { index }),
        offers: Value::from(offers),
        catalog,
        policy,
        lang,
    })
}

fn node_ids(policy: &Policy) -> impl Iterator<Item = &str> {
    crate::policy::node_ids(policy)
        .into_iter()
        .map(|(_, id)| id.value.as_str())
}

/// Everything the compiler needs to resolve names.
struct Scope<'a> {
    owner: &'a Owner,
    profile_paths: ProfilePaths,
    globals: HashSet<String>,
    node_index: HashMap<&'a str, usize>,
}

impl<'a> Scope<'a> {
    /// Compiles `text` and returns it with the node indices it reads. `bound` are names the
    /// node binds itself (`offer` in a per-offer fact, a select's item).
    fn expr(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        bound: &[&str],
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
        let policy = &self.owner.policy;
        if text.value.trim().is_empty() {
            return Err(policy
                .error_at(
                    file,
                    text.referenced,
                    format!("{}: `{field}` is empty", subject(policy, node)),
                )
                .field(format!("{node}.{field}")));
        }
        let compiled = self
            .owner
            .env
            .compile_expression_owned(text.value.clone())
            .map_err(|e| {
                let detail = e.detail().unwrap_or("syntax error").to_owned();
                policy
                    .error_at(
                        file,
                        text.referenced,
                        format!(
                            "{}: `{field}` does not compile: {detail}",
                            subject(policy, node)
                        ),
                    )
                    .field(format!("{node}.{field}"))
                    .help(format!("the expression is: {}", text.value.trim()))
            })?;
        self.resolve(
            file,
            text.referenced,
            node,
            field,
            bound,
            &compiled.undeclared_variables(true),
            reads,
        )?;
        Ok(Expr {
            compiled,
            fast: crate::interp::Fast::compile(&text.value, &self.owner.names, bound),
            text: &text.value,
            file,
            location: text.referenced,
        })
    }

    /// Checks that every referenced name exists and records node dependencies.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &self,
        file: usize,
        at: Location,
        node: &str,
        field: &str,
        bound: &[&str],
        nested: &HashSet<String>,
        reads: &mut Reads,
    ) -> Result<()> {
        let policy = &self.owner.policy;
        let mut names: Vec<&String> = nested.iter().collect();
        names.sort();
        for path in names {
            let root = path.split('.').next().unwrap_or(path);
            if bound.contains(&root) || self.globals.contains(root) {
                continue;
            }
            if root == "profile" {
                if let Err(hint) = self.profile_paths.check(path) {
                    return Err(policy
                        .error_at(
                            file,
                            at,
                            format!("{}: `{path}` is not a profile field", subject(policy, node)),
                        )
                        .field(format!("{node}.{field}"))
                        .help(hint));
                }
                reads.profile.insert(path.clone());
                reads
                    .roots
                    .extend(ROOT_NAMES.iter().position(|r| *r == "profile"));
                continue;
            }
            if let Some(&i) = self.node_index.get(root) {
                reads.nodes.insert(i);
                continue;
            }
            if let Some(i) = ROOT_NAMES.iter().position(|r| *r == root) {
                reads.roots.insert(i);
                continue;
            }
            let candidates = self
                .node_index
                .keys()
                .copied()
                .chain(ROOT_NAMES.iter().copied())
                .chain(bound.iter().copied());
            let mut err = policy
                .error_at(
                    file,
                    at,
                    format!(
                        "{}: unknown name `{root}` in `{field}`",
                        subject(policy, node)
                    ),
                )
                .field(format!("{node}.{field}"));
            err = match suggest_name(root, candidates) {
                Some(s) => err.help(format!("did you mean `{s}`?")),
                None => err.help("names are node ids, `profile`, `offers`, `catalog` and `as_of`"),
            };
            return Err(err);
        }
        Ok(())
    }

    /// Checks the names a text template mentions (no edges: texts render last).
    fn text(
        &self,
        file: usize,
        text: &Template,
        node: &str,
        part: &str,
        reads: &mut Reads,
    ) -> Result<()> {
        let template = self
            .owner
            .env
            .get_template(&format!("{node}.{part}"))
            .map_err(|e| template_error(&self.owner.policy, file, text, node, part, &e))?;
        let mut mentioned = Reads::default();
        self.resolve(
            file,
            text.referenced,
            node,
            part,
            &[],
            &template.undeclared_variables(true),
            &mut mentioned,
        )?;
        reads.texts.extend(mentioned.nodes);
        Ok(())
    }
}

/// How errors name what `id` is: "node `x`", or "invariant `x`" (invariants are not nodes).
fn subject(policy: &Policy, id: &str) -> String {
    if policy.invariants.iter().any(|n| n.item.id.value == id) {
        format!("invariant `{id}`")
    } else {
        format!("node `{id}`")
    }
}

fn template_error(
    policy: &Policy,
    file: usize,
    text: &Template,
    node: &str,
    part: &str,
    e: &minijinja::Error,
) -> Error {
    let detail = e.detail().unwrap_or("syntax error");
    let line = e
        .line()
        .map_or(String::new(), |l| format!(" (line {l} of the text)"));
    policy
        .error_at(
            file,
            text.referenced,
            format!(
                "{}: `{part}` template does not compile: {detail}{line}",
                subject(policy, node)
            ),
        )
        .field(format!("{node}.{part}"))
}

/// What one node's expressions read: other nodes (edges) and profile fields.
#[derive(Debug, Default)]
struct Reads {
    nodes: BTreeSet<usize>,
    profile: BTreeSet<String>,
    /// Nodes mentioned only by text templates (no edge: texts render last).
    texts: BTreeSet<usize>,
    /// Indices into [`ROOT_NAMES`] of the roots the expressions read.
    roots: BTreeSet<usize>,
}

/// One node compiled: its body and what it reads, or the error that stopped it.
type NodeResult<'a> = Result<(Body<'a>, Reads)>;

#[allow(clippy::too_many_lines)] // one short arm per node kind, read top to bottom
/// Compiles every node, collecting every fault (not just the first) so that one run of
/// `decide validate` shows them all. A node that fails still gets a place (with no body and no
/// edges), so that the others' references and the cycle check still work.
fn compile_nodes<'a>(owner: &'a Owner) -> Result<Compiled<'a>> {
    let policy = &owner.policy;
    let lang = owner.lang;
    let mut globals: HashSet<String> = owner.env.globals().map(|(k, _)| k.to_owned()).collect();
    globals.extend(expr::FUNCTIONS.iter().map(|s| (*s).to_owned()));
    let node_index: HashMap<&str, usize> = node_ids(policy)
        .enumerate()
        .map(|(i, id)| (id, i))
        .collect();
    let scope = Scope {
        owner,
        profile_paths: ProfilePaths::from_schema(),
        globals,
        node_index,
    };
    let mut nodes: Vec<Node<'_>> = Vec::new();
    let mut errors: Vec<Error> = Vec::new();
    let mut push = |id: &'a Spanned<String>,
                    kind,
                    title: &'a str,
                    because: Option<&'a str>,
                    file,
                    result: NodeResult<'a>| {
        let (body, reads) = result.unwrap_or_else(|e| {
            errors.extend(e.into_all());
            (Body::Constant(Value::UNDEFINED), Reads::default())
        });
        nodes.push(Node {
            id: &id.value,
            kind,
            title,
            because,
            file,
            location: id.referenced,
            body,
            deps: reads.nodes.into_iter().collect(),
            text_deps: reads.texts.into_iter().collect(),
            profile_paths: reads.profile.into_iter().collect(),
            root_deps: reads.roots.into_iter().collect(),
        });
    };

    for n in &policy.facts {
        let f = &n.item;
        let result = scope.fact(n.file, f);
        push(
            &f.id,
            Kind::Fact,
            f.title.get(lang),
            f.because.as_ref().map(|b| b.get(lang)),
            n.file,
            result,
        );
    }
    for n in &policy.criteria {
        let c = &n.item;
        let result = scope.condition_node(
            n.file,
            &c.id.value,
            Some(&c.when),
            &[("met", &c.met), ("not_met", &c.not_met)],
            |when, texts| Body::Criterion {
                when: when.expect("criteria have a condition"),
                met: texts[0].clone(),
                not_met: texts[1].clone(),
            },
        );
        push(
            &c.id,
            Kind::Criterion,
            c.title.get(lang),
            c.because.as_ref().map(|b| b.get(lang)),
            n.file,
            result,
        );
    }
    for n in &policy.tables {
        let t = &n.item;
        let result = scope.table(n.file, t);
        push(
            &t.id,
            Kind::Table,
            t.title.get(lang),
            t.because.as_ref().map(|b| b.get(lang)),
            n.file,
            result,
        );
    }
    for n in &policy.selects {
        let s = &n.item;
        let result = scope.select(n.file, s);
        push(
            &s.id,
            Kind::Select,
            s.title.get(lang),
            s.because.as_ref().map(|b| b.get(lang)),
            n.file,
            result,
        );
    }
    for n in &policy.warnings {
        let w = &n.item;
        let result = scope.condition_node(
            n.file,
            &w.id.value,
            Some(&w.when),
            &[("message", &w.message)],
            |when, texts| Body::Warning {
                when: when.expect("warnings have a condition"),
                message: texts[0].clone(),
            },
        );
        push(
            &w.id,
            Kind::Warning,
            w.title.get(lang),
            w.because.as_ref().map(|b| b.get(lang)),
            n.file,
            result,
        );
    }
    for n in &policy.checklist {
        let c = &n.item;
        let result = scope.condition_node(
            n.file,
            &c.id.value,
            c.when.as_ref(),
            &[("text", &c.text)],
            |when, texts| Body::Check {
                when,
                text: texts[0].clone(),
            },
        );
        push(
            &c.id,
            Kind::Checklist,
            c.title.get(lang),
            None,
            n.file,
            result,
        );
    }

    if let Some(n) = &policy.sensitivity {
        for probe in &n.item.fields {
            let field = &probe.field.value;
            let fault = |message: String, help: String| {
                policy
                    .error_at(n.file, probe.field.referenced, message)
                    .field("sensitivity.fields")
                    .help(help)
            };
            if let Some(pair) = &probe.line_under
                && !n.item.fields.iter().any(|f| &f.field.value == pair)
            {
                errors.push(fault(
                    format!(
                        "sensitivity: `{field}` has `line_under: {pair}`, which is not a field the analysis varies"
                    ),
                    "name one of the `field:` entries of `sensitivity.fields`".to_owned(),
                ));
            }
            if let Err(hint) = scope.profile_paths.check(&format!("profile.{field}")) {
                errors.push(fault(
                    format!("sensitivity: `{field}` is not a profile field"),
                    hint,
                ));
            }
        }
    }
    check_questions(policy, &scope, &mut errors);
    let outputs = match scope.outputs() {
        Ok(outputs) => Some(outputs),
        Err(e) => {
            errors.extend(e.into_all());
            None
        }
    };
    let mut invariants = Vec::with_capacity(policy.invariants.len());
    for n in &policy.invariants {
        match scope.invariant(n.file, &n.item) {
            Ok(invariant) => invariants.push(invariant),
            Err(e) => errors.extend(e.into_all()),
        }
    }
    if let Err(e) = order(policy, &nodes) {
        errors.push(e);
    }
    if let Some(e) = Error::many(errors) {
        return Err(e);
    }
    let (outputs, output_reads) = outputs.expect("outputs compiled when there is no error");
    let order = stable_order(&nodes);
    let mut profile_free = vec![false; nodes.len()];
    for &i in &order {
        let n = &nodes[i];
        profile_free[i] = n.profile_paths.is_empty() && n.deps.iter().all(|&d| profile_free[d]);
    }
    Ok(Compiled {
        slot: nodes.iter().map(|n| owner.names.index[n.id]).collect(),
        nodes,
        order,
        outputs,
        output_deps: output_reads.nodes.into_iter().collect(),
        output_roots: output_reads.roots.into_iter().collect(),
        profile_free,
        invariants,
    })
}

impl<'a> Scope<'a> {
    fn fact(&self, file: usize, f: &'a Fact) -> NodeResult<'a> {
        let policy = &self.owner.policy;
        let mut reads = Reads::default();
        let body = match (&f.expr, &f.value) {
            (Some(e), None) => {
                let bound: &[&str] = if f.per_offer { &["offer"] } else { &[] };
                Body::Fact {
                    expr: self.expr(file, e, &f.id.value, "expr", bound, &mut reads)?,
                    ty: f.kind,
                    nullable: f.nullable,
                    per_offer: f.per_offer,
                }
            }
            (None, Some(v)) => {
                if !crate::policy::type_matches(f.kind, &v.value) {
                    return Err(policy
                        .error_at(
                            file,
                            v.referenced,
                            format!(
                                "fact `{}` has value {}, expected {}",
                                f.id.value,
                                v.value,
                                crate::policy::type_name(f.kind)
                            ),
                        )
                        .field(format!("{}.value", f.id.value)));
                }
                Body::Constant(Value::from(minijinja::value::Serde(&v.value)))
            }
            _ => {
                return Err(policy
                    .error_at(
                        file,
                        f.id.referenced,
                        format!(
                            "fact `{}` needs exactly one of `expr:` and `value:`",
                            f.id.value
                        ),
                    )
                    .field(f.id.value.clone()));
            }
        };
        Ok((body, reads))
    }

    /// A criterion, warning or checklist item: an optional condition and texts rendered last.
    fn condition_node(
        &self,
        file: usize,
        id: &str,
        when: Option<&'a Spanned<String>>,
        texts: &[(&str, &Template)],
        body: impl FnOnce(Option<Expr<'a>>, &[String]) -> Body<'a>,
    ) -> NodeResult<'a> {
        let mut reads = Reads::default();
        let when = when
            .map(|e| self.expr(file, e, id, "when", &[], &mut reads))
            .transpose();
        let mut errors = Vec::new();
        let mut names = Vec::with_capacity(texts.len());
        for (part, text) in texts {
            if let Err(e) = self.text(file, text, id, part, &mut reads) {
                errors.push(e);
            }
            names.push(format!("{id}.{part}"));
        }
        let when = match when {
            Ok(when) => when,
            Err(e) => {
                errors.insert(0, e);
                None
            }
        };
        match Error::many(errors) {
            Some(e) => Err(e),
            None => Ok((body(when, &names), reads)),
        }
    }

    fn table(&self, file: usize, t: &'a Table) -> NodeResult<'a> {
        let policy = &self.owner.policy;
        let mut reads = Reads::default();
        let mut rows = Vec::with_capacity(t.rows.len());
        let mut errors = Vec::new();
        for row in &t.rows {
            let Some(when) = &row.when else {
                errors.push(
                    policy
                        .error_at(
                            file,
                            row.id.referenced,
                            format!(
                                "table `{}`: row `{}` has no `when:`",
                                t.id.value, row.id.value
                            ),
                        )
                        .help("only the `default:` row goes without a condition"),
                );
                continue;
            };
            let field = format!("rows.{}.when", row.id.value);
            match self.expr(file, when, &t.id.value, &field, &[], &mut reads) {
                Ok(expr) => rows.push((expr, row_value(row, self.owner.lang))),
                Err(e) => errors.push(e),
            }
        }
        if let Some(row) = &t.default
            && row.when.is_some()
        {
            errors.push(
                policy
                    .error_at(
                        file,
                        row.id.referenced,
                        format!("table `{}`: the `default:` row has a `when:`", t.id.value),
                    )
                    .help("the default row applies when no other row matches; remove its `when:`"),
            );
        }
        let no_match = match (&t.default, t.no_match, t.hit) {
            (Some(_), Some(_), _) => {
                errors.push(
                    policy
                        .error_at(
                            file,
                            t.id.referenced,
                            format!(
                                "table `{}` has both a `default:` row and `no_match:`",
                                t.id.value
                            ),
                        )
                        .help("give one: the default row is what `no match` gives"),
                );
                NoMatch::None
            }
            (None, None, HitPolicy::First | HitPolicy::Unique) => {
                errors.push(
                    policy
                        .error_at(
                            file,
                            t.id.referenced,
                            format!(
                                "table `{}` has no fallback for when no row matches",
                                t.id.value
                            ),
                        )
                        .field(format!("{}.default", t.id.value))
                        .help("add a `default:` row, or `no_match: none` if \"no row\" is a valid answer (the value is then none), or `no_match: error` if the rows must cover every input"),
                );
                NoMatch::None
            }
            (_, Some(no_match), _) => no_match,
            (_, None, _) => NoMatch::None,
        };
        if let Some(e) = Error::many(errors) {
            return Err(e);
        }
        let body = Body::Table {
            hit: t.hit,
            rows,
            default: t.default.as_ref().map(|r| row_value(r, self.owner.lang)),
            no_match,
        };
        Ok((body, reads))
    }

    fn select(&self, file: usize, s: &'a Select) -> NodeResult<'a> {
        let mut reads = Reads::default();
        let id = &s.id.value;
        let item: &[&str] = &[s.item.as_str()];
        let mut optional = |e: &'a Option<Spanned<String>>, field: &str| {
            e.as_ref()
                .map(|e| self.expr(file, e, id, field, item, &mut reads))
                .transpose()
        };
        let filter = optional(&s.filter, "where")?;
        let order_by = optional(&s.order_by, "order_by")?;
        let map = optional(&s.map, "map")?;
        let body = Body::Select {
            from: self.expr(file, &s.from, id, "from", &[], &mut reads)?,
            item: &s.item,
            filter,
            order_by,
            map,
            pick: s.pick,
        };
        Ok((body, reads))
    }

    /// An invariant: its `holds:` compiled like an output expression (it reads nodes and adds
    /// no edge), its message checked like a warning's.
    fn invariant(
        &self,
        file: usize,
        n: &'a crate::policy::rules::Invariant,
    ) -> Result<Invariant<'a>> {
        let id = &n.id.value;
        let mut reads = Reads::default();
        let holds = self.expr(file, &n.holds, id, "holds", &[], &mut reads);
        let text = self.text(file, &n.message, id, "message", &mut reads);
        let holds = match (holds, text) {
            (Ok(holds), Ok(())) => holds,
            (Err(a), Err(b)) => return Err(Error::many(vec![a, b]).expect("two errors")),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        Ok(Invariant {
            id,
            title: n.title.get(self.owner.lang),
            holds,
            message: format!("{id}.message"),
            file,
            deps: reads.nodes.into_iter().collect(),
            text_deps: reads.texts.into_iter().collect(),
            profile_paths: reads.profile.into_iter().collect(),
        })
    }

    fn outputs(&self) -> Result<(Outputs<'a>, Reads)> {
        let policy = &self.owner.policy;
        let out = &policy.outputs;
        let o = &out.item;
        let mut reads = Reads::default();
        let mut expr = |e: &'a Spanned<String>, field: &str| {
            self.expr(out.file, e, "outputs", field, &[], &mut reads)
        };
        let outputs = Outputs {
            deployment: expr(&o.deployment, "deployment")?,
            offer: expr(&o.offer, "offer")?,
            scenario: o
                .scenario
                .as_ref()
                .map(|e| expr(e, "scenario"))
                .transpose()?,
            costs: o
                .costs
                .iter()
                .map(|(k, e)| Ok((k.as_str(), expr(e, &format!("costs.{k}"))?)))
                .collect::<Result<_>>()?,
            sections: o
                .sections
                .iter()
                .map(|(k, e)| Ok((k.as_str(), expr(e, &format!("sections.{k}"))?)))
                .collect::<Result<_>>()?,
        };
        for (name, e) in &o.sections {
            if crate::decision::RECORD_FIELDS.contains(&name.as_str()) {
                return Err(policy
                    .error_at(
                        out.file,
                        e.referenced,
                        format!(
                            "`outputs.sections.{name}` would replace the record's own `{name}`"
                        ),
                    )
                    .field(format!("outputs.sections.{name}"))
                    .help(format!(
                        "the record already has: {}; choose another name",
                        crate::decision::RECORD_FIELDS.join(", ")
                    )));
            }
        }
        for required in REQUIRED_COSTS {
            if !o.costs.contains_key(*required) {
                return Err(policy
                    .error_at(
                        out.file,
                        o.deployment.referenced,
                        format!("`outputs.costs` has no `{required}`"),
                    )
                    .field("outputs.costs")
                    .help(format!(
                        "the decision record needs these costs: {}",
                        REQUIRED_COSTS.join(", ")
                    )));
            }
        }
        Ok((outputs, reads))
    }
}

fn row_value(row: &crate::policy::rules::Row, lang: Lang) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("id".into(), row.id.value.clone().into());
    map.insert("title".into(), row.title.get(lang).into());
    if let Some(b) = &row.because {
        map.insert("because".into(), b.get(lang).into());
    }
    for (k, v) in &row.then {
        map.insert(k.clone(), v.clone());
    }
    Value::from(minijinja::value::Serde(map))
}

/// An error naming every node of the first cycle in order, if there is a cycle.
fn order(policy: &Policy, nodes: &[Node<'_>]) -> Result<()> {
    let mut g: DiGraph<usize, ()> = DiGraph::with_capacity(nodes.len(), nodes.len() * 2);
    let idx: Vec<NodeIndex> = (0..nodes.len()).map(|i| g.add_node(i)).collect();
    for (i, n) in nodes.iter().enumerate() {
        for &d in &n.deps {
            g.add_edge(idx[d], idx[i], ());
        }
    }
    if toposort(&g, None).is_err() {
        let cycle = find_cycle(&g, nodes);
        let first = &nodes[cycle[0]];
        let path: Vec<&str> = cycle
            .iter()
            .chain(cycle.first())
            .map(|&i| nodes[i].id)
            .collect();
        let mut err = policy
            .error_at(
                first.file,
                first.location,
                format!("the rules have a cycle: {}", path.join(" → ")),
            )
            .field(first.id.to_owned());
        for &i in &cycle {
            let n = &nodes[i];
            err = err.help(format!(
                "`{}` ({}) is at {}:{}",
                n.id,
                n.kind,
                policy.sources[n.file].name,
                n.location.line()
            ));
        }
        return Err(err.help("a node cannot depend on itself, directly or through others; break one of these references"));
    }
    Ok(())
}

/// Kahn's algorithm, always taking the ready node declared first, so the trace reads in the
/// order the policy is written wherever dependencies allow.
fn stable_order(nodes: &[Node<'_>]) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut waiting: Vec<usize> = nodes.iter().map(|n| n.deps.len()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for &d in &n.deps {
            dependents[d].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..nodes.len())
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.push(Reverse(j));
            }
        }
    }
    order
}

/// Every node of one cycle, in reference order, starting from its smallest id.
fn find_cycle(g: &DiGraph<usize, ()>, nodes: &[Node<'_>]) -> Vec<usize> {
    let mut sccs: Vec<Vec<usize>> = tarjan_scc(g)
        .into_iter()
        .map(|c| c.into_iter().map(|n| g[n]).collect::<Vec<_>>())
        .filter(|c: &Vec<usize>| c.len() > 1 || nodes[c[0]].deps.contains(&c[0]))
        .collect();
    sccs.sort_by_key(|c| c.iter().map(|&i| nodes[i].id).min());
    let scc = sccs.into_iter().next().unwrap_or_default();
    let members: HashSet<usize> = scc.iter().copied().collect();
    let Some(&start) = scc.iter().min_by_key(|&&i| nodes[i].id) else {
        return Vec::new();
    };
    // Walk dependents inside the component until we come back to the start.
    let mut path = vec![start];
    let mut seen = HashSet::from([start]);
    let mut current = start;
    loop {
        let next = nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| members.contains(i) && n.deps.contains(&current))
            .map(|(i, _)| i)
            .min_by_key(|&i| (i != start, nodes[i].id));
        match next {
            Some(n) if n == start => break,
            Some(n) if seen.insert(n) => {
                path.push(n);
                current = n;
            }
            _ => break,
        }
    }
    path
}

/// Checks `decide init`'s questions: each fills a profile field, its `among` names one, and its
/// `when` compiles and reads only the answers to earlier questions (`profile.…`).
fn check_questions(policy: &Policy, scope: &Scope<'_>, errors: &mut Vec<Error>) {
    for (index, q) in policy.questions.iter().enumerate() {
        let field = &q.item.field.value;
        if let Err(hint) = scope.profile_paths.check(&format!("profile.{field}")) {
            errors.push(
                policy
                    .error_at(
                        q.file,
                        q.item.field.referenced,
                        format!("question: `{field}` is not a profile field"),
                    )
                    .field("questions[].field")
                    .help(hint.replace("profile.", "")),
            );
        }
        if let Some(among) = &q.item.among
            && let Err(hint) = scope
                .profile_paths
                .check(&format!("profile.{}", among.value))
        {
            errors.push(
                policy
                    .error_at(
                        q.file,
                        among.referenced,
                        format!("question: `among: {}` is not a profile field", among.value),
                    )
                    .field("questions[].among")
                    .help(hint.replace("profile.", "")),
            );
        }
        if let Some(when) = &q.item.when
            && let Err(e) = check_question_when(policy, scope, index, when)
        {
            errors.push(e.field("questions[].when"));
        }
    }
}

/// A question's `when`: a boolean expression over `profile`, the answers so far.
fn check_question_when(
    policy: &Policy,
    scope: &Scope<'_>,
    index: usize,
    when: &Spanned<String>,
) -> Result<()> {
    let q = &policy.questions[index];
    let field = &q.item.field.value;
    let fail = |message: String| policy.error_at(q.file, when.referenced, message);
    let compiled = scope
        .owner
        .env
        .compile_expression(&when.value)
        .map_err(|e| {
            fail(format!(
                "question `{field}`: `when` does not compile: {}",
                e.detail().unwrap_or("syntax error")
            ))
            .help(format!("the expression is: {}", when.value.trim()))
        })?;
    let mut paths: Vec<String> = compiled.undeclared_variables(true).into_iter().collect();
    paths.sort();
    for path in paths {
        let Some(rest) = path.strip_prefix("profile.") else {
            let root = path.split('.').next().unwrap_or(&path);
            return Err(fail(format!(
                "question `{field}`: unknown name `{root}` in `when`"
            ))
            .help("a question's `when` reads `profile`: the answers to the questions before it"));
        };
        if let Err(hint) = scope.profile_paths.check(&path) {
            return Err(fail(format!(
                "question `{field}`: `{path}` is not a profile field"
            ))
            .help(hint));
        }
        let asked = |other: &str| {
            other == rest
                || other.starts_with(&format!("{rest}."))
                || rest.starts_with(&format!("{other}."))
        };
        if policy.questions[index..]
            .iter()
            .any(|later| asked(&later.item.field.value))
        {
            return Err(fail(format!(
                "question `{field}`: `when` reads `{path}`, which is not answered before it"
            ))
            .help("a question's `when` may read only the answers to the questions before it"));
        }
    }
    Ok(())
}

/// The dotted paths a profile has, read off its JSON Schema, so rule expressions that name a
/// field the profile does not have are caught at load time.
struct ProfilePaths {
    known: HashSet<String>,
    /// Paths whose children are free (maps such as `profile.job.hours`).
    open: HashSet<String>,
}

impl ProfilePaths {
    fn from_schema() -> Self {
        let schema = crate::profile::schema();
        let mut paths = ProfilePaths {
            known: HashSet::from(["profile".to_owned()]),
            open: HashSet::new(),
        };
        paths.walk(schema, schema, "profile");
        paths
    }

    fn walk(&mut self, root: &serde_json::Value, schema: &serde_json::Value, prefix: &str) {
        let schema = resolve_ref(root, schema);
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            for (key, sub) in props {
                let path = format!("{prefix}.{key}");
                self.known.insert(path.clone());
                self.walk(root, sub, &path);
            }
        }
        if schema
            .get("additionalProperties")
            .is_some_and(serde_json::Value::is_object)
        {
            self.open.insert(prefix.to_owned());
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = schema.get(key).and_then(|l| l.as_array()) {
                for sub in list {
                    self.walk(root, sub, prefix);
                }
            }
        }
    }

    fn check(&self, path: &str) -> Result<(), String> {
        if self.known.contains(path) {
            return Ok(());
        }
        let mut prefix = path;
        while let Some((head, _)) = prefix.rsplit_once('.') {
            if self.open.contains(head) {
                return Ok(());
            }
            if self.known.contains(head) {
                let siblings = self
                    .known
                    .iter()
                    .filter(|k| k.rsplit_once('.').is_some_and(|(h, _)| h == head))
                    .map(String::as_str);
                let wrong = &path[head.len() + 1..];
                let wrong = wrong.split('.').next().unwrap_or(wrong);
                let candidates: Vec<&str> = siblings.collect();
                let names: Vec<&str> = candidates
                    .iter()
                    .filter_map(|c| c.rsplit('.').next())
                    .collect();
                if let Some(s) = suggest_name(wrong, names.iter().copied()) {
                    return Err(format!("did you mean `{head}.{s}`?"));
                }
                let mut names = names;
                names.sort_unstable();
                return Err(format!("`{head}` has: {}", names.join(", ")));
            }
            prefix = head;
        }
        Err("see the profile format in the README".to_owned())
    }
}

/// Follows a local `$ref` (`#/definitions/...` or `#/$defs/...`) of a JSON Schema.
pub(crate) fn resolve_ref<'a>(
    root: &'a serde_json::Value,
    schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    match schema.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => r
            .strip_prefix("#/")
            .and_then(|p| p.split('/').try_fold(root, |v, k| v.get(k)))
            .unwrap_or(schema),
        None => schema,
    }
}
