//! The streaming subresources of a pod: `exec`, `attach` and `portforward` over WebSocket
//! (kclient-rest's [`remote_command`](kclient_rest::remote_command) and
//! [`port_forward`](kclient_rest::port_forward)), and the log as a stream of lines.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kclient_clientset::{Clientset, ExecOptions};
//! use tokio::io::AsyncReadExt as _;
//!
//! let pods = Clientset::try_default()?.core_v1().pods("default");
//! // Only stdout: a stream asked for and not read would hold the others up.
//! let options = ExecOptions::default().stderr(false);
//! let mut process = pods.exec("web-0", ["ls", "/"], &options).await?;
//! let mut listing = String::new();
//! process.take_stdout().expect("stdout was asked for").read_to_string(&mut listing).await?;
//! match process.join().await {
//!     Ok(()) => print!("{listing}"),
//!     Err(e) if e.is_non_zero_exit_code() => eprintln!("ls exited {:?}", e.exit_code()),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(()) }
//! ```

use std::net::IpAddr;
use std::sync::Arc;

use kclient_api::core::v1::Pod;
use kclient_apimachinery::Error;
use kclient_rest::{
    AttachedProcess, LineStream, PortForwardListener, PortForwarder, StreamOptions, Verb,
};

use crate::api::Api;
use crate::log_options::LogOptions;

/// Which container and streams an exec or attach opens (`core/v1` `PodExecOptions` and
/// `PodAttachOptions` without the command). The default opens stdout and stderr, as
/// `kubectl exec` does without `-i` or `-t`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecOptions {
    /// The container; may be left out when the pod has one container.
    pub container: Option<String>,
    /// Open the process's standard input.
    pub stdin: bool,
    /// Read its standard output.
    pub stdout: bool,
    /// Read its standard error (turned off by [`ExecOptions::tty`]).
    pub stderr: bool,
    /// Give it a terminal.
    pub tty: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            container: None,
            stdin: false,
            stdout: true,
            stderr: true,
            tty: false,
        }
    }
}

impl ExecOptions {
    /// Sets [`ExecOptions::container`].
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// Sets [`ExecOptions::stdin`].
    pub fn stdin(mut self, stdin: bool) -> Self {
        self.stdin = stdin;
        self
    }

    /// Sets [`ExecOptions::stdout`].
    pub fn stdout(mut self, stdout: bool) -> Self {
        self.stdout = stdout;
        self
    }

    /// Sets [`ExecOptions::stderr`].
    pub fn stderr(mut self, stderr: bool) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sets [`ExecOptions::tty`]; a terminal merges stderr into stdout, so this also turns
    /// stderr off, as `kubectl exec -t` does.
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        if tty {
            self.stderr = false;
        }
        self
    }

    fn streams(&self) -> StreamOptions {
        StreamOptions::default()
            .stdin(self.stdin)
            .stdout(self.stdout)
            .stderr(self.stderr)
            .tty(self.tty)
    }
}

impl Api<Pod> {
    /// Runs `command` in the pod's container (`pods/{name}/exec`) and returns the process
    /// (see [`AttachedProcess`]). An empty command is refused before sending.
    pub async fn exec<I, S>(
        &self,
        name: &str,
        command: I,
        opts: &ExecOptions,
    ) -> Result<AttachedProcess, Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut request = self.request(Verb::Get)?.name(name).subresource("exec");
        let mut empty = true;
        for arg in command {
            request = request.param("command", arg.into());
            empty = false;
        }
        if empty {
            return Err(Error::invalid_request("exec needs a command"));
        }
        if let Some(c) = opts.container.as_deref().filter(|c| !c.is_empty()) {
            request = request.param("container", c);
        }
        request.remote_command(opts.streams()).await
    }

    /// Attaches to the running process of the pod's container (`pods/{name}/attach`); its
    /// stdin needs the container's `stdin: true`.
    pub async fn attach(&self, name: &str, opts: &ExecOptions) -> Result<AttachedProcess, Error> {
        let mut request = self.request(Verb::Get)?.name(name).subresource("attach");
        if let Some(c) = opts.container.as_deref().filter(|c| !c.is_empty()) {
            request = request.param("container", c);
        }
        request.remote_command(opts.streams()).await
    }

    /// Opens one stream to each of the pod's `ports` (`pods/{name}/portforward`), all on one
    /// connection; see [`PortForwarder`].
    pub async fn port_forward(&self, name: &str, ports: &[u16]) -> Result<PortForwarder, Error> {
        self.request(Verb::Get)?
            .name(name)
            .subresource("portforward")
            .port_forward(ports)
            .await
    }

    /// Listens on `address` at each `(local, remote)` port pair and forwards every accepted
    /// connection to the pod's `remote` port over a connection of its own, as
    /// `kubectl port-forward POD LOCAL:REMOTE` does; `local` 0 picks a free port.
    pub async fn port_forward_listen(
        &self,
        name: &str,
        address: IpAddr,
        ports: &[(u16, u16)],
    ) -> Result<PortForwardListener, Error> {
        // Fail now, not on the first connection, when the namespace or name is invalid.
        self.request(Verb::Get)?.name(name).url()?;
        let api = self.clone();
        let name = name.to_string();
        let open: kclient_rest::PortStreamOpener = Arc::new(move |port| {
            let api = api.clone();
            let name = name.clone();
            Box::pin(async move {
                let mut forwarder = api.port_forward(&name, &[port]).await?;
                forwarder
                    .take_stream(port)
                    .ok_or_else(|| Error::invalid_request(format!("no stream for port {port}")))
            })
        });
        PortForwardListener::bind(address, ports, open).await
    }

    /// The pod's log as a stream of lines (without their newline; see [`LineStream`]); with
    /// `follow` it stays open while the container runs. A slow reader keeps memory bounded:
    /// the log is read from the connection only as lines are taken.
    pub async fn log_lines(&self, name: &str, opts: &LogOptions) -> Result<LineStream, Error> {
        Ok(self.logs(name, opts).await?.lines())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_options_defaults_and_tty() {
        let o = ExecOptions::default();
        assert!(o.stdout && o.stderr && !o.stdin && !o.tty);
        let o = ExecOptions::default().stdin(true).tty(true);
        assert_eq!(
            o.streams(),
            StreamOptions::default()
                .stdin(true)
                .stdout(true)
                .stderr(false)
                .tty(true)
        );
    }

    #[test]
    fn since_time_goes_out_as_rfc3339() {
        let t = kclient_apimachinery::meta::Time::parse("2026-01-02T03:04:05Z").unwrap();
        let q = LogOptions::default().since_time(t).to_query();
        assert_eq!(q, [("sinceTime", "2026-01-02T03:04:05Z".to_owned())]);
    }
}
