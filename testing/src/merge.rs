//! Server-side apply's merge of an applied configuration into the object, as
//! structured-merge-diff merges them: objects field by field; the items of a `listType=map`
//! list by their keys and those of a `listType=set` list by value, each item where the
//! configuration puts it and the object's other items where they were; anything else
//! (scalars, atomic lists and maps) as the configuration has it. A configuration whose
//! keyed lists cannot be keyed (a null item, an item without any of its keys, two items
//! with one key), or that sets a field a custom resource's schema does not declare, is
//! refused as the server refuses it ([`faults`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::managed_fields::{item_key, path_string};
use crate::schema::{Schema, is_object_meta_field};

/// What is wrong with `config` where server-side apply builds its typed object, one line
/// per fault, as structured-merge-diff words them: a keyed list that cannot be keyed
/// (`.spec.ports: element 0: associative list with keys may not have a null element`,
/// `.spec.ports: duplicate entries for key [name="http"]`), a field a custom resource's
/// schema does not declare (`.spec.x: field not declared in schema`). As the server does, a
/// map's check stops at its first undeclared field (in name order) and a list's at its
/// first item that cannot be keyed. Empty when the configuration can be merged.
pub(crate) fn faults(config: &Value, schema: Schema<'_>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(map) = config.as_object() {
        check_map(map, schema, true, &mut Vec::new(), &mut out);
    }
    out
}

/// The faults joined as the server joins them in its message: one alone, several as
/// `errors:` with one indented line each (the server lists them in the order it walks the
/// configuration's Go maps, which varies; the fake in name order).
pub(crate) fn describe(faults: &[String]) -> String {
    match faults {
        [one] => one.clone(),
        many => {
            let mut text = String::from("errors:");
            for fault in many {
                text.push_str("\n  ");
                text.push_str(fault);
            }
            text
        }
    }
}

/// The schema of a top-level field: every kind's `metadata` is ObjectMeta.
fn root_member<'a>(schema: Schema<'a>, name: &str) -> Schema<'a> {
    if name == "metadata" {
        Schema::object_meta()
    } else {
        schema.member(name)
    }
}

/// Checks an object's fields; `object_root` for the configuration itself and an embedded
/// object, whose `apiVersion` and `kind` any schema takes and whose `metadata` is ObjectMeta.
fn check_map(
    map: &Map<String, Value>,
    schema: Schema<'_>,
    object_root: bool,
    path: &mut Vec<String>,
    out: &mut Vec<String>,
) {
    let depth = path.len();
    for (k, v) in map {
        path.push(k.clone());
        let identity = object_root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata");
        // Where a custom resource's schema is read, ObjectMeta takes its fields only.
        let unknown_meta = (object_root && k == "metadata" && schema.is_custom())
            .then(|| v.as_object()?.keys().find(|f| !is_object_meta_field(f)))
            .flatten();
        if let Some(field) = unknown_meta {
            path.push(field.clone());
        }
        if unknown_meta.is_some() || (!identity && schema.undeclared(k)) {
            out.push(format!(
                "{}: field not declared in schema",
                path_string(path)
            ));
            path.truncate(depth);
            return;
        }
        if object_root && k == "metadata" {
            check(v, Schema::object_meta(), path, out);
        } else if !identity {
            check(v, schema.member(k), path, out);
        }
        path.pop();
    }
}

fn check(value: &Value, schema: Schema<'_>, path: &mut Vec<String>, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => check_map(map, schema, schema.is_embedded(), path, out),
        Value::Array(items) => {
            let at = path_string(path);
            let mut seen = BTreeSet::new();
            if let Some(keys) = schema.list_map_keys() {
                for (i, item) in items.iter().enumerate() {
                    let key = match item {
                        Value::Null => Err("associative list with keys may not have a null element".to_owned()),
                        Value::Object(_) => item_key(item, &keys, schema.items()).ok_or_else(|| {
                            let quoted: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
                            format!(
                                "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                                quoted.join(" ")
                            )
                        }),
                        _ => Err("associative list with keys may not have non-map elements".to_owned()),
                    };
                    let key = match key {
                        Ok(key) => key,
                        Err(fault) => {
                            out.push(format!("{at}: element {i}: {fault}"));
                            return;
                        }
                    };
                    if !seen.insert(key.clone()) {
                        out.push(format!(
                            "{at}: duplicate entries for key {}",
                            path_string(std::slice::from_ref(&key))
                        ));
                    }
                    path.push(key);
                    check(item, schema.items(), path, out);
                    path.pop();
                }
            } else if schema.is_set() {
                for (i, item) in items.iter().enumerate() {
                    let fault = match item {
                        Value::Object(_) => {
                            "associative list without keys has an element that's a map type"
                        }
                        Value::Array(_) => "not supported: associative list with lists as elements",
                        Value::Null => {
                            "associative list without keys has an element that's an explicit null"
                        }
                        _ => {
                            let key = format!("v:{item}");
                            if !seen.insert(key.clone()) {
                                out.push(format!(
                                    "{at}: duplicate entries for key {}",
                                    path_string(&[key])
                                ));
                            }
                            continue;
                        }
                    };
                    out.push(format!("{at}: element {i}: {fault}"));
                    return;
                }
            } else {
                // An atomic list's items are checked too, by index.
                for (i, item) in items.iter().enumerate() {
                    path.push(format!("i:{i}"));
                    check(item, schema.items(), path, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// `config` merged into `live` (both whole objects) as `schema` says. A `null` in the
/// configuration keeps an object's content, and is kept in a custom resource (whose
/// pruning and defaulting then decide) but removes a built-in's field (Go's decoding).
/// Call it on a configuration without [`faults`].
pub(crate) fn merge(live: &Value, config: &Value, schema: Schema<'_>) -> Value {
    match (live.as_object(), config.as_object()) {
        (Some(l), Some(c)) => Value::Object(merge_maps(l, c, |k| root_member(schema, k))),
        _ => config.clone(),
    }
}

fn merge_maps<'a>(
    live: &Map<String, Value>,
    config: &Map<String, Value>,
    member: impl Fn(&str) -> Schema<'a>,
) -> Map<String, Value> {
    let mut out = live.clone();
    for (k, v) in config {
        match merge_value(live.get(k), v, member(k)) {
            Some(merged) => out.insert(k.clone(), merged),
            None => out.remove(k),
        };
    }
    out
}

/// One value merged; `None` when the configuration removes it (`null`).
fn merge_value(live: Option<&Value>, config: &Value, schema: Schema<'_>) -> Option<Value> {
    Some(match (live, config) {
        (Some(Value::Object(l)), Value::Null) => Value::Object(l.clone()),
        (_, Value::Null) if schema.is_custom() => Value::Null,
        (_, Value::Null) => return None,
        (Some(Value::Object(l)), Value::Object(c)) if !schema.is_atomic_map() => {
            Value::Object(merge_maps(l, c, |k| schema.member(k)))
        }
        (Some(Value::Array(l)), Value::Array(c)) => match schema.list_map_keys() {
            Some(keys) => {
                let items = schema.items();
                Value::Array(merge_keyed(l, c, |i| item_key(i, &keys, items), items))
            }
            None if schema.is_set() => {
                Value::Array(merge_keyed(l, c, |i| Some(i.to_string()), Schema::Unknown))
            }
            None => config.clone(),
        },
        _ => config.clone(),
    })
}

/// The items of a keyed list merged: an item the configuration has goes where the
/// configuration puts it (merged with the object's item of the same key), an item only the
/// object has stays where it was, and the items both have keep the configuration's order.
fn merge_keyed(
    live: &[Value],
    config: &[Value],
    key: impl Fn(&Value) -> Option<String>,
    items: Schema<'_>,
) -> Vec<Value> {
    let live_keys: Vec<Option<String>> = live.iter().map(&key).collect();
    let config_keys: Vec<Option<String>> = config.iter().map(&key).collect();
    let mut live_at: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, k) in live_keys.iter().enumerate() {
        if let Some(k) = k {
            live_at.entry(k.as_str()).or_insert(i);
        }
    }
    let in_config: BTreeSet<&str> = config_keys.iter().flatten().map(String::as_str).collect();
    // The items both lists have, in the configuration's order: the next one is where the
    // object's items stop and the configuration's are placed.
    let mut shared = config_keys
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|k| live_at.contains_key(k))
        .peekable();
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let (mut li, mut ci) = (0, 0);
    while li < live.len() || ci < config.len() {
        if li < live.len() {
            match live_keys[li].as_deref() {
                Some(k) if in_config.contains(k) => {
                    if placed.contains(k) || shared.peek() != Some(&k) {
                        // Placed already, or placed later where the configuration has it.
                        li += 1;
                        continue;
                    }
                }
                _ => {
                    out.push(live[li].clone());
                    li += 1;
                    continue;
                }
            }
        }
        let Some(item) = config.get(ci) else {
            li += 1;
            continue;
        };
        let k = config_keys[ci].as_deref();
        let before = k.and_then(|k| live_at.get(k)).map(|&i| &live[i]);
        if let Some(merged) = merge_value(before, item, items) {
            out.push(merged);
        }
        if let Some(k) = k {
            placed.insert(k);
            if shared.peek() == Some(&k) {
                shared.next();
            }
        }
        ci += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::StructuralSchema;
    use serde_json::json;

    fn probe_schema() -> StructuralSchema {
        StructuralSchema::from_openapi_v3(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {"type": "object", "properties": {"port": {"type": "integer"},
                        "protocol": {"type": "string"}, "name": {"type": "string"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
            }},
        }}))
    }

    /// The order the server gave (kube-apiserver of testenv, `kubectl apply --server-side`
    /// of the two configurations in turn): shared items in the configuration's order, the
    /// object's others where they were.
    #[test]
    fn keyed_lists_merge_by_key_in_the_servers_order() {
        let schema = probe_schema();
        let live = json!({"spec": {
            "ports": [{"port": 80, "protocol": "TCP", "name": "a"}, {"port": 81, "protocol": "TCP"}],
            "tags": ["x", "y"], "args": ["1"], "selector": {"a": "1"}}});
        let config = json!({"spec": {
            "ports": [{"port": 82, "protocol": "TCP"}, {"port": 80, "protocol": "TCP", "name": "b"}],
            "tags": ["z", "x"], "args": ["2"], "selector": {"b": "2"}}});
        assert!(faults(&config, Schema::Custom(&schema)).is_empty());
        assert_eq!(
            merge(&live, &config, Schema::Custom(&schema)),
            json!({"spec": {
                "ports": [{"port": 82, "protocol": "TCP"}, {"port": 80, "protocol": "TCP", "name": "b"},
                    {"port": 81, "protocol": "TCP"}],
                "tags": ["z", "x", "y"], "args": ["2"], "selector": {"b": "2"}}})
        );
        // Without a schema, lists are atomic.
        assert_eq!(
            merge(&live, &config, Schema::Unknown)["spec"]["ports"],
            config["spec"]["ports"]
        );
    }

    #[test]
    fn shared_items_follow_the_configuration_around_the_objects_own() {
        let schema = probe_schema();
        let ports = |ports: &[u16]| json!({"spec": {"ports": ports.iter().map(|p| json!({"port": p, "protocol": "TCP"})).collect::<Vec<_>>()}});
        let merged = merge(
            &ports(&[1, 2, 3, 4]),
            &ports(&[4, 5, 2]),
            Schema::Custom(&schema),
        );
        let order: Vec<u64> = merged["spec"]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["port"].as_u64().unwrap())
            .collect();
        // As the server ordered them (the same two applies to testenv's kube-apiserver): the
        // object's own items keep their places, the shared ones come as configured, with 5
        // between them.
        assert_eq!(order, [1, 3, 4, 5, 2]);
    }

    /// The messages are the server's (the same configurations applied to testenv's
    /// kube-apiserver).
    #[test]
    fn unkeyable_items_are_faults_worded_as_the_servers() {
        let schema = probe_schema();
        let spec = |spec: Value| json!({"spec": spec});
        let one = |config: Value| faults(&config, Schema::Custom(&schema));
        assert_eq!(
            one(spec(
                json!({"ports": [{"port": 83, "protocol": "TCP"}, {"port": 83, "protocol": "TCP"}]})
            )),
            [".spec.ports: duplicate entries for key [port=83,protocol=\"TCP\"]"]
        );
        assert_eq!(
            one(spec(json!({"ports": [{"name": "x"}]}))),
            [
                ".spec.ports: element 0: associative list with keys has an element that omits all key fields [\"port\" \"protocol\"] (and doesn't have default values for any key fields)"
            ]
        );
        assert_eq!(
            one(spec(json!({"ports": [null]}))),
            [".spec.ports: element 0: associative list with keys may not have a null element"]
        );
        assert_eq!(
            one(spec(json!({"tags": ["q", "q"]}))),
            [".spec.tags: duplicate entries for key [=\"q\"]"]
        );
        // A key field alone keys the item; the args list is atomic, so anything goes there.
        assert!(
            one(spec(
                json!({"ports": [{"port": 84}], "args": ["a", "a", null]})
            ))
            .is_empty()
        );
        let two = one(spec(json!({"ports": [null], "tags": ["q", "q"]})));
        assert_eq!(
            describe(&two),
            "errors:\n  .spec.ports: element 0: associative list with keys may not have a null element\n  .spec.tags: duplicate entries for key [=\"q\"]"
        );
    }
}
