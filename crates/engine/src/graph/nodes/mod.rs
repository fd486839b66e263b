//! The node kinds, one file each: how a kind compiles, evaluates, explains itself in the record
//! and is drawn. This module only dispatches on the kind.
//!
//! A new kind is a new file here, a variant of [`crate::kind::NodeKind`] and of
//! [`crate::policy::rules::RuleNode`] (how it is written), and an arm in each function below.

pub(crate) mod checklist;
pub(crate) mod criterion;
pub(crate) mod fact;
pub mod search;
pub(crate) mod select;
pub mod table;
pub(crate) mod warning;

use decide_lang::Value;

use crate::decision::{ChecklistOutcome, CriterionOutcome, WarningOutcome};
use crate::error::Result;
use crate::graph::model::{Body, Node};
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Scope};
use crate::kind::NodeKind;
use crate::policy::rules::RuleNode;

/// Compiles one node as written.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, node: &'a RuleNode) -> NodeResult<'a> {
    match node {
        RuleNode::Fact(f) => fact::compile(scope, file, f),
        RuleNode::Criterion(c) => criterion::compile(scope, file, c),
        RuleNode::Table(t) => table::compile(scope, file, t),
        RuleNode::Select(s) => select::compile(scope, file, s),
        RuleNode::Search(s) => search::compile(scope, file, s),
        RuleNode::Warning(w) => warning::compile(scope, file, w),
        RuleNode::Checklist(c) => checklist::compile(scope, file, c),
    }
}

/// The value of one node, every node it reads being evaluated already.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>) -> Result<Value> {
    match &node.body {
        Body::Constant(v) => Ok(v.clone()),
        Body::Fact(f) => fact::evaluate(run, node, f),
        Body::Criterion(c) => criterion::evaluate(run, node, c),
        Body::Table(t) => table::evaluate(run, node, t),
        Body::Select(s) => select::evaluate(run, node, s),
        Body::Search(s) => search::evaluate(run, node, s),
        Body::Warning(w) => warning::evaluate(run, node, w),
        Body::Checklist(c) => checklist::evaluate(run, node, c),
    }
}

/// What the record lists besides values: criteria with their reasons, raised warnings and the
/// checklist items that apply, in policy order.
#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    pub criteria: Vec<CriterionOutcome>,
    pub warnings: Vec<WarningOutcome>,
    pub checklist: Vec<ChecklistOutcome>,
}

/// Adds what `node` (of value `value`) puts in the record to `out`, and returns why it has its
/// value, for the trace (empty where only the trace would show it and `trace` is off).
pub(crate) fn explain(
    run: &Run<'_>,
    node: &Node<'_>,
    value: &Value,
    trace: bool,
    out: &mut Outcomes,
) -> Result<String> {
    Ok(match &node.body {
        Body::Criterion(c) => criterion::explain(run, node, c, value, &mut out.criteria)?,
        Body::Warning(w) => warning::explain(run, node, w, value, &mut out.warnings)?,
        Body::Checklist(c) => checklist::explain(run, node, c, value, &mut out.checklist)?,
        _ if !trace => String::new(),
        Body::Table(_) => table::explain(value),
        Body::Constant(_) | Body::Fact(_) | Body::Select(_) | Body::Search(_) => {
            node.because.unwrap_or(node.title).to_owned()
        }
    })
}

/// How a kind is drawn in `decide graph`: the Mermaid brackets around its label and its
/// Graphviz shape (each kind's file says its own).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub mermaid: (&'static str, &'static str),
    pub dot: &'static str,
}

/// How `kind` is drawn.
pub fn shape(kind: NodeKind) -> Shape {
    match kind {
        NodeKind::Fact => fact::SHAPE,
        NodeKind::Criterion => criterion::SHAPE,
        NodeKind::Table => table::SHAPE,
        NodeKind::Select => select::SHAPE,
        NodeKind::Search => search::SHAPE,
        NodeKind::Warning => warning::SHAPE,
        NodeKind::Checklist => checklist::SHAPE,
    }
}
