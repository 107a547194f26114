//! [`Error`]: why a controller could not run.

use std::fmt;

/// Why [`Controller::run`](crate::Controller::run) returned an error. Reconcile errors are
/// not reported here: they go to the error policy and the key is retried.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Informer,
    CacheSync,
    LeaderElection,
}

impl Error {
    pub(crate) fn informer(controller: &str, resource: &str, source: kclient_cache::Error) -> Self {
        Error {
            kind: ErrorKind::Informer,
            message: format!(
                "controller {controller}: cannot watch {resource}: its informer refused the \
                 event handler (was the informer factory shut down before the controller ran?)"
            ),
            source: Some(Box::new(source)),
        }
    }

    pub(crate) fn cache_sync(controller: &str) -> Self {
        Error {
            kind: ErrorKind::CacheSync,
            message: format!(
                "controller {controller}: an informer it watches stopped before its cache \
                 synced: its task panicked (in a transform or an index function; the log has \
                 the panic), or its informer factory was shut down"
            ),
            source: None,
        }
    }

    pub(crate) fn leader_election(controller: &str, source: kclient_tools::Error) -> Self {
        Error {
            kind: ErrorKind::LeaderElection,
            // Which rule the configuration breaks is what the user needs to fix it: said here,
            // not only in `source()`, which many reports do not print.
            message: format!(
                "controller {controller}: invalid leader election configuration: {source}"
            ),
            source: Some(Box::new(source)),
        }
    }

    /// Whether an informer could not take the controller's event handlers.
    pub fn is_informer(&self) -> bool {
        self.kind == ErrorKind::Informer
    }

    /// Whether an informer the controller watches stopped before its cache synced, so that
    /// the controller could never start (client-go's controllers return "failed to wait for
    /// caches to sync" then).
    pub fn is_cache_sync(&self) -> bool {
        self.kind == ErrorKind::CacheSync
    }

    /// Whether the leader election configuration was refused.
    pub fn is_leader_election(&self) -> bool {
        self.kind == ErrorKind::LeaderElection
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The cause is reachable through `source()`.
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// So that `?` on [`Controller::run`](crate::Controller::run) works in a function returning the
/// API error (`kclient::Error`), as every other crate's error does: the result is an
/// [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<kclient_controller::Error>()` gives this error back.
impl From<Error> for kclient_apimachinery::Error {
    fn from(error: Error) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}
