//! Selects: a list (`from:`) filtered (`where:`), ordered (`order_by:`) and mapped (`map:`)
//! with each item bound to a name (`item:`), keeping the first or all (`pick:`).

use std::cmp::Ordering;

use minijinja::value::{Value, ValueKind};

use serde_saphyr::Spanned;

use crate::error::Result;
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
    pub map: Option<Expr<'a>>,
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
    let map = optional(&s.map, "map")?;
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
    let iter = list.try_iter().map_err(|_| {
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
        sort(&mut kept);
    }
    let mut values = kept.into_iter().map(|(_, v)| v);
    Ok(match *pick {
        Pick::First => values.next().unwrap_or(Value::from(())),
        Pick::All => Value::from(values.collect::<Vec<_>>()),
    })
}

/// Sorts `kept` by key (stably), as `Value`'s own order would. Keys that are numbers, text or
/// lists of them (all the shipped rules use) are read once into [`SortKey`]s and compared
/// without minijinja's coercions, which a sort would otherwise repeat for every comparison.
fn sort(kept: &mut Vec<(Value, Value)>) {
    let keys: Option<Vec<SortKey>> = kept.iter().map(|(k, _)| SortKey::of(k)).collect();
    let Some(keys) = keys else {
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        return;
    };
    let mut keyed: Vec<(SortKey, (Value, Value))> = keys.into_iter().zip(kept.drain(..)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    kept.extend(keyed.into_iter().map(|(_, item)| item));
}

/// How two sort keys compare, as `Value`'s own order would (see [`sort`]).
pub(crate) fn order(a: &Value, b: &Value) -> Ordering {
    match (SortKey::of(a), SortKey::of(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => a.cmp(b),
    }
}

/// A sort key read out of a value: what minijinja 3.1's `Ord for Value` compares, for the
/// kinds it is made of (numbers, text, lists of them); any other value has none.
#[derive(Debug)]
enum SortKey {
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<SortKey>),
}

/// Integers up to 2^53 convert to `f64` exactly, as minijinja's non-lossy coercion needs.
const EXACT_IN_F64: i64 = 1 << 53;

impl SortKey {
    fn of(v: &Value) -> Option<SortKey> {
        match v.kind() {
            // Beyond 2^53 minijinja compares an integer with a float its own way: left to it.
            ValueKind::Number if v.is_integer() => v
                .as_i64()
                .filter(|i| i.unsigned_abs() <= EXACT_IN_F64.unsigned_abs())
                .map(SortKey::Int),
            ValueKind::Number => f64::try_from(v.clone()).ok().map(SortKey::Float),
            ValueKind::String => v.as_str().map(|s| SortKey::Text(s.to_owned())),
            // A tuple orders after any list: leave it to minijinja.
            ValueKind::Seq if !v.is_tuple() => v
                .try_iter()
                .ok()?
                .map(|item| SortKey::of(&item))
                .collect::<Option<Vec<_>>>()
                .map(SortKey::List),
            _ => None,
        }
    }

    /// minijinja's kind order: numbers, then text, then lists.
    fn rank(&self) -> u8 {
        match self {
            SortKey::Int(_) | SortKey::Float(_) => 0,
            SortKey::Text(_) => 1,
            SortKey::List(_) => 2,
        }
    }

    fn cmp(&self, other: &SortKey) -> Ordering {
        match (self, other) {
            (SortKey::Int(a), SortKey::Int(b)) => a.cmp(b),
            (SortKey::Float(a), SortKey::Float(b)) => cmp_f64(*a, *b),
            // An integer meets a float as a float (exactly: the integers are within 2^53).
            #[allow(clippy::cast_precision_loss)]
            (SortKey::Float(a), SortKey::Int(b)) => cmp_f64(*a, *b as f64),
            #[allow(clippy::cast_precision_loss)]
            (SortKey::Int(a), SortKey::Float(b)) => cmp_f64(*a as f64, *b),
            (SortKey::Text(a), SortKey::Text(b)) => a.cmp(b),
            (SortKey::List(a), SortKey::List(b)) => a
                .iter()
                .zip(b)
                .map(|(x, y)| x.cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or_else(|| a.len().cmp(&b.len())),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// minijinja's float order: equal when `==` (so `-0.0` equals `0.0`), else the total order.
#[allow(clippy::float_cmp)] // exact equality is the rule
fn cmp_f64(a: f64, b: f64) -> Ordering {
    if a == b {
        Ordering::Equal
    } else {
        a.total_cmp(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of a spread of keys (numbers of both kinds, text, nested lists, mixed)
    /// compares as `Value::cmp` compares them, and a sort gives minijinja's order.
    #[test]
    fn sort_keys_order_as_minijinja_does() {
        let scalars = vec![
            Value::from(0),
            Value::from(-3),
            Value::from(7),
            Value::from(7.0),
            Value::from(6.5),
            Value::from(-0.0),
            Value::from(0.0),
            Value::from(1e300),
            Value::from(f64::NEG_INFINITY),
            Value::from(f64::NAN),
            Value::from(EXACT_IN_F64),
            Value::from(-EXACT_IN_F64),
            Value::from(""),
            Value::from("a"),
            Value::from("ab"),
            Value::from("B"),
        ];
        let mut values = scalars.clone();
        for a in &scalars {
            values.push(Value::from(vec![a.clone()]));
            for b in scalars.iter().step_by(3) {
                values.push(Value::from(vec![a.clone(), b.clone()]));
            }
        }
        values.push(Value::from(Vec::<Value>::new()));
        values.push(Value::from(vec![Value::from(vec![Value::from(1)])]));
        for a in &values {
            for b in &values {
                let fast = SortKey::of(a).unwrap().cmp(&SortKey::of(b).unwrap());
                assert_eq!(fast, a.cmp(b), "{a:?} against {b:?}");
            }
        }
        let mut kept: Vec<(Value, Value)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), Value::from(i)))
            .collect();
        let mut expected = kept.clone();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        sort(&mut kept);
        // By position: NaN keys are never equal to themselves.
        let positions = |kept: &[(Value, Value)]| -> Vec<Value> {
            kept.iter().map(|(_, i)| i.clone()).collect()
        };
        assert_eq!(positions(&kept), positions(&expected));
    }

    /// Keys the sort key does not model (a bool, none, a huge integer) sort by `Value::cmp`.
    #[test]
    fn other_keys_sort_as_minijinja_does() {
        assert!(SortKey::of(&Value::from(true)).is_none());
        assert!(SortKey::of(&Value::from(EXACT_IN_F64 + 1)).is_none());
        assert!(SortKey::of(&Value::from(vec![Value::from(())])).is_none());
        let mut kept: Vec<(Value, Value)> = [Value::from(2), Value::from(true), Value::from(0)]
            .into_iter()
            .map(|k| (k, Value::from(())))
            .collect();
        sort(&mut kept);
        let keys: Vec<Value> = kept.into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [Value::from(0), Value::from(true), Value::from(2)]);
    }
}
