//! [`EventRecorder`], client-go's `record.EventRecorder`: builds a core/v1 Event about an
//! object and hands it to its [`EventBroadcaster`](crate::EventBroadcaster) without waiting.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kclient_api::core::v1::{Event, EventSource, ObjectReference};
use kclient_apimachinery::meta::Time;
use kclient_apimachinery::meta::v1::ObjectMeta;

use super::broadcaster::Inner;
use super::reference::{EventType, IntoObjectReference};
use crate::event_name::event_name;

/// Records events on behalf of one source (component and host).
///
/// Recording never blocks and never fails: an event the broadcaster cannot queue is dropped
/// and logged. Cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kclient_api::core::v1::{ConfigMap, EventSource};
/// use kclient_apimachinery::Object;
/// use kclient_tools::{EventBroadcaster, EventType};
///
/// let broadcaster = EventBroadcaster::new();
/// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// broadcaster.start_event_watcher(move |e| { let _ = tx.send(e.clone()); });
/// let recorder = broadcaster.new_recorder(EventSource { component: Some("demo".into()), host: None });
///
/// let mut cm = ConfigMap::default();
/// cm.set_name("settings");
/// cm.set_namespace("apps");
/// recorder.event(&cm, EventType::Warning, "InvalidKey", "key x is not allowed");
///
/// let event = rx.recv().await.unwrap();
/// assert_eq!(event.namespace(), "apps");
/// assert_eq!(event.involved_object.kind.as_deref(), Some("ConfigMap"));
/// assert_eq!(event.reason.as_deref(), Some("InvalidKey"));
/// assert_eq!(event.count, Some(1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct EventRecorder {
    broadcaster: Arc<Inner>,
    source: EventSource,
}

impl EventRecorder {
    pub(crate) fn new(broadcaster: Arc<Inner>, source: EventSource) -> Self {
        EventRecorder {
            broadcaster,
            source,
        }
    }

    /// Records an event about `object` (client-go's `Event`).
    ///
    /// `reason` is short, UpperCamelCase and machine-readable (`FailedMount`); `message` is
    /// for humans. The Event is created in the object's namespace (`default` for
    /// cluster-scoped objects).
    pub fn event(
        &self,
        object: impl IntoObjectReference,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) {
        self.generate(
            object.into_object_reference(),
            None,
            event_type,
            reason,
            message,
        );
    }

    /// Like [`event`](EventRecorder::event), with annotations on the Event (client-go's
    /// `AnnotatedEventf`).
    pub fn annotated_event(
        &self,
        object: impl IntoObjectReference,
        annotations: BTreeMap<String, String>,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) {
        self.generate(
            object.into_object_reference(),
            Some(annotations),
            event_type,
            reason,
            message,
        );
    }

    fn generate(
        &self,
        reference: ObjectReference,
        annotations: Option<BTreeMap<String, String>>,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) {
        let event = make_event(
            reference,
            annotations,
            event_type,
            reason,
            message,
            &self.source,
        );
        self.broadcaster.action_or_drop(event);
    }
}

/// The Event for one occurrence (client-go's `makeEvent` plus the source fields).
pub(crate) fn make_event(
    reference: ObjectReference,
    annotations: Option<BTreeMap<String, String>>,
    event_type: EventType,
    reason: &str,
    message: &str,
    source: &EventSource,
) -> Event {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let now = Time::from_unix_seconds(i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX));
    let namespace = match reference.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => ns.to_string(),
        _ => "default".to_string(),
    };
    let name = event_name(
        reference.name.as_deref().unwrap_or(""),
        since_epoch.as_nanos(),
    );
    Event {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.as_str().into()),
            annotations: annotations.filter(|a| !a.is_empty()).map(|a| {
                a.iter()
                    .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                    .collect()
            }),
            ..ObjectMeta::default()
        },
        involved_object: reference,
        reason: Some(reason.into()),
        message: Some(message.into()),
        first_timestamp: Some(now),
        last_timestamp: Some(now),
        count: Some(1),
        type_: Some(event_type.as_str().into()),
        source: Some(Box::new(source.clone())),
        reporting_component: source.component.clone(),
        reporting_instance: source.host.clone(),
        ..Event::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_name::is_valid_event_name;

    fn reference(name: &str) -> ObjectReference {
        ObjectReference {
            kind: Some("ClusterRole".into()),
            api_version: Some("rbac.authorization.k8s.io/v1".into()),
            name: Some(name.into()),
            ..ObjectReference::default()
        }
    }

    #[test]
    fn the_event_name_is_valid_whatever_the_object_is_named() {
        let source = EventSource {
            component: Some("test".into()),
            host: None,
        };
        let long = "a".repeat(250);
        for object in ["system:controller:job-controller", long.as_str(), "web"] {
            let event = make_event(
                reference(object),
                None,
                EventType::Normal,
                "Synced",
                "synced",
                &source,
            );
            let name = event.metadata.name.as_deref().unwrap_or("");
            assert!(is_valid_event_name(name), "{object:?} -> {name:?}");
            assert_eq!(event.involved_object.name.as_deref(), Some(object));
        }
    }
}
