//! Integration tests of kclient-apimachinery against the real kube-apiserver of `testenv`
//! (`scripts/testenv up`): the server's error statuses classify as client-go classifies them,
//! watch streams decode (including the WatchList bookmark), request options are accepted as
//! sent, selectors select what the server selects, and patches built here apply on the server
//! exactly as they apply locally.

mod errors;
mod options;
mod patch;
mod quantity;
mod selectors;
mod send_sync;
mod smp_differential;
mod time;
mod watch;

use kclient_rest::{Client, Request};
use serde_json::{Value, json};

/// A request for ConfigMaps in `ns`.
pub(crate) fn configmaps(req: Request, ns: &str) -> Request {
    req.group_version("", "v1")
        .namespace(ns)
        .resource("configmaps")
}

/// A request for Deployments in `ns`.
pub(crate) fn deployments(req: Request, ns: &str) -> Request {
    req.group_version("apps", "v1")
        .namespace(ns)
        .resource("deployments")
}

/// Creates a ConfigMap with the given labels and returns it.
pub(crate) async fn create_configmap(
    client: &Client,
    ns: &str,
    name: &str,
    labels: Value,
) -> Value {
    configmaps(client.post(), ns)
        .json(&json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("create configmap {name}: {e}"))
}
