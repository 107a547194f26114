//! [`EventAggregator`], client-go's `EventAggregator`: once 10 events that differ only in
//! their message arrive within 600 s of each other, further ones are replaced by one
//! aggregate event, `"(combined from similar events): <message>"`, counted like any repeat.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kclient_api::core::v1::Event;
use kclient_apimachinery::meta::Time;
use kclient_apimachinery::meta::v1::ObjectMeta;

use super::event_keys::{aggregate_keys, event_key};
use super::lru::LruCache;

/// The prefix of an aggregate event's message.
pub(crate) const AGGREGATE_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// What one aggregate group has seen.
#[derive(Debug, Clone)]
struct AggregateRecord {
    /// The distinct messages seen in the group.
    local_keys: HashSet<String>,
    /// When the group last saw an event.
    last_timestamp: SystemTime,
}

/// Groups similar events and replaces them by an aggregate once there are too many.
#[derive(Debug)]
pub(crate) struct EventAggregator {
    cache: LruCache<AggregateRecord>,
    max_events: usize,
    max_interval: Duration,
}

impl EventAggregator {
    pub(crate) fn new(cache_size: usize, max_events: usize, max_interval: Duration) -> Self {
        EventAggregator {
            cache: LruCache::new(cache_size),
            max_events,
            max_interval,
        }
    }

    /// The event to record and its correlation key: `event` itself and its full key while the
    /// group is small, else a fresh aggregate event and the group's key (client-go's
    /// `EventAggregate`).
    pub(crate) fn aggregate(&mut self, event: &Event, now: SystemTime) -> (Event, String) {
        let (aggregate_key, local_key) = aggregate_keys(event);
        let mut record = self
            .cache
            .get_mut(&aggregate_key)
            .cloned()
            .filter(|r| {
                now.duration_since(r.last_timestamp).unwrap_or_default() <= self.max_interval
            })
            .unwrap_or_else(|| AggregateRecord {
                local_keys: HashSet::new(),
                last_timestamp: now,
            });
        record.local_keys.insert(local_key);
        record.last_timestamp = now;
        let distinct = record.local_keys.len();
        if distinct >= self.max_events {
            // Keep the set from growing past the limit (client-go's PopAny).
            if let Some(any) = record.local_keys.iter().next().cloned() {
                record.local_keys.remove(&any);
            }
        }
        self.cache.put(&aggregate_key, record);
        if distinct < self.max_events {
            return (event.clone(), event_key(event));
        }

        let nanos = now
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let seconds = Time::from_unix_seconds(
            i64::try_from(now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs())
                .unwrap_or(i64::MAX),
        );
        let name = event.involved_object.name.as_deref().unwrap_or("");
        let message = event.message.as_deref().unwrap_or("");
        let aggregate = Event {
            metadata: ObjectMeta {
                name: Some(format!("{name}.{nanos:x}").into()),
                namespace: event.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            count: Some(1),
            first_timestamp: Some(seconds),
            last_timestamp: Some(seconds),
            involved_object: event.involved_object.clone(),
            message: Some(format!("{AGGREGATE_MESSAGE_PREFIX}{message}").into()),
            type_: event.type_.clone(),
            reason: event.reason.clone(),
            source: event.source.clone(),
            ..Event::default()
        };
        (aggregate, aggregate_key)
    }
}
