//! [`Stop`]: when a wait gives up, a timeout, a cancellation token, both or neither (what
//! client-go's waits read from their `context.Context`).

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::UntilError;

/// When a wait gives up: after a timeout, when a token is cancelled, whichever comes first, or
/// never. Made from a [`Duration`] (a timeout), a [`CancellationToken`], or both:
///
/// ```
/// use std::time::Duration;
/// use kclient_tools::watch::Stop;
/// use tokio_util::sync::CancellationToken;
///
/// let token = CancellationToken::new();
/// let _timeout: Stop = Duration::from_secs(30).into();
/// let _cancel: Stop = token.clone().into();
/// let _both = Stop::on(token).with_timeout(Duration::from_secs(30));
/// let _never = Stop::never();
/// ```
#[derive(Debug, Clone, Default)]
pub struct Stop {
    cancel: Option<CancellationToken>,
    timeout: Option<Duration>,
}

impl Stop {
    /// A wait that never gives up by itself.
    pub fn never() -> Self {
        Stop::default()
    }

    /// A wait that gives up after `timeout`, counted from when it starts.
    pub fn after(timeout: Duration) -> Self {
        Stop {
            cancel: None,
            timeout: Some(timeout),
        }
    }

    /// A wait that gives up when `cancel` is cancelled.
    pub fn on(cancel: CancellationToken) -> Self {
        Stop {
            cancel: Some(cancel),
            timeout: None,
        }
    }

    /// Also gives up after `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The running form: the timeout turned into a deadline from now.
    pub(crate) fn start(self) -> Deadline {
        Deadline {
            cancel: self.cancel,
            // A timeout past what the clock can represent means none.
            at: self.timeout.and_then(|t| Instant::now().checked_add(t)),
        }
    }
}

impl From<Duration> for Stop {
    fn from(timeout: Duration) -> Self {
        Stop::after(timeout)
    }
}

impl From<CancellationToken> for Stop {
    fn from(cancel: CancellationToken) -> Self {
        Stop::on(cancel)
    }
}

impl From<&CancellationToken> for Stop {
    fn from(cancel: &CancellationToken) -> Self {
        Stop::on(cancel.clone())
    }
}

/// A started [`Stop`].
#[derive(Debug, Clone)]
pub(crate) struct Deadline {
    cancel: Option<CancellationToken>,
    at: Option<Instant>,
}

impl Deadline {
    /// Resolves when the wait must give up, with the reason.
    pub(crate) async fn reached(&self) -> UntilError {
        let cancelled = async {
            match &self.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let timed_out = async {
            match self.at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = cancelled => UntilError::Cancelled,
            () = timed_out => UntilError::Timeout,
        }
    }
}
