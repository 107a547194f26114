//! [`Queue`]: the plain work queue (client-go's `workqueue.Typed`), fair and stingy, consumed by
//! worker threads with [`get_blocking`](Queue::get_blocking) or by tokio tasks with
//! [`get`](Queue::get).

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use crate::config::QueueConfig;
use crate::core::{Core, TryGetError};

/// A work queue: items wait in FIFO order, each at most once, and no item is handed to two
/// workers at once. See the [crate documentation](crate) for the guarantees.
///
/// Clones are handles to the same queue. Workers loop on [`get_blocking`](Queue::get_blocking)
/// (threads) or [`get`](Queue::get) (tokio tasks), process the item, and call
/// [`done`](Queue::done).
///
/// The queue keeps a clone of each item it knows. It drops the clone of an item done (and not
/// added since) with the next few items done beside it rather than at once: a busy queue keeps
/// fewer than 16 such clones in each of its 256 shards, and a `done` that finds nothing waiting
/// drops those of its item's shard. Items are usually small keys; a large item belongs behind an
/// `Arc`.
///
/// ```
/// use kclient_workqueue::Queue;
///
/// let queue = Queue::new();
/// queue.add("default/a");
/// queue.add("default/b");
/// queue.add("default/a"); // already waiting: nothing happens
/// assert_eq!(queue.len(), 2);
///
/// let item = queue.get_blocking().unwrap();
/// assert_eq!(item, "default/a");
/// queue.add("default/a"); // being processed: queued again after done
/// assert_eq!(queue.len(), 1);
/// queue.done(&item);
/// assert_eq!(queue.len(), 2);
///
/// queue.shut_down();
/// assert_eq!(queue.get_blocking(), Some("default/b")); // what is left is still handed out
/// # queue.done(&"default/b");
/// # assert_eq!(queue.get_blocking(), Some("default/a"));
/// # assert_eq!(queue.get_blocking(), None);
/// ```
pub struct Queue<T> {
    pub(crate) core: Arc<Core<T>>,
}

impl<T> Queue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// An unnamed queue on the real clock.
    pub fn new() -> Self {
        Queue::with_config(QueueConfig::new())
    }

    /// A queue with the name, clock and metrics provider of `config` (its rate limiter is not
    /// used).
    pub fn with_config(config: QueueConfig<T>) -> Self {
        let (core, _) = config.into_parts();
        Queue {
            core: Core::new(core),
        }
    }

    /// Marks `item` as needing processing. Does nothing if it already waits, or once the queue is
    /// shutting down. If a worker holds it now, it is queued again when that worker calls
    /// [`done`](Queue::done).
    ///
    /// Called outside a tokio runtime's context, `add` may yield its thread's core
    /// (`std::thread::yield_now`, at most once per 50 us) when a wake-up sent to a waiting getter
    /// (by an add, a `done`, another getter or the timer) has waited at least 50 us for that
    /// getter to run: with more busy threads than cores, that is how the woken getter gets one
    /// (the crate's design notes, "Waking"). The same holds for `add_after` and
    /// `add_rate_limited` with no delay, which add at once. Inside a runtime's context it never
    /// yields.
    pub fn add(&self, item: T) {
        self.core.add(item);
    }

    /// The number of items waiting (not counting those being processed). For information only:
    /// it may change before you act on it.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether no item waits now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits, without blocking the thread, until an item is ready and returns it; the caller
    /// must pass it to [`done`](Queue::done) when finished. Returns `None` once the queue is
    /// shut down and empty: the worker should then stop. Cancel-safe: dropping the future
    /// before it completes loses no item.
    ///
    /// Each item taken spends a unit of tokio's cooperative budget, as receiving from one of
    /// tokio's channels does: a worker whose items are always ready still lets the other tasks
    /// on its thread run every so often. That budget counts items, not time: a worker task that
    /// computes for long on each item holds its thread for up to 128 items at a time, and tasks
    /// that add on the same runtime get few turns between. A task that adds and the worker it
    /// wakes can even take turns on one runtime thread while another stays idle: tokio runs a
    /// task woken from a runtime thread next on that thread, where idle threads cannot steal it
    /// (tokio issue 4941). Repeated adds of a key then seldom find it still waiting and merge
    /// less than they would (`bench/RESULTS.md`, "Merging when the workers work"). Work that
    /// computes for long belongs on worker threads ([`get_blocking`](Queue::get_blocking)) or
    /// in `spawn_blocking`.
    pub async fn get(&self) -> Option<T> {
        self.core.get().await
    }

    /// [`get`](Queue::get), blocking the thread until an item is ready: for workers on threads
    /// of their own, as client-go's `Get`.
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where it would hang; the
    /// message says to await [`get`](Queue::get) instead.
    pub fn get_blocking(&self) -> Option<T> {
        kclient_flowcontrol::assert_can_block("Queue::get_blocking", "Queue::get().await");
        self.core.get_blocking()
    }

    /// Returns a ready item at once, or says why there is none. Same contract as
    /// [`get`](Queue::get) for the returned item.
    pub fn try_get(&self) -> Result<T, TryGetError> {
        self.core.try_get()
    }

    /// Marks `item` as finished. If it was added again while being processed, it goes back at
    /// the end of the queue. Calling it for an item the caller did not get does nothing.
    pub fn done(&self, item: &T) {
        self.core.done(item);
    }

    /// Starts shutting down: later adds are ignored; getters receive what is still waiting and
    /// then `None`. Also cuts short a [`shut_down_with_drain_blocking`](Queue::shut_down_with_drain_blocking)
    /// still waiting. Items waiting for a delay (a [`DelayingQueue`](crate::DelayingQueue)'s) are
    /// dropped, as in client-go, and counted: an INFO log line and the dropped-delayed metric;
    /// [`shut_down_with_drain_delayed_blocking`](crate::DelayingQueue::shut_down_with_drain_delayed_blocking) keeps
    /// them.
    pub fn shut_down(&self) {
        self.core.shut_down();
    }

    /// Shuts down like [`shut_down`](Queue::shut_down), then waits until no item is being
    /// processed: every item handed out has been passed to [`done`](Queue::done). Workers must
    /// call it, or this waits forever; a later `shut_down` stops the wait (an earlier one does
    /// not: the drain asked for is still waited for).
    ///
    /// As in client-go, it waits for the processing set only: an item that was added again
    /// while processing goes back into the queue at `done` and is still handed out to the
    /// workers, but the drain may return before they get it.
    pub async fn shut_down_with_drain(&self) {
        self.core.shut_down_with_drain().await;
    }

    /// [`shut_down_with_drain`](Queue::shut_down_with_drain), blocking the thread (client-go's
    /// `ShutDownWithDrain`).
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where the workers could never
    /// finish; the message says to await [`shut_down_with_drain`](Queue::shut_down_with_drain)
    /// instead.
    pub fn shut_down_with_drain_blocking(&self) {
        kclient_flowcontrol::assert_can_block(
            "Queue::shut_down_with_drain_blocking",
            "Queue::shut_down_with_drain().await",
        );
        self.core.shut_down_with_drain_blocking();
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.core.shutting_down()
    }

    /// The queue's name (empty when unnamed).
    pub fn name(&self) -> &str {
        self.core.name()
    }
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            core: self.core.clone(),
        }
    }
}

impl<T> Default for Queue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn default() -> Self {
        Queue::new()
    }
}

impl<T> fmt::Debug for Queue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.name())
            .field("len", &self.len())
            .field("shutting_down", &self.shutting_down())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::thread;
    use std::time::{Duration, Instant};

    /// The message of the panic `f` raises on a thread of its own, if it panics.
    fn panic_message(f: impl FnOnce() + Send) -> Option<String> {
        thread::scope(|s| s.spawn(f).join())
            .err()
            .map(|payload| crate::workers::tests::panic_text(&*payload))
    }

    /// Called on a current-thread runtime's own thread, the blocking forms would wait for
    /// tasks that cannot run: they panic, naming the async form, instead of hanging. On a
    /// `spawn_blocking` thread of the same runtime they work.
    #[test]
    fn blocking_forms_refuse_a_current_thread_runtime_instead_of_hanging() {
        let queue: Queue<u8> = Queue::new();
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
        };
        let drain = panic_message(|| {
            runtime().block_on(async { queue.shut_down_with_drain_blocking() });
        })
        .expect("shut_down_with_drain_blocking must refuse to hang");
        assert!(
            drain.contains("Queue::shut_down_with_drain_blocking blocks the thread")
                && drain.contains("Await Queue::shut_down_with_drain().await instead"),
            "{drain}"
        );
        let get = panic_message(|| {
            runtime().block_on(async { queue.get_blocking() });
        })
        .expect("get_blocking must refuse to hang");
        assert!(get.contains("Await Queue::get().await instead"), "{get}");

        queue.add(7);
        let from_blocking_thread = runtime().block_on(async {
            let queue = queue.clone();
            tokio::task::spawn_blocking(move || {
                let item = queue.get_blocking();
                queue.done(&7);
                queue.shut_down_with_drain_blocking();
                item
            })
            .await
            .unwrap()
        });
        assert_eq!(from_blocking_thread, Some(7));
    }

    /// Waits (in real time, bounded) until `condition` holds.
    fn eventually(what: &str, condition: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !condition() {
            assert!(Instant::now() < deadline, "timed out waiting until {what}");
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn many_producers_and_consumers_see_every_item() {
        let queue = Queue::<usize>::new();
        let producers = 50;
        let consumers = 10;
        let taken = Mutex::new(Vec::new());
        thread::scope(|s| {
            for p in 0..producers {
                let queue = &queue;
                s.spawn(move || {
                    for i in 0..50 {
                        queue.add(p * 1000 + i);
                        thread::sleep(Duration::from_micros(50));
                    }
                });
            }
            let workers: Vec<_> = (0..consumers)
                .map(|_| {
                    s.spawn(|| {
                        while let Some(item) = queue.get_blocking() {
                            taken.lock().unwrap().push(item);
                            queue.done(&item);
                        }
                    })
                })
                .collect();
            eventually("every item is taken", || {
                taken.lock().unwrap().len() == producers * 50
            });
            queue.shut_down();
            for worker in workers {
                worker.join().unwrap();
            }
        });
        let mut taken = taken.into_inner().unwrap();
        taken.sort_unstable();
        taken.dedup();
        assert_eq!(taken.len(), producers * 50);
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn add_while_processing_queues_again_after_done() {
        let queue = Queue::new();
        queue.add("foo");
        let item = queue.get_blocking().unwrap();
        queue.add("foo");
        queue.add("foo");
        // Not handed to a second worker while the first holds it.
        assert_eq!(queue.try_get(), Err(TryGetError::Empty));
        assert_eq!(queue.len(), 0);
        queue.done(&item);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get_blocking(), Some("foo"));
        queue.done(&"foo");
        assert_eq!(queue.try_get(), Err(TryGetError::Empty));
    }

    #[test]
    fn add_while_processing_never_runs_an_item_twice_at_once() {
        let queue = Queue::<u32>::new();
        let running = AtomicUsize::new(0);
        let passes = AtomicUsize::new(0);
        thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        while let Some(item) = queue.get_blocking() {
                            assert_eq!(
                                running.fetch_add(1, Ordering::SeqCst),
                                0,
                                "item {item} twice at once"
                            );
                            thread::sleep(Duration::from_micros(200));
                            running.fetch_sub(1, Ordering::SeqCst);
                            passes.fetch_add(1, Ordering::SeqCst);
                            queue.done(&item);
                        }
                    })
                })
                .collect();
            for _ in 0..200 {
                queue.add(7);
                thread::sleep(Duration::from_micros(50));
            }
            queue.shut_down_with_drain_blocking();
            for worker in workers {
                worker.join().unwrap();
            }
        });
        assert!(passes.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn len_counts_waiting_items() {
        let queue = Queue::new();
        assert!(queue.is_empty());
        queue.add("foo");
        assert_eq!(queue.len(), 1);
        queue.add("bar");
        assert_eq!(queue.len(), 2);
        queue.add("foo"); // stingy
        assert_eq!(queue.len(), 2);
    }

    #[test]
    fn reinsert_after_done_is_served_again() {
        let queue = Queue::new();
        queue.add("foo");
        let item = queue.get_blocking().unwrap();
        queue.add(item);
        queue.done(&item);
        assert_eq!(queue.get_blocking(), Some("foo"));
        queue.done(&"foo");
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn collapse_keeps_one_copy_in_fifo_order() {
        let queue = Queue::new();
        queue.add("bar");
        queue.add("baz");
        queue.add("bar");
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get_blocking(), Some("bar"));
        assert_eq!(queue.get_blocking(), Some("baz"));
    }

    #[test]
    fn collapse_while_processing() {
        let queue = Queue::new();
        queue.add(1);
        let first = queue.get_blocking().unwrap();
        queue.add(1);
        queue.add(2);
        queue.add(1);
        queue.add(2);
        // Item 2 waits; item 1 waits for its done.
        assert_eq!(queue.len(), 1);
        queue.done(&first);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get_blocking(), Some(2));
        assert_eq!(queue.get_blocking(), Some(1));
    }

    #[test]
    fn done_without_get_is_ignored() {
        let queue = Queue::new();
        queue.add("a");
        queue.done(&"a");
        queue.done(&"never-added");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get_blocking(), Some("a"));
        queue.done(&"a");
        assert_eq!(queue.try_get(), Err(TryGetError::Empty));
    }

    #[test]
    fn shut_down_drains_then_reports_and_ignores_adds() {
        let queue = Queue::new();
        queue.add(1);
        queue.add(2);
        queue.shut_down();
        assert!(queue.shutting_down());
        queue.add(3);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get_blocking(), Some(1));
        assert_eq!(queue.get_blocking(), Some(2));
        assert_eq!(queue.get_blocking(), None);
        assert_eq!(queue.try_get(), Err(TryGetError::ShutDown));
    }

    /// An item whose first hash waits until the test opens its gate: it holds an `add` just
    /// after the add has checked that the queue is not shutting down.
    #[derive(Clone)]
    struct Gated {
        key: u32,
        gate: Arc<(Mutex<(bool, bool)>, std::sync::Condvar)>,
    }

    impl Gated {
        fn new(key: u32) -> Self {
            Gated {
                key,
                gate: Arc::default(),
            }
        }

        /// Waits until an add is held at the gate.
        fn wait_held(&self) {
            let (lock, changed) = &*self.gate;
            let _held = changed
                .wait_while(lock.lock().unwrap(), |(held, _)| !*held)
                .unwrap();
        }

        fn open(&self) {
            let (lock, changed) = &*self.gate;
            lock.lock().unwrap().1 = true;
            changed.notify_all();
        }
    }

    impl PartialEq for Gated {
        fn eq(&self, other: &Self) -> bool {
            self.key == other.key
        }
    }
    impl Eq for Gated {}

    impl Hash for Gated {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            let (lock, changed) = &*self.gate;
            let mut gate = lock.lock().unwrap();
            if !gate.0 {
                gate.0 = true;
                changed.notify_all();
                let _open = changed.wait_while(gate, |(_, open)| !*open).unwrap();
            }
            self.key.hash(state);
        }
    }

    /// An add that began before shutdown and queues its item after a getter saw the end is
    /// ignored, as an add after shutdown is: `None` stays the last word of the queue.
    #[test]
    fn an_add_racing_shutdown_never_queues_after_a_getter_saw_the_end() {
        let queue = Queue::new();
        let item = Gated::new(1);
        thread::scope(|s| {
            let producer = s.spawn(|| queue.add(item.clone()));
            item.wait_held();
            queue.shut_down();
            assert!(queue.get_blocking().is_none());
            item.open();
            producer.join().unwrap();
        });
        assert_eq!(queue.len(), 0, "queued after a getter saw the end");
        assert_eq!(queue.try_get().err(), Some(TryGetError::ShutDown));
    }

    #[test]
    fn shut_down_wakes_blocked_getters() {
        let queue = Queue::<u8>::new();
        thread::scope(|s| {
            let getters: Vec<_> = (0..3).map(|_| s.spawn(|| queue.get_blocking())).collect();
            thread::sleep(Duration::from_millis(20));
            queue.shut_down();
            for getter in getters {
                assert_eq!(getter.join().unwrap(), None);
            }
        });
    }

    #[test]
    fn dirty_item_still_processed_after_shut_down() {
        let queue = Queue::new();
        queue.add("a");
        let item = queue.get_blocking().unwrap();
        queue.add("a");
        queue.shut_down();
        queue.done(&item);
        assert_eq!(queue.get_blocking(), Some("a"));
        queue.done(&"a");
        assert_eq!(queue.get_blocking(), None);
    }

    #[test]
    fn shut_down_with_drain_waits_for_processing() {
        let queue = Queue::new();
        queue.add("foo");
        queue.add("bar");
        let first = queue.get_blocking().unwrap();
        let second = queue.get_blocking().unwrap();
        let finished = AtomicUsize::new(0);
        thread::scope(|s| {
            let drainer = s.spawn(|| {
                queue.shut_down_with_drain_blocking();
                finished.load(Ordering::SeqCst)
            });
            thread::sleep(Duration::from_millis(20));
            assert!(
                !drainer.is_finished(),
                "returned while items were processing"
            );
            finished.fetch_add(1, Ordering::SeqCst);
            queue.done(&first);
            thread::sleep(Duration::from_millis(20));
            assert!(
                !drainer.is_finished(),
                "returned while one item was processing"
            );
            finished.fetch_add(1, Ordering::SeqCst);
            queue.done(&second);
            assert_eq!(drainer.join().unwrap(), 2);
        });
        assert_eq!(queue.get_blocking(), None);
    }

    #[test]
    fn shut_down_with_drain_with_dirty_item_hands_out_its_second_pass() {
        let queue = Queue::new();
        queue.add("foo");
        let item = queue.get_blocking().unwrap();
        queue.add("foo");
        thread::scope(|s| {
            let drainer = s.spawn(|| queue.shut_down_with_drain_blocking());
            eventually("shutting down", || queue.shutting_down());
            thread::sleep(Duration::from_millis(10));
            assert!(
                !drainer.is_finished(),
                "returned while an item was processing"
            );
            queue.done(&item);
            // The dirty item went back into the queue: shutdown still hands it out.
            let again = queue.get_blocking().unwrap();
            assert_eq!(again, "foo");
            queue.done(&again);
            drainer.join().unwrap();
        });
        assert_eq!(queue.get_blocking(), None);
    }

    #[test]
    fn shut_down_with_drain_on_idle_queue_returns_at_once() {
        let queue = Queue::<u8>::new();
        queue.shut_down_with_drain_blocking();
        assert!(queue.shutting_down());
    }

    #[test]
    fn shut_down_forces_a_waiting_drain() {
        let queue = Queue::new();
        queue.add("foo");
        let _held = queue.get_blocking().unwrap();
        thread::scope(|s| {
            let drainer = s.spawn(|| queue.shut_down_with_drain_blocking());
            // The drain must have begun: a drain that begins after `shut_down` waits for the
            // held item as any drain does.
            eventually("the drain to begin", || queue.shutting_down());
            thread::sleep(Duration::from_millis(20));
            assert!(!drainer.is_finished(), "the drain returned before done");
            queue.shut_down();
            drainer.join().unwrap();
        });
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_getters_and_blocking_getters_share_a_queue() {
        let queue = Queue::<u32>::new();
        let total = 2000;
        let async_seen = Arc::new(AtomicUsize::new(0));
        let blocking_seen = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let (queue, seen) = (queue.clone(), async_seen.clone());
            tasks.push(tokio::spawn(async move {
                while let Some(item) = queue.get().await {
                    seen.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    queue.done(&item);
                }
            }));
        }
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (queue, seen) = (queue.clone(), blocking_seen.clone());
                thread::spawn(move || {
                    while let Some(item) = queue.get_blocking() {
                        seen.fetch_add(1, Ordering::SeqCst);
                        queue.done(&item);
                    }
                })
            })
            .collect();
        for item in 0..total {
            queue.add(item);
            if item % 100 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        queue.shut_down_with_drain().await;
        for task in tasks {
            task.await.unwrap();
        }
        for thread in threads {
            thread.join().unwrap();
        }
        let seen = async_seen.load(Ordering::SeqCst) + blocking_seen.load(Ordering::SeqCst);
        assert_eq!(seen, total as usize);
    }

    #[tokio::test]
    async fn get_waits_for_an_add_and_is_cancel_safe() {
        let queue = Queue::<&str>::new();
        // A cancelled getter loses nothing.
        let timed_out = tokio::time::timeout(Duration::from_millis(10), queue.get()).await;
        assert!(timed_out.is_err());
        let getter = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.get().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        queue.add("x");
        assert_eq!(getter.await.unwrap(), Some("x"));
        queue.done(&"x");
        queue.shut_down();
        assert_eq!(queue.get().await, None);
    }

    #[tokio::test]
    async fn a_worker_with_items_always_ready_lets_other_tasks_run() {
        // One thread, a worker that re-adds every item it finishes, so the queue never runs
        // dry and `get` never has to wait (with no merge window: keys that come back this fast
        // would otherwise be held). The task spawned beside it must still get a turn.
        let queue = with_window::<u32>(Duration::ZERO);
        for item in 0..10 {
            queue.add(item);
        }
        let taken = Arc::new(AtomicUsize::new(0));
        let other_ran_at = {
            let taken = taken.clone();
            tokio::spawn(async move { taken.load(Ordering::SeqCst) })
        };
        let limit = 100_000;
        while let Some(item) = queue.get().await {
            queue.done(&item);
            if taken.fetch_add(1, Ordering::SeqCst) + 1 == limit {
                break;
            }
            queue.add(item);
        }
        assert!(
            other_ran_at.is_finished(),
            "the other task never ran during {limit} gets"
        );
        let at = other_ran_at.await.unwrap();
        // tokio's budget is 128 units per turn of a task.
        assert!(at <= 128, "the other task first ran after {at} gets");
    }

    #[tokio::test]
    async fn async_drain_waits_for_done() {
        let queue = Queue::new();
        queue.add(1);
        let item = queue.get().await.unwrap();
        let drain = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.shut_down_with_drain().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!drain.is_finished());
        queue.done(&item);
        tokio::time::timeout(Duration::from_secs(10), drain)
            .await
            .expect("drain finished")
            .unwrap();
    }

    /// A finished item is dropped at once when nothing waits (while other items wait, with a
    /// batch: `core`'s tests).
    #[test]
    fn finished_items_are_not_retained() {
        let item = Arc::new("key");
        let queue = Queue::new();
        queue.add(item.clone());
        let got = queue.get_blocking().unwrap();
        queue.done(&got);
        drop(got);
        assert_eq!(
            Arc::strong_count(&item),
            1,
            "the queue kept a finished item"
        );
    }

    #[test]
    fn dropping_every_handle_frees_the_items() {
        let item = Arc::new(5);
        let queue = Queue::new();
        queue.add(item.clone());
        drop(queue);
        assert_eq!(Arc::strong_count(&item), 1);
    }

    /// A queue with the given merge window.
    fn with_window<T: Clone + Eq + Hash + Send + 'static>(window: Duration) -> Queue<T> {
        Queue::with_config(QueueConfig::new().merge_window(window))
    }

    /// A queue with the given merge window that holds the items queued next (`begin_hold`).
    fn holding_queue(window: Duration) -> Queue<&'static str> {
        let queue = with_window(window);
        begin_hold(&queue);
        queue
    }

    /// Makes a key come back (an add merges into it) and the FIFO run dry after it: the queue
    /// then holds the items queued next.
    fn begin_hold(queue: &Queue<&'static str>) {
        queue.add("warm");
        queue.add("warm");
        assert_eq!(queue.try_get(), Ok("warm"), "the add merged, one item");
        queue.done(&"warm");
    }

    #[test]
    fn once_a_key_came_back_items_wait_the_merge_window_and_adds_merge_into_them() {
        let window = Duration::from_millis(200);
        let queue = holding_queue(window);
        let queued_at = Instant::now();
        // Held items still merge: four adds, two items.
        for item in ["b", "c", "b", "c"] {
            queue.add(item);
        }
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get_blocking(), Some("b"));
        let waited = queued_at.elapsed();
        assert!(
            waited >= window,
            "handed out after {waited:?}, within the window"
        );
        // "c" was queued with "b" and goes out with it.
        let after = Instant::now();
        assert_eq!(queue.get_blocking(), Some("c"));
        assert!(
            after.elapsed() < window,
            "the second item waited {:?}",
            after.elapsed()
        );
    }

    #[test]
    fn holding_stops_once_keys_stop_coming_back() {
        let window = Duration::from_millis(200);
        let queue = holding_queue(window);
        // Queued while the queue holds: waits.
        let waited = add_then_get(&queue, "x");
        assert!(waited >= window, "x waited {waited:?}, within the window");
        queue.done(&"x");
        // The FIFO ran dry with no key back since it last did: the next item goes out at once.
        let waited = add_then_get(&queue, "y");
        assert!(waited < window, "y waited {waited:?}");
    }

    /// Adds `item` and gets it; returns how long that took.
    fn add_then_get(queue: &Queue<&'static str>, item: &'static str) -> Duration {
        let start = Instant::now();
        queue.add(item);
        assert_eq!(queue.get_blocking(), Some(item));
        start.elapsed()
    }

    #[test]
    fn the_timer_wakes_a_parked_getter_when_the_hold_ends() {
        let window = Duration::from_millis(100);
        let queue = holding_queue(window);
        let worker = {
            let queue = queue.clone();
            thread::spawn(move || (queue.get_blocking(), Instant::now()))
        };
        // The worker parks on the empty queue; the add finds it idle under the hold and asks the
        // timer to end the hold.
        thread::sleep(Duration::from_millis(20));
        assert!(!worker.is_finished());
        let queued_at = Instant::now();
        queue.add("b");
        let (item, got_at) = worker.join().unwrap();
        assert_eq!(item, Some("b"));
        let waited = got_at.duration_since(queued_at);
        assert!(
            waited >= window,
            "handed out after {waited:?}, within the window"
        );
        queue.shut_down();
    }

    #[test]
    fn keys_that_do_not_come_back_are_never_held() {
        let queue = with_window::<u32>(Duration::from_secs(5));
        let start = Instant::now();
        for item in 0..200 {
            queue.add(item);
            assert_eq!(queue.get_blocking(), Some(item));
            queue.done(&item);
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "a get waited for a hold"
        );
    }

    #[test]
    fn a_zero_merge_window_never_holds() {
        let queue = with_window(Duration::ZERO);
        let start = Instant::now();
        for _ in 0..2_000 {
            queue.add("a");
            queue.add("a");
            assert_eq!(queue.get_blocking(), Some("a"));
            queue.done(&"a");
        }
        // 2,000 holds of the default window would take 1 s; with none this takes a few
        // milliseconds, which leaves room for a loaded machine to preempt the test.
        assert!(
            start.elapsed() < Duration::from_millis(500),
            "took {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn try_get_does_not_wait_for_a_hold() {
        let queue = holding_queue(Duration::from_secs(60));
        queue.add("b");
        assert_eq!(queue.try_get(), Ok("b"));
        queue.done(&"b");
    }

    #[test]
    fn shut_down_hands_held_items_out_at_once() {
        let queue = holding_queue(Duration::from_secs(60));
        queue.add("b");
        let getter = {
            let queue = queue.clone();
            thread::spawn(move || {
                let item = queue.get_blocking();
                if let Some(item) = item {
                    queue.done(&item);
                }
                item
            })
        };
        thread::sleep(Duration::from_millis(20));
        assert!(
            !getter.is_finished(),
            "the getter did not wait for the hold"
        );
        let start = Instant::now();
        queue.shut_down_with_drain_blocking();
        assert_eq!(getter.join().unwrap(), Some("b"));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_async_getter_waits_out_a_hold() {
        let window = Duration::from_millis(100);
        let queue = with_window(window);
        let held_from = Instant::now();
        begin_hold(&queue);
        queue.add("b");
        queue.add("b");
        assert_eq!(queue.get().await, Some("b"));
        let waited = held_from.elapsed();
        assert!(
            waited >= window,
            "handed out after {waited:?}, within the window"
        );
        queue.done(&"b");
        // A task that waits before anything is held is woken when the hold ends.
        begin_hold(&queue);
        let getter = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.get().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        let added_at = Instant::now();
        queue.add("c");
        assert_eq!(getter.await.unwrap(), Some("c"));
        assert!(added_at.elapsed() >= window / 2, "c was not held");
        queue.shut_down();
    }
}
