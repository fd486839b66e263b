//! `decide schema`: the JSON Schema of profiles, rule files, test cases or quote-sheet rows, generated from the types.

use clap::ValueEnum;

use decide_engine::error::Result;
use decide_tools::schema;

use super::Outcome;

/// Print the JSON Schema of a workload profile or of a rule file.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide schema profile > schema/profile.schema.json
  decide schema rules > schema/rules.schema.json
  decide schema rules --draft 2020-12
  decide schema quotes > schema/quote-sheet.schema.json")]
pub struct Args {
    /// Which document the schema describes.
    #[arg(value_enum)]
    pub what: SchemaOf,
    /// The JSON Schema draft (7 is what the YAML language server understands).
    #[arg(long, value_enum, default_value_t = Draft::Draft7)]
    pub draft: Draft,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// A workload profile.
    Profile,
    /// One file of a rules folder.
    Rules,
    /// A policy test case file (`decide test`).
    Cases,
    /// One row of a quote sheet (`quotes/*.csv` of a rules folder): its columns.
    Quotes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Draft {
    #[value(name = "7")]
    Draft7,
    #[value(name = "2020-12")]
    Draft2020_12,
}

impl From<Draft> for schema::Draft {
    fn from(draft: Draft) -> Self {
        match draft {
            Draft::Draft7 => schema::Draft::Draft7,
            Draft::Draft2020_12 => schema::Draft::Draft2020_12,
        }
    }
}

/// Prints the schema `args` ask for as pretty JSON.
pub fn run(args: &Args) -> Result<Outcome> {
    let draft = args.draft.into();
    let value = match args.what {
        SchemaOf::Profile => schema::profile(draft),
        SchemaOf::Rules => schema::rules(draft),
        SchemaOf::Cases => schema::cases(draft),
        SchemaOf::Quotes => schema::quote_sheet(draft),
    };
    super::print(&schema::to_text(&value))?;
    Ok(Outcome::Clean)
}
