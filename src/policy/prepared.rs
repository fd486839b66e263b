//! The embedded rule files as `build.rs` parsed them: read into the rule types without YAML.
//!
//! `build.rs` reads every embedded rule file with serde-saphyr once, as generic nodes (what its
//! `deserialize_any` gives, each node with the locations a `Spanned` value would record), and
//! writes them as static tables. At run time a rule file whose text is one of those files is
//! deserialized from its table by [`Tables`], a serde deserializer that answers the rule
//! types exactly as the YAML reader would: the same values and, for `Spanned` fields, the
//! same locations, so every message and output stays the same. Anything the tables cannot give
//! (another text, a value the generic node does not fit) is read from the YAML as before,
//! which also words any error.

use serde::de::value::{BorrowedStrDeserializer, Error, SeqDeserializer, U32Deserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;

use serde_saphyr::{Location, Spanned};

use super::tree::{TreeNode, YamlTree};
use crate::source::Source;

/// One YAML node: its value, and the index of its `referenced` and `defined` locations.
pub(super) struct YamlNode(Value, u32, u32);

/// A node's value as serde-saphyr's `deserialize_any` gave it; a sequence's items are the
/// nodes `start..start + len` of [`NODES`], a mapping's entries the entries of [`ENTRIES`].
/// (The shipped rules may not use every kind of value.)
#[allow(dead_code)]
pub(super) enum Value {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    /// The bits of a 64-bit float (exactly the number read).
    F64(u64),
    Str(&'static str),
    Seq(u32, u32),
    Map(u32, u32),
}

/// A location: line, column, span offset and length (characters), byte offset and length,
/// and source id, as serde-saphyr's `Location` holds them.
#[derive(Clone, Copy)]
pub(super) struct Loc(u32, u32, u32, u32, u32, u32, u32);

impl Loc {
    /// The fields of `l`, as `build.rs` writes them into the tables.
    fn of(l: Location) -> Self {
        // serde-saphyr stores each of these in 32 bits (the unknown ones as `u32::MAX`).
        let n = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let unknown = serde_saphyr::Span::UNKNOWN.offset();
        let span = l.span();
        Loc(
            n(l.line()),
            n(l.column()),
            n(span.offset()),
            n(span.len()),
            n(span.byte_offset().unwrap_or(unknown)),
            n(span.byte_len().unwrap_or(unknown)),
            l.source_id(),
        )
    }
}

use Value::{Bool, F64, I64, Map, Null, Seq, Str, U64};

#[allow(clippy::unreadable_literal, unused_imports)]
mod tables {
    use super::{Bool, F64, I64, Loc as L, Map, Null, Seq, Str, U64, YamlNode as N};
    use super::{Loc, YamlNode};
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}
use tables::{ENTRIES, FILES, LOCATIONS, NODES};

/// The rule file `source` read from the build's tables, when its text is one of the embedded
/// rule files and the tables give a `T`; `None` otherwise (read the YAML then).
pub(crate) fn read<T: DeserializeOwned>(source: &Source) -> Option<T> {
    let text: &str = &source.text;
    let &(_, root) = FILES
        .iter()
        .find(|(embedded, _)| embedded.len() == text.len() && *embedded == text)?;
    T::deserialize(Tables(node(root)?)).ok()
}

fn node(index: u32) -> Option<&'static YamlNode> {
    NODES.get(usize::try_from(index).ok()?)
}

fn range<T>(table: &'static [T], start: u32, len: u32) -> Result<&'static [T], Error> {
    let start = start as usize;
    table
        .get(start..start + len as usize)
        .ok_or_else(|| de::Error::custom("a prepared table is cut short"))
}

/// A deserializer over one node of the tables.
#[derive(Clone, Copy)]
struct Tables(&'static YamlNode);

impl<'de> de::Deserializer<'de> for Tables {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.0 {
            Null => visitor.visit_unit(),
            Bool(b) => visitor.visit_bool(b),
            I64(i) => visitor.visit_i64(i),
            U64(u) => visitor.visit_u64(u),
            F64(bits) => visitor.visit_f64(f64::from_bits(bits)),
            Str(s) => visitor.visit_borrowed_str(s),
            Seq(start, len) => {
                let items = range(NODES, start, len)?.iter().map(Tables);
                let mut seq = SeqDeserializer::new(items);
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Map(start, len) => visitor.visit_map(Entries {
                entries: range(ENTRIES, start, len)?,
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.0 {
            Null => visitor.visit_none(),
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
            visitor.visit_newtype_struct(SpannedNode(self.0))
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
        match self.0.0 {
            Str(s) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
            _ => Err(de::Error::custom("only unit variants are prepared")),
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

impl IntoDeserializer<'_, Error> for Tables {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// A mapping's entries, in the order written.
struct Entries {
    entries: &'static [(&'static str, u32)],
    value: Option<u32>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((&(key, value), rest)) = self.entries.split_first() else {
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
            .and_then(node)
            .ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(Tables(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A node read as serde-saphyr's `Spanned<T>`: the marked map of its value and locations.
struct SpannedNode(&'static YamlNode);

impl<'de> de::Deserializer<'de> for SpannedNode {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields::new(Part::Spanned(self.0)))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
}

/// What a map of [`Fields`] describes.
#[derive(Clone, Copy)]
pub(super) enum Part<'a> {
    Spanned(&'static YamlNode),
    /// A node of a tree read at run time (`super::tree`).
    Tree(&'a Spanned<YamlTree>),
    Location(Loc),
    Span(Loc),
}

/// The fields of a `Spanned<T>`, a `Location` or a `Span`, by name, as their own
/// `Deserialize` implementations read them.
pub(super) struct Fields<'a> {
    part: Part<'a>,
    next: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn new(part: Part<'a>) -> Self {
        Fields { part, next: 0 }
    }

    fn names(&self) -> &'static [&'static str] {
        match self.part {
            Part::Spanned(_) | Part::Tree(_) => &[
                "__serde_saphyr_private_spanned",
                "value",
                "referenced",
                "defined",
            ],
            Part::Location(_) => &["line", "column", "span", "source_id"],
            Part::Span(_) => &["offset", "len", "byte_info"],
        }
    }
}

fn location(index: u32) -> Result<&'static Loc, Error> {
    LOCATIONS
        .get(index as usize)
        .ok_or_else(|| de::Error::custom("a location out of the table"))
}

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(&name) = self.names().get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(BorrowedStrDeserializer::new(name))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let u32_field = |v: u32| seed_u32(v);
        match (self.part, self.next) {
            (Part::Spanned(_) | Part::Tree(_), 1) => seed.deserialize(().into_deserializer()),
            (Part::Spanned(n), 2) => seed.deserialize(Tables(n)),
            (Part::Spanned(n), 3) => seed.deserialize(LocationOf(Part::Location(*location(n.1)?))),
            (Part::Spanned(n), 4) => seed.deserialize(LocationOf(Part::Location(*location(n.2)?))),
            (Part::Tree(t), 2) => seed.deserialize(TreeNode(t)),
            (Part::Tree(t), 3) => {
                seed.deserialize(LocationOf(Part::Location(Loc::of(t.referenced))))
            }
            (Part::Tree(t), 4) => seed.deserialize(LocationOf(Part::Location(Loc::of(t.defined)))),
            (Part::Location(l), 1) => seed.deserialize(u32_field(l.0)),
            (Part::Location(l), 2) => seed.deserialize(u32_field(l.1)),
            (Part::Location(l), 3) => seed.deserialize(LocationOf(Part::Span(l))),
            (Part::Location(l), 4) => seed.deserialize(u32_field(l.6)),
            (Part::Span(l), 1) => seed.deserialize(u32_field(l.2)),
            (Part::Span(l), 2) => seed.deserialize(u32_field(l.3)),
            (Part::Span(l), 3) => {
                seed.deserialize(SeqDeserializer::<_, Error>::new([l.4, l.5].into_iter()))
            }
            _ => Err(de::Error::custom("a value without its key")),
        }
    }
}

fn seed_u32(v: u32) -> U32Deserializer<Error> {
    v.into_deserializer()
}

/// A `Location` or its `Span`, as a map of its fields.
struct LocationOf(Part<'static>);

impl<'de> de::Deserializer<'de> for LocationOf {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields::new(self.0))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::policy::rules::RuleFile;

    /// Every embedded rule file reads from the tables into exactly what its YAML gives,
    /// locations included.
    #[test]
    fn tables_give_what_the_yaml_gives() {
        let sources = crate::policy::Policy::embedded_sources();
        let rule_files: Vec<_> = sources
            .iter()
            .filter(|s| !crate::policy::is_sheet(s))
            .collect();
        assert_eq!(rule_files.len(), FILES.len());
        for source in rule_files {
            let prepared: RuleFile = read(source).expect("the tables read");
            let yaml: RuleFile = source.parse_yaml(ErrorKind::Rules).unwrap();
            assert_eq!(
                format!("{prepared:#?}"),
                format!("{yaml:#?}"),
                "{}",
                source.name
            );
        }
    }

    /// Another text is not read from the tables.
    #[test]
    fn another_text_is_read_as_yaml() {
        let source = Source::new("rules/x.yaml", "policy: {name: x, version: '1'}\n");
        assert!(read::<RuleFile>(&source).is_none());
    }
}
