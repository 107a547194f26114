//! JSON patches (RFC 6902) applied as kube-apiserver applies them. The server uses the
//! `evanphx/json-patch` v4 library, which departs from the RFC where a user's test can see it,
//! and the fake follows the server rather than the RFC (kclient's own [`JsonPatch`], which
//! follows the RFC, is what clients use to build patches):
//!
//! - `replace` of an object member that does not exist adds it (the RFC says it fails);
//!   `replace` of an array index past the end fails;
//! - `test` of a missing member passes when the value is `null` or absent;
//! - `copy` from a missing object member copies `null`; `move` from one fails;
//! - `add`, `replace` and `copy` without a `value` write `null`;
//! - array indexes are parsed as Go's `strconv.Atoi` parses them (`01` is 1, `+1` is 1), and a
//!   negative index counts from the end (`-1` in an `add` appends); `-` appends in an `add`
//!   and fails elsewhere;
//! - the first segment of a path is not read (`data/k` is `/k`), and a path without a `/`
//!   (`""` for `add`, `remove`, `move` and `copy`) fails;
//! - an unknown or missing `op`, or a missing `path` or `from`, fails the patch with 422
//!   (the body is decoded first: one that is not a list of objects is a 400).
//!
//! [`JsonPatch`]: kclient_apimachinery::JsonPatch

use serde_json::{Map, Value};

/// Why a patch was refused: the body is not a patch (400), or an operation does not apply
/// (422).
#[derive(Debug, PartialEq)]
pub(crate) enum PatchFailure {
    NotAPatch(String),
    DoesNotApply(String),
}

/// Applies `patch` to a copy of `doc`.
pub(crate) fn apply(doc: &Value, patch: &Value) -> Result<Value, PatchFailure> {
    let Some(ops) = patch.as_array() else {
        return Err(PatchFailure::NotAPatch(
            "the patch is not a list of operations".into(),
        ));
    };
    if let Some(bad) = ops.iter().find(|op| !op.is_object() && !op.is_null()) {
        return Err(PatchFailure::NotAPatch(format!(
            "an operation is not an object: {bad}"
        )));
    }
    let mut doc = doc.clone();
    for op in ops {
        apply_one(&mut doc, op).map_err(PatchFailure::DoesNotApply)?;
    }
    Ok(doc)
}

/// An operation's member as the library reads it: absent and `null` are the same.
fn member<'a>(op: &'a Value, name: &str) -> Option<&'a Value> {
    op.get(name).filter(|v| !v.is_null())
}

fn string_member(op: &Value, name: &str, kind: &str) -> Result<String, String> {
    match member(op, name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("{kind} operation: {name} is not a string: {other}")),
        None => Err(format!("{kind} operation: missing {name} field")),
    }
}

fn apply_one(doc: &mut Value, op: &Value) -> Result<(), String> {
    let kind = match member(op, "op") {
        Some(Value::String(s)) => s.as_str(),
        _ => "unknown",
    };
    let value = member(op, "value").cloned();
    match kind {
        "add" => {
            let path = string_member(op, "path", kind)?;
            let (parent, key) = parent_of(doc, &path).ok_or_else(|| {
                format!("add operation does not apply: doc is missing path: {path:?}")
            })?;
            add(parent, &key, value.unwrap_or(Value::Null))
                .map_err(|e| format!("error in add for path {path:?}: {e}"))
        }
        "remove" => {
            let path = string_member(op, "path", kind)?;
            let (parent, key) = parent_of(doc, &path).ok_or_else(|| {
                format!("remove operation does not apply: doc is missing path: {path:?}")
            })?;
            remove(parent, &key)
                .map(|_| ())
                .map_err(|e| format!("error in remove for path {path:?}: {e}"))
        }
        "replace" => {
            let path = string_member(op, "path", kind)?;
            if path.is_empty() {
                return match value {
                    Some(v @ Value::Object(_)) => {
                        *doc = v;
                        Ok(())
                    }
                    _ => Err("replace operation value must be an object".into()),
                };
            }
            let (parent, key) = parent_of(doc, &path).ok_or_else(|| {
                format!("replace operation does not apply: doc is missing path: {path}")
            })?;
            get(parent, &key).map_err(|_| {
                format!("replace operation does not apply: doc is missing key: {path}")
            })?;
            set(parent, &key, value.unwrap_or(Value::Null))
                .map_err(|e| format!("error in replace for path {path:?}: {e}"))
        }
        "move" => {
            let from = string_member(op, "from", kind)?;
            let (parent, key) = parent_of(doc, &from).ok_or_else(|| {
                format!("move operation does not apply: doc is missing from path: {from}")
            })?;
            get(parent, &key).map_err(|e| format!("error in move for path {from:?}: {e}"))?;
            let moved = remove(parent, &key)
                .map_err(|e| format!("error in move for path {from:?}: {e}"))?;
            let path = string_member(op, "path", kind)?;
            let (parent, key) = parent_of(doc, &path).ok_or_else(|| {
                format!("move operation does not apply: doc is missing destination path: {path}")
            })?;
            add(parent, &key, moved).map_err(|e| format!("error in move for path {path:?}: {e}"))
        }
        "copy" => {
            let from = string_member(op, "from", kind)?;
            let (parent, key) = parent_of(doc, &from).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing from path: {from}")
            })?;
            let copied = get(parent, &key)
                .map_err(|e| format!("error in copy for from {from:?}: {e}"))?
                .cloned()
                .unwrap_or(Value::Null);
            let path = string_member(op, "path", kind)?;
            let (parent, key) = parent_of(doc, &path).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing destination path: {path}")
            })?;
            add(parent, &key, copied).map_err(|e| format!("error in copy for path {path:?}: {e}"))
        }
        "test" => {
            let path = string_member(op, "path", kind)?;
            let failed = || format!("testing value {path} failed");
            if path.is_empty() {
                return match &value {
                    Some(v) if json_equal(doc, v) => Ok(()),
                    _ => Err(failed()),
                };
            }
            let (parent, key) = parent_of(doc, &path)
                .ok_or_else(|| format!("test operation does not apply: is missing path: {path}"))?;
            let found =
                get(parent, &key).map_err(|e| format!("error in test for path {path:?}: {e}"))?;
            match (found, &value) {
                (None, None) => Ok(()),
                (Some(a), Some(b)) if json_equal(a, b) => Ok(()),
                _ => Err(failed()),
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// RFC 6901's unescaping: `~1` to `/`, then `~0` to `~`.
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The container of the value `path` names, and the last token: the first segment of the
/// path is skipped, every other but the last must name an object or array.
fn parent_of<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let segments: Vec<&str> = path.split('/').collect();
    if segments.len() < 2 {
        return None;
    }
    let key = unescape(segments[segments.len() - 1]);
    let mut current = doc;
    for segment in &segments[1..segments.len() - 1] {
        let token = unescape(segment);
        let next = match current {
            Value::Object(map) => map.get_mut(&token),
            Value::Array(items) => {
                let len = items.len();
                index(&token, len, len).ok().and_then(|i| items.get_mut(i))
            }
            _ => None,
        }?;
        if !next.is_object() && !next.is_array() {
            return None;
        }
        current = next;
    }
    Some((current, key))
}

/// An array index as the library reads it: Go's `strconv.Atoi`, a negative index counted
/// back from `negative_base`, and at most `limit - 1`.
fn index(token: &str, negative_base: usize, limit: usize) -> Result<usize, String> {
    let raw: i64 = token
        .parse()
        .map_err(|_| format!("value was not a proper array index: {token:?}"))?;
    let base = i64::try_from(negative_base).unwrap_or(i64::MAX);
    let adjusted = if raw < 0 {
        if raw < -base {
            return Err(format!("Unable to access invalid index: {raw}"));
        }
        raw + base
    } else {
        raw
    };
    match usize::try_from(adjusted) {
        Ok(i) if i < limit => Ok(i),
        _ => Err(format!("Unable to access invalid index: {raw}")),
    }
}

/// The value at `key` in `parent`: `None` for an object member that is missing or `null`;
/// an error for an array index that is not one.
fn get<'a>(parent: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    match parent {
        Value::Object(map) => Ok(map.get(key).filter(|v| !v.is_null())),
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            Ok(items.get(i).filter(|v| !v.is_null()))
        }
        _ => Err("not a container".into()),
    }
}

fn add(parent: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) if key == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => {
            let size = items.len() + 1;
            let i = index(key, size, size)?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

fn set(parent: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            items[i] = value;
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

/// Removes the value at `key`; an object member must exist (`null` counts).
fn remove(parent: &mut Value, key: &str) -> Result<Value, String> {
    match parent {
        Value::Object(map) => map
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}")),
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            Ok(items.remove(i))
        }
        _ => Err("not a container".into()),
    }
}

/// Equality as the library decides it: numbers by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => objects_equal(x, y),
        _ => a == b,
    }
}

fn objects_equal(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == y.len()
        && x.iter()
            .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(doc: Value, patch: Value) -> Result<Value, PatchFailure> {
        apply(&doc, &patch)
    }

    #[test]
    fn follows_the_servers_library_where_it_departs_from_the_rfc() {
        let doc = json!({"spec": {"k": "v", "list": ["a", "b"], "x~y": 1, "a/b": 2}});
        let ok = |patch: Value| run(doc.clone(), patch).expect("applies");
        let refused = |patch: Value| run(doc.clone(), patch).expect_err("refused");
        assert_eq!(
            ok(json!([{"op": "replace", "path": "/spec/nope", "value": 1}]))["spec"]["nope"],
            1
        );
        assert_eq!(
            ok(json!([{"op": "test", "path": "/spec/nope", "value": null}])),
            doc
        );
        assert_eq!(
            ok(json!([{"op": "copy", "from": "/spec/nope", "path": "/spec/c"}]))["spec"]["c"],
            Value::Null
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/list/-1", "value": "z"}]))["spec"]["list"],
            json!(["a", "b", "z"])
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/list/01", "value": "z"}]))["spec"]["list"],
            json!(["a", "z", "b"])
        );
        assert_eq!(
            ok(json!([{"op": "replace", "path": "/spec/x~0y", "value": 3},
                {"op": "remove", "path": "/spec/a~1b"}]))["spec"],
            json!({"k": "v", "list": ["a", "b"], "x~y": 3})
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "spec/top", "value": 1}]))["top"],
            1
        );
        for patch in [
            json!([{"op": "remove", "path": "/spec/nope"}]),
            json!([{"op": "move", "from": "/spec/nope", "path": "/spec/m"}]),
            json!([{"op": "add", "path": "/spec/list/3", "value": "z"}]),
            json!([{"op": "replace", "path": "/spec/list/-", "value": "z"}]),
            json!([{"op": "replace", "path": "/spec/list/2", "value": "z"}]),
            json!([{"op": "remove", "path": "/spec/list/-3"}]),
            json!([{"op": "test", "path": "/spec/k", "value": "other"}]),
            json!([{"op": "test", "path": "/spec/nope", "value": "other"}]),
            json!([{"op": "add", "path": "", "value": {}}]),
            json!([{"op": "add", "path": "/spec/nope/deeper", "value": 1}]),
            json!([{"op": "bogus", "path": "/spec/k"}]),
            json!([{"path": "/spec/k", "value": 1}]),
            json!([{"op": "add", "value": 1}]),
        ] {
            assert!(
                matches!(refused(patch.clone()), PatchFailure::DoesNotApply(_)),
                "{patch}"
            );
        }
        assert!(matches!(
            refused(json!({"op": "add"})),
            PatchFailure::NotAPatch(_)
        ));
        assert!(matches!(refused(json!([1])), PatchFailure::NotAPatch(_)));
    }

    #[test]
    fn hostile_indexes_do_not_panic() {
        let doc = json!({"l": []});
        for token in [
            "99999999999999999999",
            "-9223372036854775808",
            "",
            "-0",
            "+0",
        ] {
            let _ = run(
                doc.clone(),
                json!([{"op": "add", "path": format!("/l/{token}"), "value": 1}]),
            );
            let _ = run(
                doc.clone(),
                json!([{"op": "remove", "path": format!("/l/{token}")}]),
            );
        }
    }
}
