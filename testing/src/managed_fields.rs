//! `metadata.managedFields` as the fake keeps them: one entry per field manager, operation
//! and subresource, in the server's `FieldsV1` format.
//!
//! The fake does not run structured-merge-diff: an `Apply` entry owns exactly the fields of
//! the applied configuration, an `Update` entry every field the manager's request sent
//! (lists as a whole); conflicts between managers are not detected (see the crate docs).

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
                    if matches!(
                        k.as_str(),
                        "labels"
                            | "annotations"
                            | "finalizers"
                            | "ownerReferences"
                            | "generateName"
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
