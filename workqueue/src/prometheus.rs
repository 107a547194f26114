//! [`PrometheusMetricsProvider`] (feature `prometheus`): client-go's seven workqueue metrics under
//! the names Kubernetes components export, and kclient's dropped-delayed count, in a
//! `prometheus-client` registry.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric, MetricsProvider,
    SettableGaugeMetric,
};

/// The label every metric carries: the queue's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: String,
}

type HistogramFamily = Family<QueueLabels, Histogram, fn() -> Histogram>;

/// The labels of the depth: the queue's name, and for a priority queue the priority
/// (controller-runtime's `priority` label). The label is left out when `None`, so a plain
/// queue's series keep their one label.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct DepthLabels {
    name: String,
    priority: Option<String>,
}

/// The `priority` label alone, encoded after the name when there is one.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PriorityLabel {
    priority: String,
}

impl EncodeLabelSet for DepthLabels {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder<'_>,
    ) -> Result<(), fmt::Error> {
        labels(&self.name).encode(encoder)?;
        if let Some(priority) = &self.priority {
            PriorityLabel {
                priority: priority.clone(),
            }
            .encode(encoder)?;
        }
        Ok(())
    }
}

/// How many distinct priorities one queue's depth labels before it folds them all into
/// [`EXCEEDED_CARDINALITY`]: controller-runtime's `maxRecommendedUniquePriorities`, room for
/// the two priorities controllers use and a few more.
const MAX_PRIORITY_LABELS: usize = 25;

/// The priority label once a queue used more than [`MAX_PRIORITY_LABELS`] priorities
/// (controller-runtime's placeholder).
const EXCEEDED_CARDINALITY: &str = "exceeded_cardinality_limit";

/// The label of kclient-controller's per-controller metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

/// The labels of the reconcile count: the controller and how the reconcile ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: String,
}

/// Buckets of the reconcile time: controller-runtime's, 5 ms to 60 s.
fn reconcile_histogram() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
        15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
    ])
}

/// Buckets of the two duration histograms: 10 ns to 1000 s, ten times apart, twelve of them:
/// controller-runtime's `ExponentialBuckets(10e-9, 10, 12)` (its `pkg/internal/metrics`).
/// Kubernetes components (component-base) register ten, 10 ns to 10 s; every boundary of
/// theirs is one of these, so a query on their `le` values reads the same here. client-go
/// itself registers no buckets.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// A [`MetricsProvider`] that registers the workqueue metrics of Kubernetes components in a
/// `prometheus-client` [`Registry`], one series per queue name (label `name`, as client-go's
/// component-base labels them; controller-runtime's copies also carry `controller`, the same
/// name, and a plain queue's depth an empty `priority`, so a dashboard written for
/// controller-runtime selects on `name` to read these):
///
/// `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
/// `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`, `workqueue_retries_total` (the two duration
/// histograms with controller-runtime's buckets, 10 ns to 1000 s; component-base's stop at
/// 10 s); and kclient's own
/// `workqueue_dropped_delayed_items_total` (delayed items lost to a shutdown). A
/// [`PriorityQueue`](crate::PriorityQueue)'s depth carries controller-runtime's `priority` label
/// too (up to 25 distinct priorities per queue, then `exceeded_cardinality_limit`). For the
/// controllers of kclient-controller it also registers controller-runtime's
/// `controller_runtime_reconcile_total` (labels `controller`, `result`),
/// `controller_runtime_reconcile_errors_total`, `controller_runtime_reconcile_panics_total`,
/// `controller_runtime_reconcile_timeouts_total`,
/// `controller_runtime_terminal_reconcile_errors_total`, `controller_runtime_reconcile_time_seconds`, `controller_runtime_active_workers` and
/// `controller_runtime_max_concurrent_reconciles` (label `controller`).
///
/// ```
/// use kclient_workqueue::{PrometheusMetricsProvider, Queue, QueueConfig};
/// use prometheus_client::registry::Registry;
/// use std::sync::Arc;
///
/// let mut registry = Registry::default();
/// let provider = Arc::new(PrometheusMetricsProvider::new(&mut registry));
/// let queue = Queue::with_config(QueueConfig::new().name("pods").metrics_provider(provider));
/// queue.add("default/web");
///
/// let mut text = String::new();
/// prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
/// assert!(text.contains(r#"workqueue_depth{name="pods"} 1"#));
/// assert!(text.contains(r#"workqueue_adds_total{name="pods"} 1"#));
/// # queue.shut_down();
/// ```
#[derive(Clone)]
pub struct PrometheusMetricsProvider {
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    latency: HistogramFamily,
    work_duration: HistogramFamily,
    unfinished_work_seconds: Family<QueueLabels, Gauge<f64, AtomicU64>>,
    longest_running_processor: Family<QueueLabels, Gauge<f64, AtomicU64>>,
    retries: Family<QueueLabels, Counter>,
    dropped_delayed: Family<QueueLabels, Counter>,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram, fn() -> Histogram>,
    active_workers: Family<ControllerLabels, Gauge>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_panics: Family<ControllerLabels, Counter>,
    reconcile_timeouts: Family<ControllerLabels, Counter>,
    terminal_reconcile_errors: Family<ControllerLabels, Counter>,
    max_concurrent_reconciles: Family<ControllerLabels, Gauge>,
}

impl PrometheusMetricsProvider {
    /// Registers the eight workqueue and eight controller metric families in `registry` (use
    /// `Registry::sub_registry_with_prefix` for a prefix).
    pub fn new(registry: &mut Registry) -> Self {
        let provider = PrometheusMetricsProvider {
            depth: Family::default(),
            adds: Family::default(),
            latency: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            unfinished_work_seconds: Family::default(),
            longest_running_processor: Family::default(),
            retries: Family::default(),
            dropped_delayed: Family::default(),
            reconcile_total: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_histogram),
            active_workers: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_timeouts: Family::default(),
            terminal_reconcile_errors: Family::default(),
            max_concurrent_reconciles: Family::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            provider.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            provider.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            provider.latency.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            provider.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed \
             by work_duration. Large values indicate stuck threads. One can deduce the number of \
             stuck threads by observing the rate at which this increases",
            provider.unfinished_work_seconds.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            provider.longest_running_processor.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            provider.retries.clone(),
        );
        registry.register(
            "workqueue_dropped_delayed_items",
            "Total number of delayed items (add_after, add_rate_limited) lost to the shutdown of \
             workqueue (kclient's own metric)",
            provider.dropped_delayed.clone(),
        );
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            provider.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            provider.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            provider.active_workers.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            provider.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            provider.reconcile_panics.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            provider.reconcile_timeouts.clone(),
        );
        registry.register(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            provider.terminal_reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            provider.max_concurrent_reconciles.clone(),
        );
        provider
    }
}

impl fmt::Debug for PrometheusMetricsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrometheusMetricsProvider")
    }
}

/// The counter of `controller` in `family`.
fn controller_total(
    family: &Family<ControllerLabels, Counter>,
    controller: &str,
) -> Box<dyn CounterMetric> {
    Box::new(Total(family.get_or_create_owned(&ControllerLabels {
        controller: controller.to_owned(),
    })))
}

fn labels(name: &str) -> QueueLabels {
    QueueLabels {
        name: name.to_owned(),
    }
}

struct DepthGauge(Gauge);

/// One queue's depth by priority: a series per priority, up to [`MAX_PRIORITY_LABELS`] of them.
struct DepthByPriority {
    family: Family<DepthLabels, Gauge>,
    name: String,
    gauges: Mutex<PriorityGauges>,
}

/// The series a queue's depth used so far, kept so that an add or a get looks up a small map
/// rather than the family's.
#[derive(Default)]
struct PriorityGauges {
    by_priority: HashMap<i32, Gauge>,
    /// The placeholder's series, once there were too many priorities: every change goes there.
    exceeded: Option<Gauge>,
}

impl DepthByPriority {
    fn gauge(&self, priority: i32) -> Gauge {
        let mut gauges = self.gauges.lock();
        if let Some(gauge) = &gauges.exceeded {
            return gauge.clone();
        }
        if let Some(gauge) = gauges.by_priority.get(&priority) {
            return gauge.clone();
        }
        let exceeded = gauges.by_priority.len() >= MAX_PRIORITY_LABELS;
        let gauge = self.family.get_or_create_owned(&DepthLabels {
            name: self.name.clone(),
            priority: Some(if exceeded {
                EXCEEDED_CARDINALITY.to_owned()
            } else {
                priority.to_string()
            }),
        });
        if exceeded {
            gauges.by_priority.clear();
            gauges.exceeded = Some(gauge.clone());
        } else {
            gauges.by_priority.insert(priority, gauge.clone());
        }
        gauge
    }
}

impl DepthMetricWithPriority for DepthByPriority {
    fn inc(&self, priority: i32) {
        self.gauge(priority).inc();
    }
    fn dec(&self, priority: i32) {
        self.gauge(priority).dec();
    }
}
struct SecondsGauge(Gauge<f64, AtomicU64>);
/// A whole number set outright (the maximum of concurrent reconciles).
struct CountGauge(Gauge);
struct Total(Counter);
struct Seconds(Histogram);

impl GaugeMetric for DepthGauge {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}

impl SettableGaugeMetric for SecondsGauge {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

impl SettableGaugeMetric for CountGauge {
    fn set(&self, value: f64) {
        // A count of workers: whole, and far below i64's range.
        self.0.set(value as i64);
    }
}

impl CounterMetric for Total {
    fn inc(&self) {
        self.0.inc();
    }
}

impl HistogramMetric for Seconds {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        let labels = DepthLabels {
            name: name.to_owned(),
            priority: None,
        };
        Box::new(DepthGauge(self.depth.get_or_create_owned(&labels)))
    }

    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Box<dyn DepthMetricWithPriority>> {
        Some(Box::new(DepthByPriority {
            family: self.depth.clone(),
            name: name.to_owned(),
            gauges: Mutex::new(PriorityGauges::default()),
        }))
    }

    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(self.adds.get_or_create_owned(&labels(name))))
    }

    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(Seconds(self.latency.get_or_create_owned(&labels(name))))
    }

    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(Seconds(
            self.work_duration.get_or_create_owned(&labels(name)),
        ))
    }

    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(SecondsGauge(
            self.unfinished_work_seconds
                .get_or_create_owned(&labels(name)),
        ))
    }

    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(SecondsGauge(
            self.longest_running_processor
                .get_or_create_owned(&labels(name)),
        ))
    }

    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(self.retries.get_or_create_owned(&labels(name))))
    }

    fn new_dropped_delayed_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(
            self.dropped_delayed.get_or_create_owned(&labels(name)),
        ))
    }

    fn new_reconcile_total_metric(&self, controller: &str, result: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(self.reconcile_total.get_or_create_owned(
            &ResultLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            },
        )))
    }

    fn new_reconcile_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric> {
        Box::new(Seconds(self.reconcile_time.get_or_create_owned(
            &ControllerLabels {
                controller: controller.to_owned(),
            },
        )))
    }

    fn new_active_workers_metric(&self, controller: &str) -> Box<dyn GaugeMetric> {
        Box::new(DepthGauge(self.active_workers.get_or_create_owned(
            &ControllerLabels {
                controller: controller.to_owned(),
            },
        )))
    }

    fn new_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        controller_total(&self.reconcile_errors, controller)
    }

    fn new_reconcile_panics_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        controller_total(&self.reconcile_panics, controller)
    }

    fn new_reconcile_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        controller_total(&self.reconcile_timeouts, controller)
    }

    fn new_terminal_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        controller_total(&self.terminal_reconcile_errors, controller)
    }

    fn new_max_concurrent_reconciles_metric(
        &self,
        controller: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(CountGauge(
            self.max_concurrent_reconciles
                .get_or_create_owned(&ControllerLabels {
                    controller: controller.to_owned(),
                }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AddOpts, DelayingQueue, FakeClock, PriorityQueue, QueueConfig};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn exports_the_seven_metrics_under_client_go_names() {
        let mut registry = Registry::default();
        let provider = Arc::new(PrometheusMetricsProvider::new(&mut registry));
        let clock = FakeClock::new();
        let queue = DelayingQueue::with_config(
            QueueConfig::new()
                .name("nodes")
                .clock(clock.clone())
                .metrics_provider(provider),
        );
        queue.add("a");
        queue.add("b");
        clock.step(Duration::from_millis(3));
        let item = queue.get_blocking().unwrap();
        clock.step(Duration::from_millis(2));
        queue.done(&item);
        queue.add_after("c", Duration::from_secs(1));

        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"workqueue_depth{name="nodes"} 1"#,
            r#"workqueue_adds_total{name="nodes"} 2"#,
            r#"workqueue_queue_duration_seconds_count{name="nodes"} 1"#,
            r#"workqueue_queue_duration_seconds_sum{name="nodes"} 0.003"#,
            r#"workqueue_work_duration_seconds_count{name="nodes"} 1"#,
            r#"workqueue_work_duration_seconds_sum{name="nodes"} 0.002"#,
            r#"workqueue_unfinished_work_seconds{name="nodes"} 0"#,
            r#"workqueue_longest_running_processor_seconds{name="nodes"} 0"#,
            r#"workqueue_retries_total{name="nodes"} 1"#,
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        queue.shut_down();
        // "c" still waited for its delay: the shutdown dropped it and counted it.
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let line = r#"workqueue_dropped_delayed_items_total{name="nodes"} 1"#;
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }

    #[test]
    fn a_priority_queue_exports_its_depth_by_priority() {
        let mut registry = Registry::default();
        let provider = Arc::new(PrometheusMetricsProvider::new(&mut registry));
        let queue = PriorityQueue::with_config(
            QueueConfig::new()
                .name("pods")
                .metrics_provider(provider.clone()),
        );
        let plain =
            crate::Queue::with_config(QueueConfig::new().name("plain").metrics_provider(provider));
        plain.add("x");
        for (item, priority) in [("a", -100), ("b", -100), ("c", 0), ("d", 0), ("e", 0)] {
            queue.add_with_opts(
                item,
                AddOpts {
                    priority,
                    ..AddOpts::default()
                },
            );
        }
        assert_eq!(queue.get_blocking(), Some(("c", 0)));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"workqueue_depth{name="pods",priority="-100"} 2"#,
            r#"workqueue_depth{name="pods",priority="0"} 2"#,
            r#"workqueue_depth{name="plain"} 1"#,
            r#"workqueue_adds_total{name="pods"} 5"#,
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(
            !text.contains(r#"workqueue_depth{name="pods"}"#),
            "a depth without priority for the priority queue in\n{text}"
        );
        queue.shut_down();
        plain.shut_down();
    }

    /// controller-runtime's cap: past 25 distinct priorities, one placeholder series.
    #[test]
    fn depth_by_priority_caps_its_series() {
        let mut registry = Registry::default();
        let provider = PrometheusMetricsProvider::new(&mut registry);
        let depth = provider.new_depth_metric_with_priority("many").unwrap();
        for priority in 0..25 {
            depth.inc(priority);
        }
        depth.inc(25);
        depth.inc(3);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"workqueue_depth{name="many",priority="24"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"workqueue_depth{name="many",priority="exceeded_cardinality_limit"} 2"#
            ),
            "{text}"
        );
        assert!(!text.contains(r#"priority="25""#), "{text}");
    }

    #[test]
    fn duration_histograms_have_controller_runtimes_buckets() {
        let mut registry = Registry::default();
        let provider = PrometheusMetricsProvider::new(&mut registry);
        provider.new_latency_metric("buckets").observe(0.5);
        provider.new_work_duration_metric("buckets").observe(0.5);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for metric in [
            "workqueue_queue_duration_seconds",
            "workqueue_work_duration_seconds",
        ] {
            let bounds: Vec<f64> = text
                .lines()
                .filter(|l| l.starts_with(&format!("{metric}_bucket{{")))
                .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
                .filter(|le| *le != "+Inf")
                .map(|le| le.parse().unwrap())
                .collect();
            // controller-runtime's ExponentialBuckets(10e-9, 10, 12): 1e-8 .. 1e3.
            let want: Vec<f64> = (0..12).map(|i| 10e-9 * 10f64.powi(i)).collect();
            assert_eq!(bounds.len(), want.len(), "{metric}: {bounds:?}");
            for (got, want) in bounds.iter().zip(&want) {
                assert!((got / want - 1.0).abs() < 1e-9, "{metric}: {bounds:?}");
            }
        }
    }

    #[test]
    fn exports_the_controller_metrics_under_controller_runtime_names() {
        let mut registry = Registry::default();
        let provider = PrometheusMetricsProvider::new(&mut registry);
        provider
            .new_reconcile_total_metric("networks", "success")
            .inc();
        provider
            .new_reconcile_total_metric("networks", "error")
            .inc();
        provider
            .new_reconcile_total_metric("networks", "error")
            .inc();
        provider.new_reconcile_time_metric("networks").observe(0.02);
        let active = provider.new_active_workers_metric("networks");
        active.inc();
        active.inc();
        active.dec();
        provider.new_reconcile_errors_metric("networks").inc();
        provider.new_reconcile_panics_metric("networks").inc();
        provider.new_reconcile_timeouts_metric("networks").inc();
        provider
            .new_terminal_reconcile_errors_metric("networks")
            .inc();
        provider
            .new_max_concurrent_reconciles_metric("networks")
            .set(4.0);

        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"controller_runtime_reconcile_total{controller="networks",result="success"} 1"#,
            r#"controller_runtime_reconcile_total{controller="networks",result="error"} 2"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="networks"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_bucket{le="0.025",controller="networks"} 1"#,
            r#"controller_runtime_active_workers{controller="networks"} 1"#,
            r#"controller_runtime_reconcile_errors_total{controller="networks"} 1"#,
            r#"controller_runtime_reconcile_panics_total{controller="networks"} 1"#,
            r#"controller_runtime_reconcile_timeouts_total{controller="networks"} 1"#,
            r#"controller_runtime_terminal_reconcile_errors_total{controller="networks"} 1"#,
            r#"controller_runtime_max_concurrent_reconciles{controller="networks"} 4"#,
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }
}
