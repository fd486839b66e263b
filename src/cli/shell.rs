//! `decide completions` and `decide man`: shell completions and a man page, both generated from
//! the same clap definition as `--help`, so they cannot drift from the real options.

use clap::CommandFactory;

use decide_engine::error::{Error, ErrorKind, Result};

use super::Outcome;

/// Print shell completions for bash, zsh, fish or PowerShell.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide completions bash > ~/.local/share/bash-completion/completions/decide
  decide completions zsh > ~/.zfunc/_decide
  decide completions fish > ~/.config/fish/completions/decide.fish")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Print the man page (roff), generated from the same definition as `--help`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide man > decide.1 && man ./decide.1
  decide man | gzip > /usr/local/share/man/man1/decide.1.gz")]
pub struct ManArgs {}

pub fn completions(args: &CompletionsArgs) -> Result<Outcome> {
    let mut command = super::Args::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "decide", &mut out);
    super::print(&String::from_utf8_lossy(&out))?;
    Ok(Outcome::Clean)
}

pub fn man(_args: &ManArgs) -> Result<Outcome> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::Args::command())
        .render(&mut out)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write the man page: {e}")))?;
    super::print(&String::from_utf8_lossy(&out))?;
    Ok(Outcome::Clean)
}
