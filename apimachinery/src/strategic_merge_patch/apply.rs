//! Applying a strategic merge patch as the API server does (client-go's
//! `StrategicMergeMapPatch`: parallel lists merged, unmatched `null`s ignored): `$patch`
//! directives, `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.

use serde_json::{Map, Value};

use crate::unstructured::deep;

use super::lists::{
    ElementKind, deduplicate_scalars, merge_key_value, normalize_slice_order, same_type,
    slice_element_kind,
};
use super::schema::{FieldPatchMeta, PatchSchema, PatchStrategy};
use super::{
    DELETE_DIRECTIVE, DELETE_FROM_PRIMITIVE_LIST_PREFIX, DIRECTIVE_MARKER, MERGE_DIRECTIVE,
    REPLACE_DIRECTIVE, RETAIN_KEYS_DIRECTIVE, SET_ELEMENT_ORDER_PREFIX, StrategicPatchError,
};

type JsonMap = Map<String, Value>;

/// Applies a strategic merge patch to `original` as the API server would (client-go's
/// `StrategicMergePatch`). Both must be JSON objects (`null` counts as `{}`). Objects nested
/// as deep as the apiserver stores them (10,000 levels) are merged on a stack grown for them,
/// as by [`create_two_way_merge_patch`](crate::create_two_way_merge_patch).
///
/// Items a patch adds to a merged list come before the server's items unless
/// `$setElementOrder` says otherwise, as in client-go:
///
/// ```
/// use kclient_apimachinery::{apply_strategic_merge_patch, PatchTable};
/// use serde_json::json;
///
/// let schema = PatchTable::new().merge_list("containers", "name", PatchTable::new());
/// let pod_spec = json!({"containers": [{"name": "app", "image": "app:1"}]});
/// let sidecar = json!({"name": "sidecar", "image": "proxy:1"});
///
/// let patch = json!({"containers": [sidecar]});
/// let merged = apply_strategic_merge_patch(&pod_spec, &patch, &schema)?;
/// assert_eq!(merged["containers"][0]["name"], "sidecar");
///
/// let patch = json!({
///     "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
///     "containers": [sidecar],
/// });
/// let merged = apply_strategic_merge_patch(&pod_spec, &patch, &schema)?;
/// assert_eq!(
///     merged,
///     json!({"containers": [{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "proxy:1"}]})
/// );
/// # Ok::<(), kclient_apimachinery::StrategicPatchError>(())
/// ```
pub fn apply_strategic_merge_patch<S: PatchSchema>(
    original: &Value,
    patch: &Value,
    schema: S,
) -> Result<Value, StrategicPatchError> {
    let room = deep::room_for_patch(&[original, patch]);
    deep::with_room(room, || apply(original, patch, schema))
}

fn apply<S: PatchSchema>(
    original: &Value,
    patch: &Value,
    schema: S,
) -> Result<Value, StrategicPatchError> {
    let as_map = |value: &Value, which: &str| match value {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(JsonMap::new()),
        _ => Err(StrategicPatchError::new(format!(
            "invalid JSON document: the {which} is not a JSON object"
        ))),
    };
    let merged = merge_map(
        as_map(original, "original")?,
        as_map(patch, "patch")?,
        schema,
    )?;
    Ok(Value::Object(merged))
}

fn bad_patch_type(directive: &Value) -> StrategicPatchError {
    StrategicPatchError::new(format!("unknown patch type: {directive}"))
}

fn merge_map<S: PatchSchema>(
    mut original: JsonMap,
    mut patch: JsonMap,
    schema: S,
) -> Result<JsonMap, StrategicPatchError> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return match directive.as_str() {
            Some(REPLACE_DIRECTIVE) => {
                patch.remove(DIRECTIVE_MARKER);
                Ok(patch)
            }
            Some(DELETE_DIRECTIVE) => Ok(JsonMap::new()),
            _ => Err(bad_patch_type(directive)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order_lists(&mut original, &mut patch, schema)?;

    for (key, patch_value) in patch {
        let (key, is_delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(list_key) => (list_key.to_owned(), true),
                None => {
                    return Err(StrategicPatchError::new(
                        "invalid patch format of primitive list",
                    ));
                }
            },
            None => (key, false),
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(slot) = original.get_mut(&key) else {
            if !is_delete_list && let Some(value) = clean_new_value(patch_value) {
                original.insert(key, value);
            }
            continue;
        };
        if !same_type(slot, &patch_value) {
            if !is_delete_list {
                match clean_new_value(patch_value) {
                    Some(value) => *slot = value,
                    None => {
                        original.remove(&key);
                    }
                }
            }
            continue;
        }
        let meta = schema.field(&key);
        match (slot.take(), patch_value) {
            (Value::Object(o), Value::Object(p)) => {
                *slot = if meta.strategy == PatchStrategy::Replace {
                    Value::Object(p)
                } else {
                    Value::Object(merge_map(o, p, meta.schema)?)
                };
            }
            (Value::Array(o), Value::Array(p)) => {
                *slot = Value::Array(merge_slice_handler(o, p, &meta, is_delete_list)?);
            }
            (_, p) => match remove_directives(p) {
                Some(value) => *slot = value,
                None => {
                    original.remove(&key);
                }
            },
        }
    }
    Ok(original)
}

/// A patch value that lands where the original had nothing (or a value of another type):
/// its `null`s are dropped and its directives removed (client-go's
/// `discardNullValuesFromPatch` then `removeDirectives`). `None` if the value is itself a
/// directive.
fn clean_new_value(mut value: Value) -> Option<Value> {
    discard_null_values(&mut value);
    remove_directives(value)
}

fn discard_null_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_null_values);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_null_values),
        _ => {}
    }
}

/// Drops objects that carry a `$patch` directive, recursively.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            let cleaned = map
                .into_iter()
                .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                .collect();
            Some(Value::Object(cleaned))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// `$retainKeys`: every key the patch sets must be listed, and keys of the original that are
/// not listed are cleared.
fn apply_retain_keys(
    original: &mut JsonMap,
    patch: &mut JsonMap,
) -> Result<(), StrategicPatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let bad_format = || StrategicPatchError::new("invalid patch format of retainKeys");
    let Value::Array(keys) = retain else {
        return Err(bad_format());
    };
    let listed = |k: &str| keys.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !listed(k) {
            return Err(bad_format());
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<list>`: merges the list with its patch (if any) and orders the result:
/// the order of the directive first, then, for items only on the server, their order there.
fn merge_set_element_order_lists<S: PatchSchema>(
    original: &mut JsonMap,
    patch: &mut JsonMap,
    schema: S,
) -> Result<(), StrategicPatchError> {
    let directive_keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for directive_key in directive_keys {
        let bad_format =
            || StrategicPatchError::new("invalid patch format of setElementOrder list");
        let Some(Value::Array(set_order)) = patch.remove(&directive_key) else {
            return Err(bad_format());
        };
        let Some(list_key) = directive_key
            .strip_prefix(SET_ELEMENT_ORDER_PREFIX)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(str::to_owned)
        else {
            return Err(bad_format());
        };
        let as_list = |value: Option<&Value>| match value {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items.clone())),
            Some(other) => Err(StrategicPatchError::new(format!(
                "expected a list at {list_key}, got {other}"
            ))),
        };
        let original_list = as_list(original.get(&list_key))?;
        let patch_list = as_list(patch.get(&list_key))?;
        let meta = schema.field(&list_key);
        let merge_key = meta.merge_key.unwrap_or("");
        validate_patch_with_set_order(patch_list.as_deref().unwrap_or(&[]), &set_order, merge_key)?;

        let server_order = match (&original_list, &patch_list) {
            (Some(o), Some(p))
                if !merge_key.is_empty() && meta.strategy == PatchStrategy::Merge =>
            {
                server_list_after_merging_in_place(o, p, merge_key)
            }
            (Some(o), _) => o.clone(),
            (None, _) => Vec::new(),
        };
        let merged = match (original_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => match remove_directives(Value::Array(p)) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            (Some(o), Some(p)) => merge_slice_handler(o, p, &meta, false)?,
            (None, None) => continue,
        };
        let ordered = if merge_key.is_empty() {
            let (in_order, server_only) = partition_scalars(merged, &set_order);
            normalize_element_order(in_order, server_only, &set_order, &server_order, None)?
        } else {
            let (in_order, server_only) = partition_maps(merged, &set_order, merge_key)?;
            normalize_element_order(
                in_order,
                server_only,
                &set_order,
                &server_order,
                Some(merge_key),
            )?
        };
        original.insert(list_key.clone(), Value::Array(ordered));
        patch.remove(&list_key);
    }
    Ok(())
}

/// The server's list as the server orders by after merging a patch list into it: client-go
/// merges in place, so the list it then orders the server-only items by (`normalizeElementOrder`'s
/// server order) is the original list's storage as the merge left it. Each deleted item shifts the
/// items after it one place to the front (the last place keeps its old item) and each added item
/// is written at the end of the shortened list, as long as that is within the original length
/// (Go's `append` within the capacity, which is at least that length).
///
/// This is what makes the server put a server-only item before an item the patch adds in place
/// of a deleted one: `$setElementOrder/env: [A, D]` with `env: [{D}, {B: delete}]` on
/// `[A, B, C]` gives `[A, C, D]`, not `[A, D, C]`.
fn server_list_after_merging_in_place(
    original: &[Value],
    patch: &[Value],
    merge_key: &str,
) -> Vec<Value> {
    let mut storage = original.to_vec();
    let mut len = storage.len();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE_MARKER) else {
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let key = item.get(merge_key);
                while let Some(at) = storage[..len]
                    .iter()
                    .position(|o| key.is_some() && o.get(merge_key) == key)
                {
                    for i in at..len - 1 {
                        storage[i] = storage[i + 1].clone();
                    }
                    len -= 1;
                }
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            _ => {}
        }
    }
    if replace {
        // The merged list is the patch's own: the storage saw only the deletions.
        return storage;
    }
    // The keys of the merged list as it grows, beyond the storage once it is full.
    let mut keys: Vec<Option<Value>> = storage[..len]
        .iter()
        .map(|o| o.get(merge_key).cloned())
        .collect();
    for item in patch {
        if item.get(DIRECTIVE_MARKER).is_some() {
            continue;
        }
        let key = item.get(merge_key).cloned();
        if key.is_some() && keys.contains(&key) {
            continue;
        }
        if keys.len() < storage.len() {
            storage[keys.len()] = item.clone();
        }
        keys.push(key);
    }
    storage
}

/// The items of a patch list (deletions aside) must appear in `$setElementOrder`, in the same
/// relative order.
fn validate_patch_with_set_order(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<(), StrategicPatchError> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let mut kept = Vec::with_capacity(patch_list.len());
    for item in patch_list {
        if merge_key.is_empty() {
            kept.push(item);
            continue;
        }
        if !item.is_object() {
            return Err(StrategicPatchError::new(format!(
                "expected a JSON object in a merged list, got {item}"
            )));
        }
        if item.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some(DELETE_DIRECTIVE) {
            kept.push(item);
        }
    }
    let (mut p, mut s) = (0, 0);
    while p < kept.len() && s < set_order.len() {
        if kept[p].get(DIRECTIVE_MARKER).is_some() {
            p += 1;
            continue;
        }
        let equal = if merge_key.is_empty() {
            kept[p] == &set_order[s]
        } else {
            merge_key_value(kept[p], merge_key)? == merge_key_value(&set_order[s], merge_key)?
        };
        if equal {
            p += 1;
        }
        s += 1;
    }
    if p < kept.len() {
        return Err(StrategicPatchError::new(format!(
            "the order in patch list {} doesn't match {SET_ELEMENT_ORDER_PREFIX} list {}",
            Value::Array(patch_list.to_vec()),
            Value::Array(set_order.to_vec())
        )));
    }
    Ok(())
}

fn merge_slice_handler<S: PatchSchema>(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &FieldPatchMeta<'_, S>,
    is_delete_list: bool,
) -> Result<Vec<Value>, StrategicPatchError> {
    if meta.strategy == PatchStrategy::Merge || is_delete_list {
        merge_slice(
            original,
            patch,
            meta.schema,
            meta.merge_key.unwrap_or(""),
            is_delete_list,
        )
    } else {
        Ok(patch)
    }
}

fn merge_slice<S: PatchSchema>(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: S,
    merge_key: &str,
    is_delete_list: bool,
) -> Result<Vec<Value>, StrategicPatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    match slice_element_kind([&original, &patch])? {
        ElementKind::Scalar(_) => {
            if is_delete_list {
                return Ok(original
                    .into_iter()
                    .filter(|v| !patch.contains(v))
                    .collect());
            }
            let mut both = original.clone();
            both.extend(patch.iter().cloned());
            let merged = deduplicate_scalars(both);
            let (in_patch, server_only) = partition_scalars(merged, &patch);
            normalize_element_order(in_patch, server_only, &patch, &original, None)
        }
        ElementKind::Object => {
            if merge_key.is_empty() {
                return Err(StrategicPatchError::new(
                    "cannot merge lists of objects without a patch merge key",
                ));
            }
            let (original, patch) = merge_slice_with_special_elements(original, patch, merge_key)?;
            let server_order = original.clone();
            let merged = merge_slice_without_special_elements(original, &patch, merge_key, schema)?;
            let (in_patch, server_only) = partition_maps(merged, &patch, merge_key)?;
            normalize_element_order(
                in_patch,
                server_only,
                &patch,
                &server_order,
                Some(merge_key),
            )
        }
    }
}

/// Handles `$patch` items of a merged list: `delete` removes every item with that key,
/// `replace` makes the rest of the patch list the whole list.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), StrategicPatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE_MARKER) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let key_value = merge_key_value(&item, merge_key)?;
                original.retain(|o| o.get(merge_key) != Some(key_value));
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => {
                return Err(StrategicPatchError::new(
                    "merging lists cannot yet be specified in the patch",
                ));
            }
            _ => return Err(bad_patch_type(directive)),
        }
    }
    if replace {
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// Merges each patch item into the original item with the same key, or appends it.
fn merge_slice_without_special_elements<S: PatchSchema>(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    schema: S,
) -> Result<Vec<Value>, StrategicPatchError> {
    for item in patch {
        let key_value = merge_key_value(item, merge_key)?;
        match original
            .iter()
            .position(|o| o.get(merge_key) == Some(key_value))
        {
            Some(at) => {
                let (Value::Object(o), Value::Object(p)) = (original[at].take(), item.clone())
                else {
                    return Err(StrategicPatchError::new(
                        "expected JSON objects in a merged list",
                    ));
                };
                original[at] = Value::Object(merge_map(o, p, schema)?);
            }
            None => original.push(item.clone()),
        }
    }
    Ok(original)
}

/// Splits scalars into those present in `by` and the rest, keeping their order.
fn partition_scalars(items: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    items.into_iter().partition(|v| by.contains(v))
}

/// Splits objects into those whose merge key appears in `by` and the rest, keeping order.
fn partition_maps(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), StrategicPatchError> {
    let mut present = Vec::new();
    let mut server_only = Vec::new();
    for item in items {
        let key_value = merge_key_value(&item, merge_key)?;
        if by.iter().any(|b| b.get(merge_key) == Some(key_value)) {
            present.push(item);
        } else {
            server_only.push(item);
        }
    }
    Ok((present, server_only))
}

/// Orders patch items by `patch_order` and server-only items by `server_order`, then
/// interleaves them by their positions on the server (client-go's `normalizeElementOrder`).
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>, StrategicPatchError> {
    let patch_items = normalize_slice_order(patch_items, patch_order, merge_key)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key)?;
    let position = |item: &Value| {
        server_order.iter().position(|candidate| match merge_key {
            Some(key) => candidate.get(key) == item.get(key),
            None => candidate == item,
        })
    };
    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                matches!((position(l), position(r)), (Some(li), Some(ri)) if li < ri)
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategic_merge_patch::test_schema::{deployment_schema, merge_item, two_way_cases};
    use crate::strategic_merge_patch::{PatchTable, create_two_way_merge_patch};
    use serde_json::json;

    /// Applying each created two-way patch to the original gives the modified object (with
    /// `null` values dropped, as the server drops them).
    #[test]
    fn created_patches_round_trip() {
        let schema = merge_item();
        for (description, original, modified, _) in two_way_cases() {
            if description == "de-duplicate field in merging list" {
                // The server deletes every item with a deleted key, duplicates included.
                continue;
            }
            let patch = create_two_way_merge_patch(&original, &modified, &schema).unwrap();
            let applied = apply_strategic_merge_patch(&original, &patch, &schema)
                .unwrap_or_else(|e| panic!("{description}: {e}"));
            let mut expected = modified.clone();
            discard_null_values(&mut expected);
            assert_eq!(applied, expected, "{description}: patch {patch}");
        }
    }

    /// (description, original, patch, result): client-go's custom cases
    /// (`customStrategicMergePatchTestCaseData` and raw cases) that a two-way diff would not
    /// produce.
    fn apply_cases() -> Vec<(&'static str, Value, Value, Value)> {
        vec![
            (
                "unique scalars when merging lists",
                json!({"mergingIntList":[1,2]}),
                json!({"mergingIntList":[2,3]}),
                json!({"mergingIntList":[1,2,3]}),
            ),
            (
                "delete map from nested map",
                json!({"simpleMap":{"key1":1,"key2":1}}),
                json!({"simpleMap":{"$patch":"delete"}}),
                json!({"simpleMap":{}}),
            ),
            (
                "delete all items from merging list",
                json!({"mergingList":[{"name":1},{"name":2}]}),
                json!({"mergingList":[{"$patch":"replace"}]}),
                json!({"mergingList":[]}),
            ),
            (
                "merge empty merging lists",
                json!({"mergingList":[]}),
                json!({"mergingList":[]}),
                json!({"mergingList":[]}),
            ),
            (
                "delete all keys from map",
                json!({"name":1,"value":1}),
                json!({"$patch":"replace"}),
                json!({}),
            ),
            (
                "add key and delete all keys from map",
                json!({"name":1,"value":1}),
                json!({"other":"a","$patch":"replace"}),
                json!({"other":"a"}),
            ),
            (
                "delete all duplicate entries in a merging list",
                json!({"mergingList":[{"name":1},{"name":1},{"name":2,"value":"a"},{"name":3},{"name":3}]}),
                json!({"mergingList":[{"name":1,"$patch":"delete"},{"name":3,"$patch":"delete"}]}),
                json!({"mergingList":[{"name":2,"value":"a"}]}),
            ),
            (
                "retainKeys map can add a field when no retainKeys directive present",
                json!({"retainKeysMap":{"name":"foo"}}),
                json!({"retainKeysMap":{"value":"bar"}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            ),
            (
                "retainKeys map can delete a field when no retainKeys directive present",
                json!({"retainKeysMap":{"name":"foo","value":"a"}}),
                json!({"retainKeysMap":{"value":null}}),
                json!({"retainKeysMap":{"name":"foo"}}),
            ),
            (
                "retainKeys list can change a field when no retainKeys directive present",
                json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a"}]}),
                json!({"retainKeysMergingList":[{"name":"foo","value":"b"}]}),
                json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"b"}]}),
            ),
            (
                "preserve the order from the patch in a merging list",
                json!({"mergingList":[{"name":1},{"name":2,"value":"b"},{"name":3}]}),
                json!({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"},{"name":2,"other":"x"}]}),
                json!({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"},{"name":2,"value":"b","other":"x"}]}),
            ),
            (
                "preserve the order from the patch in a merging list 2",
                json!({"mergingList":[{"name":1},{"name":2,"value":"b"},{"name":3}]}),
                json!({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"}]}),
                json!({"mergingList":[{"name":2,"value":"b"},{"name":3,"value":"c"},{"name":1,"value":"a"}]}),
            ),
            (
                "preserve the order from the patch in a merging int list",
                json!({"mergingIntList":[1,2,3]}),
                json!({"mergingIntList":[3,1,2]}),
                json!({"mergingIntList":[3,1,2]}),
            ),
            (
                "preserve the order from the patch in a merging int list 2",
                json!({"mergingIntList":[1,2,3]}),
                json!({"mergingIntList":[3,1]}),
                json!({"mergingIntList":[2,3,1]}),
            ),
            (
                "$setElementOrder contains item that is not present in the list to be merged",
                json!({"mergingList":[{"name":1},{"name":3}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":3},{"name":2},{"name":1}],
                    "mergingList":[{"name":3,"value":3},{"name":1,"value":1}]
                }),
                json!({"mergingList":[{"name":3,"value":3},{"name":1,"value":1}]}),
            ),
            (
                "$setElementOrder contains item that is not present in the int list to be merged",
                json!({"mergingIntList":[1,3]}),
                json!({"$setElementOrder/mergingIntList":[3,2,1]}),
                json!({"mergingIntList":[3,1]}),
            ),
            (
                "delete items in lists of scalars, keeping server-only items",
                json!({"mergingIntList":[1,2,3,4]}),
                json!({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]}),
                json!({"mergingIntList":[1,2,4]}),
            ),
            (
                "merge lists of maps, keeping server-only fields",
                json!({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":4},{"name":1},{"name":2},{"name":3}],
                    "mergingList":[{"name":4,"value":4},{"name":3,"value":3}]
                }),
                json!({"mergingList":[
                    {"name":4,"value":4},{"name":1,"other":"a"},
                    {"name":2,"value":2,"other":"b"},{"name":3,"value":3}
                ]}),
            ),
            (
                "retainKeys clears fields not listed",
                json!({"retainKeysMap":{"name":"foo","value":"bar","other":"a"}}),
                json!({"retainKeysMap":{"$retainKeys":["name"],"value":null}}),
                json!({"retainKeysMap":{"name":"foo"}}),
            ),
            (
                "directives inside new values are dropped",
                json!({}),
                json!({"simpleMap":{"a":"b","gone":null},"mergingList":[{"name":1},{"name":2,"$patch":"delete"}]}),
                json!({"simpleMap":{"a":"b"},"mergingList":[{"name":1}]}),
            ),
        ]
    }

    #[test]
    fn applies_client_go_cases() {
        let schema = merge_item();
        for (description, original, patch, expected) in apply_cases() {
            let applied = apply_strategic_merge_patch(&original, &patch, &schema)
                .unwrap_or_else(|e| panic!("{description}: {e}"));
            assert_eq!(applied, expected, "{description}");
        }
    }

    #[test]
    fn rejects_bad_patches() {
        let schema = merge_item();
        let cases = [
            (
                json!({"mergingList":[{"name":1},{"name":3},{"name":2}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":1},{"name":2},{"name":3}],
                    "mergingList":[{"name":3,"value":3},{"name":1,"value":1}]
                }),
                "doesn't match",
            ),
            (
                json!({"mergingIntList":[1,3,2]}),
                json!({"$setElementOrder/mergingIntList":[1,2,3],"mergingIntList":[3,1]}),
                "doesn't match",
            ),
            (
                json!({"mergingList":[{"name":1,"value":"a"}]}),
                json!({"mergingList":[{"value":"b"}]}),
                "does not contain declared merge key",
            ),
            (json!({}), json!({"$patch":"explode"}), "unknown patch type"),
            (
                json!({"retainKeysMap":{"name":"foo"}}),
                json!({"retainKeysMap":{"$retainKeys":["name"],"value":"x"}}),
                "invalid patch format of retainKeys",
            ),
            (
                json!({"mergingList":[{"name":1}]}),
                json!({"mergingList":[{"name":1,"$patch":"merge"}]}),
                "cannot yet be specified",
            ),
            (json!([1]), json!({}), "not a JSON object"),
        ];
        for (original, patch, fragment) in cases {
            let err = apply_strategic_merge_patch(&original, &patch, &schema).unwrap_err();
            assert!(err.to_string().contains(fragment), "{patch}: {err}");
        }
    }

    /// kubectl apply replacing env B with D where the server also has C: the server orders
    /// C by its list as the in-place merge left it (`[A, C, D]`), before D.
    #[test]
    fn server_only_items_keep_their_place_after_a_replaced_item() {
        let schema = merge_item();
        let cases = [
            (
                json!({"mergingList": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}),
                json!({
                    "$setElementOrder/mergingList": [{"name": "A"}, {"name": "D"}],
                    "mergingList": [{"name": "D"}, {"name": "B", "$patch": "delete"}]
                }),
                json!({"mergingList": [{"name": "A"}, {"name": "C"}, {"name": "D"}]}),
            ),
            // Two deletions, two additions: the storage becomes [c, x, d, e].
            (
                json!({"mergingList": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "x"}]}),
                json!({
                    "$setElementOrder/mergingList": [{"name": "c"}, {"name": "d"}, {"name": "e"}],
                    "mergingList": [
                        {"name": "d"}, {"name": "e"},
                        {"name": "a", "$patch": "delete"}, {"name": "b", "$patch": "delete"}
                    ]
                }),
                json!({"mergingList": [{"name": "c"}, {"name": "x"}, {"name": "d"}, {"name": "e"}]}),
            ),
            // Without a deletion nothing is written within the list: added items go after.
            (
                json!({"mergingList": [{"name": "A"}, {"name": "C"}]}),
                json!({
                    "$setElementOrder/mergingList": [{"name": "A"}, {"name": "D"}],
                    "mergingList": [{"name": "D"}]
                }),
                json!({"mergingList": [{"name": "A"}, {"name": "D"}, {"name": "C"}]}),
            ),
        ];
        for (original, patch, expected) in cases {
            let applied = apply_strategic_merge_patch(&original, &patch, &schema).unwrap();
            assert_eq!(applied, expected, "{patch}");
        }
    }

    /// The seed article's Deployment update applied to a live object that has server-set
    /// fields: the image changes and the rest is kept.
    #[test]
    fn deployment_image_change_keeps_live_fields() {
        let schema = deployment_schema();
        let live = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{
            "name": "nginx", "image": "nginx:1.7.9", "terminationMessagePath": "/dev/termination-log",
            "ports": [{"containerPort": 80, "protocol": "TCP"}]
        }]}}}});
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "nginx"}],
            "containers": [{"image": "nginx:1.21.6", "name": "nginx"}]
        }}}});
        let applied = apply_strategic_merge_patch(&live, &patch, &schema).unwrap();
        assert_eq!(
            applied,
            json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{
                "name": "nginx", "image": "nginx:1.21.6", "terminationMessagePath": "/dev/termination-log",
                "ports": [{"containerPort": 80, "protocol": "TCP"}]
            }]}}}})
        );
    }

    mod properties {
        use super::*;
        use crate::strategic_merge_patch::PatchTable;
        use proptest::prelude::*;

        /// Objects with a list merged by `name`, a merged list of scalars, a replaced list
        /// and a nested map, in random orders.
        fn document() -> impl Strategy<Value = Value> {
            let items = prop::collection::btree_map("[a-f]", 0u8..3, 0..5)
                .prop_map(|m| {
                    m.into_iter()
                        .map(|(name, v)| json!({"name": name, "v": v}))
                        .collect::<Vec<_>>()
                })
                .prop_shuffle();
            let tags = prop::collection::btree_set("[a-f]", 0..5)
                .prop_map(|s| s.into_iter().map(Value::from).collect::<Vec<_>>())
                .prop_shuffle();
            let plain = prop::collection::vec(0u8..3, 0..3);
            let map = prop::collection::btree_map("[a-c]", 0u8..3, 0..3);
            (
                prop::option::of(items),
                prop::option::of(tags),
                prop::option::of(plain),
                prop::option::of(map),
            )
                .prop_map(|(items, tags, plain, map)| {
                    let mut doc = Map::new();
                    if let Some(items) = items {
                        doc.insert("items".into(), Value::from(items));
                    }
                    if let Some(tags) = tags {
                        doc.insert("tags".into(), Value::from(tags));
                    }
                    if let Some(plain) = plain {
                        doc.insert("plain".into(), json!(plain));
                    }
                    if let Some(map) = map {
                        doc.insert("map".into(), json!(map));
                    }
                    Value::Object(doc)
                })
        }

        fn schema() -> PatchTable {
            PatchTable::new()
                .merge_list("items", "name", PatchTable::new())
                .merge_scalars("tags")
        }

        proptest! {
            #[test]
            fn applying_the_created_patch_gives_the_modified_object(
                original in document(),
                modified in document(),
            ) {
                let schema = schema();
                let patch = create_two_way_merge_patch(&original, &modified, &schema).unwrap();
                let applied = apply_strategic_merge_patch(&original, &patch, &schema).unwrap();
                prop_assert_eq!(applied, modified, "patch {}", patch);
            }

            #[test]
            fn without_a_schema_it_round_trips_like_a_merge_patch(
                original in document(),
                modified in document(),
            ) {
                let patch = create_two_way_merge_patch(&original, &modified, ()).unwrap();
                let applied = apply_strategic_merge_patch(&original, &patch, ()).unwrap();
                prop_assert_eq!(applied, modified, "patch {}", patch);
            }
        }
    }

    /// Objects as deep as the apiserver stores them (10,000 levels) make and take strategic
    /// merge patches on a 2 MiB stack (tokio's worker threads), with and without a schema.
    #[test]
    fn objects_as_deep_as_the_apiserver_stores_patch_on_a_small_stack() {
        use crate::test_support::{bottom, dismantle, nested_objects_to, on_small_stack};
        on_small_stack(|| {
            let original = nested_objects_to(10_000, "1");
            let modified = nested_objects_to(10_000, "[2]");
            let schema = PatchTable::new().merge_list("b", "name", PatchTable::new());
            let mut values = vec![];
            for schema in [&schema, &PatchTable::new()] {
                let patch = create_two_way_merge_patch(&original, &modified, schema).unwrap();
                assert_eq!(bottom(&patch), (10_000, &json!([2])));
                let merged = apply_strategic_merge_patch(&original, &patch, schema).unwrap();
                assert_eq!(bottom(&merged), (10_000, &json!([2])));
                let same = create_two_way_merge_patch(&original, &original, schema).unwrap();
                assert_eq!(same, json!({}));
                let removed = apply_strategic_merge_patch(&original, &json!({"a": null}), schema);
                assert_eq!(removed.unwrap(), json!({}));
                let flat = apply_strategic_merge_patch(&original, &json!({"a": 1}), schema);
                assert_eq!(flat.unwrap(), json!({"a": 1}));
                values.extend([patch, merged]);
            }
            for value in values.into_iter().chain([original, modified]) {
                dismantle(value);
            }
        });
    }
}
