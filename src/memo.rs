//! Rendering a decision: the Markdown memo (from the embedded templates) and the JSON record.
//!
//! The memo is written for the buyer who signs, not for the engine: templates get the decision
//! record, every node value, the chosen offer and the catalog, and format money, hours and
//! percentages with the filters of [`crate::expr`]. Wording lives in `templates/`, not here.

use minijinja::Environment;
use minijinja::value::{Serde, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::eval::Evaluation;
use crate::graph::Graph;
use crate::lang::Lang;
use crate::profile::Profile;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
}

/// The memo templates, loaded and compiled once.
#[derive(Debug)]
pub struct Memo {
    env: Environment<'static>,
}

/// The template the memo starts from, per language (`templates/memo.md.j2`,
/// `templates/memo.zh.md.j2`).
fn memo_template(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "memo.md.j2",
        Lang::Zh => "memo.zh.md.j2",
    }
}

impl Memo {
    /// The templates embedded in the binary.
    pub fn embedded() -> Result<Self> {
        let mut env = crate::expr::environment();
        for (name, text) in crate::policy::embedded_templates() {
            env.add_template(name, text)
                .map_err(|e| template_error(&e, Lang::En))?;
        }
        Ok(Memo { env })
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
            Format::Markdown => {
                let owner = graph.owner();
                let decision = &evaluation.decision;
                let lang = owner.lang;
                let meta = &graph.policy().meta;
                let policy = minijinja::context! {
                    name => meta.name.get(lang),
                    version => meta.version.as_str(),
                    description => meta.description.as_ref().map(|w| w.get(lang)),
                    caution => meta.caution.as_ref().map(|w| w.get(lang)),
                };
                let offer = owner
                    .catalog
                    .get_item(&Value::from(decision.offer.as_str()))
                    .unwrap_or_default();
                let ctx = minijinja::context! {
                    d => Serde(decision),
                    values => Value::from_pairs(evaluation.values.iter().map(|(k, v)| (k.clone(), v.clone()))),
                    offer => offer,
                    offers => owner.offers.clone(),
                    catalog => owner.catalog.clone(),
                    policy => policy,
                    lang => lang.code(),
                    profile => Serde(profile),
                };
                let mut out = self
                    .env
                    .get_template(memo_template(lang))
                    .and_then(|t| t.render(ctx))
                    .map_err(|e| template_error(&e, lang))?;
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                Ok(out)
            }
        }
    }
}

fn template_error(e: &minijinja::Error, lang: Lang) -> Error {
    let name = e.name().unwrap_or(memo_template(lang));
    let line = e.line().map_or(String::new(), |l| format!(":{l}"));
    Error::new(
        ErrorKind::Rules,
        format!("memo template failed: {}", e.detail().unwrap_or("error")),
    )
    .in_file(format!("templates/{name}{line}"))
    .help(format!("{}", e.kind()))
}
