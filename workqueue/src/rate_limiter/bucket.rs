//! An overall token bucket (client-go's `BucketRateLimiter` over `golang.org/x/time/rate`):
//! [`kclient_flowcontrol::TokenBucket`] on the queue's [`Clock`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kclient_flowcontrol::TokenBucket;
use parking_lot::Mutex;

use super::RateLimiter;
use crate::clock::{Clock, RealClock};

/// Limits the retries of all items together to `qps` a second, with bursts of up to `burst`.
///
/// The bucket holds at most `burst` tokens and refills at `qps` tokens a second; it starts full.
/// Each [`when`](RateLimiter::when) takes a token, going into debt when there is none, and
/// answers how long until the token it took exists: a reservation, as `rate.Limiter.Reserve`
/// makes. It keeps no per-item state: [`forget`](RateLimiter::forget) does nothing and
/// [`num_requeues`](RateLimiter::num_requeues) is always zero.
///
/// `qps` of infinity means no limit. `qps` of zero (or less, or NaN) gives out the `burst` tokens
/// and then answers [`Duration::MAX`] (never) to every later retry.
///
/// A `burst` of 0 with a positive `qps` paces retries at `qps` (the first after `1/qps`), where
/// client-go's limiter, whose reservations may never exceed the burst, answers "never" to every
/// one: a queue configured that way would silently stop retrying.
///
/// ```
/// use kclient_workqueue::{BucketRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = BucketRateLimiter::new(10.0, 2);
/// assert_eq!(limiter.when(&"a"), Duration::ZERO);
/// assert_eq!(limiter.when(&"b"), Duration::ZERO);
/// // The burst is spent: the next token comes after about 1/10 s.
/// assert!(limiter.when(&"c") > Duration::from_millis(90));
/// ```
pub struct BucketRateLimiter {
    clock: Arc<dyn Clock>,
    bucket: Mutex<TokenBucket<Instant>>,
}

impl BucketRateLimiter {
    /// A bucket of `burst` tokens refilled at `qps` a second, on the real clock.
    pub fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter::with_clock(qps, burst, Arc::new(RealClock))
    }

    /// A bucket of `burst` tokens refilled at `qps` a second, on `clock`.
    pub fn with_clock(qps: f64, burst: u32, clock: Arc<dyn Clock>) -> Self {
        BucketRateLimiter {
            clock,
            bucket: Mutex::new(TokenBucket::new(qps, burst)),
        }
    }

    /// Takes one token and answers how long until it exists.
    fn reserve(&self) -> Duration {
        let now = self.clock.now();
        self.bucket.lock().reserve(now)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bucket = self.bucket.lock();
        f.debug_struct("BucketRateLimiter")
            .field("qps", &bucket.qps())
            .field("burst", &bucket.burst())
            .field("clock", &self.clock)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FakeClock;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn burst_then_one_token_per_interval() {
        let clock = FakeClock::new();
        let limiter = BucketRateLimiter::with_clock(10.0, 3, Arc::new(clock.clone()));
        let when = |item: u8| RateLimiter::<u8>::when(&limiter, &item);
        assert_eq!([when(1), when(2), when(3)], [Duration::ZERO; 3]);
        // In debt: each reservation waits one more interval.
        assert_eq!(when(4), ms(100));
        assert_eq!(when(5), ms(200));
        // After 200 ms the debt is paid; one more interval refills one token.
        clock.step(ms(300));
        assert_eq!(when(6), Duration::ZERO);
        assert_eq!(when(7), ms(100));
        // A long pause refills only up to the burst.
        clock.step(Duration::from_secs(60));
        assert_eq!([when(8), when(9), when(10)], [Duration::ZERO; 3]);
        assert_eq!(when(11), ms(100));
        assert_eq!(RateLimiter::<u8>::num_requeues(&limiter, &11), 0);
    }

    #[test]
    fn infinite_and_zero_rates() {
        let unlimited = BucketRateLimiter::new(f64::INFINITY, 0);
        for item in 0..1000 {
            assert_eq!(unlimited.when(&item), Duration::ZERO);
        }
        let frozen = BucketRateLimiter::new(0.0, 2);
        assert_eq!(frozen.when(&1), Duration::ZERO);
        assert_eq!(frozen.when(&2), Duration::ZERO);
        assert_eq!(frozen.when(&3), Duration::MAX);
    }

    /// A burst of 0 paces retries at the rate, from the first (client-go's would refuse all).
    #[test]
    fn a_zero_burst_paces_every_retry() {
        let clock = FakeClock::new();
        let limiter = BucketRateLimiter::with_clock(10.0, 0, Arc::new(clock.clone()));
        let when = |item: u8| RateLimiter::<u8>::when(&limiter, &item);
        assert_eq!([when(1), when(2), when(3)], [ms(100), ms(200), ms(300)]);
        clock.step(Duration::from_secs(60));
        assert_eq!(when(4), ms(100), "nothing is saved up");
    }
}
