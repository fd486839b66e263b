//! Any serde value (a profile, a rule file's constant, a JSON document) as a [`Value`], built
//! directly: whole numbers stay whole, structs and maps keep their field order, an enum's unit
//! variant is its name and any other variant a one-entry map, as minijinja builds them.

use std::fmt;

use serde::Serialize;
use serde::ser;

use super::{Kind, Map, Value};

/// Why a value could not be built (a serde implementation's own error).
#[derive(Debug)]
pub struct SerializeError(String);

impl fmt::Display for SerializeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerializeError {}

impl ser::Error for SerializeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerializeError(msg.to_string())
    }
}

/// `v` as a value.
///
/// # Errors
/// `v`'s `Serialize` fails, or gives a map key that is not a text or number.
pub fn to_value<T: Serialize + ?Sized>(v: &T) -> Result<Value, SerializeError> {
    v.serialize(Serializer)
}

struct Serializer;

/// A list being built.
pub struct ListBuilder(Vec<Value>);

/// A map being built, and the key waiting for its value.
pub struct MapBuilder(Map, Option<Value>);

/// An enum variant with fields: its name and its fields as a list or map.
pub struct Variant<T>(&'static str, T);

fn variant(name: &'static str, value: Value) -> Value {
    Value::from_pairs([(Value::from(name), value)])
}

/// The methods that build a whole number from a narrower one.
macro_rules! whole {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Value, SerializeError> {
            Ok(Value::Int(v.into()))
        }
    )*};
}

impl ser::Serializer for Serializer {
    type Ok = Value;
    type Error = SerializeError;
    type SerializeSeq = ListBuilder;
    type SerializeTuple = ListBuilder;
    type SerializeTupleStruct = ListBuilder;
    type SerializeTupleVariant = Variant<ListBuilder>;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = Variant<MapBuilder>;

    fn serialize_bool(self, v: bool) -> Result<Value, SerializeError> {
        Ok(Value::Bool(v))
    }
    whole!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64
    );
    fn serialize_u128(self, v: u128) -> Result<Value, SerializeError> {
        i128::try_from(v)
            .map(Value::Int)
            .map_err(|_| SerializeError(format!("{v} is too large a whole number")))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerializeError> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerializeError> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, SerializeError> {
        Ok(Value::from(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerializeError> {
        Ok(Value::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerializeError> {
        Ok(v.iter().map(|b| Value::Int((*b).into())).collect())
    }
    fn serialize_none(self) -> Result<Value, SerializeError> {
        Ok(Value::None)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Value, SerializeError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, SerializeError> {
        Ok(Value::None)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, SerializeError> {
        Ok(Value::None)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<Value, SerializeError> {
        Ok(Value::from(v))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Value, SerializeError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        v: &T,
    ) -> Result<Value, SerializeError> {
        Ok(variant(name, v.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListBuilder, SerializeError> {
        Ok(ListBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<ListBuilder, SerializeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<ListBuilder, SerializeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Variant<ListBuilder>, SerializeError> {
        Ok(Variant(name, self.serialize_seq(Some(len))?))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder, SerializeError> {
        Ok(MapBuilder(
            Map::with_capacity_and_hasher(len.unwrap_or(0), foldhash::fast::FixedState::default()),
            None,
        ))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<MapBuilder, SerializeError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Variant<MapBuilder>, SerializeError> {
        Ok(Variant(name, self.serialize_map(Some(len))?))
    }
}

impl ser::SerializeSeq for ListBuilder {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        self.0.push(to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(Value::from(self.0))
    }
}

impl ser::SerializeTuple for ListBuilder {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, SerializeError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for ListBuilder {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, SerializeError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Variant<ListBuilder> {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        ser::SerializeSeq::serialize_element(&mut self.1, v)
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(variant(self.0, ser::SerializeSeq::end(self.1)?))
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerializeError> {
        let key = to_value(key)?;
        if matches!(key.kind(), Kind::List | Kind::Map) {
            return Err(SerializeError(
                "a map key must be a text or a number".into(),
            ));
        }
        self.1 = Some(key);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        let key = self.1.take().unwrap_or_default();
        self.0.insert(key, to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(Value::from(self.0))
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), SerializeError> {
        self.0.insert(Value::from(key), to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(Value::from(self.0))
    }
}

impl ser::SerializeStructVariant for Variant<MapBuilder> {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), SerializeError> {
        ser::SerializeStruct::serialize_field(&mut self.1, key, v)
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(variant(self.0, ser::SerializeStruct::end(self.1)?))
    }
}
