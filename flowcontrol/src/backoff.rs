//! [`Backoff`], client-go's `wait.Backoff`; [`jitter`], `wait.Jitter`; and
//! [`DelayWithReset`], `Backoff.DelayWithReset` (the reflector's retry delays).
//!
//! Each [`Backoff::step`] returns the current duration (plus jitter) and then multiplies the
//! duration by `factor` for the next step, up to `cap`. Reaching the cap ends the sequence:
//! `steps` drops to zero, exactly as in client-go, so a retry loop stops after the sleep that
//! reached the cap, while a [`DelayWithReset`] goes on returning the capped delay.

use std::time::Duration;

use crate::moment::Moment;

/// Parameters of an exponential backoff, client-go's `wait.Backoff`.
///
/// ```
/// use std::time::Duration;
/// use kclient_flowcontrol::Backoff;
///
/// let mut backoff = Backoff {
///     duration: Duration::from_millis(10),
///     factor: 2.0,
///     jitter: 0.0,
///     steps: 3,
///     cap: Duration::ZERO,
/// };
/// assert_eq!(backoff.step(), Duration::from_millis(10));
/// assert_eq!(backoff.step(), Duration::from_millis(20));
/// assert_eq!(backoff.step(), Duration::from_millis(40));
/// assert_eq!(backoff.steps, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The next sleep, before jitter. Multiplied by `factor` after each step.
    pub duration: Duration,
    /// What `duration` is multiplied by after each step; `0.0` keeps it constant (as `1.0`).
    pub factor: f64,
    /// Each sleep is `duration + rand[0,1) * jitter * duration`; `0.0` (or less) adds none.
    pub jitter: f64,
    /// How many steps remain. Once it reaches zero, [`step`](Backoff::step) keeps returning
    /// `duration` (with jitter) without changing it.
    pub steps: u32,
    /// The largest `duration` may grow to; zero means no cap. Reaching the cap sets `steps` to
    /// zero, which ends a retry loop after that sleep.
    pub cap: Duration,
}

impl Backoff {
    /// The sleep for this step, advancing `duration` and `steps` for the next one
    /// (client-go's `Backoff.Step`).
    pub fn step(&mut self) -> Duration {
        if self.steps < 1 {
            return self.jittered(self.duration);
        }
        self.steps -= 1;
        let current = self.duration;
        if self.factor != 0.0 {
            let next = scale(self.duration, self.factor.max(0.0));
            if !self.cap.is_zero() && next > self.cap {
                self.duration = self.cap;
                self.steps = 0;
            } else {
                self.duration = next;
            }
        }
        self.jittered(current)
    }

    /// A delay sequence of this backoff that starts again once `reset_after` has passed
    /// without a delay being asked for (client-go's `DelayWithReset`).
    pub fn delay_with_reset<M: Moment>(self, reset_after: Duration) -> DelayWithReset<M> {
        DelayWithReset {
            initial: self,
            current: self,
            reset_after,
            last: None,
        }
    }

    fn jittered(&self, duration: Duration) -> Duration {
        if self.jitter > 0.0 {
            jitter(duration, self.jitter)
        } else {
            duration
        }
    }
}

/// `duration` plus a random extra of up to `max_factor * duration` (client-go's
/// `wait.Jitter`), saturating at `Duration::MAX`. A `max_factor` of zero or less (or not a
/// finite number) means `1.0`.
///
/// ```
/// use std::time::Duration;
/// let d = kclient_flowcontrol::jitter(Duration::from_secs(2), 1.2);
/// assert!(d >= Duration::from_secs(2) && d < Duration::from_millis(4400));
/// ```
pub fn jitter(duration: Duration, max_factor: f64) -> Duration {
    let max_factor = if max_factor > 0.0 && max_factor.is_finite() {
        max_factor
    } else {
        1.0
    };
    duration.saturating_add(scale(duration, rand::random::<f64>() * max_factor))
}

/// `duration` times a non-negative `factor`, saturating at `Duration::MAX` (where
/// `Duration::mul_f64` panics: an infinite factor, or a product past the largest duration).
fn scale(duration: Duration, factor: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

/// The delays of one [`Backoff`], started again after a healthy stretch: made by
/// [`Backoff::delay_with_reset`].
///
/// client-go's `DelayWithReset` starts again once the reset interval has passed since its last
/// reset; this one starts again once it has passed since the last delay (the last failure),
/// which is what "healthy for two minutes" means and what client-go's older
/// `ExponentialBackoffManager` did. A sequence whose steps run out keeps returning its last
/// duration rather than ending: a delay function has no way to say "stop".
///
/// ```
/// use std::time::{Duration, Instant};
/// use kclient_flowcontrol::Backoff;
///
/// let backoff = Backoff {
///     duration: Duration::from_millis(800),
///     factor: 2.0,
///     jitter: 0.0,
///     steps: u32::MAX,
///     cap: Duration::from_secs(30),
/// };
/// let mut delays = backoff.delay_with_reset(Duration::from_secs(120));
/// let t0 = Instant::now();
/// assert_eq!(delays.next_delay(t0), Duration::from_millis(800));
/// assert_eq!(delays.next_delay(t0), Duration::from_millis(1600));
/// // Two quiet minutes later the sequence starts again.
/// assert_eq!(delays.next_delay(t0 + Duration::from_secs(121)), Duration::from_millis(800));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayWithReset<M> {
    initial: Backoff,
    current: Backoff,
    reset_after: Duration,
    last: Option<M>,
}

impl<M: Moment> DelayWithReset<M> {
    /// The delay before the next attempt, asked for at `now`.
    pub fn next_delay(&mut self, now: M) -> Duration {
        if self
            .last
            .is_some_and(|last| now.since(last) > self.reset_after)
        {
            self.current = self.initial;
        }
        self.last = Some(now);
        self.current.step()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn exact(duration: Duration, factor: f64, steps: u32, cap: Duration) -> Backoff {
        Backoff {
            duration,
            factor,
            jitter: 0.0,
            steps,
            cap,
        }
    }

    #[test]
    fn step_multiplies_and_counts_down() {
        let mut b = exact(ms(10), 5.0, 4, Duration::ZERO);
        let sleeps: Vec<_> = (0..4).map(|_| b.step()).collect();
        assert_eq!(sleeps, vec![ms(10), ms(50), ms(250), ms(1250)]);
        assert_eq!(b.steps, 0);
        // Out of steps: the duration stays where it is.
        assert_eq!([b.step(), b.step()], [ms(6250); 2]);
    }

    #[test]
    fn a_step_past_the_largest_duration_saturates() {
        let half = Duration::from_secs(u64::MAX / 2);
        let mut b = exact(half, 3.0, 3, Duration::ZERO);
        assert_eq!(
            [b.step(), b.step(), b.step()],
            [half, Duration::MAX, Duration::MAX]
        );
        let mut b = exact(ms(1), f64::INFINITY, 2, Duration::ZERO);
        assert_eq!([b.step(), b.step()], [ms(1), Duration::MAX]);
    }

    #[test]
    fn zero_factor_keeps_the_duration() {
        let mut b = exact(ms(7), 0.0, 3, Duration::ZERO);
        assert_eq!([b.step(), b.step(), b.step()], [ms(7); 3]);
    }

    #[test]
    fn reaching_the_cap_ends_the_steps() {
        let mut b = exact(ms(100), 3.0, 10, ms(500));
        assert_eq!(b.step(), ms(100));
        assert_eq!(b.step(), ms(300)); // next would be 900 > 500: capped, steps -> 0
        assert_eq!(b.steps, 0);
        assert_eq!(b.duration, ms(500));
        assert_eq!(b.step(), ms(500));
    }

    #[test]
    fn jitter_stays_within_its_factor_and_never_feeds_back() {
        for _ in 0..1000 {
            let d = jitter(ms(100), 0.1);
            assert!(d >= ms(100) && d < ms(110), "{d:?}");
            let d = jitter(ms(100), 0.0); // means 1.0
            assert!(d >= ms(100) && d < ms(200), "{d:?}");
        }
        assert_eq!(jitter(Duration::MAX, 1.0), Duration::MAX, "saturates");
        for _ in 0..100 {
            // An extra beyond `Duration::MAX` (factor over 1) saturates too.
            assert_eq!(jitter(Duration::MAX, 1.2), Duration::MAX);
            for nonsense in [f64::NAN, f64::INFINITY, -1.0] {
                let d = jitter(ms(100), nonsense); // means 1.0
                assert!(d >= ms(100) && d < ms(200), "{nonsense}: {d:?}");
            }
        }
        let mut b = Backoff {
            jitter: 0.5,
            ..exact(ms(100), 2.0, 2, Duration::ZERO)
        };
        let first = b.step();
        assert!(first >= ms(100) && first < ms(150));
        assert_eq!(b.duration, ms(200));
    }

    #[test]
    fn delays_grow_cap_jitter_and_reset_after_a_quiet_stretch() {
        let reflector = Backoff {
            jitter: 1.0,
            ..exact(ms(800), 2.0, u32::MAX, Duration::from_secs(30))
        };
        let mut delays = reflector.delay_with_reset(Duration::from_secs(120));
        let t0 = Instant::now();
        for base in [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0] {
            let d = delays.next_delay(t0).as_secs_f64();
            assert!(
                d >= base - 1e-9 && d < 2.0 * base,
                "{d} not in [{base}, {})",
                2.0 * base
            );
        }
        // Failures 100 s apart are not a quiet stretch: no reset.
        let t1 = t0 + Duration::from_secs(100);
        assert!(delays.next_delay(t1) >= Duration::from_secs(30));
        let d = delays
            .next_delay(t1 + Duration::from_secs(121))
            .as_secs_f64();
        assert!((0.8..1.6).contains(&d), "{d} after reset");
    }
}
