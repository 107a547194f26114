//! Pods run on the testenv: the scheduler binds them to the simulated kwok node, the deployment
//! controller keeps a Deployment's replicas, and the simulated kubelet serves `kubectl exec`,
//! `attach`, `logs` and `port-forward` for them. These tests drive kubectl (installed on the
//! test machine) against the shared testenv, as a user of the cluster would.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// How long a pod may take to become Ready, or a command to finish, before the test fails
/// saying so (the cluster answers in well under a second when idle; this bounds a hang).
const DEADLINE: Duration = Duration::from_secs(120);

/// A kubectl command as the admin, in `namespace`.
fn kubectl(env: &TestEnv, namespace: &str) -> Command {
    let mut command = Command::new("kubectl");
    command
        .env("KUBECONFIG", kubeconfig(env))
        .arg("--namespace")
        .arg(namespace);
    command.kill_on_drop(true);
    command
}

fn kubeconfig(env: &TestEnv) -> PathBuf {
    env.kubeconfig_path(Identity::Admin)
}

/// Runs a kubectl command to its end (failing the test if it has not ended by the deadline) and
/// returns its exit code, stdout and stderr.
pub(crate) async fn run(mut command: Command, stdin: Option<&[u8]>) -> (i32, String, String) {
    // kubectl before 1.34 (client-go 2f016580e) starts reading an exec's WebSocket before it
    // has made its streams, and drops what arrives for a stream not made yet, logging
    // "Unknown stream id N, discarding message": a race in kubectl, not in the server, which
    // may lose output. Such a run is made again.
    for _ in 1..KUBECTL_EXEC_ATTEMPTS {
        let (code, stdout, stderr) = run_once(&mut command, stdin).await;
        if !stderr.contains(KUBECTL_EXEC_RACE) {
            return (code, stdout, stderr);
        }
    }
    run_once(&mut command, stdin).await
}

/// What kubectl before 1.34 logs when it lost an exec's message to its own race (see [`run`]).
const KUBECTL_EXEC_RACE: &str = "Unknown stream id";

/// How many times [`run`] tries a kubectl that lost a message to its own race.
const KUBECTL_EXEC_ATTEMPTS: usize = 5;

/// Runs a kubectl command once to its end, as [`run`] does, without making it again.
pub(crate) async fn run_once(command: &mut Command, stdin: Option<&[u8]>) -> (i32, String, String) {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("kubectl is installed and on PATH");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input).await.expect("write kubectl's stdin");
        // Dropping the pipe is the end of input.
    }
    let output = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{command:?} did not end within {DEADLINE:?}"))
        .expect("kubectl's output");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Creates a one-container pod and waits until it is Ready.
pub(crate) async fn ready_pod(
    env: &TestEnv,
    namespace: &str,
    name: &str,
    container: Value,
) -> Value {
    let client = env.client(Identity::Admin);
    let _: Value = client
        .post()
        .group_version("", "v1")
        .namespace(namespace)
        .resource("pods")
        .json(&json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [container]},
        }))
        .send()
        .await
        .expect("create the pod");
    let started = tokio::time::Instant::now();
    loop {
        let pod: Value = client
            .get()
            .group_version("", "v1")
            .namespace(namespace)
            .resource("pods")
            .name(name)
            .send()
            .await
            .expect("read the pod");
        let ready = pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if ready {
            return pod;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "pod {namespace}/{name} not Ready within {DEADLINE:?}: {}",
            pod["status"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A container that runs `sh -c script` on the simulated node.
fn shell(script: &str) -> Value {
    json!({"name": "main", "image": "busybox", "command": ["sh", "-c", script]})
}

#[tokio::test]
async fn a_two_replica_deployment_becomes_available_on_the_simulated_node() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let _: Value = client
        .post()
        .group_version("apps", "v1")
        .namespace(ns.name())
        .resource("deployments")
        .json(&json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        }))
        .send()
        .await
        .expect("create the deployment");
    let started = tokio::time::Instant::now();
    let deployment = loop {
        let d: Value = client
            .get()
            .group_version("apps", "v1")
            .namespace(ns.name())
            .resource("deployments")
            .name("web")
            .send()
            .await
            .expect("read the deployment");
        if d["status"]["availableReplicas"] == 2 && d["status"]["updatedReplicas"] == 2 {
            break d;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "deployment not available within {DEADLINE:?}: {}",
            d["status"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(deployment["status"]["readyReplicas"], 2);
    let pods: Value = client
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("pods")
        .param("labelSelector", "app=web")
        .send()
        .await
        .expect("list the pods");
    let pods = pods["items"].as_array().expect("items");
    assert_eq!(pods.len(), 2, "{pods:?}");
    for pod in pods {
        assert_eq!(pod["status"]["phase"], "Running");
        assert!(
            pod["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| n.starts_with("kwok-node-")),
            "scheduled to a simulated node: {}",
            pod["spec"]["nodeName"]
        );
        assert!(pod["status"]["podIP"].is_string(), "{}", pod["status"]);
    }
}

#[tokio::test]
async fn a_new_namespace_gets_its_default_service_account() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let started = tokio::time::Instant::now();
    loop {
        match client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("serviceaccounts")
            .name("default")
            .send::<Value>()
            .await
        {
            Ok(sa) => {
                assert_eq!(sa["metadata"]["namespace"], ns.name());
                return;
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => panic!("reading the default service account: {e}"),
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no default ServiceAccount in {} within {DEADLINE:?}",
            ns.name()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn kubectl_exec_returns_the_commands_exit_code_and_output() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    ready_pod(&env, ns.name(), "exec", shell("sleep 3600")).await;
    let mut command = kubectl_exec(&env, ns.name(), "exec", false);
    command.args(["sh", "-c", "echo out; echo err >&2; exit 3"]);
    let (code, stdout, stderr) = run(command, None).await;
    assert_eq!(code, 3, "stdout {stdout:?}, stderr {stderr:?}");
    assert_eq!(stdout, "out\n");
    assert!(stderr.starts_with("err\n"), "{stderr:?}");

    let mut command = kubectl_exec(&env, ns.name(), "exec", false);
    command.args(["sh", "-c", "exit 0"]);
    let (code, _, stderr) = run(command, None).await;
    assert_eq!(code, 0, "{stderr}");
}

/// `kubectl exec [-i] POD -- ` (the command follows).
pub(crate) fn kubectl_exec(env: &TestEnv, namespace: &str, pod: &str, stdin: bool) -> Command {
    let mut command = kubectl(env, namespace);
    command.arg("exec");
    if stdin {
        command.arg("-i");
    }
    command.arg(pod).arg("--");
    command
}

#[tokio::test]
async fn kubectl_exec_stdin_reaches_the_command_and_its_end_ends_it() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    ready_pod(&env, ns.name(), "stdin", shell("sleep 3600")).await;
    let mut command = kubectl_exec(&env, ns.name(), "stdin", true);
    command.arg("cat");
    let (code, stdout, stderr) = run(command, Some(b"x\n")).await;
    assert_eq!((code, stdout.as_str()), (0, "x\n"), "stderr {stderr:?}");
    // A command that reads to the end and reports what it got.
    let mut command = kubectl_exec(&env, ns.name(), "stdin", true);
    command.args(["wc", "-c"]);
    let input = vec![b'a'; 1 << 20];
    let (code, stdout, stderr) = run(command, Some(&input)).await;
    assert_eq!(code, 0, "stderr {stderr:?}");
    assert_eq!(stdout.trim(), (1 << 20).to_string());
}

#[tokio::test]
async fn kubectl_exec_of_a_missing_command_fails_with_its_name() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    ready_pod(&env, ns.name(), "missing", shell("sleep 3600")).await;
    let mut command = kubectl_exec(&env, ns.name(), "missing", false);
    command.arg("no-such-command-kclient");
    let (code, _, stderr) = run(command, None).await;
    assert_ne!(code, 0);
    assert!(stderr.contains("no-such-command-kclient"), "{stderr}");
}

#[tokio::test]
async fn kubectl_logs_shows_the_containers_output() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    ready_pod(
        &env,
        ns.name(),
        "logs",
        shell("echo hello from the pod; echo to stderr >&2; sleep 2; echo later; sleep 3600"),
    )
    .await;
    // Following from the start: the line written two seconds later arrives, and kubectl keeps
    // following (the process still runs).
    let mut command = kubectl(&env, ns.name());
    command.args(["logs", "-f", "logs"]);
    let (ended, _, stderr) = run_until(command, "later").await;
    assert_eq!(ended, None, "kubectl logs -f ended early: {stderr}");
    // The whole log (stdout and stderr, in the order written), then its last line only.
    let mut command = kubectl(&env, ns.name());
    command.args(["logs", "logs"]);
    let (code, stdout, stderr) = run(command, None).await;
    assert_eq!(code, 0, "{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.pop(), Some("later"), "{stdout:?}");
    lines.sort_unstable();
    assert_eq!(lines, ["hello from the pod", "to stderr"]);
    let mut command = kubectl(&env, ns.name());
    command.args(["logs", "--tail=1", "logs"]);
    let (code, stdout, stderr) = run(command, None).await;
    assert_eq!((code, stdout.as_str()), (0, "later\n"), "{stderr}");
}

/// Starts a command and reads its stdout until a line equal to `line` (failing the test after
/// the deadline), then kills it; returns its exit code if it had ended, and its stderr.
async fn run_until(mut command: Command, line: &str) -> (Option<i32>, String, String) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("kubectl is installed and on PATH");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let found = tokio::time::timeout(DEADLINE, async {
        while let Some(got) = stdout.next_line().await.expect("read stdout") {
            if got == line {
                return got;
            }
        }
        String::new()
    })
    .await
    .unwrap_or_else(|_| panic!("{command:?}: no line {line:?} within {DEADLINE:?}"));
    let ended = child
        .try_wait()
        .expect("kubectl's state")
        .and_then(|s| s.code());
    child.kill().await.expect("stop kubectl");
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .await;
    (ended, found, stderr)
}

#[tokio::test]
async fn kubectl_attach_connects_to_the_running_process() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    // `cat` with stdin: what the attached client sends comes back on stdout, and (stdinOnce) the
    // client's end of input ends cat, which ends the attachment.
    ready_pod(
        &env,
        ns.name(),
        "attach",
        json!({"name": "main", "image": "busybox", "command": ["cat"], "stdin": true, "stdinOnce": true}),
    )
    .await;
    let mut command = kubectl(&env, ns.name());
    command.args(["attach", "-i", "attach"]);
    let (code, stdout, stderr) = run(command, Some(b"through the running process\n")).await;
    assert_eq!(code, 0, "stdout {stdout:?}, stderr {stderr:?}");
    assert_eq!(stdout, "through the running process\n", "{stderr}");
}

#[tokio::test]
async fn kubectl_port_forward_reaches_a_tcp_echo_server() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    // The pod's port P is 127.0.0.1:P on the simulated node: the echo server listens there.
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the echo server");
    let port = echo.local_addr().expect("echo address").port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = echo.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = conn.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    ready_pod(&env, ns.name(), "forward", shell("sleep 3600")).await;
    let mut command = kubectl(&env, ns.name());
    command
        .args(["port-forward", "pod/forward"])
        .arg(format!(":{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("kubectl is installed and on PATH");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // "Forwarding from 127.0.0.1:LOCAL -> PORT"
    let local = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = stdout.next_line().await.expect("read stdout") {
            if let Some(rest) = line.strip_prefix("Forwarding from 127.0.0.1:") {
                return rest.split(' ').next().map(str::to_string);
            }
        }
        None
    })
    .await
    .expect("kubectl port-forward announced its port in time")
    .expect("kubectl port-forward announced its local port");
    for round in 0..3 {
        let mut conn = tokio::net::TcpStream::connect(format!("127.0.0.1:{local}"))
            .await
            .expect("connect to the forwarded port");
        let message = format!("ping {round}\n");
        conn.write_all(message.as_bytes()).await.expect("send");
        conn.shutdown().await.expect("end of data");
        let mut back = String::new();
        tokio::time::timeout(DEADLINE, conn.read_to_string(&mut back))
            .await
            .expect("the echo came back in time")
            .expect("read the echo");
        assert_eq!(back, message);
    }
    child.kill().await.expect("stop kubectl");
}
