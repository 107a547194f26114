//! [`ManagerBuilder`]: a manager's options (controller-runtime's `manager.Options`), and
//! [`build`](ManagerBuilder::build), which checks the election and binds the HTTP addresses.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kclient_informers::SharedInformerFactory;
use kclient_tools::LeaderElectionConfig;
use tokio::sync::mpsc;

use crate::builder::DEFAULT_CACHE_SYNC_TIMEOUT;
use crate::error::Error;
use crate::manager::controller_manager::{Listeners, Manager};
use crate::manager::election::Election;
use crate::manager::healthz::{Checker, ProbeHandler};
use crate::manager::metrics::MetricsRenderer;
use crate::manager::server::BoundServer;

/// How long a stopping manager waits for its runnables by default (controller-runtime's
/// `defaultGracefulShutdownPeriod`).
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds a [`Manager`]: made by [`Manager::builder`].
pub struct ManagerBuilder {
    /// The manager's factory first, then those of `with_factory`.
    factories: Vec<Arc<SharedInformerFactory>>,
    leader_election: Option<LeaderElectionConfig>,
    graceful_shutdown_timeout: Duration,
    cache_sync_timeout: Duration,
    health_probe_bind_address: Option<SocketAddr>,
    metrics: Option<(SocketAddr, MetricsRenderer)>,
}

impl fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("factories", &self.factories)
            .field("leader_election", &self.leader_election)
            .field("graceful_shutdown_timeout", &self.graceful_shutdown_timeout)
            .field("cache_sync_timeout", &self.cache_sync_timeout)
            .field("health_probe_bind_address", &self.health_probe_bind_address)
            .field("metrics_bind_address", &self.metrics.as_ref().map(|m| m.0))
            .finish()
    }
}

impl ManagerBuilder {
    pub(crate) fn new(factory: Arc<SharedInformerFactory>) -> Self {
        ManagerBuilder {
            factories: vec![factory],
            leader_election: None,
            graceful_shutdown_timeout: DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
            health_probe_bind_address: None,
            metrics: None,
        }
    }

    /// Also starts `factory`, waits for its caches with the others (the `informer-sync`
    /// readiness check covers them all) and shuts it down with them: the factories of the
    /// other namespaces of a controller over a set of namespaces
    /// ([`ControllerBuilder::with_factory`](crate::ControllerBuilder::with_factory)).
    /// [`Manager::factory`] stays the one given to [`Manager::builder`].
    pub fn with_factory(mut self, factory: impl Into<Arc<SharedInformerFactory>>) -> Self {
        self.factories.push(factory.into());
        self
    }

    /// Runs the runnables that need leader election only while this candidate holds the lock
    /// of `config` (controller-runtime's `LeaderElection`, `LeaderElectionNamespace`,
    /// `LeaderElectionID`, `LeaseDuration`, `RenewDeadline`, `RetryPeriod`,
    /// `LeaderElectionReleaseOnCancel`, all in kclient-tools' config: the lock names the
    /// Lease's namespace and name and this candidate's identity).
    ///
    /// The manager sets the config's `on_started_leading` and `on_stopped_leading` callbacks
    /// (an `on_new_leader` set is kept). Its `release_on_cancel` is honoured as
    /// controller-runtime's `LeaderElectionReleaseOnCancel` (off by default): with it, a
    /// manager stopping releases the lease once its leader runnables have stopped, so a
    /// successor takes over at once instead of after the lease duration. Its `watch_dog` is
    /// served as the `leaderElection` liveness check; without one, a
    /// [`HealthzAdaptor`](kclient_tools::HealthzAdaptor) tolerating
    /// [`DEFAULT_LEADER_HEALTHZ_TIMEOUT`](crate::manager::DEFAULT_LEADER_HEALTHZ_TIMEOUT)
    /// is made.
    pub fn leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.leader_election = Some(config);
        self
    }

    /// How long a stopping manager waits for its runnables, all groups together (default
    /// [`DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT`], 30 s; controller-runtime's
    /// `GracefulShutdownTimeout`). What has not stopped then is cancelled at its next `.await`
    /// and [`run`](Manager::run) fails with
    /// [`is_shutdown_timeout`](crate::Error::is_shutdown_timeout). `Duration::ZERO` waits for
    /// nothing and reports nothing (controller-runtime's 0); `Duration::MAX` waits for ever
    /// (its negative value).
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// How long the manager waits for its informer caches to sync before it stops and
    /// [`run`](Manager::run) fails with [`is_cache_sync`](crate::Error::is_cache_sync)
    /// (default [`DEFAULT_CACHE_SYNC_TIMEOUT`], 2 minutes, controller-runtime's
    /// `CacheSyncTimeout` of each controller). `Duration::MAX` waits for ever.
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
        self
    }

    /// Serves `/healthz` and `/readyz` on `address` (controller-runtime's
    /// `HealthProbeBindAddress`; port 0 picks a free port, see
    /// [`Manager::health_probe_addr`]). Off by default.
    pub fn health_probe_bind_address(mut self, address: SocketAddr) -> Self {
        self.health_probe_bind_address = Some(address);
        self
    }

    /// Serves `/metrics` on `address` with what `renderer` renders (controller-runtime's
    /// `Metrics.BindAddress`; port 0 picks a free port, see [`Manager::metrics_addr`]). Off
    /// by default (controller-runtime serves `:8080` unless told `"0"`; here the program
    /// says where).
    pub fn metrics_bind_address(mut self, address: SocketAddr, renderer: MetricsRenderer) -> Self {
        self.metrics = Some((address, renderer));
        self
    }

    /// Checks the leader election configuration and listens on the probe and metrics
    /// addresses (so an address in use fails here, as controller-runtime's `New`); the
    /// servers answer from [`run`](Manager::run) on.
    ///
    /// Fails with [`is_leader_election`](crate::Error::is_leader_election) for a
    /// configuration client-go would refuse, and [`is_bind`](crate::Error::is_bind) for an
    /// address that cannot be listened on.
    pub fn build(self) -> Result<Manager, Error> {
        let (events_tx, events) = mpsc::unbounded_channel();
        let election = self
            .leader_election
            .map(|config| Election::new(config, events_tx.clone()))
            .transpose()?;
        let health_probe = self
            .health_probe_bind_address
            .map(|address| BoundServer::bind("health probe", address))
            .transpose()?;
        let metrics = self
            .metrics
            .map(|(address, renderer)| {
                BoundServer::bind("metrics", address).map(|server| (server, renderer))
            })
            .transpose()?;
        let mut healthz = ProbeHandler::default();
        if let Some(election) = &election {
            let adaptor = election.healthz.clone();
            healthz.insert(
                adaptor.name().to_owned(),
                Checker::new(move || adaptor.check()),
            );
        }
        Ok(Manager::new(
            self.factories,
            election,
            self.graceful_shutdown_timeout,
            self.cache_sync_timeout,
            Listeners {
                health_probe,
                metrics,
            },
            healthz,
            (events_tx, events),
        ))
    }
}
