//! `decide offers`: the catalog at a date as a table (hardware, vendor, unit, price, VAT, term,
//! age, trend): aligned on a terminal, Markdown in a pipe, or JSON.

use decide_engine::error::{Error, ErrorKind, Result};

use super::Outcome;

/// List what is on offer at a date: every quote in force, with its price, VAT, term, age and
/// trend.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide offers                         (today's quotes; a table on a terminal, else Markdown)
  decide offers --as-of 2026-07-15      (what was on offer then, at July's prices)
  decide offers --rules my-rules --format json")]
// `--as-of` says what this command reads at the date.
#[command(mut_args(super::config::as_of_help(
    "The date the quotes are read at (YYYY-MM-DD); default today"
)))]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    /// Output format (default: `table` when standard output is a terminal, else `md`).
    #[arg(short, long, value_enum)]
    pub format: Option<ListingFormat>,
}

/// The listing's formats (a table has no HTML memo form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListingFormat {
    /// An aligned plain-text table, for a terminal.
    Table,
    /// Markdown table.
    Md,
    /// JSON.
    Json,
}

/// Prints the offers of the policy priced at `--as-of`.
pub fn run(args: &Args) -> Result<Outcome> {
    let config = super::Config::new(&args.rules, args.as_of);
    let as_of = config.as_of();
    let policy = config.policy()?;
    let listing = decide_tools::catalog::listing(&policy, as_of);
    let format = args.format.unwrap_or_else(|| {
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            ListingFormat::Table
        } else {
            ListingFormat::Md
        }
    });
    let text = match format {
        ListingFormat::Table => {
            let bold = anstyle::Style::new().bold();
            let colour = super::colour_stdout();
            decide_tools::catalog::table(&listing, &|s| {
                if colour {
                    format!("{}{s}{}", bold.render(), bold.render_reset())
                } else {
                    s.to_owned()
                }
            })
        }
        ListingFormat::Md => decide_tools::catalog::markdown(&listing),
        ListingFormat::Json => {
            let mut json = serde_json::to_string_pretty(&listing)
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write JSON: {e}")))?;
            json.push('\n');
            json
        }
    };
    super::print(&text)?;
    Ok(Outcome::Clean)
}
