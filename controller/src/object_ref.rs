//! [`ObjectRef`]: the key a controller queues and reconciles, a namespace and a name.

use std::fmt;

use kclient_apimachinery::{Object, namespace_key};

/// Which object a reconcile is about: its namespace (`""` for cluster-scoped objects) and name.
///
/// Displays as the cache key, `namespace/name` or `name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// The namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectRef {
    /// The object `name` in `namespace` (`""` for cluster-scoped objects).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectRef {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The reference of `object`.
    pub fn from_obj<O: Object + ?Sized>(object: &O) -> Self {
        ObjectRef::new(object.namespace(), object.name())
    }

    /// The informer cache's key of this object (client-go's `MetaNamespaceKeyFunc`).
    pub fn cache_key(&self) -> String {
        namespace_key(&self.namespace, &self.name)
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        f.write_str(&self.name)
    }
}
