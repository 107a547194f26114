//! Reflector metrics: the [`ReflectorMetricsProvider`] trait (client-go's reflector
//! `MetricsProvider`) and the process-wide provider.
//!
//! Every measurement carries the reflector's name ([`ReflectorOptions::name`](crate::ReflectorOptions)):
//!
//! | hook | when |
//! | --- | --- |
//! | [`list`](ReflectorMetricsProvider::list) | a LIST (all its pages) or the initial events of a watch-list completed: its duration and item count |
//! | [`watch_started`](ReflectorMetricsProvider::watch_started) | a watch opened (a watch-list counts once it has delivered its initial state) |
//! | [`watch_ended`](ReflectorMetricsProvider::watch_ended) | a watch ended: how long it lasted, how many events it brought, and whether it was a very short, empty one |
//! | [`watch_event`](ReflectorMetricsProvider::watch_event) | an event arrived on a watch (bookmarks and a watch-list's initial events included) |
//! | [`relist`](ReflectorMetricsProvider::relist) | the reflector decided to list again: `expired` after a 410 Gone (or a version the server no longer has), `error` after any other failure that calls for a relist |
//! | [`last_resource_version`](ReflectorMetricsProvider::last_resource_version) | the last synced resource version changed |
//!
//! Nothing is measured until [`set_reflector_metrics_provider`] is called (client-go's
//! `SetReflectorMetricsProvider`). With the `prometheus` feature, `PrometheusReflectorMetrics`
//! registers them in a `prometheus-client` registry.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The `relist` reason after a 410 Gone or a resource version too old for the server.
pub const RELIST_EXPIRED: &str = "expired";
/// The `relist` reason after any other failure that calls for a relist.
pub const RELIST_ERROR: &str = "error";

/// Receives a reflector's measurements. Every method has an empty default; methods are called
/// on the reflector's task and must not block.
pub trait ReflectorMetricsProvider: Send + Sync {
    /// A completed list of `items` objects that took `duration`.
    fn list(&self, name: &str, duration: Duration, items: usize) {
        let _ = (name, duration, items);
    }
    /// A watch opened.
    fn watch_started(&self, name: &str) {
        let _ = name;
    }
    /// A watch ended after `lasted`, having received `events`; `short` if it was very short
    /// and empty (client-go's short watches).
    fn watch_ended(&self, name: &str, lasted: Duration, events: usize, short: bool) {
        let _ = (name, lasted, events, short);
    }
    /// One event received on a watch.
    fn watch_event(&self, name: &str) {
        let _ = name;
    }
    /// The reflector will list again, for `reason` ([`RELIST_EXPIRED`] or [`RELIST_ERROR`]).
    fn relist(&self, name: &str, reason: &str) {
        let _ = (name, reason);
    }
    /// The last synced resource version is now `resource_version`.
    fn last_resource_version(&self, name: &str, resource_version: &str) {
        let _ = (name, resource_version);
    }
}

static PROVIDER: OnceLock<Arc<dyn ReflectorMetricsProvider>> = OnceLock::new();

/// Sets the process-wide reflector metrics provider (client-go's
/// `SetReflectorMetricsProvider`); only the first call takes effect, and it returns whether
/// this one did.
pub fn set_reflector_metrics_provider(provider: Arc<dyn ReflectorMetricsProvider>) -> bool {
    PROVIDER.set(provider).is_ok()
}

/// The provider set with [`set_reflector_metrics_provider`], if any.
pub(crate) fn provider() -> Option<&'static dyn ReflectorMetricsProvider> {
    PROVIDER.get().map(|p| p.as_ref())
}
