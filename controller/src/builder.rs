//! [`ControllerBuilder`]: what a controller watches and how it runs, from a
//! [`SharedInformerFactory`] whose informers it shares.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt as _};
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{ApiResource, Object, Resource, Unstructured, get_controller_of};
use kclient_cache::{ResourceEventHandlerRegistration, SharedIndexInformer};
use kclient_informers::SharedInformerFactory;
use kclient_tools::LeaderElectionConfig;
use kclient_workqueue::{DEFAULT_MERGE_WINDOW, MetricsProvider, RateLimiter};

use crate::action::Action;
use crate::controller::{Controller, ReconcileFn};
use crate::error::Error;
use crate::object_ref::ObjectRef;
use crate::owner_track::register_uncached;
use crate::predicate::{EventFilter, Predicate};
use crate::queue::{LOW_PRIORITY, WorkQueue};
use crate::source::{Intake, Mapper, SourceHandler, group_of};
use crate::trigger::{Trigger, Wake};

/// The default number of concurrent reconciles (controller-runtime's `MaxConcurrentReconciles`
/// default).
pub const DEFAULT_WORKERS: usize = 1;

/// The default time a stopping controller waits for reconciles in progress (controller-runtime's
/// `GracefulShutdownTimeout` default).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// The default time a controller waits for its informer caches to sync before it fails
/// (controller-runtime's `CacheSyncTimeout` default).
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// A primary informer, with the namespace its factory watches (`None`: every namespace).
pub(crate) type PrimaryInformer<K> = (Option<String>, SharedIndexInformer<K>);

/// Adds one source's handler to its informer; returns what the controller keeps of it.
pub(crate) type Register = Box<dyn FnOnce(&Arc<Intake>) -> Result<Registered, Error> + Send>;
/// Removes a source's handler (or stops its reflector).
pub(crate) type Remover = Box<dyn FnOnce() + Send>;
/// Enqueues, on the queue as a term starts, the keys that the source's objects already known would
/// have enqueued as adds (with the source's predicates), at [`LOW_PRIORITY`]:
/// controller-runtime starts each source with its initial list as Create events, which go in
/// at its low priority.
pub(crate) type Replay = Arc<dyn Fn(&WorkQueue) + Send + Sync>;

/// Runs `replay` into `queue`. A replay runs the program's mappers, predicates and event
/// filters: a panic there skips the rest of this replay (as a live event's panic skips that
/// event), logged with `what` was replayed, and the controller goes on.
pub(crate) fn replay_catching(replay: &Replay, queue: &WorkQueue, controller: &str, what: &str) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| replay(queue))) {
        tracing::error!(
            %controller,
            panic = %kclient_flowcontrol::panic_message(&*panic),
            "enqueueing {what} panicked (in a mapper, predicate or event filter); the rest is \
             skipped"
        );
    }
}

/// A source added to its informer.
pub(crate) struct Registered {
    /// The handler's registration, to wait for its sync (none for a source without a cache).
    pub(crate) registration: Option<ResourceEventHandlerRegistration>,
    pub(crate) remover: Remover,
    pub(crate) replay: Replay,
}

/// The primary type of a [`ControllerBuilder`] before [`for_`](ControllerBuilder::for_) names
/// it.
#[derive(Debug)]
pub enum NoPrimary {}

/// Builds a [`Controller`]: the primary resource ([`for_`](Self::for_),
/// [`for_dynamic`](Self::for_dynamic) or [`for_metadata`](Self::for_metadata)), the resources
/// that wake it ([`owns`](Self::owns), [`watches`](Self::watches)), predicates and run
/// options, then the reconcile function ([`reconcile`](Self::reconcile)).
///
/// Informers come from the factory given to [`new`](Self::new) (and those given to
/// [`with_factory`](Self::with_factory)), so a controller shares them with everything else
/// made from that factory. Start the factory (`factory.start()`) after
/// building the controllers: an informer made by the builder is started only by a later
/// `start`.
pub struct ControllerBuilder<'f, K = NoPrimary> {
    name: String,
    /// The factories the sources' informers come from: the one given to `new`, then those of
    /// `with_factory`.
    factories: Vec<&'f SharedInformerFactory>,
    pub(crate) options: Options<K>,
    _primary: PhantomData<fn() -> K>,
}

/// Everything a builder collects besides the reconcile function.
pub(crate) struct Options<K> {
    /// The primary resource's informer and descriptor: set by `for_` (or `for_dynamic`,
    /// `for_metadata`), so present in every builder with a primary type.
    pub(crate) primary: Option<(Vec<PrimaryInformer<K>>, Arc<ApiResource>)>,
    pub(crate) predicates: Vec<Predicate<K>>,
    pub(crate) event_filters: Vec<EventFilter>,
    pub(crate) sources: Vec<Register>,
    pub(crate) triggers: Vec<Trigger>,
    pub(crate) described: Vec<String>,
    pub(crate) workers: usize,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter<ObjectRef>>>,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) cache_sync_timeout: Duration,
    pub(crate) reconcile_timeout: Option<Duration>,
    pub(crate) merge_window: Duration,
    pub(crate) priority_queue: bool,
    pub(crate) metrics_provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) leader_election: Option<LeaderElectionConfig>,
    pub(crate) drain: bool,
    /// Why the configuration cannot run (overlapping factories), returned by `run`.
    pub(crate) invalid: Option<Error>,
}

impl<K> fmt::Debug for ControllerBuilder<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerBuilder")
            .field("name", &self.name)
            .field("sources", &self.options.described)
            .field("workers", &self.options.workers)
            .field("shutdown_timeout", &self.options.shutdown_timeout)
            .field("merge_window", &self.options.merge_window)
            .field("priority_queue", &self.options.priority_queue)
            .finish_non_exhaustive()
    }
}

impl<'f> ControllerBuilder<'f, NoPrimary> {
    /// A controller named `name` (the name of its queue, metrics, logs and spans) whose
    /// informers come from `factory`.
    pub fn new(name: impl Into<String>, factory: &'f SharedInformerFactory) -> Self {
        ControllerBuilder {
            name: name.into(),
            factories: vec![factory],
            options: Options {
                primary: None,
                predicates: Vec::new(),
                event_filters: Vec::new(),
                sources: Vec::new(),
                triggers: Vec::new(),
                described: Vec::new(),
                workers: DEFAULT_WORKERS,
                rate_limiter: None,
                shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
                cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
                reconcile_timeout: None,
                merge_window: DEFAULT_MERGE_WINDOW,
                priority_queue: false,
                metrics_provider: None,
                leader_election: None,
                drain: false,
                invalid: None,
            },
            _primary: PhantomData,
        }
    }

    /// Also takes informers from `factory` (call it before [`for_`](Self::for_)), to reconcile
    /// the objects of its namespace too: a
    /// controller over a set of namespaces, each watched by a factory
    /// ([`SharedInformerFactory::with_namespace`]) of its own (controller-runtime's
    /// `cache.Options.DefaultNamespaces`, for a program whose roles grant only those
    /// namespaces). Every namespaced source then watches through every factory, each event
    /// going to the one queue and its workers; a cluster-scoped source watches through the
    /// first factory only, since each would watch it whole. A reconcile reads the primary
    /// object from the cache of its namespace's factory. Start every factory
    /// (`factory.start()`), or give the others to the
    /// [`Manager`](crate::manager::Manager) with
    /// [`ManagerBuilder::with_factory`](crate::manager::ManagerBuilder::with_factory), which
    /// then starts, waits for and shuts them down with its own.
    ///
    /// The factories must not overlap: each restricted to a namespace of its own. Otherwise
    /// [`Controller::run`] fails with [`Error::is_overlapping_factories`](crate::Error::is_overlapping_factories)
    /// (the same factory given twice is taken once). A cluster-scoped source takes the first
    /// factory's list options ([`SharedInformerFactory::with_tweak_list_options`]) and needs
    /// the right to list that resource across the cluster.
    pub fn with_factory(mut self, factory: &'f SharedInformerFactory) -> Self {
        if self.factories.iter().any(|f| std::ptr::eq(*f, factory)) {
            return self;
        }
        self.factories.push(factory);
        if self.options.invalid.is_none() {
            let namespaces: Vec<Option<&str>> =
                self.factories.iter().map(|f| f.namespace()).collect();
            let problem = if namespaces.iter().any(Option::is_none) {
                Some("one of its factories watches every namespace".to_owned())
            } else {
                namespaces
                    .iter()
                    .enumerate()
                    .find(|(i, ns)| namespaces[..*i].contains(ns))
                    .map(|(_, ns)| {
                        format!(
                            "two of its factories watch namespace {}",
                            ns.unwrap_or_default()
                        )
                    })
            };
            self.options.invalid = problem.map(|p| Error::overlapping_factories(&self.name, &p));
        }
        self
    }

    /// Names the primary resource `K`, the one reconciled: each of its events enqueues its
    /// own key (controller-runtime's `For`).
    pub fn for_<K: Resource>(self) -> ControllerBuilder<'f, K> {
        self.with_primary(ApiResource::of::<K>(), |f, _| f.informer::<K>())
    }

    /// Names a primary resource known only at run time, such as a custom resource found
    /// through discovery, whose objects the reconcile gets as [`Unstructured`] from the
    /// factory's dynamic informer ([`SharedInformerFactory::dynamic_informer`];
    /// controller-runtime's `For` with an `unstructured.Unstructured`, kube-runtime's
    /// `Controller::new_with` over `DynamicObject`). [`owns`](ControllerBuilder::owns) then
    /// follows controller references to `resource`'s kind and group (of any version), and
    /// takes the owner's key from the child's namespace when `resource.namespaced`, else
    /// from no namespace: a wrong `namespaced` finds no owner. Point children at their owner
    /// with [`owner_reference_for`](crate::owner_reference_for)
    /// ([`set_controller_reference`](crate::set_controller_reference) needs a typed owner).
    /// Wrap the reconcile in [`finalizer_dynamic`](crate::finalizer_dynamic), given the same
    /// `resource`; [`add_finalizer`](crate::add_finalizer) and
    /// [`remove_finalizer`](crate::remove_finalizer) edit an `Unstructured` as they edit a typed
    /// object.
    pub fn for_dynamic(self, resource: &ApiResource) -> ControllerBuilder<'f, Unstructured> {
        self.with_primary(resource.clone(), |f, resource| f.dynamic_informer(resource))
    }

    /// Names the primary resource `K`, cached and reconciled as its metadata only
    /// ([`PartialObjectMetadata`], from the factory's
    /// [`metadata_informer`](SharedInformerFactory::metadata_informer); controller-runtime's
    /// `For(&K{}, builder.OnlyMetadata)`): for a controller that acts on names, labels,
    /// annotations, owners or finalizers and never reads the spec, at a fraction of the memory.
    /// Point children at the owner with
    /// [`owner_reference_for`](crate::owner_reference_for)`(&ApiResource::of::<K>(), &obj)`.
    pub fn for_metadata<K: Resource>(self) -> ControllerBuilder<'f, PartialObjectMetadata> {
        self.with_primary(ApiResource::of::<K>(), |f, resource| {
            f.metadata_informer(resource)
        })
    }

    /// The builder of `resource`, whose informers `informer` makes, one per factory it
    /// watches through.
    fn with_primary<K: Object>(
        self,
        resource: ApiResource,
        informer: impl Fn(&SharedInformerFactory, &ApiResource) -> SharedIndexInformer<K>,
    ) -> ControllerBuilder<'f, K> {
        let informers = factories_for(&self.factories, resource.namespaced)
            .map(|f| (f.namespace().map(str::to_owned), informer(f, &resource)))
            .collect();
        let options = Options {
            described: vec![format!("for {}", resource.kind)],
            primary: Some((informers, Arc::new(resource))),
            predicates: Vec::new(),
            event_filters: Vec::new(),
            sources: Vec::new(),
            triggers: Vec::new(),
            workers: self.options.workers,
            rate_limiter: self.options.rate_limiter,
            shutdown_timeout: self.options.shutdown_timeout,
            cache_sync_timeout: self.options.cache_sync_timeout,
            reconcile_timeout: self.options.reconcile_timeout,
            merge_window: self.options.merge_window,
            priority_queue: self.options.priority_queue,
            metrics_provider: self.options.metrics_provider,
            leader_election: self.options.leader_election,
            drain: self.options.drain,
            invalid: self.options.invalid,
        };
        ControllerBuilder {
            name: self.name,
            factories: self.factories,
            options,
            _primary: PhantomData,
        }
    }
}

impl<'f, K: Object> ControllerBuilder<'f, K> {
    /// The primary resource's descriptor (`for_` set it).
    fn primary(&self) -> Option<Arc<ApiResource>> {
        self.options
            .primary
            .as_ref()
            .map(|(_, resource)| Arc::clone(resource))
    }

    /// Filters the primary resource's events: an event enqueues its key only when every
    /// predicate passes it. The objects already cached when reconciling starts (or a
    /// leadership term begins) are enqueued only if they pass every predicate's add test, as
    /// the initial list's Create events are in controller-runtime (an object filtered out is
    /// still reconciled when another source, such as an owned child, names it).
    pub fn with_predicate(mut self, predicate: Predicate<K>) -> Self {
        self.options.predicates.push(predicate);
        self
    }

    /// Filters the events of the controller's sources, the primary resource, owned children
    /// and watched resources alike, besides each source's own predicates (controller-runtime's
    /// `WithEventFilter`, which applies to `For`, `Owns` and `Watches` too): an
    /// [`EventFilter`] is a `Predicate<dyn Object>`, built with the same constructors, so that
    /// one filter tests objects of every type (and cannot tell them apart: it sees only what
    /// [`Object`] shows). The objects replayed when reconciling starts pass through it as adds,
    /// and [`reconcile_all_on`](Self::reconcile_all_on) enqueues the primary objects that pass
    /// it. [`owns_uncached`](Self::owns_uncached) tests its children's adds and deletes with
    /// it; their updates and relists pass untested, since it keeps no former state. The keys
    /// of [`reconcile_on`](Self::reconcile_on) pass untested (controller-runtime's raw
    /// sources ignore it too), and so does a delete whose final state is unknown, as with
    /// every predicate. Mind what a filter means for each type: `EventFilter::generation_changed()`
    /// leaves out the status-only updates of kinds with a generation, but *every* update of a
    /// kind without one (ConfigMaps, Secrets), whose generation stays 0.
    ///
    /// ```
    /// use kclient_api::core::v1::ConfigMap;
    /// use kclient_apimachinery::Object;
    /// use kclient_controller::{EventFilter, Predicate};
    ///
    /// // Anything not marked paused, whatever its type.
    /// let unpaused = !EventFilter::new(|obj: &dyn Object| {
    ///     obj.annotations().contains_key("example.com/paused")
    /// });
    /// let cm: ConfigMap = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "a", "annotations": {"example.com/paused": "true"}}
    /// })).unwrap();
    /// assert!(!unpaused.add(&cm as &dyn Object));
    /// # let _: Predicate<dyn Object> = unpaused;
    /// ```
    pub fn with_event_filter(mut self, filter: EventFilter) -> Self {
        self.options.event_filters.push(filter);
        self
    }

    /// Watches `C`, the children `K` controls: an event of a `C` whose controller owner
    /// reference (`controller: true`) names a `K` enqueues that `K` (controller-runtime's
    /// `Owns`). Set such references with [`owner_reference`](crate::owner_reference).
    pub fn owns<C: Resource>(self) -> Self {
        self.owns_with::<C>(Vec::new())
    }

    /// [`owns`](Self::owns) with predicates on `C`'s events.
    pub fn owns_with<C: Resource>(self, predicates: Vec<Predicate<C>>) -> Self {
        let informers = self.informers(ApiResource::of::<C>().namespaced, |f| f.informer::<C>());
        let owners = owner_mapper::<C>(self.primary());
        self.add_source(
            format!("owns {}", C::KIND),
            C::PLURAL,
            informers,
            owners,
            predicates,
            false,
        )
    }

    /// [`owns`](Self::owns) through the factory's *metadata* informer of `C`
    /// ([`SharedInformerFactory::metadata_informer`]): the server sends only the children's
    /// metadata and the cache keeps only that, all an owner lookup needs
    /// (controller-runtime's `Owns(&C{}, builder.OnlyMetadata)`). For a controller that does
    /// not read its children's spec or data from the cache: it holds much less memory and
    /// lists faster. Its cache is the factory's `metadata_informer` of `C`, not
    /// `informer::<C>()`, so a reconcile that reads full children from `informer::<C>()`
    /// should use [`owns`](Self::owns) instead (two caches of `C` would cost more).
    pub fn owns_metadata<C: Resource>(self) -> Self {
        self.owns_metadata_with::<C>(Vec::new())
    }

    /// [`owns_metadata`](Self::owns_metadata) with predicates on the children's metadata.
    pub fn owns_metadata_with<C: Resource>(
        self,
        predicates: Vec<Predicate<PartialObjectMetadata>>,
    ) -> Self {
        let resource = ApiResource::of::<C>();
        let informers = self.informers(resource.namespaced, |f| f.metadata_informer(&resource));
        let owners = owner_mapper::<PartialObjectMetadata>(self.primary());
        self.add_source(
            format!("owns {} (metadata)", C::KIND),
            C::PLURAL,
            informers,
            owners,
            predicates,
            false,
        )
    }

    /// [`owns`](Self::owns) for children of a resource known only at run time, cached as
    /// [`Unstructured`] in the factory's dynamic informer of `resource`
    /// ([`SharedInformerFactory::dynamic_informer`]; controller-runtime's `Owns` with an
    /// `unstructured.Unstructured`).
    pub fn owns_dynamic(self, resource: &ApiResource) -> Self {
        self.owns_dynamic_with(resource, Vec::new())
    }

    /// [`owns_dynamic`](Self::owns_dynamic) with predicates on the children's events.
    pub fn owns_dynamic_with(
        self,
        resource: &ApiResource,
        predicates: Vec<Predicate<Unstructured>>,
    ) -> Self {
        let informers = self.informers(resource.namespaced, |f| f.dynamic_informer(resource));
        let owners = owner_mapper::<Unstructured>(self.primary());
        self.add_source(
            format!("owns {} (dynamic)", resource.kind),
            resource.plural.clone(),
            informers,
            owners,
            predicates,
            false,
        )
    }

    /// [`owns`](Self::owns) without a cache of the children (kube-runtime's `owns`): a
    /// reflector of its own watches `C`'s metadata, wakes the controller owner of each child
    /// that changes, and keeps only the owner's key of each owned child (so that a child
    /// deleted while the watch was down still wakes its owner at the next list). For a
    /// controller whose reconcile reads its children from the API server, not from a cache: it
    /// holds far less memory than [`owns_metadata`](Self::owns_metadata) and its reconciles
    /// start as soon as the primary cache has synced, without waiting for the children's list
    /// (their events then enqueue their owners again). Its watch starts once the controller's
    /// caches have synced: before that no queue runs to take the owners it would wake, and its
    /// list would slow the lists the workers wait for. No predicates (there is no former state
    /// to compare with) and no resync.
    pub fn owns_uncached<C: Resource>(mut self) -> Self {
        let resource = ApiResource::of::<C>();
        let owners = owner_mapper::<PartialObjectMetadata>(self.primary());
        let several = self.factories.len() > 1 && resource.namespaced;
        for factory in factories_for(&self.factories, resource.namespaced) {
            let lister_watcher = factory.metadata_lister_watcher(&resource);
            // Named as the factory names its reflectors (`configmaps`, `deployments.apps`),
            // plus whose owners it tracks (and where, with several factories): the name its
            // logs and metrics carry.
            let place = match factory.namespace() {
                Some(namespace) if several => format!(" in {namespace}"),
                _ => String::new(),
            };
            let name = format!(
                "{}{place} (owners for {})",
                resource.gvr().group_resource(),
                self.name
            );
            self.options
                .sources
                .push(register_uncached(name, lister_watcher, Arc::clone(&owners)));
        }
        self.options
            .described
            .push(format!("owns {} (uncached)", C::KIND));
        self
    }

    /// Watches `W`, mapping each of its events to the primary keys `mapper` returns (for an
    /// update, those of the old and the new object), for example a ConfigMap to the objects
    /// that reference it (controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`).
    pub fn watches<W: Resource>(
        self,
        mapper: impl Fn(&W) -> Vec<ObjectRef> + Send + Sync + 'static,
    ) -> Self {
        self.watches_with(mapper, Vec::new())
    }

    /// [`watches`](Self::watches) with predicates on `W`'s events.
    pub fn watches_with<W: Resource>(
        self,
        mapper: impl Fn(&W) -> Vec<ObjectRef> + Send + Sync + 'static,
        predicates: Vec<Predicate<W>>,
    ) -> Self {
        let informers = self.informers(ApiResource::of::<W>().namespaced, |f| f.informer::<W>());
        self.add_source(
            format!("watches {}", W::KIND),
            W::PLURAL,
            informers,
            Arc::new(mapper),
            predicates,
            false,
        )
    }

    /// [`watches`](Self::watches) for a resource known only at run time, its objects cached
    /// as [`Unstructured`] in the factory's dynamic informer of `resource` and mapped to
    /// primary keys by `mapper`.
    pub fn watches_dynamic(
        self,
        resource: &ApiResource,
        mapper: impl Fn(&Unstructured) -> Vec<ObjectRef> + Send + Sync + 'static,
    ) -> Self {
        self.watches_dynamic_with(resource, mapper, Vec::new())
    }

    /// [`watches_dynamic`](Self::watches_dynamic) with predicates on the objects' events.
    pub fn watches_dynamic_with(
        self,
        resource: &ApiResource,
        mapper: impl Fn(&Unstructured) -> Vec<ObjectRef> + Send + Sync + 'static,
        predicates: Vec<Predicate<Unstructured>>,
    ) -> Self {
        let informers = self.informers(resource.namespaced, |f| f.dynamic_informer(resource));
        self.add_source(
            format!("watches {} (dynamic)", resource.kind),
            resource.plural.clone(),
            informers,
            Arc::new(mapper),
            predicates,
            false,
        )
    }

    /// [`watches`](Self::watches) through the factory's *metadata* informer of `W`
    /// ([`SharedInformerFactory::metadata_informer`]): the server sends only the objects'
    /// metadata, the cache keeps only that, and `mapper` maps it to primary keys
    /// (controller-runtime's `WatchesMetadata`). For a mapping that needs no more than names,
    /// labels, annotations or owners: it holds much less memory than a cache of whole objects.
    /// As with [`owns_metadata`](Self::owns_metadata), a program that also reads whole `W`s
    /// from `informer::<W>()` should use [`watches`](Self::watches), sharing that one cache.
    pub fn watches_metadata<W: Resource>(
        self,
        mapper: impl Fn(&PartialObjectMetadata) -> Vec<ObjectRef> + Send + Sync + 'static,
    ) -> Self {
        self.watches_metadata_with::<W>(mapper, Vec::new())
    }

    /// [`watches_metadata`](Self::watches_metadata) with predicates on the metadata's events.
    pub fn watches_metadata_with<W: Resource>(
        self,
        mapper: impl Fn(&PartialObjectMetadata) -> Vec<ObjectRef> + Send + Sync + 'static,
        predicates: Vec<Predicate<PartialObjectMetadata>>,
    ) -> Self {
        let resource = ApiResource::of::<W>();
        let informers = self.informers(resource.namespaced, |f| f.metadata_informer(&resource));
        self.add_source(
            format!("watches {} (metadata)", W::KIND),
            W::PLURAL,
            informers,
            Arc::new(mapper),
            predicates,
            false,
        )
    }

    /// Reconciles the key of each item `trigger` yields: wakes the controller for changes its
    /// informers cannot see, such as those of an external system (kube-runtime's
    /// `reconcile_on`; controller-runtime's `WatchesRawSource` with a `source.Channel`). The
    /// keys go in at the normal priority and pass no predicate; a key whose object is not
    /// cached (including one in a namespace none of the controller's factories watches) goes
    /// to [`on_deleted`](Controller::on_deleted), or is dropped.
    ///
    /// The stream is polled only while the controller reconciles: from the caches' sync on,
    /// and with [`leader_election`](Self::leader_election) only while it leads. Before and
    /// between those times nothing reads it, so its items wait in it (a bounded channel makes
    /// its sender wait in turn) and none is lost. Under a [`Manager`](crate::manager::Manager)
    /// the controller runs once, while the manager leads; a lost lease stops the manager and
    /// drops the stream with the controller. At shutdown it stops being polled with the other
    /// sources, and what it still holds is dropped with it. A stream that ends, or panics,
    /// stops being polled; the controller goes on. Several triggers add up. Each item spends a
    /// unit of the task's cooperative budget, so a stream that is always ready does not hold
    /// its runtime thread.
    ///
    /// ```no_run
    /// # async fn run(factory: kclient_informers::SharedInformerFactory) -> Result<(), kclient_controller::Error> {
    /// use std::sync::Arc;
    ///
    /// use kclient_api::core::v1::ConfigMap;
    /// use kclient_cache::CancellationToken;
    /// use kclient_controller::{Action, ControllerBuilder, ObjectRef};
    ///
    /// // Whatever learns of external changes sends the key of the ConfigMap they concern.
    /// let (changed, mut changes) = tokio::sync::mpsc::channel::<ObjectRef>(64);
    /// let controller = ControllerBuilder::new("external-sync", &factory)
    ///     .for_::<ConfigMap>()
    ///     .reconcile_on(futures_util::stream::poll_fn(move |cx| changes.poll_recv(cx)))
    ///     .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async {
    ///         Ok::<_, kclient_apimachinery::Error>(Action::done())
    ///     });
    /// factory.start();
    /// tokio::spawn(async move {
    ///     let _ = changed.send(ObjectRef::new("default", "settings")).await;
    /// });
    /// controller.run(Arc::new(()), CancellationToken::new()).await
    /// # }
    /// ```
    pub fn reconcile_on(
        mut self,
        trigger: impl futures_util::Stream<Item = ObjectRef> + Send + 'static,
    ) -> Self {
        self.options
            .triggers
            .push(Trigger(trigger.map(Wake::Key).boxed()));
        self.options
            .described
            .push("reconcile_on a stream".to_owned());
        self
    }

    /// Reconciles every cached primary object that passes the primary predicates (and the
    /// [event filters](Self::with_event_filter)) each time `trigger` yields, for example on a timer or when a configuration file changes
    /// (kube-runtime's `reconcile_all_on`). The keys go in at [`LOW_PRIORITY`], as a resync's
    /// do, and a burst of items merges into the keys still queued. The stream is polled as
    /// [`reconcile_on`](Self::reconcile_on)'s is: only while the controller reconciles.
    ///
    /// ```no_run
    /// # async fn run(factory: kclient_informers::SharedInformerFactory) -> Result<(), kclient_controller::Error> {
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use kclient_api::core::v1::ConfigMap;
    /// use kclient_cache::CancellationToken;
    /// use kclient_controller::{Action, ControllerBuilder};
    ///
    /// // Every ConfigMap again every ten minutes.
    /// let mut every = tokio::time::interval(Duration::from_secs(600));
    /// let controller = ControllerBuilder::new("audit", &factory)
    ///     .for_::<ConfigMap>()
    ///     .reconcile_all_on(futures_util::stream::poll_fn(move |cx| {
    ///         every.poll_tick(cx).map(|_| Some(()))
    ///     }))
    ///     .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async {
    ///         Ok::<_, kclient_apimachinery::Error>(Action::done())
    ///     });
    /// factory.start();
    /// controller.run(Arc::new(()), CancellationToken::new()).await
    /// # }
    /// ```
    pub fn reconcile_all_on(
        mut self,
        trigger: impl futures_util::Stream<Item = ()> + Send + 'static,
    ) -> Self {
        self.options
            .triggers
            .push(Trigger(trigger.map(|()| Wake::All).boxed()));
        self.options
            .described
            .push("reconcile_all_on a stream".to_owned());
        self
    }

    /// The informers of a source, one from each factory it watches through.
    fn informers<T>(
        &self,
        namespaced: bool,
        informer: impl Fn(&SharedInformerFactory) -> SharedIndexInformer<T>,
    ) -> Vec<SharedIndexInformer<T>> {
        factories_for(&self.factories, namespaced)
            .map(informer)
            .collect()
    }

    fn add_source<T: Object>(
        mut self,
        description: String,
        plural: impl Into<String>,
        informers: Vec<SharedIndexInformer<T>>,
        map: Mapper<T>,
        predicates: Vec<Predicate<T>>,
        primary: bool,
    ) -> Self {
        let plural = plural.into();
        for informer in informers {
            self.options.sources.push(register(
                self.name.clone(),
                plural.clone(),
                informer,
                Arc::clone(&map),
                predicates.clone(),
                primary,
            ));
        }
        self.options.described.push(description);
        self
    }

    /// At most `workers` reconciles run at once (at least one; default 1). Never two of the
    /// same key: the queue does not hand out a key while it is being reconciled.
    pub fn workers(mut self, workers: usize) -> Self {
        self.options.workers = workers.max(1);
        self
    }

    /// The rate limiter of failed keys. The default is controller-runtime's: with the default
    /// queue, client-go's
    /// [`default_controller_rate_limiter`](kclient_workqueue::default_controller_rate_limiter)
    /// (per key 5 ms doubling to 1000 s, under an overall 10 per second, burst 100); with the
    /// [priority queue](Self::priority_queue), the per-key part alone
    /// ([`ItemExponentialFailureRateLimiter`](kclient_workqueue::ItemExponentialFailureRateLimiter),
    /// 5 ms doubling to 1000 s), so that after a failure of many keys each is retried on its
    /// own backoff rather than ten a second.
    pub fn rate_limiter(mut self, rate_limiter: impl RateLimiter<ObjectRef> + 'static) -> Self {
        self.options.rate_limiter = Some(Arc::new(rate_limiter));
        self
    }

    /// The merge window of the controller's queue (default
    /// [`DEFAULT_MERGE_WINDOW`], 500 us): once keys come back, a key queued waits this long
    /// before a worker takes it, so that the events for it in the meantime cause one reconcile,
    /// not several. `Duration::ZERO` hands each key to a free worker at once, as
    /// controller-runtime does. See [`QueueConfig::merge_window`](kclient_workqueue::QueueConfig::merge_window).
    /// The [priority queue](Self::priority_queue) has no merge window: with it, this is
    /// ignored.
    pub fn merge_window(mut self, window: Duration) -> Self {
        self.options.merge_window = window;
        self
    }

    /// Whether the controller's queue is controller-runtime's priority queue
    /// ([`PriorityQueue`](kclient_workqueue::PriorityQueue), its default since its
    /// `UsePriorityQueue`) instead of client-go's rate-limiting queue (default: false).
    ///
    /// With it, ready keys go out highest priority first, first come first served within a
    /// priority. The keys of objects most likely unchanged go in at
    /// [`LOW_PRIORITY`](crate::LOW_PRIORITY) (-100): those of each informer's initial list,
    /// of the cached objects replayed when reconciling starts (or a leadership term begins)
    /// and of updates whose resourceVersion did not change (resyncs), for every source
    /// (primary, owned, watched; for [`owns_uncached`](Self::owns_uncached), the owners of
    /// its first list). Every other event goes in at 0, so after a restart a real
    /// change is reconciled before the thousands of unchanged objects listed with it; a
    /// queued key whose object changes rises to 0. A reconcile's requeue goes in at the
    /// priority of its [`Action::with_priority`], else at the one its key was handed out with
    /// (an error's retry too). Name, rate limiter and metrics provider are the same; the
    /// metrics add the queue depth by priority where the provider has it.
    ///
    /// The trade-off: the priority queue has no [merge window](Self::merge_window). A key
    /// queued is handed to the next free worker at once, so a burst of changes to one object
    /// can cause a reconcile for its first change and another for the rest, where the default
    /// queue's window folds the burst into one. It also orders every ready key under one
    /// lock, where the default queue's FIFO is sharded for throughput: choose it when the
    /// backlog after a start or a resync delays real changes, not for raw key rate.
    pub fn priority_queue(mut self, enabled: bool) -> Self {
        self.options.priority_queue = enabled;
        self
    }

    /// How long a stopping controller waits for the reconciles in progress (default 30 s);
    /// those still running then are cancelled at their next `.await`.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.options.shutdown_timeout = timeout;
        self
    }

    /// How long the controller waits for its informer caches to sync before
    /// [`run`](Controller::run) fails with [`Error::is_cache_sync`] (default 2 minutes,
    /// controller-runtime's `CacheSyncTimeout`): a resource that is not served, or that the
    /// client may not list, would otherwise leave the controller waiting for ever while its
    /// informers retry. `Duration::MAX` waits for ever; zero is the default, as
    /// controller-runtime takes it. Only the sync of a controller's own run counts: under a
    /// [`Manager`](crate::manager::Manager) the caches have synced before it starts, within
    /// the manager's own timeout.
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.options.cache_sync_timeout = if timeout.is_zero() {
            DEFAULT_CACHE_SYNC_TIMEOUT
        } else {
            timeout
        };
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` (controller-runtime's
    /// `ReconciliationTimeout`; default: none): its future is dropped at its next `.await`,
    /// and the key counts as failed (and in the reconcile timeouts metric,
    /// controller-runtime's `reconcile_timeouts_total`) and is retried with the rate limiter's
    /// backoff, as after a panic (the error policy sees only the reconcile's own errors). Zero
    /// sets no timeout, as in controller-runtime.
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.options.reconcile_timeout = (!timeout.is_zero()).then_some(timeout);
        self
    }

    /// Whether a shutdown drains the queue: the keys queued when it begins are still
    /// reconciled, within the shutdown timeout. By default (false) only the reconciles in
    /// progress finish, as in controller-runtime, whose default queue hands out nothing once
    /// shut down, and in kube-runtime; the keys left are reconciled by the next leader or the
    /// next start, which lists every object again. Leadership lost never drains.
    pub fn drain_on_shutdown(mut self, drain: bool) -> Self {
        self.options.drain = drain;
        self
    }

    /// The metrics provider of the controller's queue and its reconcile metrics (default: the
    /// process-wide one of [`kclient_workqueue::set_metrics_provider`], if set).
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.options.metrics_provider = Some(provider);
        self
    }

    /// Reconciles only while this candidate holds the lease of `config`.
    ///
    /// The controller sets the config's callbacks (any set are replaced) and
    /// `release_on_cancel`. When it leads, it enqueues what each source's cached objects would as adds (the primary
    /// objects that pass its predicates, the owners of cached children, ...) and reconciles;
    /// when leadership is lost it stops taking keys and cancels the reconciles in progress at
    /// once (at their next `.await`: a successor may lead already), then competes again; the
    /// keys still pending then (queued, waiting for a delay or a retry, or whose reconcile was
    /// cancelled) are reconciled in its next term, even those whose object was deleted
    /// meanwhile (they reach [`on_deleted`](Controller::on_deleted)). At
    /// shutdown it stops reconciling
    /// *before* it releases the lease, so the next leader starts after the last reconcile of
    /// this one ended. The informers keep running throughout.
    ///
    /// For a liveness probe, put a [`HealthzAdaptor`](kclient_tools::HealthzAdaptor) in the
    /// config's `watch_dog` (client-go's `WatchDog`) and serve a clone of it: its check fails
    /// while the controller believes it leads but has not renewed the lease for the lease
    /// duration plus the tolerance (its renewals stuck, or its API server unreachable), and
    /// passes otherwise, before it runs and while it follows included.
    ///
    /// ```no_run
    /// # async fn run(factory: kclient_informers::SharedInformerFactory, client: kclient_rest::Client) -> Result<(), kclient_controller::Error> {
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use kclient_api::coordination::v1::Lease;
    /// use kclient_api::core::v1::ConfigMap;
    /// use kclient_cache::CancellationToken;
    /// use kclient_clientset::Api;
    /// use kclient_controller::{Action, ControllerBuilder};
    /// use kclient_tools::{HealthzAdaptor, LeaderCallbacks, LeaderElectionConfig, LeaseLock};
    ///
    /// let leases: Api<Lease> = Api::namespaced(client, "default");
    /// let healthz = HealthzAdaptor::new(Duration::from_secs(20));
    /// let config = LeaderElectionConfig::new(
    ///     LeaseLock::new(leases, "my-controller", std::env::var("POD_NAME").unwrap_or_default()),
    ///     LeaderCallbacks::new(), // the controller sets its own
    /// )
    /// .watch_dog(healthz.clone());
    /// let controller = ControllerBuilder::new("my-controller", &factory)
    ///     .for_::<ConfigMap>()
    ///     .leader_election(config)
    ///     .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async {
    ///         Ok::<_, kclient_apimachinery::Error>(Action::done())
    ///     });
    /// factory.start();
    /// // Serve `healthz` from /healthz: a 500 with the error when `check` fails.
    /// let liveness = move || healthz.check().map_err(|e| format!("{}: {e}", healthz.name()));
    /// # let _ = liveness;
    /// controller.run(Arc::new(()), CancellationToken::new()).await
    /// # }
    /// ```
    pub fn leader_election(mut self, config: LeaderElectionConfig) -> Self {
        self.options.leader_election = Some(config);
        self
    }

    /// The reconcile function, called with the primary object from the informer's cache and
    /// the context given to [`run`](Controller::run).
    ///
    /// Its result decides what happens to the key (see [`Action`]). A key whose object is not
    /// in the cache (deleted) goes to [`on_deleted`](Controller::on_deleted) instead, if set.
    pub fn reconcile<Ctx, E, F, Fut>(self, reconcile: F) -> Controller<K, Ctx, E>
    where
        Ctx: Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let reconcile: ReconcileFn<K, Ctx, E> =
            Arc::new(move |obj, ctx| reconcile(obj, ctx).boxed());
        let mut options = self.options;
        let Some((informers, resource)) = options.primary.take() else {
            // A builder with a primary type is made only by `with_primary`, which sets it.
            unreachable!("ControllerBuilder::for_ sets the primary informer")
        };
        let predicates = std::mem::take(&mut options.predicates);
        let own_key: Mapper<K> = Arc::new(|obj: &K| vec![ObjectRef::from_obj(obj)]);
        // The primary sources first, one per informer: the runtime's replays start with them.
        let primaries: Vec<Register> = informers
            .iter()
            .map(|(_, informer)| {
                register(
                    self.name.clone(),
                    resource.plural.clone(),
                    informer.clone(),
                    Arc::clone(&own_key),
                    predicates.clone(),
                    true,
                )
            })
            .collect();
        options.sources.splice(0..0, primaries);
        Controller::new(self.name, informers, options, reconcile)
    }
}

/// The factories a source of a resource watches through: every one for a namespaced resource
/// (each watches its namespace), the first for a cluster-scoped one, which each would watch
/// whole.
fn factories_for<'a, 'f>(
    factories: &'a [&'f SharedInformerFactory],
    namespaced: bool,
) -> impl Iterator<Item = &'f SharedInformerFactory> + 'a {
    let take = if namespaced { factories.len() } else { 1 };
    factories.iter().copied().take(take)
}

/// The registration of one source, run when the controller starts.
fn register<T: Object>(
    controller: String,
    plural: String,
    informer: SharedIndexInformer<T>,
    map: Mapper<T>,
    predicates: Vec<Predicate<T>>,
    primary: bool,
) -> Register {
    Box::new(move |intake: &Arc<Intake>| {
        // The cache's objects as adds, through the same predicates and mapping. The indexer,
        // not the informer: the informer holds the handler, which holds the intake.
        let indexer = informer.get_indexer();
        let (replay_map, replay_predicates) = (Arc::clone(&map), predicates.clone());
        let filters = Arc::clone(intake);
        let replay: Replay = Arc::new(move |queue| {
            for obj in indexer.list() {
                if filters.filters_add(&*obj) && replay_predicates.iter().all(|p| p.add(&obj)) {
                    for key in replay_map(&obj) {
                        queue.add(key, LOW_PRIORITY);
                    }
                }
            }
        });
        let handler = SourceHandler {
            intake: Arc::clone(intake),
            map,
            predicates,
            primary,
        };
        let registration = informer
            .add_event_handler(handler)
            .map_err(|e| Error::informer(&controller, &plural, e))?;
        let removed = registration.clone();
        let remover: Remover = Box::new(move || informer.remove_event_handler(&removed));
        Ok(Registered {
            registration: Some(registration),
            remover,
            replay,
        })
    })
}

/// Maps a child `C` to its controller owner if that owner is of the `primary` kind and group
/// (in the child's namespace when the primary resource is namespaced). Without a primary
/// (never: `for_` sets it) it maps nothing.
fn owner_mapper<C: Object>(primary: Option<Arc<ApiResource>>) -> Mapper<C> {
    Arc::new(move |child: &C| {
        let Some(primary) = &primary else {
            return Vec::new();
        };
        get_controller_of(child)
            .filter(|owner| {
                owner.kind == primary.kind && group_of(owner.api_version) == primary.group
            })
            .map(|owner| {
                let namespace = if primary.namespaced {
                    child.namespace()
                } else {
                    ""
                };
                ObjectRef::new(namespace, owner.name)
            })
            .into_iter()
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::GroupVersionKind;
    use serde_json::json;

    use super::*;

    /// A child in namespace `apps` with the owner reference `reference`.
    fn child(reference: serde_json::Value) -> PartialObjectMetadata {
        serde_json::from_value(json!({"metadata": {
            "name": "child", "namespace": "apps", "ownerReferences": [reference],
        }}))
        .unwrap()
    }

    fn widgets(namespaced: bool) -> Option<Arc<ApiResource>> {
        let gvk = GroupVersionKind::new("example.com", "v1", "Widget");
        Some(Arc::new(ApiResource::new(&gvk, "widgets", namespaced)))
    }

    fn keys(primary: Option<Arc<ApiResource>>, reference: serde_json::Value) -> Vec<String> {
        owner_mapper::<PartialObjectMetadata>(primary)(&child(reference))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn zero_timeouts_are_unset_as_in_controller_runtime() {
        let client =
            kclient_rest::Client::new(kclient_rest::Config::new("https://127.0.0.1:1")).unwrap();
        let factory = SharedInformerFactory::new(client, std::time::Duration::ZERO);
        let zero = std::time::Duration::ZERO;
        let builder = ControllerBuilder::new("zero", &factory)
            .for_::<kclient_api::core::v1::ConfigMap>()
            .cache_sync_timeout(zero)
            .reconcile_timeout(zero);
        assert_eq!(
            builder.options.cache_sync_timeout,
            DEFAULT_CACHE_SYNC_TIMEOUT
        );
        assert_eq!(builder.options.reconcile_timeout, None);
        let builder = builder
            .cache_sync_timeout(std::time::Duration::from_secs(1))
            .reconcile_timeout(std::time::Duration::from_secs(2));
        assert_eq!(builder.options.cache_sync_timeout.as_secs(), 1);
        assert_eq!(
            builder.options.reconcile_timeout,
            Some(std::time::Duration::from_secs(2))
        );
        assert!(!builder.options.drain, "no drain by default");
    }

    #[test]
    fn a_cluster_scoped_source_watches_through_the_first_factory_only() {
        let client =
            kclient_rest::Client::new(kclient_rest::Config::new("https://127.0.0.1:1")).unwrap();
        let a = SharedInformerFactory::new(client.clone(), std::time::Duration::ZERO)
            .with_namespace("a");
        let b = SharedInformerFactory::new(client, std::time::Duration::ZERO).with_namespace("b");
        let factories = [&a, &b];
        let namespaces = |namespaced| {
            factories_for(&factories, namespaced)
                .map(|f| f.namespace().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(namespaces(true), ["a", "b"]);
        assert_eq!(namespaces(false), ["a"]);
    }

    #[test]
    fn owners_are_matched_by_group_and_kind_at_run_time() {
        let reference = |api_version: &str, kind: &str, controller: bool| {
            json!({"apiVersion": api_version, "kind": kind, "name": "w", "uid": "u",
                   "controller": controller})
        };
        // Any version of the group: the same object, served in several versions.
        assert_eq!(
            keys(widgets(true), reference("example.com/v1", "Widget", true)),
            ["apps/w"]
        );
        assert_eq!(
            keys(
                widgets(true),
                reference("example.com/v1beta1", "Widget", true)
            ),
            ["apps/w"]
        );
        // Another group or kind, or a reference that does not control: no owner.
        assert!(keys(widgets(true), reference("other.com/v1", "Widget", true)).is_empty());
        assert!(keys(widgets(true), reference("example.com/v1", "Gadget", true)).is_empty());
        assert!(keys(widgets(true), reference("example.com/v1", "Widget", false)).is_empty());
        // A cluster-scoped owner of a namespaced child: its key has no namespace.
        assert_eq!(
            keys(widgets(false), reference("example.com/v1", "Widget", true)),
            ["w"]
        );
        // No primary (never, once `for_` ran): nothing.
        assert!(keys(None, reference("example.com/v1", "Widget", true)).is_empty());
    }
}
