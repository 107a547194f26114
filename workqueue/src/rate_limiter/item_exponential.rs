//! Per-item exponential backoff: `base * 2^failures`, capped (client-go's
//! `ItemExponentialFailureRateLimiter`).

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use parking_lot::Mutex;

use super::RateLimiter;

/// Waits `base_delay * 2^n` before the (n+1)th retry of an item, never more than `max_delay`.
///
/// The delay is computed without overflow however many times an item fails. Giving up after
/// some number of retries is the caller's business (see
/// [`num_requeues`](RateLimiter::num_requeues)).
///
/// ```
/// use kclient_workqueue::{ItemExponentialFailureRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1));
/// let delays: Vec<_> = (0..4).map(|_| limiter.when(&"key")).collect();
/// assert_eq!(delays, [1, 2, 4, 8].map(Duration::from_millis));
/// ```
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Mutex<HashMap<T, u32>>,
    base_delay: Duration,
    max_delay: Duration,
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// A limiter starting at `base_delay` and doubling up to `max_delay`.
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            failures: Mutex::new(HashMap::new()),
            base_delay,
            max_delay,
        }
    }
}

/// `base * 2^exponent`, or `max` when that is larger or does not fit. A zero base stays zero
/// however large the exponent (client-go's `0 * 2^failures`).
fn backoff(base: Duration, exponent: u32, max: Duration) -> Duration {
    if base.is_zero() {
        return Duration::ZERO;
    }
    let factor = 1u128.checked_shl(exponent).filter(|_| exponent < 128);
    match factor.and_then(|factor| base.as_nanos().checked_mul(factor)) {
        Some(nanos) if nanos <= max.as_nanos() => {
            // nanos <= max.as_nanos(), which came from a Duration: it fits.
            Duration::new(
                (nanos / 1_000_000_000) as u64,
                (nanos % 1_000_000_000) as u32,
            )
        }
        _ => max,
    }
}

impl<T> RateLimiter<T> for ItemExponentialFailureRateLimiter<T>
where
    T: Clone + Eq + Hash + Send,
{
    fn when(&self, item: &T) -> Duration {
        let exponent = {
            let mut failures = self.failures.lock();
            let count = match failures.get_mut(item) {
                Some(count) => count,
                None => failures.entry(item.clone()).or_insert(0),
            };
            let exponent = *count;
            *count = count.saturating_add(1);
            exponent
        };
        backoff(self.base_delay, exponent, self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures
            .lock()
            .get(item)
            .map_or(0, |&count| count as usize)
    }
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base_delay", &self.base_delay)
            .field("max_delay", &self.max_delay)
            .field("tracked_items", &self.failures.lock().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn doubles_per_failure_up_to_the_cap_and_forgets() {
        let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
        for expected in [1, 2, 4, 8, 16] {
            assert_eq!(limiter.when(&"one"), ms(expected));
        }
        assert_eq!(limiter.num_requeues(&"one"), 5);
        // Items are independent.
        assert_eq!(limiter.when(&"two"), ms(1));
        assert_eq!(limiter.when(&"two"), ms(2));
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), ms(1));
        for _ in 0..9 {
            limiter.when(&"one");
        }
        assert_eq!(
            limiter.when(&"one"),
            Duration::from_secs(1),
            "1 ms * 2^10 is past the 1 s cap"
        );
    }

    #[test]
    fn never_overflows() {
        let limiter = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1000));
        for _ in 0..5 {
            limiter.when(&"one");
        }
        assert_eq!(limiter.when(&"one"), ms(32));
        for _ in 0..1000 {
            limiter.when(&"one");
        }
        assert_eq!(limiter.when(&"one"), Duration::from_secs(1000));

        // A huge base and cap: the product overflows u64 nanoseconds long before 2^64 failures.
        let huge = ItemExponentialFailureRateLimiter::new(Duration::from_secs(3600), Duration::MAX);
        let mut last = Duration::ZERO;
        for _ in 0..200 {
            let delay = huge.when(&"x");
            assert!(delay >= last, "backoff went down: {delay:?} < {last:?}");
            last = delay;
        }
        assert_eq!(last, Duration::MAX);
    }

    #[test]
    fn backoff_saturates_at_every_exponent() {
        assert_eq!(backoff(ms(5), 0, Duration::MAX), ms(5));
        assert_eq!(backoff(ms(5), 127, Duration::MAX), Duration::MAX);
        assert_eq!(backoff(ms(5), 128, Duration::MAX), Duration::MAX);
        assert_eq!(backoff(ms(5), u32::MAX, ms(7)), ms(7));
    }

    /// A zero base never waits, however often the item failed: client-go computes
    /// `0 * 2^failures`, which stays zero, and retries at once.
    #[test]
    fn a_zero_base_never_waits() {
        let limiter =
            ItemExponentialFailureRateLimiter::new(Duration::ZERO, Duration::from_secs(1000));
        for failure in 0..300 {
            assert_eq!(limiter.when(&"x"), Duration::ZERO, "failure {failure}");
        }
        assert_eq!(backoff(Duration::ZERO, 127, ms(7)), Duration::ZERO);
        assert_eq!(backoff(Duration::ZERO, 128, ms(7)), Duration::ZERO);
        assert_eq!(backoff(Duration::ZERO, u32::MAX, ms(7)), Duration::ZERO);
    }
}
