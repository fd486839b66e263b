//! A rule file read once, as a generic YAML tree: its canonical JSON and its rule types.
//!
//! A `--rules` folder's files are read by serde-saphyr once each, into [`YamlTree`] (what its
//! `deserialize_any` gives, each node with the locations a `Spanned` value records, as
//! `build.rs` reads the embedded files). The revision's canonical JSON is written from the tree
//! (the same bytes [`crate::revision::canonical_yaml`] writes through `serde_json::Value`), and
//! the rule types are deserialized from it by `super::located`, which answers them as the YAML
//! reader would (the same values and, for `Spanned` fields, the same locations). When the tree
//! cannot be read, or gives no rule file, the text is read as YAML as before, which also words
//! any error.

use std::fmt;
use std::fmt::Write as _;

use serde::Deserialize;
use serde::de::value::Error;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};

use super::located::{Loc, LocatedNode, NodeReader, NodeValue};

/// One YAML node as serde-saphyr's `deserialize_any` gives it.
pub(super) enum YamlTree {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    Seq(Vec<Spanned<YamlTree>>),
    Map(Vec<(String, Spanned<YamlTree>)>),
}

/// The tree of one YAML text, read with the options the rule files are read with; `None`
/// when it is not one (the YAML reader then says why).
pub(super) fn parse(text: &str) -> Option<Spanned<YamlTree>> {
    let options = serde_saphyr::options! { strict_booleans: true };
    let tree: YamlTree = serde_saphyr::from_str_with_options(text, options).ok()?;
    Some(Spanned::new(tree, Location::UNKNOWN, Location::UNKNOWN))
}

/// Every number of the tree its text writes otherwise than in decimal digits: `1_000`, `0x10`,
/// `0o20`, `0b10000` (YAML 1.1 spellings, which the reader takes as numbers), each with where
/// it is written, its field's path (`facts[2].value`) and its text. A policy's numbers are
/// decimal, as a profile's are.
pub(super) fn non_decimal_numbers<'t>(
    tree: &Spanned<YamlTree>,
    text: &'t str,
) -> Vec<(Location, String, &'t str)> {
    let mut found = Vec::new();
    walk_numbers(tree, text, &mut String::new(), &mut found);
    found
}

fn walk_numbers<'t>(
    node: &Spanned<YamlTree>,
    text: &'t str,
    path: &mut String,
    found: &mut Vec<(Location, String, &'t str)>,
) {
    let at = path.len();
    match &node.value {
        YamlTree::I64(_) | YamlTree::U64(_) | YamlTree::F64(_) => {
            let span = node.defined.span();
            let written = span
                .byte_offset()
                .zip(span.byte_len())
                .and_then(|(start, len)| {
                    let start = usize::try_from(start).ok()?;
                    text.get(start..start.checked_add(usize::try_from(len).ok()?)?)
                });
            if let Some(written) = written.filter(|w| !is_decimal(w)) {
                found.push((node.defined, path.clone(), written));
            }
        }
        YamlTree::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                let _ = write!(path, "[{i}]");
                walk_numbers(item, text, path, found);
                path.truncate(at);
            }
        }
        YamlTree::Map(entries) => {
            for (key, value) in entries {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                walk_numbers(value, text, path, found);
                path.truncate(at);
            }
        }
        YamlTree::Null | YamlTree::Bool(_) | YamlTree::Str(_) => {}
    }
}

/// Whether a number is written in decimal digits: no `_` between them, no `0x`, `0o` or `0b`.
fn is_decimal(written: &str) -> bool {
    let digits = written.trim_start_matches(['+', '-']);
    let radix = digits
        .get(..2)
        .is_some_and(|p| ["0x", "0o", "0b"].iter().any(|r| p.eq_ignore_ascii_case(r)));
    !(written.contains('_') || radix)
}

/// A `T` read from the tree, as the YAML reader would read it; `None` when the tree does not
/// give one.
pub(super) fn read<T: DeserializeOwned>(tree: &Spanned<YamlTree>) -> Option<T> {
    T::deserialize(NodeReader(tree)).ok()
}

/// The canonical JSON text of the tree: what `serde_json::Value` makes of the same YAML
/// (a float that is not finite is `null`; of a key given twice, the last value counts),
/// written with mapping keys sorted and no whitespace.
pub(super) fn canonical(tree: &YamlTree) -> String {
    let mut out = Vec::new();
    write_canonical(tree, &mut out);
    // `serde_json` writes only valid UTF-8, and so does this.
    String::from_utf8(out).unwrap_or_default()
}

fn write_canonical(tree: &YamlTree, out: &mut Vec<u8>) {
    // Writing to a `Vec` cannot fail.
    match tree {
        YamlTree::Null => out.extend_from_slice(b"null"),
        YamlTree::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        YamlTree::I64(i) => {
            let _ = serde_json::to_writer(&mut *out, &serde_json::Number::from(*i));
        }
        YamlTree::U64(u) => {
            let _ = serde_json::to_writer(&mut *out, &serde_json::Number::from(*u));
        }
        YamlTree::F64(x) => match serde_json::Number::from_f64(*x) {
            Some(n) => {
                let _ = serde_json::to_writer(&mut *out, &n);
            }
            None => out.extend_from_slice(b"null"),
        },
        YamlTree::Str(s) => {
            let _ = serde_json::to_writer(&mut *out, s);
        }
        YamlTree::Seq(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(&item.value, out);
            }
            out.push(b']');
        }
        YamlTree::Map(entries) => {
            let mut sorted: Vec<(&String, &YamlTree)> =
                entries.iter().map(|(k, v)| (k, &v.value)).collect();
            // Stable: of equal keys the last written stays last, and is the one kept.
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            let mut first = true;
            for (i, (key, item)) in sorted.iter().enumerate() {
                if sorted.get(i + 1).is_some_and(|next| next.0 == *key) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                let _ = serde_json::to_writer(&mut *out, key);
                out.push(b':');
                write_canonical(item, out);
            }
            out.push(b'}');
        }
    }
}

impl<'de> Deserialize<'de> for YamlTree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = YamlTree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<YamlTree, E> {
        Ok(YamlTree::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<YamlTree, E> {
        Ok(YamlTree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlTree, D::Error> {
        YamlTree::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlTree, E> {
        Ok(YamlTree::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlTree, E> {
        Ok(YamlTree::I64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlTree, E> {
        Ok(YamlTree::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlTree, E> {
        Ok(YamlTree::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlTree, E> {
        Ok(YamlTree::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YamlTree, E> {
        Ok(YamlTree::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlTree, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(YamlTree::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlTree, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value()?));
        }
        Ok(YamlTree::Map(entries))
    }
}

impl LocatedNode for Spanned<YamlTree> {
    fn shape(&self) -> Result<NodeValue<'_, Self>, Error> {
        Ok(match &self.value {
            YamlTree::Null => NodeValue::Null,
            YamlTree::Bool(b) => NodeValue::Bool(*b),
            YamlTree::I64(i) => NodeValue::I64(*i),
            YamlTree::U64(u) => NodeValue::U64(*u),
            YamlTree::F64(x) => NodeValue::F64(*x),
            YamlTree::Str(s) => NodeValue::Str(s),
            YamlTree::Seq(items) => NodeValue::Seq(items),
            YamlTree::Map(entries) => NodeValue::Map(entries.len()),
        })
    }

    fn entry(&self, i: usize) -> Result<(&str, &Self), Error> {
        match &self.value {
            YamlTree::Map(entries) => entries
                .get(i)
                .map(|(key, value)| (key.as_str(), value))
                .ok_or_else(|| de::Error::custom("an entry out of the mapping")),
            _ => Err(de::Error::custom("not a mapping")),
        }
    }

    fn locations(&self) -> Result<(Loc, Loc), Error> {
        Ok((Loc::of(self.referenced), Loc::of(self.defined)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::policy::rules::RuleFile;
    use crate::source::Source;

    /// Every embedded rule file and the peer's reads from its tree into exactly what its YAML
    /// gives, locations included, and its canonical JSON is the revision's.
    #[test]
    fn trees_give_what_the_yaml_gives() {
        let peer = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../benches/zen-peer/rules/policy.yaml"
        ))
        .unwrap();
        let mut sources = crate::policy::Policy::embedded_sources();
        sources.push(Source::new("peer/policy.yaml", peer));
        for source in sources.iter().filter(|s| !crate::policy::is_sheet(s)) {
            let tree = parse(&source.text).expect("a tree");
            let from_tree: RuleFile = read(&tree).expect("the tree reads");
            let yaml: RuleFile = source.parse_yaml(ErrorKind::Rules).unwrap();
            assert_eq!(
                format!("{from_tree:#?}"),
                format!("{yaml:#?}"),
                "{}",
                source.name
            );
            assert_eq!(
                canonical(&tree.value),
                crate::revision::canonical_yaml(&source.text).unwrap(),
                "{}",
                source.name
            );
        }
    }

    /// The canonical JSON of odd values: keys given twice, floats, nested maps, unicode.
    #[test]
    fn canonical_as_serde_json_writes_it() {
        for text in [
            "b: 1\na: [1.5, -2, 18446744073709551615, .inf, .nan, ~, true, 'x\"é\\u0001']\n",
            "k: {z: 1, a: {y: [], b: {}}}\nk2: 1e300\n",
            "a: &x {p: 1}\nb: *x\n",
            "'1': x\n2: y\n",
            "a: 1\na: 2\n",
        ] {
            let Ok(expected) = crate::revision::canonical_yaml(text) else {
                assert!(parse(text).is_none(), "{text}");
                continue;
            };
            assert_eq!(canonical(&parse(text).unwrap().value), expected, "{text}");
        }
    }
}
