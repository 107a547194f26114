//! [`PriorityQueue`]: controller-runtime's priority queue (`pkg/controller/priorityqueue`), a
//! rate-limiting queue whose ready items go out highest priority first.
//!
//! Why: after a controller starts or its informers resync, thousands of events for objects that
//! did not change arrive at once. Added at a low priority, they no longer stand in front of a
//! real change, which a worker then takes first.
//!
//! The rules are on [`PriorityQueue`]'s docs.
//!
//! The engine: one mutex over [`Items`](items::Items) (a hash map of entries, a `BTreeMap` of
//! ready items by priority and arrival, a `BTreeMap` of delayed items by ready time), a condition
//! variable for blocking getters and a `tokio::sync::Notify` for async ones. No lock is held across
//! an `.await`. This is not the sharded engine of `core.rs`, which is tuned for FIFO throughput:
//! priorities need one order over every ready item.

mod items;
mod metrics;

use std::fmt;
use std::future::poll_fn;
use std::hash::Hash;
use std::pin::pin;
use std::sync::Arc;
use std::sync::Weak;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;

use self::items::{Added, Done, Items};
use self::metrics::PriorityQueueMetrics;
use crate::clock::{Alarm, Clock};
use crate::config::QueueConfig;
use crate::metrics::resolve_provider;
use crate::rate_limiter::{RateLimiter, default_controller_rate_limiter_with_clock};
use crate::timer::{Next, TimerTask};

/// How an item is added to a [`PriorityQueue`] (controller-runtime's `AddOpts`).
///
/// The default is priority 0, ready now, not rate limited: what [`PriorityQueue::add`] does.
///
/// ```
/// use kclient_workqueue::AddOpts;
/// use std::time::Duration;
///
/// let low = AddOpts { priority: -100, ..AddOpts::default() };
/// let retry_later = AddOpts { after: Duration::from_secs(30), ..AddOpts::default() };
/// assert_eq!(low.after, Duration::ZERO);
/// assert!(!retry_later.rate_limited);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddOpts {
    /// Higher goes first. controller-runtime adds the events of an informer's initial list and
    /// of unchanged resyncs at `-100` (its `handler.LowPriority`), everything else at 0.
    pub priority: i32,
    /// Wait this long before the item is ready (zero: ready now).
    pub after: Duration,
    /// Ask the queue's [`RateLimiter`] how long to wait (one more requeue of the item); with
    /// `after` too, the shorter of the two.
    pub rate_limited: bool,
}

/// A rate-limiting work queue whose ready items go out highest priority first, first come first
/// served within a priority: controller-runtime's `priorityqueue.PriorityQueue`.
///
/// Items are added with [`add_with_opts`](PriorityQueue::add_with_opts) (or
/// [`add`](PriorityQueue::add), [`add_after`](PriorityQueue::add_after),
/// [`add_rate_limited`](PriorityQueue::add_rate_limited), all at priority 0) and taken with
/// [`get`](PriorityQueue::get) (a tokio task) or [`get_blocking`](PriorityQueue::get_blocking)
/// (a thread), which return the item with its priority. Clones are handles to one queue.
///
/// # Rules
///
/// controller-runtime's, with the differences listed below:
///
/// - **One entry per item.** An item added again while queued keeps the higher of the two
///   priorities and the earlier of the two ready times. If its priority rises, it goes behind
///   the items already queued at the new priority: first come, first served within a priority.
/// - **Delays.** [`AddOpts::after`] delays an item; [`AddOpts::rate_limited`] asks the
///   [`RateLimiter`] how long (with both, the shorter). A delayed item becomes ready, behind
///   the items already ready at its priority, when its time comes on the queue's [`Clock`]. The
///   process's one timer thread moves it (the one the [`DelayingQueue`](crate::DelayingQueue)
///   uses): a queue costs no thread.
/// - **Stingy.** An item is never handed to two workers at once. An item added while a worker
///   processes it waits, at the priority it was added with, until the worker calls
///   [`done`](PriorityQueue::done); meanwhile the other items go out. It counts in
///   [`len`](PriorityQueue::len), as in controller-runtime.
/// - **Shutdown** as the crate's other queues: later adds are ignored, getters receive the
///   ready items left and then `None`, delayed items are dropped and counted (an INFO log line
///   and the dropped-delayed metric), and
///   [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain) waits until every item handed
///   out is done.
/// - **Metrics** (a named queue): client-go's seven through the [`MetricsProvider`](crate::MetricsProvider),
///   with the depth by priority when the provider implements
///   [`new_depth_metric_with_priority`](crate::MetricsProvider::new_depth_metric_with_priority)
///   (the plain depth otherwise), and the dropped-delayed count. As in controller-runtime, the
///   depth, the adds and the latency count ready items only (a delayed item from when it comes
///   due), and the retries count the adds with a delay.
///
/// # Differences from controller-runtime's queue, each on purpose
///
/// - Its getters return at once after a shutdown, leaving ready items behind, and its
///   `ShutDownWithDrain` does not drain; here both behave as client-go's queues (and this crate's
///   other queues) do.
/// - A delayed item made ready by an add without delay goes behind the items ready at its
///   priority, as one moved by the timer does; controller-runtime keeps the place it was given
///   when first added (its `AddedCounter`), which can put it ahead of items that were ready
///   long before.
/// - The rate limiter of a queue built without one is [`default_controller_rate_limiter`](crate::default_controller_rate_limiter)
///   on the queue's clock, as for [`RateLimitingQueue`](crate::RateLimitingQueue);
///   controller-runtime's own default is the per-item exponential part alone, which its
///   controllers also use with this queue (kclient-controller does the same).
/// - A delay past the end of representable time (a limiter's `Duration::MAX`) drops the add, as
///   the delaying queue does.
///
/// # Example
///
/// ```
/// use kclient_workqueue::{AddOpts, PriorityQueue, QueueConfig};
///
/// let queue: PriorityQueue<String> = PriorityQueue::with_config(QueueConfig::new().name("pods"));
/// // A restart lists every object: the events go in at a low priority...
/// for name in ["a", "b", "c"] {
///     queue.add_with_opts(format!("default/{name}"), AddOpts { priority: -100, ..AddOpts::default() });
/// }
/// // ...so that a real change, added later, is reconciled first.
/// queue.add("default/changed".to_string());
/// // An unchanged object that changes after all moves up, behind the other changes.
/// queue.add("default/b".to_string());
///
/// let mut order = Vec::new();
/// while let Some((key, priority)) = queue.get_blocking() {
///     order.push((key.clone(), priority));
///     queue.done(&key);
///     if queue.len() == 0 {
///         break;
///     }
/// }
/// assert_eq!(order, [
///     ("default/changed".to_string(), 0),
///     ("default/b".to_string(), 0),
///     ("default/a".to_string(), -100),
///     ("default/c".to_string(), -100),
/// ]);
/// queue.shut_down();
/// assert_eq!(queue.get_blocking(), None);
/// ```
pub struct PriorityQueue<T> {
    shared: Arc<Shared<T>>,
}

struct Shared<T> {
    name: String,
    clock: Arc<dyn Clock>,
    rate_limiter: Arc<dyn RateLimiter<T>>,
    state: Mutex<State<T>>,
    /// Blocking getters wait here.
    item_ready: Condvar,
    /// Async getters wait here.
    item_ready_async: Notify,
    /// Blocking drains wait here.
    drained: Condvar,
    /// Async drains wait here.
    drained_async: Notify,
    metrics: Option<PriorityQueueMetrics>,
    /// How often the unfinished-work gauges are refreshed (with metrics).
    metrics_period: Option<Duration>,
    /// Rings the timer thread: a new earliest delayed item, a stepped fake clock, a shutdown.
    alarm: Arc<Alarm>,
    /// Whether registration with the timer thread was started.
    registered: AtomicBool,
    /// Set (under the state's lock) when the shutdown begins, for the adds' check without
    /// the lock.
    closed: AtomicBool,
    /// The clock's time at the end of the last timer pass (tests wait for it).
    #[cfg(test)]
    last_pass: Mutex<Option<Instant>>,
}

struct State<T> {
    items: Items<T>,
    shutting_down: bool,
    /// A drain waits; a later `shut_down` clears it to cut the wait short.
    draining: bool,
    /// Blocking getters parked on `item_ready`.
    sleepers: usize,
    /// Async getters registered with `item_ready_async`.
    async_waiters: usize,
    /// When the unfinished-work gauges are refreshed next.
    next_metrics_update: Option<Instant>,
}

impl<T> PriorityQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// An unnamed priority queue on the real clock with
    /// [`default_controller_rate_limiter`](crate::default_controller_rate_limiter).
    pub fn new() -> Self {
        PriorityQueue::with_config(QueueConfig::new())
    }

    /// A priority queue built from `config`: its name (which turns metrics on), clock, metrics
    /// provider and rate limiter
    /// ([`default_controller_rate_limiter`](crate::default_controller_rate_limiter) on the
    /// config's clock when it has none). The merge window does not apply to this queue.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        let clock = config.clock.clone();
        let (core, rate_limiter) = config.into_parts();
        let rate_limiter = rate_limiter
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter_with_clock::<T>(clock)));
        let metrics = resolve_provider(&core.name, core.metrics_provider.as_ref())
            .map(|provider| PriorityQueueMetrics::new(&*provider, &core.name));
        let metrics_period = metrics.as_ref().map(|_| core.unfinished_work_update_period);
        let next_metrics_update =
            metrics_period.and_then(|period| core.clock.now().checked_add(period));
        let queue = PriorityQueue {
            shared: Arc::new(Shared {
                name: core.name,
                clock: core.clock,
                rate_limiter,
                state: Mutex::new(State {
                    items: Items::new(),
                    shutting_down: false,
                    draining: false,
                    sleepers: 0,
                    async_waiters: 0,
                    next_metrics_update,
                }),
                item_ready: Condvar::new(),
                item_ready_async: Notify::new(),
                drained: Condvar::new(),
                drained_async: Notify::new(),
                metrics,
                metrics_period,
                alarm: Alarm::new(),
                registered: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                #[cfg(test)]
                last_pass: Mutex::new(None),
            }),
        };
        if queue.shared.metrics.is_some() {
            // The unfinished-work gauges are refreshed by the timer thread.
            queue.start_timer();
        }
        queue
    }

    /// Adds `item` as `opts` say: at `opts.priority`, after `opts.after` or the rate limiter's
    /// delay. An item already queued keeps the higher priority and the earlier ready time, and
    /// moves behind the items of its new priority if its priority rose. Ignored once the queue
    /// is shutting down.
    pub fn add_with_opts(&self, item: T, opts: AddOpts) {
        let shared = &*self.shared;
        // Before asking the rate limiter, which would count a requeue.
        if shared.closed.load(Ordering::Acquire) {
            shared.refuse(&opts);
            return;
        }
        let mut delay = opts.after;
        if opts.rate_limited {
            let limited = shared.rate_limiter.when(&item);
            delay = if delay.is_zero() {
                limited
            } else {
                delay.min(limited)
            };
        }
        let mut now = None;
        let ready_at = if delay.is_zero() {
            None
        } else {
            if let Some(metrics) = &shared.metrics {
                metrics.retries.inc();
            }
            let at = shared.clock.now();
            now = Some(at);
            match at.checked_add(delay) {
                Some(ready_at) => Some(ready_at),
                // Later than any representable instant: the item would never be ready.
                None => return,
            }
        };
        if now.is_none() && shared.metrics.is_some() {
            now = Some(shared.clock.now());
        }
        let added = {
            let mut state = shared.state.lock();
            if state.shutting_down {
                drop(state);
                shared.refuse(&opts);
                return;
            }
            let added = state.items.add(item, opts.priority, ready_at, now);
            match added {
                Added::Ready { priority, takeable } => {
                    if let Some(metrics) = &shared.metrics {
                        metrics.added(priority);
                    }
                    if takeable {
                        shared.wake_getter(&state);
                    }
                }
                Added::Raised { from, to } => {
                    if let Some(metrics) = &shared.metrics {
                        metrics.raised(from, to);
                    }
                }
                Added::Merged | Added::Waiting { .. } => {}
            }
            added
        };
        if let Added::Waiting { earliest } = added
            && !self.start_timer()
            && earliest
        {
            shared.alarm.ring();
        }
    }

    /// Adds `item` at priority 0, ready now.
    pub fn add(&self, item: T) {
        self.add_with_opts(item, AddOpts::default());
    }

    /// Adds `item` at priority 0 after `delay` (client-go's `AddAfter`).
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_with_opts(
            item,
            AddOpts {
                after: delay,
                ..AddOpts::default()
            },
        );
    }

    /// Adds `item` at priority 0 after the delay the rate limiter chooses for it now (one more
    /// requeue).
    pub fn add_rate_limited(&self, item: T) {
        self.add_with_opts(
            item,
            AddOpts {
                rate_limited: true,
                ..AddOpts::default()
            },
        );
    }

    /// Tells the rate limiter to stop tracking `item` (it succeeded, or you gave up on it); you
    /// still have to call [`done`](PriorityQueue::done).
    pub fn forget(&self, item: &T) {
        self.shared.rate_limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.shared.rate_limiter.num_requeues(item)
    }

    /// Waits for the ready item of the highest priority that came first, and returns it with its
    /// priority; `None` once the queue is shut down and no ready item is left
    /// (controller-runtime's `GetWithPriority`). The item is now being processed: call
    /// [`done`](PriorityQueue::done) when finished.
    ///
    /// Cancel-safe: a `get` dropped before it returns takes no item.
    pub async fn get(&self) -> Option<(T, i32)> {
        let shared = &*self.shared;
        // A unit of the task's cooperative budget, as the other queues' `get` takes.
        let budget = poll_fn(tokio::task::coop::poll_proceed).await;
        {
            let mut state = shared.state.lock();
            if let Some(taken) = shared.take(&mut state) {
                drop(state);
                budget.made_progress();
                return Some(shared.hand_out(taken));
            }
        }
        drop(budget);
        let mut waiter = AsyncWaiter {
            state: &shared.state,
            counted: false,
        };
        loop {
            // Register before looking, so that an item made ready after the look wakes us.
            let mut notified = pin!(shared.item_ready_async.notified());
            notified.as_mut().enable();
            {
                let mut state = shared.state.lock();
                if waiter.counted {
                    state.async_waiters -= 1;
                    waiter.counted = false;
                }
                if let Some(taken) = shared.take(&mut state) {
                    drop(state);
                    return Some(shared.hand_out(taken));
                }
                if state.shutting_down {
                    return None;
                }
                state.async_waiters += 1;
                waiter.counted = true;
            }
            notified.await;
        }
    }

    /// [`get`](PriorityQueue::get), blocking the thread until an item is ready.
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where it would hang; the
    /// message says to await [`get`](PriorityQueue::get) instead.
    pub fn get_blocking(&self) -> Option<(T, i32)> {
        kclient_flowcontrol::assert_can_block(
            "PriorityQueue::get_blocking",
            "PriorityQueue::get().await",
        );
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        loop {
            if let Some(taken) = shared.take(&mut state) {
                drop(state);
                return Some(shared.hand_out(taken));
            }
            if state.shutting_down {
                return None;
            }
            state.sleepers += 1;
            shared.item_ready.wait(&mut state);
            state.sleepers -= 1;
        }
    }

    /// Marks `item` as finished. If it was added while it was processed, it is ready again now,
    /// at the priority and place it was added with. Calling it for an item the caller did not
    /// get does nothing.
    pub fn done(&self, item: &T) {
        let shared = &*self.shared;
        let done = {
            let mut state = shared.state.lock();
            let done = state.items.done(item);
            if let Done::Finished { requeued, .. } = done {
                if requeued {
                    shared.wake_getter(&state);
                }
                if state.draining && state.items.processing() == 0 {
                    shared.drained.notify_all();
                    shared.drained_async.notify_waiters();
                }
            }
            done
        };
        if let (Some(metrics), Done::Finished { started_at, .. }) = (&shared.metrics, done) {
            metrics.work.done(started_at, shared.clock.now());
        }
    }

    /// Ready items, those added while processed included (they go out after their `done`); not
    /// the delayed ones.
    pub fn len(&self) -> usize {
        self.shared.state.lock().items.len()
    }

    /// Whether no item is ready.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items waiting for their ready time.
    pub fn waiting_len(&self) -> usize {
        self.shared.state.lock().items.waiting_len()
    }

    /// Starts shutting down: later adds are ignored; getters receive the ready items left and
    /// then `None`. Delayed items are dropped and counted (an INFO log line and the
    /// dropped-delayed metric). Also cuts short a
    /// [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain) still waiting.
    pub fn shut_down(&self) {
        self.shared.close(false);
    }

    /// Shuts down like [`shut_down`](PriorityQueue::shut_down), then waits until every item
    /// handed out is [`done`](PriorityQueue::done). Workers must call it, or this waits forever;
    /// a later `shut_down` stops the wait. As in client-go, an item added while processed is
    /// handed out again after its `done`, but the drain may return before a worker gets it.
    pub async fn shut_down_with_drain(&self) {
        let shared = &*self.shared;
        shared.close(true);
        loop {
            let mut notified = pin!(shared.drained_async.notified());
            notified.as_mut().enable();
            {
                let state = shared.state.lock();
                if !state.draining || state.items.processing() == 0 {
                    return;
                }
            }
            notified.await;
        }
    }

    /// [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain), blocking the thread.
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where the workers could never
    /// finish; the message says to await
    /// [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain) instead.
    pub fn shut_down_with_drain_blocking(&self) {
        kclient_flowcontrol::assert_can_block(
            "PriorityQueue::shut_down_with_drain_blocking",
            "PriorityQueue::shut_down_with_drain().await",
        );
        let shared = &*self.shared;
        shared.close(true);
        let mut state = shared.state.lock();
        while state.draining && state.items.processing() > 0 {
            shared.drained.wait(&mut state);
        }
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// The queue's name (empty when unnamed).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The queue's rate limiter.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.shared.rate_limiter
    }

    /// Registers the queue with the process's timer thread, once. Returns whether this call
    /// started the registration (whose first pass looks at every delayed item).
    fn start_timer(&self) -> bool {
        if self.shared.registered.swap(true, Ordering::AcqRel) {
            return false;
        }
        let task: Weak<dyn TimerTask> = Arc::downgrade(&self.shared) as Weak<dyn TimerTask>;
        if let Err(error) =
            crate::timer::service().register(task, self.shared.clock.clone(), &self.shared.alarm)
        {
            // No thread to wait with: rather than lose the delayed items, make them ready now.
            tracing::warn!(
                queue = %self.shared.name,
                %error,
                "cannot start the work queue timer thread; delayed items are added at once"
            );
            self.shared.registered.store(false, Ordering::Release);
            let mut state = self.shared.state.lock();
            self.shared.move_due(&mut state, None);
        }
        true
    }

    /// Whether the timer has ended a pass that read the clock at `time` or later.
    #[cfg(test)]
    fn timer_settled(&self, time: Instant) -> bool {
        self.shared
            .last_pass
            .lock()
            .is_some_and(|last| last >= time)
    }
}

impl<T> Shared<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// Takes the next ready item under the lock, and passes the wake-up on if more are ready.
    fn take(&self, state: &mut MutexGuard<'_, State<T>>) -> Option<items::Taken<T>> {
        let started_at = self.metrics.as_ref().map(|_| self.clock.now());
        let taken = state.items.take(started_at)?;
        if let Some(metrics) = &self.metrics {
            metrics.got(taken.priority);
        }
        if state.items.takeable() > 0 {
            self.wake_getter(state);
        }
        Some(taken)
    }

    /// What a getter returns, recording the latency outside the lock.
    fn hand_out(&self, taken: items::Taken<T>) -> (T, i32) {
        if let Some(metrics) = &self.metrics {
            metrics.work.waited(taken.ready_since, self.clock.now());
        }
        (taken.item, taken.priority)
    }

    /// Wakes one waiting getter of each kind: an item is ready. A woken getter that takes an
    /// item and sees more wakes the next, so a batch made ready at once needs one call.
    fn wake_getter(&self, state: &State<T>) {
        if state.sleepers > 0 {
            self.item_ready.notify_one();
        }
        if state.async_waiters > 0 {
            self.item_ready_async.notify_one();
        }
    }

    /// Makes the delayed items due at `now` (all with `None`) ready, and wakes a getter.
    fn move_due(&self, state: &mut State<T>, now: Option<Instant>) {
        let (priorities, takeable) = state.items.move_due(now);
        if let Some(metrics) = &self.metrics {
            for priority in priorities {
                metrics.added(priority);
            }
        }
        if takeable > 0 {
            self.wake_getter(state);
        }
    }

    /// An add refused after shutdown began: a delayed one is counted as dropped.
    fn refuse(&self, opts: &AddOpts) {
        if (opts.rate_limited || !opts.after.is_zero())
            && let Some(metrics) = &self.metrics
        {
            metrics.dropped_delayed.inc();
        }
    }

    /// Shuts down (and, with `drain`, starts a drain; without, cuts a drain short).
    fn close(&self, drain: bool) {
        let dropped = {
            let mut state = self.state.lock();
            state.shutting_down = true;
            self.closed.store(true, Ordering::Release);
            state.draining = drain;
            state.items.drop_waiting()
        };
        self.item_ready.notify_all();
        self.item_ready_async.notify_waiters();
        if !drain {
            self.drained.notify_all();
            self.drained_async.notify_waiters();
        }
        // The timer forgets the queue: no delayed item is left, and metrics stop at shutdown.
        self.alarm.stop();
        if dropped > 0 {
            tracing::info!(
                queue = %self.name,
                dropped,
                "work queue shut down; dropped the items still waiting for their delay"
            );
            if let Some(metrics) = &self.metrics {
                for _ in 0..dropped {
                    metrics.dropped_delayed.inc();
                }
            }
        }
    }
}

impl<T> TimerTask for Shared<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// Makes the due items ready, refreshes the unfinished-work gauges when due, and says when
    /// to come back.
    fn pass(&self) -> Next {
        let now = self.clock.now();
        let next = {
            let mut state = self.state.lock();
            if state.shutting_down {
                Next::Stop
            } else {
                self.move_due(&mut state, Some(now));
                if let (Some(metrics), Some(period), Some(due)) = (
                    &self.metrics,
                    self.metrics_period,
                    state.next_metrics_update,
                ) && due <= now
                {
                    metrics
                        .work
                        .update_unfinished_work(now, state.items.started_times());
                    state.next_metrics_update = now.checked_add(period);
                }
                let next = [state.items.next_due(), state.next_metrics_update]
                    .into_iter()
                    .flatten()
                    .min();
                Next::At {
                    clock: next,
                    real: None,
                }
            }
        };
        #[cfg(test)]
        {
            *self.last_pass.lock() = Some(now);
        }
        next
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        self.alarm.stop();
    }
}

/// Takes a cancelled async getter out of the count of waiters.
struct AsyncWaiter<'a, T> {
    state: &'a Mutex<State<T>>,
    counted: bool,
}

impl<T> Drop for AsyncWaiter<'_, T> {
    fn drop(&mut self) {
        if self.counted {
            self.state.lock().async_waiters -= 1;
        }
    }
}

impl<T> Default for PriorityQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn default() -> Self {
        PriorityQueue::new()
    }
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        PriorityQueue {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for PriorityQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("PriorityQueue")
            .field("name", &self.shared.name)
            .field("len", &state.items.len())
            .field("waiting_len", &state.items.waiting_len())
            .field("processing", &state.items.processing())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

#[cfg(test)]
mod tests;
