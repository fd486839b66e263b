//! Decision-table analysis: gaps, overlaps and shadowed rows, each shown with an example profile.
//!
//! Row conditions are arbitrary expressions over profile fields and facts, so instead of solving
//! them symbolically we evaluate them over a generated set of profiles ([`super::space`]) that
//! covers every enumerated value, both booleans, none where a field is optional, and each number
//! the conditions (and the facts they read) mention together with its neighbours. Every finding
//! therefore comes with a real profile that shows it. The flip side, said in every message: a
//! row reported as never winning is so over the generated set, which is built to hit each
//! boundary the rules write down, not over every conceivable profile.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as J;

use super::space::{base_value, decode, example, input_space, sample_index, set_path};
use decide_engine::error::Error;
use decide_engine::graph::reach::ancestors;
use decide_engine::graph::{Body, Graph};
use decide_engine::kind::NodeKind;
use decide_engine::policy::rules::{HitPolicy, NoMatch};
use decide_engine::profile::Profile;

/// At most this many generated profiles per table; larger spaces are sampled evenly.
pub const MAX_SAMPLES: usize = 50_000;

/// What the analysis of one table found.
#[derive(Debug, Clone)]
pub struct TableReport {
    pub id: String,
    pub hit: HitPolicy,
    pub rows: usize,
    /// Profiles evaluated, and how many combinations the input space has.
    pub evaluated: usize,
    pub combinations: u128,
    /// Generated profiles the rules could not evaluate (left out of the analysis).
    pub failed: usize,
    /// The profile fields varied.
    pub inputs: Vec<String>,
    /// Rows no generated profile showed alive (matching, or winning one) that a profile of the
    /// policy's own test cases does.
    pub witnessed: usize,
    /// Analysed exactly: the number of elementary cells of its inputs' domains enumerated.
    pub exact: Option<u128>,
    /// The table's declared inputs (`inputs:`), by id.
    pub columns: Vec<String>,
    /// Why it was sampled, not analysed exactly (a `when:` row, a cell that is an expression,
    /// too many elementary cells).
    pub sampled_because: Option<String>,
    pub findings: Vec<Error>,
}

/// Analyses every table of the graph. `witnesses` are profiles of the policy's own test cases:
/// a row that only a conjunction of many fields reaches (say, a deployment that needs a GPU
/// count just above a box, high hours, no deadline and no requirement) can be too rare for an
/// even sample of the whole space to meet, and a case that matches it proves it alive.
#[must_use]
pub fn analyse(graph: &Graph, as_of: jiff::civil::Date, witnesses: &[Profile]) -> Vec<TableReport> {
    let c = graph.compiled();
    (0..c.nodes.len())
        .filter(|&i| c.nodes[i].kind == NodeKind::Table)
        .map(|i| analyse_table(graph, i, as_of, witnesses))
        .collect()
}

#[allow(clippy::too_many_lines)] // generate, evaluate, then one block per kind of finding
fn analyse_table(
    graph: &Graph,
    table: usize,
    as_of: jiff::civil::Date,
    witnesses: &[Profile],
) -> TableReport {
    let c = graph.compiled();
    let node = &c.nodes[table];
    let Body::Table(decide_engine::graph::nodes::table::TableBody {
        hit,
        rows,
        default,
        no_match,
        ..
    }) = &node.body
    else {
        unreachable!("only tables are analysed")
    };
    let ancestors = ancestors(graph, table);
    let needed: Vec<usize> = c
        .order
        .iter()
        .copied()
        .filter(|i| ancestors.contains(i))
        .collect();

    // The input space: the profile fields the table reads, directly or through facts.
    let mut paths: BTreeSet<&str> = BTreeSet::new();
    let mut texts: Vec<&str> = Vec::new();
    for &i in needed.iter().chain(std::iter::once(&table)) {
        paths.extend(c.nodes[i].profile_paths.iter().map(String::as_str));
        texts.extend(c.nodes[i].expr_texts());
    }
    let dimensions = input_space(paths, &texts, &[]);
    // Saturating: a huge space is sampled all the same (found by reading the fuzz findings: a
    // row listing thousands of numbers overflowed the product and the stride).
    let combinations: u128 = dimensions
        .iter()
        .fold(1u128, |n, d| n.saturating_mul(d.values.len() as u128));
    let samples = usize::try_from(combinations.min(MAX_SAMPLES as u128)).unwrap_or(MAX_SAMPLES);

    let mut report = TableReport {
        id: node.id.to_owned(),
        hit: *hit,
        rows: rows.len(),
        evaluated: 0,
        combinations,
        failed: 0,
        inputs: dimensions.iter().map(|d| d.path.join(".")).collect(),
        witnessed: 0,
        exact: None,
        columns: Vec::new(),
        sampled_because: None,
        findings: Vec::new(),
    };
    let Body::Table(body) = &node.body else {
        unreachable!("only tables are analysed")
    };
    let domains = super::exact::domains(body);
    match super::exact::not_exact(body).map_or_else(
        || {
            super::exact::count(&domains).ok_or_else(|| {
                format!(
                    "its inputs make more than {} elementary cells",
                    thousands(super::exact::MAX_CELLS)
                )
            })
        },
        Err,
    ) {
        Ok(cells) => {
            let space = RowSpace {
                table,
                needed: &needed,
                dimensions: &dimensions,
                combinations,
                samples,
                hit: *hit,
                rows: rows.len(),
            };
            exact_findings(
                graph,
                &space,
                as_of,
                &domains,
                cells,
                witnesses,
                &mut report,
            );
            return report;
        }
        Err(why) => report.sampled_because = Some(why),
    }
    let n = rows.len();
    let space = RowSpace {
        table,
        needed: &needed,
        dimensions: &dimensions,
        combinations,
        samples,
        hit: *hit,
        rows: n,
    };
    let Scan {
        matches,
        wins,
        taken_by,
        overlaps,
        gap,
        evaluated,
        failed,
        first_failure,
    } = scan(graph, &space, as_of);
    report.evaluated = evaluated;
    report.failed = failed;
    // A row that matches, or wins, only under another date's catalog (say, a row for a day on
    // which no container is quoted) is alive: it is looked for at every date a quote sheet
    // takes effect before it is reported.
    let dead = |j: usize| matches[j].is_none();
    let shadowed = |j: usize| *hit == HitPolicy::First && matches[j].is_some() && !wins[j];
    let mut alive_elsewhere = vec![false; n];
    // Rows a profile of the policy's own test cases shows alive, at this date or another.
    let mut shown_by_cases = vec![false; n];
    let witness = |g: &Graph, date: jiff::civil::Date, shown: &mut [bool]| {
        for profile in witnesses {
            let Ok(hits) = g.table_rows_matching(profile, date, table, &needed) else {
                continue;
            };
            let first = hits.iter().position(|&m| m);
            for (j, seen) in shown.iter_mut().enumerate() {
                *seen |= (dead(j) && hits[j]) || (shadowed(j) && first == Some(j));
            }
        }
    };
    if (0..n).any(|j| dead(j) || shadowed(j)) {
        witness(graph, as_of, &mut shown_by_cases);
        for (date, other) in graphs_at_other_dates(graph) {
            let seen = scan(&other, &space, date);
            for (j, alive) in alive_elsewhere.iter_mut().enumerate() {
                *alive |= (dead(j) && seen.matches[j].is_some()) || (shadowed(j) && seen.wins[j]);
            }
            witness(&other, date, &mut shown_by_cases);
        }
        for (alive, seen) in alive_elsewhere.iter_mut().zip(&shown_by_cases) {
            if *seen && !*alive {
                *alive = true;
                report.witnessed += 1;
            }
        }
    }
    let policy = graph.policy();
    let row_id = |j: usize| rows[j].id.to_owned();
    let over = format!(
        "over {} generated profiles",
        thousands(report.evaluated as u128)
    );
    let at_row = |j: usize, message: String| {
        policy
            .error_at(rows[j].file, rows[j].location, message)
            .field(format!("{}.rows.{}", node.id, row_id(j)))
            .as_warning()
    };
    if report.evaluated == 0 {
        let mut e = policy
            .error_at(
                node.file,
                node.location,
                format!(
                    "table `{}`: no generated profile could be evaluated, so it was not analysed",
                    node.id
                ),
            )
            .as_warning();
        if let Some(f) = first_failure {
            e = e.help(format!("the first failure: {}", f.message()));
        }
        report.findings.push(e);
        return report;
    }
    for j in 0..n {
        if alive_elsewhere[j] {
            continue;
        }
        if dead(j) {
            report.findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` never matches ({over})",
                        node.id,
                        row_id(j)
                    ),
                )
                .help("its condition may contradict itself, or ask for a value the profile cannot have"),
            );
        } else if shadowed(j) {
            let by = taken_by[j].map(row_id).unwrap_or_default();
            report.findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` is shadowed: every profile it matches is taken by an earlier row, e.g. `{by}` ({over})",
                        node.id,
                        row_id(j)
                    ),
                )
                .help(format!("example profile it matches, where `{by}` wins: {}", show(matches[j].as_ref())))
                .help("move the row above the rows that take its cases, or narrow those rows"),
            );
        }
    }
    for ((a, b), profile) in &overlaps {
        report.findings.push(
            at_row(
                *b,
                format!(
                    "table `{}`: rows `{}` and `{}` overlap, and hit policy `unique` forbids it",
                    node.id,
                    row_id(*a),
                    row_id(*b)
                ),
            )
            .help(format!(
                "example profile both match: {}",
                show(Some(profile))
            ))
            .help("narrow one of the rows, or use `hit: first` if the order settles it"),
        );
    }
    if default.is_none()
        && *no_match == NoMatch::Error
        && let Some((profile, count)) = gap
    {
        report.findings.push(
            policy
                .error_at(
                    node.file,
                    node.location,
                    format!(
                        "table `{}`: a gap: {} of {} generated profiles match no row, and the table says `no_match: error`",
                        node.id,
                        thousands(count as u128),
                        thousands(report.evaluated as u128)
                    ),
                )
                .field(format!("{}.rows", node.id))
                .help(format!("example profile no row matches: {}", show(Some(&profile))))
                .help("add a row that covers it, a `default:` row, or `no_match: none` if no row is a valid answer")
                .as_warning(),
        );
    }
    report
}

/// The exact analysis of a table whose cells are all unary tests ([`super::exact`]): every
/// elementary cell of its inputs tested, each finding with its regions written out and, where
/// a generated profile lands in one, that profile.
#[allow(clippy::too_many_lines)] // one block per kind of finding
fn exact_findings(
    graph: &Graph,
    space: &RowSpace,
    as_of: jiff::civil::Date,
    domains: &[super::exact::Domain],
    cells: u128,
    witnesses: &[Profile],
    report: &mut TableReport,
) {
    use super::exact::{enumerate, regions};
    let c = graph.compiled();
    let node = &c.nodes[space.table];
    let Body::Table(body) = &node.body else {
        return;
    };
    let policy = graph.policy();
    report.exact = Some(cells);
    report.columns = domains.iter().map(|d| d.id.clone()).collect();
    let total = usize::try_from(cells).unwrap_or(usize::MAX);
    let found = enumerate(body, domains, total);
    let alive = |j: usize| {
        if space.hit == HitPolicy::First {
            &found.won[j]
        } else {
            &found.matched[j]
        }
    };
    // The cells the policy's own test cases land in, at this date and every other a quote
    // sheet takes effect: a row they show alive needs no generated profile to show it.
    let dates: Vec<(jiff::civil::Date, Option<Graph>)> = std::iter::once((as_of, None))
        .chain(
            graphs_at_other_dates(graph)
                .into_iter()
                .map(|(d, g)| (d, Some(g))),
        )
        .collect();
    let by_cases: std::collections::HashSet<usize> = dates
        .iter()
        .flat_map(|(date, other)| {
            let g = other.as_ref().unwrap_or(graph);
            witnesses.iter().filter_map(move |p| {
                let values = g.table_inputs(p, *date, space.table, space.needed).ok()?;
                cell(&values, domains)
            })
        })
        .collect();
    let by_a_case = |j: usize| alive(j).iter().any(|c| by_cases.contains(c));
    // The sets of cells a finding or the reachability check below shows an example of: the
    // live cells of every row no test case shows alive, the matched cells of a row that never
    // wins, each forbidden overlap, the gaps the table forbids. Generated profiles (the first
    // to land in a cell is its example) are evaluated until each of these has one, or all are.
    let gaps_matter = body.default.is_none() && body.no_match == NoMatch::Error;
    let mut pending: Vec<&[usize]> = (0..body.rows.len())
        .flat_map(|j| {
            let never_wins = space.hit == HitPolicy::First && found.won[j].is_empty();
            [
                if by_a_case(j) {
                    &[]
                } else {
                    alive(j).as_slice()
                },
                if never_wins { &found.matched[j] } else { &[] },
            ]
        })
        .chain(found.overlaps.values().map(Vec::as_slice))
        .chain(gaps_matter.then_some(found.gaps.as_slice()))
        .filter(|set| !set.is_empty())
        .collect();
    let mut examples: std::collections::HashMap<usize, J> = std::collections::HashMap::new();
    for chunk in space.evaluated(|p| graph.table_inputs(p, as_of, space.table, space.needed)) {
        for (assignment, result) in chunk {
            let Ok(values) = result else {
                report.failed += 1;
                continue;
            };
            report.evaluated += 1;
            if let Some(cell) = cell(&values, domains) {
                examples
                    .entry(cell)
                    .or_insert_with(|| example(space.dimensions, &assignment));
            }
        }
        pending.retain(|set| super::exact::example(set, &examples).is_none());
        if pending.is_empty() {
            break;
        }
    }
    let over = format!(
        "exact, over all {} elementary cells of its inputs",
        thousands(cells)
    );
    let rows = &body.rows;
    let at_row = |j: usize, message: String| {
        policy
            .error_at(rows[j].file, rows[j].location, message)
            .field(format!("{}.rows.{}", node.id, rows[j].id))
            .as_warning()
    };
    // Where: the regions written out; then the example profile, or plainly that none lands.
    let place = |e: Error, set: &[usize]| {
        let (written, more) = regions(set, domains, 5);
        let mut where_ = written.join("; ");
        if more > 0 {
            where_ = format!("{where_}; and {more} more");
        }
        let e = e.help(format!("where {where_}"));
        match super::exact::example(set, &examples) {
            Some(profile) => e.help(format!("a generated profile there: {}", show(Some(profile)))),
            None => e.help(format!(
                "no generated profile ({} tried) reaches it: its inputs may be tied to one another through the facts they read, so no profile may ever be there",
                thousands(report.evaluated as u128)
            )),
        }
    };
    let mut findings = Vec::new();
    for j in 0..rows.len() {
        if found.matched[j].is_empty() {
            findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` never matches: no value of its inputs passes all its cells ({over})",
                        node.id, rows[j].id
                    ),
                )
                .help("its cells may ask for a value its input cannot have"),
            );
        } else if space.hit == HitPolicy::First && found.won[j].is_empty() {
            let by = found.taken_by[j].map(|b| rows[b].id).unwrap_or_default();
            findings.push(
                place(
                    at_row(
                        j,
                        format!(
                            "table `{}`: row `{}` never wins: each of the {} elementary cells it matches is taken by an earlier row, e.g. `{by}` ({over})",
                            node.id,
                            rows[j].id,
                            thousands(found.matched[j].len() as u128)
                        ),
                    ),
                    &found.matched[j],
                )
                .help("move the row above the rows that take its cases, or narrow those rows"),
            );
        }
    }
    for ((a, b), set) in &found.overlaps {
        findings.push(
            place(
                at_row(
                    *b,
                    format!(
                        "table `{}`: rows `{}` and `{}` overlap in {} elementary cells, and hit policy `unique` forbids it ({over})",
                        node.id,
                        rows[*a].id,
                        rows[*b].id,
                        thousands(set.len() as u128)
                    ),
                ),
                set,
            )
            .help("narrow one of the rows, or use `hit: first` if the order settles it"),
        );
    }
    if body.default.is_none() && body.no_match == NoMatch::Error && !found.gaps.is_empty() {
        findings.push(
            place(
                policy
                    .error_at(
                        node.file,
                        node.location,
                        format!(
                            "table `{}`: a gap: no row matches in {} of the {} elementary cells of its inputs, and the table says `no_match: error` (exact)",
                            node.id,
                            thousands(found.gaps.len() as u128),
                            thousands(cells)
                        ),
                    )
                    .field(format!("{}.rows", node.id))
                    .as_warning(),
                &found.gaps,
            )
            .help("add a row that covers it, a `default:` row, or `no_match: none` if no row is a valid answer"),
        );
    }
    // A row alive over the inputs' domains that no generated profile shows alive (matching it,
    // or for `first` winning one), at this date or another a quote sheet takes effect, and no
    // profile of the policy's test cases either: its inputs are tied through facts (say, one of
    // them is always false), and no profile reaches it.
    // A row alive over its inputs' domains that neither a test case nor a generated profile
    // shows alive at this date may be at another date a quote sheet takes effect (say, a row
    // for a day on which no container is quoted).
    let candidates: Vec<usize> = (0..rows.len())
        .filter(|&j| {
            !alive(j).is_empty()
                && !by_a_case(j)
                && super::exact::example(alive(j), &examples).is_none()
        })
        .collect();
    report.witnessed = (0..rows.len())
        .filter(|&j| by_a_case(j) && super::exact::example(alive(j), &examples).is_none())
        .count();
    if !candidates.is_empty() {
        let seen: std::collections::HashSet<usize> = dates
            .iter()
            .filter_map(|(date, other)| Some(reached_cells(other.as_ref()?, space, *date, domains)))
            .flatten()
            .collect();
        for j in candidates {
            let cells_j = alive(j);
            if cells_j.iter().any(|c| seen.contains(c)) {
                continue;
            }
            let what = if space.hit == HitPolicy::First {
                "wins"
            } else {
                "matches"
            };
            let (written, more) = regions(cells_j, domains, 3);
            let mut where_ = written.join("; ");
            if more > 0 {
                where_ = format!("{where_}; and {more} more");
            }
            findings.push(
                at_row(
                    j,
                    format!(
                        "table `{}`: row `{}` {what} only where no generated profile reaches ({} tried, at every date a quote sheet takes effect), nor a profile of the policy's test cases",
                        node.id,
                        rows[j].id,
                        thousands(report.evaluated as u128)
                    ),
                )
                .help(format!("over its inputs' values it {what} where {where_}"))
                .help("its inputs may be tied to one another through the facts they read (one always true, say), so no profile may ever be there"),
            );
        }
    }
    report.findings = findings;
}

/// The elementary cells generated profiles land in, at `as_of` under `graph`.
fn reached_cells(
    graph: &Graph,
    space: &RowSpace,
    as_of: jiff::civil::Date,
    domains: &[super::exact::Domain],
) -> std::collections::HashSet<usize> {
    let mut out = std::collections::HashSet::new();
    for (_, result) in space
        .evaluated(|p| graph.table_inputs(p, as_of, space.table, space.needed))
        .flatten()
    {
        if let Some(cell) = result.ok().and_then(|values| cell(&values, domains)) {
            out.insert(cell);
        }
    }
    out
}

/// The elementary cell a table's input values fall in, if each is in its input's domain.
fn cell(values: &[decide_lang::Value], domains: &[super::exact::Domain]) -> Option<usize> {
    let pieces: Option<Vec<usize>> = domains
        .iter()
        .zip(values)
        .map(|(d, v)| d.piece_of(v))
        .collect();
    pieces.map(|p| super::exact::encode(&p, domains))
}

/// The generated profiles of one table: where its rows are evaluated.
struct RowSpace<'a> {
    table: usize,
    needed: &'a [usize],
    dimensions: &'a [super::space::Dimension],
    combinations: u128,
    samples: usize,
    hit: HitPolicy,
    rows: usize,
}

impl RowSpace<'_> {
    /// The generated profiles, spread evenly over the space, each with its assignment; the
    /// combinations the profile format refuses (a value out of range, two fields that
    /// contradict each other) are left out.
    fn profiles(&self) -> impl Iterator<Item = (Vec<&J>, Profile)> + '_ {
        let base = base_value();
        (0..self.samples).filter_map(move |k| {
            let index = sample_index(k, self.combinations, self.samples);
            let assignment = decode(index, self.dimensions);
            let mut value = base.clone();
            for (d, v) in self.dimensions.iter().zip(&assignment) {
                set_path(&mut value, &d.path, (*v).clone());
            }
            let profile = serde_json::from_value::<Profile>(value).ok()?;
            profile
                .contradiction()
                .is_none()
                .then_some((assignment, profile))
        })
    }

    /// `f` of each generated profile, [`CHUNK`] profiles evaluated at a time on every core,
    /// each chunk in the profiles' order with their assignments: the same chunks and results on
    /// any number of cores, and a caller that has seen enough stops between two chunks.
    fn evaluated<'s, T: Send + 's>(
        &'s self,
        f: impl Fn(&Profile) -> T + Sync + 's,
    ) -> impl Iterator<Item = Vec<(Vec<&'s J>, T)>> + 's {
        use rayon::prelude::*;
        let mut profiles = self.profiles();
        std::iter::from_fn(move || {
            let chunk: Vec<(Vec<&J>, Profile)> = profiles.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                return None;
            }
            let results: Vec<T> = chunk.par_iter().map(|(_, p)| f(p)).collect();
            Some(
                chunk
                    .into_iter()
                    .zip(results)
                    .map(|((assignment, _), result)| (assignment, result))
                    .collect(),
            )
        })
    }
}

/// Generated profiles evaluated together on every core between two looks at what was found.
const CHUNK: usize = 1_000;

/// What evaluating a table's rows over its generated profiles saw.
struct Scan {
    /// Per row: some profile it matches; whether it wins one (first hit) and, if it never
    /// wins, the earlier row that took its first match.
    matches: Vec<Option<J>>,
    wins: Vec<bool>,
    taken_by: Vec<Option<usize>>,
    /// Per pair of rows: a profile both match.
    overlaps: BTreeMap<(usize, usize), J>,
    /// A profile no row matches, and how many there were.
    gap: Option<(J, usize)>,
    evaluated: usize,
    failed: usize,
    first_failure: Option<Error>,
}

fn scan(graph: &Graph, space: &RowSpace, as_of: jiff::civil::Date) -> Scan {
    // Per row: some profile it matches; some profile where it wins (first) and, if it never
    // wins, the earlier row that took its first match. Per pair: a profile both match.
    let mut matches: Vec<Option<J>> = vec![None; space.rows];
    let mut wins = vec![false; space.rows];
    let mut taken_by: Vec<Option<usize>> = vec![None; space.rows];
    let mut overlaps: BTreeMap<(usize, usize), J> = BTreeMap::new();
    let mut gap: Option<(J, usize)> = None;
    let mut first_failure: Option<Error> = None;
    let (mut evaluated, mut failed) = (0, 0);
    for (assignment, result) in space
        .evaluated(|p| graph.table_rows_matching(p, as_of, space.table, space.needed))
        .flatten()
    {
        let assignment = assignment.as_slice();
        match result {
            Ok(hits) => {
                evaluated += 1;
                let example = || example(space.dimensions, assignment);
                let mut first = None;
                for (j, &m) in hits.iter().enumerate() {
                    if !m {
                        continue;
                    }
                    if matches[j].is_none() {
                        matches[j] = Some(example());
                    }
                    match first {
                        None => {
                            first = Some(j);
                            wins[j] = true;
                        }
                        Some(f) => {
                            if taken_by[j].is_none() {
                                taken_by[j] = Some(f);
                            }
                            if space.hit == HitPolicy::Unique {
                                overlaps.entry((f, j)).or_insert_with(example);
                            }
                        }
                    }
                }
                if first.is_none() {
                    match &mut gap {
                        Some((_, count)) => *count += 1,
                        None => gap = Some((example(), 1)),
                    }
                }
            }
            Err(e) => {
                failed += 1;
                first_failure.get_or_insert(e);
            }
        }
    }

    Scan {
        matches,
        wins,
        taken_by,
        overlaps,
        gap,
        evaluated,
        failed,
        first_failure,
    }
}

/// The graph compiled again at each other date a quote sheet takes effect (its catalog then),
/// for a policy with quote sheets; none otherwise.
fn graphs_at_other_dates(graph: &Graph) -> Vec<(jiff::civil::Date, Graph)> {
    let policy = graph.policy();
    if policy.quote_sheets.is_none() {
        return Vec::new();
    }
    let dates: BTreeSet<jiff::civil::Date> = policy.quotes.iter().map(|q| q.valid_from).collect();
    dates
        .into_iter()
        .filter(|&d| !policy.prices_hold_at(d))
        .filter_map(|d| {
            Graph::compile_in(policy.at(d), graph.lang())
                .ok()
                .map(|g| (d, g))
        })
        .collect()
}

/// An example profile on one line, in YAML flow style (`none` for null).
fn show(example: Option<&J>) -> String {
    fn flow(v: &J, out: &mut String) {
        match v {
            J::Null => out.push_str("none"),
            J::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    flow(v, out);
                }
                out.push('}');
            }
            J::Array(list) => {
                out.push('[');
                for (i, v) in list.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    flow(v, out);
                }
                out.push(']');
            }
            J::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    match example {
        Some(J::Object(map)) => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                out.push_str(k);
                out.push_str(": ");
                flow(v, &mut out);
            }
        }
        Some(v) => flow(v, &mut out),
        None => out.push_str("none"),
    }
    out
}

/// `12345` as `12,345`.
#[must_use]
pub fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_a_huge_space_does_not_overflow() {
        // Found from the fuzz findings: thousands of literals over every profile field.
        let huge = [1000u128; 20]
            .iter()
            .fold(1u128, |n, d| n.saturating_mul(*d));
        assert_eq!(huge, u128::MAX);
        let last = sample_index(MAX_SAMPLES - 1, huge, MAX_SAMPLES);
        assert!(last < huge);
        assert!(last > huge / 2, "samples spread over the whole space");
        assert_eq!(sample_index(7, 100, 100), 7);
    }

    #[test]
    fn sampling_varies_the_last_dimensions() {
        // 1,200,000 combinations, 50,000 samples: an even stride of 24 would keep the last
        // three yes/no digits (index % 8) at 0 in every sample.
        let combinations = 1_200_000u128;
        let mut low = std::collections::BTreeSet::new();
        let mut seen = std::collections::HashSet::new();
        for k in 0..MAX_SAMPLES {
            let i = sample_index(k, combinations, MAX_SAMPLES);
            assert!(i < combinations);
            low.insert(i % 8);
            seen.insert(i);
        }
        assert_eq!(low.len(), 8);
        assert_eq!(seen.len(), MAX_SAMPLES, "distinct combinations");
    }
}
