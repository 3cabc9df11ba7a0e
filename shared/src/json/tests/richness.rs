//! Where a value falls short of rich: a serializer that writes nothing and notes each `None`,
//! skipped field, empty string and empty collection that `Serialize` meets.

use serde::Serialize;
use serde::ser::{self, SerializeMap, SerializeSeq, SerializeStruct};
use std::fmt;

/// Where `value` falls short of rich: each `None`, skipped field, empty string or empty
/// collection its `Serialize` meets, by field name.
pub(super) fn gaps<T: Serialize>(value: &T) -> Vec<String> {
    let mut richness = Richness {
        at: "(top)",
        gaps: Vec::new(),
    };
    value.serialize(&mut richness).unwrap();
    richness.gaps
}

/// A serializer that writes nothing and notes the gaps.
struct Richness {
    /// The field being written.
    at: &'static str,
    gaps: Vec<String>,
}

impl Richness {
    fn gap(&mut self, what: &str) {
        self.gaps.push(format!("{} ({what})", self.at));
    }
}

type Done = Result<(), fmt::Error>;

impl ser::Serializer for &mut Richness {
    type Ok = ();
    type Error = fmt::Error;
    type SerializeSeq = Self;
    type SerializeTuple = ser::Impossible<(), fmt::Error>;
    type SerializeTupleStruct = ser::Impossible<(), fmt::Error>;
    type SerializeTupleVariant = ser::Impossible<(), fmt::Error>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = ser::Impossible<(), fmt::Error>;

    fn serialize_bool(self, _: bool) -> Done {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Done {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Done {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Done {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Done {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Done {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Done {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Done {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Done {
        Ok(())
    }
    fn serialize_f32(self, _: f32) -> Done {
        Ok(())
    }
    fn serialize_f64(self, _: f64) -> Done {
        Ok(())
    }
    fn serialize_char(self, _: char) -> Done {
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Done {
        if v.is_empty() {
            self.gap("empty string");
        }
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Done {
        Ok(())
    }
    fn serialize_none(self) -> Done {
        self.gap("None");
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Done {
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Done {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Done {
        v.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, fmt::Error> {
        if len == Some(0) {
            self.gap("empty");
        }
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, fmt::Error> {
        Err(fmt::Error)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, fmt::Error> {
        Err(fmt::Error)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, fmt::Error> {
        Err(fmt::Error)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self, fmt::Error> {
        if len == Some(0) {
            self.gap("empty");
        }
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, fmt::Error> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, fmt::Error> {
        Err(fmt::Error)
    }
}

impl SerializeSeq for &mut Richness {
    type Ok = ();
    type Error = fmt::Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Ok(())
    }
}

impl SerializeMap for &mut Richness {
    type Ok = ();
    type Error = fmt::Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Done {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Ok(())
    }
}

impl SerializeStruct for &mut Richness {
    type Ok = ();
    type Error = fmt::Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Done {
        self.at = key;
        value.serialize(&mut **self)
    }
    fn skip_field(&mut self, key: &'static str) -> Done {
        self.at = key;
        self.gap("skipped");
        Ok(())
    }
    fn end(self) -> Done {
        Ok(())
    }
}
