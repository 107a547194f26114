//! A sync in progress: the objects of a relist, or of a watch-list's initial events, on their
//! way into the reflector's store.
//!
//! A store that offers a [`Replacement`] gets each object as it arrives, so the reflector holds
//! none of them; any other store gets one `replace` with the whole list once the sync is
//! complete. [`Listing`] is the one place that chooses between the two, counts the objects
//! for the reflector's metrics, and keeps what the data consistency check compares.

use std::collections::HashMap;
use std::sync::Arc;

use kclient_apimachinery::Object;

use crate::object_key::{KeyHasher, object_key};
use crate::store::{ReflectorStore, Replacement};

/// The objects of one sync so far.
pub(crate) struct Listing<'s, K> {
    store: &'s dyn ReflectorStore<K>,
    sink: Sink<'s, K>,
    /// Key and resource version of each object, when the consistency check is on.
    received: Option<HashMap<String, String>>,
}

/// Where the objects go.
enum Sink<'s, K> {
    /// In the server's order, for the store's `replace` (a LIST names each object once).
    InOrder(Vec<Arc<K>>),
    /// By the store's key, for the store's `replace` (watch-list: a later event for a key
    /// takes the place of an earlier one, and a DELETED event removes it).
    ByKey(HashMap<String, Arc<K>, KeyHasher>),
    /// Straight into the store, counting inserts less removes (one key inserted twice counts
    /// twice; a sync names each object once).
    Steps(Box<dyn Replacement<K> + 's>, usize),
}

impl<'s, K: Object> Listing<'s, K> {
    /// Begins a sync into `store`. `by_key`: objects may repeat or be removed (watch-list);
    /// `check`: keep what the data consistency check needs.
    pub(crate) fn begin(store: &'s dyn ReflectorStore<K>, by_key: bool, check: bool) -> Self {
        let sink = match store.begin_replace() {
            Some(steps) => Sink::Steps(steps, 0),
            None if by_key => Sink::ByKey(HashMap::default()),
            None => Sink::InOrder(Vec::new()),
        };
        Listing {
            store,
            sink,
            received: check.then(HashMap::new),
        }
    }

    /// Abandons what was gathered and begins again (the list restarts from its start).
    pub(crate) fn restart(&mut self) {
        let by_key = matches!(self.sink, Sink::ByKey(_));
        // The store sees the old replacement abandoned before it is asked for a new one.
        self.sink = Sink::InOrder(Vec::new());
        *self = Listing::begin(self.store, by_key, self.received.is_some());
    }

    /// Room for `additional` more objects (a page is coming).
    pub(crate) fn reserve(&mut self, additional: usize) {
        if let Sink::InOrder(items) = &mut self.sink {
            items.reserve(additional);
        }
    }

    /// An object of the sync.
    pub(crate) fn add(&mut self, obj: Arc<K>) {
        if let Some(received) = &mut self.received {
            received.insert(object_key(obj.as_ref()), obj.resource_version().to_owned());
        }
        match &mut self.sink {
            Sink::InOrder(items) => items.push(obj),
            Sink::ByKey(objects) => {
                objects.insert(self.store.key_of(obj.as_ref()), obj);
            }
            Sink::Steps(steps, len) => {
                steps.insert(self.store.key_of(obj.as_ref()), obj);
                *len += 1;
            }
        }
    }

    /// `obj` is not part of the sync after all.
    pub(crate) fn remove(&mut self, obj: &K) {
        if let Some(received) = &mut self.received {
            received.remove(&object_key(obj));
        }
        let key = self.store.key_of(obj);
        match &mut self.sink {
            Sink::InOrder(items) => items.retain(|o| self.store.key_of(o.as_ref()) != key),
            Sink::ByKey(objects) => {
                objects.remove(&key);
            }
            Sink::Steps(steps, len) => {
                steps.remove(&key);
                *len = len.saturating_sub(1);
            }
        }
    }

    /// The objects so far.
    pub(crate) fn len(&self) -> usize {
        match &self.sink {
            Sink::InOrder(items) => items.len(),
            Sink::ByKey(objects) => objects.len(),
            Sink::Steps(_, len) => *len,
        }
    }

    /// Completes the sync at `resource_version`: the store now holds exactly its objects.
    /// Returns what the consistency check compares, when it is on.
    pub(crate) fn finish(self, resource_version: &str) -> Option<HashMap<String, String>> {
        match self.sink {
            Sink::InOrder(items) => self.store.replace(items, resource_version),
            Sink::ByKey(objects) => self
                .store
                .replace(objects.into_values().collect(), resource_version),
            Sink::Steps(steps, _) => steps.commit(resource_version),
        }
        self.received
    }
}
