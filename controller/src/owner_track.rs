//! The source of [`owns_uncached`](crate::ControllerBuilder::owns_uncached): a reflector of
//! the children's metadata whose store keeps, instead of the children, only each child's
//! controller owner.
//!
//! An owner lookup needs nothing else, and remembering the owner is what lets a child that
//! vanishes between two lists (deleted while the watch was down) still wake its owner: a
//! relist compares the new list with the owners remembered. The children themselves are
//! dropped as soon as their event is mapped, relists included (the store takes a relist child
//! by child through [`Replacement`], so the reflector never holds the list), and the memory
//! held is one 16-byte hash per owned child and each owner once, whatever the size of the
//! children.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock};

use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::meta_namespace_key;
use kclient_cache::{
    CancellationToken, ListerWatcher, Reflector, ReflectorOptions, ReflectorStore, Replacement,
};
use parking_lot::Mutex;

use crate::builder::{Register, Remover};
use crate::object_ref::ObjectRef;
use crate::source::{Intake, Mapper};

/// A [`ReflectorStore`] that maps each event of a child to its owner's key, enqueues it, and
/// remembers the owner of each child that has one.
pub(crate) struct OwnerTrack {
    intake: Arc<Intake>,
    /// The child's owner of the primary kind; at most one (a controller owner reference).
    owner_of: Mapper<PartialObjectMetadata>,
    owners: Mutex<Owners>,
}

impl OwnerTrack {
    pub(crate) fn new(intake: Arc<Intake>, owner_of: Mapper<PartialObjectMetadata>) -> Self {
        OwnerTrack {
            intake,
            owner_of,
            owners: Mutex::new(Owners::default()),
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

    /// Records `owner` (or none) for `key`, and returns the keys to wake.
    fn record(&self, key: &str, owner: Option<ObjectRef>) -> Vec<ObjectRef> {
        let former = {
            let mut owners = self.owners.lock();
            match &owner {
                Some(owner) => owners.insert(key, owner),
                None => owners.remove(key),
            }
        };
        wake(owner, former)
    }

    /// The number of children whose owner is remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.owners.lock().children.len()
    }
}

impl ReflectorStore<PartialObjectMetadata> for OwnerTrack {
    fn add(&self, obj: Arc<PartialObjectMetadata>) {
        let keys = self.record(&meta_namespace_key(&*obj), self.owner(&obj));
        self.intake.add(keys);
    }

    fn update(&self, obj: Arc<PartialObjectMetadata>) {
        self.add(obj);
    }

    fn delete(&self, obj: Arc<PartialObjectMetadata>) {
        let former = self.owners.lock().remove(&meta_namespace_key(&*obj));
        self.intake.add(wake(self.owner(&obj), former));
    }

    fn replace(&self, list: Vec<Arc<PartialObjectMetadata>>, resource_version: &str) {
        let mut relist = self.begin();
        for child in list {
            relist.insert(meta_namespace_key(&*child), child);
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

/// A child's key (`namespace/name`) as a 128-bit hash under keys drawn at random once per
/// process.
///
/// The owner map needs to tell children apart, never to read their names back, so it keeps
/// this instead of the text: 16 bytes in the table and no allocation, where a key of its own
/// took an allocation of about 48 bytes (for a 30-byte key). Two of n children collide with a
/// probability of about n² / 2^129, under 10^-26 for a million children, and the hash keys are
/// secret, so names cannot be chosen to collide.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct ChildKey([u64; 2]);

/// The two independently keyed SipHash functions behind [`ChildKey`].
static CHILD_KEY_HASH: LazyLock<[RandomState; 2]> =
    LazyLock::new(|| [RandomState::new(), RandomState::new()]);

impl ChildKey {
    fn of(key: &str) -> Self {
        let [a, b] = &*CHILD_KEY_HASH;
        ChildKey([a.hash_one(key), b.hash_one(key)])
    }
}

/// Each remembered child's owner, every owner held once.
///
/// Many children share an owner (10 ConfigMaps per owner in `bench/controller`), so a child's
/// entry is its key's hash and a shared pointer to its owner: 24 bytes of table and no
/// allocation, where a key and an [`ObjectRef`] of its own took 72 bytes and three
/// allocations.
#[derive(Default)]
struct Owners {
    /// Child to its owner, for the children that have one.
    children: HashMap<ChildKey, Arc<ObjectRef>>,
    /// The owners in `children`, each once.
    interned: HashSet<Arc<ObjectRef>>,
}

impl Owners {
    /// Remembers `owner` for the child `key`, and returns the former owner.
    fn insert(&mut self, key: &str, owner: &ObjectRef) -> Option<ObjectRef> {
        let owner = match self.interned.get(owner) {
            Some(known) => Arc::clone(known),
            None => {
                let owner = Arc::new(owner.clone());
                self.interned.insert(Arc::clone(&owner));
                owner
            }
        };
        let former = self.children.insert(ChildKey::of(key), owner)?;
        Some(self.release(former))
    }

    /// Forgets the child `key`, and returns its owner.
    fn remove(&mut self, key: &str) -> Option<ObjectRef> {
        let former = self.children.remove(&ChildKey::of(key))?;
        Some(self.release(former))
    }

    /// Drops the owner of a child that is no longer remembered, and forgets the owner once no
    /// child holds it.
    fn release(&mut self, owner: Arc<ObjectRef>) -> ObjectRef {
        // Held by `owner` and by `interned`: no child is left.
        if Arc::strong_count(&owner) == 2 {
            self.interned.remove(&owner);
        }
        Arc::unwrap_or_clone(owner)
    }
}

/// A relist in progress: the owner of each child listed so far.
struct Relist<'t> {
    track: &'t OwnerTrack,
    owners: Owners,
}

impl Replacement<PartialObjectMetadata> for Relist<'_> {
    fn insert(&mut self, key: String, child: Arc<PartialObjectMetadata>) {
        match self.track.owner(&child) {
            Some(owner) => self.owners.insert(&key, &owner),
            None => self.owners.remove(&key),
        };
    }

    fn remove(&mut self, key: &str) {
        self.owners.remove(key);
    }

    /// Every owner of a listed child wakes, and a child gone from the list, or now owned by
    /// another, wakes its former owner: the delete or the change happened while nothing
    /// watched.
    fn commit(self: Box<Self>, _resource_version: &str) {
        let Relist { track, owners } = *self;
        let mut woken: Vec<ObjectRef> = owners.interned.iter().map(|o| (**o).clone()).collect();
        let mut current = track.owners.lock();
        let former = std::mem::replace(&mut *current, owners);
        let mut gone: HashSet<Arc<ObjectRef>> = HashSet::new();
        for (key, owner) in former.children {
            if current.children.get(&key) != Some(&owner) {
                gone.insert(owner);
            }
        }
        drop(current);
        woken.extend(gone.iter().map(|o| (**o).clone()));
        track.intake.add(woken);
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
/// so the owners its events name would be dropped (the run enqueues every primary object when
/// it starts), and its list would only compete, for the server and the connection, with the
/// lists the workers wait for. Measured in `bench/controller` (1,000 Parents owning 10,000
/// ConfigMaps): every Parent reconciled about a fifth sooner.
pub(crate) fn register_uncached(
    name: String,
    lister_watcher: Arc<dyn ListerWatcher<PartialObjectMetadata>>,
    owner_of: Mapper<PartialObjectMetadata>,
) -> Register {
    Box::new(move |intake: &Arc<Intake>| {
        let store = Arc::new(OwnerTrack::new(Arc::clone(intake), owner_of));
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
        Ok((None, remover))
    })
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kclient_workqueue::{RateLimitingQueue, default_controller_rate_limiter};

    use super::*;
    use crate::source::test_support::{drain, obj, owners};

    fn child(name: &str, owner: Option<&str>) -> Arc<PartialObjectMetadata> {
        obj(name, "1", owner)
    }

    fn track() -> (OwnerTrack, RateLimitingQueue<ObjectRef>) {
        let intake = Arc::new(Intake::default());
        let queue = RateLimitingQueue::new(default_controller_rate_limiter());
        intake.set(Some(queue.clone()));
        (OwnerTrack::new(intake, owners()), queue)
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
        assert_eq!(owners.insert("ns/c1", &a), None);
        assert_eq!(owners.insert("ns/c2", &a), None);
        assert_eq!(owners.insert("ns/c3", &b), None);
        assert_eq!(owners.interned.len(), 2);
        let child = |key| &owners.children[&ChildKey::of(key)];
        assert!(
            Arc::ptr_eq(child("ns/c1"), child("ns/c2")),
            "two children of one owner share it"
        );
        // c3 moves to a: b has no child left and is forgotten.
        assert_eq!(owners.insert("ns/c3", &a), Some(b.clone()));
        assert_eq!(owners.interned.len(), 1);
        assert_eq!(owners.remove("ns/c1"), Some(a.clone()));
        assert_eq!(owners.remove("ns/c1"), None);
        assert_eq!(owners.interned.len(), 1, "a still owns c2 and c3");
        assert_eq!(owners.remove("ns/c2"), Some(a.clone()));
        assert_eq!(owners.remove("ns/c3"), Some(a));
        assert!(owners.interned.is_empty() && owners.children.is_empty());
    }

    #[test]
    fn child_keys_tell_children_apart() {
        assert_eq!(ChildKey::of("ns/c"), ChildKey::of("ns/c"));
        let [a, b] = ChildKey::of("ns/c").0;
        assert_ne!(a, b, "the two halves come from differently keyed hashes");
        let keys: HashSet<ChildKey> = (0..200_000)
            .map(|i| ChildKey::of(&format!("ns/child-{i}")))
            .collect();
        assert_eq!(keys.len(), 200_000);
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
        let (_, remover) = register(&intake).unwrap();
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
        let (_, remover) = register(&intake).unwrap();
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
            let (registration, remover) = register(&intake).unwrap();
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
