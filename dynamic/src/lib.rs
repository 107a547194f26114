//! The dynamic and metadata clients, the counterparts of client-go's `dynamic` and `metadata`
//! packages. The dynamic client offers every verb on any
//! group/version/resource, with objects as [`Unstructured`](kclient_apimachinery::Unstructured)
//! JSON maps. It needs no generated types, so it works for custom resources created at run
//! time; pair it with `kclient-discovery`'s RESTMapper to go from a kind to its resource.
//!
//! - [`DynamicClient::resource`] picks a resource; [`DynamicResource::namespace`] narrows it
//!   to a namespace.
//! - Verbs: `get`, `list`, `watch`, `create`, `update`, `update_status`, `delete`,
//!   `delete_collection`, `patch`, `apply`, `apply_status`; most take a subresource name
//!   (`""` for the object itself), as client-go's variadic `subresources` do.
//!
//! [`MetadataClient`] reads, lists, watches, patches and deletes any resource as
//! [`PartialObjectMetadata`](kclient_apimachinery::meta::PartialObjectMetadata): the server sends only
//! the metadata, for controllers (and metadata informers) that follow names, labels, owners or
//! finalizers without holding whole objects.
//!
//! Errors are [`kclient_apimachinery::Error`]. Depends on `rest` and `apimachinery`; never on
//! `api`, `cache` or `informers`.
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kclient_apimachinery::{CreateOptions, GroupVersionResource, PatchOptions, Unstructured};
//! use kclient_dynamic::DynamicClient;
//! use serde_json::json;
//!
//! let dynamic = DynamicClient::for_config(kclient_rest::Config::infer()?)?;
//! let networks = dynamic
//!     .resource(GroupVersionResource::new("samplecrd.k8s.io", "v1", "networks"))
//!     .namespace("default");
//!
//! let net = Unstructured::from_value(json!({
//!     "apiVersion": "samplecrd.k8s.io/v1",
//!     "kind": "Network",
//!     "metadata": {"name": "net-a"},
//!     "spec": {"cidr": "10.0.0.0/24", "gateway": "10.0.0.1"},
//! }))?;
//! networks.create(&net, &CreateOptions::default(), "").await?;
//! networks.apply(&net, &PatchOptions::apply("my-controller"), "").await?;
//! # Ok(()) }
//! ```

mod client;
mod metadata;
mod patch_body;
mod target;

pub use client::{DynamicClient, DynamicResource};
pub use metadata::{MetadataClient, MetadataResource};
pub use patch_body::PatchBody;
