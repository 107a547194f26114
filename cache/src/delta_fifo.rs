//! The DeltaFIFO: a queue of per-object change lists between a [`Reflector`](crate::Reflector)
//! and the code that applies those changes (client-go's `delta_fifo.go`).
//!
//! The full semantics are documented on the public type.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use kclient_apimachinery::Object;
use parking_lot::Mutex;

use crate::done_signal::DoneSignal;
use crate::object_key::{KeyFunc, KeyHasher, object_key};
use crate::queue_wakeup::{PopState, QueueWakeup};
use crate::store::{KeyListerGetter, ReflectorStore};
use crate::tombstone::{DeletedFinalStateUnknown, DeletedObject};

/// The kind of change a [`Delta`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created (watch ADDED).
    Added,
    /// The object changed (watch MODIFIED).
    Updated,
    /// The object was deleted (watch DELETED, or inferred from a relist).
    Deleted,
    /// The object was listed by a relist.
    Replaced,
    /// The object is re-delivered by a periodic resync (or listed, without
    /// `emit_delta_type_replaced`).
    Sync,
}

/// One change to one object.
#[derive(Debug)]
pub enum Delta<K> {
    /// The object was created.
    Added(Arc<K>),
    /// The object changed; this is its new state.
    Updated(Arc<K>),
    /// The object was deleted; a relist-inferred delete carries a tombstone.
    Deleted(DeletedObject<K>),
    /// The object was listed by a relist.
    Replaced(Arc<K>),
    /// The object is re-delivered unchanged.
    Sync(Arc<K>),
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Delta::Added(o) => Delta::Added(Arc::clone(o)),
            Delta::Updated(o) => Delta::Updated(Arc::clone(o)),
            Delta::Deleted(d) => Delta::Deleted(d.clone()),
            Delta::Replaced(o) => Delta::Replaced(Arc::clone(o)),
            Delta::Sync(o) => Delta::Sync(Arc::clone(o)),
        }
    }
}

impl<K> Delta<K> {
    /// The kind of change.
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Delta::Added(_) => DeltaType::Added,
            Delta::Updated(_) => DeltaType::Updated,
            Delta::Deleted(_) => DeltaType::Deleted,
            Delta::Replaced(_) => DeltaType::Replaced,
            Delta::Sync(_) => DeltaType::Sync,
        }
    }

    /// The object's state in this delta; a tombstone gives its last known state, if any.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => Some(o),
            Delta::Deleted(d) => d.object(),
        }
    }

    fn is_tombstone(&self) -> bool {
        matches!(self, Delta::Deleted(DeletedObject::Tombstone(_)))
    }
}

impl<K: Object> Delta<K> {
    /// The default store key (`namespace/name`) of the object this delta is about; a tombstone's
    /// key as recorded. A pipeline whose [`DeltaFIFO`] has a key function of its own keys objects
    /// with [`DeltaFIFO::key_of`] instead.
    pub fn key(&self) -> String {
        match self {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => {
                object_key(o.as_ref())
            }
            Delta::Deleted(d) => d.key(),
        }
    }
}

/// The changes queued for one key, oldest first. Never empty when popped.
#[derive(Debug)]
pub struct Deltas<K>(Vec<Delta<K>>);

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Deltas(self.0.clone())
    }
}

impl<K> Deltas<K> {
    pub(crate) fn from_vec(deltas: Vec<Delta<K>>) -> Self {
        Deltas(deltas)
    }

    /// The oldest change.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.0.first()
    }

    /// The newest change.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.0.last()
    }

    /// The changes, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Delta<K>> {
        self.0.iter()
    }

    /// The number of changes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no change.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The changes as a vector.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.0
    }
}

impl<K> std::ops::Deref for Deltas<K> {
    type Target = [Delta<K>];
    fn deref(&self) -> &[Delta<K>] {
        &self.0
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Why a pop returned no deltas, or what went wrong processing them.
#[derive(Debug, PartialEq, Eq)]
pub enum PopError<E> {
    /// The queue was closed and nothing is left to pop.
    Closed,
    /// The process function failed. Its deltas were put back at the end of the queue only if
    /// it returned [`ProcessError::Requeue`].
    Process(E),
}

/// How a pop's process function fails.
///
/// A plain error (`?` on an `E` makes one) is returned by the pop and the deltas are gone;
/// [`Requeue`](ProcessError::Requeue) also puts them back at the end of the queue unless the
/// key was queued again meanwhile (client-go's `ErrRequeue`).
///
/// # Changed in 0.2
///
/// Until 0.2, [`DeltaFIFO::pop`] re-queued the deltas after **any** process error. Like
/// client-go, it now re-queues only on an explicit `ProcessError::Requeue`: a process
/// function that fails for good no longer makes the same deltas come back forever.
#[derive(Debug, PartialEq, Eq)]
pub enum ProcessError<E> {
    /// Return the error; the popped deltas are dropped.
    Fail(E),
    /// Put the popped deltas back at the end of the queue, then return the error.
    Requeue(E),
}

impl<E> From<E> for ProcessError<E> {
    fn from(e: E) -> Self {
        ProcessError::Fail(e)
    }
}

impl<E> ProcessError<E> {
    /// The error, whatever was asked of the queue.
    pub fn into_inner(self) -> E {
        match self {
            ProcessError::Fail(e) | ProcessError::Requeue(e) => e,
        }
    }
}

impl<E: fmt::Display> fmt::Display for PopError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PopError::Closed => f.write_str("DeltaFIFO: manipulating with closed queue"),
            PopError::Process(_) => f.write_str("processing popped deltas failed"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for PopError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PopError::Closed => None,
            PopError::Process(e) => Some(e),
        }
    }
}

/// How to build a [`DeltaFIFO`] (client-go's `DeltaFIFOOptions`).
#[non_exhaustive]
pub struct DeltaFIFOOptions<K> {
    /// The consumer's cache: tells `delete`, `replace` and `resync` which objects exist
    /// downstream. Informers pass their indexer.
    pub known_objects: Option<Arc<dyn KeyListerGetter<K>>>,
    /// Queue relisted objects as [`Delta::Replaced`] rather than [`Delta::Sync`]; informers
    /// set it.
    pub emit_delta_type_replaced: bool,
    /// How objects are keyed (client-go's `KeyFunction`); `None` is `namespace/name`. It must
    /// agree with the key function of `known_objects`.
    pub key_function: Option<KeyFunc<K>>,
}

impl<K> DeltaFIFOOptions<K> {
    /// The consumer's cache: tells `delete`, `replace` and `resync` which objects exist
    /// downstream. Informers pass their indexer.
    pub fn known_objects(mut self, known_objects: Arc<dyn KeyListerGetter<K>>) -> Self {
        self.known_objects = Some(known_objects);
        self
    }

    /// Queue relisted objects as [`Delta::Replaced`] rather than [`Delta::Sync`]; informers
    /// set it.
    pub fn emit_delta_type_replaced(mut self, emit_delta_type_replaced: bool) -> Self {
        self.emit_delta_type_replaced = emit_delta_type_replaced;
        self
    }

    /// How objects are keyed (client-go's `KeyFunction`); `None` is `namespace/name`. It must
    /// agree with the key function of `known_objects`.
    pub fn key_function(mut self, key_function: KeyFunc<K>) -> Self {
        self.key_function = Some(key_function);
        self
    }
}

impl<K> Default for DeltaFIFOOptions<K> {
    fn default() -> Self {
        DeltaFIFOOptions {
            known_objects: None,
            emit_delta_type_replaced: false,
            key_function: None,
        }
    }
}

/// A queue of per-key [`Deltas`] between a [`Reflector`](crate::Reflector) and the code that
/// applies them (client-go's `DeltaFIFO`).
///
/// # Semantics
///
/// - Each object key is queued at most once. Changes to a key that is already queued are
///   appended to its [`Deltas`] (coalescing), so a consumer sees every change of an object, in
///   order, in one pop, and keys are served first-in first-out.
/// - Two consecutive deletes of the same key collapse into one, keeping the one that carries the
///   object rather than a tombstone.
/// - [`replace`](DeltaFIFO::replace) (a relist) queues every listed object as
///   [`Delta::Replaced`] (or [`Delta::Sync`] without `emit_delta_type_replaced`), then a
///   [`Delta::Deleted`] tombstone ([`DeletedFinalStateUnknown`]) for every key that is queued or
///   known (in `known_objects`, the consumer's cache) but absent from the list. The tombstone
///   holds the newest queued state, else the known state, else nothing.
/// - [`delete`](DeltaFIFO::delete) of a key that is neither known nor queued does nothing: the
///   consumer never saw the object, so there is nothing to tell it.
/// - [`resync`](DeltaFIFO::resync) queues a [`Delta::Sync`] for each known key with no pending
///   deltas.
/// - [`has_synced`](DeltaFIFO::has_synced) turns true once the first `replace` (or any first
///   add/update/delete) has happened and every key it queued has been popped and processed:
///   never while the process function of the last one is still running.
/// - [`pop_blocking`](DeltaFIFO::pop_blocking) blocks the thread, [`pop`](DeltaFIFO::pop) awaits; both
///   run the process function under the queue lock (so its effects and the queue stay
///   consistent) and put the deltas back at the end of the queue if it returns
///   [`ProcessError::Requeue`] (client-go's `ErrRequeue`; any other error drops them). After
///   [`close`](DeltaFIFO::close) pops drain what is left, then return [`PopError::Closed`].
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
/// use kclient_cache::{DeltaFIFO, DeltaFIFOOptions, DeltaType, ProcessError};
///
/// let fifo = DeltaFIFO::new(DeltaFIFOOptions::default());
/// fifo.add(Arc::new(pod("default", "web", "1")));
/// fifo.update(Arc::new(pod("default", "web", "2")));
/// fifo.add(Arc::new(pod("default", "db", "3")));
///
/// // Both changes of `web` come out together, before `db`.
/// let deltas = fifo.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(())).unwrap();
/// let kinds: Vec<DeltaType> = deltas.iter().map(|d| d.delta_type()).collect();
/// assert_eq!(kinds, [DeltaType::Added, DeltaType::Updated]);
/// assert_eq!(fifo.list_keys(), ["default/db"]);
/// ```
pub struct DeltaFIFO<K> {
    state: Mutex<State<K>>,
    wakeup: QueueWakeup,
    known_objects: Option<Arc<dyn KeyListerGetter<K>>>,
    emit_delta_type_replaced: bool,
    key_function: Option<KeyFunc<K>>,
    synced: DoneSignal,
}

/// A queued key, shared between `items` and `queue`.
type Key = Arc<str>;

struct State<K> {
    /// Deltas by key. Keys are shared `Arc<str>`s: the queue holds the same allocation.
    items: HashMap<Key, Vec<Delta<K>>, KeyHasher>,
    queue: VecDeque<Key>,
    /// Whether anything was ever added or replaced.
    populated: bool,
    /// Keys of the first replace not popped yet.
    initial_population_count: usize,
    closed: bool,
}

impl<K> PopState for State<K> {
    fn has_item(&self) -> bool {
        !self.queue.is_empty()
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}

impl<K: Object> DeltaFIFO<K> {
    /// An empty queue.
    pub fn new(options: DeltaFIFOOptions<K>) -> Self {
        DeltaFIFO {
            state: Mutex::new(State {
                items: HashMap::default(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
            }),
            wakeup: QueueWakeup::new(),
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            key_function: options.key_function,
            synced: DoneSignal::new(),
        }
    }

    /// The key this queue files `obj` under.
    pub fn key_of(&self, obj: &K) -> String {
        match &self.key_function {
            Some(key_function) => key_function(obj),
            None => object_key(obj),
        }
    }

    /// The key of a delta: a tombstone keeps the key it was made with.
    fn delta_key(&self, delta: &Delta<K>) -> String {
        match delta {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => {
                self.key_of(o)
            }
            Delta::Deleted(DeletedObject::Object(o)) => self.key_of(o),
            Delta::Deleted(DeletedObject::Tombstone(t)) => t.key.clone(),
        }
    }

    /// Queues an [`Delta::Added`].
    pub fn add(&self, obj: Arc<K>) {
        let mut state = self.state.lock();
        self.mark_populated(&mut state);
        self.queue_action(&mut state, Delta::Added(obj));
    }

    /// Queues an [`Delta::Updated`].
    pub fn update(&self, obj: Arc<K>) {
        let mut state = self.state.lock();
        self.mark_populated(&mut state);
        self.queue_action(&mut state, Delta::Updated(obj));
    }

    /// Queues a [`Delta::Deleted`], unless the key is neither known nor queued.
    pub fn delete(&self, obj: Arc<K>) {
        let key = self.key_of(obj.as_ref());
        let mut state = self.state.lock();
        self.mark_populated(&mut state);
        let queued = state.items.contains_key(key.as_str());
        let known = match &self.known_objects {
            Some(known) => known.get_by_key(&key).is_some(),
            None => false,
        };
        if !queued && !known {
            return;
        }
        self.queue_action(&mut state, Delta::Deleted(DeletedObject::Object(obj)));
    }

    /// Makes the queue reflect a complete list; see [`DeltaFIFO`].
    pub fn replace(&self, list: Vec<Arc<K>>, _resource_version: &str) {
        let mut state = self.state.lock();
        // The listed keys, sharing the queue's allocations.
        let mut keys: HashSet<Key, KeyHasher> =
            HashSet::with_capacity_and_hasher(list.len(), KeyHasher::default());
        for obj in list {
            let key = self.key_of(obj.as_ref());
            let delta = if self.emit_delta_type_replaced {
                Delta::Replaced(obj)
            } else {
                Delta::Sync(obj)
            };
            keys.insert(self.queue_action_with_key(&mut state, &key, delta));
        }

        // Queued keys missing from the list: tombstone with the newest queued state.
        let mut queued_deletions = 0;
        let vanished: Vec<(Key, Option<Arc<K>>)> = state
            .items
            .iter()
            .filter(|(key, _)| !keys.contains(*key))
            .map(|(key, deltas)| {
                (
                    Arc::clone(key),
                    deltas.last().and_then(|d| d.object().cloned()),
                )
            })
            .collect();
        for (key, obj) in vanished {
            queued_deletions += 1;
            let tombstone = DeletedFinalStateUnknown {
                key: key.to_string(),
                obj,
            };
            self.queue_action_with_key(
                &mut state,
                &key,
                Delta::Deleted(DeletedObject::Tombstone(tombstone)),
            );
        }

        // Known keys missing from the list and not queued: tombstone with the known state.
        if let Some(known) = &self.known_objects {
            let mut missing: Vec<String> = Vec::new();
            known.for_each_key(&mut |key| {
                if !keys.contains(key) && state.items.get(key).is_none_or(|d| d.is_empty()) {
                    missing.push(key.to_owned());
                }
            });
            for key in missing {
                let obj = known.get_by_key(&key);
                if obj.is_none() {
                    tracing::debug!(
                        key,
                        "key vanished from known objects; tombstone without object"
                    );
                }
                queued_deletions += 1;
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                self.queue_action_with_key(
                    &mut state,
                    &key,
                    Delta::Deleted(DeletedObject::Tombstone(tombstone)),
                );
            }
        }

        if !state.populated {
            state.populated = true;
            state.initial_population_count = keys.len() + queued_deletions;
            self.check_synced(&state);
        }
    }

    /// Queues a [`Delta::Sync`] for every known key that has no pending deltas.
    pub fn resync(&self) {
        let Some(known) = &self.known_objects else {
            return;
        };
        let mut state = self.state.lock();
        for key in known.list_keys() {
            if state.items.get(key.as_str()).is_some_and(|d| !d.is_empty()) {
                continue;
            }
            let Some(obj) = known.get_by_key(&key) else {
                continue;
            };
            self.queue_action_with_key(&mut state, &key, Delta::Sync(obj));
        }
    }

    /// Closes the queue: pops still return what is queued, then [`PopError::Closed`] instead
    /// of waiting. Adds after closing are still queued, as in client-go.
    pub fn close(&self) {
        let mut state = self.state.lock();
        state.closed = true;
        drop(state);
        self.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Whether the first batch of items has been popped and processed (client-go's
    /// `HasSynced`). It does not wait for the queue lock: it turns true only after the process
    /// function of the last initial item has returned.
    pub fn has_synced(&self) -> bool {
        self.synced.is_set()
    }

    pub(crate) fn synced_signal(&self) -> &DoneSignal {
        &self.synced
    }

    /// The number of queued keys.
    pub fn len(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued keys, in pop order.
    pub fn list_keys(&self) -> Vec<String> {
        self.state
            .lock()
            .queue
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    /// The deltas queued for `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.state.lock().items.get(key).map(|d| Deltas(d.clone()))
    }

    /// Waits, without blocking the thread, until a key is queued, then pops its deltas and
    /// runs `process(deltas, is_in_initial_list)` under the queue lock. If `process` fails its
    /// error is returned; with [`ProcessError::Requeue`] the deltas also go back to the end of
    /// the queue. Cancel-safe: a future dropped before it completes pops nothing.
    pub async fn pop<E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        self.wakeup
            .pop(&self.state, |state| self.pop_locked(state, process))
            .await
    }

    /// [`pop`](Self::pop), blocking the thread until a key is queued: for a consumer on a thread
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
            "DeltaFIFO::pop_blocking",
            "DeltaFIFO::pop(..).await",
        )
    }

    fn pop_locked<E>(
        &self,
        state: &mut State<K>,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<E>>,
    ) -> Result<Deltas<K>, PopError<E>> {
        loop {
            let is_in_initial_list = !self.synced.is_set();
            let Some(key) = state.queue.pop_front() else {
                return Err(PopError::Closed);
            };
            // Counted before processing, as client-go's DeltaFIFO does (a re-queued item is
            // not counted again), but `synced` is set only once `process` has returned:
            // `has_synced` reads it without the lock, and client-go's `HasSynced`, which takes
            // the lock `Pop` holds through `process`, is never true while the last initial item
            // is still being processed. Nothing changes the state meanwhile (the lock is held),
            // so whether this pop completes the sync is known now.
            let completes_sync = state.initial_population_count == 1;
            if state.initial_population_count > 0 {
                state.initial_population_count -= 1;
            }
            let _synced_after_process = completes_sync.then(|| SetOnDrop(&self.synced));
            let Some(deltas) = state.items.remove(&key) else {
                tracing::error!(key = &*key, "key was queued without deltas; skipping it");
                continue;
            };
            let deltas = Deltas(deltas);
            let depth = state.queue.len();
            let started = std::time::Instant::now();
            let result = process(&deltas, is_in_initial_list);
            if depth > 10 && started.elapsed() > std::time::Duration::from_millis(100) {
                tracing::info!(
                    key = &*key,
                    depth,
                    elapsed = ?started.elapsed(),
                    "DeltaFIFO pop process was slow: slow event handlers blocking the queue"
                );
            }
            return match result {
                Ok(()) => Ok(deltas),
                Err(ProcessError::Fail(e)) => Err(PopError::Process(e)),
                Err(ProcessError::Requeue(e)) => {
                    // client-go's addIfNotPresent: newer deltas for the key win (none can
                    // arrive while the lock is held, so the key is always re-queued).
                    if let Entry::Vacant(slot) = state.items.entry(key.clone()) {
                        slot.insert(deltas.0);
                        state.queue.push_back(key);
                    }
                    Err(PopError::Process(e))
                }
            };
        }
    }

    fn mark_populated(&self, state: &mut State<K>) {
        state.populated = true;
        self.check_synced(state);
    }

    fn check_synced(&self, state: &State<K>) {
        if state.populated && state.initial_population_count == 0 {
            self.synced.set();
        }
    }

    fn queue_action(&self, state: &mut State<K>, delta: Delta<K>) {
        let key = self.delta_key(&delta);
        self.queue_action_with_key(state, &key, delta);
    }

    /// Appends `delta` to `key`'s deltas, queueing the key if it is new; returns the shared
    /// key.
    fn queue_action_with_key(&self, state: &mut State<K>, key: &str, delta: Delta<K>) -> Key {
        let shared = match state.items.get_key_value(key) {
            Some((shared, _)) => Arc::clone(shared),
            None => Arc::from(key),
        };
        match state.items.entry(Arc::clone(&shared)) {
            Entry::Occupied(mut entry) => {
                let deltas = entry.get_mut();
                deltas.push(delta);
                dedup_deltas(deltas);
            }
            Entry::Vacant(entry) => {
                state.queue.push_back(Arc::clone(&shared));
                entry.insert(vec![delta]);
            }
        }
        self.wake_all();
        shared
    }

    fn wake_all(&self) {
        self.wakeup.wake_all();
    }
}

/// Sets a [`DoneSignal`] when dropped: after a pop's `process` returns, or while a panic in it
/// unwinds (client-go's deferred unlock then makes `HasSynced` true too).
struct SetOnDrop<'a>(&'a DoneSignal);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Collapses the last two deltas when both are deletes, keeping the one with the object
/// (client-go's `dedupDeltas`/`isDeletionDup`).
fn dedup_deltas<K>(deltas: &mut Vec<Delta<K>>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (a, b) = (&deltas[n - 1], &deltas[n - 2]);
    if a.delta_type() != DeltaType::Deleted || b.delta_type() != DeltaType::Deleted {
        return;
    }
    if b.is_tombstone() {
        // Keep the newer one, which may carry the object.
        deltas.swap_remove(n - 2);
    } else {
        deltas.pop();
    }
}

impl<K: Object> ReflectorStore<K> for DeltaFIFO<K> {
    fn add(&self, obj: Arc<K>) {
        DeltaFIFO::add(self, obj);
    }
    fn update(&self, obj: Arc<K>) {
        DeltaFIFO::update(self, obj);
    }
    fn delete(&self, obj: Arc<K>) {
        DeltaFIFO::delete(self, obj);
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        DeltaFIFO::replace(self, list, resource_version);
    }
    fn resync(&self) {
        DeltaFIFO::resync(self);
    }
    fn get_known(&self, key: &str) -> Option<Arc<K>> {
        self.known_objects
            .as_ref()
            .and_then(|known| known.get_by_key(key))
    }
    fn key_of(&self, obj: &K) -> String {
        DeltaFIFO::key_of(self, obj)
    }
}

impl<K> fmt::Debug for DeltaFIFO<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("DeltaFIFO")
            .field("queued", &state.queue.len())
            .field("closed", &state.closed)
            .field("synced", &self.synced.is_set())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;
    use crate::example_object::Pod;
    use crate::index::Indexers;
    use crate::indexer::Indexer;

    fn fifo() -> DeltaFIFO<Pod> {
        DeltaFIFO::new(DeltaFIFOOptions::default())
    }

    fn fifo_with_known(known: &Indexer<Pod>) -> DeltaFIFO<Pod> {
        DeltaFIFO::new(DeltaFIFOOptions {
            known_objects: Some(Arc::new(known.clone())),
            emit_delta_type_replaced: true,
            key_function: None,
        })
    }

    fn pop(f: &DeltaFIFO<Pod>) -> Deltas<Pod> {
        f.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(()))
            .unwrap()
    }

    /// (type, rv or tombstone marker) of each delta.
    fn summary(deltas: &Deltas<Pod>) -> Vec<(DeltaType, String)> {
        deltas
            .iter()
            .map(|d| {
                let rv = match d {
                    Delta::Deleted(DeletedObject::Tombstone(t)) => format!(
                        "tombstone:{}",
                        t.obj
                            .as_ref()
                            .map(|o| o.resource_version.as_str())
                            .unwrap_or("-")
                    ),
                    other => other.object().unwrap().resource_version.clone(),
                };
                (d.delta_type(), rv)
            })
            .collect()
    }

    #[test]
    fn changes_to_one_key_coalesce_in_order_and_keys_stay_fifo() {
        let f = fifo();
        f.add(Pod::arc("ns", "a", "1"));
        f.add(Pod::arc("ns", "b", "1"));
        f.update(Pod::arc("ns", "a", "2"));
        f.delete(Pod::arc("ns", "a", "3"));
        assert_eq!(f.list_keys(), vec!["ns/a", "ns/b"]);
        let a = pop(&f);
        assert_eq!(
            summary(&a),
            vec![
                (DeltaType::Added, "1".into()),
                (DeltaType::Updated, "2".into()),
                (DeltaType::Deleted, "3".into())
            ]
        );
        assert_eq!(summary(&pop(&f)), vec![(DeltaType::Added, "1".into())]);
        assert!(f.is_empty());
    }

    #[test]
    fn consecutive_deletes_collapse_keeping_the_non_tombstone() {
        let f = fifo();
        f.add(Pod::arc("ns", "a", "1"));
        f.delete(Pod::arc("ns", "a", "2"));
        f.delete(Pod::arc("ns", "a", "3"));
        assert_eq!(
            summary(&pop(&f)),
            vec![
                (DeltaType::Added, "1".into()),
                (DeltaType::Deleted, "2".into())
            ]
        );

        // A tombstone followed by a real delete keeps the real delete.
        let mut deltas = vec![
            Delta::Deleted(DeletedObject::Tombstone(DeletedFinalStateUnknown {
                key: "ns/a".into(),
                obj: None,
            })),
            Delta::Deleted(DeletedObject::Object(Pod::arc("ns", "a", "5"))),
        ];
        dedup_deltas(&mut deltas);
        assert_eq!(deltas.len(), 1);
        assert!(!deltas[0].is_tombstone());

        // Only the last two are looked at: delete, update, delete stays as it is.
        let f = fifo();
        f.add(Pod::arc("ns", "a", "1"));
        f.delete(Pod::arc("ns", "a", "2"));
        f.update(Pod::arc("ns", "a", "3"));
        f.delete(Pod::arc("ns", "a", "4"));
        assert_eq!(pop(&f).len(), 4);
    }

    #[test]
    fn delete_of_an_unknown_unqueued_key_is_a_no_op() {
        let known = Indexer::new(Indexers::new());
        let f = fifo_with_known(&known);
        f.delete(Pod::arc("ns", "ghost", "1"));
        assert!(f.is_empty());
        known.add(Pod::arc("ns", "real", "1"));
        f.delete(Pod::arc("ns", "real", "2"));
        assert_eq!(f.list_keys(), vec!["ns/real"]);
    }

    #[test]
    fn replace_queues_tombstones_for_vanished_queued_and_known_keys() {
        let known = Indexer::new(Indexers::new());
        known.add(Pod::arc("ns", "known-gone", "1"));
        known.add(Pod::arc("ns", "queued-gone", "1"));
        known.add(Pod::arc("ns", "kept", "1"));
        let f = fifo_with_known(&known);
        f.update(Pod::arc("ns", "queued-gone", "2"));

        f.replace(vec![Pod::arc("ns", "kept", "3")], "10");

        let mut popped = HashMap::new();
        while !f.is_empty() {
            let d = pop(&f);
            popped.insert(d.newest().unwrap().key(), summary(&d));
        }
        assert_eq!(popped["ns/kept"], vec![(DeltaType::Replaced, "3".into())]);
        // The tombstone of a queued key carries the newest queued state...
        assert_eq!(
            popped["ns/queued-gone"],
            vec![
                (DeltaType::Updated, "2".into()),
                (DeltaType::Deleted, "tombstone:2".into())
            ]
        );
        // ...and that of a key only known downstream carries the known state.
        assert_eq!(
            popped["ns/known-gone"],
            vec![(DeltaType::Deleted, "tombstone:1".into())]
        );
    }

    /// client-go's `TestDeltaFIFO_ReplaceMakesDeletions`, as data: what was queued before a
    /// replace listing only `foo`, and the deltas each key pops with.
    #[test]
    fn replace_makes_deletions_after_queued_deletes_adds_and_recreations() {
        type Queued = fn(&DeltaFIFO<Pod>);
        type Expected = Vec<(&'static str, Vec<(DeltaType, &'static str)>)>;
        let cases: [(Queued, Expected); 3] = [
            (
                |f| f.delete(Pod::arc("ns", "baz", "10")),
                vec![
                    ("baz", vec![(DeltaType::Deleted, "10")]),
                    ("foo", vec![(DeltaType::Sync, "5")]),
                    ("bar", vec![(DeltaType::Deleted, "tombstone:6")]),
                ],
            ),
            (
                |f| f.add(Pod::arc("ns", "baz", "10")),
                vec![
                    (
                        "baz",
                        vec![
                            (DeltaType::Added, "10"),
                            (DeltaType::Deleted, "tombstone:10"),
                        ],
                    ),
                    ("foo", vec![(DeltaType::Sync, "5")]),
                    ("bar", vec![(DeltaType::Deleted, "tombstone:6")]),
                ],
            ),
            (
                |f| {
                    f.delete(Pod::arc("ns", "bar", "6"));
                    f.add(Pod::arc("ns", "bar", "100"));
                },
                vec![
                    (
                        "bar",
                        vec![
                            (DeltaType::Deleted, "6"),
                            (DeltaType::Added, "100"),
                            (DeltaType::Deleted, "tombstone:100"),
                        ],
                    ),
                    ("foo", vec![(DeltaType::Sync, "5")]),
                    ("baz", vec![(DeltaType::Deleted, "tombstone:7")]),
                ],
            ),
        ];
        for (queued, expected) in cases {
            let known = Indexer::new(Indexers::new());
            for (name, rv) in [("foo", "5"), ("bar", "6"), ("baz", "7")] {
                known.add(Pod::arc("ns", name, rv));
            }
            let f = DeltaFIFO::new(DeltaFIFOOptions {
                known_objects: Some(Arc::new(known)),
                emit_delta_type_replaced: false,
                key_function: None,
            });
            queued(&f);
            f.replace(vec![Pod::arc("ns", "foo", "5")], "0");
            // Keys queued before the replace pop first; the known-only tombstone comes last.
            for (name, deltas) in expected {
                let popped = pop(&f);
                assert_eq!(popped.newest().unwrap().key(), format!("ns/{name}"));
                let want: Vec<(DeltaType, String)> = deltas
                    .into_iter()
                    .map(|(t, rv)| (t, rv.to_owned()))
                    .collect();
                assert_eq!(summary(&popped), want, "key {name}");
            }
            assert!(f.is_empty());
        }
    }

    #[test]
    fn replace_without_emit_replaced_queues_sync() {
        let f = fifo();
        f.replace(vec![Pod::arc("ns", "a", "1")], "1");
        assert_eq!(summary(&pop(&f)), vec![(DeltaType::Sync, "1".into())]);
    }

    #[test]
    fn resync_queues_sync_only_for_known_keys_without_pending_deltas() {
        let known = Indexer::new(Indexers::new());
        known.add(Pod::arc("ns", "idle", "1"));
        known.add(Pod::arc("ns", "busy", "1"));
        let f = fifo_with_known(&known);
        f.update(Pod::arc("ns", "busy", "2"));
        f.resync();
        let first = pop(&f);
        assert_eq!(summary(&first), vec![(DeltaType::Updated, "2".into())]);
        let second = pop(&f);
        assert_eq!(second.newest().unwrap().key(), "ns/idle");
        assert_eq!(summary(&second), vec![(DeltaType::Sync, "1".into())]);
        assert!(f.is_empty());

        // Without known objects resync does nothing.
        let plain = fifo();
        plain.resync();
        assert!(plain.is_empty());
    }

    #[test]
    fn has_synced_after_the_first_replace_is_fully_popped() {
        let f = fifo();
        assert!(!f.has_synced());
        f.replace(
            vec![Pod::arc("ns", "a", "1"), Pod::arc("ns", "b", "1")],
            "1",
        );
        assert!(!f.has_synced());
        // The first pops are part of the initial list.
        let initial = f.pop_blocking(|_, initial| {
            assert!(initial);
            Ok::<(), ProcessError<Infallible>>(())
        });
        assert!(initial.is_ok());
        assert!(!f.has_synced());
        f.pop_blocking(|_, initial| {
            assert!(initial);
            Ok::<(), ProcessError<Infallible>>(())
        })
        .unwrap();
        assert!(f.has_synced());
        f.add(Pod::arc("ns", "c", "1"));
        f.pop_blocking(|_, initial| {
            assert!(!initial);
            Ok::<(), ProcessError<Infallible>>(())
        })
        .unwrap();

        // An empty first list syncs at once; so does a first add.
        let empty = fifo();
        empty.replace(Vec::new(), "1");
        assert!(empty.has_synced());
        let added = fifo();
        added.add(Pod::arc("ns", "a", "1"));
        assert!(added.has_synced());
    }

    /// `has_synced` reads a flag without the queue lock; it must not turn true while the last
    /// listed object is still being processed, before the consumer has stored it (client-go's
    /// `HasSynced` waits for the lock that `Pop` holds through `process`).
    #[test]
    fn has_synced_stays_false_while_the_last_initial_item_is_processed() {
        let f = Arc::new(fifo());
        let store = Indexer::new(Indexers::new());
        f.replace(vec![Pod::arc("ns", "a", "1")], "1");
        let (entered_tx, entered_rx) = crossbeam_channel::bounded::<()>(0);
        let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
        let consumer = {
            let (f, store) = (Arc::clone(&f), store.clone());
            std::thread::spawn(move || {
                f.pop_blocking(|deltas, initial| {
                    assert!(initial);
                    entered_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    store.add(Arc::clone(deltas.newest().unwrap().object().unwrap()));
                    Ok::<(), ProcessError<Infallible>>(())
                })
                .map(|_| ())
            })
        };
        entered_rx.recv().unwrap();
        // The consumer is inside `process` and has not stored `a` yet.
        assert!(
            !f.has_synced(),
            "synced while the consumer's store lacks the last listed object"
        );
        release_tx.send(()).unwrap();
        consumer.join().unwrap().unwrap();
        assert!(f.has_synced());
        assert_eq!(store.list_keys(), vec!["ns/a"]);
    }

    /// As in client-go, a re-queued initial item was counted when first popped: the queue is
    /// synced once that pop returns, and the item comes back as not part of the initial list.
    #[test]
    fn a_requeued_last_initial_item_is_counted_once() {
        let f = fifo();
        f.replace(vec![Pod::arc("ns", "a", "1")], "1");
        let err = f
            .pop_blocking(|_, initial| {
                assert!(initial);
                Err(ProcessError::Requeue("again"))
            })
            .unwrap_err();
        assert_eq!(err, PopError::Process("again"));
        assert!(f.has_synced());
        assert_eq!(f.list_keys(), vec!["ns/a"]);
        f.pop_blocking(|_, initial| {
            assert!(!initial);
            Ok::<(), ProcessError<Infallible>>(())
        })
        .unwrap();
    }

    #[test]
    fn a_custom_key_function_keys_deltas_known_objects_and_relist_tombstones() {
        let by_name: KeyFunc<Pod> = Arc::new(|p: &Pod| format!("name:{}", p.name));
        let known = Indexer::with_key_func(Indexers::new(), by_name.clone());
        known.add(Pod::arc("ns", "a", "1"));
        known.add(Pod::arc("ns", "b", "1"));
        let f = DeltaFIFO::new(DeltaFIFOOptions {
            known_objects: Some(Arc::new(known.clone())),
            emit_delta_type_replaced: true,
            key_function: Some(by_name),
        });
        assert_eq!(f.key_of(&Pod::new("other", "a")), "name:a");
        f.update(Pod::arc("ns", "a", "2"));
        // b is known but missing from the relist: a tombstone under the custom key.
        f.replace(vec![Pod::arc("ns", "a", "2")], "3");
        assert_eq!(f.list_keys(), vec!["name:a", "name:b"]);
        assert_eq!(
            summary(&f.get_by_key("name:b").unwrap()),
            vec![(DeltaType::Deleted, "tombstone:1".into())]
        );
        // A delete of a known key is queued under the same key.
        let g = DeltaFIFO::new(DeltaFIFOOptions {
            known_objects: Some(Arc::new(known)),
            key_function: Some(Arc::new(|p: &Pod| format!("name:{}", p.name))),
            ..DeltaFIFOOptions::default()
        });
        g.delete(Pod::arc("ns", "b", "5"));
        assert_eq!(g.list_keys(), vec!["name:b"]);
    }

    #[test]
    fn only_a_requeue_error_puts_the_deltas_back_at_the_end() {
        let f = fifo();
        f.add(Pod::arc("ns", "a", "1"));
        f.add(Pod::arc("ns", "b", "1"));
        f.add(Pod::arc("ns", "c", "1"));
        let err = f
            .pop_blocking(|_, _| Err(ProcessError::Requeue("again")))
            .unwrap_err();
        assert_eq!(err, PopError::Process("again"));
        assert_eq!(f.list_keys(), vec!["ns/b", "ns/c", "ns/a"]);
        assert_eq!(
            summary(&f.get_by_key("ns/a").unwrap()),
            vec![(DeltaType::Added, "1".into())]
        );
        // A plain error (here through `?`-style conversion) drops the deltas.
        let err = f.pop_blocking(|_, _| Err("boom".into())).unwrap_err();
        assert_eq!(err, PopError::Process("boom"));
        assert_eq!(f.list_keys(), vec!["ns/c", "ns/a"]);
        assert!(f.get_by_key("ns/b").is_none());
    }

    #[test]
    fn close_wakes_a_blocked_pop() {
        let f = Arc::new(fifo());
        let popper = {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                f.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(()))
                    .map(|_| ())
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        f.close();
        assert_eq!(popper.join().unwrap(), Err(PopError::Closed));
        assert!(f.is_closed());
    }

    #[tokio::test]
    async fn pop_waits_for_an_item() {
        let f = Arc::new(fifo());
        let task = {
            let f = Arc::clone(&f);
            tokio::spawn(async move {
                f.pop(|_, _| Ok::<(), ProcessError<Infallible>>(()))
                    .await
                    .map(|d| d.newest().unwrap().key())
            })
        };
        tokio::task::yield_now().await;
        f.add(Pod::arc("ns", "late", "1"));
        assert_eq!(task.await.unwrap(), Ok("ns/late".to_string()));
        f.close();
        assert_eq!(
            f.pop(|_, _| Ok::<(), ProcessError<Infallible>>(()))
                .await
                .unwrap_err(),
            PopError::Closed
        );
    }

    /// `pop_blocking` on a current-thread runtime's own thread would wait for a task that can
    /// never run: it panics, naming the async `pop`, rather than hang.
    #[test]
    fn pop_blocking_refuses_to_hang_a_current_thread_runtime() {
        let f = fifo();
        let message = std::thread::scope(|s| {
            s.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let _ = f.pop_blocking(|_, _| Ok::<(), ProcessError<Infallible>>(()));
                });
            })
            .join()
        })
        .expect_err("pop_blocking must refuse")
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
        assert!(
            message.contains("DeltaFIFO::pop_blocking blocks the thread")
                && message.contains("Await DeltaFIFO::pop(..).await instead"),
            "{message}"
        );
    }
}
