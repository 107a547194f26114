//! The RealFIFO: an in-order queue of single deltas, client-go's newer alternative to the
//! [`DeltaFIFO`](crate::DeltaFIFO) (`the_real_fifo.go`, non-atomic mode).
//!
//! Where the DeltaFIFO files changes per key (a key is served once, with all its changes),
//! the RealFIFO keeps every change in arrival order and serves them one by one: a consumer
//! sees changes across objects in the order the watch delivered them.
//!
//! The full semantics are documented on [`RealFIFO`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use kclient_apimachinery::Object;
use parking_lot::Mutex;

use crate::delta_fifo::{Delta, Deltas, PopError, ProcessError};
use crate::done_signal::DoneSignal;
use crate::object_key::object_key;
use crate::queue_wakeup::{PopState, QueueWakeup};
use crate::store::{KeyListerGetter, ReflectorStore};
use crate::tombstone::{DeletedFinalStateUnknown, DeletedObject};

/// An in-order queue of deltas (client-go's `RealFIFO` without atomic events).
///
/// - Every add, update and delete is queued as one [`Delta`], in order; nothing is coalesced
///   and a delete is always queued.
/// - [`replace`](RealFIFO::replace) queues tombstones first (for queued keys missing from the
///   list whose last queued change is not a delete, holding that last state; then for known
///   keys missing from the list and not queued, holding the known state), then one
///   [`Delta::Replaced`] per listed object, in list order.
/// - [`resync`](RealFIFO::resync) queues a [`Delta::Sync`] for each known key that has nothing
///   queued.
/// - [`pop_blocking`](RealFIFO::pop_blocking) serves one delta (as a one-element [`Deltas`]) and runs the
///   process function under the queue lock; a failure is returned and nothing is re-queued,
///   not even on [`ProcessError::Requeue`] (client-go's RealFIFO ignores `ErrRequeue` too:
///   re-queueing one delta would break the arrival order).
/// - [`has_synced`](RealFIFO::has_synced) turns true once every delta queued by the first
///   replace has been popped **and processed** (the DeltaFIFO counts before processing).
///
/// # Example
///
/// ```
/// use std::convert::Infallible;
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
/// use kclient_cache::{Indexer, Indexers, ProcessError, RealFIFO};
///
/// let cache = Indexer::<Pod>::new(Indexers::new());
/// let fifo = RealFIFO::new(Arc::new(cache));
/// fifo.add(Arc::new(pod("default", "web", "1")));
/// fifo.add(Arc::new(pod("default", "db", "2")));
/// fifo.update(Arc::new(pod("default", "web", "3")));
///
/// // One change per pop, in arrival order.
/// let mut order = Vec::new();
/// while !fifo.is_empty() {
///     let d = fifo.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(())).unwrap();
///     order.push(d.newest().unwrap().object().unwrap().resource_version().to_string());
/// }
/// assert_eq!(order, ["1", "2", "3"]);
/// ```
pub struct RealFIFO<K> {
    state: Mutex<State<K>>,
    wakeup: QueueWakeup,
    known_objects: Arc<dyn KeyListerGetter<K>>,
    synced: DoneSignal,
}

struct State<K> {
    items: VecDeque<Delta<K>>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
}

impl<K> PopState for State<K> {
    fn has_item(&self) -> bool {
        !self.items.is_empty()
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}

impl<K: Object> RealFIFO<K> {
    /// An empty queue; `known_objects` is the consumer's cache (required, as in client-go's
    /// non-atomic mode).
    pub fn new(known_objects: Arc<dyn KeyListerGetter<K>>) -> Self {
        RealFIFO {
            state: Mutex::new(State {
                items: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
            }),
            wakeup: QueueWakeup::new(),
            known_objects,
            synced: DoneSignal::new(),
        }
    }

    /// Queues a [`Delta::Added`].
    pub fn add(&self, obj: Arc<K>) {
        self.push_populating(Delta::Added(obj));
    }

    /// Queues a [`Delta::Updated`].
    pub fn update(&self, obj: Arc<K>) {
        self.push_populating(Delta::Updated(obj));
    }

    /// Queues a [`Delta::Deleted`].
    pub fn delete(&self, obj: Arc<K>) {
        self.push_populating(Delta::Deleted(DeletedObject::Object(obj)));
    }

    /// Queues the deletions and replacements that make the consumer match `list`.
    pub fn replace(&self, list: Vec<Arc<K>>, _resource_version: &str) {
        let mut state = self.state.lock();
        let new_keys: HashSet<String> = list.iter().map(|o| object_key(o.as_ref())).collect();

        // The last queued delta of each queued key, keys in first-queued order.
        let mut queued_order: Vec<String> = Vec::new();
        let mut last_queued: HashMap<String, &Delta<K>> = HashMap::new();
        for delta in &state.items {
            let key = delta.key();
            if !last_queued.contains_key(&key) {
                queued_order.push(key.clone());
            }
            last_queued.insert(key, delta);
        }
        let mut tombstones: Vec<DeletedFinalStateUnknown<K>> = Vec::new();
        for key in &queued_order {
            if new_keys.contains(key) {
                continue;
            }
            let last = last_queued[key];
            if matches!(last, Delta::Deleted(_)) {
                continue;
            }
            tombstones.push(DeletedFinalStateUnknown {
                key: key.clone(),
                obj: last.object().cloned(),
            });
        }
        for key in self.known_objects.list_keys() {
            if new_keys.contains(&key) || last_queued.contains_key(&key) {
                continue;
            }
            let obj = self.known_objects.get_by_key(&key);
            tombstones.push(DeletedFinalStateUnknown { key, obj });
        }
        for tombstone in tombstones {
            state
                .items
                .push_back(Delta::Deleted(DeletedObject::Tombstone(tombstone)));
        }
        for obj in list {
            state.items.push_back(Delta::Replaced(obj));
        }
        if !state.populated {
            state.populated = true;
            state.initial_population_count = state.items.len();
            self.check_synced(&state);
        }
        drop(state);
        self.wake_all();
    }

    /// Queues a [`Delta::Sync`] for every known key with nothing queued.
    pub fn resync(&self) {
        let mut state = self.state.lock();
        let queued: HashSet<String> = state.items.iter().map(Delta::key).collect();
        for key in self.known_objects.list_keys() {
            if queued.contains(&key) {
                continue;
            }
            if let Some(obj) = self.known_objects.get_by_key(&key) {
                state.items.push_back(Delta::Sync(obj));
            }
        }
        drop(state);
        self.wake_all();
    }

    /// Closes the queue: pops drain what is left, then return [`PopError::Closed`].
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Whether every delta of the first replace has been popped and processed.
    pub fn has_synced(&self) -> bool {
        self.synced.is_set()
    }

    pub(crate) fn synced_signal(&self) -> &DoneSignal {
        &self.synced
    }

    /// The number of queued deltas.
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits, without blocking the thread, until a delta is queued, pops it and runs
    /// `process(deltas, is_in_initial_list)` under the queue lock. Cancel-safe: a future
    /// dropped before it completes pops nothing.
    pub async fn pop<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        self.wakeup
            .pop(&self.state, |state| self.pop_locked(state, process))
            .await
    }

    /// [`pop`](Self::pop), blocking the thread until a delta is queued: for a consumer on a thread
    /// of its own.
    ///
    /// # Panics
    ///
    /// When called on the thread that drives a current-thread tokio runtime, where waiting
    /// would hang it; the message says to await [`pop`](Self::pop) instead.
    pub fn pop_blocking<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        self.wakeup.pop_blocking(
            &self.state,
            |state| self.pop_locked(state, process),
            "RealFIFO::pop_blocking",
            "RealFIFO::pop(..).await",
        )
    }

    fn pop_locked<E>(
        &self,
        state: &mut State<K>,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        let is_in_initial_list = !self.synced.is_set();
        let Some(delta) = state.items.pop_front() else {
            return Err(PopError::Closed);
        };
        let deltas = Deltas::from_vec(vec![delta]);
        let result = process(&deltas, is_in_initial_list);
        // Counted after processing, unlike the DeltaFIFO.
        if state.initial_population_count > 0 {
            state.initial_population_count -= 1;
            self.check_synced(state);
        }
        result
            .map(|()| deltas)
            .map_err(|e| PopError::Process(e.into_inner()))
    }

    fn push_populating(&self, delta: Delta<K>) {
        let mut state = self.state.lock();
        state.populated = true;
        self.check_synced(&state);
        state.items.push_back(delta);
        drop(state);
        self.wake_all();
    }

    fn check_synced(&self, state: &State<K>) {
        if state.populated && state.initial_population_count == 0 {
            self.synced.set();
        }
    }

    fn wake_all(&self) {
        self.wakeup.wake_all();
    }
}

impl<K: Object> ReflectorStore<K> for RealFIFO<K> {
    fn add(&self, obj: Arc<K>) {
        RealFIFO::add(self, obj);
    }
    fn update(&self, obj: Arc<K>) {
        RealFIFO::update(self, obj);
    }
    fn delete(&self, obj: Arc<K>) {
        RealFIFO::delete(self, obj);
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        RealFIFO::replace(self, list, resource_version);
    }
    fn resync(&self) {
        RealFIFO::resync(self);
    }
    fn get_known(&self, key: &str) -> Option<Arc<K>> {
        self.known_objects.get_by_key(key)
    }
}

impl<K> fmt::Debug for RealFIFO<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("RealFIFO")
            .field("queued", &state.items.len())
            .field("closed", &state.closed)
            .field("synced", &self.synced.is_set())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;
    use crate::delta_fifo::DeltaType;
    use crate::example_object::Pod;
    use crate::index::Indexers;
    use crate::indexer::Indexer;

    fn fifo(known: &Indexer<Pod>) -> RealFIFO<Pod> {
        RealFIFO::new(Arc::new(known.clone()))
    }

    fn drain(f: &RealFIFO<Pod>) -> Vec<(DeltaType, String, String)> {
        let mut out = Vec::new();
        while !f.is_empty() {
            let d = f
                .pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(()))
                .unwrap();
            assert_eq!(d.len(), 1);
            let delta = &d[0];
            let rv = match delta {
                Delta::Deleted(DeletedObject::Tombstone(t)) => format!(
                    "tombstone:{}",
                    t.obj
                        .as_ref()
                        .map(|o| o.resource_version.as_str())
                        .unwrap_or("-")
                ),
                other => other.object().unwrap().resource_version.clone(),
            };
            out.push((delta.delta_type(), delta.key(), rv));
        }
        out
    }

    #[test]
    fn keeps_every_change_in_arrival_order() {
        let known = Indexer::new(Indexers::new());
        let f = fifo(&known);
        f.add(Pod::arc("ns", "a", "1"));
        f.add(Pod::arc("ns", "b", "2"));
        f.update(Pod::arc("ns", "a", "3"));
        f.delete(Pod::arc("ns", "ghost", "4"));
        assert_eq!(
            drain(&f),
            vec![
                (DeltaType::Added, "ns/a".into(), "1".into()),
                (DeltaType::Added, "ns/b".into(), "2".into()),
                (DeltaType::Updated, "ns/a".into(), "3".into()),
                (DeltaType::Deleted, "ns/ghost".into(), "4".into()),
            ]
        );
    }

    #[test]
    fn replace_queues_tombstones_then_replacements() {
        let known = Indexer::new(Indexers::new());
        for (name, rv) in [("foo", "5"), ("bar", "6"), ("baz", "7")] {
            known.add(Pod::arc("ns", name, rv));
        }
        let f = fifo(&known);
        f.add(Pod::arc("ns", "new", "9"));
        f.delete(Pod::arc("ns", "baz", "8"));
        f.replace(vec![Pod::arc("ns", "foo", "10")], "10");
        assert_eq!(
            drain(&f),
            vec![
                (DeltaType::Added, "ns/new".into(), "9".into()),
                (DeltaType::Deleted, "ns/baz".into(), "8".into()),
                // Queued and gone, last change not a delete: tombstone with the queued state.
                (DeltaType::Deleted, "ns/new".into(), "tombstone:9".into()),
                // Known, not queued, gone: tombstone with the known state.
                (DeltaType::Deleted, "ns/bar".into(), "tombstone:6".into()),
                (DeltaType::Replaced, "ns/foo".into(), "10".into()),
            ]
        );
    }

    #[test]
    fn has_synced_counts_after_processing_and_resync_skips_queued_keys() {
        let known = Indexer::new(Indexers::new());
        known.add(Pod::arc("ns", "a", "1"));
        known.add(Pod::arc("ns", "b", "1"));
        let f = fifo(&known);
        f.replace(
            vec![Pod::arc("ns", "a", "1"), Pod::arc("ns", "b", "1")],
            "1",
        );
        f.pop_blocking(|_, initial| {
            assert!(initial);
            Ok::<(), ProcessError<Infallible>>(())
        })
        .unwrap();
        let f_ref = &f;
        f.pop_blocking(|_, initial| {
            assert!(initial);
            assert!(
                !f_ref.synced.is_set(),
                "not synced while the last item is processed"
            );
            Ok::<(), ProcessError<Infallible>>(())
        })
        .unwrap();
        assert!(f.has_synced());

        f.update(Pod::arc("ns", "a", "2"));
        f.resync();
        let drained = drain(&f);
        assert_eq!(drained.len(), 2);
        assert_eq!(drained[1], (DeltaType::Sync, "ns/b".into(), "1".into()));
    }

    #[test]
    fn a_failed_process_is_reported_and_not_requeued() {
        let known = Indexer::new(Indexers::new());
        let f = fifo(&known);
        f.add(Pod::arc("ns", "a", "1"));
        f.add(Pod::arc("ns", "b", "1"));
        assert_eq!(
            f.pop_blocking(|_, _| Err("boom".into())).unwrap_err(),
            PopError::Process("boom")
        );
        // Not even a requeue request puts a delta back.
        assert_eq!(
            f.pop_blocking(|_, _| Err(ProcessError::Requeue("again")))
                .unwrap_err(),
            PopError::Process("again")
        );
        assert!(f.is_empty());
        f.close();
        assert_eq!(
            f.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(()))
                .unwrap_err(),
            PopError::Closed
        );
    }
}
