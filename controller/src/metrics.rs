//! The metrics of one controller, made by the workqueue's [`MetricsProvider`] (the one the
//! controller's queue uses): reconciles by result, errors, terminal errors, panics, timeouts,
//! reconcile time, active workers and the maximum of concurrent reconciles.
//!
//! There is one metrics mechanism in kclient, the workqueue's: a controller named `n` gets
//! its queue's seven metrics under the name `n`, and these eight from the same provider's
//! `new_reconcile_total_metric`, `new_reconcile_errors_metric`,
//! `new_terminal_reconcile_errors_metric`, `new_reconcile_panics_metric`,
//! `new_reconcile_timeouts_metric`, `new_reconcile_time_metric`, `new_active_workers_metric` and
//! `new_max_concurrent_reconciles_metric` (with the `prometheus` feature of
//! kclient-workqueue, controller-runtime's `controller_runtime_reconcile_total`,
//! `controller_runtime_reconcile_errors_total`,
//! `controller_runtime_terminal_reconcile_errors_total`,
//! `controller_runtime_reconcile_panics_total`, `controller_runtime_reconcile_timeouts_total`, `controller_runtime_reconcile_time_seconds`, `controller_runtime_active_workers` and
//! `controller_runtime_max_concurrent_reconciles`).

use std::sync::Arc;
use std::time::Duration;

use kclient_workqueue::{CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider};

/// How a reconcile ended, as the `result` label says it (controller-runtime's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReconcileResult {
    Success,
    Error,
    Requeue,
    RequeueAfter,
}

impl ReconcileResult {
    const ALL: [ReconcileResult; 4] = [
        ReconcileResult::Success,
        ReconcileResult::Error,
        ReconcileResult::Requeue,
        ReconcileResult::RequeueAfter,
    ];

    fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

/// The metrics of one controller; records nothing without a provider.
pub(crate) struct ControllerMetrics {
    totals: Option<[Box<dyn CounterMetric>; 4]>,
    errors: Option<Box<dyn CounterMetric>>,
    panics: Option<Box<dyn CounterMetric>>,
    timeouts: Option<Box<dyn CounterMetric>>,
    terminal: Option<Box<dyn CounterMetric>>,
    time: Option<Box<dyn HistogramMetric>>,
    active: Option<Box<dyn GaugeMetric>>,
}

impl ControllerMetrics {
    /// The metrics of the controller `controller`, which runs at most `workers` reconciles at
    /// once.
    pub(crate) fn new(
        provider: Option<&Arc<dyn MetricsProvider>>,
        controller: &str,
        workers: usize,
    ) -> Self {
        match provider {
            None => ControllerMetrics {
                totals: None,
                errors: None,
                panics: None,
                timeouts: None,
                terminal: None,
                time: None,
                active: None,
            },
            Some(p) => {
                p.new_max_concurrent_reconciles_metric(controller)
                    .set(workers as f64);
                ControllerMetrics {
                    totals: Some(
                        ReconcileResult::ALL
                            .map(|r| p.new_reconcile_total_metric(controller, r.label())),
                    ),
                    errors: Some(p.new_reconcile_errors_metric(controller)),
                    panics: Some(p.new_reconcile_panics_metric(controller)),
                    timeouts: Some(p.new_reconcile_timeouts_metric(controller)),
                    terminal: Some(p.new_terminal_reconcile_errors_metric(controller)),
                    time: Some(p.new_reconcile_time_metric(controller)),
                    active: Some(p.new_active_workers_metric(controller)),
                }
            }
        }
    }

    /// Counts a reconcile as active until the returned guard drops: when the reconcile
    /// returns, and also when it is cancelled (aborted at the shutdown timeout or when
    /// leadership is lost), so that the gauge comes back down either way.
    pub(crate) fn started(&self) -> ActiveReconcile<'_> {
        if let Some(active) = &self.active {
            active.inc();
        }
        ActiveReconcile(self.active.as_deref())
    }

    /// Counts a reconcile (or `on_deleted`) that panicked; [`finished`](Self::finished) then
    /// counts it as an error too, as controller-runtime does.
    pub(crate) fn panicked(&self) {
        inc(&self.panics);
    }

    /// Counts a reconcile that the reconcile timeout cancelled; [`finished`](Self::finished)
    /// then counts it as an error too, as controller-runtime does.
    pub(crate) fn timed_out(&self) {
        inc(&self.timeouts);
    }

    /// Counts a failed reconcile that the error policy gave up on (controller-runtime's
    /// terminal error); [`finished`](Self::finished) counts it as an error too.
    pub(crate) fn terminal(&self) {
        inc(&self.terminal);
    }

    /// Records a reconcile that returned: its time and its result.
    pub(crate) fn finished(&self, result: ReconcileResult, took: Duration) {
        if result == ReconcileResult::Error {
            inc(&self.errors);
        }
        if let Some(time) = &self.time {
            time.observe(took.as_secs_f64());
        }
        if let Some(totals) = &self.totals {
            let index = ReconcileResult::ALL
                .iter()
                .position(|r| *r == result)
                .unwrap_or(0);
            totals[index].inc();
        }
    }
}

/// Counts one on `counter`, if the controller has metrics.
fn inc(counter: &Option<Box<dyn CounterMetric>>) {
    if let Some(counter) = counter {
        counter.inc();
    }
}

/// One reconcile counted in the active-workers gauge; uncounts it when dropped.
pub(crate) struct ActiveReconcile<'a>(Option<&'a dyn GaugeMetric>);

impl Drop for ActiveReconcile<'_> {
    fn drop(&mut self) {
        if let Some(active) = self.0 {
            active.dec();
        }
    }
}
