//! Event recording with the `events.k8s.io/v1` API, client-go's `tools/events`: the newer
//! recorder, where repeats of an event become a *series* on one Event object instead of a
//! `count`.
//!
//! Two events are *isomorphic* when they agree on type, action, reason, reporting
//! controller and instance, regarding and related objects (the note may differ). The first
//! is created; the second turns the cached first into a series (count 2) and patches it;
//! later ones only count up in memory. Every 30 minutes ([`EventsV1Options::refresh_period`])
//! open series are patched with their current count, and a series quiet for 6 minutes
//! ([`EventsV1Options::finish_time`]) gets its final count written and is forgotten (as is a
//! single event older than that).
//!
//! Unlike [`EventRecorder`](crate::EventRecorder) there is no spam filter and no aggregation
//! by message: that is client-go's design for this API.

mod broadcaster;
mod recorder;
mod sink;

pub use broadcaster::{EventsV1Broadcaster, EventsV1Options};
pub use recorder::EventsV1Recorder;
pub use sink::{ClientEventsV1Sink, EventsV1Sink};
