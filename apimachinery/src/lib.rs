//! Kubernetes API machinery for kclient, the counterpart of `k8s.io/apimachinery`.
//!
//! This crate holds what every other layer shares: object metadata access ([`Object`]), the
//! static identity of resource types ([`Resource`]), and (as they land) group/version/kind
//! types, request options, label and field selectors, the API error, watch events,
//! `Unstructured` and the generated `meta/v1` types.
//!
//! It depends on no other kclient crate.

pub mod meta;
mod object;

pub use object::{
    ClusterResourceScope, EmptyStringMap, NamespaceResourceScope, Object, OwnerRef, Resource,
    ResourceScope, StringMap,
};
