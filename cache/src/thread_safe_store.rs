//! A key-addressed map of `Arc<K>` with secondary indexes, safe to share between threads
//! (client-go's `ThreadSafeStore`).
//!
//! Callers supply the key; [`Indexer`](crate::Indexer) is the object-addressed wrapper the
//! informers use. Reads return `Arc<K>` clones, never copies of objects. Every write keeps all
//! indexes consistent with the items under one write lock, so a reader never sees an index entry
//! for an object that is not stored, or a stored object missing from an index.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::Error;
use crate::index::{IndexFunc, Indexers};
use crate::object_key::KeyHasher;

/// A stored key, shared by the item map and every index set.
type Key = Arc<str>;

/// One index: index value -> keys filed under it.
type Index = HashMap<String, HashSet<Key, KeyHasher>, KeyHasher>;

/// A thread-safe, key-addressed store of `Arc<K>` with named indexes.
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
/// # fn on_node(mut pod: Pod, node: &str) -> Pod {
/// #     pod.spec.get_or_insert_default().node_name = Some(node.into());
/// #     pod
/// # }
/// use kclient_cache::{Indexers, ThreadSafeStore};
///
/// let indexers = Indexers::<Pod>::new().with("byNode", |pod: &Pod| {
///     let node = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref());
///     node.map(|node| vec![node.to_string()]).unwrap_or_default()
/// });
/// let store = ThreadSafeStore::new(indexers);
/// store.add("default/web".into(), Arc::new(on_node(pod("default", "web", "1"), "n1")));
/// assert_eq!(store.index_keys("byNode", "n1").unwrap(), ["default/web"]);
/// ```
pub struct ThreadSafeStore<K> {
    inner: RwLock<Inner<K>>,
}

struct Inner<K> {
    /// Objects by key. Keys are shared `Arc<str>`s: index sets hold the same allocation.
    items: HashMap<Key, Arc<K>, KeyHasher>,
    index: StoreIndex<K>,
    resource_version: String,
}

/// The index functions and, per index name, index value -> set of keys.
struct StoreIndex<K> {
    indexers: Indexers<K>,
    indices: HashMap<String, Index, KeyHasher>,
}

impl<K> StoreIndex<K> {
    /// Moves `key` from the index values of `old` to those of `new`, in every index.
    fn update(&mut self, old: Option<&K>, new: Option<&K>, key: &Key) {
        for (name, index_func) in &self.indexers {
            let index = self.indices.entry(name.clone()).or_default();
            update_one(index, index_func, old, new, key);
        }
    }

    /// Builds the index `name` from scratch over `items`.
    fn build<'a>(
        &mut self,
        name: &str,
        index_func: &IndexFunc<K>,
        items: impl Iterator<Item = (&'a Key, &'a Arc<K>)>,
    ) where
        K: 'a,
    {
        let mut index = Index::default();
        for (key, obj) in items {
            for value in index_func(obj) {
                index.entry(value).or_default().insert(key.clone());
            }
        }
        self.indices.insert(name.to_owned(), index);
    }
}

fn update_one<K>(
    index: &mut Index,
    index_func: &IndexFunc<K>,
    old: Option<&K>,
    new: Option<&K>,
    key: &Key,
) {
    let old_values = old.map(|o| index_func(o)).unwrap_or_default();
    let new_values = new.map(|n| index_func(n)).unwrap_or_default();
    // The common case: one value that did not change. Nothing to do.
    if old_values.len() == 1 && new_values.len() == 1 && old_values[0] == new_values[0] {
        return;
    }
    for value in &old_values {
        if let Some(set) = index.get_mut(value) {
            set.remove(&**key);
            if set.is_empty() {
                // Drop empty sets so indexes of short-lived values do not grow forever.
                index.remove(value);
            }
        }
    }
    for value in new_values {
        index.entry(value).or_default().insert(Arc::clone(key));
    }
}

impl<K> ThreadSafeStore<K> {
    /// An empty store with the given index functions.
    pub fn new(indexers: Indexers<K>) -> Self {
        let indices = indexers
            .keys()
            .map(|name| (name.clone(), Index::default()))
            .collect();
        ThreadSafeStore {
            inner: RwLock::new(Inner {
                items: HashMap::default(),
                index: StoreIndex { indexers, indices },
                resource_version: String::new(),
            }),
        }
    }

    /// Stores `obj` under `key`, replacing any object there (same as [`update`](Self::update)).
    pub fn add(&self, key: String, obj: Arc<K>) {
        self.update(key, obj);
    }

    /// Stores `obj` under `key` and moves it between index values as needed.
    pub fn update(&self, key: String, obj: Arc<K>) {
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        let (key, old) = match inner.items.get_key_value(key.as_str()) {
            Some((shared, old)) => (Arc::clone(shared), Some(Arc::clone(old))),
            None => (Key::from(key), None),
        };
        inner.index.update(old.as_deref(), Some(&obj), &key);
        inner.items.insert(key, obj);
    }

    /// Removes the object under `key` (a no-op if there is none), returning it.
    pub fn delete(&self, key: &str) -> Option<Arc<K>> {
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        let (key, old) = inner.items.remove_entry(key)?;
        inner.index.update(Some(&old), None, &key);
        Some(old)
    }

    /// The object under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.values().cloned().collect()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.inner
            .read()
            .items
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    /// Calls `f` with every key under the read lock; `f` must not call back into the store.
    pub(crate) fn for_each_key(&self, f: &mut dyn FnMut(&str)) {
        for key in self.inner.read().items.keys() {
            f(key);
        }
    }

    /// The number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces every item with `items` and rebuilds every index. `resource_version` is the
    /// version of the list the items came from.
    pub fn replace(
        &self,
        items: impl IntoIterator<Item = (String, Arc<K>)>,
        resource_version: &str,
    ) {
        let items: HashMap<Key, Arc<K>, KeyHasher> =
            items.into_iter().map(|(k, o)| (Key::from(k), o)).collect();
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        // Drop the old items first: each old object is freed as soon as no handler holds it.
        inner.items = items;
        let indexers: Vec<(String, IndexFunc<K>)> = inner
            .index
            .indexers
            .iter()
            .map(|(n, f)| (n.clone(), Arc::clone(f)))
            .collect();
        for (name, index_func) in indexers {
            inner.index.build(&name, &index_func, inner.items.iter());
        }
        inner.resource_version = resource_version.to_owned();
    }

    /// Records the resource version a watch bookmark reported (client-go's `Bookmark`).
    pub fn bookmark(&self, resource_version: &str) {
        self.inner.write().resource_version = resource_version.to_owned();
    }

    /// The resource version of the last replace or bookmark.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.inner.read().resource_version.clone()
    }

    /// The objects that share at least one value of index `index_name` with `obj` (the union
    /// over `obj`'s values).
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, Error> {
        let inner = self.inner.read();
        let index_func = inner
            .index
            .indexers
            .get(index_name)
            .ok_or_else(|| Error::index_not_found(index_name))?;
        let values = index_func(obj);
        let Some(index) = inner.index.indices.get(index_name) else {
            return Ok(Vec::new());
        };
        let mut keys: HashSet<&Key> = HashSet::new();
        for value in &values {
            if let Some(set) = index.get(value) {
                keys.extend(set.iter());
            }
        }
        Ok(keys
            .into_iter()
            .filter_map(|k| inner.items.get(k).cloned())
            .collect())
    }

    /// The objects filed under `value` in index `index_name`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        let inner = self.inner.read();
        if !inner.index.indexers.contains_key(index_name) {
            return Err(Error::index_not_found(index_name));
        }
        let keys = inner
            .index
            .indices
            .get(index_name)
            .and_then(|index| index.get(value));
        Ok(keys
            .map(|set| {
                set.iter()
                    .filter_map(|k| inner.items.get(k).cloned())
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The keys filed under `value` in index `index_name`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, Error> {
        let inner = self.inner.read();
        if !inner.index.indexers.contains_key(index_name) {
            return Err(Error::index_not_found(index_name));
        }
        let keys = inner
            .index
            .indices
            .get(index_name)
            .and_then(|index| index.get(value));
        Ok(keys
            .map(|set| set.iter().map(|k| k.to_string()).collect())
            .unwrap_or_default())
    }

    /// Every value that index `index_name` currently holds (empty for an unknown index).
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        let inner = self.inner.read();
        inner
            .index
            .indices
            .get(index_name)
            .map(|index| index.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.inner.read().index.indexers.clone()
    }

    /// Registers more index functions and indexes the objects already stored. Fails, adding
    /// none, if any name is already registered.
    pub fn add_indexers(&self, new_indexers: Indexers<K>) -> Result<(), Error> {
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        let conflicts: Vec<String> = new_indexers
            .keys()
            .filter(|name| inner.index.indexers.contains_key(*name))
            .cloned()
            .collect();
        if !conflicts.is_empty() {
            return Err(Error::indexer_conflict(conflicts));
        }
        for (name, index_func) in new_indexers {
            inner.index.build(&name, &index_func, inner.items.iter());
            inner.index.indexers.insert(name, index_func);
        }
        Ok(())
    }
}

impl<K> std::fmt::Debug for ThreadSafeStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("ThreadSafeStore")
            .field("items", &inner.items.len())
            .field("indexers", &inner.index.indexers.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Item {
        owners: Vec<&'static str>,
    }

    fn by_owner() -> Indexers<Item> {
        let mut indexers: Indexers<Item> = Indexers::new();
        indexers.insert(
            "byOwner".into(),
            Arc::new(|i: &Item| i.owners.iter().map(|s| s.to_string()).collect()),
        );
        indexers
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    #[test]
    fn index_follows_updates_from_one_value_to_several_and_back() {
        let store = ThreadSafeStore::new(by_owner());
        store.add("k".into(), Arc::new(Item { owners: vec!["a"] }));
        assert_eq!(store.index_keys("byOwner", "a").unwrap(), vec!["k"]);

        store.update(
            "k".into(),
            Arc::new(Item {
                owners: vec!["a", "b"],
            }),
        );
        assert_eq!(store.index_keys("byOwner", "a").unwrap(), vec!["k"]);
        assert_eq!(store.index_keys("byOwner", "b").unwrap(), vec!["k"]);

        store.update("k".into(), Arc::new(Item { owners: vec!["b"] }));
        assert!(store.index_keys("byOwner", "a").unwrap().is_empty());
        assert_eq!(sorted(store.list_index_func_values("byOwner")), vec!["b"]);

        store.delete("k");
        assert!(store.index_keys("byOwner", "b").unwrap().is_empty());
        assert!(store.list_index_func_values("byOwner").is_empty());
    }

    #[test]
    fn index_is_the_union_over_the_objects_values() {
        let store = ThreadSafeStore::new(by_owner());
        store.add("x".into(), Arc::new(Item { owners: vec!["a"] }));
        store.add("y".into(), Arc::new(Item { owners: vec!["b"] }));
        store.add("z".into(), Arc::new(Item { owners: vec!["c"] }));
        let found = store
            .index(
                "byOwner",
                &Item {
                    owners: vec!["a", "b"],
                },
            )
            .unwrap();
        assert_eq!(found.len(), 2);
        assert!(
            store
                .index("nope", &Item { owners: vec![] })
                .unwrap_err()
                .is_index_not_found()
        );
        assert!(
            store
                .by_index("nope", "a")
                .unwrap_err()
                .is_index_not_found()
        );
        assert_eq!(store.by_index("byOwner", "c").unwrap()[0].owners, vec!["c"]);
    }

    #[test]
    fn replace_rebuilds_indexes() {
        let store = ThreadSafeStore::new(by_owner());
        store.add("old".into(), Arc::new(Item { owners: vec!["a"] }));
        store.replace(
            [("new".to_string(), Arc::new(Item { owners: vec!["b"] }))],
            "7",
        );
        assert_eq!(store.list_keys(), vec!["new"]);
        assert!(store.index_keys("byOwner", "a").unwrap().is_empty());
        assert_eq!(store.index_keys("byOwner", "b").unwrap(), vec!["new"]);
        assert_eq!(store.last_store_sync_resource_version(), "7");
    }

    #[test]
    fn add_indexers_indexes_existing_items_and_rejects_conflicts() {
        let store = ThreadSafeStore::new(Indexers::new());
        store.add("k".into(), Arc::new(Item { owners: vec!["a"] }));
        store.add_indexers(by_owner()).unwrap();
        assert_eq!(store.index_keys("byOwner", "a").unwrap(), vec!["k"]);
        let err = store.add_indexers(by_owner()).unwrap_err();
        assert!(err.is_indexer_conflict());
        assert_eq!(err.to_string(), "indexer conflict: byOwner");
        assert!(store.get_indexers().contains_key("byOwner"));
    }
}
