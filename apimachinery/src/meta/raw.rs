//! Raw JSON values: [`RawJson`] for fields whose content is arbitrary JSON
//! (`runtime.RawExtension`, `apiextensions JSON`) and [`Raw<T>`] for a typed value kept
//! undecoded until asked for.
//!
//! Keeping such fields as text costs one allocation instead of a tree of them.

use std::fmt;
use std::marker::PhantomData;

use serde_json::value::RawValue;

use crate::json_decode::{JsonError, RawText, deserialize_raw};

/// A JSON value kept as its exact text.
#[derive(Clone)]
pub struct RawJson(Box<str>);

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// Checks that `json` is one valid JSON value and wraps it (without the whitespace around
    /// it).
    pub fn from_string(json: String) -> Result<Self, serde_json::Error> {
        Ok(RawJson(checked_json(json)?))
    }

    /// Encodes `value` as JSON.
    pub fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(|raw| RawJson(raw.into()))
    }

    /// Decodes the JSON into `T` with [`decode_json`](crate::decode_json), so a value
    /// nested as deep as the apiserver stores objects (10,000 levels) decodes.
    pub fn decode<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, JsonError> {
        crate::decode_json(self.0.as_bytes())
    }
}

/// A `RawJson` of `text`, known to be one valid JSON value without surrounding whitespace.
#[cfg(feature = "protobuf")]
pub(crate) fn raw_json_unchecked(text: &str) -> RawJson {
    RawJson(text.into())
}

/// `json` if it is one valid JSON value, without the whitespace around it.
pub(crate) fn checked_json(json: String) -> Result<Box<str>, serde_json::Error> {
    let raw: &RawValue = serde_json::from_str(&json)?;
    if raw.get().len() == json.len() {
        Ok(json.into_boxed_str())
    } else {
        Ok(raw.get().into())
    }
}

/// Writes `json`, text known to be one valid JSON value, as a raw value: `serde_json` copies it
/// as it is. Only `serde_json`'s own `RawValue` can do that, so the text is checked once more
/// to borrow one (writes are rare next to reads; a decode checks the text once).
pub(crate) fn serialize_raw<S: serde::Serializer>(
    json: &str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let raw: &RawValue = serde_json::from_str(json).map_err(serde::ser::Error::custom)?;
    serde::Serialize::serialize(raw, serializer)
}

impl Default for RawJson {
    /// JSON `null`, what Go encodes for an unset `RawExtension`.
    fn default() -> Self {
        RawJson("null".into())
    }
}

impl PartialEq for RawJson {
    /// Textual equality (two encodings of the same value with different spacing differ).
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}
impl Eq for RawJson {}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl From<serde_json::Value> for RawJson {
    fn from(value: serde_json::Value) -> Self {
        // A `Value` always encodes: its map keys are strings.
        RawJson(value.to_string().into_boxed_str())
    }
}

impl serde::Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_raw(&self.0, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for RawJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(RawJson(match deserialize_raw(deserializer)? {
            RawText::Borrowed(text) => text.into(),
            RawText::Owned(text) => text.into(),
            RawText::Boxed(raw) => raw.into(),
        }))
    }
}

/// `runtime.RawExtension`: an embedded object of any kind, kept as raw JSON.
pub type RawExtension = RawJson;

/// A `T` kept as raw JSON until [`Raw::decode`] is called.
pub struct Raw<T> {
    json: RawJson,
    _type: PhantomData<fn() -> T>,
}

impl<T> Raw<T> {
    /// The JSON text.
    pub fn json(&self) -> &RawJson {
        &self.json
    }

    /// Wraps JSON text without checking that it decodes as `T`.
    pub fn from_json(json: RawJson) -> Self {
        Raw {
            json,
            _type: PhantomData,
        }
    }
}

impl<T: serde::de::DeserializeOwned> Raw<T> {
    /// Decodes the value, as [`RawJson::decode`] does.
    pub fn decode(&self) -> Result<T, JsonError> {
        self.json.decode()
    }
}

impl<T: serde::Serialize> Raw<T> {
    /// Encodes `value`.
    pub fn encode(value: &T) -> Result<Self, serde_json::Error> {
        RawJson::encode(value).map(Raw::from_json)
    }
}

impl<T> Clone for Raw<T> {
    fn clone(&self) -> Self {
        Raw::from_json(self.json.clone())
    }
}

impl<T> Default for Raw<T> {
    fn default() -> Self {
        Raw::from_json(RawJson::default())
    }
}

impl<T> PartialEq for Raw<T> {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}
impl<T> Eq for Raw<T> {}

impl<T> fmt::Debug for Raw<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.json, f)
    }
}

impl<T> serde::Serialize for Raw<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de, T> serde::Deserialize<'de> for Raw<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawJson::deserialize(deserializer).map(Raw::from_json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_exact_text_and_decodes_on_demand() {
        let json = r#"{"a":[1,2,{"b":null}],"c":"d"}"#;
        let raw: RawJson = serde_json::from_str(json).unwrap();
        assert_eq!(raw.get(), json);
        assert_eq!(serde_json::to_string(&raw).unwrap(), json);
        let v: serde_json::Value = raw.decode().unwrap();
        assert_eq!(v["c"], "d");
    }

    #[test]
    fn typed_raw_decodes_lazily() {
        let raw: Raw<Vec<u32>> = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(raw.decode().unwrap(), vec![1, 2, 3]);
        assert_eq!(Raw::encode(&vec![4u32]).unwrap().json().get(), "[4]");
        let bad: Raw<Vec<u32>> = serde_json::from_str("[\"x\"]").unwrap();
        assert!(bad.decode().is_err());
    }

    /// A raw value holds what the apiserver stores, objects nested 10,000 levels deep, and
    /// decodes it as `decode_json` does, on a 2 MiB stack; deeper is an error.
    #[test]
    fn values_as_deep_as_the_apiserver_stores_decode() {
        use crate::test_support::{nested_objects, on_small_stack};
        on_small_stack(|| {
            let text = nested_objects(10_000);
            let raw: RawJson = crate::decode_json(text.as_bytes()).unwrap();
            let object: crate::Unstructured = raw.decode().unwrap();
            assert!(object.as_map().contains_key("a"));
            let typed: Raw<crate::Unstructured> = Raw::from_json(raw);
            assert!(typed.decode().unwrap() == object);
            let too_deep = RawJson::from_string(nested_objects(10_004)).unwrap();
            let err = too_deep.decode::<crate::Unstructured>().unwrap_err();
            assert!(err.to_string().contains("recursion limit"), "{err}");
        });
    }

    #[test]
    fn decodes_from_a_value_too() {
        let v = serde_json::json!({"x": {"y": 1}});
        #[derive(serde::Deserialize)]
        struct T {
            x: RawJson,
        }
        let t: T = serde_json::from_value(v).unwrap();
        assert_eq!(t.x.get(), r#"{"y":1}"#);
    }
}
