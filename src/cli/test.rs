//! `decide test`: policy test cases (a profile and its expected decision), with coverage.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::source::Source;
use decide_tools::suite::{self, ITEM_KINDS};

use super::Outcome;
use super::junit;
use super::output::{Inputs, write_output};
use super::stdio::shown;

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
  decide test --min-coverage 100 --junit policy-tests.xml      (for CI)

Coverage counts what passing cases exercise: a failing case covers nothing.

Exit codes: 0 every case passed (and coverage is at least --min-coverage), 1 a case failed, a
case file is invalid or coverage is below --min-coverage, 2 usage error.")]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    /// Case files or folders of them (default: the `tests/` folder of the rules).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Fail (exit 1) when passing cases exercise less than PCT percent of the policy's
    /// criterion outcomes, table rows, warnings and checklist conditions (0 to 100).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub min_coverage: Option<f64>,
    /// Also write the results as `JUnit` XML to FILE (one testcase per case, for CI); the file
    /// is replaced whole or not at all.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "expected a percentage from 0 to 100, such as 95, not `{s}`"
        )),
    }
}

pub fn run(args: &Args) -> Result<Outcome> {
    let config = super::Config::newest(&args.rules);
    let graph = config.graph()?;
    let sources = case_sources(args, &config)?;
    let outcome = suite::run(&graph, &sources)?;
    if let Some(path) = &args.junit {
        let inputs = Inputs::of(args.paths.iter().map(PathBuf::as_path));
        write_output(path, &inputs, junit::report(&outcome).as_bytes())?;
    }
    let text = report(&outcome);
    super::print(&text)?;
    let below = args
        .min_coverage
        .filter(|min| outcome.coverage.percent() < *min);
    if let Some(min) = below {
        super::stdio::err(&below_minimum(&outcome.coverage, min));
    }
    if below.is_none() && outcome.results.iter().all(suite::CaseResult::passed) {
        Ok(Outcome::Clean)
    } else {
        Ok(Outcome::Flagged)
    }
}

/// A percentage as the report prints it: one decimal, rounded down (so 99.96% is not shown as
/// 100.0%).
fn percent_text(p: f64) -> String {
    format!("{:.1}%", (p * 10.0).floor() / 10.0)
}

/// What standard error says when coverage is below `--min-coverage`: the percentages and every
/// item no passing case exercises.
fn below_minimum(coverage: &suite::Coverage, min: f64) -> String {
    let missed = coverage.missed();
    let mut out = format!(
        "error: coverage {} is below --min-coverage {min}%: {} of {} items are not exercised by a passing case:\n",
        percent_text(coverage.percent()),
        missed.len(),
        coverage.all.len()
    );
    for item in missed {
        let _ = writeln!(out, "  - {} `{}`", item.kind, shown(&item.id));
    }
    out.push_str(
        "help: add a case in the rules' tests/ that reaches each, or fix the failing cases\n",
    );
    out
}

/// The case files to run: the paths given, else the rules' own `tests/` folder.
fn case_sources(args: &Args, config: &super::Config) -> Result<Vec<Source>> {
    if args.paths.is_empty() {
        return rules_case_sources(config.folder());
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
        Some(dir) => yaml_files(&dir.join(decide_engine::policy::TESTS_FOLDER)),
        None => Ok(decide_engine::policy::embedded_cases()
            .iter()
            .map(|(name, text)| Source::new(format!("rules/tests/{name}"), *text))
            .collect()),
    }
}

/// Every `*.yaml` / `*.yml` file directly in `dir`, in name order.
fn yaml_files(dir: &Path) -> Result<Vec<Source>> {
    let paths = decide_engine::source::files_in(dir, decide_engine::source::YAML_EXTENSIONS)
        .map_err(|e| {
            Error::new(ErrorKind::Io, format!("cannot read the case folder: {e}"))
            .in_file(dir.display().to_string())
            .help(
                "policy tests live in the rules folder's `tests/`, or pass case files as arguments",
            )
        })?;
    let mut folder = decide_engine::source::Folder::new(
        dir,
        "case folder",
        decide_engine::source::MAX_FOLDER_BYTES,
    )?;
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
        let _ = writeln!(out, "{mark}  {}: {}", shown(&r.file), shown(&r.name));
        for d in &r.differences {
            let _ = writeln!(out, "        {}", shown(d));
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
    let _ = writeln!(
        out,
        "\nCoverage (by passing cases): {}",
        percent_text(c.percent())
    );
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
        out.push_str("Not exercised by any passing case:\n");
        for item in missed {
            let _ = writeln!(out, "  - {} `{}`", item.kind, shown(&item.id));
        }
    }
    out
}
