//! [`NetworkController`]: the flagship, the seed's Network controller on kclient's controller
//! runtime (`kclient::controller`). It behaves as the hand-written
//! [`SampleController`](crate::SampleController) does; what that one types out (handlers,
//! key enqueueing, the owner lookup, workers, `add_rate_limited`/`forget`/`done`, shutdown)
//! is the runtime's:
//!
//! ```text
//!  ControllerBuilder::new("network-controller", &factory)
//!    .for_::<Network>()                         a Network's events enqueue its key
//!    .owns::<ConfigMap>()                       a ConfigMap's events enqueue its controller owner
//!    .watches::<ConfigMap>(network-<name>)      ... and the Network its name points at
//!    (each with Predicate::resource_version_changed(): periodic resyncs are skipped)
//!    .reconcile(reconcile)                      Network from the cache -> ConfigMap + status
//!    .error_policy(..)                          retry with backoff at most max_retries times
//!    .on_deleted(..)                            a Network gone: the garbage collector's job
//! ```
//!
//! The reconcile is the seed's `syncHandler` ([`sync_network`], shared with the hand-written
//! controller): an invalid spec and a foreign ConfigMap are reported in the status (phase
//! `Invalid`, `Conflict`) and wait for the next change; a missing ConfigMap is created; a
//! drifted one is repaired with a strategic merge patch of the part the controller manages;
//! the status is written through the status subresource only when it changes. Events are
//! recorded through the runtime's [`ControllerEvents`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{Object, meta_namespace_key};
use kclient::cache::{CancellationToken, Lister};
use kclient::controller::{Action, ControllerBuilder, ControllerEvents, ObjectRef, Predicate};
use kclient::informers::SharedInformerFactory;
use kclient::kubernetes::Clientset;
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

/// The Network controller on the controller runtime; cheap to clone (clones share one
/// controller).
#[derive(Clone)]
pub struct NetworkController {
    shared: Arc<Shared>,
    leader_election: Option<LeaderElectionConfig>,
}

/// What the handle and the reconciles share.
struct Shared {
    client: Client,
    options: NetworkControllerOptions,
    events: broadcast::Sender<SyncEvent>,
    synced: AtomicBool,
    /// The retries with backoff of each failing key since its last success, as the error
    /// policy decided them.
    requeues: Mutex<HashMap<String, usize>>,
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
            .field("leader_election", &self.leader_election.is_some())
            .finish_non_exhaustive()
    }
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
                requeues: Mutex::new(HashMap::new()),
            }),
            leader_election: None,
        })
    }

    /// Reconciles only while holding the lease of `config` (the runtime's leader election:
    /// the informers stay warm, reconciling stops before the lease is released, and a replica
    /// that loses the lease competes again).
    pub fn with_leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.leader_election = Some(config);
        self
    }

    /// Runs the controller until `shutdown` is cancelled: builds it on a fresh informer
    /// factory, starts the factory, reconciles; then the runtime stops intake, drains the
    /// queue and waits for the reconciles in progress, and the informers and the event
    /// recorder are stopped.
    ///
    /// Fails when cancelled before the caches synced, or when the runtime cannot run it.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        let shared = &self.shared;
        let options = &shared.options;
        let mut factory = SharedInformerFactory::new(shared.client.clone(), options.resync);
        if let Some(namespace) = &options.namespace {
            factory = factory.with_namespace(namespace.clone());
        }
        // The factory's Network informer, the one `for_` uses.
        let networks = factory.informer::<Network>().lister();
        let mut builder = ControllerBuilder::new(CONTROLLER_NAME, &factory)
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
            .workers(options.workers);
        if let Some(config) = &self.leader_election {
            builder = builder.leader_election(config.clone());
        }
        let controller = builder
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
        tracing::info!("starting the Network controller");
        factory.start();
        let caches_synced = async {
            tokio::select! {
                synced = factory.wait_for_cache_sync_all() => {
                    shared.synced.store(synced, Ordering::Release);
                }
                () = shutdown.cancelled() => {}
            }
        };
        let (result, ()) = tokio::join!(controller.run(ctx, shutdown.clone()), caches_synced);
        factory.shutdown().await;
        events.shutdown().await;
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
