//! Kubernetes `meta/v1` types ([`v1`]) and the value types every generated API type is built
//! from.
//!
//! [`v1`] is generated from the pinned Kubernetes version's OpenAPI documents by `api/gen`
//! (`cargo run -p kclient-api-gen`); the rest of this module is written by hand:
//!
//! - [`IStr`]: strings that repeat across objects, inline when short and interned (through a
//!   bounded interner, see [`interner`]) when long.
//! - [`List`]: lists frozen into exactly sized boxed slices.
//! - [`Map`] / [`StrMap`]: small sorted maps behind a map-like API.
//! - [`Quantity`], [`IntOrString`], [`Time`], [`MicroTime`], [`Duration`], [`ByteString`]: the
//!   value types of the API, each with its exact wire form.
//! - [`RawJson`] and [`Raw<T>`]: fields kept as raw JSON (`RawExtension`, apiextensions `JSON`)
//!   and decoded on demand.
//! - [`FieldsV1`]: the field sets of `metadata.managedFields`, kept as raw JSON and shared
//!   between objects that carry the same set (through a bounded table, see [`interner`]).
//! - [`PatchMeta`]: strategic-merge-patch metadata of every generated struct.
//! - `json_schema` (feature `schemars`): `schemars::JsonSchema` for the value types and the
//!   meta/v1 types a custom resource embeds, as controller-gen writes their schemas.
//!
//! `Status`, `StatusDetails`, `StatusCause`, `ListMeta` and `WatchEvent` live at the crate root
//! (written by hand beside the API error); the generated types refer to them there.

mod byte_string;
mod duration;
pub(crate) mod fields_v1;
mod fx_hash;
#[doc(hidden)]
pub mod go_float;
#[doc(hidden)]
pub mod go_null;
mod int_or_string;
mod istr;
#[cfg(feature = "schemars")]
pub mod json_schema;
pub(crate) mod last_applied;
mod list;
mod map;
mod object_meta;
mod partial_object_metadata;
mod patch_meta;
mod quantity;
pub(crate) mod raw;
#[doc(hidden)]
pub mod time;
pub mod v1;
pub mod version;

pub use byte_string::ByteString;
pub use duration::{Duration, ParseDurationError};
pub use fields_v1::FieldsV1;
pub use int_or_string::IntOrString;
pub use istr::IStr;
pub use last_applied::LAST_APPLIED_CONFIGURATION_ANNOTATION;
#[doc(hidden)]
pub use last_applied::{DebugAnnotations, debug_annotations};
pub use list::List;
pub use map::{Map, StrMap};
pub use object_meta::ObjectMetaAccessor;
pub use partial_object_metadata::{
    ACCEPT_METADATA, ACCEPT_METADATA_LIST, ACCEPT_METADATA_LIST_PROTOBUF, ACCEPT_METADATA_PROTOBUF,
    PartialObjectMetadata, PartialObjectMetadataList,
};
pub use patch_meta::{FieldMeta, PatchMeta};
pub use quantity::{ParseQuantityError, Quantity};
pub use raw::{Raw, RawExtension, RawJson};
pub use time::{MicroTime, Time};

/// The bounds of the process-wide tables that share repeated values between decoded objects:
/// the string interner behind [`IStr`] and the field-set table behind [`FieldsV1`].
///
/// Strings longer than the 14 inline bytes of an `IStr` are interned while they are decoded.
/// The interner holds at most [`SHARDS`](interner::SHARDS) x
/// [`SHARD_CAPACITY`](interner::SHARD_CAPACITY) = 65,536 strings of at most
/// [`MAX_INTERNED_LEN`](interner::MAX_INTERNED_LEN) = 256 bytes (under 20 MiB in the worst case).
///
/// Field sets (`FieldsV1`) of at most [`FIELDS_V1_MAX_LEN`](interner::FIELDS_V1_MAX_LEN) = 64 KiB
/// are shared the same way; the table holds at most
/// [`FIELDS_V1_CAPACITY`](interner::FIELDS_V1_CAPACITY) = 8,192 sets and
/// [`FIELDS_V1_CAPACITY_BYTES`](interner::FIELDS_V1_CAPACITY_BYTES) = 32 MiB of text.
///
/// A full table first sweeps out what no object uses any more; if it is still full, new values
/// are allocated on their own and not remembered. The string interner also sweeps a shard
/// whenever it has doubled since its last sweep. [`set_enabled`](interner::set_enabled) turns
/// both off.
pub mod interner {
    pub use super::fields_v1::{
        CAPACITY as FIELDS_V1_CAPACITY, CAPACITY_BYTES as FIELDS_V1_CAPACITY_BYTES,
        MAX_SHARED_LEN as FIELDS_V1_MAX_LEN, shared_count as fields_v1_count,
    };
    pub use super::istr::{
        MAX_INTERNED_LEN, SHARD_CAPACITY, SHARDS, interned_count, is_enabled, set_enabled,
    };
}
