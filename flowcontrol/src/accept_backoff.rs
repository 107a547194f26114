//! [`AcceptBackoff`]: what a server's accept loop does after a failed `accept`, as Go's
//! `http.Server.Serve` does it: a failure that concerns one connection only (it went away
//! before it was accepted) is retried at once; a failure of the listener itself (no file
//! descriptor left) waits 5 ms, doubling up to 1 s while failures go on, so that the loop does
//! not spin; an accepted connection starts the waits over.

use std::io;
use std::time::Duration;

/// The delays of a server's accept loop after failed accepts (see the module documentation).
/// Used by the webhook server, the controller manager's probe and metrics servers, and the
/// port-forward listener (which stops instead of waiting).
#[derive(Debug, Clone, Default)]
pub struct AcceptBackoff {
    delay: Duration,
}

impl AcceptBackoff {
    /// The first wait after a failure of the listener (Go's 5 ms).
    pub const FIRST: Duration = Duration::from_millis(5);
    /// The longest wait (Go's 1 s).
    pub const MAX: Duration = Duration::from_secs(1);

    /// No failure yet.
    pub fn new() -> Self {
        AcceptBackoff::default()
    }

    /// Whether an accept error concerns one connection only, so that accepting again at once
    /// is right (Go's accept retries these without a wait).
    pub fn is_per_connection(error: &io::Error) -> bool {
        matches!(
            error.kind(),
            io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::Interrupted
                | io::ErrorKind::WouldBlock
        )
    }

    /// An accept succeeded: the next failure waits [`FIRST`](Self::FIRST) again.
    pub fn accepted(&mut self) {
        self.delay = Duration::ZERO;
    }

    /// An accept failed with `error`: `None` to accept again at once (one connection's
    /// failure), or how long to wait before the next accept: 5 ms, doubling with each failure
    /// in a row, up to 1 s.
    pub fn failed(&mut self, error: &io::Error) -> Option<Duration> {
        if Self::is_per_connection(error) {
            return None;
        }
        self.delay = (self.delay * 2).clamp(Self::FIRST, Self::MAX);
        Some(self.delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listener_failures_wait_doubling_to_a_second_and_a_success_starts_over() {
        let emfile = io::Error::from_raw_os_error(24);
        let mut backoff = AcceptBackoff::new();
        let waits: Vec<u64> = (0..10)
            .map(|_| backoff.failed(&emfile).unwrap().as_millis() as u64)
            .collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.accepted();
        assert_eq!(backoff.failed(&emfile), Some(Duration::from_millis(5)));
    }

    #[test]
    fn one_connections_failure_is_retried_at_once_and_leaves_the_wait() {
        let emfile = io::Error::from_raw_os_error(24);
        let mut backoff = AcceptBackoff::new();
        backoff.failed(&emfile);
        for kind in [
            io::ErrorKind::ConnectionAborted,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::Interrupted,
            io::ErrorKind::WouldBlock,
        ] {
            assert!(AcceptBackoff::is_per_connection(&kind.into()));
            assert_eq!(backoff.failed(&kind.into()), None);
        }
        assert!(!AcceptBackoff::is_per_connection(&emfile));
        assert_eq!(backoff.failed(&emfile), Some(Duration::from_millis(10)));
    }
}
