//! [`SharedInformerFactory`]: one informer per resource and representation, shared by every
//! caller, started and stopped together (client-go's `informers.SharedInformerFactory`,
//! `dynamicinformer.DynamicSharedInformerFactory` and `metadatainformer.SharedInformerFactory`
//! in one type).
//!
//! Informers are keyed by resource (group, version, plural) and by how they hold objects: a
//! Rust type, [`Unstructured`], or [`PartialObjectMetadata`]. A resource asked for by type
//! (`informer::<K>()`) and by name (`for_resource(gvr)`) is therefore one informer with one
//! watch, whichever comes first.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{
    ApiResource, GroupVersionResource, ListOptions, Object, Resource, Unstructured,
};
use kclient_cache::{
    CancellationToken, Indexers, Lister, ListerWatcher, ReflectorOptions, SharedIndexInformer,
    SharedIndexInformerOptions, TransformFunc, namespace_indexers,
};
use kclient_rest::Client;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

use crate::generic::{ErasedInformer, GenericInformer, Representation};
use crate::list_watch::{RestListWatch, TweakFn, Tweaked, chain_tweaks};
use crate::options::InformerOptions;
use crate::registry::{self, MakeTyped};

/// How an informer holds its objects, as part of its key: a typed informer is keyed by its
/// Rust type too, so two Rust types of one resource never share (or overwrite) an informer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Holding {
    Typed(TypeId),
    Dynamic,
    Metadata,
}

impl Holding {
    /// What an informer's names (its entry's and its reflector's) add to its resource's:
    /// nothing for a typed informer, ` (dynamic)` or ` (metadata)` for the others.
    fn suffix(self) -> &'static str {
        match self {
            Holding::Typed(_) => "",
            Holding::Dynamic => " (dynamic)",
            Holding::Metadata => " (metadata)",
        }
    }
}

/// Which informer: a resource and how it holds objects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct InformerKey {
    gvr: GroupVersionResource,
    holding: Holding,
}

struct Entry {
    name: String,
    resource: ApiResource,
    representation: Representation,
    informer: Arc<dyn ErasedInformer>,
    /// Whether [`start`](SharedInformerFactory::start) has run it (it stays true after
    /// shutdown, as client-go's `startedInformers`).
    started: bool,
    task: Option<JoinHandle<()>>,
}

impl Entry {
    fn generic(&self) -> GenericInformer {
        GenericInformer {
            resource: self.resource.clone(),
            representation: self.representation,
            informer: Arc::clone(&self.informer),
        }
    }
}

struct State {
    informers: HashMap<InformerKey, Entry>,
    /// The Rust type of each resource that `for_resource` should return: the first type asked
    /// for with `informer::<K>()` (or its relatives) or [`register`](SharedInformerFactory::register).
    types: HashMap<GroupVersionResource, (TypeId, MakeTyped)>,
    shut_down: bool,
}

/// The resource [`for_resource`](SharedInformerFactory::for_resource) could not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ForResourceError {
    /// The resource asked for.
    pub resource: GroupVersionResource,
    /// The factory's namespace.
    pub namespace: String,
}

impl std::fmt::Display for ForResourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no Rust type is registered for {} and the factory is restricted to namespace {:?}, \
             so whether the resource is namespaced is unknown; pass its ApiResource (from \
             discovery) to for_api_resource, or call register::<K>() first",
            self.resource, self.namespace
        )
    }
}

impl std::error::Error for ForResourceError {}

/// So that `?` on [`SharedInformerFactory::for_resource`] works in a function returning the
/// API error (`kclient::Error`), as an [`Error::other`](kclient_apimachinery::Error::other).
impl From<ForResourceError> for kclient_apimachinery::Error {
    fn from(error: ForResourceError) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}

/// Makes and shares informers (client-go's `SharedInformerFactory`).
///
/// Asking twice for the informer of a resource returns the same informer, so every controller
/// in a process shares one cache and one watch per resource. [`start`](Self::start) runs the
/// informers not yet running (call it again after asking for more);
/// [`wait_for_cache_sync`](Self::wait_for_cache_sync) waits for the started ones;
/// [`shutdown`](Self::shutdown) stops them all and waits until they have stopped.
/// Dropping the factory stops them too, without waiting: the informers (and clones of them
/// held elsewhere) run only while their factory lives.
///
/// # One informer per resource
///
/// Informers are keyed by resource and representation:
///
/// - [`informer::<K>()`](Self::informer) (and [`informer_with`](Self::informer_with),
///   [`informer_for`](Self::informer_for)) is the typed informer of `K`'s resource;
/// - [`for_resource`](Self::for_resource) returns that same typed informer, as a
///   [`GenericInformer`], when the factory knows the resource's Rust type: a type it has
///   already seen through `informer::<K>()` or [`register::<K>()`](Self::register), or, with
///   the crate's `registry` feature, any generated `kclient_api` type of the enabled groups.
///   Otherwise it returns the dynamic ([`Unstructured`]) informer of the resource;
/// - [`dynamic_informer`](Self::dynamic_informer) and
///   [`metadata_informer`](Self::metadata_informer) ask for a representation explicitly and
///   get their own informer, shared with every other caller asking for the same.
///
/// So asking for a resource by type and then by [`GroupVersionResource`] gives one informer
/// and one watch; so does the other order for built-in types with the `registry` feature.
/// **The order rule**: a type the factory does not know yet (a custom resource type, or a
/// built-in type without the `registry` feature) is known only once `informer::<K>()` or
/// `register::<K>()` has been called for it. Call one of them before any `for_resource` of
/// that resource; otherwise `for_resource` returns a dynamic informer and a later
/// `informer::<K>()` opens a second watch.
///
/// Namespaced resources get the `namespace` index, so
/// [`Lister::namespace`](kclient_cache::Lister) is an index lookup rather than a scan.
///
/// ```no_run
/// # async fn example(client: kclient_rest::Client) {
/// use std::time::Duration;
/// use kclient_apimachinery::GroupVersionResource;
/// use kclient_api::core::v1::Pod;
/// use kclient_informers::SharedInformerFactory;
///
/// let factory = SharedInformerFactory::new(client, Duration::from_secs(30));
/// let pods = factory.lister::<Pod>();
/// // The same informer, found by resource (Pod was asked for first): no second watch.
/// let generic = factory.for_resource(&GroupVersionResource::new("", "v1", "pods")).unwrap();
/// assert!(generic.informer::<Pod>().is_some());
/// factory.start();
/// assert!(factory.wait_for_cache_sync_all().await);
/// factory.shutdown().await;
/// # let _ = pods;
/// # }
/// ```
pub struct SharedInformerFactory {
    client: Client,
    default_resync: Duration,
    namespace: Option<String>,
    tweak: Option<Arc<TweakFn>>,
    transform: Option<TransformFunc<dyn Object>>,
    custom_resync: HashMap<GroupVersionResource, Duration>,
    cancel: CancellationToken,
    state: Mutex<State>,
    /// Held while an informer is looked up and, when missing, made: a constructor runs at
    /// most once per informer, as client-go's `InformerFor` runs `newFunc` under its lock.
    /// Reentrant, so that a constructor may ask this factory for another informer on its
    /// thread; held apart from `state`, so that `start` and `shutdown` do not wait for it.
    making: parking_lot::ReentrantMutex<()>,
    /// The tasks [`shutdown`](Self::shutdown) has taken and not yet seen end. A shutdown holds
    /// this lock while it waits for them, so a concurrent call waits too; a call dropped
    /// midway leaves the rest here for the next.
    stopping: tokio::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        let mut names: Vec<&str> = state.informers.values().map(|e| e.name.as_str()).collect();
        names.sort_unstable();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.namespace)
            .field("default_resync", &self.default_resync)
            .field("transform", &self.transform.is_some())
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
            transform: None,
            custom_resync: HashMap::new(),
            cancel: CancellationToken::new(),
            state: Mutex::new(State {
                informers: HashMap::new(),
                types: HashMap::new(),
                shut_down: false,
            }),
            making: parking_lot::ReentrantMutex::new(()),
            stopping: tokio::sync::Mutex::new(Vec::new()),
        }
    }

    /// Restricts every informer to one namespace (client-go's `WithNamespace`); cluster-scoped
    /// resources are unaffected. The empty namespace is every namespace (client-go's
    /// `NamespaceAll`), as if this were not called.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        let namespace = namespace.into();
        self.namespace = (!namespace.is_empty()).then_some(namespace);
        self
    }

    /// The namespace the informers are restricted to ([`with_namespace`](Self::with_namespace)),
    /// `None` for every namespace.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
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

    /// Sets the transform of every informer this factory makes (client-go's `WithTransform`):
    /// it changes each object once, before the object is cached and delivered to handlers,
    /// whatever the informer's type (typed, dynamic or metadata). The usual one drops
    /// `managedFields`, which a controller's cache seldom reads and which is often the largest
    /// part of an object's metadata (controller-runtime's `TransformStripManagedFields`):
    ///
    /// ```no_run
    /// # fn example(client: kclient_rest::Client) {
    /// use std::time::Duration;
    /// use kclient_informers::SharedInformerFactory;
    ///
    /// let factory = SharedInformerFactory::new(client, Duration::ZERO)
    ///     .with_transform(|object| object.clear_managed_fields());
    /// # let _ = factory;
    /// # }
    /// ```
    ///
    /// It applies to every informer the factory makes, including those an
    /// [`informer_for`](Self::informer_for) constructor makes (replacing a transform the
    /// constructor set, as client-go's `InformerFor` does) unless that constructor has started
    /// its informer already. An informer's own
    /// [`set_transform`](SharedIndexInformer::set_transform), called before the factory starts
    /// it, replaces the factory's for that informer. A transform that panics stops its
    /// informer, as an index function that panics does.
    pub fn with_transform(
        mut self,
        transform: impl Fn(&mut dyn Object) + Send + Sync + 'static,
    ) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }

    /// A resync period for the informers of `K`'s resource other than the default (client-go's
    /// `WithCustomResyncConfig`); it applies to the typed, dynamic and metadata informers of
    /// that resource.
    pub fn with_custom_resync<K: Resource>(mut self, period: Duration) -> Self {
        self.custom_resync
            .insert(GroupVersionResource::of::<K>(), period);
        self
    }

    /// The shared informer of `K`, made on first use.
    pub fn informer<K: Resource>(&self) -> SharedIndexInformer<K> {
        self.informer_with(InformerOptions::new())
    }

    /// The shared informer of `K`, made with `options` if this is the first request for it
    /// (client-go's `InformerFor`, with per-informer tweak, indexers, resync and source).
    ///
    /// When the informer of `K` already exists, it is returned and `options` are ignored: the
    /// first request decides how a shared informer is made. Ask with options before anything
    /// else asks for the resource (including [`for_resource`](Self::for_resource)).
    ///
    /// ```no_run
    /// # fn example(factory: &kclient_informers::SharedInformerFactory) {
    /// use kclient_api::core::v1::Pod;
    /// use kclient_informers::InformerOptions;
    ///
    /// let pods = factory.informer_with::<Pod>(
    ///     InformerOptions::new()
    ///         .tweak_list_options(|opts| opts.label_selector = Some("app=web".into()))
    ///         .indexer("by-node", |pod: &Pod| {
    ///             let node = pod.spec.as_ref().and_then(|s| s.node_name.as_ref());
    ///             node.map(|n| n.to_string()).into_iter().collect()
    ///         }),
    /// );
    /// # let _ = pods;
    /// # }
    /// ```
    pub fn informer_with<K: Resource>(
        &self,
        options: InformerOptions<K>,
    ) -> SharedIndexInformer<K> {
        let resource = ApiResource::of::<K>();
        let key = typed_key::<K>();
        self.get_or_make(
            key,
            &resource,
            Some(Self::typed_generic::<K>),
            |resync, name| {
                self.build(&resource, options, resync, name, || {
                    RestListWatch::<K>::for_resource(self.client.clone(), self.namespace.as_deref())
                })
            },
        )
    }

    /// The shared informer of `K`, made by `new` if this is the first request for it
    /// (client-go's `InformerFor(obj, newFunc)`): `new` gets the factory's client and the
    /// resync period for `K`, and returns the informer, which the factory then shares, starts
    /// and stops like the others.
    pub fn informer_for<K: Resource>(
        &self,
        new: impl FnOnce(&Client, Duration) -> SharedIndexInformer<K>,
    ) -> SharedIndexInformer<K> {
        let resource = ApiResource::of::<K>();
        self.get_or_make(
            typed_key::<K>(),
            &resource,
            Some(Self::typed_generic::<K>),
            |resync, _| new(&self.client, resync),
        )
    }

    /// Tells the factory that `K` is the Rust type of its resource, without making an
    /// informer, so that a later [`for_resource`](Self::for_resource) makes the typed informer
    /// rather than a dynamic one. Needed only for custom resource types that are not asked for
    /// with [`informer::<K>()`](Self::informer) first; generated `kclient_api` types are
    /// known already. The first type registered for a resource wins.
    pub fn register<K: Resource>(&self) {
        self.state
            .lock()
            .types
            .entry(GroupVersionResource::of::<K>())
            .or_insert((TypeId::of::<K>(), Self::typed_generic::<K>));
    }

    /// The lister over the shared informer of `K`'s cache.
    pub fn lister<K: Resource>(&self) -> Lister<K> {
        self.informer::<K>().lister()
    }

    /// The shared informer of `resource` (client-go's `ForResource`): the typed informer when
    /// the resource has a Rust type (see [the type docs](Self#one-informer-per-resource)),
    /// otherwise the dynamic one.
    ///
    /// A [`GroupVersionResource`] alone does not say whether the resource is namespaced; that
    /// matters only when the factory is restricted to a namespace
    /// ([`with_namespace`](Self::with_namespace)), where an unknown resource is an error:
    /// use [`for_api_resource`](Self::for_api_resource) with the resource from discovery.
    pub fn for_resource(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<GenericInformer, ForResourceError> {
        if let Some(found) = self.typed_for(resource) {
            return Ok(found);
        }
        let known = {
            let state = self.state.lock();
            state
                .informers
                .get(&InformerKey {
                    gvr: resource.clone(),
                    holding: Holding::Dynamic,
                })
                .map(Entry::generic)
        };
        if let Some(found) = known {
            return Ok(found);
        }
        if let Some(namespace) = &self.namespace {
            return Err(ForResourceError {
                resource: resource.clone(),
                namespace: namespace.clone(),
            });
        }
        // Without a namespace the URL of a namespaced and a cluster-scoped resource is the
        // same (the collection across all namespaces), so the scope is not needed.
        let api_resource = ApiResource::from_gvr(resource, "", true);
        Ok(self.dynamic_generic(&api_resource))
    }

    /// [`for_resource`](Self::for_resource) for a resource described in full (from discovery
    /// or a RESTMapper): never fails, the dynamic fallback knows the resource's scope.
    pub fn for_api_resource(&self, resource: &ApiResource) -> GenericInformer {
        match self.typed_for(&resource.gvr()) {
            Some(found) => found,
            None => self.dynamic_generic(resource),
        }
    }

    /// The typed informer of `gvr`, if the factory or the built-in registry knows its type.
    fn typed_for(&self, gvr: &GroupVersionResource) -> Option<GenericInformer> {
        let make = {
            let state = self.state.lock();
            match state.types.get(gvr) {
                Some((type_id, make)) => {
                    let key = InformerKey {
                        gvr: gvr.clone(),
                        holding: Holding::Typed(*type_id),
                    };
                    if let Some(entry) = state.informers.get(&key) {
                        return Some(entry.generic());
                    }
                    Some(*make)
                }
                None => None,
            }
        };
        // Made outside the lock: making an informer takes it again.
        make.or_else(|| registry::builtin(gvr))
            .map(|make| make(self))
    }

    /// The factory's typed informer of `K` as a [`GenericInformer`]: what the registry calls.
    pub(crate) fn typed_generic<K: Resource>(&self) -> GenericInformer {
        let informer = self.informer::<K>();
        GenericInformer {
            resource: ApiResource::of::<K>(),
            representation: Representation::Typed,
            informer: Arc::new(informer),
        }
    }

    fn dynamic_generic(&self, resource: &ApiResource) -> GenericInformer {
        GenericInformer {
            resource: resource.clone(),
            representation: Representation::Dynamic,
            informer: Arc::new(self.dynamic_informer(resource)),
        }
    }

    /// The shared informer of any resource as [`Unstructured`] objects (client-go's
    /// `DynamicSharedInformerFactory.ForResource`). This is its own informer even when the
    /// resource also has a typed one: ask with [`for_resource`](Self::for_resource) to share
    /// the typed one instead.
    pub fn dynamic_informer(&self, resource: &ApiResource) -> SharedIndexInformer<Unstructured> {
        self.dynamic_informer_with(resource, InformerOptions::new())
    }

    /// [`dynamic_informer`](Self::dynamic_informer) with per-informer options, used if this is
    /// the first request for it (see [`informer_with`](Self::informer_with)).
    pub fn dynamic_informer_with(
        &self,
        resource: &ApiResource,
        options: InformerOptions<Unstructured>,
    ) -> SharedIndexInformer<Unstructured> {
        let key = InformerKey {
            gvr: resource.gvr(),
            holding: Holding::Dynamic,
        };
        self.get_or_make(key, resource, None, |resync, name| {
            self.build(resource, options, resync, name, || {
                RestListWatch::dynamic(
                    self.client.clone(),
                    resource.clone(),
                    self.namespace.as_deref(),
                )
            })
        })
    }

    /// The shared informer of any resource's metadata as [`PartialObjectMetadata`] (client-go's
    /// `metadatainformer.SharedInformerFactory.ForResource`): the server sends only metadata,
    /// so the cache holds names, labels, owners and finalizers but no spec or status.
    pub fn metadata_informer(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<PartialObjectMetadata> {
        let key = InformerKey {
            gvr: resource.gvr(),
            holding: Holding::Metadata,
        };
        self.get_or_make(key, resource, None, |resync, name| {
            self.build(resource, InformerOptions::new(), resync, name, || {
                self.metadata_rest(resource)
            })
        })
    }

    /// The REST source of `resource`'s metadata in the factory's namespace, before tweaks.
    fn metadata_rest(&self, resource: &ApiResource) -> RestListWatch<PartialObjectMetadata> {
        RestListWatch::metadata(
            self.client.clone(),
            resource.clone(),
            self.namespace.as_deref(),
        )
    }

    /// The source a [`metadata_informer`](Self::metadata_informer) of `resource` lists and
    /// watches from (the factory's namespace and list options applied), without an informer
    /// or a cache: for a [`Reflector`](kclient_cache::Reflector) of your own that keeps less
    /// than a whole cache, as a controller's `owns_uncached` does. Each call makes a new
    /// source, and its reflector opens its own watch.
    pub fn metadata_lister_watcher(
        &self,
        resource: &ApiResource,
    ) -> Arc<dyn ListerWatcher<PartialObjectMetadata>> {
        let mut lw = self.metadata_rest(resource);
        if let Some(tweak) = self.tweak.clone() {
            lw = lw.with_shared_tweak(tweak);
        }
        Arc::new(lw)
    }

    /// Makes an informer from options: the factory's REST source (with the factory's and the
    /// options' tweaks) or the options' own source (with the options' tweak only), the
    /// namespace index for namespaced resources plus the options' indexers, and its reflector
    /// named `reflector_name` (see [`reflector_name`](Self::reflector_name)).
    fn build<K: Object>(
        &self,
        resource: &ApiResource,
        options: InformerOptions<K>,
        resync: Duration,
        reflector_name: String,
        rest: impl FnOnce() -> RestListWatch<K>,
    ) -> SharedIndexInformer<K>
    where
        RestListWatch<K>: ListerWatcher<K>,
    {
        let lister_watcher: Arc<dyn ListerWatcher<K>> = match options.lister_watcher {
            Some(custom) => match options.tweak_list_options {
                Some(tweak) => Arc::new(Tweaked {
                    inner: custom,
                    tweak,
                }),
                None => custom,
            },
            None => {
                let mut lw = rest();
                if let Some(tweak) = chain_tweaks(self.tweak.clone(), options.tweak_list_options) {
                    lw = lw.with_shared_tweak(tweak);
                }
                Arc::new(lw)
            }
        };
        let mut indexers: Indexers<K> = if resource.namespaced {
            namespace_indexers()
        } else {
            Indexers::new()
        };
        indexers.extend(options.indexers);
        SharedIndexInformer::with_options(
            lister_watcher,
            SharedIndexInformerOptions::default()
                .resync_period(options.resync.unwrap_or(resync))
                .indexers(indexers)
                .reflector(ReflectorOptions::default().name(reflector_name)),
        )
    }

    /// The name of the reflector of the informer under `key`: the name its logs and its
    /// metrics (`reflector_*{name=...}`) carry. It is the resource (`configmaps`,
    /// `deployments.apps`) for a typed informer, followed by ` (dynamic)` or ` (metadata)`
    /// for the others, and by the Rust type's name in parentheses for a typed informer of a
    /// resource that already has one of another Rust type: each informer's reflector has
    /// its own name, so that their metrics do not merge.
    fn reflector_name<K: Object>(&self, key: &InformerKey) -> String {
        let name = format!("{}{}", key.gvr.group_resource(), key.holding.suffix());
        let Holding::Typed(type_id) = key.holding else {
            return name;
        };
        let another_type = self.state.lock().informers.keys().any(|other| {
            other.gvr == key.gvr && matches!(other.holding, Holding::Typed(id) if id != type_id)
        });
        if another_type {
            format!("{name} ({})", std::any::type_name::<K>())
        } else {
            name
        }
    }

    /// The informer under `key`, or the one `make` returns (given the resync period and the
    /// name for its reflector), stored under `key`. `make` runs
    /// under `making`, not under the state's lock (it may be a caller's constructor, which
    /// may ask for other informers), so it runs at most once per key.
    fn get_or_make<K: Object>(
        &self,
        key: InformerKey,
        resource: &ApiResource,
        typed: Option<MakeTyped>,
        make: impl FnOnce(Duration, String) -> SharedIndexInformer<K>,
    ) -> SharedIndexInformer<K> {
        let _making = self.making.lock();
        if let Some(found) = self.find::<K>(&key) {
            return found;
        }
        let resync = self
            .custom_resync
            .get(&key.gvr)
            .copied()
            .unwrap_or(self.default_resync);
        let informer = make(resync, self.reflector_name::<K>(&key));
        if let Some(transform) = self.transform.clone() {
            // Refused only for an informer a caller's constructor has started already, which
            // keeps whatever transform it has (client-go's `InformerFor` ignores the error too).
            let _ = informer.set_transform(move |object: &mut K| transform(object));
        }
        let mut state = self.state.lock();
        if let Some(found) = state.informers.get(&key)
            && let Some(found) = found
                .informer
                .as_any()
                .downcast_ref::<SharedIndexInformer<K>>()
        {
            return found.clone();
        }
        let representation = match key.holding {
            Holding::Typed(type_id) => {
                if let Some(make_typed) = typed {
                    state
                        .types
                        .entry(key.gvr.clone())
                        .or_insert((type_id, make_typed));
                }
                Representation::Typed
            }
            Holding::Dynamic => Representation::Dynamic,
            Holding::Metadata => Representation::Metadata,
        };
        let suffix = key.holding.suffix();
        let gvr = &key.gvr;
        let mut name = if gvr.group.is_empty() {
            format!("{}/{}{suffix}", gvr.version, gvr.resource)
        } else {
            format!("{}/{}/{}{suffix}", gvr.group, gvr.version, gvr.resource)
        };
        // A second Rust type of a resource is a second informer: named after its type too, so
        // that names stay unique (they key `wait_for_cache_sync`'s answer).
        if state.informers.values().any(|e| e.name == name) {
            name = format!("{name} ({})", std::any::type_name::<K>());
        }
        state.informers.insert(
            key,
            Entry {
                name,
                resource: resource.clone(),
                representation,
                informer: Arc::new(informer.clone()),
                started: false,
                task: None,
            },
        );
        informer
    }

    fn find<K: Object>(&self, key: &InformerKey) -> Option<SharedIndexInformer<K>> {
        let state = self.state.lock();
        // The key names the object type (a TypeId, or Unstructured for dynamic informers, or
        // PartialObjectMetadata for metadata ones), so the downcast only recovers what the
        // key already says.
        state
            .informers
            .get(key)?
            .informer
            .as_any()
            .downcast_ref::<SharedIndexInformer<K>>()
            .cloned()
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
            if !entry.started {
                let run = entry.informer.run(self.cancel.child_token());
                entry.task = Some(tokio::spawn(run));
                entry.started = true;
            }
        }
    }

    /// Waits until every started informer has synced its cache, or the factory shuts down.
    /// Returns each started informer's name with whether it synced: `group/version/resource`
    /// for typed informers, followed by ` (dynamic)` or ` (metadata)` for the others, and by
    /// the Rust type's name in parentheses for a typed informer of a resource that already
    /// had one of another Rust type. After [`shutdown`](Self::shutdown) it still answers for
    /// every informer that was started, false for those that had not synced (client-go's
    /// `WaitForCacheSync` after `Shutdown`). An informer whose task panicked (in a transform
    /// or an index function) before it synced answers false at once: it never will.
    ///
    /// [`wait_for_cache_sync_all`](Self::wait_for_cache_sync_all) answers with one bool.
    pub async fn wait_for_cache_sync(&self) -> HashMap<String, bool> {
        let started: Vec<(String, Arc<dyn ErasedInformer>)> = {
            let state = self.state.lock();
            state
                .informers
                .values()
                .filter(|e| e.started)
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
                // Stopped unsynced (its task panicked in a transform or an index function):
                // it never will.
                if self.cancel.is_cancelled() || informer.is_stopped() {
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

    /// Waits like [`wait_for_cache_sync`](Self::wait_for_cache_sync) and returns whether
    /// every started informer synced: false if the factory shuts down (before or while it
    /// waits) with a started informer not synced, true when no informer was started (there
    /// was nothing to wait for).
    pub async fn wait_for_cache_sync_all(&self) -> bool {
        self.wait_for_cache_sync()
            .await
            .values()
            .all(|synced| *synced)
    }

    /// Stops every informer and waits until they have stopped, even when another call is
    /// already stopping them (client-go's `Shutdown`). Later calls to [`start`](Self::start)
    /// do nothing.
    pub async fn shutdown(&self) {
        let mut stopping = self.stopping.lock().await;
        {
            let mut state = self.state.lock();
            state.shut_down = true;
            stopping.extend(state.informers.values_mut().filter_map(|e| e.task.take()));
        }
        self.cancel.cancel();
        while let Some(task) = stopping.last_mut() {
            // A panicked informer task has stopped too; its panic was reported by tokio.
            let _ = task.await;
            stopping.pop();
        }
    }
}

/// Stops the informers (without waiting, which [`shutdown`](SharedInformerFactory::shutdown)
/// does): nothing could stop the tasks [`start`](SharedInformerFactory::start) spawned once
/// the factory is gone.
impl Drop for SharedInformerFactory {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

fn typed_key<K: Resource>() -> InformerKey {
    InformerKey {
        gvr: GroupVersionResource::of::<K>(),
        holding: Holding::Typed(TypeId::of::<K>()),
    }
}

#[cfg(test)]
mod tests {
    //! The factory's keying, without a server: informers are made but, except where a test
    //! starts them over an in-memory source, never run.

    use std::sync::Arc;

    use kclient_apimachinery::meta::v1::ObjectMeta;
    use kclient_apimachinery::{ListMeta, ObjectList};
    use kclient_cache::ListWatch;
    use kclient_rest::Config;
    use parking_lot::Mutex;

    use super::*;

    #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
    struct Widget {
        metadata: ObjectMeta,
    }
    kclient_apimachinery::impl_object!(Widget);
    impl Resource for Widget {
        const GROUP: &'static str = "example.com";
        const VERSION: &'static str = "v1";
        const API_VERSION: &'static str = "example.com/v1";
        const KIND: &'static str = "Widget";
        const PLURAL: &'static str = "widgets";
        type Scope = kclient_apimachinery::NamespaceResourceScope;
    }

    fn meta() -> ObjectMeta {
        ObjectMeta {
            name: Some("w".into()),
            namespace: Some("ns".into()),
            resource_version: Some("5".into()),
            ..ObjectMeta::default()
        }
    }

    /// A list of `item` at resourceVersion 5.
    fn list_of<K>(item: K) -> ObjectList<K> {
        ObjectList {
            metadata: ListMeta {
                resource_version: "5".into(),
                ..ListMeta::default()
            },
            items: vec![item],
        }
    }

    /// An in-memory source that lists `item` at resourceVersion 5 and then watches forever.
    fn listing<K: Clone + Send + Sync + 'static>(item: K) -> Arc<dyn ListerWatcher<K>> {
        let lw = ListWatch::new(
            move |_| {
                let item = item.clone();
                async move { Ok(list_of(item)) }
            },
            |_| async { Ok(futures_util::stream::pending()) },
        )
        .without_watch_list_semantics();
        Arc::new(lw)
    }

    /// An in-memory source whose list never answers: its informer never syncs.
    fn never_listing<K: Send + 'static>() -> Arc<dyn ListerWatcher<K>> {
        let lw = ListWatch::new(
            |_| futures_util::future::pending(),
            |_| async { Ok(futures_util::stream::pending()) },
        )
        .without_watch_list_semantics();
        Arc::new(lw)
    }

    /// Waits, bounded, until `done` holds.
    async fn eventually(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A second Rust type of the same resource as [`Widget`].
    #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
    struct OtherWidget {
        metadata: ObjectMeta,
    }
    kclient_apimachinery::impl_object!(OtherWidget);
    impl Resource for OtherWidget {
        const GROUP: &'static str = "example.com";
        const VERSION: &'static str = "v1";
        const API_VERSION: &'static str = "example.com/v1";
        const KIND: &'static str = "Widget";
        const PLURAL: &'static str = "widgets";
        type Scope = kclient_apimachinery::NamespaceResourceScope;
    }

    /// A factory whose client points where nothing listens.
    fn factory() -> SharedInformerFactory {
        let client = Client::new(Config::new("https://127.0.0.1:9")).expect("client");
        SharedInformerFactory::new(client, Duration::ZERO)
    }

    fn widgets() -> GroupVersionResource {
        GroupVersionResource::new("example.com", "v1", "widgets")
    }

    /// Whether two handles are one informer: an index added through one is seen by the other.
    fn same<K: Object>(a: &SharedIndexInformer<K>, b: &SharedIndexInformer<K>, tag: &str) -> bool {
        let mut index: Indexers<K> = Indexers::new();
        index.insert(tag.to_owned(), Arc::new(|_: &K| Vec::new()));
        a.add_indexers(index).expect("a new index name");
        b.get_indexer().get_indexers().contains_key(tag)
    }

    /// Each informer of one resource has a reflector of its own name (shown by the informer's
    /// `Debug`), which labels its logs and metrics: a typed informer's is the resource, the
    /// others' say what they hold.
    #[test]
    fn each_informer_of_one_resource_names_its_reflector_apart() {
        let f = factory();
        let widgets = ApiResource::of::<Widget>();
        let shown = [
            format!("{:?}", f.informer::<Widget>()),
            format!("{:?}", f.informer::<OtherWidget>()),
            format!("{:?}", f.dynamic_informer(&widgets)),
            format!("{:?}", f.metadata_informer(&widgets)),
        ];
        let names = [
            "widgets.example.com".to_owned(),
            format!(
                "widgets.example.com ({})",
                std::any::type_name::<OtherWidget>()
            ),
            "widgets.example.com (dynamic)".to_owned(),
            "widgets.example.com (metadata)".to_owned(),
        ];
        for (shown, name) in shown.iter().zip(names) {
            assert!(shown.contains(&format!("name: {name:?}")), "{shown}");
        }
    }

    #[test]
    fn type_and_resource_share_one_informer_once_the_type_is_known() {
        let f = factory();
        // Unknown type: the bare GVR gets the dynamic informer.
        let dynamic = f
            .for_resource(&widgets())
            .expect("no namespace, no scope needed");
        assert_eq!(dynamic.representation(), Representation::Dynamic);
        assert!(dynamic.resource().kind.is_empty());
        // Registered: by GVR and by type is one typed informer, in either order.
        f.register::<Widget>();
        let generic = f.for_resource(&widgets()).expect("known");
        assert_eq!(generic.representation(), Representation::Typed);
        let typed = f.informer::<Widget>();
        assert!(same(&typed, &generic.informer::<Widget>().unwrap(), "t1"));
        assert!(same(&f.informer::<Widget>(), &typed, "t2"));
        assert!(generic.informer::<Unstructured>().is_none());
        // The explicit dynamic informer stays its own, shared with the first for_resource.
        let explicit = f.dynamic_informer(&ApiResource::of::<Widget>());
        assert!(same(
            &explicit,
            &dynamic.informer::<Unstructured>().unwrap(),
            "d1"
        ));
        assert!(!typed.get_indexer().get_indexers().contains_key("d1"));
        let debug = format!("{f:?}");
        assert!(
            debug.contains(r#"["example.com/v1/widgets", "example.com/v1/widgets (dynamic)"]"#),
            "{debug}"
        );
    }

    #[test]
    fn the_first_request_decides_how_an_informer_is_made() {
        let f = factory();
        let first = f.informer_with::<Widget>(InformerOptions::new().indexer("a", |_| Vec::new()));
        let later = f.informer_with::<Widget>(InformerOptions::new().indexer("b", |_| Vec::new()));
        let indexers = later.get_indexer().get_indexers();
        assert!(
            indexers.contains_key("a") && indexers.contains_key(kclient_cache::NAMESPACE_INDEX)
        );
        assert!(!indexers.contains_key("b"));
        assert!(same(&first, &later, "x"));
        // informer_for after informer_with: the existing informer, the constructor unused.
        let called = Arc::new(Mutex::new(false));
        let flag = Arc::clone(&called);
        let again = f.informer_for::<Widget>(move |_, _| {
            *flag.lock() = true;
            unreachable_informer()
        });
        assert!(!*called.lock());
        assert!(same(&first, &again, "y"));
    }

    #[test]
    fn a_constructor_runs_once_when_two_threads_ask_at_once() {
        let f = Arc::new(factory());
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let askers: Vec<_> = (0..2)
            .map(|_| {
                let (f, calls, barrier) =
                    (Arc::clone(&f), Arc::clone(&calls), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    f.informer_for::<Widget>(move |_, _| {
                        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(200));
                        unreachable_informer()
                    })
                })
            })
            .collect();
        let got: Vec<_> = askers.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(same(&got[0], &got[1], "x"));
    }

    #[test]
    fn a_constructor_may_ask_its_factory_for_another_informer() {
        let f = Arc::new(factory());
        let (done_tx, done) = std::sync::mpsc::channel();
        let inner = Arc::clone(&f);
        std::thread::spawn(move || {
            let _ = f.informer_for::<Widget>(move |_, _| {
                let dynamic = inner.for_resource(&widgets());
                let _ = done_tx.send(dynamic.is_ok());
                unreachable_informer()
            });
        });
        let made = done
            .recv_timeout(Duration::from_secs(10))
            .expect("the constructor's own request finished (no deadlock)");
        assert!(made, "the dynamic informer was made");
    }

    fn unreachable_informer() -> SharedIndexInformer<Widget> {
        let lw = ListWatch::new(
            |_| async { Ok(ObjectList::<Widget>::default()) },
            |_| async { Ok(futures_util::stream::pending()) },
        );
        SharedIndexInformer::new(Arc::new(lw), Duration::ZERO, Indexers::new())
    }

    #[test]
    fn an_unknown_resource_in_a_namespaced_factory_needs_its_api_resource() {
        let f = factory().with_namespace("team-a");
        let err = f.for_resource(&widgets()).unwrap_err();
        assert_eq!(err.resource, widgets());
        assert!(err.to_string().contains("namespace \"team-a\""), "{err}");
        let dynamic = f.for_api_resource(&ApiResource::of::<Widget>());
        assert_eq!(dynamic.representation(), Representation::Dynamic);
        // Now known as a dynamic informer: the bare GVR finds it.
        assert!(f.for_resource(&widgets()).is_ok());
    }

    #[tokio::test]
    async fn a_custom_source_gets_the_informer_tweak_and_the_factory_runs_it() {
        let f = factory().with_tweak_list_options(|o| o.field_selector = Some("factory".into()));
        type Selectors = (Option<String>, Option<String>);
        let seen: Arc<Mutex<Vec<Selectors>>> = Arc::default();
        let record = Arc::clone(&seen);
        let lw = ListWatch::new(
            move |opts: ListOptions| {
                record
                    .lock()
                    .push((opts.label_selector.clone(), opts.field_selector.clone()));
                async { Ok(list_of(Widget { metadata: meta() })) }
            },
            |_| async { Ok(futures_util::stream::pending()) },
        )
        .without_watch_list_semantics();
        let informer = f.informer_with::<Widget>(
            InformerOptions::new()
                .lister_watcher(Arc::new(lw))
                .tweak_list_options(|o| o.label_selector = Some("app=web".into())),
        );
        f.start();
        assert!(f.wait_for_cache_sync_all().await);
        assert_eq!(informer.get_store().list_keys(), ["ns/w"]);
        let generic = f.for_resource(&widgets()).expect("known type");
        let lister = generic.lister();
        assert_eq!(
            lister.by_namespace("ns").get("w").expect("cached").name(),
            "w"
        );
        assert!(lister.get_by_key("ns/w").is_some());
        f.shutdown().await;
        // The informer's tweak, not the factory's (which is for the sources it makes).
        assert_eq!(seen.lock()[0], (Some("app=web".into()), None));
    }

    /// client-go's `WithNamespace(metav1.NamespaceAll)`: the empty namespace is every
    /// namespace, not a restriction that makes `for_resource` of an unknown resource fail.
    #[test]
    fn the_empty_namespace_is_every_namespace() {
        let f = factory().with_namespace("");
        let dynamic = f
            .for_resource(&widgets())
            .expect("every namespace: no scope needed");
        assert_eq!(dynamic.representation(), Representation::Dynamic);
        assert!(format!("{f:?}").contains("namespace: None"), "{f:?}");
    }

    /// As client-go's `WaitForCacheSync` after `Shutdown`: every started informer is reported,
    /// with false for one that never synced, so a caller never takes "nothing to wait for"
    /// for "synced".
    #[tokio::test]
    async fn wait_for_cache_sync_after_shutdown_reports_what_never_synced() {
        let f = factory();
        f.informer_with::<Widget>(InformerOptions::new().lister_watcher(never_listing()));
        let synced = f.dynamic_informer_with(
            &ApiResource::of::<Widget>(),
            InformerOptions::new().lister_watcher(listing(
                Unstructured::from_typed(&Widget { metadata: meta() }).expect("JSON"),
            )),
        );
        f.start();
        eventually("the dynamic informer syncs", || synced.has_synced()).await;
        f.shutdown().await;
        let result = f.wait_for_cache_sync().await;
        assert_eq!(
            result,
            HashMap::from([
                ("example.com/v1/widgets".to_owned(), false),
                ("example.com/v1/widgets (dynamic)".to_owned(), true),
            ])
        );
        assert!(!f.wait_for_cache_sync_all().await);
    }

    /// An informer whose task panicked (here in an index function) before its cache synced
    /// answers false at once instead of keeping `wait_for_cache_sync` waiting until shutdown.
    #[tokio::test]
    async fn an_informer_whose_task_panicked_never_synced() {
        let f = factory();
        let informer = f.informer_with::<Widget>(
            InformerOptions::new().lister_watcher(listing(Widget { metadata: meta() })),
        );
        let mut explodes: Indexers<Widget> = Indexers::new();
        explodes.add("explodes", |_: &Widget| panic!("index function panics"));
        informer.add_indexers(explodes).expect("not started");
        f.start();
        let result = tokio::time::timeout(Duration::from_secs(10), f.wait_for_cache_sync())
            .await
            .expect("still waiting for an informer whose task died");
        assert_eq!(
            result,
            HashMap::from([("example.com/v1/widgets".to_owned(), false)])
        );
        assert!(!f.cancel.is_cancelled(), "not shut down");
        f.shutdown().await;
    }

    /// Two Rust types of one resource are two informers: each has its own entry in
    /// `wait_for_cache_sync`'s answer (and in the Debug output), so one's result never hides
    /// the other's.
    #[tokio::test]
    async fn each_rust_type_of_a_resource_has_its_own_sync_result() {
        let f = factory();
        f.informer_with::<Widget>(
            InformerOptions::new().lister_watcher(listing(Widget { metadata: meta() })),
        );
        f.informer_with::<OtherWidget>(
            InformerOptions::new().lister_watcher(listing(OtherWidget { metadata: meta() })),
        );
        f.start();
        let result = f.wait_for_cache_sync().await;
        f.shutdown().await;
        assert_eq!(result.len(), 2, "{result:?}");
        assert_eq!(
            result.get("example.com/v1/widgets"),
            Some(&true),
            "{result:?}"
        );
        assert!(
            result
                .iter()
                .any(|(name, synced)| name.contains("OtherWidget") && *synced),
            "{result:?}"
        );
    }

    /// Like client-go's `Shutdown`, every call waits until the informers have stopped, even
    /// while another call is already stopping them: when the second returns, no handler call
    /// is under way.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_shutdown_waits_like_the_first() {
        let f = Arc::new(factory());
        let informer = f.informer_with::<Widget>(
            InformerOptions::new().lister_watcher(listing(Widget { metadata: meta() })),
        );
        let in_handler = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let inside = Arc::clone(&in_handler);
        informer
            .add_event_handler(kclient_cache::ResourceEventHandlerFuncs::new().add_func(
                move |_: &Arc<Widget>, _| {
                    inside.store(true, std::sync::atomic::Ordering::SeqCst);
                    let _ = released.recv();
                    inside.store(false, std::sync::atomic::Ordering::SeqCst);
                },
            ))
            .expect("a handler before start");
        f.start();
        eventually("the handler is called", || {
            in_handler.load(std::sync::atomic::Ordering::SeqCst)
        })
        .await;
        let first = tokio::spawn({
            let f = Arc::clone(&f);
            async move { f.shutdown().await }
        });
        eventually("the first shutdown begins", || f.state.lock().shut_down).await;
        // The handler returns a little later; the second shutdown must wait for it.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let _ = release.send(());
        });
        f.shutdown().await;
        assert!(
            !in_handler.load(std::sync::atomic::Ordering::SeqCst),
            "the second shutdown returned while a handler call was under way"
        );
        releaser.join().expect("the releasing thread");
        first.await.expect("the first shutdown");
    }

    /// Dropping the factory stops its informers: nothing else could stop the tasks it
    /// spawned, which would otherwise watch the server for the rest of the process.
    #[tokio::test]
    async fn dropping_the_factory_stops_its_informers() {
        let f = factory();
        let informer = f.informer_with::<Widget>(
            InformerOptions::new().lister_watcher(listing(Widget { metadata: meta() })),
        );
        f.start();
        assert!(f.wait_for_cache_sync_all().await);
        drop(f);
        eventually("the informer stops once its factory is dropped", || {
            informer.is_stopped()
        })
        .await;
    }
}
