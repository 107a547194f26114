//! Kubernetes API machinery for kclient, the counterpart of `k8s.io/apimachinery`.
//!
//! This crate holds what every other layer shares:
//!
//! - [`Object`] and [`Resource`]: metadata access and the static identity of resource types,
//!   the contract that `cache`, `informers` and the clients code against.
//! - [`Error`]: the one error of a failed API request, with client-go's `apierrors` checks
//!   ([`Error::is_not_found`], [`Error::is_conflict`], [`Error::is_resource_expired`], ...),
//!   built from the server's [`Status`].
//! - [`WatchEvent`] and [`ObjectList`]: the shapes of watch streams and list responses.
//! - Request options ([`ListOptions`], [`GetOptions`], [`CreateOptions`], [`UpdateOptions`],
//!   [`PatchOptions`], [`DeleteOptions`]) and object keys ([`meta_namespace_key`]).
//! - Identifiers ([`GroupVersionKind`], [`GroupVersionResource`], ...) and the run-time
//!   resource descriptor [`ApiResource`] with its URL paths.
//! - Label [`Selector`]s (client-go's full `labels.Parse` grammar) and [`FieldSelector`]s.
//! - [`Unstructured`]: any object as a JSON map, implementing [`Object`].
//! - Patches: JSON merge patches ([`create_merge_patch`]), JSON patches ([`JsonPatch`]) and
//!   two-way strategic merge patches ([`create_two_way_merge_patch`]) as client-go emits them,
//!   and applying them ([`apply_merge_patch`], [`apply_json_patch`],
//!   [`apply_strategic_merge_patch`]) as the API server does (JSON patches with the semantics
//!   of the server's json-patch library, not RFC 6902's letter).
//! - [`semantic_eq`], apimachinery's `equality.Semantic`: quantities compared by amount, empty
//!   lists and maps equal to absent ones.
//! - Status conditions ([`set_status_condition`], [`is_status_condition_true`], ...), as
//!   apimachinery's `meta` package keeps them.
//! - The generated `meta/v1` types, under [`meta`].
//!
//! It depends on no other kclient crate.
//!
//! # Example
//!
//! Decoding a watch stream line and classifying the error it carries:
//!
//! ```
//! use kclient_apimachinery::{Error, ListOptions, WatchEvent};
//!
//! #[derive(serde::Deserialize)]
//! struct ConfigMap {
//!     metadata: Metadata,
//! }
//! #[derive(serde::Deserialize)]
//! struct Metadata {
//!     name: String,
//! }
//!
//! let opts = ListOptions::default().watch(true).allow_watch_bookmarks(true).resource_version("41");
//! assert_eq!(opts.to_query()[0], ("watch", "true".to_owned()));
//!
//! let line = r#"{"type":"ADDED","object":{"metadata":{"name":"settings"}}}"#;
//! match serde_json::from_str::<WatchEvent<ConfigMap>>(line)? {
//!     WatchEvent::Added(cm) => assert_eq!(cm.metadata.name, "settings"),
//!     other => panic!("unexpected {:?}", other.event_type()),
//! }
//!
//! let line = r#"{"type":"ERROR","object":{"kind":"Status","status":"Failure",
//!     "message":"too old resource version: 41 (97)","reason":"Expired","code":410}}"#;
//! if let WatchEvent::Error(status) = serde_json::from_str::<WatchEvent<ConfigMap>>(line)? {
//!     let err = Error::from_status(*status);
//!     assert!(err.is_resource_expired()); // time to relist
//!     assert_eq!(err.to_string(), "too old resource version: 41 (97)");
//! }
//! # Ok::<(), serde_json::Error>(())
//! ```

mod api_resource;
mod apply;
mod conditions;
mod controller_ref;
mod de;
mod equality;
mod error;
mod fields;
mod gvk;
mod json_decode;
mod json_patch;
mod key;
mod labels;
mod list;
mod merge_patch;
pub mod meta;
mod object;
mod options;
mod patch_type;
#[cfg(feature = "protobuf")]
pub mod protobuf;
mod status;
mod strategic_merge_patch;
#[cfg(test)]
mod test_support;
mod unstructured;
mod validation;
mod watch;

pub use api_resource::ApiResource;
pub use apply::Apply;
pub use conditions::{
    CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN, ConditionList, find_status_condition,
    find_status_condition_mut, is_status_condition_false, is_status_condition_present_and_equal,
    is_status_condition_true, remove_status_condition, set_status_condition,
};
pub use controller_ref::{get_controller_of, is_controlled_by};
pub use de::null_as_default;
pub use equality::semantic_eq;
pub use error::{Error, ServerResponse, TransportErrorKind};
pub use fields::{
    FieldOperator, FieldRequirement, FieldSelector, FieldSelectorError, escape_field_value,
    unescape_field_value,
};
pub use gvk::{
    GroupKind, GroupResource, GroupVersion, GroupVersionKind, GroupVersionResource,
    ParseGroupVersionError,
};
pub use json_decode::{JsonError, decode_json};
pub use json_patch::{
    JsonPatch, JsonPatchError, JsonPatchOperation, apply_json_patch, create_json_patch,
    escape_json_pointer_token,
};
pub use key::{InvalidKeyError, meta_namespace_key, namespace_key, split_meta_namespace_key};
pub use labels::{Operator, Requirement, Selector, SelectorError};
pub use list::ObjectList;
pub use merge_patch::{apply_merge_patch, create_merge_patch};
pub use meta::ObjectMetaAccessor;
pub use object::{
    AsObject, ClusterResourceScope, EmptyStringMap, NamespaceResourceScope, Object, OwnerRef,
    Resource, ResourceScope, StringMap,
};
pub use options::{
    CreateOptions, DeleteOptions, FieldValidation, GetOptions, ListOptions, PatchOptions,
    Preconditions, PropagationPolicy, QueryParams, ResourceVersionMatch, UpdateOptions,
};
pub use patch_type::PatchType;
pub use status::{ListMeta, Status, StatusCause, StatusDetails, StatusReason};
pub use strategic_merge_patch::{
    FieldPatchMeta, PatchSchema, PatchStrategy, PatchTable, StrategicPatchError,
    apply_strategic_merge_patch, create_two_way_merge_patch,
};
pub use unstructured::{JsonMap, NestedFieldError, Unstructured, UnstructuredList};
pub use validation::{
    is_dns1123_label, is_dns1123_subdomain, validate_label_key, validate_label_value,
};
pub use watch::{
    Bookmark, INITIAL_EVENTS_END_ANNOTATION, RawWatchEvent, WatchEvent, WatchEventType,
};
