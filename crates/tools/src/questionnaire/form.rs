//! The questionnaire as a form: the answers a web form posts (each field's name and the texts
//! given under it) read into a profile question by question, with the same `when:` logic, the
//! same checks and the same defaults as `decide init`; and a profile read back into the answers
//! that give it, so that an uploaded profile fills the form.
//!
//! A question's form name is its field path (`workload.model_params_b`); a map of hours names
//! one input per offer, `job.hours[OFFER]`. A flag or a section posts `yes` or `no`; a choice
//! posts its value (empty for none); a multiple choice posts each value picked under the same
//! name. Two questions may ask for one field under different conditions (`workload.nodes`):
//! only the one that applies reads it.

use std::collections::BTreeMap;

use serde_json::{Map, Value as J};

use super::{Prompt, QuestionKind, Texts, applies, offers_among};

/// What a form posted: each field's name and the texts given under it, in order.
pub type Posted = BTreeMap<String, Vec<String>>;

/// The value a flag or a section posts for yes.
pub const YES: &str = "yes";
/// The value a flag or a section posts for no.
pub const NO: &str = "no";

/// One question after the answers were read.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Whether its `when:` holds for the answers before it (always, without one).
    pub applies: bool,
    /// The texts its inputs show, by form name: what was posted, else the default.
    pub shown: Posted,
    /// Why the answer is refused, in the questionnaire's language; also for a required
    /// question left empty, with `posted` false when nothing was posted for it at all.
    pub error: Option<String>,
    /// Whether the form posted anything under this question's names.
    pub posted: bool,
    /// A number read from a shorthand, echoed (`2万 → 20,000 yuan a month`).
    pub understood: Option<String>,
    /// For a pick among offers: the offer ids that may be picked now.
    pub offers: Option<Vec<String>>,
}

/// The answers read: the profile they give and each question's state, in order.
#[derive(Debug, Clone)]
pub struct Filled {
    pub profile: J,
    pub answers: Vec<Answer>,
}

impl Filled {
    /// Whether every question that applies has an answer it accepts.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.answers.iter().all(|a| !a.applies || a.error.is_none())
    }
}

/// A question's form name: its field path.
#[must_use]
pub fn name(prompt: &Prompt) -> String {
    prompt.path.join(".")
}

/// The form name of one offer's hours in a map of hours.
#[must_use]
pub fn hours_name(prompt: &Prompt, offer: &str) -> String {
    format!("{}[{offer}]", name(prompt))
}

/// Reads `posted` into a profile over `base` (an uploaded profile whose fields no question asks
/// are kept; those a question asks are replaced by the answer, or left out where it does not
/// apply or is left empty).
///
/// # Errors
/// A question's `when:` fails (a fault of the rules, which `decide validate` reports).
pub fn fill(
    prompts: &[Prompt],
    texts: &Texts,
    posted: &Posted,
    base: &J,
) -> Result<Filled, String> {
    let mut profile = if base.is_object() {
        base.clone()
    } else {
        J::Object(Map::new())
    };
    for prompt in prompts {
        if !matches!(prompt.kind, QuestionKind::Section) {
            remove(&mut profile, &prompt.path);
        }
    }
    let mut answers = Vec::with_capacity(prompts.len());
    for prompt in prompts {
        let applies = match &prompt.when {
            Some(when) => applies(when, &profile)?,
            None => true,
        };
        let answer = if applies {
            read(prompt, texts, posted, &mut profile)
        } else {
            if matches!(prompt.kind, QuestionKind::Section) {
                remove(&mut profile, &prompt.path);
            }
            let mut answer = read(prompt, texts, posted, &mut J::Null);
            answer.error = None;
            answer.understood = None;
            answer
        };
        answers.push(Answer { applies, ..answer });
    }
    Ok(Filled { profile, answers })
}

/// One question's answer read from `posted` and set in `profile`.
fn read(prompt: &Prompt, texts: &Texts, posted: &Posted, profile: &mut J) -> Answer {
    let key = name(prompt);
    let texts_of = |name: &str| posted.get(name).cloned();
    let first = |name: &str| texts_of(name).and_then(|v| v.into_iter().next());
    let mut answer = Answer {
        applies: true,
        shown: Posted::new(),
        error: None,
        posted: posted.contains_key(&key),
        understood: None,
        offers: None,
    };
    let mut value = None;
    match &prompt.kind {
        QuestionKind::Text {
            nullable,
            max_chars,
        } => {
            let text = first(&key).unwrap_or_default();
            match texts.check_text(&text, *nullable, *max_chars) {
                Ok(v) => value = v,
                Err(why) => answer.error = Some(why),
            }
            answer.shown.insert(key, vec![text]);
        }
        QuestionKind::Number(rule) => {
            let text = first(&key).unwrap_or_default();
            match rule.check(&text) {
                Ok(v) => {
                    answer.understood = rule.understood(&text);
                    value = v;
                }
                Err(why) => answer.error = Some(why),
            }
            answer.shown.insert(key, vec![text]);
        }
        QuestionKind::Flag { default } => {
            let yes = first(&key).map_or(*default, |t| t == YES);
            value = Some(J::from(yes));
            answer.shown.insert(key, vec![yes_no(yes)]);
        }
        QuestionKind::Section => {
            let yes = first(&key).map_or_else(
                || profile.pointer(&pointer(&prompt.path)).is_some(),
                |t| t == YES,
            );
            if yes {
                if !profile
                    .pointer(&pointer(&prompt.path))
                    .is_some_and(J::is_object)
                {
                    value = Some(J::Object(Map::new()));
                }
            } else {
                remove(profile, &prompt.path);
            }
            answer.shown.insert(key, vec![yes_no(yes)]);
        }
        QuestionKind::Choice { options, nullable } => {
            let picked = first(&key).filter(|t| options.iter().any(|(v, _)| v == t));
            let picked = match picked {
                Some(p) => Some(p),
                None if *nullable => None,
                None => options.first().map(|(v, _)| v.clone()),
            };
            value = picked.as_deref().map(J::from);
            answer.shown.insert(key, vec![picked.unwrap_or_default()]);
        }
        QuestionKind::Choices { options } => {
            let picked = picks(texts_of(&key), options.iter().map(|(v, _)| v));
            value = (!picked.is_empty()).then(|| J::from(picked.clone()));
            answer.shown.insert(key, picked);
        }
        QuestionKind::Offers { offers, among } => {
            let allowed = offers_among(offers, among.as_deref(), profile);
            let picked = picks(texts_of(&key), allowed.iter().map(|(id, _)| id));
            value = (!picked.is_empty()).then(|| J::from(picked.clone()));
            answer.offers = Some(allowed.iter().map(|(id, _)| id.clone()).collect());
            answer.shown.insert(key, picked);
        }
        QuestionKind::Hours { offers, rule } => {
            value = read_hours(prompt, offers, rule, posted, &mut answer);
        }
    }
    if let Some(value) = value
        && profile.is_object()
    {
        super::set(profile, &prompt.path, Some(value));
    }
    answer
}

/// A map of hours, one number per offer; the first refused one is the answer's error.
fn read_hours(
    prompt: &Prompt,
    offers: &[(String, String)],
    rule: &super::NumberRule,
    posted: &Posted,
    answer: &mut Answer,
) -> Option<J> {
    let mut hours = Map::new();
    answer.posted = false;
    for (id, title) in offers {
        let name = hours_name(prompt, id);
        let text = posted
            .get(&name)
            .and_then(|v| v.first())
            .cloned()
            .unwrap_or_default();
        answer.posted |= posted.contains_key(&name);
        match rule.check(&text) {
            Ok(Some(v)) => {
                hours.insert(id.clone(), v);
            }
            Err(why) if answer.error.is_none() => answer.error = Some(format!("{title}: {why}")),
            Ok(None) | Err(_) => {}
        }
        answer.shown.insert(name, vec![text]);
    }
    (!hours.is_empty()).then_some(J::Object(hours))
}

/// The values of `allowed` that were posted, in the order of `allowed`.
fn picks<'a>(
    posted: Option<Vec<String>>,
    allowed: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    let posted = posted.unwrap_or_default();
    allowed.filter(|v| posted.contains(v)).cloned().collect()
}

fn yes_no(yes: bool) -> String {
    (if yes { YES } else { NO }).to_owned()
}

/// A JSON pointer to `path`.
fn pointer(path: &[String]) -> String {
    let mut out = String::new();
    for key in path {
        out.push('/');
        out.push_str(&key.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// Takes `path` out of `profile`, and any section it leaves empty.
fn remove(profile: &mut J, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if let Some(parent) = profile
        .pointer_mut(&pointer(parents))
        .and_then(J::as_object_mut)
    {
        parent.remove(last);
        if parent.is_empty() && !parents.is_empty() {
            remove(profile, parents);
        }
    }
}

/// The answers that give `profile`: what an uploaded profile fills the form with. A field the
/// questions do not ask is not among them (`fill` keeps it from the profile itself).
#[must_use]
pub fn posted_from(prompts: &[Prompt], profile: &J) -> Posted {
    let mut posted = Posted::new();
    for prompt in prompts {
        let key = name(prompt);
        let value = profile.pointer(&pointer(&prompt.path));
        let text = |v: &J| match v {
            J::String(s) => s.clone(),
            other => other.to_string(),
        };
        match (&prompt.kind, value) {
            (QuestionKind::Section, v) => {
                posted.insert(key, vec![yes_no(v.is_some_and(J::is_object))]);
            }
            (QuestionKind::Flag { .. }, Some(v)) => {
                if let Some(yes) = v.as_bool() {
                    posted.insert(key, vec![yes_no(yes)]);
                }
            }
            (QuestionKind::Choices { .. } | QuestionKind::Offers { .. }, Some(J::Array(items))) => {
                posted.insert(key, items.iter().map(text).collect());
            }
            (QuestionKind::Hours { .. }, Some(J::Object(hours))) => {
                for (offer, v) in hours {
                    posted.insert(hours_name(prompt, offer), vec![text(v)]);
                }
            }
            (QuestionKind::Choice { .. }, Some(J::Null)) => {
                posted.insert(key, vec![String::new()]);
            }
            (_, Some(v)) if !v.is_object() && !v.is_array() && !v.is_null() => {
                posted.insert(key, vec![text(v)]);
            }
            _ => {}
        }
    }
    posted
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use decide_engine::{Lang, Policy};

    fn shipped(lang: Lang) -> (Vec<Prompt>, Texts) {
        let policy = Policy::embedded().unwrap();
        (
            super::super::prompts(&policy, lang),
            Texts::new(&policy, lang).unwrap(),
        )
    }

    fn posted(pairs: &[(&str, &str)]) -> Posted {
        let mut posted = Posted::new();
        for (k, v) in pairs {
            posted
                .entry((*k).to_owned())
                .or_default()
                .push((*v).to_owned());
        }
        posted
    }

    fn answer<'f>(prompts: &[Prompt], filled: &'f Filled, field: &str) -> Vec<&'f Answer> {
        prompts
            .iter()
            .zip(&filled.answers)
            .filter(|(p, _)| name(p) == field)
            .map(|(_, a)| a)
            .collect()
    }

    #[test]
    fn an_empty_form_is_incomplete_with_the_defaults_shown_and_no_error_posted() {
        let (prompts, texts) = shipped(Lang::En);
        let filled = fill(&prompts, &texts, &Posted::new(), &J::Null).unwrap();
        assert!(!filled.complete());
        let name = answer(&prompts, &filled, "name")[0];
        assert!(!name.posted);
        assert_eq!(name.error.as_deref(), Some("an answer is needed"));
        // The first task is the default choice, so the questions of training apply.
        assert_eq!(filled.profile["workload"]["task"], "lora_finetune");
        let nodes = answer(&prompts, &filled, "workload.nodes");
        assert_eq!(
            nodes.iter().map(|a| a.applies).collect::<Vec<_>>(),
            [true, false]
        );
        // The section is closed, so its questions do not apply and leave nothing.
        assert!(filled.profile.get("job").is_none());
        assert!(!answer(&prompts, &filled, "job.deadline_days")[0].applies);
    }

    #[test]
    fn the_answers_give_the_profile_decide_init_would_write() {
        let (prompts, texts) = shipped(Lang::Zh);
        let filled = fill(
            &prompts,
            &texts,
            &posted(&[
                ("name", "客服机器人"),
                ("workload.task", "inference"),
                ("workload.model_params_b", "70B"),
                ("workload.nodes", "1"),
                ("usage.gpus", "８"),
                ("usage.hours_per_gpu_month", "24/7"),
                ("budget.monthly_cny", "5万"),
                ("requirements.physical_isolation", "yes"),
                ("job", "no"),
                ("job.deadline_days", "3"),
            ]),
            &J::Null,
        )
        .unwrap();
        let p = &filled.profile;
        assert_eq!(p["workload"]["task"], "inference");
        assert_eq!(p["workload"]["model_params_b"], 70);
        assert_eq!(p["usage"]["gpus"], 8);
        assert_eq!(p["usage"]["hours_per_gpu_month"], 720);
        assert_eq!(p["budget"]["monthly_cny"], 50_000);
        assert_eq!(p["requirements"]["physical_isolation"], true);
        // A question of training does not apply to inference; the closed section's deadline
        // is not read.
        assert!(p["workload"].get("tokens_b").is_none());
        assert!(p.get("job").is_none());
        let budget = answer(&prompts, &filled, "budget.monthly_cny")[0];
        assert_eq!(budget.understood.as_deref(), Some("5万 → 50,000 元/月"));
        assert!(filled.complete(), "{:?}", filled.answers);
    }

    #[test]
    fn a_refused_answer_says_why_in_the_language_asked_and_leaves_the_field_out() {
        let (prompts, texts) = shipped(Lang::Zh);
        let filled = fill(
            &prompts,
            &texts,
            &posted(&[("name", "x"), ("usage.gpus", "1.5")]),
            &J::Null,
        )
        .unwrap();
        let gpus = answer(&prompts, &filled, "usage.gpus")[0];
        assert_eq!(gpus.error.as_deref(), Some("必须是整数"));
        assert_eq!(gpus.shown["usage.gpus"], ["1.5"]);
        assert!(filled.profile["usage"].get("gpus").is_none());
        assert!(!filled.complete());
    }

    #[test]
    fn a_name_longer_than_a_profile_may_have_is_refused_as_it_is_typed() {
        let (prompts, texts) = shipped(Lang::En);
        let long = "名".repeat(decide_engine::profile::MAX_NAME_CHARS + 1);
        let filled = fill(&prompts, &texts, &posted(&[("name", &long)]), &J::Null).unwrap();
        let name = answer(&prompts, &filled, "name")[0];
        assert_eq!(
            name.error.as_deref(),
            Some(format!("must be at most {}", decide_engine::profile::MAX_NAME_CHARS).as_str())
        );
        assert!(filled.profile.get("name").is_none());
        let at_limit = "名".repeat(decide_engine::profile::MAX_NAME_CHARS);
        let filled = fill(&prompts, &texts, &posted(&[("name", &at_limit)]), &J::Null).unwrap();
        assert_eq!(filled.profile["name"], at_limit.as_str());
    }

    #[test]
    fn a_job_section_reads_hours_per_offer_and_offers_only_those_with_hours_to_pick() {
        let (prompts, texts) = shipped(Lang::En);
        let policy = Policy::embedded().unwrap();
        let offer = policy.offers[0].item.id.clone();
        let other = policy.offers[1].item.id.clone();
        let hours = format!("job.hours[{offer}]");
        let filled = fill(
            &prompts,
            &texts,
            &posted(&[
                ("name", "x"),
                ("job", "yes"),
                (&hours, "36"),
                ("job.measured", &offer),
                ("job.measured", &other),
            ]),
            &J::Null,
        )
        .unwrap();
        assert_eq!(filled.profile["job"]["hours"][&offer], 36);
        // Only an offer with hours may be marked measured.
        assert_eq!(filled.profile["job"]["measured"], json!([offer]));
        let measured = answer(&prompts, &filled, "job.measured")[0];
        assert_eq!(measured.offers.as_deref(), Some(&[offer.clone()][..]));
    }

    #[test]
    fn an_uploaded_profile_fills_the_form_and_reads_back_to_itself_with_unasked_fields_kept() {
        let (prompts, texts) = shipped(Lang::En);
        let policy = Policy::embedded().unwrap();
        let offer = policy.offers[0].item.id.clone();
        let profile = json!({
            "name": "Fine-tune 13B",
            "workload": {"task": "full_finetune", "model_params_b": 13, "parallelism": "data", "nodes": 1, "tokens_b": 4.6},
            "usage": {"gpus": 8, "hours_per_gpu_month": 300, "months": 2},
            "requirements": {"physical_isolation": false, "custom_kernel": true},
            "job": {"deadline_days": 10, "hours": {offer.clone(): 40}, "measured": [offer.clone()], "cadence": "weekly"},
            "notes_for_finance": "kept",
        });
        let posted = posted_from(&prompts, &profile);
        assert_eq!(posted["workload.model_params_b"], ["13"]);
        assert_eq!(posted["requirements.custom_kernel"], ["yes"]);
        assert_eq!(posted["job"], ["yes"]);
        let filled = fill(&prompts, &texts, &posted, &profile).unwrap();
        for (path, value) in [
            ("/name", json!("Fine-tune 13B")),
            ("/workload/tokens_b", json!(4.6)),
            ("/usage/months", json!(2)),
            ("/job/hours", json!({offer.clone(): 40})),
            ("/job/measured", json!([offer])),
            ("/job/cadence", json!("weekly")),
            ("/notes_for_finance", json!("kept")),
        ] {
            assert_eq!(filled.profile.pointer(path), Some(&value), "{path}");
        }
        // Closing the section drops the job, whatever the upload had.
        let mut closed = posted.clone();
        closed.insert("job".into(), vec![NO.into()]);
        let filled = fill(&prompts, &texts, &closed, &profile).unwrap();
        assert!(filled.profile.get("job").is_none());
    }
}
