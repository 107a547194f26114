//! [`GenericInformer`] and [`GenericLister`]: an informer and its lister whose object type is
//! not known where they are used (client-go's `GenericInformer` and `cache.GenericLister`,
//! what `SharedInformerFactory.ForResource` returns).
//!
//! Objects come out as `Arc<dyn Object>`: the same `Arc`s the cache holds, seen through the
//! object-safe [`Object`] trait (names, labels, owners, resource versions). A caller who knows
//! the Rust type asks for the typed informer with [`GenericInformer::informer`].

use std::any::Any;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use kclient_apimachinery::{
    ApiResource, Error, GroupResource, GroupVersionResource, Object, Selector,
};
use kclient_cache::{CancellationToken, Lister, SharedIndexInformer};

/// How a shared informer holds its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Representation {
    /// A Rust type: a generated `kclient_api` type or a custom resource type.
    Typed,
    /// [`Unstructured`](kclient_apimachinery::Unstructured) objects (client-go's dynamic
    /// informers).
    Dynamic,
    /// [`PartialObjectMetadata`](kclient_apimachinery::meta::PartialObjectMetadata): metadata
    /// only (client-go's metadata informers).
    Metadata,
}

/// What the factory and the generic views need of an informer whose object type they have
/// forgotten.
pub(crate) trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
    fn has_synced(&self) -> bool;
    /// Whether the informer has stopped (its run ended or its task panicked).
    fn is_stopped(&self) -> bool;
    fn as_any(&self) -> &dyn Any;
    /// The objects in `namespace` (every namespace when `None`) matching `selector`.
    fn list(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Vec<Arc<dyn Object>>;
    /// The object `name` in `namespace` (cluster-scoped when `None`), or NotFound.
    fn get(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Arc<dyn Object>, Error>;
    fn get_by_key(&self, key: &str) -> Option<Arc<dyn Object>>;
}

impl<K: Object> ErasedInformer for SharedIndexInformer<K> {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        Box::pin(async move { informer.run(cancel).await })
    }
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
    fn is_stopped(&self) -> bool {
        SharedIndexInformer::is_stopped(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn list(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Vec<Arc<dyn Object>> {
        let lister = Lister::new(self.get_indexer(), resource.clone());
        let objects = match namespace {
            Some(ns) => lister.namespace(ns).list(selector),
            None => lister.list(selector),
        };
        objects.into_iter().map(erase).collect()
    }
    fn get(
        &self,
        resource: &GroupResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Arc<dyn Object>, Error> {
        let lister = Lister::new(self.get_indexer(), resource.clone());
        match namespace {
            Some(ns) => lister.namespace(ns).get(name).map(erase),
            None => lister.get(name).map(erase),
        }
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<dyn Object>> {
        self.get_indexer().get_by_key(key).map(erase)
    }
}

fn erase<K: Object>(object: Arc<K>) -> Arc<dyn Object> {
    object
}

/// A shared informer of one resource, whatever Rust type it decodes into (client-go's
/// `GenericInformer`), as [`SharedInformerFactory::for_resource`](crate::SharedInformerFactory::for_resource)
/// returns it. Cheap to clone; clones share the informer.
///
/// It wraps the very informer the factory shares: when the factory's informer of the resource
/// is typed, [`informer::<K>()`](Self::informer) returns the same
/// [`SharedIndexInformer<K>`] that `factory.informer::<K>()` does.
#[derive(Clone)]
pub struct GenericInformer {
    pub(crate) resource: ApiResource,
    pub(crate) representation: Representation,
    pub(crate) informer: Arc<dyn ErasedInformer>,
}

impl GenericInformer {
    /// The resource. Its `kind` is empty when the informer was made from a
    /// [`GroupVersionResource`] alone and no Rust type was known for it.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// The resource's group, version and plural name.
    pub fn gvr(&self) -> GroupVersionResource {
        self.resource.gvr()
    }

    /// Whether the informer holds a Rust type, [`Unstructured`](kclient_apimachinery::Unstructured)
    /// objects or metadata only.
    pub fn representation(&self) -> Representation {
        self.representation
    }

    /// Whether the informer's cache has synced (its first list has been delivered).
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced()
    }

    /// A lister over the informer's cache (client-go's `GenericInformer.Lister()`).
    pub fn lister(&self) -> GenericLister {
        GenericLister {
            resource: GroupResource::new(&self.resource.group, &self.resource.plural),
            informer: Arc::clone(&self.informer),
        }
    }

    /// The typed informer, when this informer holds objects of type `K`; `None` otherwise
    /// (for a dynamic informer, `K` is [`Unstructured`](kclient_apimachinery::Unstructured)).
    pub fn informer<K: Object>(&self) -> Option<SharedIndexInformer<K>> {
        self.informer
            .as_any()
            .downcast_ref::<SharedIndexInformer<K>>()
            .cloned()
    }
}

impl std::fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenericInformer")
            .field("resource", &self.resource.gvr().to_string())
            .field("representation", &self.representation)
            .field("synced", &self.informer.has_synced())
            .finish()
    }
}

/// Lists and gets the objects of one resource from an informer's cache, as
/// `Arc<dyn Object>` (client-go's `cache.GenericLister`).
///
/// Missing objects are the same NotFound [`Error`] a GET to the API server returns.
#[derive(Clone)]
pub struct GenericLister {
    resource: GroupResource,
    informer: Arc<dyn ErasedInformer>,
}

impl GenericLister {
    /// Every cached object whose labels match `selector` (an empty selector matches all).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn Object>> {
        self.informer.list(&self.resource, None, selector)
    }

    /// The cluster-scoped object `name`, or a NotFound error.
    pub fn get(&self, name: &str) -> Result<Arc<dyn Object>, Error> {
        self.informer.get(&self.resource, None, name)
    }

    /// The object with cache key `key` (`namespace/name`, or `name` when cluster-scoped).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<dyn Object>> {
        self.informer.get_by_key(key)
    }

    /// A lister restricted to `namespace` (client-go's `ByNamespace`).
    pub fn by_namespace(&self, namespace: &str) -> GenericNamespaceLister {
        GenericNamespaceLister {
            lister: self.clone(),
            namespace: namespace.to_owned(),
        }
    }
}

impl std::fmt::Debug for GenericLister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenericLister")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// A [`GenericLister`] restricted to one namespace (client-go's `GenericNamespaceLister`).
#[derive(Debug, Clone)]
pub struct GenericNamespaceLister {
    lister: GenericLister,
    namespace: String,
}

impl GenericNamespaceLister {
    /// The objects of this namespace whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<dyn Object>> {
        let l = &self.lister;
        l.informer
            .list(&l.resource, Some(&self.namespace), selector)
    }

    /// The object `name` in this namespace, or a NotFound error.
    pub fn get(&self, name: &str) -> Result<Arc<dyn Object>, Error> {
        let l = &self.lister;
        l.informer.get(&l.resource, Some(&self.namespace), name)
    }
}
