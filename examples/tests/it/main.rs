//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace, two
//! `network-controller --leader-elect` replicas and the `configmap-mirror` binary run as child
//! processes; the `api-resources`, `explain` and `cluster-info` examples compared with kubectl;
//! `kexec`, `klogs` and `kport-forward` compared with kubectl on the same pods.

mod api_resources;
mod closed_stdout;
mod cluster_info;
mod configmap_mirror;
mod dynamic_discovery;
mod explain;
mod network_controller;
mod network_leader_election;
mod streams;
mod usage;

use std::future::Future;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, Stdio};
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

/// How a program ends that writes to a pipe whose reader has gone (`... | head -1`).
#[derive(Debug, PartialEq)]
pub(crate) enum ClosedPipeEnd {
    /// Killed by SIGPIPE, as a Go program such as kubectl is.
    Sigpipe,
    /// Exited with this status.
    Exited(i32),
}

/// Runs `command` to its end with its standard output a pipe whose reader has already been
/// closed, so that its first write fails; returns how it ended and its standard error.
pub(crate) fn run_with_closed_stdout(mut command: Command) -> (ClosedPipeEnd, String) {
    let (reader, writer) = std::io::pipe().expect("create a pipe");
    drop(reader);
    let what = format!("{command:?}");
    let out = command
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    let end = match (out.status.signal(), out.status.code()) {
        (Some(13), _) => ClosedPipeEnd::Sigpipe,
        (_, Some(code)) => ClosedPipeEnd::Exited(code),
        (signal, code) => panic!("{what} ended by signal {signal:?}, code {code:?}"),
    };
    (end, String::from_utf8_lossy(&out.stderr).into_owned())
}
