//! Batch evaluation: a fleet of profiles through one compiled graph, in parallel, in input order.
//!
//! A platform team re-decides every workload whenever prices or the policy change, so the
//! policy and the templates are compiled once and shared, and profiles are decided on every
//! core (rayon) and handed on in input order as soon as they are ready (`stream`). Inputs are
//! files, folders of them, or streams: a file of JSON lines or a multi-document YAML stream,
//! read a profile at a time (`read`); a line of JSON lines is parsed as JSON (`serde_json`),
//! everything else as YAML. A bad profile is an error for that profile only, reported
//! with its file and the line in that file; the others go on.

pub mod read;
pub mod stream;

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::Graph;
use crate::memo::{Format, Memo};
use crate::source::Source;

pub use read::{Input, Profiles, resolve, split};
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
    pub syntax: crate::Syntax,
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
}

/// Counts over a whole batch, for the closing summary.
#[derive(Debug, Default)]
pub struct Summary {
    pub decided: usize,
    pub failed: usize,
    pub by_deployment: BTreeMap<String, usize>,
    pub by_offer: BTreeMap<String, usize>,
    pub monthly_cny: f64,
}

impl Summary {
    /// Adds one result.
    pub fn add(&mut self, result: &Result<Decided>) {
        match result {
            Ok(d) => {
                self.decided += 1;
                *self.by_deployment.entry(d.deployment.clone()).or_default() += 1;
                *self.by_offer.entry(d.offer.clone()).or_default() += 1;
                self.monthly_cny += d.monthly_cny.unwrap_or(0.0);
            }
            Err(_) => self.failed += 1,
        }
    }
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
        };
        let (profile, evaluation) =
            crate::decide_text(graph, &item.source, item.syntax, options.as_of, detail)?;
        let decision = &evaluation.decision;
        let deployment = decision.deployment.clone();
        let offer = decision.offer.clone();
        let monthly_cny = graph
            .headline_cost()
            .and_then(|name| decision.costs.get(name))
            .and_then(crate::decision::number);
        let text = match options.format {
            Format::Json => {
                let mut line = serde_json::to_string(&evaluation.decision)
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
