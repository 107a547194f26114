//! [`RateLimitingQueue`]: a [`DelayingQueue`] that asks a [`RateLimiter`] how long a retried item
//! waits (client-go's `TypedRateLimitingInterface`).

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use crate::config::QueueConfig;
use crate::delaying_queue::DelayingQueue;
use crate::rate_limiter::{RateLimiter, default_controller_rate_limiter_with_clock};

/// A [`DelayingQueue`] whose failed items are retried after a delay a [`RateLimiter`] chooses.
///
/// It dereferences to [`DelayingQueue`] (and so to [`Queue`](crate::Queue)) for everything else.
///
/// The usual worker: on success, [`forget`](RateLimitingQueue::forget) the item (so its next
/// failure starts the backoff from scratch); on failure,
/// [`add_rate_limited`](RateLimitingQueue::add_rate_limited) it, perhaps giving up once
/// [`num_requeues`](RateLimitingQueue::num_requeues) is too high; in both cases
/// [`done`](crate::Queue::done) it.
///
/// ```
/// use kclient_workqueue::{default_controller_rate_limiter, RateLimitingQueue};
///
/// fn reconcile(key: &str) -> Result<(), String> {
///     if key.ends_with("broken") { Err(format!("cannot reconcile {key}")) } else { Ok(()) }
/// }
///
/// let queue = RateLimitingQueue::new(default_controller_rate_limiter());
/// queue.add("default/web".to_string());
/// queue.add("default/broken".to_string());
///
/// for _ in 0..2 {
///     let key = queue.get_blocking().unwrap();
///     match reconcile(&key) {
///         Ok(()) => queue.forget(&key),
///         Err(_) if queue.num_requeues(&key) < 5 => queue.add_rate_limited(key.clone()),
///         Err(_) => queue.forget(&key), // give up
///     }
///     queue.done(&key);
/// }
/// assert_eq!(queue.num_requeues(&"default/broken".to_string()), 1);
/// queue.shut_down();
/// ```
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    rate_limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> RateLimitingQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    /// An unnamed rate-limiting queue on the real clock. Remember to call
    /// [`forget`](RateLimitingQueue::forget), or the limiter tracks failed items forever.
    pub fn new(rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        RateLimitingQueue::with_config(QueueConfig::new().rate_limiter(rate_limiter))
    }

    /// A rate-limiting queue built from `config`. Without a rate limiter in it,
    /// [`default_controller_rate_limiter`](crate::default_controller_rate_limiter) on the
    /// config's clock is used.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        let clock = config.clock.clone();
        let rate_limiter = config
            .rate_limiter
            .clone()
            .unwrap_or_else(|| Arc::new(default_controller_rate_limiter_with_clock::<T>(clock)));
        RateLimitingQueue {
            queue: DelayingQueue::with_config(config),
            rate_limiter,
        }
    }

    /// Adds `item` after the delay the rate limiter chooses for it now (one more retry).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.rate_limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the rate limiter to stop tracking `item` (it succeeded, or you gave up on it). This
    /// only resets the limiter: you still have to call [`done`](crate::Queue::done).
    pub fn forget(&self, item: &T) {
        self.rate_limiter.forget(item);
    }

    /// How many times `item` was added with [`add_rate_limited`](RateLimitingQueue::add_rate_limited)
    /// since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.rate_limiter.num_requeues(item)
    }

    /// The queue's rate limiter.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.rate_limiter
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            rate_limiter: self.rate_limiter.clone(),
        }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("name", &self.name())
            .field("len", &self.len())
            .field("waiting_len", &self.waiting_len())
            .field("shutting_down", &self.shutting_down())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delaying_queue::tests::step_and_settle;
    use crate::{FakeClock, ItemExponentialFailureRateLimiter};
    use std::time::Duration;

    #[test]
    fn add_rate_limited_backs_off_and_forget_resets() {
        let clock = FakeClock::new();
        let queue =
            RateLimitingQueue::with_config(QueueConfig::new().clock(clock.clone()).rate_limiter(
                ItemExponentialFailureRateLimiter::new(
                    Duration::from_millis(1),
                    Duration::from_secs(1),
                ),
            ));
        queue.add_rate_limited("one");
        queue.add_rate_limited("one");
        queue.add_rate_limited("two");
        queue.add_rate_limited("two");
        assert_eq!(queue.num_requeues(&"one"), 2);
        assert_eq!(queue.num_requeues(&"two"), 2);
        assert_eq!(queue.waiting_len(), 2, "duplicates wait once");
        // Both wait 1 ms (the earlier of 1 ms and 2 ms).
        step_and_settle(&queue, &clock, Duration::from_millis(1));
        assert_eq!(queue.len(), 2);

        queue.forget(&"one");
        assert_eq!(queue.num_requeues(&"one"), 0);
        assert_eq!(queue.num_requeues(&"two"), 2);
    }

    #[test]
    fn default_limiter_uses_the_config_clock() {
        let clock = FakeClock::new();
        let queue: RateLimitingQueue<u32> =
            RateLimitingQueue::with_config(QueueConfig::new().clock(clock.clone()));
        // 100 distinct items spend the default bucket's burst; each waits the 5 ms base.
        for item in 0..100 {
            queue.add_rate_limited(item);
        }
        step_and_settle(&queue, &clock, Duration::from_millis(5));
        assert_eq!(queue.len(), 100);
        // The 101st waits for a token: 95 ms on the fake clock (5 ms of refill already passed),
        // however much real time passes.
        queue.add_rate_limited(100);
        step_and_settle(&queue, &clock, Duration::from_millis(90));
        assert_eq!(queue.len(), 100);
        step_and_settle(&queue, &clock, Duration::from_millis(10));
        assert_eq!(queue.len(), 101);
    }
}
