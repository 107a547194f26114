//! Integration tests of `kclient-api`: generated round trips of every type, and the traits
//! of the generated resource types; with `apply`, round trips of every apply configuration.

#[cfg(feature = "apply")]
mod apply_roundtrip;
#[cfg(feature = "apply")]
mod apply_roundtrip_generated;
// Written against every GA group: with fewer groups it is left out, not run half-empty.
#[cfg(feature = "all")]
mod conformance;
#[cfg(feature = "apiextensions")]
mod deep_schema;
#[cfg(all(feature = "protobuf", feature = "core"))]
mod protobuf;
#[cfg(all(feature = "protobuf", feature = "core"))]
mod protobuf_live;
mod roundtrip;
mod roundtrip_generated;
mod traits;
