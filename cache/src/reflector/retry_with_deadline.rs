//! How long the reflector keeps re-watching after internal errors before it relists (client-go's
//! `RetryWithDeadline`, `retry_with_deadline.go`).
//!
//! A window of retryable errors opens at the first one. It stays open while each error follows
//! the previous one within `min_reset_period` (client-go passes a minute); an error that comes
//! later than that starts a new window, as does the first error after
//! [`should_retry`](RetryWithDeadline::should_retry) said no. The reflector retries while the
//! window is at most `max_retry_duration` old (zero: never). Errors that are not retryable leave
//! the window as it is. The reflector starts afresh each time it lists, as client-go makes one
//! `RetryWithDeadline` per watch loop.

use std::time::Duration;

use kclient_apimachinery::Error;
use tokio::time::Instant;

/// A window of retryable errors and whether the next one may still be retried.
#[derive(Debug)]
pub(super) struct RetryWithDeadline {
    max_retry_duration: Duration,
    min_reset_period: Duration,
    is_retryable: fn(&Error) -> bool,
    /// The open window; `None` until a retryable error comes, and after a reset.
    window: Option<Window>,
}

/// The first and the last retryable error of the open window.
#[derive(Debug, Clone, Copy)]
struct Window {
    first: Instant,
    last: Instant,
}

impl RetryWithDeadline {
    pub(super) fn new(
        max_retry_duration: Duration,
        min_reset_period: Duration,
        is_retryable: fn(&Error) -> bool,
    ) -> Self {
        RetryWithDeadline {
            max_retry_duration,
            min_reset_period,
            is_retryable,
            window: None,
        }
    }

    /// Records `err`, which happened at `now` (client-go's `After`): a retryable error extends
    /// the open window, or opens a new one if the last error was `min_reset_period` or more ago.
    pub(super) fn after(&mut self, err: &Error, now: Instant) {
        if !(self.is_retryable)(err) {
            return;
        }
        match &mut self.window {
            Some(window) if now.saturating_duration_since(window.last) < self.min_reset_period => {
                window.last = now;
            }
            _ => {
                self.window = Some(Window {
                    first: now,
                    last: now,
                })
            }
        }
    }

    /// Whether to retry at `now`: the window opened at most `max_retry_duration` ago (client-go's
    /// `ShouldRetry`). Saying no closes the window.
    pub(super) fn should_retry(&mut self, now: Instant) -> bool {
        if self.max_retry_duration.is_zero() {
            return false;
        }
        if let Some(window) = self.window
            && now.saturating_duration_since(window.first) <= self.max_retry_duration
        {
            return true;
        }
        self.reset();
        false
    }

    /// Closes the window.
    pub(super) fn reset(&mut self) {
        self.window = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What happens at a time: a retryable (500) or other (429) error, or the question.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Internal,
        Other,
        /// Asks `should_retry`, expecting the answer.
        Ask(bool),
    }
    use Step::{Ask, Internal, Other};

    /// Runs `steps` at the given seconds on a window of `max` seconds that resets after 60 s
    /// without an error, checking each answer.
    fn run(max: u64, steps: &[(u64, Step)]) {
        let start = Instant::now();
        let mut retry = RetryWithDeadline::new(
            Duration::from_secs(max),
            Duration::from_secs(60),
            Error::is_internal_error,
        );
        for &(at, step) in steps {
            let now = start + Duration::from_secs(at);
            match step {
                Internal => retry.after(&Error::new_internal_error("etcd is sad"), now),
                Other => retry.after(&Error::new_too_many_requests("slow down", 1), now),
                Ask(want) => assert_eq!(retry.should_retry(now), want, "at {at} s in {steps:?}"),
            }
        }
    }

    #[test]
    fn errors_closer_than_the_reset_period_share_one_window_until_its_deadline() {
        // The deadline is inclusive.
        run(
            30,
            &[
                (0, Internal),
                (0, Ask(true)),
                (20, Internal),
                (20, Ask(true)),
                (30, Internal),
                (30, Ask(true)),
                (31, Internal),
                (31, Ask(false)),
            ],
        );
    }

    #[test]
    fn an_error_a_reset_period_after_the_last_one_opens_a_new_window() {
        // 10 minutes of health after the first 500: the next one is retried again.
        run(
            30,
            &[
                (0, Internal),
                (0, Ask(true)),
                (600, Internal),
                (600, Ask(true)),
            ],
        );
        // Exactly the reset period counts as apart.
        run(30, &[(0, Internal), (60, Internal), (89, Ask(true))]);
        // Errors 59 s apart keep the window of the first.
        run(
            100,
            &[
                (0, Internal),
                (59, Internal),
                (118, Internal),
                (118, Ask(false)),
            ],
        );
    }

    #[test]
    fn saying_no_closes_the_window_so_the_next_error_opens_one() {
        run(
            30,
            &[
                (0, Internal),
                (40, Internal),
                (40, Ask(false)),
                (41, Internal),
                (41, Ask(true)),
            ],
        );
    }

    #[test]
    fn other_errors_leave_the_window_as_it_is() {
        // A 429 neither extends the window nor resets it.
        run(
            30,
            &[(0, Internal), (50, Other), (55, Internal), (55, Ask(false))],
        );
        run(
            30,
            &[(0, Internal), (30, Other), (75, Internal), (75, Ask(true))],
        );
    }

    #[test]
    fn a_zero_duration_never_retries() {
        run(0, &[(0, Internal), (0, Ask(false))]);
    }
}
