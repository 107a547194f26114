//! Targets for the protobuf decoders (`application/vnd.kubernetes.protobuf`) that typed clients
//! run on every get, list and watch of a built-in kind: the `k8s\0` + `runtime.Unknown`
//! envelope, the generated messages of Pod, ConfigMap, Secret and Deployment, lists,
//! `PartialObjectMetadata`, `Status`, and length-prefixed watch frames.
//!
//! Beyond "no panic", each decoded value must survive a protobuf round trip (encoding it and
//! decoding the result gives an equal value), and must encode as JSON.

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{ConfigMap, Pod, Secret};
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::protobuf::{
    MAGIC, Message, Unknown, decode_object, decode_status, decode_watch_event, split_watch_event,
};
use kclient_apimachinery::{Error, Object, ObjectList, WatchEvent};
use serde::Serialize;

use super::{Target, err, mix, ok};
use crate::mutate::InputKind;

/// Words of the envelope and of watch events worth inserting.
const DICT: &[&str] = &[
    "k8s\0",
    "v1",
    "apps/v1",
    "Pod",
    "PodList",
    "ConfigMap",
    "Status",
    "ADDED",
    "MODIFIED",
    "DELETED",
    "BOOKMARK",
    "ERROR",
    "Failure",
    "application/vnd.kubernetes.protobuf",
    "\u{1}\u{0}\u{0}\u{0}",
    "\u{ff}\u{ff}\u{ff}\u{ff}\u{f}",
];

/// The protobuf targets.
pub(super) fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "protobuf_object",
            about: "protobuf bodies (k8s\\0 envelope, and the bare message inside) decoded as \
                    Pod, ConfigMap, Secret, Deployment, PartialObjectMetadata, ObjectList<Pod> \
                    and Status, with a protobuf round trip of what decodes",
            kind: InputKind::Bytes,
            max_len: 64 << 10,
            dict: DICT,
            run: protobuf_object,
        },
        Target {
            name: "protobuf_watch",
            about: "a protobuf watch body: four-byte lengths and WatchEvent frames, each split \
                    and decoded as WatchEvent<Pod> and WatchEvent<ConfigMap>",
            kind: InputKind::Bytes,
            max_len: 64 << 10,
            dict: DICT,
            run: protobuf_watch,
        },
    ]
}

/// Checks that `value` encodes to protobuf that decodes, that repeating the round trip reaches
/// a value that no longer changes, and that `value` encodes as JSON. (A round trip may change
/// the value, one level per trip: a Go value field the input left out, such as a Pod's `spec`,
/// decodes as unset and is written as Go writes it, so it comes back set and empty, with the
/// value fields inside it unset.)
fn round_trip<T>(value: &T, what: &str)
where
    T: Message + Serialize + PartialEq + std::fmt::Debug,
{
    let decode = |v: &T| {
        T::decode_protobuf(&v.encode_protobuf()).unwrap_or_else(|e| {
            panic!("{what}: kclient does not decode the protobuf it encoded: {e}\n{v:?}")
        })
    };
    let mut current = decode(value);
    for _ in 0..32 {
        let next = decode(&current);
        if next == current {
            serde_json::to_vec(value)
                .unwrap_or_else(|e| panic!("{what}: a decoded value does not encode as JSON: {e}"));
            return;
        }
        current = next;
    }
    panic!("{what}: 32 protobuf round trips and the value still changes\n{current:?}");
}

fn touch<O: Object + ?Sized>(object: &O) -> usize {
    object.name().len()
        + object.namespace().len()
        + object.resource_version().len()
        + object.labels().entries().count()
        + object.annotations().len()
        + object.owner_references().len()
        + object.finalizers().len()
}

fn protobuf_object(input: &[u8]) -> u64 {
    fn enveloped<K>(input: &[u8], what: &str) -> u64
    where
        K: Message + Serialize + PartialEq + std::fmt::Debug + Object,
    {
        match decode_object::<K>(input) {
            Ok(object) => {
                round_trip(&object, what);
                std::hint::black_box(touch(&object));
                ok(what)
            }
            Err(e) => err(what, &e),
        }
    }
    fn bare<K>(message: &[u8], what: &str) -> u64
    where
        K: Message + Serialize + PartialEq + std::fmt::Debug,
    {
        match K::decode_protobuf(message) {
            Ok(value) => {
                round_trip(&value, what);
                ok(what)
            }
            Err(e) => err(what, &e),
        }
    }
    let list = match decode_object::<ObjectList<Pod>>(input) {
        Ok(list) => {
            round_trip(&list, "PodList");
            let n: usize = list.items.iter().map(touch).sum();
            std::hint::black_box(n);
            ok("PodList")
        }
        Err(e) => err("PodList", &e),
    };
    let status = match decode_status(input) {
        Some(Ok(status)) => {
            std::hint::black_box(Error::from_status(status).to_string().len());
            ok("Status")
        }
        Some(Err(e)) => err("Status", &e),
        None => ok("not a Status"),
    };
    // The message inside the envelope, or the whole input when it has no envelope.
    let message = match Unknown::decode(input) {
        Ok(u) => u.raw,
        Err(_) => input.strip_prefix(&MAGIC).unwrap_or(input),
    };
    mix(&[
        enveloped::<Pod>(input, "Pod"),
        enveloped::<ConfigMap>(input, "ConfigMap"),
        enveloped::<Secret>(input, "Secret"),
        enveloped::<Deployment>(input, "Deployment"),
        enveloped::<PartialObjectMetadata>(input, "PartialObjectMetadata"),
        list,
        status,
        bare::<Pod>(message, "bare Pod"),
        bare::<Deployment>(message, "bare Deployment"),
        bare::<ObjectList<ConfigMap>>(message, "bare ConfigMapList"),
    ])
}

fn protobuf_watch(input: &[u8]) -> u64 {
    fn one<K>(frame: &[u8], what: &str) -> u64
    where
        K: Message + Serialize + PartialEq + std::fmt::Debug + Object,
    {
        match decode_watch_event::<K>(frame) {
            Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o)) => {
                round_trip(&o, what);
                std::hint::black_box(touch(&o));
                ok(what)
            }
            Ok(WatchEvent::Bookmark(b)) => {
                std::hint::black_box(b.is_initial_events_end());
                ok("BOOKMARK")
            }
            Ok(WatchEvent::Error(status)) => {
                std::hint::black_box(Error::from_status(*status).to_string().len());
                ok("ERROR")
            }
            Err(e) => err(what, &e),
        }
    }
    let mut rest = input;
    let mut sigs = Vec::new();
    while let Some((prefix, after)) = rest.split_first_chunk::<4>() {
        let len = u32::from_be_bytes(*prefix) as usize;
        let Some(frame) = after.get(..len) else {
            sigs.push(ok("cut short"));
            break;
        };
        rest = &after[len..];
        sigs.push(match split_watch_event(frame) {
            Ok((event_type, envelope)) => {
                std::hint::black_box((event_type.len(), envelope.kind.len()));
                ok("split")
            }
            Err(e) => err("split", &e),
        });
        sigs.push(one::<Pod>(frame, "WatchEvent<Pod>"));
        sigs.push(one::<ConfigMap>(frame, "WatchEvent<ConfigMap>"));
    }
    mix(&sigs)
}
