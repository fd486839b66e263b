//! `decide graph`: the decision graph as a Mermaid or Graphviz DOT picture.

use clap::ValueEnum;

use decide_engine::error::Result;
use decide_tools::diagram::{self, Focus};

use super::Outcome;

/// Print the decision graph: nodes by kind, edges by reference.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide graph > graph.mmd
  decide graph --rules my-rules
  decide graph --format dot | dot -Tsvg > graph.svg
  decide graph --focus rule_premium                (that node and what it reads)
  decide graph --focus breakeven_hours_per_gpu --descendants   (also what reads it)")]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    /// Picture format.
    #[arg(short, long, value_enum, default_value_t = GraphFormat::Mermaid)]
    pub format: GraphFormat,
    /// Draw only this node and its ancestors (the nodes and inputs it reads, directly or not).
    #[arg(long, value_name = "NODE")]
    pub focus: Option<String>,
    /// With --focus, also draw the node's descendants (what reads it, directly or not).
    #[arg(long, requires = "focus")]
    pub descendants: bool,
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
    let graph = super::Config::newest(&args.rules).graph()?;
    let scope = match (&args.focus, args.descendants) {
        (None, _) => Focus::All,
        (Some(id), false) => Focus::Ancestors(id),
        (Some(id), true) => Focus::Lineage(id),
    };
    let text = match args.format {
        GraphFormat::Mermaid => diagram::mermaid_of(&graph, scope)?,
        GraphFormat::Dot => diagram::dot_of(&graph, scope)?,
    };
    super::print(&text)?;
    Ok(Outcome::Clean)
}
