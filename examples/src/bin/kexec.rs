//! Runs a command in a pod's container, as `kubectl exec` does, over WebSocket
//! (`Api::<Pod>::exec`): stdout and stderr are copied to this process's, `-i` sends stdin, `-t`
//! gives the command a terminal (this terminal in raw mode, resized as it is), and the command's
//! exit code becomes this program's (with kubectl's `command terminated with exit code N` on
//! stderr). Without `-c`, a pod of several containers runs the command in the one kubectl
//! picks: the `kubectl.kubernetes.io/default-container` annotation's, else the first (said on
//! stderr).
//!
//! ```sh
//! cargo run -p kclient-examples --bin kexec -- [-n NAMESPACE] [-c CONTAINER] [-i] [-t] POD -- CMD [ARG...]
//! cargo run -p kclient-examples --bin kexec -- -it web-0 -- sh
//! ```

use std::process::ExitCode;

use kclient::api::core::v1::Pod;
use kclient::kubernetes::{Api, ExecOptions};
use kclient::rest::{Client, Config, TerminalSize};
use kclient_examples::default_container;
use kclient_examples::stdout::exit_on_broken_pipe;
use tokio::io::AsyncWriteExt as _;

const USAGE: &str = "usage: kexec [-n NAMESPACE] [-c CONTAINER] [-i] [-t] POD -- CMD [ARG...]";

struct Args {
    namespace: Option<String>,
    container: Option<String>,
    stdin: bool,
    tty: bool,
    pod: String,
    command: Vec<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut namespace, mut container, mut stdin, mut tty, mut pod) =
        (None, None, false, false, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--" => break,
            "-n" | "--namespace" => namespace = Some(args.next().ok_or("-n needs a value")?),
            "-c" | "--container" => container = Some(args.next().ok_or("-c needs a value")?),
            "-i" | "--stdin" => stdin = true,
            "-t" | "--tty" => tty = true,
            "-it" | "-ti" => (stdin, tty) = (true, true),
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}")),
            name if pod.is_none() => pod = Some(name.to_string()),
            other => {
                return Err(format!(
                    "unexpected argument {other:?} (put the command after --)"
                ));
            }
        }
    }
    let command: Vec<String> = args.collect();
    let pod = pod.ok_or("no pod named")?;
    if command.is_empty() {
        return Err("no command given after --".into());
    }
    Ok(Args {
        namespace,
        container,
        stdin,
        tty,
        pod,
        command,
    })
}

/// This terminal's size, from `stty size` ("ROWS COLS").
fn terminal_size() -> Option<TerminalSize> {
    let out = std::process::Command::new("stty")
        .arg("size")
        .stdin(std::fs::File::open("/dev/tty").ok()?)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut it = text.split_whitespace().map(|n| n.parse::<u16>().ok());
    let (height, width) = (it.next()??, it.next()??);
    Some(TerminalSize { width, height })
}

/// Puts this terminal in raw mode until dropped (with `stty`, so no terminal library).
struct RawTerminal(String);

impl RawTerminal {
    fn enter() -> Option<RawTerminal> {
        let tty = || std::fs::File::open("/dev/tty").ok();
        let saved = std::process::Command::new("stty")
            .arg("-g")
            .stdin(tty()?)
            .output()
            .ok()?;
        let saved = String::from_utf8(saved.stdout).ok()?.trim().to_string();
        std::process::Command::new("stty")
            .args(["raw", "-echo"])
            .stdin(tty()?)
            .status()
            .ok()?;
        Some(RawTerminal(saved))
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Ok(tty) = std::fs::File::open("/dev/tty") {
            let _ = std::process::Command::new("stty")
                .arg(&self.0)
                .stdin(tty)
                .status();
        }
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kexec: {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kexec: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(run(args));
    // With `-i`, tokio's stdin is read on a blocking thread whose read cannot be cancelled:
    // dropping the runtime would wait for it, that is for one more line (or key, with `-t`)
    // after the command has ended. Like `kubectl exec`, end with the command instead.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("kexec: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run(args: Args) -> Result<u8, Box<dyn std::error::Error>> {
    let client = Client::new(Config::infer()?)?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_string());
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let mut opts = ExecOptions::default().stdin(args.stdin).tty(args.tty);
    opts.container = args.container.clone();
    // No `-c`: the container kubectl picks (the annotated default, else the first).
    if opts.container.is_none() {
        let pod = pods.get(&args.pod, &Default::default()).await?;
        let (container, notice) =
            default_container(&pod).ok_or(format!("pod {} has no containers", args.pod))?;
        if let Some(notice) = notice {
            eprintln!("{notice}");
        }
        opts.container = Some(container);
    }
    let mut process = pods
        .exec(&args.pod, args.command.iter().cloned(), &opts)
        .await?;

    let raw = if args.tty { RawTerminal::enter() } else { None };
    if let Some(resizer) = process.terminal_resizer() {
        if let Some(size) = terminal_size() {
            resizer.resize(size).await?;
        }
        // Follow this terminal's size.
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut changes) = signal(SignalKind::window_change()) else {
                return;
            };
            while changes.recv().await.is_some() {
                if let Some(size) = terminal_size()
                    && resizer.resize(size).await.is_err()
                {
                    return;
                }
            }
        });
    }
    if let Some(mut stdin) = process.take_stdin() {
        // Copied until our input ends, which ends the command's (v5's close signal).
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut stdin).await;
            let _ = stdin.shutdown().await;
        });
    }
    let out = process
        .take_stdout()
        .map(|s| tokio::spawn(copy_out(s, std::io::stdout())));
    let err = process
        .take_stderr()
        .map(|s| tokio::spawn(copy_out(s, std::io::stderr())));
    for task in [out, err].into_iter().flatten() {
        task.await??;
    }
    let status = process.join().await;
    drop(raw);
    match status {
        Ok(()) => Ok(0),
        Err(e) => match e.exit_code() {
            Some(code) => {
                eprintln!("command terminated with exit code {code}");
                Ok(u8::try_from(code).unwrap_or(1))
            }
            None => Err(e.into()),
        },
    }
}

/// Copies a stream of the command's output to this process's `to` until it ends, or ends
/// the process quietly if the reader of `to` has gone (as kubectl ends, by SIGPIPE).
///
/// The writes are plain blocking writes on this (current-thread) runtime: a full pipe then
/// holds back reading, which is the back-pressure wanted, and no chunk is handed to another
/// thread (tokio's `stdout()` writes on its blocking pool, and handing each chunk over and back
/// cost a third of kexec's CPU time).
async fn copy_out(
    mut from: impl tokio::io::AsyncRead + Unpin,
    mut to: impl std::io::Write,
) -> std::io::Result<()> {
    use tokio::io::AsyncReadExt as _;
    let mut buf = vec![0; 256 << 10];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return exit_on_broken_pipe(to.flush());
        }
        exit_on_broken_pipe(to.write_all(&buf[..n]))?;
    }
}
