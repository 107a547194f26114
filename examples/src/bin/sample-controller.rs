//! The flagship's hand-written twin: the custom controller for the seed article's `Network`
//! resource (`samplecrd.k8s.io/v1`) written on client-go's parts, the way client-go's
//! sample-controller is (`network-controller` is the same controller on kclient's controller
//! runtime). It installs the CRD,
//! watches Networks and ConfigMaps through a shared informer factory, and keeps a ConfigMap
//! `network-<name>` (the stand-in for a real network) in line with each Network's spec,
//! reporting in the Network's status. The logic lives in the library
//! (`kclient_examples::SampleController`), shared with the integration tests.
//!
//! ```sh
//! cargo run -p kclient-examples --bin sample-controller -- --demo
//! cargo run -p kclient-examples --bin sample-controller -- --namespace default --workers 4
//! ```
//!
//! Flags: `--namespace NS` (default: every namespace), `--workers N` (default 2),
//! `--leader-elect` (run only while holding the Lease `network-controller`), `--demo`
//! (run the tour in namespace `network-demo` and exit), `--help`. The cluster comes from
//! `KUBECONFIG` (or `~/.kube/config`, or the pod's service account); `RUST_LOG` adjusts the
//! log (default `info` for the controller, `warn` for the libraries). Without `--demo` it runs
//! until Ctrl-C or SIGTERM, then stops its informers and drains its queue.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kclient::cache::CancellationToken;
use kclient::kubernetes::Clientset;
use kclient::rest::{Client, Config};
use kclient::tools::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use kclient_examples::outln;
use kclient_examples::{
    CONTROLLER_NAME, ControllerArgs, CrdInstall, DemoOptions, Implementation,
    NetworkControllerOptions, SampleController, apply_controller_rate_limits, controller_usage,
    error_chain, install_crd, parse_controller_args, run_demo,
};
use tracing_subscriber::EnvFilter;

/// What `--leader-elect` does, for the usage text.
const LEADER_ELECT: &str = "run the controller only while holding the Lease network-controller";

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_controller_args(std::env::args().skip(1), false) {
        Ok(Some(args)) => args,
        Ok(None) => {
            outln!(
                "{}",
                controller_usage("sample-controller", LEADER_ELECT, false)
            );
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!(
                "sample-controller: {message}\n\n{}",
                controller_usage("sample-controller", LEADER_ELECT, false)
            );
            return ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,kclient_examples=info,sample_controller=info"));
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
            eprintln!("sample-controller: {}", error_chain(err.as_ref()));
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
            implementation: Implementation::HandWritten,
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
    if args.leader_elect {
        return run_with_leader_election(client, options, shutdown).await;
    }
    let controller = SampleController::new(client, options)?;
    match controller.run(shutdown.clone()).await {
        // Stopped by a signal before the caches synced: a normal early stop.
        Err(e) if e.is_stopped() && shutdown.is_cancelled() => {
            tracing::info!("{e}");
            Ok(())
        }
        result => Ok(result?),
    }
}

/// Competes for the Lease `network-controller` and runs the controller while leading
/// (client-go's `leaderelection.RunOrDie` around sample-controller's `Run`).
///
/// On a signal the controller stops first (informers, then the drained queue) and only then
/// is the Lease released, so two replicas never reconcile at once. A replica that loses the
/// Lease stops its controller and exits, as client-go's controllers do.
async fn run_with_leader_election(
    client: Client,
    options: NetworkControllerOptions,
    shutdown: CancellationToken,
) -> Result<(), Box<dyn std::error::Error>> {
    let identity = format!(
        "{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "network-controller".to_owned()),
        std::process::id()
    );
    let lease_namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let lock = LeaseLock::new(
        Clientset::new(client.clone())
            .coordination_v1()
            .leases(&lease_namespace),
        CONTROLLER_NAME,
        identity.clone(),
    );
    // Cancelled once the controller has stopped (or on a signal before it ever started).
    let elector_cancel = CancellationToken::new();
    let started = Arc::new(AtomicBool::new(false));
    let callbacks = LeaderCallbacks::new()
        .on_started_leading({
            let (elector_cancel, shutdown, started) = (
                elector_cancel.clone(),
                shutdown.clone(),
                Arc::clone(&started),
            );
            move |leading: CancellationToken| {
                started.store(true, Ordering::SeqCst);
                let (client, options) = (client.clone(), options.clone());
                let (elector_cancel, shutdown) = (elector_cancel.clone(), shutdown.clone());
                async move {
                    tracing::info!("leading; starting the controller");
                    let stop = CancellationToken::new();
                    tokio::spawn({
                        let stop = stop.clone();
                        async move {
                            tokio::select! {
                                () = leading.cancelled() => tracing::warn!("leadership lost"),
                                () = shutdown.cancelled() => {}
                            }
                            stop.cancel();
                        }
                    });
                    match SampleController::new(client, options) {
                        Ok(controller) => {
                            match controller.run(stop).await {
                                // Stopped before the caches synced: a normal early stop.
                                Err(e) if e.is_stopped() => tracing::info!("{e}"),
                                Err(e) => tracing::error!("{}", error_chain(&e)),
                                Ok(()) => {}
                            }
                        }
                        Err(e) => tracing::error!("{}", error_chain(&e)),
                    }
                    elector_cancel.cancel();
                }
            }
        })
        .on_stopped_leading(|| tracing::info!("no longer leading"))
        .on_new_leader({
            let identity = identity.clone();
            move |leader: &str| {
                if !leader.is_empty() && leader != identity {
                    tracing::info!("{leader} leads; standing by");
                }
            }
        });
    let mut config = LeaderElectionConfig::new(lock, callbacks);
    config.release_on_cancel = true;
    config.name = CONTROLLER_NAME.to_owned();
    let elector = LeaderElector::new(config)?;
    tokio::spawn({
        let (elector_cancel, shutdown) = (elector_cancel.clone(), shutdown.clone());
        async move {
            shutdown.cancelled().await;
            // Not leading: nothing to stop first. Leading: the controller path cancels.
            if !started.load(Ordering::SeqCst) {
                elector_cancel.cancel();
            }
        }
    });
    tracing::info!("{identity} competing for Lease {lease_namespace}/{CONTROLLER_NAME}");
    elector.run(elector_cancel).await;
    Ok(())
}
