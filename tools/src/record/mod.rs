//! Event recording, client-go's `tools/record`: core/v1 Events about objects, correlated and
//! written to the API server in the background.
//!
//! [`EventRecorder`] builds events and hands them to an [`EventBroadcaster`], which fans them
//! out to watchers; [`EventBroadcaster::start_recording_to_sink`] writes them to an
//! [`EventSink`] (normally [`ClientEventSink`]) through an [`EventCorrelator`] that drops
//! spam, aggregates similar events and turns repeats into count increments.
//!
//! This is the `core/v1` recorder: the correlator's semantics (`count`,
//! `firstTimestamp`/`lastTimestamp`, aggregation into one object) are those of core/v1 Events,
//! which `kubectl describe` shows and most tools read. The `events.k8s.io/v1` recorder, where
//! repeats become a series instead, is [`EventsV1Broadcaster`](crate::EventsV1Broadcaster).

mod aggregator;
mod broadcaster;
mod correlator;
mod event_keys;
mod event_logger;
mod lru;
mod recorder;
mod reference;
mod sink;
mod spam_filter;

pub use broadcaster::{BroadcasterOptions, EventBroadcaster, EventWatcher};
pub use correlator::{Clock, Correlation, CorrelatorOptions, EventCorrelator};
pub use recorder::EventRecorder;
pub use reference::{EventType, IntoObjectReference, object_reference};
pub use sink::{ClientEventSink, EventSink, SinkFuture};
