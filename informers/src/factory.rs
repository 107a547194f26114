//! [`SharedInformerFactory`]: one informer per resource type, shared by every caller, started
//! and stopped together (client-go's `informers.SharedInformerFactory` and
//! `dynamicinformer.DynamicSharedInformerFactory` in one type).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{ApiResource, ListOptions, Object, Resource, Unstructured};
use kclient_cache::{
    CancellationToken, Indexers, Lister, ListerWatcher, SharedIndexInformer, namespace_indexers,
};
use kclient_rest::Client;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

use crate::list_watch::{RestListWatch, TweakFn};

/// What the factory needs of an informer whose object type it has forgotten.
trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
    fn has_synced(&self) -> bool;
    fn as_any(&self) -> &dyn Any;
}

impl<K: Object> ErasedInformer for SharedIndexInformer<K> {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        Box::pin(async move { informer.run(cancel).await })
    }
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Which informer: a Rust type, or (for dynamic informers) a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum InformerKey {
    Type(TypeId),
    Dynamic {
        group: String,
        version: String,
        plural: String,
    },
    Metadata {
        group: String,
        version: String,
        plural: String,
    },
}

struct Entry {
    name: String,
    informer: Arc<dyn ErasedInformer>,
    task: Option<JoinHandle<()>>,
}

struct State {
    informers: HashMap<InformerKey, Entry>,
    shut_down: bool,
}

/// Makes and shares informers (client-go's `SharedInformerFactory`).
///
/// Asking twice for the informer of a type returns the same informer, so every controller in a
/// process shares one cache and one watch per resource. [`start`](Self::start) runs the
/// informers not yet running (call it again after asking for more);
/// [`wait_for_cache_sync`](Self::wait_for_cache_sync) waits for the started ones;
/// [`shutdown`](Self::shutdown) stops them all and waits until they have stopped.
///
/// Namespaced resources get the `namespace` index, so
/// [`Lister::namespace`](kclient_cache::Lister) is an index lookup rather than a scan.
///
/// ```no_run
/// # async fn example(client: kclient_rest::Client) {
/// # use kclient_apimachinery::Resource;
/// # fn pods<K: Resource>(f: &kclient_informers::SharedInformerFactory) { let _ = f.lister::<K>(); }
/// use std::time::Duration;
/// use kclient_informers::SharedInformerFactory;
///
/// let factory = SharedInformerFactory::new(client, Duration::from_secs(30));
/// // let pods = factory.lister::<kclient_api::core::v1::Pod>();
/// factory.start();
/// assert!(factory.wait_for_cache_sync().await.values().all(|synced| *synced));
/// factory.shutdown().await;
/// # }
/// ```
pub struct SharedInformerFactory {
    client: Client,
    default_resync: Duration,
    namespace: Option<String>,
    tweak: Option<Arc<TweakFn>>,
    custom_resync: HashMap<InformerKey, Duration>,
    cancel: CancellationToken,
    state: Mutex<State>,
}

impl std::fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        let mut names: Vec<&str> = state.informers.values().map(|e| e.name.as_str()).collect();
        names.sort_unstable();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.namespace)
            .field("default_resync", &self.default_resync)
            .field("informers", &names)
            .field("shut_down", &state.shut_down)
            .finish()
    }
}

impl SharedInformerFactory {
    /// A factory whose informers resync their handlers every `default_resync` (zero: never).
    pub fn new(client: Client, default_resync: Duration) -> Self {
        SharedInformerFactory {
            client,
            default_resync,
            namespace: None,
            tweak: None,
            custom_resync: HashMap::new(),
            cancel: CancellationToken::new(),
            state: Mutex::new(State {
                informers: HashMap::new(),
                shut_down: false,
            }),
        }
    }

    /// Restricts every informer to one namespace (client-go's `WithNamespace`); cluster-scoped
    /// resources are unaffected.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Adjusts the options of every list and watch, for example to add a label selector
    /// (client-go's `WithTweakListOptions`).
    pub fn with_tweak_list_options(
        mut self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// A resync period for the informer of `K` other than the default (client-go's
    /// `WithCustomResyncConfig`).
    pub fn with_custom_resync<K: Resource>(mut self, period: Duration) -> Self {
        self.custom_resync
            .insert(InformerKey::Type(TypeId::of::<K>()), period);
        self
    }

    /// The shared informer of `K`, made on first use (client-go's `InformerFor`).
    pub fn informer<K: Resource>(&self) -> SharedIndexInformer<K> {
        let key = InformerKey::Type(TypeId::of::<K>());
        self.informer_for(key, ApiResource::of::<K>(), || {
            RestListWatch::<K>::for_resource(self.client.clone(), self.namespace.as_deref())
        })
    }

    /// The lister over the shared informer of `K`'s cache.
    pub fn lister<K: Resource>(&self) -> Lister<K> {
        self.informer::<K>().lister()
    }

    /// The shared informer of any resource as [`Unstructured`] objects (client-go's
    /// `DynamicSharedInformerFactory.ForResource`).
    pub fn dynamic_informer(&self, resource: &ApiResource) -> SharedIndexInformer<Unstructured> {
        let key = InformerKey::Dynamic {
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
        };
        self.informer_for(key, resource.clone(), || {
            RestListWatch::dynamic(
                self.client.clone(),
                resource.clone(),
                self.namespace.as_deref(),
            )
        })
    }

    /// The shared informer of any resource's metadata as [`PartialObjectMetadata`] (client-go's
    /// `metadatainformer.SharedInformerFactory.ForResource`): the server sends only metadata,
    /// so the cache holds names, labels, owners and finalizers but no spec or status.
    pub fn metadata_informer(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<PartialObjectMetadata> {
        let key = InformerKey::Metadata {
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
        };
        self.informer_for(key, resource.clone(), || {
            RestListWatch::metadata(
                self.client.clone(),
                resource.clone(),
                self.namespace.as_deref(),
            )
        })
    }

    fn informer_for<K: Object>(
        &self,
        key: InformerKey,
        resource: ApiResource,
        make: impl FnOnce() -> RestListWatch<K>,
    ) -> SharedIndexInformer<K>
    where
        RestListWatch<K>: ListerWatcher<K>,
    {
        let mut state = self.state.lock();
        // The key is the type's own TypeId (or a dynamic resource, always Unstructured, or a
        // metadata one, always PartialObjectMetadata), so the stored informer has type K; the
        // downcast only recovers what the key already says.
        if let Some(entry) = state.informers.get(&key)
            && let Some(informer) = entry
                .informer
                .as_any()
                .downcast_ref::<SharedIndexInformer<K>>()
        {
            return informer.clone();
        }
        let mut lw = make();
        if let Some(tweak) = &self.tweak {
            lw = lw.with_shared_tweak(Arc::clone(tweak));
        }
        let lister_watcher: Arc<dyn ListerWatcher<K>> = Arc::new(lw);
        let indexers: Indexers<K> = if resource.namespaced {
            namespace_indexers()
        } else {
            Indexers::new()
        };
        let resync = self
            .custom_resync
            .get(&key)
            .copied()
            .unwrap_or(self.default_resync);
        let informer = SharedIndexInformer::new(lister_watcher, resync, indexers);
        let name = if resource.group.is_empty() {
            format!("{}/{}", resource.version, resource.plural)
        } else {
            format!(
                "{}/{}/{}",
                resource.group, resource.version, resource.plural
            )
        };
        state.informers.insert(
            key,
            Entry {
                name,
                informer: Arc::new(informer.clone()),
                task: None,
            },
        );
        informer
    }

    /// Starts every informer made so far that is not running yet, each on its own tokio task.
    /// Does nothing after [`shutdown`](Self::shutdown).
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime.
    pub fn start(&self) {
        let mut state = self.state.lock();
        if state.shut_down {
            return;
        }
        for entry in state.informers.values_mut() {
            if entry.task.is_none() {
                let run = entry.informer.run(self.cancel.child_token());
                entry.task = Some(tokio::spawn(run));
            }
        }
    }

    /// Waits until every started informer has synced its cache, or the factory shuts down.
    /// Returns each started informer's name (`group/version/resource`) with whether it synced.
    pub async fn wait_for_cache_sync(&self) -> HashMap<String, bool> {
        let started: Vec<(String, Arc<dyn ErasedInformer>)> = {
            let state = self.state.lock();
            state
                .informers
                .values()
                .filter(|e| e.task.is_some())
                .map(|e| (e.name.clone(), Arc::clone(&e.informer)))
                .collect()
        };
        let mut result = HashMap::new();
        for (name, informer) in started {
            loop {
                if informer.has_synced() {
                    result.insert(name, true);
                    break;
                }
                if self.cancel.is_cancelled() {
                    result.insert(name, false);
                    break;
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = self.cancel.cancelled() => {}
                }
            }
        }
        result
    }

    /// Stops every informer and waits until they have stopped. Later calls to
    /// [`start`](Self::start) do nothing.
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut state = self.state.lock();
            state.shut_down = true;
            state
                .informers
                .values_mut()
                .filter_map(|e| e.task.take())
                .collect()
        };
        self.cancel.cancel();
        for task in tasks {
            // A panicked informer task has stopped too; its panic was reported by tokio.
            let _ = task.await;
        }
    }
}
