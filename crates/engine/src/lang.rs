//! The languages people read: a policy text in English and Chinese, and picking one.
//!
//! Every text a policy shows (titles, reasons, warning messages, checklist items, questions)
//! is written either as plain text, which is English, or as `{en: ..., zh: ...}`. The graph is
//! compiled for one language, so evaluation and rendering never branch on it: a Chinese memo is
//! the same decision with the Chinese words. A text without `zh` falls back to English.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

/// A language a memo and the questions can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// 中文 (Chinese).
    Zh,
}

impl Lang {
    /// Every language, English first (the command line's `--lang` offers these).
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// `en` or `zh`.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Words shown to people: English, and optionally Chinese.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Words {
    pub en: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zh: Option<String>,
}

impl Words {
    /// The text in `lang`, falling back to English.
    #[must_use]
    pub fn get(&self, lang: Lang) -> &str {
        match (lang, &self.zh) {
            (Lang::Zh, Some(zh)) => zh,
            _ => &self.en,
        }
    }

    /// Whether the words have a version in `lang` (English always does).
    #[must_use]
    pub fn has(&self, lang: Lang) -> bool {
        lang == Lang::En || self.zh.is_some()
    }
}

/// Whether `value` is text in two languages as a catalog may write it: a mapping with `en` (text)
/// and optionally `zh` (text), nothing else.
#[must_use]
pub fn is_words(value: &serde_json::Value) -> bool {
    value.as_object().is_some_and(|m| {
        m.get("en").is_some_and(serde_json::Value::is_string)
            && m.iter()
                .all(|(k, v)| (k == "en" || k == "zh") && v.is_string())
    })
}

/// `value` with every two-language text ([`is_words`]) replaced by its text in `lang` (English
/// where there is no `zh`): what expressions and templates see of a catalog offer.
#[must_use]
pub fn localize(value: &serde_json::Value, lang: Lang) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        J::Object(m) if is_words(value) => {
            let zh = m.get("zh").filter(|_| lang == Lang::Zh);
            zh.or_else(|| m.get("en")).cloned().unwrap_or(J::Null)
        }
        J::Object(m) => J::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), localize(v, lang)))
                .collect(),
        ),
        J::Array(items) => J::Array(items.iter().map(|v| localize(v, lang)).collect()),
        other => other.clone(),
    }
}

impl From<&str> for Words {
    fn from(en: &str) -> Self {
        Words {
            en: en.to_owned(),
            zh: None,
        }
    }
}

impl<'de> Deserialize<'de> for Words {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WordsVisitor;

        impl<'de> Visitor<'de> for WordsVisitor {
            type Value = Words;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("text, or a map `{en: ..., zh: ...}`")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Words, E> {
                Ok(Words::from(v))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Words, A::Error> {
                let (mut en, mut zh) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "en" if en.is_none() => en = Some(map.next_value::<String>()?),
                        "zh" if zh.is_none() => zh = Some(map.next_value::<String>()?),
                        "en" | "zh" => return Err(de::Error::duplicate_field("en or zh")),
                        other => return Err(de::Error::unknown_field(other, &["en", "zh"])),
                    }
                }
                let en = en.ok_or_else(|| de::Error::missing_field("en"))?;
                Ok(Words { en, zh })
            }
        }

        deserializer.deserialize_any(WordsVisitor)
    }
}

/// How [`Words`] look in a JSON Schema: text, or the two languages.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum WordsShape {
    Text(String),
    Languages {
        /// English.
        en: String,
        /// Chinese.
        #[serde(default)]
        zh: Option<String>,
    },
}

impl JsonSchema for Words {
    fn schema_name() -> Cow<'static, str> {
        "Words".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        WordsShape::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_text_or_both_languages() {
        let plain: Words = serde_saphyr::from_str("hello").unwrap();
        assert_eq!(plain.get(Lang::Zh), "hello");
        assert!(!plain.has(Lang::Zh));
        let both: Words = serde_saphyr::from_str("{en: hello, zh: 你好}").unwrap();
        assert_eq!(both.get(Lang::En), "hello");
        assert_eq!(both.get(Lang::Zh), "你好");
        let err = serde_saphyr::from_str::<Words>("{en: a, fr: b}").unwrap_err();
        assert!(err.to_string().contains("fr"), "{err}");
        let err = serde_saphyr::from_str::<Words>("{zh: b}").unwrap_err();
        assert!(err.to_string().contains("en"), "{err}");
    }
}
