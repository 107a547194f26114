//! [`owner_reference`]: the reference a child carries to the object that controls it
//! (controller-runtime's `SetControllerReference`), which [`owns`](crate::ControllerBuilder::owns)
//! follows back and the garbage collector uses to delete the child with its owner.

use kclient_apimachinery::Resource;
use kclient_apimachinery::meta::v1::OwnerReference;

/// A controller owner reference to `owner`: `controller: true` and `blockOwnerDeletion: true`,
/// so a foreground deletion of the owner waits for the child. Put it in the child's
/// `metadata.ownerReferences` (at most one reference of an object may be a controller).
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
///
/// let owner: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings", "namespace": "apps", "uid": "u-1"}
/// })).unwrap();
/// let reference = kclient_controller::owner_reference(&owner);
/// assert_eq!((reference.kind.as_str(), reference.name.as_str()), ("ConfigMap", "settings"));
/// assert_eq!(reference.api_version.as_str(), "v1");
/// assert_eq!(reference.controller, Some(true));
/// ```
pub fn owner_reference<K: Resource>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::API_VERSION.into(),
        kind: K::KIND.into(),
        name: owner.name().into(),
        uid: owner.uid().into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
