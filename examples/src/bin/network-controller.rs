//! The flagship example: a custom controller for the seed article's `Network` resource
//! (`samplecrd.k8s.io/v1`), on kclient's controller runtime (`kclient::controller`) under a
//! controller-runtime-style manager, as a kubebuilder project's `main.go` runs its
//! reconciler; `sample-controller` is the same controller written by hand on client-go's
//! parts. It installs the CRD (its schema made from the Rust types), watches Networks and
//! ConfigMaps through the manager's shared informer factory, and keeps a ConfigMap
//! `network-<name>` (the stand-in for a real network) in line with each Network's spec,
//! reporting in the Network's status and its `Ready` condition. The logic lives in the library
//! (`kclient_examples::NetworkController`), shared with the integration tests.
//!
//! ```sh
//! scripts/demo                                        # the guided tour, against the local apiserver
//! cargo run -p kclient-examples --bin network-controller -- --demo
//! cargo run -p kclient-examples --bin network-controller -- --namespace default --workers 4 \
//!     --health-probe-bind-address 127.0.0.1:8081 --metrics-bind-address 127.0.0.1:8080
//! ```
//!
//! Flags: `--namespace NS` (default: every namespace), `--workers N` (default 2),
//! `--leader-elect` (reconcile only while holding the Lease `network-controller`: the
//! manager's election), `--health-probe-bind-address ADDR` (`/healthz`, `/readyz`) and
//! `--metrics-bind-address ADDR` (`/metrics`), both off by default, `--demo` (run the tour in
//! namespace `network-demo` and exit), `--help`. The cluster comes from `KUBECONFIG` (or
//! `~/.kube/config`, or the pod's service account); `RUST_LOG` adjusts the log (default
//! `info` for the controller and the manager, `warn` for the libraries). Without `--demo` it
//! runs until Ctrl-C or SIGTERM, then the manager stops it in order: the controller drains its
//! queue, the Lease is released, the informers and servers stop.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use kclient::kubernetes::Clientset;
use kclient::rest::{Client, Config};
use kclient::tools::{LeaderCallbacks, LeaderElectionConfig, LeaseLock};
use kclient_examples::outln;
use kclient_examples::{
    CONTROLLER_NAME, ControllerArgs, CrdInstall, DemoOptions, NetworkController,
    NetworkControllerOptions, apply_controller_rate_limits, controller_usage, error_chain,
    install_crd, parse_controller_args, run_demo,
};
use tracing_subscriber::EnvFilter;

/// What `--leader-elect` does, for the usage text.
const LEADER_ELECT: &str = "reconcile only while holding the Lease network-controller";

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_controller_args(std::env::args().skip(1), true) {
        Ok(Some(args)) => args,
        Ok(None) => {
            outln!(
                "{}",
                controller_usage("network-controller", LEADER_ELECT, true)
            );
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!(
                "network-controller: {message}\n\n{}",
                controller_usage("network-controller", LEADER_ELECT, true)
            );
            return ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("warn,kclient_examples=info,network_controller=info,kclient_controller=info")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .without_time()
        .with_writer(std::io::stderr)
        .init();

    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("network-controller: {}", error_chain(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run(args: ControllerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::infer()?;
    let workers = args.workers.unwrap_or(2);

    if args.demo {
        let mut options = DemoOptions {
            workers,
            ..DemoOptions::default()
        };
        if let Some(namespace) = args.namespace {
            options.namespace = namespace;
        }
        run_demo(config, options).await?;
        return Ok(());
    }

    let mut config = config;
    apply_controller_rate_limits(&mut config);
    let client = Client::new(config)?;
    match install_crd(&Clientset::new(client.clone()), Duration::from_secs(60)).await? {
        CrdInstall::Created => tracing::info!("installed the Network CRD"),
        CrdInstall::Updated => tracing::info!("updated the Network CRD"),
        CrdInstall::Unchanged => tracing::info!("the Network CRD is installed"),
    }
    let options = NetworkControllerOptions {
        namespace: args.namespace,
        workers,
        ..NetworkControllerOptions::default()
    };
    // SIGINT or SIGTERM stops gracefully; a second one exits at once.
    let shutdown = kclient::signal::shutdown_on_signal();
    let mut controller = NetworkController::new(client.clone(), options.clone())?;
    if args.leader_elect {
        controller = controller.with_leader_election(leader_election(client, &options));
    }
    if let Some(address) = args.health_probe_bind_address {
        controller = controller.with_health_probes(address);
    }
    if let Some(address) = args.metrics_bind_address {
        controller = controller.with_metrics(address);
    }
    match controller.run(shutdown.clone()).await {
        // Stopped by a signal before the caches synced: a normal early stop.
        Err(e) if e.is_stopped() && shutdown.is_cancelled() => {
            tracing::info!("{e}");
            Ok(())
        }
        result => Ok(result?),
    }
}

/// The Lease `network-controller` (in the watched namespace, else `default`) this replica
/// competes for, through the manager's one election. The manager runs the controller only
/// while it holds it, keeps the informers warm meanwhile, and at shutdown stops reconciling
/// before releasing it (`release_on_cancel`, controller-runtime's
/// `LeaderElectionReleaseOnCancel`), so a standby takes over at once.
fn leader_election(client: Client, options: &NetworkControllerOptions) -> LeaderElectionConfig {
    let identity = format!(
        "{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "network-controller".to_owned()),
        std::process::id()
    );
    let lease_namespace = options.namespace.as_deref().unwrap_or("default");
    let lock = LeaseLock::new(
        Clientset::new(client)
            .coordination_v1()
            .leases(lease_namespace),
        CONTROLLER_NAME,
        identity.clone(),
    );
    tracing::info!("{identity} competing for Lease {lease_namespace}/{CONTROLLER_NAME}");
    // The manager sets the callbacks.
    let mut config =
        LeaderElectionConfig::new(lock, LeaderCallbacks::new()).release_on_cancel(true);
    config.name = CONTROLLER_NAME.to_owned();
    config
}
