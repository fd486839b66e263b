//! Exact decision-table analysis, for a table whose cells are all unary tests: each input's
//! domain (a profile field's enum values or number range, none where it is optional; true and
//! false; the texts the cells mention and "any other"; the number line) is cut at every bound
//! the cells mention into elementary cells (points and the open intervals between), inside
//! each of which every row behaves the same, and the rows are tested on the product of them.
//! Gaps, overlaps and rows that never win are then found for every value of the inputs, not
//! over a sample; generated profiles only supply an example for a region, where one lands in it.

use std::collections::{BTreeMap, HashMap, HashSet};

use decide_lang::Value;

use decide_engine::graph::nodes::table::{CellTest, RowTest, TableBody};
use decide_engine::policy::rules::HitPolicy;
use decide_engine::profile::fields::FieldKind;
use decide_lang::ast::Lit;
use decide_lang::types::Type;
use decide_lang::unary::{Interval, IntervalEnd, UnaryTest, equals, written};

/// At most this many elementary cells are enumerated; a larger product is sampled instead.
pub const MAX_CELLS: u128 = 2_000_000;

/// One elementary cell of one input's domain: the values in it, one of them to test the rows
/// with, and how a finding writes it.
#[derive(Debug, Clone)]
pub(crate) struct DomainPiece {
    kind: PieceKind,
    value: Value,
    label: String,
}

#[derive(Debug, Clone)]
enum PieceKind {
    /// Exactly this value (none, a boolean, a text).
    Is(Lit),
    /// Any text but these.
    OtherText(Vec<Box<str>>),
    /// The numbers in an interval (a point is a closed interval of one number).
    Numbers(Interval),
    /// Any other value (an input of undeclared type).
    Other,
}

impl DomainPiece {
    /// Whether the input's `value` lies in this piece.
    fn contains(&self, value: &Value) -> bool {
        match &self.kind {
            PieceKind::Is(lit) => equals(lit, value),
            PieceKind::OtherText(known) => value
                .as_str()
                .is_some_and(|s| !known.iter().any(|k| **k == *s)),
            PieceKind::Numbers(interval) => value.as_number().is_some_and(|x| interval.contains(x)),
            PieceKind::Other => true,
        }
    }
}

/// One input's domain, cut into pieces.
#[derive(Debug, Clone)]
pub(crate) struct Domain {
    pub id: String,
    pub pieces: Vec<DomainPiece>,
}

impl Domain {
    /// The piece `value` lies in (the first that holds it).
    pub(crate) fn piece_of(&self, value: &Value) -> Option<usize> {
        self.pieces.iter().position(|p| p.contains(value))
    }
}

/// Why a table cannot be analysed exactly (a `when:` row, a cell that is an expression), or
/// `None` when it can.
pub(crate) fn not_exact(table: &TableBody<'_>) -> Option<String> {
    if table.inputs.is_empty() {
        return Some("its rows are `when:` conditions, not cells of declared inputs".to_owned());
    }
    for row in &table.rows {
        if let RowTest::Cells(cells) = &row.test {
            for (cell, input) in cells.iter().zip(&table.inputs) {
                if let CellTest::Free(e) = cell {
                    return Some(format!(
                        "row `{}`'s cell for `{}` is an expression (`{}`), not a unary test",
                        row.id,
                        input.id,
                        e.text.trim()
                    ));
                }
            }
        }
    }
    None
}

/// The domains of a table's inputs, cut at what its cells mention.
pub(crate) fn domains(table: &TableBody<'_>) -> Vec<Domain> {
    table
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let tests: Vec<&UnaryTest> = table
                .rows
                .iter()
                .filter_map(|r| match &r.test {
                    RowTest::Cells(cells) => match &cells[i] {
                        CellTest::Unary(t, _) => Some(t),
                        CellTest::Free(_) => None,
                    },
                    RowTest::When(_) => None,
                })
                .collect();
            Domain {
                id: input.id.to_owned(),
                pieces: pieces(input.id, input.expr.text, &input.expr.ty, &tests),
            }
        })
        .collect()
}

/// What the cells of one input mention: texts, numbers, booleans.
#[derive(Default)]
struct Mentioned {
    texts: Vec<Box<str>>,
    numbers: Vec<f64>,
    bools: bool,
}

fn mentioned(tests: &[&UnaryTest]) -> Mentioned {
    let mut m = Mentioned::default();
    let lit = |l: &Lit, m: &mut Mentioned| match l {
        Lit::Str(s) => {
            if !m.texts.contains(s) {
                m.texts.push(s.clone());
            }
        }
        #[allow(clippy::cast_precision_loss)] // rule literals are far below 2^53
        Lit::Int(i) => m.numbers.push(*i as f64),
        Lit::Float(f) => m.numbers.push(*f),
        Lit::Bool(_) => m.bools = true,
        Lit::None => {}
    };
    for t in tests {
        match t {
            UnaryTest::OneOf(lits) => lits.iter().for_each(|l| lit(l, &mut m)),
            UnaryTest::Not(l) => lit(l, &mut m),
            UnaryTest::Range(r) => m.numbers.extend(r.low.iter().chain(&r.high).map(|e| e.at)),
            UnaryTest::Any | UnaryTest::NotNone => {}
        }
    }
    m.numbers.sort_by(f64::total_cmp);
    m.numbers.dedup();
    m
}

fn is(lit: Lit, id: &str) -> DomainPiece {
    let value = match &lit {
        Lit::None => Value::from(()),
        Lit::Bool(b) => Value::from(*b),
        Lit::Str(s) => Value::from(&**s),
        Lit::Int(i) => Value::from(*i),
        Lit::Float(f) => Value::from(*f),
    };
    DomainPiece {
        label: format!("{id} = {}", written(&lit)),
        kind: PieceKind::Is(lit),
        value,
    }
}

fn other_text(texts: &[Box<str>], id: &str) -> DomainPiece {
    let mut value = String::from("other");
    while texts.iter().any(|t| **t == *value) {
        value.push('_');
    }
    DomainPiece {
        label: if texts.is_empty() {
            format!("{id} = any text")
        } else {
            format!(
                "{id} = a text other than {}",
                texts
                    .iter()
                    .map(|t| written(&Lit::Str(t.clone())))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        kind: PieceKind::OtherText(texts.to_vec()),
        value: Value::from(value),
    }
}

/// One input's pieces: from its profile field where it is one, else from its type.
fn pieces(id: &str, expr: &str, ty: &Type, tests: &[&UnaryTest]) -> Vec<DomainPiece> {
    let m = mentioned(tests);
    let field = expr
        .trim()
        .strip_prefix("profile.")
        .and_then(decide_engine::profile::fields::field);
    let mut out = Vec::new();
    let nullable = field.is_some_and(|f| f.nullable);
    match field.map(|f| &f.kind) {
        Some(FieldKind::Enum(choices)) => {
            out.extend(
                choices
                    .iter()
                    .map(|c| is(Lit::Str(c.value.as_str().into()), id)),
            );
        }
        Some(FieldKind::Bool) => {
            out.extend([is(Lit::Bool(true), id), is(Lit::Bool(false), id)]);
        }
        Some(FieldKind::Number(bounds)) => {
            let low = bounds
                .min
                .map(|at| IntervalEnd { at, closed: true })
                .or(bounds
                    .exclusive_min
                    .map(|at| IntervalEnd { at, closed: false }));
            let high = bounds.max.map(|at| IntervalEnd { at, closed: true });
            out.extend(numbers(id, &m.numbers, low, high, bounds.integer));
        }
        Some(FieldKind::String) => {
            out.extend(m.texts.iter().map(|t| is(Lit::Str(t.clone()), id)));
            out.push(other_text(&m.texts, id));
        }
        Some(_) | None => match ty {
            Type::Bool => out.extend([is(Lit::Bool(true), id), is(Lit::Bool(false), id)]),
            Type::Number | Type::Quantity(_) => {
                out.extend(numbers(id, &m.numbers, None, None, false));
            }
            Type::Text => {
                out.extend(m.texts.iter().map(|t| is(Lit::Str(t.clone()), id)));
                out.push(other_text(&m.texts, id));
            }
            Type::Null => {}
            _ => {
                if m.bools {
                    out.extend([is(Lit::Bool(true), id), is(Lit::Bool(false), id)]);
                }
                out.extend(m.texts.iter().map(|t| is(Lit::Str(t.clone()), id)));
                out.push(other_text(&m.texts, id));
                if !m.numbers.is_empty() {
                    out.extend(numbers(id, &m.numbers, None, None, false));
                }
                out.push(is(Lit::None, id));
                out.push(DomainPiece {
                    kind: PieceKind::Other,
                    value: Value::from(Vec::<Value>::new()),
                    label: format!("{id} = any other value"),
                });
                return out;
            }
        },
    }
    if nullable || *ty == Type::Null {
        out.push(is(Lit::None, id));
    }
    out
}

/// The number line between `low` and `high` cut at `cuts`: each cut a point, and the open
/// intervals between (left out where no admissible number is in them).
#[allow(clippy::float_cmp)] // the bounds are the cells' literals, compared exactly
fn numbers(
    id: &str,
    cuts: &[f64],
    low: Option<IntervalEnd>,
    high: Option<IntervalEnd>,
    integer: bool,
) -> Vec<DomainPiece> {
    let inside = |x: f64| {
        low.is_none_or(|l| x > l.at || (l.closed && x == l.at))
            && high.is_none_or(|h| x < h.at || (h.closed && x == h.at))
            && (!integer || x.fract() == 0.0)
    };
    let points: Vec<f64> = cuts.iter().copied().filter(|&x| inside(x)).collect();
    let mut ends: Vec<(Option<IntervalEnd>, Option<IntervalEnd>)> = Vec::new();
    let mut from = low;
    for &p in &points {
        ends.push((
            from,
            Some(IntervalEnd {
                at: p,
                closed: false,
            }),
        ));
        ends.push((
            Some(IntervalEnd {
                at: p,
                closed: true,
            }),
            Some(IntervalEnd {
                at: p,
                closed: true,
            }),
        ));
        from = Some(IntervalEnd {
            at: p,
            closed: false,
        });
    }
    ends.push((from, high));
    ends.into_iter()
        .filter_map(|(low, high)| {
            let interval = Interval { low, high };
            let value = representative(interval, integer)?;
            Some(DomainPiece {
                label: label(id, interval),
                kind: PieceKind::Numbers(interval),
                value: Value::from(value),
            })
        })
        .collect()
}

/// A number in `interval` (a whole one where the field takes only those), or none when it is
/// empty.
#[allow(clippy::float_cmp)] // a point is an interval whose ends are the same literal
fn representative(interval: Interval, integer: bool) -> Option<f64> {
    let x = match (interval.low, interval.high) {
        (Some(l), Some(h)) if l.at == h.at => l.at,
        (Some(l), Some(h)) => {
            if integer {
                if l.closed {
                    l.at.ceil()
                } else {
                    l.at.floor() + 1.0
                }
            } else {
                f64::midpoint(l.at, h.at)
            }
        }
        (Some(l), None) => {
            if l.closed {
                l.at
            } else if integer {
                l.at.floor() + 1.0
            } else {
                l.at + 1.0
            }
        }
        (None, Some(h)) => {
            if h.closed {
                h.at
            } else if integer {
                h.at.ceil() - 1.0
            } else {
                h.at - 1.0
            }
        }
        (None, None) => 0.0,
    };
    interval.contains(x).then_some(x)
}

/// `id = 10`, `id in (10, 13)`, `id < 7`, `id >= 100`.
#[allow(clippy::float_cmp)] // a point is an interval whose ends are the same literal
fn label(id: &str, interval: Interval) -> String {
    let n = |x: f64| {
        decide_lang::unary::written(&Lit::Float(x))
            .trim_end_matches(".0")
            .to_owned()
    };
    match (interval.low, interval.high) {
        (Some(l), Some(h)) if l.at == h.at => format!("{id} = {}", n(l.at)),
        (Some(l), Some(h)) => format!(
            "{id} in {}{}, {}{}",
            if l.closed { '[' } else { '(' },
            n(l.at),
            n(h.at),
            if h.closed { ']' } else { ')' }
        ),
        (Some(l), None) => format!("{id} {} {}", if l.closed { ">=" } else { ">" }, n(l.at)),
        (None, Some(h)) => format!("{id} {} {}", if h.closed { "<=" } else { "<" }, n(h.at)),
        (None, None) => format!("{id} = any number"),
    }
}

/// What enumerating the elementary cells found, each finding with the cells it holds.
#[derive(Debug, Default)]
pub(crate) struct Exact {
    /// Cells no row matches.
    pub gaps: Vec<usize>,
    /// Per row: the cells it matches, and (hit `first`) the cells it wins.
    pub matched: Vec<Vec<usize>>,
    pub won: Vec<Vec<usize>>,
    /// Per row that matches but never wins: the earlier row that takes its first cell.
    pub taken_by: Vec<Option<usize>>,
    /// Per pair of rows both matching somewhere (hit `unique`): the cells.
    pub overlaps: BTreeMap<(usize, usize), Vec<usize>>,
}

/// The cells' count, or `None` when it is above [`MAX_CELLS`].
pub(crate) fn count(domains: &[Domain]) -> Option<u128> {
    let n = domains
        .iter()
        .fold(1u128, |n, d| n.saturating_mul(d.pieces.len() as u128));
    (n <= MAX_CELLS).then_some(n)
}

/// The piece of each input in cell `index` (mixed radix, the last input fastest).
pub(crate) fn decode(mut index: usize, domains: &[Domain]) -> Vec<usize> {
    let mut out = vec![0; domains.len()];
    for (d, slot) in domains.iter().zip(out.iter_mut()).rev() {
        let n = d.pieces.len().max(1);
        *slot = index % n;
        index /= n;
    }
    out
}

/// The cell of the given pieces.
pub(crate) fn encode(pieces: &[usize], domains: &[Domain]) -> usize {
    pieces
        .iter()
        .zip(domains)
        .fold(0, |n, (&p, d)| n * d.pieces.len() + p)
}

/// Tests every row on every elementary cell.
pub(crate) fn enumerate(table: &TableBody<'_>, domains: &[Domain], cells: usize) -> Exact {
    let rows = table.rows.len();
    // Per row, per input, per piece: whether the row's cell passes the piece.
    let pass: Vec<Vec<Vec<bool>>> = table
        .rows
        .iter()
        .map(|r| {
            let RowTest::Cells(tests) = &r.test else {
                return Vec::new();
            };
            tests
                .iter()
                .zip(domains)
                .map(|(t, d)| {
                    d.pieces
                        .iter()
                        .map(|p| match t {
                            CellTest::Unary(t, _) => t.matches(&p.value),
                            CellTest::Free(_) => false,
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut out = Exact {
        matched: vec![Vec::new(); rows],
        won: vec![Vec::new(); rows],
        taken_by: vec![None; rows],
        ..Exact::default()
    };
    let mut hits = Vec::with_capacity(rows);
    for cell in 0..cells {
        let at = decode(cell, domains);
        hits.clear();
        for (j, row) in pass.iter().enumerate() {
            if row.iter().zip(&at).all(|(p, &k)| p[k]) {
                hits.push(j);
            }
        }
        let Some(&first) = hits.first() else {
            out.gaps.push(cell);
            continue;
        };
        out.won[first].push(cell);
        for (n, &j) in hits.iter().enumerate() {
            out.matched[j].push(cell);
            if n > 0 {
                out.taken_by[j].get_or_insert(first);
                if table.hit == HitPolicy::Unique {
                    for &a in &hits[..n] {
                        out.overlaps.entry((a, j)).or_default().push(cell);
                    }
                }
            }
        }
    }
    out
}

/// A set of cells written as regions: each cell grown into a box of cells all in the set
/// (an input left out where every piece of it is, a number input's run of neighbouring pieces
/// joined into one interval), the same regions once, at most `limit` of them.
pub(crate) fn regions(cells: &[usize], domains: &[Domain], limit: usize) -> (Vec<String>, usize) {
    let set: HashSet<usize> = cells.iter().copied().collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for &cell in cells {
        let at = decode(cell, domains);
        let mut bounds: Vec<(usize, usize)> = at.iter().map(|&k| (k, k)).collect();
        // Widen along an input when every piece of it is in the set.
        for d in 0..domains.len() {
            let before = bounds[d];
            bounds[d] = (0, domains[d].pieces.len().saturating_sub(1));
            if !every(&bounds, domains, &set) {
                bounds[d] = before;
            }
        }
        // Join a number input's neighbouring pieces while the whole slice is in the set.
        for d in 0..domains.len() {
            if !domains[d].numeric() {
                continue;
            }
            let last = domains[d].pieces.len() - 1;
            let number = |k: usize| matches!(domains[d].pieces[k].kind, PieceKind::Numbers(_));
            while bounds[d].1 < last && number(bounds[d].1) && number(bounds[d].1 + 1) {
                let mut slice = bounds.clone();
                slice[d] = (bounds[d].1 + 1, bounds[d].1 + 1);
                if !every(&slice, domains, &set) {
                    break;
                }
                bounds[d].1 += 1;
            }
            while bounds[d].0 > 0 && number(bounds[d].0) && number(bounds[d].0 - 1) {
                let mut slice = bounds.clone();
                slice[d] = (bounds[d].0 - 1, bounds[d].0 - 1);
                if !every(&slice, domains, &set) {
                    break;
                }
                bounds[d].0 -= 1;
            }
        }
        let words: Vec<String> = bounds
            .iter()
            .zip(domains)
            .filter(|((lo, hi), d)| !(*lo == 0 && *hi + 1 == d.pieces.len()))
            .map(|(&(lo, hi), d)| d.label(lo, hi))
            .collect();
        let region = if words.is_empty() {
            "every value of the inputs".to_owned()
        } else {
            words.join(", ")
        };
        if seen.insert(region.clone()) {
            out.push(region);
        }
    }
    let more = out.len().saturating_sub(limit);
    out.truncate(limit);
    (out, more)
}

impl Domain {
    /// Whether the domain is pieces of the number line (and perhaps none) only.
    fn numeric(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p.kind, PieceKind::Numbers(_)))
            && self
                .pieces
                .iter()
                .all(|p| matches!(p.kind, PieceKind::Numbers(_) | PieceKind::Is(Lit::None)))
    }

    /// How a finding writes pieces `lo..=hi` (neighbouring intervals joined).
    fn label(&self, lo: usize, hi: usize) -> String {
        if lo == hi {
            return self.pieces[lo].label.clone();
        }
        match (&self.pieces[lo].kind, &self.pieces[hi].kind) {
            (PieceKind::Numbers(a), PieceKind::Numbers(b)) => label(
                &self.id,
                Interval {
                    low: a.low,
                    high: b.high,
                },
            ),
            _ => self.pieces[lo..=hi]
                .iter()
                .map(|p| p.label.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }
}

/// Whether every cell in the box `bounds` (each input's pieces from..=to) is in `set`.
fn every(bounds: &[(usize, usize)], domains: &[Domain], set: &HashSet<usize>) -> bool {
    let mut probe: Vec<usize> = bounds.iter().map(|b| b.0).collect();
    loop {
        if !set.contains(&encode(&probe, domains)) {
            return false;
        }
        // The next cell of the box, the last input fastest.
        let mut d = domains.len();
        loop {
            if d == 0 {
                return true;
            }
            d -= 1;
            if probe[d] < bounds[d].1 {
                probe[d] += 1;
                break;
            }
            probe[d] = bounds[d].0;
        }
    }
}

/// The first generated profile (by `examples`, cell to profile) that lands in one of `cells`.
pub(crate) fn example<'e, T>(cells: &[usize], examples: &'e HashMap<usize, T>) -> Option<&'e T> {
    cells.iter().find_map(|c| examples.get(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(
        cuts: &[f64],
        low: Option<IntervalEnd>,
        high: Option<IntervalEnd>,
        integer: bool,
    ) -> Vec<String> {
        numbers("x", cuts, low, high, integer)
            .into_iter()
            .map(|p| p.label)
            .collect()
    }

    #[test]
    fn a_number_range_is_cut_at_every_bound() {
        assert_eq!(
            cut(&[10.0, 10.5], None, None, false),
            [
                "x < 10",
                "x = 10",
                "x in (10, 10.5)",
                "x = 10.5",
                "x > 10.5"
            ]
        );
        let positive = Some(IntervalEnd {
            at: 0.0,
            closed: false,
        });
        assert_eq!(
            cut(
                &[0.0, 7.0],
                positive,
                Some(IntervalEnd {
                    at: 100.0,
                    closed: true
                }),
                false
            ),
            ["x in (0, 7)", "x = 7", "x in (7, 100]"]
        );
        // Whole numbers: (7, 8) holds none, so it is no cell.
        assert_eq!(
            cut(
                &[7.0, 8.0],
                Some(IntervalEnd {
                    at: 1.0,
                    closed: true
                }),
                None,
                true
            ),
            ["x in [1, 7)", "x = 7", "x = 8", "x > 8"]
        );
    }

    #[test]
    fn every_piece_holds_its_own_example() {
        for p in numbers("x", &[-1.0, 0.0, 2.5], None, None, false) {
            assert!(p.contains(&p.value), "{}", p.label);
        }
        let texts: Vec<Box<str>> = vec!["other".into()];
        let o = other_text(&texts, "t");
        assert!(o.contains(&o.value) && !o.contains(&Value::from("other")));
    }
}
