//! The informer machinery, the counterpart of client-go's `tools/cache`: keep an in-memory,
//! indexed copy of one kind of Kubernetes object and tell handlers when it changes.
//!
//! This crate depends on `kclient-apimachinery` only. It knows nothing about HTTP: it sees the
//! API server through the [`ListerWatcher`] trait (list a page, open a watch), which the typed
//! and dynamic clients implement and tests fill from memory ([`ListWatch`]).
//!
//! # The pipeline
//!
//! ```text
//!   API server
//!       |  LIST (paginated) / WATCH (bookmarks, sendInitialEvents)
//!       v
//!  ListerWatcher  ---->  Reflector  ---->  DeltaFIFO  ---->  process loop  ---->  Indexer
//!                   (relist on 410,     (per-key Deltas,   (pop: apply to      (objects by key
//!                    backoff, resync)    tombstones on      the cache, then     + indexes;
//!                                        relist)            notify)             Listers read it)
//!                                                              |
//!                                        +---------------------+---------------------+
//!                                        v                     v                     v
//!                                 ProcessorListener     ProcessorListener     ProcessorListener
//!                                 (own buffer; run on   (own buffer; run on   (own buffer; run on
//!                                  the handler pool)     the handler pool)     the handler pool)
//!                                        |                     |                     |
//!                                 ResourceEventHandler  ResourceEventHandler  ResourceEventHandler
//!                                                                     (typically: add a key to
//!                                                                      a workqueue for workers)
//! ```
//!
//! [`SharedIndexInformer`] wires all of it: one [`Reflector`], one [`DeltaFIFO`], one
//! [`Indexer`], and one `ProcessorListener` per handler. [`Lister`]s read the indexer.
//! [`ListPager`] (client-go's `tools/pager`) is the reflector's way of listing, public for
//! anyone who lists large collections.
//!
//! # Guarantees
//!
//! - **The cache leads.** A change is in the [`Indexer`] before any handler hears of it.
//! - **Per-object order, no per-object loss.** Every change of an object reaches each handler
//!   in order; changes queued for one object while it waits are coalesced into one pop but all
//!   delivered. A delete the informer missed (the watch was down) arrives as a
//!   [`DeletedObject::Tombstone`] holding the last known state.
//! - **Handlers are isolated.** Each handler has its own unbounded buffer, delivered in order
//!   by one process-wide pool of threads (a few, plus one for each handler blocked at the
//!   moment): a slow handler delays only itself, never the reflector or the other handlers.
//! - **Late handlers catch up.** A handler added to a running informer first receives every
//!   cached object once, as an add with `is_in_initial_list = true`.
//! - **Synced means processed.** A registration's `has_synced` is true once the informer has
//!   synced and that handler has returned from every initial-list add.
//! - **Shared, not copied.** Objects are decoded once and shared as `Arc<K>` by the cache, the
//!   queue and every handler; an optional transform (such as dropping `managedFields`) runs
//!   once per object before it is shared.
//! - **Locks never wait on I/O.** Stores and queues are plain data behind `parking_lot` locks,
//!   never held across an `.await`.
//!
//! # Memory
//!
//! Each object is decoded once into an `Arc<K>` that the cache, the queue and every handler
//! share. Keys are shared too (`Arc<str>`), between the cache and its index sets and between
//! the DeltaFIFO's map and queue. A relist accumulates only the `Arc`s of its pages, and a
//! listed object that the cache already holds at the same resource version is swapped for
//! the cached `Arc` as its page arrives, so a relist holds a second copy only of what
//! changed. `examples/cache_memory.rs` measures the bookkeeping beyond the objects
//! (100,000 objects): about 97 B/object for an [`Indexer`] without indexes, 125 B/object with
//! the namespace index, and 186 B/object for a [`DeltaFIFO`] while it holds a full relist.
//!
//! # Changes
//!
//! Behaviour a user of an earlier version would notice:
//!
//! - **0.2: `DeltaFIFO::pop` re-queues only on [`ProcessError::Requeue`]** (client-go's
//!   `ErrRequeue`). It used to re-queue the deltas after any process error; a plain error now
//!   drops them, and the process function returns `Result<(), ProcessError<E>>`.
//! - **0.2: a relist re-delivers unchanged objects** to every handler that has not been
//!   through a resync check, i.e. to every handler when no resync period is set (client-go's
//!   rule). Only periodic resyncs and relisted objects at the cached version count as
//!   resyncs; a watch MODIFIED at the same version is an ordinary update.
//! - **0.2: resync rounds come one period after the previous check**, not on a fixed
//!   schedule that skipped rounds.
//! - **0.2: the reflector never retries without backing off**, reports every failure to the
//!   watch-error handler (not only failed rounds), and ends a watch whose event does not
//!   decode (it used to drop the event).
//!
//! # Example
//!
//! An informer over an in-memory source: two Pods listed, one added by the watch.
//!
//! ```
//! use std::sync::Arc;
//! use kclient_api::core::v1::Pod;
//! use kclient_apimachinery::{
//!     GroupResource, ListMeta, ListOptions, Object, ObjectList, Selector, WatchEvent,
//! };
//! use kclient_cache::{
//!     CancellationToken, ListWatch, Lister, ResourceEventHandlerFuncs, SharedIndexInformer,
//!     namespace_indexers, wait_for_cache_sync,
//! };
//! use futures_util::{StreamExt, stream};
//!
//! /// A Pod in `default` with one `app` label.
//! fn pod(name: &str, resource_version: &str, app: &str) -> Pod {
//!     let mut pod = Pod::default();
//!     pod.set_namespace("default");
//!     pod.set_name(name);
//!     pod.set_resource_version(resource_version);
//!     pod.metadata.labels.get_or_insert_default().insert("app", app.into());
//!     pod
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let lw = ListWatch::new(
//!     |_opts: ListOptions| async {
//!         Ok(ObjectList {
//!             metadata: ListMeta { resource_version: "10".into(), ..ListMeta::default() },
//!             items: vec![
//!                 pod("web-0", "8", "web"),
//!                 pod("db-0", "9", "db"),
//!             ],
//!         })
//!     },
//!     |_opts: ListOptions| async {
//!         let added = pod("web-1", "11", "web");
//!         // One event, then the watch stays open.
//!         Ok(stream::iter([Ok(WatchEvent::Added(added))]).chain(stream::pending()))
//!     },
//! )
//! .without_watch_list_semantics();
//!
//! let informer = SharedIndexInformer::new(Arc::new(lw), std::time::Duration::ZERO, namespace_indexers());
//! let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
//! let registration = informer
//!     .add_event_handler(ResourceEventHandlerFuncs::new().add_func(move |pod: &Arc<Pod>, _initial| {
//!         let _ = tx.send(pod.name().to_string());
//!     }))
//!     .unwrap();
//!
//! let cancel = CancellationToken::new();
//! let running = tokio::spawn({
//!     let (informer, cancel) = (informer.clone(), cancel.clone());
//!     async move { informer.run(cancel).await }
//! });
//! assert!(wait_for_cache_sync(&cancel, &[&informer, &registration]).await);
//!
//! let mut seen = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap(), rx.recv().await.unwrap()];
//! seen.sort();
//! assert_eq!(seen, ["db-0", "web-0", "web-1"]);
//!
//! let pods = Lister::new(informer.get_indexer(), GroupResource::new("", "pods"));
//! assert_eq!(pods.namespace("default").list(&Selector::parse("app=web").unwrap()).len(), 2);
//! assert!(pods.namespace("default").get("gone").unwrap_err().is_not_found());
//!
//! cancel.cancel();
//! running.await.unwrap();
//! # }
//! ```

mod delta_fifo;
mod done_signal;
mod error;
#[cfg(test)]
mod example_object;
mod handler;
mod handler_pool;
mod index;
mod indexer;
mod lister;
mod listing;
mod listwatch;
mod object_key;
mod pager;
mod processor_listener;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue_wakeup;
mod real_fifo;
mod reflector;
mod reflector_metrics;
#[cfg(test)]
mod scripted;
mod shared_informer;
mod shared_processor;
mod store;
mod synctrack;
mod thread_safe_store;
mod tombstone;

pub use delta_fifo::{
    Delta, DeltaFIFO, DeltaFIFOOptions, DeltaType, Deltas, PopError, ProcessError,
};
pub use error::Error;
pub use handler::{FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs};
pub use index::{
    IndexFunc, Indexers, NAMESPACE_INDEX, meta_namespace_index_func, namespace_indexers,
};
pub use indexer::Indexer;
pub use kclient_apimachinery::{meta_namespace_key, split_meta_namespace_key};
pub use kclient_flowcontrol::Backoff;
pub use lister::{Lister, NamespaceLister};
pub use listwatch::{ListWatch, ListerWatcher, WatchStream};
pub use object_key::KeyFunc;
pub use pager::{DEFAULT_PAGE_SIZE, ListPager, PagedList};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusReflectorMetrics;
pub use real_fifo::RealFIFO;
pub use reflector::{
    REFLECTOR_BACKOFF, Reflector, ReflectorOptions, ShouldResyncFunc, TransformFunc,
    WatchErrorHandler,
};
pub use reflector_metrics::{
    RELIST_ERROR, RELIST_EXPIRED, ReflectorMetricsProvider, set_reflector_metrics_provider,
};
pub use shared_informer::{
    InformerSynced, MINIMUM_RESYNC_PERIOD, ResourceEventHandlerRegistration, SharedIndexInformer,
    SharedIndexInformerOptions, wait_for_cache_sync, wait_for_cache_sync_blocking,
};
pub use store::{KeyListerGetter, ReflectorStore, Replacement, Store};
pub use thread_safe_store::ThreadSafeStore;
/// The stop signal of [`Reflector::run`] and [`SharedIndexInformer::run`] (re-exported from
/// `tokio-util`).
pub use tokio_util::sync::CancellationToken;
pub use tombstone::{DeletedFinalStateUnknown, DeletedObject};

#[cfg(test)]
mod send_sync {
    //! Compile-time checks that the public types can cross threads as intended.
    use super::*;
    use crate::example_object::Pod;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        send_sync::<SharedIndexInformer<Pod>>();
        send_sync::<Indexer<Pod>>();
        send_sync::<ThreadSafeStore<Pod>>();
        send_sync::<DeltaFIFO<Pod>>();
        send_sync::<Reflector<Pod>>();
        send_sync::<Lister<Pod>>();
        send_sync::<NamespaceLister<Pod>>();
        send_sync::<ListWatch<Pod>>();
        send_sync::<ResourceEventHandlerRegistration>();
        send_sync::<Deltas<Pod>>();
        send_sync::<DeletedObject<Pod>>();
        send_sync::<Error>();
        send::<ResourceEventHandlerFuncs<Pod>>();
    }

    #[test]
    fn run_futures_are_send() {
        fn future_is_send<F: std::future::Future + Send>(_: F) {}
        let lw: std::sync::Arc<dyn ListerWatcher<Pod>> = std::sync::Arc::new(ListWatch::new(
            |_| async { Ok(kclient_apimachinery::ObjectList::default()) },
            |_| async { Ok(futures_util::stream::empty()) },
        ));
        let informer = SharedIndexInformer::new(lw, std::time::Duration::ZERO, Indexers::new());
        future_is_send(informer.run(CancellationToken::new()));
    }
}
