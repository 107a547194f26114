//! kclient's envtest: integration tests of kclient code, and of controllers written with it,
//! against a real kube-apiserver.
//!
//! # Starting an apiserver from a test
//!
//! [`TestEnv::builder`] starts a real kube-apiserver (upstream Kubernetes code with an embedded
//! etcd, kube-controller-manager's controllers, kube-scheduler and a simulated kwok node where
//! pods run and answer exec, attach, logs and port-forward; all on 127.0.0.1) as a child
//! process, or uses an existing cluster:
//!
//! - by default it runs the testenv binary built from this crate's own Go sources, taken from
//!   the cache (`~/.cache/kclient/testenv-<key>/`, see [`default_cache_dir`]) or built into it
//!   with `go build` on first use (Go needed; 10-20 minutes the first time on 2 cores);
//! - [`TestEnvBuilder::binary`] (or `KCLIENT_TESTENV_BINARY`) runs a prebuilt binary;
//! - [`TestEnvBuilder::use_existing_cluster`] (or `KCLIENT_TESTENV_USE_EXISTING_CLUSTER=true`)
//!   uses the cluster of `KUBECONFIG` and starts nothing;
//! - [`TestEnvBuilder::start_timeout`] (or `KCLIENT_TESTENV_START_TIMEOUT=5m`) gives a slow
//!   machine longer to start the server (default 180 s).
//!
//! The server stops when the last clone of its [`TestEnv`] is dropped, at [`TestEnv::stop`], or
//! when the test process ends, however it ends. [`TestEnvBuilder::start_shared`] starts one
//! server per test process, shared by all its tests (envtest's once-per-suite start); each test
//! then takes its own [`TestEnv::namespace`]. [`TestEnv::install_crds`] installs
//! CustomResourceDefinitions and waits until they are Established and served.
//! [`TestEnv::webhook_serving`] and [`TestEnv::install_webhooks_yaml`] let the API server call
//! an admission webhook the test serves (envtest's `WebhookInstallOptions`).
//!
//! A complete program (it runs as this crate's doc test: about 10 s with a cached binary):
//!
//! ```
//! use kclient_testenv::{Identity, TestEnv};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), kclient_testenv::TestEnvError> {
//!     // In a test suite, `start_shared()` starts it once for all tests of the binary.
//!     let env = TestEnv::builder().start().await?;
//!     let ns = env.namespace().await;
//!     env.install_crd(&serde_json::json!({
//!         "apiVersion": "apiextensions.k8s.io/v1",
//!         "kind": "CustomResourceDefinition",
//!         "metadata": {"name": "widgets.example.com"},
//!         "spec": {
//!             "group": "example.com",
//!             "names": {"kind": "Widget", "plural": "widgets"},
//!             "scope": "Namespaced",
//!             "versions": [{"name": "v1", "served": true, "storage": true,
//!                 "schema": {"openAPIV3Schema": {"type": "object",
//!                     "x-kubernetes-preserve-unknown-fields": true}}}],
//!         },
//!     }))
//!     .await?;
//!     let created: serde_json::Value = env
//!         .client(Identity::Admin)
//!         .post()
//!         .group_version("example.com", "v1")
//!         .namespace(ns.name())
//!         .resource("widgets")
//!         .json(&serde_json::json!({
//!             "apiVersion": "example.com/v1", "kind": "Widget",
//!             "metadata": {"name": "w"}, "spec": {"size": 3},
//!         }))
//!         .send()
//!         .await
//!         .expect("create a Widget");
//!     assert_eq!(created["spec"]["size"], 3);
//!     drop(ns);
//!     env.stop().await;
//!     Ok(())
//! }
//! ```
//!
//! # The workspace's own apiserver
//!
//! Inside the kclient repository, `scripts/testenv up` starts one long-lived apiserver for all
//! of the workspace's tests (from the same cache) and [`TestEnv::connect`] finds it (in
//! `KCLIENT_TESTENV_DIR`, else `.testenv/` at the repository root).
//!
//! # Fault injection
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
//! # Logs
//!
//! [`LogCapture`] captures what kclient logs on the test's thread (and the spans it closes),
//! for tests that assert on log lines or span fields.
//!
//! # Failures
//!
//! Starting returns a [`TestEnvError`] saying what to do (install Go, fix a binary path, pick
//! another port, raise a timeout), with the server's log tail where it helps; no message holds
//! a token or key. The helpers that return no `Result` ([`TestEnv::connect`],
//! [`TestEnv::namespace`], [`TestEnv::client`]) **panic** with such a message, so a test that
//! cannot reach its apiserver fails; it never passes or skips silently.

mod apply;
mod builder;
mod crds;
mod error;
mod fault_proxy;
mod log_capture;
mod misbehaving_server;
mod server_binary;
mod server_process;
mod webhooks;

pub use builder::{START_TIMEOUT_ENV, TestEnvBuilder, USE_EXISTING_CLUSTER_ENV};
pub use error::TestEnvError;
pub use fault_proxy::FaultProxy;
pub use log_capture::LogCapture;
pub use misbehaving_server::{MisbehavingServer, Reply, SeenRequest, StreamEnd, most_within};
pub use server_binary::{
    BINARY_ENV, BinarySource, CACHE_DIR_ENV, cached_binary_path, default_cache_dir,
    kubernetes_version,
};
pub use webhooks::WebhookServing;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use kclient_rest::{Client, Config};

use server_process::ServerProcess;

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

/// How a started server was obtained: from [`TestEnv::start_report`].
#[derive(Debug, Clone)]
pub struct StartReport {
    /// The binary that runs.
    pub binary: PathBuf,
    /// Whether it was given, found in the cache, or built now (and how long that took).
    pub binary_source: BinarySource,
    /// From spawning the process to its ready line (`/readyz` ok).
    pub ready_in: Duration,
}

/// A test environment: an apiserver and the means to reach it. Clones share it; a server that
/// [`TestEnv::builder`] started stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct TestEnv {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    target: Target,
    crd_install_timeout: Duration,
}

#[derive(Debug)]
enum Target {
    /// A server with a testenv data directory: started by `scripts/testenv` (no process) or
    /// by this crate.
    DataDir {
        data_dir: PathBuf,
        started: Option<(ServerProcess, StartReport)>,
    },
    /// An existing cluster: only its admin config.
    Existing {
        config: Box<Config>,
        kubeconfig: Option<PathBuf>,
    },
}

/// The default [`TestEnvBuilder::crd_install_timeout`].
const DEFAULT_CRD_TIMEOUT: Duration = Duration::from_secs(60);

impl TestEnv {
    /// A builder that starts an apiserver, or uses an existing cluster.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    pub(crate) fn started(
        data_dir: PathBuf,
        server: ServerProcess,
        report: StartReport,
        crd_install_timeout: Duration,
    ) -> TestEnv {
        TestEnv {
            inner: Arc::new(Inner {
                target: Target::DataDir {
                    data_dir,
                    started: Some((server, report)),
                },
                crd_install_timeout,
            }),
        }
    }

    pub(crate) fn existing(
        config: Config,
        kubeconfig: Option<PathBuf>,
        crd_install_timeout: Duration,
    ) -> TestEnv {
        TestEnv {
            inner: Arc::new(Inner {
                target: Target::Existing {
                    config: Box::new(config),
                    kubeconfig,
                },
                crd_install_timeout,
            }),
        }
    }

    /// Finds the apiserver that `scripts/testenv up` runs for the kclient workspace and checks
    /// that it is ready.
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

    /// Finds the data directory of the apiserver `scripts/testenv` runs, without contacting it.
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
        TestEnv::with_data_dir(data_dir)
    }

    /// An environment for the server whose data directory is `data_dir`, started elsewhere.
    pub(crate) fn with_data_dir(data_dir: PathBuf) -> TestEnv {
        TestEnv {
            inner: Arc::new(Inner {
                target: Target::DataDir {
                    data_dir,
                    started: None,
                },
                crd_install_timeout: DEFAULT_CRD_TIMEOUT,
            }),
        }
    }

    /// How the server was started: binary, whether it was cached or built, time to ready.
    /// `None` for [`TestEnv::connect`] and existing clusters.
    pub fn start_report(&self) -> Option<&StartReport> {
        match &self.inner.target {
            Target::DataDir {
                started: Some((_, report)),
                ..
            } => Some(report),
            _ => None,
        }
    }

    /// The log file of a server this crate started (stdout and stderr of the process):
    /// `testenv.log` in the data directory, deleted with a temporary one.
    pub fn server_log(&self) -> Option<&Path> {
        match &self.inner.target {
            Target::DataDir {
                started: Some((server, _)),
                ..
            } => Some(server.log()),
            _ => None,
        }
    }

    /// Whether a server this crate started is still running (`false` after [`TestEnv::stop`]
    /// and for environments it did not start).
    pub fn is_running(&self) -> bool {
        match &self.inner.target {
            Target::DataDir {
                started: Some((server, _)),
                ..
            } => server.is_running(),
            _ => false,
        }
    }

    /// Stops a server this crate started, now, even while other clones exist (they then get
    /// connection errors): closes its stdin, waits up to 30 s for a graceful shutdown, then
    /// kills it, and deletes a temporary data directory. Does nothing for [`TestEnv::connect`]
    /// and existing clusters, which it never stops. Dropping the last clone does the same.
    pub async fn stop(self) {
        let inner = self.inner.clone();
        drop(self);
        // The graceful shutdown takes seconds; keep it off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || {
            if let Target::DataDir {
                started: Some((server, _)),
                ..
            } = &inner.target
            {
                server.stop_blocking();
            }
        })
        .await;
    }

    /// What to do when this environment's apiserver cannot be reached, for panic messages.
    fn hint(&self) -> &'static str {
        match &self.inner.target {
            Target::DataDir { started: None, .. } => HOW_TO_START,
            Target::DataDir { .. } => {
                "the server this test started has stopped or failed; see its log (TestEnv::server_log)"
            }
            Target::Existing { .. } => {
                "check that the cluster of the kubeconfig (use_existing_cluster) is up"
            }
        }
    }

    /// How long [`TestEnv::install_crds`] waits.
    pub(crate) fn crd_install_timeout(&self) -> Duration {
        self.inner.crd_install_timeout
    }

    fn data_dir_opt(&self) -> Option<&Path> {
        match &self.inner.target {
            Target::DataDir { data_dir, .. } => Some(data_dir),
            Target::Existing { .. } => None,
        }
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
    /// When the process cannot be signalled or does not report a compaction within 30 s, and
    /// for an existing cluster (it has no testenv process).
    pub async fn compact_etcd(&self) {
        let marker = self.data_dir().join("compaction");
        let count = |text: &str| -> u64 {
            text.split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let before = count(&std::fs::read_to_string(&marker).unwrap_or_default());
        let pid = match &self.inner.target {
            Target::DataDir {
                started: Some((server, _)),
                ..
            } => server.pid().to_string(),
            _ => {
                let pid_file = self.data_dir().with_file_name("testenv.pid");
                std::fs::read_to_string(&pid_file).unwrap_or_else(|e| {
                    panic!("reading {}: {e}; {HOW_TO_START}", pid_file.display())
                })
            }
        };
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
    ///
    /// # Panics
    ///
    /// For an existing cluster, which has none.
    pub fn data_dir(&self) -> &Path {
        self.data_dir_opt().unwrap_or_else(|| {
            panic!("an existing cluster (use_existing_cluster) has no testenv data directory")
        })
    }

    /// The path of the kubeconfig for `identity`.
    ///
    /// # Panics
    ///
    /// For an existing cluster: for identities other than [`Identity::Admin`], and when no
    /// explicit [`TestEnvBuilder::kubeconfig`] was given.
    pub fn kubeconfig_path(&self, identity: Identity) -> PathBuf {
        match &self.inner.target {
            Target::DataDir { data_dir, .. } => data_dir.join(identity.kubeconfig_file()),
            Target::Existing { kubeconfig, .. } => match (identity, kubeconfig) {
                (Identity::Admin, Some(path)) => path.clone(),
                _ => panic!(
                    "an existing cluster has no kubeconfig file for {identity:?}; only \
                     Identity::Admin with TestEnvBuilder::kubeconfig set has one"
                ),
            },
        }
    }

    /// A client configuration for `identity`, loaded from its kubeconfig. Client-side rate
    /// limiting is off (QPS < 0) so tests are not throttled.
    ///
    /// # Panics
    ///
    /// When the kubeconfig cannot be loaded, and for identities other than [`Identity::Admin`]
    /// on an existing cluster (it only has the kubeconfig's current user).
    pub fn config(&self, identity: Identity) -> Config {
        if let Target::Existing { config, .. } = &self.inner.target {
            if identity != Identity::Admin {
                panic!(
                    "an existing cluster (use_existing_cluster) only has Identity::Admin, the \
                     kubeconfig's current user; {identity:?} exists on a started testenv"
                );
            }
            return (**config).clone();
        }
        let path = self.kubeconfig_path(identity);
        let mut config = Config::from_kubeconfig_file(&path)
            .unwrap_or_else(|e| panic!("loading {}: {e}; {}", path.display(), self.hint()));
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
                "creating test namespace {name}: {e}; is the apiserver running? {}",
                self.hint()
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

/// The README's Rust examples, compiled as doc tests so they stay correct.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
