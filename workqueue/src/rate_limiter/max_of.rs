//! The worst answer of several limiters (client-go's `MaxOfRateLimiter`).

use std::fmt;
use std::time::Duration;

use super::RateLimiter;

/// Asks every limiter and waits the longest of their answers.
///
/// Every limiter sees every retry, so each keeps counting. With a token bucket among them the
/// bucket's burst can appear exceeded when some items were held back longer by another limiter.
///
/// ```
/// use kclient_workqueue::{ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
///     MaxOfRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = MaxOfRateLimiter::new(vec![
///     Box::new(ItemFastSlowRateLimiter::new(Duration::from_millis(5), Duration::from_secs(3), 1)),
///     Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1))),
/// ]);
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_secs(3));
/// ```
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// A limiter answering the maximum of `limiters` (zero when empty).
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        // Ask every limiter, not just until one gives the maximum: each counts the retry.
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter};

    #[test]
    fn answers_the_worst_and_forgets_everywhere() {
        let limiter = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(
                Duration::from_millis(5),
                Duration::from_secs(3),
                3,
            )),
            Box::new(ItemExponentialFailureRateLimiter::new(
                Duration::from_millis(1),
                Duration::from_secs(1),
            )),
        ]);
        let fast = Duration::from_millis(5);
        let slow = Duration::from_secs(3);
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

    #[test]
    fn empty_waits_nothing() {
        let limiter = MaxOfRateLimiter::<u8>::new(Vec::new());
        assert_eq!(limiter.when(&1), Duration::ZERO);
        assert_eq!(limiter.num_requeues(&1), 0);
    }
}
