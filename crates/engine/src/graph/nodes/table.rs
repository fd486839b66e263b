//! Decision tables: rows of conditions (`when:`) and values (`then:`), read by a hit policy
//! (`first`, `unique`, `collect`), with a default row or a stated answer for no match.

use minijinja::value::{Value, ValueKind};

use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::Run;
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::lang::Lang;
use crate::policy::rules::{HitPolicy, NoMatch, Row, Table};

/// How the kind is drawn in `decide graph`: a subroutine box.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("[[", "]]"),
    dot: "box3d",
};

/// A table, compiled: each row's condition with the row's value.
#[derive(Debug)]
pub(crate) struct TableBody<'a> {
    pub hit: HitPolicy,
    pub rows: Vec<(Expr<'a>, Value)>,
    pub default: Option<Value>,
    pub no_match: NoMatch,
}

/// Compiles a table: every row's condition, its values, and what no match gives.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, t: &'a Table) -> NodeResult<'a> {
    let policy = &scope.owner.policy;
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
        match scope.expr(file, when, &t.id.value, &field, &[], &mut reads) {
            Ok(expr) => rows.push((expr, row_value(row, scope.owner.lang))),
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
    let body = Body::Table(TableBody {
        hit: t.hit,
        rows,
        default: t.default.as_ref().map(|r| row_value(r, scope.owner.lang)),
        no_match,
    });
    Ok((body, reads))
}

/// The matching row (or rows, for `collect`), the default, or none; an error when nothing
/// matches and the table says `no_match: error`.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, t: &TableBody<'_>) -> Result<Value> {
    let value = rows(run, node, t.hit, &t.rows, t.default.as_ref())?;
    let empty = value.is_none() || (t.hit == HitPolicy::Collect && value.len() == Some(0));
    if empty && t.no_match == NoMatch::Error {
        return Err(run
            .fail_at(
                node.file,
                node.location,
                &format!(
                    "table `{}`: no row matches, and the table says `no_match: error`",
                    node.id
                ),
            )
            .help("run `decide validate` to see which inputs the rows miss"));
    }
    Ok(value)
}

/// The trace's why: which row matched.
pub(crate) fn explain(value: &Value) -> String {
    match value.get_attr("title") {
        Ok(t) if !t.is_undefined() => {
            format!("row `{}`: {t}", value.get_attr("id").unwrap_or_default())
        }
        _ if value.kind() == ValueKind::Seq => {
            format!("{} rows matched", value.len().unwrap_or(0))
        }
        _ => "no row matched".to_owned(),
    }
}

fn rows(
    run: &Run<'_>,
    node: &Node<'_>,
    hit: HitPolicy,
    rows: &[(Expr<'_>, Value)],
    default: Option<&Value>,
) -> Result<Value> {
    let mut matched: Vec<&Value> = Vec::new();
    for (when, row) in rows {
        if run.condition(when, node, None)?.is_true() {
            if hit == HitPolicy::First {
                return Ok(row.clone());
            }
            if hit == HitPolicy::Unique && !matched.is_empty() {
                let first = matched[0].get_attr("id").unwrap_or_default();
                let second = row.get_attr("id").unwrap_or_default();
                return Err(run.fail_expr(when, node.id, &format!(
                    "table `{}` has hit policy `unique` but rows `{first}` and `{second}` both match",
                    node.id
                )));
            }
            matched.push(row);
        }
    }
    Ok(match hit {
        HitPolicy::Collect => {
            if matched.is_empty() {
                Value::from(default.into_iter().cloned().collect::<Vec<_>>())
            } else {
                Value::from(matched.into_iter().cloned().collect::<Vec<_>>())
            }
        }
        _ => matched
            .first()
            .copied()
            .or(default)
            .cloned()
            .unwrap_or(Value::from(())),
    })
}

/// A row as the table's value: its id, title, reason and `then:` values.
fn row_value(row: &Row, lang: Lang) -> Value {
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
