//! Integration tests of kclient-clientset against the local kube-apiserver
//! (`scripts/testenv up`).
//!
//! Tests that create a test namespace run on the multi-threaded runtime: the namespace is
//! deleted in `Drop`, which blocks the test's thread while the REST client (whose
//! connections that runtime drives) sends the DELETE.

mod apply_configurations;
mod crd;
#[cfg(feature = "schema")]
mod crd_schema;
#[cfg(feature = "schema")]
mod crd_schema_api_types;
mod delete;
mod events;
mod patch;
#[cfg(feature = "protobuf")]
mod protobuf;
mod streams;
mod subresources;
mod typed;
mod typed_subresources;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A typed object from JSON.
pub(crate) fn from_json<K: DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).expect("valid object JSON")
}

/// An object as JSON, for assertions.
pub(crate) fn to_json<K: Serialize>(k: &K) -> Value {
    serde_json::to_value(k).expect("serializable object")
}
