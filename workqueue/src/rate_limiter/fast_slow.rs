//! A fixed fast delay for the first attempts, then a fixed slow one (client-go's
//! `ItemFastSlowRateLimiter`).

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use parking_lot::Mutex;

use super::RateLimiter;

/// Retries an item after `fast_delay` for its first `max_fast_attempts` retries and after
/// `slow_delay` from then on.
///
/// ```
/// use kclient_workqueue::{ItemFastSlowRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = ItemFastSlowRateLimiter::new(Duration::from_millis(5), Duration::from_secs(10), 2);
/// let delays: Vec<_> = (0..3).map(|_| limiter.when(&1)).collect();
/// assert_eq!(delays, [Duration::from_millis(5), Duration::from_millis(5), Duration::from_secs(10)]);
/// ```
pub struct ItemFastSlowRateLimiter<T> {
    failures: Mutex<HashMap<T, usize>>,
    fast_delay: Duration,
    slow_delay: Duration,
    max_fast_attempts: usize,
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// A limiter giving `max_fast_attempts` retries at `fast_delay`, then `slow_delay`.
    pub fn new(fast_delay: Duration, slow_delay: Duration, max_fast_attempts: usize) -> Self {
        ItemFastSlowRateLimiter {
            failures: Mutex::new(HashMap::new()),
            fast_delay,
            slow_delay,
            max_fast_attempts,
        }
    }
}

impl<T> RateLimiter<T> for ItemFastSlowRateLimiter<T>
where
    T: Clone + Eq + Hash + Send,
{
    fn when(&self, item: &T) -> Duration {
        let attempts = {
            let mut failures = self.failures.lock();
            let count = match failures.get_mut(item) {
                Some(count) => count,
                None => failures.entry(item.clone()).or_insert(0),
            };
            *count = count.saturating_add(1);
            *count
        };
        if attempts <= self.max_fast_attempts {
            self.fast_delay
        } else {
            self.slow_delay
        }
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast_delay", &self.fast_delay)
            .field("slow_delay", &self.slow_delay)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_then_slow_per_item_and_forget_resets() {
        let fast = Duration::from_millis(5);
        let slow = Duration::from_secs(10);
        let limiter = ItemFastSlowRateLimiter::new(fast, slow, 3);
        for expected in [fast, fast, fast, slow, slow] {
            assert_eq!(limiter.when(&"one"), expected);
        }
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!(limiter.when(&"two"), fast);
        assert_eq!(limiter.when(&"two"), fast);
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), fast);
    }
}
