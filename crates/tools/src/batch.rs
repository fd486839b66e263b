//! Batch evaluation: a fleet of profiles through one compiled graph, in parallel, in input order.
//!
//! A platform team re-decides every workload whenever prices or the policy change, so the
//! policy and the templates are compiled once and shared, and profiles are decided on every
//! core (rayon) and handed on in input order as soon as they are ready (`stream`). Inputs are
//! files, folders of them, or streams: a file of JSON lines or a multi-document YAML stream,
//! read a profile at a time (`read`); a line of JSON lines is parsed as JSON (`serde_json`),
//! everything else as YAML. A bad profile is an error for that profile only, reported
//! with its file and the line in that file; the others go on.
//!
//! Every JSON record says where its profile was read (`source`, `line`), and a profile that
//! could not be read or decided has a record too, its error ([`error_record`]), so that the
//! records line up one to one with the profiles read.

pub mod read;
pub mod stream;

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use crate::memo::{Format, Memo};
use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::graph::Graph;
use decide_engine::source::Source;

pub use read::{Input, Profiles, count, resolve, split};
pub use stream::{End, Flow, Output, decide_stream};

/// One profile of the batch: its text, where it came from, and a name for its memo file.
#[derive(Debug, Clone)]
pub struct Item {
    pub source: Source,
    /// The line of the file this profile's text starts at.
    pub first_line: usize,
    /// A file-name-safe label, unique in the batch (`lora-7b-4090`, `fleet-00042`).
    pub label: String,
    /// JSON for a line of JSON lines, YAML otherwise.
    pub syntax: decide_engine::Syntax,
}

/// A profile of the batch that could not be read: the input it is in (`<stdin>` for standard
/// input), the line of that input it starts at, and why.
#[derive(Debug)]
pub struct Unread {
    pub source: String,
    pub line: usize,
    pub error: Error,
}

/// What deciding one item gave.
#[derive(Debug)]
pub struct Decided {
    /// The rendered output: one JSON line, or a Markdown memo.
    pub text: String,
    pub deployment: String,
    pub offer: String,
    /// The record's monthly cost, if the policy gives one.
    pub monthly_cny: Option<f64>,
    /// The ids of the warnings the decision raised, in policy order.
    pub warnings: Vec<String>,
}

/// How a batch's monthly costs spread over its profiles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub p90: f64,
    pub highest: f64,
    pub total: f64,
    /// How many profiles had a cost.
    pub count: usize,
}

/// Counts over a whole batch, for the closing summary.
#[derive(Debug, Default)]
pub struct Summary {
    pub decided: usize,
    pub failed: usize,
    pub by_deployment: BTreeMap<String, usize>,
    pub by_offer: BTreeMap<String, usize>,
    /// For each warning id, how many decided profiles raised it.
    pub by_warning: BTreeMap<String, usize>,
    /// How many decided profiles raised at least one warning.
    pub warned: usize,
    /// The headline monthly cost of each decided profile that has one, in the order decided.
    pub monthly_cny: Vec<f64>,
}

impl Summary {
    /// The monthly costs' median, 90th percentile and highest (nearest rank), and their sum;
    /// none without a cost.
    #[must_use]
    pub fn monthly_spread(&self) -> Option<Spread> {
        let mut costs = self.monthly_cny.clone();
        costs.sort_by(f64::total_cmp);
        let highest = *costs.last()?;
        let at = |percent: usize| {
            // Nearest rank: the smallest cost with at least `percent` of the costs at or below.
            let rank = (percent * costs.len()).div_ceil(100).max(1);
            costs[rank.min(costs.len()) - 1]
        };
        Some(Spread {
            median: at(50),
            p90: at(90),
            highest,
            total: costs.iter().sum(),
            count: costs.len(),
        })
    }

    /// Adds one result.
    pub fn add(&mut self, result: &Result<Decided>) {
        match result {
            Ok(d) => {
                self.decided += 1;
                *self.by_deployment.entry(d.deployment.clone()).or_default() += 1;
                *self.by_offer.entry(d.offer.clone()).or_default() += 1;
                for (i, id) in d.warnings.iter().enumerate() {
                    // A profile counts once per id, however often the record names it.
                    if !d.warnings[..i].contains(id) {
                        *self.by_warning.entry(id.clone()).or_default() += 1;
                    }
                }
                self.warned += usize::from(!d.warnings.is_empty());
                self.monthly_cny.extend(d.monthly_cny);
            }
            Err(_) => self.failed += 1,
        }
    }
}

/// A decided profile's JSON record: where the profile was read, then the decision record as
/// `decide --format json` writes it.
#[derive(serde::Serialize)]
struct BatchRecord<'a> {
    source: &'a str,
    line: usize,
    #[serde(flatten)]
    decision: &'a decide_engine::decision::Decision,
}

/// A failed profile's JSON record: where it was read, and why it was not decided.
#[derive(serde::Serialize)]
struct ErrorRecord<'a> {
    source: &'a str,
    line: usize,
    error: ErrorFields<'a>,
    /// Every fault, where the profile has more than one (the first is `error`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<ErrorFields<'a>>,
}

/// An error as machine-readable output reports it (a batch's error record, the web API's error
/// responses): its kind's name, the first line of the report on standard error (without
/// `error: `), and the field, the place (file, line, column) and the help where it has them.
#[derive(Debug, serde::Serialize)]
pub struct ErrorFields<'a> {
    kind: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<At<'a>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    help: &'a [String],
}

impl<'a> ErrorFields<'a> {
    /// The fields of `error`.
    #[must_use]
    pub fn of(error: &'a Error) -> Self {
        let at = error.origin().map(|origin| {
            let position = origin.file_position();
            At {
                file: &origin.name,
                line: position.map(|p| p.line),
                column: position.map(|p| p.column),
            }
        });
        ErrorFields {
            kind: error.kind().name(),
            message: error.title(),
            field: error.field_path(),
            at,
            help: error.hints(),
        }
    }
}

/// The file an error points into (a rule file, for a fault of the rules found at run time),
/// with the line and column in it when the error has them.
#[derive(Debug, serde::Serialize)]
struct At<'a> {
    file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
}

/// The JSON line (with its newline) standing for a profile that was not decided, in the place
/// its record would have had: `{"source": ..., "line": ..., "error": {"kind": ..., "message":
/// ..., "field": ..., "at": {"file": ..., "line": ..., "column": ...}, "help": [...]}}`, where
/// `message` is the first line of the report on standard error (without `error: `) and
/// `field`, `at` and `help` appear when the error has them.
#[must_use]
pub fn error_record(source: &str, line: usize, error: &Error) -> String {
    let each = error.each();
    let record = ErrorRecord {
        source,
        line,
        error: ErrorFields::of(error),
        errors: if each.len() > 1 {
            each.into_iter().map(ErrorFields::of).collect()
        } else {
            Vec::new()
        },
    };
    // Strings, numbers and lists of strings: nothing serde_json can refuse.
    let mut text = serde_json::to_string(&record).unwrap_or_default();
    text.push('\n');
    text
}

/// How each profile is rendered.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub format: Format,
    pub as_of: jiff::civil::Date,
    /// Keep the trace in JSON lines and memos (it is most of a record's size).
    pub trace: bool,
    /// Add what would change the answer to JSON lines (a few hundred re-evaluations each).
    pub sensitivity: bool,
}

/// The extensions of JSON-lines files: read line by line whatever their first line is.
pub const JSON_LINES_EXTENSIONS: &[&str] = &["jsonl", "ndjson"];

/// Whether an input is JSON lines: by its extension, or by its first line that is not blank
/// (or a `#` comment) holding a whole JSON object (`{` to `}`). A pretty-printed JSON profile
/// (a lone `{` on its first line) and YAML are read as YAML.
#[must_use]
pub fn is_json_lines(name: &str, first_line: Option<&str>) -> bool {
    let by_name = Path::new(name).extension().is_some_and(|x| {
        JSON_LINES_EXTENSIONS
            .iter()
            .any(|e| x.eq_ignore_ascii_case(e))
    });
    by_name
        || first_line.is_some_and(|l| {
            let t = l.trim();
            t.starts_with('{') && t.ends_with('}')
        })
}

fn safe_label(s: &str) -> String {
    let label: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.is_empty() {
        "profile".to_owned()
    } else {
        label
    }
}

/// Decides and renders one item; errors carry the item's file and line.
pub fn decide_one(graph: &Graph, memo: &Memo, item: &Item, options: Options) -> Result<Decided> {
    let run = || -> Result<Decided> {
        let memo_wanted = options.format.is_memo();
        let detail = crate::Detail {
            trace: options.trace,
            sensitivity: options.sensitivity || memo_wanted,
            values: memo_wanted,
        };
        let (profile, evaluation) =
            crate::decide_text(graph, &item.source, item.syntax, options.as_of, detail)?;
        let decision = &evaluation.decision;
        let deployment = decision.deployment.clone();
        let offer = decision.offer.clone();
        let monthly_cny = graph
            .headline_cost()
            .and_then(|name| decision.costs.get(name))
            .and_then(decide_lang::Value::as_number);
        let warnings = decision.warnings.iter().map(|w| w.id.clone()).collect();
        let text = match options.format {
            Format::Json => {
                let record = BatchRecord {
                    source: &item.source.name,
                    line: item.first_line,
                    decision,
                };
                let mut line = serde_json::to_string(&record)
                    .map_err(|e| Error::new(ErrorKind::Eval, format!("cannot write JSON: {e}")))?;
                line.push('\n');
                line
            }
            Format::Markdown | Format::Html => {
                memo.render(graph, &profile, &evaluation, options.format)?
            }
        };
        Ok(Decided {
            text,
            deployment,
            offer,
            monthly_cny,
            warnings,
        })
    };
    // Profile errors point into the item's text: give them the file's line numbers. Other
    // errors (a rules fault found at run time) point into rule files; a broken invariant is
    // this profile's fault as much as the rules', so it also says where the profile is.
    run().map_err(|e| match e.kind() {
        ErrorKind::Profile => e.starting_at_line(item.first_line),
        ErrorKind::Invariant => e.help(format!(
            "the profile is at {}:{}",
            item.source.name, item.first_line
        )),
        _ => e,
    })
}

/// Decides `items` on every core; results are in input order.
#[must_use]
pub fn decide_all(
    graph: &Graph,
    memo: &Memo,
    items: &[Item],
    options: Options,
) -> Vec<Result<Decided>> {
    items
        .par_iter()
        .map(|item| decide_one(graph, memo, item, options))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Summary;

    #[test]
    fn the_spread_is_by_nearest_rank_and_the_sum_comes_with_it() {
        let none = Summary::default();
        assert_eq!(none.monthly_spread(), None);
        let summary = Summary {
            monthly_cny: (1..=10).rev().map(|n| f64::from(n) * 100.0).collect(),
            ..Summary::default()
        };
        let spread = summary.monthly_spread().unwrap();
        assert!((spread.median - 500.0).abs() < 1e-9, "{spread:?}");
        assert!((spread.p90 - 900.0).abs() < 1e-9, "{spread:?}");
        assert!((spread.highest - 1000.0).abs() < 1e-9, "{spread:?}");
        assert!((spread.total - 5500.0).abs() < 1e-9, "{spread:?}");
        assert_eq!(spread.count, 10);
        let one = Summary {
            monthly_cny: vec![7920.0],
            ..Summary::default()
        };
        let spread = one.monthly_spread().unwrap();
        assert!((spread.median - 7920.0).abs() < 1e-9 && (spread.p90 - 7920.0).abs() < 1e-9);
    }
}
