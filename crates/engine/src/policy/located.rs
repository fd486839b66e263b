//! One serde deserializer over YAML nodes that carry their locations, for both the build's
//! static tables (`prepared`) and a tree read at run time (`tree`).
//!
//! Both hold what serde-saphyr's `deserialize_any` gives for a rule file, each node with the
//! two locations a `Spanned` value records. This deserializer reads them into the rule types as
//! the YAML reader would: the same values and, where a type asks for serde-saphyr's
//! `Spanned<T>`, the same locations. Only the storage differs, which [`LocatedNode`] hides.

use serde::de::value::{BorrowedStrDeserializer, Error, SeqDeserializer, U32Deserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_saphyr::Location;

/// A location: line, column, span offset and length (characters), byte offset and length,
/// and source id, as serde-saphyr's `Location` holds them.
#[derive(Clone, Copy)]
pub(super) struct Loc(
    pub(super) u32,
    pub(super) u32,
    pub(super) u32,
    pub(super) u32,
    pub(super) u32,
    pub(super) u32,
    pub(super) u32,
);

impl Loc {
    /// The fields of `l`, as `build.rs` writes them into the tables.
    pub(super) fn of(l: Location) -> Self {
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

/// A node's value: a scalar, a sequence of nodes stored side by side, or a mapping of
/// `len` entries read with [`LocatedNode::entry`].
pub(super) enum NodeValue<'a, T> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(&'a str),
    Seq(&'a [T]),
    Map(usize),
}

/// A YAML node with its locations, however it is stored.
pub(super) trait LocatedNode: Sized {
    fn shape(&self) -> Result<NodeValue<'_, Self>, Error>;
    /// The key and value of a mapping's entry `i`, in the order written.
    fn entry(&self, i: usize) -> Result<(&str, &Self), Error>;
    /// Where the node is referenced and where it is defined (they differ for an alias).
    fn locations(&self) -> Result<(Loc, Loc), Error>;
}

/// A deserializer over one node.
pub(super) struct NodeReader<'a, T>(pub(super) &'a T);

impl<T> Clone for NodeReader<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for NodeReader<'_, T> {}

impl<'de, T: LocatedNode> de::Deserializer<'de> for NodeReader<'de, T> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.shape()? {
            NodeValue::Null => visitor.visit_unit(),
            NodeValue::Bool(b) => visitor.visit_bool(b),
            NodeValue::I64(i) => visitor.visit_i64(i),
            NodeValue::U64(u) => visitor.visit_u64(u),
            NodeValue::F64(x) => visitor.visit_f64(x),
            NodeValue::Str(s) => visitor.visit_borrowed_str(s),
            NodeValue::Seq(items) => {
                let mut seq = SeqDeserializer::new(items.iter().map(NodeReader));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            NodeValue::Map(len) => visitor.visit_map(Entries {
                node: self.0,
                next: 0,
                len,
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.shape()? {
            NodeValue::Null => visitor.visit_none(),
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
            visitor.visit_newtype_struct(Marked(Part::Spanned(self.0)))
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
        match self.0.shape()? {
            NodeValue::Str(s) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
            _ => Err(de::Error::custom("only unit variants are read from nodes")),
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

impl<'de, T: LocatedNode> IntoDeserializer<'de, Error> for NodeReader<'de, T> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// A mapping's entries, in the order written.
struct Entries<'de, T> {
    node: &'de T,
    next: usize,
    len: usize,
    value: Option<&'de T>,
}

impl<'de, T: LocatedNode> MapAccess<'de> for Entries<'de, T> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.next == self.len {
            return Ok(None);
        }
        let (key, value) = self.node.entry(self.next)?;
        self.next += 1;
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(NodeReader(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len - self.next)
    }
}

/// What a map of [`Fields`] describes: a `Spanned<T>`, a `Location` or a `Span`.
enum Part<'a, T> {
    Spanned(&'a T),
    Location(Loc),
    Span(Loc),
}

impl<T> Clone for Part<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Part<'_, T> {}

/// A [`Part`] read as the map its own `Deserialize` implementation expects.
struct Marked<'a, T>(Part<'a, T>);

impl<'de, T: LocatedNode> de::Deserializer<'de> for Marked<'de, T> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields {
            part: self.0,
            next: 0,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
        struct enum
    }
}

/// The fields of a `Spanned<T>`, a `Location` or a `Span`, by name, as their own
/// `Deserialize` implementations read them.
struct Fields<'a, T> {
    part: Part<'a, T>,
    next: usize,
}

impl<T> Fields<'_, T> {
    fn names(&self) -> &'static [&'static str] {
        match self.part {
            Part::Spanned(_) => &[
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

fn u32_field(v: u32) -> U32Deserializer<Error> {
    v.into_deserializer()
}

impl<'de, T: LocatedNode> MapAccess<'de> for Fields<'de, T> {
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
        let location = |l: Loc| Marked::<T>(Part::Location(l));
        match (self.part, self.next) {
            (Part::Spanned(_), 1) => seed.deserialize(().into_deserializer()),
            (Part::Spanned(n), 2) => seed.deserialize(NodeReader(n)),
            (Part::Spanned(n), 3) => seed.deserialize(location(n.locations()?.0)),
            (Part::Spanned(n), 4) => seed.deserialize(location(n.locations()?.1)),
            (Part::Location(l), 1) => seed.deserialize(u32_field(l.0)),
            (Part::Location(l), 2) => seed.deserialize(u32_field(l.1)),
            (Part::Location(l), 3) => seed.deserialize(Marked::<T>(Part::Span(l))),
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

/// Where byte `offset` of a scalar's `value` is written in the file `text`, for a scalar that
/// starts at `at`: the value read back through the YAML's folding (plain, quoted and block
/// scalars differ from their value only in whitespace, past a block's indicator line or a
/// quote). `None` where the two differ otherwise (an escape in a quoted scalar) or the place
/// is unknown; the caller then points at the scalar.
pub(crate) fn locate_in_scalar(
    text: &str,
    at: Location,
    value: &str,
    offset: usize,
) -> Option<crate::error::Position> {
    let start = if let Some(b) = at.span().byte_offset() {
        usize::try_from(b).ok()?
    } else {
        let line = usize::try_from(at.line()).ok()?.checked_sub(1)?;
        let column = usize::try_from(at.column()).ok()?.checked_sub(1)?;
        let line_start = if line == 0 {
            0
        } else {
            text.match_indices('\n').nth(line - 1)?.0 + 1
        };
        line_start
            + text[line_start..]
                .chars()
                .take(column)
                .map(char::len_utf8)
                .sum::<usize>()
    };
    let raw = text.get(start..)?;
    let mut ri = match raw.as_bytes().first() {
        Some(b'>' | b'|') => raw.find('\n')? + 1,
        Some(b'\'' | b'"') => 1,
        _ => 0,
    };
    let mut vi = 0;
    let mut matched_end = ri;
    let skip = |s: &str, mut i: usize| {
        while let Some(c) = s[i..].chars().next().filter(|c| c.is_whitespace()) {
            i += c.len_utf8();
        }
        i
    };
    let found = loop {
        vi = skip(value, vi);
        if vi >= value.len() {
            break matched_end;
        }
        ri = skip(raw, ri);
        if vi >= offset {
            break ri;
        }
        let vc = value[vi..].chars().next()?;
        if raw[ri..].chars().next()? != vc {
            return None;
        }
        vi += vc.len_utf8();
        ri += vc.len_utf8();
        matched_end = ri;
    };
    let absolute = start + found;
    let before = &text[..absolute];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(crate::error::Position {
        line: 1 + before.matches('\n').count(),
        column: 1 + before[line_start..].chars().count(),
    })
}
