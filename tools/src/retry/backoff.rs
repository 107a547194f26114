//! [`exponential_backoff`], client-go's `wait.ExponentialBackoff`: an attempt loop that sleeps
//! the steps of a [`Backoff`] (the one in `kclient_flowcontrol`, which the reflector's retry
//! delays step too) between attempts.

use std::future::Future;

use kclient_flowcontrol::Backoff;

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
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
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
