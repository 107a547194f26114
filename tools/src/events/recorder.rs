//! [`EventsV1Recorder`], client-go's `events.EventRecorder`: builds an `events.k8s.io/v1`
//! Event and queues it on its broadcaster without waiting.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kclient_api::core::v1::ObjectReference;
use kclient_api::events::v1::Event;
use kclient_apimachinery::meta::MicroTime;
use kclient_apimachinery::meta::v1::ObjectMeta;

use super::broadcaster::Inner;
use crate::event_name::event_name;
use crate::record::{EventType, IntoObjectReference};

/// Records `events.k8s.io/v1` events for one reporting controller and instance. Cheap to
/// clone; recording never blocks and never fails (a full queue drops the event).
#[derive(Debug, Clone)]
pub struct EventsV1Recorder {
    inner: Arc<Inner>,
    reporting_controller: String,
    reporting_instance: String,
}

impl EventsV1Recorder {
    pub(crate) fn new(
        inner: Arc<Inner>,
        reporting_controller: &str,
        reporting_instance: &str,
    ) -> Self {
        EventsV1Recorder {
            inner,
            reporting_controller: reporting_controller.to_string(),
            reporting_instance: reporting_instance.to_string(),
        }
    }

    /// Records that the reporting controller took `action` on `regarding` (and optionally
    /// `related`) for `reason` (client-go's `Eventf`). `reason` and `action` are short
    /// UpperCamelCase words; `note` is for humans (the API server accepts up to 1 kB).
    pub fn event(
        &self,
        regarding: impl IntoObjectReference,
        related: Option<ObjectReference>,
        event_type: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        let regarding = regarding.into_object_reference();
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let namespace = match regarding.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => ns.to_string(),
            _ => "default".to_string(),
        };
        let name = event_name(
            regarding.name.as_deref().unwrap_or(""),
            since_epoch.as_nanos(),
        );
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.as_str().into()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime::now()),
            series: None,
            reporting_controller: Some(self.reporting_controller.as_str().into()),
            reporting_instance: Some(self.reporting_instance.as_str().into()),
            action: Some(action.into()),
            reason: Some(reason.into()),
            regarding: Some(Box::new(regarding)),
            related: related.map(Box::new),
            note: Some(note.into()),
            type_: Some(event_type.as_str().into()),
            ..Event::default()
        };
        self.inner.action_or_drop(event);
    }
}
