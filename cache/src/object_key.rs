//! The key under which stores, indexers and the DeltaFIFO file an object: client-go's
//! `MetaNamespaceKeyFunc`, `namespace/name` for namespaced objects and `name` otherwise, or a
//! caller's own [`KeyFunc`].

use std::sync::Arc;

use kclient_apimachinery::{Object, meta_namespace_key};

/// How a store names an object (client-go's `KeyFunc`). The default is
/// [`meta_namespace_key`]: `namespace/name`, or `name` for cluster-scoped objects.
///
/// A custom key function must give one object the same key for its whole life, and give
/// different objects different keys.
///
/// ```
/// use std::sync::Arc;
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_cache::{Indexer, Indexers, KeyFunc};
///
/// // Key pods by name alone, for a cache of one namespace.
/// let by_name: KeyFunc<Pod> = Arc::new(|pod: &Pod| pod.name().to_string());
/// let cache = Indexer::with_key_func(Indexers::new(), by_name);
/// cache.add(Arc::new(pod("default", "web", "1")));
/// assert!(cache.get_by_key("web").is_some());
/// ```
pub type KeyFunc<K> = Arc<dyn Fn(&K) -> String + Send + Sync>;

/// The hasher of every map keyed by object keys (the stores' items and indexes, the
/// DeltaFIFO's items, a watch-list's initial events): foldhash, seeded per process, as the
/// workqueue hashes the same keys. std's SipHash took 3.5% of a controller's start-up in a
/// profile (`bench/controller/README.md`), mostly while these maps grew.
pub(crate) type KeyHasher = foldhash::fast::RandomState;

/// The default store key of `obj`: `namespace/name`, or `name` when the namespace is empty.
pub(crate) fn object_key<K: Object + ?Sized>(obj: &K) -> String {
    meta_namespace_key(obj)
}
