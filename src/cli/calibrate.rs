//! `decide calibrate`: the policy's serving and training models against published
//! measurements, row by row and as an error by group.

use std::path::PathBuf;

use decide_engine::Source;
use decide_engine::error::{Error, ErrorKind, Result};

use super::Outcome;

/// Compare the models' estimates with published measurements: every measured figure beside
/// what the policy predicts for it, and the error by group.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide calibrate                               (the measurements shipped with the rules)
  decide calibrate --measurements ours.csv       (your own as well; columns as in rules/measurements/)
  decide calibrate --rules my-rules --format json")]
#[command(mut_args(super::config::as_of_help(
    "The date the policy's prices are read at (YYYY-MM-DD); default today"
)))]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    /// A measurement sheet to compare as well (repeatable); the rules folder's
    /// `measurements/*.csv` (or the embedded ones) are always read.
    #[arg(long, value_name = "FILE")]
    pub measurements: Vec<PathBuf>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "text")]
    pub format: CalibrationFormat,
}

/// The calibration's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CalibrationFormat {
    /// Aligned plain text: every row, then the error by group.
    Text,
    /// JSON: every row with its prediction, and the groups.
    Json,
}

/// Runs the calibration and prints it.
pub fn run(args: &Args) -> Result<Outcome> {
    let config = super::Config::new(&args.rules, args.as_of);
    let graph = config.graph()?;
    let mut rows = match config.folder() {
        None => decide_tools::calibrate::shipped()?,
        Some(dir) => decide_tools::calibrate::in_folder(dir)?,
    };
    for file in &args.measurements {
        rows.extend(decide_tools::calibrate::read_sheet(&Source::read(
            file,
            ErrorKind::Rules,
        )?)?);
    }
    if rows.is_empty() {
        return Err(Error::new(ErrorKind::Usage, "no measurements to compare")
            .help("give a sheet with `--measurements FILE`, or add one to the rules folder's `measurements/`"));
    }
    let calibration = decide_tools::calibrate::calibrate(&graph, rows, config.as_of())?;
    let text = match args.format {
        CalibrationFormat::Text => decide_tools::calibrate::text(&calibration),
        CalibrationFormat::Json => {
            let mut json = serde_json::to_string_pretty(&calibration)
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write JSON: {e}")))?;
            json.push('\n');
            json
        }
    };
    super::print(&text)?;
    Ok(Outcome::Clean)
}
