//! [`Runnable`]: something a manager runs (controller-runtime's `manager.Runnable`), a
//! controller with its context or an async function given a cancellation token, and whether it
//! runs only while the manager leads (`LeaderElectionRunnable.NeedLeaderElection`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use kclient_apimachinery::Resource;
use kclient_cache::CancellationToken;

use crate::controller::Controller;

/// A runnable's error, boxed.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Starts a runnable: its future runs until the token is cancelled.
type StartFn =
    Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, Result<(), BoxError>> + Send>;

/// Something a [`Manager`](crate::manager::Manager) runs until it stops: a controller
/// ([`controller`](Self::controller)) or any async function ([`new`](Self::new)).
///
/// A runnable *needs leader election* by default (controller-runtime puts a runnable that
/// does not say otherwise in its leader election group): it starts once the manager leads,
/// or at once after the caches synced when the manager has no election.
/// [`needs_leader_election(false)`](Self::needs_leader_election) makes it run on every
/// replica, leader or not, from the caches' sync on (controller-runtime's
/// `NeedLeaderElection() == false`).
///
/// A runnable that returns an error (or panics) stops the manager, whose
/// [`run`](crate::manager::Manager::run) returns that error after the graceful shutdown; one
/// that returns `Ok(())` before the manager stops just ends, as in controller-runtime. It
/// should return soon after its token is cancelled: the manager waits for it within its
/// graceful shutdown timeout, then cancels it at its next `.await`.
pub struct Runnable {
    pub(crate) name: String,
    pub(crate) needs_leader_election: bool,
    /// For a controller: whether it has an election of its own, which a manager refuses.
    pub(crate) own_election: bool,
    pub(crate) start: StartFn,
}

impl fmt::Debug for Runnable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runnable")
            .field("name", &self.name)
            .field("needs_leader_election", &self.needs_leader_election)
            .finish_non_exhaustive()
    }
}

impl Runnable {
    /// A runnable named `name` (for logs and errors: `runnable NAME`) that runs `run` with a
    /// token cancelled when the manager stops it.
    ///
    /// ```
    /// use kclient_controller::manager::Runnable;
    ///
    /// let heartbeat = Runnable::new("heartbeat", |stop| async move {
    ///     let mut tick = tokio::time::interval(std::time::Duration::from_secs(10));
    ///     loop {
    ///         tokio::select! {
    ///             _ = stop.cancelled() => return Ok::<_, std::io::Error>(()),
    ///             _ = tick.tick() => tracing::info!("still here"),
    ///         }
    ///     }
    /// })
    /// .needs_leader_election(false);
    /// # let _ = heartbeat;
    /// ```
    pub fn new<F, Fut, E>(name: impl Into<String>, run: F) -> Self
    where
        F: FnOnce(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Runnable {
            name: format!("runnable {}", name.into()),
            needs_leader_election: true,
            own_election: false,
            start: Box::new(move |token| run(token).map(|r| r.map_err(Into::into)).boxed()),
        }
    }

    /// A controller with its context: [`Controller::run`] until the manager stops it. It
    /// needs leader election (controller-runtime's controllers do, unless
    /// `NeedLeaderElection` is set false).
    ///
    /// The controller must not have a leader election of its own
    /// ([`ControllerBuilder::leader_election`](crate::ControllerBuilder::leader_election)): the
    /// manager's one election stands for all its runnables, and
    /// [`add`](crate::manager::Manager::add) refuses such a controller
    /// ([`Error::is_leader_election`](crate::Error::is_leader_election)).
    pub fn controller<K, Ctx, E>(controller: Controller<K, Ctx, E>, ctx: Arc<Ctx>) -> Self
    where
        K: Resource,
        Ctx: Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        Runnable {
            name: format!("controller {}", controller.name()),
            needs_leader_election: true,
            own_election: controller.has_leader_election(),
            start: Box::new(move |token| {
                controller
                    .run(ctx, token)
                    .map(|r| r.map_err(|e| Box::new(e) as BoxError))
                    .boxed()
            }),
        }
    }

    /// Whether the runnable runs only while the manager leads (default true).
    pub fn needs_leader_election(mut self, needs: bool) -> Self {
        self.needs_leader_election = needs;
        self
    }

    /// The runnable's name as logs and errors show it: `controller NAME` or `runnable NAME`.
    pub fn name(&self) -> &str {
        &self.name
    }
}
