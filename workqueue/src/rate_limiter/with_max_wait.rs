//! A cap on another limiter's answer (client-go's `WithMaxWaitRateLimiter`).

use std::time::Duration;

use super::RateLimiter;

/// Answers what the inner limiter answers, but never more than `max_delay`.
///
/// ```
/// use kclient_workqueue::{ItemExponentialFailureRateLimiter, RateLimiter, WithMaxWaitRateLimiter};
/// use std::time::Duration;
///
/// let inner = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(3600));
/// let limiter = WithMaxWaitRateLimiter::new(inner, Duration::from_secs(3));
/// let delays: Vec<_> = (0..4).map(|_| limiter.when(&"a")).collect();
/// assert_eq!(delays, [1, 2, 3, 3].map(Duration::from_secs));
/// ```
#[derive(Debug)]
pub struct WithMaxWaitRateLimiter<L> {
    limiter: L,
    max_delay: Duration,
}

impl<L> WithMaxWaitRateLimiter<L> {
    /// Caps `limiter` at `max_delay`.
    pub fn new(limiter: L, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_delay }
    }
}

impl<T, L: RateLimiter<T>> RateLimiter<T> for WithMaxWaitRateLimiter<L> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_controller_rate_limiter;

    #[test]
    fn caps_the_inner_answer_and_delegates_the_rest() {
        let limiter = WithMaxWaitRateLimiter::new(
            default_controller_rate_limiter::<&str>(),
            Duration::from_millis(500),
        );
        let mut delays = Vec::new();
        for _ in 0..10 {
            delays.push(limiter.when(&"one"));
        }
        // 5 ms * 2^n reaches 640 ms at n = 7; the cap holds it at 500 ms from there.
        let expected: Vec<Duration> = [5, 10, 20, 40, 80, 160, 320, 500, 500, 500]
            .into_iter()
            .map(Duration::from_millis)
            .collect();
        assert_eq!(delays, expected);
        assert_eq!(limiter.num_requeues(&"one"), 10);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), Duration::from_millis(5));
    }
}
