//! Watch events as the API server streams them: one JSON object per line,
//! `{"type":"ADDED","object":{...}}` (client-go's `watch.Event` and `metav1.WatchEvent`).
//!
//! [`WatchEvent<T>`] decodes a line in one pass: the `type` field (which the server writes
//! first) picks how `object` is decoded, as `T` for `ADDED`/`MODIFIED`/`DELETED`, as a
//! [`Status`] for `ERROR`, and as a light [`Bookmark`] for `BOOKMARK`: a bookmark carries only
//! `metadata.resourceVersion` and annotations, so decoding it as a typed object with required
//! fields would fail. If `object` comes before `type`, its text is kept and decoded after.
//!
//! [`RawWatchEvent`] keeps the object undecoded, for callers that decide per event.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::de::null_as_default;
use crate::json_decode::{JsonError, decode_json};
use crate::status::Status;

/// The annotation the API server puts on the bookmark that ends the initial events of a
/// watch opened with `sendInitialEvents=true` (client-go's `metav1.InitialEventsAnnotationKey`).
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// One event of a watch stream.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<T> {
    /// An object was created (or, in the initial events of a watch, listed).
    Added(T),
    /// An object was changed.
    Modified(T),
    /// An object was deleted; this is its last state.
    Deleted(T),
    /// No object changed, but the stream reached this resource version.
    Bookmark(Bookmark),
    /// The watch failed, for example with `410 Expired`; the stream ends after it. Boxed:
    /// errors are rare and a `Status` is much larger than most objects.
    Error(Box<Status>),
}

/// The type of a [`WatchEvent`], as written in the `type` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum WatchEventType {
    /// `ADDED`.
    Added,
    /// `MODIFIED`.
    Modified,
    /// `DELETED`.
    Deleted,
    /// `BOOKMARK`.
    Bookmark,
    /// `ERROR`.
    Error,
}

impl WatchEventType {
    /// The wire form, such as `ADDED`.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
            WatchEventType::Bookmark => "BOOKMARK",
            WatchEventType::Error => "ERROR",
        }
    }
}

impl fmt::Display for WatchEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The object of a `BOOKMARK` event: only the resource version and annotations matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// `metadata.resourceVersion`: the stream has delivered every change up to here.
    pub resource_version: String,
    /// `metadata.annotations`, such as [`INITIAL_EVENTS_END_ANNOTATION`].
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// Whether this bookmark ends the initial events of a watch opened with
    /// `sendInitialEvents=true` (annotation `k8s.io/initial-events-end: "true"`).
    pub fn is_initial_events_end(&self) -> bool {
        self.annotations
            .get(INITIAL_EVENTS_END_ANNOTATION)
            .is_some_and(|v| v == "true")
    }
}

#[derive(Deserialize)]
struct BookmarkWire {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: BookmarkMetaWire,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BookmarkMetaWire {
    #[serde(default, deserialize_with = "null_as_default")]
    resource_version: String,
    #[serde(default, deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
}

impl<'de> Deserialize<'de> for Bookmark {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = BookmarkWire::deserialize(deserializer)?;
        Ok(Bookmark {
            resource_version: wire.metadata.resource_version,
            annotations: wire.metadata.annotations,
        })
    }
}

impl Serialize for Bookmark {
    /// Writes `{"metadata":{"resourceVersion":...,"annotations":{...}}}`; the watch source
    /// adds `kind` and `apiVersion`, which no reader needs.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Meta<'a> {
            resource_version: &'a str,
            #[serde(skip_serializing_if = "BTreeMap::is_empty")]
            annotations: &'a BTreeMap<String, String>,
        }
        #[derive(Serialize)]
        struct Wire<'a> {
            metadata: Meta<'a>,
        }
        Wire {
            metadata: Meta {
                resource_version: &self.resource_version,
                annotations: &self.annotations,
            },
        }
        .serialize(serializer)
    }
}

impl<T> WatchEvent<T> {
    /// The event's type.
    pub fn event_type(&self) -> WatchEventType {
        match self {
            WatchEvent::Added(_) => WatchEventType::Added,
            WatchEvent::Modified(_) => WatchEventType::Modified,
            WatchEvent::Deleted(_) => WatchEventType::Deleted,
            WatchEvent::Bookmark(_) => WatchEventType::Bookmark,
            WatchEvent::Error(_) => WatchEventType::Error,
        }
    }

    /// The object of an `ADDED`, `MODIFIED` or `DELETED` event.
    pub fn object(&self) -> Option<&T> {
        match self {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => Some(o),
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => None,
        }
    }

    /// The event with its object transformed (for example wrapped in an `Arc`).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> WatchEvent<U> {
        match self {
            WatchEvent::Added(o) => WatchEvent::Added(f(o)),
            WatchEvent::Modified(o) => WatchEvent::Modified(f(o)),
            WatchEvent::Deleted(o) => WatchEvent::Deleted(f(o)),
            WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
            WatchEvent::Error(s) => WatchEvent::Error(s),
        }
    }
}

impl<T: Serialize> Serialize for WatchEvent<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<O> {
            #[serde(rename = "type")]
            event_type: WatchEventType,
            object: O,
        }
        let event_type = self.event_type();
        match self {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => Wire {
                event_type,
                object: o,
            }
            .serialize(serializer),
            WatchEvent::Bookmark(b) => Wire {
                event_type,
                object: b,
            }
            .serialize(serializer),
            WatchEvent::Error(s) => Wire {
                event_type,
                object: s,
            }
            .serialize(serializer),
        }
    }
}

/// Decodes `object` according to `event_type`.
fn decode_object<'de, T, D>(
    event_type: WatchEventType,
    object: D,
) -> Result<WatchEvent<T>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Ok(match event_type {
        WatchEventType::Added => WatchEvent::Added(T::deserialize(object)?),
        WatchEventType::Modified => WatchEvent::Modified(T::deserialize(object)?),
        WatchEventType::Deleted => WatchEvent::Deleted(T::deserialize(object)?),
        WatchEventType::Bookmark => WatchEvent::Bookmark(Bookmark::deserialize(object)?),
        WatchEventType::Error => WatchEvent::Error(Box::new(Status::deserialize(object)?)),
    })
}

/// Deserializes the `object` value with the type already known.
struct ObjectSeed<T> {
    event_type: WatchEventType,
    marker: PhantomData<fn() -> T>,
}

impl<'de, T: Deserialize<'de>> de::DeserializeSeed<'de> for ObjectSeed<T> {
    type Value = WatchEvent<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        decode_object(self.event_type, deserializer)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WatchEvent<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventVisitor<T>(PhantomData<fn() -> T>);

        impl<'de, T: DeserializeOwned> Visitor<'de> for EventVisitor<T> {
            type Value = WatchEvent<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event {\"type\": ..., \"object\": ...}")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut event_type: Option<WatchEventType> = None;
                let mut event: Option<WatchEvent<T>> = None;
                // `object` seen before `type`: kept as its text until the type is known, then
                // decoded as a raw event's object is, at any depth the decoder takes.
                let mut buffered: Option<crate::meta::RawJson> = None;
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Type => {
                            if event_type.is_some() {
                                return Err(de::Error::duplicate_field("type"));
                            }
                            event_type = Some(map.next_value()?);
                        }
                        Field::Object => {
                            if event.is_some() || buffered.is_some() {
                                return Err(de::Error::duplicate_field("object"));
                            }
                            match event_type {
                                Some(t) => {
                                    event = Some(map.next_value_seed(ObjectSeed {
                                        event_type: t,
                                        marker: PhantomData,
                                    })?);
                                }
                                None => buffered = Some(map.next_value()?),
                            }
                        }
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let event_type = event_type.ok_or_else(|| de::Error::missing_field("type"))?;
                match (event, buffered) {
                    (Some(event), _) => Ok(event),
                    (None, Some(object)) => RawWatchEvent { event_type, object }
                        .decode()
                        .map_err(de::Error::custom),
                    (None, None) => Err(de::Error::missing_field("object")),
                }
            }
        }

        deserializer.deserialize_map(EventVisitor(PhantomData))
    }
}

/// The keys of a watch event.
enum Field {
    Type,
    Object,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "type" => Field::Type,
                    "object" => Field::Object,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// A watch event with its object left as raw JSON, decoded by the caller once it knows what
/// it wants (for example a dynamic client that peeks at `kind`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawWatchEvent {
    /// The event's type.
    #[serde(rename = "type")]
    pub event_type: WatchEventType,
    /// The object, undecoded.
    pub object: crate::meta::RawJson,
}

impl RawWatchEvent {
    /// Decodes the object according to the event type, with
    /// [`decode_json`](crate::decode_json), as [`WatchEvent`] decodes it with the event.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<WatchEvent<T>, JsonError> {
        let object = self.object.get().as_bytes();
        Ok(match self.event_type {
            WatchEventType::Added => WatchEvent::Added(decode_json(object)?),
            WatchEventType::Modified => WatchEvent::Modified(decode_json(object)?),
            WatchEventType::Deleted => WatchEvent::Deleted(decode_json(object)?),
            WatchEventType::Bookmark => WatchEvent::Bookmark(decode_json(object)?),
            WatchEventType::Error => WatchEvent::Error(Box::new(decode_json(object)?)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
    struct Pod {
        metadata: Meta,
        spec: Spec,
    }
    #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
    struct Meta {
        name: String,
    }
    #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
    struct Spec {
        #[serde(rename = "nodeName")]
        node_name: String,
    }

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: Meta { name: name.into() },
            spec: Spec {
                node_name: "n1".into(),
            },
        }
    }

    const POD: &str =
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{"nodeName":"n1"}}"#;

    #[test]
    fn decodes_object_events() {
        for (wire, expected) in [
            ("ADDED", WatchEvent::Added(pod("p"))),
            ("MODIFIED", WatchEvent::Modified(pod("p"))),
            ("DELETED", WatchEvent::Deleted(pod("p"))),
        ] {
            let line = format!(r#"{{"type":"{wire}","object":{POD}}}"#);
            let event: WatchEvent<Pod> = serde_json::from_str(&line).unwrap();
            assert_eq!(event, expected);
            assert_eq!(event.event_type().as_str(), wire);
        }
    }

    #[test]
    fn decodes_object_before_type() {
        let line = format!(r#"{{"object":{POD},"extra":1,"type":"MODIFIED"}}"#);
        let event: WatchEvent<Pod> = serde_json::from_str(&line).unwrap();
        assert_eq!(event, WatchEvent::Modified(pod("p")));
    }

    /// A server that writes `object` before `type` (the apiserver writes `type` first) may
    /// still send an object as deep as the apiserver stores them (10,000 levels): it decodes
    /// on a 2 MiB stack, as it does with `type` first.
    #[test]
    fn decodes_a_deep_object_before_its_type() {
        crate::test_support::on_small_stack(|| {
            let object = crate::test_support::nested_objects(10_000);
            let line = format!(r#"{{"object":{object},"type":"MODIFIED"}}"#);
            let event: WatchEvent<crate::Unstructured> =
                crate::decode_json(line.as_bytes()).expect("a deep object before its type decodes");
            let WatchEvent::Modified(decoded) = event else {
                panic!("not a MODIFIED event");
            };
            assert!(decoded.as_map().contains_key("a"));
        });
    }

    #[test]
    fn decodes_a_bookmark_without_the_required_fields_of_t() {
        let line = r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12746","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}}"#;
        let event: WatchEvent<Pod> = serde_json::from_str(line).unwrap();
        let WatchEvent::Bookmark(bookmark) = event else {
            panic!("expected a bookmark, got {event:?}");
        };
        assert_eq!(bookmark.resource_version, "12746");
        assert!(bookmark.is_initial_events_end());

        let plain: WatchEvent<Pod> = serde_json::from_str(
            r#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}"#,
        )
        .unwrap();
        let WatchEvent::Bookmark(bookmark) = plain else {
            panic!("expected a bookmark");
        };
        assert_eq!(bookmark.resource_version, "7");
        assert!(!bookmark.is_initial_events_end());
    }

    #[test]
    fn decodes_an_error_event_carrying_a_status() {
        let line = r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (42)","reason":"Expired","code":410}}"#;
        let event: WatchEvent<Pod> = serde_json::from_str(line).unwrap();
        let WatchEvent::Error(status) = event else {
            panic!("expected an error event");
        };
        let err = crate::Error::from_status(*status);
        assert!(err.is_resource_expired());
        assert_eq!(err.code(), Some(410));
        assert_eq!(err.to_string(), "too old resource version: 1 (42)");
    }

    #[test]
    fn rejects_malformed_events() {
        for bad in [
            r#"{"object":{}}"#,
            r#"{"type":"ADDED"}"#,
            r#"{"type":"UPSERTED","object":{}}"#,
            r#"{"type":"ADDED","object":{"metadata":{}}}"#,
            r#"{"type":"ADDED","type":"ADDED","object":{}}"#,
            r#"["ADDED"]"#,
        ] {
            assert!(
                serde_json::from_str::<WatchEvent<Pod>>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn raw_events_decode_later() {
        let line = format!(r#"{{"type":"DELETED","object":{POD}}}"#);
        let raw: RawWatchEvent = serde_json::from_str(&line).unwrap();
        assert_eq!(raw.event_type, WatchEventType::Deleted);
        assert_eq!(raw.object.get(), POD);
        assert_eq!(raw.decode::<Pod>().unwrap(), WatchEvent::Deleted(pod("p")));
    }

    /// A raw event's object decodes later as deep as the apiserver stores objects (10,000
    /// levels), as it would have when decoded with the event, on a 2 MiB stack.
    #[test]
    fn raw_events_of_objects_as_deep_as_the_apiserver_stores_decode_later() {
        crate::test_support::on_small_stack(|| {
            let object = crate::test_support::nested_objects(10_000);
            let line = format!(r#"{{"type":"MODIFIED","object":{object}}}"#);
            let raw: RawWatchEvent = crate::decode_json(line.as_bytes()).unwrap();
            let WatchEvent::Modified(decoded) = raw.decode::<crate::Unstructured>().unwrap() else {
                panic!("not a MODIFIED event");
            };
            assert!(decoded.as_map().contains_key("a"));
        });
    }

    #[test]
    fn round_trips_through_serialize() {
        let events = vec![
            WatchEvent::Added(pod("a")),
            WatchEvent::Bookmark(Bookmark {
                resource_version: "9".into(),
                annotations: [(INITIAL_EVENTS_END_ANNOTATION.to_owned(), "true".to_owned())].into(),
            }),
            WatchEvent::Error(Box::new(Status::failure(
                410,
                crate::StatusReason::Expired,
                "gone",
            ))),
        ];
        for event in events {
            let json = serde_json::to_string(&event).unwrap();
            let back: WatchEvent<Pod> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, event);
        }
        let mapped = WatchEvent::Added(pod("a")).map(std::sync::Arc::new);
        assert_eq!(mapped.object().unwrap().metadata.name, "a");
    }
}
