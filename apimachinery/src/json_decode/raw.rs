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

/// A value's text, borrowed from the input or copied by `serde_json`.
pub(crate) enum RawText<'de> {
    Borrowed(&'de str),
    Boxed(Box<RawValue>),
}

impl RawText<'_> {
    /// The text.
    pub(crate) fn get(&self) -> &str {
        match self {
            RawText::Borrowed(text) => text,
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

    /// kclient's decoder: one entry, the token and the borrowed text.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        match map.next_key::<&str>()? {
            Some(RAW_TOKEN) => map.next_value::<&'de str>().map(RawText::Borrowed),
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
