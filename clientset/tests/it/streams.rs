//! Exec, attach, port-forward and followed logs over WebSocket, against pods that run on the
//! testenv's simulated node (its kubelet runs each container's command as a local process, and
//! a pod's port P is 127.0.0.1:P), compared with kubectl where that is cheap.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_api::core::v1::Pod;
use kclient_apimachinery::{CreateOptions, GetOptions};
use kclient_clientset::{Api, ExecOptions, LogOptions};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::{from_json, to_json};

/// How long a pod may take to become Ready, or a stream to end, before the test fails saying
/// so (the cluster answers in well under a second when idle; this bounds a hang).
const DEADLINE: Duration = Duration::from_secs(120);

/// Fails the test when `f` has not finished by the deadline.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

/// Creates a one-container pod and waits until it is Ready.
async fn ready_pod(pods: &Api<Pod>, name: &str, container: Value) {
    let pod: Pod = from_json(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }));
    pods.create(&pod, &CreateOptions::default())
        .await
        .expect("create the pod");
    within(&format!("pod {name} Ready"), async {
        loop {
            let pod = to_json(&pods.get(name, &GetOptions::default()).await.unwrap());
            let ready = pod["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            if ready {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// A container that runs `sh -c script` on the simulated node.
fn shell(script: &str) -> Value {
    json!({"name": "main", "image": "busybox", "command": ["sh", "-c", script]})
}

/// Runs a command to its end and returns its stdout, stderr and exit status.
async fn run(
    pods: &Api<Pod>,
    pod: &str,
    command: &[&str],
) -> (Vec<u8>, Vec<u8>, Result<(), kclient_apimachinery::Error>) {
    within(&format!("exec {command:?}"), async {
        let mut process = pods
            .exec(pod, command.iter().copied(), &ExecOptions::default())
            .await
            .expect("exec starts");
        let mut stdout = process.take_stdout().unwrap();
        let mut stderr = process.take_stderr().unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (a, b) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        a.expect("read stdout");
        b.expect("read stderr");
        (out, err, process.join().await)
    })
    .await
}

fn sha256_hex(data: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_output_exit_codes_and_a_missing_command() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(&pods, "exec", shell("sleep 3600")).await;

    let (out, err, status) = run(
        &pods,
        "exec",
        &["sh", "-c", "echo out; echo err >&2; exit 3"],
    )
    .await;
    assert_eq!(out, b"out\n");
    assert_eq!(err, b"err\n");
    let status = status.unwrap_err();
    assert_eq!(status.exit_code(), Some(3), "{status:?}");
    assert!(status.is_non_zero_exit_code());

    let (out, _, status) = run(&pods, "exec", &["sh", "-c", "echo fine"]).await;
    assert_eq!(out, b"fine\n");
    status.expect("exit code 0 is Ok");

    // A command that does not exist: an error that names it and carries no exit code.
    let (_, _, status) = run(&pods, "exec", &["no-such-command-kclient"]).await;
    let err = status.unwrap_err();
    assert_eq!(err.exit_code(), None, "{err:?}");
    assert!(err.to_string().contains("no-such-command-kclient"), "{err}");

    // A pod that does not exist is the API's NotFound, before any upgrade.
    let err = pods
        .exec("no-such-pod", ["true"], &ExecOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_stdin_closed_early_ends_cat() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(&pods, "stdin", shell("sleep 3600")).await;
    let mut process = pods
        .exec("stdin", ["cat"], &ExecOptions::default().stdin(true))
        .await
        .unwrap();
    assert_eq!(process.protocol(), "v5.channel.k8s.io");
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = process.take_stdout().unwrap();
    let input: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
    let sent = input.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&sent).await.unwrap();
        // The end of input: cat must see end of file and exit.
        stdin.shutdown().await.unwrap();
    });
    let mut out = Vec::new();
    within("cat's output", stdout.read_to_end(&mut out))
        .await
        .unwrap();
    writer.await.unwrap();
    assert_eq!(out.len(), input.len());
    assert!(out == input, "cat echoed other bytes");
    within("cat's exit", process.join()).await.unwrap();
}

/// Binary stdout of 100 MiB: the bytes received equal the file in the pod, by SHA-256, as
/// kubectl's do.
#[tokio::test(flavor = "multi_thread")]
async fn exec_binary_stdout_matches_the_file_and_kubectl() {
    const SIZE: usize = 100 << 20;
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(&pods, "blob", shell("sleep 3600")).await;
    let make = format!("head -c {SIZE} /dev/urandom > blob && sha256sum blob");
    let (out, err, status) = run(&pods, "blob", &["sh", "-c", &make]).await;
    status.unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&err)));
    let in_pod = String::from_utf8(out).unwrap();
    let in_pod = in_pod.split_whitespace().next().unwrap().to_string();

    let (out, _, status) = run(&pods, "blob", &["cat", "blob"]).await;
    status.unwrap();
    assert_eq!(out.len(), SIZE);
    assert_eq!(sha256_hex(&out), in_pod);

    let output = within(
        "kubectl exec cat",
        tokio::process::Command::new("kubectl")
            .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
            .args([
                "--namespace",
                ns.name(),
                "exec",
                "blob",
                "--",
                "cat",
                "blob",
            ])
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("kubectl is installed");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(sha256_hex(&output.stdout), in_pod, "kubectl's copy");
}

#[tokio::test(flavor = "multi_thread")]
async fn attach_reaches_the_running_process() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(
        &pods,
        "attach",
        json!({"name": "main", "image": "busybox", "command": ["cat"], "stdin": true, "stdinOnce": true}),
    )
    .await;
    let mut process = pods
        .attach("attach", &ExecOptions::default().stdin(true).stderr(false))
        .await
        .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = process.take_stdout().unwrap();
    stdin
        .write_all(b"through the running process\n")
        .await
        .unwrap();
    let mut line = vec![0u8; 28];
    within("the echo", stdout.read_exact(&mut line))
        .await
        .unwrap();
    assert_eq!(line, b"through the running process\n");
    stdin.shutdown().await.unwrap();
    within("the end of the attachment", process.join())
        .await
        .unwrap();
}

/// A TCP echo server on the node (a pod's port P is 127.0.0.1:P there).
async fn echo_server() -> u16 {
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = echo.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = echo.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = conn.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn port_forward_streams_and_100_concurrent_local_connections() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let port = echo_server().await;
    ready_pod(&pods, "forward", shell("sleep 3600")).await;

    // One stream straight from the forwarder.
    let mut forwarder = pods.port_forward("forward", &[port]).await.unwrap();
    let mut stream = forwarder.take_stream(port).unwrap();
    stream.write_all(b"direct").await.unwrap();
    let mut back = [0u8; 6];
    within("the echo", stream.read_exact(&mut back))
        .await
        .unwrap();
    assert_eq!(&back, b"direct");
    drop((stream, forwarder));

    // A port nobody listens on: the server's error for it is a read error naming the port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut forwarder = pods.port_forward("forward", &[closed]).await.unwrap();
    let mut stream = forwarder.take_stream(closed).unwrap();
    let err = within("the refused port", stream.read_to_end(&mut Vec::new()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains(&closed.to_string()), "{err}");

    // The listener, as kubectl port-forward: 100 connections at once, each its own echo.
    let listener = pods
        .port_forward_listen("forward", "127.0.0.1".parse().unwrap(), &[(0, port)])
        .await
        .unwrap();
    let local = listener.local_addresses()[0].0;
    let failures = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..100u32 {
        let failures = failures.clone();
        tasks.push(tokio::spawn(async move {
            let result = async {
                let mut conn = tokio::net::TcpStream::connect(local).await?;
                let message: Vec<u8> = format!("connection {i} ").repeat(500).into_bytes();
                conn.write_all(&message).await?;
                let mut back = vec![0u8; message.len()];
                conn.read_exact(&mut back).await?;
                std::io::Result::Ok(back == message)
            }
            .await;
            if !matches!(result, Ok(true)) {
                eprintln!("connection {i}: {result:?}");
                failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }));
    }
    within("100 forwarded connections", async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await;
    assert_eq!(failures.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_logs_as_lines() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(
        &pods,
        "logs",
        shell("echo first; echo; sleep 1; echo later; sleep 3600"),
    )
    .await;
    let mut lines = pods
        .log_lines("logs", &LogOptions::default().follow(true))
        .await
        .unwrap();
    let mut seen = Vec::new();
    within("the followed lines", async {
        while seen.len() < 3 {
            let line = lines.next().await.expect("the log stays open").unwrap();
            seen.push(String::from_utf8(line.to_vec()).unwrap());
        }
    })
    .await;
    assert_eq!(seen, ["first", "", "later"]);

    // tail_lines and timestamps, as kubectl shows them.
    let tail: Vec<_> = pods
        .log_lines(
            "logs",
            &LogOptions::default().tail_lines(1).timestamps(true),
        )
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(tail.len(), 1);
    let line = String::from_utf8(tail[0].as_ref().unwrap().to_vec()).unwrap();
    assert!(line.ends_with(" later"), "{line}");
    let output = within(
        "kubectl logs",
        tokio::process::Command::new("kubectl")
            .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
            .args([
                "--namespace",
                ns.name(),
                "logs",
                "--tail=1",
                "--timestamps",
                "logs",
            ])
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("kubectl is installed");
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{line}\n"));
}

/// The connection cut halfway through a stream (a FaultProxy between client and server): the
/// reads and the exit status are errors, and nothing hangs.
#[tokio::test(flavor = "multi_thread")]
async fn a_connection_cut_mid_exec_is_an_error_not_a_hang() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    ready_pod(&pods, "cut", shell("sleep 3600")).await;
    let proxy = env.fault_proxy().await;
    let through: Api<Pod> = Api::namespaced(proxy.client(Identity::Admin), ns.name());
    let mut process = through
        .exec(
            "cut",
            ["sh", "-c", "echo started; sleep 3600"],
            &ExecOptions::default(),
        )
        .await
        .unwrap();
    let mut stdout = process.take_stdout().unwrap();
    let mut first = [0u8; 8];
    within("the first output", stdout.read_exact(&mut first))
        .await
        .unwrap();
    assert_eq!(&first, b"started\n");
    assert!(proxy.cut_all().await > 0);
    let err = within(
        "the read after the cut",
        stdout.read_to_end(&mut Vec::new()),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}");
    let err = within("the exit status after the cut", process.join())
        .await
        .unwrap_err();
    assert!(err.is_connection_reset(), "{err:?}");
}
