//! [`Runnable`]: something a manager runs (controller-runtime's `manager.Runnable`), a
//! controller with its context or an async function given a cancellation token, and whether it
//! runs only while the manager leads (`LeaderElectionRunnable.NeedLeaderElection`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use kclient_apimachinery::Object;
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
    /// Whether it starts with the HTTP servers, before the caches (and stops with them, last).
    pub(crate) before_caches: bool,
    /// For a controller: whether it has an election of its own, which a manager refuses.
    pub(crate) own_election: bool,
    /// Whether it is a controller, whose name must be unique in its manager.
    pub(crate) controller: bool,
    /// A controller's configuration error, which `Manager::add` returns at once.
    pub(crate) invalid: Option<crate::Error>,
    pub(crate) start: StartFn,
}

impl fmt::Debug for Runnable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runnable")
            .field("name", &self.name)
            .field("needs_leader_election", &self.needs_leader_election)
            .field("before_caches", &self.before_caches)
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
            before_caches: false,
            own_election: false,
            controller: false,
            invalid: None,
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
    pub fn controller<K, Ctx, E>(mut controller: Controller<K, Ctx, E>, ctx: Arc<Ctx>) -> Self
    where
        K: Object,
        Ctx: Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        Runnable {
            name: format!("controller {}", controller.name()),
            needs_leader_election: true,
            before_caches: false,
            own_election: controller.has_leader_election(),
            controller: true,
            invalid: controller.take_invalid(),
            start: Box::new(move |token| {
                controller
                    .run(ctx, token)
                    .map(|r| r.map_err(|e| Box::new(e) as BoxError))
                    .boxed()
            }),
        }
    }

    /// Whether the runnable runs only while the manager leads (default true; a runnable that
    /// [`starts_before_caches`](Self::starts_before_caches) never does).
    pub fn needs_leader_election(mut self, needs: bool) -> Self {
        self.needs_leader_election = needs && !self.before_caches;
        self
    }

    /// Starts the runnable with the manager's HTTP servers, before the caches, and stops it with
    /// them, last; it runs on every replica, leader or not (controller-runtime's webhook server
    /// group). For a server the caches need: an informer of a custom resource with a
    /// conversion webhook lists through it, so a conversion webhook served by this process
    /// must answer before the caches can sync.
    ///
    /// ```
    /// # async fn run<F: std::future::Future<Output = ()> + Send + 'static>(
    /// #     factory: kclient_informers::SharedInformerFactory,
    /// #     serve: impl FnOnce(kclient_cache::CancellationToken) -> F + Send + 'static,
    /// # ) -> Result<(), kclient_controller::Error> {
    /// use kclient_controller::manager::{Manager, Runnable};
    ///
    /// let mut manager = Manager::builder(factory).build()?;
    /// // `serve`: e.g. `|stop| server.run(stop)`, kclient-webhook's `BoundWebhookServer::run`,
    /// // which stops when the manager's token does.
    /// manager.add(
    ///     Runnable::new("webhook server", move |stop| async move {
    ///         serve(stop).await;
    ///         Ok::<_, std::convert::Infallible>(())
    ///     })
    ///     .starts_before_caches(),
    /// )?;
    /// # Ok(()) }
    /// ```
    pub fn starts_before_caches(mut self) -> Self {
        self.before_caches = true;
        self.needs_leader_election = false;
        self
    }

    /// The runnable's name as logs and errors show it: `controller NAME` or `runnable NAME`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Runnable {
        Runnable::new("noop", |_stop| async { Ok::<_, std::io::Error>(()) })
    }

    #[test]
    fn a_runnable_before_the_caches_never_needs_the_election() {
        assert!(noop().needs_leader_election);
        assert!(!noop().needs_leader_election(false).needs_leader_election);
        let server = noop().starts_before_caches();
        assert!(server.before_caches && !server.needs_leader_election);
        // Asked for afterwards, the election is still not needed: the servers' group starts
        // before any election.
        assert!(!server.needs_leader_election(true).needs_leader_election);
    }
}
