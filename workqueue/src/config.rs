//! [`QueueConfig`]: what a queue is built from (client-go's `TypedQueueConfig`,
//! `TypedDelayingQueueConfig` and `TypedRateLimitingQueueConfig` in one).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, RealClock};
use crate::core::CoreConfig;
use crate::metrics::{MetricsProvider, UNFINISHED_WORK_UPDATE_PERIOD};
use crate::rate_limiter::RateLimiter;

/// The name, clock, metrics provider and rate limiter of a queue. Every part is optional.
///
/// - **name**: names the queue's metrics. An unnamed queue records none.
/// - **clock**: the time the delaying queue and the metrics read; [`RealClock`] by default, a
///   [`FakeClock`](crate::FakeClock) in tests.
/// - **metrics provider**: makes the queue's metrics; the process-wide one set with
///   [`set_metrics_provider`](crate::set_metrics_provider) by default.
/// - **rate limiter**: used only by [`RateLimitingQueue::with_config`](crate::RateLimitingQueue::with_config);
///   [`default_controller_rate_limiter`](crate::default_controller_rate_limiter) (on this clock)
///   by default.
/// - **merge window**: how long a queue whose keys keep coming back holds the next items before
///   handing them out, so that repeated adds merge into them; [`DEFAULT_MERGE_WINDOW`] by
///   default (see [`merge_window`](QueueConfig::merge_window)).
///
/// ```
/// use kclient_workqueue::{FakeClock, QueueConfig, RateLimitingQueue, ItemExponentialFailureRateLimiter};
/// use std::time::Duration;
///
/// let queue: RateLimitingQueue<String> = RateLimitingQueue::with_config(
///     QueueConfig::new()
///         .name("deployments")
///         .clock(FakeClock::new())
///         .rate_limiter(ItemExponentialFailureRateLimiter::new(
///             Duration::from_millis(10),
///             Duration::from_secs(60),
///         )),
/// );
/// assert_eq!(queue.name(), "deployments");
/// # queue.shut_down();
/// ```
pub struct QueueConfig<T> {
    pub(crate) name: String,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) metrics_provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter<T>>>,
    pub(crate) unfinished_work_update_period: Duration,
    pub(crate) merge_window: Duration,
}

/// The merge window of a queue built without [`QueueConfig::merge_window`].
pub const DEFAULT_MERGE_WINDOW: Duration = Duration::from_micros(500);

impl<T> QueueConfig<T> {
    /// An unnamed queue on the real clock with the process-wide metrics provider.
    pub fn new() -> Self {
        QueueConfig {
            name: String::new(),
            clock: Arc::new(RealClock),
            metrics_provider: None,
            rate_limiter: None,
            unfinished_work_update_period: UNFINISHED_WORK_UPDATE_PERIOD,
            merge_window: DEFAULT_MERGE_WINDOW,
        }
    }

    /// Names the queue, which turns its metrics on.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the clock.
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Sets the clock, shared with other users.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the metrics provider for this queue instead of the process-wide one.
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    /// Sets the rate limiter of a rate-limiting queue.
    pub fn rate_limiter(mut self, rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        self.rate_limiter = Some(Arc::new(rate_limiter));
        self
    }

    /// Sets the rate limiter of a rate-limiting queue, shared with other users.
    pub fn shared_rate_limiter(mut self, rate_limiter: Arc<dyn RateLimiter<T>>) -> Self {
        self.rate_limiter = Some(rate_limiter);
        self
    }

    /// Sets the merge window. Once a key comes back (an add finds its item still waiting or
    /// being processed, or adds it again soon after it was done), the queue holds: each item it
    /// queues waits until this much real time has passed since it was queued (rounded up to the
    /// next multiple of a quarter window, so that items queued together go out together), and
    /// adds of its key in the meantime merge into it. Holding stops when the FIFO runs dry with
    /// no key back since it last ran dry, so a queue whose keys do not come back never holds
    /// and a lone add goes out at once. Items keep their order; a shutdown frees held items at
    /// once, and [`try_get`](crate::Queue::try_get) does not wait for a hold. `Duration::ZERO`
    /// turns holding off: every item goes out as soon as a getter is free, as in client-go.
    ///
    /// Under a stream of adds that repeat keys (informer events for objects that change several
    /// times a second, resyncs), a worker then handles each key about once per window rather
    /// than once per add: fewer reconciles, and fewer requests to the API server. The cost is up
    /// to this much latency (plus a quarter) for items queued while the queue holds, and a key
    /// that keeps coming back is handled at most about once per window.
    pub fn merge_window(mut self, window: Duration) -> Self {
        self.merge_window = window;
        self
    }

    /// How often the unfinished-work gauges are refreshed (500 ms outside tests).
    #[cfg(test)]
    pub(crate) fn unfinished_work_update_period(mut self, period: Duration) -> Self {
        self.unfinished_work_update_period = period;
        self
    }

    /// Splits off what the core needs, leaving the rate limiter.
    pub(crate) fn into_parts(self) -> (CoreConfig, Option<Arc<dyn RateLimiter<T>>>) {
        let core = CoreConfig {
            name: self.name,
            clock: self.clock,
            metrics_provider: self.metrics_provider,
            unfinished_work_update_period: self.unfinished_work_update_period,
            merge_window: self.merge_window,
        };
        (core, self.rate_limiter)
    }
}

impl<T> Default for QueueConfig<T> {
    fn default() -> Self {
        QueueConfig::new()
    }
}

impl<T> fmt::Debug for QueueConfig<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("clock", &self.clock)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field("rate_limiter", &self.rate_limiter.is_some())
            .field("merge_window", &self.merge_window)
            .finish()
    }
}
