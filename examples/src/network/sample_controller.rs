//! [`SampleController`]: the Network controller written by hand on client-go's parts, the
//! shape of client-go's sample-controller, in Rust, for the seed's `Network` resource. The
//! `sample-controller` binary runs it; the flagship [`NetworkController`](crate::NetworkController)
//! does the same on `kclient::controller`'s runtime.
//!
//! ```text
//!  Network informer ----\                                  /--> worker 1 --\
//!   (add, update with    >-- "ns/name" --> rate-limited --<                 >--> reconcile
//!    a new RV, delete)  /                  workqueue       \--> worker N --/     |
//!  ConfigMap informer -/   (owner Network's key)                                  |
//!                                                                                 v
//!                 desired: the Network from the lister   actual: network-<name> ConfigMap
//!                 -> create / patch the ConfigMap, then the Network's status subresource
//! ```
//!
//! - **Handlers only enqueue keys.** A Network add or delete enqueues its `namespace/name`;
//!   an update whose old and new resourceVersion are equal is a periodic resync, not a change,
//!   and is skipped (as the seed's `UpdateFunc` does). A delete the informer only inferred from
//!   a relist arrives as [`DeletedObject::Tombstone`] and still yields its key. A ConfigMap
//!   event enqueues the Network that controls it (its ownerReference with `controller: true`),
//!   and, for a ConfigMap named `network-<name>`, that Network too, so a Network blocked by
//!   a foreign ConfigMap is retried the moment that ConfigMap changes or goes.
//! - **Workers reconcile from the cache.** The desired state is read from the Network
//!   lister, never from the API server; a key whose Network is gone needs nothing, because the
//!   garbage collector deletes the owned ConfigMap.
//! - **Errors are retried with backoff, a bounded number of times.** A failed reconcile goes
//!   back with `add_rate_limited` (5 ms, 10 ms, ... per key, under an overall 10 qps bucket)
//!   until [`NetworkControllerOptions::max_retries`]; a success `forget`s the key's history;
//!   `done` is always called. An invalid spec or a foreign ConfigMap is not an error to retry:
//!   it is reported in the status and waits for the next change.
//! - **Status is written only when it changes**, through the status subresource, with
//!   `observedGeneration` telling users which spec it describes.
//! - **Events** are recorded about the Network when the controller acts or the status changes
//!   (`ConfigMapCreated`, `ConfigMapUpdated`, `Synced`, `InvalidSpec`, `ErrResourceExists`),
//!   through `kclient-tools`' EventRecorder, so `kubectl describe network` tells the story.
//! - **Shutdown drains.** Cancelling stops the informers, then shuts the queue down with drain:
//!   work in hand finishes, then the workers exit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kclient::api::core::v1::{ConfigMap, EventSource};
use kclient::apimachinery::{Object, meta_namespace_key, namespace_key, split_meta_namespace_key};
use kclient::cache::{CancellationToken, DeletedObject, Lister, ResourceEventHandlerFuncs};
use kclient::informers::SharedInformerFactory;
use kclient::kubernetes::Clientset;
use kclient::rest::Client;
use kclient::tools::{ClientEventSink, EventBroadcaster, EventRecorder};
use kclient::workqueue::{QueueConfig, RateLimitingQueue, default_controller_rate_limiter};
use tokio::sync::broadcast;

use crate::error::Error;
use crate::network::config_map::{
    CONTROLLER_NAME, config_map_name, controlling_network, network_name_of,
};
use crate::network::options::NetworkControllerOptions;
use crate::network::sync::{SyncContext, sync_network};
use crate::network::sync_event::{SyncEvent, SyncOutcome, error_chain};
use crate::network::types::Network;

/// The hand-written Network controller; cheap to clone (clones share one controller).
#[derive(Clone)]
pub struct SampleController {
    inner: Arc<Inner>,
}

struct Inner {
    clientset: Clientset,
    factory: SharedInformerFactory,
    networks: Lister<Network>,
    config_maps: Lister<ConfigMap>,
    queue: RateLimitingQueue<String>,
    options: NetworkControllerOptions,
    events: broadcast::Sender<SyncEvent>,
    synced: AtomicBool,
    /// Kubernetes Events about Networks (`kubectl describe network` shows them), as the
    /// seed's controller records with client-go's `record.EventRecorder`.
    broadcaster: EventBroadcaster,
    recorder: EventRecorder,
}

impl std::fmt::Debug for SampleController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleController")
            .field("options", &self.inner.options)
            .field("queue", &self.inner.queue)
            .finish_non_exhaustive()
    }
}

impl SampleController {
    /// Sets up the informers, their handlers and the workqueue (client-go's `NewController`).
    /// Nothing runs until [`run`](Self::run).
    pub fn new(client: Client, options: NetworkControllerOptions) -> Result<Self, Error> {
        let mut factory = SharedInformerFactory::new(client.clone(), options.resync);
        if let Some(namespace) = &options.namespace {
            factory = factory.with_namespace(namespace.clone());
        }
        let network_informer = factory.informer::<Network>();
        let config_map_informer = factory.informer::<ConfigMap>();
        let queue = RateLimitingQueue::with_config(
            QueueConfig::new()
                .name("networks")
                .rate_limiter(default_controller_rate_limiter()),
        );
        let (events, _) = broadcast::channel(1024);
        let broadcaster = EventBroadcaster::new();
        let recorder = broadcaster.new_recorder(EventSource {
            component: Some(CONTROLLER_NAME.into()),
            host: None,
        });
        let inner = Arc::new(Inner {
            broadcaster,
            recorder,
            clientset: Clientset::new(client),
            networks: network_informer.lister(),
            config_maps: config_map_informer.lister(),
            factory,
            queue,
            options,
            events,
            synced: AtomicBool::new(false),
        });

        let (add_q, update_q, delete_q) = (
            inner.queue.clone(),
            inner.queue.clone(),
            inner.queue.clone(),
        );
        network_informer
            .add_event_handler(
                ResourceEventHandlerFuncs::new()
                    .add_func(move |network: &Arc<Network>, _| {
                        add_q.add(meta_namespace_key(network.as_ref()))
                    })
                    .update_func(move |old: &Arc<Network>, new: &Arc<Network>| {
                        // Same resourceVersion: a periodic resync, nothing changed.
                        if old.resource_version() != new.resource_version() {
                            update_q.add(meta_namespace_key(new.as_ref()));
                        }
                    })
                    .delete_func(move |deleted: DeletedObject<Network>| {
                        let key = match deleted {
                            DeletedObject::Object(network) => meta_namespace_key(network.as_ref()),
                            // Deleted while the watch was down: only the key is certain.
                            DeletedObject::Tombstone(tombstone) => tombstone.key,
                        };
                        delete_q.add(key);
                    }),
            )
            .map_err(|_| Error::stopped("the Network event handler was added"))?;

        let (add_c, update_c, delete_c) = (
            Arc::downgrade(&inner),
            Arc::downgrade(&inner),
            Arc::downgrade(&inner),
        );
        config_map_informer
            .add_event_handler(
                ResourceEventHandlerFuncs::new()
                    .add_func(move |cm: &Arc<ConfigMap>, _| {
                        if let Some(inner) = add_c.upgrade() {
                            inner.enqueue_for_config_map(cm.namespace(), cm.name(), Some(cm));
                        }
                    })
                    .update_func(move |old: &Arc<ConfigMap>, new: &Arc<ConfigMap>| {
                        if old.resource_version() == new.resource_version() {
                            return;
                        }
                        if let Some(inner) = update_c.upgrade() {
                            inner.enqueue_for_config_map(new.namespace(), new.name(), Some(new));
                        }
                    })
                    .delete_func(move |deleted: DeletedObject<ConfigMap>| {
                        let Some(inner) = delete_c.upgrade() else {
                            return;
                        };
                        match deleted {
                            DeletedObject::Object(cm) => {
                                inner.enqueue_for_config_map(cm.namespace(), cm.name(), Some(&cm))
                            }
                            DeletedObject::Tombstone(tombstone) => match &tombstone.obj {
                                Some(cm) => inner.enqueue_for_config_map(
                                    cm.namespace(),
                                    cm.name(),
                                    Some(cm),
                                ),
                                None => {
                                    if let Ok((namespace, name)) =
                                        split_meta_namespace_key(&tombstone.key)
                                    {
                                        inner.enqueue_for_config_map(
                                            namespace.unwrap_or(""),
                                            name,
                                            None,
                                        );
                                    }
                                }
                            },
                        }
                    }),
            )
            .map_err(|_| Error::stopped("the ConfigMap event handler was added"))?;

        Ok(SampleController { inner })
    }

    /// Runs the controller until `shutdown` is cancelled (client-go's `Run(workers, stopCh)`):
    /// starts the informers, waits for their caches, starts the workers; on cancellation stops
    /// the informers, drains the queue and waits for the workers.
    ///
    /// Fails only when cancelled before the caches synced.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        let inner = &self.inner;
        tracing::info!("starting the Network controller");
        let event_sink = inner
            .broadcaster
            .start_recording_to_sink(ClientEventSink::new(inner.clientset.rest_client().clone()));
        inner.factory.start();
        tracing::info!("waiting for the informer caches to sync");
        let synced = tokio::select! {
            synced = inner.factory.wait_for_cache_sync() => synced.values().all(|ok| *ok),
            () = shutdown.cancelled() => false,
        };
        if !synced {
            inner.factory.shutdown().await;
            inner.queue.shut_down();
            inner.broadcaster.shutdown();
            event_sink.wait().await;
            return Err(Error::stopped("the informer caches synced"));
        }
        inner.synced.store(true, Ordering::Release);

        let workers = inner.options.workers.max(1);
        tracing::info!("caches synced; starting {workers} workers");
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let controller = self.clone();
                tokio::spawn(async move { controller.run_worker().await })
            })
            .collect();

        shutdown.cancelled().await;
        tracing::info!("shutting down: stopping the informers and draining the queue");
        inner.factory.shutdown().await;
        inner.queue.shut_down_with_drain().await;
        for handle in handles {
            // A worker that panicked has stopped as well; tokio reported the panic.
            let _ = handle.await;
        }
        // Events recorded by the last reconciles are written (each tried once) before exit.
        inner.broadcaster.shutdown();
        event_sink.wait().await;
        tracing::info!("the Network controller has stopped");
        Ok(())
    }

    /// Whether the informer caches have synced and the workers are running.
    pub fn has_synced(&self) -> bool {
        self.inner.synced.load(Ordering::Acquire)
    }

    /// A receiver of every reconcile's [`SyncEvent`] from now on (a bounded channel: a
    /// receiver that falls more than 1,024 events behind loses the oldest).
    pub fn subscribe(&self) -> broadcast::Receiver<SyncEvent> {
        self.inner.events.subscribe()
    }

    /// How many times `key` has been requeued with backoff since its last success.
    pub fn num_requeues(&self, key: &str) -> usize {
        self.inner.queue.num_requeues(&key.to_owned())
    }

    /// The Network lister the controller reads its desired state from.
    pub fn network_lister(&self) -> &Lister<Network> {
        &self.inner.networks
    }

    /// One worker: take keys until the queue shuts down (client-go's `runWorker`).
    async fn run_worker(&self) {
        while self.process_next_work_item().await {}
    }

    /// Takes one key, reconciles it, and tells the queue how it went (client-go's
    /// `processNextWorkItem`). Returns `false` once the queue has shut down.
    async fn process_next_work_item(&self) -> bool {
        let inner = &self.inner;
        let Some(key) = inner.queue.get().await else {
            return false;
        };
        let outcome = match inner.sync_handler(&key).await {
            Ok(outcome) => {
                inner.queue.forget(&key);
                outcome
            }
            Err(err) => {
                let error = error_chain(&err);
                let requeues = inner.queue.num_requeues(&key);
                if requeues < inner.options.max_retries {
                    tracing::warn!("{key}: {error}; retrying (attempt {})", requeues + 1);
                    inner.queue.add_rate_limited(key.clone());
                    SyncOutcome::Failed {
                        error,
                        will_retry: true,
                    }
                } else {
                    tracing::error!(
                        "{key}: {error}; giving up after {requeues} retries until it changes again"
                    );
                    inner.queue.forget(&key);
                    SyncOutcome::Failed {
                        error,
                        will_retry: false,
                    }
                }
            }
        };
        inner.queue.done(&key);
        // No subscriber is fine.
        let _ = inner.events.send(SyncEvent { key, outcome });
        true
    }
}

impl Inner {
    /// Enqueues the Networks a ConfigMap event concerns (client-go's `handleObject`): the
    /// Network controlling it, and the Network its name belongs to, if they are in the cache.
    fn enqueue_for_config_map(&self, namespace: &str, name: &str, cm: Option<&ConfigMap>) {
        let networks = self.networks.namespace(namespace);
        if let Some((owner, _uid)) = cm.and_then(controlling_network)
            && networks.get(owner).is_ok()
        {
            self.queue.add(namespace_key(namespace, owner));
        }
        if let Some(network) = network_name_of(name)
            && networks.get(network).is_ok()
        {
            self.queue.add(namespace_key(namespace, network));
        }
    }

    /// Compares the desired state (the Network, from the lister) with the actual one (its
    /// ConfigMap) and acts on the difference (client-go's `syncHandler`).
    async fn sync_handler(&self, key: &str) -> Result<SyncOutcome, Error> {
        let (namespace, name) = match split_meta_namespace_key(key) {
            Ok((Some(namespace), name)) => (namespace, name),
            // Not a key this controller makes; retrying cannot help.
            _ => {
                tracing::error!("invalid key {key:?} in the queue; dropping it");
                return Ok(SyncOutcome::Gone);
            }
        };
        let network = match self.networks.namespace(namespace).get(name) {
            Ok(network) => network,
            Err(e) if e.is_not_found() => {
                tracing::info!(
                    "{key}: Network deleted; the garbage collector removes ConfigMap {}",
                    config_map_name(name)
                );
                return Ok(SyncOutcome::Gone);
            }
            Err(e) => {
                return Err(Error::api(
                    format!("reading Network {key} from the cache"),
                    e,
                ));
            }
        };
        let sync = SyncContext {
            clientset: &self.clientset,
            config_maps: &self.config_maps,
            recorder: &self.recorder,
        };
        sync_network(&network, &sync).await
    }
}
