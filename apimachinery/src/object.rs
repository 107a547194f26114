//! The traits every Kubernetes object implements, whether generated (`kclient-api`),
//! user-defined (custom resources) or dynamic ([`Unstructured`](crate::Unstructured)-style).
//!
//! [`Object`] is client-go's `metav1.Object`: read access to the metadata that the cache,
//! the informers and the clients need without knowing the concrete type. Getters return `""`
//! (or `0`, or an empty map) for unset fields, as Go does, so callers never branch on `Option`
//! for the common case.
//!
//! [`Resource`] adds the static identity of a type (group, version, kind, plural, scope) that
//! typed clients and informers need to build URLs. Dynamic objects carry that identity at run
//! time instead, through an `ApiResource` descriptor.

/// A read-only view of a string-to-string map, as labels and annotations are.
///
/// Label selectors match against this trait (client-go's `labels.Labels`), so they work on
/// any object layout without copying its labels.
pub trait StringMap {
    /// The value under `key`, if present.
    fn get(&self, key: &str) -> Option<&str>;

    /// Whether `key` is present (with any value, including `""`).
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Every entry, in the map's own order.
    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_>;

    /// The number of entries.
    fn len(&self) -> usize {
        self.entries().count()
    }

    /// Whether the map has no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The map of an object that has no labels or no annotations.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyStringMap;

impl StringMap for EmptyStringMap {
    fn get(&self, _key: &str) -> Option<&str> {
        None
    }
    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(std::iter::empty())
    }
    fn len(&self) -> usize {
        0
    }
}

impl<S: std::hash::BuildHasher> StringMap for std::collections::HashMap<String, String, S> {
    fn get(&self, key: &str) -> Option<&str> {
        std::collections::HashMap::get(self, key).map(String::as_str)
    }
    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(self.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
    fn len(&self) -> usize {
        std::collections::HashMap::len(self)
    }
}

impl StringMap for std::collections::BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<&str> {
        std::collections::BTreeMap::get(self, key).map(String::as_str)
    }
    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(self.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
    fn len(&self) -> usize {
        std::collections::BTreeMap::len(self)
    }
}

/// A borrowed view of one `metadata.ownerReferences` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerRef<'a> {
    /// The owner's `apiVersion`, such as `apps/v1`.
    pub api_version: &'a str,
    /// The owner's kind, such as `ReplicaSet`.
    pub kind: &'a str,
    /// The owner's name.
    pub name: &'a str,
    /// The owner's UID.
    pub uid: &'a str,
    /// Whether this owner is the managing controller.
    pub controller: bool,
    /// Whether the owner's foreground deletion waits for this object.
    pub block_owner_deletion: bool,
}

/// Object metadata access, client-go's `metav1.Object`.
///
/// Implemented by every generated API type, by custom resource types and by dynamic objects.
/// `cache` and `informers` use only this trait, never a concrete type.
pub trait Object: Send + Sync + 'static {
    /// `metadata.name`, or `""`.
    fn name(&self) -> &str;
    /// `metadata.namespace`, or `""` for cluster-scoped objects.
    fn namespace(&self) -> &str;
    /// `metadata.resourceVersion`, or `""`.
    fn resource_version(&self) -> &str;
    /// `metadata.uid`, or `""`.
    fn uid(&self) -> &str;
    /// `metadata.generation`, or `0`.
    fn generation(&self) -> i64;
    /// `metadata.labels`.
    fn labels(&self) -> &dyn StringMap;
    /// `metadata.annotations`.
    fn annotations(&self) -> &dyn StringMap;
    /// `metadata.finalizers`.
    fn finalizers(&self) -> Vec<&str>;
    /// `metadata.ownerReferences`.
    fn owner_references(&self) -> Vec<OwnerRef<'_>>;
    /// Whether `metadata.deletionTimestamp` is set: the object is being deleted.
    fn is_being_deleted(&self) -> bool;

    /// Sets `metadata.name`.
    fn set_name(&mut self, name: &str);
    /// Sets `metadata.namespace`.
    fn set_namespace(&mut self, namespace: &str);
    /// Sets `metadata.resourceVersion` (`""` clears it).
    fn set_resource_version(&mut self, resource_version: &str);
    /// Sets `metadata.finalizers`; an empty list removes the field, so that the object encodes
    /// without it, as Go's `omitempty` leaves it out.
    fn set_finalizers(&mut self, finalizers: Vec<String>);
    /// Removes `metadata.managedFields` (client-go's `SetManagedFields(nil)`). The server's
    /// record of who set which field is often the largest part of an object's metadata and a
    /// controller's cache seldom reads it, so dropping it is the usual transform of informers
    /// that keep many objects (controller-runtime's `TransformStripManagedFields`; see
    /// `SharedInformerFactory::with_transform` in `kclient-informers`). A type that holds no
    /// managed fields does nothing.
    fn clear_managed_fields(&mut self);
}

/// An object, or a shared pointer to one: what the key and owner helpers
/// ([`meta_namespace_key`](crate::meta_namespace_key), [`get_controller_of`](crate::get_controller_of),
/// [`is_controlled_by`](crate::is_controlled_by)) take, so an event handler can pass the
/// `&Arc<K>` it receives as it is.
///
/// ```
/// # use std::sync::Arc;
/// # use kclient_apimachinery::{Unstructured, meta_namespace_key};
/// let cm = Arc::new(Unstructured::from_value(serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"namespace": "default", "name": "web"},
/// })).unwrap());
/// assert_eq!(meta_namespace_key(&cm), "default/web");
/// assert_eq!(meta_namespace_key(&*cm), "default/web");
/// ```
pub trait AsObject {
    /// The object type.
    type Object: Object + ?Sized;
    /// The object itself.
    fn as_object(&self) -> &Self::Object;
}

impl<O: Object + ?Sized> AsObject for O {
    type Object = O;
    fn as_object(&self) -> &O {
        self
    }
}

impl<O: Object + ?Sized> AsObject for std::sync::Arc<O> {
    type Object = O;
    fn as_object(&self) -> &O {
        self
    }
}

/// Marks how a resource is scoped; see [`Resource::Scope`].
pub trait ResourceScope: sealed::Sealed + Send + Sync + 'static {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;
}

/// The scope of namespaced resources (Pods, ConfigMaps, Deployments, ...).
#[derive(Debug, Clone, Copy)]
pub enum NamespaceResourceScope {}

/// The scope of cluster-wide resources (Nodes, Namespaces, ClusterRoles, ...).
#[derive(Debug, Clone, Copy)]
pub enum ClusterResourceScope {}

impl ResourceScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}
impl ResourceScope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::NamespaceResourceScope {}
    impl Sealed for super::ClusterResourceScope {}
}

/// The static identity of a Kubernetes resource type: what a typed client needs to build
/// its URLs and what a typed informer needs to decode lists and watch events.
///
/// Implemented by every generated top-level API type and by custom resource types.
pub trait Resource: Object + Clone + serde::Serialize + serde::de::DeserializeOwned {
    /// The API group, `""` for the core group.
    const GROUP: &'static str;
    /// The API version within the group, such as `v1`.
    const VERSION: &'static str;
    /// `apiVersion` as it appears in objects: `v1` or `apps/v1`.
    const API_VERSION: &'static str;
    /// The kind, such as `Deployment`.
    const KIND: &'static str;
    /// The plural resource name used in URLs, such as `deployments`.
    const PLURAL: &'static str;
    /// Whether objects are namespaced ([`NamespaceResourceScope`]) or cluster-wide
    /// ([`ClusterResourceScope`]); typed clients use it to offer the right constructors.
    type Scope: ResourceScope;

    /// The kind's protobuf form, when it has one. Typed clients and informers then ask for
    /// protobuf and send it (client-go's `PrefersProtobuf`), unless the client's
    /// configuration forces JSON. Built-in kinds of kclient-api return one when its `protobuf`
    /// feature is on; custom resources keep the default, `None`, and stay JSON.
    #[cfg(feature = "protobuf")]
    fn protobuf() -> Option<crate::protobuf::ProtobufCodec<Self>> {
        None
    }
}
