//! Typed Kubernetes clients, the counterpart of client-go's `kubernetes` package.
//!
//! - [`Api<K>`]: one generic typed client for any [`Resource`](kclient_apimachinery::Resource),
//!   generated or custom, with client-go's verbs: `get`, `list`, `watch`, `create`, `update`,
//!   `update_status`, `delete`, `delete_collection`, `patch` (JSON, merge, strategic merge,
//!   apply), `apply`, `apply_status`, `apply_scale`, and the `scale`, `status`, `eviction`, `binding`, `log`
//!   and `token` subresources, a pod's `update_ephemeral_containers` and `update_resize`, a
//!   CertificateSigningRequest's `update_approval`, a namespace's `finalize`, and `proxy_get`
//!   of pods and services, and client-go's event expansion (`Api::<Event>::search`,
//!   `get_field_selector`, `create_with_event_namespace`, ...); a pod's `exec`, `attach` and `portforward` as streams over
//!   WebSocket, and its log as a stream of lines ([`ExecOptions`], `Api::<Pod>::exec`). Namespaced and cluster-scoped kinds get different
//!   constructors; reading every namespace is explicit ([`Api::all`]).
//! - [`Clientset`]: client-go's navigation, generated from the pinned Kubernetes version's
//!   OpenAPI documents: `clientset.core_v1().pods("ns")`, `apps_v1().deployments("ns")`,
//!   `coordination_v1().leases("ns")`, `apiextensions_v1().custom_resource_definitions()`, ...,
//!   and `policy_v1().evictions("ns")` ([`EvictionClient`], client-go's `Evictions(ns).Evict`).
//! - [`custom_resource!`]: turns a user-defined struct into a resource with a typed client and
//!   a CustomResourceDefinition ([`CustomResource::crd_json`], or `CustomResource::crd` with
//!   the `apiextensions` feature), whose schema the type itself can give (feature `schema`,
//!   below).
//!
//! # Cargo features
//!
//! One feature per API group, named after its Go package as kclient-api's are (`core`,
//! `apps`, `batch`, `coordination`, `rbac`, ...), turns on that group's types in kclient-api
//! and its group version clients here (`Clientset::apps_v1`, `AppsV1Client`) and the
//! `HasStatus`/`HasScale` impls of its kinds. `all` enables every group and is the default;
//! a program that needs a few groups compiles faster with
//! `default-features = false, features = ["core", "apps"]`. The typed subresources need
//! the groups of the types they send: `get_scale` and friends `autoscaling` (`apply_scale`
//! `apply` too, for its configuration type); `logs`, `exec`, `attach`, `port_forward`,
//! `bind`, `finalize`, `proxy_get`, `update_ephemeral_containers`, `update_resize`, the
//! events' `search`, `get_field_selector` and `*_with_event_namespace`, and
//! [`object_reference`] `core`; `update_approval` `certificates`; `evict` `core` and
//! `policy`; `evictions` `policy`; `create_token` `core` and `authentication`.
//! [`Api`] itself, `custom_resource!` and the by-name subresource calls need none.
//!
//! `schema` (not in `default`) makes a CRD's schema from the Rust type, as controller-gen
//! does from Go types: `#[derive(JsonSchema)]` on the resource and the types of its fields
//! (schemars 1, re-exported as `kclient_clientset::schemars`; add `schemars = "1"` to your
//! dependencies for the derive's paths, or give each derive
//! `#[schemars(crate = "kclient_clientset::schemars")]`), then `structural_schema::<T>()`
//! gives the structural `openAPIV3Schema` kube-apiserver requires, and
//! `CustomResource::crd_from_type()` (with `apiextensions`) or `crd_json_from_type()` the
//! whole CRD. kclient-apimachinery's value types (`IntOrString`, `Quantity`, `Time`,
//! `Condition`, ...) get controller-gen's schemas. `structural_schema`'s docs list
//! what each Rust shape becomes and which are refused (recursive types, tuples, externally
//! tagged enums mixing unit and data variants); kclient-api's generated types (a
//! `PodTemplateSpec` in a spec) have no `JsonSchema`: hold them as `RawJson` or
//! `serde_json::Value` (preserve-unknown-fields), or give the field
//! `#[schemars(schema_with = ...)]` with the schema you want.
//!
//! Every request error is a [`kclient_apimachinery::Error`] with client-go's `apierrors`
//! checks (`is_not_found`, `is_conflict`, ...). Depends on `rest`, `apimachinery` and `api`;
//! never on `cache` or `informers` (the informers crate adapts `Api` to a `ListerWatcher`).
//!
//! # Example
//!
//! ```no_run
//! # #[cfg(feature = "apps")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use futures_util::StreamExt;
//! use kclient_apimachinery::{ListOptions, PatchOptions, WatchEvent};
//! use kclient_clientset::{Clientset, Patch};
//! use serde_json::json;
//!
//! let clientset = Clientset::try_default()?;
//! let deployments = clientset.apps_v1().deployments("default");
//!
//! let list = deployments.list(&ListOptions::default().label_selector("app=web")).await?;
//! for d in &list.items {
//!     println!("{}", kclient_apimachinery::Object::name(d));
//! }
//!
//! let patch = Patch::Merge(json!({"spec": {"replicas": 3}}));
//! deployments.patch("web", &patch, &PatchOptions::default()).await?;
//!
//! let mut events = deployments.watch(&ListOptions::default().resource_version(list.resource_version())).await?;
//! while let Some(event) = events.next().await {
//!     if let WatchEvent::Modified(d) = event? {
//!         println!("changed: {}", kclient_apimachinery::Object::name(&d));
//!     }
//! }
//! # Ok(()) }
//! ```

mod api;
mod clientset;
mod custom_resource;
#[cfg(feature = "core")]
mod event;
#[cfg(feature = "policy")]
mod eviction;
mod generated;
mod log_options;
mod patch;
#[cfg(feature = "core")]
mod pod_stream;
#[cfg(feature = "core")]
mod reference;
#[cfg(feature = "schema")]
mod schema;
mod subresource;

pub use api::{AllNamespaces, Api, ApiScope, Scoped};
pub use clientset::Clientset;
pub use custom_resource::CustomResource;
#[cfg(feature = "policy")]
pub use eviction::EvictionClient;
// The generated group version clients (`CoreV1Client`, `AppsV1Client`, ...), one per group
// version of each enabled API group feature.
#[allow(
    unused_imports,
    unreachable_pub,
    reason = "empty when no API group feature is enabled"
)]
pub use generated::*;
pub use log_options::{LogOptions, LogStream};
pub use patch::Patch;
#[cfg(feature = "core")]
pub use pod_stream::ExecOptions;
#[cfg(feature = "core")]
pub use reference::{IntoObjectReference, object_reference};
#[cfg(feature = "schema")]
pub use schema::{SchemaError, structural_schema};
/// schemars, whose `JsonSchema` derive a custom resource's types need for
/// [`structural_schema`] (feature `schema`).
#[cfg(feature = "schema")]
pub use schemars;
pub use subresource::{HasScale, HasStatus};

/// What the exported macros expand to; not public API.
#[doc(hidden)]
pub mod __private {
    pub use kclient_apimachinery;
}
