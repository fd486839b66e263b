//! Explanations as data: a criterion's `met:` / `not_met:` or a warning's `message:` written as
//! first-hit rows of a condition (`when:`) and a sentence (`says:`, one per language), with
//! named phrases a sentence inserts. The logic is written once, in the rows' conditions; a
//! sentence only inserts values (`{{ }}`), so a translation never restates a condition.
//!
//! A row's sentence is text with `{{ expression }}` insertions and `{{ phrases.NAME }}`, which
//! inserts the node's phrase `NAME` (itself first-hit rows, whose sentences may insert other
//! phrases, in no cycle). The first row whose `when:` is true
//! gives the sentence; the last row has no `when:` and says what holds otherwise, so every
//! profile gets a sentence. The rows are rendered as one text template of `{% if %}` /
//! `{% elif %}` / `{% else %}` over the sentences ([`Explanation::source`]), so they mean what
//! the same template written by hand means.
//!
//! A plain template (`{en: ..., zh: ...}`, as before) is still read, so a rules folder written
//! before rows existed loads unchanged.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::lang::{Lang, Words};

/// A criterion's or warning's explanation.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Explanation {
    /// A text template in one or two languages, logic and all.
    Template(Words),
    /// First-hit rows of condition and sentence.
    Rows(Vec<SentenceRow>),
}

/// One row: when it applies (none on the last row: otherwise), and what it says.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SentenceRow {
    /// True or false; the first row whose condition is true gives the sentence. The last row
    /// has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub when: Option<Spanned<String>>,
    /// The sentence, in each language: text with `{{ expression }}` and `{{ phrases.NAME }}`
    /// insertions, no `{% %}` tags.
    #[schemars(with = "Words")]
    pub says: Spanned<Words>,
}

/// A node's named phrases, inserted by `{{ phrases.NAME }}`.
pub type Phrases = IndexMap<String, Phrase>;

/// A phrase: first-hit rows, or first-hit rows said once for each item of a list.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Phrase {
    Rows(Vec<SentenceRow>),
    Each(Box<EachItem>),
}

/// A phrase said for each item of a list, the items joined (`{each: job_costs, as: j, where:
/// j.in_play, join: ', ', rows: [...]}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EachItem {
    /// An expression that gives the list.
    #[schemars(with = "String")]
    pub each: Spanned<String>,
    /// The name each item is bound to in `where:`, the rows' conditions and their sentences.
    #[serde(rename = "as", default = "EachItem::default_name")]
    pub name: String,
    /// Only the items for which this is true.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub filter: Option<Spanned<String>>,
    /// Said between two items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<Words>,
    /// What is said for one item: first-hit rows, the last without `when:`.
    pub rows: Vec<SentenceRow>,
}

impl EachItem {
    fn default_name() -> String {
        "item".to_owned()
    }
}

impl Phrase {
    /// The phrase's rows (for each item, if it goes over a list).
    #[must_use]
    pub fn rows(&self) -> &[SentenceRow] {
        match self {
            Phrase::Rows(rows) => rows,
            Phrase::Each(each) => &each.rows,
        }
    }
}

/// What a phrase insertion looks like: `{{ phrases.NAME }}`, spaces inside the braces optional.
const PHRASES: &str = "phrases.";

impl Explanation {
    /// The explanation as one text template in `lang` (English where a sentence has no
    /// translation): a template as written, rows as `{% if %}` ... `{% endif %}` over their
    /// sentences with each phrase inserted in place.
    #[must_use]
    pub fn source<'a>(&'a self, lang: Lang, phrases: &Phrases) -> Cow<'a, str> {
        match self {
            Explanation::Template(words) => Cow::Borrowed(words.get(lang)),
            Explanation::Rows(rows) => Cow::Owned(chain(rows, lang, phrases, &mut Vec::new())),
        }
    }

    /// Every sentence of the rows and of the phrases (none for a template), where it is written,
    /// with the phrase it belongs to (`None` for the explanation's own rows).
    #[must_use]
    pub fn sentences<'a>(
        &'a self,
        phrases: &'a Phrases,
    ) -> Vec<(Option<&'a str>, &'a Spanned<Words>)> {
        let Some(rows) = self.rows() else {
            return Vec::new();
        };
        let own = rows.iter().map(|r| (None, &r.says));
        let of_phrases = phrases.iter().flat_map(|(name, phrase)| {
            phrase
                .rows()
                .iter()
                .map(move |r| (Some(name.as_str()), &r.says))
        });
        own.chain(of_phrases).collect()
    }

    /// The rows, if the explanation is written as rows.
    #[must_use]
    pub fn rows(&self) -> Option<&[SentenceRow]> {
        match self {
            Explanation::Template(_) => None,
            Explanation::Rows(rows) => Some(rows),
        }
    }
}

/// `rows` as one template: `{% if w1 %}s1{% elif w2 %}s2{% else %}s3{% endif %}`. `inside` are
/// the phrases being inserted around it (a phrase that would insert itself is left as written).
fn chain<'p>(
    rows: &[SentenceRow],
    lang: Lang,
    phrases: &'p Phrases,
    inside: &mut Vec<&'p str>,
) -> String {
    let said = |row: &SentenceRow, inside: &mut Vec<&'p str>| {
        insert_phrases(row.says.value.get(lang), lang, phrases, inside)
    };
    if let [row] = rows
        && row.when.is_none()
    {
        return said(row, inside);
    }
    // Rows out of order (a `when:` missing before the last row, or on the last) still make a
    // template that compiles, so that the rules check reports them where they are written.
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let last = i + 1 == rows.len();
        let when = row.when.as_ref().map_or("true", |w| w.value.trim());
        match (i, last && row.when.is_none()) {
            (0, _) => {
                let _ = write!(out, "{{% if {when} %}}");
            }
            (_, true) => out.push_str("{% else %}"),
            (_, false) => {
                let _ = write!(out, "{{% elif {when} %}}");
            }
        }
        out.push_str(&said(row, inside));
    }
    out.push_str("{% endif %}");
    out
}

/// `sentence` (in `lang`) with each `{{ phrases.NAME }}` replaced by that phrase's rows as a
/// template: what a fact's or a select's sentence row is compiled from.
#[must_use]
pub fn with_phrases(sentence: &str, lang: Lang, phrases: &Phrases) -> String {
    insert_phrases(sentence, lang, phrases, &mut Vec::new())
}

/// `sentence` with each `{{ phrases.NAME }}` replaced by that phrase's rows as a template. An
/// unknown name, or one that would insert itself, says nothing: the rules check (reading
/// [`phrase_names`]) refuses the rules for both, where the sentence is written.
fn insert_phrases<'p>(
    sentence: &str,
    lang: Lang,
    phrases: &'p Phrases,
    inside: &mut Vec<&'p str>,
) -> String {
    let mut out = String::with_capacity(sentence.len());
    let mut rest = sentence;
    while let Some((before, name, after)) = next_phrase(rest) {
        out.push_str(before);
        match phrases.get_key_value(name) {
            Some((key, phrase)) if !inside.contains(&key.as_str()) => {
                inside.push(key);
                let said = chain(phrase.rows(), lang, phrases, inside);
                match phrase {
                    Phrase::Rows(_) => out.push_str(&said),
                    Phrase::Each(each) => {
                        let filter = each
                            .filter
                            .as_ref()
                            .map(|w| format!(" if ({})", w.value.trim()))
                            .unwrap_or_default();
                        let _ = write!(
                            out,
                            "{{% for {} in ({}){filter} %}}{said}",
                            each.name,
                            each.each.value.trim()
                        );
                        if let Some(join) = each
                            .join
                            .as_ref()
                            .map(|j| j.get(lang))
                            .filter(|j| !j.is_empty())
                        {
                            let _ = write!(out, "{{% if not loop.last %}}{join}{{% endif %}}");
                        }
                        out.push_str("{% endfor %}");
                    }
                }
                inside.pop();
            }
            // Nothing is said for it: the rules check refuses the rules with the reason.
            _ => {}
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The next `{{ phrases.NAME }}` in `text`: the text before it, the name, the text after it.
fn next_phrase(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some((open, inside, end)) = next_insertion(text, from) {
        if let Some(name) = inside.strip_prefix(PHRASES)
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Some((&text[..open], name, &text[end..]));
        }
        from = end;
    }
    None
}

/// The first `{{ }}` in `text` at or after byte `from`: where it opens, the expression inside
/// (whitespace control and spaces trimmed), and where it ends.
fn next_insertion(text: &str, from: usize) -> Option<(usize, &str, usize)> {
    let open = text[from..].find("{{")? + from;
    let close = text[open..].find("}}")? + open;
    let inside = text[open + 2..close].trim_matches(|c: char| c == '-' || c.is_whitespace());
    Some((open, inside, close + 2))
}

/// The expressions `sentence` inserts (the text inside each `{{ }}`, whitespace control and
/// spaces trimmed), in order.
#[must_use]
pub fn insertions(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some((_, inside, end)) = next_insertion(sentence, from) {
        out.push(inside);
        from = end;
    }
    out
}

/// The phrase names `sentence` inserts, in order.
#[must_use]
pub fn phrase_names(sentence: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = sentence;
    while let Some((_, name, after)) = next_phrase(rest) {
        names.push(name);
        rest = after;
    }
    names
}

impl<'de> Deserialize<'de> for Explanation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ExplanationVisitor;

        impl<'de> Visitor<'de> for ExplanationVisitor {
            type Value = Explanation;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a text, `{en: ..., zh: ...}`, or rows `- {when: ..., says: ...}` (the last without `when`)",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Explanation, E> {
                Ok(Explanation::Template(Words::from(v)))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Explanation, A::Error> {
                Words::deserialize(MapAccessDeserializer::new(map)).map(Explanation::Template)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Explanation, A::Error> {
                Vec::<SentenceRow>::deserialize(SeqAccessDeserializer::new(seq))
                    .map(Explanation::Rows)
            }
        }

        deserializer.deserialize_any(ExplanationVisitor)
    }
}

impl<'de> Deserialize<'de> for Phrase {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PhraseVisitor;

        impl<'de> Visitor<'de> for PhraseVisitor {
            type Value = Phrase;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "rows `- {when: ..., says: ...}`, or `{each: LIST, as: NAME, rows: [...]}` for each item of a list",
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Phrase, A::Error> {
                EachItem::deserialize(MapAccessDeserializer::new(map))
                    .map(|each| Phrase::Each(Box::new(each)))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Phrase, A::Error> {
                Vec::<SentenceRow>::deserialize(SeqAccessDeserializer::new(seq)).map(Phrase::Rows)
            }
        }

        deserializer.deserialize_any(PhraseVisitor)
    }
}

/// First-hit rows of `when:` and `says:`, or `{each: LIST, as: NAME, where:, join:, rows:}` said
/// for each item of a list.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum PhraseShape {
    Rows(Vec<SentenceRow>),
    Each(Box<EachItem>),
}

impl JsonSchema for Phrase {
    fn schema_name() -> Cow<'static, str> {
        "Phrase".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        PhraseShape::json_schema(generator)
    }
}

/// A text (plain, or `{en: ..., zh: ...}`), or first-hit rows of `when:` and `says:`, the last
/// without `when:`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum ExplanationShape {
    Template(Words),
    Rows(Vec<SentenceRow>),
}

impl JsonSchema for Explanation {
    fn schema_name() -> Cow<'static, str> {
        "Explanation".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ExplanationShape::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(yaml: &str) -> Explanation {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn rows_become_one_first_hit_template_per_language() {
        let e = rows(
            "- when: a > 1\n  says: {en: 'big {{ a }}', zh: '大 {{ a }}'}\n\
             - when: b\n  says: 'b only'\n\
             - says: {en: 'else{{ phrases.tail }}.', zh: '否则{{phrases.tail}}。'}\n",
        );
        let mut phrases = Phrases::new();
        phrases.insert(
            "tail".into(),
            serde_saphyr::from_str("- when: c\n  says: {en: ' (c)', zh: '（c）'}\n- says: ''\n")
                .unwrap(),
        );
        assert_eq!(
            e.source(Lang::En, &phrases),
            "{% if a > 1 %}big {{ a }}{% elif b %}b only{% else %}else{% if c %} (c){% else %}{% endif %}.{% endif %}"
        );
        // A sentence without a translation says it in English.
        assert_eq!(
            e.source(Lang::Zh, &phrases),
            "{% if a > 1 %}大 {{ a }}{% elif b %}b only{% else %}否则{% if c %}（c）{% else %}{% endif %}。{% endif %}"
        );
        assert_eq!(
            phrase_names("x {{ phrases.a }} {{ b }} {{- phrases.c_2 -}}"),
            ["a", "c_2"]
        );
        assert_eq!(
            insertions("x {{ phrases.a }} {{b | num}} {{- c -}} {{ unclosed"),
            ["phrases.a", "b | num", "c"]
        );
    }

    #[test]
    fn a_phrase_for_each_item_is_a_loop_joined_in_each_language() {
        let e = rows("- says: {en: 'Slow: {{ phrases.runs }}.', zh: '慢：{{ phrases.runs }}。'}\n");
        let mut phrases = Phrases::new();
        phrases.insert(
            "runs".into(),
            serde_saphyr::from_str(
                "{each: job_costs, as: j, where: j.in_play, join: {en: ', ', zh: '、'},\n \
                 rows: [{when: 'j.units > 1', says: '{{ j.units }} × {{ j.title }}'}, {says: '{{ j.title }}'}]}",
            )
            .unwrap(),
        );
        assert_eq!(
            e.source(Lang::En, &phrases),
            "Slow: {% for j in (job_costs) if (j.in_play) %}{% if j.units > 1 %}{{ j.units }} × {{ j.title }}\
             {% else %}{{ j.title }}{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}."
        );
        assert!(
            e.source(Lang::Zh, &phrases)
                .contains("{% if not loop.last %}、{% endif %}")
        );
        // Without `as:` an item is `item`; without `join:` nothing is said between items.
        let bare: Phrase =
            serde_saphyr::from_str("{each: xs, rows: [{says: '{{ item }}'}]}").unwrap();
        let mut phrases = Phrases::new();
        phrases.insert("xs".into(), bare);
        assert_eq!(
            rows("- says: '{{ phrases.xs }}'\n").source(Lang::En, &phrases),
            "{% for item in (xs) %}{{ item }}{% endfor %}"
        );
    }

    #[test]
    fn one_row_without_condition_is_its_sentence_and_a_template_stays_as_written() {
        let e = rows("- says: {en: 'always {{ x }}'}\n");
        assert_eq!(e.source(Lang::En, &Phrases::new()), "always {{ x }}");
        let t: Explanation =
            serde_saphyr::from_str("{en: 'a {% if x %}b{% endif %}', zh: 'c'}").unwrap();
        assert_eq!(t.source(Lang::Zh, &Phrases::new()), "c");
        assert!(t.rows().is_none());
        // An unknown phrase says nothing (the rules check refuses it), and neither does a phrase
        // that would insert itself.
        let none = Phrases::new();
        assert_eq!(
            insert_phrases("a {{ phrases.nope }} b", Lang::En, &none, &mut Vec::new()),
            "a  b"
        );
        let mut looped = Phrases::new();
        looped.insert(
            "a".into(),
            serde_saphyr::from_str("- says: 'x{{ phrases.a }}'\n").unwrap(),
        );
        assert_eq!(
            insert_phrases("{{ phrases.a }}", Lang::En, &looped, &mut Vec::new()),
            "x"
        );
        // Rows out of order still make a template that compiles (the rules check refuses them).
        let e = rows("- says: a\n- when: c\n  says: b\n");
        assert_eq!(
            e.source(Lang::En, &none),
            "{% if true %}a{% elif c %}b{% endif %}"
        );
    }
}
