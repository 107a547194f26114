//! Index functions: named functions that file each object under zero or more string values,
//! so an [`Indexer`](crate::Indexer) can answer "which objects have value V" without a scan.
//!
//! client-go's `index.go`. The built-in [`NAMESPACE_INDEX`] files an object under its
//! namespace; custom indexes ("by node name", "by owner UID") are closures. An index function
//! returns a `Vec<String>` because one object may be filed under several values (a Pod under
//! each of its owners) or none.

use std::collections::HashMap;
use std::sync::Arc;

use kclient_apimachinery::Object;

/// A function that computes the index values of an object.
///
/// It must be deterministic: the indexer calls it again on the old object to remove stale
/// entries when the object changes.
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Index functions by index name (client-go's `Indexers`).
///
/// [`add`](Indexers::add) and [`with`](Indexers::with) take a plain closure and infer its
/// argument type, so no annotation is needed; the map itself is reachable through `Deref`.
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
/// use kclient_cache::{Indexer, Indexers, namespace_indexers};
///
/// let indexers = namespace_indexers::<Pod>().with("byNode", |pod: &Pod| {
///     let node = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref());
///     node.map(|node| vec![node.to_string()]).unwrap_or_default()
/// });
/// let cache = Indexer::new(indexers);
/// # let _ = cache;
/// ```
pub struct Indexers<K: ?Sized>(HashMap<String, IndexFunc<K>>);

impl<K: ?Sized> Indexers<K> {
    /// No index functions.
    pub fn new() -> Self {
        Indexers(HashMap::new())
    }

    /// Adds (or replaces) the index `name`.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        index_func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.0.insert(name.into(), Arc::new(index_func));
        self
    }

    /// [`add`](Self::add) for building in one expression.
    pub fn with(
        mut self,
        name: impl Into<String>,
        index_func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.add(name, index_func);
        self
    }
}

impl<K: ?Sized> Default for Indexers<K> {
    fn default() -> Self {
        Indexers::new()
    }
}

impl<K: ?Sized> Clone for Indexers<K> {
    fn clone(&self) -> Self {
        Indexers(self.0.clone())
    }
}

impl<K: ?Sized> std::fmt::Debug for Indexers<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.0.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_tuple("Indexers").field(&names).finish()
    }
}

impl<K: ?Sized> std::ops::Deref for Indexers<K> {
    type Target = HashMap<String, IndexFunc<K>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<K: ?Sized> std::ops::DerefMut for Indexers<K> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<K: ?Sized> From<HashMap<String, IndexFunc<K>>> for Indexers<K> {
    fn from(map: HashMap<String, IndexFunc<K>>) -> Self {
        Indexers(map)
    }
}

impl<K, const N: usize> From<[(String, IndexFunc<K>); N]> for Indexers<K> {
    fn from(entries: [(String, IndexFunc<K>); N]) -> Self {
        Indexers(HashMap::from(entries))
    }
}

impl<K> FromIterator<(String, IndexFunc<K>)> for Indexers<K> {
    fn from_iter<I: IntoIterator<Item = (String, IndexFunc<K>)>>(iter: I) -> Self {
        Indexers(iter.into_iter().collect())
    }
}

impl<K> IntoIterator for Indexers<K> {
    type Item = (String, IndexFunc<K>);
    type IntoIter = std::collections::hash_map::IntoIter<String, IndexFunc<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K> IntoIterator for &'a Indexers<K> {
    type Item = (&'a String, &'a IndexFunc<K>);
    type IntoIter = std::collections::hash_map::Iter<'a, String, IndexFunc<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The name of the namespace index (client-go's `NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// Files an object under its namespace (client-go's `MetaNamespaceIndexFunc`); cluster-scoped
/// objects are filed under `""`.
pub fn meta_namespace_index_func<K: Object>(obj: &K) -> Vec<String> {
    vec![obj.namespace().to_owned()]
}

/// Index functions holding only the [`NAMESPACE_INDEX`], what most informers start with.
pub fn namespace_indexers<K: Object>() -> Indexers<K> {
    Indexers::new().with(NAMESPACE_INDEX, meta_namespace_index_func::<K>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example_object::Pod;

    #[test]
    fn closures_need_no_annotation_and_the_map_stays_reachable() {
        let mut indexers =
            namespace_indexers::<Pod>().with("byNode", |p| vec![p.node_name.clone()]);
        indexers.add("byName", |p| vec![p.name.clone()]);
        let mut names: Vec<&String> = indexers.keys().collect();
        names.sort();
        assert_eq!(names, ["byName", "byNode", "namespace"]);
        let pod = Pod::new("ns", "web");
        assert_eq!(indexers["byName"](&pod), ["web"]);
        assert_eq!(
            format!("{indexers:?}"),
            r#"Indexers(["byName", "byNode", "namespace"])"#
        );
        let copied: Indexers<Pod> = indexers.clone().into_iter().collect();
        assert_eq!(copied.len(), 3);
    }
}
