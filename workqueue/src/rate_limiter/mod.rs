//! Rate limiters: the [`RateLimiter`] trait a [`RateLimitingQueue`](crate::RateLimitingQueue)
//! asks how long an item must wait before it is retried, the limiters client-go ships, and its two
//! default compositions.
//!
//! A limiter answers [`when`](RateLimiter::when) once per retry of an item, counts the retries
//! ([`num_requeues`](RateLimiter::num_requeues)) and stops tracking the item on
//! [`forget`](RateLimiter::forget) (after a success, or when giving up on it).

mod bucket;
mod fast_slow;
mod item_exponential;
mod max_of;
mod with_max_wait;

use std::sync::Arc;
use std::time::Duration;

pub use bucket::BucketRateLimiter;
pub use fast_slow::ItemFastSlowRateLimiter;
pub use item_exponential::ItemExponentialFailureRateLimiter;
pub use max_of::MaxOfRateLimiter;
pub use with_max_wait::WithMaxWaitRateLimiter;

/// Decides how long an item waits before it is retried (client-go's `TypedRateLimiter`).
///
/// Limiters are shared by every worker of a queue, so they take `&self` and keep their state
/// behind a lock.
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now. Counts as one more retry of it.
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item`: its next retry starts from scratch. Whether it succeeded or failed
    /// for good does not matter.
    fn forget(&self, item: &T);
    /// How many times `item` was retried since it was last forgotten.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// The limiter client-go gives controllers (`DefaultTypedControllerRateLimiter`): the worse of a
/// per-item exponential backoff from 5 ms to 1000 s and an overall token bucket of 10 retries a
/// second with a burst of 100.
///
/// ```
/// use kclient_workqueue::{default_controller_rate_limiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = default_controller_rate_limiter::<&str>();
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(10));
/// assert_eq!(limiter.num_requeues(&"a"), 2);
/// limiter.forget(&"a");
/// assert_eq!(limiter.num_requeues(&"a"), 0);
/// ```
pub fn default_controller_rate_limiter<T>() -> MaxOfRateLimiter<T>
where
    T: Clone + Eq + std::hash::Hash + Send + 'static,
{
    default_controller_rate_limiter_with_clock(Arc::new(crate::RealClock))
}

/// [`default_controller_rate_limiter`] whose token bucket reads `clock`.
pub(crate) fn default_controller_rate_limiter_with_clock<T>(
    clock: Arc<dyn crate::Clock>,
) -> MaxOfRateLimiter<T>
where
    T: Clone + Eq + std::hash::Hash + Send + 'static,
{
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        // 10 qps, 100 burst: only the overall retry speed, not per item.
        Box::new(BucketRateLimiter::with_clock(10.0, 100, clock)),
    ])
}

/// The per-item limiter client-go names `DefaultTypedItemBasedRateLimiter`: exponential backoff
/// from 1 ms to 1000 s, no overall limit.
pub fn default_item_based_rate_limiter<T>() -> ItemExponentialFailureRateLimiter<T>
where
    T: Clone + Eq + std::hash::Hash + Send + 'static,
{
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FakeClock;

    #[test]
    fn default_controller_limiter_is_exponential_until_the_bucket_runs_dry() {
        let clock = FakeClock::new();
        let limiter = default_controller_rate_limiter_with_clock::<u32>(Arc::new(clock.clone()));
        // One retry each of 100 items spends the burst; their per-item delay is the 5 ms base.
        for item in 0..100 {
            assert_eq!(limiter.when(&item), Duration::from_millis(5), "item {item}");
        }
        // The bucket is empty: the 101st retry waits for a token at 10 qps (100 ms), the next 200 ms.
        assert_eq!(limiter.when(&100), Duration::from_millis(100));
        assert_eq!(limiter.when(&101), Duration::from_millis(200));
        // Per-item backoff wins once it is longer than the bucket's wait.
        clock.step(Duration::from_secs(100));
        let mut last = Duration::ZERO;
        for _ in 0..12 {
            last = limiter.when(&7);
        }
        assert_eq!(last, Duration::from_millis(5 << 12));
        assert_eq!(limiter.num_requeues(&7), 13);
    }

    #[test]
    fn default_item_based_limiter_starts_at_one_millisecond() {
        let limiter = default_item_based_rate_limiter::<&str>();
        assert_eq!(limiter.when(&"x"), Duration::from_millis(1));
        assert_eq!(limiter.when(&"x"), Duration::from_millis(2));
        for _ in 0..40 {
            limiter.when(&"x");
        }
        assert_eq!(limiter.when(&"x"), Duration::from_secs(1000));
    }

    #[test]
    fn boxed_and_shared_limiters_delegate() {
        let boxed: Box<dyn RateLimiter<u8>> = Box::new(default_item_based_rate_limiter());
        let shared: Arc<dyn RateLimiter<u8>> = Arc::new(boxed);
        assert_eq!(shared.when(&1), Duration::from_millis(1));
        assert_eq!(shared.num_requeues(&1), 1);
        shared.forget(&1);
        assert_eq!(shared.num_requeues(&1), 0);
    }
}
