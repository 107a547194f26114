//! What a delete notification carries: the deleted object, or a tombstone when the delete was
//! inferred from a relist (client-go's `DeletedFinalStateUnknown` and `DeletedObject[T]`).
//!
//! When a watch is broken and the relist no longer contains an object, the informer never saw
//! the DELETE event: it only knows the object is gone. Its final state is unknown, so handlers
//! receive a [`DeletedFinalStateUnknown`] holding the key and the last state the cache knew (if
//! any). In Go a handler must type-assert to tell the two apart; here it is an enum.

use std::sync::Arc;

use kclient_apimachinery::Object;

use crate::object_key::object_key;

/// A tombstone: the object under `key` was deleted while the watch was down, and `obj` is the
/// last state the cache held for it (the newest queued one, else the stored one, else none).
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K: ?Sized> {
    /// The store key (`namespace/name` or `name`) of the deleted object.
    pub key: String,
    /// The last known state of the object, possibly stale; `None` if the cache never had it.
    pub obj: Option<Arc<K>>,
}

impl<K: ?Sized> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        DeletedFinalStateUnknown {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// The payload of a delete: the object as last seen, or a tombstone.
#[derive(Debug)]
pub enum DeletedObject<K: ?Sized> {
    /// The object from the DELETE watch event (its final state).
    Object(Arc<K>),
    /// The delete was inferred from a relist; the final state is unknown.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K: ?Sized> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            DeletedObject::Object(obj) => DeletedObject::Object(Arc::clone(obj)),
            DeletedObject::Tombstone(t) => DeletedObject::Tombstone(t.clone()),
        }
    }
}

impl<K: Object + ?Sized> DeletedObject<K> {
    /// The default store key (`namespace/name`) of the deleted object, or a tombstone's key as
    /// recorded. A pipeline whose `DeltaFIFO` has a key function of its own keys objects with
    /// its `key_of` instead.
    pub fn key(&self) -> String {
        match self {
            DeletedObject::Object(obj) => object_key(obj.as_ref()),
            DeletedObject::Tombstone(t) => t.key.clone(),
        }
    }
}

impl<K: ?Sized> DeletedObject<K> {
    /// The last known state: the object itself, or the tombstone's object if it has one.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeletedObject::Object(obj) => Some(obj),
            DeletedObject::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// Whether this delete was inferred from a relist rather than seen as a watch event.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeletedObject::Tombstone(_))
    }
}
