//! Warnings: a condition (`when:`) under which the memo raises a message (`message:`) the
//! buyer should read before deciding.

use decide_lang::Value;

use crate::decision::WarningOutcome;
use crate::error::Result;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Said, Scope};
use crate::policy::rules::Warning;
use decide_lang::Expr;

/// How the kind is drawn in `decide graph`: a flag (an octagon in DOT).
pub(crate) const SHAPE: Shape = Shape {
    mermaid: (">", "]"),
    dot: "octagon",
};

/// A warning, compiled: its condition and the name of its message template.
#[derive(Debug)]
pub struct WarningBody<'a> {
    pub when: Expr<'a>,
    pub message: String,
}

/// Compiles a warning's condition and checks its message.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, w: &'a Warning) -> NodeResult<'a> {
    scope.condition_node(
        file,
        &w.id.value,
        Some(&w.when),
        &[("message", Said(&w.message, &w.phrases))],
        |when, texts| {
            Body::Warning(WarningBody {
                when: when.expect("warnings have a condition"),
                message: texts[0].clone(),
            })
        },
    )
}

/// Whether the warning is raised: its condition, which must be true or false.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, w: &WarningBody<'_>) -> Result<Value> {
    run.condition(&w.when, node, None)
}

/// Adds a raised warning to the record with its message; returns the trace's why.
pub(crate) fn explain(
    run: &Run<'_>,
    node: &Node<'_>,
    w: &WarningBody<'_>,
    value: &Value,
    out: &mut Vec<WarningOutcome>,
) -> Result<String> {
    if !value.is_true() {
        return Ok("not raised".to_owned());
    }
    let message = run.text(node, &w.message)?;
    out.push(WarningOutcome {
        id: node.id.to_owned(),
        title: node.title.to_owned(),
        message: message.clone(),
    });
    Ok(message)
}
