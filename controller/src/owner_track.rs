//! The source of [`owns_uncached`](crate::ControllerBuilder::owns_uncached): a reflector of
//! the children's metadata whose store keeps, instead of the children, only each child's
//! controller owner.
//!
//! An owner lookup needs nothing else, and remembering the owner is what lets a child that
//! vanishes between two lists (deleted while the watch was down) still wake its owner: a
//! relist compares the new list with the owners remembered. The children themselves are
//! dropped as soon as their event is mapped, relists included (the store takes a relist child
//! by child through [`Replacement`], so the reflector never holds the list), and the memory
//! held is 16 bytes per owned child (a hash of its key and its owner's slot) and each owner
//! once, whatever the size of the children.
//!
//! Priorities (for the priority queue): the owners of the children of the first list, and
//! those a term's start replays, go in at [`LOW_PRIORITY`], as an informer's initial list
//! does; the owners woken by a watch event or a later relist (which follows a watch that
//! broke, and may carry changes the store cannot tell from the rest: it keeps no
//! resourceVersions) at [`NORMAL_PRIORITY`].

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use hashbrown::HashTable;
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{Object, split_meta_namespace_key};
use kclient_cache::{
    CancellationToken, ListerWatcher, Reflector, ReflectorOptions, ReflectorStore, Replacement,
};
use parking_lot::Mutex;

use crate::builder::{Register, Registered, Remover, Replay};
use crate::object_ref::ObjectRef;
use crate::queue::{LOW_PRIORITY, NORMAL_PRIORITY, WorkQueue};
use crate::source::{Intake, Mapper};

/// A [`ReflectorStore`] that maps each event of a child to its owner's key, enqueues it, and
/// remembers the owner of each child that has one.
pub(crate) struct OwnerTrack {
    intake: Arc<Intake>,
    /// The child's owner of the primary kind; at most one (a controller owner reference).
    owner_of: Mapper<PartialObjectMetadata>,
    owners: Mutex<Owners>,
    /// Set by the first relist's commit: the later ones are not the initial list.
    listed: AtomicBool,
}

impl OwnerTrack {
    pub(crate) fn new(intake: Arc<Intake>, owner_of: Mapper<PartialObjectMetadata>) -> Self {
        OwnerTrack {
            intake,
            owner_of,
            owners: Mutex::new(Owners::default()),
            listed: AtomicBool::new(false),
        }
    }

    /// Adds the owners of the children remembered, each once, at the low priority: a term's
    /// start (nothing before the reflector's first list, which then wakes them itself).
    fn replay(&self, queue: &WorkQueue) {
        let owners: Vec<ObjectRef> = self.owners.lock().owners().cloned().collect();
        for owner in owners {
            queue.add(owner, LOW_PRIORITY);
        }
    }

    fn begin(&self) -> Relist<'_> {
        Relist {
            track: self,
            owners: Owners::default(),
        }
    }

    fn owner(&self, child: &PartialObjectMetadata) -> Option<ObjectRef> {
        (self.owner_of)(child).into_iter().next()
    }

    /// Remembers `child`'s owner and, when `wake_owners`, wakes it and its former owner.
    fn note(&self, child: &PartialObjectMetadata, wake_owners: bool) {
        let owner = self.owner(child);
        let former = self.owners.lock().set(ChildKey::of(child), owner.as_ref());
        if wake_owners {
            self.intake.add(wake(owner, former), NORMAL_PRIORITY);
        }
    }

    /// The number of children whose owner is remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.owners.lock().len()
    }
}

/// Runs the program's event filters for a child's event. They run inside the reflector's
/// store, which no listener guards: a panic there counts as a filter that does not pass, and
/// is logged, rather than ending the reflector's task and with it every later wake-up.
fn filter_passes(test: impl FnOnce() -> bool) -> bool {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(test)).unwrap_or_else(|panic| {
        tracing::error!(
            panic = %kclient_flowcontrol::panic_message(&*panic),
            "an event filter panicked on a child of an owns_uncached source; the event is skipped"
        );
        false
    })
}

impl ReflectorStore<PartialObjectMetadata> for OwnerTrack {
    fn add(&self, obj: Arc<PartialObjectMetadata>) {
        // The controller's event filters test the child (the owner is remembered either way).
        let passes = filter_passes(|| self.intake.filters_add(&*obj));
        self.note(&obj, passes);
    }

    fn update(&self, obj: Arc<PartialObjectMetadata>) {
        // No former state to test an event filter's update test with: it passes.
        self.note(&obj, true);
    }

    fn delete(&self, obj: Arc<PartialObjectMetadata>) {
        let former = self.owners.lock().remove(ChildKey::of(&obj));
        if filter_passes(|| self.intake.filters_delete(Some(&*obj))) {
            self.intake
                .add(wake(self.owner(&obj), former), NORMAL_PRIORITY);
        }
    }

    fn replace(&self, list: Vec<Arc<PartialObjectMetadata>>, resource_version: &str) {
        let mut relist = self.begin();
        for child in list {
            relist.note(&child);
        }
        Box::new(relist).commit(resource_version);
    }

    /// Each child of a relist is mapped to its owner as it arrives and dropped: the reflector
    /// never holds the list.
    fn begin_replace(&self) -> Option<Box<dyn Replacement<PartialObjectMetadata> + '_>> {
        Some(Box::new(self.begin()))
    }

    fn resync(&self) {
        // No objects to deliver again: the reflector is made without a resync period.
    }
}

/// A child's key (`namespace/name`) as a 96-bit hash of its namespace and name under keys
/// drawn at random once per process; an event's child is hashed without making the text.
///
/// The owner map needs to tell children apart, never to read their names back, so it keeps
/// this instead of the text: 12 bytes in the table and no allocation, where a key of its own
/// took an allocation of about 48 bytes (for a 30-byte key). Two of n children collide with a
/// probability of about n² / 2^97, under 10^-17 for a million children, and the hash keys are
/// secret, so names cannot be chosen to collide.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct ChildKey([u32; 3]);

/// The two independently keyed SipHash functions behind [`ChildKey`].
static CHILD_KEY_HASH: LazyLock<[RandomState; 2]> =
    LazyLock::new(|| [RandomState::new(), RandomState::new()]);

impl ChildKey {
    /// The key of `child`, from its namespace and name (no `namespace/name` text is made).
    fn of(child: &PartialObjectMetadata) -> Self {
        Self::of_parts(child.namespace(), child.name())
    }

    /// The key of a store key (`namespace/name`, or `name`), as [`of`](Self::of) makes it.
    fn of_key(key: &str) -> Self {
        // Keys come from the reflector's `meta_namespace_key`; one that is neither form is
        // still told apart from the others, as a name alone.
        let (namespace, name) = split_meta_namespace_key(key).unwrap_or((None, key));
        Self::of_parts(namespace.unwrap_or_default(), name)
    }

    fn of_parts(namespace: &str, name: &str) -> Self {
        let [a, b] = &*CHILD_KEY_HASH;
        let (a, b) = (a.hash_one((namespace, name)), b.hash_one((namespace, name)));
        ChildKey([a as u32, (a >> 32) as u32, b as u32])
    }

    /// Where the table places the key: its first 64 bits, already a keyed hash.
    fn hash(self) -> u64 {
        u64::from(self.0[0]) | u64::from(self.0[1]) << 32
    }
}

/// One remembered child: its key and its owner's slot in [`Owners::slots`]. 16 bytes.
#[derive(Clone, Copy)]
struct Child {
    key: ChildKey,
    owner: u32,
}

/// An owner and how many remembered children name it.
struct Slot {
    owner: ObjectRef,
    children: u32,
}

/// Each remembered child's owner, every owner held once.
///
/// Many children share an owner (10 ConfigMaps per owner in `bench/controller`), so a child's
/// entry is its key's hash and the number of its owner's slot: 16 bytes of table and no
/// allocation, where a key and an [`ObjectRef`] of its own took 72 bytes and three
/// allocations (and a hash with a shared pointer to the owner, 24 bytes).
#[derive(Default)]
struct Owners {
    /// The children that have an owner, placed by [`ChildKey::hash`].
    children: HashTable<Child>,
    /// The owners by slot; a slot with no children is free, and listed in `free`.
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The slots in use, placed by their owner's hash under `hasher`.
    by_owner: HashTable<u32>,
    hasher: RandomState,
}

impl Owners {
    /// Remembers `owner` for the child `key`, or forgets the child when it has none, and
    /// returns the former owner.
    fn set(&mut self, key: ChildKey, owner: Option<&ObjectRef>) -> Option<ObjectRef> {
        match owner {
            Some(owner) => self.insert(key, owner),
            None => self.remove(key),
        }
    }

    /// Remembers `owner` for the child `key`, and returns the former owner.
    fn insert(&mut self, key: ChildKey, owner: &ObjectRef) -> Option<ObjectRef> {
        let slot = self.slot_of(owner);
        self.slots[slot as usize].children += 1;
        match self.children.find_mut(key.hash(), |c| c.key == key) {
            Some(child) => {
                let former = std::mem::replace(&mut child.owner, slot);
                Some(self.release(former))
            }
            None => {
                self.children
                    .insert_unique(key.hash(), Child { key, owner: slot }, |c| c.key.hash());
                None
            }
        }
    }

    /// Forgets the child `key`, and returns its owner.
    fn remove(&mut self, key: ChildKey) -> Option<ObjectRef> {
        let (child, _) = self
            .children
            .find_entry(key.hash(), |c| c.key == key)
            .ok()?
            .remove();
        Some(self.release(child.owner))
    }

    /// The owner of the child `key`, if one is remembered.
    fn owner(&self, key: ChildKey) -> Option<&ObjectRef> {
        let child = self.children.find(key.hash(), |c| c.key == key)?;
        Some(&self.slots[child.owner as usize].owner)
    }

    /// The owners that remembered children name, each once.
    fn owners(&self) -> impl Iterator<Item = &ObjectRef> {
        self.slots
            .iter()
            .filter(|slot| slot.children > 0)
            .map(|slot| &slot.owner)
    }

    /// How many children are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.children.len()
    }

    /// The slot holding `owner`, taken (with no children yet) if none does.
    fn slot_of(&mut self, owner: &ObjectRef) -> u32 {
        let hash = self.hasher.hash_one(owner);
        let slots = &self.slots;
        if let Some(&slot) = self
            .by_owner
            .find(hash, |&s| slots[s as usize].owner == *owner)
        {
            return slot;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize].owner = owner.clone();
                slot
            }
            None => {
                self.slots.push(Slot {
                    owner: owner.clone(),
                    children: 0,
                });
                // More owners than u32 slots would need more children than memory holds.
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 owners")
            }
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.by_owner
            .insert_unique(hash, slot, |&s| hasher.hash_one(&slots[s as usize].owner));
        slot
    }

    /// Counts one child fewer for `slot`, frees the slot once no child names it, and returns
    /// its owner.
    fn release(&mut self, slot: u32) -> ObjectRef {
        let entry = &mut self.slots[slot as usize];
        entry.children -= 1;
        if entry.children > 0 {
            return entry.owner.clone();
        }
        let owner = std::mem::replace(&mut entry.owner, ObjectRef::new("", ""));
        let hash = self.hasher.hash_one(&owner);
        if let Ok(found) = self.by_owner.find_entry(hash, |&s| s == slot) {
            found.remove();
        }
        self.free.push(slot);
        owner
    }
}

/// A relist in progress: the owner of each child listed so far.
struct Relist<'t> {
    track: &'t OwnerTrack,
    owners: Owners,
}

impl Relist<'_> {
    /// Remembers the owner of a listed child.
    fn note(&mut self, child: &PartialObjectMetadata) {
        self.owners
            .set(ChildKey::of(child), self.track.owner(child).as_ref());
    }
}

impl Replacement<PartialObjectMetadata> for Relist<'_> {
    fn insert(&mut self, _key: String, child: Arc<PartialObjectMetadata>) {
        self.note(&child);
    }

    fn remove(&mut self, key: &str) {
        self.owners.remove(ChildKey::of_key(key));
    }

    /// Every owner of a listed child wakes (at the low priority for the first list, the
    /// initial one), and a child gone from the list, or now owned by another, wakes its former
    /// owner: the delete or the change happened while nothing watched.
    fn commit(self: Box<Self>, _resource_version: &str) {
        let Relist { track, owners } = *self;
        let listed: Vec<ObjectRef> = owners.owners().cloned().collect();
        let mut current = track.owners.lock();
        let former = std::mem::replace(&mut *current, owners);
        // Former owners by slot: whether one of their children vanished or moved.
        let mut gone = vec![false; former.slots.len()];
        for child in &former.children {
            let owner = &former.slots[child.owner as usize].owner;
            if current.owner(child.key) != Some(owner) {
                gone[child.owner as usize] = true;
            }
        }
        drop(current);
        let initial = !track.listed.swap(true, Ordering::AcqRel);
        if initial {
            track.intake.add(listed, LOW_PRIORITY);
        } else {
            track.intake.add(listed, NORMAL_PRIORITY);
        }
        track.intake.add(
            former
                .slots
                .into_iter()
                .zip(gone)
                .filter_map(|(slot, gone)| gone.then_some(slot.owner)),
            NORMAL_PRIORITY,
        );
    }
}

/// The keys a child's event wakes: its owner now, and its former owner if that was another.
fn wake(owner: Option<ObjectRef>, former: Option<ObjectRef>) -> Vec<ObjectRef> {
    let former = former.filter(|f| Some(f) != owner.as_ref());
    owner.into_iter().chain(former).collect()
}

/// The registration of an uncached owner source: on run, a reflector of the children's
/// metadata into an [`OwnerTrack`], on a task of its own; removing it stops the reflector.
/// It has no cache for the controller to wait for.
///
/// The reflector starts once the controller's caches have synced. Before that no queue runs,
/// so the owners its events name would be dropped (a term's start replays the owners it
/// remembers), and its list would only compete, for the server and the connection, with the
/// lists the workers wait for. Measured in `bench/controller` (1,000 Parents owning 10,000
/// ConfigMaps): every Parent reconciled about a fifth sooner.
pub(crate) fn register_uncached(
    name: String,
    lister_watcher: Arc<dyn ListerWatcher<PartialObjectMetadata>>,
    owner_of: Mapper<PartialObjectMetadata>,
) -> Register {
    Box::new(move |intake: &Arc<Intake>| {
        let store = Arc::new(OwnerTrack::new(Arc::clone(intake), owner_of));
        let track = Arc::clone(&store);
        let replay: Replay = Arc::new(move |queue| track.replay(queue));
        let reflector = Reflector::new(
            lister_watcher,
            store,
            ReflectorOptions::default().name(name),
        );
        let cancel = CancellationToken::new();
        // Stops the reflector when the remover is called, and also when it is dropped
        // uncalled (a `run` future dropped before it returned), so no watch outlives the run.
        let stop = cancel.clone().drop_guard();
        let synced = Arc::clone(intake);
        tokio::spawn(async move {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                () = synced.caches_synced() => {}
            }
            reflector.run(cancel).await
        });
        let remover: Remover = Box::new(move || drop(stop));
        Ok(Registered {
            registration: None,
            remover,
            replay,
        })
    })
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kclient_workqueue::{RateLimitingQueue, default_controller_rate_limiter};

    use super::*;
    use crate::source::test_support::{drain, drain_by_priority, obj, owners};

    fn child(name: &str, owner: Option<&str>) -> Arc<PartialObjectMetadata> {
        obj(name, "1", owner)
    }

    fn track() -> (OwnerTrack, RateLimitingQueue<ObjectRef>) {
        let intake = Arc::new(Intake::default());
        let queue = RateLimitingQueue::new(default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        (OwnerTrack::new(intake, owners()), queue)
    }

    /// The controller's event filters test a child's add and delete; its owner is remembered
    /// even when its add is filtered out, and an update passes untested.
    #[test]
    fn event_filters_test_adds_and_deletes() {
        let filters = vec![crate::EventFilter::new(|o: &dyn Object| {
            !o.name().starts_with("quiet")
        })];
        let intake = Arc::new(Intake::with_filters(filters));
        let queue = RateLimitingQueue::new(default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        let track = OwnerTrack::new(intake, owners());
        track.add(child("quiet-1", Some("a")));
        assert!(drain(&queue).is_empty());
        assert_eq!(track.len(), 1);
        track.update(child("quiet-1", Some("b")));
        assert_eq!(drain(&queue), ["ns/a", "ns/b"]);
        track.delete(child("quiet-1", Some("b")));
        assert!(drain(&queue).is_empty());
        assert_eq!(track.len(), 0);
        track.add(child("loud", Some("c")));
        track.delete(child("loud", Some("c")));
        assert_eq!(drain(&queue), ["ns/c"]);
        queue.shut_down();
    }

    /// A filter that panics skips the event and leaves the track working (it runs inside the
    /// reflector's store, where a panic would end the reflector).
    #[test]
    fn a_filter_that_panics_skips_the_event() {
        let filters = vec![crate::EventFilter::new(|o: &dyn Object| {
            assert!(!o.name().starts_with("bad"), "a filter's bug");
            true
        })];
        let intake = Arc::new(Intake::with_filters(filters));
        let queue = RateLimitingQueue::new(default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        let track = OwnerTrack::new(intake, owners());
        track.add(child("bad-1", Some("a")));
        assert!(drain(&queue).is_empty());
        track.delete(child("bad-1", Some("a")));
        assert!(drain(&queue).is_empty());
        track.add(child("good", Some("b")));
        assert_eq!(drain(&queue), ["ns/b"]);
        queue.shut_down();
    }

    #[test]
    fn events_wake_the_owner_and_a_former_owner() {
        let (track, queue) = track();
        track.add(child("c", Some("a")));
        assert_eq!(drain(&queue), ["ns/a"]);
        // A change of owner wakes both; a child without an owner is not remembered.
        track.update(child("c", Some("b")));
        assert_eq!(drain(&queue), ["ns/a", "ns/b"]);
        track.add(child("orphan", None));
        assert!(drain(&queue).is_empty());
        assert_eq!(track.len(), 1);
        // Losing its owner reference wakes the former owner and forgets the child.
        track.update(child("c", None));
        assert_eq!(drain(&queue), ["ns/b"]);
        assert_eq!(track.len(), 0);
        // A delete wakes the owner of the final state, and the remembered one if it differs.
        track.add(child("d", Some("a")));
        drain(&queue);
        track.delete(child("d", Some("b")));
        assert_eq!(drain(&queue), ["ns/a", "ns/b"]);
        assert_eq!(track.len(), 0);
        queue.shut_down();
    }

    #[test]
    fn each_owner_is_held_once_and_forgotten_with_its_last_child() {
        let mut owners = Owners::default();
        let (a, b) = (ObjectRef::new("ns", "a"), ObjectRef::new("ns", "b"));
        let held = |owners: &Owners| owners.owners().cloned().collect::<Vec<_>>();
        let key = ChildKey::of_key;
        assert_eq!(owners.insert(key("ns/c1"), &a), None);
        assert_eq!(owners.insert(key("ns/c2"), &a), None);
        assert_eq!(owners.insert(key("ns/c3"), &b), None);
        assert_eq!(held(&owners), [a.clone(), b.clone()]);
        let slot = |owners: &Owners, child| {
            let key = key(child);
            owners
                .children
                .find(key.hash(), |c| c.key == key)
                .unwrap()
                .owner
        };
        assert_eq!(
            slot(&owners, "ns/c1"),
            slot(&owners, "ns/c2"),
            "two children of one owner share its slot"
        );
        // c3 moves to a: b has no child left and is forgotten.
        assert_eq!(owners.insert(key("ns/c3"), &a), Some(b.clone()));
        assert_eq!(held(&owners), std::slice::from_ref(&a));
        assert_eq!(owners.remove(key("ns/c1")), Some(a.clone()));
        assert_eq!(owners.remove(key("ns/c1")), None);
        assert_eq!(
            held(&owners),
            std::slice::from_ref(&a),
            "a still owns c2 and c3"
        );
        assert_eq!(owners.remove(key("ns/c2")), Some(a.clone()));
        assert_eq!(owners.remove(key("ns/c3")), Some(a.clone()));
        assert!(held(&owners).is_empty() && owners.len() == 0);
        assert!(owners.by_owner.is_empty());
        // A freed slot is taken again rather than a new one added.
        assert_eq!(owners.insert(key("ns/c4"), &b), None);
        assert_eq!(owners.slots.len(), 2);
        assert_eq!(owners.owner(key("ns/c4")), Some(&b));
        assert_eq!(owners.owner(key("ns/c1")), None);
    }

    #[test]
    fn child_keys_tell_children_apart() {
        assert_eq!(ChildKey::of_key("ns/c"), ChildKey::of_key("ns/c"));
        // A store key and the object it names give one key.
        assert_eq!(ChildKey::of_key("ns/c"), ChildKey::of(&obj("c", "1", None)));
        assert_ne!(ChildKey::of_key("ns/c"), ChildKey::of_key("c"));
        let keys: std::collections::HashSet<ChildKey> = (0..200_000)
            .map(|i| ChildKey::of_key(&format!("ns/child-{i}")))
            .collect();
        assert_eq!(keys.len(), 200_000);
        // The table places keys by their first 64 bits: those differ too.
        let placed: std::collections::HashSet<u64> = keys.iter().map(|k| k.hash()).collect();
        assert_eq!(placed.len(), 200_000);
    }

    #[test]
    fn a_relist_wakes_the_owners_of_children_that_vanished_or_moved() {
        let (track, queue) = track();
        track.replace(
            vec![
                child("stays", Some("a")),
                child("goes", Some("b")),
                child("moves", Some("c")),
            ],
            "1",
        );
        assert_eq!(drain(&queue), ["ns/a", "ns/b", "ns/c"]);
        // "goes" was deleted and "moves" changed owner while no watch ran.
        track.replace(
            vec![child("stays", Some("a")), child("moves", Some("d"))],
            "2",
        );
        assert_eq!(drain(&queue), ["ns/a", "ns/b", "ns/c", "ns/d"]);
        assert_eq!(track.len(), 2);
        queue.shut_down();
    }

    /// A list-watch whose watch stream holds `alive` until the reflector drops the stream,
    /// and the count of its lists.
    fn watched_until_dropped() -> (
        Arc<dyn ListerWatcher<PartialObjectMetadata>>,
        tokio::sync::mpsc::Receiver<()>,
        Arc<AtomicUsize>,
    ) {
        let (alive, gone) = tokio::sync::mpsc::channel::<()>(1);
        let lists = Arc::new(AtomicUsize::new(0));
        let listed = Arc::clone(&lists);
        let lw = kclient_cache::ListWatch::new(
            move |_| {
                listed.fetch_add(1, Ordering::SeqCst);
                async {
                    Ok(kclient_apimachinery::ObjectList {
                        metadata: kclient_apimachinery::ListMeta {
                            resource_version: "1".into(),
                            ..Default::default()
                        },
                        items: Vec::new(),
                    })
                }
            },
            move |_| {
                let alive = alive.clone();
                async move {
                    Ok(futures_util::stream::pending::<
                        Result<kclient_apimachinery::WatchEvent<PartialObjectMetadata>, _>,
                    >()
                    .map(move |e| {
                        let _ = &alive;
                        e
                    }))
                }
            },
        )
        .without_watch_list_semantics();
        (Arc::new(lw), gone, lists)
    }

    #[tokio::test]
    async fn the_reflector_lists_only_once_the_caches_have_synced() {
        let (lw, _gone, lists) = watched_until_dropped();
        let register = register_uncached("test".into(), lw, Arc::new(|_| Vec::new()));
        let intake = Arc::new(Intake::default());
        let remover = register(&intake).unwrap().remover;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(
            lists.load(Ordering::SeqCst),
            0,
            "listed before the caches synced"
        );
        intake.mark_caches_synced();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while lists.load(Ordering::SeqCst) == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no list 10 s after the caches synced"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        remover();

        // Removed before the caches synced: it never lists, even once they have.
        let (lw, _gone, lists) = watched_until_dropped();
        let register = register_uncached("test".into(), lw, Arc::new(|_| Vec::new()));
        let intake = Arc::new(Intake::default());
        let remover = register(&intake).unwrap().remover;
        remover();
        intake.mark_caches_synced();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(lists.load(Ordering::SeqCst), 0, "listed after its removal");
    }

    #[tokio::test]
    async fn the_reflector_stops_when_the_remover_is_called_or_dropped() {
        for call in [true, false] {
            let (lw, mut gone, _) = watched_until_dropped();
            let register = register_uncached("test".into(), lw, Arc::new(|_| Vec::new()));
            let intake = Arc::new(Intake::default());
            let Registered {
                registration,
                remover,
                ..
            } = register(&intake).unwrap();
            assert!(registration.is_none(), "nothing to wait for");
            intake.mark_caches_synced();
            // The watch opens: its stream holds a sender, so `recv` waits.
            let open = tokio::time::timeout(std::time::Duration::from_millis(200), gone.recv());
            assert!(
                open.await.is_err(),
                "the watch ended before the remover ran"
            );
            if call {
                remover();
            } else {
                drop(remover);
            }
            // Every sender dropped with the stream: `recv` returns `None`.
            let closed = tokio::time::timeout(std::time::Duration::from_secs(10), gone.recv());
            assert_eq!(closed.await, Ok(None), "remover called: {call}");
        }
    }

    /// On the priority queue: the first list's owners (the initial list) and a term's replay go
    /// in at the low priority; watch events, a later relist and the owners of children that
    /// vanished at 0.
    #[test]
    fn the_initial_list_and_the_replay_wake_owners_at_the_low_priority() {
        let intake = Arc::new(Intake::default());
        let queue = kclient_workqueue::PriorityQueue::<ObjectRef>::new();
        intake.set(Some(queue.clone().into()));
        let track = Arc::new(OwnerTrack::new(Arc::clone(&intake), owners()));
        track.replace(vec![child("x", Some("a")), child("y", Some("b"))], "1");
        track.add(child("z", Some("c")));
        assert_eq!(
            drain_by_priority(&queue),
            [
                ("ns/c".to_owned(), 0),
                ("ns/a".to_owned(), LOW_PRIORITY),
                ("ns/b".to_owned(), LOW_PRIORITY),
            ]
        );
        // A later relist: "y" vanished and "x" stays.
        track.replace(vec![child("x", Some("a")), child("z", Some("c"))], "2");
        let mut woken = drain_by_priority(&queue);
        woken.sort();
        assert_eq!(
            woken,
            [
                ("ns/a".to_owned(), 0),
                ("ns/b".to_owned(), 0),
                ("ns/c".to_owned(), 0),
            ]
        );
        // The replay of a term's start: the owners remembered, low.
        track.replay(&queue.clone().into());
        let mut replayed = drain_by_priority(&queue);
        replayed.sort();
        assert_eq!(
            replayed,
            [
                ("ns/a".to_owned(), LOW_PRIORITY),
                ("ns/c".to_owned(), LOW_PRIORITY),
            ]
        );
        queue.shut_down();
    }

    #[test]
    fn a_relist_taken_child_by_child_commits_at_the_end_or_not_at_all() {
        let (track, queue) = track();
        track.add(child("old", Some("a")));
        drain(&queue);
        // Abandoned midway (the list failed): nothing changes and nobody wakes.
        let mut relist = track.begin_replace().expect("a stepwise store");
        relist.insert("ns/new".into(), child("new", Some("b")));
        drop(relist);
        assert!(drain(&queue).is_empty());
        assert_eq!(track.len(), 1);
        // Completed: the list's owners wake, and so does the owner of the child that is gone.
        let mut relist = track.begin_replace().expect("a stepwise store");
        relist.insert("ns/new".into(), child("new", Some("b")));
        relist.insert("ns/brief".into(), child("brief", Some("c")));
        relist.insert("ns/orphan".into(), child("orphan", None));
        relist.remove("ns/brief");
        assert!(drain(&queue).is_empty(), "nothing wakes before the commit");
        relist.commit("2");
        assert_eq!(drain(&queue), ["ns/a", "ns/b"]);
        assert_eq!(track.len(), 1);
        queue.shut_down();
    }
}
