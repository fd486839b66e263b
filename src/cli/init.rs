//! `decide init`: a questionnaire in the terminal that writes a workload profile.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use inquire::validator::Validation;
use serde_json::{Map, Value as J};

use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::{Lang, Source};
use decide_tools::questionnaire::{self, Prompt, QuestionKind, Texts};

use super::Outcome;
use super::stdio::{shown, shown_lines};

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
    #[arg(long, value_parser = super::lang_parser(), default_value_t = Lang::En)]
    pub lang: Lang,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub rules: super::RulesArgs,
}

/// Typed alone at a text or number question: go back one question.
const BACK: &str = "<";

/// What a person did instead of answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Typed `<`, or chose "go back" after Esc.
    Back,
    /// Pressed Esc: ask what to do.
    Escape,
}

/// An answer, or what was done instead.
type Step<T> = std::result::Result<T, Flow>;

/// A prompt's answer, Esc as [`Flow::Escape`], Ctrl-C and terminal faults as errors.
fn step<T>(answer: std::result::Result<T, inquire::InquireError>) -> Result<Step<T>> {
    match answer {
        Ok(v) => Ok(Ok(v)),
        Err(inquire::InquireError::OperationCanceled) => Ok(Err(Flow::Escape)),
        Err(e) => Err(cancelled(&e)),
    }
}

/// The answer of a [`Step`], or return what was done instead.
macro_rules! answer {
    ($step:expr) => {
        match $step? {
            Ok(v) => v,
            Err(flow) => return Ok(Err(flow)),
        }
    };
}

/// After Esc: go on with the question, go back one, or quit without saving.
fn escape_menu(texts: &Texts) -> Result<Flow> {
    let options = vec![
        say(texts, |w| &w.go_on, &[]),
        say(texts, |w| &w.go_back, &[]),
        say(texts, |w| &w.quit, &[]),
    ];
    let line = say(texts, |w| &w.select_help, &[]);
    let picked = inquire::Select::new(&say(texts, |w| &w.escape_ask, &[]), options.clone())
        .with_help_message(&line)
        .raw_prompt();
    match picked {
        Ok(p) if p.index == 1 => Ok(Flow::Back),
        Ok(p) if p.index == 2 => Err(Error::new(
            ErrorKind::Usage,
            "cancelled: no profile was written",
        )),
        // Go on, or Esc again: the same question once more.
        Ok(_) | Err(inquire::InquireError::OperationCanceled) => Ok(Flow::Escape),
        Err(e) => Err(cancelled(&e)),
    }
}

/// What a prompt that did not return an answer means: Ctrl-C interrupts (exit 130), Esc at a
/// prompt without a menu cancels (exit 2).
fn cancelled(e: &inquire::InquireError) -> Error {
    match e {
        inquire::InquireError::OperationInterrupted => Error::new(
            ErrorKind::Interrupted,
            "interrupted: no profile was written",
        ),
        inquire::InquireError::OperationCanceled => {
            Error::new(ErrorKind::Usage, "cancelled: no profile was written")
        }
        other => Error::new(
            ErrorKind::Io,
            format!("cannot ask in this terminal: {other}"),
        ),
    }
}

/// Asks the questions, writes the profile and decides it. Ctrl-C exits 130 and says whether
/// the profile was already written.
pub fn run(args: &Args) -> Result<Outcome> {
    let written = std::cell::Cell::new(false);
    ask_and_decide(args, &written).map_err(|e| {
        if e.kind() == ErrorKind::Interrupted && written.get() {
            let file = args.file.display();
            Error::new(
                ErrorKind::Interrupted,
                format!("interrupted: {file} was written; decide it with `decide {file}`"),
            )
        } else {
            e
        }
    })
}

fn ask_and_decide(args: &Args, written: &std::cell::Cell<bool>) -> Result<Outcome> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::new(
            ErrorKind::Usage,
            "`decide init` asks questions and needs a terminal",
        )
        .help("write the profile by hand instead: `decide rules export my-rules` writes example profiles to my-rules/examples/, and `decide schema profile` prints every field"));
    }
    if args.file.exists() && !args.force {
        return Err(Error::new(ErrorKind::Usage, "the file already exists")
            .in_file(args.file.display().to_string())
            .help("choose another file, or pass --force to overwrite it"));
    }
    let lang = args.lang;
    // Today, read once: the policy is priced at it and the profile decided at it.
    let config = super::Config::today(&args.rules);
    // Compiled in the questions' language, so that the memo decided at the end is in it too.
    let graph = config.graph_in(lang)?;
    let texts = Texts::new(graph.policy(), lang).ok_or_else(|| {
        Error::new(ErrorKind::Rules, "the rules have no `questionnaire:` section")
            .help("add `questionnaire: {words: ...}` to one rule file (see the shipped rules/questions.yaml)")
    })?;
    let prompts: Vec<Prompt> = questionnaire::prompts(graph.policy(), lang)
        .into_iter()
        .map(for_terminal)
        .collect();
    let mut profile = J::Object(Map::new());
    // The questions answered so far, each with the answers before it: `<` (or "go back" after
    // Esc) asks the last one again with the answers before it kept.
    let mut answered: Vec<(usize, J)> = Vec::new();
    // The answer of the question gone back to, offered again as it was given.
    let mut given: Option<(usize, J)> = None;
    let mut next = 0;
    while let Some(prompt) = prompts.get(next) {
        if let Some(when) = &prompt.when {
            let applies = questionnaire::applies(when, &profile)
                .map_err(|why| Error::new(ErrorKind::Rules, format!("question: {why}")))?;
            if !applies {
                next += 1;
                continue;
            }
        }
        let old = given.take().filter(|(i, _)| *i == next).map(|(_, v)| v);
        let flow = match ask(prompt, &texts, &profile, old.as_ref())? {
            Ok(answer) => {
                answered.push((next, profile.clone()));
                questionnaire::set(&mut profile, &prompt.path, answer);
                next += 1;
                continue;
            }
            Err(Flow::Escape) => escape_menu(&texts)?,
            Err(Flow::Back) => Flow::Back,
        };
        if flow == Flow::Back
            && let Some((index, before)) = answered.pop()
        {
            given = prompts
                .get(index)
                .and_then(|p| profile.pointer(&format!("/{}", p.path.join("/"))))
                .map(|v| (index, v.clone()));
            next = index;
            profile = before;
        }
    }
    let yaml = questionnaire::to_yaml(&profile, &texts);
    // The same checks as any profile file, so what is written is what `decide` accepts.
    let name = args.file.display().to_string();
    let source = Source::new(name, yaml.clone());
    let checked = decide_engine::Profile::from_source(&source)
        .and_then(|p| graph.check_profile(&p, &source).map(|()| p));
    if let Err(e) = checked {
        return Err(e.help("this is a bug in the questionnaire: please report it with the answers"));
    }
    super::print(&format!("\n{}\n", shown_lines(&yaml)))?;
    let confirmed = confirm(&say(&texts, |w| &w.write, &[]), None, true, &texts, false)?;
    if confirmed != Ok(true) {
        return Err(Error::new(
            ErrorKind::Usage,
            "cancelled: no profile was written",
        ));
    }
    super::write_output(&args.file, &super::Inputs::default(), yaml.as_bytes())?;
    written.set(true);
    let file = args.file.display().to_string();
    super::print(&format!(
        "{}\n",
        say(&texts, |w| &w.wrote, &[("file", &file)])
    ))?;
    let now = confirm(
        &say(&texts, |w| &w.decide_now, &[]),
        None,
        true,
        &texts,
        false,
    )?;
    if now == Ok(true) {
        let (profile, evaluation) = decide_tools::decide(&graph, &source, config.as_of())?;
        let memo = config.memo()?.render(
            &graph,
            &profile,
            &evaluation,
            decide_tools::Format::Markdown,
        )?;
        let out = write_memo(args, &texts, &file, &memo)?;
        super::print(&out)?;
    }
    Ok(Outcome::Clean)
}

/// Writes `memo` beside the profile (kept if there already, unless `--force`) and returns what
/// the terminal is told: the memo's answer and where the rest is.
fn write_memo(args: &Args, texts: &Texts, file: &str, memo: &str) -> Result<String> {
    // The memo goes beside the profile; the terminal gets its answer and where the rest is.
    let path = memo_path(&args.file);
    let shown_path = path.display().to_string();
    let mut out = format!("\n{}\n\n", headline(memo));
    if path.exists() && !args.force {
        let _ = writeln!(
            out,
            "{}",
            say(
                texts,
                |w| &w.memo_kept,
                &[("file", &shown_path), ("profile", file)]
            )
        );
    } else {
        super::write_output(
            &path,
            &super::Inputs::of([args.file.as_path()]),
            memo.as_bytes(),
        )?;
        let _ = writeln!(
            out,
            "{}",
            say(texts, |w| &w.memo_wrote, &[("file", &shown_path)])
        );
    }
    Ok(out)
}

/// Where `decide init` writes the memo of the profile at `profile`: beside it, `NAME.memo.md`.
fn memo_path(profile: &Path) -> PathBuf {
    profile.with_extension("memo.md")
}

/// The memo's answer: its first quoted block (the headline and the reason under it), as plain
/// lines for the terminal.
fn headline(memo: &str) -> String {
    memo.lines()
        .skip_while(|l| !l.starts_with('>'))
        .take_while(|l| l.starts_with('>'))
        .map(|l| l.trim_start_matches('>').trim().replace("**", ""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An answer to a yes/no question, or `<` typed to go back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum YesNo {
    Yes,
    No,
    Back,
}

impl std::str::FromStr for YesNo {
    type Err = ();

    /// Never used: [`confirm`] reads an answer with the questionnaire's words.
    fn from_str(_: &str) -> std::result::Result<Self, ()> {
        Err(())
    }
}

impl std::fmt::Display for YesNo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            YesNo::Yes => "y",
            YesNo::No => "n",
            YesNo::Back => BACK,
        })
    }
}

/// A yes/no question in the questionnaire's language: `y`/`n` (and, in Chinese, `是`/`否`),
/// its default said in the hint in words of the rules (a language without letter case cannot
/// show it as `Y/n`); with `back`, `<` goes back one question.
fn confirm(
    question: &str,
    help: Option<&str>,
    default: bool,
    texts: &Texts,
    back: bool,
) -> Result<Step<bool>> {
    let (yes, no) = (texts.typed(true), texts.typed(false));
    let parser = move |s: &str| {
        let s = s.trim().to_lowercase();
        if back && s == BACK {
            Ok(YesNo::Back)
        } else if yes.contains(&s) {
            Ok(YesNo::Yes)
        } else if no.contains(&s) {
            Ok(YesNo::No)
        } else {
            Err(())
        }
    };
    let (yes_word, no_word) = (
        say(texts, |w| &w.yes_shown, &[]),
        say(texts, |w| &w.no_shown, &[]),
    );
    let shown = |a: YesNo| match a {
        YesNo::Yes => yes_word.clone(),
        YesNo::No => no_word.clone(),
        YesNo::Back => BACK.to_owned(),
    };
    let (yes_default, no_default) = (
        say(texts, |w| &w.yes_default, &[]),
        say(texts, |w| &w.no_default, &[]),
    );
    let hint = |a: YesNo| {
        if a == YesNo::Yes {
            yes_default.clone()
        } else {
            no_default.clone()
        }
    };
    let invalid = say(texts, |w| &w.yes_no_invalid, &[]);
    let line = back.then(|| help_line(&say(texts, |w| &w.back_hint, &[]), help));
    let mut p = inquire::CustomType::<YesNo>::new(question)
        .with_default(if default { YesNo::Yes } else { YesNo::No })
        .with_parser(&parser)
        .with_formatter(&shown)
        .with_default_value_formatter(&hint)
        .with_error_message(&invalid);
    if let Some(h) = line.as_deref().or(help) {
        p = p.with_help_message(h);
    }
    Ok(match step(p.prompt())? {
        Ok(YesNo::Yes) => Ok(true),
        Ok(YesNo::No) => Ok(false),
        Ok(YesNo::Back) => Err(Flow::Back),
        Err(flow) => Err(flow),
    })
}

/// A number typed and checked against `rule`, echoed once answered with the value understood;
/// `<` goes back.
fn ask_number(
    question: &str,
    help: Option<&str>,
    rule: &questionnaire::NumberRule,
    texts: &Texts,
    old: Option<&J>,
) -> Result<Step<Option<J>>> {
    let check = rule.clone();
    let echo = rule.clone();
    let formatter =
        move |s: &str| shown(&echo.understood(s).unwrap_or_else(|| s.to_owned())).into_owned();
    let mut p = inquire::Text::new(question)
        .with_validator(move |s: &str| {
            Ok(match check.check(s) {
                _ if s.trim() == BACK => Validation::Valid,
                Ok(_) => Validation::Valid,
                Err(why) => Validation::Invalid(shown(&why).into_owned().into()),
            })
        })
        .with_formatter(&formatter);
    // The answer given before going back past the question, else the field's default: Enter
    // keeps it, typing replaces it (and `<` still goes back).
    let default = (old.and_then(J::as_f64))
        .or(rule.default)
        .map(|d| d.to_string());
    if let Some(d) = &default {
        p = p.with_default(d);
    }
    let line = help_line(&say(texts, |w| &w.back_hint, &[]), help);
    p = p.with_help_message(&line);
    let text = answer!(step(p.prompt()));
    if text.trim() == BACK {
        return Ok(Err(Flow::Back));
    }
    rule.check(&text)
        .map(Ok)
        .map_err(|why| Error::new(ErrorKind::Usage, why))
}

/// The words `pick` chooses, as the terminal shows them ([`shown`]).
fn say(
    texts: &Texts,
    pick: fn(&decide_engine::policy::rules::PromptWords) -> &decide_engine::policy::rules::Template,
    values: &[(&str, &str)],
) -> String {
    shown(&texts.say(pick, values)).into_owned()
}

/// A question with its words (the question, its help, its choices' labels) as the terminal
/// shows them ([`shown`]): they are the rules', and reach the terminal only through here and
/// [`say`].
fn for_terminal(mut prompt: Prompt) -> Prompt {
    let line = |text: &mut String| *text = shown(text).into_owned();
    line(&mut prompt.ask);
    if let Some(help) = &mut prompt.help {
        line(help);
    }
    match &mut prompt.kind {
        QuestionKind::Choice { options, .. }
        | QuestionKind::Choices { options }
        | QuestionKind::Hours {
            offers: options, ..
        }
        | QuestionKind::Offers {
            offers: options, ..
        } => {
            for (_, label) in options {
                line(label);
            }
        }
        QuestionKind::Text { .. }
        | QuestionKind::Number(_)
        | QuestionKind::Flag { .. }
        | QuestionKind::Section => {}
    }
    prompt
}

/// A list's keys in the questionnaire's language, with the question's own help after them.
fn help_line(keys: &str, help: Option<&str>) -> String {
    match help {
        Some(h) => format!("{keys} · {h}"),
        None => keys.to_owned(),
    }
}

/// Asks one question, given the answers so far and the answer `old` it was given before going
/// back past it (offered again: the default Enter keeps, the choice under the cursor); `None`
/// means "left empty" (or nothing to ask).
#[allow(clippy::too_many_lines)] // one arm a kind of question
fn ask(prompt: &Prompt, texts: &Texts, answers: &J, old: Option<&J>) -> Result<Step<Option<J>>> {
    let help = prompt.help.as_deref();
    let answer = match &prompt.kind {
        QuestionKind::Text {
            nullable,
            max_chars,
        } => {
            let (nullable, max_chars) = (*nullable, *max_chars);
            let checker = texts.clone();
            let line = help_line(&say(texts, |w| &w.back_hint, &[]), help);
            let mut p = inquire::Text::new(&prompt.ask)
                .with_validator(move |s: &str| {
                    Ok(match checker.check_text(s, nullable, max_chars) {
                        Err(why) if s.trim() != BACK => {
                            Validation::Invalid(shown(&why).into_owned().into())
                        }
                        _ => Validation::Valid,
                    })
                })
                .with_help_message(&line);
            if let Some(given) = old.and_then(J::as_str) {
                p = p.with_default(given);
            }
            let text = answer!(step(p.prompt()));
            if text.trim() == BACK {
                return Ok(Err(Flow::Back));
            }
            texts.check_text(&text, nullable, max_chars).ok().flatten()
        }
        QuestionKind::Number(rule) => answer!(ask_number(&prompt.ask, help, rule, texts, old)),
        QuestionKind::Flag { default } => {
            let default = old.and_then(J::as_bool).unwrap_or(*default);
            Some(J::from(answer!(confirm(
                &prompt.ask,
                help,
                default,
                texts,
                true
            ))))
        }
        QuestionKind::Section => answer!(confirm(&prompt.ask, help, old.is_some(), texts, true))
            .then(|| J::Object(Map::new())),
        QuestionKind::Choice { options, nullable } => {
            let mut labels: Vec<String> = options.iter().map(|(_, l)| l.clone()).collect();
            if *nullable {
                labels.insert(0, say(texts, |w| &w.none, &[]));
            }
            let line = help_line(&say(texts, |w| &w.select_help, &[]), help);
            let offset = usize::from(*nullable);
            let cursor = old
                .and_then(J::as_str)
                .and_then(|v| options.iter().position(|(o, _)| o == v))
                .map_or(0, |i| i + offset);
            let picked = answer!(step(
                inquire::Select::new(&prompt.ask, labels.clone())
                    .with_help_message(&line)
                    .with_starting_cursor(cursor)
                    .prompt()
            ));
            options
                .iter()
                .find(|(_, l)| *l == picked)
                .map(|(v, _)| J::from(v.as_str()))
        }
        QuestionKind::Choices { options } => answer!(ask_several(
            prompt,
            &options.iter().collect::<Vec<_>>(),
            texts,
            old
        )),
        QuestionKind::Hours { offers, rule } => {
            answer!(ask_hours(prompt, offers, rule, texts, old))
        }
        QuestionKind::Offers { offers, among } => {
            let options = questionnaire::offers_among(offers, among.as_deref(), answers);
            if options.is_empty() {
                return Ok(Ok(None));
            }
            answer!(ask_several(prompt, &options, texts, old))
        }
    };
    Ok(Ok(answer))
}

/// Any of `options` (value, label); `None` when none is picked.
fn ask_several(
    prompt: &Prompt,
    options: &[&(String, String)],
    texts: &Texts,
    old: Option<&J>,
) -> Result<Step<Option<J>>> {
    let labels: Vec<String> = options.iter().map(|(_, l)| l.clone()).collect();
    let given: Vec<usize> = old
        .and_then(J::as_array)
        .map(|picked| {
            (options.iter().enumerate())
                .filter(|(_, (v, _))| picked.iter().any(|p| p.as_str() == Some(v.as_str())))
                .map(|(i, _)| i)
                .collect()
        })
        .unwrap_or_default();
    let line = help_line(
        &say(texts, |w| &w.multiselect_help, &[]),
        prompt.help.as_deref(),
    );
    let picked = answer!(step(
        inquire::MultiSelect::new(&prompt.ask, labels)
            .with_help_message(&line)
            .with_default(&given)
            .prompt()
    ));
    let values: Vec<J> = options
        .iter()
        .filter(|(_, l)| picked.contains(l))
        .map(|(v, _)| J::from(v.as_str()))
        .collect();
    Ok(Ok((!values.is_empty()).then_some(J::Array(values))))
}

/// A map of hours per offer: one number per offer, the question's words as their help line
/// (`<` at any of them goes back to the question before the hours).
fn ask_hours(
    prompt: &Prompt,
    offers: &[(String, String)],
    rule: &questionnaire::NumberRule,
    texts: &Texts,
    old: Option<&J>,
) -> Result<Step<Option<J>>> {
    let mut hours = Map::new();
    for (id, title) in offers {
        let question = say(texts, |w| &w.hours_on, &[("offer", title)]);
        let given = old.and_then(|o| o.get(id));
        if let Some(v) = answer!(ask_number(&question, Some(&prompt.ask), rule, texts, given)) {
            hours.insert(id.clone(), v);
        }
    }
    Ok(Ok((!hours.is_empty()).then_some(J::Object(hours))))
}
