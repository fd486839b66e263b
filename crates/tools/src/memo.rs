//! Rendering a decision: the Markdown or HTML memo (templates compiled on demand) and the JSON record.
//!
//! The memo is written for the buyer who signs, not for the engine: templates get the decision
//! record, every node value, the chosen offer, the catalog and the hardware not on offer at the
//! date (no quote yet), and format money, hours and
//! percentages with the filters of [`decide_lang`]. Wording lives in `templates/` (one memo
//! template, a words file per language) or a `--rules` folder's `templates/`, not here.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use minijinja::Environment;
use minijinja::value::{Serde, Value};

use decide_lang::jinja::to_jinja;

use decide_engine::error::{Error, ErrorKind, Position, Result};
use decide_engine::eval::Evaluation;
use decide_engine::graph::Graph;
use decide_engine::profile::Profile;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    /// The memo as one self-contained HTML page (inline CSS and SVG, no script).
    Html,
    Json,
}

impl Format {
    /// Whether this format is a memo (Markdown or HTML) rather than the record.
    #[must_use]
    pub fn is_memo(self) -> bool {
        self != Format::Json
    }

    /// The file extension of an output in this format.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
        }
    }
}

/// The memo's templates: the embedded ones, with a `--rules` folder's `templates/` over them.
///
/// A template is compiled the first time an output asks for it (by the environment's loader),
/// so a JSON record compiles none and a memo only the files it uses.
#[derive(Debug)]
pub struct Memo {
    env: Environment<'static>,
    templates: Templates,
}

/// The template every memo starts from, in every language; it imports `words.<lang>.j2`.
const MEMO_TEMPLATE: &str = "memo.md.j2";

/// The HTML memo's template: the same context and words as [`MEMO_TEMPLATE`], auto-escaped.
const HTML_TEMPLATE: &str = "memo.html.j2";

/// One template file: what an error calls it and its text.
#[derive(Debug, Clone)]
pub struct TemplateFile {
    /// `templates/NAME` for an embedded file, the path for a file of a rules folder.
    pub display: String,
    pub text: Arc<str>,
}

/// Template sources by name: the embedded files, replaced or added to by a rules folder's.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    files: BTreeMap<String, TemplateFile>,
}

impl Templates {
    /// The embedded templates, then, when `rules` is a folder with a `templates/` subfolder,
    /// each file in it: a file named as an embedded one replaces it, any other is added.
    pub fn for_rules(rules: Option<&Path>) -> Result<Self> {
        let mut files: BTreeMap<String, TemplateFile> = decide_engine::policy::embedded_templates()
            .iter()
            .map(|(name, text)| {
                let file = TemplateFile {
                    display: format!("templates/{name}"),
                    text: Arc::from(*text),
                };
                ((*name).to_owned(), file)
            })
            .collect();
        if let Some((rules, dir)) = rules
            .map(|r| (r, r.join(decide_engine::policy::TEMPLATES_FOLDER)))
            .filter(|(_, d)| d.is_dir())
        {
            // Read as the rules folder's own files: regular files inside it, in bounds.
            let mut folder = decide_engine::source::Folder::new(
                rules,
                "rules folder",
                decide_engine::source::MAX_FOLDER_BYTES,
            )?;
            let entries = std::fs::read_dir(&dir).map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot read the templates folder: {e}"),
                )
                .in_file(dir.display().to_string())
            })?;
            for entry in entries {
                let path = entry
                    .map_err(|e| {
                        Error::new(
                            ErrorKind::Io,
                            format!("cannot read the templates folder: {e}"),
                        )
                        .in_file(dir.display().to_string())
                    })?
                    .path();
                let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if name.starts_with('.') || path.is_dir() {
                    continue;
                }
                let source = folder.read(&path, ErrorKind::Rules)?;
                // Bounded before minijinja's parser recurses over it.
                if let Err(limit) = decide_lang::limits::template(&source.text) {
                    return Err(Error::new(
                        ErrorKind::Rules,
                        format!("memo template is too large: {}", limit.what),
                    )
                    .at(
                        &source.name,
                        &source.text,
                        Some(decide_engine::error::Position {
                            line: limit.line,
                            column: 1,
                        }),
                    )
                    .help("split it into smaller pieces: `set` names for parts of the expression, macros for repeated blocks"));
                }
                files.insert(
                    name.to_owned(),
                    TemplateFile {
                        display: source.name,
                        text: source.text,
                    },
                );
            }
        }
        Ok(Templates { files })
    }

    /// Every template by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &TemplateFile)> {
        self.files.iter().map(|(name, file)| (name.as_str(), file))
    }

    /// The template called `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&TemplateFile> {
        self.files.get(name)
    }

    /// Compiles every template (what `decide validate` checks); the errors found, each with
    /// its file and line.
    #[must_use]
    pub fn check(&self) -> Vec<Error> {
        let env = self.environment();
        self.files
            .keys()
            .filter_map(|name| env.get_template(name).err())
            .map(|e| template_error(&e, self))
            .collect()
    }

    fn environment(&self) -> Environment<'static> {
        let mut env = decide_lang::environment();
        // `.html.j2` templates are HTML-escaped (minijinja's default by name, said here too).
        env.set_auto_escape_callback(|name| {
            if name.ends_with(".html.j2") {
                minijinja::AutoEscape::Html
            } else {
                minijinja::AutoEscape::None
            }
        });
        crate::html::register(&mut env);
        let files = self.files.clone();
        env.set_loader(move |name| Ok(files.get(name).map(|f| f.text.to_string())));
        env
    }
}

impl Memo {
    /// The templates embedded in the binary.
    pub fn embedded() -> Result<Self> {
        Memo::for_rules(None)
    }

    /// The embedded templates with those of the `templates/` folder of `rules`, if it has one
    /// (see [`Templates::for_rules`]). Nothing is compiled yet.
    pub fn for_rules(rules: Option<&Path>) -> Result<Self> {
        Ok(Memo::new(Templates::for_rules(rules)?))
    }

    /// A memo rendered from `templates`.
    #[must_use]
    pub fn new(templates: Templates) -> Self {
        let env = templates.environment();
        Memo { env, templates }
    }

    /// Renders `evaluation` in `format`; the output ends with a newline.
    pub fn render(
        &self,
        graph: &Graph,
        profile: &Profile,
        evaluation: &Evaluation,
        format: Format,
    ) -> Result<String> {
        match format {
            Format::Json => {
                let mut out = serde_json::to_string_pretty(&evaluation.decision)
                    .map_err(|e| Error::new(ErrorKind::Eval, format!("cannot write JSON: {e}")))?;
                out.push('\n');
                Ok(out)
            }
            Format::Markdown | Format::Html => {
                let owner = graph.owner();
                let decision = &evaluation.decision;
                let lang = owner.lang;
                let meta = &graph.policy().meta;
                let policy = minijinja::context! {
                    name => meta.name.get(lang),
                    version => meta.version.as_str(),
                    description => meta.description.as_ref().map(|w| w.get(lang)),
                    caution => meta.caution.as_ref().map(|w| w.get(lang)),
                    source => meta.source.as_ref().map(|w| w.get(lang)),
                };
                let offer = to_jinja(
                    &owner
                        .catalog
                        .get_item(&decide_lang::Value::from(decision.offer.as_str())),
                );
                let ctx = minijinja::context! {
                    not_on_offer => to_jinja(&owner.not_on_offer),
                    d => decision_view(decision),
                    values => Value::from_pairs(evaluation.values.iter().map(|(k, v)| (&**k, to_jinja(v))).collect::<Vec<_>>()),
                    offer => offer,
                    offers => to_jinja(&owner.offers),
                    catalog => to_jinja(&owner.catalog),
                    policy => policy,
                    lang => lang.code(),
                    profile => Serde(profile),
                };
                let name = if format == Format::Html {
                    HTML_TEMPLATE
                } else {
                    MEMO_TEMPLATE
                };
                let mut out = self
                    .env
                    .get_template(name)
                    .and_then(|t| t.render(ctx))
                    .map_err(|e| template_error(&e, &self.templates))?;
                if format == Format::Markdown {
                    out = single_blank_lines(&out);
                }
                // The rules' own texts (a title, a checklist item) are printed as written; a
                // control character among them is shown, never passed to a terminal or a page.
                if let std::borrow::Cow::Owned(shown) = decide_engine::error::visible(&out) {
                    out = shown;
                }
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                Ok(out)
            }
        }
    }
}

/// The decision record as the memo templates read it (`d`): its serde form, with the policy's
/// figures and sections as the engine's values (a vendor's escaped text stays marked escaped).
fn decision_view(decision: &decide_engine::Decision) -> Value {
    let plain = Value::from(Serde(decision));
    let pairs: Vec<(Value, Value)> = plain
        .try_iter()
        .into_iter()
        .flatten()
        .map(|key| {
            let name = key.as_str().unwrap_or_default();
            let value = if name == "costs" {
                Value::from_pairs(
                    decision
                        .costs
                        .iter()
                        .map(|(k, v)| (k.as_str(), to_jinja(v)))
                        .collect::<Vec<_>>(),
                )
            } else if let Some(section) = decision.sections.get(name) {
                to_jinja(section)
            } else {
                plain.get_item(&key).unwrap_or_default()
            };
            (key, value)
        })
        .collect();
    Value::from_pairs(pairs)
}

/// `text` with every run of blank lines cut to one, outside fenced code blocks: a section a
/// template leaves out must not leave a gap behind it. Lines of only spaces count as blank
/// (Markdown reads them so) and are written empty.
fn single_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fenced = false;
    let mut blank = false;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && content.trim().is_empty() {
            if !blank && !out.is_empty() {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        blank = false;
        out.push_str(line);
    }
    out
}

/// A template's error for people: the file (the rules folder's path for a file of
/// `--rules DIR/templates/`), the line with its text, what failed and the kind of failure.
fn template_error(e: &minijinja::Error, templates: &Templates) -> Error {
    let name = e.name().unwrap_or(MEMO_TEMPLATE);
    let kind = e.kind().to_string();
    let mut error = match e.detail() {
        Some(detail) => {
            Error::new(ErrorKind::Rules, format!("memo template failed: {detail}")).help(kind)
        }
        None => Error::new(ErrorKind::Rules, format!("memo template failed: {kind}")),
    };
    if e.kind() == minijinja::ErrorKind::OutOfFuel {
        error = error.help(format!(
            "the template took more than {} steps (the limit): a loop that does not end, or \
             one over a range too long",
            decide_lang::FUEL
        ));
    }
    if e.kind() == minijinja::ErrorKind::UndefinedError {
        error = error.help(
            "the template reads a name or field the memo does not have: the context is d (the \
             record), values, offer, offers, catalog, not_on_offer, policy, profile and lang",
        );
    }
    let Some(file) = templates.get(name) else {
        return error.in_file(format!("templates/{name}"));
    };
    match e.line() {
        Some(line) => {
            // The first character of the line that is not blank: the error has no column.
            let column = file
                .text
                .lines()
                .nth(line - 1)
                .and_then(|l| l.chars().position(|c| !c.is_whitespace()))
                .map_or(1, |c| c + 1);
            error.at(&file.display, &file.text, Some(Position { line, column }))
        }
        None => error.in_file(file.display.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::single_blank_lines;

    #[test]
    fn runs_of_blank_lines_become_one_outside_code_fences() {
        assert_eq!(single_blank_lines("a\n\n\n\nb\n"), "a\n\nb\n");
        assert_eq!(single_blank_lines("a\n  \n\t\nb\n"), "a\n\nb\n");
        assert_eq!(single_blank_lines("\n\na\n\n"), "a\n\n");
        // A chart's code block keeps its lines as written.
        let fenced = "x\n\n\n```mermaid\nline\n\n\nline\n```\n\n\ny\n";
        assert_eq!(
            single_blank_lines(fenced),
            "x\n\n```mermaid\nline\n\n\nline\n```\n\ny\n"
        );
        // Text without a run is unchanged, byte for byte.
        let plain = "# T\n\n| a | b |\n|---|---|\n\n- item\n  more\n";
        assert_eq!(single_blank_lines(plain), plain);
    }
}
