//! Canonical JSON straight from a typed value: the bytes `revision` writes from a `serde_json::Value`.
//!
//! A profile's revision hashes its canonical JSON (mapping keys sorted, no whitespace). Going
//! through `serde_json::Value` first allocates every key and value of the profile, then every
//! key again to sort it: most of the cost of a revision (5.3 µs a profile, eight times the
//! parsing of its JSON line). This serializer writes into one buffer instead: a mapping's
//! entries are written as they come, then put in key order in place. Scalars and keys are
//! written by `serde_json` itself, so numbers and strings read exactly as a `Value`'s do.

use std::borrow::Cow;
use std::ops::Range;

use serde::Serialize;
use serde::ser::{self, Impossible};
// The error of a value canonical JSON cannot hold (a mapping key that is not text or a number).
use serde_json::Error;

/// The canonical JSON of `value`: what `serde_json::to_value` and then the revision's
/// canonical writer give, without the intermediate value.
///
/// # Errors
/// A mapping key that is not text, a number or a character (as `serde_json::to_value`).
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(512);
    value.serialize(Canonical { out: &mut out })?;
    Ok(out)
}

struct Canonical<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Canonical<'a> {
    /// A scalar, as `serde_json` writes it (and as a `Value` holding it prints).
    fn scalar<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.out, v)
    }

    /// Opens `{"variant":` for an enum variant that carries data.
    fn open_variant(&mut self, variant: &str) -> Result<(), Error> {
        self.out.push(b'{');
        serde_json::to_writer(&mut *self.out, variant)?;
        self.out.push(b':');
        Ok(())
    }

    /// A list (`[`), closed by [`Compound::end_list`].
    fn list(self, in_variant: bool) -> Compound<'a> {
        self.out.push(b'[');
        Compound {
            start: self.out.len(),
            out: self.out,
            entries: Vec::new(),
            key: None,
            in_variant,
        }
    }

    /// A mapping (`{`), its entries sorted by [`Compound::end_map`].
    fn map(self, len: Option<usize>, in_variant: bool) -> Compound<'a> {
        self.out.push(b'{');
        Compound {
            start: self.out.len(),
            out: self.out,
            entries: Vec::with_capacity(len.unwrap_or(8)),
            key: None,
            in_variant,
        }
    }
}

/// A list or mapping being written. A mapping's entries are written in the order they come,
/// each remembered by its key and the bytes of its value, and reordered at the end.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    /// Where the list's items or the mapping's values start in `out`.
    start: usize,
    entries: Vec<(Cow<'static, str>, Range<usize>)>,
    /// The key of the map entry whose value comes next.
    key: Option<String>,
    /// The compound is the data of an enum variant (`{"variant":...}`), closed with it.
    in_variant: bool,
}

impl Compound<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if self.out.len() > self.start {
            self.out.push(b',');
        }
        value.serialize(Canonical {
            out: &mut *self.out,
        })
    }

    fn entry<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        value: &T,
    ) -> Result<(), Error> {
        let at = self.out.len();
        value.serialize(Canonical {
            out: &mut *self.out,
        })?;
        self.entries.push((key, at..self.out.len()));
        Ok(())
    }

    fn end_list(self) {
        self.out.push(b']');
        if self.in_variant {
            self.out.push(b'}');
        }
    }

    /// Rewrites the values written since `start` as `"key":value` entries in key order. A key
    /// given twice keeps its last value, as a `serde_json::Map` does.
    fn end_map(mut self) -> Result<(), Error> {
        let values = self.out.split_off(self.start);
        // Stable: of two equal keys the later stays later, and is the one kept.
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut first = true;
        for (i, (key, range)) in self.entries.iter().enumerate() {
            if self.entries.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue;
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut *self.out, key.as_ref())?;
            self.out.push(b':');
            self.out
                .extend_from_slice(&values[range.start - self.start..range.end - self.start]);
        }
        self.out.push(b'}');
        if self.in_variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for Canonical<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // A `Value` holds every float as an f64.
        self.scalar(&f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.scalar(&v)
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.scalar(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.scalar(&())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.scalar(&())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.scalar(&())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.scalar(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant)?;
        value.serialize(Canonical {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.list(false))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'a>, Error> {
        Ok(self.list(false))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.list(false))
    }
    fn serialize_tuple_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.open_variant(variant)?;
        Ok(self.list(true))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.map(len, false))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        Ok(self.map(Some(len), false))
    }
    fn serialize_struct_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.open_variant(variant)?;
        Ok(self.map(Some(len), true))
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_list();
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_list();
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_list();
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_list();
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().unwrap_or_default();
        self.entry(Cow::Owned(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_map()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entry(Cow::Borrowed(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_map()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entry(Cow::Borrowed(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.end_map()
    }
}

/// A mapping key as the text `serde_json::to_value` makes of it: text as it is, a number or a
/// character as written, a unit variant by its name; anything else is refused, as there.
struct KeyText;

fn key_must_be_text() -> Error {
    ser::Error::custom("key must be a string")
}

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_f32(self, _v: f32) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_f64(self, _v: f64) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_must_be_text())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_text())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_text())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_text())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_text())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// The canonical text the revision writes from a `Value`.
    fn via_value(value: &serde_json::Value) -> String {
        let revision = crate::revision::value(value);
        let direct = super::to_vec(value).unwrap();
        assert_eq!(
            revision,
            crate::revision::digest(&direct),
            "{}",
            String::from_utf8_lossy(&direct)
        );
        String::from_utf8(direct).unwrap()
    }

    #[test]
    fn keys_are_sorted_at_every_depth_and_scalars_read_as_serde_json_writes_them() {
        let value = json!({
            "z": 1, "a": {"y": [3, 2.5, -0.0, 1e300, "é\"\n\u{1}"], "b": null, "B": true},
            "m": [], "e": {}, "n": 7.0, "big": 18_446_744_073_709_551_615_u64, "neg": -3
        });
        assert_eq!(
            via_value(&value),
            r#"{"a":{"B":true,"b":null,"y":[3,2.5,-0.0,1e+300,"é\"\n\u0001"]},"big":18446744073709551615,"e":{},"m":[],"n":7.0,"neg":-3,"z":1}"#
        );
    }

    #[test]
    fn typed_values_write_what_their_value_does() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(f32),
            Tuple(u8, String),
            Struct { b: u8, a: Option<u8> },
        }
        #[derive(serde::Serialize)]
        struct S {
            zeta: Vec<E>,
            alpha: indexmap::IndexMap<String, f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
            ch: char,
            unit: (),
            int_keys: std::collections::BTreeMap<u32, bool>,
        }
        let s = S {
            zeta: vec![
                E::Unit,
                E::New(0.1),
                E::Tuple(1, "x".into()),
                E::Struct { b: 2, a: None },
            ],
            alpha: [("b".to_owned(), 1.5), ("a".to_owned(), 2.0)]
                .into_iter()
                .collect(),
            skipped: None,
            ch: 'c',
            unit: (),
            int_keys: [(10, true), (9, false)].into_iter().collect(),
        };
        let value = serde_json::to_value(&s).unwrap();
        let direct = String::from_utf8(super::to_vec(&s).unwrap()).unwrap();
        assert_eq!(direct, via_value(&value));
    }
}
