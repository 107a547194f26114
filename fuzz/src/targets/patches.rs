//! Targets for the three patch kinds, applied as the API server (or a fake) would: JSON merge
//! patch (RFC 7386), JSON patch (RFC 6902, with the server's json-patch library's semantics)
//! and strategic merge patch with the generated `Pod`
//! schema, plus the creation of merge and two-way strategic patches. An input is a JSON array
//! `[document, patch]` decoded with `decode_json`.
//!
//! For merge patches the target checks RFC 7386's promise: applying `create_merge_patch(a, b)`
//! to `a` gives `b`, whenever `b` has no `null` member (which a merge patch cannot express).

use kclient_api::core::v1::Pod;
use kclient_apimachinery::meta::PatchMeta;
use kclient_apimachinery::{
    JsonPatch, apply_json_patch, apply_merge_patch, apply_strategic_merge_patch,
    create_merge_patch, create_two_way_merge_patch, decode_json,
};
use serde_json::Value;

use super::{Target, err, mix, ok};
use crate::mutate::InputKind;

const DICT: &[&str] = &[
    "\"op\"",
    "\"add\"",
    "\"remove\"",
    "\"replace\"",
    "\"move\"",
    "\"copy\"",
    "\"test\"",
    "\"path\"",
    "\"from\"",
    "\"value\"",
    "\"/-\"",
    "\"/0\"",
    "\"~1\"",
    "\"~0\"",
    "\"~2\"",
    "\"$patch\"",
    "\"$retainKeys\"",
    "\"$setElementOrder/containers\"",
    "\"$deleteFromPrimitiveList/finalizers\"",
    "\"containers\"",
    "\"initContainers\"",
    "\"volumes\"",
    "\"ports\"",
    "\"containerPort\"",
    "\"protocol\"",
    "\"finalizers\"",
];

/// The patch targets.
pub(super) fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "merge_patch",
            about: "apply_merge_patch and create_merge_patch on [document, patch], checking that \
                    applying create_merge_patch(a, b) to a gives b",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: merge_patch,
        },
        Target {
            name: "json_patch",
            about: "apply_json_patch on [document, operations] (pointers, array indexes, \
                    move/copy/test, malformed operations), and the same operations decoded as a \
                    JsonPatch and applied, which must give the same outcome",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: json_patch,
        },
        Target {
            name: "strategic_merge_patch",
            about: "apply_strategic_merge_patch with Pod's generated schema and with none ($patch, \
                    $retainKeys, $setElementOrder, $deleteFromPrimitiveList directives, merge \
                    keys), and create_two_way_merge_patch of [original, modified] applied back",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: strategic_merge_patch,
        },
    ]
}

/// The two documents of an input, or the outcome's signature when it is not such a pair.
fn pair(input: &[u8]) -> Result<(Value, Value), u64> {
    match decode_json::<Value>(input) {
        Ok(Value::Array(mut items)) if items.len() >= 2 => {
            let second = items.swap_remove(1);
            Ok((items.swap_remove(0), second))
        }
        Ok(_) => Err(ok("not a pair")),
        Err(e) => Err(err("json", &e)),
    }
}

/// Whether an object anywhere in `value` (outside arrays, which a merge patch replaces whole)
/// has a `null` member.
fn has_null_member(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.values().any(|v| v.is_null() || has_null_member(v)),
        _ => false,
    }
}

fn merge_patch(input: &[u8]) -> u64 {
    let (doc, patch) = match pair(input) {
        Ok(p) => p,
        Err(sig) => return sig,
    };
    let mut applied = doc.clone();
    apply_merge_patch(&mut applied, &patch);
    for modified in [&patch, &applied] {
        if has_null_member(modified) {
            continue;
        }
        let created = create_merge_patch(&doc, modified);
        let mut result = doc.clone();
        apply_merge_patch(&mut result, &created);
        assert!(
            &result == modified,
            "applying create_merge_patch(a, b) to a does not give b\na: {doc}\nb: {modified}\npatch: {created}\nresult: {result}"
        );
    }
    ok(if applied == doc {
        "unchanged"
    } else {
        "changed"
    })
}

fn json_patch(input: &[u8]) -> u64 {
    let (doc, ops) = match pair(input) {
        Ok(p) => p,
        Err(sig) => return sig,
    };
    let raw = apply_json_patch(&doc, &ops);
    if let Err(e) = &raw {
        // Only a body that is not a list of objects (or nulls) is malformed.
        let list_of_objects = ops
            .as_array()
            .is_some_and(|items| items.iter().all(|op| op.is_object() || op.is_null()));
        assert_eq!(e.is_malformed(), !list_of_objects, "{e}");
        std::hint::black_box(e.index());
    }
    // The typed form goes through the same code: where the operations decode as a JsonPatch,
    // applying it gives what applying the JSON gives, and a failure changes nothing.
    if let Ok(patch) = serde_json::from_value::<JsonPatch>(ops) {
        let mut typed = doc.clone();
        match patch.apply(&mut typed) {
            Ok(()) => assert_eq!(
                raw.as_ref().ok(),
                Some(&typed),
                "JsonPatch::apply and apply_json_patch differ"
            ),
            Err(e) => {
                assert_eq!(
                    typed, doc,
                    "a failed JSON patch changed the document (it is all or nothing)"
                );
                assert_eq!(
                    raw.as_ref().err(),
                    Some(&e),
                    "JsonPatch::apply and apply_json_patch fail differently"
                );
            }
        }
    }
    match raw {
        Ok(patched) if patched == doc => ok("unchanged"),
        Ok(_) => ok("applied"),
        Err(e) if e.is_malformed() => err("malformed", &e),
        Err(e) => err("apply", &e),
    }
}

fn strategic_merge_patch(input: &[u8]) -> u64 {
    let (original, patch) = match pair(input) {
        Ok(p) => p,
        Err(sig) => return sig,
    };
    let with_schema = match apply_strategic_merge_patch(&original, &patch, Pod::patch_fields()) {
        Ok(v) => {
            std::hint::black_box(v);
            ok("applied")
        }
        Err(e) => err("apply", &e),
    };
    let without = match apply_strategic_merge_patch(&original, &patch, ()) {
        Ok(_) => ok("applied plain"),
        Err(e) => err("apply plain", &e),
    };
    // The second document as the modified object: create the two-way patch, apply it back.
    let two_way = match create_two_way_merge_patch(&original, &patch, Pod::patch_fields()) {
        Ok(created) => {
            match apply_strategic_merge_patch(&original, &created, Pod::patch_fields()) {
                Ok(_) => ok("two-way applied"),
                Err(e) => err("two-way apply", &e),
            }
        }
        Err(e) => err("two-way create", &e),
    };
    mix(&[with_schema, without, two_way])
}
