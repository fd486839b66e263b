//! `decide schema`: the JSON Schema of profiles or of rule files, generated from the types.

use clap::ValueEnum;

use crate::error::Result;

use super::Outcome;

/// Print the JSON Schema of a workload profile or of a rule file.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide schema profile > schema/profile.schema.json
  decide schema rules --draft 2020-12")]
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Draft {
    #[value(name = "7")]
    Draft7,
    #[value(name = "2020-12")]
    Draft2020_12,
}

pub fn run(_args: &Args) -> Result<Outcome> {
    todo!()
}
