//! `decide test`: policy test cases (a profile and its expected decision), with coverage.

use std::path::PathBuf;

use crate::error::Result;

use super::Outcome;

/// Run policy test cases (a profile and its expected decision) with coverage.
///
/// Reports each case as passed or failed with a readable difference, then which criteria, table
/// rows, warnings and checklist items no case exercises.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide test
  decide test --rules ./my-rules ./my-rules/tests

Exit codes: 0 every case passed, 1 a case failed, 2 usage error.")]
pub struct Args {
    /// The rules folder (default: the embedded policy).
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// Case files or folders of them (default: the cases shipped with the policy).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(_args: &Args) -> Result<Outcome> {
    todo!()
}
