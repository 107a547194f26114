//! Graceful shutdown on SIGINT or SIGTERM: [`shutdown_on_signal`] gives a
//! [`CancellationToken`] that the first signal cancels, and a second signal exits the process
//! with status 1, as client-go's `SetupSignalHandler` (sample-controller's `signals` package,
//! controller-runtime's `manager.SetupSignalHandler`) does.
//!
//! On Unix both SIGINT (Ctrl-C) and SIGTERM (what Kubernetes sends a container it stops)
//! count; elsewhere only Ctrl-C does. On Unix the handlers are installed before
//! [`shutdown_on_signal`] returns, so a signal that arrives right after it is not lost;
//! elsewhere the Ctrl-C handler is installed when the listener task first runs, shortly after,
//! and a Ctrl-C before that still ends the process the default way. Once installed, a handler
//! replaces the default action (terminating the process) for as long as the process lives.
//!
//! Each call installs its own listener: calling it twice gives two tokens that the same first
//! signal cancels. Nothing is kept in a global.

use tokio_util::sync::CancellationToken;

/// A token cancelled by the first SIGINT or SIGTERM (Ctrl-C only on non-Unix platforms); a
/// second signal exits the process at once with status 1, for the operator who does not want
/// to wait for a graceful shutdown.
///
/// Hand the token (or [child tokens](CancellationToken::child_token)) to whatever must stop:
/// informers, workers, leader election. Which signal arrived is logged at info level through
/// `tracing`, and the second signal at warn level before the exit. If the operating system
/// refuses a handler, that is logged at error level and the other signal still works.
///
/// ```no_run
/// # async fn run() {
/// let shutdown = kclient::signal::shutdown_on_signal();
/// // ... start informers and workers with `shutdown.child_token()` ...
/// shutdown.cancelled().await;
/// // ... wait for them to finish ...
/// # }
/// ```
///
/// # Panics
///
/// When called outside a Tokio runtime, or in one built without its I/O driver
/// (`tokio::runtime::Builder::enable_io` or `enable_all`; `#[tokio::main]` enables it).
pub fn shutdown_on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let mut signals = platform::Signals::install();
    let cancel = token.clone();
    tokio::spawn(async move {
        let Some(first) = signals.next().await else {
            return;
        };
        tracing::info!("received {first}: shutting down (a second signal exits at once)");
        cancel.cancel();
        if let Some(second) = signals.next().await {
            tracing::warn!("received {second} while shutting down: exiting with status 1");
            std::process::exit(1);
        }
    });
    token
}

#[cfg(unix)]
mod platform {
    //! SIGINT and SIGTERM through tokio's Unix signal streams.

    use tokio::signal::unix::{Signal, SignalKind, signal};

    /// The installed handlers; `None` where the operating system refused one.
    pub(super) struct Signals {
        interrupt: Option<Signal>,
        terminate: Option<Signal>,
    }

    impl Signals {
        /// Installs both handlers now.
        pub(super) fn install() -> Self {
            Signals {
                interrupt: install(SignalKind::interrupt(), "SIGINT"),
                terminate: install(SignalKind::terminate(), "SIGTERM"),
            }
        }

        /// The name of the next signal received, or `None` when no handler can deliver one
        /// any more (none installed, or the runtime is shutting down).
        pub(super) async fn next(&mut self) -> Option<&'static str> {
            tokio::select! {
                Some(()) = recv(&mut self.interrupt) => Some("SIGINT"),
                Some(()) = recv(&mut self.terminate) => Some("SIGTERM"),
                else => None,
            }
        }
    }

    fn install(kind: SignalKind, name: &str) -> Option<Signal> {
        match signal(kind) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::error!(
                    "cannot install a {name} handler, so {name} will not shut this process down \
                     gracefully: {e}"
                );
                None
            }
        }
    }

    async fn recv(signal: &mut Option<Signal>) -> Option<()> {
        match signal {
            Some(s) => s.recv().await,
            None => None,
        }
    }
}

#[cfg(not(unix))]
mod platform {
    //! Ctrl-C through `tokio::signal::ctrl_c`, the one signal tokio offers on every platform.

    /// Whether `ctrl_c` can still be waited for.
    pub(super) struct Signals {
        failed: bool,
    }

    impl Signals {
        /// Nothing to install ahead: `ctrl_c` installs its handler when first awaited.
        pub(super) fn install() -> Self {
            Signals { failed: false }
        }

        /// `"Ctrl-C"` when it is pressed, or `None` if the handler cannot be installed.
        pub(super) async fn next(&mut self) -> Option<&'static str> {
            if self.failed {
                return None;
            }
            match tokio::signal::ctrl_c().await {
                Ok(()) => Some("Ctrl-C"),
                Err(e) => {
                    tracing::error!(
                        "cannot install a Ctrl-C handler, so Ctrl-C will not shut this process \
                         down gracefully: {e}"
                    );
                    self.failed = true;
                    None
                }
            }
        }
    }
}
