//! List helpers shared by creating and applying strategic merge patches: element kinds, merge
//! keys, Go's string ordering of scalars, and client-go's order normalization.

use serde_json::Value;

use super::{DELETE_DIRECTIVE, DIRECTIVE_MARKER, StrategicPatchError};

/// The kind of the elements of merged lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ElementKind {
    Object,
    Scalar(u8),
}

pub(super) fn element_kind(v: &Value) -> Result<ElementKind, StrategicPatchError> {
    Ok(match v {
        Value::Object(_) => ElementKind::Object,
        Value::Array(_) => {
            return Err(StrategicPatchError::new("lists of lists are not supported"));
        }
        Value::Null => ElementKind::Scalar(0),
        Value::Bool(_) => ElementKind::Scalar(1),
        Value::Number(n) if n.is_f64() => ElementKind::Scalar(2),
        Value::Number(_) => ElementKind::Scalar(3),
        Value::String(_) => ElementKind::Scalar(4),
    })
}

/// The common element kind of both lists (client-go's `sliceElementType`).
pub(super) fn slice_element_kind(lists: [&[Value]; 2]) -> Result<ElementKind, StrategicPatchError> {
    let mut kind = None;
    for value in lists.into_iter().flatten() {
        let k = element_kind(value)?;
        match kind {
            None => kind = Some(k),
            Some(prev) if prev != k => {
                return Err(StrategicPatchError::new(
                    "list element types are not identical",
                ));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| StrategicPatchError::new("no elements in any of the given lists"))
}

/// Go's `fmt.Sprintf("%v", v)` for the JSON values that appear as merge keys and scalars.
pub(super) fn go_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

pub(super) fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The merge key value of a list item, which must be an object carrying it.
pub(super) fn merge_key_value<'a>(
    item: &'a Value,
    merge_key: &str,
) -> Result<&'a Value, StrategicPatchError> {
    let Value::Object(map) = item else {
        return Err(StrategicPatchError::new(format!(
            "expected a JSON object in a merged list, got {item}"
        )));
    };
    map.get(merge_key).ok_or_else(|| {
        StrategicPatchError::new(format!(
            "map: {item} does not contain declared merge key: {merge_key}"
        ))
    })
}

/// Removes repeated values the way client-go's `deduplicateScalars` does (moving the last
/// element into a duplicate's place), so the output order matches.
pub(super) fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if s[i] == s[j] {
                s.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// Sorts `to_sort` by the position of each item in `order` (by merge key for objects),
/// moving `$patch: delete` items to the end (client-go's `normalizeSliceOrder`).
pub(super) fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>, StrategicPatchError> {
    let (mut keep, deleted): (Vec<Value>, Vec<Value>) = match merge_key {
        Some(key) => {
            for item in to_sort.iter().chain(order) {
                merge_key_value(item, key)?;
            }
            to_sort.into_iter().partition(|item| {
                item.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some(DELETE_DIRECTIVE)
            })
        }
        None => (to_sort, Vec::new()),
    };
    let position = |item: &Value| -> usize {
        order
            .iter()
            .position(|candidate| match merge_key {
                Some(key) => candidate.get(key) == item.get(key),
                None => candidate == item,
            })
            .unwrap_or(usize::MAX)
    };
    keep.sort_by_key(|item| position(item));
    keep.extend(deleted);
    Ok(keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deduplication_matches_client_go_order() {
        let v = |xs: &[i64]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        assert_eq!(deduplicate_scalars(v(&[1, 1, 2])), v(&[1, 2]));
        assert_eq!(deduplicate_scalars(v(&[3, 1, 3, 2, 1])), v(&[3, 1, 2]));
        assert_eq!(deduplicate_scalars(v(&[])), v(&[]));
    }

    #[test]
    fn go_strings_of_scalars() {
        assert_eq!(go_string(&json!("a")), "a");
        assert_eq!(go_string(&json!(80)), "80");
        assert_eq!(go_string(&json!(true)), "true");
        assert_eq!(go_string(&json!(null)), "<nil>");
    }
}
