//! Facts: a named value computed by one expression (`expr:`) or given (`value:`), of a declared
//! type, once or once per catalog offer (`per_offer: true`, a map from offer id to value).

use decide_lang::Value;
use decide_lang::measure::Measure;
use decide_lang::types::Type;

use crate::error::Result;
use crate::graph::formula::{Formula, Place};
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::policy::rules::{Fact, FieldType};

/// How the kind is drawn in `decide graph`: a rectangle.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("[", "]"),
    dot: "box",
};

/// A fact with an expression, compiled.
#[derive(Debug)]
pub struct FactBody<'a> {
    pub expr: Formula<'a>,
    pub ty: FieldType,
    pub nullable: bool,
    /// Evaluated once per catalog offer, with `offer` bound; its value is a map by offer id.
    pub per_offer: bool,
}

/// Compiles a fact: its expression, or its `value:` checked against its type.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, f: &'a Fact) -> NodeResult<'a> {
    let policy = &scope.owner.policy;
    let mut reads = Reads::default();
    let measure = measure_of(scope, file, f)?;
    let body = match (&f.expr, &f.value) {
        (Some(e), None) => {
            let place = Place {
                file,
                node: &f.id.value,
                bound: if f.per_offer { &["offer"] } else { &[] },
                offers: f.per_offer,
                id_at: f.id.referenced,
                phrases: &f.phrases,
            };
            let expr = Formula::compile(scope, &place, e, "expr", &mut reads)?;
            place.check_phrases(scope, Some(e), "expr")?;
            // What the expression gives must be what the fact declares, for every profile.
            let declared = super::super::scope::declared(f.kind);
            let gives = &expr.ty();
            if declared != Type::Any
                && *gives != Type::Any
                && gives.shape() != declared.shape()
                && !(f.nullable && *gives == Type::Null)
                // A per-offer fact leaves out the offers it gives none for.
                && !((f.nullable || f.per_offer)
                    && declared.shape() == Some(decide_lang::types::TypeKind::Number)
                    && gives.is_number_or_none())
                && !(declared == Type::Map && gives.is_map_or_none())
            {
                return Err(policy
                    .error_at(
                        file,
                        e.location().unwrap_or(f.id.referenced),
                        format!(
                            "fact `{}` is declared `type: {}`, and its `expr` gives {}",
                            f.id.value,
                            serde_json::to_value(f.kind)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default(),
                            gives.name()
                        ),
                    )
                    .field(format!("{}.expr", f.id.value))
                    .help("change the `type:` or the expression"));
            }
            // And what it measures, where both are known.
            measures(scope, file, f, measure.as_ref(), gives, e.location())?;
            Body::Fact(FactBody {
                expr,
                ty: f.kind,
                nullable: f.nullable,
                per_offer: f.per_offer,
            })
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
            Body::Constant(decide_lang::Value::from_serialize(&v.value))
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

/// What the fact declares its number measures (`quantity:`, or its display `unit:`), read.
fn measure_of(scope: &Scope<'_>, file: usize, f: &Fact) -> Result<Option<Measure>> {
    Ok(match f.measure() {
        Some(Err(e)) => {
            let text = f.quantity.as_ref().map_or("", |q| q.value.as_str());
            return Err(scope
                .owner
                .policy
                .error_at(
                    file,
                    f.quantity
                        .as_ref()
                        .map_or(f.id.referenced, |q| q.referenced),
                    format!(
                        "fact `{}`: `quantity: {text}` does not read: {}",
                        f.id.value, e.message
                    ),
                )
                .field(format!("{}.quantity", f.id.value))
                .help(crate::policy::DIMENSION_HELP));
        }
        Some(Ok(d)) => Some(d),
        None => None,
    })
}

/// The fact's expression gives a number of the unit it declares, where both are known.
fn measures(
    scope: &Scope<'_>,
    file: usize,
    f: &Fact,
    declared: Option<&Measure>,
    gives: &Type,
    at: Option<serde_saphyr::Location>,
) -> Result<()> {
    if let (Some(d), Some(g)) = (declared, gives.dimension())
        && d != g
    {
        return Err(scope.owner.policy
            .error_at(
                file,
                at.unwrap_or(f.id.referenced),
                format!(
                    "fact `{}` measures {d}{}, and its `expr` gives a number in {g}",
                    f.id.value,
                    if f.quantity.is_some() {
                        String::new()
                    } else {
                        " (its `unit:` says so)".to_owned()
                    }
                ),
            )
            .field(format!("{}.expr", f.id.value))
            .help(format!(
                "convert the expression's number to {d} (through a fact whose `quantity:` is the unit between them), or declare `quantity: {g}` if that is what the fact measures"
            )));
    }
    Ok(())
}

/// The fact's value: the expression's (checked against the declared type), or per offer a map
/// from offer id to value, leaving out the offers it gives none for.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, fact: &FactBody<'_>) -> Result<Value> {
    let FactBody {
        expr,
        ty,
        nullable,
        per_offer,
    } = fact;
    if !per_offer {
        let v = expr.evaluate(run, node, None)?;
        run.check(expr.first(), node, &v, *ty, *nullable)?;
        return Ok(v);
    }
    run.per_offer(|offer| {
        let v = expr.evaluate(run, node, Some(offer))?;
        if v.is_none() {
            return Ok(None);
        }
        run.check(expr.first(), node, &v, *ty, *nullable)?;
        Ok(Some(v))
    })
}
