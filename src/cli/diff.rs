//! `decide diff`: both policies evaluated on the same profiles, changes reported in Markdown or
//! JSON.

use std::path::PathBuf;

use decide_engine::error::{ErrorKind, Result};
use decide_engine::source::Source;

use super::Outcome;

/// Compare two policies on the same profiles and report what changed, in Markdown or JSON.
///
/// For each profile: deployment, offer, warnings and monthly cost before and after, and the
/// nodes of the graph where the change starts.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide rules export my-rules                  (then edit my-rules/)
  decide diff embedded my-rules my-rules/examples/
  decide diff old-rules new-rules team-a.yaml team-b.yaml --as-of 2026-09-04 > diff.md
  decide diff embedded my-rules my-rules/examples/ --format json > diff.json   (values in full)

Exit codes: 0 no decision changed, 1 a decision changed, 2 usage error or a profile or policy
that cannot be decided (so CI can gate a policy change).")]
pub struct Args {
    /// The rules folder before the change, or `embedded` (the policy built into this binary).
    #[arg(value_name = "OLD_RULES", value_parser = super::rules_parser())]
    pub old: super::Rules,
    /// The rules folder after the change, or `embedded`.
    #[arg(value_name = "NEW_RULES", value_parser = super::rules_parser())]
    pub new: super::Rules,
    /// Profiles, or folders of them (their `*.yaml` files).
    #[arg(value_name = "PROFILE_OR_DIR", required = true)]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    /// Report format: `md` for a reviewer (long values cut with `...`), `json` for a program
    /// (every value in full).
    #[arg(long, value_enum, default_value_t = DiffFormat::Md)]
    pub format: DiffFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

#[allow(clippy::unnecessary_wraps)] // every command has this signature
pub fn run(args: &Args) -> Result<Outcome> {
    match diff(args) {
        Ok(outcome) => Ok(outcome),
        Err(e) => {
            super::stdio::err(&format!("{}\n", super::render(&e)));
            Ok(Outcome::Failed)
        }
    }
}

fn diff(args: &Args) -> Result<Outcome> {
    let old = super::Config::at(args.old.clone(), args.as_of);
    let new = super::Config::at(args.new.clone(), args.as_of);
    let as_of = old.as_of();
    let (old, new) = (old.graph()?, new.graph()?);
    let mut profiles = Vec::new();
    for path in &args.profiles {
        if path.is_dir() {
            let files =
                decide_engine::source::files_in(path, decide_engine::source::YAML_EXTENSIONS)
                    .map_err(|e| {
                        decide_engine::Error::new(ErrorKind::Io, format!("cannot read folder: {e}"))
                            .in_file(path.display().to_string())
                    })?;
            let mut folder = decide_engine::source::Folder::new(path, "profiles folder", u64::MAX)?;
            for file in files {
                profiles.push(folder.read(&file, ErrorKind::Profile)?);
            }
        } else {
            profiles.push(Source::read(path, ErrorKind::Profile)?);
        }
    }
    let diffs = decide_tools::diff::run(&old, &new, &profiles, as_of)?;
    let report = match args.format {
        DiffFormat::Md => decide_tools::diff::report(&old, &new, &diffs, as_of),
        DiffFormat::Json => decide_tools::diff::report_json(&old, &new, &diffs, as_of),
    };
    super::print(&report)?;
    if diffs
        .iter()
        .any(decide_tools::diff::ProfileDiff::decision_changed)
    {
        Ok(Outcome::Flagged)
    } else {
        Ok(Outcome::Clean)
    }
}
