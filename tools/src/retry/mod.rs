//! Retrying an operation with backoff, client-go's `util/retry`: [`retry_on_conflict`] for the
//! read-modify-write loop against `409 Conflict`, and [`on_error`] for any retriable error.
//!
//! The operation is an async closure called afresh on every attempt, so it must re-read the
//! object it updates: retrying the same stale write would conflict forever.

mod backoff;

use std::future::Future;

use kclient_apimachinery::Error;

use std::time::Duration;

pub(crate) use backoff::{Attempt, BackoffOutcome, exponential_backoff};
pub use kclient_flowcontrol::{Backoff, jitter};

/// client-go's `retry.DefaultRetry`: 5 tries 10 ms apart (jitter 0.1), for conflicts between
/// controllers that are expected to resolve almost immediately.
pub const DEFAULT_RETRY: Backoff = Backoff {
    duration: Duration::from_millis(10),
    factor: 1.0,
    jitter: 0.1,
    steps: 5,
    cap: Duration::ZERO,
};

/// client-go's `retry.DefaultBackoff`: 4 tries sleeping 10, 50 and 250 ms (jitter 0.1), for
/// errors that may take a moment to clear.
pub const DEFAULT_BACKOFF: Backoff = Backoff {
    duration: Duration::from_millis(10),
    factor: 5.0,
    jitter: 0.1,
    steps: 4,
    cap: Duration::ZERO,
};

/// Runs `f` until it succeeds, returns an error `retriable` rejects, or `backoff` runs out of
/// steps, sleeping between attempts (client-go's `retry.OnError`).
///
/// On timeout, returns the last retriable error. A backoff with zero steps still makes one
/// attempt.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kclient_tools::{on_error, DEFAULT_BACKOFF};
///
/// let mut attempts = 0;
/// let result = on_error(DEFAULT_BACKOFF, |e: &&str| *e == "busy", || {
///     attempts += 1;
///     let n = attempts;
///     async move { if n < 3 { Err("busy") } else { Ok(n) } }
/// })
/// .await;
/// assert_eq!(result, Ok(3));
/// # }
/// ```
pub async fn on_error<T, E, R, F, Fut>(backoff: Backoff, retriable: R, mut f: F) -> Result<T, E>
where
    R: Fn(&E) -> bool,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let outcome = exponential_backoff(backoff, || {
        let fut = f();
        let retriable = &retriable;
        async move {
            match fut.await {
                Ok(v) => Attempt::Done(v),
                Err(e) if retriable(&e) => Attempt::Retry(e),
                Err(e) => Attempt::Fail(e),
            }
        }
    })
    .await;
    match outcome {
        BackoffOutcome::Done(v) => Ok(v),
        BackoffOutcome::Failed(e) | BackoffOutcome::TimedOut(e) => Err(e),
    }
}

/// Runs a read-modify-write `f` again while it fails with `409 Conflict`, sleeping per
/// `backoff` (client-go's `retry.RetryOnConflict`). Usually called with [`DEFAULT_RETRY`].
///
/// `f` must fetch the latest object on every attempt, apply its change, and update: a
/// conflict means someone else wrote in between. On timeout, returns the last conflict.
///
/// ```no_run
/// # async fn run(clientset: kclient_clientset::Clientset) -> Result<(), kclient_apimachinery::Error> {
/// use kclient_apimachinery::{GetOptions, UpdateOptions};
/// use kclient_tools::{retry_on_conflict, DEFAULT_RETRY};
///
/// let config_maps = clientset.core_v1().config_maps("default");
/// retry_on_conflict(DEFAULT_RETRY, || async {
///     let mut cm = config_maps.get("settings", &GetOptions::default()).await?;
///     cm.data.get_or_insert_with(Default::default).insert("mode", "fast".into());
///     config_maps.update(&cm, &UpdateOptions::default()).await
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub async fn retry_on_conflict<T, F, Fut>(backoff: Backoff, f: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    on_error(backoff, Error::is_conflict, f).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn conflict() -> Error {
        Error::new_conflict("", "configmaps", "cm", "the object has been modified")
    }

    #[test]
    fn defaults_match_client_go() {
        assert_eq!(DEFAULT_RETRY.steps, 5);
        assert_eq!(DEFAULT_RETRY.duration, Duration::from_millis(10));
        assert_eq!(DEFAULT_RETRY.factor, 1.0);
        assert_eq!(DEFAULT_RETRY.jitter, 0.1);
        assert_eq!(DEFAULT_BACKOFF.steps, 4);
        assert_eq!(DEFAULT_BACKOFF.duration, Duration::from_millis(10));
        assert_eq!(DEFAULT_BACKOFF.factor, 5.0);
        assert_eq!(DEFAULT_BACKOFF.jitter, 0.1);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_on_conflict_retries_until_success() {
        let calls = Cell::new(0);
        let out = retry_on_conflict(DEFAULT_RETRY, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move { if n < 3 { Err(conflict()) } else { Ok(n) } }
        })
        .await;
        assert_eq!(out.ok(), Some(3));
        assert_eq!(calls.get(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_on_conflict_gives_up_after_steps_with_the_last_conflict() {
        let start = tokio::time::Instant::now();
        let calls = Cell::new(0);
        let out: Result<(), Error> = retry_on_conflict(DEFAULT_RETRY, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                Err(Error::new_conflict(
                    "",
                    "configmaps",
                    "cm",
                    &format!("attempt {n}"),
                ))
            }
        })
        .await;
        let err = out.expect_err("every attempt conflicted");
        assert!(err.is_conflict());
        assert!(err.to_string().contains("attempt 5"), "{err}");
        assert_eq!(calls.get(), 5);
        // Four sleeps of 10 ms plus up to 10% jitter each.
        let elapsed = start.elapsed();
        assert!(elapsed >= Duration::from_millis(40) && elapsed <= Duration::from_millis(44));
    }

    #[tokio::test(start_paused = true)]
    async fn retry_on_conflict_returns_other_errors_at_once() {
        let calls = Cell::new(0);
        let out: Result<(), Error> = retry_on_conflict(DEFAULT_RETRY, || {
            calls.set(calls.get() + 1);
            async { Err(Error::new_not_found("", "configmaps", "cm")) }
        })
        .await;
        assert!(out.expect_err("not found").is_not_found());
        assert_eq!(calls.get(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn on_error_uses_the_predicate() {
        let calls = Cell::new(0);
        let out: Result<u32, Error> = on_error(
            DEFAULT_BACKOFF,
            |e: &Error| e.is_not_found(),
            || {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move {
                    if n < 4 {
                        Err(Error::new_not_found("", "pods", "p"))
                    } else {
                        Ok(n)
                    }
                }
            },
        )
        .await;
        assert_eq!(out.ok(), Some(4));
        // DEFAULT_BACKOFF has 4 steps: a fifth attempt never happens.
        calls.set(0);
        let out: Result<u32, Error> = on_error(
            DEFAULT_BACKOFF,
            |e: &Error| e.is_not_found(),
            || {
                calls.set(calls.get() + 1);
                async { Err(Error::new_not_found("", "pods", "p")) }
            },
        )
        .await;
        assert!(out.expect_err("timed out").is_not_found());
        assert_eq!(calls.get(), 4);
    }
}
