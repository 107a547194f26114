//! [`TestEnvError`]: why a test environment could not be started, reached or prepared, each
//! message naming what to do about it. No message carries a token, key or kubeconfig content.

use std::path::PathBuf;
use std::time::Duration;

/// Why [`TestEnvBuilder::start`](crate::TestEnvBuilder::start) or a CRD installation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestEnvError {
    /// No `go` command (on `PATH`, or the one given), so the apiserver binary cannot be built.
    #[error(
        "building the kube-apiserver needs the Go toolchain, but `{}` was not found ({source}); \
         install Go {go_version} or newer (https://go.dev/dl) and put it on PATH, or pass a \
         prebuilt binary with TestEnvBuilder::binary or the KCLIENT_TESTENV_BINARY environment \
         variable",
        go.display()
    )]
    GoNotFound {
        /// The command that was run.
        go: PathBuf,
        /// The Go version the server's `go.mod` asks for.
        go_version: String,
        /// What running `go` reported.
        source: std::io::Error,
    },

    /// `go build` failed.
    #[error(
        "building the kube-apiserver failed ({status}); it needs Go {go_version} or newer and the \
         Go module proxy (or a filled module cache); rerun `{command}` in {dir} to see it, or \
         pass a prebuilt binary with TestEnvBuilder::binary; last lines of the build output:\n{output}"
    )]
    BuildFailed {
        /// The Go version the server's `go.mod` asks for.
        go_version: String,
        /// The command that failed.
        command: String,
        /// The directory it ran in (the server's Go sources, written out by this crate).
        dir: PathBuf,
        /// Its exit status.
        status: String,
        /// The last lines of its output.
        output: String,
    },

    /// The binary given with [`TestEnvBuilder::binary`](crate::TestEnvBuilder::binary) or
    /// `KCLIENT_TESTENV_BINARY` is not an existing file.
    #[error(
        "the testenv binary {path} (from {origin}) is not a file; build it with `scripts/testenv \
         build` in the kclient repository or let kclient-testenv build it (do not set a binary)"
    )]
    BinaryNotFound {
        /// The path that was given.
        path: PathBuf,
        /// Where it came from: the builder or the environment variable.
        origin: &'static str,
    },

    /// The requested apiserver port is taken.
    #[error(
        "port {port} on 127.0.0.1 is in use; choose another with TestEnvBuilder::port, or do \
         not set a port so that a free one is picked"
    )]
    PortInUse {
        /// The requested port.
        port: u16,
    },

    /// Another testenv server runs, or is being started, on the data directory given with
    /// [`TestEnvBuilder::data_dir`](crate::TestEnvBuilder::data_dir) (another test, or test
    /// process, given the same directory, or `scripts/testenv up` on it).
    #[error(
        "the data directory {} is in use by another testenv server{}; stop it, or give each \
         test process its own TestEnvBuilder::data_dir (or none, for a temporary one)",
        dir.display(),
        pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
    )]
    DataDirInUse {
        /// The data directory.
        dir: PathBuf,
        /// The process that holds it, when known.
        pid: Option<u32>,
    },

    /// The apiserver did not print its ready line in time.
    #[error(
        "the kube-apiserver was not ready within {timeout:?} and was stopped; raise \
         TestEnvBuilder::start_timeout or KCLIENT_TESTENV_START_TIMEOUT if this machine is slow; \
         last lines of its log {log}:\n{tail}"
    )]
    NotReady {
        /// The start timeout.
        timeout: Duration,
        /// The server's log file.
        log: PathBuf,
        /// The log's last lines.
        tail: String,
    },

    /// The apiserver process ended before it was ready.
    #[error(
        "the kube-apiserver exited before it was ready ({status}); last lines of its log {log}:\n{tail}"
    )]
    Exited {
        /// Its exit status.
        status: String,
        /// The server's log file.
        log: PathBuf,
        /// The log's last lines.
        tail: String,
    },

    /// `use_existing_cluster` was asked for, but the kubeconfig does not load or the cluster
    /// does not answer.
    #[error(
        "using an existing cluster: {message}; set KUBECONFIG (or TestEnvBuilder::kubeconfig) to \
         a kubeconfig whose current context reaches a running apiserver"
    )]
    ExistingCluster {
        /// What went wrong.
        message: String,
    },

    /// A file or directory operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the path.
        context: String,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// A CustomResourceDefinition given to install is not one.
    #[error("not a CustomResourceDefinition: {0}")]
    InvalidCrd(String),

    /// A webhook configuration given to install is not one, or a webhook in it has no
    /// `clientConfig` to point at the test's server.
    #[error("not a webhook configuration: {0}")]
    InvalidWebhook(String),

    /// The apiserver refused a request of the test environment itself.
    #[error("{context}: {source}")]
    Api {
        /// What was being done.
        context: String,
        /// The apiserver's (or the transport's) error.
        source: kclient_apimachinery::Error,
    },

    /// A CustomResourceDefinition did not become Established and served in time, or the
    /// apiserver rejected its names.
    #[error(
        "the CustomResourceDefinition {name} was not ready within {timeout:?}: {detail}; check \
         its spec (names, versions, schema) or raise TestEnvBuilder::crd_install_timeout"
    )]
    CrdNotReady {
        /// The CRD's name.
        name: String,
        /// The timeout.
        timeout: Duration,
        /// The last state seen.
        detail: String,
    },

    /// An environment variable the test environment reads holds a value it cannot use.
    #[error("the environment variable {variable}={value:?} cannot be used: {problem}")]
    InvalidEnvironment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A shared test environment failed to start earlier in this process; the first caller got
    /// the full error.
    #[error("the shared test environment failed to start earlier in this process: {0}")]
    SharedStartFailed(String),
}

impl TestEnvError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> TestEnvError {
        TestEnvError::Io {
            context: context.into(),
            source,
        }
    }
}
