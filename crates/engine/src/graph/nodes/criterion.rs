//! Criteria: a named yes-or-no question about the profile (`when:`), with the sentence that
//! explains each answer (`met:`, `not_met:`), listed in every decision record.

use decide_lang::Value;

use crate::decision::CriterionOutcome;
use crate::error::Result;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Said, Scope};
use crate::policy::rules::Criterion;
use decide_lang::Expr;

/// How the kind is drawn in `decide graph`: a rhombus.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("{", "}"),
    dot: "diamond",
};

/// A criterion, compiled: its condition and the names of its two text templates.
#[derive(Debug)]
pub struct CriterionBody<'a> {
    pub when: Expr<'a>,
    pub met: String,
    pub not_met: String,
}

/// Compiles a criterion's condition and checks its texts.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, c: &'a Criterion) -> NodeResult<'a> {
    scope.condition_node(
        file,
        &c.id.value,
        Some(&c.when),
        &[
            ("met", Said(&c.met, &c.phrases)),
            ("not_met", Said(&c.not_met, &c.phrases)),
        ],
        |when, texts| {
            Body::Criterion(CriterionBody {
                when: when.expect("criteria have a condition"),
                met: texts[0].clone(),
                not_met: texts[1].clone(),
            })
        },
    )
}

/// Whether the criterion is met: its condition, which must be true or false.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, c: &CriterionBody<'_>) -> Result<Value> {
    run.condition(&c.when, node, None)
}

/// Adds the criterion to the record with the sentence for its answer, and returns that
/// sentence (the trace's why).
pub(crate) fn explain(
    run: &Run<'_>,
    node: &Node<'_>,
    c: &CriterionBody<'_>,
    value: &Value,
    out: &mut Vec<CriterionOutcome>,
) -> Result<String> {
    let met = value.is_true();
    let reason = run.text(node, if met { &c.met } else { &c.not_met })?;
    out.push(CriterionOutcome {
        id: node.id.to_owned(),
        title: node.title.to_owned(),
        met,
        reason: reason.clone(),
    });
    Ok(reason)
}
