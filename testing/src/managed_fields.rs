//! `metadata.managedFields` as the fake keeps them: one entry per field manager, operation
//! and subresource, in the server's `FieldsV1` format.
//!
//! The fake does not run structured-merge-diff: an `Apply` entry owns exactly the fields of
//! the applied configuration, an `Update` entry every field the manager's request sent
//! (lists as a whole, but for `metadata.finalizers`, a set whose items are owned one by one,
//! `v:"<item>"`, as on the server); conflicts between managers are not detected (see the
//! crate docs).

use serde_json::{Map, Value, json};

/// The `FieldsV1` set of the fields in `object`: `{"f:spec":{"f:replicas":{}}}`. Lists are
/// owned whole (`{}` at the list's key); identity fields are left out as the server leaves
/// them out.
pub(crate) fn fields_v1(object: &Value) -> Value {
    let Some(map) = object.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for (key, value) in map {
        if key == "apiVersion" || key == "kind" {
            continue;
        }
        if key == "metadata" {
            let mut meta = Map::new();
            if let Some(m) = value.as_object() {
                for (k, v) in m {
                    if k == "finalizers" {
                        meta.insert("f:finalizers".into(), set_items(v));
                    } else if matches!(
                        k.as_str(),
                        "labels" | "annotations" | "ownerReferences" | "generateName"
                    ) {
                        meta.insert(format!("f:{k}"), leaf_set(v));
                    }
                }
            }
            if !meta.is_empty() {
                out.insert("f:metadata".into(), Value::Object(meta));
            }
            continue;
        }
        out.insert(format!("f:{key}"), leaf_set(value));
    }
    Value::Object(out)
}

fn leaf_set(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut out = Map::new();
            if m.is_empty() {
                out.insert(".".into(), json!({}));
            }
            for (k, v) in m {
                out.insert(format!("f:{k}"), leaf_set(v));
            }
            Value::Object(out)
        }
        _ => json!({}),
    }
}

/// The set of a set list's items, owned one by one, as the server writes it:
/// `{"v:\"a\"":{}}`; an empty list is the node alone, `{".":{}}` (never `{}`, which
/// [`owns`] reads as a list owned whole).
fn set_items(list: &Value) -> Value {
    let mut out = Map::new();
    for item in list.as_array().into_iter().flatten() {
        out.insert(format!("v:{item}"), json!({}));
    }
    if out.is_empty() {
        out.insert(".".into(), json!({}));
    }
    Value::Object(out)
}

/// The leaf paths of a `FieldsV1` set (`{"f:data":{"f:a":{}}}` has `data.a`); an item of a
/// set list is a last element `v:<item>` (`metadata.finalizers.v:"a"`).
fn leaf_paths(set: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Some(map) = set.as_object() else {
        return;
    };
    let children: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| k.starts_with("f:") || k.starts_with("v:"))
        .collect();
    if children.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix.clone());
        }
        return;
    }
    for (key, value) in children {
        prefix.push(match key.strip_prefix("f:") {
            Some(name) => name.to_string(),
            None => key.clone(),
        });
        leaf_paths(value, prefix, out);
        prefix.pop();
    }
}

fn owns(set: &Value, path: &[String]) -> bool {
    let mut current = set;
    for part in path {
        let item = part.starts_with("v:");
        let key = if item {
            part.clone()
        } else {
            format!("f:{part}")
        };
        match current.get(&key) {
            Some(next) => current = next,
            None => {
                let Some(m) = current.as_object() else {
                    return false;
                };
                // A parent owned as a leaf (a list owned whole) owns what is below it; a
                // set's items are owned one by one, so only a set owned whole (`{}`, as an
                // older entry has it) owns an item it does not name.
                let whole = if item {
                    m.is_empty()
                } else {
                    m.keys()
                        .all(|k| !k.starts_with("f:") && !k.starts_with("v:"))
                };
                return whole && !std::ptr::eq(current, set);
            }
        }
    }
    true
}

/// The fields `manager` applied before and no longer applies, that no other manager owns:
/// server-side apply removes them from the object.
pub(crate) fn removed_by_apply(
    object: &Value,
    manager: &str,
    subresource: &str,
    applied: &Value,
) -> Vec<Vec<String>> {
    let Some(entries) = object["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    let is_mine = |e: &Value| {
        e["manager"] == manager
            && e["operation"] == "Apply"
            && e["subresource"].as_str().unwrap_or("") == subresource
    };
    let Some(before) = entries.iter().find(|e| is_mine(e)) else {
        return Vec::new();
    };
    let now = fields_v1(applied);
    let mut paths = Vec::new();
    leaf_paths(&before["fieldsV1"], &mut Vec::new(), &mut paths);
    paths
        .into_iter()
        .filter(|p| !owns(&now, p))
        .filter(|p| {
            !entries
                .iter()
                .filter(|e| !is_mine(e))
                .any(|e| owns(&e["fieldsV1"], p))
        })
        .collect()
}

/// The leaf paths whose values differ between two versions of an object (maps compared key
/// by key, anything else whole), among the fields managers can own.
pub(crate) fn changed_paths(old: &Value, new: &Value) -> Vec<Vec<String>> {
    fn walk(old: &Value, new: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match (old.as_object(), new.as_object()) {
            (Some(a), Some(b)) => {
                let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for k in keys {
                    let (x, y) = (
                        a.get(k).unwrap_or(&Value::Null),
                        b.get(k).unwrap_or(&Value::Null),
                    );
                    if x != y {
                        prefix.push(k.clone());
                        walk(x, y, prefix, out);
                        prefix.pop();
                    }
                }
            }
            _ => out.push(prefix.clone()),
        }
    }
    let owned = |v: &Value| fields_v1_source(v);
    let mut out = Vec::new();
    walk(&owned(old), &owned(new), &mut Vec::new(), &mut out);
    out
}

/// The part of an object managers can own (what [`fields_v1`] reads), as a value.
fn fields_v1_source(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(m) = out.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences" | "generateName"
                )
            });
        }
    }
    out
}

/// Takes the fields at `paths` away from every entry but `manager`'s `Update` one: a manager
/// that changes a field becomes its only owner, as on the server. Entries left owning
/// nothing are dropped.
pub(crate) fn take_ownership(object: &mut Value, manager: &str, paths: &[Vec<String>]) {
    fn remove(set: &mut Value, path: &[String]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        let key = format!("f:{first}");
        let Some(map) = set.as_object_mut() else {
            return;
        };
        if rest.is_empty() {
            map.remove(&key);
        } else if let Some(child) = map.get_mut(&key) {
            remove(child, rest);
            if child
                .as_object()
                .is_some_and(|c| c.keys().all(|k| k == "."))
            {
                map.remove(&key);
            }
        }
    }
    let Some(entries) = object["metadata"]
        .get_mut("managedFields")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for entry in entries.iter_mut() {
        if entry["manager"] == manager && entry["operation"] == "Update" {
            continue;
        }
        for path in paths {
            remove(&mut entry["fieldsV1"], path);
        }
    }
    entries.retain(|e| e["fieldsV1"].as_object().is_some_and(|m| !m.is_empty()));
}

/// Removes the field at `path` from `object`.
pub(crate) fn remove_path(object: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for part in parents {
        match current.get_mut(part) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Some(item) = last.strip_prefix("v:") {
        // An item of a set list.
        if let (Ok(item), Some(list)) =
            (serde_json::from_str::<Value>(item), current.as_array_mut())
        {
            list.retain(|x| *x != item);
        }
    } else if let Some(map) = current.as_object_mut() {
        map.remove(last);
    }
}

/// Records that `manager` wrote `written` with `operation` (`Apply` or `Update`) through
/// `subresource` (`""` for the main resource): replaces that manager's entry, or adds one.
pub(crate) fn record(
    object: &mut Value,
    manager: &str,
    operation: &str,
    subresource: &str,
    api_version: &str,
    written: &Value,
    time: &str,
) {
    if manager.is_empty() {
        return;
    }
    let entry = {
        let mut e = json!({
            "manager": manager,
            "operation": operation,
            "apiVersion": api_version,
            "time": time,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(written),
        });
        if !subresource.is_empty() {
            e["subresource"] = json!(subresource);
        }
        e
    };
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let list = meta
        .entry("managedFields")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let Some(items) = list.as_array_mut() else {
        return;
    };
    let same = |e: &Value| {
        e["manager"] == manager
            && e["operation"] == operation
            && e["subresource"].as_str().unwrap_or("") == subresource
    };
    // A manager that owns no field has no entry (the server drops it).
    let owns_nothing = entry["fieldsV1"].as_object().is_some_and(Map::is_empty);
    match items.iter_mut().position(|e| same(e)) {
        Some(i) if owns_nothing => {
            items.remove(i);
        }
        Some(i) => items[i] = entry,
        None if owns_nothing => {}
        None => items.push(entry),
    }
    if items.is_empty() {
        meta.remove("managedFields");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_lists_owned_fields() {
        let applied = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"app": "x"}},
            "data": {"k": "v"},
        });
        assert_eq!(
            fields_v1(&applied),
            json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:data": {"f:k": {}}})
        );
    }

    /// Finalizers are a set: each item owned alone, in the server's format (read from a
    /// kube-apiserver's managedFields after an apply), and an item its manager no longer
    /// applies is removed unless another manager owns it.
    #[test]
    fn finalizers_are_owned_item_by_item() {
        let applied = |items: Value| json!({"metadata": {"name": "a", "finalizers": items}});
        let apply = |obj: &mut Value, manager: &str, items: Value| {
            record(obj, manager, "Apply", "", "v1", &applied(items), "t");
        };
        assert_eq!(
            fields_v1(&applied(json!(["example.com/a"]))),
            json!({"f:metadata": {"f:finalizers": {"v:\"example.com/a\"": {}}}})
        );
        assert_eq!(
            fields_v1(&applied(json!([]))),
            json!({"f:metadata": {"f:finalizers": {".": {}}}})
        );
        let mut obj = json!({"metadata": {"name": "a", "finalizers": ["x/a", "x/b"]}});
        apply(&mut obj, "m", json!(["x/a"]));
        apply(&mut obj, "n", json!(["x/b"]));
        let removed = removed_by_apply(&obj, "m", "", &applied(json!([])));
        assert_eq!(removed, [["metadata", "finalizers", "v:\"x/a\""]]);
        remove_path(&mut obj, &removed[0]);
        assert_eq!(obj["metadata"]["finalizers"], json!(["x/b"]));
        // Owned by both: stays.
        apply(&mut obj, "m", json!(["x/b"]));
        assert!(removed_by_apply(&obj, "m", "", &applied(json!([]))).is_empty());
    }

    #[test]
    fn record_replaces_the_managers_entry() {
        let mut obj = json!({"metadata": {"name": "a"}});
        record(
            &mut obj,
            "m",
            "Apply",
            "",
            "v1",
            &json!({"data": {"a": "1"}}),
            "t1",
        );
        record(
            &mut obj,
            "m",
            "Apply",
            "",
            "v1",
            &json!({"data": {"b": "1"}}),
            "t2",
        );
        record(
            &mut obj,
            "other",
            "Update",
            "",
            "v1",
            &json!({"data": {"c": "1"}}),
            "t3",
        );
        let mf = obj["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf.len(), 2);
        assert_eq!(mf[0]["fieldsV1"], json!({"f:data": {"f:b": {}}}));
        assert_eq!(mf[1]["manager"], "other");
        // A manager left owning nothing loses its entry; the last one takes the list along.
        record(&mut obj, "other", "Update", "", "v1", &json!({}), "t4");
        assert_eq!(
            obj["metadata"]["managedFields"].as_array().unwrap().len(),
            1
        );
        record(&mut obj, "m", "Apply", "", "v1", &json!({}), "t5");
        assert!(obj["metadata"].get("managedFields").is_none());
    }
}
