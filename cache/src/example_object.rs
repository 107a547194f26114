//! A minimal object type for this crate's documentation examples and unit tests.
//!
//! Real programs use the generated API types (`kclient-api`) or their own custom resource
//! types; this one only exists so examples can run without them. It is hidden from the docs.

use std::collections::BTreeMap;
use std::sync::Arc;

use kclient_apimachinery::{Object, OwnerRef, StringMap};

/// A stand-in for a Pod: metadata plus a node name, enough to show indexes and selectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pod {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `spec.nodeName`.
    pub node_name: String,
}

impl Pod {
    /// A Pod with this namespace and name.
    pub fn new(namespace: &str, name: &str) -> Self {
        Pod {
            namespace: namespace.into(),
            name: name.into(),
            ..Pod::default()
        }
    }

    /// The same Pod at resource version `rv`.
    pub fn with_rv(mut self, rv: &str) -> Self {
        self.resource_version = rv.into();
        self
    }

    /// The same Pod with one more label.
    pub fn with_label(mut self, key: &str, value: &str) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// The same Pod on node `node`.
    pub fn on_node(mut self, node: &str) -> Self {
        self.node_name = node.into();
        self
    }

    /// A shared Pod with namespace, name and resource version.
    pub fn arc(namespace: &str, name: &str, rv: &str) -> Arc<Self> {
        Arc::new(Pod::new(namespace, name).with_rv(rv))
    }
}

impl Object for Pod {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn resource_version(&self) -> &str {
        &self.resource_version
    }
    fn uid(&self) -> &str {
        ""
    }
    fn generation(&self) -> i64 {
        0
    }
    fn labels(&self) -> &dyn StringMap {
        &self.labels
    }
    fn annotations(&self) -> &dyn StringMap {
        &self.annotations
    }
    fn finalizers(&self) -> Vec<&str> {
        Vec::new()
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        Vec::new()
    }
    fn is_being_deleted(&self) -> bool {
        false
    }
    fn set_name(&mut self, name: &str) {
        self.name = name.into();
    }
    fn set_namespace(&mut self, namespace: &str) {
        self.namespace = namespace.into();
    }
    fn set_resource_version(&mut self, resource_version: &str) {
        self.resource_version = resource_version.into();
    }
}
