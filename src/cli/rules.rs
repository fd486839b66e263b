//! `decide rules export DIR`: the embedded policy written out as a rules folder, so an installed
//! `decide` can start a policy change; `decide rules sample`: generated profiles to check a change
//! against.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use decide_engine::error::{Error, ErrorKind, Result};

use decide_tools::schema;

use super::Outcome;

/// Work with a policy: export the embedded one, or generate profiles to check a change on.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: RulesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum RulesCommand {
    Export(ExportArgs),
    Sample(SampleArgs),
}

/// Write generated profiles as JSON lines: every field the policy reads, at the values its rules
/// mention and their neighbours, alone and combined, then random ones.
///
/// The same rules, date and count give the same profiles. Decide them before and after a change
/// (of the rules, or of decide itself) and compare: `decide diff` says which decisions moved and
/// why; `decide batch` gives the records to compare byte for byte.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide rules sample > sample.jsonl
  decide rules sample --count 100000 --rules my-rules --as-of 2026-09-04 > sample.jsonl
  decide batch sample.jsonl --as-of 2026-09-04 | sha256sum   (before and after a change)")]
#[command(mut_args(super::config::as_of_help(
    "The date offers are read at, for the fields that name an offer (YYYY-MM-DD); default today."
)))]
pub struct SampleArgs {
    /// How many profiles.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub count: u32,
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
}

/// Write the embedded policy to a new folder, ready for `--rules DIR`: the rule files, the
/// quote sheets (`quotes/`), the policy tests (`tests/`), the memo templates (`templates/`),
/// the example profiles (`examples/`) and the JSON Schemas an editor checks them with
/// (`schema/`).
///
/// DIR must not exist yet, or be an empty folder: nothing is overwritten. The folder appears
/// whole or not at all (it is written beside DIR, then renamed).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide rules export my-rules
  decide my-rules/examples/lora-7b-4090.yaml --rules my-rules
  (edit a price in my-rules/quotes/, then)
  decide diff embedded my-rules my-rules/examples/
  decide validate --rules my-rules && decide test --rules my-rules")]
pub struct ExportArgs {
    /// The folder to create.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn run(args: &Args) -> Result<Outcome> {
    match &args.command {
        RulesCommand::Export(a) => export(a),
        RulesCommand::Sample(a) => sample(a),
    }
}

fn sample(args: &SampleArgs) -> Result<Outcome> {
    let graph = super::Config::new(&args.rules, args.as_of).graph()?;
    // Written a block of lines at a time as they are made: the sample is never held whole, and
    // a reader that stops (`| head`) stops the making.
    let mut out = String::new();
    let mut profiles =
        decide_tools::check::invariants::sample(&graph, args.count as usize).peekable();
    while let Some(profile) = profiles.next() {
        let _ = writeln!(out, "{profile}");
        if out.len() >= 1 << 16 || profiles.peek().is_none() {
            if super::stdio::out(&out)? == super::stdio::Pipe::Closed {
                break;
            }
            out.clear();
        }
    }
    Ok(Outcome::Clean)
}

fn export(args: &ExportArgs) -> Result<Outcome> {
    let dir = &args.dir;
    let shown = dir.display().to_string();
    refuse_existing(dir, &shown)?;
    let files = exported_files();
    let scratch = scratch_beside(dir)?;
    let written = write_all(&scratch, &files).and_then(|()| {
        // An empty DIR is replaced by the rename (POSIX renames onto an empty folder); removed
        // first where the platform will not.
        if dir.is_dir() {
            std::fs::remove_dir(dir)?;
        }
        std::fs::rename(&scratch, dir)
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(
            Error::new(ErrorKind::Io, format!("cannot write the rules folder: {e}")).in_file(shown),
        );
    }
    super::print(&summary(&shown, &files))?;
    Ok(Outcome::Clean)
}

/// An error unless `dir` is free: not there yet, or an empty folder.
fn refuse_existing(dir: &Path, shown: &str) -> Result<()> {
    let taken = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(
                Error::new(ErrorKind::Io, format!("cannot look at the folder: {e}")).in_file(shown),
            );
        }
        Ok(meta) if meta.is_dir() => {
            std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some())
        }
        Ok(_) => true,
    };
    if taken {
        return Err(Error::new(
            ErrorKind::Usage,
            "already exists and is not an empty folder; export writes a new folder and overwrites nothing",
        )
        .in_file(shown)
        .help("name a folder that does not exist yet, for example: decide rules export my-rules"));
    }
    Ok(())
}

/// A new, empty folder beside `dir` (same file system, so the rename is atomic), created with
/// the user's usual permissions.
fn scratch_beside(dir: &Path) -> Result<PathBuf> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = dir
        .file_name()
        .map_or_else(|| "rules".into(), |n| n.to_string_lossy().into_owned());
    let mut last = None;
    for n in 0..100 {
        let scratch = parent.join(format!(".{base}.export-{}-{n}", std::process::id()));
        match std::fs::create_dir(&scratch) {
            Ok(()) => return Ok(scratch),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                last = Some(e);
                break;
            }
        }
    }
    let e = last.map_or_else(|| "no free name".to_owned(), |e| e.to_string());
    Err(Error::new(
        ErrorKind::Io,
        format!("cannot create a folder beside it to write into: {e}"),
    )
    .in_file(dir.display().to_string()))
}

/// The embedded files as a rules folder holds them, and the JSON Schemas their editor lines
/// name (`schema/`), each line pointed at the folder's own copy: in the project the rule files
/// point at `../schema/`, which is outside an exported folder.
fn exported_files() -> Vec<(String, Cow<'static, str>)> {
    let mut files: Vec<(String, Cow<'static, str>)> = decide_engine::policy::embedded_files()
        .into_iter()
        .map(|(path, text)| {
            let text = if Path::new(&path)
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml")
            {
                schema::repoint(text, path.matches('/').count())
            } else {
                Cow::Borrowed(text)
            };
            (path, text)
        })
        .collect();
    files.extend(schema::files().into_iter().map(|(name, value)| {
        (
            format!("{}/{name}", schema::FOLDER),
            Cow::Owned(schema::to_text(&value)),
        )
    }));
    files
}

/// Writes every file under `root`, creating subfolders as they come.
fn write_all(root: &Path, files: &[(String, Cow<'_, str>)]) -> std::io::Result<()> {
    for (path, text) in files {
        let path = root.join(path);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::write(&path, text.as_bytes())?;
    }
    Ok(())
}

/// What was written, by folder, and what to do next.
fn summary(dir: &str, files: &[(String, Cow<'_, str>)]) -> String {
    let count = |folder: Option<&str>| {
        files
            .iter()
            .filter(|(p, _)| match (folder, p.split_once('/')) {
                (None, None) => true,
                (Some(f), Some((first, _))) => f == first,
                _ => false,
            })
            .count()
    };
    let examples = files
        .iter()
        .find_map(|(p, _)| p.strip_prefix(&format!("{}/", decide_engine::policy::EXAMPLES_FOLDER)));
    let mut out = format!("Wrote {dir}/: {} files\n", files.len());
    for (folder, what) in [
        (None, "rule files"),
        (
            Some(decide_engine::policy::quotes::SHEETS_FOLDER),
            "quote sheets",
        ),
        (Some(decide_engine::policy::TESTS_FOLDER), "policy tests"),
        (
            Some(decide_engine::policy::TEMPLATES_FOLDER),
            "memo templates",
        ),
        (
            Some(decide_engine::policy::EXAMPLES_FOLDER),
            "example profiles",
        ),
        (Some(schema::FOLDER), "JSON Schemas"),
    ] {
        let place = folder.map_or_else(|| format!("{dir}/"), |f| format!("{dir}/{f}/"));
        let _ = writeln!(out, "  {:>3} {what:<17} {place}", count(folder));
    }
    out.push_str("\nNext:\n");
    if let Some(example) = examples {
        let _ = writeln!(
            out,
            "  decide {dir}/{}/{example} --rules {dir}",
            decide_engine::policy::EXAMPLES_FOLDER
        );
    }
    let _ = writeln!(
        out,
        "  decide diff embedded {dir} {dir}/{}/    (after a change: what it changes)",
        decide_engine::policy::EXAMPLES_FOLDER
    );
    let _ = writeln!(
        out,
        "  decide validate --rules {dir} && decide test --rules {dir}"
    );
    out
}
