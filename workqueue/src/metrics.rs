//! Queue metrics: the [`MetricsProvider`] trait that hands a named queue its metrics
//! (client-go's `workqueue.MetricsProvider`), the process-wide provider, and the bookkeeping the
//! queue core does with them.
//!
//! client-go's seven, as client-go names them, and one of kclient's own (a provider chooses the
//! real metric names):
//!
//! | metric | kind | what |
//! | --- | --- | --- |
//! | depth | gauge | items waiting in the queue (not counting those being processed) |
//! | adds | counter | adds that put an item in the queue (adds of an item already waiting do not count) |
//! | latency | histogram | seconds an item waited in the queue before a worker got it |
//! | work duration | histogram | seconds between `get` and `done` |
//! | unfinished work seconds | settable gauge | sum of the ages of the items being processed now |
//! | longest running processor | settable gauge | age of the oldest item being processed now |
//! | retries | counter | calls of `add_after` (and so `add_rate_limited`) |
//! | dropped delayed (kclient's own) | counter | delayed items lost to a shutdown: dropped while waiting, or refused after it began |
//!
//! A queue records metrics only when it has a name and a provider (its own, else the one set with
//! [`set_metrics_provider`]); otherwise it skips the bookkeeping entirely.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A value that goes up and down by one (the depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A value that is set outright (the unfinished-work and longest-processor seconds).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A value that only goes up (adds, retries).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// Individual observations, in seconds (queue latency, work duration).
pub trait HistogramMetric: Send + Sync {
    /// Records one observation.
    fn observe(&self, value: f64);
}

/// The depth of a [`PriorityQueue`](crate::PriorityQueue) per priority, controller-runtime's
/// `DepthMetricWithPriority`: one gauge for each priority in use.
pub trait DepthMetricWithPriority: Send + Sync {
    /// Adds one to the depth at `priority`.
    fn inc(&self, priority: i32);
    /// Subtracts one from the depth at `priority`.
    fn dec(&self, priority: i32);
}

/// Makes the metrics of a named queue, the counterpart of client-go's `MetricsProvider`.
///
/// Each method is called once per queue, when the queue is built, with the queue's name. A
/// provider typically returns one labelled child of a metric family per name. See
/// `PrometheusMetricsProvider` (with the `prometheus` feature) for one.
///
/// The metrics it returns may be updated while the queue holds its internal locks (the adds
/// and the depth, as client-go updates its own under the queue's lock, so that the depth follows
/// the adds and gets in order; a get's latency and a done's work duration are recorded after
/// the lock is released): their methods must only record, and never call into a queue.
///
/// ```
/// use kclient_workqueue::{CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, Queue,
///     QueueConfig, SettableGaugeMetric};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicI64, Ordering};
///
/// /// Counts only the depth; every other metric is dropped.
/// #[derive(Default)]
/// struct DepthOnly(Arc<AtomicI64>);
/// struct Depth(Arc<AtomicI64>);
/// struct Nothing;
/// impl GaugeMetric for Depth {
///     fn inc(&self) { self.0.fetch_add(1, Ordering::Relaxed); }
///     fn dec(&self) { self.0.fetch_sub(1, Ordering::Relaxed); }
/// }
/// impl CounterMetric for Nothing { fn inc(&self) {} }
/// impl HistogramMetric for Nothing { fn observe(&self, _: f64) {} }
/// impl SettableGaugeMetric for Nothing { fn set(&self, _: f64) {} }
/// impl MetricsProvider for DepthOnly {
///     fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> { Box::new(Depth(self.0.clone())) }
///     fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> { Box::new(Nothing) }
///     fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> { Box::new(Nothing) }
///     fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> { Box::new(Nothing) }
///     fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> { Box::new(Nothing) }
///     fn new_longest_running_processor_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> { Box::new(Nothing) }
///     fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> { Box::new(Nothing) }
/// }
///
/// let depth = Arc::new(AtomicI64::new(0));
/// let queue = Queue::with_config(
///     QueueConfig::new().name("pods").metrics_provider(Arc::new(DepthOnly(depth.clone()))),
/// );
/// queue.add("default/nginx".to_string());
/// queue.add("default/redis".to_string());
/// assert_eq!(depth.load(Ordering::Relaxed), 2);
/// queue.shut_down();
/// ```
pub trait MetricsProvider: Send + Sync {
    /// The number of items waiting.
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// The number of adds.
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Seconds from add to get.
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Seconds from get to done.
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Sum of the ages, in seconds, of the items being processed.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Age, in seconds, of the oldest item being processed.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// The number of delayed (retried) adds.
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// The number of delayed items (waiting in `add_after` or `add_rate_limited`) that were lost
    /// to a shutdown: dropped from the waiting heap, or refused because the queue was shutting
    /// down. Not one of client-go's metrics (client-go drops them without a count); the default
    /// records nothing, so existing providers keep working.
    fn new_dropped_delayed_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        let _ = name;
        Box::new(NoMetric)
    }

    /// The depth of a [`PriorityQueue`](crate::PriorityQueue) by priority (controller-runtime's
    /// `NewDepthMetricWithPriority`). A priority queue asks for it first and uses
    /// [`new_depth_metric`](MetricsProvider::new_depth_metric) only when this returns `None`,
    /// which the default does, so existing providers keep working (without the priority).
    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Box<dyn DepthMetricWithPriority>> {
        let _ = name;
        None
    }

    /// The number of reconciles of the controller `controller` that ended with `result`
    /// (`success`, `error`, `requeue` or `requeue_after`, as controller-runtime labels them).
    /// Asked for by kclient-controller, whose controllers share the provider of their queues;
    /// the default records nothing, so queue-only providers keep working.
    fn new_reconcile_total_metric(&self, controller: &str, result: &str) -> Box<dyn CounterMetric> {
        let _ = (controller, result);
        Box::new(NoMetric)
    }

    /// Seconds each reconcile of the controller `controller` took (kclient-controller's;
    /// the default records nothing).
    fn new_reconcile_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// The number of the controller's workers reconciling now (kclient-controller's; the
    /// default records nothing).
    fn new_active_workers_metric(&self, controller: &str) -> Box<dyn GaugeMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// The number of the controller's reconciles that failed, a panic included
    /// (kclient-controller's, controller-runtime's `reconcile_errors_total`; the default
    /// records nothing).
    fn new_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// The number of the controller's reconciles that panicked (kclient-controller's,
    /// controller-runtime's `reconcile_panics_total`; the default records nothing).
    fn new_reconcile_panics_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// The number of the controller's failed reconciles that its error policy gave up on, not
    /// to be retried (kclient-controller's, controller-runtime's
    /// `terminal_reconcile_errors_total`, which counts its `TerminalError`s; the default
    /// records nothing).
    fn new_terminal_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// The number of the controller's reconciles cancelled by its reconcile timeout
    /// (kclient-controller's, controller-runtime's `reconcile_timeouts_total`; the default
    /// records nothing).
    fn new_reconcile_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }

    /// How many reconciles of the controller may run at once, its `workers`, set once when it
    /// runs (kclient-controller's, controller-runtime's `max_concurrent_reconciles`; the
    /// default records nothing).
    fn new_max_concurrent_reconciles_metric(
        &self,
        controller: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        let _ = controller;
        Box::new(NoMetric)
    }
}

/// A metric that records nothing (the default of optional metrics).
struct NoMetric;

impl CounterMetric for NoMetric {
    fn inc(&self) {}
}

impl HistogramMetric for NoMetric {
    fn observe(&self, _value: f64) {}
}

impl SettableGaugeMetric for NoMetric {
    fn set(&self, _value: f64) {}
}

impl GaugeMetric for NoMetric {
    fn inc(&self) {}
    fn dec(&self) {}
}

static GLOBAL_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Sets the provider for every queue built afterwards with a name and no provider of its own, as
/// client-go's `workqueue.SetProvider` does. Only the first call has an effect; it returns whether
/// this call was that one.
pub fn set_metrics_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    GLOBAL_PROVIDER.set(provider).is_ok()
}

/// The process-wide provider set with [`set_metrics_provider`], if any: what a named queue
/// without a provider of its own uses (and what kclient-controller reports its controllers'
/// metrics to).
pub fn global_metrics_provider() -> Option<Arc<dyn MetricsProvider>> {
    GLOBAL_PROVIDER.get().cloned()
}

/// The provider a queue with this name and configured provider uses, or `None` for no metrics.
pub(crate) fn resolve_provider(
    name: &str,
    configured: Option<&Arc<dyn MetricsProvider>>,
) -> Option<Arc<dyn MetricsProvider>> {
    if name.is_empty() {
        return None;
    }
    configured.or_else(|| GLOBAL_PROVIDER.get()).cloned()
}

/// How often a queue with metrics refreshes the two unfinished-work gauges (client-go's 500 ms).
pub(crate) const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// The metrics every kind of queue reports alike: adds, the wait from ready to got, the work
/// duration and the two unfinished-work gauges. The depth differs (one gauge, or one per
/// priority), so each queue keeps its own beside these.
pub(crate) struct WorkMetrics {
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
}

impl WorkMetrics {
    pub(crate) fn new(provider: &dyn MetricsProvider, name: &str) -> Self {
        WorkMetrics {
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
        }
    }

    /// One more add.
    pub(crate) fn added(&self) {
        self.adds.inc();
    }

    /// A worker got, at `now`, an item waiting since `since` (when known).
    pub(crate) fn waited(&self, since: Option<Instant>, now: Instant) {
        if let Some(since) = since {
            self.latency.observe(seconds_between(since, now));
        }
    }

    /// A worker finished, at `now`, an item it got at `started_at` (when known).
    pub(crate) fn done(&self, started_at: Option<Instant>, now: Instant) {
        if let Some(started_at) = started_at {
            self.work_duration.observe(seconds_between(started_at, now));
        }
    }

    /// Sets the two unfinished-work gauges from the start times of the items being processed.
    pub(crate) fn update_unfinished_work(
        &self,
        now: Instant,
        started: impl Iterator<Item = Instant>,
    ) {
        let (mut total, mut oldest) = (0.0_f64, 0.0_f64);
        for started_at in started {
            let age = seconds_between(started_at, now);
            total += age;
            oldest = oldest.max(age);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}

/// The six metrics the queue core updates as items move (retries and dropped delayed live beside
/// them in the core).
pub(crate) struct QueueMetrics {
    depth: Box<dyn GaugeMetric>,
    work: WorkMetrics,
}

impl QueueMetrics {
    pub(crate) fn new(provider: &dyn MetricsProvider, name: &str) -> Self {
        QueueMetrics {
            depth: provider.new_depth_metric(name),
            work: WorkMetrics::new(provider, name),
        }
    }

    /// An item became dirty and was queued (or will be, once its processing is done).
    pub(crate) fn added(&self) {
        self.work.added();
        self.depth.inc();
    }

    /// An add counted by `added` was ignored after all, because shutdown had begun: the item
    /// never waited.
    pub(crate) fn refused(&self) {
        self.depth.dec();
    }

    /// A worker got an item that was added at `added_at` (when known).
    pub(crate) fn got(&self, now: Instant, added_at: Option<Instant>) {
        self.depth.dec();
        self.work.waited(added_at, now);
    }

    /// A worker finished an item it got at `started_at` (when known).
    pub(crate) fn done(&self, now: Instant, started_at: Option<Instant>) {
        self.work.done(started_at, now);
    }

    /// Sets the two unfinished-work gauges from the start times of the items being processed.
    pub(crate) fn update_unfinished_work(
        &self,
        now: Instant,
        started: impl Iterator<Item = Instant>,
    ) {
        self.work.update_unfinished_work(now, started);
    }
}

impl fmt::Debug for QueueMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("QueueMetrics")
    }
}

fn seconds_between(start: Instant, end: Instant) -> f64 {
    end.saturating_duration_since(start).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delaying_queue::tests::step_and_settle;
    use crate::{DelayingQueue, FakeClock, Queue, QueueConfig};
    use parking_lot::Mutex;

    /// Records what the queue does to each metric.
    #[derive(Default)]
    struct Recorded {
        inc: i64,
        dec: i64,
        set: Option<f64>,
        observations: Vec<f64>,
    }

    #[derive(Clone, Default)]
    struct TestMetric(Arc<Mutex<Recorded>>);

    impl TestMetric {
        fn gauge(&self) -> f64 {
            let recorded = self.0.lock();
            recorded.set.unwrap_or((recorded.inc - recorded.dec) as f64)
        }
        fn observations(&self) -> Vec<f64> {
            self.0.lock().observations.clone()
        }
    }

    impl GaugeMetric for TestMetric {
        fn inc(&self) {
            self.0.lock().inc += 1;
        }
        fn dec(&self) {
            self.0.lock().dec += 1;
        }
    }
    impl CounterMetric for TestMetric {
        fn inc(&self) {
            self.0.lock().inc += 1;
        }
    }
    impl SettableGaugeMetric for TestMetric {
        fn set(&self, value: f64) {
            self.0.lock().set = Some(value);
        }
    }
    impl HistogramMetric for TestMetric {
        fn observe(&self, value: f64) {
            self.0.lock().observations.push(value);
        }
    }

    #[derive(Default)]
    struct TestProvider {
        depth: TestMetric,
        adds: TestMetric,
        latency: TestMetric,
        duration: TestMetric,
        unfinished: TestMetric,
        longest: TestMetric,
        retries: TestMetric,
        dropped: TestMetric,
        names: Mutex<Vec<String>>,
    }

    impl MetricsProvider for TestProvider {
        fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
            self.names.lock().push(name.to_owned());
            Box::new(self.depth.clone())
        }
        fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            Box::new(self.adds.clone())
        }
        fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            Box::new(self.latency.clone())
        }
        fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
            Box::new(self.duration.clone())
        }
        fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
            Box::new(self.unfinished.clone())
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            _: &str,
        ) -> Box<dyn SettableGaugeMetric> {
            Box::new(self.longest.clone())
        }
        fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            Box::new(self.retries.clone())
        }
        fn new_dropped_delayed_metric(&self, _: &str) -> Box<dyn CounterMetric> {
            Box::new(self.dropped.clone())
        }
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn queue_reports_client_go_metrics() {
        let provider = Arc::new(TestProvider::default());
        let clock = FakeClock::new();
        let queue = Queue::with_config(
            QueueConfig::new()
                .name("test")
                .clock(clock.clone())
                .metrics_provider(provider.clone())
                .unfinished_work_update_period(Duration::from_millis(1)),
        );
        assert_eq!(*provider.names.lock(), ["test"]);

        queue.add("foo");
        assert_eq!(provider.adds.gauge(), 1.0);
        assert_eq!(provider.depth.gauge(), 1.0);
        clock.step(us(50));

        let item = queue.get_blocking().unwrap();
        assert_eq!(provider.latency.observations(), [50e-6]);
        assert_eq!(provider.depth.gauge(), 0.0);

        // Added back while processing: the repeats are de-duplicated.
        for _ in 0..5 {
            queue.add(item);
        }
        assert_eq!(provider.adds.gauge(), 2.0);
        assert_eq!(provider.depth.gauge(), 1.0);
        clock.step(us(25));

        queue.done(&item);
        assert_eq!(provider.duration.observations(), [25e-6]);
        assert_eq!(provider.depth.gauge(), 1.0);

        // Back in the queue: it waited 25 µs (since its re-add), not 75.
        let item = queue.get_blocking().unwrap();
        assert_eq!(provider.latency.observations(), [50e-6, 25e-6]);

        // The loop refreshes the unfinished-work gauges from the processing item's age.
        step_and_settle(&queue, &clock, Duration::from_millis(1));
        assert_eq!(provider.unfinished.gauge(), 0.001);
        assert_eq!(provider.longest.gauge(), 0.001);

        queue.done(&item);
        assert_eq!(provider.duration.observations(), [25e-6, 0.001]);
        step_and_settle(&queue, &clock, Duration::from_millis(1));
        assert_eq!(provider.unfinished.gauge(), 0.0);
        assert_eq!(provider.longest.gauge(), 0.0);
        queue.shut_down();
    }

    #[test]
    fn unfinished_work_sums_ages_and_tracks_the_oldest() {
        let provider = Arc::new(TestProvider::default());
        let clock = FakeClock::new();
        let queue = Queue::with_config(
            QueueConfig::new()
                .name("ages")
                .clock(clock.clone())
                .metrics_provider(provider.clone())
                .unfinished_work_update_period(Duration::from_secs(1)),
        );
        queue.add(1);
        queue.add(2);
        let first = queue.get_blocking().unwrap();
        clock.step(Duration::from_secs(2));
        let _second = queue.get_blocking().unwrap();
        step_and_settle(&queue, &clock, Duration::from_secs(1));
        // Ages 3 s and 1 s.
        assert_eq!(provider.unfinished.gauge(), 4.0);
        assert_eq!(provider.longest.gauge(), 3.0);
        queue.done(&first);
        step_and_settle(&queue, &clock, Duration::from_secs(1));
        assert_eq!(provider.unfinished.gauge(), 2.0);
        assert_eq!(provider.longest.gauge(), 2.0);
        queue.shut_down();
    }

    #[test]
    fn no_update_after_shutdown() {
        let provider = Arc::new(TestProvider::default());
        let clock = FakeClock::new();
        let queue = Queue::with_config(
            QueueConfig::new()
                .name("shutdown")
                .clock(clock.clone())
                .metrics_provider(provider.clone())
                .unfinished_work_update_period(Duration::from_millis(1)),
        );
        queue.add(1);
        let _held = queue.get_blocking().unwrap();
        step_and_settle(&queue, &clock, Duration::from_millis(1));
        assert_eq!(provider.unfinished.gauge(), 0.001);
        queue.shut_down();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while clock.has_waiters() {
            assert!(
                std::time::Instant::now() < deadline,
                "metrics loop still running"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        clock.step(Duration::from_secs(3600));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(provider.unfinished.gauge(), 0.001);
    }

    #[test]
    fn retries_count_delayed_adds() {
        let provider = Arc::new(TestProvider::default());
        let queue = DelayingQueue::with_config(
            QueueConfig::new()
                .name("retries")
                .clock(FakeClock::new())
                .metrics_provider(provider.clone()),
        );
        queue.add_after("a", Duration::ZERO);
        queue.add_after("a", Duration::from_secs(1));
        queue.add_after("b", Duration::from_secs(1));
        assert_eq!(provider.retries.gauge(), 3.0);
        queue.add("c");
        assert_eq!(provider.retries.gauge(), 3.0);
        queue.shut_down();
        queue.add_after("d", Duration::ZERO);
        assert_eq!(provider.retries.gauge(), 3.0);
    }

    #[test]
    fn unnamed_queue_records_nothing() {
        let provider = Arc::new(TestProvider::default());
        let queue = Queue::with_config(QueueConfig::new().metrics_provider(provider.clone()));
        queue.add(1);
        let item = queue.get_blocking().unwrap();
        queue.done(&item);
        assert!(provider.names.lock().is_empty());
        assert_eq!(provider.adds.gauge(), 0.0);
    }

    #[test]
    fn shutdown_counts_the_delayed_items_it_drops() {
        let provider = Arc::new(TestProvider::default());
        let queue = DelayingQueue::with_config(
            QueueConfig::new()
                .name("dropped")
                .clock(FakeClock::new())
                .metrics_provider(provider.clone()),
        );
        queue.add_after("a", Duration::from_secs(1));
        queue.add_after("b", Duration::from_secs(2));
        queue.add_after("b", Duration::from_secs(1)); // the same item: counted once
        queue.add("c"); // not delayed: handed out after shutdown, not dropped
        queue.shut_down();
        assert_eq!(provider.dropped.gauge(), 2.0);
        assert_eq!(queue.waiting_len(), 0);
        // A delayed add refused by the shut-down queue is lost too, and counted.
        queue.add_after("d", Duration::from_secs(1));
        assert_eq!(provider.dropped.gauge(), 3.0);
        // Shutting down again drops nothing more.
        queue.shut_down();
        assert_eq!(provider.dropped.gauge(), 3.0);
        assert_eq!(queue.get_blocking(), Some("c"));
    }

    #[test]
    fn drain_delayed_counts_nothing_it_hands_back() {
        let provider = Arc::new(TestProvider::default());
        let queue = DelayingQueue::with_config(
            QueueConfig::new()
                .name("kept")
                .clock(FakeClock::new())
                .metrics_provider(provider.clone()),
        );
        queue.add_after("a", Duration::from_secs(10));
        assert_eq!(
            queue.shut_down_with_drain_delayed_blocking(Duration::ZERO),
            ["a"]
        );
        assert_eq!(provider.dropped.gauge(), 0.0);
    }

    #[test]
    fn shutdown_logs_how_many_delayed_items_it_drops() {
        let logs = kclient_testenv::LogCapture::start(tracing::Level::INFO);
        let queue =
            DelayingQueue::with_config(QueueConfig::new().name("logged").clock(FakeClock::new()));
        queue.add_after(1, Duration::from_secs(5));
        queue.add_after(2, Duration::from_secs(5));
        queue.shut_down();
        let log = logs.text();
        assert!(
            log.contains("INFO") && log.contains("queue=logged") && log.contains("dropped=2"),
            "no line about the 2 dropped items in:\n{log}"
        );
    }
}
