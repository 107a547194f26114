//! Patch schemas shared by the tests of creating and applying strategic merge patches.

use serde_json::{Value, json};

use super::PatchTable;

/// client-go's `MergeItem` test type (patch_test.go).
pub(crate) fn merge_item() -> PatchTable {
    let leaf = PatchTable::new()
        .merge_list("mergingList", "name", PatchTable::new())
        .merge_scalars("mergingIntList");
    let retain_keys_item = PatchTable::new()
        .merge_scalars("mergingIntList")
        .merge_list("mergingList", "name", leaf.clone());
    // `MergeItem` is recursive; two levels are enough for the cases below.
    let item = PatchTable::new()
        .merge_list("mergingList", "name", leaf.clone())
        .object("nonMergingList", leaf.clone())
        .merge_scalars("mergingIntList")
        .merge_list("mergeItemPtr", "name", leaf.clone())
        .replace("replacingItem")
        .tagged("retainKeysMap", "retainKeys", None, Some(retain_keys_item))
        .tagged(
            "retainKeysMergingList",
            "merge,retainKeys",
            Some("name"),
            Some(leaf),
        );
    item.clone()
        .merge_list("mergingList", "name", item.clone())
        .merge_list("retainKeysMergingList", "name", item.clone())
        .retain_keys("retainKeysMergingList")
}

/// The parts of a Deployment's schema that the tests touch.
pub(crate) fn deployment_schema() -> PatchTable {
    let container = PatchTable::new()
        .merge_list("ports", "containerPort", PatchTable::new())
        .merge_list("env", "name", PatchTable::new())
        .merge_list("volumeMounts", "mountPath", PatchTable::new());
    let pod_spec = PatchTable::new()
        .merge_list("containers", "name", container.clone())
        .merge_list("initContainers", "name", container)
        .tagged(
            "volumes",
            "merge,retainKeys",
            Some("name"),
            Some(PatchTable::new()),
        );
    let pod_template = PatchTable::new()
        .object("metadata", PatchTable::new().merge_scalars("finalizers"))
        .object("spec", pod_spec);
    let deployment_spec = PatchTable::new()
        .object("template", pod_template)
        .retain_keys("strategy");
    PatchTable::new().object("spec", deployment_spec)
}

/// (description, original, modified, expected two-way patch): cases from client-go's
/// `createStrategicMergePatchTestCaseData` and `strategicMergePatchRawTestCases`.
pub(crate) fn two_way_cases() -> Vec<(&'static str, Value, Value, Value)> {
    vec![
        (
            "nil original",
            json!(null),
            json!({"name":1,"value":1}),
            json!({"name":1,"value":1}),
        ),
        ("nil patch", json!({"name":1}), json!({"name":1}), json!({})),
        (
            "add field to map",
            json!({"name":1}),
            json!({"name":1,"value":1}),
            json!({"value":1}),
        ),
        (
            "add field and delete field from map",
            json!({"name":1}),
            json!({"value":1}),
            json!({"name":null,"value":1}),
        ),
        (
            "delete field from nested map",
            json!({"simpleMap":{"key1":1,"key2":1}}),
            json!({"simpleMap":{"key1":1}}),
            json!({"simpleMap":{"key2":null}}),
        ),
        (
            "delete all fields from map",
            json!({"name":1,"value":1}),
            json!({}),
            json!({"name":null,"value":null}),
        ),
        (
            "add field and delete all fields from map",
            json!({"name":1,"value":1}),
            json!({"other":"a"}),
            json!({"name":null,"value":null,"other":"a"}),
        ),
        (
            "replace list of scalars",
            json!({"nonMergingIntList":[1,2]}),
            json!({"nonMergingIntList":[2,3]}),
            json!({"nonMergingIntList":[2,3]}),
        ),
        (
            "delete all maps from merging list",
            json!({"mergingList":[{"name":1},{"name":2}]}),
            json!({"mergingList":[]}),
            json!({"mergingList":[{"name":1,"$patch":"delete"},{"name":2,"$patch":"delete"}]}),
        ),
        (
            "merge empty merging lists",
            json!({"mergingList":[]}),
            json!({"mergingList":[]}),
            json!({}),
        ),
        (
            "defined null values should propagate overwrite current fields",
            json!({"name":2}),
            json!({"name":1,"value":1,"other":null}),
            json!({"name":1,"value":1,"other":null}),
        ),
        (
            "defined null values should propagate removing original fields",
            json!({"name":"original-name","value":"original-value"}),
            json!({"name":"modified-name","value":null}),
            json!({"name":"modified-name","value":null}),
        ),
        (
            "nil patch with retainKeys map",
            json!({"name":"a","retainKeysMap":{"name":"foo"}}),
            json!({"name":"a","retainKeysMap":{"name":"foo"}}),
            json!({}),
        ),
        (
            "retainKeys map with no change should not be present",
            json!({"name":"a","retainKeysMap":{"name":"foo"}}),
            json!({"name":"a","value":"b","retainKeysMap":{"name":"foo"}}),
            json!({"value":"b"}),
        ),
        (
            "delete items in lists of scalars",
            json!({"mergingIntList":[1,2,3]}),
            json!({"mergingIntList":[1,2]}),
            json!({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]}),
        ),
        (
            "delete all duplicate items in lists of scalars",
            json!({"mergingIntList":[1,2,3,3]}),
            json!({"mergingIntList":[1,2]}),
            json!({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]}),
        ),
        (
            "add and delete items in lists of scalars",
            json!({"mergingIntList":[1,2,3]}),
            json!({"mergingIntList":[1,2,4]}),
            json!({
                "$setElementOrder/mergingIntList":[1,2,4],
                "$deleteFromPrimitiveList/mergingIntList":[3],
                "mergingIntList":[4]
            }),
        ),
        (
            "merge lists of maps",
            json!({"mergingList":[{"name":1},{"name":2,"value":2}]}),
            json!({"mergingList":[{"name":4,"value":4},{"name":1},{"name":2,"value":2},{"name":3,"value":3}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":4},{"name":1},{"name":2},{"name":3}],
                "mergingList":[{"name":4,"value":4},{"name":3,"value":3}]
            }),
        ),
        (
            "add field to map in merging list",
            json!({"mergingList":[{"name":1},{"name":2,"value":2}]}),
            json!({"mergingList":[{"name":1,"value":1},{"name":2,"value":2}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":1},{"name":2}],
                "mergingList":[{"name":1,"value":1}]
            }),
        ),
        (
            "de-duplicate field in merging list",
            json!({"mergingList":[{"name":1},{"name":1}]}),
            json!({"mergingList":[{"name":1}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":1}],
                "mergingList":[{"$patch":"delete","name":1}]
            }),
        ),
        (
            "delete duplicate field in merging list",
            json!({"mergingList":[{"name":1},{"name":1}]}),
            json!({"mergingList":{}}),
            json!({"mergingList":{}}),
        ),
        (
            "replace map field value in merging list",
            json!({"mergingList":[{"name":1,"value":1},{"name":2,"value":2}]}),
            json!({"mergingList":[{"name":1,"value":"a"},{"name":2,"value":2}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":1},{"name":2}],
                "mergingList":[{"name":1,"value":"a"}]
            }),
        ),
        (
            "delete map from merging list",
            json!({"mergingList":[{"name":1},{"name":2}]}),
            json!({"mergingList":[{"name":2}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":2}],
                "mergingList":[{"name":1,"$patch":"delete"}]
            }),
        ),
        (
            "add map and delete map from merging list",
            json!({"mergingList":[{"name":1},{"name":2}]}),
            json!({"mergingList":[{"name":2},{"name":3}]}),
            json!({
                "$setElementOrder/mergingList":[{"name":2},{"name":3}],
                "mergingList":[{"name":3},{"name":1,"$patch":"delete"}]
            }),
        ),
        (
            "only reorder a merging list",
            json!({"mergingList":[{"name":1},{"name":2}]}),
            json!({"mergingList":[{"name":2},{"name":1}]}),
            json!({"$setElementOrder/mergingList":[{"name":2},{"name":1}]}),
        ),
        (
            "only reorder a merging int list",
            json!({"mergingIntList":[1,2,3]}),
            json!({"mergingIntList":[3,1,2]}),
            json!({"$setElementOrder/mergingIntList":[3,1,2]}),
        ),
        (
            "replace a replacing item whole",
            json!({"replacingItem":{"a":1,"b":2}}),
            json!({"replacingItem":{"a":1}}),
            json!({"replacingItem":{"a":1}}),
        ),
        (
            "retainKeys map adds a field and clear a field",
            json!({"retainKeysMap":{"name":"foo"}}),
            json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            json!({"retainKeysMap":{"$retainKeys":["name","value"],"value":"bar"}}),
        ),
        (
            "retainKeys map deletes a field",
            json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            json!({"retainKeysMap":{"name":"foo"}}),
            json!({"retainKeysMap":{"$retainKeys":["name"],"value":null}}),
        ),
        (
            "retainKeys map clears a field",
            json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            json!({}),
        ),
        (
            "retainKeys map should clear defaulted field",
            json!({}),
            json!({"retainKeysMap":{"other":"bar"}}),
            json!({"retainKeysMap":{"other":"bar"}}),
        ),
        (
            "retainKeys map adds a field in a nested map",
            json!({"retainKeysMap":{"name":"foo","value":"bar","simpleMap":{"key1":"a"}}}),
            json!({"retainKeysMap":{"name":"foo","value":"bar","simpleMap":{"key1":"a","key2":"b"}}}),
            json!({"retainKeysMap":{"$retainKeys":["name","simpleMap","value"],"simpleMap":{"key2":"b"}}}),
        ),
        (
            "retainKeys map replaces non-merging list",
            json!({"retainKeysMap":{"name":"foo","value":"bar","nonMergingList":[{"name":"a"},{"name":"b"}]}}),
            json!({"retainKeysMap":{"name":"foo","value":"bar","nonMergingList":[{"name":"a"},{"name":"c"},{"name":"b"}]}}),
            json!({"retainKeysMap":{
                "$retainKeys":["name","nonMergingList","value"],
                "nonMergingList":[{"name":"a"},{"name":"c"},{"name":"b"}]
            }}),
        ),
        (
            "retainKeys map deletes nested non-merging list",
            json!({"retainKeysMap":{"name":"foo","nonMergingList":[{"name":"a"},{"name":"b"}]}}),
            json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
            json!({"retainKeysMap":{"$retainKeys":["name","value"],"value":"bar","nonMergingList":null}}),
        ),
        (
            "retainKeys map adds an item in nested merging int list",
            json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2]}}),
            json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,4]}}),
            json!({"retainKeysMap":{
                "$setElementOrder/mergingIntList":[1,2,4],
                "$retainKeys":["mergingIntList","name"],
                "mergingIntList":[4]
            }}),
        ),
        (
            "retainKeys map adds an item and deletes an item in nested merging int list",
            json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3]}}),
            json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,3,5]}}),
            json!({"retainKeysMap":{
                "$retainKeys":["mergingIntList","name"],
                "mergingIntList":[5],
                "$deleteFromPrimitiveList/mergingIntList":[2],
                "$setElementOrder/mergingIntList":[1,3,5]
            }}),
        ),
        (
            "retainKeys map deletes nested merging int list",
            json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3]}}),
            json!({"retainKeysMap":{"name":"foo"}}),
            json!({"retainKeysMap":{"$retainKeys":["name"],"mergingIntList":null}}),
        ),
        (
            "retainKeys map adds an item in nested merging list",
            json!({"retainKeysMap":{"name":"foo","mergingList":[{"name":"a"},{"name":"b"}]}}),
            json!({"retainKeysMap":{"name":"foo","mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}]}}),
            json!({"retainKeysMap":{
                "$retainKeys":["mergingList","name"],
                "$setElementOrder/mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}],
                "mergingList":[{"name":"c"}]
            }}),
        ),
        (
            "retainKeys merging list item changes a field",
            json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a"}]}),
            json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"b"}]}),
            json!({
                "$setElementOrder/retainKeysMergingList":[{"name":"bar"},{"name":"foo"}],
                "retainKeysMergingList":[{"$retainKeys":["name","value"],"name":"foo","value":"b"}]
            }),
        ),
    ]
}
