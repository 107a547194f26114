//! Reading back what a field manager owns, as client-go's `ExtractX` functions do (its
//! `managedfields.ExtractInto` over structured-merge-diff's `ExtractItems`): the generated
//! `extract_<kind>` / `extract_<kind>_status` wrappers call [`extract_into`], which walks the
//! object's JSON with the field sets of the manager's `Apply` entries in
//! `metadata.managedFields` ([`extract_fields`]).
//!
//! The field set format (`FieldsV1`, read through its own decoder): `f:<name>` is a struct
//! field or a map key, `k:{...}` an element of a list-map by its key fields, `v:<json>` an
//! element of a set by its value, `i:<n>` an element by index, and `.` the node itself. A node
//! whose set has no members below it (`{}` or only `.`) is a leaf, owned with its whole value
//! (an atomic struct or list, a scalar, a set element); below any other node only the owned
//! members are kept, in the object's order.

use std::fmt;

use kclient_apimachinery::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Why [`extract_into`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct ExtractError {
    message: String,
    source: Option<serde_json::Error>,
}

impl ExtractError {
    fn new(message: String, source: serde_json::Error) -> Self {
        ExtractError {
            message,
            source: Some(source),
        }
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
            .as_ref()
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
pub fn extract_into<K: Serialize, A: DeserializeOwned>(
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
        merge(&mut owned, extract_fields(&value, &set));
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
pub fn extract_fields(value: &Value, set: &Value) -> Value {
    let Some(members) = set.as_object() else {
        // Not a field set: nothing is owned below here.
        return Value::Null;
    };
    if members.keys().all(|k| k == ".") {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, child) in members {
                if let Some(name) = key.strip_prefix("f:")
                    && let Some(v) = map.get(name)
                {
                    out.insert(name.to_string(), extract_fields(v, child));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut picked: Vec<(usize, Value)> = Vec::new();
            for (key, child) in members {
                let index = if let Some(keys) = key.strip_prefix("k:") {
                    let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(keys) else {
                        continue;
                    };
                    items.iter().position(|item| {
                        keys.iter()
                            .all(|(k, v)| item.get(k).is_some_and(|x| x == v))
                    })
                } else if let Some(v) = key.strip_prefix("v:") {
                    let Ok(v) = serde_json::from_str::<Value>(v) else {
                        continue;
                    };
                    items.iter().position(|item| *item == v)
                } else if let Some(i) = key.strip_prefix("i:") {
                    i.parse::<usize>().ok().filter(|i| *i < items.len())
                } else {
                    None
                };
                if let Some(i) = index {
                    picked.push((i, extract_fields(&items[i], child)));
                }
            }
            picked.sort_by_key(|(i, _)| *i);
            picked.dedup_by_key(|(i, _)| *i);
            Value::Array(picked.into_iter().map(|(_, v)| v).collect())
        }
        // A scalar named with members below it: it is owned as it is.
        other => other.clone(),
    }
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
    use serde_json::json;

    use super::extract_fields;

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

    #[test]
    fn an_element_owned_only_as_a_whole_keeps_its_whole_value() {
        let obj = json!({"ports": [{"port": 80, "protocol": "TCP", "name": "http"}]});
        let set = json!({"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}}}});
        assert_eq!(extract_fields(&obj, &set), obj);
    }
}
