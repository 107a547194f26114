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
pub type Indexers<K> = HashMap<String, IndexFunc<K>>;

/// The name of the namespace index (client-go's `NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// Files an object under its namespace (client-go's `MetaNamespaceIndexFunc`); cluster-scoped
/// objects are filed under `""`.
pub fn meta_namespace_index_func<K: Object>(obj: &K) -> Vec<String> {
    vec![obj.namespace().to_owned()]
}

/// Index functions holding only the [`NAMESPACE_INDEX`], what most informers start with.
pub fn namespace_indexers<K: Object>() -> Indexers<K> {
    let mut indexers: Indexers<K> = HashMap::new();
    indexers.insert(
        NAMESPACE_INDEX.to_owned(),
        Arc::new(meta_namespace_index_func::<K>),
    );
    indexers
}
