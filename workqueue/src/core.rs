//! The one engine behind [`Queue`](crate::Queue), [`DelayingQueue`](crate::DelayingQueue) and
//! [`RateLimitingQueue`](crate::RateLimitingQueue): a FIFO with a dirty set and a processing set,
//! plus the heap of items waiting for their ready time, all driven by at most one background
//! thread per queue.
//!
//! # State
//!
//! `State` sits behind one mutex (parking_lot's; loom's in the model tests, see `sync.rs`). Every item the queue knows is a key of `items`,
//! whose `Entry` says whether it is *dirty* (needs processing) and whether it is *processing* (a
//! worker holds it). The FIFO `queue` holds exactly the items that are dirty and not processing,
//! each once. From that:
//!
//! - add of a dirty item does nothing (stingy);
//! - add of a processing item only marks it dirty; `done` puts it back at the end of the FIFO, so
//!   no item is held by two workers at once;
//! - an entry that is neither dirty nor processing is removed, so memory follows the live items.
//!
//! # Waking
//!
//! Blocking getters wait on a condvar; async getters wait on a `tokio::sync::Notify`. Each item
//! put in the FIFO wakes one waiter of each kind (a kind with nobody waiting costs an atomic), so
//! a queue can be consumed by threads and tasks at once. A woken getter takes an item under the
//! lock or, finding none, waits again. The lock is never held across an `.await`: the async path
//! registers with the `Notify` first, then looks at the state under the lock, then drops the lock
//! and awaits, so a wake-up between the look and the await is not lost.
//!
//! # The timer thread
//!
//! Items given to `add_after` wait in a min-heap keyed by ready time (`Waiting`), with a map
//! from item to its live heap entry so that a second `add_after` of the same item keeps the earlier
//! ready time. One thread per queue, started on the first delayed add (or at once when the queue
//! has metrics), sleeps on an [`Alarm`] until the earliest ready time, moves every ready item into
//! the FIFO, refreshes the unfinished-work gauges, and sleeps again. It holds the core weakly, so
//! dropping the last queue handle ends it, as does shutdown.
//!
//! Lock order: the heap's lock before the state's (the timer moves ready items holding both);
//! nothing takes them the other way round, and no lock is held while a getter is woken.

use std::cmp::Ordering as CmpOrdering;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::Hash;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::clock::{Alarm, Clock};
use crate::metrics::{CounterMetric, MetricsProvider, QueueMetrics};
use crate::sync::{Condvar, Mutex};

/// The longest the timer thread sleeps without looking at the heap, client-go's `maxWait`
/// heartbeat: insurance against a clock that misbehaves.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// Why [`try_get`](crate::Queue::try_get) returned no item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TryGetError {
    /// No item is waiting now; one may come later.
    Empty,
    /// The queue is shut down and has no item left: no item will come.
    ShutDown,
}

impl std::fmt::Display for TryGetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TryGetError::Empty => "work queue is empty",
            TryGetError::ShutDown => "work queue is shut down",
        })
    }
}

impl std::error::Error for TryGetError {}

/// How the core is built (the parts of a `QueueConfig` it needs).
pub(crate) struct CoreConfig {
    pub(crate) name: String,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) metrics_provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) unfinished_work_update_period: Duration,
}

pub(crate) struct Core<T> {
    state: Mutex<State<T>>,
    /// Blocking getters wait here.
    item_ready: Condvar,
    /// Async getters wait here.
    item_ready_async: Notify,
    /// `shut_down_with_drain` waits here for the processing set to empty.
    drained: Condvar,
    drained_async: Notify,
    clock: Arc<dyn Clock>,
    name: String,
    retries: Option<Box<dyn CounterMetric>>,
    timer: Timer<T>,
}

struct State<T> {
    /// Dirty, not processing items, in the order they will be handed out.
    queue: VecDeque<T>,
    /// Every dirty or processing item.
    items: HashMap<T, Entry>,
    /// How many entries of `items` are processing.
    processing: usize,
    shutting_down: bool,
    /// Set by `shut_down_with_drain`, cleared by `shut_down` (which forces the drain to stop).
    drain: bool,
    metrics: Option<QueueMetrics>,
}

#[derive(Default)]
struct Entry {
    dirty: bool,
    processing: bool,
    /// When the item became dirty (metrics only).
    added_at: Option<Instant>,
    /// When a worker got the item (metrics only).
    started_at: Option<Instant>,
}

struct Timer<T> {
    alarm: Arc<Alarm>,
    waiting: Mutex<Waiting<T>>,
    /// The metrics refresh period, when the queue has metrics.
    metrics_period: Option<Duration>,
    /// Passes of the timer loop ended, and the clock reading the last one acted on: tests use
    /// them to know when the thread has acted on a step of a fake clock.
    passes_ended: AtomicU64,
    last_pass_time: parking_lot::Mutex<Option<Instant>>,
}

struct Waiting<T> {
    heap: BinaryHeap<WaitFor<T>>,
    /// The live heap entry of each waiting item, as (ready time, sequence number). Entries in
    /// the heap with another sequence number are stale and skipped when they surface.
    live: HashMap<T, (Instant, u64)>,
    next_seq: u64,
    thread_started: bool,
}

struct WaitFor<T> {
    ready_at: Instant,
    seq: u64,
    item: T,
}

// Ordered so that BinaryHeap (a max-heap) surfaces the earliest ready time first; the sequence
// number breaks ties in add order and makes the order total without asking anything of T.
impl<T> Ord for WaitFor<T> {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.ready_at, other.seq).cmp(&(self.ready_at, self.seq))
    }
}
impl<T> PartialOrd for WaitFor<T> {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl<T> PartialEq for WaitFor<T> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}
impl<T> Eq for WaitFor<T> {}

impl<T> Core<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    pub(crate) fn new(config: CoreConfig) -> Arc<Self> {
        let provider =
            crate::metrics::resolve_provider(&config.name, config.metrics_provider.as_ref());
        let metrics = provider
            .as_deref()
            .map(|p| QueueMetrics::new(p, &config.name));
        let retries = provider
            .as_deref()
            .map(|p| p.new_retries_metric(&config.name));
        let has_metrics = metrics.is_some();
        let core = Arc::new(Core {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                items: HashMap::new(),
                processing: 0,
                shutting_down: false,
                drain: false,
                metrics,
            }),
            item_ready: Condvar::new(),
            item_ready_async: Notify::new(),
            drained: Condvar::new(),
            drained_async: Notify::new(),
            clock: config.clock,
            name: config.name,
            retries,
            timer: Timer {
                alarm: Alarm::new(),
                waiting: Mutex::new(Waiting {
                    heap: BinaryHeap::new(),
                    live: HashMap::new(),
                    next_seq: 0,
                    thread_started: false,
                }),
                metrics_period: has_metrics.then_some(config.unfinished_work_update_period),
                passes_ended: AtomicU64::new(0),
                last_pass_time: parking_lot::Mutex::new(None),
            },
        });
        if has_metrics {
            core.start_timer();
        }
        core
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn metrics_now(&self, state: &State<T>) -> Option<Instant> {
        state.metrics.as_ref().map(|_| self.clock.now())
    }

    pub(crate) fn add(&self, item: T) {
        let queued = self.add_locked(&mut self.state.lock(), item);
        if queued {
            self.wake_one_getter();
        }
    }

    /// Adds under the caller's lock; returns whether the item went into the FIFO (and a getter
    /// should be woken).
    fn add_locked(&self, state: &mut State<T>, item: T) -> bool {
        if state.shutting_down {
            return false;
        }
        let now = self.metrics_now(state);
        let queued = match state.items.get_mut(&item) {
            // Already waiting, or already marked for another pass: stingy.
            Some(entry) if entry.dirty => return false,
            // Being processed: remember to run it again once `done`.
            Some(entry) => {
                entry.dirty = true;
                entry.added_at = entry.added_at.or(now);
                false
            }
            None => {
                state.queue.push_back(item.clone());
                let entry = Entry {
                    dirty: true,
                    added_at: now,
                    ..Entry::default()
                };
                state.items.insert(item, entry);
                true
            }
        };
        if let Some(metrics) = &state.metrics {
            metrics.added();
        }
        queued
    }

    fn wake_one_getter(&self) {
        self.item_ready.notify_one();
        self.item_ready_async.notify_one();
    }

    /// Takes the head of the FIFO into the processing set.
    fn pop(&self, state: &mut State<T>) -> Option<T> {
        let item = state.queue.pop_front()?;
        let now = self.metrics_now(state);
        if let Some(entry) = state.items.get_mut(&item) {
            entry.dirty = false;
            entry.processing = true;
            if let Some(metrics) = &state.metrics {
                // `now` is Some whenever metrics are.
                if let Some(now) = now {
                    metrics.got(now, entry.added_at.take());
                }
                entry.started_at = now;
            }
        }
        state.processing += 1;
        Some(item)
    }

    pub(crate) fn len(&self) -> usize {
        self.state.lock().queue.len()
    }

    pub(crate) fn try_get(&self) -> Result<T, TryGetError> {
        let mut state = self.state.lock();
        match self.pop(&mut state) {
            Some(item) => Ok(item),
            None if state.shutting_down => Err(TryGetError::ShutDown),
            None => Err(TryGetError::Empty),
        }
    }

    pub(crate) fn get(&self) -> Option<T> {
        let mut state = self.state.lock();
        loop {
            if let Some(item) = self.pop(&mut state) {
                return Some(item);
            }
            if state.shutting_down {
                return None;
            }
            state = self.item_ready.wait(state);
        }
    }

    pub(crate) async fn get_async(&self) -> Option<T> {
        loop {
            // Register before looking, so that an item queued after the look wakes us.
            let mut notified = pin!(self.item_ready_async.notified());
            notified.as_mut().enable();
            {
                let mut state = self.state.lock();
                if let Some(item) = self.pop(&mut state) {
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    pub(crate) fn done(&self, item: &T) {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let Some(entry) = state.items.get_mut(item) else {
            return;
        };
        if !entry.processing {
            // `done` without a `get`: nothing to finish.
            return;
        }
        entry.processing = false;
        state.processing -= 1;
        if let Some(metrics) = &state.metrics {
            metrics.done(self.clock.now(), entry.started_at.take());
        }
        let requeued = entry.dirty;
        if requeued {
            state.queue.push_back(item.clone());
        } else {
            state.items.remove(item);
        }
        let drained = state.processing == 0 && state.shutting_down;
        drop(guard);
        if requeued {
            self.wake_one_getter();
        }
        if drained {
            self.drained.notify_all();
            self.drained_async.notify_waiters();
        }
    }

    pub(crate) fn shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    fn begin_shutdown(&self, drain: bool) {
        {
            let mut state = self.state.lock();
            state.drain = drain;
            state.shutting_down = true;
        }
        self.item_ready.notify_all();
        self.item_ready_async.notify_waiters();
        self.drained.notify_all();
        self.drained_async.notify_waiters();
        self.timer.alarm.stop();
    }

    pub(crate) fn shut_down(&self) {
        self.begin_shutdown(false);
    }

    pub(crate) fn shut_down_with_drain(&self) {
        self.begin_shutdown(true);
        let mut state = self.state.lock();
        while state.processing > 0 && state.drain {
            state = self.drained.wait(state);
        }
    }

    pub(crate) async fn shut_down_with_drain_async(&self) {
        self.begin_shutdown(true);
        loop {
            let mut notified = pin!(self.drained_async.notified());
            notified.as_mut().enable();
            {
                let state = self.state.lock();
                if state.processing == 0 || !state.drain {
                    return;
                }
            }
            notified.await;
        }
    }

    pub(crate) fn add_after(self: &Arc<Self>, item: T, delay: Duration) {
        if self.shutting_down() {
            return;
        }
        if let Some(retries) = &self.retries {
            retries.inc();
        }
        if delay.is_zero() {
            self.add(item);
            return;
        }
        let Some(ready_at) = self.clock.now().checked_add(delay) else {
            // Later than any representable instant: the item would never be ready.
            return;
        };
        let (is_earliest, start) = {
            let mut waiting = self.timer.waiting.lock();
            let waiting = &mut *waiting;
            let seq = waiting.next_seq;
            match waiting.live.entry(item) {
                // A duplicate keeps the earlier ready time.
                MapEntry::Occupied(live) if live.get().0 <= ready_at => return,
                MapEntry::Occupied(mut live) => {
                    let item = live.key().clone();
                    live.insert((ready_at, seq));
                    waiting.heap.push(WaitFor {
                        ready_at,
                        seq,
                        item,
                    });
                }
                MapEntry::Vacant(vacant) => {
                    let item = vacant.key().clone();
                    vacant.insert((ready_at, seq));
                    waiting.heap.push(WaitFor {
                        ready_at,
                        seq,
                        item,
                    });
                }
            }
            waiting.next_seq += 1;
            let is_earliest = waiting.heap.peek().is_some_and(|head| head.seq == seq);
            (is_earliest, !waiting.thread_started)
        };
        if start {
            self.start_timer();
        } else if is_earliest {
            self.timer.alarm.ring();
        }
    }

    /// How many items wait for their ready time.
    pub(crate) fn waiting_len(&self) -> usize {
        self.timer.waiting.lock().live.len()
    }

    fn start_timer(self: &Arc<Self>) {
        let mut waiting = self.timer.waiting.lock();
        if waiting.thread_started {
            return;
        }
        let core = Arc::downgrade(self);
        let alarm = self.timer.alarm.clone();
        let clock = self.clock.clone();
        // Watch before the thread exists, so that a step right after this call wakes it.
        clock.watch(&alarm);
        // The metrics schedule starts now, not when the thread first runs.
        let first_metrics_update = self
            .timer
            .metrics_period
            .and_then(|period| self.clock.now().checked_add(period));
        let spawned = std::thread::Builder::new()
            .name(format!("workqueue-timer {}", self.name))
            .spawn(move || run_timer(core, alarm, clock, first_metrics_update));
        match spawned {
            Ok(_) => waiting.thread_started = true,
            Err(_) => {
                // No thread to wait with: rather than lose the waiting items, add them now. A
                // later delayed add tries to start the thread again.
                waiting.live.clear();
                let items: Vec<T> = waiting.heap.drain().map(|entry| entry.item).collect();
                drop(waiting);
                for item in items {
                    self.add(item);
                }
            }
        }
    }

    /// One pass of the timer loop: queue the ready items, refresh the metrics when due, and
    /// return when to look again (`Some(None)`: only when rung), or `None` to stop.
    fn timer_pass(&self, next_metrics_update: &mut Option<Instant>) -> Option<Option<Instant>> {
        if self.shutting_down() {
            return None;
        }
        let now = self.clock.now();
        let mut woken = 0;
        let next_ready = {
            let mut waiting = self.timer.waiting.lock();
            // Move the ready items while still holding the heap (lock order: waiting, then
            // state; nothing takes them the other way round), so that every item is always
            // visible in one of the two: `waiting_len() + len()` never misses one in transit.
            if waiting.heap.peek().is_some_and(|head| head.ready_at <= now) {
                let mut state = self.state.lock();
                while waiting.heap.peek().is_some_and(|head| head.ready_at <= now) {
                    let Some(head) = waiting.heap.pop() else {
                        break;
                    };
                    let live = waiting.live.get(&head.item);
                    if live.is_some_and(|live| live.1 == head.seq) {
                        waiting.live.remove(&head.item);
                        if self.add_locked(&mut state, head.item) {
                            woken += 1;
                        }
                    }
                }
            }
            waiting.heap.peek().map(|head| head.ready_at)
        };
        for _ in 0..woken {
            self.wake_one_getter();
        }
        if let (Some(period), Some(due)) = (self.timer.metrics_period, *next_metrics_update)
            && due <= now
        {
            self.update_unfinished_work(now);
            *next_metrics_update = now.checked_add(period);
        }
        let next = match (next_ready, *next_metrics_update) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        *self.timer.last_pass_time.lock() = Some(now);
        self.timer.passes_ended.fetch_add(1, Ordering::SeqCst);
        Some(next)
    }

    fn update_unfinished_work(&self, now: Instant) {
        let state = self.state.lock();
        if state.shutting_down {
            return;
        }
        if let Some(metrics) = &state.metrics {
            metrics.update_unfinished_work(now, state.items.values().filter_map(|e| e.started_at));
        }
    }

    /// How many passes the timer loop has ended.
    #[cfg(test)]
    pub(crate) fn timer_passes(&self) -> u64 {
        self.timer.passes_ended.load(Ordering::SeqCst)
    }

    /// Whether the timer loop has ended a pass that read the clock at `time` or later.
    #[cfg(test)]
    pub(crate) fn timer_settled(&self, time: Instant) -> bool {
        self.timer
            .last_pass_time
            .lock()
            .is_some_and(|last| last >= time)
    }
}

fn run_timer<T>(
    core: Weak<Core<T>>,
    alarm: Arc<Alarm>,
    clock: Arc<dyn Clock>,
    mut next_metrics_update: Option<Instant>,
) where
    T: Clone + Eq + Hash + Send + 'static,
{
    loop {
        let next = {
            // Hold the core only for the pass, so that dropping the last handle frees it.
            let Some(core) = core.upgrade() else { return };
            match core.timer_pass(&mut next_metrics_update) {
                Some(next) => next,
                None => return,
            }
        };
        if !alarm.sleep(&*clock, next, MAX_WAIT) {
            return;
        }
    }
}

impl<T> Drop for Core<T> {
    fn drop(&mut self) {
        self.timer.alarm.stop();
    }
}
