//! A minimal object type for this crate's unit tests, which build many objects by hand.
//!
//! The documentation examples use `kclient_api::core::v1::Pod` (a dev-dependency), as real
//! programs do.

use std::collections::BTreeMap;
use std::sync::Arc;

use kclient_apimachinery::{Object, OwnerRef, StringMap};

/// A stand-in for a Pod: metadata plus a node name, enough to show indexes and selectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pod {
    /// `metadata.namespace`.
    pub(crate) namespace: String,
    /// `metadata.name`.
    pub(crate) name: String,
    /// `metadata.resourceVersion`.
    pub(crate) resource_version: String,
    /// `metadata.labels`.
    pub(crate) labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub(crate) annotations: BTreeMap<String, String>,
    /// `spec.nodeName`.
    pub(crate) node_name: String,
}

impl Pod {
    /// A Pod with this namespace and name.
    pub(crate) fn new(namespace: &str, name: &str) -> Self {
        Pod {
            namespace: namespace.into(),
            name: name.into(),
            ..Pod::default()
        }
    }

    /// The same Pod at resource version `rv`.
    pub(crate) fn with_rv(mut self, rv: &str) -> Self {
        self.resource_version = rv.into();
        self
    }

    /// The same Pod with one more label.
    pub(crate) fn with_label(mut self, key: &str, value: &str) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// A shared Pod with namespace, name and resource version.
    pub(crate) fn arc(namespace: &str, name: &str, rv: &str) -> Arc<Self> {
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
    /// This stand-in carries no finalizers (`finalizers()` is always empty).
    fn set_finalizers(&mut self, _: Vec<String>) {}
    /// This stand-in carries no managed fields.
    fn clear_managed_fields(&mut self) {}
}
