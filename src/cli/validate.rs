//! `decide validate`: every static check of a rules folder, each finding with a place and a fix.

use std::fmt::Write as _;

use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::graph::Graph;
use decide_engine::policy::Policy;
use decide_engine::policy::rules::HitPolicy;
use decide_tools::check::{
    self, ExpressionReport, InvariantReport, TableReport, tables::thousands,
};

use super::Outcome;
use super::progress::{self, Phases};

/// Check a rules folder: every static check, each finding with its place and a fix.
///
/// Checks the schema of the rule files, texts missing a language the policy's other texts
/// have, expressions, references, cycles, unused nodes, duplicate ids, offer ids, decision-table
/// gaps, overlaps and shadowed rows (each with an example profile), and searches generated
/// profiles for one that breaks an invariant (reported with the smallest found, as a profile to
/// run).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide validate
  decide validate --rules my-rules
  decide validate --progress 2> validate.log

Exit codes: 0 clean, 1 findings, 2 usage error.")]
// `--as-of` says what this command reads at the date.
#[command(mut_args(super::config::as_of_help(
    "The date facts such as price age are computed at (YYYY-MM-DD); default today"
)))]
#[command(mut_args(super::config::arg_help(
    "progress",
    "Show on stderr what is being checked and, at the end, how long it took: `auto` on a terminal (one line redrawn); `--progress` alone is `always` (a line a step when stderr is not a terminal)"
)))]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    #[command(flatten)]
    pub progress: progress::ProgressArgs,
}

pub fn run(args: &Args) -> Result<Outcome> {
    let config = super::Config::new(&args.rules, args.as_of);
    let name = config.folder().map_or_else(
        || "the embedded rules".to_owned(),
        |p| p.display().to_string(),
    );
    let as_of = config.as_of();
    // The report is printed whole at the end: the progress line is gone by then.
    let mut phases = Phases::start(
        progress::Mode::of(args.progress.progress, false),
        &format!("Validating {name} at {as_of}"),
        1 + check::Phase::ALL.len(),
    );
    phases.step("loading and compiling the rules and templates");
    let (sources, origin) = config.rules().sources()?;
    // Every fault at once: loading faults, then whatever compiling what loaded finds.
    let (policy, mut errors) = Policy::from_sources_lenient(&sources, origin);
    // In a bilingual policy, a text without one of the languages shows untranslated: a
    // finding, not a fault that stops the rules from loading.
    let languages = decide_engine::policy::missing_languages(&sources);
    // The memo's templates (a rules folder's `templates/` over the embedded ones) must compile.
    match decide_tools::memo::Templates::for_rules(config.folder()) {
        Ok(templates) => errors.extend(templates.check()),
        Err(e) => errors.push(e),
    }
    let graph = policy.and_then(|policy| match Graph::compile(policy.priced_at(as_of)) {
        Ok(graph) => Some(graph),
        Err(e) => {
            errors.extend(e.into_all());
            None
        }
    });
    let graph = match (graph, Error::many(errors)) {
        (Some(graph), None) => graph,
        (_, Some(e)) => {
            phases.finish("Loaded with faults");
            super::print(&load_faults(&name, &e, &languages))?;
            return Ok(Outcome::Flagged);
        }
        (None, None) => unreachable!("no graph without an error"),
    };
    // The policy's own test cases: profiles that prove a rare row alive. A case file that does
    // not parse is `decide test`'s to report; here it only lends no witness.
    let witnesses: Vec<decide_engine::profile::Profile> =
        super::test::rules_case_sources(config.folder())
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                s.parse_yaml::<decide_tools::suite::CaseFile>(ErrorKind::Profile)
                    .ok()
            })
            .flat_map(|f| f.cases.into_iter().map(|c| c.profile))
            .collect();
    let report = check::check_with(&graph, as_of, &witnesses, &mut |phase| {
        phases.step(phase.doing());
    });
    phases.finish("Checked");
    let mut out = report_text(&name, &report, &languages);
    let findings = report.all_findings().count() + languages.len();
    if findings == 0 {
        out.push_str("Clean: no findings.\n");
        super::print(&out)?;
        Ok(Outcome::Clean)
    } else {
        let _ = writeln!(
            out,
            "{findings} {}.",
            if findings == 1 { "finding" } else { "findings" }
        );
        super::print(&out)?;
        Ok(Outcome::Flagged)
    }
}

/// The report of rules that loaded: every finding, then what was checked.
fn report_text(name: &str, report: &check::Report, languages: &[Error]) -> String {
    let mut out = String::new();
    for l in languages {
        out.push_str(&l.render());
        out.push_str("\n\n");
    }
    for finding in report.all_findings() {
        out.push_str(&finding.render());
        out.push_str("\n\n");
    }
    let nodes: usize = report.counts.iter().map(|(_, n)| n).sum();
    let kinds: Vec<String> = report
        .counts
        .iter()
        .map(|(kind, n)| kind.count(*n))
        .collect();
    let _ = writeln!(
        out,
        "{name}: {} files, {} offers, {nodes} nodes ({}).",
        report.files,
        report.offers,
        kinds.join(", ")
    );
    for table in &report.tables {
        let _ = writeln!(out, "{}", table_line(table));
    }
    if report.invariants.invariants > 0 {
        let _ = writeln!(out, "{}", invariants_line(&report.invariants));
    }
    if report.searches.searches > 0 {
        let proof = &report.searches;
        let _ = writeln!(
            out,
            "Searches ({}): each searched over its reference lists too on {} generated profiles: {}.",
            proof.searches,
            thousands(proof.searched as u128),
            match proof.findings.len() {
                0 => "none leaves out a cheaper candidate".to_owned(),
                1 => "1 leaves out a cheaper candidate".to_owned(),
                n => format!("{n} leave out a cheaper candidate"),
            }
        );
    }
    let _ = writeln!(out, "{}", expressions_line(&report.expressions));
    out
}

/// The report of rules that do not load: every fault, then the texts missing a language, and
/// how many of each.
fn load_faults(name: &str, faults: &Error, languages: &[Error]) -> String {
    let n = faults.count();
    let mut text = faults.render();
    for l in languages {
        text.push_str("\n\n");
        text.push_str(&l.render());
    }
    let stop = if n == 1 {
        "problem stops"
    } else {
        "problems stop"
    };
    let untranslated = match languages.len() {
        0 => String::new(),
        1 => " 1 text misses a language.".to_owned(),
        m => format!(" {m} texts miss a language."),
    };
    format!("{text}\n\n{name}: {n} {stop} the rules from loading.{untranslated}\n")
}

/// What the rules' expressions and texts compiled to, and how the criteria and warnings are
/// explained.
fn expressions_line(r: &ExpressionReport) -> String {
    let programs = if r.programs.is_empty() {
        "none is a template with logic of its own".to_owned()
    } else {
        format!(
            "templates with logic of their own (each language restates it): {}",
            r.programs
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "Expressions: {} rule expressions typed and compiled, {} of them giving numbers of a unit ({} facts, offer fields and profile fields declare one; no two units meet); {} texts compiled to the engine's text form.\n\
         Explanations: {} of {} criterion, warning, checklist and invariant texts written as rows of condition and sentence ({} rows, {} phrases); {programs}.",
        thousands(r.expressions as u128),
        thousands(r.measured as u128),
        r.declared,
        thousands(r.texts as u128),
        r.explained_as_rows,
        r.explanations,
        r.rows,
        r.phrases,
    )
}

/// The invariant search: what was generated and what was found.
fn invariants_line(r: &InvariantReport) -> String {
    let failed = if r.failed > 0 {
        format!(
            ", {} refused by the profile format (contradicting fields)",
            thousands(r.failed as u128)
        )
    } else {
        String::new()
    };
    let failed = if r.errors > 0 {
        format!(
            "{failed}, {} the rules fail on (a finding below)",
            thousands(r.errors as u128)
        )
    } else {
        failed
    };
    let found = match r.violated.len() {
        0 => "none violated".to_owned(),
        n => format!(
            "{n} violated ({})",
            r.violated
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "Invariants ({}): {} generated profiles searched ({} from the values tried per field, {} random){failed}: {found}.",
        r.invariants,
        thousands(r.searched as u128),
        thousands(r.boundary as u128),
        thousands(r.searched.saturating_sub(r.boundary) as u128),
    )
}

/// One line per table: what was generated and what was found.
fn table_line(t: &TableReport) -> String {
    let hit = match t.hit {
        HitPolicy::First => "first",
        HitPolicy::Unique => "unique",
        HitPolicy::Collect => "collect",
    };
    let sampled = if t.combinations > t.evaluated as u128 + t.failed as u128 {
        format!(" (sampled from {})", thousands(t.combinations))
    } else {
        String::new()
    };
    let failed = if t.failed > 0 {
        format!(", {} could not be evaluated", thousands(t.failed as u128))
    } else {
        String::new()
    };
    let rows = if t.rows == 1 {
        "1 row".to_owned()
    } else {
        format!("{} rows", t.rows)
    };
    let found = if t.findings.is_empty() && t.witnessed > 0 {
        format!(
            "no shadowed or dead rows ({} shown alive by the policy's test cases, the others by generated profiles), no forbidden overlaps, no unintended gaps",
            t.witnessed
        )
    } else if t.findings.is_empty() {
        "no shadowed or dead rows, no forbidden overlaps, no unintended gaps".to_owned()
    } else {
        match t.findings.len() {
            1 => "1 finding".to_owned(),
            n => format!("{n} findings"),
        }
    };
    if let Some(cells) = t.exact {
        return format!(
            "Table `{}` (hit {hit}, {rows}): analysed exactly, over all {} elementary cells of its inputs ({}), with {} generated profiles for examples{failed}: {found}.",
            t.id,
            thousands(cells),
            t.columns.join(", "),
            thousands(t.evaluated as u128),
        );
    }
    format!(
        "Table `{}` (hit {hit}, {rows}): sampled, not analysed exactly ({}): {} generated profiles{sampled}{failed} over {}: {found}.",
        t.id,
        t.sampled_because
            .as_deref()
            .unwrap_or("not a table of unary tests"),
        thousands(t.evaluated as u128),
        if t.inputs.is_empty() {
            "no profile field".to_owned()
        } else {
            t.inputs.join(", ")
        },
    )
}
