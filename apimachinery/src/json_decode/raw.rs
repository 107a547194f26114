//! Capturing a value's exact text: how [`RawJson`](crate::meta::RawJson) and
//! [`FieldsV1`](crate::meta::FieldsV1) decode.
//!
//! Through kclient's decoder the text is borrowed from the input, checked once by the
//! decoder's skip, and copied once by the caller. Through any other deserializer (a
//! `serde_json::Deserializer`, a `serde_json::Value`) it goes through `serde_json`'s
//! `RawValue`, as before.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::RAW_TOKEN;

/// A value's text, borrowed from the input, copied by kclient's decoder (input that is not
/// UTF-8, read as Go reads it), or copied by `serde_json`.
pub(crate) enum RawText<'de> {
    Borrowed(&'de str),
    Owned(String),
    Boxed(Box<RawValue>),
}

impl RawText<'_> {
    /// The text.
    pub(crate) fn get(&self) -> &str {
        match self {
            RawText::Borrowed(text) => text,
            RawText::Owned(text) => text,
            RawText::Boxed(raw) => raw.get(),
        }
    }
}

/// Reads the next value's exact text from `deserializer`.
pub(crate) fn deserialize_raw<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<RawText<'de>, D::Error> {
    deserializer.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    /// kclient's decoder: one entry, the token and the text (borrowed, or copied where the
    /// input is not UTF-8).
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        match map.next_key::<&str>()? {
            Some(RAW_TOKEN) => map.next_value_seed(TextSeed),
            _ => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        }
    }

    /// Any other deserializer: `serde_json`'s own raw value.
    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawText::Boxed)
    }
}

/// The text of a raw value from kclient's decoder, borrowed or copied.
struct TextSeed;

impl<'de> de::DeserializeSeed<'de> for TextSeed {
    type Value = RawText<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawText<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = RawText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a raw value's text")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<RawText<'de>, E> {
        Ok(RawText::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<RawText<'de>, E> {
        Ok(RawText::Owned(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<RawText<'de>, E> {
        Ok(RawText::Owned(text))
    }
}
