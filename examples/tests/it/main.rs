//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace, two
//! `network-controller --leader-elect` replicas and the `configmap-mirror` binary run as child
//! processes; the `api-resources`, `explain` and `cluster-info` examples compared with kubectl;
//! `kexec`, `klogs` and `kport-forward` compared with kubectl on the same pods.

mod api_resources;
mod cluster_info;
mod configmap_mirror;
mod explain;
mod network_controller;
mod network_leader_election;
mod streams;

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `probe` every 100 ms until it returns `Some`; panics naming `what` after `timeout`.
pub(crate) async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
