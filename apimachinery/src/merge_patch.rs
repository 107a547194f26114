//! JSON merge patches (RFC 7386, `application/merge-patch+json`): creating one from two
//! documents and applying one.
//!
//! A merge patch is a partial document: objects merge key by key, `null` deletes a key, and
//! anything else (including arrays) replaces the target value whole. It cannot set a value to
//! `null`, and it replaces lists whole; built-in types merge lists by key with a strategic
//! merge patch instead (see [`create_two_way_merge_patch`](crate::create_two_way_merge_patch)).

use serde_json::{Map, Value};

use crate::unstructured::deep;

/// The merge patch that turns `original` into `modified`.
///
/// When both are objects the patch holds only what changed (an empty object if nothing did):
/// keys missing from `modified` become `null`, changed values are given whole, and nested
/// objects are diffed recursively. Otherwise the patch is `modified` itself.
///
/// Documents nested as deep as the apiserver stores objects (10,000 levels) are diffed on a
/// stack grown for them, so this works on any thread; the patch returned is as deep, and a
/// `serde_json::Value` that deep drops itself by recursion (see
/// [`decode_json`](crate::decode_json)).
///
/// ```
/// use kclient_apimachinery::{apply_merge_patch, create_merge_patch};
/// use serde_json::json;
///
/// let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1}});
/// let modified = json!({"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"replicas": 2}});
/// let patch = create_merge_patch(&original, &modified);
/// assert_eq!(patch, json!({"metadata": {"labels": {"b": null, "c": "3"}}, "spec": {"replicas": 2}}));
///
/// let mut doc = original.clone();
/// apply_merge_patch(&mut doc, &patch);
/// assert_eq!(doc, modified);
/// ```
pub fn create_merge_patch(original: &Value, modified: &Value) -> Value {
    let room = deep::room_for_patch(&[original, modified]);
    deep::with_room(room, || merge_patch(original, modified))
}

fn merge_patch(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(o), Value::Object(m)) => Value::Object(diff_objects(o, m)),
        _ => modified.clone(),
    }
}

fn diff_objects(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
) -> Map<String, Value> {
    let mut patch = Map::new();
    for key in original.keys() {
        if !modified.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    for (key, m) in modified {
        match original.get(key) {
            None => {
                patch.insert(key.clone(), m.clone());
            }
            Some(Value::Object(o)) if m.is_object() => {
                if let Value::Object(m) = m {
                    let nested = diff_objects(o, m);
                    if !nested.is_empty() {
                        patch.insert(key.clone(), Value::Object(nested));
                    }
                }
            }
            Some(o) if o != m => {
                patch.insert(key.clone(), m.clone());
            }
            Some(_) => {}
        }
    }
    patch
}

/// Applies a merge patch to `target` in place (RFC 7386 section 2), on a stack grown for
/// them when `target` or `patch` nests as deep as the apiserver stores objects.
pub fn apply_merge_patch(target: &mut Value, patch: &Value) {
    let room = deep::room_for_patch(&[target, patch]);
    deep::with_room(room, || apply(target, patch));
}

fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            let slot = target.entry(key.clone()).or_insert(Value::Null);
            apply(slot, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The examples of RFC 7386 appendix A: (target, patch, result).
    fn rfc_cases() -> Vec<(Value, Value, Value)> {
        vec![
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ]
    }

    #[test]
    fn applies_the_rfc_examples() {
        for (target, patch, expected) in rfc_cases() {
            let mut doc = target.clone();
            apply_merge_patch(&mut doc, &patch);
            assert_eq!(doc, expected, "{target} + {patch}");
        }
    }

    #[test]
    fn created_patches_reproduce_the_modified_document() {
        let pairs = [
            (
                json!({"a":1,"b":{"c":2,"d":[1,2]}}),
                json!({"a":1,"b":{"c":3,"d":[2]}}),
            ),
            (json!({"a":{"b":1}}), json!({"a":"scalar now"})),
            (json!({"a":"scalar"}), json!({"a":{"b":1}})),
            (json!({"gone":{"x":1},"kept":true}), json!({"kept":true})),
            (json!({"same":{"x":[1]}}), json!({"same":{"x":[1]}})),
            (json!([1]), json!({"a":1})),
        ];
        for (original, modified) in pairs {
            let patch = create_merge_patch(&original, &modified);
            let mut doc = original.clone();
            apply_merge_patch(&mut doc, &patch);
            assert_eq!(doc, modified, "patch {patch}");
        }
    }

    #[test]
    fn created_patches_are_minimal() {
        let original = json!({"a":1,"b":{"c":2,"d":3},"e":[1,2]});
        let modified = json!({"a":1,"b":{"c":2,"d":4},"e":[1,2],"f":"new"});
        assert_eq!(
            create_merge_patch(&original, &modified),
            json!({"b":{"d":4},"f":"new"})
        );
        assert_eq!(create_merge_patch(&original, &original), json!({}));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// JSON without `null`s, which a merge patch cannot set.
        pub(crate) fn json_without_nulls() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                any::<bool>().prop_map(Value::from),
                any::<i32>().prop_map(Value::from),
                "[a-z]{0,4}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    prop::collection::btree_map("[a-d]", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn object() -> impl Strategy<Value = Value> {
            prop::collection::btree_map("[a-d]", json_without_nulls(), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        }

        proptest! {
            #[test]
            fn applying_the_created_patch_gives_the_modified_document(
                original in object(),
                modified in object(),
            ) {
                let patch = create_merge_patch(&original, &modified);
                let mut doc = original.clone();
                apply_merge_patch(&mut doc, &patch);
                prop_assert_eq!(doc, modified);
            }
        }
    }

    /// Objects as deep as the apiserver stores them (10,000 levels) make and take merge
    /// patches on a 2 MiB stack (tokio's worker threads), as deep patches, and a patch that
    /// removes a deep value drops it.
    #[test]
    fn objects_as_deep_as_the_apiserver_stores_patch_on_a_small_stack() {
        use crate::test_support::{bottom, dismantle, nested_objects_to, on_small_stack};
        on_small_stack(|| {
            let original = nested_objects_to(10_000, "1");
            let modified = nested_objects_to(10_000, "2");
            let patch = create_merge_patch(&original, &modified);
            assert_eq!(bottom(&patch), (10_000, &json!(2)));
            let mut doc = nested_objects_to(10_000, "1");
            apply_merge_patch(&mut doc, &patch);
            assert_eq!(bottom(&doc), (10_000, &json!(2)));
            // Equal objects, a deep value replaced by a scalar, and a scalar by a deep value.
            assert_eq!(create_merge_patch(&original, &original), json!({}));
            let flat = json!({"a": 1});
            let to_flat = create_merge_patch(&original, &flat);
            assert_eq!(to_flat, flat);
            let to_deep = create_merge_patch(&flat, &modified);
            assert_eq!(bottom(&to_deep), (10_000, &json!(2)));
            apply_merge_patch(&mut doc, &json!({"a": null}));
            assert_eq!(doc, json!({}));
            apply_merge_patch(&mut doc, &to_deep);
            assert_eq!(bottom(&doc), (10_000, &json!(2)));
            apply_merge_patch(&mut doc, &to_flat);
            assert_eq!(doc, flat);
            for value in [original, modified, patch, to_deep, doc] {
                dismantle(value);
            }
        });
    }
}
