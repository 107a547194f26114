//! `schemars::JsonSchema` for the types a custom resource's spec or status embeds (feature
//! `schemars`), so that `#[derive(JsonSchema)]` works on a struct holding them and
//! kclient-clientset's `structural_schema` can turn the result into a CRD schema.
//!
//! Each schema is what controller-gen writes for the Go type, so that a CRD made from a Rust
//! type validates what the Go one does:
//!
//! | type | schema |
//! | --- | --- |
//! | [`IStr`] | `type: string` |
//! | [`List<T>`] | `type: array`, `items` of `T` |
//! | [`Map<K, V>`], [`StrMap`](super::StrMap) | `type: object`, `additionalProperties` of `V` |
//! | [`IntOrString`] | `x-kubernetes-int-or-string: true` with `anyOf: [integer, string]` |
//! | [`Quantity`] | the same, with controller-gen's `pattern` for quantities |
//! | [`Time`], [`MicroTime`] | `type: string`, `format: date-time` |
//! | [`Duration`] | `type: string` |
//! | [`ByteString`] | `type: string`, `format: byte` |
//! | [`RawJson`] | `x-kubernetes-preserve-unknown-fields: true` (any JSON value) |
//! | [`Condition`] | controller-gen's `metav1.Condition`: five required fields with its limits |
//! | [`LabelSelector`] | its two fields, `x-kubernetes-map-type: atomic` |
//! | [`ObjectMeta`] | `type: object` and nothing else |
//! | [`FieldsV1`] | `type: object`, `x-kubernetes-preserve-unknown-fields: true` |
//!
//! The other generated `meta/v1` types (`OwnerReference`, `DeleteOptions`, ...) and
//! kclient-api's generated types (with its `schemars` feature) get their schemas from the
//! OpenAPI documents, written by `api/gen` with the builders of [`openapi`].
//!
//! `ObjectMeta` is `type: object` alone wherever it appears, as controller-gen writes it: at a
//! resource's root the API server validates metadata itself and allows no more; embedded
//! deeper (a pod template's), the server prunes its fields away unless the schema lists them,
//! which is what controller-gen does too without `crd:generateEmbeddedObjectMeta`.
//!
//! The schemas use JSON Schema's `type` and `anyOf` as schemars' own impls do (an
//! `Option<Time>` becomes `type: [string, null]`); the conversion to a structural schema (one
//! `type`, `nullable: true`) is kclient-clientset's.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::v1::{Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta};
use super::{
    ByteString, Duration, FieldsV1, IStr, IntOrString, List, Map, MicroTime, Quantity, RawJson,
    Time,
};

/// controller-gen's pattern for a `resource.Quantity` (`+kubebuilder:validation:Pattern` is
/// not written on it; controller-gen knows the type): a decimal number with an optional
/// binary (`Ki`..`Ei`) or decimal (`n`..`E`) suffix or an exponent.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Implements `JsonSchema` with a fixed, inlined schema.
macro_rules! fixed_schema {
    ($ty:ty, $name:literal, $schema:tt) => {
        impl JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }

            fn schema_id() -> Cow<'static, str> {
                Cow::Borrowed(concat!("kclient_apimachinery::meta::", $name))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

fixed_schema!(IStr, "IStr", {"type": "string"});
fixed_schema!(Time, "Time", {"type": "string", "format": "date-time"});
fixed_schema!(MicroTime, "MicroTime", {"type": "string", "format": "date-time"});
fixed_schema!(Duration, "Duration", {"type": "string"});
fixed_schema!(ByteString, "ByteString", {"type": "string", "format": "byte"});
fixed_schema!(RawJson, "RawJson", {"x-kubernetes-preserve-unknown-fields": true});
fixed_schema!(IntOrString, "IntOrString", {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": true,
});
fixed_schema!(Quantity, "Quantity", {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": QUANTITY_PATTERN,
    "x-kubernetes-int-or-string": true,
});
fixed_schema!(ObjectMeta, "ObjectMeta", {"type": "object"});
fixed_schema!(FieldsV1, "FieldsV1", {"type": "object", "x-kubernetes-preserve-unknown-fields": true});
fixed_schema!(Condition, "Condition", {
    "description": "Condition contains details for one aspect of the current state of this API Resource.",
    "type": "object",
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
    },
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
});
fixed_schema!(LabelSelectorRequirement, "LabelSelectorRequirement", {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "operator": {"type": "string"},
        "values": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
    },
    "required": ["key", "operator"],
});

impl JsonSchema for LabelSelector {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("LabelSelector")
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Borrowed("kclient_apimachinery::meta::LabelSelector")
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "properties": {
                "matchExpressions": {
                    "type": "array",
                    "items": generator.subschema_for::<LabelSelectorRequirement>(),
                    "x-kubernetes-list-type": "atomic",
                },
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "x-kubernetes-map-type": "atomic",
        })
    }
}

impl<T: JsonSchema> JsonSchema for List<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("List_of_{}", T::schema_name()).into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("kclient_apimachinery::meta::List<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": generator.subschema_for::<T>()})
    }
}

/// The keys are JSON object keys, strings whatever `K` is (as for serde's maps).
impl<K, V: JsonSchema> JsonSchema for Map<K, V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Map_of_{}", V::schema_name()).into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("kclient_apimachinery::meta::Map<{}>", V::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object", "additionalProperties": generator.subschema_for::<V>()})
    }
}

/// The builders that the `JsonSchema` impls generated by `api/gen` (kclient-api's types and the
/// generated `meta/v1` ones) call, one per shape of a property in the OpenAPI documents: plain
/// functions, so that the thousands of generated impls compile to calls rather than expanded
/// `json!` literals. Not meant for hand-written code.
#[doc(hidden)]
pub mod openapi {
    use schemars::Schema;
    use serde_json::{Map, Value};

    fn typed(ty: &str, format: Option<&str>) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("type".into(), ty.into());
        if let Some(format) = format {
            m.insert("format".into(), format.into());
        }
        m
    }

    /// `type: string`, with its `format` and `enum` values when the document gives them.
    pub fn string(format: Option<&str>, values: &[&str]) -> Schema {
        let mut m = typed("string", format);
        if !values.is_empty() {
            m.insert(
                "enum".into(),
                values.iter().map(|v| Value::from(*v)).collect(),
            );
        }
        Schema::from(m)
    }

    /// `type: integer` with its `format` (`int32`, `int64`).
    pub fn integer(format: Option<&str>) -> Schema {
        Schema::from(typed("integer", format))
    }

    /// `type: number` with its `format` (`double`).
    pub fn number(format: Option<&str>) -> Schema {
        Schema::from(typed("number", format))
    }

    /// `type: boolean`.
    pub fn boolean() -> Schema {
        Schema::from(typed("boolean", None))
    }

    /// A `runtime.RawExtension` (an embedded object of any kind): `type: object`, its fields
    /// kept unvalidated.
    pub fn raw_extension() -> Schema {
        let mut m = typed("object", None);
        m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        Schema::from(m)
    }

    /// The `metadata` of a generated type (a pod template's, a PVC template's): the fields
    /// controller-gen writes for an embedded `ObjectMeta` with `crd:generateEmbeddedObjectMeta`,
    /// so that the API server keeps a template's labels and annotations instead of pruning them
    /// (a bare `type: object`, `ObjectMeta`'s own schema, keeps nothing below the root).
    pub fn embedded_object_meta() -> Schema {
        let strings = || {
            let mut m = typed("object", None);
            m.insert(
                "additionalProperties".into(),
                Value::Object(typed("string", None)),
            );
            Value::Object(m)
        };
        let mut finalizers = typed("array", None);
        finalizers.insert("items".into(), Value::Object(typed("string", None)));
        let mut props = Map::new();
        props.insert("annotations".into(), strings());
        props.insert("finalizers".into(), Value::Object(finalizers));
        props.insert("labels".into(), strings());
        props.insert("name".into(), Value::Object(typed("string", None)));
        props.insert("namespace".into(), Value::Object(typed("string", None)));
        let mut m = typed("object", None);
        m.insert("properties".into(), Value::Object(props));
        Schema::from(m)
    }

    /// `type: array` of `items`, with `x-kubernetes-list-type` and, for a map list,
    /// `x-kubernetes-list-map-keys`.
    pub fn array(items: Schema, list_type: Option<&str>, keys: &[&str]) -> Schema {
        let mut m = typed("array", None);
        m.insert("items".into(), items.to_value());
        if let Some(list_type) = list_type {
            m.insert("x-kubernetes-list-type".into(), list_type.into());
        }
        if !keys.is_empty() {
            m.insert(
                "x-kubernetes-list-map-keys".into(),
                keys.iter().map(|k| Value::from(*k)).collect(),
            );
        }
        Schema::from(m)
    }

    /// `type: object` with `additionalProperties` of `values`: a map with string keys.
    pub fn map(values: Schema) -> Schema {
        let mut m = typed("object", None);
        m.insert("additionalProperties".into(), values.to_value());
        Schema::from(m)
    }

    /// A property: its schema with the property's `description` (over a referenced type's
    /// own, as controller-gen writes it), `x-kubernetes-map-type` and `default`.
    pub fn property(
        mut schema: Schema,
        description: &str,
        map_type: Option<&str>,
        default: Option<Value>,
    ) -> Schema {
        let m = schema.ensure_object();
        if !description.is_empty() {
            m.insert("description".into(), description.into());
        }
        if let Some(map_type) = map_type {
            m.insert("x-kubernetes-map-type".into(), map_type.into());
        }
        if let Some(default) = default {
            m.insert("default".into(), default);
        }
        schema
    }

    /// A struct: `type: object` with its `properties`, `required` ones and
    /// `x-kubernetes-map-type`.
    pub fn object(
        description: &str,
        map_type: Option<&str>,
        required: &[&str],
        properties: Vec<(&str, Schema)>,
    ) -> Schema {
        let mut m = Map::new();
        if !description.is_empty() {
            m.insert("description".into(), description.into());
        }
        m.insert("type".into(), "object".into());
        if !properties.is_empty() {
            let props: Map<String, Value> = properties
                .into_iter()
                .map(|(name, schema)| (name.to_owned(), schema.to_value()))
                .collect();
            m.insert("properties".into(), Value::Object(props));
        }
        if !required.is_empty() {
            m.insert(
                "required".into(),
                required.iter().map(|r| Value::from(*r)).collect(),
            );
        }
        if let Some(map_type) = map_type {
            m.insert("x-kubernetes-map-type".into(), map_type.into());
        }
        Schema::from(m)
    }
}

#[cfg(test)]
mod tests {
    use schemars::{JsonSchema, SchemaGenerator};
    use serde_json::{Value, json};

    use super::*;
    use crate::meta::StrMap;

    fn schema<T: JsonSchema>() -> Value {
        SchemaGenerator::default()
            .into_root_schema_for::<T>()
            .to_value()
    }

    /// The schema without the root's `$schema` and `title`.
    fn body<T: JsonSchema>() -> Value {
        let mut v = schema::<T>();
        let obj = v.as_object_mut().unwrap();
        obj.remove("$schema");
        obj.remove("title");
        v
    }

    #[test]
    fn value_types_have_controller_gen_schemas() {
        assert_eq!(body::<IStr>(), json!({"type": "string"}));
        assert_eq!(
            body::<Time>(),
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(
            body::<MicroTime>(),
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(body::<Duration>(), json!({"type": "string"}));
        assert_eq!(
            body::<ByteString>(),
            json!({"type": "string", "format": "byte"})
        );
        assert_eq!(
            body::<RawJson>(),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            body::<IntOrString>(),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": true})
        );
        let quantity = body::<Quantity>();
        assert_eq!(quantity["x-kubernetes-int-or-string"], true);
        assert_eq!(quantity["pattern"], QUANTITY_PATTERN);
        assert_eq!(body::<ObjectMeta>(), json!({"type": "object"}));
    }

    #[test]
    fn containers_inline_their_items() {
        assert_eq!(
            body::<List<IStr>>(),
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(
            body::<StrMap>(),
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert_eq!(
            body::<Map<IStr, List<Time>>>(),
            json!({"type": "object", "additionalProperties": {"type": "array",
                "items": {"type": "string", "format": "date-time"}}})
        );
    }

    #[test]
    fn generated_meta_v1_types_follow_the_openapi_document() {
        // Written by api/gen from the document (the `openapi` builders).
        let owner = body::<crate::meta::v1::OwnerReference>();
        assert_eq!(owner["type"], "object");
        assert_eq!(owner["x-kubernetes-map-type"], "atomic");
        assert_eq!(
            owner["required"],
            json!(["apiVersion", "kind", "name", "uid"])
        );
        assert_eq!(owner["properties"]["controller"]["type"], "boolean");
        assert!(
            owner["properties"]["uid"]["description"]
                .as_str()
                .unwrap()
                .starts_with("UID of the referent.")
        );
        let delete = body::<crate::meta::v1::DeleteOptions>();
        assert_eq!(
            delete["properties"]["gracePeriodSeconds"],
            json!({"type": "integer", "format": "int64",
                "description": delete["properties"]["gracePeriodSeconds"]["description"]})
        );
        assert_eq!(
            delete["properties"]["dryRun"]["x-kubernetes-list-type"],
            "atomic"
        );
        // A kind's apiVersion and kind, which the struct does not store.
        assert_eq!(delete["properties"]["kind"]["type"], "string");
    }

    #[test]
    fn condition_and_label_selector_match_controller_gen() {
        let condition = body::<Condition>();
        assert_eq!(
            condition["required"],
            json!(["lastTransitionTime", "message", "reason", "status", "type"])
        );
        assert_eq!(
            condition["properties"]["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(condition["properties"]["type"]["maxLength"], 316);
        let selector = body::<LabelSelector>();
        assert_eq!(selector["x-kubernetes-map-type"], "atomic");
        assert_eq!(
            selector["properties"]["matchExpressions"]["items"]["required"],
            json!(["key", "operator"])
        );
    }
}
