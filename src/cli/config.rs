//! The command line's front door: the flags every command that reads a policy shares, declared
//! once as clap groups each command flattens in ([`RulesArgs`] for `--rules`, [`AsOfArgs`] for
//! `--as-of`), and resolved once into a [`Config`], the one place that turns them into the rules
//! folder (or the embedded policy), the date (today when `--as-of` is not given) and, on demand,
//! the policy, the compiled graph and the memo's templates.
//!
//! The two layers follow ripgrep's low-level and high-level arguments: the groups are what was
//! typed, the configuration is what a command works with, and no command reads the clock or
//! loads a policy on its own.

use std::path::{Path, PathBuf};

use clap::builder::TypedValueParser as _;
use jiff::civil::Date;

use decide_engine::error::Result;
use decide_engine::policy::PolicyOrigin;
use decide_engine::{Graph, Lang, Policy, Source};
use decide_tools::Memo;

/// `--rules DIR`: where the policy comes from.
#[derive(Debug, Clone, clap::Args)]
pub struct RulesArgs {
    /// The rules folder, or `embedded` for the policy built into this binary.
    #[arg(long, value_name = "DIR", default_value = Rules::EMBEDDED, value_parser = rules_parser())]
    pub rules: Rules,
}

/// `--as-of YYYY-MM-DD`: the date a command works at. The help is the deciding commands'; a
/// command that reads the date otherwise says how with
/// `#[command(mut_args(super::config::as_of_help("...")))]`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct AsOfArgs {
    /// The date prices are judged at (YYYY-MM-DD); default today.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_date)]
    pub as_of: Option<Date>,
}

/// `--as-of`'s help for a command that reads the date otherwise than the deciding commands. (In
/// place: `mut_arg` would move the flag to the end of the list the shell completions follow.)
pub(crate) fn as_of_help(help: &'static str) -> impl FnMut(clap::Arg) -> clap::Arg {
    arg_help("as_of", help)
}

/// The help of the flattened argument `id`, said for the command it is in.
pub(crate) fn arg_help(id: &'static str, help: &'static str) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |arg| {
        if arg.get_id() == id {
            arg.help(help)
        } else {
            arg
        }
    }
}

/// Parses `--as-of`.
pub(crate) fn parse_date(s: &str) -> std::result::Result<Date, String> {
    s.parse::<Date>()
        .map_err(|e| format!("expected a date YYYY-MM-DD ({e})"))
}

/// Where a command's policy comes from: the one built into this binary, or a rules folder.
/// `embedded` names the first wherever a rules folder is asked for (`--rules embedded`,
/// `decide diff embedded my-rules …`); a folder of that name is `./embedded`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rules {
    Embedded,
    Folder(PathBuf),
}

impl Rules {
    /// The word that names the embedded policy on the command line.
    pub const EMBEDDED: &'static str = "embedded";

    /// The rules folder; `None` for the embedded policy.
    pub fn folder(&self) -> Option<&Path> {
        match self {
            Rules::Embedded => None,
            Rules::Folder(dir) => Some(dir),
        }
    }

    /// The policy's sources (rule files, then quote sheets) and where they come from.
    pub fn sources(&self) -> Result<(Vec<Source>, PolicyOrigin)> {
        Ok(match self {
            Rules::Embedded => (Policy::embedded_sources(), PolicyOrigin::Embedded),
            Rules::Folder(dir) => (Policy::read_dir(dir)?, PolicyOrigin::Folder(dir.clone())),
        })
    }
}

impl From<PathBuf> for Rules {
    fn from(path: PathBuf) -> Self {
        if path.as_os_str() == Rules::EMBEDDED {
            Rules::Embedded
        } else {
            Rules::Folder(path)
        }
    }
}

/// Parses a rules argument: `embedded`, or a folder's path.
pub(crate) fn rules_parser() -> impl clap::builder::TypedValueParser<Value = Rules> {
    clap::builder::PathBufValueParser::new().map(Rules::from)
}

/// How a configuration prices the policy's offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pricing {
    /// With the quotes valid at the configuration's date: commands that decide at a date.
    AtDate,
    /// With every offer's newest quote: commands that decide nothing at a date (`graph`, `test`).
    Newest,
}

/// A command's configuration: the policy's origin and the date, resolved once from the command
/// line, and what is built from them.
#[derive(Debug, Clone)]
pub struct Config {
    rules: Rules,
    as_of: Date,
    pricing: Pricing,
}

impl Config {
    /// `--rules` and `--as-of` (today when it is not given), the policy priced at that date.
    pub fn new(rules: &RulesArgs, as_of: AsOfArgs) -> Self {
        Config::at(rules.rules.clone(), as_of)
    }

    /// A policy named otherwise than by `--rules` (`decide diff OLD NEW`), at `--as-of`.
    pub fn at(rules: Rules, as_of: AsOfArgs) -> Self {
        Config {
            rules,
            as_of: as_of.as_of.unwrap_or_else(decide_engine::today::today),
            pricing: Pricing::AtDate,
        }
    }

    /// `--rules` for a command without `--as-of` that decides today (`init`).
    pub fn today(rules: &RulesArgs) -> Self {
        Config::new(rules, AsOfArgs { as_of: None })
    }

    /// `--rules` for a command that decides nothing at a date (`graph`, `test`): the policy
    /// with every offer's newest quote.
    pub fn newest(rules: &RulesArgs) -> Self {
        Config {
            pricing: Pricing::Newest,
            ..Config::today(rules)
        }
    }

    /// Where the policy comes from.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The rules folder; `None` for the embedded policy.
    pub fn folder(&self) -> Option<&Path> {
        self.rules.folder()
    }

    /// The date the command works at: `--as-of`, or today.
    pub fn as_of(&self) -> Date {
        self.as_of
    }

    /// The policy, priced as the command needs it.
    pub fn policy(&self) -> Result<Policy> {
        let policy = match self.folder() {
            Some(dir) => Policy::from_dir(dir),
            None => Policy::embedded(),
        }?;
        Ok(match self.pricing {
            Pricing::AtDate => policy.priced_at(self.as_of),
            Pricing::Newest => policy,
        })
    }

    /// The policy compiled, in English.
    pub fn graph(&self) -> Result<Graph> {
        Graph::compile(self.policy()?)
    }

    /// The policy compiled for `lang`.
    pub fn graph_in(&self, lang: Lang) -> Result<Graph> {
        Graph::compile_in(self.policy()?, lang)
    }

    /// The memo's templates: the embedded ones, with a rules folder's `templates/` over them.
    pub fn memo(&self) -> Result<Memo> {
        Memo::for_rules(self.folder())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(word: &str) -> RulesArgs {
        RulesArgs {
            rules: Rules::from(PathBuf::from(word)),
        }
    }

    #[test]
    fn embedded_names_the_built_in_policy_and_anything_else_a_folder() {
        assert_eq!(rules("embedded").rules, Rules::Embedded);
        assert_eq!(
            rules("./embedded").rules.folder(),
            Some(Path::new("./embedded"))
        );
    }

    #[test]
    fn the_date_is_as_of_when_given_and_today_otherwise() {
        let date: Date = "2026-09-04".parse().unwrap();
        let given = Config::new(&rules("embedded"), AsOfArgs { as_of: Some(date) });
        assert_eq!(given.as_of(), date);
        let today = decide_engine::today::today();
        let resolved = Config::today(&rules("embedded")).as_of();
        // (Unless the day changed between the two readings of the clock.)
        assert!(resolved == today || resolved == today.tomorrow().unwrap());
    }

    #[test]
    fn a_dated_policy_is_priced_at_the_date_and_an_undated_one_is_not() {
        let date: Date = "2026-09-04".parse().unwrap();
        let dated = Config::new(&rules("embedded"), AsOfArgs { as_of: Some(date) });
        assert!(dated.policy().unwrap().prices_hold_at(date));
        assert_eq!(dated.policy().unwrap().prices_at, Some(date));
        let newest = Config::newest(&rules("embedded")).policy().unwrap();
        assert_eq!(newest.prices_at, None);
    }
}
