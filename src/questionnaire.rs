//! The questionnaire behind `decide init`: the policy's questions turned into typed prompts.
//!
//! The words come from the rules (`questions:`, English and Chinese); how each is asked and
//! checked comes from the profile's field model ([`crate::profile::fields`], read from the JSON
//! Schema the YAML language server uses):
//! an enumeration becomes a choice, a flag a yes/no, a number is checked against the field's
//! range as it is typed, a list of enumerated values a multiple choice, a map of hours one number
//! per catalog offer. A question with a `when:` is asked only when that expression over the
//! answers so far is true. This module knows no terminal; `cli::init` does the asking.

use serde_json::Value as J;

use crate::policy::Policy;
use crate::profile::fields::{Choice, FieldKind};

/// How one question is asked and what its answer may be.
#[derive(Debug, Clone)]
pub enum Kind {
    /// Free text (`nullable`: may be left empty).
    Text { nullable: bool },
    /// A number within the field's range.
    Number(NumberRule),
    /// Yes or no.
    Flag { default: bool },
    /// One of fixed values: (value, label); `nullable` adds "none".
    Choice {
        options: Vec<(String, String)>,
        nullable: bool,
    },
    /// Any of fixed values.
    Choices { options: Vec<(String, String)> },
    /// Hours per catalog offer (a job to cost): (offer id, title).
    Hours { offers: Vec<(String, String)> },
    /// Any of the catalog's offers: (offer id, title); with `among` (a field path), only those
    /// that are keys of that field as answered so far.
    Offers {
        offers: Vec<(String, String)>,
        among: Option<Vec<String>>,
    },
}

/// What a number answer must be.
#[derive(Debug, Clone, Default)]
pub struct NumberRule {
    pub integer: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub nullable: bool,
    /// Used when the answer is left empty.
    pub default: Option<f64>,
}

impl NumberRule {
    /// Parses and checks one typed answer; `Ok(None)` is "left empty, no value".
    ///
    /// # Errors
    /// A message saying what would be valid.
    pub fn check(&self, text: &str) -> Result<Option<J>, String> {
        let text = text.trim().replace(['_', ','], "");
        if text.is_empty() {
            return match (self.default, self.nullable) {
                (Some(d), _) => Ok(Some(number(d, self.integer))),
                (None, true) => Ok(None),
                (None, false) => Err("an answer is needed".to_owned()),
            };
        }
        let v: f64 = text
            .parse()
            .map_err(|_| format!("`{text}` is not a number"))?;
        if !v.is_finite() {
            return Err("must be a finite number".to_owned());
        }
        if self.integer && v.fract() != 0.0 {
            return Err("must be a whole number".to_owned());
        }
        if let Some(m) = self.minimum
            && v < m
        {
            return Err(format!("must be at least {m}"));
        }
        if let Some(m) = self.exclusive_minimum
            && v <= m
        {
            return Err(format!("must be greater than {m}"));
        }
        if let Some(m) = self.maximum
            && v > m
        {
            return Err(format!("must be at most {m}"));
        }
        Ok(Some(number(v, self.integer)))
    }
}

#[allow(clippy::cast_possible_truncation)] // checked whole above
fn number(v: f64, integer: bool) -> J {
    if integer || (v.fract() == 0.0 && v.abs() < 1e15) {
        J::from(v as i64)
    } else {
        J::from(v)
    }
}

/// One question, ready to ask.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The profile field, as path segments.
    pub path: Vec<String>,
    pub ask: String,
    pub help: Option<String>,
    pub kind: Kind,
    /// Ask only when this expression over the answers so far (`profile`) is true.
    pub when: Option<String>,
}

/// Whether a question with condition `when` applies, given the answers so far: `when` is a
/// rule expression over `profile` (the partial profile), in which an unanswered field is
/// undefined and an undefined result counts as false.
///
/// # Errors
/// The expression fails or gives something other than true or false.
pub fn applies(when: &str, answers: &J) -> Result<bool, String> {
    let mut env = crate::expr::environment();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
    crate::expr::limits::expression(when).map_err(|e| format!("`when` {e}"))?;
    let value = env
        .compile_expression(when)
        .and_then(|e| e.eval(minijinja::context! { profile => minijinja::value::Serde(answers) }))
        .map_err(|e| format!("`when: {when}` failed: {}", e.detail().unwrap_or("error")))?;
    match value.kind() {
        minijinja::value::ValueKind::Bool => Ok(value.is_true()),
        minijinja::value::ValueKind::Undefined | minijinja::value::ValueKind::None => Ok(false),
        _ => Err(format!(
            "`when: {when}` gave {value}, expected true or false"
        )),
    }
}

/// The policy's questions in order, in `lang`.
#[must_use]
pub fn prompts(policy: &Policy, lang: crate::Lang) -> Vec<Prompt> {
    let offers: Vec<(String, String)> = policy
        .offers
        .iter()
        .map(|o| {
            let title = o
                .item
                .fields
                .get("title")
                .and_then(J::as_str)
                .unwrap_or(&o.item.id);
            (o.item.id.clone(), format!("{title} ({})", o.item.id))
        })
        .collect();
    policy
        .questions
        .iter()
        .filter_map(|q| {
            let q = &q.item;
            let path: Vec<String> = q.field.value.split('.').map(str::to_owned).collect();
            let field = crate::profile::field(&q.field.value)?;
            let label = |value: &str| {
                q.choices
                    .get(value)
                    .map_or_else(|| value.to_owned(), |w| w.get(lang).to_owned())
            };
            let options = |choices: &[Choice]| {
                choices
                    .iter()
                    .map(|c| (c.value.clone(), label(&c.value)))
                    .collect()
            };
            let nullable = field.nullable;
            let kind = match &field.kind {
                FieldKind::List(_) if q.offer => Kind::Offers {
                    offers: offers.clone(),
                    among: q
                        .among
                        .as_ref()
                        .map(|a| a.value.split('.').map(str::to_owned).collect()),
                },
                _ if q.offer => Kind::Choice {
                    options: offers.clone(),
                    nullable,
                },
                FieldKind::Enum(choices) => Kind::Choice {
                    options: options(choices),
                    nullable,
                },
                FieldKind::List(item) => match &**item {
                    FieldKind::Enum(choices) => Kind::Choices {
                        options: options(choices),
                    },
                    _ => Kind::Text { nullable },
                },
                FieldKind::Bool => Kind::Flag {
                    default: field.default.as_ref().and_then(J::as_bool).unwrap_or(false),
                },
                FieldKind::Number(bounds) => Kind::Number(NumberRule {
                    integer: bounds.integer,
                    minimum: bounds.min,
                    exclusive_minimum: bounds.exclusive_min,
                    maximum: bounds.max,
                    nullable,
                    default: field.default.as_ref().and_then(J::as_f64),
                }),
                FieldKind::Map(_) => Kind::Hours {
                    offers: offers.clone(),
                },
                FieldKind::String | FieldKind::Object => Kind::Text { nullable },
            };
            Some(Prompt {
                path,
                ask: q.ask.get(lang).to_owned(),
                help: q.help.as_ref().map(|h| h.get(lang).to_owned()),
                kind,
                when: q.when.as_ref().map(|w| w.value.clone()),
            })
        })
        .collect()
}

/// The offers a [`Kind::Offers`] question may offer, given the answers so far: all of them, or
/// with `among` only the keys of that answered field (none when it is unanswered).
#[must_use]
pub fn offers_among<'o>(
    offers: &'o [(String, String)],
    among: Option<&[String]>,
    profile: &J,
) -> Vec<&'o (String, String)> {
    let Some(path) = among else {
        return offers.iter().collect();
    };
    let answered = path.iter().try_fold(profile, |v, k| v.get(k));
    offers
        .iter()
        .filter(|(id, _)| answered.is_some_and(|a| a.get(id).is_some()))
        .collect()
}

/// Sets `path` in a profile being built (`None` leaves the field out).
pub fn set(profile: &mut J, path: &[String], value: Option<J>) {
    if let Some(value) = value {
        crate::profile::set_field(profile, path, value);
    }
}

/// The profile as YAML a person reads.
#[must_use]
pub fn to_yaml(profile: &J) -> String {
    let body = serde_saphyr::to_string(profile).unwrap_or_default();
    format!("# A workload profile written by `decide init`; decide it with `decide FILE`.\n{body}")
}
