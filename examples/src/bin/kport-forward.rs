//! Forwards local ports to a pod's ports, as `kubectl port-forward` does, through
//! `Api::<Pod>::port_forward_listen`: each local connection gets its own WebSocket to the pod.
//!
//! ```sh
//! cargo run -p kclient-examples --bin kport-forward -- [-n NAMESPACE] [--address ADDRESSES] POD [LOCAL:]REMOTE...
//! cargo run -p kclient-examples --bin kport-forward -- web-0 8080:80 :9090
//! ```
//!
//! As kubectl, it listens on `localhost` by default: 127.0.0.1 and ::1, at the same port
//! (either may fail, not both). `--address` takes a comma-separated list of IP addresses and
//! `localhost`, each of which must then be listened on. It prints `Forwarding from ADDRESS:LOCAL
//! -> REMOTE` for each port and address (a `LOCAL` left out or 0 is a free port, the same on
//! every address), then runs until interrupted. As kubectl, a port it cannot listen on is
//! reported on stderr (`Unable to listen on port ...`) and the others are forwarded; it fails only
//! when it can listen on none. A pod that is not running is refused, as kubectl refuses it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::process::ExitCode;

use kclient::api::core::v1::Pod;
use kclient::kubernetes::Api;
use kclient::rest::{Client, Config};
use kclient_examples::outln;

const USAGE: &str = "usage: kport-forward [-n NAMESPACE] [--address IP|localhost[,...]] POD [LOCAL:]REMOTE [[LOCAL:]REMOTE...]";

struct Args {
    namespace: Option<String>,
    addresses: Vec<ListenAddress>,
    pod: String,
    ports: Vec<(u16, u16)>,
}

/// An address to listen on, and whether it may fail: `localhost`'s two loopback addresses
/// need only one of them (kubectl's failure mode "all"), an address named needs itself
/// ("any").
struct ListenAddress {
    ip: IpAddr,
    may_fail: bool,
}

/// `--address`'s list as kubectl's `parseAddresses` reads it: `localhost` is 127.0.0.1 and ::1
/// where not named already, an address named must be listened on (also when `localhost` came
/// first), each address once, in the order of their text.
fn addresses(list: &str) -> Result<Vec<ListenAddress>, String> {
    let mut parsed: Vec<(String, ListenAddress)> = Vec::new();
    // `named` replaces an entry, as client-go's map assignment does; a loopback of
    // `localhost` is added only where there is none.
    let mut add = |text: String, ip: IpAddr, named: bool| {
        let address = ListenAddress {
            ip,
            may_fail: !named,
        };
        match parsed.iter_mut().find(|(t, _)| *t == text) {
            Some(entry) if named => entry.1 = address,
            Some(_) => {}
            None => parsed.push((text, address)),
        }
    };
    for text in list.split(',') {
        if text == "localhost" {
            add("127.0.0.1".into(), Ipv4Addr::LOCALHOST.into(), false);
            add("::1".into(), Ipv6Addr::LOCALHOST.into(), false);
        } else {
            let ip = text
                .parse()
                .map_err(|_| format!("{text} is not a valid IP"))?;
            add(text.to_owned(), ip, true);
        }
    }
    parsed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(parsed.into_iter().map(|(_, a)| a).collect())
}

fn port(text: &str) -> Result<u16, String> {
    text.parse().map_err(|_| format!("{text:?} is not a port"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut namespace, mut listen, mut pod, mut ports) =
        (None, addresses("localhost")?, None, Vec::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-n" | "--namespace" => namespace = Some(args.next().ok_or("-n needs a value")?),
            "--address" => {
                listen = addresses(&args.next().ok_or("--address needs a value")?)?;
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
        addresses: listen,
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
    // Fail early, as kubectl does, when the pod does not exist or does not run.
    let pod = pods.get(&args.pod, &Default::default()).await?;
    let phase = pod.status.and_then(|s| s.phase).unwrap_or_default();
    if phase != "Running" {
        return Err(format!(
            "unable to forward port because pod is not running. Current status={phase}"
        )
        .into());
    }
    // Port by port, as client-go's port forwarder: the first address listened on picks a free
    // port, the others listen on the same. A port that cannot be listened on is reported and
    // the others go on; only when none can does the program fail.
    let mut listeners = Vec::new();
    let mut any_port = false;
    for &(local, remote) in &args.ports {
        let mut local = local;
        let mut errors = Vec::new();
        let (mut loopback_bound, mut loopback_failed, mut named_failed) = (false, false, false);
        for address in &args.addresses {
            match pods
                .port_forward_listen(&args.pod, address.ip, &[(local, remote)])
                .await
            {
                Ok(listener) => {
                    let (at, _) = listener.local_addresses()[0];
                    local = at.port();
                    outln!("Forwarding from {at} -> {remote}");
                    listeners.push(listener);
                    loopback_bound |= address.may_fail;
                }
                Err(e) => {
                    errors.push(e.to_string());
                    loopback_failed |= address.may_fail;
                    named_failed |= !address.may_fail;
                }
            }
        }
        if named_failed || (loopback_failed && !loopback_bound) {
            eprintln!(
                "Unable to listen on port {local}: Listeners failed to create with the following errors: [{}]",
                errors.join(" ")
            );
        } else {
            any_port = true;
        }
    }
    if !any_port {
        let ports: Vec<String> = args
            .ports
            .iter()
            .map(|(local, remote)| format!("{{{local} {remote}}}"))
            .collect();
        return Err(format!(
            "unable to listen on any of the requested ports: [{}]",
            ports.join(" ")
        )
        .into());
    }
    let any_ends =
        futures_util::future::select_all(listeners.into_iter().map(|l| Box::pin(l.wait())));
    tokio::select! {
        _ = any_ends => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(list: &str) -> Vec<(IpAddr, bool)> {
        addresses(list)
            .expect("valid addresses")
            .into_iter()
            .map(|a| (a.ip, a.may_fail))
            .collect()
    }

    /// As client-go's `parseAddresses`: `localhost` adds the loopbacks not yet named, which
    /// may fail; an address named itself must be listened on, also after `localhost`.
    #[test]
    fn an_address_named_must_be_listened_on_also_after_localhost() {
        let v4: IpAddr = Ipv4Addr::LOCALHOST.into();
        let v6: IpAddr = Ipv6Addr::LOCALHOST.into();
        assert_eq!(parsed("localhost"), [(v4, true), (v6, true)]);
        assert_eq!(parsed("127.0.0.1,localhost"), [(v4, false), (v6, true)]);
        assert_eq!(parsed("localhost,127.0.0.1"), [(v4, false), (v6, true)]);
        assert_eq!(parsed("localhost,::1,localhost"), [(v4, true), (v6, false)]);
        assert!(addresses("localhost,nope").is_err());
    }
}
