//! Searches: every combination of the decision variables' values is a candidate; of those that
//! meet every constraint the least by `minimize` wins, and each constraint names the cheapest
//! candidate it ruled out.
//!
//! The engine enumerates every candidate of the variables' lists, so what a search returns is
//! what an exhaustive search over those lists gives, by construction. A policy that narrows a
//! list with what it knows (a bill that only grows past a count) gives the wider list as
//! `reference:`, and `decide validate` searches both on its generated profiles to prove the
//! narrowing loses nothing ([`reference_gaps`]).

use std::cmp::Ordering;
use std::sync::Arc;

use decide_lang::value::{Kind, Value};

use crate::error::Result;
use crate::graph::model::{Body, Node};
use crate::graph::nodes::Shape;
use crate::graph::nodes::select::order;
use crate::graph::run::{BoundItem, Run, show};
use crate::graph::scope::{NodeResult, Reads, Scope};
use crate::policy::ROOT_NAMES;
use crate::policy::rules::Search;
use decide_lang::Expr;
use decide_lang::value::Record;

/// How the kind is drawn in `decide graph`: a hexagon.
pub(crate) const SHAPE: Shape = Shape {
    mermaid: ("{{", "}}"),
    dot: "hexagon",
};

/// The most candidates one search (one offer's, per offer) may try: bounded work, whatever
/// the rules' lists give.
pub const CANDIDATES_MAX: usize = 100_000;

/// The keys of a search's value, in order.
const RESULT_KEYS: [&str; 7] = [
    "best",
    "first",
    "nearest",
    "searched",
    "feasible",
    "ruled_out",
    "cheaper",
];

/// What a candidate's record holds besides its variables and `let` values.
const CANDIDATE_KEYS: [&str; 2] = ["objective", "broken"];

/// A decision variable, compiled.
#[derive(Debug)]
pub struct Variable<'a> {
    pub over: Expr<'a>,
    pub reference: Option<Expr<'a>>,
}

/// A search, compiled.
#[derive(Debug)]
pub struct SearchBody<'a> {
    pub per_offer: bool,
    pub variables: Vec<Variable<'a>>,
    pub derived: Vec<Expr<'a>>,
    pub constraints: Vec<Expr<'a>>,
    pub minimize: Expr<'a>,
    pub nearest: Option<Expr<'a>>,
    /// A lower bound of `minimize` from this candidate to the end of the last variable's list,
    /// read from the variables alone.
    pub bound: Option<Expr<'a>>,
    /// A candidate's record keys: the variables, the `let` values, then [`CANDIDATE_KEYS`].
    candidate_keys: Arc<[Value]>,
    /// The constraints' ids: the keys of `ruled_out`, and what `broken` says.
    constraint_ids: Arc<[Value]>,
    result_keys: Arc<[Value]>,
}

impl<'a> SearchBody<'a> {
    /// The names the search's expressions read as values of their own: the variables, then the
    /// `let` values.
    pub fn local_names(&self) -> &[Value] {
        &self.candidate_keys[..self.variables.len() + self.derived.len()]
    }

    /// Every expression, in the order written.
    pub(crate) fn exprs(&self) -> Vec<&Expr<'a>> {
        let mut out = Vec::new();
        for v in &self.variables {
            out.push(&v.over);
            out.extend(v.reference.iter());
        }
        out.extend(self.derived.iter());
        out.extend(self.constraints.iter());
        out.push(&self.minimize);
        out.extend(self.nearest.iter());
        out.extend(self.bound.iter());
        out
    }
}

/// A name a search's expressions read as a value of its own: letters, digits and `_`, not a
/// digit first.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Compiles a search: each variable's list with the variables before it named, each `let`
/// with the variables and the values before it, the constraints and the objective with all.
pub(crate) fn compile<'a>(scope: &Scope<'a>, file: usize, s: &'a Search) -> NodeResult<'a> {
    let id = &s.id.value;
    let policy = &scope.owner.policy;
    let fault = |at: &serde_saphyr::Spanned<String>, field: &str, message: String, help: &str| {
        policy
            .error_at(file, at.referenced, format!("search `{id}`: {message}"))
            .field(format!("{id}.{field}"))
            .help(help.to_owned())
    };
    if s.variables.is_empty() {
        return Err(fault(
            &s.id,
            "variables",
            "has no variables, so nothing to choose".to_owned(),
            "list at least one: `variables: [{id: units, over: \"range(1, 9)\"}]`",
        ));
    }
    let own = own_names(scope, s, &fault)?;
    let constraint_ids = constraint_ids(s, &fault)?;
    let mut reads = Reads::default();
    let bound: &[&str] = if s.per_offer { &["offer"] } else { &[] };
    let vars = s.variables.len();
    let mut compile = |text: &'a serde_saphyr::Spanned<String>, field: String, locals: &[&str]| {
        scope.expr_with_locals(
            file,
            text,
            id,
            &field,
            (bound, s.per_offer),
            locals,
            &mut reads,
        )
    };
    let mut variables = Vec::with_capacity(vars);
    for (i, v) in s.variables.iter().enumerate() {
        let name = &v.id.value;
        variables.push(Variable {
            over: compile(&v.over, format!("variables.{name}.over"), &own[..i])?,
            reference: v
                .reference
                .as_ref()
                .map(|r| compile(r, format!("variables.{name}.reference"), &own[..i]))
                .transpose()?,
        });
    }
    let derived = s
        .derived
        .iter()
        .enumerate()
        .map(|(j, d)| {
            compile(
                &d.expr,
                format!("let.{}.expr", d.id.value),
                &own[..vars + j],
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let constraints = s
        .constraints
        .iter()
        .map(|c| compile(&c.holds, format!("constraints.{}.holds", c.id.value), &own))
        .collect::<Result<Vec<_>>>()?;
    let minimize = compile(&s.minimize, "minimize".to_owned(), &own)?;
    let nearest = s
        .nearest
        .as_ref()
        .map(|n| compile(n, "nearest".to_owned(), &own))
        .transpose()?;
    let bound = s
        .bound
        .as_ref()
        .map(|b| compile(b, "bound".to_owned(), &own[..vars]))
        .transpose()?;
    let text = |names: &mut dyn Iterator<Item = &str>| -> Arc<[Value]> {
        names.map(Value::from).collect()
    };
    let body = Body::Search(SearchBody {
        per_offer: s.per_offer,
        variables,
        derived,
        constraints,
        minimize,
        nearest,
        bound,
        candidate_keys: text(&mut own.iter().copied().chain(CANDIDATE_KEYS)),
        constraint_ids: text(&mut constraint_ids.into_iter()),
        result_keys: text(&mut RESULT_KEYS.into_iter()),
    });
    Ok((body, reads))
}

/// A search's error at one of its fields: the place, the field, what is wrong and what would do.
type FieldError<'f> =
    dyn Fn(&serde_saphyr::Spanned<String>, &str, String, &str) -> crate::error::Error + 'f;

/// The names the search's expressions read as values of their own (variables, then `let`
/// values), each a name no node, root or the search itself takes.
fn own_names<'a>(scope: &Scope<'a>, s: &'a Search, fault: &FieldError<'_>) -> Result<Vec<&'a str>> {
    let mut own: Vec<&'a str> = Vec::new();
    let named = s
        .variables
        .iter()
        .map(|v| (&v.id, "variables"))
        .chain(s.derived.iter().map(|d| (&d.id, "let")));
    for (name, field) in named {
        let n = name.value.as_str();
        let taken = if !is_name(n) {
            Some("is not a name (letters, digits and `_`, not a digit first)")
        } else if own.contains(&n) {
            Some("is named twice among the variables and `let` values")
        } else if n == "offer" || CANDIDATE_KEYS.contains(&n) {
            Some("is a name the search gives itself")
        } else if scope.node_index.contains_key(n) || ROOT_NAMES.contains(&n) {
            Some("is the name of a node or of a root, which it would hide")
        } else {
            None
        };
        if let Some(why) = taken {
            return Err(fault(
                name,
                field,
                format!("`{n}` {why}"),
                "give it a name of its own, e.g. `units` or `billed_cny`",
            ));
        }
        own.push(n);
    }
    Ok(own)
}

/// The constraints' ids, each once.
fn constraint_ids<'a>(s: &'a Search, fault: &FieldError<'_>) -> Result<Vec<&'a str>> {
    let mut ids: Vec<&str> = Vec::new();
    for c in &s.constraints {
        if ids.contains(&c.id.value.as_str()) {
            return Err(fault(
                &c.id,
                "constraints",
                format!("constraint `{}` is named twice", c.id.value),
                "name each constraint once: its id is what a ruled-out candidate's `broken` says",
            ));
        }
        ids.push(&c.id.value);
    }
    Ok(ids)
}

/// The search's record; per offer, a map from offer id to each offer's.
pub(crate) fn evaluate(run: &Run<'_>, node: &Node<'_>, s: &SearchBody<'_>) -> Result<Value> {
    if !s.per_offer {
        return Ok(Searcher::new(run, node, s, None, Lists::Over)
            .run()?
            .value(s));
    }
    run.per_offer(|offer| {
        Ok(Some(
            Searcher::new(run, node, s, Some(offer), Lists::Over)
                .run()?
                .value(s),
        ))
    })
}

/// Where searching the variables' `reference:` lists finds a candidate that meets every
/// constraint and costs less than the one their `over:` lists gave (or one where those gave
/// none): a sentence for each, naming both (per offer, each offer's). Nothing where no
/// variable has a reference list. The run must have every node the search reads evaluated.
pub(crate) fn reference_gaps(
    run: &Run<'_>,
    node: &Node<'_>,
    s: &SearchBody<'_>,
) -> Result<Vec<String>> {
    if s.variables.iter().all(|v| v.reference.is_none()) {
        return Ok(Vec::new());
    }
    let gap = |offer: Option<BoundItem<'_>>, label: String| -> Result<Option<String>> {
        let narrow = Searcher::new(run, node, s, offer, Lists::Over).run()?;
        let wide = Searcher::new(run, node, s, offer, Lists::Reference).run()?;
        Ok(match (&narrow.best, &wide.best) {
            (None, Some(w)) => Some(format!(
                "{label}: no candidate of the `over:` lists meets every constraint, while the \
                 reference lists' {} does",
                w.describe(s)
            )),
            (Some(n), Some(w)) if order(&w.objective, &n.objective) == Ordering::Less => {
                Some(format!(
                    "{label}: the `over:` lists give {}, the reference lists {}, which costs less",
                    n.describe(s),
                    w.describe(s)
                ))
            }
            _ => None,
        })
    };
    let mut out = Vec::new();
    if s.per_offer {
        let owner = run.graph.owner();
        for (i, offer) in owner.offers.try_iter().into_iter().flatten().enumerate() {
            let label = format!("search `{}` for offer `{}`", node.id, owner.offer_ids[i]);
            let bound = BoundItem {
                value: &offer,
                offer: Some(i),
            };
            out.extend(gap(Some(bound), label)?);
        }
    } else {
        out.extend(gap(None, format!("search `{}`", node.id))?);
    }
    Ok(out)
}

/// Which list each variable takes its values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lists {
    Over,
    /// `reference:` where a variable has one, else `over:`.
    Reference,
}

/// One candidate tried: its variables' and `let` values, what `minimize` gave, and the first
/// constraint it breaks (by index), if any.
#[derive(Debug, Clone)]
struct Candidate {
    locals: Vec<Value>,
    objective: Value,
    broken: Option<usize>,
}

impl Candidate {
    /// The candidate's record.
    fn value(&self, s: &SearchBody<'_>) -> Value {
        let mut values = self.locals.clone();
        values.push(self.objective.clone());
        values.push(
            self.broken
                .map_or(Value::from(()), |i| s.constraint_ids[i].clone()),
        );
        Record::value(s.candidate_keys.clone(), values)
    }

    /// "units = 13 (objective 275600)", for the messages of `decide validate`.
    fn describe(&self, s: &SearchBody<'_>) -> String {
        let vars: Vec<String> = (0..s.variables.len())
            .map(|i| format!("{} = {}", s.candidate_keys[i], self.locals[i]))
            .collect();
        format!("{} (objective {})", vars.join(", "), self.objective)
    }
}

/// What one search found.
#[derive(Debug)]
struct Tally {
    best: Option<Candidate>,
    /// The first candidate, in the order the lists give them, that meets every constraint.
    first: Option<Candidate>,
    /// The ruled-out candidate `nearest` made least, and what it gave.
    nearest: Option<(Value, Candidate)>,
    searched: usize,
    feasible: usize,
    /// Per constraint: how many candidates it was the first to rule out.
    ruled_out: Vec<usize>,
    /// Per constraint: the least-cost candidate it ruled out (of those with a cost).
    cheapest_ruled_out: Vec<Option<Candidate>>,
}

impl Tally {
    fn value(&self, s: &SearchBody<'_>) -> Value {
        let none = || Value::from(());
        let best = self.best.as_ref().map_or_else(none, |c| c.value(s));
        let first = self.first.as_ref().map_or_else(none, |c| c.value(s));
        let nearest = match (&self.best, &self.nearest) {
            (None, Some((_, c))) => c.value(s),
            _ => none(),
        };
        let ruled_out = Record::value(
            s.constraint_ids.clone(),
            self.ruled_out.iter().map(|&n| Value::from(n)).collect(),
        );
        let cheaper: Vec<Value> = self
            .cheapest_ruled_out
            .iter()
            .flatten()
            .filter(|c| {
                self.best
                    .as_ref()
                    .is_none_or(|b| order(&c.objective, &b.objective) == Ordering::Less)
            })
            .map(|c| c.value(s))
            .collect();
        Record::value(
            s.result_keys.clone(),
            vec![
                best,
                first,
                nearest,
                Value::from(self.searched),
                Value::from(self.feasible),
                ruled_out,
                Value::from(cheaper),
            ],
        )
    }
}

/// One search under way.
struct Searcher<'r, 'g> {
    run: &'r Run<'g>,
    node: &'r Node<'r>,
    s: &'r SearchBody<'r>,
    offer: Option<BoundItem<'r>>,
    domain: Lists,
    out: Tally,
}

impl<'r, 'g> Searcher<'r, 'g> {
    fn new(
        run: &'r Run<'g>,
        node: &'r Node<'r>,
        s: &'r SearchBody<'r>,
        offer: Option<BoundItem<'r>>,
        domain: Lists,
    ) -> Self {
        Searcher {
            run,
            node,
            s,
            offer,
            domain,
            out: Tally {
                best: None,
                first: None,
                nearest: None,
                searched: 0,
                feasible: 0,
                ruled_out: vec![0; s.constraints.len()],
                cheapest_ruled_out: vec![None; s.constraints.len()],
            },
        }
    }

    fn run(mut self) -> Result<Tally> {
        let mut locals = Vec::with_capacity(self.s.candidate_keys.len());
        self.walk(&mut locals)?;
        Ok(self.out)
    }

    fn eval(&self, expr: &Expr<'_>, locals: &[Value]) -> Result<Value> {
        let id = self.node.id;
        self.run
            .eval_with_locals(expr, &|| format!("search `{id}`"), self.offer, locals)
    }

    /// Every value of the next variable, each with the ones after it; a whole candidate is
    /// visited.
    fn walk(&mut self, locals: &mut Vec<Value>) -> Result<()> {
        let depth = locals.len();
        let s = self.s;
        let Some(variable) = s.variables.get(depth) else {
            return self.visit(locals);
        };
        let list_expr = match self.domain {
            Lists::Reference => variable.reference.as_ref().unwrap_or(&variable.over),
            Lists::Over => &variable.over,
        };
        let list = self.eval(list_expr, locals)?;
        if list.kind() != Kind::List {
            return Err(self.run.fail_expr(
                list_expr,
                self.node.id,
                &format!(
                    "search `{}`: variable `{}` takes the values of a list, and this gave {}",
                    self.node.id,
                    s.candidate_keys[depth],
                    show(&list)
                ),
            ));
        }
        let innermost = depth + 1 == s.variables.len();
        for value in list.try_iter().into_iter().flatten() {
            locals.push(value);
            if innermost && self.bounded(locals)? {
                locals.pop();
                break;
            }
            self.walk(locals)?;
            locals.pop();
        }
        Ok(())
    }

    /// Whether the `bound:` of the candidate whose variables are `locals` is no less than the
    /// best objective found so far, so that no candidate from here to the end of the last
    /// variable's list can win. Never on the `reference:` lists, which prove the bound.
    fn bounded(&self, locals: &[Value]) -> Result<bool> {
        let (Some(bound), Some(best), Lists::Over) = (&self.s.bound, &self.out.best, self.domain)
        else {
            return Ok(false);
        };
        let at = self.eval(bound, locals)?;
        if at.is_none() {
            return Ok(false);
        }
        if !matches!(at.kind(), Kind::Number | Kind::List) {
            return Err(self.run.fail_expr(
                bound,
                self.node.id,
                &format!(
                    "search `{}`: `bound` gave {}, expected a number or a list of numbers (or \
                     none, for no bound)",
                    self.node.id,
                    show(&at)
                ),
            ));
        }
        Ok(order(&at, &best.objective) != Ordering::Less)
    }

    /// One whole candidate: its `let` values, the first constraint it breaks, its cost.
    fn visit(&mut self, locals: &mut Vec<Value>) -> Result<()> {
        let s = self.s;
        self.count()?;
        for d in &s.derived {
            let v = self.eval(d, locals)?;
            locals.push(v);
        }
        let broken = self.broken(locals)?;
        let objective = self.objective(locals, broken)?;
        let ranked = matches!(objective.kind(), Kind::Number | Kind::List);
        let less =
            |than: Option<&Value>| than.is_none_or(|t| order(&objective, t) == Ordering::Less);
        let candidate = || Candidate {
            locals: locals.clone(),
            objective: objective.clone(),
            broken,
        };
        match broken {
            None => {
                self.out.feasible += 1;
                if self.out.first.is_none() {
                    self.out.first = Some(candidate());
                }
                if less(self.out.best.as_ref().map(|b| &b.objective)) {
                    self.out.best = Some(candidate());
                }
            }
            Some(i) => {
                self.out.ruled_out[i] += 1;
                let cheapest = self.out.cheapest_ruled_out[i].as_ref();
                if ranked && less(cheapest.map(|c| &c.objective)) {
                    self.out.cheapest_ruled_out[i] = Some(candidate());
                }
                if let Some(nearest) = &s.nearest {
                    let by = self.eval(nearest, locals)?;
                    if !by.is_none()
                        && self
                            .out
                            .nearest
                            .as_ref()
                            .is_none_or(|(n, _)| order(&by, n) == Ordering::Less)
                    {
                        self.out.nearest = Some((by, candidate()));
                    }
                }
            }
        }
        locals.truncate(s.variables.len());
        Ok(())
    }

    /// Counts one more candidate; past [`CANDIDATES_MAX`], an error.
    fn count(&mut self) -> Result<()> {
        self.out.searched += 1;
        if self.out.searched <= CANDIDATES_MAX {
            return Ok(());
        }
        let offer = self
            .offer
            .and_then(|o| o.offer)
            .map(|i| format!(" for offer `{}`", self.run.graph.owner().offer_ids[i]))
            .unwrap_or_default();
        Err(self.run.fail_at(
            self.node.file,
            self.node.location,
            &format!(
                "search `{}` has more than {CANDIDATES_MAX} candidates{offer}: narrow its \
                 variables' lists",
                self.node.id,
            ),
        ))
    }

    /// The first constraint the candidate breaks, by index; none where it meets them all.
    fn broken(&self, locals: &[Value]) -> Result<Option<usize>> {
        let s = self.s;
        for (i, c) in s.constraints.iter().enumerate() {
            let holds = self.eval(c, locals)?;
            if holds.kind() != Kind::Bool {
                return Err(self.run.fail_expr(
                    c,
                    self.node.id,
                    &format!(
                        "search `{}`: constraint `{}` gave {}, expected true or false",
                        self.node.id,
                        s.constraint_ids[i],
                        show(&holds)
                    ),
                ));
            }
            if !holds.is_true() {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// What `minimize` gives the candidate: a number or a list of numbers, or none for one a
    /// constraint rules out.
    fn objective(&self, locals: &[Value], broken: Option<usize>) -> Result<Value> {
        let s = self.s;
        let objective = self.eval(&s.minimize, locals)?;
        let ranked = matches!(objective.kind(), Kind::Number | Kind::List);
        if ranked || (broken.is_some() && objective.is_none()) {
            return Ok(objective);
        }
        Err(self.run.fail_expr(
            &s.minimize,
            self.node.id,
            &format!(
                "search `{}`: `minimize` gave {}, expected a number or a list of numbers{}",
                self.node.id,
                show(&objective),
                if broken.is_some() {
                    " (or none, for a candidate a constraint rules out)"
                } else {
                    ""
                }
            ),
        ))
    }
}
