//! [`GenericInformer`] and [`GenericLister`]: an informer and its lister whose object type is
//! not known where they are used (client-go's `GenericInformer` and `cache.GenericLister`,
//! what `SharedInformerFactory.ForResource` returns).
//!
//! Objects come out as `Arc<dyn Object>`: the same `Arc`s the cache holds, seen through the
//! object-safe [`Object`] trait (names, labels, owners, resource versions). Event handlers and
//! index functions added through a [`GenericInformer`] see them the same way, so a controller
//! over resources chosen at run time (a garbage collector, a quota monitor) needs no Rust type
//! for them. A caller who knows the Rust type asks for the typed informer with
//! [`GenericInformer::informer`].

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kclient_apimachinery::{
    ApiResource, Error, GroupResource, GroupVersionResource, Object, Selector,
};
use kclient_cache::{
    CancellationToken, DeletedFinalStateUnknown, DeletedObject, Indexers, Lister,
    ResourceEventHandler, ResourceEventHandlerRegistration, SharedIndexInformer,
};

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
    fn add_event_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<dyn Object>>,
        resync_period: Option<Duration>,
    ) -> Result<ResourceEventHandlerRegistration, kclient_cache::Error>;
    fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration);
    fn add_indexers(&self, indexers: Indexers<dyn Object>) -> Result<(), kclient_cache::Error>;
    fn by_index(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<Arc<dyn Object>>, kclient_cache::Error>;
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
    fn add_event_handler(
        &self,
        handler: Box<dyn ResourceEventHandler<dyn Object>>,
        resync_period: Option<Duration>,
    ) -> Result<ResourceEventHandlerRegistration, kclient_cache::Error> {
        let handler = ErasingHandler(handler);
        match resync_period {
            Some(period) => {
                SharedIndexInformer::add_event_handler_with_resync_period(self, handler, period)
            }
            None => SharedIndexInformer::add_event_handler(self, handler),
        }
    }
    fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration) {
        SharedIndexInformer::remove_event_handler(self, registration);
    }
    fn add_indexers(&self, mut indexers: Indexers<dyn Object>) -> Result<(), kclient_cache::Error> {
        let mut typed = Indexers::<K>::new();
        for (name, index_func) in indexers.drain() {
            typed.add(name, move |object: &K| index_func(object));
        }
        SharedIndexInformer::add_indexers(self, typed)
    }
    fn by_index(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<Arc<dyn Object>>, kclient_cache::Error> {
        let objects = self.get_indexer().by_index(index_name, value)?;
        Ok(objects.into_iter().map(erase).collect())
    }
}

fn erase<K: Object>(object: Arc<K>) -> Arc<dyn Object> {
    object
}

/// A handler of `Arc<dyn Object>` fed by an informer of `K`: each `Arc<K>` is the cache's own,
/// passed on as the trait object (a reference count, no copy).
struct ErasingHandler(Box<dyn ResourceEventHandler<dyn Object>>);

impl<K: Object> ResourceEventHandler<K> for ErasingHandler {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.0.on_add(&erase(Arc::clone(obj)), is_in_initial_list);
    }
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        self.0
            .on_update(&erase(Arc::clone(old)), &erase(Arc::clone(new)));
    }
    fn on_delete(&mut self, obj: DeletedObject<K>) {
        let erased = match obj {
            DeletedObject::Object(obj) => DeletedObject::Object(erase(obj)),
            DeletedObject::Tombstone(DeletedFinalStateUnknown { key, obj }) => {
                DeletedObject::Tombstone(DeletedFinalStateUnknown {
                    key,
                    obj: obj.map(erase),
                })
            }
        };
        self.0.on_delete(erased);
    }
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

    /// Adds an event handler that receives the objects as `Arc<dyn Object>` (client-go's
    /// `GenericInformer.Informer().AddEventHandler`), resynced at the informer's default
    /// period. It behaves as a handler added to the typed informer does: its own buffer, the
    /// current contents replayed as adds when it joins a running informer, a typed tombstone
    /// for a delete seen only by a relist.
    ///
    /// # Errors
    ///
    /// When the informer has stopped.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kclient_apimachinery::Object;
    /// use kclient_cache::{DeletedObject, ResourceEventHandlerFuncs};
    /// use kclient_informers::GenericInformer;
    ///
    /// fn log_changes(informer: &GenericInformer) -> Result<(), kclient_cache::Error> {
    ///     let resource = informer.gvr().to_string();
    ///     informer.add_event_handler(
    ///         ResourceEventHandlerFuncs::<dyn Object>::new()
    ///             .add_func(move |obj: &Arc<dyn Object>, _| println!("{resource}: {}", obj.name()))
    ///             .delete_func(|deleted: DeletedObject<dyn Object>| println!("gone: {}", deleted.key())),
    ///     )?;
    ///     Ok(())
    /// }
    /// ```
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<dyn Object>,
    ) -> Result<ResourceEventHandlerRegistration, kclient_cache::Error> {
        self.informer.add_event_handler(Box::new(handler), None)
    }

    /// [`add_event_handler`](Self::add_event_handler) with a resync period of its own
    /// (client-go's `AddEventHandlerWithResyncPeriod`).
    ///
    /// # Errors
    ///
    /// When the informer has stopped.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<dyn Object>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration, kclient_cache::Error> {
        self.informer
            .add_event_handler(Box::new(handler), Some(resync_period))
    }

    /// Removes a handler added with [`add_event_handler`](Self::add_event_handler) (or to the
    /// typed informer): it receives nothing more.
    pub fn remove_event_handler(&self, registration: &ResourceEventHandlerRegistration) {
        self.informer.remove_event_handler(registration);
    }

    /// Adds index functions over the objects seen as [`Object`]s (client-go's
    /// `GenericInformer.Informer().AddIndexers`); the cache indexes what it holds at once.
    /// Look objects up with [`by_index`](Self::by_index).
    ///
    /// # Errors
    ///
    /// When an index of the same name exists, or the informer has stopped.
    pub fn add_indexers(&self, indexers: Indexers<dyn Object>) -> Result<(), kclient_cache::Error> {
        self.informer.add_indexers(indexers)
    }

    /// The objects whose index `index_name` holds `value` (client-go's
    /// `Informer().GetIndexer().ByIndex`).
    ///
    /// # Errors
    ///
    /// When the informer has no index `index_name`.
    pub fn by_index(
        &self,
        index_name: &str,
        value: &str,
    ) -> Result<Vec<Arc<dyn Object>>, kclient_cache::Error> {
        self.informer.by_index(index_name, value)
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

#[cfg(test)]
mod tests {
    use kclient_apimachinery::Unstructured;
    use kclient_cache::ResourceEventHandlerFuncs;
    use parking_lot::Mutex;

    use super::*;

    /// A tombstone reaches a handler of `dyn Object` as a tombstone, with its key and its last
    /// known state (an informer makes one only when a relist misses an object, which the
    /// integration tests cannot provoke on demand).
    #[test]
    fn a_tombstone_is_passed_on_as_a_tombstone() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let mut handler = ErasingHandler(Box::new(
            ResourceEventHandlerFuncs::<dyn Object>::new().delete_func(
                move |deleted: DeletedObject<dyn Object>| {
                    record.lock().push((
                        deleted.is_tombstone(),
                        deleted.key(),
                        deleted.object().map(|o| o.resource_version().to_owned()),
                    ));
                },
            ),
        ));
        let last = Unstructured::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": "ns", "name": "gone", "resourceVersion": "7"},
        }))
        .unwrap();
        let deletes = [
            DeletedObject::Tombstone(DeletedFinalStateUnknown {
                key: "ns/gone".to_owned(),
                obj: Some(Arc::new(last.clone())),
            }),
            DeletedObject::Tombstone(DeletedFinalStateUnknown {
                key: "ns/never-seen".to_owned(),
                obj: None,
            }),
            DeletedObject::Object(Arc::new(last)),
        ];
        for deleted in deletes {
            ResourceEventHandler::<Unstructured>::on_delete(&mut handler, deleted);
        }
        assert_eq!(
            *seen.lock(),
            [
                (true, "ns/gone".to_owned(), Some("7".to_owned())),
                (true, "ns/never-seen".to_owned(), None),
                (false, "ns/gone".to_owned(), Some("7".to_owned())),
            ]
        );
    }
}
