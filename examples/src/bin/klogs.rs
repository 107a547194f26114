//! Prints a pod's log, as `kubectl logs` does, byte for byte from `Api::<Pod>::logs` (a program
//! that wants lines without their newline takes `Api::<Pod>::log_lines`); with `-f` it follows
//! the log while the container runs (memory stays bounded however slowly the output is
//! written). Without `-c`, a pod of several containers is read from the one kubectl picks: the
//! `kubectl.kubernetes.io/default-container` annotation's, else the first (said on stderr).
//!
//! ```sh
//! cargo run -p kclient-examples --bin klogs -- [-n NAMESPACE] [-c CONTAINER] [-f] [-p] \
//!     [--tail N] [--timestamps] [--since DURATION] [--limit-bytes N] [pod/]POD
//! ```

use std::process::ExitCode;

use kclient::api::core::v1::Pod;
use kclient::apimachinery::meta::Duration;
use kclient::kubernetes::{Api, LogOptions};
use kclient::rest::{Client, Config};
use kclient_examples::default_container;
use kclient_examples::stdout::exit_on_broken_pipe;
use tokio::io::AsyncWriteExt as _;

const USAGE: &str = "usage: klogs [-n NAMESPACE] [-c CONTAINER] [-f] [-p] [--tail N] \
                     [--timestamps] [--since DURATION] [--limit-bytes N] [pod/]POD";

/// The arguments as kubectl takes them: `--flag value` or `--flag=value`, `--tail -1` for
/// the whole log (kubectl's default), `--since` a Go duration (`90s`, `1h`; whole seconds
/// too), the pod as `NAME` or `pod/NAME`.
fn parse(
    mut args: impl Iterator<Item = String>,
) -> Result<(Option<String>, String, LogOptions), String> {
    let (mut namespace, mut pod, mut opts) = (None, None, LogOptions::default());
    fn number(value: String, flag: &str) -> Result<i64, String> {
        value
            .parse()
            .map_err(|_| format!("{flag} needs a whole number, not {value:?}"))
    }
    fn seconds(value: String) -> Result<i64, String> {
        if let Ok(seconds) = value.parse() {
            return Ok(seconds);
        }
        let duration = Duration::parse(&value).map_err(|e| format!("--since: {e}"))?;
        // Rounded to the nearest second, as kubectl sends it.
        Ok(duration
            .as_nanos()
            .saturating_add(500_000_000)
            .div_euclid(1_000_000_000))
    }
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (flag.to_owned(), Some(value.into())),
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or(format!("{flag} needs a value"))
        };
        // A boolean flag alone is true; `--follow=false` as Go's `strconv.ParseBool` reads it.
        let boolean = || match inline.as_deref() {
            None | Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
            Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
            Some(other) => Err(format!("invalid boolean {other:?} for {flag}")),
        };
        match flag.as_str() {
            "-n" | "--namespace" => namespace = Some(value()?),
            "-c" | "--container" => opts.container = Some(value()?),
            "-f" | "--follow" => opts.follow = boolean()?,
            "-p" | "--previous" => opts.previous = boolean()?,
            "--timestamps" => opts.timestamps = boolean()?,
            "--tail" => match number(value()?, "--tail")? {
                -1 => opts.tail_lines = None,
                n if n < -1 => return Err("--tail must be greater than or equal to -1".into()),
                n => opts.tail_lines = Some(n),
            },
            // 0, kubectl's default, sends none.
            "--since" => opts.since_seconds = Some(seconds(value()?)?).filter(|s| *s != 0),
            "--limit-bytes" => opts.limit_bytes = Some(number(value()?, "--limit-bytes")?),
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}")),
            name if pod.is_none() => {
                let name = name.strip_prefix("pods/").or(name.strip_prefix("pod/"));
                pod = Some(name.unwrap_or(&arg).to_string());
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok((namespace, pod.ok_or("no pod named")?, opts))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (namespace, pod, opts) = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("klogs: {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match run(namespace, &pod, &opts).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("klogs: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run(
    namespace: Option<String>,
    pod: &str,
    opts: &LogOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    use futures_util::StreamExt as _;
    let client = Client::new(Config::infer()?)?;
    let namespace = namespace.unwrap_or_else(|| client.default_namespace().to_string());
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    // No `-c`: the container kubectl picks (the annotated default, else the first).
    let mut opts = opts.clone();
    if opts.container.is_none() {
        let found = pods.get(pod, &Default::default()).await?;
        let (container, notice) =
            default_container(&found).ok_or(format!("pod {pod} has no containers"))?;
        if let Some(notice) = notice {
            eprintln!("{notice}");
        }
        opts.container = Some(container);
    }
    // The log's bytes as they come, as `kubectl logs` copies them: a last line without a
    // newline (a partial line, or one cut by `--limit-bytes`) stays without one.
    let mut chunks = pods.logs(pod, &opts).await?;
    let mut out = tokio::io::stdout();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        exit_on_broken_pipe(out.write_all(&chunk).await)?;
        if opts.follow {
            exit_on_broken_pipe(out.flush().await)?;
        }
    }
    exit_on_broken_pipe(out.flush().await)?;
    Ok(())
}
