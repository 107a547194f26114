//! [`EventLogger`], client-go's `eventLogger`: remembers each event key's Event object (name,
//! count, first timestamp) so that a repeat becomes a `count + 1` patch of that object
//! instead of a new Event.

use kclient_api::core::v1::Event;
use kclient_apimachinery::meta::{PatchMeta, Time};
use kclient_apimachinery::{Object, create_two_way_merge_patch};
use serde_json::Value;

use super::event_keys::event_key;
use super::lru::LruCache;

/// What is known of the Event object recorded for one key.
#[derive(Debug, Clone, Default)]
struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: String,
    resource_version: String,
}

/// Counts occurrences of each event key.
#[derive(Debug)]
pub(crate) struct EventLogger {
    cache: LruCache<EventLog>,
}

impl EventLogger {
    pub(crate) fn new(cache_size: usize) -> Self {
        EventLogger {
            cache: LruCache::new(cache_size),
        }
    }

    /// Records an occurrence of `event` under `key`. A repeat takes the earlier object's name,
    /// resourceVersion and first timestamp, with `count + 1`, and comes with the strategic
    /// merge patch (count, lastTimestamp, message) to send (client-go's `eventObserve`).
    pub(crate) fn observe(&mut self, event: &Event, key: &str) -> (Event, Option<Value>) {
        let mut event = event.clone();
        let mut patch = None;
        if let Some(last) = self.cache.get_mut(key).cloned().filter(|l| l.count > 0) {
            event.set_name(&last.name);
            event.set_resource_version(&last.resource_version);
            event.first_timestamp = last.first_timestamp;
            event.count = Some(last.count.saturating_add(1));

            let mut base = event.clone();
            base.count = None;
            base.last_timestamp = Some(Time::from_unix_seconds(0));
            base.message = None;
            patch = match (serde_json::to_value(&base), serde_json::to_value(&event)) {
                (Ok(old), Ok(new)) => {
                    match create_two_way_merge_patch(&old, &new, Event::patch_fields()) {
                        Ok(p) => Some(p),
                        Err(e) => {
                            tracing::error!(error = %e, "cannot build the event patch");
                            None
                        }
                    }
                }
                _ => None,
            };
        }
        self.cache.put(
            key,
            EventLog {
                count: event.count.unwrap_or(0),
                first_timestamp: event.first_timestamp,
                name: event.name().to_string(),
                resource_version: event.resource_version().to_string(),
            },
        );
        (event, patch)
    }

    /// Records the server's copy of an event (client-go's `updateState`).
    pub(crate) fn update_state(&mut self, event: &Event) {
        self.cache.put(
            &event_key(event),
            EventLog {
                count: event.count.unwrap_or(0),
                first_timestamp: event.first_timestamp,
                name: event.name().to_string(),
                resource_version: event.resource_version().to_string(),
            },
        );
    }
}
