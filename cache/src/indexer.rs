//! The informer's cache: objects by key plus named indexes (client-go's `Indexer`, built by
//! `NewIndexer`).
//!
//! An [`Indexer`] is a cheap handle (`Clone` shares the same cache). The informer is its only
//! writer; listers and handlers read it. Objects are `Arc<K>` so a read never copies an object.

use std::sync::Arc;

use kclient_apimachinery::Object;

use crate::error::Error;
use crate::index::Indexers;
use crate::object_key::KeyFunc;
use crate::store::{KeyListerGetter, ReflectorStore, Store};
use crate::thread_safe_store::ThreadSafeStore;

/// A thread-safe cache of `Arc<K>` keyed by `namespace/name` (or a [`KeyFunc`] of your own),
/// with named indexes.
///
/// ```
/// use std::sync::Arc;
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_cache::{Indexer, NAMESPACE_INDEX, namespace_indexers};
///
/// let indexer = Indexer::new(namespace_indexers::<Pod>());
/// indexer.add(Arc::new(pod("default", "web-0", "1")));
/// indexer.add(Arc::new(pod("kube-system", "dns", "2")));
/// assert_eq!(indexer.by_index(NAMESPACE_INDEX, "default").unwrap().len(), 1);
/// assert!(indexer.get_by_key("kube-system/dns").is_some());
/// ```
pub struct Indexer<K> {
    store: Arc<ThreadSafeStore<K>>,
    /// `None`: the default `namespace/name` key.
    key_func: Option<KeyFunc<K>>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Indexer {
            store: Arc::clone(&self.store),
            key_func: self.key_func.clone(),
        }
    }
}

impl<K> std::fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Indexer").field(&self.store).finish()
    }
}

impl<K: Object> Indexer<K> {
    /// An empty cache with the given index functions, keyed by `namespace/name`.
    pub fn new(indexers: Indexers<K>) -> Self {
        Indexer {
            store: Arc::new(ThreadSafeStore::new(indexers)),
            key_func: None,
        }
    }

    /// An empty cache keyed by `key_func` (client-go's `NewIndexer(keyFunc, indexers)`).
    pub fn with_key_func(indexers: Indexers<K>, key_func: KeyFunc<K>) -> Self {
        Indexer {
            store: Arc::new(ThreadSafeStore::new(indexers)),
            key_func: Some(key_func),
        }
    }

    /// The key this cache files `obj` under.
    pub fn key_of(&self, obj: &K) -> String {
        match &self.key_func {
            Some(key_func) => key_func(obj),
            None => kclient_apimachinery::meta_namespace_key(obj),
        }
    }

    /// Stores `obj` (or replaces the object with the same key).
    pub fn add(&self, obj: Arc<K>) {
        self.store.add(self.key_of(obj.as_ref()), obj);
    }

    /// Stores `obj`, replacing the object with the same key.
    pub fn update(&self, obj: Arc<K>) {
        self.store.update(self.key_of(obj.as_ref()), obj);
    }

    /// Removes the object with `obj`'s key, returning what was stored.
    pub fn delete(&self, obj: &K) -> Option<Arc<K>> {
        self.store.delete(&self.key_of(obj))
    }

    /// Removes the object under `key`, returning what was stored.
    pub fn delete_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.delete(key)
    }

    /// The stored object with `obj`'s key.
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.store.get(&self.key_of(obj))
    }

    /// The object under `key` (`namespace/name` or `name`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// Every object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Replaces the whole content with `list` and rebuilds the indexes.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        self.store.replace(
            list.into_iter().map(|obj| (self.key_of(obj.as_ref()), obj)),
            resource_version,
        );
    }

    /// The resource version of the last replace or bookmark.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.store.last_store_sync_resource_version()
    }

    /// The objects sharing at least one value of index `index_name` with `obj`.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, Error> {
        self.store.index(index_name, obj)
    }

    /// The objects filed under `value` in index `index_name`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.store.by_index(index_name, value)
    }

    /// The keys filed under `value` in index `index_name`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, Error> {
        self.store.index_keys(index_name, value)
    }

    /// Every value index `index_name` currently holds.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.store.list_index_func_values(index_name)
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.store.get_indexers()
    }

    /// Registers more index functions, indexing the objects already stored. A name that is
    /// already registered is an error and nothing is added.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.store.add_indexers(indexers)
    }
}

impl<K: Object> ReflectorStore<K> for Indexer<K> {
    fn add(&self, obj: Arc<K>) {
        Indexer::add(self, obj);
    }
    fn update(&self, obj: Arc<K>) {
        Indexer::update(self, obj);
    }
    fn delete(&self, obj: Arc<K>) {
        Indexer::delete(self, &obj);
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        Indexer::replace(self, list, resource_version);
    }
    fn resync(&self) {}
    fn bookmark(&self, resource_version: &str) {
        self.store.bookmark(resource_version);
    }
    fn get_known(&self, key: &str) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }
    fn key_of(&self, obj: &K) -> String {
        Indexer::key_of(self, obj)
    }
}

impl<K: Object> Store<K> for Indexer<K> {
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }
    fn list(&self) -> Vec<Arc<K>> {
        Indexer::list(self)
    }
    fn list_keys(&self) -> Vec<String> {
        Indexer::list_keys(self)
    }
}

impl<K: Object> KeyListerGetter<K> for Indexer<K> {
    fn list_keys(&self) -> Vec<String> {
        Indexer::list_keys(self)
    }
    fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        self.store.for_each_key(f);
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example_object::Pod;
    use crate::index::{NAMESPACE_INDEX, namespace_indexers};

    #[test]
    fn namespace_index_tracks_adds_updates_and_deletes() {
        let indexer = Indexer::new(namespace_indexers::<Pod>());
        indexer.add(Pod::arc("a", "one", "1"));
        indexer.add(Pod::arc("b", "two", "1"));
        indexer.add(Pod::arc("", "cluster", "1"));
        assert_eq!(indexer.by_index(NAMESPACE_INDEX, "a").unwrap().len(), 1);
        assert_eq!(
            indexer.index_keys(NAMESPACE_INDEX, "").unwrap(),
            vec!["cluster"]
        );
        indexer.update(Pod::arc("a", "one", "2"));
        assert_eq!(
            indexer.by_index(NAMESPACE_INDEX, "a").unwrap()[0].resource_version,
            "2"
        );
        indexer.delete(&Pod::new("a", "one"));
        assert!(indexer.by_index(NAMESPACE_INDEX, "a").unwrap().is_empty());
        let mut values = indexer.list_index_func_values(NAMESPACE_INDEX);
        values.sort();
        assert_eq!(values, vec!["", "b"]);
        assert_eq!(indexer.len(), 2);
    }
}
