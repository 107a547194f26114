//! How both event broadcasters write one event: client-go's `recordEvent` and its retry loop,
//! which `tools/record` (core/v1 Events) and `tools/events` (events.k8s.io/v1) each spell out.
//!
//! A write patches when there is a patch (a repeat), and creates a fresh copy (without a
//! resourceVersion) when there is none or the patched Event is gone: Events expire. The
//! answer is sorted into [`WriteOutcome`]s, and [`Retries`] tries again while the server could
//! not be reached.

use std::time::Duration;

use kclient_apimachinery::{Error, Object};
use tokio_util::sync::CancellationToken;

use crate::record::SinkFuture;

/// What one write of an event ended with.
#[derive(Debug)]
pub(crate) enum WriteOutcome<E> {
    /// The server's copy of the event.
    Written(E),
    /// The request could not be built (logged here): the same write would fail again.
    Invalid,
    /// The server refused the event; whether that is final, and how loudly to say so, is the
    /// caller's to decide.
    Rejected(Error),
    /// The server could not be reached (logged here): worth another try.
    Unreachable,
}

/// Writes `event`: `patch` first when there is one, then `create` of a fresh copy when there
/// was no patch or the patched Event is gone.
pub(crate) async fn write_event<'s, E: Object + Clone>(
    event: &E,
    patch: Option<SinkFuture<'s, E>>,
    create: impl FnOnce(&E) -> SinkFuture<'s, E>,
) -> WriteOutcome<E> {
    let patched = match patch {
        Some(patch) => match patch.await {
            Err(e) if e.is_not_found() => None,
            other => Some(other),
        },
        None => None,
    };
    let result = match patched {
        Some(result) => result,
        None => {
            let mut fresh = event.clone();
            fresh.set_resource_version("");
            create(&fresh).await
        }
    };
    match result {
        Ok(stored) => WriteOutcome::Written(stored),
        Err(e) if e.is_invalid_request() => {
            tracing::error!(event = %event.name(), error = %e, "unable to construct event (will not retry)");
            WriteOutcome::Invalid
        }
        Err(e) if e.is_api() => WriteOutcome::Rejected(e),
        Err(e) => {
            tracing::error!(event = %event.name(), error = %e, "unable to write event (may retry after sleeping)");
            WriteOutcome::Unreachable
        }
    }
}

/// The retry loop around [`write_event`]: at most `max_tries` tries, a sleep between two, and
/// no more sleeping once the broadcaster is shut down.
///
/// ```text
/// let mut retries = Retries::new(name, max_tries, &shutdown);
/// while try_once().await && retries.again(|tries| sleep_after(tries)).await {}
/// ```
pub(crate) struct Retries<'a> {
    name: &'a str,
    max_tries: u32,
    shutdown: &'a CancellationToken,
    tries: u32,
}

impl<'a> Retries<'a> {
    /// The loop for the event named `name`.
    pub(crate) fn new(name: &'a str, max_tries: u32, shutdown: &'a CancellationToken) -> Self {
        Retries {
            name,
            max_tries,
            shutdown,
            tries: 0,
        }
    }

    /// After a try that asks for another: counts it, then sleeps `delay(tries)` (`tries`
    /// counts from 1) and answers true, or answers false with an error log when the tries ran
    /// out or the broadcaster shuts down during the sleep.
    pub(crate) async fn again(&mut self, delay: impl FnOnce(u32) -> Duration) -> bool {
        self.tries += 1;
        if self.tries >= self.max_tries {
            tracing::error!(
                event = self.name,
                "unable to write event (retry limit exceeded)"
            );
            return false;
        }
        tokio::select! {
            biased;
            _ = self.shutdown.cancelled() => {
                tracing::error!(event = self.name, "unable to write event (broadcaster is shut down)");
                false
            }
            _ = tokio::time::sleep(delay(self.tries)) => true,
        }
    }
}
