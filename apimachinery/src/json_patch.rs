//! JSON Patch (RFC 6902, `application/json-patch+json`): a list of operations addressed by
//! JSON Pointers (RFC 6901), with an implementation of applying them so that patches can be
//! checked locally and fakes can serve them.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One JSON Patch operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum JsonPatchOperation {
    /// Adds a value: inserts into an array (`-` appends), or sets an object member.
    Add {
        /// Where, as a JSON Pointer.
        path: String,
        /// The value.
        value: Value,
    },
    /// Removes the value at `path`, which must exist.
    Remove {
        /// Where, as a JSON Pointer.
        path: String,
    },
    /// Replaces the value at `path`, which must exist.
    Replace {
        /// Where, as a JSON Pointer.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Moves the value at `from` to `path`.
    Move {
        /// The source, as a JSON Pointer.
        from: String,
        /// The destination, as a JSON Pointer.
        path: String,
    },
    /// Copies the value at `from` to `path`.
    Copy {
        /// The source, as a JSON Pointer.
        from: String,
        /// The destination, as a JSON Pointer.
        path: String,
    },
    /// Fails the patch unless the value at `path` equals `value`.
    Test {
        /// Where, as a JSON Pointer.
        path: String,
        /// The expected value.
        value: Value,
    },
}

/// A JSON Patch document: operations applied in order, all or nothing.
///
/// ```
/// use kclient_apimachinery::{JsonPatch, JsonPatchOperation};
/// use serde_json::json;
///
/// let patch = JsonPatch(vec![
///     JsonPatchOperation::Test { path: "/metadata/resourceVersion".into(), value: json!("7") },
///     JsonPatchOperation::Replace { path: "/spec/replicas".into(), value: json!(3) },
///     JsonPatchOperation::Add { path: "/metadata/labels/tier".into(), value: json!("web") },
/// ]);
/// assert_eq!(
///     serde_json::to_string(&patch.0[1]).unwrap(),
///     r#"{"op":"replace","path":"/spec/replicas","value":3}"#
/// );
///
/// let mut doc = json!({"metadata": {"resourceVersion": "7", "labels": {}}, "spec": {"replicas": 1}});
/// patch.apply(&mut doc)?;
/// assert_eq!(doc["spec"]["replicas"], 3);
/// # Ok::<(), kclient_apimachinery::JsonPatchError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonPatch(pub Vec<JsonPatchOperation>);

impl JsonPatch {
    /// Applies every operation to `doc`; on error `doc` is left unchanged.
    pub fn apply(&self, doc: &mut Value) -> Result<(), JsonPatchError> {
        let mut work = doc.clone();
        for (index, op) in self.0.iter().enumerate() {
            apply_operation(&mut work, op).map_err(|reason| JsonPatchError { index, reason })?;
        }
        *doc = work;
        Ok(())
    }
}

/// An operation of a [`JsonPatch`] that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPatchError {
    index: usize,
    reason: String,
}

impl JsonPatchError {
    /// The index of the failed operation.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl fmt::Display for JsonPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "json patch operation {} failed: {}",
            self.index, self.reason
        )
    }
}

impl std::error::Error for JsonPatchError {}

/// Escapes one reference token of a JSON Pointer (`~` → `~0`, `/` → `~1`), such as a label
/// key with a `/` in it.
pub fn escape_json_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The unescaped reference tokens of a pointer; `""` is the whole document.
fn parse_pointer(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!(
            "invalid JSON pointer {pointer:?}: must start with '/'"
        ));
    };
    rest.split('/')
        .map(|token| {
            let mut out = String::with_capacity(token.len());
            let mut chars = token.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return Err(format!("invalid escape in JSON pointer {pointer:?}")),
                    }
                } else {
                    out.push(c);
                }
            }
            Ok(out)
        })
        .collect()
}

fn array_index(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if allow_end && token == "-" {
        return Ok(len);
    }
    let valid = !token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    let index: usize = if valid {
        token
            .parse()
            .map_err(|_| format!("invalid array index {token:?}"))?
    } else {
        return Err(format!("invalid array index {token:?}"));
    };
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if index > max || (!allow_end && len == 0) {
        return Err(format!("array index {index} out of bounds"));
    }
    Ok(index)
}

fn get<'a>(doc: &'a Value, tokens: &[String]) -> Result<&'a Value, String> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(map) => map
                .get(token)
                .ok_or_else(|| format!("member {token:?} not found"))?,
            Value::Array(items) => &items[array_index(token, items.len(), false)?],
            _ => return Err(format!("cannot descend into a scalar at {token:?}")),
        };
    }
    Ok(current)
}

fn parent_mut<'a>(doc: &'a mut Value, tokens: &[String]) -> Result<&'a mut Value, String> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(map) => map
                .get_mut(token)
                .ok_or_else(|| format!("member {token:?} not found"))?,
            Value::Array(items) => {
                let i = array_index(token, items.len(), false)?;
                &mut items[i]
            }
            _ => return Err(format!("cannot descend into a scalar at {token:?}")),
        };
    }
    Ok(current)
}

fn add(doc: &mut Value, tokens: &[String], value: Value) -> Result<(), String> {
    let Some((last, parents)) = tokens.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent_mut(doc, parents)? {
        Value::Object(map) => {
            map.insert(last.clone(), value);
        }
        Value::Array(items) => {
            let i = array_index(last, items.len(), true)?;
            items.insert(i, value);
        }
        _ => return Err("the parent of the target is a scalar".to_owned()),
    }
    Ok(())
}

fn remove(doc: &mut Value, tokens: &[String]) -> Result<Value, String> {
    let Some((last, parents)) = tokens.split_last() else {
        return Err("cannot remove the whole document".to_owned());
    };
    match parent_mut(doc, parents)? {
        Value::Object(map) => map
            .remove(last)
            .ok_or_else(|| format!("member {last:?} not found")),
        Value::Array(items) => {
            let i = array_index(last, items.len(), false)?;
            Ok(items.remove(i))
        }
        _ => Err("the parent of the target is a scalar".to_owned()),
    }
}

fn apply_operation(doc: &mut Value, op: &JsonPatchOperation) -> Result<(), String> {
    match op {
        JsonPatchOperation::Add { path, value } => add(doc, &parse_pointer(path)?, value.clone()),
        JsonPatchOperation::Remove { path } => remove(doc, &parse_pointer(path)?).map(drop),
        JsonPatchOperation::Replace { path, value } => {
            let tokens = parse_pointer(path)?;
            if tokens.is_empty() {
                *doc = value.clone();
                return Ok(());
            }
            remove(doc, &tokens)?;
            add(doc, &tokens, value.clone())
        }
        JsonPatchOperation::Move { from, path } => {
            let from_tokens = parse_pointer(from)?;
            let to_tokens = parse_pointer(path)?;
            if to_tokens.len() > from_tokens.len() && to_tokens.starts_with(&from_tokens) {
                return Err(format!("cannot move {from:?} into its own child {path:?}"));
            }
            let value = remove(doc, &from_tokens)?;
            add(doc, &to_tokens, value)
        }
        JsonPatchOperation::Copy { from, path } => {
            let value = get(doc, &parse_pointer(from)?)?.clone();
            add(doc, &parse_pointer(path)?, value)
        }
        JsonPatchOperation::Test { path, value } => {
            let actual = get(doc, &parse_pointer(path)?)?;
            if actual == value {
                Ok(())
            } else {
                Err(format!(
                    "test failed: the value at {path:?} is {actual}, not {value}"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(ops: Value) -> JsonPatch {
        serde_json::from_value(ops).unwrap()
    }

    #[test]
    fn rfc_6902_appendix_a_examples() {
        // (document, patch, result or None for an error)
        let cases: Vec<(Value, Value, Option<Value>)> = vec![
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz","value":"qux"}]),
                Some(json!({"baz":"qux","foo":"bar"})),
            ),
            (
                json!({"foo":["bar","baz"]}),
                json!([{"op":"add","path":"/foo/1","value":"qux"}]),
                Some(json!({"foo":["bar","qux","baz"]})),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"remove","path":"/baz"}]),
                Some(json!({"foo":"bar"})),
            ),
            (
                json!({"foo":["bar","qux","baz"]}),
                json!([{"op":"remove","path":"/foo/1"}]),
                Some(json!({"foo":["bar","baz"]})),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"replace","path":"/baz","value":"boo"}]),
                Some(json!({"baz":"boo","foo":"bar"})),
            ),
            (
                json!({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}),
                json!([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]),
                Some(json!({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})),
            ),
            (
                json!({"foo":["all","grass","cows","eat"]}),
                json!([{"op":"move","from":"/foo/1","path":"/foo/3"}]),
                Some(json!({"foo":["all","cows","eat","grass"]})),
            ),
            (
                json!({"baz":"qux","foo":["a",2,"c"]}),
                json!([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]),
                Some(json!({"baz":"qux","foo":["a",2,"c"]})),
            ),
            (
                json!({"baz":"qux"}),
                json!([{"op":"test","path":"/baz","value":"bar"}]),
                None,
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/child","value":{"grandchild":{}}}]),
                Some(json!({"foo":"bar","child":{"grandchild":{}}})),
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz/bat","value":"qux"}]),
                None,
            ),
            (
                json!({"/":9,"~1":10}),
                json!([{"op":"test","path":"/~01","value":10}]),
                Some(json!({"/":9,"~1":10})),
            ),
            (
                json!({"foo":["bar"]}),
                json!([{"op":"add","path":"/foo/-","value":["abc","def"]}]),
                Some(json!({"foo":["bar",["abc","def"]]})),
            ),
            (
                json!({"a":{"b":1}}),
                json!([{"op":"copy","from":"/a","path":"/c"}]),
                Some(json!({"a":{"b":1},"c":{"b":1}})),
            ),
        ];
        for (doc, ops, expected) in cases {
            let mut target = doc.clone();
            let result = patch(ops.clone()).apply(&mut target);
            match expected {
                Some(expected) => {
                    assert_eq!(result, Ok(()), "{ops}");
                    assert_eq!(target, expected, "{ops}");
                }
                None => {
                    assert!(result.is_err(), "{ops} should fail");
                    assert_eq!(target, doc, "a failed patch leaves the document unchanged");
                }
            }
        }
    }

    #[test]
    fn rejects_bad_pointers_and_indexes() {
        let doc = json!({"a":[1,2],"s":"x"});
        for ops in [
            json!([{"op":"add","path":"a","value":1}]),
            json!([{"op":"add","path":"/a/01","value":1}]),
            json!([{"op":"add","path":"/a/3","value":1}]),
            json!([{"op":"remove","path":"/a/2"}]),
            json!([{"op":"remove","path":"/a/-"}]),
            json!([{"op":"replace","path":"/missing","value":1}]),
            json!([{"op":"add","path":"/s/x","value":1}]),
            json!([{"op":"test","path":"/a/~2","value":1}]),
            json!([{"op":"move","from":"/a","path":"/a/0"}]),
            json!([{"op":"remove","path":""}]),
        ] {
            let mut target = doc.clone();
            let err = patch(ops.clone()).apply(&mut target).unwrap_err();
            assert_eq!(err.index(), 0, "{ops}");
            assert_eq!(target, doc);
        }
        let err =
            patch(json!([{"op":"test","path":"/s","value":"x"},{"op":"remove","path":"/nope"}]))
                .apply(&mut doc.clone())
                .unwrap_err();
        assert_eq!(err.index(), 1);
        assert!(err.to_string().starts_with("json patch operation 1 failed"));
    }

    #[test]
    fn replacing_the_root_and_escaping() {
        let mut doc = json!({"a":1});
        patch(json!([{"op":"replace","path":"","value":[1]}]))
            .apply(&mut doc)
            .unwrap();
        assert_eq!(doc, json!([1]));
        assert_eq!(
            escape_json_pointer_token("app.kubernetes.io/name"),
            "app.kubernetes.io~1name"
        );
        assert_eq!(escape_json_pointer_token("a~b"), "a~0b");
        let mut doc = json!({"metadata":{"labels":{"app.kubernetes.io/name":"x"}}});
        let path = format!(
            "/metadata/labels/{}",
            escape_json_pointer_token("app.kubernetes.io/name")
        );
        JsonPatch(vec![JsonPatchOperation::Remove { path }])
            .apply(&mut doc)
            .unwrap();
        assert_eq!(doc, json!({"metadata":{"labels":{}}}));
    }
}
