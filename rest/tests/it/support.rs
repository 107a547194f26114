//! Request helpers shared by the integration test binaries.

use kclient_rest::{Client, Request};

/// A request for ConfigMaps in `ns`.
pub(crate) fn configmaps(req: Request, ns: &str) -> Request {
    req.group_version("", "v1")
        .namespace(ns)
        .resource("configmaps")
}

/// Creates a ConfigMap and returns it.
pub(crate) async fn create_cm(
    client: &Client,
    ns: &str,
    name: &str,
    value: &str,
) -> serde_json::Value {
    configmaps(client.post(), ns)
        .json(&serde_json::json!({"metadata": {"name": name}, "data": {"k": value}}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("create configmap {name}: {e}"))
}
