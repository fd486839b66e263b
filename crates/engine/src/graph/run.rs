//! One evaluation's state: the slots every expression reads, and the helpers the node kinds
//! evaluate with (expressions, conditions, type checks,
//! texts, and errors that say which rule failed for which profile).

use std::sync::{Arc, OnceLock};

use decide_lang::value::{Kind, Value};
use serde_saphyr::Location;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::Graph;
use crate::graph::model::{Compiled, Node};
use crate::policy::rules::FieldType;
use crate::profile::Profile;
use decide_lang::Expr;

/// The item a node binds for one evaluation (`offer` in a per-offer fact, a select's `item:`):
/// its value, and its catalog position when it is one of the catalog's offers. It is the rule
/// language's own bound item, handed to the code as it is.
pub(crate) type BoundItem<'v> = decide_lang::code::Bound<'v>;

/// One evaluation of a graph over one profile.
pub struct Run<'g> {
    pub graph: &'g Graph,
    pub compiled: &'g Compiled<'g>,
    /// Every root's and node's value, by slot, set once each in evaluation order.
    pub slots: Arc<[OnceLock<Value>]>,
    pub profile_name: &'g str,
}

impl<'g> Run<'g> {
    /// A run with the roots set (`profile`, `offers`, `catalog`, `as_of`, `not_on_offer`) and
    /// no node evaluated.
    pub fn new(graph: &'g Graph, profile: &'g Profile, as_of: jiff::civil::Date) -> Self {
        let owner = graph.owner();
        let slots: Arc<[OnceLock<Value>]> = (0..owner.names.index.len())
            .map(|_| OnceLock::new())
            .collect();
        let set = |name: &str, value: Value| {
            let _ = slots[owner.names.index[name]].set(value);
        };
        set("profile", decide_lang::Value::from_serialize(&profile));
        set("offers", owner.offers.clone());
        set("catalog", owner.catalog.clone());
        set("as_of", Value::from(as_of.to_string()));
        set("not_on_offer", owner.not_on_offer.clone());
        Run {
            graph,
            compiled: graph.compiled(),
            slots,
            profile_name: &profile.name,
        }
    }
}

impl Run<'_> {
    /// A per-offer node's value: `each` once per catalog offer, with it bound as `offer`, into a
    /// map by offer id that leaves out the offers `each` gives none for.
    pub(crate) fn per_offer(
        &self,
        mut each: impl FnMut(BoundItem<'_>) -> Result<Option<Value>>,
    ) -> Result<Value> {
        let owner = self.graph.owner();
        let mut values = Vec::with_capacity(owner.offer_ids.len());
        for (i, offer) in owner.offers.try_iter().into_iter().flatten().enumerate() {
            values.push(each(BoundItem {
                value: &offer,
                offer: Some(i),
            })?);
        }
        Ok(decide_lang::value::PerOffer::value(
            owner.offer_ids.clone(),
            values,
        ))
    }

    pub(crate) fn condition(
        &self,
        when: &Expr<'_>,
        node: &Node<'_>,
        bound: Option<BoundItem<'_>>,
    ) -> Result<Value> {
        let v = self.eval(when, node.id, bound)?;
        if v.kind() == Kind::Bool {
            Ok(v)
        } else {
            Err(self
                .fail_expr(
                    when,
                    node.id,
                    &format!(
                        "node `{}`: condition gave {}, expected true or false",
                        node.id,
                        show(&v)
                    ),
                )
                .help("compare explicitly, e.g. `x > 0` or `x is not none`"))
        }
    }

    /// That fact `node`'s value `v` has its declared type; an error at `expr` (the first
    /// expression of its formula; the node, where it has none) if not.
    pub(crate) fn check(
        &self,
        expr: Option<&Expr<'_>>,
        node: &Node<'_>,
        v: &Value,
        ty: FieldType,
        nullable: bool,
    ) -> Result<()> {
        if let Some(problem) = type_problem(v, ty, nullable) {
            let message = format!("fact `{}` gave {}: {problem}", node.id, show(v));
            return Err(match expr {
                Some(expr) => self.fail_expr(expr, node.id, &message),
                None => self.fail_at(node.file, node.location, &message),
            });
        }
        Ok(())
    }

    pub(crate) fn eval(
        &self,
        expr: &Expr<'_>,
        node: &str,
        bound: Option<BoundItem<'_>>,
    ) -> Result<Value> {
        self.eval_labelled(expr, &|| format!("node `{node}`"), bound)
    }

    /// [`Run::eval`], with what failed named by `label` (called only on failure).
    pub(crate) fn eval_labelled(
        &self,
        expr: &Expr<'_>,
        label: &dyn Fn() -> String,
        bound: Option<BoundItem<'_>>,
    ) -> Result<Value> {
        self.eval_with_locals(expr, label, bound, &[])
    }

    /// [`Run::eval_labelled`] of an expression compiled with names of the node's own
    /// ([`crate::graph::scope::Scope::expr_with_locals`]), whose values are `locals`, in order.
    pub(crate) fn eval_with_locals(
        &self,
        expr: &Expr<'_>,
        label: &dyn Fn() -> String,
        bound: Option<BoundItem<'_>>,
        locals: &[Value],
    ) -> Result<Value> {
        expr.code
            .eval_with_locals(&self.slots, bound, locals)
            .map_err(|e| {
                let message = format!("{} failed: {}", label(), e.message);
                let source = &self.graph.policy().sources[expr.file];
                // At the part that failed, where the scalar can be read back; else at the scalar.
                match e.span.and_then(|span| {
                    crate::policy::located::locate_in_scalar(
                        &source.text,
                        expr.location,
                        expr.text,
                        span.start,
                    )
                }) {
                    Some(at) => self
                        .fail_at_position(expr.file, Some(at), &message)
                        .help(format!("the expression is: {}", expr.text.trim())),
                    None => self.fail_expr(expr, "", &message),
                }
            })
    }

    pub(crate) fn text(&self, node: &Node<'_>, template: &str) -> Result<String> {
        self.render(
            template,
            node.file,
            node.location,
            &format!("node `{}`", node.id),
        )
    }

    /// Renders text template `template` of `label` (written at `file`, `location`) by its
    /// fast form, which every text rendered from an evaluation has (one without is refused when
    /// the rules load, [`crate::graph::scope::Scope::text`]).
    pub(crate) fn render(
        &self,
        template: &str,
        file: usize,
        location: Location,
        label: &str,
    ) -> Result<String> {
        let rendered = match self.graph.owner().texts.get(template) {
            Some(text) => text.render(&self.slots),
            None => Err("no such text".to_owned()),
        };
        rendered.map(|s| decide_lang::flow_text(&s)).map_err(|why| {
            self.fail_at(
                file,
                location,
                &format!("text `{template}` of {label} failed: {why}"),
            )
        })
    }

    pub(crate) fn fail_expr(&self, expr: &Expr<'_>, _node: &str, message: &str) -> Error {
        self.fail_at(expr.file, expr.location, message)
            .help(format!("the expression is: {}", expr.text.trim()))
    }

    pub(crate) fn fail_at(&self, file: usize, location: Location, message: &str) -> Error {
        self.fail_at_position(file, crate::policy::position(location), message)
    }

    /// [`Run::fail_at`] at a position already worked out.
    fn fail_at_position(
        &self,
        file: usize,
        position: Option<crate::error::Position>,
        message: &str,
    ) -> Error {
        let policy = self.graph.policy();
        let source = &policy.sources[file];
        Error::new(ErrorKind::Eval, message)
            .at(&source.name, &source.text, position)
            .help(format!(
                "while deciding profile `{}`; this is a fault in the rules",
                self.profile_name
            ))
    }
}

pub(crate) fn show(v: &Value) -> String {
    match v.kind() {
        Kind::Undefined => "an undefined value".to_owned(),
        Kind::None => "none".to_owned(),
        kind => format!("{v} ({kind})"),
    }
}

/// What is wrong with `v` as a value of type `ty`, if anything.
fn type_problem(v: &Value, ty: FieldType, nullable: bool) -> Option<String> {
    match v.kind() {
        Kind::Undefined => return Some("a name or attribute does not exist".to_owned()),
        Kind::None if nullable => return None,
        Kind::None => {
            return Some(
                "it may not be none (mark the fact `nullable: true` if it can)".to_owned(),
            );
        }
        _ => {}
    }
    let ok = match ty {
        FieldType::Number => v.kind() == Kind::Number && v.as_number().is_some_and(f64::is_finite),
        FieldType::Integer => v.is_integer(),
        FieldType::Bool => v.kind() == Kind::Bool,
        FieldType::String => v.kind() == Kind::Text,
        FieldType::Date => v
            .as_str()
            .is_some_and(|s| s.parse::<jiff::civil::Date>().is_ok()),
        FieldType::List => v.kind() == Kind::List,
        FieldType::Map => v.kind() == Kind::Map,
        FieldType::Any => true,
    };
    (!ok).then(|| format!("expected {}", crate::policy::type_name(ty)))
}
