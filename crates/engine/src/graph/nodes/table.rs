//! Decision tables: rows of conditions and values (`then:`), read by a hit policy (`first`,
//! `unique`, `collect`), with a default row or a stated answer for no match. A row's condition
//! is a `when:` expression, or, in a table that declares `inputs:`, one unary test per input
//! (`cells:`), the inputs evaluated once per profile.

use decide_lang::value::{Kind, Value};

use serde_saphyr::Location;

use crate::error::{Error, Result};
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::run::{BoundItem, Run};
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::lang::Lang;
use crate::policy::rules::{HitPolicy, NoMatch, Row, Table};
use decide_lang::Expr;
use decide_lang::ast::Lit;
use decide_lang::unary::UnaryTest;

/// How the kind is drawn in `decide graph`: a subroutine box.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("[[", "]]"),
    dot: "box3d",
};

/// A table, compiled: its inputs, and each row's test with the row's value.
#[derive(Debug)]
pub struct TableBody<'a> {
    pub hit: HitPolicy,
    /// The inputs' expressions, in the order written (empty for a table of `when:` rows).
    pub inputs: Vec<TableInput<'a>>,
    pub rows: Vec<TableRow<'a>>,
    pub default: Option<Value>,
    pub no_match: NoMatch,
}

/// One input of a table, compiled.
#[derive(Debug)]
pub struct TableInput<'a> {
    pub id: &'a str,
    pub expr: Expr<'a>,
}

/// One row of a table, compiled: its test, its value, and where it is written.
#[derive(Debug)]
pub struct TableRow<'a> {
    pub test: RowTest<'a>,
    pub value: Value,
    pub id: &'a str,
    pub file: usize,
    pub location: Location,
}

/// How a row decides whether it matches.
#[derive(Debug)]
pub enum RowTest<'a> {
    /// `when:`, a condition.
    When(Box<Expr<'a>>),
    /// `cells:`, one per input, in the inputs' order (a left-out cell is `-`).
    Cells(Vec<CellTest<'a>>),
}

/// One cell, compiled.
#[derive(Debug)]
pub enum CellTest<'a> {
    /// A unary test, with its text as written.
    Unary(UnaryTest, &'a str),
    /// An expression where `$` is the input.
    Free(Box<Expr<'a>>),
}

impl<'a> TableRow<'a> {
    /// The row's expressions: its `when:`, or its cells' expressions.
    pub(crate) fn exprs(&self) -> Vec<&Expr<'a>> {
        match &self.test {
            RowTest::When(e) => vec![&**e],
            RowTest::Cells(cells) => cells
                .iter()
                .filter_map(|c| match c {
                    CellTest::Free(e) => Some(&**e),
                    CellTest::Unary(..) => None,
                })
                .collect(),
        }
    }
}

impl<'a> TableBody<'a> {
    /// Every expression of the table: its inputs', then its rows'.
    pub(crate) fn exprs(&self) -> Vec<&Expr<'a>> {
        self.inputs
            .iter()
            .map(|i| &i.expr)
            .chain(self.rows.iter().flat_map(TableRow::exprs))
            .collect()
    }

    /// The text of every cell that is a unary test, row by row.
    pub(crate) fn unary_texts(&self) -> Vec<&'a str> {
        self.rows
            .iter()
            .flat_map(|r| match &r.test {
                RowTest::Cells(cells) => cells
                    .iter()
                    .filter_map(|c| match c {
                        CellTest::Unary(_, text) => Some(*text),
                        CellTest::Free(_) => None,
                    })
                    .collect(),
                RowTest::When(_) => Vec::new(),
            })
            .collect()
    }
}

/// Compiles a table: its inputs, every row's condition or cells, its values, and what no
/// match gives.
#[allow(clippy::too_many_lines)] // one check after the other, each with its own error
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, t: &'a Table) -> NodeResult<'a> {
    let policy = &scope.owner.policy;
    let mut reads = Reads::default();
    let mut rows = Vec::with_capacity(t.rows.len());
    let mut errors = Vec::new();
    let mut inputs: Vec<TableInput<'a>> = Vec::with_capacity(t.inputs.len());
    for input in &t.inputs {
        if inputs.iter().any(|i| i.id == input.id.value) {
            errors.push(
                policy
                    .error_at(
                        file,
                        input.id.referenced,
                        format!(
                            "table `{}`: input `{}` is declared twice",
                            t.id.value, input.id.value
                        ),
                    )
                    .help("give each input its own id"),
            );
            continue;
        }
        let field = format!("inputs.{}.expr", input.id.value);
        match scope.expr(file, &input.expr, &t.id.value, &field, &[], &mut reads) {
            Ok(expr) => inputs.push(TableInput {
                id: &input.id.value,
                expr,
            }),
            Err(e) => errors.push(e),
        }
    }
    let with_cells = !t.inputs.is_empty();
    for row in &t.rows {
        let value = row_value(row, scope.owner.lang);
        let compiled = |test| TableRow {
            test,
            value,
            id: &row.id.value,
            file,
            location: row.id.referenced,
        };
        if with_cells {
            if let Some(when) = &row.when {
                errors.push(
                    policy
                        .error_at(
                            file,
                            when.referenced,
                            format!(
                                "table `{}`: row `{}` has a `when:`, and the table declares `inputs:`",
                                t.id.value, row.id.value
                            ),
                        )
                        .field(format!("{}.rows.{}.when", t.id.value, row.id.value))
                        .help("a table uses one form: write the condition as `cells:` (a test per input), or drop `inputs:` and give every row a `when:`"),
                );
                continue;
            }
            match cells(scope, file, t, row, &inputs, &mut reads) {
                Ok(cells) => rows.push(compiled(RowTest::Cells(cells))),
                Err(e) => errors.push(e),
            }
            continue;
        }
        if let Some((input, cell)) = row.cells.first() {
            errors.push(
                policy
                    .error_at(
                        file,
                        cell.text.referenced,
                        format!(
                            "table `{}`: row `{}` has `cells:`, and the table declares no `inputs:`",
                            t.id.value, row.id.value
                        ),
                    )
                    .field(format!("{}.rows.{}.cells.{input}", t.id.value, row.id.value))
                    .help("declare the inputs the cells test (`inputs: [{id: ..., expr: ...}]`), or write the row's condition as `when:`"),
            );
            continue;
        }
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
            Ok(expr) => rows.push(compiled(RowTest::When(Box::new(expr)))),
            Err(e) => errors.push(e),
        }
    }
    if let Some(row) = &t.default
        && (row.when.is_some() || !row.cells.is_empty())
    {
        errors.push(
            policy
                .error_at(
                    file,
                    row.id.referenced,
                    format!(
                        "table `{}`: the `default:` row has a `{}:`",
                        t.id.value,
                        if row.when.is_some() { "when" } else { "cells" }
                    ),
                )
                .help("the default row applies when no other row matches; remove its condition"),
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
        inputs,
        rows,
        default: t.default.as_ref().map(|r| row_value(r, scope.owner.lang)),
        no_match,
    });
    Ok((body, reads))
}

/// A row's cells, one per input in the inputs' order: each read as a unary test (typed
/// against its input) or compiled as an expression where `$` is the input.
#[allow(clippy::too_many_lines)] // each kind of cell error with its own words
fn cells<'a>(
    scope: &Scope<'a>,
    file: usize,
    t: &'a Table,
    row: &'a Row,
    inputs: &[TableInput<'a>],
    reads: &mut Reads,
) -> Result<Vec<CellTest<'a>>> {
    let policy = &scope.owner.policy;
    let mut errors = Vec::new();
    let field = |input: &str| format!("{}.rows.{}.cells.{input}", t.id.value, row.id.value);
    for (input, cell) in &row.cells {
        if !t.inputs.iter().any(|i| i.id.value == *input) {
            let names: Vec<&str> = t.inputs.iter().map(|i| i.id.value.as_str()).collect();
            let mut e = policy
                .error_at(
                    file,
                    cell.text.referenced,
                    format!(
                        "table `{}`: row `{}` has a cell for `{input}`, which is not an input of the table",
                        t.id.value, row.id.value
                    ),
                )
                .field(field(input))
                .help(format!("the inputs are: {}", names.join(", ")));
            if let Some(near) = crate::error::suggest(input, names.iter().copied()) {
                e = e.help(format!("did you mean `{near}`?"));
            }
            errors.push(e);
        }
    }
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let Some(cell) = row.cells.get(input.id) else {
            out.push(CellTest::Unary(UnaryTest::Any, "-"));
            continue;
        };
        let written = &cell.text;
        let located = |e: decide_lang::lexer::SyntaxError, what: &str| {
            let source = &policy.sources[file];
            let place = crate::policy::located::locate_in_scalar(
                &source.text,
                written.referenced,
                &written.value,
                e.span.start,
            )
            .or_else(|| crate::policy::position(written.referenced));
            let mut err = Error::new(
                crate::error::ErrorKind::Rules,
                format!(
                    "table `{}`: row `{}`: the cell for `{}` {what}: {}",
                    t.id.value, row.id.value, input.id, e.message
                ),
            )
            .at(&source.name, &source.text, place)
            .field(field(input.id));
            if let Some(help) = e.help {
                err = err.help(help);
            }
            err
        };
        match decide_lang::unary::parse(&written.value) {
            Ok(Some(test)) => {
                if let Some(problem) = decide_lang::unary::type_problem(&test, &input.expr.ty)
                    .or_else(|| choice_problem(&test, input.expr.text))
                {
                    errors.push(
                        located(
                            decide_lang::lexer::SyntaxError {
                                message: problem,
                                span: 0..0,
                                help: None,
                            },
                            "is wrong for every profile",
                        )
                        .help(format!(
                            "the input is `{}`, which gives {}",
                            input.expr.text.trim(),
                            input.expr.ty.name()
                        )),
                    );
                } else {
                    out.push(CellTest::Unary(test, written.value.as_str()));
                }
            }
            Ok(None) => {
                let name = format!("rows.{}.cells.{}", row.id.value, input.id);
                match scope.expr(
                    file,
                    &cell.expr,
                    &t.id.value,
                    &name,
                    &[decide_lang::unary::INPUT_NAME],
                    reads,
                ) {
                    Ok(expr)
                        if !matches!(
                            expr.ty,
                            decide_lang::types::Type::Any | decide_lang::types::Type::Bool
                        ) =>
                    {
                        errors.push(
                            located(
                                decide_lang::lexer::SyntaxError {
                                    message: format!(
                                        "an expression in a cell gives true or false, and this gives {}",
                                        expr.ty.name()
                                    ),
                                    span: 0..0,
                                    help: None,
                                },
                                "is wrong for every profile",
                            )
                            .help(decide_lang::unary::VALID),
                        );
                    }
                    Ok(expr) => out.push(CellTest::Free(Box::new(expr))),
                    Err(e) => errors.push(e.help(decide_lang::unary::VALID)),
                }
            }
            Err(e) => errors.push(located(e, "is not a test").help(decide_lang::unary::VALID)),
        }
    }
    match Error::many(errors) {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Why a unary test on a plain enumerated profile field asks for a value the field cannot
/// have (`'inferance'` for `profile.workload.task`), or `None`.
fn choice_problem(test: &UnaryTest, input: &str) -> Option<String> {
    let path = input.trim().strip_prefix("profile.")?;
    let crate::profile::fields::FieldKind::Enum(choices) =
        &crate::profile::fields::field(path)?.kind
    else {
        return None;
    };
    let lits: &[Lit] = match test {
        UnaryTest::OneOf(lits) => lits,
        UnaryTest::Not(lit) => std::slice::from_ref(lit),
        _ => return None,
    };
    lits.iter().find_map(|lit| match lit {
        Lit::Str(s) if !choices.iter().any(|c| *c.value == **s) => Some(format!(
            "'{s}' is not a value of `profile.{path}`, which is one of: {}",
            choices
                .iter()
                .map(|c| format!("'{}'", c.value))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => None,
    })
}

/// The matching row (or rows, for `collect`), the default, or none; an error when nothing
/// matches and the table says `no_match: error`.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, t: &TableBody<'_>) -> Result<Value> {
    let value = rows(run, node, t)?;
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
        t if !t.is_undefined() => {
            format!("row `{}`: {t}", value.get_attr("id"))
        }
        _ if value.kind() == Kind::List => {
            format!("{} rows matched", value.len().unwrap_or(0))
        }
        _ => "no row matched".to_owned(),
    }
}

/// Which rows match the profile of `run`: the inputs evaluated once, then each row's test.
pub(crate) fn row_hits(run: &Run<'_>, node: &Node<'_>, t: &TableBody<'_>) -> Result<Vec<bool>> {
    let inputs = input_values(run, node, t)?;
    t.rows
        .iter()
        .map(|row| row_matches(run, node, row, &inputs))
        .collect()
}

/// Every input's value for this run.
pub(crate) fn input_values(
    run: &Run<'_>,
    node: &Node<'_>,
    t: &TableBody<'_>,
) -> Result<Vec<Value>> {
    t.inputs
        .iter()
        .map(|i| {
            run.eval_labelled(
                &i.expr,
                &|| format!("table `{}`: input `{}`", node.id, i.id),
                None,
            )
        })
        .collect()
}

fn row_matches(
    run: &Run<'_>,
    node: &Node<'_>,
    row: &TableRow<'_>,
    inputs: &[Value],
) -> Result<bool> {
    match &row.test {
        RowTest::When(when) => Ok(run.condition(when, node, None)?.is_true()),
        RowTest::Cells(cells) => {
            for (cell, value) in cells.iter().zip(inputs) {
                let hit = match cell {
                    CellTest::Unary(test, _) => test.matches(value),
                    CellTest::Free(e) => run
                        .condition(e, node, Some(BoundItem { value, offer: None }))?
                        .is_true(),
                };
                if !hit {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

fn rows(run: &Run<'_>, node: &Node<'_>, t: &TableBody<'_>) -> Result<Value> {
    let inputs = input_values(run, node, t)?;
    let mut matched: Vec<&TableRow<'_>> = Vec::new();
    for row in &t.rows {
        if row_matches(run, node, row, &inputs)? {
            if t.hit == HitPolicy::First {
                return Ok(row.value.clone());
            }
            if t.hit == HitPolicy::Unique
                && let Some(first) = matched.first()
            {
                return Err(run.fail_at(
                    row.file,
                    row.location,
                    &format!(
                        "table `{}` has hit policy `unique` but rows `{}` and `{}` both match",
                        node.id, first.id, row.id
                    ),
                ));
            }
            matched.push(row);
        }
    }
    let default = t.default.as_ref();
    Ok(match t.hit {
        HitPolicy::Collect => {
            if matched.is_empty() {
                Value::from(default.into_iter().cloned().collect::<Vec<_>>())
            } else {
                Value::from(
                    matched
                        .into_iter()
                        .map(|r| r.value.clone())
                        .collect::<Vec<_>>(),
                )
            }
        }
        _ => matched
            .first()
            .map(|r| r.value.clone())
            .or(default.cloned())
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
    decide_lang::Value::from_serialize(&map)
}
