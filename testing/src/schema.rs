//! What the server reads from a kind's schema: for server-side apply, how each list is
//! keyed (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) and which maps are atomic
//! (`x-kubernetes-map-type`); for a custom resource, also which fields it keeps (pruning),
//! the defaults it fills, and what it validates (`validation`, with the string formats in
//! `formats`). A built-in kind has the first in its generated patch metadata; a custom
//! resource all of it in its CustomResourceDefinition's `openAPIV3Schema`, which
//! [`StructuralSchema`] holds.

use std::collections::BTreeMap;

use kclient_apimachinery::meta::FieldMeta;
use serde_json::Value;

mod durations;
mod formats;
#[cfg(feature = "cel")]
mod rules;
mod validation;

use validation::Limits;

/// A node of a custom resource's structural schema: the node's properties (or the schema
/// of its map values), the schema of its list items, its list and map types, its default,
/// whether it is nullable, keeps unknown fields (`x-kubernetes-preserve-unknown-fields`) or
/// is an embedded object (`x-kubernetes-embedded-resource`), and what the server validates:
/// type, `enum`, `required`, format, bounds, lengths, pattern and sizes (CEL rules aside).
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
///     "properties": {
///         "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
///         "status": {"type": "object", "properties": {"conditions": {
///             "type": "array",
///             "x-kubernetes-list-type": "map",
///             "x-kubernetes-list-map-keys": ["type"],
///             "items": {"type": "object", "properties": {
///                 "type": {"type": "string"},
///                 "status": {"type": "string"},
///             }},
///         }}},
///     },
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
    default: Option<Value>,
    nullable: bool,
    preserve_unknown_fields: bool,
    /// `additionalProperties: true`: any field is kept, its value pruned as by a schema
    /// that declares nothing.
    any_additional: bool,
    embedded_resource: bool,
    /// `type`, checked on every write (`integer`, `number`, `string`, `boolean`, `object`,
    /// `array`).
    value_type: Option<String>,
    /// `x-kubernetes-int-or-string`: an integer or a string.
    int_or_string: bool,
    /// `required`: the properties an object must hold.
    required: Vec<String>,
    /// `enum`: the values allowed.
    allowed: Option<Vec<Value>>,
    /// The bounds on the value: format, range, lengths, pattern, sizes.
    limits: Limits,
    /// Whether this node or one below it has CEL rules (`x-kubernetes-validations`).
    rules: bool,
    /// This node's CEL rules, compiled (feature `cel`).
    #[cfg(feature = "cel")]
    cel: Vec<rules::Rule>,
    /// Whether server-side apply takes any field here: the node, or one above it, keeps
    /// unknown fields, or it declares neither properties nor a schema for its values.
    open: bool,
}

/// Whether a value is what Go leaves out of ObjectMeta's JSON: empty or null.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// The default of a built-in list-map's key field `name`: a port's `protocol` (`TCP`) is
/// the one key field the built-in kinds default.
pub(crate) fn built_in_key_default(name: &str) -> Option<Value> {
    (name == "protocol").then(|| Value::String("TCP".into()))
}

/// Whether `name` is a field of ObjectMeta.
pub(crate) fn is_object_meta_field(name: &str) -> bool {
    OBJECT_META_FIELDS.contains(&name)
}

/// The fields of `ObjectMeta`, all a custom resource's `metadata` (or an embedded
/// object's) keeps.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

impl StructuralSchema {
    /// Reads an OpenAPI v3 schema, as a CRD version's `schema.openAPIV3Schema` holds it.
    /// CEL rules (`x-kubernetes-validations`) are left out; a node that is not an object
    /// reads as a schema that says nothing.
    pub fn from_openapi_v3(schema: &Value) -> Self {
        StructuralSchema::read(schema, false)
    }

    /// Reads a node; `preserving` when a node above it keeps unknown fields, which server-
    /// side apply carries down to every node below.
    fn read(schema: &Value, preserving: bool) -> Self {
        let text = |key: &str| schema[key].as_str().map(str::to_owned);
        let flag = |key: &str| schema[key].as_bool() == Some(true);
        let preserve_unknown_fields = flag("x-kubernetes-preserve-unknown-fields");
        let below = preserving || preserve_unknown_fields;
        let nested = |key: &str| {
            schema
                .get(key)
                .filter(|s| s.is_object())
                .map(|s| Box::new(StructuralSchema::read(s, below)))
        };
        let properties: BTreeMap<String, StructuralSchema> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, s)| (name.clone(), StructuralSchema::read(s, below)))
            .collect();
        let additional_properties = nested("additionalProperties");
        let any_additional = schema["additionalProperties"] == Value::Bool(true);
        let open =
            below || any_additional || (properties.is_empty() && additional_properties.is_none());
        let items = nested("items");
        let rules = schema["x-kubernetes-validations"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
            || properties.values().any(|p| p.rules)
            || [&additional_properties, &items]
                .into_iter()
                .flatten()
                .any(|s| s.rules);
        StructuralSchema {
            properties,
            additional_properties,
            items,
            list_type: text("x-kubernetes-list-type"),
            list_map_keys: schema["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect(),
            map_type: text("x-kubernetes-map-type"),
            // A `null` default is none, as the server decodes it.
            default: schema.get("default").filter(|d| !d.is_null()).cloned(),
            nullable: flag("nullable"),
            preserve_unknown_fields,
            any_additional,
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            // An empty `type` is none, and an empty `enum` allows anything, to the server.
            value_type: text("type").filter(|t| !t.is_empty()),
            int_or_string: flag("x-kubernetes-int-or-string"),
            required: schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_owned))
                .collect(),
            allowed: schema["enum"].as_array().filter(|e| !e.is_empty()).cloned(),
            limits: Limits::read(schema),
            rules,
            #[cfg(feature = "cel")]
            cel: rules::Rule::read_all(schema),
            open,
        }
    }

    /// Prunes and defaults a custom resource as the server does when it decodes one: drops
    /// the fields the schema does not declare (unless a node keeps unknown fields; the root
    /// and embedded objects keep `apiVersion`, `kind` and ObjectMeta's fields of
    /// `metadata`), and a `null` where the field is neither nullable nor defaulted; then
    /// fills each missing (or non-nullable `null`) field that has a default, and the
    /// defaults inside it, in every object present.
    pub(crate) fn prune_and_default(&self, object: &mut Value) {
        self.prune(object, true);
        self.fill_defaults(object);
    }

    /// [`prune_and_default`](Self::prune_and_default) for the object a server-side apply
    /// made, which the server does not decode again: its `null`s stay (a map the
    /// configuration gives as `{}` and the apply emptied is `null`, see
    /// `managed_fields::remove_applied_field`), to be defaulted, or refused by validation
    /// where the field is not nullable.
    pub(crate) fn default_applied(&self, object: &mut Value) {
        self.prune_with(object, true, false);
        self.fill_defaults(object);
    }

    /// Drops the fields the schema does not declare, and (see
    /// [`prune_and_default`](Self::prune_and_default)) the `null`s it does not allow.
    pub(crate) fn prune(&self, value: &mut Value, object_root: bool) {
        self.prune_with(value, object_root, true);
    }

    fn prune_with(&self, value: &mut Value, object_root: bool, drop_nulls: bool) {
        match value {
            Value::Object(map) => {
                map.retain(|k, v| {
                    if object_root && (k == "apiVersion" || k == "kind") {
                        return true;
                    }
                    if object_root && k == "metadata" {
                        // Read back through ObjectMeta: its fields only, empty ones dropped.
                        if let Some(meta) = v.as_object_mut() {
                            meta.retain(|k, v| {
                                OBJECT_META_FIELDS.contains(&k.as_str()) && !is_empty(v)
                            });
                        }
                        return true;
                    }
                    match self.member(k) {
                        Some(field) => {
                            if drop_nulls
                                && v.is_null()
                                && !field.nullable
                                && field.default.is_none()
                            {
                                return false;
                            }
                            field.prune_with(v, field.embedded_resource, drop_nulls);
                            true
                        }
                        None if self.any_additional => {
                            StructuralSchema::default().prune_with(v, false, drop_nulls);
                            true
                        }
                        None => self.preserve_unknown_fields,
                    }
                });
            }
            // A list that keeps unknown fields keeps them in its items too.
            Value::Array(items) if !self.preserve_unknown_fields => {
                if let Some(schema) = &self.items {
                    for item in items {
                        schema.prune_with(item, schema.embedded_resource, drop_nulls);
                    }
                }
            }
            _ => {}
        }
    }

    pub(crate) fn fill_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (k, field) in &self.properties {
                    let Some(default) = &field.default else {
                        continue;
                    };
                    let unset = map.get(k).is_none_or(|v| v.is_null() && !field.nullable);
                    if unset {
                        map.insert(k.clone(), default.clone());
                    }
                }
                for (k, v) in map.iter_mut() {
                    if let Some(field) = self.member(k) {
                        field.fill_null(v);
                        field.fill_defaults(v);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for item in items {
                        schema.fill_null(item);
                        schema.fill_defaults(item);
                    }
                }
            }
            _ => {}
        }
    }

    /// A `null` list item or map value of this schema, when it is not nullable: its
    /// default, if it has one.
    fn fill_null(&self, value: &mut Value) {
        if value.is_null()
            && !self.nullable
            && let Some(default) = &self.default
        {
            *value = default.clone();
        }
    }

    /// The schema of the member `name` of an object of this schema: a property, or a map
    /// value.
    fn member(&self, name: &str) -> Option<&StructuralSchema> {
        self.properties
            .get(name)
            .or(self.additional_properties.as_deref())
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
            Schema::Custom(node) => node.member(name).map_or(Schema::Unknown, Schema::Custom),
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

    /// Whether an object of this schema may not hold the field `name`: a custom resource's
    /// node that declares neither it nor its map values, keeps no unknown fields, and is
    /// not an embedded object's `apiVersion`, `kind` or `metadata`.
    pub(crate) fn undeclared(self, name: &str) -> bool {
        match self {
            Schema::Custom(n) => {
                !n.open
                    && n.member(name).is_none()
                    && !(n.embedded_resource && matches!(name, "apiVersion" | "kind" | "metadata"))
            }
            Schema::Unknown | Schema::Struct(_) | Schema::Field(_) => false,
        }
    }

    /// The default of the key field `name` of a list-map item of this schema, which
    /// structured-merge-diff keys an item that omits it by: a custom resource's schema
    /// default; among built-ins, a port's `protocol` (`TCP`), the one defaulted key field.
    pub(crate) fn key_default(self, name: &str) -> Option<Value> {
        match self {
            Schema::Custom(n) => n.member(name).and_then(|f| f.default.clone()),
            Schema::Struct(_) | Schema::Field(_) => built_in_key_default(name),
            Schema::Unknown => None,
        }
    }

    /// Whether an object of this schema declares the field `name` (for a built-in, any
    /// field: its tables list only the fields with patch metadata).
    pub(crate) fn declares(self, name: &str) -> bool {
        match self {
            Schema::Custom(n) => n.properties.contains_key(name),
            Schema::Unknown | Schema::Struct(_) | Schema::Field(_) => true,
        }
    }

    /// Whether this is a custom resource's schema.
    pub(crate) fn is_custom(self) -> bool {
        matches!(self, Schema::Custom(_))
    }

    /// Whether this is an embedded object's schema (`x-kubernetes-embedded-resource`): it
    /// takes `apiVersion`, `kind` and an ObjectMeta `metadata` besides its properties.
    pub(crate) fn is_embedded(self) -> bool {
        matches!(self, Schema::Custom(n) if n.embedded_resource)
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

    /// What testenv's kube-apiserver stored for the same create (`spec` of the answer), the
    /// root's unknown fields and `metadata.foo` dropped as well.
    #[test]
    fn a_custom_resource_is_pruned_and_defaulted_as_the_server_does() {
        let schema = StructuralSchema::from_openapi_v3(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "default": 1},
                "nested": {"type": "object", "default": {},
                    "properties": {"inner": {"type": "string", "default": "x"}}},
                "items": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "weight": {"type": "integer", "default": 5}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object",
                    "properties": {"v": {"type": "string", "default": "d"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"known": {"type": "string", "default": "k"}}},
                "nulldef": {"type": "string", "default": "n"},
                "nullok": {"type": "string", "nullable": true, "default": "z"},
                "nullnodef": {"type": "string"},
                "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object"}}}}}}}));
        let mut object = json!({"apiVersion": "g/v1", "kind": "Def",
            "metadata": {"name": "d1", "foo": "bar"}, "extra": 1,
            "spec": {"items": [{"name": "a"}, {"name": "b", "weight": 2, "zzz": 1}],
                "labels": {"k": {}}, "free": {"anything": {"deep": 1}}, "unknown": 2,
                "nulldef": null, "nullok": null, "nullnodef": null,
                "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "e", "bogus": 1},
                    "spec": {"q": 1}, "other": 2}}});
        schema.prune_and_default(&mut object);
        assert_eq!(
            object,
            json!({"apiVersion": "g/v1", "kind": "Def", "metadata": {"name": "d1"},
                "spec": {"emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "e"},
                    "spec": {}},
                "free": {"anything": {"deep": 1}, "known": "k"},
                "items": [{"name": "a", "weight": 5}, {"name": "b", "weight": 2}],
                "labels": {"k": {"v": "d"}}, "nested": {"inner": "x"}, "nulldef": "n",
                "nullok": null, "replicas": 1}})
        );
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
