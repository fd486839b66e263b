//! `decide diff`: both policies evaluated on the same profiles, changes reported in Markdown.

use std::path::PathBuf;

use crate::error::Result;

use super::Outcome;

/// Compare two policies on the same profiles and report what changed, in Markdown.
///
/// For each profile: deployment, offer, warnings and monthly cost before and after, and the
/// first nodes of the trace whose values differ.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide diff rules ./my-rules examples/
  decide diff old-rules new-rules team-a.yaml team-b.yaml --as-of 2026-09-04

Exit codes: 0 no decision changed, 1 a decision changed, 2 usage error or bad input.")]
pub struct Args {
    /// The rules folder before the change.
    #[arg(value_name = "OLD_RULES")]
    pub old: PathBuf,
    /// The rules folder after the change.
    #[arg(value_name = "NEW_RULES")]
    pub new: PathBuf,
    /// Profiles, or folders of them.
    #[arg(value_name = "PROFILE_OR_DIR", required = true)]
    pub profiles: Vec<PathBuf>,
    /// The date prices are judged at (YYYY-MM-DD); default today.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::parse_date)]
    pub as_of: Option<jiff::civil::Date>,
}

pub fn run(_args: &Args) -> Result<Outcome> {
    todo!()
}
