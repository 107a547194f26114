//! The three "schema or something else" types of `JSONSchemaProps`, written by hand because
//! the OpenAPI documents describe them only as "any JSON": `items` (a schema or a list of
//! schemas), `additionalProperties`/`additionalItems` (a schema or a boolean) and
//! `dependencies` values (a schema or a list of property names).
//!
//! Each decodes by looking at the JSON value's type, without buffering, so raw JSON fields
//! inside the schema (`default`, `example`, `enum`) keep their exact text.

use std::fmt;

use compact_str::CompactString;
use kclient_apimachinery::meta::List;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};

use super::JSONSchemaProps;

/// `items` of an array schema: one schema for every element, or one per position.
#[derive(Clone, Debug, PartialEq)]
pub enum JSONSchemaPropsOrArray {
    /// One schema that every element matches.
    Schema(Box<JSONSchemaProps>),
    /// A schema per position.
    Schemas(List<JSONSchemaProps>),
}

/// `additionalProperties` or `additionalItems`: a schema, or whether anything is allowed.
#[derive(Clone, Debug, PartialEq)]
pub enum JSONSchemaPropsOrBool {
    /// The schema additional members must match.
    Schema(Box<JSONSchemaProps>),
    /// `true` allows any additional member, `false` none.
    Bool(bool),
}

/// A `dependencies` value: a schema the object must match, or property names it must have.
#[derive(Clone, Debug, PartialEq)]
pub enum JSONSchemaPropsOrStringArray {
    /// The schema the object must also match.
    Schema(Box<JSONSchemaProps>),
    /// The properties the object must also have.
    Strings(List<CompactString>),
}

impl serde::Serialize for JSONSchemaPropsOrArray {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JSONSchemaPropsOrArray::Schema(s) => s.serialize(serializer),
            JSONSchemaPropsOrArray::Schemas(s) => s.serialize(serializer),
        }
    }
}

impl serde::Serialize for JSONSchemaPropsOrBool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JSONSchemaPropsOrBool::Schema(s) => s.serialize(serializer),
            JSONSchemaPropsOrBool::Bool(b) => serializer.serialize_bool(*b),
        }
    }
}

impl serde::Serialize for JSONSchemaPropsOrStringArray {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JSONSchemaPropsOrStringArray::Schema(s) => s.serialize(serializer),
            JSONSchemaPropsOrStringArray::Strings(s) => s.serialize(serializer),
        }
    }
}

/// Decodes a schema (JSON object) or the alternative a visitor accepts.
struct OrVisitor<T> {
    expecting: &'static str,
    schema: fn(Box<JSONSchemaProps>) -> T,
}

impl<'de, T> OrVisitor<T> {
    fn schema<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let s: JSONSchemaProps = serde::Deserialize::deserialize(MapAccessDeserializer::new(map))?;
        Ok((self.schema)(Box::new(s)))
    }
}

impl<'de> serde::de::Visitor<'de> for OrVisitor<JSONSchemaPropsOrArray> {
    type Value = JSONSchemaPropsOrArray;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.schema(map)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        serde::Deserialize::deserialize(SeqAccessDeserializer::new(seq))
            .map(JSONSchemaPropsOrArray::Schemas)
    }
}

impl<'de> serde::Deserialize<'de> for JSONSchemaPropsOrArray {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrVisitor {
            expecting: "a schema or a list of schemas",
            schema: JSONSchemaPropsOrArray::Schema,
        })
    }
}

impl<'de> serde::de::Visitor<'de> for OrVisitor<JSONSchemaPropsOrBool> {
    type Value = JSONSchemaPropsOrBool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.schema(map)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(JSONSchemaPropsOrBool::Bool(v))
    }
}

impl<'de> serde::Deserialize<'de> for JSONSchemaPropsOrBool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrVisitor {
            expecting: "a schema or a boolean",
            schema: JSONSchemaPropsOrBool::Schema,
        })
    }
}

impl<'de> serde::de::Visitor<'de> for OrVisitor<JSONSchemaPropsOrStringArray> {
    type Value = JSONSchemaPropsOrStringArray;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.schema(map)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        serde::Deserialize::deserialize(SeqAccessDeserializer::new(seq))
            .map(JSONSchemaPropsOrStringArray::Strings)
    }
}

impl<'de> serde::Deserialize<'de> for JSONSchemaPropsOrStringArray {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrVisitor {
            expecting: "a schema or a list of strings",
            schema: JSONSchemaPropsOrStringArray::Schema,
        })
    }
}

impl Default for JSONSchemaPropsOrStringArray {
    /// No required properties (what a protobuf map entry without a value holds).
    fn default() -> Self {
        JSONSchemaPropsOrStringArray::Strings(List::new())
    }
}

/// Protobuf forms, as Go's structs behind the three types: `JSONSchemaPropsOrArray { schema = 1,
/// repeated jSONSchemas = 2 }`, `JSONSchemaPropsOrBool { allows = 1, schema = 2 }`,
/// `JSONSchemaPropsOrStringArray { schema = 1, repeated property = 2 }`. A list, when present,
/// wins over a schema (as in Go's JSON form); `allows` is written always (a Go value).
#[cfg(feature = "protobuf")]
mod protobuf {
    use compact_str::CompactString;
    use kclient_apimachinery::meta::List;
    use kclient_apimachinery::protobuf::{self as pb, ProtoError, Reader, Value, WireType, Writer};

    use super::{
        JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
        JSONSchemaPropsOrStringArray,
    };

    /// Reads the two fields of one of the three messages: a schema and a list or a bool.
    fn read_parts(
        r: &mut Reader<'_>,
        schema_field: u32,
        other: &mut impl FnMut(u32, WireType, &mut Reader<'_>) -> Result<bool, ProtoError>,
    ) -> Result<Option<Box<JSONSchemaProps>>, ProtoError> {
        let mut m = r.nested()?;
        let mut schema = None;
        while let Some((field, wire)) = m.next_field()? {
            if field == schema_field {
                pb::merge_boxed(&mut schema, field, wire, &mut m)?;
            } else if !other(field, wire, &mut m)? {
                m.skip(wire)?;
            }
        }
        Ok(schema)
    }

    impl Value for JSONSchemaPropsOrArray {
        const WIRE: WireType = WireType::Len;
        fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
            let mut list: List<JSONSchemaProps> = List::new();
            let schema = read_parts(r, 1, &mut |field, wire, m| {
                if field == 2 {
                    pb::merge_list(&mut list, field, wire, m).map(|()| true)
                } else {
                    Ok(false)
                }
            })?;
            Ok(match schema {
                Some(s) if list.is_empty() => JSONSchemaPropsOrArray::Schema(s),
                _ => JSONSchemaPropsOrArray::Schemas(list),
            })
        }
        fn write(&self, w: &mut Writer) {
            w.nested(|w| match self {
                JSONSchemaPropsOrArray::Schema(s) => pb::put(w, 1, &**s),
                JSONSchemaPropsOrArray::Schemas(list) => pb::put_list(w, 2, list),
            });
        }
    }

    impl Value for JSONSchemaPropsOrBool {
        const WIRE: WireType = WireType::Len;
        fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
            let mut allows = false;
            let schema = read_parts(r, 2, &mut |field, wire, m| {
                if field == 1 {
                    pb::merge(&mut allows, field, wire, m).map(|()| true)
                } else {
                    Ok(false)
                }
            })?;
            Ok(match schema {
                Some(s) => JSONSchemaPropsOrBool::Schema(s),
                None => JSONSchemaPropsOrBool::Bool(allows),
            })
        }
        fn write(&self, w: &mut Writer) {
            w.nested(|w| match self {
                // Go's JSON decoder sets `allows` for a schema too.
                JSONSchemaPropsOrBool::Schema(s) => {
                    pb::put(w, 1, &true);
                    pb::put(w, 2, &**s);
                }
                JSONSchemaPropsOrBool::Bool(b) => pb::put(w, 1, b),
            });
        }
    }

    impl Value for JSONSchemaPropsOrStringArray {
        const WIRE: WireType = WireType::Len;
        fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
            let mut list: List<CompactString> = List::new();
            let schema = read_parts(r, 1, &mut |field, wire, m| {
                if field == 2 {
                    pb::merge_list(&mut list, field, wire, m).map(|()| true)
                } else {
                    Ok(false)
                }
            })?;
            Ok(match schema {
                Some(s) if list.is_empty() => JSONSchemaPropsOrStringArray::Schema(s),
                _ => JSONSchemaPropsOrStringArray::Strings(list),
            })
        }
        fn write(&self, w: &mut Writer) {
            w.nested(|w| match self {
                JSONSchemaPropsOrStringArray::Schema(s) => pb::put(w, 1, &**s),
                JSONSchemaPropsOrStringArray::Strings(list) => pb::put_list(w, 2, list),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_each_form_and_keeps_raw_defaults() {
        let a: JSONSchemaPropsOrArray =
            serde_json::from_str(r#"{"type":"string","default":"x y"}"#).unwrap();
        let JSONSchemaPropsOrArray::Schema(s) = &a else {
            panic!("expected a schema")
        };
        assert_eq!(s.default.as_ref().map(|d| d.get()), Some(r#""x y""#));
        let b: JSONSchemaPropsOrArray = serde_json::from_str(r#"[{"type":"string"}]"#).unwrap();
        assert!(matches!(b, JSONSchemaPropsOrArray::Schemas(ref v) if v.len() == 1));
        let c: JSONSchemaPropsOrBool = serde_json::from_str("false").unwrap();
        assert_eq!(c, JSONSchemaPropsOrBool::Bool(false));
        let d: JSONSchemaPropsOrStringArray = serde_json::from_str(r#"["a","b"]"#).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), r#"["a","b"]"#);
        assert!(serde_json::from_str::<JSONSchemaPropsOrBool>("1").is_err());
    }
}

/// `JsonSchema` of the three (feature `schemars`): what the OpenAPI document says of them, a
/// description and no type, so any JSON value, kept unvalidated
/// (`x-kubernetes-preserve-unknown-fields`), as the generated types' schemas follow the
/// document.
#[cfg(feature = "schemars")]
macro_rules! any_json_schema {
    ($ty:ident, $description:literal) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($ty))
            }

            fn schema_id() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(concat!(
                    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.",
                    stringify!($ty)
                ))
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": $description,
                    "x-kubernetes-preserve-unknown-fields": true,
                })
            }
        }
    };
}

#[cfg(feature = "schemars")]
any_json_schema!(
    JSONSchemaPropsOrArray,
    "JSONSchemaPropsOrArray represents a value that can either be a JSONSchemaProps or an array of JSONSchemaProps. Mainly here for serialization purposes."
);
#[cfg(feature = "schemars")]
any_json_schema!(
    JSONSchemaPropsOrBool,
    "JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean value. Defaults to true for the boolean property."
);
#[cfg(feature = "schemars")]
any_json_schema!(
    JSONSchemaPropsOrStringArray,
    "JSONSchemaPropsOrStringArray represents a JSONSchemaProps or a string array."
);
