//! Listers: typed, read-only queries over an informer's cache (client-go's `listers.go` and
//! the generic lister the generated ones wrap).
//!
//! A lister answers from memory: `list` filters the cache with a label selector and `get`
//! looks a key up. A missing object is the same NotFound [`Error`] a GET to the API server
//! would return, so `err.is_not_found()` works either way. Namespace queries use the
//! [`NAMESPACE_INDEX`] when the cache has it and fall back to a scan otherwise.

use std::sync::Arc;

use kclient_apimachinery::{Error, GroupResource, Object, Resource, Selector, namespace_key};

use crate::index::NAMESPACE_INDEX;
use crate::indexer::Indexer;

/// Lists and gets objects of one resource from an [`Indexer`].
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
/// use kclient_apimachinery::{GroupResource, Selector};
/// use kclient_cache::{Indexer, Lister, namespace_indexers};
///
/// let indexer = Indexer::new(namespace_indexers::<Pod>());
/// indexer.add(Arc::new(labelled(pod("default", "web-0", "1"), "app", "web")));
/// let pods = Lister::new(indexer, GroupResource::new("", "pods"));
///
/// let web = pods.list(&Selector::parse("app=web").unwrap());
/// assert_eq!(web.len(), 1);
/// assert!(pods.namespace("default").get("nope").unwrap_err().is_not_found());
/// ```
pub struct Lister<K> {
    indexer: Indexer<K>,
    resource: Arc<GroupResource>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            indexer: self.indexer.clone(),
            resource: Arc::clone(&self.resource),
        }
    }
}

impl<K: Object> Lister<K> {
    /// A lister over `indexer`; `resource` names the resource in NotFound errors.
    pub fn new(indexer: Indexer<K>, resource: GroupResource) -> Self {
        Lister {
            indexer,
            resource: Arc::new(resource),
        }
    }

    /// Every object whose labels match `selector` (client-go's `ListAll`): an empty selector
    /// returns everything, [`Selector::nothing`] returns nothing.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        filter(self.indexer.list(), selector)
    }

    /// The cluster-scoped object `name`, or a NotFound error.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        self.indexer
            .get_by_key(name)
            .ok_or_else(|| self.not_found(name))
    }

    /// A lister restricted to `namespace`.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            resource: Arc::clone(&self.resource),
            namespace: namespace.to_owned(),
        }
    }

    fn not_found(&self, name: &str) -> Error {
        Error::new_not_found(&self.resource.group, &self.resource.resource, name)
    }
}

impl<K: Resource> Lister<K> {
    /// A lister whose errors name `K`'s group and plural resource.
    pub fn for_resource(indexer: Indexer<K>) -> Self {
        Lister::new(indexer, GroupResource::new(K::GROUP, K::PLURAL))
    }
}

/// A [`Lister`] restricted to one namespace (client-go's `NamespaceLister`).
pub struct NamespaceLister<K> {
    indexer: Indexer<K>,
    resource: Arc<GroupResource>,
    namespace: String,
}

impl<K: Object> NamespaceLister<K> {
    /// The objects of this namespace whose labels match `selector` (client-go's
    /// `ListAllByNamespace`); the namespace `""` means all namespaces.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        if selector.matches_nothing() {
            return Vec::new();
        }
        if self.namespace.is_empty() {
            return filter(self.indexer.list(), selector);
        }
        let candidates = match self.indexer.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(objects) => objects,
            Err(_) => {
                // No namespace index: scan.
                let mut all = self.indexer.list();
                all.retain(|o| o.namespace() == self.namespace);
                all
            }
        };
        filter(candidates, selector)
    }

    /// The object `name` in this namespace, or a NotFound error.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        self.indexer
            .get_by_key(&namespace_key(&self.namespace, name))
            .ok_or_else(|| {
                Error::new_not_found(&self.resource.group, &self.resource.resource, name)
            })
    }
}

fn filter<K: Object>(mut objects: Vec<Arc<K>>, selector: &Selector) -> Vec<Arc<K>> {
    if selector.matches_nothing() {
        return Vec::new();
    }
    if !selector.is_empty() {
        objects.retain(|o| selector.matches(o.labels()));
    }
    objects
}

impl<K> std::fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl<K> std::fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("resource", &self.resource)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example_object::Pod;
    use crate::index::{Indexers, namespace_indexers};

    fn fill(indexer: &Indexer<Pod>) {
        indexer.add(Arc::new(Pod::new("a", "web").with_label("app", "web")));
        indexer.add(Arc::new(Pod::new("a", "db").with_label("app", "db")));
        indexer.add(Arc::new(Pod::new("b", "web").with_label("app", "web")));
        indexer.add(Arc::new(Pod::new("", "node-1")));
    }

    fn names(mut objects: Vec<Arc<Pod>>) -> Vec<String> {
        objects.sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        objects
            .iter()
            .map(|o| format!("{}/{}", o.namespace, o.name))
            .collect()
    }

    #[test]
    fn empty_selects_everything_and_nothing_selects_nothing() {
        let indexer = Indexer::new(namespace_indexers());
        fill(&indexer);
        let lister = Lister::new(indexer, GroupResource::new("", "pods"));
        assert_eq!(lister.list(&Selector::everything()).len(), 4);
        assert!(lister.list(&Selector::nothing()).is_empty());
        assert!(lister.namespace("a").list(&Selector::nothing()).is_empty());
        assert_eq!(
            names(lister.list(&Selector::parse("app=web").unwrap())),
            vec!["a/web", "b/web"]
        );
    }

    #[test]
    fn namespace_listing_with_and_without_the_namespace_index() {
        for indexers in [namespace_indexers(), Indexers::new()] {
            let indexer = Indexer::new(indexers);
            fill(&indexer);
            let lister = Lister::new(indexer, GroupResource::new("", "pods"));
            assert_eq!(
                names(lister.namespace("a").list(&Selector::everything())),
                vec!["a/db", "a/web"]
            );
            assert_eq!(
                names(
                    lister
                        .namespace("a")
                        .list(&Selector::parse("app!=db").unwrap())
                ),
                vec!["a/web"]
            );
            assert_eq!(lister.namespace("").list(&Selector::everything()).len(), 4);
        }
    }

    #[test]
    fn get_returns_the_object_or_a_not_found_error_like_the_api_server() {
        let indexer = Indexer::new(namespace_indexers());
        fill(&indexer);
        let lister = Lister::new(indexer, GroupResource::new("apps", "deployments"));
        assert_eq!(lister.namespace("b").get("web").unwrap().namespace, "b");
        assert_eq!(lister.get("node-1").unwrap().name, "node-1");
        let err = lister.namespace("b").get("db").unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.code(), Some(404));
        assert_eq!(err.to_string(), "deployments.apps \"db\" not found");
        assert!(lister.get("missing").unwrap_err().is_not_found());
    }
}
