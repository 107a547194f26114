//! [`TestEnvBuilder`]: how a test chooses its apiserver: start one from the cached (or freshly
//! built) testenv binary, start one from a given binary, or use an existing cluster through
//! its kubeconfig; and [`TestEnvBuilder::start_shared`], one server per test process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kclient_rest::{Client, Config, ConfigOverrides};

use crate::server_binary::{self, BINARY_ENV, BinarySource};
use crate::server_process::{Launch, ServerProcess};
use crate::{StartReport, TestEnv, TestEnvError};

/// The environment variable that turns on [`TestEnvBuilder::use_existing_cluster`] (`true` or
/// `1`), like envtest's `USE_EXISTING_CLUSTER`.
pub const USE_EXISTING_CLUSTER_ENV: &str = "KCLIENT_TESTENV_USE_EXISTING_CLUSTER";

/// The environment variable that sets [`TestEnvBuilder::start_timeout`] when the builder does
/// not, as Go duration text (`90s`, `5m`), like envtest's
/// `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT`: for a slow CI machine, without a code change.
pub const START_TIMEOUT_ENV: &str = "KCLIENT_TESTENV_START_TIMEOUT";

/// How long a server may take to become ready when neither the builder nor
/// [`START_TIMEOUT_ENV`] says.
const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(180);

/// Chooses and starts a test environment; from [`TestEnv::builder`].
///
/// Settings made on the builder win over the environment variables
/// (`KCLIENT_TESTENV_BINARY`, `KCLIENT_TESTENV_USE_EXISTING_CLUSTER`,
/// `KCLIENT_TESTENV_START_TIMEOUT`, `KCLIENT_CACHE_DIR`).
#[derive(Debug, Clone)]
pub struct TestEnvBuilder {
    binary: Option<PathBuf>,
    use_existing_cluster: Option<bool>,
    kubeconfig: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    go: PathBuf,
    data_dir: Option<PathBuf>,
    port: Option<u16>,
    start_timeout: Option<Duration>,
    crd_install_timeout: Duration,
    crd_paths: Vec<PathBuf>,
    etcd_compaction_interval: Duration,
    controllers: bool,
    nodes: u32,
    runtime_config: Option<String>,
}

impl Default for TestEnvBuilder {
    fn default() -> Self {
        TestEnvBuilder {
            binary: None,
            use_existing_cluster: None,
            kubeconfig: None,
            cache_dir: None,
            go: PathBuf::from("go"),
            data_dir: None,
            port: None,
            start_timeout: None,
            crd_install_timeout: Duration::from_secs(60),
            crd_paths: Vec::new(),
            etcd_compaction_interval: Duration::from_secs(60),
            controllers: true,
            nodes: 1,
            runtime_config: None,
        }
    }
}

impl TestEnvBuilder {
    /// Runs this testenv binary instead of the cached one (default: `KCLIENT_TESTENV_BINARY`,
    /// else the binary built from this crate's sources). It must come from the same version of
    /// `kclient-testenv`'s `server/` sources (older builds lack flags this crate passes).
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Uses the cluster of an existing kubeconfig instead of starting a server (default:
    /// `KCLIENT_TESTENV_USE_EXISTING_CLUSTER`). Nothing is started or stopped; only
    /// [`Identity::Admin`](crate::Identity::Admin) (the kubeconfig's current context) is
    /// available.
    pub fn use_existing_cluster(mut self, yes: bool) -> Self {
        self.use_existing_cluster = Some(yes);
        self
    }

    /// The kubeconfig of [`TestEnvBuilder::use_existing_cluster`] (default: client-go's rules,
    /// `KUBECONFIG` else `~/.kube/config`).
    pub fn kubeconfig(mut self, path: impl Into<PathBuf>) -> Self {
        self.kubeconfig = Some(path.into());
        self
    }

    /// Where built binaries are cached (default: `KCLIENT_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/kclient`, else `~/.cache/kclient`; shared with `scripts/testenv`).
    pub fn cache_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(path.into());
        self
    }

    /// The Go command that builds the binary when it is not cached (default: `go` on `PATH`),
    /// for a machine with several toolchains.
    pub fn go(mut self, command: impl Into<PathBuf>) -> Self {
        self.go = command.into();
        self
    }

    /// Keeps the server's certificates, kubeconfigs and etcd data in this directory, which is
    /// kept after the server stops; starting again on it restarts the same cluster. The
    /// server's log is `testenv.log` in it. One server runs on a directory at a time: starting
    /// on one that a running server uses, or that another start is starting a server on
    /// (another test, or test process, given the same directory), fails with [`TestEnvError::DataDirInUse`](crate::TestEnvError::DataDirInUse). Default: a fresh temporary directory, deleted when
    /// the server stops (but kept after a server that ran failed to start, for its log that
    /// the error names; a binary that cannot be run at all leaves nothing behind).
    pub fn data_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(path.into());
        self
    }

    /// The apiserver's port on 127.0.0.1 (default: a free one). A port in use is an error.
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// How long the server may take to become ready once started, not counting a build
    /// (default: `KCLIENT_TESTENV_START_TIMEOUT`, else 180 s).
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = Some(timeout);
        self
    }

    /// How long [`TestEnv::install_crds`] waits for its CRDs to be Established and served,
    /// all of them together (default 60 s).
    pub fn crd_install_timeout(mut self, timeout: Duration) -> Self {
        self.crd_install_timeout = timeout;
        self
    }

    /// CRDs to install once the server is ready (envtest's `CRDDirectoryPaths`): a YAML or JSON
    /// file (several `---` documents allowed), or a directory whose `.yaml`, `.yml` and `.json`
    /// files are read in name order. Call it again to add more. A path that does not exist, a
    /// document that is not a CRD, or a CRD not ready in time fails the start.
    pub fn crd_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.crd_paths.push(path.into());
        self
    }

    /// How often the apiserver compacts etcd (default 1 min; whole seconds).
    pub fn etcd_compaction_interval(mut self, interval: Duration) -> Self {
        self.etcd_compaction_interval = interval;
        self
    }

    /// Whether to run the in-process controllers, the scheduler and the simulated nodes
    /// (default on). The controllers are kube-controller-manager's garbage collector, namespace,
    /// pod GC, PVC and PV protection, deployment, replicaset, statefulset, daemonset, job,
    /// cronjob, endpointslice, serviceaccount and serviceaccount-token. Without them deleted
    /// namespaces stay `Terminating` and no pod runs.
    pub fn controllers(mut self, on: bool) -> Self {
        self.controllers = on;
        self
    }

    /// How many simulated nodes (`kwok-node-0`, `kwok-node-1`, ...) run the pods (default 1;
    /// 0 for none, then pods stay `Pending`). Pods scheduled to them become Running and Ready,
    /// and exec, attach, logs and port-forward work on them (see the crate's README).
    pub fn nodes(mut self, count: u32) -> Self {
        self.nodes = count;
        self
    }

    /// kube-apiserver's `--runtime-config` (none by default): `"api/all=true"` serves every
    /// alpha and beta group version too, `"api/beta=true"` every beta one, as kclient-api's
    /// opt-in unstable features need. An existing cluster is used as it is.
    pub fn runtime_config(mut self, config: impl Into<String>) -> Self {
        self.runtime_config = Some(config.into());
        self
    }

    /// Starts the server (or connects to the existing cluster) and waits until it is ready.
    ///
    /// Without a binary, the one built from this crate's sources is taken from the cache, or
    /// built into it first with `go build` (about 4 minutes the first time on an idle 2-core
    /// machine; a message on stderr says so). Then the [`TestEnvBuilder::crd_path`] CRDs are
    /// installed. The server stops when the last clone of the returned [`TestEnv`] is
    /// dropped, or at [`TestEnv::stop`], or when this process ends.
    pub async fn start(self) -> Result<TestEnv, TestEnvError> {
        let crd_paths = self.crd_paths.clone();
        let env = self.start_server().await?;
        // On an error the environment is dropped here, which stops a started server.
        env.install_crd_paths(&crd_paths).await?;
        Ok(env)
    }

    async fn start_server(self) -> Result<TestEnv, TestEnvError> {
        let existing = self.use_existing_cluster.unwrap_or_else(|| {
            std::env::var(USE_EXISTING_CLUSTER_ENV)
                .map(|v| v.eq_ignore_ascii_case("true") || v == "1")
                .unwrap_or(false)
        });
        if existing {
            return self.connect_existing().await;
        }
        // Before a possible build: a taken port is a fast, clear error.
        if let Some(port) = self.port
            && std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
        {
            return Err(TestEnvError::PortInUse { port });
        }
        let start_timeout =
            resolve_start_timeout(self.start_timeout, std::env::var_os(START_TIMEOUT_ENV))?;
        let (binary, binary_source) = self.resolve_binary().await?;
        let (data_dir, remove_data_dir) = match &self.data_dir {
            Some(dir) => (dir.clone(), false),
            None => (temporary_data_dir()?, true),
        };
        let started = Instant::now();
        let server = ServerProcess::start(Launch {
            binary: binary.clone(),
            data_dir: data_dir.clone(),
            remove_data_dir,
            port: self.port,
            compaction: self.etcd_compaction_interval,
            controllers: self.controllers,
            nodes: self.nodes,
            runtime_config: self.runtime_config.clone(),
            timeout: start_timeout,
        })
        .await?;
        let report = StartReport {
            binary,
            binary_source,
            ready_in: started.elapsed(),
        };
        Ok(TestEnv::started(
            data_dir,
            server,
            report,
            self.crd_install_timeout,
        ))
    }

    /// Like [`TestEnvBuilder::start`], but once per process: the first call starts the
    /// environment with its builder's settings, and every later call (from any test, in any
    /// runtime) gets a clone of it, whatever its own builder says. This is envtest's
    /// start-once-per-suite: give each test its own [`TestEnv::namespace`].
    ///
    /// The shared server is never dropped; it stops when the test process exits (its stdin
    /// closes). Do not call [`TestEnv::stop`] on it: that stops it for every test. If the first start failed, later calls fail at once with
    /// [`TestEnvError::SharedStartFailed`] rather than building or starting again.
    pub async fn start_shared(self) -> Result<TestEnv, TestEnvError> {
        static SHARED: tokio::sync::OnceCell<Result<TestEnv, String>> =
            tokio::sync::OnceCell::const_new();
        let mut first_error = None;
        let slot = &mut first_error;
        let shared = SHARED
            .get_or_init(|| async move {
                self.start().await.map_err(|e| {
                    let text = e.to_string();
                    *slot = Some(e);
                    text
                })
            })
            .await;
        if let Some(e) = first_error {
            return Err(e);
        }
        shared.clone().map_err(TestEnvError::SharedStartFailed)
    }

    /// The binary to run: given, or cached, or built now.
    async fn resolve_binary(&self) -> Result<(PathBuf, BinarySource), TestEnvError> {
        let given = match &self.binary {
            Some(path) => Some((path.clone(), "TestEnvBuilder::binary")),
            None => std::env::var_os(BINARY_ENV)
                .filter(|v| !v.is_empty())
                .map(|v| (PathBuf::from(v), BINARY_ENV)),
        };
        if let Some((path, origin)) = given {
            if !path.is_file() {
                return Err(TestEnvError::BinaryNotFound { path, origin });
            }
            return Ok((path, BinarySource::Given));
        }
        let cache_dir = self
            .cache_dir
            .clone()
            .unwrap_or_else(server_binary::default_cache_dir);
        server_binary::ensure_built(&cache_dir, &self.go).await
    }

    async fn connect_existing(self) -> Result<TestEnv, TestEnvError> {
        let loaded = match &self.kubeconfig {
            Some(path) => Config::from_kubeconfig_file(path),
            None => Config::from_default_kubeconfig(&ConfigOverrides::default()),
        };
        let mut config = loaded.map_err(|e| TestEnvError::ExistingCluster {
            message: format!("loading the kubeconfig: {e}"),
        })?;
        config.qps = -1.0;
        let client = Client::new(config.clone()).map_err(|e| TestEnvError::ExistingCluster {
            message: format!("building a client: {e}"),
        })?;
        if let Err(e) = client.get_raw("/readyz").await {
            return Err(TestEnvError::ExistingCluster {
                message: format!("{} does not answer /readyz: {e}", client.base_url()),
            });
        }
        Ok(TestEnv::existing(
            config,
            self.kubeconfig,
            self.crd_install_timeout,
        ))
    }
}

/// A new directory in the system's temporary directory, created here, readable by this user
/// only: a directory of that name made beforehand by someone else (on a shared `/tmp`) is
/// never used, another name is drawn.
fn temporary_data_dir() -> Result<PathBuf, TestEnvError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    remove_stale_data_dirs(&std::env::temp_dir());
    let mut last = None;
    for _ in 0..16 {
        let dir = std::env::temp_dir().join(format!(
            "kclient-testenv-{}-{}-{:016x}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            rand::random::<u64>()
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(TestEnvError::io(format!("creating {}", dir.display()), e)),
        }
    }
    Err(TestEnvError::io(
        "creating a temporary data directory: every name drawn was taken",
        last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
    ))
}

/// Removes the temporary data directories in `temp` (named as [`temporary_data_dir`] names
/// them) whose creating process is dead and that no server holds (its `testenv.lock` is free):
/// what a test process killed together with its server left (a harness that SIGKILLs a test's
/// process group: neither lived to delete it). Linux only (the creator's liveness is read in
/// `/proc`); a directory whose creator's id was reused by a live process stays until that ends.
fn remove_stale_data_dirs(temp: &std::path::Path) {
    let proc = std::path::Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(stale_candidate_pid) else {
            continue;
        };
        if pid == std::process::id() || proc.join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        // Not a symbolic link (which would let anyone on a shared /tmp aim this elsewhere), and
        // this user's own: the name alone proves nothing.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || !owned_by_this_user(&meta) {
            continue;
        }
        // A server stopping after its test process died still holds it (and removes it).
        let free = std::fs::OpenOptions::new()
            .write(true)
            .open(path.join("testenv.lock"))
            .map(|lock| lock.try_lock().is_ok())
            .unwrap_or(true);
        if free && let Err(e) = std::fs::remove_dir_all(&path) {
            tracing::debug!(path = %path.display(), error = %e, "removing a stale data directory");
        }
    }
}

/// The creator's pid in a name `kclient-testenv-<pid>-<n>-<16 hex digits>`, else `None`.
fn stale_candidate_pid(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix("kclient-testenv-")?.split('-');
    let (pid, n, random) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let valid = parts.next().is_none()
        && digits(pid)
        && digits(n)
        && random.len() == 16
        && random.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| pid.parse().ok()).flatten()
}

/// Whether this process's user owns the file of `meta` (compared with the owner of
/// `/proc/self`, which is this process's effective user).
#[cfg(unix)]
fn owned_by_this_user(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|me| me.uid() == meta.uid())
}

#[cfg(not(unix))]
fn owned_by_this_user(_: &std::fs::Metadata) -> bool {
    false
}

/// The start timeout: the builder's, else [`START_TIMEOUT_ENV`]'s value `env` (Go duration
/// text, more than zero), else the default.
fn resolve_start_timeout(
    set: Option<Duration>,
    env: Option<std::ffi::OsString>,
) -> Result<Duration, TestEnvError> {
    if let Some(timeout) = set {
        return Ok(timeout);
    }
    let Some(value) = env.filter(|v| !v.is_empty()) else {
        return Ok(DEFAULT_START_TIMEOUT);
    };
    let invalid = |problem: String| TestEnvError::InvalidEnvironment {
        variable: START_TIMEOUT_ENV,
        value: value.to_string_lossy().into_owned(),
        problem,
    };
    let text = value
        .to_str()
        .ok_or_else(|| invalid("not UTF-8".to_owned()))?;
    let parsed =
        kclient_apimachinery::meta::Duration::parse(text).map_err(|e| invalid(e.to_string()))?;
    parsed
        .to_std()
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| invalid("a start timeout must be more than zero".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary data directory is created here, new (never one that was there), and only
    /// its owner may enter it.
    #[test]
    fn a_temporary_data_dir_is_new_and_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let (a, b) = (temporary_data_dir().unwrap(), temporary_data_dir().unwrap());
        assert_ne!(a, b);
        for dir in [&a, &b] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
            std::fs::remove_dir(dir).unwrap();
        }
    }

    /// The builder's setting wins; then the variable, as Go duration text; then 180 s. A value
    /// that is not a positive duration is an error naming the variable.
    #[test]
    fn only_names_of_temporary_data_dirs_are_stale_candidates() {
        assert_eq!(
            stale_candidate_pid("kclient-testenv-123-4-0123456789abcdef"),
            Some(123)
        );
        for name in [
            "kclient-testenv-in-use-123",
            "kclient-testenv-123-4",
            "kclient-testenv-123-4-0123456789abcdef-x",
            "kclient-testenv-123-4-0123456789abcdeg",
            "kclient-testenv--4-0123456789abcdef",
            "kclient-testenv-99999999999-4-0123456789abcdef",
            "other-123-4-0123456789abcdef",
        ] {
            assert_eq!(stale_candidate_pid(name), None, "{name}");
        }
    }

    #[test]
    fn the_start_timeout_comes_from_the_builder_then_the_environment() {
        let env = |text: &str| Some(std::ffi::OsString::from(text));
        let seconds = Duration::from_secs;
        assert_eq!(
            resolve_start_timeout(Some(seconds(5)), env("10m")).unwrap(),
            seconds(5)
        );
        assert_eq!(
            resolve_start_timeout(None, env("10m")).unwrap(),
            seconds(600)
        );
        assert_eq!(
            resolve_start_timeout(None, env("1m30s")).unwrap(),
            seconds(90)
        );
        assert_eq!(resolve_start_timeout(None, None).unwrap(), seconds(180));
        assert_eq!(resolve_start_timeout(None, env("")).unwrap(), seconds(180));
        for bad in ["90", "soon", "-5s", "0s"] {
            let err = resolve_start_timeout(None, env(bad)).expect_err(bad);
            let text = err.to_string();
            assert!(
                matches!(err, TestEnvError::InvalidEnvironment { .. }),
                "{bad}: {text}"
            );
            assert!(
                text.contains(START_TIMEOUT_ENV) && text.contains(bad),
                "{bad}: {text}"
            );
        }
    }
}
