//! `decide test`: policy test cases (a profile and its expected decision), with coverage.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use decide::error::{Error, ErrorKind, Result};
use decide::graph::Graph;
use decide::source::Source;
use decide::suite::{self, ITEM_KINDS};

use super::Outcome;

/// Run policy test cases (a profile and its expected decision) with coverage.
///
/// Reports each case as passed or failed with a readable difference, then which criteria
/// outcomes, table rows, warnings and checklist conditions no case exercises.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide test
  decide test --rules my-rules                   (runs my-rules/tests/*.yaml)
  decide test --rules my-rules cases/ extra.yaml

Exit codes: 0 every case passed, 1 a case failed (or a case file is invalid), 2 usage error.")]
pub struct Args {
    /// The rules folder, or `embedded` for the policy built into this binary.
    #[arg(long, value_name = "DIR", default_value = "embedded", value_parser = super::rules_parser())]
    pub rules: super::Rules,
    /// Case files or folders of them (default: the `tests/` folder of the rules).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(args: &Args) -> Result<Outcome> {
    let graph = Graph::compile(super::load_policy(args.rules.folder(), None)?)?;
    let sources = case_sources(args)?;
    let outcome = suite::run(&graph, &sources)?;
    let text = report(&outcome);
    super::print(&text)?;
    if outcome.results.iter().all(suite::CaseResult::passed) {
        Ok(Outcome::Clean)
    } else {
        Ok(Outcome::Flagged)
    }
}

/// The case files to run: the paths given, else the rules' own `tests/` folder.
fn case_sources(args: &Args) -> Result<Vec<Source>> {
    if args.paths.is_empty() {
        return rules_case_sources(args.rules.folder());
    }
    let mut sources = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            sources.extend(yaml_files(path)?);
        } else {
            sources.push(Source::read(path, ErrorKind::Profile)?);
        }
    }
    Ok(sources)
}

/// The case files of a rules folder (its `tests/`), or of the embedded rules.
pub(super) fn rules_case_sources(rules: Option<&Path>) -> Result<Vec<Source>> {
    match rules {
        Some(dir) => yaml_files(&dir.join(decide::policy::TESTS_FOLDER)),
        None => Ok(decide::policy::embedded_cases()
            .iter()
            .map(|(name, text)| Source::new(format!("rules/tests/{name}"), *text))
            .collect()),
    }
}

/// Every `*.yaml` / `*.yml` file directly in `dir`, in name order.
fn yaml_files(dir: &Path) -> Result<Vec<Source>> {
    let paths = decide::source::files_in(dir, decide::source::YAML_EXTENSIONS).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read the case folder: {e}"))
            .in_file(dir.display().to_string())
            .help(
                "policy tests live in the rules folder's `tests/`, or pass case files as arguments",
            )
    })?;
    let mut folder =
        decide::source::Folder::new(dir, "case folder", decide::source::MAX_FOLDER_BYTES)?;
    paths
        .iter()
        .map(|p| folder.read(p, ErrorKind::Profile))
        .collect()
}

/// Per-case lines, the failures' differences, a count, and coverage.
fn report(outcome: &suite::Outcome) -> String {
    let mut out = String::new();
    for r in &outcome.results {
        let mark = if r.passed() { "ok  " } else { "FAIL" };
        let _ = writeln!(out, "{mark}  {}: {}", r.file, r.name);
        for d in &r.differences {
            let _ = writeln!(out, "        {d}");
        }
        if let Some(e) = &r.error {
            for line in e.render().lines() {
                let _ = writeln!(out, "        {line}");
            }
        }
    }
    let failed = outcome.results.iter().filter(|r| !r.passed()).count();
    let _ = writeln!(
        out,
        "\n{} passed, {failed} failed.",
        outcome.results.len() - failed
    );
    let c = &outcome.coverage;
    out.push_str("\nCoverage:\n");
    for (kind, label) in ITEM_KINDS {
        let (hit, all) = c.count(kind);
        if all > 0 {
            let _ = writeln!(out, "  {label}: {hit} of {all}");
        }
    }
    let missed = c.missed();
    if missed.is_empty() {
        out.push_str(
            "Every criterion outcome, table row, warning and checklist condition is exercised.\n",
        );
    } else {
        out.push_str("Not exercised by any case:\n");
        for item in missed {
            let _ = writeln!(out, "  - {} `{}`", item.kind, item.id);
        }
    }
    out
}
