//! A controller runtime on kclient's informers and workqueue: what controller-runtime's
//! `builder`/`reconcile` packages and kube-runtime's `Controller` give, built from the
//! client-go-shaped layers below it without hiding them.
//!
//! [`ControllerBuilder`] takes a [`SharedInformerFactory`](kclient_informers::SharedInformerFactory),
//! so a controller's informers are the factory's, shared with anything else the program
//! watches. It names the primary resource ([`for_`](ControllerBuilder::for_); or, for a kind
//! known only at run time, [`for_dynamic`](ControllerBuilder::for_dynamic), whose objects
//! arrive as `Unstructured`; or [`for_metadata`](ControllerBuilder::for_metadata) to cache
//! and reconcile only their metadata), the children
//! whose events wake their controller owner ([`owns`](ControllerBuilder::owns), or
//! [`owns_metadata`](ControllerBuilder::owns_metadata) to cache only their metadata, or
//! [`owns_uncached`](ControllerBuilder::owns_uncached) to keep only each child's owner), any other
//! resource mapped to primary keys ([`watches`](ControllerBuilder::watches), or
//! [`watches_metadata`](ControllerBuilder::watches_metadata) from its metadata), streams of keys
//! or ticks from outside the cluster ([`reconcile_on`](ControllerBuilder::reconcile_on),
//! [`reconcile_all_on`](ControllerBuilder::reconcile_all_on)), and [`Predicate`]s on each. [`reconcile`](ControllerBuilder::reconcile) gives it the reconcile
//! function, an `async fn(Arc<K>, Arc<Ctx>) -> Result<Action, E>`, and
//! [`Controller::run`] runs it until a shutdown token fires.
//!
//! # What a reconcile's result does
//!
//! - `Ok(`[`Action::done()`]`)`: the key's failure history is forgotten (`forget`); the key
//!   comes back at its next event.
//! - `Ok(`[`Action::requeue_after(d)`](Action::requeue_after)`)`: forgotten, and reconciled
//!   again after `d`.
//! - `Err(e)`: logged, then the [error policy](Controller::error_policy) decides; by default
//!   the key is requeued with the rate limiter (client-go's `DefaultControllerRateLimiter`:
//!   5 ms doubling per failure up to 1000 s, under an overall 10/s bucket; configurable with
//!   [`rate_limiter`](ControllerBuilder::rate_limiter)).
//! - A panic in the reconcile (in its future, or in the call that makes it), in the
//!   `on_deleted` function or in the error policy is caught and treated as an error: the key
//!   is retried with backoff and the worker lives on (controller-runtime's `RecoverPanic`).
//! - A reconcile that outlasts the [`reconcile_timeout`](ControllerBuilder::reconcile_timeout)
//!   (none by default) is cancelled and treated the same way (controller-runtime's
//!   `ReconciliationTimeout`).
//!
//! A controller whose informer caches have not synced within its
//! [`cache_sync_timeout`](ControllerBuilder::cache_sync_timeout) (2 minutes by default, as
//! controller-runtime's `CacheSyncTimeout`) fails to start with
//! [`Error::is_cache_sync`]: a resource the server does not serve, or that the client may
//! not list, shows as an error rather than a controller that waits for ever.
//!
//! # The queue
//!
//! Keys wait in client-go's rate-limited workqueue, first come first served, with a
//! [merge window](ControllerBuilder::merge_window) that folds a burst of events for one key
//! into one reconcile. [`priority_queue(true)`](ControllerBuilder::priority_queue) puts them
//! in controller-runtime's priority queue instead (its default): the keys of objects most
//! likely unchanged (an informer's initial list, the cached objects replayed when reconciling
//! starts, updates whose resourceVersion did not change) go in at [`LOW_PRIORITY`], the others
//! at 0, so that after a restart a real change is reconciled before the thousands of objects
//! listed with it; [`Action::with_priority`] sets the priority of a requeue. It has no merge
//! window, hence off by default.
//!
//! At most [`workers`](ControllerBuilder::workers) reconciles run at once, and never two of
//! the same key: the workqueue does not hand out a key while a worker holds it, and an event
//! meanwhile brings it back once after. A key whose object is gone from the cache goes to
//! [`on_deleted`](Controller::on_deleted) with its [`ObjectRef`], or is dropped; to act
//! before an object goes, wrap the reconcile in a [`finalizer`] (or edit the list yourself with
//! [`add_finalizer`], [`remove_finalizer`] and [`contains_finalizer`]). Put the recorder of a
//! [`ControllerEvents`] in the context to record Events about the objects, and make children
//! point back to their owner with [`set_controller_reference`] before creating or updating
//! them (controller-runtime's `controllerutil` helpers are all there: [`set_owner_reference`],
//! [`remove_owner_reference`], [`remove_controller_reference`], [`has_owner_reference`],
//! [`has_controller_reference`], and [`create_or_update`] and [`create_or_patch`], which read an
//! object, let a function set what the controller owns and write only what changed), or
//! server-side apply them with [`apply_owned`].
//!
//! # Shutdown and leader election
//!
//! When the shutdown token fires the controller stops taking events (intake) and waits for the
//! reconciles in progress (with [`drain_on_shutdown(true)`](ControllerBuilder::drain_on_shutdown)
//! it first reconciles the keys already queued), all within
//! [`shutdown_timeout`](ControllerBuilder::shutdown_timeout), then cancels what still runs,
//! removes its handlers and returns; no reconcile runs after `run` returns. With [`leader_election`](ControllerBuilder::leader_election) it reconciles only
//! while it holds the lease (kclient-tools' `LeaderElector`), while the informers stay warm;
//! at shutdown it stops reconciling before it releases the lease, so leaders hand over without
//! overlapping. A leader that loses its lease cancels its reconciles at once and keeps the keys
//! still pending for its next term. A [`HealthzAdaptor`](kclient_tools::HealthzAdaptor) in the
//! configuration's `watch_dog` is a liveness check of the election (client-go's): it fails
//! while the controller believes it leads but its renewals are stuck.
//!
//! # Several controllers: the manager
//!
//! [`manager::Manager`] is controller-runtime's `manager.Manager`: it runs several controllers
//! and other runnables over one informer factory, or several (which it starts, waits for and
//! shuts down),
//! with one leader election for all of them (a controller under a manager has none of its
//! own), `/healthz` and `/readyz` probes, a `/metrics` endpoint and an ordered graceful
//! shutdown; a runnable's error or a lost lease stops it. See the [`manager`] module.
//!
//! # Several namespaces
//!
//! A factory watches one namespace or all of them (client-go's `WithNamespace`). A controller
//! reconciles the objects of a set of namespaces (controller-runtime's
//! `cache.Options.DefaultNamespaces`) with a factory per namespace:
//! [`ControllerBuilder::new`] takes the first and
//! [`with_factory`](ControllerBuilder::with_factory) each other one, and every namespaced
//! source then watches through all of them into the one queue (under a manager, give it the
//! other factories too: [`manager::ManagerBuilder::with_factory`]). That is what a program
//! whose roles grant only those namespaces needs; a cluster-scoped source still lists its
//! resource across the cluster, through the first factory. One that may list every namespace can instead
//! watch them all and keep the others out with an
//! [event filter](ControllerBuilder::with_event_filter)
//! (`EventFilter::new(move |o: &dyn Object| namespaces.contains(o.namespace()))`, with
//! `namespaces` a `HashSet<String>`; it also keeps out cluster-scoped objects, whose namespace
//! is empty), at the cost of caching every namespace's objects.
//!
//! # Observability
//!
//! The controller's queue is named after the controller, so client-go's seven workqueue
//! metrics carry its name; the same [`MetricsProvider`](kclient_workqueue::MetricsProvider)
//! (the one given to [`metrics_provider`](ControllerBuilder::metrics_provider), else the
//! process-wide one) also makes its reconcile count by result (`success`, `error`,
//! `requeue`, `requeue_after`), error count (a panic included), panic count, reconcile time
//! histogram, active worker gauge, maximum of concurrent reconciles (its `workers`), count of
//! reconciles cancelled by the reconcile timeout and count of terminal errors (those the
//! [error policy](Controller::error_policy) gives up on with [`Action::done`]);
//! `PrometheusMetricsProvider` exports them under controller-runtime's names
//! (`controller_runtime_reconcile_total`, `controller_runtime_reconcile_errors_total`,
//! `controller_runtime_reconcile_panics_total`, `controller_runtime_reconcile_time_seconds`,
//! `controller_runtime_active_workers`, `controller_runtime_max_concurrent_reconciles`,
//! `controller_runtime_reconcile_timeouts_total`,
//! `controller_runtime_terminal_reconcile_errors_total`). Each reconcile
//! runs in a `tracing` span `reconcile` with the fields `controller` and `key`.
//!
//! # Example
//!
//! A controller that keeps, for every ConfigMap labelled `mirror=true`, a Secret of the same
//! name holding its data, owned by it (so the Secret's changes wake it, and the garbage
//! collector deletes the Secret with the ConfigMap). `examples/configmap-mirror.rs` is the
//! runnable program, with events and a `--demo` that exercises it against the current
//! kubeconfig's cluster (`cargo run -p kclient-controller --example configmap-mirror --
//! --namespace default --demo`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use kclient_api::core::v1::{ConfigMap, Secret};
//! use kclient_apimachinery::{Object, PatchOptions};
//! use kclient_cache::CancellationToken;
//! use kclient_clientset::{Api, Patch};
//! use kclient_controller::{Action, ControllerBuilder, Predicate, owner_reference};
//! use kclient_informers::SharedInformerFactory;
//! use kclient_rest::Client;
//!
//! struct Ctx {
//!     client: Client,
//! }
//!
//! async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, kclient_apimachinery::Error> {
//!     if cm.labels().get("mirror") != Some("true") {
//!         return Ok(Action::done());
//!     }
//!     let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), cm.namespace());
//!     let secret = serde_json::json!({
//!         "apiVersion": "v1", "kind": "Secret",
//!         "metadata": {"name": cm.name(), "ownerReferences": [owner_reference(&*cm)]},
//!         "stringData": cm.data,
//!     });
//!     secrets.patch(cm.name(), &Patch::Apply(secret), &PatchOptions::apply("mirror")).await?;
//!     // Check again in an hour even if nothing changes.
//!     Ok(Action::requeue_after(Duration::from_secs(3600)))
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default()?;
//! let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
//! let controller = ControllerBuilder::new("configmap-mirror", &factory)
//!     .for_::<ConfigMap>()
//!     .with_predicate(Predicate::resource_version_changed())
//!     .owns::<Secret>()
//!     .workers(4)
//!     .reconcile(reconcile);
//! factory.start();
//!
//! let shutdown = CancellationToken::new(); // cancel it on SIGTERM (kclient::signal)
//! controller.run(Arc::new(Ctx { client }), shutdown).await?;
//! factory.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Compared with controller-runtime and kube-runtime
//!
//! | Feature | kclient-controller | controller-runtime (Go) | kube-runtime (Rust) |
//! |---|---|---|---|
//! | Primary resource | `for_::<K>()`; `for_dynamic(&ApiResource)` (reconciled as `Unstructured`); `for_metadata::<K>()` (as `PartialObjectMetadata`) | `For(&K{})`; `For(&unstructured.Unstructured{})`; `For(&K{}, builder.OnlyMetadata)` | `Controller::new(Api<K>, watcher::Config)`; `Controller::new_with(Api<DynamicObject>, cfg, ApiResource)`; `Controller::for_stream` over a metadata watcher (unstable feature) |
//! | Owned children | `owns::<C>()`: the controller owner of the primary's kind and group; `owns_dynamic(&ApiResource)` for a kind known at run time | `Owns(&C{})`, `Owns(&unstructured.Unstructured{})` | `owns(Api<C>, cfg)`, `owns_with` |
//! | Children cached as metadata only | `owns_metadata::<C>()` (the factory's metadata informer) | `Owns(&C{}, builder.OnlyMetadata)` | `owns` keeps no cache of children; `metadata_watcher` streams |
//! | Children not cached | `owns_uncached::<C>()`: a metadata watch keeping each child's owner only, started once the other caches have synced; workers start without waiting for it | none (a raw `source.Channel`) | `owns` (keeps nothing; a child deleted while the watch was down wakes no owner) |
//! | Other resources mapped to keys | `watches::<W>(fn(&W) -> Vec<ObjectRef>)`; `watches_metadata::<W>(fn(&PartialObjectMetadata) -> Vec<ObjectRef>)` from a metadata-only cache | `Watches(src, EnqueueRequestsFromMapFunc)`; `WatchesMetadata` | `watches(Api<W>, cfg, mapper)` |
//! | Keys from outside the cluster | `reconcile_on(Stream<ObjectRef>)`, `reconcile_all_on(Stream<()>)`; polled only while reconciling (leading), kept unread between terms | `WatchesRawSource(source.Channel(ch, handler))`, started with the controller | `reconcile_on` (unstable feature), `reconcile_all_on` |
//! | Informers | the `SharedInformerFactory`'s, shared with the rest of the program; a set of namespaces through a factory each (`with_factory`) | the manager's shared cache (`DefaultNamespaces` for a set of namespaces) | one watcher stream per controller (shareable with the `unstable-runtime` reflector sharing) |
//! | Predicates | generation, labels, annotations, resourceVersion changed; label selector; custom; `and`, `or`, `!` (`Not`), event kind by event kind; `with_event_filter(EventFilter)` for all the watches | the same set (`LabelSelectorPredicate` for the selector), `And`/`Or`/`Not`; `WithEventFilter` | `predicate_filter` on the primary stream (generation, labels, annotations, finalizers) |
//! | Reconcile signature | `async fn(Arc<K>, Arc<Ctx>) -> Result<Action, E>` | `Reconcile(ctx, Request) (Result, error)`: a key, the object read again by the user | `async fn(Arc<K>, Arc<Ctx>) -> Result<Action, E>` |
//! | Requeue after a delay | `Action::requeue_after(d)` (zero: done) | `Result{RequeueAfter: d}` (zero: done) | `Action::requeue(d)` (zero: at once) |
//! | Error backoff | rate-limited requeue: client-go's `DefaultControllerRateLimiter`, or with the priority queue the per-key exponential part alone; configurable | the same (`DefaultTypedControllerRateLimiter`; `ItemExponentialFailureRateLimiter` with the priority queue), configurable | `error_policy` returns an `Action` (no built-in backoff) |
//! | Reconcile timeout | `reconcile_timeout(d)`: the reconcile is cancelled and retried with backoff | `ReconciliationTimeout`: the reconcile's context is cancelled | none built in |
//! | Cache sync timeout | `cache_sync_timeout(d)` (2 min): `run` fails with `is_cache_sync()` | `CacheSyncTimeout` (2 min): the controller fails to start | none (waits) |
//! | Error policy hook | `error_policy(key, &err, retries, &ctx) -> Action` | none | `error_policy(obj, &err, ctx) -> Action` |
//! | Queue | client-go's rate-limited FIFO with a merge window (default); `priority_queue(true)`: controller-runtime's priority queue, initial list and unchanged resyncs at `LOW_PRIORITY` (-100), no merge window | the priority queue by default (`UsePriorityQueue`), `handler.LowPriority` (-100) for the same events; client-go's queue when turned off | a scheduler deduplicating pending keys, no priorities |
//! | Requeue priority | `Action::requeue_after(d).with_priority(p)`, else the priority the key was handed out with (priority queue only) | `Result{Priority: &p}`, same default | none |
//! | Concurrency | `workers(n)`; one key never twice at once (workqueue processing set) | `MaxConcurrentReconciles`; same workqueue guarantee | `Config::concurrency`; same key never concurrent (runner) |
//! | Deleted objects | `on_deleted(ObjectRef, ctx)`, or finalizers | `Reconcile` gets a key whose Get returns NotFound | not reconciled; finalizers |
//! | Finalizers | `finalizer(client, name, obj, fn(FinalizerEvent))` (`finalizer_dynamic` for `Unstructured` and metadata-only objects); conflict-safe merge patch with resourceVersion, retried; `add_finalizer`, `remove_finalizer`, `contains_finalizer` on any object in memory, typed or not | `controllerutil.AddFinalizer`/`RemoveFinalizer` + an Update | `finalizer(api, name, obj, fn(Event))`; JSON patch with `test` |
//! | Owner references | `set_controller_reference(&owner, &mut child)` (refuses a child another object controls: `is_already_owned()`; namespace checks), `set_owner_reference`, `remove_owner_reference`, `remove_controller_reference`, `has_owner_reference`, `has_controller_reference`; `owner_reference(&owner)` for the reference alone | `controllerutil.SetControllerReference` (`AlreadyOwnedError`), `SetOwnerReference`, `RemoveOwnerReference`, `RemoveControllerReference`, `HasOwnerReference`, `HasControllerReference` | `Resource::controller_owner_ref` / `owner_ref` (the reference alone, put in the child by hand) |
//! | Server-side apply of children | `apply_owned(client, manager, &owner, json)`: owner reference, namespace, apiVersion/kind filled in; `SetControllerReference`'s namespace checks | `client.Apply` / `Patch(obj, client.Apply)` + `SetControllerReference` | `Api::patch(Patch::Apply)` + `controller_owner_ref` |
//! | Events | `ControllerEvents::new(client, name).recorder()`: client-go's correlating `EventRecorder` (core/v1) | `mgr.GetEventRecorderFor(name)` | `Recorder` (events.k8s.io/v1) |
//! | Leader election | per controller, `leader_election(LeaderElectionConfig)`: reconciles only while leading, informers stay warm, keys pending when leadership is lost kept for the next term, stops reconciling before releasing; `HealthzAdaptor` as the config's `watch_dog`; or manager-wide with `manager::Manager` (`run` returns `is_leader_election_lost()`) | manager-wide `LeaderElection`; process exits when leadership is lost | none built in (external crates) |
//! | Graceful shutdown | token; stop intake, finish in-flight (drain the queue first with `drain_on_shutdown(true)`), all within a timeout (30 s), then cancel | context; the priority queue (default) hands out nothing more, client-go's queue hands out the rest with the context cancelled; `GracefulShutdownTimeout` (30 s) | `graceful_shutdown_on` / `shutdown_on_signal`: in-flight reconciles finish |
//! | Metrics | the workqueue's `MetricsProvider`: workqueue metrics + reconcile total by result, errors, panics, time histogram, active workers, max concurrent reconciles, timeouts, terminal errors (an error policy's `done`) | Prometheus: the same set (terminal errors: `TerminalError`) | none built in |
//! | Tracing | a `reconcile` span with `controller` and `key` | a logger with the request's key | a `reconciling object` span with `object.ref` |
//! | Several controllers, one process | `manager::Manager`: runnables (controllers, functions) over its factories, one election, ordered graceful shutdown | `manager.Manager` | none (join the futures) |
//! | Health and readiness probes | the manager's `/healthz`, `/readyz` (`pkg/healthz`'s answers), `informer-sync` and `leaderElection` checks built in | `AddHealthzCheck`, `AddReadyzCheck` | none built in |
//! | Metrics endpoint | the manager's `/metrics` from a `MetricsRenderer` (e.g. `kclient::metrics`'s registry) | the manager's metrics server | none built in |

mod action;
mod builder;
mod controller;
mod create_or_update;
mod error;
mod events;
mod finalizer;
mod leader;
pub mod manager;
mod metrics;
mod object_ref;
mod owner;
mod owner_track;
mod predicate;
mod queue;
mod runtime;
mod source;
mod trigger;

pub use crate::action::Action;
pub use crate::builder::{
    ControllerBuilder, DEFAULT_CACHE_SYNC_TIMEOUT, DEFAULT_SHUTDOWN_TIMEOUT, DEFAULT_WORKERS,
    NoPrimary,
};
pub use crate::controller::Controller;
pub use crate::create_or_update::{
    CreateOrUpdateError, OperationResult, create_or_patch, create_or_update,
};
pub use crate::error::Error;
pub use crate::events::ControllerEvents;
pub use crate::finalizer::{
    FinalizerError, FinalizerEvent, add_finalizer, contains_finalizer, finalizer,
    finalizer_dynamic, remove_finalizer,
};
pub use crate::object_ref::ObjectRef;
pub use crate::owner::{
    OwnerReferenceError, apply_owned, has_controller_reference, has_owner_reference,
    owner_reference, owner_reference_for, remove_controller_reference, remove_owner_reference,
    set_controller_reference, set_owner_reference,
};
pub use crate::predicate::{EventFilter, Predicate};
pub use crate::queue::LOW_PRIORITY;
