//! The SharedIndexInformer: one reflector, one cache, many handlers (client-go's
//! `shared_informer.go` and the process loop of `controller.go`).
//!
//! The full semantics are documented on the public type.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::FutureExt as _;
use kclient_apimachinery::{Object, Resource};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::delta_fifo::{Delta, DeltaFIFO, DeltaFIFOOptions, Deltas, PopError, ProcessError};
use crate::done_signal::DoneSignal;
use crate::error::Error;
use crate::handler::ResourceEventHandler;
use crate::index::Indexers;
use crate::indexer::Indexer;
use crate::lister::Lister;
use crate::listwatch::ListerWatcher;
use crate::processor_listener::{Notification, ProcessorListener, determine_resync_period};
use crate::real_fifo::RealFIFO;
use crate::reflector::{Reflector, ReflectorOptions, TransformFunc, WatchErrorHandler};
use crate::shared_processor::SharedProcessor;
use crate::store::{KeyListerGetter, ReflectorStore};
use crate::synctrack::SingleFileTracker;

/// The smallest per-handler resync period (client-go's `minimumResyncPeriod`).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// How often [`wait_for_cache_sync`] checks (client-go's `syncedPollPeriod`).
const SYNCED_POLL_PERIOD: Duration = Duration::from_millis(100);

/// How to build a [`SharedIndexInformer`] (client-go's `SharedIndexInformerOptions`).
#[non_exhaustive]
pub struct SharedIndexInformerOptions<K> {
    /// The default resync period of handlers, and the informer's resync check period; zero
    /// turns resync off.
    pub resync_period: Duration,
    /// The cache's index functions.
    pub indexers: Indexers<K>,
    /// The reflector's settings (its `resync_period` is managed by the informer).
    pub reflector: ReflectorOptions,
    /// Queue changes in a [`RealFIFO`](crate::RealFIFO) (every change, in arrival order)
    /// rather than the [`DeltaFIFO`] (changes coalesced per key); client-go's
    /// `InOrderInformers`. Handlers get the same kinds of notifications either way; with the
    /// RealFIFO, changes to different objects reach them in watch order.
    pub use_real_fifo: bool,
}

impl<K> SharedIndexInformerOptions<K> {
    /// The default resync period of handlers, and the informer's resync check period; zero
    /// turns resync off.
    pub fn resync_period(mut self, resync_period: Duration) -> Self {
        self.resync_period = resync_period;
        self
    }

    /// The cache's index functions.
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers = indexers;
        self
    }

    /// The reflector's settings (its `resync_period` is managed by the informer).
    pub fn reflector(mut self, reflector: ReflectorOptions) -> Self {
        self.reflector = reflector;
        self
    }

    /// Queue changes in a [`RealFIFO`](crate::RealFIFO) (every change, in arrival order)
    /// rather than the [`DeltaFIFO`] (changes coalesced per key); client-go's
    /// `InOrderInformers`. Handlers get the same kinds of notifications either way; with the
    /// RealFIFO, changes to different objects reach them in watch order.
    pub fn use_real_fifo(mut self, use_real_fifo: bool) -> Self {
        self.use_real_fifo = use_real_fifo;
        self
    }
}

impl<K> Default for SharedIndexInformerOptions<K> {
    fn default() -> Self {
        SharedIndexInformerOptions {
            resync_period: Duration::ZERO,
            indexers: Indexers::new(),
            reflector: ReflectorOptions {
                name: "informer".to_owned(),
                ..ReflectorOptions::default()
            },
            use_real_fifo: false,
        }
    }
}

/// A cache of one kind of object, kept current by a reflector and shared by many handlers
/// (client-go's `SharedIndexInformer`). Cheap to clone: clones share the same informer.
///
/// # Guarantees
///
/// - **One cache, filled before handlers hear of it.** Each change is applied to the
///   [`Indexer`] before the handlers are notified, so a handler (or a lister it calls) sees
///   the cache at least as new as the notification.
/// - **Per-object order.** Notifications for one object reach each handler in the order the
///   informer saw the changes. Across objects there is no ordering promise.
/// - **Handlers are isolated.** Each handler has its own unbounded buffer, delivered in order
///   on the process's handler pool, which adds a thread while every one of its threads is
///   inside a blocked handler; a slow handler never blocks the reflector, the cache or the
///   other handlers.
/// - **Late handlers catch up.** A handler added after start first receives every object in
///   the cache as an add with `is_in_initial_list = true`, while the delivery of new changes
///   is held back, so it sees each object exactly once before any later change.
/// - **Sync is per registration.** [`ResourceEventHandlerRegistration::has_synced`] is true
///   once the informer has synced *and* that handler has returned from every initial-list
///   add: waiting on it means the handler has processed the initial state.
/// - **Resync.** Each handler may ask for its own resync period (at least 1 s). Resync
///   re-delivers cached objects as updates with `old` and `new` the same version; they reach
///   only the handlers due for a resync. A relist that finds an object at the version the
///   cache holds is delivered the same way, and a handler counts as due until the first
///   resync check (client-go's rule): with no resync period at all, every handler gets an
///   update for every unchanged object of a relist, so a controller reconciles what it may
///   have missed.
/// - **Tombstones.** A delete inferred from a relist reaches handlers as
///   [`DeletedObject::Tombstone`](crate::DeletedObject::Tombstone).
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        SharedIndexInformer {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<K> {
    indexer: Indexer<K>,
    processor: SharedProcessor<K>,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    reflector_options: ReflectorOptions,
    use_real_fifo: bool,
    /// Set once the DeltaFIFO has delivered the first list.
    synced: DoneSignal,
    lifecycle: Mutex<Lifecycle<K>>,
    /// Held while deltas are applied and while a late handler receives the cache's content
    /// (client-go's `blockDeltas`).
    block_deltas: Mutex<()>,
}

/// The id of the next handler registration, of any informer: a registration names one
/// listener of one informer, so handing it to another informer's `remove_event_handler`
/// finds nothing there (client-go compares listener pointers) rather than the listener that
/// happens to share a per-informer number.
static NEXT_LISTENER_ID: AtomicU64 = AtomicU64::new(1);

/// What client-go guards with `startedLock`.
struct Lifecycle<K> {
    started: bool,
    stopped: bool,
    resync_check_period: Duration,
    default_handler_resync_period: Duration,
    transform: Option<TransformFunc<K>>,
    watch_error_handler: Option<WatchErrorHandler>,
    reflector: Option<Arc<Reflector<K>>>,
}

/// The handle of an added handler (client-go's `ResourceEventHandlerRegistration`): ask it
/// whether the handler has synced, or pass it to
/// [`remove_event_handler`](SharedIndexInformer::remove_event_handler).
#[derive(Debug, Clone)]
pub struct ResourceEventHandlerRegistration {
    id: u64,
    tracker: Arc<SingleFileTracker>,
    run_finished: DoneSignal,
}

impl ResourceEventHandlerRegistration {
    /// Whether the informer has synced and this handler has processed every object of the
    /// initial list.
    pub fn has_synced(&self) -> bool {
        self.tracker.has_synced()
    }

    /// Waits until [`has_synced`](Self::has_synced).
    pub async fn wait_for_sync(&self) {
        self.tracker.signal().wait().await
    }

    /// Blocks the thread until [`has_synced`](Self::has_synced) or `timeout`; returns
    /// whether it has synced.
    ///
    /// # Panics
    ///
    /// On the thread that drives a current-thread tokio runtime, where it would hang: await
    /// [`wait_for_sync`](Self::wait_for_sync) there.
    pub fn wait_for_sync_blocking(&self, timeout: Option<Duration>) -> bool {
        kclient_flowcontrol::assert_can_block(
            "ResourceEventHandlerRegistration::wait_for_sync_blocking",
            "wait_for_sync().await",
        );
        self.tracker.signal().wait_blocking(timeout)
    }

    /// Whether this handler gets no more notifications: it was removed, or its informer
    /// stopped (cancelled, or its task panicked in a transform, an index function or the
    /// reflector). If it has not synced by then, it never will.
    pub fn has_stopped(&self) -> bool {
        self.run_finished.is_set()
    }

    /// Waits until the handler has synced (true), or until it gets no more notifications
    /// without having synced (false; see [`has_stopped`](Self::has_stopped)): what a
    /// controller waits for, so that an informer that died does not leave it waiting forever.
    pub async fn wait_for_sync_or_stop(&self) -> bool {
        tokio::select! {
            biased;
            () = self.tracker.signal().wait() => true,
            () = self.run_finished.wait() => self.has_synced(),
        }
    }
}

impl<K: Object> SharedIndexInformer<K> {
    /// An informer over `lister_watcher` with a default handler resync period and indexes.
    pub fn new(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        resync_period: Duration,
        indexers: Indexers<K>,
    ) -> Self {
        Self::with_options(
            lister_watcher,
            SharedIndexInformerOptions {
                resync_period,
                indexers,
                ..Default::default()
            },
        )
    }

    /// An informer with explicit options.
    pub fn with_options(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        options: SharedIndexInformerOptions<K>,
    ) -> Self {
        SharedIndexInformer {
            inner: Arc::new(Inner {
                indexer: Indexer::new(options.indexers),
                processor: SharedProcessor::new(),
                lister_watcher,
                reflector_options: options.reflector,
                use_real_fifo: options.use_real_fifo,
                synced: DoneSignal::new(),
                lifecycle: Mutex::new(Lifecycle {
                    started: false,
                    stopped: false,
                    resync_check_period: options.resync_period,
                    default_handler_resync_period: options.resync_period,
                    transform: None,
                    watch_error_handler: None,
                    reflector: None,
                }),
                block_deltas: Mutex::new(()),
            }),
        }
    }

    /// The informer's cache.
    pub fn get_indexer(&self) -> Indexer<K> {
        self.inner.indexer.clone()
    }

    /// The informer's cache (the same as [`get_indexer`](Self::get_indexer)).
    pub fn get_store(&self) -> Indexer<K> {
        self.inner.indexer.clone()
    }

    /// Adds index functions to the cache, even after start; fails after stop or on a name
    /// conflict.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        let lifecycle = self.inner.lifecycle.lock();
        if lifecycle.stopped {
            return Err(Error::stopped());
        }
        self.inner.indexer.add_indexers(indexers)
    }

    /// Sets a transform applied once to each object before it is cached and delivered, such
    /// as dropping `managedFields`. Only before start.
    pub fn set_transform(
        &self,
        transform: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let mut lifecycle = self.inner.lifecycle.lock();
        if lifecycle.started {
            return Err(Error::already_started());
        }
        lifecycle.transform = Some(Arc::new(transform));
        Ok(())
    }

    /// Sets the handler of list-and-watch errors. Only before start.
    pub fn set_watch_error_handler(
        &self,
        handler: impl Fn(&str, &kclient_apimachinery::Error) + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let mut lifecycle = self.inner.lifecycle.lock();
        if lifecycle.started {
            return Err(Error::already_started());
        }
        lifecycle.watch_error_handler = Some(Arc::new(handler));
        Ok(())
    }

    /// Adds a handler with the informer's default resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<ResourceEventHandlerRegistration, Error> {
        let period = self.inner.lifecycle.lock().default_handler_resync_period;
        self.add_event_handler_with_resync_period(handler, period)
    }

    /// Adds a handler with its own resync period (client-go's rules: at least 1 s; before
    /// start a shorter period lowers the informer's check period, after start it is raised to
    /// it; an informer that does not resync gives handlers no resync).
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration, Error> {
        let mut lifecycle = self.inner.lifecycle.lock();
        if lifecycle.stopped {
            return Err(Error::stopped());
        }
        let mut resync_period = resync_period;
        if !resync_period.is_zero() {
            if resync_period < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(?resync_period, "resync period too small, raised to 1s");
                resync_period = MINIMUM_RESYNC_PERIOD;
            }
            if resync_period < lifecycle.resync_check_period {
                if lifecycle.started {
                    tracing::warn!(
                        ?resync_period,
                        "resync period below the informer's check period, raised to it"
                    );
                    resync_period = lifecycle.resync_check_period;
                } else {
                    lifecycle.resync_check_period = resync_period;
                    self.inner
                        .processor
                        .resync_check_period_changed(resync_period);
                }
            }
        }
        let id = NEXT_LISTENER_ID.fetch_add(1, Ordering::Relaxed);
        let listener = Arc::new(ProcessorListener::new(
            id,
            format!("{} handler {id}", self.inner.reflector_options.name),
            Box::new(handler),
            resync_period,
            determine_resync_period(resync_period, lifecycle.resync_check_period),
        ));
        let registration = ResourceEventHandlerRegistration {
            id,
            tracker: Arc::clone(&listener.tracker),
            run_finished: listener.run_finished.clone(),
        };
        if !lifecycle.started {
            self.inner.processor.add_listener(listener);
            return Ok(registration);
        }
        // Started: replay the cache while no delta can be applied, then let deltas flow.
        {
            let _blocked = self.inner.block_deltas.lock();
            for obj in self.inner.indexer.list() {
                listener.add(Notification::Add {
                    obj,
                    is_in_initial_list: true,
                });
            }
            self.inner.processor.add_listener(Arc::clone(&listener));
        }
        if self.inner.synced.is_set() {
            listener.tracker.upstream_has_synced();
        }
        Ok(registration)
    }

    /// Removes a handler (idempotent). Its delivery finishes the notification in hand and
    /// drops the rest; use [`shut_down_event_handler`](Self::shut_down_event_handler) to wait.
    pub fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration) {
        let _lifecycle = self.inner.lifecycle.lock();
        let _blocked = self.inner.block_deltas.lock();
        self.inner.processor.remove_listener(registration.id);
    }

    /// Removes a handler and waits until its delivery has stopped (no call to it is under way).
    pub async fn shut_down_event_handler(&self, registration: &ResourceEventHandlerRegistration) {
        self.remove_event_handler(registration);
        registration.run_finished.wait().await;
    }

    /// Whether the first list has been fully delivered to the cache.
    pub fn has_synced(&self) -> bool {
        self.inner.synced.is_set()
    }

    /// Waits until [`has_synced`](Self::has_synced), without polling (client-go's
    /// `WaitFor` on the informer's `HasSyncedChecker`).
    pub async fn wait_for_sync(&self) {
        self.inner.synced.wait().await
    }

    /// Whether [`run`](Self::run) was called.
    pub fn has_started(&self) -> bool {
        self.inner.lifecycle.lock().started
    }

    /// Whether the informer has stopped (it cannot be restarted): its `run` ended, or its task
    /// panicked (in a transform, an index function or the reflector). If it has not synced by
    /// then, it never will.
    pub fn is_stopped(&self) -> bool {
        self.inner.lifecycle.lock().stopped
    }

    /// The resource version the reflector last synced to; `""` before start.
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .lifecycle
            .lock()
            .reflector
            .as_ref()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// When the informer last heard from the server successfully (a list, a watch opening, an
    /// event or a bookmark); `None` before start and before the first success. See
    /// [`Reflector::last_successful_sync`].
    pub fn last_successful_sync(&self) -> Option<std::time::Instant> {
        self.inner
            .lifecycle
            .lock()
            .reflector
            .as_ref()
            .and_then(|r| r.last_successful_sync())
    }

    /// The notifications waiting in each handler's buffer, by registration, for diagnostics.
    pub fn pending_notifications(&self) -> usize {
        self.inner.processor.pending().iter().map(|(_, n)| n).sum()
    }

    /// Runs the informer until `cancel` fires: lists and watches, fills the cache and
    /// notifies handlers. Runs once; a second call logs a warning and returns. On return the
    /// informer is stopped and no handler call is under way. Changes still queued at the
    /// cancel are dropped, not stored or delivered, as in client-go.
    ///
    /// # Panics
    ///
    /// When its transform, an index function or the reflector panics (client-go's informer
    /// crashes the process then). Before the panic goes on, the informer logs it, stops, and
    /// stops its handlers, so that whoever waits for its cache to sync learns that it never
    /// will ([`is_stopped`](Self::is_stopped), [`wait_for_cache_sync`] returning false).
    pub async fn run(&self, cancel: CancellationToken) {
        let (fifo, reflector) = {
            let mut lifecycle = self.inner.lifecycle.lock();
            if lifecycle.started {
                tracing::warn!(
                    "the informer has already started; run more than once is not allowed"
                );
                return;
            }
            let known: Arc<dyn KeyListerGetter<K>> = Arc::new(self.inner.indexer.clone());
            let fifo = if self.inner.use_real_fifo {
                Queue::Real(Arc::new(RealFIFO::new(known)))
            } else {
                Queue::Delta(Arc::new(DeltaFIFO::new(DeltaFIFOOptions {
                    known_objects: Some(known),
                    emit_delta_type_replaced: true,
                    key_function: None,
                })))
            };
            let options = ReflectorOptions {
                resync_period: lifecycle.resync_check_period,
                ..self.inner.reflector_options.clone()
            };
            let weak = Arc::downgrade(&self.inner);
            let mut reflector = Reflector::new(
                Arc::clone(&self.inner.lister_watcher),
                fifo.store(),
                options,
            )
            .with_should_resync(Arc::new(move || {
                weak.upgrade()
                    .is_some_and(|inner| inner.processor.should_resync())
            }));
            if let Some(transform) = &lifecycle.transform {
                reflector = reflector.with_transform(Arc::clone(transform));
            }
            if let Some(handler) = &lifecycle.watch_error_handler {
                reflector = reflector.with_watch_error_handler(Arc::clone(handler));
            }
            let reflector = Arc::new(reflector);
            lifecycle.reflector = Some(Arc::clone(&reflector));
            lifecycle.started = true;
            (fifo, reflector)
        };
        self.inner.processor.run();

        let reflect = async {
            reflector.run(cancel.clone()).await;
            fifo.close();
        };
        // Stops at the cancel, as client-go's `processLoop` checks its context before each
        // pop: what is still queued is not processed.
        let process = async {
            loop {
                let popped = tokio::select! {
                    biased;
                    () = cancel.cancelled() => break,
                    popped = fifo.pop(|deltas, is_in_initial_list| {
                        self.handle_deltas(deltas, is_in_initial_list);
                        Ok::<(), ProcessError<Infallible>>(())
                    }) => popped,
                };
                if let Err(PopError::Closed) = popped {
                    break;
                }
            }
        };
        let watch_synced = async {
            tokio::select! {
                () = fifo.synced_signal().wait() => {
                    self.inner.synced.set();
                    self.inner.processor.upstream_has_synced();
                }
                () = cancel.cancelled() => {}
            }
        };
        let ran = std::panic::AssertUnwindSafe(async {
            tokio::join!(reflect, process, watch_synced);
        })
        .catch_unwind()
        .await;

        self.inner.lifecycle.lock().stopped = true;
        for finished in self.inner.processor.stop() {
            finished.wait().await;
        }
        if let Err(panic) = ran {
            tracing::error!(
                informer = %self.inner.reflector_options.name,
                synced = self.has_synced(),
                panic = kclient_flowcontrol::panic_message(&*panic),
                "the informer stopped: a panic in its transform, an index function or the \
                 reflector; its cache is no longer updated"
            );
            std::panic::resume_unwind(panic);
        }
    }

    /// Applies one key's deltas to the cache and notifies the handlers (client-go's
    /// `processDeltas` with the informer as handler).
    fn handle_deltas(&self, deltas: &Deltas<K>, is_in_initial_list: bool) {
        let _blocked = self.inner.block_deltas.lock();
        let indexer = &self.inner.indexer;
        let processor = &self.inner.processor;
        for delta in deltas {
            match delta {
                Delta::Sync(obj)
                | Delta::Replaced(obj)
                | Delta::Added(obj)
                | Delta::Updated(obj) => match indexer.get(obj) {
                    Some(old) => {
                        indexer.update(Arc::clone(obj));
                        // client-go's rule: a Sync delta is always a resync; a Replaced one is
                        // when the relist found the object at the version the cache holds.
                        let is_sync = match delta {
                            Delta::Sync(_) => true,
                            Delta::Replaced(_) => old.resource_version() == obj.resource_version(),
                            _ => false,
                        };
                        processor.distribute(
                            &Notification::Update {
                                old,
                                new: Arc::clone(obj),
                            },
                            is_sync,
                        );
                    }
                    None => {
                        indexer.add(Arc::clone(obj));
                        processor.distribute(
                            &Notification::Add {
                                obj: Arc::clone(obj),
                                is_in_initial_list,
                            },
                            false,
                        );
                    }
                },
                Delta::Deleted(deleted) => {
                    indexer.delete_by_key(&deleted.key());
                    processor.distribute(&Notification::Delete(deleted.clone()), false);
                }
            }
        }
    }
}

impl<K: Resource> SharedIndexInformer<K> {
    /// A lister over this informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::for_resource(self.get_indexer())
    }
}

/// The informer's queue: a DeltaFIFO or a RealFIFO.
enum Queue<K> {
    Delta(Arc<DeltaFIFO<K>>),
    Real(Arc<RealFIFO<K>>),
}

impl<K: Object> Queue<K> {
    fn store(&self) -> Arc<dyn ReflectorStore<K>> {
        match self {
            Queue::Delta(f) => f.clone(),
            Queue::Real(f) => f.clone(),
        }
    }

    fn close(&self) {
        match self {
            Queue::Delta(f) => f.close(),
            Queue::Real(f) => f.close(),
        }
    }

    fn synced_signal(&self) -> &DoneSignal {
        match self {
            Queue::Delta(f) => f.synced_signal(),
            Queue::Real(f) => f.synced_signal(),
        }
    }

    async fn pop<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        match self {
            Queue::Delta(f) => f.pop(process).await,
            Queue::Real(f) => f.pop(process).await,
        }
    }
}

impl<K> std::fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.inner.reflector_options.name)
            .field("synced", &self.inner.synced.is_set())
            .finish_non_exhaustive()
    }
}

/// Something that can tell whether its cache has synced (client-go's `InformerSynced`).
pub trait InformerSynced {
    /// Whether it has synced.
    fn has_synced(&self) -> bool;

    /// Whether it has stopped for good, so that if it has not synced by now it never will
    /// (an informer that stopped, or whose task panicked). The default says never.
    fn has_stopped(&self) -> bool {
        false
    }
}

impl<K: Object> InformerSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn has_stopped(&self) -> bool {
        self.is_stopped()
    }
}

impl InformerSynced for ResourceEventHandlerRegistration {
    fn has_synced(&self) -> bool {
        ResourceEventHandlerRegistration::has_synced(self)
    }

    fn has_stopped(&self) -> bool {
        ResourceEventHandlerRegistration::has_stopped(self)
    }
}

/// Whether one of `synced` stopped without syncing, so that waiting for it is in vain.
fn stopped_unsynced(synced: &[&dyn InformerSynced]) -> bool {
    synced.iter().any(|s| s.has_stopped() && !s.has_synced())
}

impl<F: Fn() -> bool> InformerSynced for F {
    fn has_synced(&self) -> bool {
        self()
    }
}

/// Waits until every one of `synced` has synced, checking every 100 ms; false if `cancel`
/// fired first (client-go's `WaitForCacheSync`), or if one of them stopped without syncing
/// ([`InformerSynced::has_stopped`]: an informer whose task panicked never syncs).
pub async fn wait_for_cache_sync(
    cancel: &CancellationToken,
    synced: &[&dyn InformerSynced],
) -> bool {
    loop {
        if synced.iter().all(|s| s.has_synced()) {
            return true;
        }
        if stopped_unsynced(synced) {
            return false;
        }
        tokio::select! {
            () = cancel.cancelled() => return false,
            () = tokio::time::sleep(SYNCED_POLL_PERIOD) => {}
        }
    }
}

/// [`wait_for_cache_sync`] for threads: blocks, checking every 100 ms; false if `cancel`
/// fired first, or if one of them stopped without syncing.
///
/// # Panics
///
/// On the thread that drives a current-thread tokio runtime, where the informers could never
/// sync: await [`wait_for_cache_sync`] there.
pub fn wait_for_cache_sync_blocking(
    cancel: &CancellationToken,
    synced: &[&dyn InformerSynced],
) -> bool {
    kclient_flowcontrol::assert_can_block(
        "wait_for_cache_sync_blocking",
        "wait_for_cache_sync(..).await",
    );
    loop {
        if synced.iter().all(|s| s.has_synced()) {
            return true;
        }
        if cancel.is_cancelled() || stopped_unsynced(synced) {
            return false;
        }
        std::thread::sleep(SYNCED_POLL_PERIOD);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use tokio::sync::mpsc;

    use super::*;
    use crate::example_object::Pod;
    use crate::handler::ResourceEventHandlerFuncs;
    use crate::index::namespace_indexers;
    use crate::scripted::*;
    use crate::tombstone::DeletedObject;

    /// What a recording handler saw, as text: "add a 5 initial", "update a 5->6", "delete a",
    /// "tombstone b 6".
    type Log = mpsc::UnboundedReceiver<String>;

    fn recorder() -> (ResourceEventHandlerFuncs<Pod>, Log) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (a, u, d) = (tx.clone(), tx.clone(), tx);
        let funcs = ResourceEventHandlerFuncs::new()
            .add_func(move |p: &Arc<Pod>, initial| {
                let suffix = if initial { " initial" } else { "" };
                let _ = a.send(format!("add {} {}{suffix}", p.name, p.resource_version));
            })
            .update_func(move |o: &Arc<Pod>, n: &Arc<Pod>| {
                let _ = u.send(format!(
                    "update {} {}->{}",
                    n.name, o.resource_version, n.resource_version
                ));
            })
            .delete_func(move |obj: DeletedObject<Pod>| {
                let _ = d.send(match &obj {
                    DeletedObject::Object(p) => format!("delete {}", p.name),
                    DeletedObject::Tombstone(t) => format!(
                        "tombstone {} {}",
                        t.key,
                        t.obj
                            .as_ref()
                            .map(|p| p.resource_version.as_str())
                            .unwrap_or("-")
                    ),
                });
            });
        (funcs, rx)
    }

    async fn next(log: &mut Log) -> String {
        tokio::time::timeout(Duration::from_secs(10), log.recv())
            .await
            .expect("a notification within 10s")
            .expect("an open log")
    }

    async fn take(log: &mut Log, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(next(log).await);
        }
        out.sort();
        out
    }

    async fn quiet(log: &mut Log) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(log.try_recv().is_err(), "unexpected notification");
    }

    fn informer(lw: Arc<Scripted>, resync: Duration) -> SharedIndexInformer<Pod> {
        informer_with_queue(lw, resync, false)
    }

    fn informer_with_queue(
        lw: Arc<Scripted>,
        resync: Duration,
        use_real_fifo: bool,
    ) -> SharedIndexInformer<Pod> {
        SharedIndexInformer::with_options(
            lw,
            SharedIndexInformerOptions {
                resync_period: resync,
                indexers: namespace_indexers(),
                reflector: ReflectorOptions {
                    use_watch_list: false,
                    ..ReflectorOptions::default()
                },
                use_real_fifo,
            },
        )
    }

    fn spawn(
        informer: &SharedIndexInformer<Pod>,
    ) -> (CancellationToken, tokio::task::JoinHandle<()>) {
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, cancel) = (informer.clone(), cancel.clone());
            async move { informer.run(cancel).await }
        });
        (cancel, task)
    }

    #[tokio::test]
    async fn fills_the_cache_notifies_and_syncs() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("b", "6")])));
        let tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        let (handler, mut log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        assert!(wait_for_cache_sync(&cancel, &[&inf, &reg]).await);
        inf.wait_for_sync().await;
        assert_eq!(
            take(&mut log, 2).await,
            vec!["add a 5 initial", "add b 6 initial"]
        );
        assert_eq!(inf.get_indexer().len(), 2);
        assert_eq!(inf.last_sync_resource_version(), "10");

        tx.send(modified("a", "11")).unwrap();
        tx.send(deleted("b", "12")).unwrap();
        tx.send(added("c", "13")).unwrap();
        assert_eq!(next(&mut log).await, "update a 5->11");
        assert_eq!(next(&mut log).await, "delete b");
        assert_eq!(next(&mut log).await, "add c 13");
        assert!(inf.get_indexer().get_by_key("ns/b").is_none());
        assert_eq!(inf.last_sync_resource_version(), "13");

        cancel.cancel();
        task.await.unwrap();
        assert!(inf.is_stopped());
        assert!(
            inf.add_event_handler(ResourceEventHandlerFuncs::new())
                .unwrap_err()
                .is_stopped()
        );
    }

    /// An index function that panics on one object kills the informer's task. client-go's
    /// informer would crash the process; this one stops, stops its handlers, and then lets the
    /// panic go on, so that nobody waits forever for a cache that will never sync (before,
    /// `wait_for_cache_sync` and a handler's `wait_for_sync` waited until shutdown).
    #[tokio::test]
    async fn a_panicking_index_function_stops_the_informer_and_its_waiters() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("boom", "6")])));
        lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        inf.add_indexers(Indexers::new().with("explodes", |p: &Pod| {
            assert_ne!(p.name, "boom", "index function panics on boom");
            vec![]
        }))
        .unwrap();
        let (handler, _log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        let waited = tokio::time::timeout(Duration::from_secs(10), async {
            let cache_synced = wait_for_cache_sync(&cancel, &[&inf, &reg]).await;
            (cache_synced, reg.wait_for_sync_or_stop().await)
        })
        .await
        .expect("the waiters still wait for an informer whose task died");
        assert_eq!(waited, (false, false));
        assert!(inf.is_stopped() && !inf.has_synced());
        assert!(reg.has_stopped());
        assert!(!cancel.is_cancelled());
        let died = task.await.expect_err("the panic goes on");
        assert!(died.is_panic());
    }

    /// As client-go's `processLoop`, which checks its context before each pop: once the
    /// informer is cancelled, what is still queued is not processed (before, the queue was
    /// drained into the cache and the handlers first).
    #[tokio::test]
    async fn a_cancelled_informer_stops_processing_its_queue() {
        for use_real_fifo in [false, true] {
            let lw = Scripted::new();
            let items: Vec<Pod> = (0..5).map(|i| pod(&format!("p{i}"), "1")).collect();
            lw.push_list(Ok(page("10", "", items)));
            lw.push_live_watch(vec![]);
            let inf = informer_with_queue(lw, Duration::ZERO, use_real_fifo);
            let cancel = CancellationToken::new();
            // Cancels while the first object is being stored: its index function runs
            // inside the pop that processes it.
            inf.add_indexers(Indexers::new().with("cancels", {
                let cancel = cancel.clone();
                move |_: &Pod| {
                    cancel.cancel();
                    vec![]
                }
            }))
            .unwrap();
            inf.run(cancel).await;
            assert_eq!(
                inf.get_indexer().len(),
                1,
                "stored after the cancel (real FIFO: {use_real_fifo})"
            );
        }
    }

    #[tokio::test]
    async fn objects_gone_after_a_relist_reach_handlers_as_tombstones() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("b", "6")])));
        lw.push_watch(vec![modified("a", "11"), error_event(gone())], Tail::End);
        lw.push_list(Ok(page("20", "", vec![pod("a", "11")])));
        let inf = informer(lw, Duration::ZERO);
        let (handler, mut log) = recorder();
        inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        // The update may be coalesced with a's initial add, so it can precede b's add.
        assert_eq!(
            take(&mut log, 3).await,
            vec!["add a 5 initial", "add b 6 initial", "update a 5->11"]
        );
        // The relist re-delivers a at the version the cache holds, which reaches a handler
        // that never had a resync check as an update (client-go's rule: a new listener is
        // syncing), and infers b's deletion.
        assert_eq!(
            take(&mut log, 2).await,
            vec!["tombstone ns/b 6", "update a 11->11"]
        );
        assert_eq!(inf.get_indexer().list_keys(), vec!["ns/a"]);
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_handler_added_late_gets_every_object_once_then_live_changes() {
        let lw = Scripted::new();
        let items: Vec<Pod> = (0..50).map(|i| pod(&format!("p{i:02}"), "1")).collect();
        lw.push_list(Ok(page("10", "", items)));
        let tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        let (cancel, task) = spawn(&inf);
        assert!(wait_for_cache_sync(&cancel, &[&inf]).await);

        // Changes keep flowing while the handler is added.
        for i in 0..10 {
            tx.send(modified(&format!("p{i:02}"), "2")).unwrap();
        }
        let (handler, mut log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        reg.wait_for_sync().await;
        assert!(reg.has_synced());
        let mut adds = std::collections::HashMap::<String, usize>::new();
        let mut updates_before_add = 0;
        let mut lines = Vec::new();
        while let Ok(Some(line)) =
            tokio::time::timeout(Duration::from_millis(300), log.recv()).await
        {
            lines.push(line);
        }
        for line in &lines {
            let name = line.split(' ').nth(1).unwrap().to_owned();
            if line.starts_with("add ") {
                assert!(line.ends_with("initial"), "{line}");
                *adds.entry(name).or_default() += 1;
            } else if !adds.contains_key(&name) {
                updates_before_add += 1;
            }
        }
        assert_eq!(adds.len(), 50, "{lines:?}");
        assert!(adds.values().all(|n| *n == 1), "{adds:?}");
        assert_eq!(
            updates_before_add, 0,
            "an update arrived before the add: {lines:?}"
        );

        tx.send(modified("p40", "3")).unwrap();
        assert_eq!(next(&mut log).await, "update p40 1->3");
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_slow_handler_does_not_hold_up_the_others() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        let tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
        let stuck = Arc::new(AtomicUsize::new(0));
        let seen = stuck.clone();
        inf.add_event_handler(
            ResourceEventHandlerFuncs::new().add_func(move |_: &Arc<Pod>, _| {
                seen.fetch_add(1, Ordering::SeqCst);
                let _ = release_rx.recv();
            }),
        )
        .unwrap();
        let (fast, mut log) = recorder();
        inf.add_event_handler(fast).unwrap();
        let (cancel, task) = spawn(&inf);
        assert!(wait_for_cache_sync(&cancel, &[&inf]).await);
        for i in 0..100 {
            tx.send(added(&format!("p{i}"), "11")).unwrap();
        }
        assert_eq!(take(&mut log, 100).await.len(), 100);
        assert_eq!(inf.get_indexer().len(), 100);
        // The slow handler's thread may not even have started on its first event yet (on a
        // loaded machine): wait for it, bounded, then check that it got no further.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while stuck.load(Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the slow handler never got its first event"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(
            stuck.load(Ordering::SeqCst),
            1,
            "the slow handler is still on its first event"
        );
        assert!(inf.pending_notifications() >= 98);
        cancel.cancel();
        while !inf.is_stopped() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(release_tx);
        task.await.unwrap();
        assert_eq!(
            stuck.load(Ordering::SeqCst),
            1,
            "pending notifications are dropped on stop"
        );
    }

    #[tokio::test]
    async fn resync_reaches_only_handlers_due_for_it() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::from_secs(1));
        let (resyncing, mut resync_log) = recorder();
        inf.add_event_handler(resyncing).unwrap();
        let (never, mut quiet_log) = recorder();
        inf.add_event_handler_with_resync_period(never, Duration::ZERO)
            .unwrap();
        let (cancel, task) = spawn(&inf);
        assert_eq!(next(&mut resync_log).await, "add a 5 initial");
        assert_eq!(next(&mut quiet_log).await, "add a 5 initial");
        // Within about a second the resyncing handler gets a = a; the other never does.
        assert_eq!(next(&mut resync_log).await, "update a 5->5");
        // A watch MODIFIED is an update for every handler, even at the same version
        // (client-go counts only Sync deltas and unchanged relisted objects as resyncs).
        tx.send(modified("a", "5")).unwrap();
        tx.send(modified("a", "6")).unwrap();
        assert_eq!(next(&mut quiet_log).await, "update a 5->5");
        assert_eq!(next(&mut quiet_log).await, "update a 5->6");
        cancel.cancel();
        task.await.unwrap();
        quiet(&mut quiet_log).await;
    }

    /// A resync period too long for the clock to add ("practically never", `Duration::MAX`)
    /// means never: adding such a handler, before or after start, must not panic, and resync
    /// rounds pass it by.
    #[tokio::test]
    async fn a_resync_period_beyond_the_clock_means_never() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let inf = informer(lw, Duration::from_secs(1));
        let (resyncing, mut resync_log) = recorder();
        inf.add_event_handler(resyncing).unwrap();
        let (never, mut never_log) = recorder();
        inf.add_event_handler_with_resync_period(never, Duration::MAX)
            .unwrap();
        let (cancel, task) = spawn(&inf);
        assert_eq!(next(&mut resync_log).await, "add a 5 initial");
        assert_eq!(next(&mut never_log).await, "add a 5 initial");
        // Two resync rounds, each also asking the never-due handler.
        assert_eq!(next(&mut resync_log).await, "update a 5->5");
        assert_eq!(next(&mut resync_log).await, "update a 5->5");
        cancel.cancel();
        task.await.unwrap();
        quiet(&mut never_log).await;

        // The informer's own period that long: its handlers get it by default.
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let inf = informer(lw, Duration::MAX);
        let (handler, mut log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        assert!(wait_for_cache_sync(&cancel, &[&inf, &reg]).await);
        assert_eq!(next(&mut log).await, "add a 5 initial");
        let (late, mut late_log) = recorder();
        inf.add_event_handler_with_resync_period(late, Duration::MAX)
            .unwrap();
        assert_eq!(next(&mut late_log).await, "add a 5 initial");
        cancel.cancel();
        task.await.unwrap();
        quiet(&mut log).await;
    }

    #[tokio::test]
    async fn with_the_real_fifo_changes_arrive_in_watch_order_and_relists_tombstone() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("b", "6")])));
        // Before the first pop, a's update is queued behind b's add, not coalesced with a.
        lw.push_watch(
            vec![
                modified("a", "11"),
                modified("b", "12"),
                error_event(gone()),
            ],
            Tail::End,
        );
        lw.push_list(Ok(page("20", "", vec![pod("b", "12")])));
        let inf = informer_with_queue(lw, Duration::ZERO, true);
        let (handler, mut log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(next(&mut log).await);
        }
        assert_eq!(
            seen,
            vec![
                "add a 5 initial",
                "add b 6 initial",
                "update a 5->11",
                "update b 6->12",
                "tombstone ns/a 11"
            ]
        );
        assert!(reg.has_synced());
        assert_eq!(inf.get_indexer().list_keys(), vec!["ns/b"]);
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_relist_delivers_an_update_per_unchanged_object_to_handlers_without_resync() {
        let lw = Scripted::new();
        let items: Vec<Pod> = (0..20).map(|i| pod(&format!("p{i:02}"), "5")).collect();
        lw.push_list(Ok(page("10", "", items.clone())));
        lw.push_watch(vec![error_event(gone())], Tail::End);
        lw.push_list(Ok(page("20", "", items)));
        let _tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        let (first, mut first_log) = recorder();
        inf.add_event_handler(first).unwrap();
        let (second, mut second_log) = recorder();
        inf.add_event_handler(second).unwrap();
        let (cancel, task) = spawn(&inf);
        for log in [&mut first_log, &mut second_log] {
            let seen = take(log, 40).await;
            let adds = seen.iter().filter(|l| l.ends_with("5 initial")).count();
            let updates = seen.iter().filter(|l| l.ends_with("5->5")).count();
            assert_eq!((adds, updates), (20, 20), "{seen:?}");
            quiet(log).await;
        }
        cancel.cancel();
        task.await.unwrap();
    }

    /// Lets the informer's tasks and the handlers' threads catch up without moving paused
    /// time: yielding keeps the runtime busy, so it never auto-advances the clock.
    async fn settle() {
        for _ in 0..40 {
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Drains what one handler got: (initial adds, same-version updates of `a`).
    fn drain_counts(log: &mut Log) -> (usize, usize) {
        std::iter::from_fn(|| log.try_recv().ok()).fold((0, 0), |(adds, syncs), l| {
            (
                adds + usize::from(l == "add a 5 initial"),
                syncs + usize::from(l == "update a 5->5"),
            )
        })
    }

    #[tokio::test(start_paused = true)]
    async fn resync_rounds_follow_each_handler_period_on_paused_time() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let _tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::from_secs(2));
        let (every_two, mut two_log) = recorder();
        inf.add_event_handler(every_two).unwrap();
        let (every_five, mut five_log) = recorder();
        inf.add_event_handler_with_resync_period(every_five, Duration::from_secs(5))
            .unwrap();
        let (cancel, task) = spawn(&inf);
        settle().await;
        assert!(inf.has_synced());
        assert_eq!(drain_counts(&mut two_log), (1, 0));
        assert_eq!(drain_counts(&mut five_log), (1, 0));
        // One check every 2 s from the start: 15 in 31 s. The 5 s handler is due at the
        // first check at or after its last resync plus 5 s: at 6, 12, 18, 24 and 30 s.
        let (mut two, mut five) = (Vec::new(), Vec::new());
        for _ in 0..31 {
            tokio::time::advance(Duration::from_secs(1)).await;
            settle().await;
            two.push(drain_counts(&mut two_log).1);
            five.push(drain_counts(&mut five_log).1);
        }
        let at =
            |rounds: &[usize]| -> Vec<usize> { (1..=31).filter(|s| rounds[s - 1] > 0).collect() };
        assert_eq!(at(&two), (2..=30).step_by(2).collect::<Vec<_>>(), "{two:?}");
        assert_eq!(at(&five), vec![6, 12, 18, 24, 30], "{five:?}");
        assert!(two.iter().chain(&five).all(|n| *n <= 1));
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn lifecycle_rules() {
        let lw = Scripted::new();
        lw.push_list(Ok(page(
            "10",
            "",
            vec![pod("a", "5").with_label("noise", "x")],
        )));
        let tx = lw.push_live_watch(vec![]);
        let inf = informer(lw, Duration::ZERO);
        inf.set_transform(|p: &mut Pod| p.labels.clear()).unwrap();
        inf.set_watch_error_handler(|_, _| {}).unwrap();
        let (handler, mut log) = recorder();
        let reg = inf.add_event_handler(handler).unwrap();
        let (cancel, task) = spawn(&inf);
        assert!(wait_for_cache_sync(&cancel, &[&inf, &reg]).await);
        assert!(inf.has_started());
        assert!(inf.set_transform(|_| {}).unwrap_err().is_already_started());
        assert!(
            inf.set_watch_error_handler(|_, _| {})
                .unwrap_err()
                .is_already_started()
        );
        // The transform ran before the object was cached.
        assert!(
            inf.get_indexer()
                .get_by_key("ns/a")
                .unwrap()
                .labels
                .is_empty()
        );
        // Running twice returns at once.
        inf.run(CancellationToken::new()).await;
        assert_eq!(next(&mut log).await, "add a 5 initial");
        // A removed handler hears nothing more while others do; removal is idempotent.
        let (other, mut other_log) = recorder();
        inf.add_event_handler(other).unwrap();
        assert_eq!(next(&mut other_log).await, "add a 5 initial");
        inf.shut_down_event_handler(&reg).await;
        inf.remove_event_handler(&reg);
        tx.send(modified("a", "6")).unwrap();
        assert_eq!(next(&mut other_log).await, "update a 5->6");
        quiet(&mut log).await;
        // Indexers can be added after start.
        let mut by_node: Indexers<Pod> = Indexers::new();
        by_node.insert(
            "byNode".into(),
            Arc::new(|p: &Pod| vec![p.node_name.clone()]),
        );
        inf.add_indexers(by_node).unwrap();
        assert_eq!(inf.get_indexer().by_index("byNode", "").unwrap().len(), 1);
        cancel.cancel();
        task.await.unwrap();
        quiet(&mut log).await;
    }

    /// A registration names one handler of one informer. Handed to another informer by
    /// mistake, client-go's `RemoveEventHandler` finds no such listener there and does nothing;
    /// it must not remove whichever handler of that informer happens to share a number.
    #[test]
    fn removing_another_informers_registration_removes_nothing() {
        let first = informer(Scripted::new(), Duration::ZERO);
        let second = informer(Scripted::new(), Duration::ZERO);
        let of_first = first
            .add_event_handler(ResourceEventHandlerFuncs::new())
            .unwrap();
        let of_second = second
            .add_event_handler(ResourceEventHandlerFuncs::new())
            .unwrap();
        second.remove_event_handler(&of_first);
        assert!(
            !of_second.has_stopped(),
            "the second informer's own handler was removed"
        );
        assert!(!of_first.has_stopped());
        assert_eq!(second.inner.processor.pending().len(), 1);
        first.remove_event_handler(&of_first);
        assert!(of_first.has_stopped());
    }

    #[test]
    fn handler_resync_periods_follow_client_go_rules() {
        let secs = Duration::from_secs;
        // Before start: a shorter period lowers the check period and the other handlers'
        // periods are recomputed; below 1 s is raised to 1 s.
        let inf = informer(Scripted::new(), secs(10));
        inf.add_event_handler(ResourceEventHandlerFuncs::new())
            .unwrap();
        inf.add_event_handler_with_resync_period(ResourceEventHandlerFuncs::new(), secs(4))
            .unwrap();
        inf.add_event_handler_with_resync_period(
            ResourceEventHandlerFuncs::new(),
            Duration::from_millis(10),
        )
        .unwrap();
        inf.add_event_handler_with_resync_period(ResourceEventHandlerFuncs::new(), Duration::ZERO)
            .unwrap();
        assert_eq!(inf.inner.lifecycle.lock().resync_check_period, secs(1));
        assert_eq!(
            inf.inner.processor.resync_periods(),
            vec![secs(10), secs(4), secs(1), Duration::ZERO]
        );

        // After start: a shorter period is raised to the check period.
        let inf = informer(Scripted::new(), secs(5));
        inf.inner.lifecycle.lock().started = true;
        inf.add_event_handler_with_resync_period(ResourceEventHandlerFuncs::new(), secs(2))
            .unwrap();
        inf.add_event_handler_with_resync_period(ResourceEventHandlerFuncs::new(), secs(7))
            .unwrap();
        assert_eq!(inf.inner.lifecycle.lock().resync_check_period, secs(5));
        assert_eq!(inf.inner.processor.resync_periods(), vec![secs(5), secs(7)]);

        // An informer that does not resync gives its handlers no resync.
        let inf = informer(Scripted::new(), Duration::ZERO);
        inf.add_event_handler_with_resync_period(ResourceEventHandlerFuncs::new(), secs(3))
            .unwrap();
        assert_eq!(inf.inner.processor.resync_periods(), vec![Duration::ZERO]);
    }

    #[test]
    fn blocking_waits_work_from_plain_threads() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let inf = informer(lw, Duration::ZERO);
        let reg = inf
            .add_event_handler(ResourceEventHandlerFuncs::new())
            .unwrap();
        let cancel = CancellationToken::new();
        let task = rt.spawn({
            let (inf, cancel) = (inf.clone(), cancel.clone());
            async move { inf.run(cancel).await }
        });
        assert!(wait_for_cache_sync_blocking(&cancel, &[&inf, &|| true]));
        assert!(reg.wait_for_sync_blocking(Some(Duration::from_secs(10))));
        cancel.cancel();
        rt.block_on(task).unwrap();
        assert!(!wait_for_cache_sync_blocking(&cancel, &[&|| false]));
    }
}
