//! Selects: a list (`from:`) filtered (`where:`), ordered (`order_by:`) and mapped (`map:`)
//! with each item bound to a name (`item:`), keeping the first or all (`pick:`).

use minijinja::value::{Value, ValueKind};

use serde_saphyr::Spanned;

use crate::error::Result;
use crate::expr::Expr;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::{BoundItem, Run};
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::policy::rules::{Pick, Select};

/// How the kind is drawn in `decide graph`: a parallelogram.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("[/", "/]"),
    dot: "parallelogram",
};

/// A select, compiled.
#[derive(Debug)]
pub(crate) struct SelectBody<'a> {
    pub from: Expr<'a>,
    pub item: &'a str,
    pub filter: Option<Expr<'a>>,
    pub order_by: Option<Expr<'a>>,
    pub map: Option<Expr<'a>>,
    pub pick: Pick,
}

/// Compiles a select: `from`, and `where`, `order_by` and `map` with the item bound.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, s: &'a Select) -> NodeResult<'a> {
    let mut reads = Reads::default();
    let id = &s.id.value;
    let item: &[&str] = &[s.item.as_str()];
    let mut optional = |e: &'a Option<Spanned<String>>, field: &str| {
        e.as_ref()
            .map(|e| scope.expr(file, e, id, field, item, &mut reads))
            .transpose()
    };
    let filter = optional(&s.filter, "where")?;
    let order_by = optional(&s.order_by, "order_by")?;
    let map = optional(&s.map, "map")?;
    let body = Body::Select(SelectBody {
        from: scope.expr(file, &s.from, id, "from", &[], &mut reads)?,
        item: &s.item,
        filter,
        order_by,
        map,
        pick: s.pick,
    });
    Ok((body, reads))
}

/// The items of `from` that pass `where`, ordered by `order_by`, mapped by `map`, and the
/// first of them or all (`pick`).
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, s: &SelectBody<'_>) -> Result<Value> {
    let SelectBody {
        from,
        item,
        filter,
        order_by,
        map,
        pick,
    } = s;
    let (filter, order_by, map) = (filter.as_ref(), order_by.as_ref(), map.as_ref());
    let list = run.eval(from, node.id, None)?;
    let iter = list.try_iter().map_err(|_| {
        run.fail_expr(
            from,
            node.id,
            &format!("`from` gave {list} ({}), expected a list", list.kind()),
        )
    })?;
    // Items of the catalog's own offer list are read by position (see `expr::fast`).
    let offers = run.graph.owner().is_offers(&list);
    let mut kept: Vec<(Value, Value)> = Vec::new();
    for (i, candidate) in iter.enumerate() {
        let bound = Some(BoundItem {
            name: item,
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
                if !matches!(
                    k.kind(),
                    ValueKind::Number | ValueKind::String | ValueKind::Seq
                ) {
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
            Some(e) => run.eval(e, node.id, bound)?,
            None => candidate.clone(),
        };
        kept.push((key, value));
    }
    // Without `order_by` every key is none: the stable sort would keep the list's order.
    if order_by.is_some() {
        kept.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let mut values = kept.into_iter().map(|(_, v)| v);
    Ok(match *pick {
        Pick::First => values.next().unwrap_or(Value::from(())),
        Pick::All => Value::from(values.collect::<Vec<_>>()),
    })
}
