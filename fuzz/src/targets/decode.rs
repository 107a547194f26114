//! Targets for the decoders every client runs on a response body: typed lists and objects,
//! `Status` (and the error built from it or from a non-`Status` error body), watch events, and
//! `Unstructured` objects and lists, all through `decode_json` as the clients call it.
//!
//! Beyond "no panic", each decoded value must survive a round trip: encoding it and decoding
//! the result must give an equal value (kclient must read back what it writes).

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{ConfigMap, Pod, Secret};
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{
    Error, Object, ObjectList, RawWatchEvent, ServerResponse, Status, Unstructured,
    UnstructuredList, WatchEvent, decode_json, meta_namespace_key,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Target, err, mix, ok};
use crate::mutate::InputKind;

/// Kubernetes words worth inserting into objects.
const DICT: &[&str] = &[
    "\"apiVersion\"",
    "\"kind\"",
    "\"metadata\"",
    "\"items\"",
    "\"name\"",
    "\"namespace\"",
    "\"resourceVersion\"",
    "\"continue\"",
    "\"remainingItemCount\"",
    "\"labels\"",
    "\"annotations\"",
    "\"managedFields\"",
    "\"fieldsV1\"",
    "\"ownerReferences\"",
    "\"creationTimestamp\"",
    "\"deletionTimestamp\"",
    "\"spec\"",
    "\"status\"",
    "\"containers\"",
    "\"resources\"",
    "\"requests\"",
    "\"cpu\"",
    "\"data\"",
    "\"binaryData\"",
    "\"type\"",
    "\"object\"",
    "\"code\"",
    "\"reason\"",
    "\"details\"",
    "\"causes\"",
    "\"retryAfterSeconds\"",
    "\"maxSurge\"",
    "\"port\"",
    "ADDED",
    "BOOKMARK",
    "ERROR",
    "PodList",
    "Status",
    "Failure",
    "Expired",
    "AlreadyExists",
    "TooManyRequests",
];

/// The decoder targets.
pub(super) fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "typed_list",
            about: "decode_json into ObjectList<Pod>, ObjectList<ConfigMap> and \
                    ObjectList<Deployment> (a LIST response), with a round trip of what decodes",
            kind: InputKind::Json,
            max_len: 256 << 10,
            dict: DICT,
            run: typed_list,
        },
        Target {
            name: "typed_object",
            about: "decode_json into Pod, ConfigMap, Secret (base64 data), Deployment and \
                    PartialObjectMetadata (a GET response), with Object accessors and a round trip",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: typed_object,
        },
        Target {
            name: "status",
            about: "decode_json into Status and the API Error built from it (Error::from_response_status, \
                    every is_* check, retry delays, Display), and Error::from_server_response on \
                    the same bytes as a non-Status error body",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: status,
        },
        Target {
            name: "watch_event",
            about: "decode_json into WatchEvent<Pod>, WatchEvent<ConfigMap>, WatchEvent<Unstructured> \
                    and RawWatchEvent (then RawWatchEvent::decode), one watch line as rest's \
                    WatchStream decodes it",
            kind: InputKind::Json,
            max_len: 64 << 10,
            dict: DICT,
            run: watch_event,
        },
        Target {
            name: "unstructured",
            about: "decode_json into Unstructured and UnstructuredList, their accessors \
                    (gvk, Object getters, nested_* and set/remove_nested_field), to_typed::<Pod>, \
                    with a round trip",
            kind: InputKind::Json,
            max_len: 128 << 10,
            dict: DICT,
            run: unstructured,
        },
    ]
}

/// Decodes `input` as `T`; on success checks that encoding and decoding again gives an equal
/// value.
fn round_trip<T>(input: &[u8], what: &str) -> Result<T, u64>
where
    T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
{
    let value: T = decode_json(input).map_err(|e| err(what, &e))?;
    let encoded = serde_json::to_vec(&value)
        .unwrap_or_else(|e| panic!("{what}: a decoded value does not encode: {e}\n{value:?}"));
    let again: T = decode_json(&encoded).unwrap_or_else(|e| {
        panic!(
            "{what}: kclient does not decode what it encoded: {e}\n{}",
            String::from_utf8_lossy(&encoded)
        )
    });
    assert!(
        again == value,
        "{what}: the round trip changed the value\nfirst:  {value:?}\nsecond: {again:?}"
    );
    Ok(value)
}

/// Reads every `Object` accessor, as the cache and informers do.
fn touch<O: Object + ?Sized>(object: &O) -> usize {
    let mut n = object.name().len()
        + object.namespace().len()
        + object.resource_version().len()
        + object.uid().len()
        + object.labels().len()
        + object.annotations().len()
        + object.finalizers().len()
        + object.owner_references().len();
    n += usize::from(object.is_being_deleted()) + object.generation().unsigned_abs() as usize % 7;
    n += object.labels().entries().count();
    n + meta_namespace_key(object).len()
}

fn typed_list(input: &[u8]) -> u64 {
    fn one<K>(input: &[u8], what: &str) -> u64
    where
        K: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug + Object,
    {
        match round_trip::<ObjectList<K>>(input, what) {
            Ok(list) => {
                let n: usize = list.items.iter().map(touch).sum();
                std::hint::black_box((n, list.resource_version(), list.continue_token()));
                ok(what)
            }
            Err(sig) => sig,
        }
    }
    mix(&[
        one::<Pod>(input, "PodList"),
        one::<ConfigMap>(input, "ConfigMapList"),
        one::<Deployment>(input, "DeploymentList"),
    ])
}

fn typed_object(input: &[u8]) -> u64 {
    fn one<K>(input: &[u8], what: &str) -> u64
    where
        K: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug + Object,
    {
        match round_trip::<K>(input, what) {
            Ok(object) => {
                std::hint::black_box(touch(&object));
                ok(what)
            }
            Err(sig) => sig,
        }
    }
    mix(&[
        one::<Pod>(input, "Pod"),
        one::<ConfigMap>(input, "ConfigMap"),
        one::<Secret>(input, "Secret"),
        one::<Deployment>(input, "Deployment"),
        one::<PartialObjectMetadata>(input, "PartialObjectMetadata"),
    ])
}

/// Reads everything a caller asks of an API error.
fn touch_error(e: &Error) -> usize {
    let checks = [
        e.is_not_found(),
        e.is_already_exists(),
        e.is_conflict(),
        e.is_gone(),
        e.is_resource_expired(),
        e.is_too_many_requests(),
        e.is_forbidden(),
        e.is_unauthorized(),
        e.is_invalid(),
        e.is_bad_request(),
        e.is_method_not_supported(),
        e.is_not_acceptable(),
        e.is_unsupported_media_type(),
        e.has_status_cause("FieldValueInvalid"),
    ];
    let delays = e.retry_after().map_or(0, |d| d.as_millis() as usize)
        + e.suggests_client_delay()
            .map_or(0, |d| d.as_millis() as usize);
    checks.iter().filter(|c| **c).count()
        + delays
        + e.to_string().len()
        + format!("{e:?}").len()
        + e.code().map_or(0, usize::from)
        + e.reason().to_string().len()
}

fn status(input: &[u8]) -> u64 {
    // The HTTP code and content type of the error response come from the input's bytes.
    let pick = input
        .iter()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(*b)));
    let codes = [
        0u16, 200, 400, 401, 403, 404, 405, 406, 409, 410, 415, 422, 429, 500, 503, 504, 599, 999,
    ];
    let code = codes[pick as usize % codes.len()];
    let decoded = match round_trip::<Status>(input, "Status") {
        Ok(status) => {
            let e = Error::from_response_status(code, status);
            std::hint::black_box(touch_error(&e));
            ok("Status")
        }
        Err(sig) => sig,
    };
    let content_types = [
        None,
        Some("text/plain"),
        Some("text/html; charset=utf-8"),
        Some("application/json"),
    ];
    let e = Error::from_server_response(ServerResponse {
        code,
        verb: ["GET", "POST", "PUT", "PATCH", "DELETE"][(pick >> 8) as usize % 5],
        body: input,
        content_type: content_types[(pick >> 12) as usize % content_types.len()],
        retry_after_seconds: pick >> 16,
        group: "apps",
        resource: "deployments",
        name: if pick & 1 == 0 { "" } else { "web" },
    });
    std::hint::black_box(touch_error(&e));
    decoded
}

fn watch_event(input: &[u8]) -> u64 {
    fn one<T: DeserializeOwned>(input: &[u8], what: &str) -> u64 {
        match decode_json::<WatchEvent<T>>(input) {
            Ok(WatchEvent::Error(status)) => {
                std::hint::black_box(touch_error(&Error::from_status(*status)));
                ok("ERROR")
            }
            Ok(WatchEvent::Bookmark(b)) => {
                std::hint::black_box(b.is_initial_events_end());
                ok("BOOKMARK")
            }
            Ok(event) => ok(event.event_type().as_str()),
            Err(e) => err(what, &e),
        }
    }
    let raw = match decode_json::<RawWatchEvent>(input) {
        Ok(raw) => {
            std::hint::black_box(raw.object.get().len());
            match raw.decode::<Pod>() {
                Ok(ev) => ok(ev.event_type().as_str()),
                Err(e) => err("RawWatchEvent::decode", &e),
            }
        }
        Err(e) => err("RawWatchEvent", &e),
    };
    mix(&[
        one::<Pod>(input, "WatchEvent<Pod>"),
        one::<ConfigMap>(input, "WatchEvent<ConfigMap>"),
        one::<Unstructured>(input, "WatchEvent<Unstructured>"),
        raw,
    ])
}

/// Paths that the callers of `nested_*` use.
const PATHS: &[&[&str]] = &[
    &["metadata", "name"],
    &["metadata", "labels"],
    &["spec", "replicas"],
    &["spec", "template", "spec", "containers"],
    &["status", "conditions"],
    &["data"],
    &["items"],
    &[],
];

fn unstructured(input: &[u8]) -> u64 {
    let object = match round_trip::<Unstructured>(input, "Unstructured") {
        Ok(mut u) => {
            let mut n = touch(&u) + u.api_version().len() + u.kind().len();
            n += u.gvk().group.len();
            for path in PATHS {
                n += u.nested_field(path).map_or(1, |v| usize::from(v.is_some()));
                n += u.nested_string(path).map_or(1, |v| v.map_or(0, str::len));
                n += u
                    .nested_bool(path)
                    .map_or(1, |v| usize::from(v.unwrap_or(false)));
                n += u
                    .nested_i64(path)
                    .map_or(1, |v| v.unwrap_or(0) as usize % 3);
                n += u.nested_f64(path).map_or(1, |v| usize::from(v.is_some()));
                n += u.nested_slice(path).map_or(1, |v| v.map_or(0, Vec::len));
                n += u.nested_map(path).map_or(1, |v| v.map_or(0, |m| m.len()));
                n += u
                    .nested_string_slice(path)
                    .map_or(1, |v| v.map_or(0, |s| s.len()));
                n += u
                    .nested_string_map(path)
                    .map_or(1, |v| v.map_or(0, |m| m.len()));
            }
            // Paths made of the object's own keys.
            let keys: Vec<String> = u.as_map().keys().take(3).cloned().collect();
            let path: Vec<&str> = keys.iter().map(String::as_str).collect();
            n += usize::from(u.set_nested_field(1, &path).is_ok());
            n += usize::from(u.remove_nested_field(&path).is_some());
            n += usize::from(u.to_typed::<Pod>().is_ok());
            u.set_name("renamed");
            u.set_namespace("elsewhere");
            std::hint::black_box(n);
            ok("Unstructured")
        }
        Err(sig) => sig,
    };
    let list = match round_trip::<UnstructuredList>(input, "UnstructuredList") {
        Ok(list) => {
            let n: usize = list.items.iter().map(touch).sum();
            std::hint::black_box(n);
            ok("UnstructuredList")
        }
        Err(sig) => sig,
    };
    mix(&[object, list])
}
