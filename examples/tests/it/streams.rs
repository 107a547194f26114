//! `kexec`, `klogs` and `kport-forward` against `kubectl exec`, `kubectl logs` and
//! `kubectl port-forward` on the same pods of the local cluster (pods run there on a simulated
//! node: each container's command is a local process, and a pod's port P is 127.0.0.1:P):
//! the same stdout, stderr and exit code, the same log lines (`--tail`, `--timestamps`, `-f`
//! ending with the pod's command) and the same bytes through a forwarded port.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use kclient::api::core::v1::Pod;
use kclient::apimachinery::{CreateOptions, GetOptions};
use kclient::envtest::{Identity, TestEnv};
use kclient::kubernetes::Api;
use serde_json::{Value, json};

use crate::{ClosedPipeEnd, run_with_closed_stdout};

use crate::eventually;

/// How long a pod may take to become Ready, or its command to end.
const TIMEOUT: Duration = Duration::from_secs(120);

/// One test's namespace, kubeconfig and a private kubectl cache directory (kubectl keeps
/// discovery on disk; a shared one could hold another run's state).
struct Cluster {
    namespace: String,
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

impl Cluster {
    /// `kubectl --namespace NS ARGS...`, not yet run.
    fn kubectl(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .arg(format!("--cache-dir={}", self.cache.path().display()))
            .arg(format!("--namespace={}", self.namespace))
            .args(args)
            .stdin(Stdio::null());
        command
    }

    /// The example binary `bin` with `-n NS ARGS...`, not yet run.
    fn ours(&self, bin: &str, args: &[&str]) -> Command {
        let mut command = Command::new(bin);
        command
            .env("KUBECONFIG", &self.kubeconfig)
            .args(["-n", &self.namespace])
            .args(args)
            .stdin(Stdio::null());
        command
    }
}

/// Runs a command to its end (killing it if it has not ended within TIMEOUT), again if
/// kubectl lost a message to its own race (see [`unless_kubectl_raced`]).
fn output(mut command: Command) -> Output {
    let what = format!("{command:?}");
    unless_kubectl_raced(|| {
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: {e} (is kubectl installed and on PATH?)"));
        wait_bounded(child, &what)
    })
}

/// Runs `attempt` (a program to its end) again, up to five times in all, while kubectl's
/// stderr says it lost a message to its own race: kubectl before 1.34 (client-go 2f016580e)
/// starts reading an exec's WebSocket before it has made its streams, and drops what arrives
/// for a stream not made yet ("Unknown stream id N, discarding message"), output included.
fn unless_kubectl_raced(mut attempt: impl FnMut() -> Output) -> Output {
    for _ in 1..5 {
        let out = attempt();
        if !String::from_utf8_lossy(&out.stderr).contains("Unknown stream id") {
            return out;
        }
    }
    attempt()
}

/// Waits for a child, killing it and failing the test after TIMEOUT.
fn wait_bounded(child: Child, what: &str) -> Output {
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(out) => out.unwrap_or_else(|e| panic!("{what}: {e}")),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("{what} did not end within {TIMEOUT:?}");
        }
    }
}

/// Creates a pod in the test's namespace and waits until it is Ready.
async fn ready_pod(env: &TestEnv, namespace: &str, name: &str, spec: Value) {
    ready_pod_with(env, namespace, json!({"name": name}), spec).await;
}

/// [`ready_pod`] with the pod's whole `metadata` (its name included).
async fn ready_pod_with(env: &TestEnv, namespace: &str, metadata: Value, spec: Value) {
    let name = metadata["name"].as_str().expect("a name").to_owned();
    let name = name.as_str();
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), namespace);
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
    }))
    .expect("valid Pod JSON");
    pods.create(&pod, &CreateOptions::default())
        .await
        .expect("create the pod");
    eventually(&format!("pod {name} Ready"), TIMEOUT, || async {
        let pod = pods.get(name, &GetOptions::default()).await.ok()?;
        let ready = serde_json::to_value(&pod).ok()?["status"]["conditions"]
            .as_array()?
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        ready.then_some(())
    })
    .await;
}

/// A one-container pod spec running `sh -c script`, never restarted (so that its log is
/// the same for both programs after the script ends).
fn shell(script: &str) -> Value {
    json!({"restartPolicy": "Never", "containers": [
        {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}]})
}

async fn cluster(env: &TestEnv) -> (kclient::envtest::TestNamespace, Cluster) {
    let ns = env.namespace().await;
    let cluster = Cluster {
        namespace: ns.name().to_owned(),
        kubeconfig: env.kubeconfig_path(Identity::Admin),
        cache: tempfile::tempdir().expect("a temporary kubectl cache dir"),
    };
    (ns, cluster)
}

/// Runs both programs on the blocking pool (they are child processes).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .expect("the comparison ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kexec_prints_and_exits_as_kubectl_exec() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    ready_pod(&env, &cluster.namespace, "exec", shell("sleep 3600")).await;
    blocking(move || {
        let both = |args: &[&str], stdin: Option<&[u8]>| {
            let mut kubectl_args = vec!["exec"];
            if stdin.is_some() {
                kubectl_args.push("-i");
            }
            kubectl_args.extend(["exec", "--"]);
            kubectl_args.extend(args);
            let mut our_args = if stdin.is_some() { vec!["-i"] } else { vec![] };
            our_args.extend(["exec", "--"]);
            our_args.extend(args);
            let run = |mut command: Command| match stdin {
                None => output(command),
                Some(input) => unless_kubectl_raced(|| {
                    let mut child = command
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .expect("start the program");
                    let mut pipe = child.stdin.take().expect("stdin");
                    let input = input.to_vec();
                    std::thread::spawn(move || {
                        let _ = pipe.write_all(&input);
                    });
                    wait_bounded(child, "exec with stdin")
                }),
            };
            let theirs = run(cluster.kubectl(&kubectl_args));
            let ours = run(cluster.ours(env!("CARGO_BIN_EXE_kexec"), &our_args));
            (theirs, ours)
        };

        // stdout, stderr and a non-zero exit code.
        let (theirs, ours) = both(&["sh", "-c", "echo out; echo err >&2; exit 3"], None);
        assert_eq!(theirs.status.code(), Some(3), "{theirs:?}");
        assert_eq!(ours.status.code(), theirs.status.code(), "{ours:?}");
        assert_eq!(ours.stdout, theirs.stdout);
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&theirs.stderr)
        );

        // Exit code 0, binary output (every byte value, 1 MiB).
        let (theirs, ours) = both(
            &[
                "sh",
                "-c",
                "i=0; while [ $i -lt 16 ]; do head -c 65536 /dev/urandom; i=$((i+1)); done > blob; cat blob",
            ],
            None,
        );
        assert_eq!(theirs.status.code(), Some(0), "{theirs:?}");
        assert_eq!(ours.status.code(), Some(0), "{ours:?}");
        let (theirs, ours) = both(&["cat", "blob"], None);
        assert_eq!(theirs.stdout.len(), 1 << 20);
        assert!(ours.stdout == theirs.stdout, "kexec's bytes differ");

        // stdin to its end.
        let input = vec![b'x'; 300_000];
        let (theirs, ours) = both(&["wc", "-c"], Some(&input));
        assert_eq!(String::from_utf8_lossy(&theirs.stdout).trim(), "300000");
        assert_eq!(ours.stdout, theirs.stdout);
        assert_eq!(ours.status.code(), Some(0), "{ours:?}");

        // A command that does not exist: both fail with exit code 1, naming it.
        let (theirs, ours) = both(&["no-such-command-kclient"], None);
        assert_eq!(theirs.status.code(), Some(1));
        assert_eq!(ours.status.code(), Some(1));
        for out in [&theirs, &ours] {
            let text = String::from_utf8_lossy(&out.stderr);
            assert!(text.contains("no-such-command-kclient"), "{text}");
        }

        // Output to a reader that has gone: kubectl dies of SIGPIPE, kexec exits with 141, both
        // saying nothing.
        let args = ["exec", "--", "echo", "hello"];
        let (end, stderr) = run_with_closed_stdout(cluster.kubectl(&[&["exec"][..], &args].concat()));
        // kubectl's websocket reader may log a frame that reaches it after its stream closed
        // (`websocket.go:296] Unknown stream id 1, discarding message`, seen once in CI): its
        // own race, which says nothing about the output, so that line alone is left out.
        let stderr: String = stderr
            .lines()
            .filter(|line| !line.contains("Unknown stream id"))
            .collect();
        assert_eq!((end, stderr.as_str()), (ClosedPipeEnd::Sigpipe, ""));
        let (end, stderr) = run_with_closed_stdout(cluster.ours(env!("CARGO_BIN_EXE_kexec"), &args));
        assert_eq!((end, stderr.as_str()), (ClosedPipeEnd::Exited(141), ""));
    })
    .await;
}

/// `kubectl exec -i` ends when the command ends, even while its own input is still open (a
/// terminal the user has not typed into again): kexec must too, not wait for one more line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kexec_ends_with_the_command_while_its_input_stays_open() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    ready_pod(&env, &cluster.namespace, "exec", shell("sleep 3600")).await;
    blocking(move || {
        let script = ["sh", "-c", "echo bye; exit 2"];
        let kubectl_args: Vec<&str> = ["exec", "-i", "exec", "--"].into_iter().chain(script).collect();
        let our_args: Vec<&str> = ["-i", "exec", "--"].into_iter().chain(script).collect();
        for (name, mut command) in [
            ("kubectl exec -i", cluster.kubectl(&kubectl_args)),
            ("kexec -i", cluster.ours(env!("CARGO_BIN_EXE_kexec"), &our_args)),
        ] {
            let started = std::time::Instant::now();
            let out = unless_kubectl_raced(|| {
                let mut child = command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start the program");
                // Held open (never written, never closed) until the program has ended.
                let input = child.stdin.take().expect("stdin");
                let id = child.id();
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = tx.send(child.wait_with_output());
                });
                let out = match rx.recv_timeout(Duration::from_secs(30)) {
                    Ok(out) => out.expect("wait for the program"),
                    Err(_) => {
                        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
                        panic!("{name} did not end within 30 s of its command's end while its stdin stayed open");
                    }
                };
                drop(input);
                out
            });
            assert_eq!(out.status.code(), Some(2), "{name}: {out:?} after {:?}", started.elapsed());
            assert_eq!(String::from_utf8_lossy(&out.stdout), "bye\n", "{name}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn klogs_prints_what_kubectl_logs_prints() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    // The script ends after a pause, so that `-f` from the start sees lines written while
    // it follows, and ends when the command ends.
    ready_pod(
        &env,
        &cluster.namespace,
        "logs",
        shell("for i in 1 2 3 4 5; do echo line $i; done; echo to stderr >&2; sleep 2; echo last line"),
    )
    .await;
    blocking(move || {
        let klogs = env!("CARGO_BIN_EXE_klogs");
        // Followed by both at once, from the start: each ends when the command ends.
        let follow = |mut command: Command| {
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start the program")
        };
        let theirs = follow(cluster.kubectl(&["logs", "-f", "logs"]));
        let ours = follow(cluster.ours(klogs, &["-f", "logs"]));
        let theirs = wait_bounded(theirs, "kubectl logs -f");
        let ours = wait_bounded(ours, "klogs -f");
        assert!(theirs.status.success(), "{theirs:?}");
        assert!(ours.status.success(), "{ours:?}");
        let text = String::from_utf8_lossy(&theirs.stdout).into_owned();
        assert!(text.ends_with("last line\n"), "{text}");
        assert_eq!(text.lines().count(), 7, "{text}");
        assert_eq!(String::from_utf8_lossy(&ours.stdout), text);

        for args in [
            &["logs"][..],
            &["--tail", "2", "logs"],
            &["--timestamps", "logs"],
            &["--tail", "3", "--timestamps", "logs"],
            // Cut inside a line: the first 10 bytes, with no newline added.
            &["--limit-bytes", "10", "logs"],
            // kubectl's other spellings: `--flag=value`, a tail of -1 (all, its default), a
            // `--since` duration, the pod as `pod/NAME`.
            &["--tail=2", "logs"],
            &["--tail", "-1", "logs"],
            &["--since", "1h", "logs"],
            &["--since=90m", "--tail=1", "logs"],
            &["pod/logs"],
            // Booleans spelt out.
            &["--follow=false", "--timestamps=false", "logs"],
            &["--timestamps=true", "--tail=1", "logs"],
        ] {
            let mut kubectl_args = vec!["logs"];
            kubectl_args.extend(args);
            let theirs = output(cluster.kubectl(&kubectl_args));
            assert!(theirs.status.success(), "{theirs:?}");
            let ours = output(cluster.ours(klogs, args));
            assert!(ours.status.success(), "{ours:?}");
            assert_eq!(
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&theirs.stdout),
                "klogs {args:?}"
            );
        }

        // Output to a reader that has gone: kubectl dies of SIGPIPE, klogs exits with 141, both
        // saying nothing.
        let (end, stderr) = run_with_closed_stdout(cluster.kubectl(&["logs", "logs"]));
        assert_eq!((end, stderr.as_str()), (ClosedPipeEnd::Sigpipe, ""));
        let (end, stderr) = run_with_closed_stdout(cluster.ours(klogs, &["logs"]));
        assert_eq!((end, stderr.as_str()), (ClosedPipeEnd::Exited(141), ""));
    })
    .await;
}

/// A TCP echo server on the node (a pod's port P is 127.0.0.1:P there), on its own thread.
fn echo_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the echo server");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for conn in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut read = conn;
                let mut write = read.try_clone().expect("clone the connection");
                let _ = std::io::copy(&mut read, &mut write);
            });
        }
    });
    port
}

/// Starts a port forwarder and returns it with the local port it announced and its
/// announcement: `Forwarding from 127.0.0.1:LOCAL -> REMOTE`, then, where this machine has an
/// IPv6 loopback, `Forwarding from [::1]:LOCAL -> REMOTE` (kubectl listens on both for
/// `localhost`, its default address, at the same port). Its stderr goes where `command` says.
fn start_forwarder(mut command: Command, remote: u16) -> (Forwarder, u16, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the forwarder");
    // Read on a thread of its own, so that a line that never comes fails the test in TIMEOUT;
    // it keeps reading (kubectl prints a line per connection) so that the forwarder never
    // blocks on a full pipe.
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let child = Forwarder(child);
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let expected = if ipv6_loopback() { 2 } else { 1 };
    let mut lines = String::new();
    for n in 1..=expected {
        match lines_rx.recv_timeout(TIMEOUT) {
            Ok(line) => lines.push_str(&format!("{line}\n")),
            Err(e) => panic!("line {n} of {command:?} did not come ({e}); before it: {lines:?}"),
        }
    }
    let local = lines
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("Forwarding from 127.0.0.1:"))
        .and_then(|rest| rest.strip_suffix(&format!(" -> {remote}")))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("not a forwarding line: {lines:?}"));
    (child, local, lines)
}

/// A running port forwarder, killed (and reaped) when dropped: also when a test fails while
/// it runs, so that no forwarder outlives its test.
struct Forwarder(Child);

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether this machine can listen on ::1.
fn ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

/// Sends `payload` through the forwarded port on `ip` and returns what came back.
fn through(ip: IpAddr, local: u16, payload: &[u8]) -> Vec<u8> {
    let mut conn = TcpStream::connect((ip, local)).expect("connect to the forwarded port");
    conn.set_read_timeout(Some(TIMEOUT)).expect("read timeout");
    let mut writer = conn.try_clone().expect("clone the connection");
    let sent = payload.to_vec();
    let send = std::thread::spawn(move || writer.write_all(&sent));
    let mut back = vec![0u8; payload.len()];
    conn.read_exact(&mut back).expect("the echo came back");
    send.join().expect("the sender").expect("send");
    back
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kport_forward_carries_what_kubectl_port_forward_carries() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    let port = echo_server();
    ready_pod(&env, &cluster.namespace, "forward", shell("sleep 3600")).await;
    let cluster = blocking(move || {
        let remote = format!(":{port}");
        let quiet = |mut command: Command| {
            command.stderr(Stdio::null());
            command
        };
        let (theirs, their_port, their_line) = start_forwarder(
            quiet(cluster.kubectl(&["port-forward", "pod/forward", &remote])),
            port,
        );
        let (ours, our_port, our_line) = start_forwarder(
            quiet(cluster.ours(
                env!("CARGO_BIN_EXE_kport-forward"),
                &["pod/forward", &remote],
            )),
            port,
        );
        // The same announcement, but for the port.
        assert_eq!(
            our_line.replace(&our_port.to_string(), "L"),
            their_line.replace(&their_port.to_string(), "L")
        );
        let payload: Vec<u8> = (0..4u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
        let mut loopbacks = vec![IpAddr::from(Ipv4Addr::LOCALHOST)];
        if ipv6_loopback() {
            loopbacks.push(Ipv6Addr::LOCALHOST.into());
        }
        for round in 0..3 {
            for &ip in &loopbacks {
                let via_kubectl = through(ip, their_port, &payload);
                let via_ours = through(ip, our_port, &payload);
                assert!(
                    via_kubectl == payload,
                    "round {round}, {ip}: kubectl's bytes differ"
                );
                assert!(
                    via_ours == payload,
                    "round {round}, {ip}: kport-forward's bytes differ"
                );
            }
        }
        drop((theirs, ours));
        cluster
    })
    .await;

    // A pod that does not run (bound to a node that does not exist, it stays Pending) is
    // refused by both, with kubectl's words. Created only now: testenv runs
    // kube-controller-manager's pod garbage collector, which deletes a Pod bound to a missing
    // node 40 to 80 s after its creation, and the transfers above take a good part of that on
    // a busy machine.
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), &cluster.namespace);
    let mut spec = shell("sleep 3600");
    spec["nodeName"] = json!("no-such-node");
    let pending: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pending"}, "spec": spec}))
    .expect("valid Pod JSON");
    pods.create(&pending, &CreateOptions::default())
        .await
        .expect("create the pending pod");
    blocking(move || {
        let theirs = output(cluster.kubectl(&["port-forward", "pending", "8080"]));
        let ours = output(cluster.ours(env!("CARGO_BIN_EXE_kport-forward"), &["pending", "8080"]));
        let refusal = "unable to forward port because pod is not running. Current status=Pending";
        for (who, out) in [("kubectl", &theirs), ("kport-forward", &ours)] {
            assert_eq!(out.status.code(), Some(1), "{who}: {out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(refusal), "{who}: {stderr}");
        }
    })
    .await;
}

/// A local port already taken: kubectl reports it on stderr and forwards the other ports, and
/// so does `kport-forward` (it used to give up on every port).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kport_forward_goes_on_without_a_port_it_cannot_listen_on_as_kubectl() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    let port = echo_server();
    ready_pod(&env, &cluster.namespace, "forward", shell("sleep 3600")).await;
    blocking(move || {
        // Taken on both loopbacks, so that neither forwarder can listen on it at all.
        let taken = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
        let busy = taken.local_addr().expect("its address").port();
        let _taken_v6 = ipv6_loopback()
            .then(|| std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, busy)).ok())
            .flatten();
        let first = format!("{busy}:{port}");
        let second = format!(":{port}");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let run = |who: &str, mut command: Command| {
            let stderr_path = dir.path().join(who);
            let stderr = std::fs::File::create(&stderr_path).expect("a stderr file");
            command.stderr(stderr);
            let (forwarder, local, line) = start_forwarder(command, port);
            // The free port forwards.
            let payload = b"still forwarded".to_vec();
            assert_eq!(
                through(Ipv4Addr::LOCALHOST.into(), local, &payload),
                payload,
                "{who}"
            );
            drop(forwarder);
            let stderr = std::fs::read_to_string(&stderr_path).expect("read stderr");
            (local, line, stderr)
        };
        let (their_port, their_line, their_stderr) = run(
            "kubectl",
            cluster.kubectl(&["port-forward", "pod/forward", &first, &second]),
        );
        let (our_port, our_line, our_stderr) = run(
            "ours",
            cluster.ours(
                env!("CARGO_BIN_EXE_kport-forward"),
                &["pod/forward", &first, &second],
            ),
        );
        assert_eq!(
            our_line.replace(&our_port.to_string(), "L"),
            their_line.replace(&their_port.to_string(), "L")
        );
        let report = format!("Unable to listen on port {busy}: ");
        for (who, stderr) in [("kubectl", &their_stderr), ("kport-forward", &our_stderr)] {
            assert!(stderr.contains(&report), "{who}: {stderr}");
        }

        // Every port taken: both fail, with kubectl's words.
        let theirs = output(cluster.kubectl(&["port-forward", "pod/forward", &first]));
        let ours = output(cluster.ours(
            env!("CARGO_BIN_EXE_kport-forward"),
            &["pod/forward", &first],
        ));
        let refusal = "unable to listen on any of the requested ports";
        for (who, out) in [("kubectl", &theirs), ("kport-forward", &ours)] {
            assert_eq!(out.status.code(), Some(1), "{who}: {out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(refusal), "{who}: {stderr}");
            assert!(stderr.contains(&report), "{who}: {stderr}");
        }
        drop(taken);
    })
    .await;
}

/// A pod of several containers named without `-c`: like kubectl, `klogs` and `kexec` use the
/// container the `kubectl.kubernetes.io/default-container` annotation names, else the first
/// one, saying so on stderr (`Defaulted container "a" out of: a, b`), instead of failing with
/// the server's "a container name must be specified".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn klogs_and_kexec_pick_the_default_container_as_kubectl_does() {
    let env = TestEnv::connect().await;
    let (_ns, cluster) = cluster(&env).await;
    let two = |a: &str, b: &str| {
        json!({"restartPolicy": "Never", "containers": [
            {"name": "a", "image": "busybox", "command": ["sh", "-c", a]},
            {"name": "b", "image": "busybox", "command": ["sh", "-c", b]}]})
    };
    ready_pod(
        &env,
        &cluster.namespace,
        "first",
        two("echo from a; sleep 600", "echo from b; sleep 600"),
    )
    .await;
    ready_pod_with(
        &env,
        &cluster.namespace,
        json!({"name": "annotated",
            "annotations": {"kubectl.kubernetes.io/default-container": "b"}}),
        two("echo from a; sleep 600", "echo from b; sleep 600"),
    )
    .await;
    blocking(move || {
        let (klogs, kexec) = (env!("CARGO_BIN_EXE_klogs"), env!("CARGO_BIN_EXE_kexec"));
        for (bin, kubectl_args, args) in [
            (klogs, &["logs", "first"][..], &["first"][..]),
            (klogs, &["logs", "annotated"], &["annotated"]),
            (
                kexec,
                &["exec", "first", "--", "echo", "hi"],
                &["first", "--", "echo", "hi"],
            ),
            (
                kexec,
                &["exec", "annotated", "--", "echo", "hi"],
                &["annotated", "--", "echo", "hi"],
            ),
        ] {
            let theirs = output(cluster.kubectl(kubectl_args));
            assert!(theirs.status.success(), "{theirs:?}");
            let ours = output(cluster.ours(bin, args));
            assert_eq!(ours.status.code(), Some(0), "{bin} {args:?}: {ours:?}");
            assert_eq!(
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&theirs.stdout),
                "{bin} {args:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&theirs.stderr),
                "{bin} {args:?}"
            );
        }
    })
    .await;
}
