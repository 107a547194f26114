//! kclient-testing's integration tests: kclient's own clients (typed, dynamic, discovery,
//! informers) running unchanged over the fake, and the differential suite that runs each
//! scripted case against the fake and against the real kube-apiserver from testenv.

mod apply;
mod differences;
mod differential;
mod differential_cases;
mod over_fake;
mod ratcheting;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Converts through JSON (test objects are written as `json!` literals).
pub(crate) fn from_json<T: DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("the test object fits the type")
}

/// The JSON of a typed object.
pub(crate) fn to_json<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).expect("serializable")
}
