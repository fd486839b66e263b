//! `decide validate`: every static check of a rules folder, each finding with file:line and a fix.

use std::path::PathBuf;

use crate::error::Result;

use super::Outcome;

/// Check a rules folder: every static check, each finding with file:line and a fix.
///
/// Checks the schema of the rule files, expressions, references, cycles, unused nodes, duplicate ids, offer ids, and decision-table gaps, overlaps and shadowed rows.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide validate
  decide validate --rules ./my-rules

Exit codes: 0 clean, 1 findings, 2 usage error.")]
pub struct Args {
    /// The rules folder to check (default: the embedded policy).
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

pub fn run(_args: &Args) -> Result<Outcome> {
    todo!()
}
