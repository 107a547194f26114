//! Polling and periodic loops: apimachinery's `util/wait` (`PollUntilContextTimeout`,
//! `PollUntilContextCancel`, `ExponentialBackoffWithContext`, `UntilWithContext`,
//! `JitterUntilWithContext`), on tokio's clock and a [`CancellationToken`] for Go's context.
//!
//! A *condition* is an async function returning `Ok(true)` when what it waits for holds,
//! `Ok(false)` to be asked again, or an error to stop the wait with. A poll ends with `Ok(())`
//! once the condition holds, or with a [`WaitError`] that says whether it was interrupted
//! (timed out, cancelled, or out of backoff steps: Go's `wait.Interrupted`) or the condition
//! failed.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use std::time::Duration;
//! use kclient_tools::wait::poll_until_timeout;
//!
//! let mut checks = 0;
//! let ready = poll_until_timeout(Duration::from_millis(1), Duration::from_secs(5), true, || {
//!     checks += 1;
//!     let n = checks;
//!     async move { Ok::<_, std::io::Error>(n == 3) }
//! })
//! .await;
//! assert!(ready.is_ok());
//! assert_eq!(checks, 3);
//!
//! let never = poll_until_timeout(Duration::from_millis(1), Duration::from_millis(5), false, || async {
//!     Ok::<_, std::io::Error>(false)
//! })
//! .await
//! .unwrap_err();
//! assert!(never.is_interrupted() && never.is_timeout());
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::time::Duration;

use kclient_flowcontrol::jitter;
use tokio::time::{Instant, sleep, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::retry::{Attempt, Backoff, BackoffOutcome, exponential_backoff as backoff_loop};

/// Why a wait ended without its condition holding: interrupted (see
/// [`is_interrupted`](WaitError::is_interrupted)) or the condition's own error `E`.
pub struct WaitError<E> {
    kind: Kind<E>,
}

enum Kind<E> {
    Timeout,
    Cancelled,
    StepsExhausted,
    Condition(E),
}

impl<E> WaitError<E> {
    fn new(kind: Kind<E>) -> Self {
        WaitError { kind }
    }

    /// Whether the wait stopped before the condition held for a reason of its own: the
    /// timeout passed, the token was cancelled, or the backoff ran out of steps (Go's
    /// `wait.Interrupted(err)`). `false` when the condition failed.
    pub fn is_interrupted(&self) -> bool {
        !matches!(self.kind, Kind::Condition(_))
    }

    /// Whether the timeout passed ([`poll_until_timeout`]) or the backoff ran out of steps
    /// ([`exponential_backoff`]): Go's `context.DeadlineExceeded` and `ErrWaitTimeout`.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, Kind::Timeout | Kind::StepsExhausted)
    }

    /// Whether the token was cancelled (Go's `context.Canceled`).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.kind, Kind::Cancelled)
    }

    /// The condition's error, if that is what ended the wait.
    pub fn condition_error(&self) -> Option<&E> {
        match &self.kind {
            Kind::Condition(e) => Some(e),
            _ => None,
        }
    }

    /// The condition's error, if that is what ended the wait, taken out.
    pub fn into_condition_error(self) -> Option<E> {
        match self.kind {
            Kind::Condition(e) => Some(e),
            _ => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for WaitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Timeout => f.write_str("timed out waiting for the condition"),
            Kind::Cancelled => f.write_str("the wait for the condition was cancelled"),
            Kind::StepsExhausted => {
                f.write_str("timed out waiting for the condition: no backoff steps left")
            }
            Kind::Condition(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug> fmt::Debug for WaitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind: &dyn fmt::Debug = match &self.kind {
            Kind::Timeout => &"Timeout",
            Kind::Cancelled => &"Cancelled",
            Kind::StepsExhausted => &"StepsExhausted",
            Kind::Condition(e) => e,
        };
        f.debug_struct("WaitError").field("kind", kind).finish()
    }
}

impl<E: std::error::Error + 'static> std::error::Error for WaitError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Condition(e) => Some(e),
            _ => None,
        }
    }
}

/// Checks `condition` every `interval` until it holds, fails, or `timeout` passes (Go's
/// `wait.PollUntilContextTimeout`).
///
/// With `immediate` the first check is made at once, and at least one check is made however
/// short the timeout; otherwise the first comes after one interval. The interval counts from
/// the start of each check: a check that takes longer than the interval is followed at once by
/// the next. A timeout ends the wait between checks, and also during one (the check's future is
/// dropped), which Go's cannot do; only the immediate check always runs to its end.
pub async fn poll_until_timeout<E, F, Fut>(
    interval: Duration,
    timeout: Duration,
    immediate: bool,
    condition: F,
) -> Result<(), WaitError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
{
    let deadline = Instant::now().checked_add(timeout);
    poll(interval, immediate, condition, async move {
        match deadline {
            Some(deadline) => sleep_until(deadline).await,
            None => std::future::pending().await,
        }
        Kind::Timeout
    })
    .await
}

/// Checks `condition` every `interval` until it holds, fails, or `token` is cancelled (Go's
/// `wait.PollUntilContextCancel`). `immediate` and the interval as in [`poll_until_timeout`]:
/// with `immediate` the condition is checked once even if the token is already cancelled.
pub async fn poll_until_cancelled<E, F, Fut>(
    token: &CancellationToken,
    interval: Duration,
    immediate: bool,
    condition: F,
) -> Result<(), WaitError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
{
    poll(interval, immediate, condition, async {
        token.cancelled().await;
        Kind::Cancelled
    })
    .await
}

/// The loop under both polls: `interrupt` resolves to why the wait was interrupted.
async fn poll<E, F, Fut>(
    interval: Duration,
    immediate: bool,
    mut condition: F,
    interrupt: impl Future<Output = Kind<E>>,
) -> Result<(), WaitError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
{
    let checked = |outcome: Result<bool, E>| match outcome {
        Ok(true) => Some(Ok(())),
        Ok(false) => None,
        Err(e) => Some(Err(WaitError::new(Kind::Condition(e)))),
    };
    // The first interval counts from the start, an immediate check included (Go starts its
    // timer before that check).
    let mut next = Instant::now().checked_add(interval);
    // Go's immediate check runs whatever the context says.
    if immediate && let Some(end) = checked(condition().await) {
        return end;
    }
    let mut interrupt = std::pin::pin!(interrupt);
    loop {
        let outcome = tokio::select! {
            biased;
            kind = &mut interrupt => return Err(WaitError::new(kind)),
            outcome = async {
                match next {
                    Some(at) => sleep_until(at).await,
                    // An interval past the end of time: never check again.
                    None => std::future::pending().await,
                }
                next = Instant::now().checked_add(interval);
                condition().await
            } => outcome,
        };
        if let Some(end) = checked(outcome) {
            return end;
        }
    }
}

/// Calls `condition` until it holds or fails, sleeping [`Backoff::step`] between calls, at most
/// `backoff.steps` times, or until `token` is cancelled (Go's `wait.ExponentialBackoffWithContext`,
/// on the same [`Backoff`] that [`on_error`](crate::on_error) steps). Out of steps, it ends with
/// an interrupted [`WaitError`] ([`is_timeout`](WaitError::is_timeout)). A backoff of zero steps
/// still checks once.
pub async fn exponential_backoff<E, F, Fut>(
    token: &CancellationToken,
    backoff: Backoff,
    mut condition: F,
) -> Result<(), WaitError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
{
    let attempts = backoff_loop(backoff, || {
        let check = condition();
        async move {
            match check.await {
                Ok(true) => Attempt::Done(()),
                Ok(false) => Attempt::Retry(()),
                Err(e) => Attempt::Fail(e),
            }
        }
    });
    tokio::select! {
        biased;
        () = token.cancelled() => Err(WaitError::new(Kind::Cancelled)),
        outcome = attempts => match outcome {
            BackoffOutcome::Done(()) => Ok(()),
            BackoffOutcome::Failed(e) => Err(WaitError::new(Kind::Condition(e))),
            BackoffOutcome::TimedOut(()) => Err(WaitError::new(Kind::StepsExhausted)),
        },
    }
}

/// Runs `f` every `period` until `token` is cancelled (Go's `wait.UntilWithContext`): the
/// period counts from the end of each run ("sliding"), and `f` is not started once the token
/// is cancelled; a run in progress is left to finish. This is how sample-controller runs each
/// worker: `until(&token, Duration::from_secs(1), || run_worker())`.
pub async fn until<F, Fut>(token: &CancellationToken, period: Duration, f: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    jitter_until(token, period, 0.0, true, f).await;
}

/// Runs `f` every `period` until `token` is cancelled, each period stretched by up to
/// `jitter_factor` times itself at random when `jitter_factor > 0` (Go's
/// `wait.JitterUntilWithContext`). With `sliding` the period counts from the end of each run;
/// without, from its start, so that a run longer than the period is followed at once by the
/// next (Go's `NonSlidingUntil`). `f` is not started once the token is cancelled, and a run in
/// progress is left to finish.
pub async fn jitter_until<F, Fut>(
    token: &CancellationToken,
    period: Duration,
    jitter_factor: f64,
    sliding: bool,
    mut f: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let period_now = || {
        if jitter_factor > 0.0 {
            jitter(period, jitter_factor)
        } else {
            period
        }
    };
    while !token.is_cancelled() {
        let started = Instant::now();
        let wait = (!sliding).then(period_now);
        f().await;
        let pause = match wait {
            Some(wait) => started.checked_add(wait).map(|end| {
                end.checked_duration_since(Instant::now())
                    .unwrap_or_default()
            }),
            None => Some(period_now()),
        };
        let Some(pause) = pause else { return };
        tokio::select! {
            biased;
            () = token.cancelled() => return,
            () = sleep(pause) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Notes the time of each call, as ms since `start`; returns the call's number (1-based).
    fn note(start: Instant, times: &Cell<Vec<u64>>) -> usize {
        let mut t = times.take();
        t.push(start.elapsed().as_millis() as u64);
        let n = t.len();
        times.set(t);
        n
    }

    /// A condition that records when it was checked (see [`note`]) and holds on check number
    /// `holds_on` (1-based; 0: never).
    fn recorder<'a>(
        start: Instant,
        times: &'a Cell<Vec<u64>>,
        holds_on: usize,
    ) -> impl FnMut() -> std::future::Ready<Result<bool, &'static str>> + 'a {
        move || std::future::ready(Ok(note(start, times) == holds_on))
    }

    #[tokio::test(start_paused = true)]
    async fn polls_at_the_interval_until_the_condition_holds() {
        let start = Instant::now();
        let times = Cell::new(Vec::new());
        poll_until_timeout(ms(10), ms(1_000), false, recorder(start, &times, 3))
            .await
            .unwrap();
        assert_eq!(times.take(), [10, 20, 30]);

        let start = Instant::now();
        poll_until_timeout(ms(10), ms(1_000), true, recorder(start, &times, 3))
            .await
            .unwrap();
        assert_eq!(times.take(), [0, 10, 20]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_interrupts_and_an_immediate_check_still_runs() {
        let start = Instant::now();
        let times = Cell::new(Vec::new());
        let err = poll_until_timeout(ms(10), ms(35), false, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_interrupted() && err.is_timeout() && !err.is_cancelled());
        assert_eq!(err.to_string(), "timed out waiting for the condition");
        assert_eq!(times.take(), [10, 20, 30]);
        assert_eq!(start.elapsed(), ms(35));

        let start = Instant::now();
        let err = poll_until_timeout(ms(10), Duration::ZERO, true, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_timeout());
        assert_eq!(times.take(), [0]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_condition_error_ends_the_poll_with_it() {
        let mut calls = 0;
        let err = poll_until_timeout(ms(1), ms(100), true, || {
            calls += 1;
            let n = calls;
            async move {
                if n == 2 {
                    Err("no route to host")
                } else {
                    Ok(false)
                }
            }
        })
        .await
        .unwrap_err();
        assert!(!err.is_interrupted() && !err.is_timeout());
        assert_eq!(err.condition_error(), Some(&"no route to host"));
        assert_eq!(err.to_string(), "no route to host");
        assert_eq!(err.into_condition_error(), Some("no route to host"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_check_is_followed_at_once() {
        let start = Instant::now();
        let times = Cell::new(Vec::new());
        poll_until_timeout(ms(10), ms(1_000), true, || {
            let n = note(start, &times);
            async move {
                if n == 1 {
                    sleep(ms(25)).await;
                }
                Ok::<_, ()>(n == 3)
            }
        })
        .await
        .unwrap();
        // The first check ran 0-25 ms; the next tick (10 ms after the first check started)
        // had passed, so the second ran at once, the third 10 ms after it started.
        assert_eq!(times.take(), [0, 25, 35]);
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_interrupts_between_and_during_checks() {
        let token = CancellationToken::new();
        let start = Instant::now();
        let times = Cell::new(Vec::new());
        let cancel = token.clone();
        tokio::spawn(async move {
            sleep(ms(25)).await;
            cancel.cancel();
        });
        let err = poll_until_cancelled(&token, ms(10), true, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_cancelled() && err.is_interrupted() && !err.is_timeout());
        assert_eq!(times.take(), [0, 10, 20]);
        assert_eq!(start.elapsed(), ms(25));

        // Already cancelled: the immediate check still runs once; without it, none.
        let start = Instant::now();
        let err = poll_until_cancelled(&token, ms(10), true, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(times.take(), [0]);
        let err = poll_until_cancelled(&token, ms(10), false, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(times.take(), Vec::<u64>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn exponential_backoff_steps_then_times_out() {
        let token = CancellationToken::new();
        let backoff = Backoff {
            duration: ms(10),
            factor: 2.0,
            jitter: 0.0,
            steps: 4,
            cap: Duration::ZERO,
        };
        let start = Instant::now();
        let times = Cell::new(Vec::new());
        let err = exponential_backoff(&token, backoff, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_timeout() && err.is_interrupted());
        assert_eq!(times.take(), [0, 10, 30, 70]);

        let start = Instant::now();
        exponential_backoff(&token, backoff, recorder(start, &times, 2))
            .await
            .unwrap();
        assert_eq!(times.take(), [0, 10]);

        token.cancel();
        let err = exponential_backoff(&token, backoff, recorder(start, &times, 0))
            .await
            .unwrap_err();
        assert!(err.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn until_slides_and_stops_when_cancelled() {
        let token = CancellationToken::new();
        let start = Instant::now();
        let runs = Cell::new(Vec::new());
        let stop = token.clone();
        until(&token, ms(10), || {
            let n = note(start, &runs);
            let stop = stop.clone();
            async move {
                sleep(ms(5)).await;
                if n == 3 {
                    stop.cancel();
                }
            }
        })
        .await;
        // Each run takes 5 ms and the period counts from its end.
        assert_eq!(runs.take(), [0, 15, 30]);
        assert_eq!(start.elapsed(), ms(35));
    }

    #[tokio::test(start_paused = true)]
    async fn non_sliding_counts_from_the_start_of_each_run() {
        let token = CancellationToken::new();
        let start = Instant::now();
        let runs = Cell::new(Vec::new());
        let stop = token.clone();
        jitter_until(&token, ms(10), 0.0, false, || {
            let n = note(start, &runs);
            let stop = stop.clone();
            async move {
                // The second run outlasts the period: the third follows at once.
                sleep(ms(if n == 2 { 12 } else { 5 })).await;
                if n == 4 {
                    stop.cancel();
                }
            }
        })
        .await;
        assert_eq!(runs.take(), [0, 10, 22, 32]);
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_stretches_each_period_within_the_factor() {
        let token = CancellationToken::new();
        let start = Instant::now();
        let runs = Cell::new(Vec::new());
        let stop = token.clone();
        jitter_until(&token, ms(100), 0.5, true, || {
            let mut r = runs.take();
            r.push(start.elapsed());
            let n = r.len();
            runs.set(r);
            if n == 20 {
                stop.cancel();
            }
            async {}
        })
        .await;
        let runs = runs.take();
        assert_eq!(runs.len(), 20);
        let gaps: Vec<Duration> = runs.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| *g >= ms(100) && *g <= ms(150)),
            "{gaps:?}"
        );
        // Not all the same: the jitter is random per period.
        assert!(gaps.iter().any(|g| *g != gaps[0]), "{gaps:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_endless_interval_or_timeout_does_not_overflow() {
        let err = poll_until_timeout(Duration::MAX, ms(5), true, || async { Ok::<_, ()>(false) })
            .await
            .unwrap_err();
        assert!(err.is_timeout());
        let mut calls = 0;
        poll_until_timeout(ms(1), Duration::MAX, false, || {
            calls += 1;
            let n = calls;
            async move { Ok::<_, ()>(n == 2) }
        })
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn nothing_runs_once_cancelled() {
        let token = CancellationToken::new();
        token.cancel();
        let mut runs = 0;
        until(&token, ms(1), || {
            runs += 1;
            async {}
        })
        .await;
        assert_eq!(runs, 0);
    }
}
