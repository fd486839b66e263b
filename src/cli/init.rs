//! `decide init`: a questionnaire in the terminal that writes a workload profile.

use std::io::IsTerminal;
use std::path::PathBuf;

use inquire::validator::Validation;
use serde_json::{Map, Value as J};

use decide::error::{Error, ErrorKind, Result};
use decide::questionnaire::{self, Kind, Prompt};
use decide::{Graph, Lang, Memo, Source};

use super::Outcome;

/// Write a workload profile by answering questions, then decide it.
///
/// The questions come from the rules, in English or Chinese; each answer is checked as it is
/// typed, with the same limits as the profile format. Questions that do not apply to the
/// answers so far (inference questions for a training task, say) are not asked.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide init
  decide init team-a.yaml --lang zh
  decide init profile.yaml --force

Needs a terminal; without one, write the profile by hand (see examples/).")]
pub struct Args {
    /// The profile file to write.
    #[arg(value_name = "FILE", default_value = "profile.yaml")]
    pub file: PathBuf,
    /// The language of the questions.
    #[arg(long, value_enum, default_value_t = Lang::En)]
    pub lang: Lang,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// The rules folder, or `embedded` for the policy built into this binary.
    #[arg(long, value_name = "DIR", default_value = "embedded", value_parser = super::rules_parser())]
    pub rules: super::Rules,
}

/// Why the questionnaire stopped before its end.
enum Stop {
    /// An error, reported as any other.
    Failed(Error),
    /// Ctrl-C: the process exits 130, as a shell expects of a command interrupted by SIGINT.
    Interrupted,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Failed(e)
    }
}

type Asked<T> = std::result::Result<T, Stop>;

/// What a prompt that did not return an answer means: Ctrl-C interrupts, Esc cancels.
fn cancelled(e: &inquire::InquireError) -> Stop {
    match e {
        inquire::InquireError::OperationInterrupted => Stop::Interrupted,
        inquire::InquireError::OperationCanceled => {
            Error::new(ErrorKind::Usage, "cancelled: no profile was written").into()
        }
        other => Error::new(
            ErrorKind::Io,
            format!("cannot ask in this terminal: {other}"),
        )
        .into(),
    }
}

/// Asks the questions, writes the profile and decides it; Ctrl-C exits 130 (128 + SIGINT).
pub fn run(args: &Args) -> Result<Outcome> {
    let written = std::cell::Cell::new(false);
    match ask_and_decide(args, &written) {
        Ok(outcome) => Ok(outcome),
        Err(Stop::Failed(e)) => Err(e),
        Err(Stop::Interrupted) => {
            let what = if written.get() {
                format!(
                    "interrupted: {} was written; decide it with `decide {}`\n",
                    args.file.display(),
                    args.file.display()
                )
            } else {
                "interrupted: no profile was written\n".to_owned()
            };
            super::stdio::err(&what);
            Ok(Outcome::Interrupted(INTERRUPTED_EXIT))
        }
    }
}

/// The exit code of a questionnaire stopped by Ctrl-C: 128 + SIGINT's number, as a shell
/// reports a command that SIGINT ended.
const INTERRUPTED_EXIT: u8 = 130;

fn ask_and_decide(args: &Args, written: &std::cell::Cell<bool>) -> Asked<Outcome> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::new(
            ErrorKind::Usage,
            "`decide init` asks questions and needs a terminal",
        )
        .help("write the profile by hand instead: see examples/ and `decide schema profile`")
        .into());
    }
    if args.file.exists() && !args.force {
        return Err(Error::new(ErrorKind::Usage, "the file already exists")
            .in_file(args.file.display().to_string())
            .help("choose another file, or pass --force to overwrite it")
            .into());
    }
    if !super::colour_stdout() {
        inquire::set_global_render_config(inquire::ui::RenderConfig::empty());
    }
    let graph = Graph::compile(super::load_policy(
        args.rules.folder(),
        Some(decide::today::today()),
    )?)?;
    let lang = args.lang;
    let mut profile = J::Object(Map::new());
    for prompt in questionnaire::prompts(graph.policy(), lang) {
        if let Some(when) = &prompt.when {
            let applies = questionnaire::applies(when, &profile)
                .map_err(|why| Error::new(ErrorKind::Rules, format!("question: {why}")))?;
            if !applies {
                continue;
            }
        }
        let answer = ask(&prompt, lang, &profile)?;
        questionnaire::set(&mut profile, &prompt.path, answer);
    }
    let yaml = questionnaire::to_yaml(&profile);
    // The same checks as any profile file, so what is written is what `decide` accepts.
    let name = args.file.display().to_string();
    let source = Source::new(name, yaml.clone());
    let checked = decide::Profile::from_source(&source)
        .and_then(|p| graph.check_profile(&p, &source).map(|()| p));
    if let Err(e) = checked {
        return Err(e
            .help("this is a bug in the questionnaire: please report it with the answers")
            .into());
    }
    super::print(&format!("\n{yaml}\n"))?;
    let (write, run_now) = if lang == Lang::Zh {
        ("写入该文件？", "现在就用它做决策？")
    } else {
        ("Write this profile?", "Decide it now?")
    };
    let confirmed = inquire::Confirm::new(write)
        .with_default(true)
        .prompt()
        .map_err(|e| cancelled(&e))?;
    if !confirmed {
        return Err(Error::new(ErrorKind::Usage, "cancelled: no profile was written").into());
    }
    super::write_output(&args.file, &super::Inputs::default(), yaml.as_bytes())?;
    written.set(true);
    super::print(&format!("Wrote {}.\n", args.file.display()))?;
    let now = inquire::Confirm::new(run_now)
        .with_default(true)
        .prompt()
        .map_err(|e| cancelled(&e))?;
    if now {
        let as_of = decide::today::today();
        let (profile, evaluation) = decide::decide(&graph, &source, as_of)?;
        let memo = Memo::for_rules(args.rules.folder())?.render(
            &graph,
            &profile,
            &evaluation,
            decide::Format::Markdown,
        )?;
        super::print(&memo)?;
    }
    Ok(Outcome::Clean)
}

/// Asks one question, given the answers so far; `None` means "left empty" (or nothing to ask).
fn ask(prompt: &Prompt, lang: Lang, answers: &J) -> Asked<Option<J>> {
    let help = prompt.help.as_deref();
    let none = if lang == Lang::Zh {
        "不适用 / 无"
    } else {
        "none"
    };
    let answer = match &prompt.kind {
        Kind::Text { nullable } => {
            let nullable = *nullable;
            let mut p = inquire::Text::new(&prompt.ask).with_validator(move |s: &str| {
                Ok(if s.trim().is_empty() && !nullable {
                    Validation::Invalid("an answer is needed".into())
                } else {
                    Validation::Valid
                })
            });
            if let Some(h) = help {
                p = p.with_help_message(h);
            }
            let text = p.prompt().map_err(|e| cancelled(&e))?;
            (!text.trim().is_empty()).then(|| J::from(text.trim()))
        }
        Kind::Number(rule) => {
            let check = rule.clone();
            let mut p = inquire::Text::new(&prompt.ask).with_validator(move |s: &str| {
                Ok(match check.check(s) {
                    Ok(_) => Validation::Valid,
                    Err(why) => Validation::Invalid(why.into()),
                })
            });
            let default = rule.default.map(|d| d.to_string());
            if let Some(d) = &default {
                p = p.with_default(d);
            }
            if let Some(h) = help {
                p = p.with_help_message(h);
            }
            let text = p.prompt().map_err(|e| cancelled(&e))?;
            rule.check(&text)
                .map_err(|why| Error::new(ErrorKind::Usage, why))?
        }
        Kind::Flag { default } => {
            let mut p = inquire::Confirm::new(&prompt.ask).with_default(*default);
            if let Some(h) = help {
                p = p.with_help_message(h);
            }
            Some(J::from(p.prompt().map_err(|e| cancelled(&e))?))
        }
        Kind::Choice { options, nullable } => {
            let mut labels: Vec<String> = options.iter().map(|(_, l)| l.clone()).collect();
            if *nullable {
                labels.insert(0, none.to_owned());
            }
            let mut p = inquire::Select::new(&prompt.ask, labels.clone());
            if let Some(h) = help {
                p = p.with_help_message(h);
            }
            let picked = p.prompt().map_err(|e| cancelled(&e))?;
            options
                .iter()
                .find(|(_, l)| *l == picked)
                .map(|(v, _)| J::from(v.as_str()))
        }
        Kind::Choices { options } => ask_several(prompt, &options.iter().collect::<Vec<_>>())?,
        Kind::Hours { offers } => ask_hours(prompt, offers, lang)?,
        Kind::Offers { offers, among } => {
            let options = questionnaire::offers_among(offers, among.as_deref(), answers);
            if options.is_empty() {
                return Ok(None);
            }
            ask_several(prompt, &options)?
        }
    };
    Ok(answer)
}

/// Any of `options` (value, label); `None` when none is picked.
fn ask_several(prompt: &Prompt, options: &[&(String, String)]) -> Asked<Option<J>> {
    let labels: Vec<String> = options.iter().map(|(_, l)| l.clone()).collect();
    let mut p = inquire::MultiSelect::new(&prompt.ask, labels);
    if let Some(h) = prompt.help.as_deref() {
        p = p.with_help_message(h);
    }
    let picked = p.prompt().map_err(|e| cancelled(&e))?;
    let values: Vec<J> = options
        .iter()
        .filter(|(_, l)| picked.contains(l))
        .map(|(v, _)| J::from(v.as_str()))
        .collect();
    Ok((!values.is_empty()).then_some(J::Array(values)))
}

/// A map of hours per offer: first whether there is a job at all, then one number per offer.
fn ask_hours(prompt: &Prompt, offers: &[(String, String)], lang: Lang) -> Asked<Option<J>> {
    let help = prompt.help.as_deref();
    let mut p = inquire::Confirm::new(&prompt.ask).with_default(false);
    if let Some(h) = help {
        p = p.with_help_message(h);
    }
    if !p.prompt().map_err(|e| cancelled(&e))? {
        return Ok(None);
    }
    let rule = questionnaire::NumberRule {
        exclusive_minimum: Some(0.0),
        maximum: Some(decide::profile::MAX_JOB_HOURS as f64),
        nullable: true,
        ..questionnaire::NumberRule::default()
    };
    let mut hours = Map::new();
    for (id, title) in offers {
        let check = rule.clone();
        let question = if lang == Lang::Zh {
            format!("在 {title} 上耗时多少小时？（留空跳过）")
        } else {
            format!("Wall-clock hours on {title}? (empty to skip)")
        };
        let text = inquire::Text::new(&question)
            .with_validator(move |s: &str| {
                Ok(match check.check(s) {
                    Ok(_) => Validation::Valid,
                    Err(why) => Validation::Invalid(why.into()),
                })
            })
            .prompt()
            .map_err(|e| cancelled(&e))?;
        if let Ok(Some(v)) = rule.check(&text) {
            hours.insert(id.clone(), v);
        }
    }
    Ok((!hours.is_empty()).then_some(J::Object(hours)))
}
