//! Retry decisions, client-go's `rest/with_retry.go`.
//!
//! A request is retried at most `max_retries` times (10 by default; a negative setting means
//! 0). A response is retried when it is a 429 or has a status of 500 or more (600 to 999
//! too, as client-go's `checkWait` has it) **and** carries an integer
//! `Retry-After` (seconds), after sleeping that long. A GET read whole, or a watch, whose
//! connection was reset or hit EOF is retried as if it had received a 500 with
//! `Retry-After: 1`; a stream ([`Request::stream`](crate::Request::stream), client-go's
//! `Stream`) is not. A WebSocket upgrade (exec, attach, port-forward, whose command may
//! already run) is never retried, not even after a `Retry-After` answer, as client-go's
//! executors make one attempt. Requests whose body is a stream (it cannot be replayed) are
//! never retried. Every retry waits on the rate limiter
//! again. When the last attempt fails with a transport error, the error also names the
//! previous attempt's error.
//!
//! The request's timeout ([`Request::timeout`](crate::Request::timeout)) is a deadline over
//! all of its attempts, as client-go's request context is: it starts after the first wait on
//! the rate limiter. The decisions here do not look at it; the request loop bounds each
//! attempt, each wait before a retry and each retry's wait on the rate limiter by it, which
//! [`WithRetry::deadline`] hands out. A retry whose `Retry-After` (or backoff) would end at or
//! past the deadline waits until the deadline and then fails with a timeout error naming the
//! answer that asked for it, as client-go's sleep with the request's context ends at the
//! deadline and its next step fails with `context deadline exceeded`; a retry whose token
//! would come after it fails at once
//! ([`RateLimiter::wait_until`](crate::RateLimiter::wait_until)), as client-go's limiter
//! answers "would exceed context deadline".

use std::time::Duration;

use http::{HeaderMap, StatusCode};
use kclient_apimachinery::{Error, TransportErrorKind};

use crate::body::Deadline;

/// client-go's default `maxRetries`.
pub const DEFAULT_MAX_RETRIES: u32 = 10;

/// The retry state of one request.
#[derive(Debug)]
pub(crate) struct WithRetry {
    max_retries: u32,
    attempts: u32,
    replayable: bool,
    previous: Option<String>,
    /// When the request's timeout ends, once started.
    deadline: Option<Deadline>,
}

impl WithRetry {
    pub(crate) fn new(max_retries: u32, replayable: bool) -> Self {
        WithRetry {
            max_retries,
            attempts: 0,
            replayable,
            previous: None,
            deadline: None,
        }
    }

    /// Starts the request's timeout, if it has one, the first time it is called; later calls
    /// keep the first deadline. Returns the deadline.
    pub(crate) fn start_deadline(&mut self, timeout: Option<Duration>) -> Option<Deadline> {
        if self.deadline.is_none() {
            self.deadline = timeout.and_then(Deadline::after);
        }
        self.deadline
    }

    /// The request's deadline, once started.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        self.deadline
    }

    /// How many retries were made so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether a retry may be made: the body can be replayed and retries are left. The
    /// request's deadline does not take part: a wait that would pass it ends in a timeout
    /// error at the deadline, which the request loop's wait gives.
    fn allowed(&self) -> bool {
        self.replayable && self.attempts < self.max_retries
    }

    /// Decides on a response: `Some` when it should be retried after the returned wait.
    pub(crate) fn after_response(
        &mut self,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> Option<Duration> {
        let wait = retry_after(status, headers)?;
        if !self.allowed() {
            return None;
        }
        self.attempts += 1;
        self.previous = Some(format!(
            "the server responded with status code {}",
            status.as_u16()
        ));
        Some(wait)
    }

    /// Decides on a transport error: only a reset connection or EOF of a request that
    /// `retries_resets` (a GET read whole or a watch) is retried, as a synthetic 500 with
    /// `Retry-After: 1`.
    pub(crate) fn after_error(
        &mut self,
        retries_resets: bool,
        reset_or_eof: bool,
        error: &str,
    ) -> Option<Duration> {
        let wait = Duration::from_secs(1);
        if !(retries_resets && reset_or_eof && self.allowed()) {
            return None;
        }
        self.attempts += 1;
        self.previous = Some(error.to_string());
        Some(wait)
    }

    /// The final transport error with the previous attempt's error appended, as client-go's
    /// `WrapPreviousError` does (unchanged when there was none, or it said the same).
    pub(crate) fn wrap_previous(&self, error: Error) -> Error {
        let Some(previous) = self.previous.clone() else {
            return error;
        };
        if previous == error.to_string() {
            return error;
        }
        let kind = if error.is_connection_refused() {
            TransportErrorKind::ConnectionRefused
        } else if error.is_connection_reset() {
            TransportErrorKind::ConnectionReset
        } else if error.is_transport_timeout() {
            TransportErrorKind::Timeout
        } else {
            TransportErrorKind::Other
        };
        Error::transport(kind, WithPrevious { error, previous })
    }
}

/// The last attempt's error, which it shows first and keeps as its `source()`, and the
/// previous attempt's.
#[derive(Debug)]
struct WithPrevious {
    error: Error,
    previous: String,
}

impl std::fmt::Display for WithPrevious {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} - error from a previous attempt: {}",
            self.error, self.previous
        )
    }
}

impl std::error::Error for WithPrevious {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// `Some(wait)` when the response is a 429, or has any status from 500 up (600 to 999
/// included, as client-go's `checkWait` tests `code >= 500`), with an integer `Retry-After`.
pub(crate) fn retry_after(status: StatusCode, headers: &HeaderMap) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && status.as_u16() < 500 {
        return None;
    }
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    let seconds: i64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(seconds.max(0).unsigned_abs()))
}

/// Clamps a user-given retry count: negative means 0.
pub(crate) fn clamp_max_retries(n: i32) -> u32 {
    n.max(0).unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(retry_after: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = retry_after {
            h.insert(http::header::RETRY_AFTER, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn response_decisions() {
        let table = [
            (429, Some("3"), Some(3)),
            (500, Some("1"), Some(1)),
            (503, Some("0"), Some(0)),
            (504, Some(" 2 "), Some(2)),
            // client-go's checkWait: any code from 500 up, past the 5xx class too.
            (599, Some("1"), Some(1)),
            (600, Some("1"), Some(1)),
            (999, Some("2"), Some(2)),
            (600, None, None),
            (499, Some("1"), None),
            (500, None, None),
            (503, Some("Wed, 21 Oct 2015 07:28:00 GMT"), None),
            (404, Some("1"), None),
            (409, Some("1"), None),
            (200, Some("1"), None),
        ];
        for (code, ra, want) in table {
            let got = retry_after(StatusCode::from_u16(code).unwrap(), &headers(ra));
            assert_eq!(got, want.map(Duration::from_secs), "{code} {ra:?}");
        }
    }

    #[test]
    fn limits_and_replayability() {
        let h = headers(Some("1"));
        let mut r = WithRetry::new(2, true);
        assert!(
            r.after_response(StatusCode::TOO_MANY_REQUESTS, &h)
                .is_some()
        );
        assert!(
            r.after_response(StatusCode::TOO_MANY_REQUESTS, &h)
                .is_some()
        );
        assert!(
            r.after_response(StatusCode::TOO_MANY_REQUESTS, &h)
                .is_none()
        );
        assert_eq!(r.attempts(), 2);
        let mut r = WithRetry::new(10, false);
        assert!(
            r.after_response(StatusCode::TOO_MANY_REQUESTS, &h)
                .is_none(),
            "streams are not replayed"
        );
        let mut r = WithRetry::new(clamp_max_retries(-5), true);
        assert!(
            r.after_response(StatusCode::INTERNAL_SERVER_ERROR, &h)
                .is_none()
        );
    }

    /// The deadline starts once, and the decisions do not depend on it: a retry is decided
    /// even when its wait would pass it (the request loop's wait then ends in a timeout at
    /// the deadline, as client-go's).
    #[tokio::test(start_paused = true)]
    async fn the_deadline_starts_once_and_does_not_decide() {
        let mut r = WithRetry::new(10, true);
        assert!(r.start_deadline(None).is_none(), "no timeout, no deadline");
        let d = r.start_deadline(Some(Duration::from_millis(2500))).unwrap();
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            r.start_deadline(Some(Duration::from_secs(60))).unwrap().at,
            d.at,
            "a later call keeps the first deadline"
        );
        let busy = StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(
            r.after_response(busy, &headers(Some("5"))),
            Some(Duration::from_secs(5))
        );
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(d.passed());
        assert_eq!(
            r.after_error(true, true, "reset"),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            r.after_response(busy, &headers(Some("9223372036854775807"))),
            Some(Duration::from_secs(9223372036854775807))
        );
        assert_eq!(r.attempts(), 3);
        assert!(
            WithRetry::new(10, true)
                .start_deadline(Some(Duration::MAX))
                .is_none(),
            "a timeout of centuries is none"
        );
    }

    #[test]
    fn transport_errors_retry_get_only() {
        let mut r = WithRetry::new(10, true);
        assert!(
            r.after_error(false, true, "reset").is_none(),
            "POST is not retried"
        );
        assert!(
            r.after_error(true, false, "refused").is_none(),
            "refused is not retried"
        );
        assert_eq!(
            r.after_error(true, true, "connection reset or closed early: reset"),
            Some(Duration::from_secs(1))
        );
        let last = Error::transport(TransportErrorKind::Timeout, "request timed out: slow");
        let wrapped = r.wrap_previous(last);
        assert_eq!(
            wrapped.to_string(),
            "request timed out: slow - error from a previous attempt: connection reset or closed early: reset"
        );
        assert!(wrapped.is_transport_timeout(), "the kind is kept");
        let source = std::error::Error::source(&wrapped).unwrap();
        assert_eq!(
            std::error::Error::source(source).unwrap().to_string(),
            "request timed out: slow",
            "the last error stays reachable"
        );
        let same = Error::transport(TransportErrorKind::ConnectionReset, "reset");
        assert_eq!(
            r.wrap_previous(same).to_string(),
            "connection reset or closed early: reset"
        );
        let first = Error::transport(TransportErrorKind::Other, "x");
        assert_eq!(
            WithRetry::new(1, true).wrap_previous(first).to_string(),
            "request failed: x"
        );
    }
}
