//! Exec credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`), client-go's
//! `plugin/pkg/client/auth/exec`.
//!
//! The plugin runs with the process environment plus the kubeconfig's `env`, and
//! `KUBERNETES_EXEC_INFO` holding an `ExecCredential` request (`spec.interactive`, and
//! `spec.cluster` when `provideClusterInfo` is set: the server, TLS settings (the CA data, else
//! the CA file's contents: a CA file that cannot be read is an error when the client is built,
//! as in client-go), proxy and, as `spec.cluster.config`, the cluster's
//! `client.authentication.k8s.io/exec` extension ([`ExecConfig::config`])). Its stdout must be an `ExecCredential` of
//! the same API version whose `status` holds a token, or a client certificate and key (both),
//! or both. Credentials are cached until `expirationTimestamp`. After a 401 the plugin runs
//! again on the next request, unless the credentials were already rotated meanwhile; the 401
//! itself is still returned to the caller. Certificates go into the TLS client-certificate
//! slot, so new connections present them.
//!
//! Stdin is handed to the plugin only in interactive mode (`IfAvailable` with a terminal, or
//! `Always`). Its stderr is passed on to the caller's stderr as it arrives (as client-go does,
//! so prompts reach the user), and its last [`STDERR_KEPT`] bytes, trimmed, go into the error
//! when the plugin fails (client-go drops them; a failing plugin's own explanation is what a
//! user needs). A process the plugin leaves running (a credential cache, an agent) that keeps
//! its stdout or stderr open does not hold the run: once the plugin has exited, its pipes are
//! read only while they still give something, then drained in the background.
//!
//! One run at a time: requests that need credentials while the plugin runs wait for that run
//! and share its result, success or failure (a single flight), so a hundred requests after a
//! 401 start one plugin, not a hundred.
//!
//! A run that takes longer than [`Config::exec_timeout`] (default [`DEFAULT_EXEC_TIMEOUT`]) is
//! killed and fails naming the timeout. client-go has no such limit; kclient has one so that a
//! hung plugin cannot hang every request forever.

use std::io::IsTerminal as _;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt as _};

use kclient_apimachinery::meta::MicroTime;

use crate::config::Config;
use crate::config_error::{ConfigError, Kind};
use crate::kubeconfig::ExecConfig;
use crate::metrics;
use crate::secret::Secret;
use crate::tls::{ClientCertSlot, certified_key};

/// How long an exec plugin may run before it is killed, when [`Config::exec_timeout`] is not
/// changed: five minutes, longer than an interactive browser login takes (kubelogin gives up
/// after three), short enough that a hung plugin does not hang its client for good.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(300);

/// How many bytes of a plugin's stderr an error keeps (the last ones: where a failing program
/// says why).
pub const STDERR_KEPT: usize = 4096;

/// The most bytes of a plugin's stdout read: an `ExecCredential` with a certificate chain and
/// key is a few KiB.
const MAX_STDOUT: usize = 1 << 20;

const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InteractiveMode {
    Never,
    IfAvailable,
    Always,
}

/// Credentials returned by one run of the plugin.
pub(crate) struct ExecCredential {
    token: Option<Secret<String>>,
    expiry: Option<MicroTime>,
}

impl ExecCredential {
    pub(crate) fn token(&self) -> Option<&str> {
        self.token.as_ref().map(|t| t.expose().as_str())
    }

    fn is_valid(&self) -> bool {
        self.expiry.is_none_or(|e| MicroTime::now() < e)
    }
}

/// Runs an exec plugin and caches its credentials.
pub(crate) struct ExecAuthenticator {
    plugin: Arc<Plugin>,
    cached: Mutex<Option<Arc<ExecCredential>>>,
    /// The run in progress, which every caller needing credentials meanwhile awaits.
    in_flight: Mutex<Option<Run>>,
}

/// One run of the plugin, shared by everyone who waits for it.
type Run = Shared<BoxFuture<'static, Result<Arc<ExecCredential>, ConfigError>>>;

/// What a run needs, shared with the run's future.
struct Plugin {
    config: ExecConfig,
    mode: InteractiveMode,
    cluster: Option<serde_json::Value>,
    cert_slot: Arc<ClientCertSlot>,
    timeout: Duration,
}

impl ExecAuthenticator {
    pub(crate) fn new(
        exec: ExecConfig,
        config: &Config,
        cert_slot: Arc<ClientCertSlot>,
    ) -> Result<Self, ConfigError> {
        let invalid = |msg: String| ConfigError::new(Kind::Exec, msg);
        if exec.command.is_empty() {
            return Err(invalid("exec plugin: command is empty".into()));
        }
        let mode = match (exec.api_version.as_str(), exec.interactive_mode.as_deref()) {
            (V1 | V1BETA1, Some("Never")) => InteractiveMode::Never,
            (V1 | V1BETA1, Some("IfAvailable")) => InteractiveMode::IfAvailable,
            (V1 | V1BETA1, Some("Always")) => InteractiveMode::Always,
            (V1BETA1, None | Some("")) => InteractiveMode::IfAvailable,
            (V1, None | Some("")) => {
                return Err(invalid(format!(
                    "exec plugin: interactiveMode must be specified for {V1}"
                )));
            }
            (V1 | V1BETA1, Some(other)) => {
                return Err(invalid(format!(
                    "exec plugin: invalid interactiveMode {other:?}"
                )));
            }
            (other, _) => {
                return Err(invalid(format!(
                    "exec plugin: invalid apiVersion {other:?} (want {V1} or {V1BETA1})"
                )));
            }
        };
        // client-go's ConfigToExecCluster: the CA data when not empty, else the CA file, which
        // must be readable (the client is not built otherwise).
        let ca = if !exec.provide_cluster_info {
            None
        } else if let Some(data) = config.tls.ca_data.as_ref().filter(|d| !d.is_empty()) {
            Some(data.clone())
        } else if let Some(path) = &config.tls.ca_file {
            let data = std::fs::read(path).map_err(|e| {
                ConfigError::io(path, e).context(
                    "exec plugin: failed to load the CA bundle for the cluster info (provideClusterInfo)",
                )
            })?;
            Some(data).filter(|d| !d.is_empty())
        } else {
            None
        };
        let cluster = exec.provide_cluster_info.then(|| {
            let mut cluster = json!({ "server": config.host });
            if let Some(name) = &config.tls.server_name {
                cluster["tls-server-name"] = json!(name);
            }
            if config.tls.insecure {
                cluster["insecure-skip-tls-verify"] = json!(true);
            }
            if let Some(ca) = ca {
                cluster["certificate-authority-data"] =
                    json!(base64::engine::general_purpose::STANDARD.encode(ca));
            }
            if let Some(proxy) = &config.proxy_url {
                cluster["proxy-url"] = json!(proxy);
            }
            if config.disable_compression {
                cluster["disable-compression"] = json!(true);
            }
            // client-go's ConfigToExecCluster: `Config: config.ExecProvider.Config`, the
            // cluster's `client.authentication.k8s.io/exec` extension.
            if let Some(data) = exec.config.as_ref().filter(|d| !d.is_null()) {
                cluster["config"] = data.clone();
            }
            cluster
        });
        Ok(ExecAuthenticator {
            plugin: Arc::new(Plugin {
                config: exec,
                mode,
                cluster,
                cert_slot,
                timeout: config.exec_timeout,
            }),
            cached: Mutex::new(None),
            in_flight: Mutex::new(None),
        })
    }

    /// The cached credentials, or fresh ones from a run of the plugin (the run in progress, if
    /// there is one).
    pub(crate) async fn credentials(&self) -> Result<Arc<ExecCredential>, ConfigError> {
        if let Some(c) = self.valid_cached() {
            return Ok(c);
        }
        let run = {
            let mut in_flight = self.in_flight.lock();
            // A run may have finished since the check above.
            if let Some(c) = self.valid_cached() {
                return Ok(c);
            }
            in_flight
                .get_or_insert_with(|| {
                    let plugin = self.plugin.clone();
                    async move { plugin.run().await.map(Arc::new) }
                        .boxed()
                        .shared()
                })
                .clone()
        };
        let result = run.clone().await;
        // The first waiter to see the run end retires it and caches what it gave.
        let mut in_flight = self.in_flight.lock();
        if in_flight.as_ref().is_some_and(|r| r.ptr_eq(&run)) {
            *in_flight = None;
            if let Ok(creds) = &result {
                *self.cached.lock() = Some(creds.clone());
            }
        }
        result
    }

    fn valid_cached(&self) -> Option<Arc<ExecCredential>> {
        self.cached
            .lock()
            .as_ref()
            .filter(|c| c.is_valid())
            .cloned()
    }

    /// Drops `used` from the cache if it is still the current credential.
    pub(crate) fn invalidate(&self, used: &Arc<ExecCredential>) {
        let mut cached = self.cached.lock();
        if cached.as_ref().is_some_and(|c| Arc::ptr_eq(c, used)) {
            tracing::debug!("exec plugin credentials rejected with 401, they will be refreshed");
            *cached = None;
        }
    }
}

impl Plugin {
    async fn run(&self) -> Result<ExecCredential, ConfigError> {
        let cmd = &self.config.command;
        let fail =
            |msg: String| ConfigError::new(Kind::Exec, format!("exec plugin {cmd:?}: {msg}"));
        let terminal = std::io::stdin().is_terminal();
        let interactive = match self.mode {
            InteractiveMode::Never => false,
            InteractiveMode::IfAvailable => terminal,
            InteractiveMode::Always if terminal => true,
            InteractiveMode::Always => {
                return Err(fail(
                    "interactive mode is Always but standard input is not a terminal".into(),
                ));
            }
        };
        let mut spec = json!({ "interactive": interactive });
        if let Some(cluster) = &self.cluster {
            spec["cluster"] = cluster.clone();
        }
        let info = json!({
            "kind": "ExecCredential",
            "apiVersion": self.config.api_version,
            "spec": spec,
        });
        let mut command = tokio::process::Command::new(cmd);
        command
            .args(&self.config.args)
            .envs(self.config.env.iter().map(|e| (&e.name, &e.value)))
            .env("KUBERNETES_EXEC_INFO", info.to_string())
            .stdin(if interactive {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            let hint = self
                .config
                .install_hint
                .as_deref()
                .map(|h| format!("\n{}", clean_ansi_escape_codes(h)))
                .unwrap_or_default();
            record_call(1, metrics::EXEC_PLUGIN_NOT_FOUND_ERROR);
            fail(format!("cannot run it: {e}{hint}")).with_source(e)
        })?;
        let stdout = child.stdout.take();
        let stderr_tail = Mutex::new(StderrTail::default());
        let stderr = child.stderr.take();
        // Set when the plugin has exited: from then on its pipes are read only while they
        // still give something (see `read_pipe`).
        let (exited_tx, exited) = tokio::sync::watch::channel(false);
        let finished = async {
            let wait = async {
                let status = child.wait().await;
                let _ = exited_tx.send(true);
                status
            };
            let (status, stdout, ()) = tokio::join!(
                wait,
                read_stdout(stdout, exited.clone()),
                pass_on_stderr(stderr, &stderr_tail, exited.clone()),
            );
            (status, stdout)
        };
        let outcome = tokio::time::timeout(self.timeout, finished).await;
        let (status, stdout) = match outcome {
            Ok(done) => done,
            Err(_) => {
                // Kill it now (dropping the child would too, `kill_on_drop`).
                let _ = child.start_kill();
                record_call(1, metrics::EXEC_PLUGIN_EXECUTION_ERROR);
                return Err(fail(format!(
                    "did not finish within {:?} and was killed (raise Config::exec_timeout if \
                     it needs longer){}",
                    self.timeout,
                    stderr_tail.lock().for_error()
                )));
            }
        };
        let status = status.map_err(|e| {
            record_call(1, metrics::EXEC_CLIENT_INTERNAL_ERROR);
            fail(format!("cannot wait for it: {e}")).with_source(e)
        })?;
        record_call(
            status.code().unwrap_or(1),
            if status.success() {
                metrics::EXEC_NO_ERROR
            } else {
                metrics::EXEC_PLUGIN_EXECUTION_ERROR
            },
        );
        if !status.success() {
            return Err(fail(format!(
                "{}{}",
                exit_text(status),
                stderr_tail.lock().for_error()
            )));
        }
        let stdout =
            stdout.map_err(|e| fail(format!("cannot read its output: {e}")).with_source(e))?;
        parse_output(&stdout, &self.config.api_version, &self.cert_slot).map_err(fail)
    }
}

/// client-go's `cleanANSIEscapeCodes`, applied to an `installHint` (which comes from a
/// kubeconfig, perhaps not the user's own) before it is shown: a character that is no letter,
/// mark, number, punctuation, symbol or space (Unicode's `C` categories: controls such as the
/// ESC that starts a terminal escape sequence, format characters such as bidi overrides,
/// private-use characters) is written as its code point, `U+001B`; tabs and line breaks
/// (U+0009 to U+000D) stay. Unlike Go, code points unassigned in Unicode are kept (Rust has
/// no table of them); they do nothing to a terminal.
fn clean_ansi_escape_codes(text: &str) -> String {
    /// Unicode's `Cf` (format) characters.
    const FORMAT: &[(u32, u32)] = &[
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
    ];
    fn escaped(c: char) -> bool {
        let n = u32::from(c);
        let control = c.is_control() && !(0x09..=0x0D).contains(&n);
        let format = FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&n));
        let private_use = (0xE000..=0xF8FF).contains(&n) || n >= 0xF0000;
        // Noncharacters (category `Cn`): U+FDD0 to U+FDEF and the last two of each plane.
        let noncharacter = (0xFDD0..=0xFDEF).contains(&n) || n & 0xFFFE == 0xFFFE;
        control || format || private_use || noncharacter
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&format!("U+{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Counts one plugin run with the metrics provider, if one is set.
fn record_call(exit_code: i32, call_status: &str) {
    if let Some(p) = metrics::provider() {
        p.exec_plugin_call(exit_code, call_status);
    }
}

/// `exited with code 3`, or the signal that ended the plugin.
fn exit_text(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("exited with {status}"),
    }
}

/// How long a pipe of a plugin that has exited may stay silent before it is left alone. What
/// the plugin wrote is in the pipe when it exits; a pipe still open after that is held by a
/// process the plugin left running (a credential cache, an agent).
const PIPE_GRACE: Duration = Duration::from_secs(1);

/// Reads `pipe` until its end, handing each chunk to `sink`; once `exited` turns true, only
/// while a chunk arrives within [`PIPE_GRACE`] of the last. A pipe left open by a process the
/// plugin started is then drained in the background into `leftover` (so that process never
/// writes into a closed pipe), and the run goes on: client-go passes the plugin its own stderr
/// and does not wait for it. `sink` can end the reading with an error.
async fn read_pipe<R, S>(
    mut pipe: R,
    mut exited: tokio::sync::watch::Receiver<bool>,
    mut sink: S,
    leftover: impl std::io::Write + Send + 'static,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    S: FnMut(&[u8]) -> std::io::Result<()>,
{
    let mut buf = [0u8; 8192];
    loop {
        let n = if *exited.borrow() {
            match tokio::time::timeout(PIPE_GRACE, pipe.read(&mut buf)).await {
                Ok(read) => read?,
                Err(_) => {
                    drain_in_background(pipe, leftover);
                    return Ok(());
                }
            }
        } else {
            // `read` is cancel-safe: nothing is lost when the exit is seen first.
            tokio::select! {
                read = pipe.read(&mut buf) => read?,
                _ = exited.wait_for(|exited| *exited) => continue,
            }
        };
        if n == 0 {
            return Ok(());
        }
        sink(&buf[..n])?;
    }
}

/// Reads what is left in a pipe held open by a process a plugin left running, into `to`
/// (our stderr, or nothing), until that process closes it; on a runtime only.
fn drain_in_background<R: AsyncRead + Unpin + Send + 'static>(
    mut pipe: R,
    mut to: impl std::io::Write + Send + 'static,
) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    return;
                }
                let _ = to.write_all(&buf[..n]);
            }
        });
    }
}

/// Reads a plugin's stdout, refusing more than [`MAX_STDOUT`] bytes.
async fn read_stdout<R: AsyncRead + Unpin + Send + 'static>(
    stdout: Option<R>,
    exited: tokio::sync::watch::Receiver<bool>,
) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    if let Some(stdout) = stdout {
        read_pipe(
            stdout,
            exited,
            |chunk| {
                if out.len() + chunk.len() > MAX_STDOUT {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_STDOUT} bytes on stdout"
                    )));
                }
                out.extend_from_slice(chunk);
                Ok(())
            },
            std::io::sink(),
        )
        .await?;
    }
    Ok(out)
}

/// The last [`STDERR_KEPT`] bytes a plugin wrote to stderr.
#[derive(Default)]
struct StderrTail {
    bytes: std::collections::VecDeque<u8>,
    dropped: bool,
}

impl StderrTail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        if self.bytes.len() > STDERR_KEPT {
            let excess = self.bytes.len() - STDERR_KEPT;
            self.bytes.drain(..excess);
            self.dropped = true;
        }
    }

    /// `; stderr: <text>` for an error message, or nothing when the plugin wrote nothing.
    fn for_error(&self) -> String {
        let bytes: Vec<u8> = self.bytes.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            return String::new();
        }
        let cut = if self.dropped { "..." } else { "" };
        format!("; stderr: {cut}{text}")
    }
}

/// Copies a plugin's stderr to ours as it arrives and keeps its tail.
async fn pass_on_stderr<R: AsyncRead + Unpin + Send + 'static>(
    stderr: Option<R>,
    tail: &Mutex<StderrTail>,
    exited: tokio::sync::watch::Receiver<bool>,
) {
    use std::io::Write as _;
    let Some(stderr) = stderr else {
        return;
    };
    let _ = read_pipe(
        stderr,
        exited,
        |chunk| {
            let _ = std::io::stderr().write_all(chunk);
            tail.lock().push(chunk);
            Ok(())
        },
        std::io::stderr(),
    )
    .await;
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Output {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    api_version: String,
    status: Option<OutputStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OutputStatus {
    #[serde(default)]
    expiration_timestamp: Option<String>,
    #[serde(default)]
    token: Option<Secret<String>>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key_data: Option<Secret<String>>,
}

/// Validates and applies a plugin's stdout; errors never echo the output (it holds secrets).
fn parse_output(
    stdout: &[u8],
    api_version: &str,
    slot: &ClientCertSlot,
) -> Result<ExecCredential, String> {
    let out: Output = kclient_apimachinery::decode_json(stdout).map_err(|e| {
        format!(
            "output is not an ExecCredential (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    if out.kind != "ExecCredential" {
        return Err(format!(
            "output kind is {:?}, want ExecCredential",
            out.kind
        ));
    }
    if out.api_version != api_version {
        return Err(format!(
            "output apiVersion is {:?}, want {api_version:?}",
            out.api_version
        ));
    }
    let status = out.status.ok_or("output has no status field")?;
    let token = status.token.filter(|t| !t.expose().is_empty());
    let cert = status.client_certificate_data.filter(|c| !c.is_empty());
    let key = status.client_key_data.filter(|k| !k.expose().is_empty());
    match (&cert, &key) {
        (Some(c), Some(k)) => {
            let pair =
                certified_key(c.as_bytes(), k.expose().as_bytes()).map_err(|e| e.to_string())?;
            slot.set(pair);
        }
        (None, None) if token.is_none() => {
            return Err("output has no token and no client certificate and key".into());
        }
        // A token alone: a certificate of an earlier run is no longer presented (client-go's
        // new credentials have none).
        (None, None) => slot.clear(),
        _ => return Err("output has a client certificate or key but not both".into()),
    }
    let expiry = match status.expiration_timestamp.filter(|t| !t.is_empty()) {
        Some(t) => {
            Some(MicroTime::parse(&t).ok_or_else(|| format!("invalid expirationTimestamp {t:?}"))?)
        }
        None => None,
    };
    Ok(ExecCredential { token, expiry })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubeconfig::ExecEnvVar;
    use std::os::unix::fs::PermissionsExt as _;

    fn script(dir: &std::path::Path, body: &str) -> String {
        let path = dir.join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// A plugin in `dir` that writes the `KUBERNETES_EXEC_INFO` it was given to the file
    /// returned beside it, and answers with the token `t`.
    fn info_recording_plugin(dir: &std::path::Path) -> (String, std::path::PathBuf) {
        let info = dir.join("info");
        let cmd = script(
            dir,
            &format!(
                r#"printf '%s' "$KUBERNETES_EXEC_INFO" > {info}
echo '{{"kind":"ExecCredential","apiVersion":"{V1}","status":{{"token":"t"}}}}'"#,
                info = info.display(),
            ),
        );
        (cmd, info)
    }

    /// The plugin config that runs `script` through `/bin/sh`. Executing the script file itself
    /// can fail with "text file busy" when another test forks while the file is still open for
    /// writing in this process; the shell only reads it.
    fn sh(script: String, api_version: &str) -> ExecConfig {
        let mut exec = ExecConfig::new("/bin/sh", api_version);
        exec.args = vec![script];
        exec
    }

    fn authn(exec: ExecConfig) -> Result<ExecAuthenticator, ConfigError> {
        let mut config = Config::new("https://127.0.0.1:6443");
        config.tls.ca_data = Some(b"CA".to_vec());
        ExecAuthenticator::new(exec, &config, Default::default())
    }

    #[tokio::test]
    async fn runs_plugin_caches_and_refreshes_after_401() {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let info = dir.path().join("info");
        let cmd = script(
            dir.path(),
            &format!(
                r#"echo x >> {count}
printf '%s' "$KUBERNETES_EXEC_INFO" > {info}
n=$(wc -l < {count} | tr -d ' ')
echo "{{\"kind\":\"ExecCredential\",\"apiVersion\":\"{V1}\",\"status\":{{\"token\":\"tok-$n-$MY_VAR\"}}}}""#,
                count = count.display(),
                info = info.display(),
            ),
        );
        let mut exec = sh(cmd, V1);
        exec.interactive_mode = Some("Never".into());
        exec.provide_cluster_info = true;
        exec.env = vec![ExecEnvVar::new("MY_VAR", "v")];
        let a = authn(exec).unwrap();
        let c1 = a.credentials().await.unwrap();
        assert_eq!(c1.token(), Some("tok-1-v"));
        let c2 = a.credentials().await.unwrap();
        assert!(Arc::ptr_eq(&c1, &c2), "cached without expiry");
        let sent: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
        assert_eq!(sent["apiVersion"], V1);
        assert_eq!(sent["spec"]["interactive"], false);
        assert_eq!(sent["spec"]["cluster"]["server"], "https://127.0.0.1:6443");
        assert_eq!(
            sent["spec"]["cluster"]["certificate-authority-data"],
            "Q0E="
        );
        a.invalidate(&c1);
        let c3 = a.credentials().await.unwrap();
        assert_eq!(c3.token(), Some("tok-2-v"));
        // A 401 seen with the old credentials does not rotate again.
        a.invalidate(&c1);
        assert!(Arc::ptr_eq(&a.credentials().await.unwrap(), &c3));
    }

    /// client-go passes the cluster's `client.authentication.k8s.io/exec` extension to the
    /// plugin as `spec.cluster.config` (`ExecProvider.Config`, with provideClusterInfo); other
    /// extensions are not passed, and without provideClusterInfo there is no `spec.cluster`.
    #[tokio::test]
    async fn the_cluster_exec_extension_reaches_the_plugin_as_spec_cluster_config() {
        let dir = tempfile::tempdir().unwrap();
        let (cmd, info) = info_recording_plugin(dir.path());
        let cases = [
            (
                "[{name: other, extension: x}, {name: client.authentication.k8s.io/exec, extension: {audience: my-audience, n: [1]}}]",
                true,
                Some(json!({"audience": "my-audience", "n": [1]})),
            ),
            ("[{name: other, extension: {audience: no}}]", true, None),
            ("null", true, None),
            (
                "[{name: client.authentication.k8s.io/exec, extension: {audience: a}}]",
                false,
                None,
            ),
        ];
        for (extensions, provide, want) in cases {
            let yaml = format!(
                r#"
current-context: c
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
    extensions: {extensions}
contexts:
- name: c
  context: {{cluster: c, user: u}}
users:
- name: u
  user:
    exec:
      command: /bin/sh
      args: ["{cmd}"]
      apiVersion: {V1}
      interactiveMode: Never
      provideClusterInfo: {provide}
"#
            );
            let kubeconfig = crate::Kubeconfig::from_yaml(&yaml).unwrap();
            let config = Config::from_kubeconfig(&kubeconfig, &Default::default()).unwrap();
            let exec = config.exec_provider.clone().unwrap();
            assert_eq!(exec.config.is_some(), extensions.contains("k8s.io/exec"));
            let a = ExecAuthenticator::new(exec, &config, Default::default()).unwrap();
            a.credentials().await.unwrap();
            let sent: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
            let cluster = &sent["spec"]["cluster"];
            assert_eq!(cluster.is_object(), provide, "{extensions}: {sent}");
            assert_eq!(cluster.get("config"), want.as_ref(), "{extensions}: {sent}");
        }
    }

    /// client-go's `ConfigToExecCluster` reads the CA as `dataFromSliceOrFile`: the data when
    /// not empty, else the file; a file it cannot read fails the client's construction
    /// ("failed to load CA bundle for execProvider"), with provideClusterInfo only. No CA is
    /// no `certificate-authority-data` (omitted when empty).
    #[tokio::test]
    async fn the_plugin_gets_the_ca_data_else_the_ca_file_which_must_be_readable() {
        let dir = tempfile::tempdir().unwrap();
        let (cmd, info) = info_recording_plugin(dir.path());
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, "FILE-CA").unwrap();
        let missing = dir.path().join("missing.crt");
        let mut exec = never(sh(cmd, V1));
        exec.provide_cluster_info = true;
        let sent_ca = |data: Option<&[u8]>, file: Option<&std::path::Path>| {
            let mut config = Config::new("https://127.0.0.1:6443");
            config.tls.ca_data = data.map(<[u8]>::to_vec);
            config.tls.ca_file = file.map(std::path::Path::to_path_buf);
            let exec = exec.clone();
            let info = info.clone();
            async move {
                let a = ExecAuthenticator::new(exec, &config, Default::default())?;
                a.credentials().await.unwrap();
                let sent: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
                Ok::<_, ConfigError>(sent["spec"]["cluster"]["certificate-authority-data"].clone())
            }
        };
        let file_ca = json!(base64::engine::general_purpose::STANDARD.encode("FILE-CA"));
        assert_eq!(
            sent_ca(Some(b"DATA-CA"), Some(&ca_file)).await.unwrap(),
            json!(base64::engine::general_purpose::STANDARD.encode("DATA-CA"))
        );
        assert_eq!(sent_ca(None, Some(&ca_file)).await.unwrap(), file_ca);
        assert_eq!(
            sent_ca(Some(b""), Some(&ca_file)).await.unwrap(),
            file_ca,
            "empty data: the file"
        );
        assert_eq!(sent_ca(None, None).await.unwrap(), json!(null));
        assert_eq!(sent_ca(Some(b""), None).await.unwrap(), json!(null));
        let err = sent_ca(None, Some(&missing)).await.unwrap_err();
        assert!(err.is_io(), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("CA bundle") && text.contains(&missing.display().to_string()),
            "{text}"
        );
        // Without provideClusterInfo the CA is not read for the plugin.
        let mut config = Config::new("https://127.0.0.1:6443");
        config.tls.ca_file = Some(missing);
        exec.provide_cluster_info = false;
        ExecAuthenticator::new(exec, &config, Default::default()).unwrap();
    }

    #[tokio::test]
    async fn expired_credentials_rerun() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = script(
            dir.path(),
            &format!(
                r#"echo '{{"kind":"ExecCredential","apiVersion":"{V1BETA1}","status":{{"token":"t","expirationTimestamp":"2000-01-01T00:00:00Z"}}}}'"#
            ),
        );
        let a = authn(sh(cmd, V1BETA1)).unwrap();
        let c1 = a.credentials().await.unwrap();
        let c2 = a.credentials().await.unwrap();
        assert!(!Arc::ptr_eq(&c1, &c2), "expired credentials are not reused");
    }

    #[tokio::test]
    async fn bad_plugins_are_errors_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("exit 3", "exited"),
            ("echo not-json-SECRET", "not an ExecCredential"),
            (
                r#"echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"SECRET"}}'"#,
                "apiVersion",
            ),
            (
                r#"echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1"}'"#,
                "no status",
            ),
            (
                r#"echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{}}'"#,
                "no token",
            ),
            (
                r#"echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"clientKeyData":"SECRET"}}'"#,
                "not both",
            ),
            (
                r#"echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"SECRET","expirationTimestamp":"soon"}}'"#,
                "expirationTimestamp",
            ),
        ];
        for (body, needle) in cases {
            let cmd = script(dir.path(), body);
            let mut exec = sh(cmd, V1);
            exec.interactive_mode = Some("Never".into());
            let err = authn(exec).unwrap().credentials().await.err().unwrap();
            let text = format!("{err} {err:?}");
            assert!(err.is_exec(), "{text}");
            assert!(text.contains(needle), "{text} / {needle}");
            assert!(!text.contains("SECRET"), "{text}");
        }
        let mut exec = ExecConfig::new("/nonexistent/plugin", V1);
        exec.interactive_mode = Some("Never".into());
        exec.install_hint = Some("install it from example.com".into());
        let err = authn(exec).unwrap().credentials().await.err().unwrap();
        assert!(err.to_string().contains("install it"), "{err}");
    }

    /// client-go shows a missing plugin's `installHint` with `cleanANSIEscapeCodes`: a
    /// character that is not a letter, mark, number, punctuation, symbol or space (an escape
    /// that would restyle or rewrite the user's terminal, a bidi override) is written as its
    /// `U+XXXX` code point; tabs and line breaks stay.
    #[tokio::test]
    async fn the_install_hint_spells_out_terminal_escapes_as_client_go_does() {
        let mut exec = never(ExecConfig::new("/nonexistent/plugin", V1));
        exec.install_hint = Some(
            "\u{1b}[1mInstall\u{1b}[0m it:\tbrew install x\r\n\u{202e}é 日本 ✓\u{7}\u{e000}".into(),
        );
        let err = authn(exec).unwrap().credentials().await.err().unwrap();
        let text = err.to_string();
        assert!(
            text.ends_with(
                "\nU+001B[1mInstallU+001B[0m it:\tbrew install x\r\nU+202Eé 日本 ✓U+0007U+E000"
            ),
            "{text:?}"
        );
    }

    fn never(exec: ExecConfig) -> ExecConfig {
        ExecConfig {
            interactive_mode: Some("Never".into()),
            ..exec
        }
    }

    #[tokio::test]
    async fn a_failing_plugin_error_carries_its_stderr_trimmed_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = script(
            dir.path(),
            "echo 'starting' >&2\necho '  error: token expired, run: login --sso  ' >&2\nexit 3",
        );
        let err = authn(never(sh(cmd, V1)))
            .unwrap()
            .credentials()
            .await
            .err()
            .unwrap();
        assert!(err.is_exec(), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("exited with code 3"), "{text}");
        assert!(
            text.ends_with("; stderr: starting\n  error: token expired, run: login --sso"),
            "{text}"
        );
        // A plugin that writes a lot: only the last STDERR_KEPT bytes are kept.
        let cmd = script(
            dir.path(),
            "i=0; while [ $i -lt 400 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done\necho 'the real reason' >&2\nexit 1",
        );
        let err = authn(never(sh(cmd, V1)))
            .unwrap()
            .credentials()
            .await
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(text.ends_with("the real reason"), "{text}");
        assert!(!text.contains("noise line 0\n"), "the head is dropped");
        assert!(text.contains("stderr: ..."), "the cut is marked: {text}");
        assert!(text.len() < STDERR_KEPT + 200, "{}", text.len());
    }

    #[tokio::test]
    async fn a_hung_plugin_is_killed_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let cmd = script(
            dir.path(),
            &format!(
                "echo $$ > {}\necho 'waiting for the browser login' >&2\nexec sleep 60",
                pid_file.display()
            ),
        );
        let mut config = Config::new("https://127.0.0.1:6443");
        config.exec_timeout = Duration::from_millis(500);
        let a = ExecAuthenticator::new(never(sh(cmd, V1)), &config, Default::default()).unwrap();
        let err = tokio::time::timeout(Duration::from_secs(30), a.credentials())
            .await
            .expect("the plugin's timeout did not fire")
            .err()
            .unwrap();
        assert!(err.is_exec(), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("did not finish within 500ms"), "{text}");
        assert!(text.contains("Config::exec_timeout"), "{text}");
        assert!(text.contains("waiting for the browser login"), "{text}");
        // The plugin was killed (`exec` made the shell the sleep): its pid is gone.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
        for _ in 0..100 {
            let alive =
                std::fs::read_to_string(proc.join("stat")).is_ok_and(|stat| !stat.contains(") Z "));
            if !alive {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the timed-out plugin {} still runs", pid.trim());
    }

    /// A plugin that starts a background process and exits (a credential cache, an agent)
    /// gives its credentials at once, though that process still holds the plugin's stderr,
    /// or stdout too: client-go hands the plugin its own stderr and never waits for it, and
    /// what the plugin wrote before it exited is all there is to read.
    #[tokio::test]
    async fn a_process_left_running_by_the_plugin_does_not_hold_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let credential =
            format!(r#"{{"kind":"ExecCredential","apiVersion":"{V1}","status":{{"token":"t"}}}}"#);
        // Left running holding stderr only, then stdout and stderr both.
        for background in ["sleep 60 >/dev/null", "sleep 60"] {
            let cmd = script(
                dir.path(),
                &format!(
                    "{background} &\necho $! >> {pids}\necho 'cache started' >&2\necho '{credential}'",
                    pids = pids.display()
                ),
            );
            let mut config = Config::new("https://127.0.0.1:6443");
            config.exec_timeout = Duration::from_secs(20);
            let a =
                ExecAuthenticator::new(never(sh(cmd, V1)), &config, Default::default()).unwrap();
            let got = a.credentials().await;
            assert_eq!(
                got.as_ref().ok().and_then(|c| c.token()),
                Some("t"),
                "{background}: {:?}",
                got.as_ref().err()
            );
        }
        for pid in std::fs::read_to_string(&pids).unwrap().lines() {
            let _ = std::process::Command::new("kill").arg(pid.trim()).status();
        }
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_run_success_or_failure() {
        for (outcome, ok) in [
            (
                format!(
                    r#"echo '{{"kind":"ExecCredential","apiVersion":"{V1}","status":{{"token":"t"}}}}'"#
                ),
                true,
            ),
            ("echo 'no luck' >&2; exit 1".to_string(), false),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let count = dir.path().join("count");
            let cmd = script(
                dir.path(),
                &format!("echo x >> {}\nsleep 0.5\n{outcome}", count.display()),
            );
            let a = Arc::new(authn(never(sh(cmd, V1))).unwrap());
            let calls: Vec<_> = (0..10)
                .map(|_| {
                    let a = a.clone();
                    tokio::spawn(async move { a.credentials().await })
                })
                .collect();
            let mut results = Vec::new();
            for call in calls {
                results.push(call.await.unwrap());
            }
            let runs = std::fs::read_to_string(&count).unwrap().lines().count();
            assert_eq!(runs, 1, "ten callers, one run (ok: {ok})");
            if ok {
                let first = results[0].as_ref().unwrap();
                assert!(
                    results
                        .iter()
                        .all(|r| Arc::ptr_eq(r.as_ref().unwrap(), first)),
                    "every caller got the same credentials"
                );
            } else {
                for r in &results {
                    let err = r.as_ref().err().unwrap();
                    assert!(err.to_string().contains("no luck"), "{err}");
                }
                // A failed run is not cached: the next caller runs the plugin again.
                assert!(a.credentials().await.is_err());
                let runs = std::fs::read_to_string(&count).unwrap().lines().count();
                assert_eq!(runs, 2);
            }
        }
    }

    #[test]
    fn config_validation() {
        let err = authn(ExecConfig::new("x", V1)).err().unwrap();
        assert!(err.to_string().contains("interactiveMode"), "{err}");
        let err = authn(ExecConfig::new(
            "x",
            "client.authentication.k8s.io/v1alpha1",
        ))
        .err()
        .unwrap();
        assert!(err.to_string().contains("apiVersion"), "{err}");
        let mut e = ExecConfig::new("x", V1);
        e.interactive_mode = Some("Sometimes".into());
        assert!(authn(e).is_err());
        assert!(authn(ExecConfig::new("x", V1BETA1)).is_ok());
    }

    /// A run that gives a token and no certificate after one that gave a certificate leaves
    /// no certificate in use, as client-go's exec authenticator (whose new credentials have no
    /// certificate then): the old one would still be presented with the new token.
    #[test]
    fn a_token_only_run_after_a_certificate_run_clears_the_certificate() {
        let slot = ClientCertSlot::default();
        let cert = json!({
            "kind": "ExecCredential",
            "apiVersion": V1,
            "status": {
                "clientCertificateData": crate::tls::tests::TEST_CERT,
                "clientKeyData": crate::tls::tests::TEST_KEY,
            }
        });
        parse_output(cert.to_string().as_bytes(), V1, &slot).unwrap();
        assert!(slot.is_set());
        let before = slot.generation();
        let token = json!({"kind": "ExecCredential", "apiVersion": V1, "status": {"token": "t"}});
        parse_output(token.to_string().as_bytes(), V1, &slot).unwrap();
        assert!(!slot.is_set(), "the old certificate is no longer presented");
        assert_ne!(
            slot.generation(),
            before,
            "connections made with it are dropped"
        );
    }

    #[test]
    fn cert_output_fills_the_tls_slot() {
        let slot = ClientCertSlot::default();
        let out = json!({
            "kind": "ExecCredential",
            "apiVersion": V1,
            "status": {
                "clientCertificateData": crate::tls::tests::TEST_CERT,
                "clientKeyData": crate::tls::tests::TEST_KEY,
            }
        });
        let creds = parse_output(out.to_string().as_bytes(), V1, &slot).unwrap();
        assert!(creds.token().is_none());
        assert!(slot.is_set());
    }
}
