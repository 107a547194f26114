//! [`NetworkController`]: the flagship, the seed's Network controller on kclient's controller
//! runtime (`kclient::controller`), run under a controller-runtime-style
//! [`Manager`](kclient::controller::manager::Manager) as a kubebuilder project's `main.go`
//! runs its reconciler. It behaves as the hand-written
//! [`SampleController`](crate::SampleController) does; what that one types out (handlers,
//! key enqueueing, the owner lookup, workers, `add_rate_limited`/`forget`/`done`, starting the
//! informers and waiting for their caches, leader election, shutdown) is the runtime's and the
//! manager's:
//!
//! ```text
//!  Manager::builder(factory)                   the caches, one leader election (optional),
//!    .leader_election(..)                       /healthz and /readyz (optional), /metrics
//!    .health_probe_bind_address(..)             (optional), ordered graceful shutdown
//!    .metrics_bind_address(.., manager_renderer(registry))
//!  ControllerBuilder::new("network-controller", manager.factory())
//!    .for_::<Network>()                         a Network's events enqueue its key
//!    .owns::<ConfigMap>()                       a ConfigMap's events enqueue its controller owner
//!    .watches::<ConfigMap>(network-<name>)      ... and the Network its name points at
//!    (each with Predicate::resource_version_changed(): periodic resyncs are skipped)
//!    .reconcile_timeout(30 s)                   a hung reconcile is cancelled and retried
//!    .reconcile(reconcile)                      Network from the cache -> ConfigMap + status
//!    .error_policy(..)                          retry with backoff at most max_retries times
//!    .on_deleted(..)                            a Network gone: the garbage collector's job
//!  manager.add_controller(controller, ctx); manager.run(shutdown)
//! ```
//!
//! The reconcile is the seed's `syncHandler` ([`sync_network`], shared with the hand-written
//! controller): an invalid spec and a foreign ConfigMap are reported in the status (phase
//! `Invalid`, `Conflict`, and the `Ready` condition `False`) and wait for the next change; a
//! missing ConfigMap is created; a drifted one is repaired with a strategic merge patch of the
//! part the controller manages; the status is written through the status subresource only
//! when it changes. Events are recorded through the runtime's [`ControllerEvents`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{Object, meta_namespace_key};
use kclient::cache::{CancellationToken, Lister};
use kclient::controller::manager::{Manager, Runnable};
use kclient::controller::{Action, ControllerBuilder, ControllerEvents, ObjectRef, Predicate};
use kclient::informers::SharedInformerFactory;
use kclient::kubernetes::Clientset;
use kclient::metrics::Registry;
use kclient::rest::Client;
use kclient::tools::{EventRecorder, LeaderElectionConfig};
use parking_lot::Mutex;
use tokio::sync::broadcast;

use crate::error::Error;
use crate::network::config_map::{CONTROLLER_NAME, config_map_name, network_name_of};
use crate::network::options::NetworkControllerOptions;
use crate::network::sync::{SyncContext, sync_network};
use crate::network::sync_event::{SyncEvent, SyncOutcome, error_chain};
use crate::network::types::Network;

/// How long one reconcile may take before the runtime cancels it and retries the key with
/// backoff (controller-runtime's `ReconciliationTimeout`). A reconcile makes at most three
/// requests, each bounded by the client's own timeout; this bounds the whole.
pub const RECONCILE_TIMEOUT: Duration = Duration::from_secs(30);

/// The Network controller on the controller runtime, under a manager; cheap to clone (clones
/// share one controller).
#[derive(Clone)]
pub struct NetworkController {
    shared: Arc<Shared>,
    manager: Box<ManagerOptions>,
}

/// What the manager is built with, beyond its factory.
#[derive(Clone, Default)]
struct ManagerOptions {
    leader_election: Option<LeaderElectionConfig>,
    health_probe_bind_address: Option<SocketAddr>,
    metrics_bind_address: Option<SocketAddr>,
}

/// What the handle and the reconciles share.
struct Shared {
    client: Client,
    options: NetworkControllerOptions,
    events: broadcast::Sender<SyncEvent>,
    synced: AtomicBool,
    /// The addresses the manager serves probes and metrics on, once it has bound them.
    bound: Mutex<BoundAddresses>,
    /// The retries with backoff of each failing key since its last success, as the error
    /// policy decided them.
    requeues: Mutex<HashMap<String, usize>>,
}

/// The addresses a running manager listens on.
#[derive(Default, Clone, Copy)]
struct BoundAddresses {
    health_probe: Option<SocketAddr>,
    metrics: Option<SocketAddr>,
}

/// What every reconcile gets.
struct Ctx {
    clientset: Clientset,
    config_maps: Lister<ConfigMap>,
    recorder: EventRecorder,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for NetworkController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkController")
            .field("options", &self.shared.options)
            .field("leader_election", &self.manager.leader_election.is_some())
            .field(
                "health_probe_bind_address",
                &self.manager.health_probe_bind_address,
            )
            .field("metrics_bind_address", &self.manager.metrics_bind_address)
            .finish_non_exhaustive()
    }
}

/// The process's metrics registry: the request, reflector, workqueue and controller metrics
/// (`kclient::metrics::register`), made once, since their providers are set once per
/// process. Every manager of the process serves it.
pub fn metrics_registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    Arc::clone(REGISTRY.get_or_init(|| {
        let mut registry = Registry::default();
        if !kclient::metrics::register(&mut registry) {
            tracing::warn!(
                "the client metrics providers were set before; /metrics misses what they count"
            );
        }
        Arc::new(registry)
    }))
}

impl NetworkController {
    /// A controller with these options; nothing runs until [`run`](Self::run). (It cannot
    /// fail; the `Result` keeps the hand-written controller's signature.)
    pub fn new(client: Client, options: NetworkControllerOptions) -> Result<Self, Error> {
        let (events, _) = broadcast::channel(1024);
        Ok(NetworkController {
            shared: Arc::new(Shared {
                client,
                options,
                events,
                synced: AtomicBool::new(false),
                bound: Mutex::new(BoundAddresses::default()),
                requeues: Mutex::new(HashMap::new()),
            }),
            manager: Box::default(),
        })
    }

    /// Reconciles only while holding the lease of `config`: the manager's one leader
    /// election (the informers stay warm meanwhile; at shutdown reconciling stops before the
    /// lease is released, when `config` says `release_on_cancel`; a lost lease stops the
    /// manager, and [`run`](Self::run) fails, as a controller-runtime manager exits).
    pub fn with_leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.manager.leader_election = Some(config);
        self
    }

    /// Serves `/healthz` and `/readyz` (with the manager's `informer-sync` readiness check)
    /// on `address`; port 0 picks a free port, which
    /// [`health_probe_addr`](Self::health_probe_addr) tells once running. Off by default.
    pub fn with_health_probes(mut self, address: SocketAddr) -> Self {
        self.manager.health_probe_bind_address = Some(address);
        self
    }

    /// Serves `/metrics` (the [`metrics_registry`]: client requests, reflectors, the
    /// workqueue and `controller_runtime_*`) on `address`; port 0 picks a free port, which
    /// [`metrics_addr`](Self::metrics_addr) tells once running. Off by default.
    pub fn with_metrics(mut self, address: SocketAddr) -> Self {
        self.manager.metrics_bind_address = Some(address);
        self
    }

    /// Runs the controller until `shutdown` is cancelled: a manager on a fresh informer
    /// factory runs it (starting the probes and metrics servers, the caches, the election if
    /// any, then the controller); then the manager stops it in order (the controller stops
    /// intake and waits for the reconciles in progress; the lease is
    /// released; the informers and servers stop), and the event recorder is stopped.
    ///
    /// Fails when an address cannot be bound, when cancelled before the caches synced, when
    /// the lease is lost, or when the runtime cannot run the controller.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        let shared = &self.shared;
        let options = &shared.options;
        // The caches keep no managedFields: the controller never reads them, and they are
        // often the largest part of an object's metadata.
        let mut factory = SharedInformerFactory::new(shared.client.clone(), options.resync)
            .with_transform(|object| object.clear_managed_fields());
        if let Some(namespace) = &options.namespace {
            factory = factory.with_namespace(namespace.clone());
        }
        let mut manager = Manager::builder(factory);
        if let Some(config) = &self.manager.leader_election {
            manager = manager.leader_election(config.clone());
        }
        if let Some(address) = self.manager.health_probe_bind_address {
            manager = manager.health_probe_bind_address(address);
        }
        if let Some(address) = self.manager.metrics_bind_address {
            manager = manager.metrics_bind_address(
                address,
                kclient::metrics::manager_renderer(metrics_registry()),
            );
        }
        let mut manager = manager.build().map_err(Error::controller)?;
        *shared.bound.lock() = BoundAddresses {
            health_probe: manager.health_probe_addr(),
            metrics: manager.metrics_addr(),
        };
        if let Some(address) = manager.health_probe_addr() {
            tracing::info!("serving /healthz and /readyz on http://{address}");
        }
        if let Some(address) = manager.metrics_addr() {
            tracing::info!("serving /metrics on http://{address}/metrics");
        }

        let factory = Arc::clone(manager.factory());
        // The factory's Network informer, the one `for_` uses.
        let networks = factory.informer::<Network>().lister();
        let controller = ControllerBuilder::new(CONTROLLER_NAME, &factory)
            .for_::<Network>()
            .with_predicate(Predicate::resource_version_changed())
            .owns_with::<ConfigMap>(vec![Predicate::resource_version_changed()])
            // A foreign ConfigMap blocking a Network wakes it when it changes or goes; a
            // `network-<name>` ConfigMap with no such Network wakes nothing.
            .watches_with::<ConfigMap>(
                move |cm| {
                    network_name_of(cm.name())
                        .filter(|network| networks.namespace(cm.namespace()).get(network).is_ok())
                        .map(|network| ObjectRef::new(cm.namespace(), network))
                        .into_iter()
                        .collect()
                },
                vec![Predicate::resource_version_changed()],
            )
            .workers(options.workers)
            .reconcile_timeout(RECONCILE_TIMEOUT)
            .reconcile(reconcile)
            .error_policy(error_policy)
            .on_deleted(|key: ObjectRef, ctx: Arc<Ctx>| async move {
                tracing::info!(
                    "{key}: Network deleted; the garbage collector removes ConfigMap {}",
                    config_map_name(&key.name)
                );
                ctx.shared.requeues.lock().remove(&key.to_string());
                ctx.shared.report(key.to_string(), SyncOutcome::Gone);
                Ok(Action::done())
            });
        let events = ControllerEvents::new(shared.client.clone(), CONTROLLER_NAME);
        let ctx = Arc::new(Ctx {
            clientset: Clientset::new(shared.client.clone()),
            config_maps: factory.informer::<ConfigMap>().lister(),
            recorder: events.recorder(),
            shared: Arc::clone(shared),
        });
        manager
            .add_controller(controller, ctx)
            .map_err(Error::controller)?;
        // A runnable that needs no election starts once the caches have synced, on every
        // replica: it marks the controller synced (what `has_synced` reports).
        manager
            .add(
                Runnable::new("caches-synced", {
                    let shared = Arc::clone(shared);
                    move |stop: CancellationToken| async move {
                        shared.synced.store(true, Ordering::Release);
                        stop.cancelled().await;
                        Ok::<_, Infallible>(())
                    }
                })
                .needs_leader_election(false),
            )
            .map_err(Error::controller)?;

        tracing::info!("starting the Network controller");
        let result = manager.run(shutdown).await;
        events.shutdown().await;
        *shared.bound.lock() = BoundAddresses::default();
        tracing::info!("the Network controller has stopped");
        result.map_err(Error::controller)?;
        if !self.has_synced() {
            return Err(Error::stopped("the informer caches synced"));
        }
        Ok(())
    }

    /// Whether the informer caches have synced.
    pub fn has_synced(&self) -> bool {
        self.shared.synced.load(Ordering::Acquire)
    }

    /// The address `/healthz` and `/readyz` are served on while [`run`](Self::run) runs
    /// (with [`with_health_probes`](Self::with_health_probes)).
    pub fn health_probe_addr(&self) -> Option<SocketAddr> {
        self.shared.bound.lock().health_probe
    }

    /// The address `/metrics` is served on while [`run`](Self::run) runs (with
    /// [`with_metrics`](Self::with_metrics)).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.shared.bound.lock().metrics
    }

    /// A receiver of every reconcile's [`SyncEvent`] from now on (a bounded channel: a
    /// receiver that falls more than 1,024 events behind loses the oldest).
    pub fn subscribe(&self) -> broadcast::Receiver<SyncEvent> {
        self.shared.events.subscribe()
    }

    /// How many times `key` has been requeued with backoff since its last success.
    pub fn num_requeues(&self, key: &str) -> usize {
        self.shared.requeues.lock().get(key).copied().unwrap_or(0)
    }
}

impl Shared {
    fn report(&self, key: String, outcome: SyncOutcome) {
        // No subscriber is fine.
        let _ = self.events.send(SyncEvent { key, outcome });
    }
}

/// The reconcile: the Network's outcome is reported, and a success is final until the next
/// event (an invalid spec or a conflict included: they wait for a change).
async fn reconcile(network: Arc<Network>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let sync = SyncContext {
        clientset: &ctx.clientset,
        config_maps: &ctx.config_maps,
        recorder: &ctx.recorder,
    };
    let outcome = sync_network(&network, &sync).await?;
    let key = meta_namespace_key(&*network);
    ctx.shared.requeues.lock().remove(&key);
    ctx.shared.report(key, outcome);
    Ok(Action::done())
}

/// A failed reconcile: retried with the rate limiter's backoff `max_retries` times, then
/// dropped until the Network or its ConfigMap changes again.
fn error_policy(key: &ObjectRef, error: &Error, retries: usize, ctx: &Ctx) -> Action {
    let (key, error) = (key.to_string(), error_chain(error));
    let will_retry = retries < ctx.shared.options.max_retries;
    if will_retry {
        tracing::warn!("{key}: {error}; retrying (attempt {})", retries + 1);
        ctx.shared.requeues.lock().insert(key.clone(), retries + 1);
    } else {
        tracing::error!("{key}: {error}; giving up after {retries} retries until it changes again");
        ctx.shared.requeues.lock().remove(&key);
    }
    ctx.shared
        .report(key, SyncOutcome::Failed { error, will_retry });
    if will_retry {
        Action::requeue()
    } else {
        Action::done()
    }
}
