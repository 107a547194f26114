//! [`TokenBucket`]: the token bucket of golang.org/x/time/rate, as arithmetic on moments.

use std::time::Duration;

use crate::moment::Moment;

/// A bucket that holds at most `burst` tokens, refilled at `qps` tokens a second; it starts
/// full.
///
/// It keeps no clock and takes no lock: each call is told what time it is, and the owner
/// wraps it in whatever lock and clock it uses. Two ways to take a token:
/// - [`reserve`](TokenBucket::reserve) always takes one, going into debt when the bucket is
///   empty, and answers how long until that token exists (x/time/rate's `Reserve`): callers
///   who wait that long are served in call order and never exceed the rate together;
/// - [`try_take`](TokenBucket::try_take) takes one only if it is there now.
///
/// A `qps` of infinity never limits. A `qps` of zero, less, or NaN never refills: the burst
/// is handed out and then [`reserve`](TokenBucket::reserve) answers [`Duration::MAX`]
/// (never) without going into debt.
///
/// ```
/// use std::time::{Duration, Instant};
/// use kclient_flowcontrol::TokenBucket;
///
/// let start = Instant::now();
/// let mut bucket = TokenBucket::new(10.0, 2);
/// assert_eq!(bucket.reserve(start), Duration::ZERO);
/// assert_eq!(bucket.reserve(start), Duration::ZERO);
/// // The burst is spent: the next token exists 1/10 s from now, the one after 2/10 s.
/// assert_eq!(bucket.reserve(start), Duration::from_millis(100));
/// assert_eq!(bucket.reserve(start), Duration::from_millis(200));
/// assert!(!bucket.try_take(start));
/// assert!(bucket.try_take(start + Duration::from_millis(300)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket<M> {
    qps: f64,
    burst: f64,
    tokens: f64,
    /// When `tokens` was last brought up to date; `None` while the bucket is untouched (full).
    last: Option<M>,
}

impl<M: Moment> TokenBucket<M> {
    /// A full bucket of `burst` tokens refilled at `qps` a second.
    pub fn new(qps: f64, burst: u32) -> Self {
        TokenBucket {
            qps,
            burst: f64::from(burst),
            tokens: f64::from(burst),
            last: None,
        }
    }

    /// The refill rate in tokens a second.
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// The most tokens the bucket holds.
    pub fn burst(&self) -> u32 {
        self.burst as u32
    }

    /// Takes a token at `now`, going into debt if there is none, and answers how long after
    /// `now` it exists ([`Duration::ZERO`] when it was there). Without refill, an empty
    /// bucket answers [`Duration::MAX`] and stays as it is.
    pub fn reserve(&mut self, now: M) -> Duration {
        if self.qps == f64::INFINITY {
            return Duration::ZERO;
        }
        self.refill(now);
        if !self.refills() {
            return if self.take_whole() {
                Duration::ZERO
            } else {
                Duration::MAX
            };
        }
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-self.tokens / self.qps).unwrap_or(Duration::MAX)
        }
    }

    /// Takes a token at `now` only if it exists within `max_wait`, and answers how long after
    /// `now` it exists; otherwise takes nothing and answers `None` (x/time/rate's reservation
    /// with a longest wait, which its `Wait` uses to fail at once when the token would come
    /// after the context's deadline).
    pub fn reserve_within(&mut self, now: M, max_wait: Duration) -> Option<Duration> {
        if self.qps == f64::INFINITY {
            return Some(Duration::ZERO);
        }
        self.refill(now);
        if !self.refills() {
            return self.take_whole().then_some(Duration::ZERO);
        }
        let left = self.tokens - 1.0;
        let delay = if left >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-left / self.qps).unwrap_or(Duration::MAX)
        };
        if delay > max_wait {
            return None;
        }
        self.tokens = left;
        Some(delay)
    }

    /// Gives back the token of a reservation that will not be used: a [`reserve`] at
    /// `reserved_at` answered `delay`, and at `now` its caller gave up waiting (x/time/rate's
    /// `Reservation.CancelAt`, which client-go's limiter calls when a request's context ends
    /// during the wait). A reservation whose time has come is spent and nothing changes.
    /// Otherwise the bucket gets back its token less one for each token reserved after it
    /// (their callers were told to wait for it too), and never more than `burst`.
    ///
    /// [`reserve`]: TokenBucket::reserve
    pub fn cancel(&mut self, reserved_at: M, delay: Duration, now: M) {
        if !self.refills() || self.qps == f64::INFINITY || delay == Duration::MAX {
            // `reserve` took no token that is not already spent, or none at all.
            return;
        }
        let Some(act_in) = delay.checked_sub(now.since(reserved_at)) else {
            return;
        };
        if act_in.is_zero() {
            return;
        }
        self.refill(now);
        // The debt is paid at `qps` from now on: the last token reserved exists this long
        // from now, and the ones reserved after this reservation's are the difference.
        let last_in = (-self.tokens).max(0.0) / self.qps;
        let reserved_after = (last_in - act_in.as_secs_f64()) * self.qps;
        let restore = 1.0 - reserved_after.max(0.0);
        if restore > 0.0 {
            self.tokens = (self.tokens + restore).min(self.burst);
        }
    }

    /// Takes a token at `now` if one is there.
    pub fn try_take(&mut self, now: M) -> bool {
        if self.qps == f64::INFINITY {
            return true;
        }
        self.refill(now);
        self.take_whole()
    }

    fn refills(&self) -> bool {
        self.qps > 0.0
    }

    fn take_whole(&mut self) -> bool {
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Adds what `qps` earned since the last update, up to `burst`. A moment earlier than the
    /// last one (a wall clock stepping back) earns nothing and does not move the last update.
    fn refill(&mut self, now: M) {
        let Some(last) = self.last else {
            self.last = Some(now);
            return;
        };
        if self.refills() {
            let earned = now.since(last).as_secs_f64() * self.qps;
            self.tokens = (self.tokens + earned).min(self.burst);
        }
        self.last = Some(now.max(last));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Instant, SystemTime};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A reservation with a longest wait takes its token only when it comes in time; one that
    /// would come later leaves the bucket as it was, so the next caller's wait is unchanged.
    #[test]
    fn reserve_within_takes_nothing_when_the_token_comes_too_late() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10.0, 1);
        assert_eq!(b.reserve_within(t0, Duration::ZERO), Some(Duration::ZERO));
        assert_eq!(b.reserve_within(t0, ms(99)), None);
        assert_eq!(b.reserve_within(t0, ms(50)), None);
        assert_eq!(b.reserve_within(t0, ms(100)), Some(ms(100)));
        assert_eq!(
            b.reserve_within(t0, ms(150)),
            None,
            "the next is 200 ms away"
        );
        assert_eq!(b.reserve(t0), ms(200));

        let mut never = TokenBucket::new(0.0, 1);
        assert_eq!(never.reserve_within(t0, ms(1)), Some(Duration::ZERO));
        assert_eq!(never.reserve_within(t0, Duration::MAX), None);
        let mut free = TokenBucket::new(f64::INFINITY, 1);
        for _ in 0..3 {
            assert_eq!(
                free.reserve_within(t0, Duration::ZERO),
                Some(Duration::ZERO)
            );
        }
    }

    #[test]
    fn burst_then_debt_then_refill_up_to_burst() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10.0, 3);
        assert_eq!(
            [b.reserve(t0), b.reserve(t0), b.reserve(t0)],
            [Duration::ZERO; 3]
        );
        // In debt: each reservation waits one more interval.
        assert_eq!(b.reserve(t0), ms(100));
        assert_eq!(b.reserve(t0), ms(200));
        // After 300 ms the debt is paid and one token earned.
        let t1 = t0 + ms(300);
        assert_eq!(b.reserve(t1), Duration::ZERO);
        assert_eq!(b.reserve(t1), ms(100));
        // A long pause refills only up to the burst.
        let t2 = t1 + Duration::from_secs(60);
        for _ in 0..3 {
            assert!(b.try_take(t2));
        }
        assert!(!b.try_take(t2), "only burst tokens accumulate");
        assert!(b.try_take(t2 + ms(100)));
    }

    /// A reservation given back before its time returns its token; one whose time has come,
    /// or one with reservations after it, returns nothing or less (x/time/rate's `CancelAt`).
    #[test]
    fn a_cancelled_reservation_gives_its_token_back() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10.0, 1);
        assert_eq!(b.reserve(t0), Duration::ZERO);
        // The last reservation, given back 50 ms into its 100 ms wait: the next caller waits
        // what is left of the first interval, not a second one.
        assert_eq!(b.reserve(t0), ms(100));
        b.cancel(t0, ms(100), t0 + ms(50));
        assert_eq!(b.reserve(t0 + ms(50)), ms(50));
        // Given back after its time: spent.
        let t1 = t0 + Duration::from_secs(10);
        assert_eq!(b.reserve(t1), Duration::ZERO);
        assert_eq!(b.reserve(t1), ms(100));
        b.cancel(t1, ms(100), t1 + ms(100));
        assert_eq!(b.reserve(t1 + ms(100)), ms(100));
        // With two reservations after it, the first gives nothing back: both later callers
        // count on its interval.
        let t2 = t1 + Duration::from_secs(10);
        assert_eq!(b.reserve(t2), Duration::ZERO);
        assert_eq!(b.reserve(t2), ms(100));
        assert_eq!(b.reserve(t2), ms(200));
        assert_eq!(b.reserve(t2), ms(300));
        b.cancel(t2, ms(100), t2);
        assert_eq!(b.reserve(t2), ms(400));
        // The last of those gives back its whole token.
        b.cancel(t2, ms(400), t2);
        assert_eq!(b.reserve(t2), ms(400));
        // Never above the burst.
        let mut full = TokenBucket::new(10.0, 1);
        assert_eq!(full.reserve(t0), Duration::ZERO);
        assert_eq!(full.reserve(t0), ms(100));
        full.cancel(t0, ms(100), t0 + ms(99));
        full.cancel(t0, ms(100), t0 + ms(99));
        assert!(full.try_take(t0 + ms(99)));
        assert!(
            !full.try_take(t0 + ms(99)),
            "a second cancel overfilled the bucket"
        );
    }

    #[test]
    fn infinite_zero_and_nan_rates() {
        let t0 = Instant::now();
        let mut unlimited = TokenBucket::new(f64::INFINITY, 0);
        for _ in 0..1000 {
            assert_eq!(unlimited.reserve(t0), Duration::ZERO);
            assert!(unlimited.try_take(t0));
        }
        for qps in [0.0, -1.0, f64::NAN] {
            let mut frozen = TokenBucket::new(qps, 2);
            assert_eq!(frozen.reserve(t0), Duration::ZERO);
            assert!(frozen.try_take(t0));
            let later = t0 + Duration::from_secs(3600);
            assert_eq!(frozen.reserve(later), Duration::MAX, "qps {qps}");
            assert!(!frozen.try_take(later));
        }
    }

    #[test]
    fn a_tiny_rate_waits_at_most_forever_without_overflowing() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(f64::from(f32::MIN_POSITIVE), 1);
        assert_eq!(b.reserve(t0), Duration::ZERO);
        assert_eq!(b.reserve(t0), Duration::MAX);
    }

    #[test]
    fn a_wall_clock_stepping_back_earns_nothing() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut b = TokenBucket::new(1.0, 1);
        assert!(b.try_take(t0));
        // The clock steps back 10 s: no token, and the last update stays at t0.
        assert!(!b.try_take(t0 - Duration::from_secs(10)));
        assert!(!b.try_take(t0 + ms(500)));
        assert!(b.try_take(t0 + ms(1000)));
    }

    #[test]
    fn zero_burst_with_a_finite_rate_is_always_in_debt() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10.0, 0);
        assert_eq!(b.reserve(t0), ms(100));
        assert!(!b.try_take(t0 + Duration::from_secs(10)));
    }
}
