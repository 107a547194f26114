//! The command line both Network controller binaries take (`network-controller`, on the
//! runtime, and `sample-controller`, by hand): one parser, one usage text.

/// The usage text of `program`; `leader_elect` says what `--leader-elect` does for it.
pub fn controller_usage(program: &str, leader_elect: &str) -> String {
    format!(
        "\
usage: {program} [--namespace NS] [--workers N] [--leader-elect] [--demo]

  --namespace NS  watch and reconcile only namespace NS (default: every namespace;
                  with --demo: the demo's namespace, network-demo)
  --workers N     worker tasks reconciling in parallel (default 2)
  --leader-elect  {leader_elect}
                  (in NS, or default), so that several replicas can run
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
}

/// Parses the arguments after the program name; `Ok(None)` means `--help`.
pub fn parse_controller_args(
    mut args: impl Iterator<Item = String>,
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
            "--demo" => parsed.demo = true,
            "--leader-elect" => parsed.leader_elect = true,
            "--help" | "-h" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<ControllerArgs>, String> {
        parse_controller_args(args.iter().map(|s| s.to_string()))
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
}
