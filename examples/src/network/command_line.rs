//! The command line both Network controller binaries take (`network-controller`, on the
//! runtime under a manager, and `sample-controller`, by hand): one parser, one usage text;
//! the manager's flags (probes, metrics) only for the program that has a manager.

use std::net::SocketAddr;

/// The usage text of `program`; `leader_elect` says what `--leader-elect` does for it, and
/// `manager` whether it takes the manager's `--health-probe-bind-address` and
/// `--metrics-bind-address`.
pub fn controller_usage(program: &str, leader_elect: &str, manager: bool) -> String {
    let (manager_synopsis, manager_flags) = if manager {
        (
            " [--health-probe-bind-address ADDR]\n       [--metrics-bind-address ADDR]",
            "
  --health-probe-bind-address ADDR
                  serve /healthz and /readyz on ADDR, such as 127.0.0.1:8081 or
                  0.0.0.0:8081 (port 0: a free port); off by default
  --metrics-bind-address ADDR
                  serve Prometheus metrics on ADDR/metrics, such as 127.0.0.1:8080;
                  off by default",
        )
    } else {
        ("", "")
    };
    format!(
        "\
usage: {program} [--namespace NS] [--workers N] [--leader-elect] [--demo]{manager_synopsis}

  --namespace NS  watch and reconcile only namespace NS (default: every namespace;
                  with --demo: the demo's namespace, network-demo)
  --workers N     worker tasks reconciling in parallel (default 2)
  --leader-elect  {leader_elect}
                  (in NS, or default), so that several replicas can run{manager_flags}
  --demo          install the CRD, walk through create / update / repair / invalid /
                  delete in the demo namespace, print a summary, clean up and exit
  --help          this text

The cluster comes from KUBECONFIG (or ~/.kube/config, or the in-cluster service account)."
    )
}

/// The parsed command line.
#[derive(Debug, Default)]
pub struct ControllerArgs {
    /// `--namespace`: the one namespace to watch.
    pub namespace: Option<String>,
    /// `--workers`: reconciles in parallel.
    pub workers: Option<usize>,
    /// `--demo`: run the guided tour and exit.
    pub demo: bool,
    /// `--leader-elect`: reconcile only while holding the Lease.
    pub leader_elect: bool,
    /// `--health-probe-bind-address`: where the manager serves `/healthz` and `/readyz`.
    pub health_probe_bind_address: Option<SocketAddr>,
    /// `--metrics-bind-address`: where the manager serves `/metrics`.
    pub metrics_bind_address: Option<SocketAddr>,
}

/// Parses the arguments after the program name; `Ok(None)` means `--help`. With `manager`
/// the manager's flags are taken too.
pub fn parse_controller_args(
    mut args: impl Iterator<Item = String>,
    manager: bool,
) -> Result<Option<ControllerArgs>, String> {
    let mut parsed = ControllerArgs::default();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg, None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--namespace" | "-n" => parsed.namespace = Some(value("--namespace")?),
            "--workers" => {
                let text = value("--workers")?;
                let workers = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--workers takes a positive number, not {text:?}"))?;
                parsed.workers = Some(workers);
            }
            "--health-probe-bind-address" if manager => {
                parsed.health_probe_bind_address = Some(socket_addr(
                    "--health-probe-bind-address",
                    &value("--health-probe-bind-address")?,
                )?);
            }
            "--metrics-bind-address" if manager => {
                parsed.metrics_bind_address = Some(socket_addr(
                    "--metrics-bind-address",
                    &value("--metrics-bind-address")?,
                )?);
            }
            "--demo" => parsed.demo = true,
            "--leader-elect" => parsed.leader_elect = true,
            "--help" | "-h" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(parsed))
}

/// An address such as `127.0.0.1:8081`, or `:8081` for every interface (Go's form, which
/// controller-runtime's flags take).
fn socket_addr(flag: &str, text: &str) -> Result<SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.parse().map_err(|_| {
        format!("{flag} takes an address and port such as 127.0.0.1:8081 or :8081, not {text:?}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<ControllerArgs>, String> {
        parse_controller_args(args.iter().map(|s| s.to_string()), true)
    }

    #[test]
    fn flags_parse() {
        let args = parse(&[
            "--namespace",
            "ops",
            "--workers=4",
            "--demo",
            "--leader-elect",
        ])
        .unwrap()
        .unwrap();
        assert!(args.leader_elect);
        assert_eq!(args.namespace.as_deref(), Some("ops"));
        assert_eq!(args.workers, Some(4));
        assert!(args.demo);
        assert!(parse(&["--help"]).unwrap().is_none());
        assert!(parse(&["--workers", "0"]).unwrap_err().contains("positive"));
        assert!(
            parse(&["--namespace"])
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(parse(&["--bogus"]).unwrap_err().contains("unknown"));
    }

    #[test]
    fn the_manager_flags_parse_only_for_a_program_with_a_manager() {
        let args = parse(&[
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--metrics-bind-address=:8080",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            args.health_probe_bind_address,
            Some("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(
            args.metrics_bind_address,
            Some("0.0.0.0:8080".parse().unwrap())
        );
        assert!(
            parse(&["--metrics-bind-address", "localhost"])
                .unwrap_err()
                .contains("address and port")
        );
        let without = parse_controller_args(
            ["--health-probe-bind-address", ":8081"]
                .map(String::from)
                .into_iter(),
            false,
        );
        assert!(without.unwrap_err().contains("unknown"));
        assert!(controller_usage("x", "y", true).contains("--metrics-bind-address"));
        assert!(!controller_usage("x", "y", false).contains("--metrics-bind-address"));
    }
}
