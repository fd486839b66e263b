//! A rule file read once, as a generic YAML tree: its canonical JSON and its rule types.
//!
//! A `--rules` folder's files are read by serde-saphyr once each, into [`YamlTree`] (what its
//! `deserialize_any` gives, each node with the locations a `Spanned` value records, as
//! `build.rs` reads the embedded files). The revision's canonical JSON is written from the tree
//! (the same bytes [`crate::revision::canonical_yaml`] writes through `serde_json::Value`), and
//! the rule types are deserialized from it by [`TreeNode`], which answers them as the YAML
//! reader would (the same values and, for `Spanned` fields, the same locations). When the tree
//! cannot be read, or gives no rule file, the text is read as YAML as before, which also words
//! any error.

use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, Error, SeqDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_saphyr::{Location, Spanned};

use super::prepared::{Fields, Part};

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

/// A `T` read from the tree, as the YAML reader would read it; `None` when the tree does not
/// give one.
pub(super) fn read<T: DeserializeOwned>(tree: &Spanned<YamlTree>) -> Option<T> {
    T::deserialize(TreeNode(tree)).ok()
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

/// A deserializer over one node of a tree.
#[derive(Clone, Copy)]
pub(super) struct TreeNode<'de>(pub(super) &'de Spanned<YamlTree>);

impl<'de> de::Deserializer<'de> for TreeNode<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.0.value {
            YamlTree::Null => visitor.visit_unit(),
            YamlTree::Bool(b) => visitor.visit_bool(*b),
            YamlTree::I64(i) => visitor.visit_i64(*i),
            YamlTree::U64(u) => visitor.visit_u64(*u),
            YamlTree::F64(x) => visitor.visit_f64(*x),
            YamlTree::Str(s) => visitor.visit_borrowed_str(s),
            YamlTree::Seq(items) => {
                let mut seq = SeqDeserializer::new(items.iter().map(TreeNode));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            YamlTree::Map(entries) => visitor.visit_map(TreeEntries {
                entries,
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.value {
            YamlTree::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        // serde-saphyr's `Spanned<T>` asks for this name and reads its value and locations
        // from a map marked with its private key.
        if name == "__yaml_spanned" {
            visitor.visit_newtype_struct(SpannedTree(self.0))
        } else {
            visitor.visit_newtype_struct(self)
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match &self.0.value {
            YamlTree::Str(s) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
            _ => Err(de::Error::custom("only unit variants are read from a tree")),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
}

impl<'de> IntoDeserializer<'de, Error> for TreeNode<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// A mapping's entries, in the order written.
struct TreeEntries<'de> {
    entries: &'de [(String, Spanned<YamlTree>)],
    value: Option<&'de Spanned<YamlTree>>,
}

impl<'de> MapAccess<'de> for TreeEntries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(((key, value), rest)) = self.entries.split_first() else {
            return Ok(None);
        };
        self.entries = rest;
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(TreeNode(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A node read as serde-saphyr's `Spanned<T>`: the marked map of its value and locations.
struct SpannedTree<'de>(&'de Spanned<YamlTree>);

impl<'de> de::Deserializer<'de> for SpannedTree<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields::new(Part::Tree(self.0)))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
        struct enum
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
            "/benches/zen-peer/rules/policy.yaml"
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
