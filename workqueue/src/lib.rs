//! Work queues for controllers, the counterpart of client-go's `util/workqueue`.
//!
//! It depends on no other kclient crate: the queues are useful outside Kubernetes. Items are any
//! `Clone + Eq + Hash + Send + 'static` value; controllers use object keys (`"namespace/name"`).
//!
//! # Guarantees
//!
//! The queues give the guarantees client-go's `doc.go` lists:
//!
//! - **Fair**: items are processed in the order in which they are added.
//! - **Stingy**: a single item is not processed by several workers at once, and an item added
//!   several times before it can be processed is processed only once.
//! - **Multiple consumers and producers**: any number of threads and tasks may add and get at the
//!   same time. In particular an item may be added again while it is being processed; it is then
//!   processed again, after the current pass calls [`done`](Queue::done).
//! - **Shutdown notifications**: after [`shut_down`](Queue::shut_down), adds are ignored and
//!   getters receive what is left, then `None`, which tells a worker to stop.
//!   [`shut_down_with_drain_blocking`](Queue::shut_down_with_drain_blocking) also waits until every item being
//!   processed is done.
//!
//! # The three queues
//!
//! One private engine serves three thin public types, each one the previous plus a little (and
//! [`Deref`](std::ops::Deref)ing to it, as client-go's interfaces embed one another):
//!
//! - [`Queue`]: `add`, `get`/`get_blocking`, `done`, `len`, `shut_down`, `shut_down_with_drain`(`_blocking`).
//! - [`DelayingQueue`]: plus [`add_after`](DelayingQueue::add_after) and
//!   [`shut_down_with_drain_delayed_blocking`](DelayingQueue::shut_down_with_drain_delayed_blocking). One heap
//!   ordered by ready time per queue, and one timer thread for the whole process, serve every
//!   waiting item. A shutdown drops the items still waiting (as client-go's does) but logs and
//!   counts them; `shut_down_with_drain_delayed_blocking` keeps or hands them back instead.
//! - [`RateLimitingQueue`]: plus [`add_rate_limited`](RateLimitingQueue::add_rate_limited),
//!   [`forget`](RateLimitingQueue::forget) and [`num_requeues`](RateLimitingQueue::num_requeues),
//!   delays chosen by a [`RateLimiter`]: per-item exponential, token bucket, fast-slow, max-of,
//!   with-max-wait, and client-go's [`default_controller_rate_limiter`].
//!
//! Beside them, [`PriorityQueue`] is controller-runtime's priority queue: a rate-limiting queue
//! whose ready items go out highest [`AddOpts::priority`] first, first come first served within
//! a priority, so that the flood of unchanged objects a restart or a resync brings (added at a
//! low priority) does not delay a real change. It has its own engine (ordered maps under one
//! lock) and shares the timer thread, clocks, rate limiters and metrics of the others.
//!
//! # Threads and tasks
//!
//! A queue is consumed by worker threads with [`get_blocking`](Queue::get_blocking) (client-go's
//! `Get`) and by tokio tasks with [`get`](Queue::get), both at once if you like. No lock is ever
//! held across an `.await`. Under contention an add wakes an idle getter only when no wake-up is
//! already on its way and no getter is spinning, so producers and workers do not pay a futex
//! wake-up and two context switches per item; `bench/RESULTS.md` compares it with client-go.
//! [`run_workers_blocking`] and [`run_workers`] run N workers until shutdown;
//! [`parallelize_until`] splits a batch of independent pieces over threads.
//!
//! Which to use: worker tasks suit reconciles that mostly wait (for the API server); worker
//! threads suit reconciles that compute, and programs whose adds come from many busy threads.
//! Tasks share the runtime's few threads, so a task that computes holds one for up to tokio's
//! budget of 128 items, and when other threads keep every core busy, a runtime thread woken for
//! an item waits for a core: on two cores behind eight producer threads, 1 to 4 ms in
//! `bench/RESULTS.md`, where worker threads, each a share of the cores, waited less.
//!
//! # Time and metrics
//!
//! Delays and metrics read a [`Clock`]: [`RealClock`] by default, [`FakeClock`] in tests, so
//! that tests step time instead of sleeping. A named queue reports client-go's seven metrics
//! (depth, adds, queue latency, work duration, unfinished work seconds, longest running processor,
//! retries), plus kclient's count of delayed items dropped by a shutdown, through a
//! [`MetricsProvider`]; with the `prometheus` feature,
//! `PrometheusMetricsProvider` registers them in a `prometheus-client` registry under client-go's
//! metric names.
//!
//! # Example
//!
//! A controller's worker loop: reconcile each key, retry failures with backoff, stop at shutdown.
//!
//! ```
//! use kclient_workqueue::{default_controller_rate_limiter, QueueConfig, RateLimitingQueue};
//! use std::sync::mpsc;
//! use std::thread;
//!
//! fn reconcile(key: &str) -> Result<(), String> {
//!     if key == "default/flaky" { Err("try again".into()) } else { Ok(()) }
//! }
//!
//! let queue: RateLimitingQueue<String> = RateLimitingQueue::with_config(
//!     QueueConfig::new().name("example").rate_limiter(default_controller_rate_limiter()),
//! );
//! let (resolved, outcomes) = mpsc::channel();
//!
//! let workers: Vec<_> = (0..2)
//!     .map(|_| {
//!         let (queue, resolved) = (queue.clone(), resolved.clone());
//!         thread::spawn(move || {
//!             while let Some(key) = queue.get_blocking() {
//!                 match reconcile(&key) {
//!                     Ok(()) => {
//!                         queue.forget(&key);
//!                         resolved.send(format!("{key}: ok")).unwrap();
//!                     }
//!                     // Retry after 5, 10, 20 ms...
//!                     Err(_) if queue.num_requeues(&key) < 3 => queue.add_rate_limited(key.clone()),
//!                     Err(error) => {
//!                         queue.forget(&key); // give up on it
//!                         resolved.send(format!("{key}: {error}")).unwrap();
//!                     }
//!                 }
//!                 queue.done(&key);
//!             }
//!         })
//!     })
//!     .collect();
//!
//! for key in ["default/web", "default/db", "default/flaky"] {
//!     queue.add(key.to_string());
//! }
//! let mut outcomes: Vec<String> = outcomes.iter().take(3).collect();
//! outcomes.sort();
//! assert_eq!(outcomes, ["default/db: ok", "default/flaky: try again", "default/web: ok"]);
//!
//! queue.shut_down_with_drain_blocking();
//! for worker in workers {
//!     worker.join().unwrap();
//! }
//! ```

mod clock;
mod config;
mod core;
mod delaying_queue;
mod metrics;
mod parallelizer;
mod priority_queue;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiter;
mod rate_limiting_queue;
mod sync;
mod timer;
mod workers;

pub use crate::clock::{Alarm, Clock, FakeClock, RealClock};
pub use crate::config::{DEFAULT_MERGE_WINDOW, QueueConfig};
pub use crate::core::TryGetError;
pub use crate::delaying_queue::DelayingQueue;
pub use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric, MetricsProvider,
    SettableGaugeMetric, global_metrics_provider, set_metrics_provider,
};
pub use crate::parallelizer::{ParallelizeOptions, parallelize_until};
pub use crate::priority_queue::{AddOpts, PriorityQueue};
#[cfg(feature = "prometheus")]
pub use crate::prometheus::PrometheusMetricsProvider;
pub use crate::queue::Queue;
pub use crate::rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
    default_item_based_rate_limiter,
};
pub use crate::rate_limiting_queue::RateLimitingQueue;
pub use crate::workers::{run_workers, run_workers_blocking};
