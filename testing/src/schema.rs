//! What server-side apply reads from a kind's schema: how each list is keyed
//! (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) and which maps are atomic
//! (`x-kubernetes-map-type`). A built-in kind has it in its generated patch metadata; a
//! custom resource in its CustomResourceDefinition's `openAPIV3Schema`, which
//! [`StructuralSchema`] holds.

use std::collections::BTreeMap;

use kclient_apimachinery::meta::FieldMeta;
use serde_json::Value;

/// A node of a custom resource's structural schema, reduced to what server-side apply
/// reads from it: the node's properties (or the schema of its map values), the schema of
/// its list items, and its list and map types.
///
/// The fake reads one from each served version of a CustomResourceDefinition created
/// through it; build one with [`StructuralSchema::from_openapi_v3`] for a resource
/// registered by hand ([`ResourceInfo::with_schema`](crate::ResourceInfo::with_schema)).
///
/// ```
/// use kclient_testing::StructuralSchema;
/// use serde_json::json;
///
/// let schema = StructuralSchema::from_openapi_v3(&json!({
///     "type": "object",
///     "properties": {"status": {"type": "object", "properties": {"conditions": {
///         "type": "array",
///         "x-kubernetes-list-type": "map",
///         "x-kubernetes-list-map-keys": ["type"],
///         "items": {"type": "object"},
///     }}}},
/// }));
/// let conditions = schema.property("status").and_then(|s| s.property("conditions"));
/// assert_eq!(conditions.and_then(|c| c.list_type()), Some("map"));
/// assert_eq!(conditions.map(|c| c.list_map_keys().to_vec()), Some(vec!["type".to_owned()]));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StructuralSchema {
    properties: BTreeMap<String, StructuralSchema>,
    additional_properties: Option<Box<StructuralSchema>>,
    items: Option<Box<StructuralSchema>>,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    map_type: Option<String>,
}

impl StructuralSchema {
    /// Reads an OpenAPI v3 schema, as a CRD version's `schema.openAPIV3Schema` holds it.
    /// What server-side apply does not read (types, validation, defaults) is left out; a
    /// node that is not an object reads as a schema that says nothing.
    pub fn from_openapi_v3(schema: &Value) -> Self {
        let text = |key: &str| schema[key].as_str().map(str::to_owned);
        let nested = |key: &str| {
            schema
                .get(key)
                .filter(|s| s.is_object())
                .map(|s| Box::new(StructuralSchema::from_openapi_v3(s)))
        };
        StructuralSchema {
            properties: schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, s)| (name.clone(), StructuralSchema::from_openapi_v3(s)))
                .collect(),
            additional_properties: nested("additionalProperties"),
            items: nested("items"),
            list_type: text("x-kubernetes-list-type"),
            list_map_keys: schema["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect(),
            map_type: text("x-kubernetes-map-type"),
        }
    }

    /// The schema of the property `name`.
    pub fn property(&self, name: &str) -> Option<&StructuralSchema> {
        self.properties.get(name)
    }

    /// `x-kubernetes-list-type`: `atomic` (also when unset), `set` or `map`.
    pub fn list_type(&self) -> Option<&str> {
        self.list_type.as_deref()
    }

    /// `x-kubernetes-list-map-keys` of a `map` list.
    pub fn list_map_keys(&self) -> &[String] {
        &self.list_map_keys
    }
}

/// The schema of one value, as server-side apply reads it, wherever it comes from; `Copy`,
/// so a walk passes it down.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Schema<'a> {
    /// Nothing known: objects are owned and merged field by field, lists whole.
    Unknown,
    /// A built-in struct, by its generated table.
    Struct(&'static [FieldMeta]),
    /// A field of a built-in struct (its list and map type, and the table of what it
    /// holds).
    Field(&'static FieldMeta),
    /// A node of a custom resource's structural schema.
    Custom(&'a StructuralSchema),
}

impl<'a> Schema<'a> {
    /// `ObjectMeta`'s, which holds for every kind's `metadata`, custom resources too.
    pub(crate) fn object_meta() -> Schema<'static> {
        use kclient_apimachinery::meta::PatchMeta as _;
        Schema::Struct(kclient_apimachinery::meta::v1::ObjectMeta::patch_fields())
    }

    /// The schema of the member `name` of an object (a struct's field, or a map's value).
    pub(crate) fn member(self, name: &str) -> Schema<'a> {
        match self {
            Schema::Unknown => Schema::Unknown,
            Schema::Struct(table) => table
                .iter()
                .find(|f| f.name == name)
                .map_or(Schema::Unknown, Schema::Field),
            Schema::Field(_) => self.held().member(name),
            Schema::Custom(node) => node
                .properties
                .get(name)
                .or(node.additional_properties.as_deref())
                .map_or(Schema::Unknown, Schema::Custom),
        }
    }

    /// The schema of a list's items.
    pub(crate) fn items(self) -> Schema<'a> {
        match self {
            Schema::Field(_) => self.held(),
            Schema::Custom(node) => node
                .items
                .as_deref()
                .map_or(Schema::Unknown, Schema::Custom),
            Schema::Unknown | Schema::Struct(_) => Schema::Unknown,
        }
    }

    /// The struct a built-in field holds (directly, as list items or as map values).
    fn held(self) -> Schema<'a> {
        match self {
            Schema::Field(f) => f.fields.map_or(Schema::Unknown, |t| Schema::Struct(t())),
            _ => Schema::Unknown,
        }
    }

    /// The keys of a `listType=map` list; `None` for any other value.
    pub(crate) fn list_map_keys(self) -> Option<Vec<&'a str>> {
        let keys: Vec<&str> = match self {
            Schema::Field(f) if f.list_type == Some("map") => f.list_map_keys.to_vec(),
            Schema::Custom(n) if n.list_type.as_deref() == Some("map") => {
                n.list_map_keys.iter().map(String::as_str).collect()
            }
            _ => return None,
        };
        Some(keys).filter(|k| !k.is_empty())
    }

    /// Whether the value is a `listType=set` list.
    pub(crate) fn is_set(self) -> bool {
        match self {
            Schema::Field(f) => f.list_type == Some("set"),
            Schema::Custom(n) => n.list_type.as_deref() == Some("set"),
            Schema::Unknown | Schema::Struct(_) => false,
        }
    }

    /// Whether the value is an atomic map or struct (a label selector), owned and replaced
    /// whole.
    pub(crate) fn is_atomic_map(self) -> bool {
        match self {
            Schema::Field(f) => f.map_type == Some("atomic"),
            Schema::Custom(n) => n.map_type.as_deref() == Some("atomic"),
            Schema::Unknown | Schema::Struct(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_crd_schema_keys_its_lists_and_maps() {
        let schema = StructuralSchema::from_openapi_v3(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
                    "labels": {"type": "object",
                        "additionalProperties": {"type": "object", "x-kubernetes-map-type": "atomic"}},
                }},
            },
        }));
        let spec = Schema::Custom(&schema).member("spec");
        assert_eq!(
            spec.member("ports").list_map_keys(),
            Some(vec!["port", "protocol"])
        );
        assert!(matches!(
            spec.member("ports").items().member("name"),
            Schema::Custom(_)
        ));
        assert!(spec.member("tags").is_set());
        assert!(spec.member("args").list_map_keys().is_none() && !spec.member("args").is_set());
        assert!(spec.member("selector").is_atomic_map());
        assert!(spec.member("labels").member("any").is_atomic_map());
        assert!(matches!(spec.member("missing"), Schema::Unknown));
    }

    #[test]
    fn a_built_in_field_reads_its_patch_metadata() {
        use kclient_apimachinery::meta::PatchMeta as _;
        let deployment = Schema::Struct(kclient_api::apps::v1::Deployment::patch_fields());
        let containers = deployment
            .member("spec")
            .member("template")
            .member("spec")
            .member("containers");
        assert_eq!(containers.list_map_keys(), Some(vec!["name"]));
        assert_eq!(
            containers.items().member("ports").list_map_keys(),
            Some(vec!["containerPort", "protocol"])
        );
        assert!(deployment.member("spec").member("selector").is_atomic_map());
        assert!(Schema::object_meta().member("finalizers").is_set());
    }
}
