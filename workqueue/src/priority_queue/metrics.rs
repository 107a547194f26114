//! The metrics of a [`PriorityQueue`](crate::PriorityQueue): client-go's seven, as the other
//! queues report them, with the depth by priority when the provider can express it
//! (controller-runtime's `priorityqueue/metrics.go`), and kclient's dropped-delayed count.
//!
//! As in controller-runtime's priority queue, the depth and the adds count ready items only (an
//! item delayed by `after` or the rate limiter counts when it comes due), and the retries count
//! the adds with a delay.

use std::time::Instant;

use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric, MetricsProvider,
    SettableGaugeMetric, seconds_between, unfinished_work,
};

/// The depth: one gauge, or one per priority.
enum Depth {
    Plain(Box<dyn GaugeMetric>),
    ByPriority(Box<dyn DepthMetricWithPriority>),
}

/// The metrics of one named priority queue.
pub(super) struct PriorityQueueMetrics {
    depth: Depth,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
    pub(super) retries: Box<dyn CounterMetric>,
    pub(super) dropped_delayed: Box<dyn CounterMetric>,
}

impl PriorityQueueMetrics {
    pub(super) fn new(provider: &dyn MetricsProvider, name: &str) -> Self {
        let depth = match provider.new_depth_metric_with_priority(name) {
            Some(by_priority) => Depth::ByPriority(by_priority),
            None => Depth::Plain(provider.new_depth_metric(name)),
        };
        PriorityQueueMetrics {
            depth,
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            retries: provider.new_retries_metric(name),
            dropped_delayed: provider.new_dropped_delayed_metric(name),
        }
    }

    /// An item became ready at `priority`.
    pub(super) fn added(&self, priority: i32) {
        self.adds.inc();
        match &self.depth {
            Depth::Plain(depth) => depth.inc(),
            Depth::ByPriority(depth) => depth.inc(priority),
        }
    }

    /// A ready item's priority rose.
    pub(super) fn raised(&self, from: i32, to: i32) {
        if let Depth::ByPriority(depth) = &self.depth {
            depth.dec(from);
            depth.inc(to);
        }
    }

    /// A worker got an item of `priority` (its depth), ready since `ready_since`.
    pub(super) fn got(&self, priority: i32) {
        match &self.depth {
            Depth::Plain(depth) => depth.dec(),
            Depth::ByPriority(depth) => depth.dec(priority),
        }
    }

    /// The latency of an item got at `now`, ready since `ready_since` (outside the lock).
    pub(super) fn waited(&self, ready_since: Option<Instant>, now: Instant) {
        if let Some(since) = ready_since {
            self.latency.observe(seconds_between(since, now));
        }
    }

    /// A worker finished an item it got at `started_at`.
    pub(super) fn done(&self, started_at: Option<Instant>, now: Instant) {
        if let Some(started_at) = started_at {
            self.work_duration.observe(seconds_between(started_at, now));
        }
    }

    /// Sets the two unfinished-work gauges from the times the processed items were got.
    pub(super) fn update_unfinished_work(
        &self,
        now: Instant,
        started: impl Iterator<Item = Instant>,
    ) {
        let (total, oldest) = unfinished_work(now, started);
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}
