//! `decide batch`: many profiles with one compiled policy, in parallel, output in input order.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use decide_engine::error::{Error, ErrorKind, Result};
use decide_lang::group_thousands;
use decide_tools::Format;
use decide_tools::batch::{self, End, Flow, Options, Summary};

use super::output::{Inputs, OutputFile};
use super::pdf::Printed;
use super::progress::{self, Progress};
use super::signals::Signals;
use super::stdio::{self, Pipe};
use super::{Outcome, OutputFormat};

/// Decide many profiles at once: files, folders, JSON lines or YAML streams.
///
/// The policy and templates are compiled once; profiles are decided on every core and written
/// in input order, one JSON record per profile, each with its `source` and `line`. A bad
/// profile is reported with its file and line, has an error record in its place, and does not
/// stop the others. Progress shows on a terminal; a summary (per deployment, per offer, per
/// warning, total monthly cost) closes the run on stderr.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide batch profiles/ > decisions.jsonl
  decide batch fleet.jsonl --as-of 2026-09-04 --output decisions.jsonl   (any length)
  decide batch team-a.yaml team-b.yaml --format md --out memos/ --lang zh
  decide batch team-a.yaml team-b.yaml --format html --out memos/   (one .html page each)
  decide batch team-a.yaml team-b.yaml --format pdf --out memos/    (printed by Chromium)
  decide batch profiles/ --sensitivity   (each line says what would change its answer)
  decide batch fleet.jsonl --output decisions.jsonl --progress 2> progress.log
  cat fleet.yaml | decide batch -

Inputs are read a profile at a time: a `.jsonl` or `.ndjson` file, or one whose first line is a
JSON object, is JSON lines (one profile a line, blank lines skipped); a file with `---` lines is
a YAML stream; anything else is one profile. Each profile is held to 1 MiB.

Each JSON record starts with {\"source\": FILE, \"line\": N, ...}: the input (<stdin> for `-`)
and the line the profile starts at. A profile that cannot be read or decided has the record
{\"source\": FILE, \"line\": N, \"error\": {\"kind\": ..., \"message\": ...}} in its place.

Exit codes: 0 every profile decided, 1 some profile failed (after deciding the rest) or an
input cannot be read or a memo cannot be written, 2 usage error, 128 + N stopped by signal N
(130 SIGINT, 143 SIGTERM, 129 SIGHUP; the --output file is left as it was).")]
#[command(mut_args(super::config::arg_help(
    "progress",
    "Show progress on stderr from the first profile (count, total when known, rate, ETA): `auto` on a terminal unless the records go to it too; `--progress` alone is `always` (plain lines, one a second, when stderr is not a terminal)"
)))]
pub struct Args {
    /// Profile files, folders of them, JSON-lines or multi-document YAML files; `-` for stdin.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,
    /// `json`: one decision record per line, in input order; `md` / `html` / `pdf`: one memo
    /// per profile in --out.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// The folder memos are written to (required with `--format md`, `html` or `pdf`, refused
    /// with `json`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the JSON lines to this file (whole or not at all) instead of standard output
    /// (`--format json` only).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    /// Keep each record's trace in the JSON lines, and the trace appendix in the memos (most of
    /// the size; off by default).
    #[arg(long)]
    pub trace: bool,
    /// Add to each JSON line what would change its answer (slower: a few hundred
    /// re-evaluations per profile; memos always have it).
    #[arg(long)]
    pub sensitivity: bool,
    /// The language of the memos and of the records' texts.
    #[arg(long, value_parser = super::lang_parser(), default_value_t = decide_engine::Lang::En)]
    pub lang: decide_engine::Lang,
    #[command(flatten)]
    pub progress: progress::ProgressArgs,
}

pub fn run(args: &Args) -> Result<Outcome> {
    let format = args.format.format();
    check_flags(args, format)?;
    let printer = args.format.printer()?;
    // From here on SIGINT and SIGTERM stop the batch at its next profile instead of ending the
    // process, so that the temporary output file is removed and the old one left whole; a
    // browser printing a PDF is stopped at once.
    let signals = Signals::watch()?;
    let config = super::Config::new(&args.rules, args.as_of);
    let as_of = config.as_of();
    let graph = config.graph_in(args.lang)?;
    let memo = config.memo()?;
    // Records printed to a terminal would be broken into by a line redrawn on it.
    let records_on_terminal =
        !format.is_memo() && args.output.is_none() && std::io::stdout().is_terminal();
    let mode = progress::Mode::of(args.progress.progress, records_on_terminal);
    let (profiles, inputs, total) = read_inputs(args, format, mode != progress::Mode::Hidden)?;
    let mut records = Records {
        file: match (&args.output, format) {
            (Some(path), Format::Json) => Some(OutputFile::create(path, &inputs)?),
            _ => None,
        },
        stdout: std::io::stdout().lock(),
        on_terminal: records_on_terminal,
    };
    let options = Options {
        format,
        as_of,
        trace: args.trace,
        sensitivity: args.sensitivity,
    };
    let mut progress = Progress::start(mode, total.map(|n| n as u64));
    let mut summary = Summary::default();
    let mut unwritten = 0usize;
    let mut write = |output: batch::Output| -> Result<Flow> {
        summary.add(&output.result);
        let failed = output.result.is_err();
        let pipe = match output.result {
            Ok(decided) => match &args.out {
                Some(dir) if format.is_memo() => {
                    let folder = MemoFolder {
                        dir,
                        extension: args.format.extension(),
                        printer: printer.as_ref(),
                        inputs: &inputs,
                        signals: &signals,
                    };
                    if !folder.write(&output.label, decided.text, &mut progress) {
                        unwritten += 1;
                    }
                    Pipe::Open
                }
                _ => records.put(&decided.text, &mut progress)?,
            },
            Err(e) => {
                let reported =
                    progress.suspend(|| stdio::err(&format!("{}\n\n", super::render(&e))));
                let recorded = if format.is_memo() {
                    Pipe::Open
                } else {
                    let record = batch::error_record(&output.source, output.line, &e);
                    records.put(&record, &mut progress)?
                };
                if reported == Pipe::Closed {
                    reported
                } else {
                    recorded
                }
            }
        };
        progress.add(failed);
        // The reader went away: stop quietly, with the exit code the run has so far.
        Ok(match pipe {
            Pipe::Open => Flow::Go,
            Pipe::Closed => Flow::Stop,
        })
    };
    let interrupted = || signals.received().is_some();
    let end = batch::decide_stream(&graph, &memo, profiles, options, &interrupted, &mut write);
    if !matches!(end, Ok(End::Done)) {
        progress.clear();
    }
    let end = end?;
    if let (End::Interrupted, Some(signal)) = (end, signals.received()) {
        // Dropping the output file removes its temporary file: the old file is left as it was.
        drop(records.file.take());
        let kept = match &args.output {
            Some(path) => format!("; {} was left as it was", path.display()),
            None => String::new(),
        };
        stdio::err(&format!(
            "interrupted by {} after {} profiles{kept}\n",
            signal.name(),
            group_thousands((summary.decided + summary.failed) as f64, 0)
        ));
        return Ok(Outcome::Interrupted(signal.exit_code()));
    }
    if end == End::Done {
        progress.finish();
        if let Some(file) = records.file.take() {
            file.commit()?;
        }
        stdio::err(&summary_text(&summary, unwritten));
    }
    Ok(outcome(&summary, unwritten))
}

/// Where the JSON lines go: the `--output` file (whole or not at all) or standard output.
struct Records {
    file: Option<OutputFile>,
    stdout: std::io::StdoutLock<'static>,
    /// Standard output is a terminal, which a progress line may be drawn on too.
    on_terminal: bool,
}

impl Records {
    /// Writes one JSON line, a record or an error record.
    fn put(&mut self, text: &str, progress: &mut Progress) -> Result<Pipe> {
        if let Some(file) = &mut self.file {
            file.write(text.as_bytes())?;
            return Ok(Pipe::Open);
        }
        let stdout = &mut self.stdout;
        let mut print = || stdio::write(stdout, text);
        let written = if self.on_terminal {
            progress.suspend(print)
        } else {
            print()
        };
        written.map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot write to standard output: {e}"),
            )
        })
    }
}

/// Where memos go (`--out DIR`) and how they are written.
struct MemoFolder<'a> {
    dir: &'a std::path::Path,
    extension: &'a str,
    printer: Option<&'a super::pdf::Printer>,
    inputs: &'a Inputs,
    signals: &'a Signals,
}

impl MemoFolder<'_> {
    /// Writes one profile's memo (printed first, for PDF); one that cannot be written is
    /// reported, and `false` returned: it does not stop the others, and the run exits 1.
    fn write(&self, label: &str, text: String, progress: &mut Progress) -> bool {
        let path = self.dir.join(format!("{label}.{}", self.extension));
        let stop = || self.signals.received();
        let written = super::output_bytes(self.printer, text, &stop).and_then(|printed| {
            match printed {
                Printed::Done(bytes) => super::write_output(&path, self.inputs, &bytes),
                // The browser was stopped and nothing written: the batch stops right after
                // this profile, as `interrupted` says.
                Printed::Stopped(_) => Ok(()),
            }
        });
        let Err(e) = written else {
            return true;
        };
        let e = e.help(format!(
            "profile {label} was decided but its memo is not written; the batch goes on"
        ));
        progress.suspend(|| stdio::err(&format!("{}\n\n", super::render(&e))));
        false
    }
}

/// The profiles to decide, the input files (which no output may replace), how many profiles
/// they hold (counted when `count` asks and every input can be read twice), and the memo
/// folder made.
fn read_inputs(
    args: &Args,
    format: Format,
    count: bool,
) -> Result<(batch::Profiles, Inputs, Option<usize>)> {
    let resolved = batch::resolve(&args.inputs)?;
    let total = if count { batch::count(&resolved) } else { None };
    // No output may replace a profile being read.
    let inputs = Inputs::of(resolved.iter().filter_map(|input| match input {
        batch::Input::File(path) => Some(path.as_path()),
        batch::Input::Stdin => Some(Path::new("-")),
        batch::Input::Refused { .. } => None,
    }));
    let mut profiles = batch::Profiles::new(resolved);
    if format.is_memo() {
        profiles = profiles.unique_labels();
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot create the output folder: {e}"),
            )
            .in_file(dir.display().to_string())
        })?;
    }
    Ok((profiles, inputs, total))
}

/// Usage errors: an output flag the format does not use, or a memo format without its folder.
fn check_flags(args: &Args, format: Format) -> Result<()> {
    if format.is_memo() && args.out.is_none() {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "`--format {}` writes one memo per profile and needs `--out DIR`",
                args.format.extension()
            ),
        ));
    }
    if let (Some(_), true) = (&args.output, format.is_memo()) {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "`--output FILE` is for `--format json`; `--format {}` writes one memo per profile in `--out DIR`",
                args.format.extension()
            ),
        ));
    }
    if let (Some(_), false) = (&args.out, format.is_memo()) {
        return Err(Error::new(
            ErrorKind::Usage,
            "`--out DIR` is for memos (`--format md`, `html` or `pdf`); JSON lines go to standard output or `--output FILE`",
        ));
    }
    Ok(())
}

/// Exit 1 when any profile failed or any memo could not be written.
fn outcome(summary: &Summary, unwritten: usize) -> Outcome {
    if summary.failed > 0 || unwritten > 0 {
        Outcome::Flagged
    } else {
        Outcome::Clean
    }
}

fn summary_text(s: &Summary, unwritten: usize) -> String {
    let count = |n: usize| group_thousands(n as f64, 0);
    let mut out = format!(
        "{} profiles: {} decided, {} failed.\n",
        count(s.decided + s.failed),
        count(s.decided),
        count(s.failed)
    );
    if unwritten > 0 {
        let _ = writeln!(
            out,
            "{} memos could not be written (each is reported above).",
            count(unwritten)
        );
    }
    let join = |map: &std::collections::BTreeMap<String, usize>| {
        let mut pairs: Vec<(&String, &usize)> = map.iter().collect();
        pairs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        pairs
            .iter()
            .map(|(k, v)| format!("{k} {}", count(**v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if s.decided > 0 {
        let _ = writeln!(out, "By deployment: {}.", join(&s.by_deployment));
        let _ = writeln!(out, "By offer: {}.", join(&s.by_offer));
        // Profiles of one fleet add up; profiles generated to test a policy do not: the
        // spread comes first, the sum last, named for what it is.
        if let Some(spread) = s.monthly_spread() {
            let cny = |x: f64| format!("¥{}", group_thousands(x, 0));
            let _ = writeln!(
                out,
                "Monthly cost a profile: median {}, 90th percentile {}, highest {} ({} for the {} \
                 together, where they are one fleet's).",
                cny(spread.median),
                cny(spread.p90),
                cny(spread.highest),
                cny(spread.total),
                count(spread.count)
            );
        }
        if s.warned == 0 {
            out.push_str("Warnings: none.\n");
        } else {
            let _ = writeln!(
                out,
                "Warnings: {} ({} of {} decided with at least one).",
                join(&s.by_warning),
                count(s.warned),
                count(s.decided)
            );
        }
    }
    out
}
