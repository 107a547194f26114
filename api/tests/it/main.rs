//! Integration tests of `kclient-api`: generated round trips of every type, and the traits
//! of the generated resource types.

mod conformance;
#[cfg(all(feature = "protobuf", feature = "core"))]
mod protobuf;
mod roundtrip;
mod roundtrip_generated;
mod traits;
