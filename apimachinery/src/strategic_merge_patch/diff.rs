//! Creating a two-way strategic merge patch (client-go's `CreateTwoWayMergePatch`): the
//! recursive diff of two objects, guided by a [`PatchSchema`].

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::unstructured::deep;

use super::lists::{
    ElementKind, deduplicate_scalars, go_string, merge_key_value, normalize_slice_order, same_type,
    slice_element_kind,
};
use super::schema::{PatchSchema, PatchStrategy};
use super::{
    DELETE_DIRECTIVE, DELETE_FROM_PRIMITIVE_LIST_PREFIX, DIRECTIVE_MARKER, RETAIN_KEYS_DIRECTIVE,
    SET_ELEMENT_ORDER_PREFIX, StrategicPatchError,
};

/// Which parts of a diff to produce (client-go's `DiffOptions`).
#[derive(Debug, Clone, Copy)]
struct DiffOptions {
    set_element_order: bool,
    ignore_changes_and_additions: bool,
    ignore_deletions: bool,
    build_retain_keys: bool,
}

/// The two-way strategic merge patch from `original` to `modified`, following client-go's
/// `CreateTwoWayMergePatch`. Both must be JSON objects (`null` counts as `{}`).
///
/// Objects nested as deep as the apiserver stores them (10,000 levels) are diffed on a stack
/// grown for them, so this works on any thread; the patch returned is as deep, and a
/// `serde_json::Value` that deep drops itself by recursion (see
/// [`decode_json`](crate::decode_json)).
///
/// ```
/// use kclient_apimachinery::{create_two_way_merge_patch, PatchTable};
/// use serde_json::json;
///
/// let schema = PatchTable::new().object(
///     "spec",
///     PatchTable::new().merge_list("containers", "name", PatchTable::new()),
/// );
/// let original = json!({"spec": {"containers": [{"name": "app", "image": "app:1"}]}});
/// let modified = json!({"spec": {"containers": [{"name": "app", "image": "app:2"}]}});
/// let patch = create_two_way_merge_patch(&original, &modified, &schema)?;
/// assert_eq!(
///     patch,
///     json!({"spec": {
///         "$setElementOrder/containers": [{"name": "app"}],
///         "containers": [{"image": "app:2", "name": "app"}]
///     }})
/// );
/// # Ok::<(), kclient_apimachinery::StrategicPatchError>(())
/// ```
pub fn create_two_way_merge_patch<S: PatchSchema>(
    original: &Value,
    modified: &Value,
    schema: S,
) -> Result<Value, StrategicPatchError> {
    let room = deep::room_for_patch(&[original, modified]);
    deep::with_room(room, || two_way_merge_patch(original, modified, schema))
}

fn two_way_merge_patch<S: PatchSchema>(
    original: &Value,
    modified: &Value,
    schema: S,
) -> Result<Value, StrategicPatchError> {
    let empty = Map::new();
    let original = document_object(original, &empty, "original")?;
    let modified = document_object(modified, &empty, "modified")?;
    let options = DiffOptions {
        set_element_order: true,
        ignore_changes_and_additions: false,
        ignore_deletions: false,
        build_retain_keys: false,
    };
    diff_maps(original, modified, schema, options).map(Value::Object)
}

/// A top-level document as an object; `null` reads as `{}`.
fn document_object<'a>(
    value: &'a Value,
    empty: &'a Map<String, Value>,
    which: &str,
) -> Result<&'a Map<String, Value>, StrategicPatchError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(empty),
        _ => Err(StrategicPatchError::new(format!(
            "invalid JSON document: the {which} object is not a JSON object"
        ))),
    }
}

fn diff_maps<S: PatchSchema>(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    schema: S,
    options: DiffOptions,
) -> Result<Map<String, Value>, StrategicPatchError> {
    let mut patch = Map::new();
    let mut retain_keys: Vec<&str> = Vec::new();

    for (key, modified_value) in modified {
        if options.build_retain_keys && !modified_value.is_null() {
            retain_keys.push(key);
        }
        let Some(original_value) = original.get(key) else {
            if !options.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        };
        if key == DIRECTIVE_MARKER {
            let (Some(o), Some(m)) = (original_value.as_str(), modified_value.as_str()) else {
                return Err(StrategicPatchError::new(format!(
                    "invalid value for special key: {DIRECTIVE_MARKER}"
                )));
            };
            if o != m {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        if !same_type(original_value, modified_value) {
            if !options.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        match (original_value, modified_value) {
            (Value::Object(o), Value::Object(m)) => {
                handle_map_diff(key, o, m, &mut patch, schema, options)?;
            }
            (Value::Array(o), Value::Array(m)) => {
                handle_slice_diff(key, o, m, &mut patch, schema, options)?;
            }
            _ => replace_if_not_equal(key, original_value, modified_value, &mut patch, options),
        }
    }

    if !options.ignore_deletions {
        for key in original.keys() {
            if !modified.contains_key(key) {
                patch.insert(key.clone(), Value::Null);
            }
        }
    }

    let has_additional_field = original
        .iter()
        .any(|(k, v)| !v.is_null() && !modified.contains_key(k));
    if !retain_keys.is_empty() && (!patch.is_empty() || has_additional_field) {
        retain_keys.sort_unstable();
        let list = retain_keys.into_iter().map(Value::from).collect();
        patch.insert(RETAIN_KEYS_DIRECTIVE.to_owned(), Value::Array(list));
    }
    Ok(patch)
}

fn handle_map_diff<S: PatchSchema>(
    key: &str,
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: S,
    mut options: DiffOptions,
) -> Result<(), StrategicPatchError> {
    let meta = schema.field(key);
    options.build_retain_keys = meta.retain_keys;
    if meta.strategy == PatchStrategy::Replace {
        if !options.ignore_changes_and_additions {
            patch.insert(key.to_owned(), Value::Object(modified.clone()));
        }
        return Ok(());
    }
    let nested = diff_maps(original, modified, meta.schema, options)?;
    if !nested.is_empty() {
        patch.insert(key.to_owned(), Value::Object(nested));
    }
    Ok(())
}

fn handle_slice_diff<S: PatchSchema>(
    key: &str,
    original: &[Value],
    modified: &[Value],
    patch: &mut Map<String, Value>,
    schema: S,
    mut options: DiffOptions,
) -> Result<(), StrategicPatchError> {
    let meta = schema.field(key);
    if meta.strategy != PatchStrategy::Merge {
        if !options.ignore_changes_and_additions && original != modified {
            patch.insert(key.to_owned(), Value::Array(modified.to_vec()));
        }
        return Ok(());
    }
    options.build_retain_keys = meta.retain_keys;
    let merge_key = meta.merge_key.unwrap_or("");
    let lists = diff_lists(original, modified, meta.schema, merge_key, options)
        .map_err(|e| StrategicPatchError::new(format!("{key}: {}", e.message)))?;
    if !lists.patch.is_empty() {
        patch.insert(key.to_owned(), Value::Array(lists.patch));
    }
    if !lists.deletions.is_empty() {
        patch.insert(
            format!("{DELETE_FROM_PRIMITIVE_LIST_PREFIX}/{key}"),
            Value::Array(lists.deletions),
        );
    }
    if !lists.set_order.is_empty() {
        patch.insert(
            format!("{SET_ELEMENT_ORDER_PREFIX}/{key}"),
            Value::Array(lists.set_order),
        );
    }
    Ok(())
}

fn replace_if_not_equal(
    key: &str,
    original: &Value,
    modified: &Value,
    patch: &mut Map<String, Value>,
    options: DiffOptions,
) {
    if !options.ignore_changes_and_additions && original != modified {
        patch.insert(key.to_owned(), modified.clone());
    }
}

/// The three parts of a merged list's diff.
#[derive(Default)]
struct ListDiff {
    /// The list itself in the patch: changes, additions and (for objects) delete directives.
    patch: Vec<Value>,
    /// `$deleteFromPrimitiveList`: scalars to remove.
    deletions: Vec<Value>,
    /// `$setElementOrder`: the full order of the modified list.
    set_order: Vec<Value>,
}

fn diff_lists<S: PatchSchema>(
    original: &[Value],
    modified: &[Value],
    schema: S,
    merge_key: &str,
    options: DiffOptions,
) -> Result<ListDiff, StrategicPatchError> {
    if original.is_empty() {
        if modified.is_empty() || options.ignore_changes_and_additions {
            return Ok(ListDiff::default());
        }
        return Ok(ListDiff {
            patch: modified.to_vec(),
            ..ListDiff::default()
        });
    }

    let mut diff = ListDiff::default();
    match slice_element_kind([original, modified])? {
        ElementKind::Object => {
            if merge_key.is_empty() {
                return Err(StrategicPatchError::new(
                    "a merged list of objects needs a patch merge key",
                ));
            }
            let (changes, deletions) =
                diff_lists_of_maps(original, modified, schema, merge_key, options)?;
            let mut patch = normalize_slice_order(changes, modified, Some(merge_key))?;
            let order_same = is_order_same(original, modified, merge_key)?;
            patch.extend(deletions);
            if options.set_element_order
                && ((!options.ignore_changes_and_additions && (!patch.is_empty() || !order_same))
                    || (!options.ignore_deletions && !patch.is_empty()))
            {
                diff.set_order = modified
                    .iter()
                    .map(|item| {
                        let mut only_key = Map::new();
                        let value = item.get(merge_key).cloned().unwrap_or(Value::Null);
                        only_key.insert(merge_key.to_owned(), value);
                        Value::Object(only_key)
                    })
                    .collect();
            }
            diff.patch = patch;
        }
        ElementKind::Scalar(_) => {
            let (additions, deletions) = diff_lists_of_scalars(original, modified, options);
            diff.patch = normalize_slice_order(additions, modified, None)?;
            if options.set_element_order
                && ((!options.ignore_deletions && !deletions.is_empty())
                    || (!options.ignore_changes_and_additions && original != modified))
            {
                diff.set_order = modified.to_vec();
            }
            diff.deletions = deletions;
        }
    }
    Ok(diff)
}

fn diff_lists_of_maps<S: PatchSchema>(
    original: &[Value],
    modified: &[Value],
    schema: S,
    merge_key: &str,
    options: DiffOptions,
) -> Result<(Vec<Value>, Vec<Value>), StrategicPatchError> {
    let keyed = |list: &[Value]| -> Result<Vec<(String, Value)>, StrategicPatchError> {
        let mut out = list
            .iter()
            .map(|item| Ok((go_string(merge_key_value(item, merge_key)?), item.clone())))
            .collect::<Result<Vec<_>, StrategicPatchError>>()?;
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    };
    let original_sorted = keyed(original)?;
    let modified_sorted = keyed(modified)?;

    let mut patch = Vec::new();
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < original_sorted.len() || j < modified_sorted.len() {
        let order = match (original_sorted.get(i), modified_sorted.get(j)) {
            (Some((o, _)), Some((m, _))) => o.cmp(m),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (None, None) => break,
        };
        match order {
            Ordering::Equal => {
                let (Value::Object(o), Value::Object(m)) =
                    (&original_sorted[i].1, &modified_sorted[j].1)
                else {
                    return Err(StrategicPatchError::new(
                        "expected JSON objects in a merged list",
                    ));
                };
                let mut item_patch = diff_maps(o, m, schema, options)?;
                if !item_patch.is_empty() {
                    let key_value = merge_key_value(&modified_sorted[j].1, merge_key)?.clone();
                    item_patch.insert(merge_key.to_owned(), key_value);
                    patch.push(Value::Object(item_patch));
                }
                i += 1;
                j += 1;
            }
            // The modified list has an item the original lacks.
            Ordering::Greater => {
                if !options.ignore_changes_and_additions {
                    patch.push(modified_sorted[j].1.clone());
                }
                j += 1;
            }
            // The original list has an item the modified one lacks.
            Ordering::Less => {
                if !options.ignore_deletions {
                    let key_value = merge_key_value(&original_sorted[i].1, merge_key)?.clone();
                    let mut directive = Map::new();
                    directive.insert(DIRECTIVE_MARKER.to_owned(), Value::from(DELETE_DIRECTIVE));
                    directive.insert(merge_key.to_owned(), key_value);
                    deletions.push(Value::Object(directive));
                }
                i += 1;
            }
        }
    }
    Ok((patch, deletions))
}

fn diff_lists_of_scalars(
    original: &[Value],
    modified: &[Value],
    options: DiffOptions,
) -> (Vec<Value>, Vec<Value>) {
    let sorted = |list: &[Value]| {
        let mut out: Vec<(String, Value)> =
            list.iter().map(|v| (go_string(v), v.clone())).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let original_sorted = sorted(original);
    let modified_sorted = sorted(modified);
    let mut additions = Vec::new();
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        let order = match (original_sorted.get(i), modified_sorted.get(j)) {
            (Some((o, _)), Some((m, _))) => o.cmp(m),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (None, None) => break,
        };
        match order {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Greater => {
                if !options.ignore_changes_and_additions {
                    additions.push(modified_sorted[j].1.clone());
                }
                j += 1;
            }
            Ordering::Less => {
                if !options.ignore_deletions {
                    deletions.push(original_sorted[i].1.clone());
                }
                i += 1;
            }
        }
    }
    (additions, deduplicate_scalars(deletions))
}

/// Whether both lists hold the same merge keys in the same order.
fn is_order_same(
    original: &[Value],
    modified: &[Value],
    merge_key: &str,
) -> Result<bool, StrategicPatchError> {
    if original.len() != modified.len() {
        return Ok(false);
    }
    for (o, m) in original.iter().zip(modified) {
        if merge_key_value(o, merge_key)? != merge_key_value(m, merge_key)? {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::strategic_merge_patch::PatchTable;
    use crate::strategic_merge_patch::test_schema::{deployment_schema, merge_item, two_way_cases};

    #[test]
    fn two_way_patches_match_client_go() {
        let schema = merge_item();
        for (description, original, modified, expected) in two_way_cases() {
            let patch = create_two_way_merge_patch(&original, &modified, &schema)
                .unwrap_or_else(|e| panic!("{description}: {e}"));
            assert_eq!(patch, expected, "{description}");
        }
    }

    /// The seed article's Deployment: `kubectl apply` after changing the image from
    /// nginx:1.7.9 to nginx:1.21.6 sends this patch.
    #[test]
    fn deployment_image_change() {
        let deployment = |image: &str| {
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "nginx"}},
                    "template": {
                        "metadata": {"labels": {"app": "nginx"}},
                        "spec": {"containers": [{
                            "name": "nginx",
                            "image": image,
                            "ports": [{"containerPort": 80}]
                        }]}
                    }
                }
            })
        };
        let patch = create_two_way_merge_patch(
            &deployment("nginx:1.7.9"),
            &deployment("nginx:1.21.6"),
            &deployment_schema(),
        )
        .unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "nginx"}],
                "containers": [{"image": "nginx:1.21.6", "name": "nginx"}]
            }}}})
        );
        assert_eq!(
            serde_json::to_string(&patch).unwrap(),
            r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.21.6","name":"nginx"}]}}}}"#
        );
    }

    /// The seed article's Istio initializer: the Envoy sidecar container and its config
    /// volume are merged into the user's Pod.
    #[test]
    fn pod_sidecar_injection() {
        let pod_schema = PatchTable::new().object("spec", {
            // A Pod's spec is a Deployment's spec.template.spec.
            let container =
                PatchTable::new().merge_list("volumeMounts", "mountPath", PatchTable::new());
            PatchTable::new()
                .merge_list("containers", "name", container)
                .tagged(
                    "volumes",
                    "merge,retainKeys",
                    Some("name"),
                    Some(PatchTable::new()),
                )
        });
        let original = json!({
            "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}
        });
        let modified = json!({
            "metadata": {"name": "web"},
            "spec": {
                "containers": [
                    {"name": "app", "image": "app:1"},
                    {"name": "envoy", "image": "lyft/envoy:845747b",
                     "volumeMounts": [{"name": "envoy-conf", "mountPath": "/etc/envoy"}]}
                ],
                "volumes": [{"name": "envoy-conf", "configMap": {"name": "envoy"}}]
            }
        });
        let patch = create_two_way_merge_patch(&original, &modified, &pod_schema).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "envoy"}],
                "containers": [{"name": "envoy", "image": "lyft/envoy:845747b",
                    "volumeMounts": [{"name": "envoy-conf", "mountPath": "/etc/envoy"}]}],
                "volumes": [{"name": "envoy-conf", "configMap": {"name": "envoy"}}]
            }})
        );
    }

    #[test]
    fn retain_keys_on_a_deployment_strategy() {
        let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let modified = json!({"spec": {"strategy": {"type": "Recreate"}}});
        let patch = create_two_way_merge_patch(&original, &modified, &deployment_schema()).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"strategy": {
                "$retainKeys": ["type"],
                "rollingUpdate": null,
                "type": "Recreate"
            }}})
        );
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let schema = merge_item();
        let cases = [
            (json!([1]), json!({}), "not a JSON object"),
            (
                json!({"mergingList":[{"name":1}]}),
                json!({"mergingList":[{"value":2}]}),
                "does not contain declared merge key: name",
            ),
            (
                json!({"mergingList":[{"name":1}]}),
                json!({"mergingList":[1]}),
                "list element types are not identical",
            ),
            (
                json!({"mergingIntList":[[1]]}),
                json!({"mergingIntList":[[2]]}),
                "lists of lists",
            ),
            (
                json!({"$patch":"replace"}),
                json!({"$patch":1}),
                "invalid value for special key",
            ),
        ];
        for (original, modified, fragment) in cases {
            let err = create_two_way_merge_patch(&original, &modified, &schema).unwrap_err();
            assert!(err.to_string().contains(fragment), "{err}");
        }
    }

    #[test]
    fn without_a_schema_lists_are_replaced_and_maps_diffed() {
        let original = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        let modified = json!({"a": {"b": 2, "c": [1]}});
        assert_eq!(
            create_two_way_merge_patch(&original, &modified, ()).unwrap(),
            json!({"a": {"b": 2, "c": [1]}, "d": null})
        );
    }
}
