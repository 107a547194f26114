//! [`DelayingQueue`]: a [`Queue`] that can also add an item after a delay (client-go's
//! `TypedDelayingInterface`).

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::time::Duration;

use crate::config::QueueConfig;
use crate::queue::Queue;

/// A [`Queue`] with [`add_after`](DelayingQueue::add_after), so that failed items can be retried
/// later without a hot loop.
///
/// It dereferences to [`Queue`] for everything else (`get`, `done`, `shut_down`, ...): a
/// `DelayingQueue` *is* a `Queue`, as client-go's interface embeds the plain one, and a
/// `&DelayingQueue` goes wherever a `&Queue` is expected.
///
/// Waiting items sit in one heap ordered by ready time, served by the one timer thread of the
/// process (shared by every queue, started on the first delayed add), however many items and
/// queues wait.
///
/// A shutdown drops the items still waiting, as client-go's does, but says how many (a log line
/// at INFO and the `dropped delayed` metric);
/// [`shut_down_with_drain_delayed_blocking`](DelayingQueue::shut_down_with_drain_delayed_blocking) keeps them.
///
/// ```
/// use kclient_workqueue::{DelayingQueue, FakeClock, QueueConfig};
/// use std::time::Duration;
///
/// let clock = FakeClock::new();
/// let queue = DelayingQueue::with_config(QueueConfig::new().clock(clock.clone()));
/// queue.add_after("default/web", Duration::from_secs(30));
/// assert_eq!(queue.len(), 0);
/// clock.step(Duration::from_secs(30));
/// assert_eq!(queue.get_blocking(), Some("default/web")); // blocks until the timer thread adds it
/// # queue.shut_down();
/// ```
pub struct DelayingQueue<T> {
    queue: Queue<T>,
}

impl<T> DelayingQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// An unnamed delaying queue on the real clock.
    pub fn new() -> Self {
        DelayingQueue::with_config(QueueConfig::new())
    }

    /// A delaying queue with the name, clock and metrics provider of `config` (its rate limiter
    /// is not used).
    pub fn with_config(config: QueueConfig<T>) -> Self {
        DelayingQueue {
            queue: Queue::with_config(config),
        }
    }

    /// Adds `item` once `delay` has passed on the queue's clock; a zero delay adds it now.
    ///
    /// If the item already waits for a delay, the earlier of the two ready times is kept. Does
    /// nothing once the queue is shutting down (and counts the item as dropped); shutting down
    /// drops the items still waiting, except with
    /// [`shut_down_with_drain_delayed_blocking`](DelayingQueue::shut_down_with_drain_delayed_blocking).
    /// Counts as a retry in the queue's metrics. A delay past the end of representable time
    /// (`Duration::MAX`, which a rate limiter that never refills answers) drops the item: it
    /// would never be ready (client-go keeps it in its heap for ever, with the same effect).
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.core.add_after(item, delay);
    }

    /// The number of items waiting for their delay to pass (not yet in the queue).
    pub fn waiting_len(&self) -> usize {
        self.queue.core.waiting_len()
    }

    /// Shuts down without losing delayed items: like
    /// [`shut_down_with_drain_blocking`](Queue::shut_down_with_drain_blocking), but the items waiting for a delay
    /// that ends within `max_wait` (on the queue's clock) still become ready, are handed to the
    /// workers and are waited for; the items that would wait longer are taken out and returned,
    /// in ready order, so that the caller can keep or report them. Returns once those delayed
    /// items are added, every item in the queue has been handed out and every handed-out item is
    /// [`done`](Queue::done).
    ///
    /// New adds are ignored from the start, as with any shutdown (so a worker's
    /// `add_rate_limited` during the drain is refused and counted as dropped). Workers must keep
    /// calling [`get`](Queue::get) until it returns `None`, which it does only after the kept
    /// delayed items came through. `Duration::ZERO` hands back every waiting item at once;
    /// `Duration::MAX` waits for all of them. A later [`shut_down`](Queue::shut_down) cuts the
    /// wait short and drops what still waits.
    ///
    /// ```
    /// use kclient_workqueue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// let queue = DelayingQueue::new();
    /// queue.add_after("soon", Duration::from_millis(20));
    /// queue.add_after("tomorrow", Duration::from_secs(24 * 3600));
    /// let worker = {
    ///     let queue = queue.clone();
    ///     std::thread::spawn(move || {
    ///         let mut seen = Vec::new();
    ///         while let Some(item) = queue.get_blocking() {
    ///             seen.push(item);
    ///             queue.done(&item);
    ///         }
    ///         seen
    ///     })
    /// };
    /// let handed_back = queue.shut_down_with_drain_delayed_blocking(Duration::from_secs(60));
    /// assert_eq!(handed_back, ["tomorrow"]);
    /// assert_eq!(worker.join().unwrap(), ["soon"]);
    /// ```
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where the workers could never
    /// finish; the message says to await
    /// [`shut_down_with_drain_delayed`](DelayingQueue::shut_down_with_drain_delayed) instead.
    pub fn shut_down_with_drain_delayed_blocking(&self, max_wait: Duration) -> Vec<T> {
        kclient_flowcontrol::assert_can_block(
            "DelayingQueue::shut_down_with_drain_delayed_blocking",
            "DelayingQueue::shut_down_with_drain_delayed(..).await",
        );
        self.queue
            .core
            .shut_down_with_drain_delayed_blocking(max_wait)
    }

    /// The async twin of
    /// [`shut_down_with_drain_delayed_blocking`](DelayingQueue::shut_down_with_drain_delayed_blocking),
    /// with the same contract.
    pub async fn shut_down_with_drain_delayed(&self, max_wait: Duration) -> Vec<T> {
        self.queue.core.shut_down_with_drain_delayed(max_wait).await
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
        }
    }
}

impl<T> Default for DelayingQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn default() -> Self {
        DelayingQueue::new()
    }
}

impl<T> fmt::Debug for DelayingQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("name", &self.name())
            .field("len", &self.len())
            .field("waiting_len", &self.waiting_len())
            .field("shutting_down", &self.shutting_down())
            .finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{Clock, FakeClock, TryGetError};
    use std::thread;
    use std::time::Instant;

    /// Waits (in real time, bounded) until `condition` holds.
    fn eventually(what: &str, condition: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !condition() {
            assert!(Instant::now() < deadline, "timed out waiting until {what}");
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Steps `clock` and returns once the queue's timer thread has acted on the new time.
    pub(crate) fn step_and_settle<T>(queue: &Queue<T>, clock: &FakeClock, by: Duration)
    where
        T: Clone + Eq + Hash + Send + 'static,
    {
        clock.step(by);
        let stepped_to = clock.now();
        let deadline = Instant::now() + Duration::from_secs(10);
        // The step rang the timer's alarm, so a pass that reads the new time comes.
        while !queue.core.timer_settled(stepped_to) {
            assert!(
                Instant::now() < deadline,
                "the timer thread did not run after a step"
            );
            thread::sleep(Duration::from_micros(200));
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn fake_queue() -> (DelayingQueue<&'static str>, FakeClock) {
        let clock = FakeClock::new();
        let queue = DelayingQueue::with_config(QueueConfig::new().clock(clock.clone()));
        (queue, clock)
    }

    #[test]
    fn simple_delay() {
        let (queue, clock) = fake_queue();
        queue.add_after("foo", ms(50));
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.waiting_len(), 1);
        step_and_settle(&queue, &clock, ms(49));
        assert_eq!(queue.len(), 0, "added before its time");
        step_and_settle(&queue, &clock, ms(11));
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.waiting_len(), 0);
        let item = queue.get_blocking().unwrap();
        queue.done(&item);
        // Past client-go's heartbeat: nothing comes back.
        step_and_settle(&queue, &clock, Duration::from_secs(10));
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn zero_delay_adds_at_once() {
        let (queue, _clock) = fake_queue();
        queue.add_after("now", Duration::ZERO);
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.waiting_len(), 0);
    }

    #[test]
    fn duplicate_keeps_the_earlier_ready_time() {
        let (queue, clock) = fake_queue();
        queue.add_after("foo", ms(50));
        queue.add_after("foo", ms(70));
        assert_eq!(queue.waiting_len(), 1);
        step_and_settle(&queue, &clock, ms(60));
        assert_eq!(queue.len(), 1);
        let item = queue.get_blocking().unwrap();
        queue.done(&item);
        // The later duplicate was dropped, not kept for 70 ms.
        step_and_settle(&queue, &clock, ms(20));
        assert_eq!(queue.len(), 0);

        // The earlier of the two wins when it comes second, too.
        queue.add_after("foo", ms(50));
        queue.add_after("foo", ms(30));
        step_and_settle(&queue, &clock, ms(40));
        assert_eq!(queue.len(), 1);
        let item = queue.get_blocking().unwrap();
        queue.done(&item);
        step_and_settle(&queue, &clock, ms(20));
        assert_eq!(queue.len(), 0, "the superseded 50 ms entry fired");
    }

    #[test]
    fn add_two_fire_early() {
        let (queue, clock) = fake_queue();
        queue.add_after("foo", Duration::from_secs(1));
        queue.add_after("bar", ms(50));
        step_and_settle(&queue, &clock, ms(60));
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get_blocking(), Some("bar"));
        queue.add_after("baz", Duration::from_secs(2));
        step_and_settle(&queue, &clock, Duration::from_secs(1));
        assert_eq!(queue.get_blocking(), Some("foo"));
        step_and_settle(&queue, &clock, Duration::from_secs(2));
        assert_eq!(queue.get_blocking(), Some("baz"));
    }

    #[test]
    fn items_come_out_in_ready_order() {
        let (queue, clock) = fake_queue();
        queue.add_after("foo", Duration::from_secs(1));
        queue.add_after("bar", ms(500));
        queue.add_after("baz", ms(250));
        assert_eq!(queue.len(), 0);
        step_and_settle(&queue, &clock, Duration::from_secs(2));
        assert_eq!(queue.len(), 3);
        assert_eq!(queue.get_blocking(), Some("baz"));
        assert_eq!(queue.get_blocking(), Some("bar"));
        assert_eq!(queue.get_blocking(), Some("foo"));
    }

    #[test]
    fn delayed_item_already_waiting_is_not_duplicated() {
        let (queue, clock) = fake_queue();
        queue.add("foo");
        queue.add_after("foo", ms(10));
        step_and_settle(&queue, &clock, ms(10));
        assert_eq!(queue.len(), 1, "stingy also for delayed adds");
    }

    #[test]
    fn one_timer_thread_serves_many_items() {
        let (queue, clock) = fake_queue();
        for (i, item) in ["a", "b", "c", "d", "e", "f", "g", "h"]
            .into_iter()
            .enumerate()
        {
            queue.add_after(item, ms(10 * (i as u64 + 1)));
        }
        assert_eq!(queue.waiting_len(), 8);
        let before = queue.core.timer_passes();
        step_and_settle(&queue, &clock, ms(80));
        assert_eq!(queue.len(), 8);
        // All eight were moved by the same thread in a handful of passes, not one wake per item.
        let after = queue.core.timer_passes();
        assert!(after - before <= 3, "{before} -> {after} passes");
    }

    #[test]
    fn add_after_is_ignored_once_shutting_down() {
        let (queue, clock) = fake_queue();
        queue.add_after("early", ms(10));
        queue.shut_down();
        queue.add_after("late", Duration::ZERO);
        queue.add_after("later", ms(5));
        clock.step(ms(20));
        thread::sleep(ms(20));
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.get_blocking(), None);
    }

    #[test]
    fn real_clock_delay_fires() {
        let queue = DelayingQueue::new();
        let start = Instant::now();
        queue.add_after(1u8, ms(20));
        assert_eq!(queue.get_blocking(), Some(1));
        assert!(start.elapsed() >= ms(20));
    }

    #[test]
    fn huge_delay_never_fires_and_does_not_panic() {
        let (queue, clock) = fake_queue();
        queue.add_after("never", Duration::MAX);
        queue.add_after("soon", ms(1));
        step_and_settle(&queue, &clock, ms(1));
        assert_eq!(queue.get_blocking(), Some("soon"));
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn timer_forgets_the_queue_when_it_is_dropped() {
        let clock = FakeClock::new();
        let queue = DelayingQueue::with_config(QueueConfig::new().clock(clock.clone()));
        queue.add_after(1u8, Duration::from_secs(3600));
        assert!(clock.has_waiters());
        let weak = std::sync::Arc::downgrade(&queue.core);
        drop(queue);
        let deadline = Instant::now() + Duration::from_secs(10);
        while clock.has_waiters() || weak.upgrade().is_some() {
            assert!(
                Instant::now() < deadline,
                "timer thread still watching the clock"
            );
            thread::sleep(ms(1));
        }
    }

    #[test]
    fn drain_delayed_waits_for_due_items_and_hands_back_the_rest() {
        let (queue, clock) = fake_queue();
        queue.add("now");
        queue.add_after("soon", ms(50));
        queue.add_after("later", ms(30));
        queue.add_after("tomorrow", Duration::from_secs(24 * 3600));
        queue.add_after("next-week", Duration::from_secs(7 * 24 * 3600));
        let seen = std::sync::Mutex::new(Vec::new());
        let handed_back = thread::scope(|s| {
            let drainer =
                s.spawn(|| queue.shut_down_with_drain_delayed_blocking(Duration::from_secs(60)));
            eventually("shutting down", || queue.shutting_down());
            // Shut down, but two delayed items are still to come: the drain waits, and a getter
            // does not see the end.
            assert_eq!(queue.get_blocking(), Some("now"));
            queue.done(&"now");
            assert_eq!(queue.try_get(), Err(TryGetError::Empty));
            assert!(
                !drainer.is_finished(),
                "returned before the delayed items came"
            );
            queue.add("refused"); // adds are ignored from the start
            step_and_settle(&queue, &clock, ms(60));
            while let Some(item) = queue.get_blocking() {
                seen.lock().unwrap().push(item);
                queue.done(&item);
            }
            drainer.join().unwrap()
        });
        // In ready order, both times.
        assert_eq!(seen.into_inner().unwrap(), ["later", "soon"]);
        assert_eq!(handed_back, ["tomorrow", "next-week"]);
        assert_eq!(queue.waiting_len(), 0);
        assert_eq!(queue.try_get(), Err(TryGetError::ShutDown));
    }

    #[test]
    fn drain_delayed_with_zero_wait_hands_back_everything_at_once() {
        let (queue, _clock) = fake_queue();
        queue.add_after("b", ms(20));
        queue.add_after("a", ms(10));
        queue.add_after("a", ms(40)); // a duplicate keeps the earlier time, and is not repeated
        assert_eq!(
            queue.shut_down_with_drain_delayed_blocking(Duration::ZERO),
            ["a", "b"]
        );
        assert_eq!(queue.get_blocking(), None);
    }

    #[test]
    fn drain_delayed_waits_for_the_items_being_processed() {
        let (queue, _clock) = fake_queue();
        queue.add("held");
        let held = queue.get_blocking().unwrap();
        thread::scope(|s| {
            let drainer = s.spawn(|| queue.shut_down_with_drain_delayed_blocking(Duration::MAX));
            eventually("shutting down", || queue.shutting_down());
            thread::sleep(ms(10));
            assert!(
                !drainer.is_finished(),
                "returned while an item was processing"
            );
            queue.done(&held);
            assert_eq!(drainer.join().unwrap(), Vec::<&str>::new());
        });
    }

    #[test]
    fn shut_down_cuts_a_delayed_drain_short() {
        let (queue, _clock) = fake_queue();
        queue.add_after("waits", Duration::from_secs(30));
        thread::scope(|s| {
            let drainer = s.spawn(|| queue.shut_down_with_drain_delayed_blocking(Duration::MAX));
            eventually("shutting down", || queue.shutting_down());
            let getter = s.spawn(|| queue.get_blocking());
            thread::sleep(ms(10));
            assert!(!drainer.is_finished() && !getter.is_finished());
            queue.shut_down(); // drops what still waits
            assert_eq!(drainer.join().unwrap(), Vec::<&str>::new());
            assert_eq!(getter.join().unwrap(), None);
        });
        assert_eq!(queue.waiting_len(), 0);
    }

    #[test]
    fn async_drain_delayed_hands_back_and_waits() {
        let (queue, clock) = fake_queue();
        queue.add_after("due", ms(5));
        queue.add_after("late", Duration::from_secs(600));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let worker = {
            let queue = queue.clone();
            thread::spawn(move || {
                let mut seen = Vec::new();
                while let Some(item) = queue.get_blocking() {
                    seen.push(item);
                    queue.done(&item);
                }
                seen
            })
        };
        let stepper = {
            let (queue, clock) = (queue.clone(), clock.clone());
            thread::spawn(move || {
                eventually("shutting down", || queue.shutting_down());
                step_and_settle(&queue, &clock, ms(5));
            })
        };
        let handed_back =
            runtime.block_on(queue.shut_down_with_drain_delayed(Duration::from_secs(1)));
        stepper.join().unwrap();
        assert_eq!(handed_back, ["late"]);
        assert_eq!(worker.join().unwrap(), ["due"]);
    }

    #[test]
    fn forty_queues_share_one_timer() {
        let clocks: Vec<FakeClock> = (0..40).map(|_| FakeClock::new()).collect();
        let queues: Vec<DelayingQueue<usize>> = clocks
            .iter()
            .map(|clock| DelayingQueue::with_config(QueueConfig::new().clock(clock.clone())))
            .collect();
        for (i, queue) in queues.iter().enumerate() {
            queue.add_after(i, ms(10 + i as u64));
        }
        // A real-clock queue fires on its own while the fake ones wait for their steps.
        let real = DelayingQueue::new();
        real.add_after(99usize, ms(5));
        assert_eq!(real.get_blocking(), Some(99));
        for (i, (queue, clock)) in queues.iter().zip(&clocks).enumerate() {
            assert_eq!(queue.len(), 0);
            step_and_settle(queue, clock, ms(10 + i as u64));
            assert_eq!(queue.get_blocking(), Some(i));
        }
        for queue in &queues {
            queue.shut_down();
        }
    }

    /// A clock that never rings the timer: only a getter's own look at the heap can move an
    /// item it made due.
    #[derive(Debug)]
    struct SilentClock(parking_lot::Mutex<Instant>);

    impl Clock for SilentClock {
        fn now(&self) -> Instant {
            *self.0.lock()
        }
        fn real_time_until(&self, _: Instant) -> Option<Duration> {
            None
        }
    }

    #[test]
    fn a_getter_moves_due_items_without_the_timer() {
        let clock = std::sync::Arc::new(SilentClock(parking_lot::Mutex::new(Instant::now())));
        let queue = DelayingQueue::with_config(QueueConfig::new().shared_clock(clock.clone()));
        queue.add_after("x", ms(10));
        queue.add_after("y", ms(20));
        // The registration pass; after it the timer looks again only at its 10 s heartbeat.
        eventually("the first timer pass", || queue.core.timer_passes() >= 1);
        let passes = queue.core.timer_passes();
        *clock.0.lock() += ms(10);
        assert_eq!(queue.get_blocking(), Some("x"));
        *clock.0.lock() += ms(10);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(queue.get()), Some("y"));
        assert_eq!(
            queue.core.timer_passes(),
            passes,
            "the timer thread moved them"
        );
        queue.shut_down();
    }
}
