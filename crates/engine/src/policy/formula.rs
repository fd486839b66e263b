//! A value as the rules write it: one expression, a record whose fields are each written on
//! a line of their own (`field: expression`), or first-hit cases (`- when: ... then: ...`, the
//! last without `when`). Records and cases nest, so a long map literal or a chain of
//! `a if c else (b if d else ...)` reads as YAML, each part with its own line in errors.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

use super::rules::ExprText;
use crate::lang::Words;

/// A fact's `expr:` or a select's `map:`.
#[derive(Debug, Clone)]
pub enum FormulaText {
    /// One expression.
    Expr(ExprText),
    /// A record: each field's value, in the order written.
    Record(IndexMap<String, FormulaText>),
    /// First-hit cases: the first row whose `when` is true gives the value; the last row has
    /// no `when`.
    Cases(Vec<CaseRow>),
}

/// One row of cases: a condition, and the value (`then:`) or the sentence (`says:`) it gives.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseRow {
    /// True or false; none on the last row (otherwise).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub when: Option<ExprText>,
    /// The value where this row is the first that applies (exactly one of `then` and `says`).
    #[serde(default)]
    pub then: Option<FormulaText>,
    /// The sentence where this row is the first that applies, in each language: text with
    /// `{{ expression }}` insertions (no `{% %}` tags), reading what the node's expressions read
    /// (the offer or item it is said for too). The value is the sentence in the memo's language.
    #[serde(default)]
    #[schemars(with = "Option<Words>")]
    pub says: Option<Spanned<Words>>,
}

impl FormulaText {
    /// Where it was written: its first expression's place.
    #[must_use]
    pub fn location(&self) -> Option<serde_saphyr::Location> {
        match self {
            FormulaText::Expr(e) => Some(e.referenced),
            FormulaText::Record(fields) => fields.values().find_map(FormulaText::location),
            FormulaText::Cases(rows) => rows.iter().find_map(|row| {
                let then = || row.then.as_ref().and_then(FormulaText::location);
                let says = || row.says.as_ref().map(|s| s.referenced);
                row.when
                    .as_ref()
                    .map(|w| w.referenced)
                    .or_else(then)
                    .or_else(says)
            }),
        }
    }
}

/// The shape read, before the expression text gets its place.
enum Written {
    Expr(String),
    Record(IndexMap<String, FormulaText>),
    Cases(Vec<CaseRow>),
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WrittenVisitor;

        impl<'de> Visitor<'de> for WrittenVisitor {
            type Value = Written;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an expression, a record `{field: expression, ...}`, or cases \
                     `- {when: ..., then: ...}` (the last without `when`)",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Written, E> {
                Ok(Written::Expr(v.to_owned()))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Written, E> {
                Ok(Written::Expr(v.to_string()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Written, E> {
                Ok(Written::Expr(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Written, E> {
                Ok(Written::Expr(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Written, E> {
                Ok(Written::Expr(v.to_string()))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Written, A::Error> {
                IndexMap::<String, FormulaText>::deserialize(MapAccessDeserializer::new(map))
                    .map(Written::Record)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Written, A::Error> {
                Vec::<CaseRow>::deserialize(SeqAccessDeserializer::new(seq)).map(Written::Cases)
            }
        }

        deserializer.deserialize_any(WrittenVisitor)
    }
}

impl<'de> Deserialize<'de> for FormulaText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<Written>::deserialize(deserializer)?;
        Ok(match spanned.value {
            Written::Expr(text) => {
                FormulaText::Expr(Spanned::new(text, spanned.referenced, spanned.defined))
            }
            Written::Record(fields) => FormulaText::Record(fields),
            Written::Cases(rows) => FormulaText::Cases(rows),
        })
    }
}

/// A value: an expression, a record of `field: value` lines, or first-hit cases
/// `- {when: ..., then: ...}`, the last without `when`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum FormulaShape {
    Expr(String),
    Number(f64),
    Bool(bool),
    Record(IndexMap<String, FormulaText>),
    Cases(Vec<CaseRow>),
}

impl JsonSchema for FormulaText {
    fn schema_name() -> Cow<'static, str> {
        "Formula".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        FormulaShape::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        expr: FormulaText,
    }

    fn read(yaml: &str) -> Result<FormulaText, String> {
        serde_saphyr::from_str::<Holder>(yaml)
            .map(|h| h.expr)
            .map_err(|e| e.to_string())
    }

    fn text(f: &FormulaText) -> &str {
        match f {
            FormulaText::Expr(e) => &e.value,
            other => panic!("not one expression: {other:?}"),
        }
    }

    #[test]
    fn a_scalar_is_one_expression_with_its_place() {
        let f = read("expr: a + 1\n").unwrap();
        assert_eq!(text(&f), "a + 1");
        assert_eq!(f.location().map(|l| (l.line(), l.column())), Some((1, 7)));
        // A YAML number or true-or-false is the expression it reads as.
        assert_eq!(text(&read("expr: 0.5\n").unwrap()), "0.5");
        assert_eq!(text(&read("expr: false\n").unwrap()), "false");
    }

    #[test]
    fn a_mapping_is_a_record_in_the_order_written() {
        let f =
            read("expr:\n  b: x.b\n  a:\n    - when: c\n      then: 1\n    - then: 2\n").unwrap();
        let FormulaText::Record(fields) = &f else {
            panic!("{f:?}")
        };
        assert_eq!(fields.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert!(matches!(&fields["a"], FormulaText::Cases(rows) if rows.len() == 2));
        assert_eq!(f.location().map(|l| l.line()), Some(2));
    }

    #[test]
    fn a_row_gives_a_value_or_says_a_sentence() {
        let f = read("expr:\n  - when: c\n    says: {en: \"x {{ y }}\", zh: 某}\n  - then: none\n")
            .unwrap();
        let FormulaText::Cases(rows) = &f else {
            panic!("{f:?}")
        };
        let says = rows[0].says.as_ref().expect("a sentence");
        assert_eq!(says.value.en, "x {{ y }}");
        assert_eq!(says.value.zh.as_deref(), Some("某"));
        assert!(rows[0].then.is_none() && rows[1].says.is_none());
        // A row's fields are known: a misspelt one is refused.
        let err = read("expr:\n  - when: c\n    than: 1\n").unwrap_err();
        assert!(err.contains("than"), "{err}");
        // A null is no expression.
        assert!(read("expr: ~\n").is_err());
    }
}
