//! `decide graph`: the decision graph as a Mermaid or Graphviz DOT picture.

use clap::ValueEnum;

use decide::Graph;
use decide::diagram;
use decide::error::Result;

use super::Outcome;

/// Print the decision graph: nodes by kind, edges by reference.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide graph > graph.mmd
  decide graph --rules my-rules
  decide graph --format dot | dot -Tsvg > graph.svg")]
pub struct Args {
    /// The rules folder, or `embedded` for the policy built into this binary.
    #[arg(long, value_name = "DIR", default_value = "embedded", value_parser = super::rules_parser())]
    pub rules: super::Rules,
    /// Picture format.
    #[arg(short, long, value_enum, default_value_t = GraphFormat::Mermaid)]
    pub format: GraphFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart (renders on GitHub and GitLab).
    Mermaid,
    /// Graphviz DOT.
    Dot,
}

/// Compiles the policy and prints its graph in the format `args` ask for.
pub fn run(args: &Args) -> Result<Outcome> {
    let graph = Graph::compile(super::load_policy(args.rules.folder(), None)?)?;
    let text = match args.format {
        GraphFormat::Mermaid => diagram::mermaid(&graph),
        GraphFormat::Dot => diagram::dot(&graph),
    };
    super::print(&text)?;
    Ok(Outcome::Clean)
}
