//! Checklist items: a point to confirm before signing (`text:`), always or under a condition
//! (`when:`), in the signer's part of the memo or the engineer's (`part:`).

use decide_lang::Value;

use crate::decision::ChecklistOutcome;
use crate::error::Result;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Said, Scope};
use crate::kind::ChecklistPart;
use crate::policy::rules::ChecklistItem;
use decide_lang::Expr;

/// How the kind is drawn in `decide graph`: a stadium (a note in DOT).
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("([", "])"),
    dot: "note",
};

/// A checklist item, compiled: its optional condition and the name of its text template.
#[derive(Debug)]
pub struct ChecklistBody<'a> {
    pub when: Option<Expr<'a>>,
    pub part: ChecklistPart,
    pub text: String,
}

/// Compiles a checklist item's condition, if any, and checks its text.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, c: &'a ChecklistItem) -> NodeResult<'a> {
    scope.condition_node(
        file,
        &c.id.value,
        c.when.as_ref(),
        &[("text", Said(&c.text, &c.phrases))],
        |when, texts| {
            Body::Checklist(ChecklistBody {
                when,
                part: c.part,
                text: texts[0].clone(),
            })
        },
    )
}

/// Whether the item applies: its condition, or true when it has none.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, c: &ChecklistBody<'_>) -> Result<Value> {
    match &c.when {
        Some(when) => run.condition(when, node, None),
        None => Ok(Value::from(true)),
    }
}

/// Adds an item that applies to the record with its text; returns the trace's why.
pub(crate) fn explain(
    run: &Run<'_>,
    node: &Node<'_>,
    c: &ChecklistBody<'_>,
    value: &Value,
    out: &mut Vec<ChecklistOutcome>,
) -> Result<String> {
    if !value.is_true() {
        return Ok("does not apply".to_owned());
    }
    let text = run.text(node, &c.text)?;
    out.push(ChecklistOutcome {
        id: node.id.to_owned(),
        title: node.title.to_owned(),
        part: c.part,
        text,
    });
    Ok("applies".to_owned())
}
