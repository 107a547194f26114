//! Integration tests of `kclient-api`: generated round trips of every type, and the traits
//! of the generated resource types.

mod conformance;
mod roundtrip;
mod roundtrip_generated;
mod traits;
