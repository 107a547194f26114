//! Reading back what a field manager owns, as client-go's `ExtractX` functions do (its
//! `managedfields.ExtractInto` over structured-merge-diff's `ExtractItems`): the generated
//! `extract_<kind>`, `extract_<kind>_from` and `extract_<kind>_<subresource>` wrappers call
//! [`extract_into`], which walks the
//! object's JSON with the field sets of the manager's `Apply` entries in
//! `metadata.managedFields` ([`extract_fields`]).
//!
//! The field set format (`FieldsV1`, read through its own decoder): `f:<name>` is a struct
//! field or a map key, `k:{...}` an element of a list-map by its key fields, `v:<json>` an
//! element of a set by its value, `i:<n>` an element by index, and `.` the node itself. A node
//! whose set has no members below it (`{}`, `null` or only `.`) is a leaf, owned with its whole
//! value (an atomic struct or list, a scalar, a list element); below any other node only the
//! owned members are kept, in the object's order. A whole set that is empty owns nothing, and
//! one that is not in this format is an error, as structured-merge-diff reads them.
//!
//! The exception is a leaf on a granular struct, map-list or set (by the kind's
//! [`PatchMeta`]): its manager applied it empty, and what it holds now other managers added,
//! so it is extracted empty (`{}`, `[]`), never with their members.

use std::fmt;

use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::meta::{FieldMeta, PatchMeta};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Why [`extract_into`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct ExtractError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl ExtractError {
    fn new(message: String, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        ExtractError {
            message,
            source: Some(Box::new(source)),
        }
    }
}

/// So that `?` works in a function returning the API error (`kclient::Error`): an
/// [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<ExtractError>()` gives this error back.
impl From<ExtractError> for kclient_apimachinery::Error {
    fn from(error: ExtractError) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExtractError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The fields of `obj` that `field_manager` owns through server-side apply on `subresource`
/// (`""` for the object, `"status"` for its status), decoded as the apply configuration `A`,
/// with `apiVersion`, `kind`, `metadata.name` and (when set) `metadata.namespace` always set.
///
/// Only the manager's entries with operation `Apply` count (an `Update` by the same manager
/// is not something it applied), as client-go's `ExtractInto`; several such entries (one per
/// API version) are united. A manager that owns nothing gives a configuration with only the
/// name and type set.
///
/// # Errors
///
/// When an entry's field set is not a JSON object of field sets, or the owned fields do not
/// decode as `A` (an object that does not match its own schema).
pub fn extract_into<K: Serialize + PatchMeta, A: DeserializeOwned>(
    obj: &K,
    metadata: &ObjectMeta,
    field_manager: &str,
    subresource: &str,
    api_version: &str,
    kind: &str,
) -> Result<A, ExtractError> {
    let value = serde_json::to_value(obj).map_err(|e| {
        ExtractError::new(
            format!("cannot serialize the {kind} to extract from: {e}"),
            e,
        )
    })?;
    let mut owned = Value::Object(Map::new());
    for entry in metadata.managed_fields.iter().flatten() {
        let applies = entry.manager.as_deref() == Some(field_manager)
            && entry.operation.as_deref() == Some("Apply")
            && entry.subresource.as_deref().unwrap_or("") == subresource;
        let Some(fields) = entry.fields_v1.as_ref().filter(|_| applies) else {
            continue;
        };
        let set: Value = fields.decode().map_err(|e| {
            ExtractError::new(
                format!(
                    "the managedFields entry of manager {field_manager:?} in {kind} {:?} is not valid JSON: {e}",
                    metadata.name.as_deref().unwrap_or("")
                ),
                e,
            )
        })?;
        check_set(&set).map_err(|problem| ExtractError {
            message: format!(
                "the managedFields entry of manager {field_manager:?} in {kind} {:?} is not a valid field set: {problem}",
                metadata.name.as_deref().unwrap_or("")
            ),
            source: None,
        })?;
        // An empty (or `null`) set owns nothing, as structured-merge-diff reads it, and so does
        // one that names only the object itself (`{".": {}}`, which no server writes); only
        // below the top is `{}` a leaf owned whole.
        if set.as_object().is_none_or(|m| m.keys().all(|k| k == ".")) {
            continue;
        }
        merge(&mut owned, extract_node(&value, &set, Node::of::<K>()));
    }
    let Value::Object(map) = &mut owned else {
        unreachable!("extraction from an object gives an object")
    };
    map.insert("apiVersion".into(), api_version.into());
    map.insert("kind".into(), kind.into());
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        if let Some(name) = metadata.name.as_deref() {
            meta.insert("name".into(), name.into());
        }
        if let Some(namespace) = metadata.namespace.as_deref().filter(|n| !n.is_empty()) {
            meta.insert("namespace".into(), namespace.into());
        }
    }
    serde_json::from_value(owned).map_err(|e| {
        ExtractError::new(
            format!("the fields {field_manager:?} owns in the {kind} do not decode as its apply configuration: {e}"),
            e,
        )
    })
}

/// The part of `value` that the field set `set` (a decoded `FieldsV1`) names: leaves keep
/// their whole value, structs and maps keep the named members, lists the named elements in
/// their order. Members of `set` that `value` lacks are left out.
///
/// A `null` set is read as `{}` (a leaf), as structured-merge-diff reads one; any other value
/// that is not a field set owns nothing.
///
/// Without a schema every leaf keeps its whole value; [`extract_into`] also knows, from the
/// kind's [`PatchMeta`], which leaves are granular values applied empty.
pub fn extract_fields(value: &Value, set: &Value) -> Value {
    extract_node(value, set, Node::UNKNOWN)
}

/// What the schema says about the value being walked: the fields of the struct it is (empty
/// when unknown or not a struct), for a struct field the field's own metadata, and whether
/// `fields` is a struct's whole table (a struct's table lists only the members with patch
/// metadata or a struct inside; a member it does not list holds a scalar, a list of scalars
/// or a map of scalars, such as `labels` or a ConfigMap's `data`).
#[derive(Clone, Copy)]
struct Node {
    fields: &'static [FieldMeta],
    field: Option<&'static FieldMeta>,
    known_struct: bool,
}

/// The metadata of a struct's member that its table does not list: none, so that it is what
/// Go's types are without metadata (a map granular, a list atomic).
static UNLISTED: FieldMeta = FieldMeta::plain("");

impl Node {
    const UNKNOWN: Node = Node {
        fields: &[],
        field: None,
        known_struct: false,
    };

    fn of<K: PatchMeta>() -> Node {
        Node {
            fields: K::patch_fields(),
            field: None,
            known_struct: true,
        }
    }

    /// The field `name` of this struct (or, in a map of structs, the value at key `name`,
    /// which is read as a member the struct's table does not list).
    fn member(self, name: &str) -> Node {
        match self.fields.iter().find(|f| f.name == name) {
            Some(f) => Node {
                fields: f.nested(),
                field: Some(f),
                known_struct: f.fields.is_some(),
            },
            None if self.known_struct => Node {
                fields: &[],
                field: Some(&UNLISTED),
                known_struct: false,
            },
            None => Node::UNKNOWN,
        }
    }

    /// An element of this list.
    fn element(self) -> Node {
        Node {
            fields: self.fields,
            field: None,
            known_struct: self.known_struct,
        }
    }

    /// Whether `value`, owned as a leaf, is a granular struct, map, map-list or set: owning
    /// it as a leaf means its manager applied it empty (had it applied members, its set would
    /// name them), so the members it holds now are other managers'. Atomic values, scalars,
    /// list elements and whatever the schema does not describe are owned whole.
    fn leaf_is_granular(self, value: &Value) -> bool {
        let Some(f) = self.field else {
            return false;
        };
        match value {
            Value::Object(_) => f.map_type != Some("atomic"),
            Value::Array(_) => matches!(f.list_type, Some("map" | "set")),
            _ => false,
        }
    }
}

fn extract_node(value: &Value, set: &Value, node: Node) -> Value {
    let members = match set {
        Value::Object(members) => members,
        Value::Null => return leaf(value, node),
        // Not a field set: nothing is owned below here.
        _ => return Value::Null,
    };
    if members.keys().all(|k| k == ".") {
        return leaf(value, node);
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, child) in members {
                if let Some(name) = key.strip_prefix("f:")
                    && let Some(v) = map.get(name)
                {
                    out.insert(name.to_string(), extract_node(v, child, node.member(name)));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            // As structured-merge-diff extracts: each item of the list, in order, that an
            // element of the set names (so every item with a key that is named).
            let elements: Vec<(Element, &Value)> = members
                .iter()
                .filter_map(|(key, child)| Some((Element::parse(key)?, child)))
                .collect();
            let keys = node.field.map_or(&[][..], |f| f.list_map_keys);
            let picked = items.iter().enumerate().filter_map(|(i, item)| {
                let (_, child) = elements.iter().find(|(e, _)| e.names(i, item, keys))?;
                Some(extract_node(item, child, node.element()))
            });
            Value::Array(picked.collect())
        }
        // A scalar named with members below it: it is owned as it is.
        other => other.clone(),
    }
}

/// An element of a list as a field set names it.
enum Element {
    /// `k:{...}`: the item of a map-list with these key fields.
    Key(Map<String, Value>),
    /// `v:<json>`: the item of a set with this value.
    Value(Value),
    /// `i:<n>`: the item at this index.
    Index(usize),
}

impl Element {
    /// The element a field set's member names, if it names one (`check_set` has refused the
    /// malformed ones).
    fn parse(key: &str) -> Option<Element> {
        if let Some(keys) = key.strip_prefix("k:") {
            match serde_json::from_str(keys) {
                Ok(Value::Object(keys)) => Some(Element::Key(keys)),
                _ => None,
            }
        } else if let Some(value) = key.strip_prefix("v:") {
            serde_json::from_str(value).ok().map(Element::Value)
        } else if let Some(index) = key.strip_prefix("i:") {
            index.parse().ok().map(Element::Index)
        } else {
            None
        }
    }

    /// Whether this is the element `item`, at `index` in a list whose key fields are `keys`
    /// (empty when the schema does not say). An item's key is the key fields it has, as
    /// structured-merge-diff makes it: `k:{"port":80}` does not name `{"port": 80, "protocol":
    /// "UDP"}` in a list keyed by both. Without the schema, every field the element gives
    /// must match.
    fn names(&self, index: usize, item: &Value, keys: &[&str]) -> bool {
        match self {
            Element::Key(fields) => {
                let matches = |(k, v): (&String, &Value)| item.get(k) == Some(v);
                if keys.is_empty() {
                    return fields.iter().all(matches);
                }
                let has = keys.iter().filter(|k| item.get(**k).is_some()).count();
                has == fields.len()
                    && fields
                        .iter()
                        .all(|(k, v)| keys.contains(&k.as_str()) && matches((k, v)))
            }
            Element::Value(value) => item == value,
            Element::Index(i) => *i == index,
        }
    }
}

/// A node owned as a whole: its value, or an empty one when it is granular (see
/// [`Node::leaf_is_granular`]).
fn leaf(value: &Value, node: Node) -> Value {
    if !node.leaf_is_granular(value) {
        return value.clone();
    }
    match value {
        Value::Array(_) => Value::Array(Vec::new()),
        _ => Value::Object(Map::new()),
    }
}

/// Checks that `set` is a field set as structured-merge-diff reads one (`fieldpath.Set`'s
/// `FromJSON`): `null` or a JSON object whose members are `.` or path elements (`f:<name>`,
/// `k:<JSON object>`, `v:<JSON>`, `i:<integer>`; other kinds are skipped, as a newer
/// format's) each holding a field set. Says what is wrong, and where, otherwise.
fn check_set(set: &Value) -> Result<(), String> {
    let members = match set {
        Value::Null => return Ok(()),
        Value::Object(members) => members,
        Value::Bool(_) => return Err("expected a JSON object, found a boolean".into()),
        Value::Number(_) => return Err("expected a JSON object, found a number".into()),
        Value::String(_) => return Err("expected a JSON object, found a string".into()),
        Value::Array(_) => return Err("expected a JSON object, found an array".into()),
    };
    for (key, child) in members {
        if let Some(keys) = key.strip_prefix("k:") {
            if !matches!(serde_json::from_str(keys), Ok(Value::Object(_))) {
                return Err(format!("{key:?} does not give its keys as a JSON object"));
            }
        } else if let Some(v) = key.strip_prefix("v:") {
            if serde_json::from_str::<Value>(v).is_err() {
                return Err(format!("{key:?} does not give its value as JSON"));
            }
        } else if let Some(i) = key.strip_prefix("i:") {
            if i.parse::<i64>().is_err() {
                return Err(format!("{key:?} does not give an integer index"));
            }
        } else if !key.starts_with("f:") {
            // `.` (the node itself) or a kind of element this format does not know.
            continue;
        }
        check_set(child).map_err(|problem| format!("under {key:?}: {problem}"))?;
    }
    Ok(())
}

/// Unites what two entries of one manager own (`into` gains `from`'s members; lists keep the
/// elements of both, `into`'s first).
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for v in b {
                if !a.contains(&v) {
                    a.push(v);
                }
            }
        }
        (into, from) => *into = from,
    }
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::v1::ObjectMeta;
    use kclient_apimachinery::meta::{FieldMeta, PatchMeta};
    use serde_json::json;

    use super::{ExtractError, extract_fields, extract_into};

    #[test]
    fn fields_maps_list_maps_sets_and_atomic_values() {
        let obj = json!({
            "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [
                    {"name": "a", "image": "a:1", "args": ["x"]},
                    {"name": "b", "image": "b:1"},
                ]}},
                "finalizers": ["f1", "f2", "f3"],
            },
        });
        let set = json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:selector": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:image": {}},
                }}},
                "f:finalizers": {"v:\"f3\"": {}, "v:\"f1\"": {}},
                "f:paused": {},
            },
        });
        assert_eq!(
            extract_fields(&obj, &set),
            json!({
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"spec": {"containers": [{"name": "b", "image": "b:1"}]}},
                    "finalizers": ["f1", "f3"],
                },
            })
        );
    }

    /// A ConfigMap whose managedFields hold one `Apply` entry of manager `me` with the field
    /// set `fields` (a raw JSON text).
    fn config_map_owned(fields: &str) -> (serde_json::Value, ObjectMeta) {
        let obj = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "web",
                "namespace": "ns",
                "managedFields": [{
                    "manager": "me",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": serde_json::from_str::<serde_json::Value>(fields).unwrap(),
                }],
            },
            "data": {"a": "1", "b": "2"},
        });
        let meta: ObjectMeta = serde_json::from_value(obj["metadata"].clone()).unwrap();
        (obj, meta)
    }

    fn extract(fields: &str) -> Result<serde_json::Value, ExtractError> {
        let (obj, meta) = config_map_owned(fields);
        extract_into(&Kind(obj), &meta, "me", "", "v1", "ConfigMap")
    }

    #[test]
    fn a_field_set_that_is_not_an_object_of_field_sets_is_an_error() {
        for fields in [
            "[]",
            "1",
            r#""f:data""#,
            r#"{"f:data": 1}"#,
            r#"{"f:data": {"f:a": []}}"#,
            r#"{"f:data": {"k:{\"name\"": {}}}"#,
            r#"{"f:data": {"k:[1]": {}}}"#,
            r#"{"f:data": {"v:not json": {}}}"#,
            r#"{"f:data": {"i:x": {}}}"#,
        ] {
            let err = extract(fields).expect_err(fields);
            let message = err.to_string();
            assert!(
                message.contains("not a valid field set"),
                "{fields}: {message}"
            );
            assert!(message.contains("\"me\""), "{fields}: {message}");
            assert!(message.contains("\"web\""), "{fields}: {message}");
        }
    }

    #[test]
    fn an_empty_or_null_field_set_owns_nothing_and_null_members_are_leaves() {
        // As structured-merge-diff reads them: an empty or null set is the empty set; a
        // `null` member is a leaf, as `{}` is; unknown path element kinds are skipped.
        let name_only = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "ns"},
        });
        assert_eq!(extract("{}").unwrap(), name_only);
        assert_eq!(extract("null").unwrap(), name_only);
        assert_eq!(extract(r#"{".": {}}"#).unwrap(), name_only);
        let mut a_only = name_only.clone();
        a_only["data"] = json!({"a": "1"});
        assert_eq!(extract(r#"{"f:data": {"f:a": null}}"#).unwrap(), a_only);
        assert_eq!(
            extract(r#"{"f:data": {"f:a": {}, "x:future": {"y": 1}}}"#).unwrap(),
            a_only
        );
    }

    /// A kind whose schema has a granular struct (`spec`), an atomic one (`selector`), a
    /// map-list (`ports`), a set (`tags`) and an atomic list (`args`).
    struct Kind(serde_json::Value);

    impl serde::Serialize for Kind {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            self.0.serialize(s)
        }
    }

    impl PatchMeta for Kind {
        fn patch_fields() -> &'static [FieldMeta] {
            static SPEC: &[FieldMeta] = &[
                FieldMeta {
                    fields: Some(|| &[]),
                    map_type: Some("atomic"),
                    ..FieldMeta::plain("selector")
                },
                FieldMeta {
                    list_type: Some("map"),
                    list_map_keys: &["port"],
                    fields: Some(|| &[]),
                    ..FieldMeta::plain("ports")
                },
                FieldMeta {
                    list_type: Some("map"),
                    list_map_keys: &["port", "protocol"],
                    fields: Some(|| &[]),
                    ..FieldMeta::plain("endpoints")
                },
                FieldMeta {
                    list_type: Some("set"),
                    ..FieldMeta::plain("tags")
                },
                FieldMeta {
                    list_type: Some("atomic"),
                    ..FieldMeta::plain("args")
                },
            ];
            static FIELDS: &[FieldMeta] = &[FieldMeta {
                fields: Some(|| SPEC),
                ..FieldMeta::plain("spec")
            }];
            FIELDS
        }
    }

    #[test]
    fn a_granular_value_owned_as_a_leaf_is_extracted_empty() {
        // Each owned as a leaf: the atomic values whole; the granular ones were applied empty
        // and hold only other managers' members now.
        let obj = json!({
            "metadata": {
                "name": "web",
                "managedFields": [{
                    "manager": "me",
                    "operation": "Apply",
                    "fieldsV1": {"f:spec": {
                        "f:selector": {}, "f:ports": {}, "f:tags": {}, "f:args": {},
                        "f:nested": {},
                    }},
                }],
            },
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"port": 80}],
                "tags": ["a"],
                "args": ["x"],
                "nested": {"unknown": 1},
            },
        });
        let meta: ObjectMeta = serde_json::from_value(obj["metadata"].clone()).unwrap();
        let extracted: serde_json::Value =
            extract_into(&Kind(obj.clone()), &meta, "me", "", "v1", "Kind").unwrap();
        assert_eq!(
            extracted["spec"],
            json!({
                "selector": {"app": "web"},
                "ports": [],
                "tags": [],
                "args": ["x"],
                // A member the struct's table does not list holds scalars; a map of them is
                // granular, as Go's maps are without metadata.
                "nested": {},
            })
        );
        // The whole spec as a leaf: a granular struct, extracted empty.
        let mut whole = obj.clone();
        whole["metadata"]["managedFields"][0]["fieldsV1"] = json!({"f:spec": {}});
        let meta: ObjectMeta = serde_json::from_value(whole["metadata"].clone()).unwrap();
        let extracted: serde_json::Value =
            extract_into(&Kind(whole), &meta, "me", "", "v1", "Kind").unwrap();
        assert_eq!(extracted["spec"], json!({}));
        // Without a schema, every leaf is whole.
        assert_eq!(
            extract_fields(&obj, &json!({"f:spec": {}}))["spec"],
            obj["spec"]
        );
    }

    /// structured-merge-diff walks the object's items and keeps each whose key (the values of
    /// the schema's key fields it has) is in the set: every item with that key, and only an
    /// item whose key has no more fields than the entry's.
    #[test]
    fn a_map_list_entry_matches_every_item_with_exactly_its_key() {
        let obj = json!({
            "metadata": {
                "name": "web",
                "managedFields": [{
                    "manager": "me",
                    "operation": "Apply",
                    "fieldsV1": {"f:spec": {
                        "f:ports": {"k:{\"port\":80}": {".": {}, "f:port": {}, "f:name": {}}},
                        "f:endpoints": {
                            "k:{\"port\":80}": {".": {}, "f:port": {}},
                            "k:{\"port\":81,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}},
                        },
                    }},
                }],
            },
            "spec": {
                // Two items with one key: the server keeps a duplicate an older client wrote.
                "ports": [
                    {"port": 80, "name": "a"},
                    {"port": 90, "name": "x"},
                    {"port": 80, "name": "b"},
                ],
                "endpoints": [
                    // Its key is {port, protocol}, not the entry's {port}.
                    {"port": 80, "protocol": "UDP"},
                    {"port": 80},
                    {"port": 81, "protocol": "TCP"},
                ],
            },
        });
        let meta: ObjectMeta = serde_json::from_value(obj["metadata"].clone()).unwrap();
        let extracted: serde_json::Value =
            extract_into(&Kind(obj.clone()), &meta, "me", "", "v1", "Kind").unwrap();
        assert_eq!(
            extracted["spec"],
            json!({
                "ports": [{"port": 80, "name": "a"}, {"port": 80, "name": "b"}],
                "endpoints": [{"port": 80}, {"port": 81}],
            })
        );
    }

    #[test]
    fn an_element_owned_only_as_a_whole_keeps_its_whole_value() {
        let obj = json!({"ports": [{"port": 80, "protocol": "TCP", "name": "http"}]});
        let set = json!({"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}}}});
        assert_eq!(extract_fields(&obj, &set), obj);
    }
}
