//! Two controllers and a runnable under one manager (kclient-controller's `manager`,
//! controller-runtime's `manager.Manager`): one leader election for both controllers, health
//! and readiness probes, a metrics endpoint, and the ordered graceful shutdown on Ctrl-C.
//!
//! ```sh
//! cargo run -p kclient-controller --example manager -- --namespace default
//! cargo run -p kclient-controller --example manager -- --namespace default --demo
//! ```
//!
//! It uses the current kubeconfig (`KUBECONFIG`, `~/.kube/config` or in-cluster) and competes
//! for the Lease `manager-example` in the namespace as `--identity` (default: the host name
//! and process id), so that two copies elect one leader. Probes are served on
//! `127.0.0.1:8081` (`/healthz`, `/readyz`, `/readyz/informer-sync`, `?verbose`) and metrics
//! on `127.0.0.1:8080/metrics`; `--probe-port 0 --metrics-port 0` pick free ports. Without
//! `--demo` it runs until Ctrl-C. With `--demo` it waits until it leads and `/readyz`
//! passes, prints what the probes and the metrics endpoint answer, and shuts down.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::manager::{Checker, Manager, MetricsRenderer, Runnable};
use kclient_controller::{Action, ControllerBuilder};
use kclient_informers::SharedInformerFactory;
use kclient_rest::Client;
use kclient_tools::{LeaderCallbacks, LeaderElectionConfig, LeaseLock};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Counts of reconciles, shared by both controllers and the metrics endpoint.
#[derive(Default)]
struct Counts {
    config_maps: AtomicU64,
    secrets: AtomicU64,
}

async fn reconcile_config_map(cm: Arc<ConfigMap>, counts: Arc<Counts>) -> Result<Action, String> {
    counts.config_maps.fetch_add(1, Ordering::Relaxed);
    tracing::info!(name = cm.name(), "reconciled ConfigMap");
    Ok(Action::done())
}

async fn reconcile_secret(secret: Arc<Secret>, counts: Arc<Counts>) -> Result<Action, String> {
    counts.secrets.fetch_add(1, Ordering::Relaxed);
    tracing::info!(name = secret.name(), "reconciled Secret");
    Ok(Action::done())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut namespace, mut identity, mut demo) = (None, None, false);
    let (mut probe_port, mut metrics_port) = (8081u16, 8080u16);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--namespace" => namespace = args.next(),
            "--identity" => identity = args.next(),
            "--probe-port" => probe_port = args.next().unwrap_or_default().parse()?,
            "--metrics-port" => metrics_port = args.next().unwrap_or_default().parse()?,
            "--demo" => demo = true,
            other => {
                return Err(format!(
                    "unknown argument {other}; use --namespace NS, --identity ID, \
                     --probe-port P, --metrics-port P and --demo"
                )
                .into());
            }
        }
    }
    let client = Client::try_default()?;
    let namespace = namespace.unwrap_or_else(|| client.default_namespace().to_owned());
    let identity = identity.unwrap_or_else(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".to_owned());
        format!("{host}-{}", std::process::id())
    });

    let counts = Arc::new(Counts::default());
    let metrics_counts = Arc::clone(&counts);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    let election = LeaderElectionConfig::new(
        LeaseLock::new(leases, "manager-example", identity.clone()),
        LeaderCallbacks::new(), // the manager sets its own
    )
    .release_on_cancel(true);
    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(&namespace);
    let mut manager = Manager::builder(factory)
        .leader_election(election)
        .health_probe_bind_address(SocketAddr::from(([127, 0, 0, 1], probe_port)))
        .metrics_bind_address(
            SocketAddr::from(([127, 0, 0, 1], metrics_port)),
            MetricsRenderer::prometheus_text(move || {
                let c = &metrics_counts;
                Ok::<_, std::fmt::Error>(format!(
                    "# TYPE example_reconciles_total counter\n\
                     example_reconciles_total{{kind=\"ConfigMap\"}} {}\n\
                     example_reconciles_total{{kind=\"Secret\"}} {}\n",
                    c.config_maps.load(Ordering::Relaxed),
                    c.secrets.load(Ordering::Relaxed),
                ))
            }),
        )
        .build()?;

    // Both controllers run only while this copy leads.
    let config_maps = ControllerBuilder::new("configmaps", manager.factory())
        .for_::<ConfigMap>()
        .reconcile(reconcile_config_map);
    manager.add_controller(config_maps, Arc::clone(&counts))?;
    let secrets = ControllerBuilder::new("secrets", manager.factory())
        .for_::<Secret>()
        .reconcile(reconcile_secret);
    manager.add_controller(secrets, Arc::clone(&counts))?;

    // A runnable on every copy, leader or not.
    let (led_tx, mut led) = tokio::sync::watch::channel(false);
    manager.add(
        Runnable::new("announce", move |stop| async move {
            tracing::info!("running on every replica until stopped");
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        })
        .needs_leader_election(false),
    )?;
    // A leader runnable that says when this copy leads.
    manager.add(Runnable::new("leading", move |stop| async move {
        let _ = led_tx.send(true);
        stop.cancelled().await;
        Ok::<_, std::io::Error>(())
    }))?;
    manager.add_healthz_check("ping", Checker::ping());

    let probes = manager.health_probe_addr().ok_or("no probe address")?;
    let metrics = manager.metrics_addr().ok_or("no metrics address")?;
    println!("{identity}: probes on http://{probes}, metrics on http://{metrics}/metrics");
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));

    if demo {
        led.wait_for(|leading| *leading).await?;
        for _ in 0..300 {
            if get(probes, "/readyz")
                .await
                .is_ok_and(|r| r.starts_with("HTTP/1.1 200"))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for path in [
            "/readyz?verbose",
            "/healthz?verbose",
            "/readyz/informer-sync",
        ] {
            println!("GET {path}\n{}\n", body(&get(probes, path).await?));
        }
        println!("GET /metrics\n{}", body(&get(metrics, "/metrics").await?));
    } else {
        tokio::signal::ctrl_c().await?;
    }
    shutdown.cancel();
    run.await??;
    println!("{identity}: stopped");
    Ok(())
}

/// `GET path` on `addr`: the whole response.
async fn get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut response = String::new();
    tcp.read_to_string(&mut response).await?;
    Ok(response)
}

/// The status line and body of a response.
fn body(response: &str) -> String {
    let status = response.lines().next().unwrap_or_default();
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    format!("{status}\n{}", body.trim_end())
}
