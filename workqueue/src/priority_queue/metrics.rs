//! The metrics of a [`PriorityQueue`](crate::PriorityQueue): client-go's seven, as the other
//! queues report them, with the depth by priority when the provider can express it
//! (controller-runtime's `priorityqueue/metrics.go`), and kclient's dropped-delayed count.
//!
//! As in controller-runtime's priority queue, the depth and the adds count ready items only (an
//! item delayed by `after` or the rate limiter counts when it comes due), and the retries count
//! the adds with a delay.

use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, MetricsProvider, WorkMetrics,
};

/// The depth: one gauge, or one per priority.
enum Depth {
    Plain(Box<dyn GaugeMetric>),
    ByPriority(Box<dyn DepthMetricWithPriority>),
}

/// The metrics of one named priority queue.
pub(super) struct PriorityQueueMetrics {
    depth: Depth,
    /// The adds, the wait, the work duration and the unfinished work, as the other queues'.
    pub(super) work: WorkMetrics,
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
            work: WorkMetrics::new(provider, name),
            retries: provider.new_retries_metric(name),
            dropped_delayed: provider.new_dropped_delayed_metric(name),
        }
    }

    /// An item became ready at `priority`.
    pub(super) fn added(&self, priority: i32) {
        self.work.added();
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

    /// A worker got an item of `priority` (its depth; the wait is `work.waited`'s).
    pub(super) fn got(&self, priority: i32) {
        match &self.depth {
            Depth::Plain(depth) => depth.dec(),
            Depth::ByPriority(depth) => depth.dec(priority),
        }
    }
}
