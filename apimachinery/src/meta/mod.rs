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
//! - [`Quantity`], [`IntOrString`], [`Time`], [`MicroTime`], [`ByteString`]: the value types
//!   of the API, each with its exact wire form.
//! - [`RawJson`] and [`Raw<T>`]: fields kept as raw JSON (`RawExtension`, `FieldsV1`,
//!   `metadata.managedFields`) and decoded on demand.
//! - [`PatchMeta`]: strategic-merge-patch metadata of every generated struct.
//!
//! `Status`, `StatusDetails`, `StatusCause`, `ListMeta` and `WatchEvent` live at the crate root
//! (written by hand beside the API error); the generated types refer to them there.

mod byte_string;
#[doc(hidden)]
pub mod go_float;
mod int_or_string;
mod istr;
mod list;
mod map;
mod object_meta;
mod partial_object_metadata;
mod patch_meta;
mod quantity;
mod raw;
mod time;
pub mod v1;
pub mod version;

pub use byte_string::ByteString;
pub use int_or_string::IntOrString;
pub use istr::IStr;
pub use list::List;
pub use map::{Map, StrMap};
pub use partial_object_metadata::{PartialObjectMetadata, PartialObjectMetadataList};
pub use patch_meta::{FieldMeta, PatchMeta};
pub use quantity::Quantity;
pub use raw::{FieldsV1, Raw, RawExtension, RawJson};
pub use time::{MicroTime, Time};

/// The bounds of the process-wide string interner behind [`IStr`].
///
/// Strings longer than the 24 inline bytes are interned while they are decoded. The interner
/// holds at most [`SHARDS`](interner::SHARDS) x [`SHARD_CAPACITY`](interner::SHARD_CAPACITY)
/// = 65,536 strings of at most [`MAX_INTERNED_LEN`](interner::MAX_INTERNED_LEN) = 256 bytes
/// (under 20 MiB in the worst case). A full shard first sweeps out strings nothing else uses;
/// if it is still full, new strings are allocated on their own and not remembered.
pub mod interner {
    pub use super::istr::{
        MAX_INTERNED_LEN, SHARD_CAPACITY, SHARDS, interned_count, is_enabled, set_enabled,
    };
}
