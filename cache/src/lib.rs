//! The informer machinery, the counterpart of client-go's `tools/cache`.
//!
//! Depends on `apimachinery` only: it knows nothing about HTTP and sees the API server through
//! a `ListerWatcher` trait that client crates implement.

mod backoff;
mod delta_fifo;
mod done_signal;
mod error;
mod example_object;
mod handler;
mod index;
mod indexer;
mod lister;
mod listwatch;
mod object_key;
mod processor_listener;
mod reflector;
#[cfg(test)]
mod scripted;
mod shared_informer;
mod shared_processor;
mod store;
mod synctrack;
mod thread_safe_store;
mod tombstone;

pub use backoff::Backoff;
pub use delta_fifo::{Delta, DeltaFIFO, DeltaFIFOOptions, DeltaType, Deltas, PopError};
pub use error::Error;
pub use handler::{FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs};
pub use index::{
    IndexFunc, Indexers, NAMESPACE_INDEX, meta_namespace_index_func, namespace_indexers,
};
pub use indexer::Indexer;
pub use lister::{Lister, NamespaceLister};
pub use listwatch::{ListWatch, ListerWatcher, WatchStream};
pub use reflector::{
    DEFAULT_PAGE_SIZE, Reflector, ReflectorOptions, ShouldResyncFunc, TransformFunc,
    WatchErrorHandler,
};
pub use shared_informer::{
    InformerSynced, MINIMUM_RESYNC_PERIOD, ResourceEventHandlerRegistration, SharedIndexInformer,
    SharedIndexInformerOptions, wait_for_cache_sync, wait_for_cache_sync_blocking,
};
pub use store::{KeyListerGetter, ReflectorStore, Store};
pub use thread_safe_store::ThreadSafeStore;
pub use tombstone::{DeletedFinalStateUnknown, DeletedObject};

#[doc(hidden)]
pub mod __doc {
    pub use crate::example_object::Pod;
}
