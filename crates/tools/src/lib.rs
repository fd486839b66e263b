//! `decide_tools`: what is built on the decide engine ([`decide_engine`]).
//!
//! ```text
//! decide_engine::Evaluation ─► memo (Markdown, HTML, JSON) ─► .md / .html / .json
//! ```
//!
//! The memo (`memo`, `html`), what would change the answer (`sensitivity`), batches of
//! profiles (`batch`), `init`'s questions (`questionnaire`), the offers as a table (`catalog`)
//! and the policy owner's toolkit: `check` (what `decide validate` finds in a compiled graph,
//! decision tables and the search for profiles that break an invariant included), `suite`
//! (policy test cases and coverage), `diff` (two graphs over the same profiles), `diagram` (the
//! graph as Mermaid or DOT), `calibrate` (the models against measurements) and `schema` (JSON
//! Schemas of the formats people write). The root's [`decide`] functions read a profile and
//! decide it as `decide PROFILE` does.
//!
//! The command line (`src/cli/` at the repository's root: clap, the `init` prompts, progress
//! bars, signals) is the `decide` binary's, a crate of its own on top of this one: it uses
//! nothing here that is not public, and this crate depends on none of its crates.

// `println!` and `eprintln!` panic when the reader of a pipe goes away: the library writes to
// no terminal, and the program's writes (`src/cli/stdio.rs`, in the binary) end quietly instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod batch;
pub mod calibrate;
pub mod catalog;
pub mod check;
pub mod diagram;
pub mod diff;
pub mod html;
pub mod memo;
pub mod questionnaire;
pub mod schema;
pub mod sensitivity;
pub mod suite;

pub use check::reference::ReferenceCheck;
pub use memo::{Format, Memo};

use decide_engine::{
    Error, ErrorKind, Evaluation, Fault, Graph, Policy, Profile, Result, Source, Syntax,
};

/// Parses a profile, checks it against the graph's catalog and evaluates it, with what
/// `decide PROFILE` writes by default ([`Detail::DEFAULT`]: sensitivity, no trace).
pub fn decide(
    graph: &Graph,
    source: &Source,
    as_of: jiff::civil::Date,
) -> Result<(Profile, Evaluation)> {
    decide_with(graph, source, as_of, Detail::DEFAULT)
}

/// What a decision record carries besides the decision itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// Every node's value and why (most of a record's size).
    pub trace: bool,
    /// What would change the answer (re-evaluates the rules a few hundred times).
    pub sensitivity: bool,
    /// Every node's value, as a memo reads them; without it (and without the trace or what
    /// would change the answer) only the nodes the record needs are evaluated
    /// ([`Graph::evaluate_record`]).
    pub values: bool,
}

impl Detail {
    /// Everything: what `decide PROFILE --trace` prints.
    pub const FULL: Detail = Detail {
        trace: true,
        sensitivity: true,
        values: true,
    };
    /// What would change the answer, without the trace: what `decide PROFILE` prints.
    pub const DEFAULT: Detail = Detail {
        trace: false,
        sensitivity: true,
        values: true,
    };
    /// The decision only: what a batch of JSON lines carries by default.
    pub const LEAN: Detail = Detail {
        trace: false,
        sensitivity: false,
        values: false,
    };
}

/// Like [`decide`], with the record's optional parts chosen by `detail`.
pub fn decide_with(
    graph: &Graph,
    source: &Source,
    as_of: jiff::civil::Date,
    detail: Detail,
) -> Result<(Profile, Evaluation)> {
    decide_text(graph, source, Syntax::Yaml, as_of, detail)
}

/// Like [`decide_with`], for a profile written in `syntax` (a line of JSON lines is
/// [`Syntax::Json`]).
pub fn decide_text(
    graph: &Graph,
    source: &Source,
    syntax: Syntax,
    as_of: jiff::civil::Date,
    detail: Detail,
) -> Result<(Profile, Evaluation)> {
    let policy = graph.policy();
    if !policy.prices_hold_at(as_of) {
        return Err(Error::of(Fault::PricedAt {
            at: policy.prices_at,
            as_of,
        })
        .help(format!(
            "compile the graph from `policy.at({as_of})` to decide at {as_of}"
        )));
    }
    if let Some(e) = nothing_on_offer(policy, as_of) {
        return Err(e);
    }
    let profile = read_checked(graph, source, syntax).map_err(|e| quoted_later_hint(e, policy))?;
    let evaluation = if detail.trace {
        graph.evaluate(&profile, as_of)
    } else if detail.values || detail.sensitivity {
        graph.evaluate_without_trace(&profile, as_of)
    } else {
        graph.evaluate_record(&profile, as_of)
    };
    let mut evaluation = evaluation.map_err(|e| not_on_offer_hint(e, policy, as_of))?;
    if detail.sensitivity {
        let flips = sensitivity::analyse(graph, &profile, as_of, &evaluation)?;
        evaluation.decision.sensitivity = Some(flips);
    }
    evaluation.decision.audit.profile_revision = profile.revision();
    Ok((profile, evaluation))
}

/// A date before every quote sheet: nothing is on offer, so there is nothing to decide between.
/// The error names the first date something is quoted.
fn nothing_on_offer(policy: &Policy, as_of: jiff::civil::Date) -> Option<Error> {
    if policy.quote_sheets.is_none() || !policy.offers.is_empty() {
        return None;
    }
    let first = policy.quotes.iter().map(|q| q.valid_from).min();
    let help = match first {
        Some(d) => format!(
            "the first quote is valid from {d}: decide with `--as-of {d}` or later, or add a \
             sheet to the rules folder's `quotes/` that is valid by {as_of}"
        ),
        None => "add a quote sheet to the rules folder's `quotes/`".to_owned(),
    };
    Some(Error::of(Fault::NothingOnOffer { as_of }).help(help))
}

/// A rule that failed while some of the catalog had no quote yet may have needed one of those
/// offers: the error says which are missing and from when they are quoted.
fn not_on_offer_hint(e: Error, policy: &Policy, as_of: jiff::civil::Date) -> Error {
    let missing = policy.not_on_offer();
    if e.kind() != ErrorKind::Eval || missing.is_empty() {
        return e;
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(h, first)| match first {
            Some(d) => format!("`{}` (first quoted {d})", h.item.id),
            None => format!("`{}` (no quote)", h.item.id),
        })
        .collect();
    e.help(format!(
        "at {as_of} no quote sheet prices {}: the rules may need one of them; decide at a \
         later `--as-of`, or add a sheet that quotes them by then",
        list.join(", ")
    ))
}

/// A profile that names an offer the policy has, but not at this date (no quote valid yet):
/// the error (each fault of it) says from when it is quoted.
fn quoted_later_hint(e: Error, policy: &Policy) -> Error {
    e.map_each(|e| quoted_later(e, policy))
}

/// [`quoted_later_hint`] for one fault.
fn quoted_later(e: Error, policy: &Policy) -> Error {
    let Some(Fault::UnknownOffer { id }) = e.fault() else {
        return e;
    };
    let id = id.clone();
    let first = policy
        .quotes
        .iter()
        .filter(|q| q.hardware == id || format!("{}@{}", q.hardware, q.vendor) == id)
        .map(|q| q.valid_from)
        .min();
    match (first, policy.prices_at) {
        (Some(first), Some(at)) => e.help(format!(
            "`{id}` has no quote valid at {at}: its first quote is valid from {first}"
        )),
        _ => e,
    }
}

/// A profile read in `syntax` and checked against the graph's catalog. A profile read from
/// JSON has no places, so a bad offer id in it is looked for again in the text read as YAML,
/// whose error points at the id's line and column as for a YAML profile.
fn read_checked(graph: &Graph, source: &Source, syntax: Syntax) -> Result<Profile> {
    let profile = Profile::read(source, syntax)
        .map_err(|e| questionnaire::typed_number_hint(graph.policy(), e))?;
    match graph.check_profile(&profile, source) {
        Err(unplaced) if syntax == Syntax::Json => {
            // (A text JSON reads and YAML does not keeps the error without its place.)
            let Ok(placed) = Profile::from_source(source) else {
                return Err(unplaced);
            };
            graph.check_profile(&placed, source)?;
            Err(unplaced)
        }
        checked => checked.map(|()| profile),
    }
}
