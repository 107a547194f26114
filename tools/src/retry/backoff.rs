//! [`Backoff`], client-go's `wait.Backoff`: a sequence of growing, jittered sleeps, and
//! [`jitter`], client-go's `wait.Jitter`.
//!
//! Each [`Backoff::step`] returns the current duration (plus jitter) and then multiplies the
//! duration by `factor` for the next step, up to `cap`. Reaching the cap ends the sequence:
//! `steps` drops to zero, exactly as in client-go, so a retry loop stops after the
//! sleep that reached the cap.

use std::future::Future;
use std::time::Duration;

/// Parameters of an exponential backoff, client-go's `wait.Backoff`.
///
/// ```
/// use std::time::Duration;
/// use kclient_tools::Backoff;
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
    /// zero, which ends a retry loop ([`on_error`](crate::on_error)) after that sleep.
    pub cap: Duration,
}

impl Backoff {
    /// The sleep for this step, advancing `duration` and `steps` for the next one
    /// (client-go's `Backoff.Step`).
    pub fn step(&mut self) -> Duration {
        if self.steps < 1 {
            return if self.jitter > 0.0 {
                jitter(self.duration, self.jitter)
            } else {
                self.duration
            };
        }
        self.steps -= 1;
        let current = self.duration;
        if self.factor != 0.0 {
            let next = self.duration.mul_f64(self.factor.max(0.0));
            if !self.cap.is_zero() && next > self.cap {
                self.duration = self.cap;
                self.steps = 0;
            } else {
                self.duration = next;
            }
        }
        if self.jitter > 0.0 {
            jitter(current, self.jitter)
        } else {
            current
        }
    }
}

/// `duration` plus a random extra of up to `max_factor * duration` (client-go's
/// `wait.Jitter`). A `max_factor` of zero or less means `1.0`.
///
/// ```
/// use std::time::Duration;
/// let d = kclient_tools::jitter(Duration::from_secs(2), 1.2);
/// assert!(d >= Duration::from_secs(2) && d < Duration::from_millis(4400));
/// ```
pub fn jitter(duration: Duration, max_factor: f64) -> Duration {
    let max_factor = if max_factor <= 0.0 { 1.0 } else { max_factor };
    duration + duration.mul_f64(rand::random::<f64>() * max_factor)
}

/// What one attempt under [`exponential_backoff`] ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt<T, R, E> {
    /// Success: stop with this value.
    Done(T),
    /// A retriable failure: sleep and try again, if steps remain.
    Retry(R),
    /// A final failure: stop with this error.
    Fail(E),
}

/// What [`exponential_backoff`] ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BackoffOutcome<T, R, E> {
    /// An attempt succeeded.
    Done(T),
    /// An attempt failed for good.
    Failed(E),
    /// The steps ran out (client-go's `ErrWaitTimeout`); the last retriable failure.
    TimedOut(R),
}

/// Calls `attempt` until it is done or fails for good, sleeping [`Backoff::step`] between
/// calls, at most `backoff.steps` times (client-go's `wait.ExponentialBackoff`).
///
/// A backoff with zero steps still calls `attempt` once: client-go would return without
/// calling it, leaving `OnError` to return a nil error for an operation that never ran, which
/// has no faithful equivalent in a `Result`.
pub(crate) async fn exponential_backoff<T, R, E, F, Fut>(
    mut backoff: Backoff,
    mut attempt: F,
) -> BackoffOutcome<T, R, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Attempt<T, R, E>>,
{
    if backoff.steps == 0 {
        backoff.steps = 1;
    }
    loop {
        let retry = match attempt().await {
            Attempt::Done(v) => return BackoffOutcome::Done(v),
            Attempt::Fail(e) => return BackoffOutcome::Failed(e),
            Attempt::Retry(r) => r,
        };
        if backoff.steps <= 1 {
            return BackoffOutcome::TimedOut(retry);
        }
        tokio::time::sleep(backoff.step()).await;
        // A sleep that reached the cap sets steps to zero: client-go stops here.
        if backoff.steps == 0 {
            return BackoffOutcome::TimedOut(retry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn step_multiplies_and_counts_down() {
        let mut b = Backoff {
            duration: ms(10),
            factor: 5.0,
            jitter: 0.0,
            steps: 4,
            cap: Duration::ZERO,
        };
        let sleeps: Vec<_> = (0..4).map(|_| b.step()).collect();
        assert_eq!(sleeps, vec![ms(10), ms(50), ms(250), ms(1250)]);
        assert_eq!(b.steps, 0);
        // Out of steps: the duration stays where it is.
        assert_eq!(b.step(), ms(6250));
        assert_eq!(b.step(), ms(6250));
    }

    #[test]
    fn zero_factor_keeps_the_duration() {
        let mut b = Backoff {
            duration: ms(7),
            factor: 0.0,
            jitter: 0.0,
            steps: 3,
            cap: Duration::ZERO,
        };
        assert_eq!([b.step(), b.step(), b.step()], [ms(7); 3]);
    }

    #[test]
    fn reaching_the_cap_ends_the_steps() {
        let mut b = Backoff {
            duration: ms(100),
            factor: 3.0,
            jitter: 0.0,
            steps: 10,
            cap: ms(500),
        };
        assert_eq!(b.step(), ms(100));
        assert_eq!(b.step(), ms(300)); // next would be 900 > 500: capped, steps -> 0
        assert_eq!(b.steps, 0);
        assert_eq!(b.duration, ms(500));
        assert_eq!(b.step(), ms(500));
    }

    #[test]
    fn jitter_stays_within_its_factor() {
        for _ in 0..1000 {
            let d = jitter(ms(100), 0.1);
            assert!(d >= ms(100) && d < ms(110), "{d:?}");
            let d = jitter(ms(100), 0.0); // means 1.0
            assert!(d >= ms(100) && d < ms(200), "{d:?}");
        }
        let mut b = Backoff {
            duration: ms(100),
            factor: 2.0,
            jitter: 0.5,
            steps: 2,
            cap: Duration::ZERO,
        };
        let first = b.step();
        assert!(first >= ms(100) && first < ms(150));
        // Jitter never feeds back into the base duration.
        assert_eq!(b.duration, ms(200));
    }

    #[tokio::test(start_paused = true)]
    async fn exponential_backoff_calls_steps_times_and_sleeps_between() {
        let start = tokio::time::Instant::now();
        let mut calls = 0;
        let b = Backoff {
            duration: ms(10),
            factor: 2.0,
            jitter: 0.0,
            steps: 4,
            cap: Duration::ZERO,
        };
        let out = exponential_backoff(b, || {
            calls += 1;
            let n = calls;
            async move { Attempt::<(), u32, ()>::Retry(n) }
        })
        .await;
        assert_eq!(out, BackoffOutcome::TimedOut(calls));
        assert_eq!(calls, 4);
        // 10 + 20 + 40: no sleep after the last call.
        assert_eq!(start.elapsed(), ms(70));
    }

    #[tokio::test(start_paused = true)]
    async fn exponential_backoff_stops_after_the_capped_sleep() {
        let mut calls = 0;
        let b = Backoff {
            duration: ms(10),
            factor: 10.0,
            jitter: 0.0,
            steps: 10,
            cap: ms(50),
        };
        let out = exponential_backoff(b, || {
            calls += 1;
            let n = calls;
            async move { Attempt::<(), u32, ()>::Retry(n) }
        })
        .await;
        assert_eq!(out, BackoffOutcome::TimedOut(calls));
        // Call, sleep 10 ms (the next duration 100 ms is capped: steps -> 0), stop.
        assert_eq!(calls, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn exponential_backoff_returns_early() {
        let mut calls = 0;
        let b = Backoff {
            duration: ms(10),
            factor: 1.0,
            jitter: 0.0,
            steps: 0,
            cap: Duration::ZERO,
        };
        let out = exponential_backoff(b, || {
            calls += 1;
            async { Attempt::<(), (), _>::Fail("boom") }
        })
        .await;
        assert_eq!(out, BackoffOutcome::Failed("boom"));
        assert_eq!(calls, 1, "zero steps still makes one call");
    }
}
