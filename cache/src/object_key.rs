//! The key under which stores, indexers and the DeltaFIFO file an object: client-go's
//! `MetaNamespaceKeyFunc`, `namespace/name` for namespaced objects and `name` otherwise.

use kclient_apimachinery::{Object, meta_namespace_key};

/// The store key of `obj`: `namespace/name`, or `name` when the namespace is empty.
pub(crate) fn object_key<K: Object + ?Sized>(obj: &K) -> String {
    meta_namespace_key(obj)
}
