//! Building the `core/v1` `ObjectReference` to an object (client-go's `tools/reference`
//! `GetReference`): what an event is about, and what [`Api::<Event>::search`](crate::Api)
//! looks for. kclient-tools' event recorders take their references from here too.

use kclient_api::core::v1::ObjectReference;
use kclient_apimachinery::Resource;

/// The `ObjectReference` to `obj`: kind, apiVersion, name, namespace, uid and
/// resourceVersion, taken from the type's static identity and the object's metadata.
///
/// ```
/// use kclient_api::core::v1::Pod;
/// use kclient_apimachinery::Object;
///
/// let mut pod = Pod::default();
/// pod.set_name("web-0");
/// pod.set_namespace("shop");
/// let reference = kclient_clientset::object_reference(&pod);
/// assert_eq!(reference.kind.as_deref(), Some("Pod"));
/// assert_eq!(reference.api_version.as_deref(), Some("v1"));
/// assert_eq!(reference.namespace.as_deref(), Some("shop"));
/// ```
pub fn object_reference<K: Resource>(obj: &K) -> ObjectReference {
    ObjectReference {
        api_version: Some(K::API_VERSION.into()),
        kind: Some(K::KIND.into()),
        name: non_empty(obj.name()),
        namespace: non_empty(obj.namespace()),
        uid: non_empty(obj.uid()),
        resource_version: non_empty(obj.resource_version()),
        field_path: None,
    }
}

/// `Some(s)` in whichever string type the field uses, or `None` for `""`.
fn non_empty<S: for<'a> From<&'a str>>(s: &str) -> Option<S> {
    (!s.is_empty()).then(|| S::from(s))
}

/// An object or a reference to one (client-go's `objOrRef`): any [`Resource`] object (by
/// reference, through [`object_reference`]), or a ready-made `ObjectReference` (for example
/// one with a `fieldPath`, or one to a kind this program has no type for).
pub trait IntoObjectReference {
    /// The reference.
    fn into_object_reference(self) -> ObjectReference;
}

impl<K: Resource> IntoObjectReference for &K {
    fn into_object_reference(self) -> ObjectReference {
        object_reference(self)
    }
}

impl IntoObjectReference for ObjectReference {
    fn into_object_reference(self) -> ObjectReference {
        self
    }
}
