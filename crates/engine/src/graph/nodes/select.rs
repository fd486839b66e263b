//! Selects: a list (`from:`) filtered (`where:`), ordered (`order_by:`) and mapped (`map:`)
//! with each item bound to a name (`item:`), keeping the first or all (`pick:`).

use std::cmp::Ordering;

use decide_lang::value::{Kind, Value};

use serde_saphyr::Spanned;

use crate::error::Result;
use crate::graph::formula::{Formula, Place};
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::{BoundItem, Run};
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::policy::rules::{Pick, Select};
use decide_lang::Expr;

/// How the kind is drawn in `decide graph`: a parallelogram.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("[/", "/]"),
    dot: "parallelogram",
};

/// A select, compiled.
#[derive(Debug)]
pub struct SelectBody<'a> {
    pub from: Expr<'a>,
    pub item: &'a str,
    pub filter: Option<Expr<'a>>,
    pub order_by: Option<Expr<'a>>,
    pub map: Option<Formula<'a>>,
    pub pick: Pick,
    /// Evaluated once per catalog offer, `from` with `offer` bound; its value is a map by offer
    /// id.
    pub per_offer: bool,
}

/// Compiles a select: `from`, and `where`, `order_by` and `map` with the item bound.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, s: &'a Select) -> NodeResult<'a> {
    let mut reads = Reads::default();
    let id = &s.id.value;
    if s.per_offer && s.item == "offer" {
        return Err(scope
            .owner
            .policy
            .error_at(
                file,
                s.id.referenced,
                format!(
                    "select `{id}` is `per_offer`: `offer` is bound in `from`, so its items need \
                     a name of their own"
                ),
            )
            .field(format!("{id}.as"))
            .help("name the items with `as:`, e.g. `as: candidate`"));
    }
    let item: &[&str] = &[s.item.as_str()];
    // The items of `offers` itself are the catalog's offers.
    let over_offers = s.from.value.trim() == "offers";
    let mut optional = |e: &'a Option<Spanned<String>>, field: &str| {
        e.as_ref()
            .map(|e| {
                if over_offers {
                    scope.expr_over_offers(file, e, id, field, item, &mut reads)
                } else {
                    scope.expr(file, e, id, field, item, &mut reads)
                }
            })
            .transpose()
    };
    let filter = optional(&s.filter, "where")?;
    let order_by = optional(&s.order_by, "order_by")?;
    let place = Place {
        file,
        node: id,
        bound: item,
        offers: over_offers,
        id_at: s.id.referenced,
        phrases: &s.phrases,
    };
    let map = s
        .map
        .as_ref()
        .map(|m| Formula::compile(scope, &place, m, "map", &mut reads))
        .transpose()?;
    place.check_phrases(scope, s.map.as_ref(), "map")?;
    let from = if s.per_offer {
        scope.expr_over_offers(file, &s.from, id, "from", &["offer"], &mut reads)?
    } else {
        scope.expr(file, &s.from, id, "from", &[], &mut reads)?
    };
    let body = Body::Select(SelectBody {
        from,
        item: &s.item,
        filter,
        order_by,
        map,
        pick: s.pick,
        per_offer: s.per_offer,
    });
    Ok((body, reads))
}

/// The items of `from` that pass `where`, ordered by `order_by`, mapped by `map`, and the
/// first of them or all (`pick`); per offer, a map from offer id to that, leaving out the
/// offers it gives none for.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, s: &SelectBody<'_>) -> Result<Value> {
    if !s.per_offer {
        return choose(run, node, s, None);
    }
    run.per_offer(|offer| {
        let v = choose(run, node, s, Some(offer))?;
        Ok((!v.is_none()).then_some(v))
    })
}

/// One choice: `from` evaluated (with the offer bound, per offer), then filtered, ordered,
/// mapped and picked.
fn choose(
    run: &Run<'_>,
    node: &Node<'_>,
    s: &SelectBody<'_>,
    offer: Option<BoundItem<'_>>,
) -> Result<Value> {
    let SelectBody {
        from,
        item: _,
        filter,
        order_by,
        map,
        pick,
        per_offer: _,
    } = s;
    let (filter, order_by, map) = (filter.as_ref(), order_by.as_ref(), map.as_ref());
    let list = run.eval(from, node.id, offer)?;
    let iter = list.try_iter().ok_or_else(|| {
        run.fail_expr(
            from,
            node.id,
            &format!("`from` gave {list} ({}), expected a list", list.kind()),
        )
    })?;
    // Items of the catalog's own offer list are read by position (see `expr::code`).
    let offers = run.graph.owner().is_offers(&list);
    let mut kept: Vec<(Value, Value)> = Vec::new();
    for (i, candidate) in iter.enumerate() {
        let bound = Some(BoundItem {
            value: &candidate,
            offer: offers.then_some(i),
        });
        if let Some(filter) = filter
            && !run.condition(filter, node, bound)?.is_true()
        {
            continue;
        }
        let key = match order_by {
            Some(e) => {
                let k = run.eval(e, node.id, bound)?;
                if !matches!(k.kind(), Kind::Number | Kind::Text | Kind::List) {
                    return Err(run.fail_expr(
                        e,
                        node.id,
                        &format!(
                            "`order_by` gave {k} ({}), expected a number, text or a list of them",
                            k.kind()
                        ),
                    ));
                }
                k
            }
            None => Value::from(()),
        };
        let value = match map {
            Some(f) => f.evaluate(run, node, bound)?,
            None => candidate.clone(),
        };
        kept.push((key, value));
    }
    // Without `order_by` every key is none: the stable sort would keep the list's order.
    if order_by.is_some() {
        sort(&mut kept);
    }
    let mut values = kept.into_iter().map(|(_, v)| v);
    Ok(match *pick {
        Pick::First => values.next().unwrap_or(Value::from(())),
        Pick::All => Value::from(values.collect::<Vec<_>>()),
    })
}

/// Sorts `kept` by key (stably), in the value's own order.
fn sort(kept: &mut [(Value, Value)]) {
    kept.sort_by(|a, b| a.0.cmp(&b.0));
}

/// How two sort keys compare: the value's own order.
pub(crate) fn order(a: &Value, b: &Value) -> Ordering {
    a.cmp(b)
}
