//! The garbage collector's work, done synchronously by the tracker when an object is
//! deleted (kube-controller-manager's garbage collector does it asynchronously):
//!
//! - an owner removed (background propagation, the default): its dependents, the objects
//!   whose `ownerReferences` name its uid, are deleted in turn, unless another owner of
//!   theirs still exists, in which case only the reference to the removed owner goes;
//! - an owner marked with the `orphan` finalizer: the references to it are removed from its
//!   dependents, then the finalizer, and the owner goes when no finalizer is left (unless
//!   it is a Pod in its grace period, which waits for its kubelet);
//! - an owner marked with the `foregroundDeletion` finalizer: its dependents are deleted
//!   (in the foreground too); once none that blocks it (`blockOwnerDeletion: true`) is
//!   left, the finalizer goes, and so does the owner when no finalizer is left (again,
//!   unless it is a Pod in its grace period).
//!
//! Only deletions run it: an object seeded with a reference to an owner that never existed
//! stays, so tests can seed dependents without their owners.

use serde_json::{Value, json};

use super::{
    Change, DeleteRequest, Key, ObjectTracker, State, finalizers, goes_without_finalizers, meta,
    meta_mut, str_of,
};

pub(super) const ORPHAN: &str = "orphan";
pub(super) const FOREGROUND: &str = "foregroundDeletion";

/// Whether `obj` names the owner `uid`, and whether that reference blocks the owner's
/// foreground deletion.
fn owned_by(obj: &Value, uid: &str) -> Option<bool> {
    meta(obj)["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["uid"].as_str() == Some(uid))
        .map(|r| r["blockOwnerDeletion"].as_bool() == Some(true))
}

impl ObjectTracker {
    /// The objects that name `uid` among their owners: key, namespace and name.
    fn dependents(state: &State, uid: &str) -> Vec<(Key, (String, String))> {
        state
            .objects
            .iter()
            .flat_map(|(key, bucket)| {
                bucket
                    .iter()
                    .filter(|(_, o)| owned_by(o, uid).is_some())
                    .map(move |(id, _)| (key.clone(), id.clone()))
            })
            .collect()
    }

    /// Where the object with `uid` is stored, if it still is.
    fn find_uid(state: &State, uid: &str) -> Option<(Key, (String, String))> {
        state.objects.iter().find_map(|(key, bucket)| {
            bucket
                .iter()
                .find(|(_, o)| str_of(o, "uid") == uid)
                .map(|(id, _)| (key.clone(), id.clone()))
        })
    }

    /// Stores a changed object with a new resourceVersion and sends its event.
    fn gc_write(state: &mut State, key: &Key, id: &(String, String), mut new: Value) {
        let Some(old) = state.objects.get(key).and_then(|b| b.get(id)).cloned() else {
            return;
        };
        let rv = state.next_rv();
        meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
        state.bucket(key).insert(id.clone(), new.clone());
        state.emit(key, Change::Modified, Some(old), new);
    }

    /// Removes an object whose last finalizer went; then collects what depended on it.
    fn gc_remove(&self, state: &mut State, key: &Key, id: &(String, String)) {
        let Some(old) = state.bucket(key).remove(id) else {
            return;
        };
        let mut gone = old.clone();
        let rv = state.next_rv();
        meta_mut(&mut gone).insert("resourceVersion".into(), json!(rv.to_string()));
        state.emit(key, Change::Deleted, Some(old), gone.clone());
        self.collect_dependents_of(state, &gone);
    }

    /// Removes finalizer `name` from a stored object, and the object when none is left and
    /// its deletion waits on nothing else (a Pod in its grace period stays).
    fn gc_drop_finalizer(&self, state: &mut State, key: &Key, id: &(String, String), name: &str) {
        let Some(obj) = state.objects.get(key).and_then(|b| b.get(id)).cloned() else {
            return;
        };
        let left: Vec<String> = finalizers(&obj).into_iter().filter(|f| f != name).collect();
        if left.is_empty() && goes_without_finalizers(&obj) {
            self.gc_remove(state, key, id);
            return;
        }
        let mut new = obj;
        if left.is_empty() {
            meta_mut(&mut new).remove("finalizers");
        } else {
            meta_mut(&mut new).insert("finalizers".into(), json!(left));
        }
        Self::gc_write(state, key, id, new);
    }

    /// After `removed` left the store: its dependents are deleted (or lose the reference
    /// when another owner remains), and owners waiting in the foreground for it may finish.
    pub(super) fn collect_dependents_of(&self, state: &mut State, removed: &Value) {
        let uid = str_of(removed, "uid").to_string();
        if !uid.is_empty() {
            for (key, id) in Self::dependents(state, &uid) {
                let Some(dep) = state.objects.get(&key).and_then(|b| b.get(&id)).cloned() else {
                    continue;
                };
                let other_owner_left = meta(&dep)["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["uid"].as_str())
                    .any(|o| o != uid && Self::find_uid(state, o).is_some());
                if other_owner_left {
                    let mut new = dep.clone();
                    if let Some(refs) = new["metadata"]
                        .get_mut("ownerReferences")
                        .and_then(Value::as_array_mut)
                    {
                        refs.retain(|r| r["uid"].as_str() != Some(uid.as_str()));
                    }
                    Self::gc_write(state, &key, &id, new);
                    continue;
                }
                if !meta(&dep)["deletionTimestamp"].is_null() {
                    continue;
                }
                self.gc_delete(state, &key, &id, "Background");
            }
        }
        // Owners deleting in the foreground that waited for this one.
        let owners: Vec<String> = meta(removed)["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uid"].as_str().map(str::to_string))
            .collect();
        for owner in owners {
            if let Some((key, id)) = Self::find_uid(state, &owner) {
                self.finish_foreground(state, &key, &id);
            }
        }
    }

    /// Deletes a dependent as the collector does, with `propagation`.
    fn gc_delete(&self, state: &mut State, key: &Key, id: &(String, String), propagation: &str) {
        let Some(info) = self.info_of_key(key) else {
            return;
        };
        let request = DeleteRequest {
            propagation: Some(propagation.to_string()),
            ..DeleteRequest::default()
        };
        match self.delete_locked(state, &info, &id.0, &id.1, &request) {
            Ok((obj, true)) => self.collect_dependents_of(state, &obj),
            Ok((obj, false)) => self.finish_deletion_of(state, &obj),
            Err(e) => {
                tracing::debug!(error = %e, "the fake's garbage collector could not delete a dependent")
            }
        }
    }

    /// After a delete left `marked` with the `orphan` or `foregroundDeletion` finalizer:
    /// orphans its dependents, or deletes them, and lets the owner go when it can.
    pub(super) fn finish_deletion_of(&self, state: &mut State, marked: &Value) {
        let uid = str_of(marked, "uid").to_string();
        let Some((key, id)) = Self::find_uid(state, &uid) else {
            return;
        };
        let Some(stored) = state.objects.get(&key).and_then(|b| b.get(&id)).cloned() else {
            return;
        };
        if meta(&stored)["deletionTimestamp"].is_null() {
            return;
        }
        let fins = finalizers(&stored);
        if fins.iter().any(|f| f == ORPHAN) {
            for (dkey, did) in Self::dependents(state, &uid) {
                let Some(dep) = state.objects.get(&dkey).and_then(|b| b.get(&did)).cloned() else {
                    continue;
                };
                let mut new = dep;
                if let Some(refs) = new["metadata"]
                    .get_mut("ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| r["uid"].as_str() != Some(uid.as_str()));
                }
                if let Some(m) = new["metadata"].as_object_mut()
                    && m.get("ownerReferences")
                        .and_then(Value::as_array)
                        .is_some_and(Vec::is_empty)
                {
                    m.remove("ownerReferences");
                }
                Self::gc_write(state, &dkey, &did, new);
            }
            self.gc_drop_finalizer(state, &key, &id, ORPHAN);
        } else if fins.iter().any(|f| f == FOREGROUND) {
            for (dkey, did) in Self::dependents(state, &uid) {
                let being_deleted = state
                    .objects
                    .get(&dkey)
                    .and_then(|b| b.get(&did))
                    .is_some_and(|d| !meta(d)["deletionTimestamp"].is_null());
                if !being_deleted {
                    self.gc_delete(state, &dkey, &did, "Foreground");
                }
            }
            self.finish_foreground(state, &key, &id);
        }
    }

    /// Lets an owner deleting in the foreground go once no dependent blocks it.
    fn finish_foreground(&self, state: &mut State, key: &Key, id: &(String, String)) {
        let Some(owner) = state.objects.get(key).and_then(|b| b.get(id)).cloned() else {
            return;
        };
        if meta(&owner)["deletionTimestamp"].is_null()
            || !finalizers(&owner).iter().any(|f| f == FOREGROUND)
        {
            return;
        }
        let uid = str_of(&owner, "uid").to_string();
        let blocked = state
            .objects
            .values()
            .flat_map(|b| b.values())
            .any(|o| owned_by(o, &uid) == Some(true));
        if !blocked {
            self.gc_drop_finalizer(state, key, id, FOREGROUND);
        }
    }
}
