//! Sources: the event handlers a controller adds to the informers it watches, each turning
//! an informer event into the keys of primary objects to reconcile.
//!
//! - the primary resource (`for_`): the object's own key;
//! - an owned resource (`owns`): the key of the object's controller owner, when that owner is
//!   of the primary kind (controller-runtime's `EnqueueRequestForOwner` with `OnlyControllerOwner`);
//! - any resource (`watches`): the keys a mapping function returns.
//!
//! An update enqueues the keys of both the old and the new object, so a child that changes
//! owner (or a mapping that changes answer) wakes both primaries. The keys go to the
//! controller's [`Intake`], which drops them while no queue runs (before the controller runs,
//! or while it does not lead): when a run (or a leadership term) starts, each source replays
//! the objects it knows as adds instead, through the same predicates and mapping, as
//! controller-runtime starts a source with its initial list as Create events.
//!
//! Each key goes in at a priority (which only the priority queue heeds): [`LOW_PRIORITY`] for
//! an add from the informer's initial list and an update whose resourceVersion did not change
//! (a resync, or a relist that found the object as it was), [`NORMAL_PRIORITY`] for the rest,
//! as controller-runtime's event handlers do (`WithLowPriorityWhenUnchanged`).

use std::collections::HashSet;
use std::sync::Arc;

use kclient_apimachinery::Object;
use kclient_cache::{CancellationToken, DeletedObject, ResourceEventHandler};
use parking_lot::RwLock;

use crate::object_ref::ObjectRef;
use crate::predicate::{EventFilter, Predicate};
use crate::queue::{LOW_PRIORITY, NORMAL_PRIORITY, WorkQueue};

/// Where sources put keys: the running queue, or nowhere.
#[derive(Default)]
pub(crate) struct Intake {
    queue: RwLock<Option<WorkQueue>>,
    /// Cancelled (once) when the controller's caches have synced.
    caches_synced: CancellationToken,
    /// The controller's event filters, which every source's events must pass besides its own
    /// predicates.
    filters: Vec<EventFilter>,
}

impl Intake {
    /// An intake whose sources' events must also pass `filters`.
    pub(crate) fn with_filters(filters: Vec<EventFilter>) -> Self {
        Intake {
            filters,
            ..Intake::default()
        }
    }

    /// Whether an add of `obj` passes the event filters.
    pub(crate) fn filters_add(&self, obj: &dyn Object) -> bool {
        self.filters.iter().all(|f| f.add(obj))
    }

    /// Whether an update from `old` to `new` passes the event filters.
    pub(crate) fn filters_update(&self, old: &dyn Object, new: &dyn Object) -> bool {
        self.filters.iter().all(|f| f.update(old, new))
    }

    /// Whether a delete of `obj` passes the event filters (`None`: final state unknown, which
    /// passes).
    pub(crate) fn filters_delete(&self, obj: Option<&dyn Object>) -> bool {
        self.filters.iter().all(|f| f.delete(obj))
    }

    /// Says that the controller's caches have synced: sources waiting for it may start.
    pub(crate) fn mark_caches_synced(&self) {
        self.caches_synced.cancel();
    }

    /// Resolves once [`mark_caches_synced`](Self::mark_caches_synced) has been called.
    pub(crate) async fn caches_synced(&self) {
        self.caches_synced.cancelled().await;
    }

    /// Adds `keys` at `priority` to the running queue, or drops them while none runs.
    pub(crate) fn add(&self, keys: impl IntoIterator<Item = ObjectRef>, priority: i32) {
        if let Some(queue) = self.queue.read().as_ref() {
            for key in keys {
                queue.add(key, priority);
            }
        }
    }

    /// Sends keys to `queue` from now on (`None`: drops them).
    pub(crate) fn set(&self, queue: Option<WorkQueue>) {
        *self.queue.write() = queue;
    }
}

/// Maps an object to the primary keys it concerns.
pub(crate) type Mapper<T> = Arc<dyn Fn(&T) -> Vec<ObjectRef> + Send + Sync>;

/// The event handler of one source.
pub(crate) struct SourceHandler<T> {
    pub(crate) intake: Arc<Intake>,
    pub(crate) map: Mapper<T>,
    pub(crate) predicates: Vec<Predicate<T>>,
    /// Whether the source is the primary resource, whose deletes without a final state still
    /// carry the key.
    pub(crate) primary: bool,
}

impl<T: Object> ResourceEventHandler<T> for SourceHandler<T> {
    fn on_add(&mut self, obj: &Arc<T>, is_in_initial_list: bool) {
        if self.intake.filters_add(&**obj) && self.predicates.iter().all(|p| p.add(obj)) {
            let priority = if is_in_initial_list {
                LOW_PRIORITY
            } else {
                NORMAL_PRIORITY
            };
            self.intake.add((self.map)(obj), priority);
        }
    }

    fn on_update(&mut self, old: &Arc<T>, new: &Arc<T>) {
        let filtered = self.intake.filters_update(&**old, &**new);
        if filtered && self.predicates.iter().all(|p| p.update(old, new)) {
            // Unchanged: a resync, or a relist that found the object as it was.
            let priority = if old.resource_version() == new.resource_version() {
                LOW_PRIORITY
            } else {
                NORMAL_PRIORITY
            };
            let mut keys = (self.map)(new);
            // The new object's keys are known: a mapper that panics on the old object (one the
            // program's newer code no longer expects) loses only the old object's keys.
            let old = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.map)(old)))
                .unwrap_or_else(|panic| {
                    tracing::error!(
                        panic = %kclient_flowcontrol::panic_message(&*panic),
                        "a mapper panicked on the old object of an update; only the new \
                         object's keys are enqueued"
                    );
                    Vec::new()
                });
            // Each key once, found through a set: a mapper may fan one object out to
            // thousands of primaries, and comparing every old key with every new one would
            // stall the informer's event delivery for seconds.
            let extra: Vec<ObjectRef> = {
                let known: HashSet<&ObjectRef> = keys.iter().collect();
                old.into_iter().filter(|key| !known.contains(key)).collect()
            };
            keys.extend(extra);
            self.intake.add(keys, priority);
        }
    }

    fn on_delete(&mut self, deleted: DeletedObject<T>) {
        let obj = deleted.object().map(|o| &**o);
        let filtered = self.intake.filters_delete(obj.map(|o| o as &dyn Object));
        if !filtered || !self.predicates.iter().all(|p| p.delete(obj)) {
            return;
        }
        match obj {
            Some(obj) => self.intake.add((self.map)(obj), NORMAL_PRIORITY),
            None if self.primary => {
                if let Ok((namespace, name)) =
                    kclient_apimachinery::split_meta_namespace_key(&deleted.key())
                {
                    self.intake.add(
                        [ObjectRef::new(namespace.unwrap_or_default(), name)],
                        NORMAL_PRIORITY,
                    );
                }
            }
            None => {}
        }
    }
}

/// The group of an `apiVersion`: `""` for `v1`, `apps` for `apps/v1`.
pub(crate) fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

/// Children, owner mapping and queue draining for the unit tests of the sources.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use kclient_apimachinery::Object;
    use kclient_apimachinery::meta::PartialObjectMetadata;
    use kclient_workqueue::{PriorityQueue, RateLimitingQueue};
    use serde_json::json;

    use super::Mapper;
    use crate::object_ref::ObjectRef;

    /// The metadata of `name` in namespace `ns` at `rv`, with a controller reference to the
    /// ConfigMap `owner` if given.
    pub(crate) fn obj(name: &str, rv: &str, owner: Option<&str>) -> Arc<PartialObjectMetadata> {
        let owners: Vec<_> = owner
            .map(|o| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": o, "uid": o, "controller": true}))
            .into_iter()
            .collect();
        Arc::new(
            serde_json::from_value(json!({"metadata": {
                "name": name, "namespace": "ns", "resourceVersion": rv, "ownerReferences": owners,
            }}))
            .unwrap(),
        )
    }

    /// Maps an object to the key of each object its owner references name, in its namespace.
    pub(crate) fn owners() -> Mapper<PartialObjectMetadata> {
        Arc::new(|o: &PartialObjectMetadata| {
            o.owner_references()
                .iter()
                .map(|r| ObjectRef::new(o.namespace(), r.name))
                .collect()
        })
    }

    /// Takes every key waiting in `queue`, sorted.
    pub(crate) fn drain(queue: &RateLimitingQueue<ObjectRef>) -> Vec<String> {
        let mut keys = Vec::new();
        while let Ok(key) = queue.try_get() {
            queue.done(&key);
            keys.push(key.to_string());
        }
        keys.sort();
        keys
    }

    /// Takes every key ready in `queue`, in the order the queue hands them out, with their
    /// priorities.
    pub(crate) fn drain_by_priority(queue: &PriorityQueue<ObjectRef>) -> Vec<(String, i32)> {
        let mut keys = Vec::new();
        while !queue.is_empty() {
            let Some((key, priority)) = queue.get_blocking() else {
                break;
            };
            queue.done(&key);
            keys.push((key.to_string(), priority));
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::PartialObjectMetadata;
    use kclient_cache::DeletedFinalStateUnknown;

    use kclient_workqueue::{PriorityQueue, RateLimitingQueue};

    use super::test_support::{drain, drain_by_priority, obj, owners};
    use super::*;

    #[test]
    fn handlers_apply_predicates_map_old_and_new_and_drop_keys_without_a_queue() {
        let intake = Arc::new(Intake::default());
        // The owner of the old and the new version of a child both wake.
        let mut handler = SourceHandler::<PartialObjectMetadata> {
            intake: Arc::clone(&intake),
            map: owners(),
            predicates: vec![Predicate::resource_version_changed()],
            primary: false,
        };
        // No queue yet: events are dropped.
        handler.on_add(&obj("child", "1", Some("a")), true);
        let queue = RateLimitingQueue::new(kclient_workqueue::default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        assert!(drain(&queue).is_empty());

        handler.on_update(&obj("child", "1", Some("a")), &obj("child", "2", Some("b")));
        assert_eq!(drain(&queue), ["ns/a", "ns/b"]);
        // A resync (same resourceVersion) does not pass the predicate.
        handler.on_update(&obj("child", "2", Some("b")), &obj("child", "2", Some("b")));
        assert!(drain(&queue).is_empty());
        // A tombstone without its object maps to nothing for a non-primary source...
        let tombstone = || {
            DeletedObject::Tombstone(DeletedFinalStateUnknown {
                key: "ns/gone".to_owned(),
                obj: None,
            })
        };
        handler.on_delete(tombstone());
        assert!(drain(&queue).is_empty());
        // ... and to its own key for the primary.
        handler.primary = true;
        handler.on_delete(tombstone());
        assert_eq!(drain(&queue), ["ns/gone"]);

        intake.set(None);
        handler.on_add(&obj("child", "3", Some("c")), false);
        assert!(drain(&queue).is_empty());
        queue.shut_down();
    }

    /// A mapper that panics on the old object of an update still has the new object's keys
    /// enqueued; one that panics on the new object skips the event (the informer's listener
    /// catches that panic).
    #[test]
    fn a_mapper_that_panics_on_the_old_object_still_enqueues_the_new_keys() {
        let intake = Arc::new(Intake::default());
        let owners = owners();
        let mut handler = SourceHandler::<PartialObjectMetadata> {
            intake: Arc::clone(&intake),
            map: Arc::new(move |o: &PartialObjectMetadata| {
                assert_ne!(
                    o.resource_version(),
                    "1",
                    "a mapper that cannot read version 1"
                );
                owners(o)
            }),
            predicates: Vec::new(),
            primary: false,
        };
        let queue = RateLimitingQueue::new(kclient_workqueue::default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        handler.on_update(&obj("child", "1", Some("a")), &obj("child", "2", Some("b")));
        assert_eq!(drain(&queue), ["ns/b"]);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handler.on_update(&obj("child", "2", Some("b")), &obj("child", "1", Some("c")))
        }));
        assert!(panicked.is_err());
        assert!(drain(&queue).is_empty());
        queue.shut_down();
    }

    /// An update whose objects each map to many keys enqueues each key once, in time linear
    /// in their number: a mapper that fans a shared object (a global ConfigMap) out to every
    /// primary must not stall the informer's event delivery.
    #[test]
    fn an_update_mapped_to_many_keys_enqueues_each_once_in_linear_time() {
        const KEYS: usize = 40_000;
        let intake = Arc::new(Intake::default());
        // The old object maps to keys 0..KEYS, the new one to KEYS/2..KEYS*3/2: half shared.
        let map: Mapper<PartialObjectMetadata> = Arc::new(|o: &PartialObjectMetadata| {
            let start = if o.resource_version() == "1" {
                0
            } else {
                KEYS / 2
            };
            (start..start + KEYS)
                .map(|i| ObjectRef::new("ns", format!("primary-{i}")))
                .collect()
        });
        let mut handler = SourceHandler {
            intake: Arc::clone(&intake),
            map,
            predicates: Vec::new(),
            primary: false,
        };
        let queue = RateLimitingQueue::new(kclient_workqueue::default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        let started = std::time::Instant::now();
        handler.on_update(&obj("shared", "1", None), &obj("shared", "2", None));
        let elapsed = started.elapsed();
        assert_eq!(queue.len(), KEYS * 3 / 2);
        // Linear work takes 0.2 s in a debug build; comparing each key with every other (800
        // million comparisons) took 22.5 s. The bound leaves a loaded machine 50 times the
        // linear time.
        assert!(
            elapsed < std::time::Duration::from_secs(10),
            "mapping the update took {elapsed:?}"
        );
        queue.shut_down();
    }

    /// On the priority queue, what is most likely unchanged goes in at the low priority (an
    /// add of the initial list, an update at the same resourceVersion) and the rest at 0, so
    /// the changes go out first; a key already queued low rises when it changes.
    #[test]
    fn unchanged_objects_go_in_at_the_low_priority() {
        let intake = Arc::new(Intake::default());
        let mut handler = SourceHandler::<PartialObjectMetadata> {
            intake: Arc::clone(&intake),
            map: owners(),
            predicates: Vec::new(),
            primary: true,
        };
        let queue = PriorityQueue::<ObjectRef>::new();
        intake.set(Some(queue.clone().into()));
        handler.on_add(&obj("listed", "1", Some("initial")), true);
        handler.on_add(&obj("created", "1", Some("created")), false);
        handler.on_update(
            &obj("same", "4", Some("resync")),
            &obj("same", "4", Some("resync")),
        );
        handler.on_update(
            &obj("edited", "4", Some("edited")),
            &obj("edited", "5", Some("edited")),
        );
        handler.on_delete(DeletedObject::Object(obj("gone", "6", Some("deleted"))));
        handler.on_delete(DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: "ns/tombstone".to_owned(),
            obj: None,
        }));
        assert_eq!(
            drain_by_priority(&queue),
            [
                ("ns/created".to_owned(), 0),
                ("ns/edited".to_owned(), 0),
                ("ns/deleted".to_owned(), 0),
                ("ns/tombstone".to_owned(), 0),
                ("ns/initial".to_owned(), LOW_PRIORITY),
                ("ns/resync".to_owned(), LOW_PRIORITY),
            ]
        );

        // Queued low, then changed: it goes out with the changes.
        handler.on_add(&obj("a", "1", Some("first")), true);
        handler.on_add(&obj("b", "1", Some("second")), true);
        handler.on_update(
            &obj("b", "1", Some("second")),
            &obj("b", "2", Some("second")),
        );
        assert_eq!(
            drain_by_priority(&queue),
            [
                ("ns/second".to_owned(), 0),
                ("ns/first".to_owned(), LOW_PRIORITY),
            ]
        );
        queue.shut_down();
    }

    /// The controller's event filters apply to every event of a source, before its own
    /// predicates; a delete whose final state is unknown passes them.
    #[test]
    fn event_filters_apply_to_adds_updates_and_deletes() {
        let quiet = crate::EventFilter::new(|o: &dyn Object| o.labels().get("quiet").is_none());
        let intake = Arc::new(Intake::with_filters(vec![
            quiet,
            crate::EventFilter::resource_version_changed(),
        ]));
        let mut handler = SourceHandler::<PartialObjectMetadata> {
            intake: Arc::clone(&intake),
            map: owners(),
            predicates: Vec::new(),
            primary: true,
        };
        let queue = RateLimitingQueue::new(kclient_workqueue::default_controller_rate_limiter());
        intake.set(Some(queue.clone().into()));
        let labelled = |rv: &str, owner: &str| {
            let mut o = (*obj("child", rv, Some(owner))).clone();
            o.metadata.labels = Some([("quiet".into(), "yes".into())].into_iter().collect());
            Arc::new(o)
        };
        handler.on_add(&labelled("1", "a"), false);
        handler.on_add(&obj("child", "1", Some("b")), false);
        assert_eq!(drain(&queue), ["ns/b"]);
        // The second filter: an update at the same resourceVersion is left out.
        handler.on_update(&obj("child", "1", Some("b")), &obj("child", "1", Some("b")));
        handler.on_update(&obj("child", "1", Some("b")), &labelled("2", "c"));
        assert!(drain(&queue).is_empty());
        handler.on_update(&obj("child", "1", Some("b")), &obj("child", "2", Some("d")));
        assert_eq!(drain(&queue), ["ns/b", "ns/d"]);
        handler.on_delete(DeletedObject::Object(labelled("3", "e")));
        assert!(drain(&queue).is_empty());
        handler.on_delete(DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: "ns/gone".to_owned(),
            obj: None,
        }));
        assert_eq!(drain(&queue), ["ns/gone"]);
        queue.shut_down();
    }

    #[test]
    fn group_of_api_versions() {
        assert_eq!(group_of("v1"), "");
        assert_eq!(group_of("apps/v1"), "apps");
        assert_eq!(group_of("example.com/v1alpha1"), "example.com");
    }
}
