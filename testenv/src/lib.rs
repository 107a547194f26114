//! Test helper for kclient's integration tests: reach the local kube-apiserver that
//! `scripts/testenv` starts.
//!
//! [`TestEnv::connect`] finds the running apiserver (in `KCLIENT_TESTENV_DIR`, else `.testenv/` at
//! the repository root), checks that it answers `/readyz`, and hands out a
//! [`Config`] or [`Client`] per [`Identity`].
//! [`TestEnv::namespace`] creates a uniquely named namespace that is deleted when the returned
//! [`TestNamespace`] is dropped, so tests never see each other's objects.
//!
//! [`FaultProxy`] (from [`TestEnv::fault_proxy`]) is a loopback TCP proxy in front of the
//! apiserver that cuts, refuses, stalls or corrupts connections on command, with TLS kept end to
//! end; its [`FaultProxy::config`] and [`FaultProxy::client`] point a client at it, so tests can
//! check how requests, watches and informers survive network faults.
//!
//! [`MisbehavingServer`] is the other side of the coin: a scripted HTTP server that answers
//! what a broken apiserver or proxy can answer (truncated and invalid bodies, wrong content
//! types, endless lines, stalls, garbage watch events), recording every request so tests can
//! bound retry rates.
//!
//! A test that cannot reach the apiserver **fails** (panics) with a message saying how to start
//! it; it never passes or skips silently.
//!
//! A dev-dependency only; no library crate depends on it.
//!
//! ```no_run
//! # async fn example() {
//! use kclient_testenv::{Identity, TestEnv};
//!
//! let env = TestEnv::connect().await;
//! let ns = env.namespace().await;
//! let client = env.client(Identity::Admin);
//! let created: serde_json::Value = client
//!     .post()
//!     .group_version("", "v1")
//!     .namespace(ns.name())
//!     .resource("configmaps")
//!     .json(&serde_json::json!({"metadata": {"name": "demo"}, "data": {"k": "v"}}))
//!     .send()
//!     .await
//!     .expect("create");
//! assert_eq!(created["data"]["k"], "v");
//! # }
//! ```

mod fault_proxy;
mod misbehaving_server;

pub use fault_proxy::FaultProxy;
pub use misbehaving_server::{MisbehavingServer, Reply, SeenRequest, StreamEnd, most_within};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use kclient_rest::{Client, Config};

/// How to start the apiserver, repeated in every failure message.
const HOW_TO_START: &str =
    "start it with `scripts/testenv up` (or run the whole suite with `scripts/test`)";

/// The identities the local apiserver knows, each with its own kubeconfig.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// `kclient-admin`: a bearer token in group `system:masters`.
    Admin,
    /// `kclient-restricted`: a bearer token with no RBAC grants; every request is forbidden.
    Restricted,
    /// `kclient-cert-user`: a client certificate in group `system:masters`.
    Cert,
}

impl Identity {
    fn kubeconfig_file(self) -> &'static str {
        match self {
            Identity::Admin => "admin.kubeconfig",
            Identity::Restricted => "restricted.kubeconfig",
            Identity::Cert => "cert.kubeconfig",
        }
    }
}

/// The running local apiserver.
#[derive(Debug, Clone)]
pub struct TestEnv {
    data_dir: PathBuf,
}

impl TestEnv {
    /// Finds the running apiserver and checks that it is ready.
    ///
    /// # Panics
    ///
    /// When no apiserver runs or it does not answer `/readyz`, with a message saying how to
    /// start it. Tests call this first so that a missing apiserver fails them clearly.
    pub async fn connect() -> TestEnv {
        let env = TestEnv::locate();
        let client = env.client(Identity::Admin);
        match client.get_raw("/readyz").await {
            Ok(_) => env,
            Err(e) => panic!(
                "the local kube-apiserver at {} is not answering /readyz ({e}); {HOW_TO_START}",
                client.base_url()
            ),
        }
    }

    /// Finds the apiserver's data directory without contacting it.
    ///
    /// # Panics
    ///
    /// When the directory or its kubeconfigs do not exist.
    pub fn locate() -> TestEnv {
        let dir = std::env::var_os("KCLIENT_TESTENV_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.testenv"));
        let data_dir = dir.join("data");
        let admin = data_dir.join(Identity::Admin.kubeconfig_file());
        if !admin.is_file() {
            panic!(
                "no local kube-apiserver found: {} does not exist; {HOW_TO_START}",
                admin.display()
            );
        }
        TestEnv { data_dir }
    }

    /// Compacts the apiserver's etcd to its current revision, the way the apiserver's own
    /// periodic compactor does, and waits until etcd has done it. Every older revision is then
    /// gone from etcd at once; the apiserver's watch cache learns of it within its 15 s poll
    /// period, after which a list continuing from an older resourceVersion (a `continue` token)
    /// gets a real `410 Gone` (`Expired`). Without this, that only happens once the apiserver's
    /// periodic compaction (`TESTENV_COMPACTION`, default 1 min) has run.
    ///
    /// A watch from a resourceVersion older than the watch cache's window is answered 410
    /// without any compaction: testenv starts etcd past revision 1, so a watch from `"1"` always
    /// gets 410.
    ///
    /// Works by sending SIGUSR1 to the testenv process, which answers by writing
    /// `<count> <revision>` to `data/compaction`.
    ///
    /// # Panics
    ///
    /// When the process cannot be signalled or does not report a compaction within 30 s.
    pub async fn compact_etcd(&self) {
        let marker = self.data_dir.join("compaction");
        let count = |text: &str| -> u64 {
            text.split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let before = count(&std::fs::read_to_string(&marker).unwrap_or_default());
        let pid_file = self.data_dir.with_file_name("testenv.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("reading {}: {e}; {HOW_TO_START}", pid_file.display()));
        let status = std::process::Command::new("kill")
            .args(["-USR1", pid.trim()])
            .status()
            .unwrap_or_else(|e| panic!("running kill: {e}"));
        assert!(
            status.success(),
            "kill -USR1 {} failed: {status}",
            pid.trim()
        );
        for _ in 0..300 {
            if count(&std::fs::read_to_string(&marker).unwrap_or_default()) > before {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!(
            "testenv did not report an etcd compaction within 30s ({})",
            marker.display()
        );
    }

    /// The data directory: kubeconfigs, `pki/` and the etcd data.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The path of the kubeconfig for `identity`.
    pub fn kubeconfig_path(&self, identity: Identity) -> PathBuf {
        self.data_dir.join(identity.kubeconfig_file())
    }

    /// A client configuration for `identity`, loaded from its kubeconfig. Client-side rate
    /// limiting is off (QPS < 0) so tests are not throttled.
    ///
    /// # Panics
    ///
    /// When the kubeconfig cannot be loaded.
    pub fn config(&self, identity: Identity) -> Config {
        let path = self.kubeconfig_path(identity);
        let mut config = Config::from_kubeconfig_file(&path)
            .unwrap_or_else(|e| panic!("loading {}: {e}; {HOW_TO_START}", path.display()));
        config.qps = -1.0;
        config
    }

    /// A REST client for `identity`.
    ///
    /// # Panics
    ///
    /// When the configuration cannot be turned into a client.
    pub fn client(&self, identity: Identity) -> Client {
        Client::new(self.config(identity))
            .unwrap_or_else(|e| panic!("building a client for {identity:?}: {e}"))
    }

    /// Creates a fresh, uniquely named namespace, deleted when the result is dropped.
    ///
    /// # Panics
    ///
    /// When the namespace cannot be created.
    pub async fn namespace(&self) -> TestNamespace {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "kclient-test-{}-{}-{:04x}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            rand::random::<u16>()
        );
        let client = self.client(Identity::Admin);
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kclient.dev/test": "true"}},
        });
        let created: Result<serde_json::Value, _> = client
            .post()
            .group_version("", "v1")
            .resource("namespaces")
            .json(&body)
            .send()
            .await;
        if let Err(e) = created {
            panic!(
                "creating test namespace {name}: {e}; is the local apiserver running? {HOW_TO_START}"
            );
        }
        TestNamespace {
            name,
            config: self.config(Identity::Admin),
        }
    }
}

/// A namespace that exists for one test; dropping it deletes the namespace (the apiserver's
/// namespace controller then removes everything in it).
#[derive(Debug)]
pub struct TestNamespace {
    name: String,
    config: Config,
}

impl TestNamespace {
    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        let name = std::mem::take(&mut self.name);
        let config = self.config.clone();
        // Drop cannot await, and it may run inside a runtime, so the DELETE runs on a thread
        // with its own small runtime and its own client: a pooled connection of the test's
        // client belongs to the test's runtime, which is blocked here until the thread ends.
        let deleted = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let client = Client::new(config).map_err(std::io::Error::other)?;
            runtime.block_on(async {
                client
                    .delete()
                    .group_version("", "v1")
                    .resource("namespaces")
                    .name(&name)
                    .send::<serde_json::Value>()
                    .await
                    .map(|_| ())
                    .map_err(std::io::Error::other)
            })
        })
        .join();
        if let Ok(Err(e)) = deleted {
            // Not fatal for the test that ran: the namespace is labelled for later cleanup.
            eprintln!("kclient-testenv: deleting test namespace: {e}");
        }
    }
}
