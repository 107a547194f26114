//! `network-controller --leader-elect` against the real apiserver, two replicas as two child
//! processes on one namespace: only the holder of the Lease `network-controller` reconciles
//! (the manager's one election); when it is stopped (SIGTERM) its manager stops the controller,
//! releases the Lease, and the other replica takes over and reconciles what comes next.
//!
//! "Never both at once" is checked on each replica's own log, whose lines are ordered: the
//! standby logs no reconcile before it logs that it leads, the first leader logs none after it
//! logs that it is stopping its election (the manager logs that once its leader runnables, the
//! controller, have stopped), and that line of the first leader is read before the standby's
//! "leading" (the manager releases the Lease only after that line, and the standby can take
//! the Lease only once it is released).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kclient::api::coordination::v1::Lease;
use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{CreateOptions, GetOptions};
use kclient::envtest::{Identity, TestEnv};
use kclient::kubernetes::{Api, Clientset};
use kclient_examples::{Network, install_crd};

use crate::eventually;

const TIMEOUT: Duration = Duration::from_secs(60);
/// The manager's log lines that mark a leadership term: elected, and its controller stopped
/// before the Lease is released.
const LEADING: &str = "leading: starting the leader election runnables";
const STOPPED: &str = "stopping the leader election";
/// What the shared reconcile logs when it creates a ConfigMap.
const RECONCILED: &str = "created ConfigMap";

/// One `network-controller --leader-elect` process and the lines of its log, each with the
/// moment the test read it; killed if the test fails before stopping it.
struct Replica {
    name: &'static str,
    child: Child,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Replica {
    /// Starts a replica whose Lease identity begins with `name`.
    fn start(env: &TestEnv, namespace: &str, name: &'static str) -> Replica {
        let child = Command::new(env!("CARGO_BIN_EXE_network-controller"))
            .args(["--namespace", namespace, "--workers", "2", "--leader-elect"])
            .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
            .env("HOSTNAME", name)
            .env(
                "RUST_LOG",
                "warn,kclient_examples=info,network_controller=info,kclient_controller=info",
            )
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting network-controller");
        let mut replica = Replica {
            name,
            child,
            lines: Arc::default(),
        };
        let stderr = replica.child.stderr.take().expect("stderr is piped");
        let lines = Arc::clone(&replica.lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[{name}] {line}");
                lines
                    .lock()
                    .expect("the log is not poisoned")
                    .push((Instant::now(), line));
            }
        });
        replica
    }

    /// When the first line containing `text` was read, if it was.
    fn read_at(&self, text: &str) -> Option<Instant> {
        let lines = self.lines.lock().expect("the log is not poisoned");
        lines
            .iter()
            .find(|(_, l)| l.contains(text))
            .map(|(at, _)| *at)
    }

    /// The position of the first line containing `text` in the log, if any.
    fn position(&self, text: &str) -> Option<usize> {
        let lines = self.lines.lock().expect("the log is not poisoned");
        lines.iter().position(|(_, l)| l.contains(text))
    }

    /// The positions of every line containing `text`.
    fn positions(&self, text: &str) -> Vec<usize> {
        let lines = self.lines.lock().expect("the log is not poisoned");
        lines
            .iter()
            .enumerate()
            .filter(|(_, (_, l))| l.contains(text))
            .map(|(i, _)| i)
            .collect()
    }

    async fn wait_for_line(&self, text: &str) -> Instant {
        eventually(
            &format!("{} to log {text:?}", self.name),
            TIMEOUT,
            || async { self.read_at(text) },
        )
        .await
    }

    /// Sends SIGTERM and checks that the program shuts down cleanly.
    fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(killed.expect("running kill").success());
        let status = self.child.wait().expect("waiting for network-controller");
        assert!(
            status.success(),
            "{}'s network-controller exited with {status}",
            self.name
        );
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_replica_takes_over_when_the_leader_stops() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let namespace = ns.name().to_owned();
    let client = env.client(Identity::Admin);
    install_crd(&Clientset::new(client.clone()), TIMEOUT)
        .await
        .expect("installing the Network CRD");
    let networks: Api<Network> = Api::namespaced(client.clone(), &namespace);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    let wait_for_config_map = |name: &'static str| {
        let config_maps = config_maps.clone();
        async move {
            eventually(&format!("ConfigMap {name}"), TIMEOUT, || async {
                match config_maps.get(name, &GetOptions::default()).await {
                    Ok(cm) => Some(cm),
                    Err(e) if e.is_not_found() => None,
                    Err(e) => panic!("reading ConfigMap {name}: {e}"),
                }
            })
            .await
        }
    };

    let mut alpha = Replica::start(&env, &namespace, "alpha");
    alpha.wait_for_line(LEADING).await;
    let mut beta = Replica::start(&env, &namespace, "beta");
    // Beta's caches are synced and it competes; alpha holds the Lease.
    beta.wait_for_line("informer caches synced").await;
    beta.wait_for_line("competing for Lease").await;

    networks
        .create(
            &Network::new(&namespace, "first", "10.1.0.0/16", "10.1.0.1"),
            &CreateOptions::default(),
        )
        .await
        .expect("creating Network first");
    wait_for_config_map("network-first").await;
    alpha
        .wait_for_line(&format!("{RECONCILED} network-first"))
        .await;
    let lease = leases
        .get("network-controller", &GetOptions::default())
        .await
        .expect("reading the Lease");
    let holder = lease
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    assert!(
        holder.starts_with("alpha-"),
        "the Lease is held by {holder:?}"
    );
    assert_eq!(
        beta.position(LEADING),
        None,
        "beta leads while alpha holds the Lease"
    );
    assert_eq!(
        beta.position(RECONCILED),
        None,
        "beta reconciled while alpha held the Lease"
    );

    // Alpha stops: it stops reconciling, releases the Lease, exits; beta takes over.
    alpha.stop();
    let alpha_stopped = alpha
        .read_at(STOPPED)
        .expect("alpha logged that it stopped reconciling before it exited");
    let beta_leading = beta.wait_for_line(LEADING).await;
    assert!(
        alpha_stopped < beta_leading,
        "beta started leading before alpha stopped reconciling"
    );
    let alpha_stop_position = alpha.position(STOPPED).expect("alpha's stop line");
    assert!(
        alpha
            .positions(RECONCILED)
            .iter()
            .all(|&at| at < alpha_stop_position),
        "alpha reconciled after it stopped reconciling"
    );

    networks
        .create(
            &Network::new(&namespace, "second", "10.2.0.0/16", "10.2.0.1"),
            &CreateOptions::default(),
        )
        .await
        .expect("creating Network second");
    let cm = wait_for_config_map("network-second").await;
    assert_eq!(
        cm.data
            .as_ref()
            .and_then(|d| d.get("gateway"))
            .map(|g| g.as_str()),
        Some("10.2.0.1")
    );
    beta.wait_for_line(&format!("{RECONCILED} network-second"))
        .await;
    let beta_leading_position = beta.position(LEADING).expect("beta's leading line");
    assert!(
        beta.positions(RECONCILED)
            .iter()
            .all(|&at| at > beta_leading_position),
        "beta reconciled before it led"
    );
    let lease = leases
        .get("network-controller", &GetOptions::default())
        .await
        .expect("reading the Lease");
    let spec = lease.spec.unwrap_or_default();
    let holder = spec.holder_identity.unwrap_or_default();
    assert!(
        holder.starts_with("beta-"),
        "the Lease is held by {holder:?}"
    );
    assert!(
        spec.lease_transitions.unwrap_or(0) >= 1,
        "the hand-over counted as a transition"
    );

    beta.stop();
}
