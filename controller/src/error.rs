//! [`Error`]: why a controller or a [`Manager`](crate::manager::Manager) could not run, or
//! stopped.

use std::fmt;

/// Why [`Controller::run`](crate::Controller::run) or
/// [`Manager::run`](crate::manager::Manager::run) returned an error. Reconcile errors are
/// not reported here: they go to the error policy and the key is retried.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// The runnables a manager's graceful shutdown left running when its timeout passed.
    still_running: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Informer,
    CacheSync,
    LeaderElection,
    LeaderElectionLost,
    Runnable,
    ShutdownTimeout,
    Bind,
    DuplicateName,
    OverlappingFactories,
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
            still_running: Vec::new(),
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
            still_running: Vec::new(),
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
            still_running: Vec::new(),
        }
    }

    fn new(kind: ErrorKind, message: String) -> Self {
        Error {
            kind,
            message,
            source: None,
            still_running: Vec::new(),
        }
    }

    /// A controller's informer caches did not sync within its cache sync timeout.
    pub(crate) fn cache_sync_timeout(controller: &str, timeout: std::time::Duration) -> Self {
        Error::new(
            ErrorKind::CacheSync,
            format!(
                "controller {controller}: timed out after {timeout:?} waiting for the informer \
                 caches to sync (is the resource served, and may this client list and watch \
                 it? the informers' log says why their lists fail)"
            ),
        )
    }

    /// The manager's informer caches did not sync within its cache sync timeout.
    pub(crate) fn manager_cache_sync_timeout(timeout: std::time::Duration) -> Self {
        Error::new(
            ErrorKind::CacheSync,
            format!(
                "manager: timed out after {timeout:?} waiting for the informer caches to sync \
                 (is every resource served, and may this client list and watch them? the \
                 informers' log says why their lists fail)"
            ),
        )
    }

    /// The manager's informer caches did not sync: an informer stopped first.
    pub(crate) fn manager_cache_sync(not_synced: &[String]) -> Self {
        Error::new(
            ErrorKind::CacheSync,
            format!(
                "manager: informer caches stopped before they synced ({}): an informer's task \
                 panicked (in a transform or an index function; the log has the panic), or the \
                 informer factory was shut down",
                not_synced.join(", ")
            ),
        )
    }

    /// The manager's leader election configuration was refused.
    pub(crate) fn manager_leader_election(source: kclient_tools::Error) -> Self {
        let message = format!("manager: invalid leader election configuration: {source}");
        Error {
            source: Some(Box::new(source)),
            ..Error::new(ErrorKind::LeaderElection, message)
        }
    }

    /// A controller with an election of its own was added to a manager.
    pub(crate) fn own_leader_election(controller: &str) -> Self {
        Error::new(
            ErrorKind::LeaderElection,
            format!(
                "controller {controller} has a leader election of its own \
                 (ControllerBuilder::leader_election), but a manager elects all its runnables \
                 with one election: remove it from the controller and configure the manager's \
                 (ManagerBuilder::leader_election)"
            ),
        )
    }

    /// The factories given to `ControllerBuilder::with_factory` overlap.
    pub(crate) fn overlapping_factories(controller: &str, problem: &str) -> Self {
        Error::new(
            ErrorKind::OverlappingFactories,
            format!(
                "controller {controller}: {problem}; a controller over several factories needs \
                 each restricted to a namespace of its own (SharedInformerFactory::with_namespace)"
            ),
        )
    }

    /// A second controller of the same name was added to a manager.
    pub(crate) fn duplicate_controller(controller: &str) -> Self {
        Error::new(
            ErrorKind::DuplicateName,
            format!(
                "manager: a controller named {controller} was added already; controller names \
                 must be unique, since they name the controllers' queues, metrics and logs"
            ),
        )
    }

    pub(crate) fn leader_election_lost(lease: &str) -> Self {
        Error::new(
            ErrorKind::LeaderElectionLost,
            format!("manager: leader election lost: lease {lease} was not renewed in time"),
        )
    }

    pub(crate) fn runnable(name: &str, source: Box<dyn std::error::Error + Send + Sync>) -> Self {
        let message = format!("{name} failed: {source}");
        Error {
            source: Some(source),
            ..Error::new(ErrorKind::Runnable, message)
        }
    }

    pub(crate) fn runnable_panicked(name: &str, message: &str) -> Self {
        Error::new(ErrorKind::Runnable, format!("{name} panicked: {message}"))
    }

    pub(crate) fn bind(what: &str, address: std::net::SocketAddr, source: std::io::Error) -> Self {
        let message = format!("manager: cannot listen on {address} for the {what}: {source}");
        Error {
            source: Some(Box::new(source)),
            ..Error::new(ErrorKind::Bind, message)
        }
    }

    pub(crate) fn server(what: &str, source: std::io::Error) -> Self {
        let message = format!("manager: the {what} server stopped: {source}");
        Error {
            source: Some(Box::new(source)),
            ..Error::new(ErrorKind::Runnable, message)
        }
    }

    pub(crate) fn shutdown_timeout(
        timeout: std::time::Duration,
        still_running: Vec<String>,
    ) -> Self {
        Error {
            still_running,
            ..Error::new(
                ErrorKind::ShutdownTimeout,
                format!(
                    "manager: failed waiting for all runnables to end within grace period of \
                     {timeout:?}"
                ),
            )
        }
    }

    /// Adds to this error what a graceful shutdown that followed it left running.
    pub(crate) fn with_still_running(mut self, still_running: Vec<String>) -> Self {
        self.still_running = still_running;
        self
    }

    /// Whether an informer could not take the controller's event handlers.
    pub fn is_informer(&self) -> bool {
        self.kind == ErrorKind::Informer
    }

    /// Whether an informer the controller watches stopped before its cache synced, or the
    /// caches did not sync within the cache sync timeout, so that the controller could not
    /// start (client-go's controllers return "failed to wait for caches to sync" then,
    /// controller-runtime's "timed out waiting for cache to be synced").
    pub fn is_cache_sync(&self) -> bool {
        self.kind == ErrorKind::CacheSync
    }

    /// Whether the leader election configuration was refused: a controller's, a manager's,
    /// or a controller with an election of its own added to a manager.
    pub fn is_leader_election(&self) -> bool {
        self.kind == ErrorKind::LeaderElection
    }

    /// Whether a manager stopped because it lost its lease (controller-runtime's "leader
    /// election lost"): its leader runnables were cancelled at once, the others stopped
    /// gracefully. The process should usually exit: another candidate leads.
    pub fn is_leader_election_lost(&self) -> bool {
        self.kind == ErrorKind::LeaderElectionLost
    }

    /// Whether a manager stopped because one of its runnables (a controller, a function, or
    /// one of its HTTP servers) returned an error or panicked; `source()` is the runnable's
    /// error.
    pub fn is_runnable(&self) -> bool {
        self.kind == ErrorKind::Runnable
    }

    /// Whether a manager's graceful shutdown did not finish within its timeout, and that was
    /// the only failure; [`still_running`](Self::still_running) names what had not stopped.
    pub fn is_shutdown_timeout(&self) -> bool {
        self.kind == ErrorKind::ShutdownTimeout
    }

    /// Whether a controller was added to a manager that has one of the same name already:
    /// the name labels the queue's and the reconciles' metrics, which two controllers would
    /// otherwise share (controller-runtime refuses a name used anywhere in the process).
    pub fn is_duplicate_name(&self) -> bool {
        self.kind == ErrorKind::DuplicateName
    }

    /// Whether the factories of a controller over several namespaces
    /// ([`ControllerBuilder::with_factory`](crate::ControllerBuilder::with_factory)) overlap:
    /// one watches every namespace, or two watch the same one.
    pub fn is_overlapping_factories(&self) -> bool {
        self.kind == ErrorKind::OverlappingFactories
    }

    /// Whether a manager could not listen on its health probe or metrics address.
    pub fn is_bind(&self) -> bool {
        self.kind == ErrorKind::Bind
    }

    /// What a manager's graceful shutdown left running when its timeout passed (cancelled
    /// then, at their next `.await`), by name: `controller NAME`, `runnable NAME`,
    /// `informer caches`, `health probe server`, ... Empty when the shutdown finished in time.
    /// Also set on another error (a runnable's, or the lease lost) whose shutdown timed out.
    pub fn still_running(&self) -> &[String] {
        &self.still_running
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The cause is reachable through `source()`.
        f.write_str(&self.message)?;
        if !self.still_running.is_empty() {
            let what = self.still_running.join(", ");
            if self.kind == ErrorKind::ShutdownTimeout {
                write!(f, "; still running: {what}")?;
            } else {
                write!(
                    f,
                    "; then the graceful shutdown timed out with still running: {what}"
                )?;
            }
        }
        Ok(())
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
