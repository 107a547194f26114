//! Event handlers: what an informer calls when its cache changes (client-go's
//! `ResourceEventHandler`, `ResourceEventHandlerFuncs` and `FilteringResourceEventHandler`).
//!
//! Handlers are typed: they receive `Arc<K>`, and a delete receives a [`DeletedObject`] whose
//! tombstone case is an enum variant, so there is no type assertion to get wrong.
//!
//! Each handler is fed from its own unbounded buffer and called on the process-wide pool of
//! handler threads: its notifications arrive in order and one at a time, but not always on the
//! same thread (so keep no state in thread-locals between calls), and a slow handler delays
//! only itself. A handler should still return quickly (typically by adding a key to a
//! workqueue) since its buffer grows while it is busy.

use std::sync::Arc;

use crate::tombstone::DeletedObject;

/// Receives the changes of an informer's cache.
///
/// `on_update` is also called, with `old` and `new` the same object version, on a periodic
/// resync and when a relist finds an object unchanged.
pub trait ResourceEventHandler<K: ?Sized>: Send + 'static {
    /// An object entered the cache. `is_in_initial_list` is true for objects of the first list
    /// (and for the replay a handler added late receives).
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool);
    /// An object changed, or was re-delivered by a resync.
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>);
    /// An object left the cache.
    fn on_delete(&mut self, obj: DeletedObject<K>);
}

impl<K: ?Sized + 'static> ResourceEventHandler<K> for Box<dyn ResourceEventHandler<K>> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list);
    }
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new);
    }
    fn on_delete(&mut self, obj: DeletedObject<K>) {
        (**self).on_delete(obj);
    }
}

type AddFn<K> = Box<dyn FnMut(&Arc<K>, bool) + Send>;
type UpdateFn<K> = Box<dyn FnMut(&Arc<K>, &Arc<K>) + Send>;
type DeleteFn<K> = Box<dyn FnMut(DeletedObject<K>) + Send>;

/// A handler built from closures; events without a closure are ignored
/// (client-go's `ResourceEventHandlerDetailedFuncs`).
///
/// ```
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_cache::ResourceEventHandlerFuncs;
///
/// let handler = ResourceEventHandlerFuncs::<Pod>::new()
///     .add_func(|pod, _initial| println!("added {}", pod.name()))
///     .delete_func(|deleted| println!("deleted {}", deleted.key()));
/// # let _ = handler;
/// ```
pub struct ResourceEventHandlerFuncs<K: ?Sized> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K: ?Sized> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        ResourceEventHandlerFuncs {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K: ?Sized> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores every event until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the closure for adds.
    pub fn add_func(mut self, f: impl FnMut(&Arc<K>, bool) + Send + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the closure for updates (and resyncs).
    pub fn update_func(mut self, f: impl FnMut(&Arc<K>, &Arc<K>) + Send + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the closure for deletes.
    pub fn delete_func(mut self, f: impl FnMut(DeletedObject<K>) + Send + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: ?Sized + 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &mut self.add {
            f(obj, is_in_initial_list);
        }
    }
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &mut self.update {
            f(old, new);
        }
    }
    fn on_delete(&mut self, obj: DeletedObject<K>) {
        if let Some(f) = &mut self.delete {
            f(obj);
        }
    }
}

impl<K: ?Sized> std::fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

/// Passes on only the events of objects that match `filter`
/// (client-go's `FilteringResourceEventHandler`).
///
/// An update that moves an object into the filter is delivered as an add, one that moves it
/// out as a delete (of the old state). A delete passes if its last known state matches; a
/// tombstone with no known state always passes, since it cannot be judged.
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
/// # fn labelled(mut pod: Pod, key: &str, value: &str) -> Pod {
/// #     pod.metadata.labels.get_or_insert_default().insert(key, value.into());
/// #     pod
/// # }
/// use kclient_cache::{FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs};
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let inner = ResourceEventHandlerFuncs::new().add_func(move |pod: &Arc<Pod>, _| {
///     tx.send(pod.name().to_string()).unwrap();
/// });
/// let mut only_web = FilteringResourceEventHandler::new(
///     |pod: &Pod| pod.labels().get("app").is_some_and(|app| app == "web"),
///     inner,
/// );
/// let plain = Arc::new(pod("default", "web-0", "1"));
/// let labelled = Arc::new(labelled(pod("default", "web-0", "2"), "app", "web"));
/// only_web.on_add(&plain, false); // filtered out
/// only_web.on_update(&plain, &labelled); // moved into the filter: an add
/// assert_eq!(rx.try_recv().unwrap(), "web-0");
/// assert!(rx.try_recv().is_err());
/// ```
pub struct FilteringResourceEventHandler<K: ?Sized, H> {
    filter: Box<dyn Fn(&K) -> bool + Send>,
    handler: H,
}

impl<K: ?Sized, H: ResourceEventHandler<K>> FilteringResourceEventHandler<K, H> {
    /// Wraps `handler` so it sees only objects for which `filter` returns true.
    pub fn new(filter: impl Fn(&K) -> bool + Send + 'static, handler: H) -> Self {
        FilteringResourceEventHandler {
            filter: Box::new(filter),
            handler,
        }
    }
}

impl<K: ?Sized + 'static, H: ResourceEventHandler<K>> ResourceEventHandler<K>
    for FilteringResourceEventHandler<K, H>
{
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self
                .handler
                .on_delete(DeletedObject::Object(Arc::clone(old))),
            (false, false) => {}
        }
    }

    fn on_delete(&mut self, obj: DeletedObject<K>) {
        let passes = match obj.object() {
            Some(o) => (self.filter)(o),
            None => true,
        };
        if passes {
            self.handler.on_delete(obj);
        }
    }
}

impl<K: ?Sized, H> std::fmt::Debug for FilteringResourceEventHandler<K, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteringResourceEventHandler")
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::example_object::Pod;
    use crate::tombstone::DeletedFinalStateUnknown;

    fn recorder() -> (Arc<Mutex<Vec<String>>>, ResourceEventHandlerFuncs<Pod>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (a, u, d) = (log.clone(), log.clone(), log.clone());
        let funcs = ResourceEventHandlerFuncs::new()
            .add_func(move |p: &Arc<Pod>, _| a.lock().unwrap().push(format!("add {}", p.name)))
            .update_func(move |_, n: &Arc<Pod>| {
                u.lock().unwrap().push(format!("update {}", n.name))
            })
            .delete_func(move |o: DeletedObject<Pod>| {
                d.lock().unwrap().push(format!("delete {}", o.key()))
            });
        (log, funcs)
    }

    #[test]
    fn filtering_handler_turns_moves_into_adds_and_deletes() {
        let (log, inner) = recorder();
        let mut h =
            FilteringResourceEventHandler::new(|p: &Pod| p.labels.contains_key("app"), inner);
        let plain = Arc::new(Pod::new("ns", "p"));
        let labelled = Arc::new(Pod::new("ns", "p").with_label("app", "x"));

        h.on_add(&plain, false); // filtered out
        h.on_update(&plain, &labelled); // moves in: add
        h.on_update(&labelled, &labelled); // stays in: update
        h.on_update(&labelled, &plain); // moves out: delete
        h.on_update(&plain, &plain); // stays out: nothing
        h.on_delete(DeletedObject::Object(plain.clone())); // filtered out
        h.on_delete(DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: "ns/gone".into(),
            obj: None,
        })); // unknown state passes
        assert_eq!(
            *log.lock().unwrap(),
            vec!["add p", "update p", "delete ns/p", "delete ns/gone"]
        );
    }

    #[test]
    fn funcs_without_closures_ignore_events() {
        let mut h = ResourceEventHandlerFuncs::<Pod>::new();
        h.on_add(&Arc::new(Pod::new("ns", "p")), true);
        h.on_delete(DeletedObject::Object(Arc::new(Pod::new("ns", "p"))));
        assert!(format!("{h:?}").contains("add: false"));
    }
}
