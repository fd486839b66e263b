//! The command line: arguments parsed by clap, then handed to one command's module.
//!
//! `decide PROFILE` decides one profile; the subcommands are the policy author's toolkit
//! (`validate`, `schema`, `graph`, `test`, `diff`). Exit codes: 0 success, 1 bad profile or
//! rules, findings, failed cases or changed decisions, 2 usage error. Nothing here knows how a
//! decision is made: that is the library's, and this module is the binary's (`src/main.rs`).

mod batch;
mod calibrate;
pub(crate) mod config;
mod diff;
mod graph;
mod init;
mod junit;
mod offers;
mod output;
mod pdf;
mod progress;
mod quotes;
mod rules;
mod schema;
mod serve;
mod shell;
mod signals;
mod stdio;
mod test;
mod validate;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand, ValueEnum};

use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::{Lang, Source};
use decide_tools::Format;

pub(crate) use config::{AsOfArgs, Config, Rules, RulesArgs, rules_parser};
use output::{Inputs, write_output};
use pdf::{Printed, Printer};
use signals::{Signal, Signals};

/// `--lang`: the engine's languages as clap's possible values, each with its name.
pub(crate) fn lang_parser() -> impl clap::builder::TypedValueParser<Value = Lang> {
    clap::builder::PossibleValuesParser::new(
        Lang::ALL.map(|lang| clap::builder::PossibleValue::new(lang.code()).help(lang_name(lang))),
    )
    .map(|code| {
        Lang::ALL
            .into_iter()
            .find(|lang| lang.code() == code)
            .unwrap_or_default()
    })
}

/// A language's name in the help of `--lang`.
fn lang_name(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "English",
        Lang::Zh => "中文 (Chinese)",
    }
}

const EXAMPLES: &str = "\
Examples (from any folder; `decide rules export` writes the example profiles):
  decide init                          (answer questions, get a profile and a memo)
  decide rules export my-rules         (the built-in policy and examples, to read and change)
  decide my-rules/examples/lora-7b-4090.yaml
  decide my-rules/examples/pretrain-70b-job.yaml --format json --as-of 2026-09-04
  decide my-rules/examples/pretrain-70b-job.yaml --lang zh      (the memo in Chinese)
  decide profile.yaml --format html -o memo.html      (prints on A4)
  decide profile.yaml --format pdf -o memo.pdf        (printed by Chromium)
  decide profile.yaml --trace          (with the decision trace: every node and why)
  decide profile.yaml --rules my-rules --output memo.md
  cat profile.yaml | decide -
  decide batch my-rules/examples/ --as-of 2026-09-04 > decisions.jsonl
  decide validate --rules my-rules
  decide test --rules my-rules
  decide diff embedded my-rules my-rules/examples/
  decide offers --as-of 2026-09-04       (what is on offer, from whom, at what price)
  decide serve                         (a page and an HTTP API on http://127.0.0.1:8080)
  decide quotes check my-rules/quotes/2026-09-04-marketplace.csv
  decide graph --format dot | dot -Tsvg > graph.svg
  decide schema profile
  decide completions bash > ~/.local/share/bash-completion/completions/decide

Exit codes: 0 decided (or: clean, passed, unchanged), 1 bad profile or rules (or: findings,
failed cases, changed decisions), 2 usage error, 128 + N stopped by signal N while the browser
prints `--format pdf` (130 SIGINT; the -o file is left as it was).";

/// Rent hourly GPU containers or a monthly 8-GPU bare-metal server? Reads a workload profile,
/// evaluates the procurement policy and writes an explained memo.
#[derive(Debug, Parser)]
#[command(
    name = "decide",
    version,
    about,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Args {
    /// A policy toolkit command; without one, `decide` decides PROFILE.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The workload profile (YAML), or `-` for standard input.
    #[arg(value_name = "PROFILE", required = true)]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Md)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub as_of: AsOfArgs,
    /// Write to this file instead of standard output: a file is replaced whole or not at all
    /// (its mode and any link to it kept); a device or descriptor (`/dev/stdout`) is written in
    /// place; the profile itself is refused.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The language of the memo and of the record's texts (reasons, messages, checklist).
    #[arg(long, value_parser = lang_parser(), default_value_t = Lang::En)]
    pub lang: Lang,
    /// Add the decision trace (every node of the policy with its value and why): the memo's
    /// appendix, the record's `trace`.
    #[arg(long)]
    pub trace: bool,
    /// When to colour what is written to a terminal (errors, help, `decide offers`' table,
    /// `decide init`'s prompts): `auto` colours a terminal unless `NO_COLOR` is set (or
    /// `CLICOLOR=0`), and colours a pipe too when `CLICOLOR_FORCE` is set.
    #[arg(long, value_enum, global = true, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

/// When output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, as `NO_COLOR`, `CLICOLOR` and `CLICOLOR_FORCE` say.
    Auto,
    /// Always, even in a pipe or a file.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    fn choice(self) -> anstream::ColorChoice {
        match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        }
    }

    /// The `--color` the command line gives, read before clap parses it so that clap's own
    /// help and errors follow it; the last one wins, as it does for clap. An invalid value is
    /// left to clap to report.
    fn from_command_line() -> Self {
        let mut when = ColorWhen::Auto;
        let mut args = std::env::args_os().skip(1);
        while let Some(arg) = args.next() {
            let value = match arg.to_str() {
                Some("--") => break,
                Some("--color") => args.next(),
                Some(a) => a.strip_prefix("--color=").map(Into::into),
                None => None,
            };
            match value.as_ref().and_then(|v| v.to_str()) {
                Some("always") => when = ColorWhen::Always,
                Some("never") => when = ColorWhen::Never,
                Some("auto") => when = ColorWhen::Auto,
                _ => {}
            }
        }
        when
    }
}

/// Whether what is written to standard output is coloured (`--color`, then the environment).
pub(crate) fn colour_stdout() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Whether what is written to standard error is coloured (`--color`, then the environment).
pub(crate) fn colour_stderr() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

/// The policy author's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::Args),
    Batch(batch::Args),
    Validate(validate::Args),
    Schema(schema::Args),
    Graph(graph::Args),
    Test(test::Args),
    Diff(diff::Args),
    Offers(offers::Args),
    Calibrate(calibrate::Args),
    Quotes(quotes::Args),
    Rules(rules::Args),
    Serve(serve::Args),
    Completions(shell::CompletionsArgs),
    Man(shell::ManArgs),
}

/// How a command that succeeded ended: clean, or with something a person must look at
/// (findings, failed cases, changed decisions), which exits 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Clean,
    Flagged,
    /// The command could not do its job and has said why; exits 2 (for `decide diff`, whose
    /// exit 1 means "a decision changed").
    Failed,
    /// A signal stopped the command cleanly; exits with this code (130 for SIGINT, 143 for
    /// SIGTERM).
    Interrupted(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Markdown memo.
    Md,
    /// The memo as one self-contained HTML page (prints on A4).
    Html,
    /// JSON decision record.
    Json,
    /// The HTML memo printed to PDF (A4) by a Chromium-family browser on this machine
    /// (`DECIDE_BROWSER`, else Chromium, Chrome or Edge); needs `-o FILE`.
    Pdf,
}

impl OutputFormat {
    /// The library's format.
    pub(crate) fn format(self) -> Format {
        match self {
            OutputFormat::Md => Format::Markdown,
            OutputFormat::Html | OutputFormat::Pdf => Format::Html,
            OutputFormat::Json => Format::Json,
        }
    }

    /// The file extension of an output in this format.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            OutputFormat::Pdf => "pdf",
            other => other.format().extension(),
        }
    }

    /// The browser a PDF is printed with (and its timeout), found before any work starts;
    /// `None` for the other formats.
    pub(crate) fn printer(self) -> Result<Option<Printer>> {
        match self {
            OutputFormat::Pdf => pdf::printer().map(Some),
            _ => Ok(None),
        }
    }
}

/// `text` as the bytes of the output: itself, or printed to PDF by `printer`, unless `stop`
/// reports a signal while the browser runs.
pub(crate) fn output_bytes(
    printer: Option<&Printer>,
    text: String,
    stop: &dyn Fn() -> Option<Signal>,
) -> Result<Printed> {
    match printer {
        Some(printer) => printer.print(&text, stop),
        None => Ok(Printed::Done(text.into_bytes())),
    }
}

/// Runs the command line: `Ok` when the command ended clean, otherwise the process exit code
/// (the error, if any, already written to standard error).
pub fn run() -> std::result::Result<(), u8> {
    let when = ColorWhen::from_command_line();
    when.choice().write_global();
    let command = <Args as clap::CommandFactory>::command().color(match when {
        ColorWhen::Auto => clap::ColorChoice::Auto,
        ColorWhen::Always => clap::ColorChoice::Always,
        ColorWhen::Never => clap::ColorChoice::Never,
    });
    let parsed = command
        .try_get_matches()
        .and_then(|m| <Args as clap::FromArgMatches>::from_arg_matches(&m));
    let args = match parsed {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return match e.exit_code() {
                0 => Ok(()),
                code => Err(u8::try_from(code).unwrap_or(2)),
            };
        }
    };
    let result = match &args.command {
        None => decide_profile(&args),
        Some(Command::Init(a)) => init::run(a),
        Some(Command::Batch(a)) => batch::run(a),
        Some(Command::Validate(a)) => validate::run(a),
        Some(Command::Schema(a)) => schema::run(a),
        Some(Command::Graph(a)) => graph::run(a),
        Some(Command::Test(a)) => test::run(a),
        Some(Command::Diff(a)) => diff::run(a),
        Some(Command::Offers(a)) => offers::run(a),
        Some(Command::Calibrate(a)) => calibrate::run(a),
        Some(Command::Quotes(a)) => quotes::run(a),
        Some(Command::Rules(a)) => rules::run(a),
        Some(Command::Serve(a)) => serve::run(a),
        Some(Command::Completions(a)) => shell::completions(a),
        Some(Command::Man(a)) => shell::man(a),
    };
    match result {
        Ok(Outcome::Clean) => Ok(()),
        Ok(Outcome::Flagged) => Err(1),
        Ok(Outcome::Failed) => Err(2),
        Ok(Outcome::Interrupted(code)) => Err(code),
        Err(e) => {
            let e = examples_hint(e);
            // A closed standard error does not change the exit code the error calls for.
            stdio::err(&format!("{}\n", render(&e)));
            Err(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

/// "file not found" for a file under an `examples/` folder: the examples the docs name come with
/// the project's source, and an installed `decide` writes them out with the rules.
fn examples_hint(e: Error) -> Error {
    let under_examples = e.origin().is_some_and(|o| {
        Path::new(&o.name)
            .components()
            .any(|c| c.as_os_str() == decide_engine::policy::EXAMPLES_FOLDER)
    });
    if under_examples && e.message() == "file not found" {
        e.help(format!(
            "the example profiles come with the project's source; `decide rules export \
             my-rules` writes them to my-rules/{}/ (with the rules they are decided by), and \
             `decide init` writes a profile of your own",
            decide_engine::policy::EXAMPLES_FOLDER
        ))
    } else {
        e
    }
}

/// Decides one profile as `args` say and writes the result.
fn decide_profile(args: &Args) -> Result<Outcome> {
    if args.format == OutputFormat::Pdf && args.output.is_none() {
        return Err(Error::new(
            ErrorKind::Usage,
            "`--format pdf` writes a file and needs `-o FILE`",
        )
        .help("for example: decide profile.yaml --format pdf -o memo.pdf"));
    }
    let Some(profile) = &args.profile else {
        return Err(Error::new(ErrorKind::Usage, "a PROFILE is required"));
    };
    // The profile is not its own output: refused before any work, and again as it is written.
    let inputs = Inputs::of([profile.as_path()]);
    if let Some(path) = &args.output {
        inputs.refuse(path)?;
    }
    let printer = args.format.printer()?;
    let config = Config::new(&args.rules, args.as_of);
    let as_of = config.as_of();
    let graph = config.graph_in(args.lang)?;
    let memo = config.memo()?;
    let source = if profile == Path::new("-") {
        Source::stdin(ErrorKind::Profile)?
    } else {
        Source::read(profile, ErrorKind::Profile)?
    };
    let detail = decide_tools::Detail {
        trace: args.trace,
        ..decide_tools::Detail::DEFAULT
    };
    let (profile, evaluation) = decide_tools::decide_with(&graph, &source, as_of, detail)?;
    let text = memo.render(&graph, &profile, &evaluation, args.format.format())?;
    let written = match &args.output {
        Some(path) => write_file(path, &inputs, printer.as_ref(), text),
        None => print(&text).map(|()| Outcome::Clean),
    };
    // The process ends next: the compiled graph, templates and record are left to the OS.
    // Freeing them one by one costs about 5 M instructions (7% of a whole run, callgrind).
    std::mem::forget((graph, memo, profile, evaluation));
    written
}

/// Writes `text` to the file `path`, printed to PDF first by `printer` if given. A signal while
/// the browser prints (SIGINT, SIGTERM and the others [`Signals`] watches) stops it and removes
/// its scratch folder; `path` is left as it was and the process exits 128 + the signal.
fn write_file(
    path: &Path,
    inputs: &Inputs,
    printer: Option<&Printer>,
    text: String,
) -> Result<Outcome> {
    // Watched only while a browser runs: a signal then ends the process through this function.
    let signals = printer.map(|_| Signals::watch()).transpose()?;
    let stop = || signals.as_ref().and_then(Signals::received);
    match output_bytes(printer, text, &stop)? {
        Printed::Done(bytes) => write_output(path, inputs, &bytes).map(|()| Outcome::Clean),
        Printed::Stopped(signal) => {
            stdio::err(&format!(
                "interrupted by {} while the browser printed; {} was left as it was\n",
                signal.name(),
                path.display()
            ));
            Ok(Outcome::Interrupted(signal.exit_code()))
        }
    }
}

/// An error as stderr shows it: in colour when `--color` and the environment say so (by
/// default on a terminal unless `NO_COLOR` is set, <https://no-color.org>), plain otherwise.
/// A profile with several faults ends with how many, so that the first, scrolled off a
/// terminal, is not taken for the only one.
pub(crate) fn render(e: &Error) -> String {
    let mut text = if colour_stderr() {
        e.render_styled()
    } else {
        e.render()
    };
    if e.count() > 1 && e.kind() == ErrorKind::Profile {
        let file = e.origin().map_or("the profile", |o| o.name.as_str());
        let _ = write!(
            text,
            "\n\n{}: {} faults, each shown above",
            decide_engine::error::visible(file),
            e.count()
        );
    }
    text
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an error: the command
/// ends with the exit code it has.
pub fn print(text: &str) -> Result<()> {
    stdio::out(text).map(|_| ())
}
