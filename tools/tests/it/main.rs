//! Integration tests of kclient-tools against the local kube-apiserver (`scripts/testenv up`):
//! leader election on a real Lease, events written through the API, and retry on a real
//! 409 Conflict.
//!
//! Tests that create a test namespace run on the multi-threaded runtime: the namespace is
//! deleted in `Drop`, which blocks the test's thread while the REST client (whose connections
//! that runtime drives) sends the DELETE.

mod events_v1;
mod leader_election;
mod record;
mod retry;
mod rollout;
mod send_sync;
mod watch;

use std::time::Duration;

use kclient_api::core::v1::ConfigMap;

/// A ConfigMap named `name` with `data`.
pub(crate) fn configmap(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "data": data.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
    }))
    .expect("valid ConfigMap JSON")
}

/// A namespace of the test's own, a clientset, and the ConfigMap `subject` created there with
/// `data`: what the event tests record events about.
pub(crate) async fn event_subject(
    env: &kclient_testenv::TestEnv,
    data: &[(&str, &str)],
) -> (
    kclient_testenv::TestNamespace,
    kclient_clientset::Clientset,
    ConfigMap,
) {
    let ns = env.namespace().await;
    let cs = kclient_clientset::Clientset::new(env.client(kclient_testenv::Identity::Admin));
    let cm = cs
        .core_v1()
        .config_maps(ns.name())
        .create(
            &configmap("subject", data),
            &kclient_apimachinery::CreateOptions::default(),
        )
        .await
        .expect("create the subject ConfigMap");
    (ns, cs, cm)
}

/// Waits up to `limit` for `f` to return `Some`, polling every 50 ms.
pub(crate) async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
