//! [`EventCorrelator`], client-go's `EventCorrelator`: what happens to each event before it is
//! sent. In order:
//!
//! 1. **Aggregation**: once [`CorrelatorOptions::max_events`] (10) events that differ only
//!    in their message arrive within [`CorrelatorOptions::max_interval`] (600 s) of each
//!    other, each further one becomes an aggregate event
//!    `"(combined from similar events): <message>"`.
//! 2. **Counting**: an event seen before (same key) takes the earlier Event object's name and
//!    `count + 1`, and is sent as a strategic merge patch of `count`, `lastTimestamp` and
//!    `message` instead of a new object.
//! 3. **Spam filtering**: a token bucket per source, involved object and event type, starting
//!    with [`CorrelatorOptions::burst`] (25) tokens and refilled at [`CorrelatorOptions::qps`]
//!    (one per 300 s); an event finding it empty is dropped.
//!
//! All three remember at most [`CorrelatorOptions::lru_cache_size`] (4096) keys each.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kclient_api::core::v1::Event;
use serde_json::Value;

use super::aggregator::EventAggregator;
use super::event_logger::EventLogger;
use super::spam_filter::SpamFilter;

/// A source of wall-clock time, settable so tests can move time forward.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Settings of an [`EventCorrelator`] (client-go's `CorrelatorOptions`); the defaults are
/// client-go's.
#[derive(Clone)]
#[non_exhaustive]
pub struct CorrelatorOptions {
    /// How many keys each of the spam filter, aggregator and counter remembers: 4096.
    pub lru_cache_size: usize,
    /// How many events a source may send about one object at once: 25.
    pub burst: u32,
    /// How fast that allowance refills, in events per second: 1/300.
    pub qps: f64,
    /// How many distinct messages of otherwise equal events trigger aggregation: 10.
    pub max_events: usize,
    /// How long since the last similar event before a group starts afresh: 600 s.
    pub max_interval: Duration,
    /// The clock: `SystemTime::now` unless set.
    pub clock: Option<Clock>,
}

impl CorrelatorOptions {
    /// How many keys each of the spam filter, aggregator and counter remembers: 4096.
    pub fn lru_cache_size(mut self, lru_cache_size: usize) -> Self {
        self.lru_cache_size = lru_cache_size;
        self
    }

    /// How many events a source may send about one object at once: 25.
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = burst;
        self
    }

    /// How fast that allowance refills, in events per second: 1/300.
    pub fn qps(mut self, qps: f64) -> Self {
        self.qps = qps;
        self
    }

    /// How many distinct messages of otherwise equal events trigger aggregation: 10.
    pub fn max_events(mut self, max_events: usize) -> Self {
        self.max_events = max_events;
        self
    }

    /// How long since the last similar event before a group starts afresh: 600 s.
    pub fn max_interval(mut self, max_interval: Duration) -> Self {
        self.max_interval = max_interval;
        self
    }

    /// The clock: `SystemTime::now` unless set.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        CorrelatorOptions {
            lru_cache_size: 4096,
            burst: 25,
            qps: 1.0 / 300.0,
            max_events: 10,
            max_interval: Duration::from_secs(600),
            clock: None,
        }
    }
}

impl fmt::Debug for CorrelatorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CorrelatorOptions")
            .field("lru_cache_size", &self.lru_cache_size)
            .field("burst", &self.burst)
            .field("qps", &self.qps)
            .field("max_events", &self.max_events)
            .field("max_interval", &self.max_interval)
            .field("clock", &self.clock.as_ref().map(|_| "custom"))
            .finish()
    }
}

/// What the correlator decided about one event (client-go's `EventCorrelateResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum Correlation {
    /// Send this event: create it, or, when `patch` is set (a repeat, `count > 1`), patch the
    /// existing Event object named in it with this strategic merge patch.
    Send {
        /// The event after aggregation and counting.
        event: Box<Event>,
        /// The patch for a repeat.
        patch: Option<Value>,
    },
    /// Drop the event: the spam filter is out of tokens for its source, object and type.
    Skip,
}

/// Filters, aggregates and counts events before they are sent; see the module documentation.
///
/// ```
/// use kclient_api::core::v1::{Event, ObjectReference};
/// use kclient_tools::{Correlation, CorrelatorOptions, EventCorrelator};
///
/// let mut correlator = EventCorrelator::new(CorrelatorOptions::default());
/// let event = Event {
///     involved_object: ObjectReference { kind: Some("Pod".into()), name: Some("web".into()), ..Default::default() },
///     reason: Some("Started".into()),
///     message: Some("started".into()),
///     count: Some(1),
///     ..Default::default()
/// };
/// assert!(matches!(correlator.correlate(&event), Correlation::Send { patch: None, .. }));
/// // The same event again: a patch of the first one, with count 2.
/// let Correlation::Send { event, patch } = correlator.correlate(&event) else { panic!() };
/// assert_eq!(event.count, Some(2));
/// assert_eq!(patch.unwrap()["count"], 2);
/// ```
pub struct EventCorrelator {
    spam_filter: SpamFilter,
    aggregator: EventAggregator,
    logger: EventLogger,
    clock: Clock,
}

impl fmt::Debug for EventCorrelator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventCorrelator").finish_non_exhaustive()
    }
}

impl EventCorrelator {
    /// A correlator with `options`.
    pub fn new(options: CorrelatorOptions) -> Self {
        let defaults = CorrelatorOptions::default();
        let size = if options.lru_cache_size == 0 {
            defaults.lru_cache_size
        } else {
            options.lru_cache_size
        };
        EventCorrelator {
            spam_filter: SpamFilter::new(
                size,
                if options.burst == 0 {
                    defaults.burst
                } else {
                    options.burst
                },
                if options.qps > 0.0 {
                    options.qps
                } else {
                    defaults.qps
                },
            ),
            aggregator: EventAggregator::new(
                size,
                if options.max_events == 0 {
                    defaults.max_events
                } else {
                    options.max_events
                },
                if options.max_interval.is_zero() {
                    defaults.max_interval
                } else {
                    options.max_interval
                },
            ),
            logger: EventLogger::new(size),
            clock: options.clock.unwrap_or_else(|| Arc::new(SystemTime::now)),
        }
    }

    /// Decides what to send for `event` (client-go's `EventCorrelate`).
    pub fn correlate(&mut self, event: &Event) -> Correlation {
        let now = (self.clock)();
        let (aggregated, key) = self.aggregator.aggregate(event, now);
        let (observed, patch) = self.logger.observe(&aggregated, &key);
        if self.spam_filter.filter(&observed, now) {
            return Correlation::Skip;
        }
        Correlation::Send {
            event: Box::new(observed),
            patch,
        }
    }

    /// Records the server's copy of a sent event, so a repeat patches that object (client-go's
    /// `UpdateState`).
    pub fn update_state(&mut self, event: &Event) {
        self.logger.update_state(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::aggregator::AGGREGATE_MESSAGE_PREFIX;
    use kclient_api::core::v1::{EventSource, ObjectReference};
    use kclient_apimachinery::Object;
    use kclient_apimachinery::meta::Time;
    use parking_lot::Mutex;

    fn fake_clock() -> (Clock, Arc<Mutex<SystemTime>>) {
        let now = Arc::new(Mutex::new(
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        ));
        let handle = now.clone();
        (Arc::new(move || *handle.lock()), now)
    }

    fn event(object: &str, reason: &str, message: &str) -> Event {
        let mut e = Event {
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                api_version: Some("v1".into()),
                name: Some(object.into()),
                namespace: Some("ns".into()),
                uid: Some(format!("uid-{object}").into()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some("Normal".into()),
            count: Some(1),
            first_timestamp: Some(Time::from_unix_seconds(1_700_000_000)),
            last_timestamp: Some(Time::from_unix_seconds(1_700_000_000)),
            source: Some(Box::new(EventSource {
                component: Some("test".into()),
                host: None,
            })),
            ..Default::default()
        };
        e.set_namespace("ns");
        e.set_name(&format!("{object}.{message}"));
        e
    }

    fn options(clock: Clock) -> CorrelatorOptions {
        CorrelatorOptions {
            clock: Some(clock),
            ..CorrelatorOptions::default()
        }
    }

    fn sent(c: Correlation) -> (Event, Option<Value>) {
        match c {
            Correlation::Send { event, patch } => (*event, patch),
            Correlation::Skip => panic!("event was skipped"),
        }
    }

    #[test]
    fn repeats_count_up_on_the_first_object_with_a_patch() {
        let (clock, now) = fake_clock();
        let mut c = EventCorrelator::new(options(clock));
        let first = event("web", "Started", "started container");
        let (out, patch) = sent(c.correlate(&first));
        assert_eq!(patch, None);
        assert_eq!(out.count, Some(1));
        // The server's copy names the object and its resourceVersion.
        let mut stored = out.clone();
        stored.set_resource_version("42");
        c.update_state(&stored);

        *now.lock() += Duration::from_secs(30);
        let mut again = event("web", "Started", "started container");
        again.set_name("web.other-name");
        again.last_timestamp = Some(Time::from_unix_seconds(1_700_000_030));
        let (out, patch) = sent(c.correlate(&again));
        assert_eq!(out.name(), first.name(), "patches the first object");
        assert_eq!(out.resource_version(), "42");
        assert_eq!(out.count, Some(2));
        assert_eq!(out.first_timestamp, first.first_timestamp);
        let patch = patch.expect("a patch");
        assert_eq!(patch["count"], 2);
        assert_eq!(patch["message"], "started container");
        assert_eq!(patch["lastTimestamp"], "2023-11-14T22:13:50Z");
        assert_eq!(patch.as_object().map(|m| m.len()), Some(3), "{patch}");

        let (out, _) = sent(c.correlate(&again));
        assert_eq!(out.count, Some(3));
    }

    #[test]
    fn the_spam_filter_allows_a_burst_then_one_per_refill() {
        let (clock, now) = fake_clock();
        let mut c = EventCorrelator::new(options(clock));
        // Same source and object, different reasons (no aggregation: it groups by reason).
        let mut sent_count = 0;
        for i in 0..30 {
            if matches!(
                c.correlate(&event("web", &format!("R{i}"), "m")),
                Correlation::Send { .. }
            ) {
                sent_count += 1;
            }
        }
        assert_eq!(sent_count, 25, "burst of 25");
        // Another object has its own bucket.
        assert!(matches!(
            c.correlate(&event("db", "R", "m")),
            Correlation::Send { .. }
        ));
        // 299 s later: still empty; at 300 s one token is back.
        *now.lock() += Duration::from_secs(299);
        assert_eq!(c.correlate(&event("web", "X1", "m")), Correlation::Skip);
        *now.lock() += Duration::from_secs(1);
        assert!(matches!(
            c.correlate(&event("web", "X2", "m")),
            Correlation::Send { .. }
        ));
        assert_eq!(c.correlate(&event("web", "X3", "m")), Correlation::Skip);
    }

    /// A wall clock stepped back an hour does not withhold tokens for that hour: the buckets'
    /// time stands still for the step and then goes on, as Go's buckets on the monotonic clock.
    #[test]
    fn a_wall_clock_stepped_back_costs_the_spam_filter_nothing() {
        let (clock, now) = fake_clock();
        let mut c = EventCorrelator::new(options(clock));
        for i in 0..25 {
            assert!(matches!(
                c.correlate(&event("web", &format!("R{i}"), "m")),
                Correlation::Send { .. }
            ));
        }
        assert_eq!(c.correlate(&event("web", "E", "m")), Correlation::Skip);
        *now.lock() += Duration::from_secs(200);
        assert_eq!(c.correlate(&event("web", "E1", "m")), Correlation::Skip);
        *now.lock() -= Duration::from_secs(3600);
        assert_eq!(c.correlate(&event("web", "E2", "m")), Correlation::Skip);
        // 100 s on from the stepped-back clock, 300 s have passed on the buckets' clock.
        *now.lock() += Duration::from_secs(100);
        assert!(matches!(
            c.correlate(&event("web", "E3", "m")),
            Correlation::Send { .. }
        ));
        assert_eq!(c.correlate(&event("web", "E4", "m")), Correlation::Skip);
    }

    #[test]
    fn ten_distinct_messages_aggregate() {
        let (clock, now) = fake_clock();
        let mut c = EventCorrelator::new(options(clock));
        for i in 0..9 {
            let (out, _) = sent(c.correlate(&event("web", "Failed", &format!("error {i}"))));
            assert_eq!(out.message.as_deref(), Some(format!("error {i}").as_str()));
        }
        let (aggregate, patch) = sent(c.correlate(&event("web", "Failed", "error 9")));
        assert_eq!(
            aggregate.message.as_deref(),
            Some(format!("{AGGREGATE_MESSAGE_PREFIX}error 9").as_str())
        );
        assert_eq!(patch, None, "the first aggregate is created");
        assert_eq!(aggregate.count, Some(1));
        assert_eq!(aggregate.reason.as_deref(), Some("Failed"));
        assert_eq!(aggregate.involved_object.name.as_deref(), Some("web"));
        assert!(aggregate.name().starts_with("web."));

        // The next new message patches the aggregate, counting up.
        *now.lock() += Duration::from_secs(5);
        let (next, patch) = sent(c.correlate(&event("web", "Failed", "error 10")));
        assert_eq!(next.name(), aggregate.name());
        assert_eq!(next.count, Some(2));
        let patch = patch.expect("a patch");
        assert_eq!(
            patch["message"],
            format!("{AGGREGATE_MESSAGE_PREFIX}error 10")
        );

        // After 600 s of quiet the group starts afresh.
        *now.lock() += Duration::from_secs(601);
        let (fresh, _) = sent(c.correlate(&event("web", "Failed", "error 11")));
        assert_eq!(fresh.message.as_deref(), Some("error 11"));
    }

    #[test]
    fn different_reasons_do_not_aggregate() {
        let (clock, _) = fake_clock();
        let mut c = EventCorrelator::new(options(clock));
        for i in 0..12 {
            let (out, _) = sent(c.correlate(&event("web", &format!("Reason{i}"), "same")));
            assert_eq!(out.message.as_deref(), Some("same"));
        }
    }
}
