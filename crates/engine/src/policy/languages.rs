//! Texts missing a language: in a policy whose texts come as `{en: ..., zh: ...}`, a text with
//! `en:` but no `zh:` (or written as plain English) would show English in a Chinese memo.
//! `decide validate` reports each one with its file, line and column, naming the language it
//! lacks. Which values are texts is read off the rule-file schema (the `Words` fields); the
//! catalog's offers are free-form, so there only a field written as `{en: ...}` is a text.

use std::collections::BTreeSet;

use serde_json::Value;
use serde_saphyr::Spanned;

use super::tree::{self, YamlTree};
use crate::error::{Error, ErrorKind};
use crate::source::Source;

/// The keys a text written in several languages may have.
const LANGUAGE_KEYS: [&str; 2] = ["en", "zh"];

/// A text in the rules (a map of language keys to strings, or a plain string, which is
/// English), where it is.
struct TextAt {
    source: usize,
    path: String,
    location: serde_saphyr::Location,
    languages: BTreeSet<&'static str>,
    /// Written as a plain string rather than a map of languages.
    plain: bool,
}

/// An error for every text of the rule files in `sources` that lacks a language other texts
/// of the policy are written in (quote sheets are left out: their `_zh` columns are optional by
/// design). A policy written in one language throughout has nothing to report.
#[must_use]
pub fn missing_languages(sources: &[Source]) -> Vec<Error> {
    let schema = Schema {
        // The rule files' schema as `decide schema rules` writes it (draft-07: `definitions`).
        root: schemars::generate::SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<super::rules::RuleFile>()
            .to_value(),
    };
    let mut texts = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        if super::is_sheet(source) {
            continue;
        }
        if let Some(root) = tree::parse(&source.text) {
            collect(&schema, &[&schema.root], (i, ""), &root, &mut texts);
        }
    }
    let spoken: BTreeSet<&str> = texts.iter().flat_map(|t| t.languages.clone()).collect();
    if spoken.len() < 2 {
        return Vec::new();
    }
    let names = |langs: &BTreeSet<&str>| {
        langs
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    texts
        .iter()
        .filter(|t| t.languages != spoken)
        .map(|t| {
            let missing: BTreeSet<&str> = spoken.difference(&t.languages).copied().collect();
            let source = &sources[t.source];
            let words = missing
                .iter()
                .map(|l| language_name(l))
                .collect::<Vec<_>>()
                .join(" and ");
            let has = if t.plain {
                "is plain text (read as `en`), with".to_owned()
            } else {
                format!("has {} but", names(&t.languages))
            };
            Error::new(
                ErrorKind::Rules,
                format!(
                    "this text {has} no {}: the policy's other texts are in {}",
                    names(&missing),
                    names(&spoken)
                ),
            )
            .at(&source.name, &source.text, super::position(t.location))
            .field(t.path.clone())
            .help(format!(
                "write it as `{{en: \"...\", zh: \"...\"}}` with the {words}; a memo in that \
                 language would otherwise show this text untranslated"
            ))
        })
        .collect()
}

/// The name of a language key, for the help line.
fn language_name(key: &str) -> String {
    match key {
        "zh" => "Chinese (`zh`)".to_owned(),
        "en" => "English (`en`)".to_owned(),
        other => format!("`{other}`"),
    }
}

/// The schema of a rule file, to tell which values are texts (`Words`) and which are ids,
/// expressions or data.
struct Schema {
    root: serde_json::Value,
}

impl Schema {
    /// The schemas `schema` stands for: `$ref`s followed, `anyOf`/`oneOf`/`allOf` branches
    /// flattened; with whether one of them is `Words`.
    fn expand<'s>(&'s self, schema: &'s Value, out: &mut Vec<&'s Value>) -> bool {
        if let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
        {
            if name == "Words" {
                return true;
            }
            return match self.root["definitions"].get(name) {
                Some(def) => self.expand(def, out),
                None => false,
            };
        }
        let mut words = false;
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                words |= self.expand(branch, out);
            }
        }
        out.push(schema);
        words
    }
}

/// Every text under `node` (whose possible schemas are `schemas`), with its dotted path. The
/// catalog's offers are free-form: a field is a text there when another offer writes it as
/// one (`offer_texts`).
fn collect(
    schema: &Schema,
    schemas: &[&Value],
    at: (usize, &str),
    node: &Spanned<YamlTree>,
    out: &mut Vec<TextAt>,
) {
    let (source, path) = at;
    let mut expanded = Vec::new();
    let mut words = false;
    for s in schemas {
        words |= schema.expand(s, &mut expanded);
    }
    // An explanation is a text or rows of texts: rows are read below, item by item.
    if words && !matches!(node.value, YamlTree::Seq(_)) {
        if let Some(text) = text_at(source, path, node) {
            out.push(text);
        }
        return;
    }
    match &node.value {
        YamlTree::Map(entries) => {
            for (key, value) in entries {
                let subs: Vec<&Value> = expanded
                    .iter()
                    .filter_map(|s| {
                        s.get("properties")
                            .and_then(|p| p.get(key))
                            .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
                    })
                    .collect();
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if path == "offers" {
                    collect_offers(source, value, out);
                } else if !subs.is_empty() {
                    collect(schema, &subs, (source, &path), value, out);
                }
            }
        }
        YamlTree::Seq(items) => {
            let subs: Vec<&Value> = expanded.iter().filter_map(|s| s.get("items")).collect();
            if subs.is_empty() {
                return;
            }
            for (i, item) in items.iter().enumerate() {
                collect(schema, &subs, (source, &format!("{path}[{i}]")), item, out);
            }
        }
        _ => {}
    }
}

/// `node` as a text: a map of language keys to strings, or a plain string (English).
fn text_at(source: usize, path: &str, node: &Spanned<YamlTree>) -> Option<TextAt> {
    let languages = match &node.value {
        // Nothing said (a phrase that is empty in this case): no text to translate.
        YamlTree::Str(s) if s.is_empty() => return None,
        YamlTree::Str(_) => BTreeSet::from(["en"]),
        YamlTree::Map(entries) => LANGUAGE_KEYS
            .into_iter()
            .filter(|l| entries.iter().any(|(k, _)| k.as_str() == *l))
            .collect(),
        _ => return None,
    };
    if languages.is_empty() {
        return None;
    }
    Some(TextAt {
        source,
        path: path.to_owned(),
        location: node.referenced,
        languages,
        plain: matches!(node.value, YamlTree::Str(_)),
    })
}

/// Whether `node` is written as a text in languages: `{en: ..., zh: ...}`.
fn is_text_map(node: &YamlTree) -> bool {
    match node {
        YamlTree::Map(entries) => {
            entries.iter().any(|(k, _)| k == "en")
                && entries.iter().all(|(k, v)| {
                    LANGUAGE_KEYS.contains(&k.as_str()) && matches!(v.value, YamlTree::Str(_))
                })
        }
        _ => false,
    }
}

/// The texts of the catalog's offers (`offers:` of one file): the fields written as text maps.
/// A plain string there is data the rules read and show as written (a model name, a size, a
/// command), the same in every language, so it is not a text missing one.
fn collect_offers(source: usize, offers: &Spanned<YamlTree>, out: &mut Vec<TextAt>) {
    let YamlTree::Seq(items) = &offers.value else {
        return;
    };
    let mut fields: Vec<(usize, String, &Spanned<YamlTree>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        leaves(i, "", item, &mut fields);
    }
    for (i, field, node) in &fields {
        if is_text_map(&node.value)
            && let Some(text) = text_at(source, &format!("offers[{i}].{field}"), node)
        {
            out.push(text);
        }
    }
}

/// The fields of one offer as dotted paths, text maps kept whole.
fn leaves<'t>(
    offer: usize,
    path: &str,
    node: &'t Spanned<YamlTree>,
    out: &mut Vec<(usize, String, &'t Spanned<YamlTree>)>,
) {
    match &node.value {
        YamlTree::Map(entries) if !is_text_map(&node.value) => {
            for (key, value) in entries {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                leaves(offer, &path, value, out);
            }
        }
        _ => out.push((offer, path.to_owned(), node)),
    }
}
