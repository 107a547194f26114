//! The store traits: what a [`Reflector`](crate::Reflector) writes into
//! ([`ReflectorStore`]), what a client reads from ([`Store`]) and what a
//! [`DeltaFIFO`](crate::DeltaFIFO) consults to know which objects exist ([`KeyListerGetter`]).
//!
//! client-go's `store.go` interfaces. Objects go in and out as `Arc<K>`; keys are
//! `namespace/name` or `name`, unless a store was given its own [`KeyFunc`](crate::KeyFunc). No method fails: keys come from the object's metadata and every
//! store here is in memory.

use std::sync::Arc;

use kclient_apimachinery::{Object, meta_namespace_key};

/// The write side a [`Reflector`](crate::Reflector) feeds: watch events and relists.
///
/// Implemented by the [`DeltaFIFO`](crate::DeltaFIFO) (the informer pipeline) and by the
/// [`Indexer`](crate::Indexer) (a reflector writing straight into a cache, with no handlers).
pub trait ReflectorStore<K>: Send + Sync {
    /// An ADDED event.
    fn add(&self, obj: Arc<K>);
    /// A MODIFIED event.
    fn update(&self, obj: Arc<K>);
    /// A DELETED event, with the object's final state.
    fn delete(&self, obj: Arc<K>);
    /// A complete list at `resource_version`: the store now holds exactly `list`.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str);
    /// A periodic resync (client-go's `Resync`): re-deliver what is known. A no-op for plain
    /// stores.
    fn resync(&self);
    /// A watch bookmark at `resource_version`: no object changed. The default ignores it.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// A [`Replacement`] that takes the next sync's objects one by one as they arrive,
    /// instead of a [`replace`](Self::replace) with all of them at the end.
    ///
    /// For a store that keeps only a little of each object (an owner's key, a count): the
    /// reflector then never holds a whole sync, and its memory during a relist follows what
    /// the store keeps rather than the size of the list. The default, `None`, has the
    /// reflector gather the sync and call `replace`, as client-go's does.
    fn begin_replace(&self) -> Option<Box<dyn Replacement<K> + '_>> {
        None
    }

    /// The object the store (or its consumer) already holds under `key`, if it can tell.
    ///
    /// A reflector uses it while relisting: a listed object whose resource version equals the
    /// known one is the same object, so the known `Arc` is kept and the fresh copy freed at
    /// once. A relist then costs memory only for the objects that changed. The default knows
    /// nothing.
    fn get_known(&self, key: &str) -> Option<Arc<K>> {
        let _ = key;
        None
    }

    /// The key the store files `obj` under; the default is `namespace/name` (a store with a
    /// custom [`KeyFunc`](crate::KeyFunc) says its own).
    fn key_of(&self, obj: &K) -> String
    where
        K: Object,
    {
        meta_namespace_key(obj)
    }
}

/// A sync (a relist, or a watch-list's initial events) handed to a store object by object;
/// see [`ReflectorStore::begin_replace`].
///
/// Dropped without [`commit`](Self::commit), it is abandoned: the list failed, the store keeps
/// what it had, and the reflector begins another when it lists again.
pub trait Replacement<K>: Send {
    /// An object of the sync, under the store's key for it; a later object under the same key
    /// takes its place.
    fn insert(&mut self, key: String, obj: Arc<K>);
    /// The object under `key` is not part of the sync after all (a DELETED event among a
    /// watch-list's initial events).
    fn remove(&mut self, key: &str);
    /// The sync is complete at `resource_version`: the store now holds exactly what was
    /// inserted and not removed, as after [`ReflectorStore::replace`] with that list.
    fn commit(self: Box<Self>, resource_version: &str);
}

/// A readable store of objects by key (client-go's `Store`).
pub trait Store<K>: ReflectorStore<K> {
    /// The object under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;
    /// Every object, in no particular order.
    fn list(&self) -> Vec<Arc<K>>;
    /// Every key, in no particular order.
    fn list_keys(&self) -> Vec<String>;
}

/// What a [`DeltaFIFO`](crate::DeltaFIFO) needs to know about the objects its consumer already
/// has (client-go's `KeyListerGetter`): normally the informer's [`Indexer`](crate::Indexer).
pub trait KeyListerGetter<K>: Send + Sync {
    /// Every known key.
    fn list_keys(&self) -> Vec<String>;
    /// The known object under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;

    /// Calls `f` with every known key, without collecting them. `f` must not call back into
    /// this store. The default iterates [`list_keys`](Self::list_keys).
    fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        for key in self.list_keys() {
            f(&key);
        }
    }
}
