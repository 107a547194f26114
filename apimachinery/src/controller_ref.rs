//! Who controls an object: client-go's `metav1.GetControllerOf` and `IsControlledBy`.
//!
//! An object names its owners in `metadata.ownerReferences`; at most one of them has
//! `controller: true`, the object that manages it (a ReplicaSet for its Pods, a Network for its
//! ConfigMap). A controller that watches children uses these to find the parent to requeue.

use crate::object::{AsObject, Object, OwnerRef};

/// The owner reference marked `controller: true`, if any (client-go's `GetControllerOf`).
///
/// ```
/// use kclient_apimachinery::{get_controller_of, is_controlled_by, meta::PartialObjectMetadata};
///
/// let pod: PartialObjectMetadata = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-7d9-x2v", "ownerReferences": [
///         {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "uid": "u-1", "controller": true}
///     ]}
/// })).unwrap();
/// assert_eq!(get_controller_of(&pod).map(|o| o.name), Some("web-7d9"));
///
/// let replica_set: PartialObjectMetadata =
///     serde_json::from_value(serde_json::json!({"metadata": {"name": "web-7d9", "uid": "u-1"}})).unwrap();
/// assert!(is_controlled_by(&pod, &replica_set));
/// ```
pub fn get_controller_of<O: AsObject + ?Sized>(obj: &O) -> Option<OwnerRef<'_>> {
    obj.as_object()
        .owner_references()
        .into_iter()
        .find(|o| o.controller)
}

/// Whether `owner` (by UID) is `obj`'s controller (client-go's `IsControlledBy`).
pub fn is_controlled_by<O: AsObject + ?Sized, P: AsObject + ?Sized>(obj: &O, owner: &P) -> bool {
    let owner = owner.as_object();
    get_controller_of(obj).is_some_and(|c| !owner.uid().is_empty() && c.uid == owner.uid())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::meta::PartialObjectMetadata;

    fn object(metadata: serde_json::Value) -> PartialObjectMetadata {
        serde_json::from_value(json!({ "metadata": metadata })).unwrap()
    }

    fn owner(uid: &str, controller: bool) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "Thing", "name": uid, "uid": uid, "controller": controller})
    }

    #[test]
    fn finds_the_one_controller_among_owners() {
        let orphan = object(json!({"name": "x"}));
        assert!(get_controller_of(&orphan).is_none());
        let plain = object(json!({"name": "x", "ownerReferences": [owner("a", false)]}));
        assert!(get_controller_of(&plain).is_none());
        let controlled = object(json!({
            "name": "x",
            "ownerReferences": [owner("a", false), owner("b", true)],
        }));
        assert_eq!(get_controller_of(&controlled).map(|o| o.uid), Some("b"));

        let uid = |u: &str| object(json!({"name": u, "uid": u}));
        assert!(is_controlled_by(&controlled, &uid("b")));
        assert!(!is_controlled_by(&controlled, &uid("a")));
        assert!(!is_controlled_by(&plain, &uid("a")));
        // An owner with no UID controls nothing.
        let unnamed = object(json!({"name": "x", "ownerReferences": [owner("", true)]}));
        assert!(!is_controlled_by(&unnamed, &object(json!({"name": "y"}))));
    }
}
