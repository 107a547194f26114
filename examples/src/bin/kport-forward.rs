//! Forwards local ports to a pod's ports, as `kubectl port-forward` does, through
//! `Api::<Pod>::port_forward_listen`: each local connection gets its own WebSocket to the pod.
//!
//! ```sh
//! cargo run -p kclient-examples --bin kport-forward -- [-n NAMESPACE] [--address IP] POD [LOCAL:]REMOTE...
//! cargo run -p kclient-examples --bin kport-forward -- web-0 8080:80 :9090
//! ```
//!
//! Prints `Forwarding from 127.0.0.1:LOCAL -> REMOTE` for each port (a `LOCAL` left out or 0
//! is a free port), then runs until interrupted.

use std::net::IpAddr;
use std::process::ExitCode;

use kclient::api::core::v1::Pod;
use kclient::kubernetes::Api;
use kclient::rest::{Client, Config};
use kclient_examples::outln;

const USAGE: &str =
    "usage: kport-forward [-n NAMESPACE] [--address IP] POD [LOCAL:]REMOTE [[LOCAL:]REMOTE...]";

struct Args {
    namespace: Option<String>,
    address: IpAddr,
    pod: String,
    ports: Vec<(u16, u16)>,
}

fn port(text: &str) -> Result<u16, String> {
    text.parse().map_err(|_| format!("{text:?} is not a port"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut namespace, mut address, mut pod, mut ports) =
        (None, IpAddr::from([127, 0, 0, 1]), None, Vec::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-n" | "--namespace" => namespace = Some(args.next().ok_or("-n needs a value")?),
            "--address" => {
                let a = args.next().ok_or("--address needs a value")?;
                address = a
                    .parse()
                    .map_err(|_| format!("{a:?} is not an IP address"))?;
            }
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}")),
            name if pod.is_none() => pod = Some(name.trim_start_matches("pod/").to_string()),
            spec => ports.push(match spec.split_once(':') {
                Some(("", remote)) => (0, port(remote)?),
                Some((local, remote)) => (port(local)?, port(remote)?),
                None => (port(spec)?, port(spec)?),
            }),
        }
    }
    let pod = pod.ok_or("no pod named")?;
    if ports.is_empty() {
        return Err("no port to forward".into());
    }
    Ok(Args {
        namespace,
        address,
        pod,
        ports,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kport-forward: {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kport-forward: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::new(Config::infer()?)?;
    let namespace = args
        .namespace
        .unwrap_or_else(|| client.default_namespace().to_string());
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    // Fail early, as kubectl does, when the pod does not exist.
    pods.get(&args.pod, &Default::default()).await?;
    let listener = pods
        .port_forward_listen(&args.pod, args.address, &args.ports)
        .await?;
    for (local, remote) in listener.local_addresses() {
        outln!("Forwarding from {local} -> {remote}");
    }
    tokio::select! {
        () = listener.wait() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
