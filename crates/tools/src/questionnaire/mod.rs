//! The questionnaire behind `decide init`: the policy's questions turned into typed prompts.
//!
//! The words come from the rules (`questions:`, English and Chinese); how each is asked and
//! checked comes from the profile's field model ([`decide_engine::profile::fields`], read from the JSON
//! Schema the YAML language server uses):
//! an enumeration becomes a choice, a flag a yes/no, a number is checked against the field's
//! range as it is typed, a list of enumerated values a multiple choice, a map of hours one number
//! per catalog offer. A question with a `when:` is asked only when that expression over the
//! answers so far is true. A number is read as people type it ([`decide_engine::profile::typed`]: full-width digits,
//! thousands separators, the question's shorthands such as `2万` or `13B`). This module knows no
//! terminal; `cli::init` does the asking.

pub mod form;

use std::sync::Arc;

use serde_json::Value as J;

use decide_engine::Lang;
use decide_engine::policy::Policy;
use decide_engine::policy::rules::{PromptWords, Template};
use decide_engine::profile::fields::{Choice, FieldKind};
use decide_engine::profile::typed as answer;

/// The questionnaire's own words (`questionnaire.words`) in one language.
#[derive(Debug, Clone)]
pub struct Texts {
    words: PromptWords,
    lang: Lang,
}

impl Texts {
    /// The policy's questionnaire words in `lang`; `None` when the policy has none.
    #[must_use]
    pub fn new(policy: &Policy, lang: Lang) -> Option<Self> {
        policy.questionnaire.as_ref().map(|q| Texts {
            words: q.item.words.clone(),
            lang,
        })
    }

    /// The words `pick` chooses, each `{name}` replaced by its value.
    #[must_use]
    pub fn say(&self, pick: fn(&PromptWords) -> &Template, values: &[(&str, &str)]) -> String {
        let mut text = pick(&self.words).value.get(self.lang).to_owned();
        for (name, value) in values {
            text = text.replace(&format!("{{{name}}}"), value);
        }
        text
    }

    /// A typed text answer checked as a question of [`QuestionKind::Text`] asks it: the text trimmed,
    /// `Ok(None)` when left empty where that may be, else what is wrong in these words.
    ///
    /// # Errors
    /// An empty answer where one is needed, or one over `max_chars` characters.
    pub fn check_text(
        &self,
        text: &str,
        nullable: bool,
        max_chars: Option<usize>,
    ) -> Result<Option<J>, String> {
        let text = text.trim();
        if text.is_empty() {
            return if nullable {
                Ok(None)
            } else {
                Err(self.say(|w| &w.needed, &[]))
            };
        }
        if let Some(max) = max_chars.filter(|m| text.chars().count() > *m) {
            return Err(self.say(|w| &w.at_most, &[("bound", &max.to_string())]));
        }
        Ok(Some(J::from(text)))
    }

    /// What may be typed for yes (`yes == true`) or no: the `/`-separated forms of `yes_typed`
    /// (`no_typed`) in this language and in English.
    #[must_use]
    pub fn typed(&self, yes: bool) -> Vec<String> {
        let words = if yes {
            &self.words.yes_typed
        } else {
            &self.words.no_typed
        };
        let mut forms: Vec<String> = [words.value.get(self.lang), &words.value.en]
            .iter()
            .flat_map(|w| w.split('/'))
            .map(|f| f.trim().to_lowercase())
            .filter(|f| !f.is_empty())
            .collect();
        forms.dedup();
        forms
    }
}

/// How one question is asked and what its answer may be.
#[derive(Debug, Clone)]
pub enum QuestionKind {
    /// Free text (`nullable`: may be left empty) of at most `max_chars` characters, where the
    /// field bounds it.
    Text {
        nullable: bool,
        max_chars: Option<usize>,
    },
    /// A number within the field's range.
    Number(NumberRule),
    /// Yes or no.
    Flag { default: bool },
    /// A section of the profile (`job`) opened by a yes: its questions follow, each with a
    /// `when: profile.SECTION is defined`.
    Section,
    /// One of fixed values: (value, label); `nullable` adds "none".
    Choice {
        options: Vec<(String, String)>,
        nullable: bool,
    },
    /// Any of fixed values.
    Choices { options: Vec<(String, String)> },
    /// Hours per catalog offer (a job to cost): (offer id, title), each read by `rule`.
    Hours {
        offers: Vec<(String, String)>,
        rule: NumberRule,
    },
    /// Any of the catalog's offers: (offer id, title); with `among` (a field path), only those
    /// that are keys of that field as answered so far.
    Offers {
        offers: Vec<(String, String)>,
        among: Option<Vec<String>>,
    },
}

/// What a number answer must be, and how it may be written.
#[derive(Debug, Clone)]
pub struct NumberRule {
    pub integer: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub nullable: bool,
    /// Used when the answer is left empty.
    pub default: Option<f64>,
    /// The shorthands and unit signs the question accepts.
    pub reading: answer::Reading,
    /// What the number counts, in the questionnaire's language (`yuan`, `元`).
    pub unit: Option<String>,
    /// The words of what a refused answer says.
    pub texts: Arc<Texts>,
}

impl NumberRule {
    /// Parses and checks one typed answer; `Ok(None)` is "left empty, no value".
    ///
    /// # Errors
    /// A message saying what would be valid.
    pub fn check(&self, text: &str) -> Result<Option<J>, String> {
        let say = |pick: fn(&PromptWords) -> &Template, values: &[(&str, &str)]| {
            self.texts.say(pick, values)
        };
        let read = self.reading.read(text).map_err(|problem| match problem {
            answer::Problem::NotANumber => say(|w| &w.not_a_number, &[("answer", text.trim())]),
            answer::Problem::Thousands => say(|w| &w.thousands, &[("answer", text.trim())]),
            answer::Problem::Unknown { suffix, accepted } => say(
                |w| &w.unknown_shorthand,
                &[("suffix", &suffix), ("accepted", &accepted)],
            ),
        })?;
        let Some(v) = read else {
            return match (self.default, self.nullable) {
                (Some(d), _) => Ok(Some(number(d, self.integer))),
                (None, true) => Ok(None),
                (None, false) => Err(say(|w| &w.needed, &[])),
            };
        };
        if !v.is_finite() {
            return Err(say(|w| &w.not_a_number, &[("answer", text.trim())]));
        }
        if self.integer && v.fract() != 0.0 {
            return Err(say(|w| &w.whole, &[]));
        }
        let bound = |m: f64| m.to_string();
        if let Some(m) = self.minimum
            && v < m
        {
            return Err(say(|w| &w.at_least, &[("bound", &bound(m))]));
        }
        if let Some(m) = self.exclusive_minimum
            && v <= m
        {
            return Err(say(|w| &w.greater_than, &[("bound", &bound(m))]));
        }
        if let Some(m) = self.maximum
            && v > m
        {
            return Err(say(|w| &w.at_most, &[("bound", &bound(m))]));
        }
        Ok(Some(number(v, self.integer)))
    }

    /// A valid answer echoed with the value understood (`2万 → 20,000 yuan`), when that is not
    /// simply what was typed; `None` otherwise.
    #[must_use]
    pub fn understood(&self, text: &str) -> Option<String> {
        let v = self.check(text).ok()??.as_f64()?;
        let typed = text.trim();
        if typed.is_empty() || typed == v.to_string() {
            return None;
        }
        let mut value = answer::grouped(v);
        if let Some(unit) = &self.unit {
            value = format!("{value} {unit}");
        }
        Some(
            self.texts
                .say(|w| &w.understood, &[("answer", typed), ("value", &value)]),
        )
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
    pub kind: QuestionKind,
    /// Ask only when this expression over the answers so far (`profile`) is true.
    pub when: Option<String>,
}

/// Whether a question with condition `when` applies, given the answers so far: `when` is a
/// rule expression over `profile` (the partial profile), evaluated by the rule language over a
/// partial record ([`decide_lang::code::Code::eval_partial`]): an unanswered field is undefined,
/// and an undefined result counts as false.
///
/// # Errors
/// The expression fails or gives something other than true or false.
pub fn applies(when: &str, answers: &J) -> Result<bool, String> {
    decide_lang::limits::expression(when).map_err(|e| format!("`when` {e}"))?;
    let (_, code) = decide_lang::code::Code::over(when, &["profile"])
        .map_err(|e| format!("`when: {when}` does not compile: {}", e.message))?;
    let answers = [std::sync::OnceLock::from(
        decide_lang::Value::from_serialize(answers),
    )];
    let value = code
        .eval_partial(&answers)
        .map_err(|e| format!("`when: {when}` failed: {}", e.message))?;
    match value.kind() {
        decide_lang::value::Kind::Bool => Ok(value.is_true()),
        decide_lang::value::Kind::Undefined | decide_lang::value::Kind::None => Ok(false),
        _ => Err(format!(
            "`when: {when}` gave {value}, expected true or false"
        )),
    }
}

/// Each catalog offer's id and how a picker shows it: its title in `texts`' language and its
/// price (the questionnaire's `offer_label` and `prices`), so that typing part of a title
/// finds it.
fn offer_labels(policy: &Policy, texts: &Texts) -> Vec<(String, String)> {
    policy
        .offers
        .iter()
        .map(|o| {
            let fields = &o.item.fields;
            let title = o.item.title(texts.lang);
            let price = fields.get("price").and_then(|p| {
                let words = texts.words.prices.get(p.get("unit")?.as_str()?)?;
                let said = |amount: f64| {
                    let decimals = if amount.fract() == 0.0 { 0 } else { 2 };
                    let amount = decide_lang::group_thousands(amount, decimals);
                    words.value.get(texts.lang).replace("{amount}", &amount)
                };
                let paid = p.get("discounted_cny")?.as_f64()?;
                let list = p.get("list_cny").and_then(J::as_f64);
                // The list price (by the hour, say) and the price on a commitment (a month
                // paid ahead), where they differ and the words say how.
                let commits = fields
                    .get("billing")
                    .and_then(|b| b.get("discount_commits"))
                    .and_then(J::as_str)
                    .and_then(|c| texts.words.committed.get(c));
                Some(match (list, commits) {
                    (Some(list), Some(commits)) if list > paid => commits
                        .value
                        .get(texts.lang)
                        .replace("{list}", &said(list))
                        .replace("{committed}", &said(paid)),
                    _ => said(paid),
                })
            });
            let label = match price {
                Some(price) => {
                    texts.say(|w| &w.offer_label, &[("title", &title), ("price", &price)])
                }
                None => title,
            };
            (o.item.id.clone(), label)
        })
        .collect()
}

/// How the question `q` reads a typed number: its own shorthands, else the questionnaire's,
/// and its unit's signs.
fn reading_of(policy: &Policy, q: &decide_engine::policy::rules::Question) -> answer::Reading {
    let shorthands = q.shorthands.as_ref().map_or_else(
        || {
            policy
                .questionnaire
                .as_ref()
                .and_then(|q| q.item.shorthands.as_ref())
                .map(|s| s.value.clone())
                .unwrap_or_default()
        },
        |s| s.value.clone(),
    );
    // The unit the question names is read after a number too (`400 hours a month`, `16 张卡`).
    let mut symbols = q.symbols.clone();
    if let Some(unit) = &q.unit {
        symbols.extend(
            [Some(&unit.en), unit.zh.as_ref()]
                .into_iter()
                .flatten()
                .cloned(),
        );
    }
    answer::Reading {
        shorthands,
        symbols,
    }
}

/// A number of a profile written as `decide init` reads an answer (`13B`, `24/7`, `2万`) is
/// refused, as every number written other than in digits is, with the number to write: the
/// question of that field reads it. The hint goes on each such fault of `error`.
#[must_use]
pub fn typed_number_hint(policy: &Policy, error: decide_engine::Error) -> decide_engine::Error {
    if error.kind() != decide_engine::ErrorKind::Profile {
        return error;
    }
    // Every fault points into the one text of the profile: where its values are written is
    // read once.
    let text = error.origin().and_then(|o| o.text.clone());
    let places = text.as_deref().and_then(decide_engine::places::Places::of);
    let (Some(text), Some(places)) = (text, places) else {
        return error;
    };
    error.map_each(|fault| {
        let Some(field) = fault.field_path().map(str::to_owned) else {
            return fault;
        };
        let question = (policy.questions.iter()).find(|q| q.item.field.value == field);
        let number = decide_engine::profile::field(&field)
            .is_some_and(|f| matches!(f.kind, FieldKind::Number(_)));
        let (Some(q), Some(node), true) = (question, places.get(&field), number) else {
            return fault;
        };
        let written: String = (text.chars())
            .skip(node.start.offset)
            .take(node.end.offset.saturating_sub(node.start.offset))
            .collect();
        let written = written.trim().trim_matches(['"', '\'']);
        match reading_of(policy, &q.item).read(written) {
            Ok(Some(value)) if written.parse::<f64>().is_err() => {
                let name = field.rsplit('.').next().unwrap_or(&field);
                let value = answer::tidy(value);
                fault.help(format!(
                    "`{written}` is how `decide init` reads {value}; a profile writes the \
                     number in digits: `{name}: {value}`"
                ))
            }
            _ => fault,
        }
    })
}

/// The policy's questions in order, in `lang` (none when the policy has no `questionnaire:`
/// words, which `decide validate` requires with questions).
#[must_use]
#[allow(clippy::too_many_lines)] // one question after the other: its field, its words, its kind
pub fn prompts(policy: &Policy, lang: decide_engine::Lang) -> Vec<Prompt> {
    let Some(texts) = Texts::new(policy, lang) else {
        return Vec::new();
    };
    let texts = Arc::new(texts);
    let offers = offer_labels(policy, &texts);
    policy
        .questions
        .iter()
        .filter_map(|q| {
            let q = &q.item;
            let path: Vec<String> = q.field.value.split('.').map(str::to_owned).collect();
            let field = decide_engine::profile::field(&q.field.value)?;
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
            let reading = reading_of(policy, q);
            let unit = q.unit.as_ref().map(|u| u.get(lang).to_owned());
            let number_rule = |bounds: &decide_engine::profile::fields::Bounds,
                               nullable: bool,
                               default: Option<f64>| NumberRule {
                integer: bounds.integer,
                minimum: bounds.min,
                exclusive_minimum: bounds.exclusive_min,
                maximum: bounds.max,
                nullable,
                default,
                reading: reading.clone(),
                unit: unit.clone(),
                texts: Arc::clone(&texts),
            };
            let text = || QuestionKind::Text {
                nullable,
                max_chars: field.max_length,
            };
            let kind = match &field.kind {
                FieldKind::List(_) if q.offer => QuestionKind::Offers {
                    offers: offers.clone(),
                    among: q
                        .among
                        .as_ref()
                        .map(|a| a.value.split('.').map(str::to_owned).collect()),
                },
                _ if q.offer => QuestionKind::Choice {
                    options: offers.clone(),
                    nullable,
                },
                FieldKind::Enum(choices) => QuestionKind::Choice {
                    options: options(choices),
                    nullable,
                },
                FieldKind::List(item) => match &**item {
                    FieldKind::Enum(choices) => QuestionKind::Choices {
                        options: options(choices),
                    },
                    _ => text(),
                },
                FieldKind::Bool => QuestionKind::Flag {
                    default: field.default.as_ref().and_then(J::as_bool).unwrap_or(false),
                },
                FieldKind::Number(bounds) => QuestionKind::Number(number_rule(
                    bounds,
                    nullable,
                    field.default.as_ref().and_then(J::as_f64),
                )),
                FieldKind::Map(item) => QuestionKind::Hours {
                    offers: offers.clone(),
                    rule: match &**item {
                        FieldKind::Number(bounds) => number_rule(bounds, true, None),
                        _ => number_rule(
                            &decide_engine::profile::fields::Bounds::default(),
                            true,
                            None,
                        ),
                    },
                },
                FieldKind::Object => QuestionKind::Section,
                FieldKind::String => text(),
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

/// The offers a [`QuestionKind::Offers`] question may offer, given the answers so far: all of them, or
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
        decide_engine::profile::set_field(profile, path, value);
    }
}

/// The profile as YAML a person reads, under the questionnaire's `file_header` line.
#[must_use]
pub fn to_yaml(profile: &J, texts: &Texts) -> String {
    let body = serde_saphyr::to_string(profile).unwrap_or_default();
    let header = texts.say(|w| &w.file_header, &[]);
    format!("# {}\n{body}", header.trim_start_matches('#').trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped policy's number question for `field`, in `lang`.
    fn number_rule(field: &str, lang: Lang) -> NumberRule {
        let policy = Policy::embedded().unwrap();
        prompts(&policy, lang)
            .into_iter()
            .find_map(|p| match p.kind {
                QuestionKind::Number(rule) if p.path.join(".") == field => Some(rule),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn a_budget_in_wan_with_full_width_digits_is_read_and_echoed_in_chinese() {
        let rule = number_rule("budget.monthly_cny", Lang::Zh);
        assert_eq!(rule.check("２万"), Ok(Some(J::from(20_000))));
        assert_eq!(
            rule.understood("２万").as_deref(),
            Some("２万 → 20,000 元/月")
        );
        assert_eq!(rule.check("¥100k"), Ok(Some(J::from(100_000))));
        assert_eq!(rule.check(""), Ok(None), "no budget");
        assert_eq!(
            rule.check("1,5"),
            Err("“1,5”：逗号或空格用于千位分隔（8,192），小数请用小数点（1.5）".to_owned())
        );
    }

    #[test]
    fn the_question_unit_decides_what_a_shorthand_means() {
        let params = number_rule("workload.model_params_b", Lang::En);
        assert_eq!(params.check("13B"), Ok(Some(J::from(13))));
        assert_eq!(
            params.understood("13B").as_deref(),
            Some("13B → 13 billion parameters")
        );
        let context = number_rule("workload.context_tokens", Lang::En);
        assert_eq!(context.check("8k"), Ok(Some(J::from(8192))));
        let hours = number_rule("usage.hours_per_gpu_month", Lang::En);
        assert_eq!(hours.check("24/7"), Ok(Some(J::from(720))));
        assert_eq!(hours.check("800"), Err("must be at most 744".to_owned()));
        // A plain answer is not echoed back.
        assert_eq!(hours.understood("600"), None);
        // A shorthand of another question is not read here.
        let err = hours.check("13B").unwrap_err();
        assert!(err.starts_with("`B` is not understood here"), "{err}");
    }

    #[test]
    fn the_unit_a_question_names_is_read_after_the_number() {
        for lang in [Lang::En, Lang::Zh] {
            let read = |field: &str, typed: &str| number_rule(field, lang).check(typed);
            for typed in [
                "400h",
                "400 hours a month",
                "400小时",
                "400 小时/月",
                "400 hrs",
            ] {
                assert_eq!(
                    read("usage.hours_per_gpu_month", typed),
                    Ok(Some(J::from(400)))
                );
            }
            for typed in ["50ms", "50 毫秒", "50 milliseconds"] {
                let ms = read("serving.time_per_output_token_ms", typed);
                assert_eq!(ms, Ok(Some(J::from(50))), "{typed}");
            }
            for typed in ["16张", "16 张卡", "16 GPUs", "16卡"] {
                assert_eq!(read("usage.gpus", typed), Ok(Some(J::from(16))), "{typed}");
            }
            assert_eq!(read("workload.nodes", "2台"), Ok(Some(J::from(2))));
            assert_eq!(read("workload.nodes", "2 machines"), Ok(Some(J::from(2))));
            assert_eq!(read("usage.months", "6个月"), Ok(Some(J::from(6))));
            assert_eq!(read("job.deadline_days", "3天"), Ok(Some(J::from(3))));
        }
        // A unit is read past, not taken for a shorthand: `2万元` is still twenty thousand.
        let budget = number_rule("budget.monthly_cny", Lang::Zh);
        assert_eq!(budget.check("2万元"), Ok(Some(J::from(20_000))));
    }

    #[test]
    fn a_container_is_offered_with_its_hourly_and_its_monthly_payment_rates() {
        let policy = Policy::embedded()
            .unwrap()
            .at(jiff::civil::date(2026, 9, 4));
        for (lang, said) in [
            (
                Lang::En,
                "¥1.96 a GPU-hour; ¥1.57 a GPU-hour on a monthly payment",
            ),
            (Lang::Zh, "每卡时 ¥1.96；月付每卡时 ¥1.57"),
        ] {
            let texts = Texts::new(&policy, lang).unwrap();
            let labels = offer_labels(&policy, &texts);
            let container = labels
                .iter()
                .find(|(id, _)| id == "rtx4090-container")
                .map(|(_, label)| label.as_str());
            assert!(
                container.is_some_and(|l| l.ends_with(said)),
                "{container:?}"
            );
        }
    }

    #[test]
    fn a_whole_number_question_refuses_a_fraction_in_the_language_asked() {
        let gpus = number_rule("usage.gpus", Lang::Zh);
        assert_eq!(gpus.check("1.5"), Err("必须是整数".to_owned()));
        assert_eq!(gpus.check("八"), Err("“八”不是数字".to_owned()));
        assert_eq!(gpus.check("８"), Ok(Some(J::from(8))));
    }
}
