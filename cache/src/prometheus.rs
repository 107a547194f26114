//! [`PrometheusReflectorMetrics`] (feature `prometheus`): the reflector metrics in a
//! `prometheus-client` registry, under the names client-go's reflector metrics had when
//! Kubernetes components exported them (`reflector_*`, label `name`).

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::reflector_metrics::ReflectorMetricsProvider;

/// The label of every series: the reflector's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

/// The labels of the relist count: the reflector and why it relisted.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RelistLabels {
    name: String,
    reason: String,
}

type HistogramFamily = Family<NameLabels, Histogram, fn() -> Histogram>;

/// Durations: 5 ms to about 20 min, doubling.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 18))
}

/// Item and event counts: 1 to about 500,000, doubling.
fn count_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 20))
}

/// A [`ReflectorMetricsProvider`] that registers the reflector metrics in a
/// `prometheus-client` [`Registry`], one series per reflector name (label `name`):
///
/// | metric | what |
/// | --- | --- |
/// | `reflector_lists_total` | completed lists (a watch-list's initial state counts) |
/// | `reflector_list_duration_seconds` (histogram) | how long each list took |
/// | `reflector_items_per_list` (histogram) | objects in each list |
/// | `reflector_watches_total` | watches opened |
/// | `reflector_short_watches_total` | watches that ended very short and empty |
/// | `reflector_watch_duration_seconds` (histogram) | how long each watch lasted |
/// | `reflector_items_per_watch` (histogram) | events each watch brought |
/// | `reflector_watch_events_total` | events received on watches |
/// | `reflector_relists_total` (label `reason`: `expired` after a 410, `error`) | relists |
/// | `reflector_last_resource_version` (gauge) | the last synced resource version, as a number |
///
/// ```
/// use std::sync::Arc;
/// use kclient_cache::{PrometheusReflectorMetrics, set_reflector_metrics_provider};
/// use prometheus_client::registry::Registry;
///
/// let mut registry = Registry::default();
/// set_reflector_metrics_provider(Arc::new(PrometheusReflectorMetrics::new(&mut registry)));
/// ```
#[derive(Clone)]
pub struct PrometheusReflectorMetrics {
    lists: Family<NameLabels, Counter>,
    list_duration: HistogramFamily,
    items_per_list: HistogramFamily,
    watches: Family<NameLabels, Counter>,
    short_watches: Family<NameLabels, Counter>,
    watch_duration: HistogramFamily,
    items_per_watch: HistogramFamily,
    watch_events: Family<NameLabels, Counter>,
    relists: Family<RelistLabels, Counter>,
    last_resource_version: Family<NameLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
}

impl std::fmt::Debug for PrometheusReflectorMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusReflectorMetrics")
            .finish_non_exhaustive()
    }
}

impl PrometheusReflectorMetrics {
    /// Registers the ten metric families in `registry` (use
    /// `Registry::sub_registry_with_prefix` for a prefix).
    pub fn new(registry: &mut Registry) -> Self {
        let m = PrometheusReflectorMetrics {
            lists: Family::default(),
            list_duration: Family::new_with_constructor(duration_histogram),
            items_per_list: Family::new_with_constructor(count_histogram),
            watches: Family::default(),
            short_watches: Family::default(),
            watch_duration: Family::new_with_constructor(duration_histogram),
            items_per_watch: Family::new_with_constructor(count_histogram),
            watch_events: Family::default(),
            relists: Family::default(),
            last_resource_version: Family::default(),
        };
        // prometheus-client appends `_total` to counters.
        registry.register(
            "reflector_lists",
            "Total number of API lists done by the reflectors",
            m.lists.clone(),
        );
        registry.register(
            "reflector_list_duration_seconds",
            "How long an API list takes to return and decode for the reflectors",
            m.list_duration.clone(),
        );
        registry.register(
            "reflector_items_per_list",
            "How many items an API list returns to the reflectors",
            m.items_per_list.clone(),
        );
        registry.register(
            "reflector_watches",
            "Total number of API watches done by the reflectors",
            m.watches.clone(),
        );
        registry.register(
            "reflector_short_watches",
            "Total number of short API watches done by the reflectors",
            m.short_watches.clone(),
        );
        registry.register(
            "reflector_watch_duration_seconds",
            "How long an API watch takes to return and decode for the reflectors",
            m.watch_duration.clone(),
        );
        registry.register(
            "reflector_items_per_watch",
            "How many items an API watch returns to the reflectors",
            m.items_per_watch.clone(),
        );
        registry.register(
            "reflector_watch_events",
            "Total number of watch events received by the reflectors",
            m.watch_events.clone(),
        );
        registry.register("reflector_relists", "Total number of relists by the reflectors, by reason (expired: the server answered 410 Gone)", m.relists.clone());
        registry.register(
            "reflector_last_resource_version",
            "Last resource version seen for the reflectors",
            m.last_resource_version.clone(),
        );
        m
    }
}

fn name(name: &str) -> NameLabels {
    NameLabels {
        name: name.to_owned(),
    }
}

impl ReflectorMetricsProvider for PrometheusReflectorMetrics {
    fn list(&self, reflector: &str, duration: Duration, items: usize) {
        let labels = name(reflector);
        self.lists.get_or_create(&labels).inc();
        self.list_duration
            .get_or_create(&labels)
            .observe(duration.as_secs_f64());
        self.items_per_list
            .get_or_create(&labels)
            .observe(items as f64);
    }

    fn watch_started(&self, reflector: &str) {
        self.watches.get_or_create(&name(reflector)).inc();
    }

    fn watch_ended(&self, reflector: &str, lasted: Duration, events: usize, short: bool) {
        let labels = name(reflector);
        if short {
            self.short_watches.get_or_create(&labels).inc();
        }
        self.watch_duration
            .get_or_create(&labels)
            .observe(lasted.as_secs_f64());
        self.items_per_watch
            .get_or_create(&labels)
            .observe(events as f64);
    }

    fn watch_event(&self, reflector: &str) {
        self.watch_events.get_or_create(&name(reflector)).inc();
    }

    fn relist(&self, reflector: &str, reason: &str) {
        self.relists
            .get_or_create(&RelistLabels {
                name: reflector.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    fn last_resource_version(&self, reflector: &str, resource_version: &str) {
        // Resource versions are opaque; etcd's are integers, which is what this gauge shows.
        if let Ok(value) = resource_version.parse::<f64>() {
            self.last_resource_version
                .get_or_create(&name(reflector))
                .set(value);
        }
    }
}
