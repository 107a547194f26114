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

use std::sync::Arc;

use kclient_apimachinery::Object;
use kclient_cache::{CancellationToken, DeletedObject, ResourceEventHandler};
use kclient_workqueue::RateLimitingQueue;
use parking_lot::RwLock;

use crate::object_ref::ObjectRef;
use crate::predicate::Predicate;

/// Where sources put keys: the running queue, or nowhere.
#[derive(Default)]
pub(crate) struct Intake {
    queue: RwLock<Option<RateLimitingQueue<ObjectRef>>>,
    /// Cancelled (once) when the controller's caches have synced.
    caches_synced: CancellationToken,
}

impl Intake {
    /// Says that the controller's caches have synced: sources waiting for it may start.
    pub(crate) fn mark_caches_synced(&self) {
        self.caches_synced.cancel();
    }

    /// Resolves once [`mark_caches_synced`](Self::mark_caches_synced) has been called.
    pub(crate) async fn caches_synced(&self) {
        self.caches_synced.cancelled().await;
    }

    /// Adds `keys` to the running queue, or drops them while none runs.
    pub(crate) fn add(&self, keys: impl IntoIterator<Item = ObjectRef>) {
        if let Some(queue) = self.queue.read().as_ref() {
            for key in keys {
                queue.add(key);
            }
        }
    }

    /// Sends keys to `queue` from now on (`None`: drops them).
    pub(crate) fn set(&self, queue: Option<RateLimitingQueue<ObjectRef>>) {
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
    fn on_add(&mut self, obj: &Arc<T>, _is_in_initial_list: bool) {
        if self.predicates.iter().all(|p| p.add(obj)) {
            self.intake.add((self.map)(obj));
        }
    }

    fn on_update(&mut self, old: &Arc<T>, new: &Arc<T>) {
        if self.predicates.iter().all(|p| p.update(old, new)) {
            let mut keys = (self.map)(new);
            for key in (self.map)(old) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            self.intake.add(keys);
        }
    }

    fn on_delete(&mut self, deleted: DeletedObject<T>) {
        let obj = deleted.object().map(|o| &**o);
        if !self.predicates.iter().all(|p| p.delete(obj)) {
            return;
        }
        match obj {
            Some(obj) => self.intake.add((self.map)(obj)),
            None if self.primary => {
                if let Ok((namespace, name)) =
                    kclient_apimachinery::split_meta_namespace_key(&deleted.key())
                {
                    self.intake
                        .add([ObjectRef::new(namespace.unwrap_or_default(), name)]);
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
    use kclient_workqueue::RateLimitingQueue;
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
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::PartialObjectMetadata;
    use kclient_cache::DeletedFinalStateUnknown;

    use super::test_support::{drain, obj, owners};
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
        intake.set(Some(queue.clone()));
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

    #[test]
    fn group_of_api_versions() {
        assert_eq!(group_of("v1"), "");
        assert_eq!(group_of("apps/v1"), "apps");
        assert_eq!(group_of("example.com/v1alpha1"), "example.com");
    }
}
