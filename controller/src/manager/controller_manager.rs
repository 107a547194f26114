//! [`Manager`]: runs controllers and other runnables over its informer factories, with one
//! leader election, probes, metrics and an ordered graceful shutdown (controller-runtime's
//! `controllerManager`, `internal.go`). The module documentation
//! ([`crate::manager`]) states the order of start and stop.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt as _;
use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_informers::SharedInformerFactory;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use crate::controller::Controller;
use crate::error::Error;
use crate::manager::builder::ManagerBuilder;
use crate::manager::elected::{Elected, StoppedOnDrop};
use crate::manager::election::{Election, RunningElection};
use crate::manager::group::{Event, RunnableGroup};
use crate::manager::healthz::{Checker, ProbeHandler, ProbeResponse};
use crate::manager::metrics::MetricsRenderer;
use crate::manager::runnable::Runnable;
use crate::manager::server::{Answer, BoundServer, Route};

/// The name of the readiness check the manager adds: passes once the informer caches have
/// synced (kube-apiserver's `/readyz/informer-sync`).
pub const INFORMER_SYNC_CHECK: &str = "informer-sync";

/// The HTTP servers bound by the builder.
pub(crate) struct Listeners {
    pub(crate) health_probe: Option<BoundServer>,
    pub(crate) metrics: Option<(BoundServer, MetricsRenderer)>,
}

/// Runs controllers and other [`Runnable`]s over one [`SharedInformerFactory`], with one
/// leader election for all, health and readiness probes, a metrics endpoint and an ordered
/// graceful shutdown (controller-runtime's `manager.Manager`). See [the module
/// documentation](crate::manager) for the order of start and stop.
///
/// Build it with [`Manager::builder`], build the controllers from
/// [`factory`](Self::factory), [`add`](Self::add) them and the other runnables, then
/// [`run`](Self::run) it until a shutdown token fires.
pub struct Manager {
    /// The manager's factory first, then those of `ManagerBuilder::with_factory`.
    factories: Vec<Arc<SharedInformerFactory>>,
    election: Option<Election>,
    graceful_shutdown_timeout: Duration,
    cache_sync_timeout: Duration,
    listeners: Listeners,
    healthz: ProbeHandler,
    readyz: ProbeHandler,
    /// In the order added; split into groups at `run`.
    runnables: Vec<Runnable>,
    events_tx: UnboundedSender<Event>,
    events: UnboundedReceiver<Event>,
    elected: Elected,
    /// Tells `elected`'s waiters that the manager stopped, when the manager is dropped without
    /// running, or when `run` (which takes it) ends.
    stopped: StoppedOnDrop,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("factories", &self.factories)
            .field("leader_election", &self.election.as_ref().map(|e| &e.lease))
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
            .field("health_probe_addr", &self.health_probe_addr())
            .field("metrics_addr", &self.metrics_addr())
            .field("healthz", &self.healthz)
            .field("readyz", &self.readyz)
            .field("runnables", &self.runnables)
            .finish()
    }
}

/// Why the manager stops.
enum Cause {
    /// The shutdown token fired.
    Shutdown,
    /// A runnable or server failed, or the caches could not sync.
    Failed(Error),
    /// The lease was lost.
    LeadershipLost,
}

impl Manager {
    /// A manager whose caches are `factory`'s informers (given by value, or shared as an
    /// `Arc` with the rest of the program). What controller-runtime sets in the manager's
    /// `cache.Options` is set on the factory: its namespace, resync periods, list options and
    /// transform (`SharedInformerFactory::with_transform`, controller-runtime's
    /// `DefaultTransform`, for instance to drop `managedFields` from every cache).
    pub fn builder(factory: impl Into<Arc<SharedInformerFactory>>) -> ManagerBuilder {
        ManagerBuilder::new(factory.into())
    }

    pub(crate) fn new(
        factories: Vec<Arc<SharedInformerFactory>>,
        election: Option<Election>,
        graceful_shutdown_timeout: Duration,
        cache_sync_timeout: Duration,
        listeners: Listeners,
        healthz: ProbeHandler,
        (events_tx, events): (UnboundedSender<Event>, UnboundedReceiver<Event>),
    ) -> Self {
        let elected = Elected::new();
        Manager {
            factories,
            election,
            graceful_shutdown_timeout,
            cache_sync_timeout,
            listeners,
            healthz,
            readyz: ProbeHandler::default(),
            runnables: Vec::new(),
            events_tx,
            events,
            stopped: elected.stopped_on_drop(),
            elected,
        }
    }

    /// The informer factory, to build controllers from
    /// (`ControllerBuilder::new(name, manager.factory())`) and to read listers; the manager
    /// starts it, waits for its caches and shuts it down.
    pub fn factory(&self) -> &Arc<SharedInformerFactory> {
        &self.factories[0]
    }

    /// Every factory the manager starts, waits for and shuts down: [`factory`](Self::factory)
    /// first, then those of [`ManagerBuilder::with_factory`].
    pub fn factories(&self) -> &[Arc<SharedInformerFactory>] {
        &self.factories
    }

    /// Resolves once the manager leads and has spawned its leader election runnables, or at
    /// once after the caches synced without an election (controller-runtime's `Elected()`);
    /// take it before [`run`](Self::run), for work that should begin only on the leader.
    ///
    /// ```no_run
    /// # async fn demo(manager: kclient_controller::manager::Manager) {
    /// let elected = manager.elected();
    /// tokio::spawn(async move {
    ///     if elected.wait().await {
    ///         println!("leading");
    ///     }
    /// });
    /// # }
    /// ```
    pub fn elected(&self) -> Elected {
        self.elected.clone()
    }

    /// The address the health probes are served on, with the port picked for port 0.
    pub fn health_probe_addr(&self) -> Option<SocketAddr> {
        self.listeners.health_probe.as_ref().map(|s| s.local_addr)
    }

    /// The address the metrics are served on, with the port picked for port 0.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.listeners.metrics.as_ref().map(|(s, _)| s.local_addr)
    }

    /// Adds `runnable`, started by [`run`](Self::run) in its group (controller-runtime's
    /// `Add`). Refuses a controller with a leader election of its own
    /// ([`Error::is_leader_election`]): a manager elects all its runnables with its one
    /// election ([`ManagerBuilder::leader_election`]); build the controller without
    /// [`ControllerBuilder::leader_election`](crate::ControllerBuilder::leader_election).
    /// Refuses a controller whose configuration [`Controller::run`] would refuse (overlapping
    /// factories: [`Error::is_overlapping_factories`]). Refuses a controller named as one
    /// added to this manager before
    /// ([`Error::is_duplicate_name`]): the name labels its queue's and its reconciles'
    /// metrics. controller-runtime checks the names of every controller of the process (with
    /// `SkipNameValidation` to turn it off); this check covers one manager, not controllers
    /// run beside it or under another manager.
    pub fn add(&mut self, mut runnable: Runnable) -> Result<(), Error> {
        if let Some(invalid) = runnable.invalid.take() {
            return Err(invalid);
        }
        if runnable.own_election {
            let name = runnable
                .name
                .strip_prefix("controller ")
                .unwrap_or(&runnable.name);
            return Err(Error::own_leader_election(name));
        }
        if runnable.controller
            && self
                .runnables
                .iter()
                .any(|r| r.controller && r.name == runnable.name)
        {
            let name = runnable
                .name
                .strip_prefix("controller ")
                .unwrap_or(&runnable.name);
            return Err(Error::duplicate_controller(name));
        }
        self.runnables.push(runnable);
        Ok(())
    }

    /// Adds `controller` with its context, as [`Runnable::controller`]: it runs while the
    /// manager leads (or from the caches' sync on without an election).
    pub fn add_controller<K, Ctx, E>(
        &mut self,
        controller: Controller<K, Ctx, E>,
        ctx: Arc<Ctx>,
    ) -> Result<(), Error>
    where
        K: Object,
        Ctx: Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        self.add(Runnable::controller(controller, ctx))
    }

    /// Adds a liveness check served at `/healthz` and `/healthz/<name>` (controller-runtime's
    /// `AddHealthzCheck`), in place of one of the same name. With leader election the
    /// manager has one already, `leaderElection`.
    pub fn add_healthz_check(&mut self, name: impl Into<String>, check: Checker) {
        self.healthz.insert(name.into(), check);
    }

    /// Adds a readiness check served at `/readyz` and `/readyz/<name>` (controller-runtime's
    /// `AddReadyzCheck`), in place of one of the same name. The manager adds its own,
    /// [`INFORMER_SYNC_CHECK`], when it runs.
    pub fn add_readyz_check(&mut self, name: impl Into<String>, check: Checker) {
        self.readyz.insert(name.into(), check);
    }

    /// Runs everything until `shutdown` is cancelled, a runnable fails or the lease is lost,
    /// then stops everything in order within the graceful shutdown timeout (controller-runtime's
    /// `Start`).
    ///
    /// Returns `Ok(())` after a shutdown that finished in time; otherwise the first failure:
    /// a runnable's error ([`is_runnable`](Error::is_runnable), its error as `source()`),
    /// the lease lost ([`is_leader_election_lost`](Error::is_leader_election_lost)), caches
    /// that could not sync ([`is_cache_sync`](Error::is_cache_sync)), or a shutdown that
    /// timed out ([`is_shutdown_timeout`](Error::is_shutdown_timeout), with
    /// [`still_running`](Error::still_running) naming what had not stopped). Errors of
    /// runnables after the shutdown began are logged, not returned.
    ///
    /// Dropping the returned future stops everything without the grace: the runnables and
    /// servers are cancelled at their next `.await` and the elector is cancelled (releasing
    /// the lease if configured to); the factory's informers stop when its last `Arc` goes.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), Error> {
        let Manager {
            factories,
            election,
            graceful_shutdown_timeout,
            cache_sync_timeout,
            listeners,
            healthz,
            mut readyz,
            runnables,
            events_tx,
            mut events,
            elected,
            stopped,
        } = self;
        // However `run` ends (returning, or its future dropped), waiters learn it stopped.
        let _stopped = stopped;
        let synced = Arc::new(AtomicBool::new(false));
        readyz.insert(INFORMER_SYNC_CHECK.to_owned(), {
            let synced = Arc::clone(&synced);
            Checker::new(move || {
                if synced.load(Ordering::Acquire) {
                    Ok(())
                } else {
                    Err("the informer caches have not synced yet")
                }
            })
        });
        let (server_runnables, runnables): (Vec<_>, Vec<_>) =
            runnables.into_iter().partition(|r| r.before_caches);
        let (leader_runnables, other_runnables): (Vec<_>, Vec<_>) =
            runnables.into_iter().partition(|r| r.needs_leader_election);

        let mut servers = RunnableGroup::new();
        let mut others = RunnableGroup::new();
        let mut leaders = RunnableGroup::new();
        let mut running_election: Option<RunningElection> = None;

        let cause = start(
            &factories,
            election.as_ref(),
            cache_sync_timeout,
            listeners,
            (Arc::new(healthz), Arc::new(readyz)),
            &synced,
            (server_runnables, other_runnables, leader_runnables),
            (
                &mut servers,
                &mut others,
                &mut leaders,
                &mut running_election,
            ),
            &shutdown,
            (&events_tx, &mut events),
            &elected,
        )
        .await;

        // The stop procedure (controller-runtime's `engageStopProcedure`), in the order the
        // module documentation gives.
        let started = Instant::now();
        let deadline = started
            .checked_add(graceful_shutdown_timeout)
            .unwrap_or_else(|| started + Duration::from_secs(86400 * 365 * 30));
        let mut still_running = Vec::new();
        // Events that came while the leader runnables drained, for the log below.
        let mut held = Vec::new();
        if matches!(cause, Cause::LeadershipLost) {
            // Another candidate may lead already: no grace for what needed the lease.
            tracing::warn!("leader election lost; cancelling the leader election runnables");
            still_running.extend(leaders.abort_and_wait(deadline).await);
        } else {
            tracing::info!("stopping and waiting for leader election runnables");
            // The lease may be lost while they drain (the renewals give up): then another
            // candidate may lead already, and what is left of their grace is cut short.
            let lost = async {
                loop {
                    match events.recv().await {
                        Some(Event::LeadershipLost) => break,
                        Some(event) => held.push(event),
                        // The manager holds a sender: never.
                        None => std::future::pending().await,
                    }
                }
                tracing::error!(
                    "leader election lost while the leader election runnables stopped; \
                     cancelling them"
                );
            };
            still_running.extend(leaders.stop_and_wait_unless(deadline, lost).await);
        }
        if let (Some(running), Some(election)) = (running_election, &election) {
            tracing::info!(lease = %election.lease, "stopping the leader election");
            // Its release is one request: given the renew deadline even past the shutdown's.
            let release_deadline = deadline.max(Instant::now() + election.renew_deadline);
            if !running.stop(release_deadline).await {
                still_running.push("leader election".to_owned());
            }
        }
        tracing::info!("stopping and waiting for non leader election runnables");
        still_running.extend(others.stop_and_wait(deadline).await);
        tracing::info!("stopping and waiting for caches");
        let caches = async {
            for factory in &factories {
                factory.shutdown().await;
            }
        };
        if tokio::time::timeout_at(deadline, caches).await.is_err() {
            still_running.push("informer caches".to_owned());
        }
        tracing::info!("stopping and waiting for HTTP servers");
        still_running.extend(servers.stop_and_wait(deadline).await);
        tracing::info!("wait completed, the manager stopped");

        // What failed after the stop began is logged only, as controller-runtime does.
        drop(events_tx);
        while let Ok(event) = events.try_recv() {
            held.push(event);
        }
        for event in held {
            match event {
                Event::Failed(e) => {
                    tracing::error!(error = %e, "error received after the stop sequence was engaged");
                }
                Event::LeadershipLost => {
                    tracing::warn!(
                        "leader election lost after the leader election runnables stopped"
                    );
                }
                Event::Leading => {}
            }
        }
        if graceful_shutdown_timeout.is_zero() {
            // Controller-runtime's 0: nothing waited for, nothing reported.
            still_running.clear();
        }
        match cause {
            Cause::Shutdown if still_running.is_empty() => Ok(()),
            Cause::Shutdown => Err(Error::shutdown_timeout(
                graceful_shutdown_timeout,
                still_running,
            )),
            Cause::Failed(e) => Err(e.with_still_running(still_running)),
            Cause::LeadershipLost => {
                let lease = election.as_ref().map_or("", |e| e.lease.as_str());
                Err(Error::leader_election_lost(lease).with_still_running(still_running))
            }
        }
    }
}

/// The start (controller-runtime's `Start` up to its wait): HTTP servers, caches, the
/// runnables that need no election, the election and, once leading, the leader runnables;
/// then waits for a reason to stop.
#[allow(clippy::too_many_arguments)]
async fn start(
    factories: &[Arc<SharedInformerFactory>],
    election: Option<&Election>,
    cache_sync_timeout: Duration,
    listeners: Listeners,
    (healthz, readyz): (Arc<ProbeHandler>, Arc<ProbeHandler>),
    synced: &AtomicBool,
    (server_runnables, other_runnables, leader_runnables): (
        Vec<Runnable>,
        Vec<Runnable>,
        Vec<Runnable>,
    ),
    (servers, others, leaders, running_election): (
        &mut RunnableGroup,
        &mut RunnableGroup,
        &mut RunnableGroup,
        &mut Option<RunningElection>,
    ),
    shutdown: &CancellationToken,
    (events_tx, events): (&UnboundedSender<Event>, &mut UnboundedReceiver<Event>),
    elected: &Elected,
) -> Cause {
    // 1. The HTTP servers, first: probes answer (readyz failing) while the caches fill.
    if let Some(server) = listeners.health_probe {
        let route = probe_route(healthz, readyz);
        let token = servers.token();
        let name = format!("{} server", server.name);
        servers.spawn(name, server.serve(route, token).boxed(), events_tx);
    }
    if let Some((server, renderer)) = listeners.metrics {
        let route: Route = Arc::new(move |path: String, _query| {
            let answer = renderer.answer(&path);
            async move { answer }.boxed()
        });
        let token = servers.token();
        let name = format!("{} server", server.name);
        servers.spawn(name, server.serve(route, token).boxed(), events_tx);
    }

    // The runnables that serve before the caches (webhook servers), with the HTTP servers.
    for runnable in server_runnables {
        servers.start(runnable, events_tx);
    }

    // 2. The caches: start the factories' informers and wait for their sync.
    for factory in factories {
        factory.start();
    }
    let all_synced =
        async {
            let mut sync = Vec::new();
            for factory in factories {
                let namespace = factory.namespace().filter(|_| factories.len() > 1);
                sync.extend(factory.wait_for_cache_sync().await.into_iter().map(
                    |(name, synced)| match namespace {
                        Some(namespace) => (format!("{name} in {namespace}"), synced),
                        None => (name, synced),
                    },
                ));
            }
            sync
        };
    let sync = tokio::select! {
        biased;
        () = shutdown.cancelled() => return Cause::Shutdown,
        cause = next_failure(events) => return cause,
        sync = tokio::time::timeout(cache_sync_timeout, all_synced) => match sync {
            Ok(sync) => sync,
            Err(_) => return Cause::Failed(Error::manager_cache_sync_timeout(cache_sync_timeout)),
        },
    };
    let mut not_synced: Vec<String> = sync
        .into_iter()
        .filter(|(_, synced)| !synced)
        .map(|(name, _)| name)
        .collect();
    if !not_synced.is_empty() {
        not_synced.sort();
        return Cause::Failed(Error::manager_cache_sync(&not_synced));
    }
    synced.store(true, Ordering::Release);
    tracing::info!("informer caches synced");

    // 3. The runnables that need no election.
    for runnable in other_runnables {
        others.start(runnable, events_tx);
    }

    // 4. The election, or none: then the leader runnables start at once.
    let mut leader_runnables = Some(leader_runnables);
    match election {
        Some(election) => *running_election = Some(election.start(events_tx.clone())),
        None => {
            for runnable in leader_runnables.take().into_iter().flatten() {
                leaders.start(runnable, events_tx);
            }
            elected.set_elected();
        }
    }

    // 5. Run until a reason to stop; start the leader runnables once leading.
    loop {
        let event = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Cause::Shutdown,
            event = events.recv() => event,
        };
        match event {
            Some(Event::Failed(e)) => return Cause::Failed(e),
            Some(Event::LeadershipLost) => return Cause::LeadershipLost,
            Some(Event::Leading) => {
                tracing::info!("leading: starting the leader election runnables");
                for runnable in leader_runnables.take().into_iter().flatten() {
                    leaders.start(runnable, events_tx);
                }
                elected.set_elected();
            }
            // The manager holds a sender: never.
            None => return Cause::Shutdown,
        }
    }
}

/// The first failure among `events` (during the start, only failures come); pending for ever
/// if none.
async fn next_failure(events: &mut UnboundedReceiver<Event>) -> Cause {
    loop {
        match events.recv().await {
            Some(Event::Failed(e)) => return Cause::Failed(e),
            Some(_) => {}
            None => std::future::pending::<()>().await,
        }
    }
}

/// The health probe server's routes: `/healthz[/...]` and `/readyz[/...]`, each handed the
/// path after its prefix (controller-runtime's `http.StripPrefix` under a `ServeMux`). The
/// path is percent-decoded first, as Go's `URL.Path` is, so `/readyz/my%20check` asks for the
/// check named `my check`.
fn probe_route(healthz: Arc<ProbeHandler>, readyz: Arc<ProbeHandler>) -> Route {
    Arc::new(move |path: String, query: Option<String>| {
        let (healthz, readyz) = (Arc::clone(&healthz), Arc::clone(&readyz));
        async move {
            let path = percent_encoding::percent_decode_str(&path).decode_utf8_lossy();
            let (handler, rest) = if let Some(rest) = strip_endpoint(&path, "/healthz") {
                (healthz, rest)
            } else if let Some(rest) = strip_endpoint(&path, "/readyz") {
                (readyz, rest)
            } else {
                let r = ProbeResponse::not_found();
                return Answer::text(r.status, r.body);
            };
            let r = handler.serve(rest, query.as_deref()).await;
            Answer::text(r.status, r.body)
        }
        .boxed()
    })
}

/// The path after `endpoint` when `path` is the endpoint or under it.
fn strip_endpoint<'a>(path: &'a str, endpoint: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(endpoint)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}
