//! The guided tour behind `network-controller --demo` (and `scripts/demo`): install the CRD,
//! start the controller in a demo namespace, and walk through what a controller is for —
//! creating, following a spec change, repairing drift, refusing an invalid spec, and letting
//! the garbage collector clean up — printing each step as plain lines, with each Network's
//! `Ready` condition. The flagship runs under its manager with probes and metrics on free
//! local ports: the demo prints what `/readyz` answers once the caches have synced and the
//! reconcile counters `/metrics` serves at the end (the hand-written controller has no
//! manager, so `sample-controller --demo` prints neither).
//!
//! The demo reads the cluster through the API (as `kubectl get` would), not through the
//! controller's cache, so what it prints is what any client sees; its waits are
//! `kclient::tools::wait` polls.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use kclient::api::core::v1::{ConfigMap, Namespace};
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions, find_status_condition,
};
use kclient::cache::CancellationToken;
use kclient::kubernetes::{Api, Clientset, Patch};
use kclient::rest::{Client, Config};
use kclient::tools::wait::poll_until_timeout;
use serde_json::json;
use tokio::sync::broadcast;

use crate::error::{ApiContext, Error};
use crate::network::config_map::{config_map_name, controlling_network};
use crate::network::controller::NetworkController;
use crate::network::crd::{CrdInstall, install_crd};
use crate::network::http_get::http_get;
use crate::network::implementation::{AnyNetworkController, Implementation};
use crate::network::options::{NetworkControllerOptions, apply_controller_rate_limits};
use crate::network::sync_event::{SyncEvent, SyncOutcome};
use crate::network::types::{Network, READY_CONDITION};
use crate::outln;

/// How the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The namespace to work in; created if missing, and deleted afterwards if the demo
    /// created it.
    pub namespace: String,
    /// The controller's worker count.
    pub workers: usize,
    /// How long any one step may take before the demo fails.
    pub step_timeout: Duration,
    /// Which controller runs: the flagship on the runtime (`network-controller --demo`) or the
    /// hand-written one (`sample-controller --demo`).
    pub implementation: Implementation,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            namespace: "network-demo".to_owned(),
            workers: 2,
            step_timeout: Duration::from_secs(60),
            implementation: Implementation::Runtime,
        }
    }
}

/// Where the demo's manager serves its probes and metrics: a free port on the loopback.
const LOCAL_FREE_PORT: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Prints the controller's reconcile counters as its manager's `/metrics` serves them
/// (controller-runtime's `controller_runtime_reconcile_total`, by result).
async fn print_reconcile_metrics(address: SocketAddr) -> Result<(), Error> {
    let metrics = http_get(address, "/metrics")
        .await
        .map_err(|e| Error::io(format!("reading http://{address}/metrics"), e))?;
    outln!(
        "The manager's /metrics ({}), the controller's reconciles by result:",
        metrics.status
    );
    let controller = format!(
        "controller=\"{}\"",
        crate::network::config_map::CONTROLLER_NAME
    );
    // Sorted: the registry's order of a family's series is not fixed.
    let mut lines: Vec<&str> = metrics
        .body
        .lines()
        .filter(|line| {
            line.starts_with("controller_runtime_reconcile_total{") && line.contains(&controller)
        })
        .collect();
    lines.sort_unstable();
    for line in lines {
        outln!("  {line}");
    }
    Ok(())
}

/// The Networks the demo creates: name, cidr, gateway.
const NET_A: (&str, &str, &str) = ("net-a", "10.10.0.0/16", "10.10.0.1");
const NET_B: (&str, &str, &str) = ("net-b", "fd00:10::/64", "fd00:10::1");
const NET_BAD: (&str, &str, &str) = ("net-bad", "10.20.0.0/16", "192.168.0.1");
const NEW_GATEWAY: &str = "10.10.1.1";

/// Runs the whole demo against the cluster `config` names, printing to stdout; cleans up
/// what it created. The controller logs its own actions through `tracing`.
///
/// The controller and the demo's own requests use separate clients, so that the demo's
/// polling does not eat into the controller's client-side rate limit (kube-controller-manager's
/// 20 QPS, burst 30, see [`apply_controller_rate_limits`]) and the times it prints are the
/// controller's; the demo's own client is not throttled.
pub async fn run_demo(config: Config, options: DemoOptions) -> Result<(), Error> {
    let mut controller_config = config.clone();
    apply_controller_rate_limits(&mut controller_config);
    let client = Client::new(controller_config).map_err(Error::config)?;
    // The observer polls every 20 ms; unthrottled, so its own limiter does not skew the times.
    let mut observer_config = config;
    observer_config.qps = -1.0;
    let observer = Client::new(observer_config).map_err(Error::config)?;
    let demo = Demo {
        clientset: Clientset::new(observer.clone()),
        networks: Api::namespaced(observer.clone(), &options.namespace),
        config_maps: Api::namespaced(observer, &options.namespace),
        options,
    };
    let ns = demo.options.namespace.clone();
    let timeout = demo.options.step_timeout;
    outln!("Network controller demo, in namespace {ns}");
    outln!();

    outln!("[1/7] Installing the Network CustomResourceDefinition (samplecrd.k8s.io/v1)");
    let installed = install_crd(&demo.clientset, timeout).await?;
    outln!(
        "      {}; it is Established",
        match installed {
            CrdInstall::Created => "created it",
            CrdInstall::Updated => "updated it (status subresource and schema)",
            CrdInstall::Unchanged => "it was already installed",
        }
    );
    let created_namespace = demo.prepare_namespace().await?;

    outln!(
        "[2/7] Starting the controller: informers for Networks and ConfigMaps in {ns}, {} workers",
        demo.options.workers
    );
    let controller_options = NetworkControllerOptions {
        namespace: Some(ns.clone()),
        workers: demo.options.workers,
        ..NetworkControllerOptions::default()
    };
    // The flagship runs under a manager: the demo has it serve its probes and metrics on free
    // local ports, to read them.
    let controller = match demo.options.implementation {
        Implementation::Runtime => AnyNetworkController::Runtime(
            NetworkController::new(client, controller_options)?
                .with_health_probes(LOCAL_FREE_PORT)
                .with_metrics(LOCAL_FREE_PORT),
        ),
        implementation => AnyNetworkController::new(implementation, client, controller_options)?,
    };
    let mut events = controller.subscribe();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn({
        let (controller, shutdown) = (controller.clone(), shutdown.clone());
        async move { controller.run(shutdown).await }
    });
    let started = Instant::now();
    wait_for("the controller's caches to sync", timeout, || async {
        Ok(controller.has_synced())
    })
    .await?;
    outln!(
        "      caches synced in {}; workers running",
        millis(started.elapsed())
    );
    if let Some(address) = controller.health_probe_addr() {
        let readyz = http_get(address, "/readyz?verbose")
            .await
            .map_err(|e| Error::io(format!("reading http://{address}/readyz"), e))?;
        outln!(
            "      the manager's readiness probe, GET /readyz?verbose: {}",
            readyz.status
        );
        for line in readyz.body.lines() {
            outln!("        {line}");
        }
    }

    let result = demo.tour().await;
    if result.is_ok()
        && let Some(address) = controller.metrics_addr()
    {
        print_reconcile_metrics(address).await?;
    }

    outln!();
    outln!("Stopping the controller (its reconciles in progress finish, its informers stop)");
    shutdown.cancel();
    let stopped = running.await;
    let summary = Summary::from_events(&mut events);
    demo.clean_up(created_namespace).await?;
    let timings = result?;
    match stopped {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err(Error::stopped("the controller finished (it panicked)")),
    }

    outln!();
    outln!("Summary");
    outln!(
        "  reconciles: {} (created {}, updated {}, up to date {}, invalid {}, conflict {}, gone {}, failed {})",
        summary.total,
        summary.created,
        summary.updated,
        summary.up_to_date,
        summary.invalid,
        summary.conflict,
        summary.gone,
        summary.failed
    );
    outln!(
        "  two Networks provisioned in {}",
        millis(timings.provisioned)
    );
    outln!(
        "  a spec change reached its ConfigMap in {}",
        millis(timings.spec_change)
    );
    outln!(
        "  a hand-edited ConfigMap was repaired in {}",
        millis(timings.repair)
    );
    outln!(
        "  an invalid spec was reported in {}",
        millis(timings.invalid)
    );
    outln!(
        "  the garbage collector removed a deleted Network's ConfigMap in {}",
        millis(timings.garbage_collected)
    );
    outln!("Demo complete.");
    Ok(())
}

/// How long each step took.
struct Timings {
    provisioned: Duration,
    spec_change: Duration,
    repair: Duration,
    invalid: Duration,
    garbage_collected: Duration,
}

/// The reconciles the controller reported, by outcome.
#[derive(Default)]
struct Summary {
    total: usize,
    created: usize,
    updated: usize,
    up_to_date: usize,
    invalid: usize,
    conflict: usize,
    gone: usize,
    failed: usize,
}

impl Summary {
    fn from_events(events: &mut broadcast::Receiver<SyncEvent>) -> Summary {
        let mut summary = Summary::default();
        loop {
            let event = match events.try_recv() {
                Ok(event) => event,
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => break,
            };
            summary.total += 1;
            let counter = match event.outcome {
                SyncOutcome::Created => &mut summary.created,
                SyncOutcome::Updated => &mut summary.updated,
                SyncOutcome::UpToDate => &mut summary.up_to_date,
                SyncOutcome::Invalid(_) => &mut summary.invalid,
                SyncOutcome::Conflict(_) => &mut summary.conflict,
                SyncOutcome::Gone => &mut summary.gone,
                SyncOutcome::Failed { .. } => &mut summary.failed,
            };
            *counter += 1;
        }
        summary
    }
}

struct Demo {
    clientset: Clientset,
    networks: Api<Network>,
    config_maps: Api<ConfigMap>,
    options: DemoOptions,
}

impl Demo {
    fn timeout(&self) -> Duration {
        self.options.step_timeout
    }

    /// Creates the namespace if needed (waiting out a previous run's deletion) and removes
    /// the demo's Networks left by an interrupted run. Returns whether it created it.
    async fn prepare_namespace(&self) -> Result<bool, Error> {
        let ns = &self.options.namespace;
        let namespaces = self.clientset.core_v1().namespaces();
        wait_for(
            &format!("namespace {ns} to finish terminating"),
            self.timeout(),
            || async {
                match namespaces.get(ns, &GetOptions::default()).await {
                    Ok(existing) => Ok(!existing.is_being_deleted()),
                    Err(e) if e.is_not_found() => Ok(true),
                    Err(e) => Err(Error::api(format!("reading namespace {ns}"), e)),
                }
            },
        )
        .await?;
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(ns.as_str().into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let created = match namespaces
            .create(&namespace, &CreateOptions::default())
            .await
        {
            Ok(_) => true,
            Err(e) if e.is_already_exists() => false,
            Err(e) => return Err(Error::api(format!("creating namespace {ns}"), e)),
        };
        outln!(
            "      namespace {ns}: {}",
            if created { "created" } else { "already there" }
        );
        for (name, _, _) in [NET_A, NET_B, NET_BAD] {
            self.delete_network_and_wait(name, false).await?;
        }
        Ok(created)
    }

    /// Steps 3 to 7.
    async fn tour(&self) -> Result<Timings, Error> {
        let ns = &self.options.namespace;
        outln!(
            "[3/7] Creating Networks {} ({} via {}) and {} ({} via {})",
            NET_A.0,
            NET_A.1,
            NET_A.2,
            NET_B.0,
            NET_B.1,
            NET_B.2
        );
        let started = Instant::now();
        for (name, cidr, gateway) in [NET_A, NET_B] {
            self.networks
                .create(
                    &Network::new(ns, name, cidr, gateway),
                    &CreateOptions::default(),
                )
                .await
                .context(|| format!("creating Network {ns}/{name}"))?;
        }
        for (name, _, gateway) in [NET_A, NET_B] {
            self.wait_for_config_map(name, gateway).await?;
            self.wait_for_phase(name, "Ready").await?;
        }
        let provisioned = started.elapsed();
        let mut ready_since = None;
        for (name, _, _) in [NET_A, NET_B] {
            self.print_config_map(name).await?;
            let net = self.print_status(name).await?;
            if name == NET_A.0 {
                ready_since = ready_transition_time(&net);
            }
        }

        let patch = json!({"spec": {"gateway": NEW_GATEWAY}});
        outln!(
            "[4/7] Changing {}'s gateway with a merge PATCH {patch}",
            NET_A.0
        );
        let started = Instant::now();
        self.networks
            .patch(NET_A.0, &Patch::Merge(patch), &PatchOptions::default())
            .await
            .context(|| format!("patching Network {ns}/{}", NET_A.0))?;
        self.wait_for_config_map(NET_A.0, NEW_GATEWAY).await?;
        let spec_change = started.elapsed();
        outln!("      the ConfigMap followed in {}:", millis(spec_change));
        self.wait_for_observed_generation(NET_A.0).await?;
        self.print_config_map(NET_A.0).await?;
        let net = self.print_status(NET_A.0).await?;
        outln!(
            "        {}",
            match (ready_since, ready_transition_time(&net)) {
                (Some(before), Some(now)) if before == now =>
                    "Ready stayed True: set_status_condition moves lastTransitionTime only when the status changes",
                _ => "Ready's lastTransitionTime moved (unexpected: it stayed True)",
            }
        );

        let cm_b = config_map_name(NET_B.0);
        let vandalism = json!({"data": {"gateway": "fd00:10::dead", "note": "edited by hand"}});
        outln!("[5/7] Breaking ConfigMap {cm_b} by hand: merge PATCH {vandalism}");
        let started = Instant::now();
        self.config_maps
            .patch(&cm_b, &Patch::Merge(vandalism), &PatchOptions::default())
            .await
            .context(|| format!("patching ConfigMap {ns}/{cm_b}"))?;
        wait_for(
            &format!("ConfigMap {cm_b} to be repaired"),
            self.timeout(),
            || async {
                let cm = self.get_config_map(&cm_b).await?;
                Ok(cm.is_some_and(|cm| {
                    data(&cm, "gateway") == NET_B.2 && data(&cm, "note").is_empty()
                }))
            },
        )
        .await?;
        let repair = started.elapsed();
        outln!(
            "      the controller patched it back in {} (the extra key is gone too):",
            millis(repair)
        );
        self.print_config_map(NET_B.0).await?;

        let (bad, bad_cidr, bad_gateway) = NET_BAD;
        outln!("[6/7] Creating Network {bad} with gateway {bad_gateway} outside {bad_cidr}");
        let started = Instant::now();
        self.networks
            .create(
                &Network::new(ns, bad, bad_cidr, bad_gateway),
                &CreateOptions::default(),
            )
            .await
            .context(|| format!("creating Network {ns}/{bad}"))?;
        self.wait_for_phase(bad, "Invalid").await?;
        let invalid = started.elapsed();
        self.print_status(bad).await?;
        let none = self.get_config_map(&config_map_name(bad)).await?.is_none();
        outln!(
            "      {} (the controller waits for the spec to change instead of retrying)",
            if none {
                "no ConfigMap was created"
            } else {
                "a ConfigMap exists anyway (unexpected)"
            }
        );

        let cm_a = config_map_name(NET_A.0);
        outln!(
            "[7/7] Deleting Network {}; its ConfigMap {cm_a} is owned by it",
            NET_A.0
        );
        let started = Instant::now();
        self.networks
            .delete(NET_A.0, &DeleteOptions::default())
            .await
            .context(|| format!("deleting Network {ns}/{}", NET_A.0))?;
        wait_for(
            &format!("ConfigMap {cm_a} to be garbage-collected"),
            self.timeout(),
            || async { Ok(self.get_config_map(&cm_a).await?.is_none()) },
        )
        .await?;
        let garbage_collected = started.elapsed();
        outln!(
            "      the garbage collector deleted ConfigMap {cm_a} after {}",
            millis(garbage_collected)
        );

        Ok(Timings {
            provisioned,
            spec_change,
            repair,
            invalid,
            garbage_collected,
        })
    }

    /// Deletes the demo's Networks (their ConfigMaps go with them) and the namespace if the
    /// demo created it.
    async fn clean_up(&self, delete_namespace: bool) -> Result<(), Error> {
        let ns = &self.options.namespace;
        outln!(
            "Cleaning up: deleting the demo's Networks; the garbage collector takes their ConfigMaps"
        );
        for (name, _, _) in [NET_A, NET_B, NET_BAD] {
            self.delete_network_and_wait(name, true).await?;
        }
        if delete_namespace {
            outln!("      deleting namespace {ns}");
            match self
                .clientset
                .core_v1()
                .namespaces()
                .delete(ns, &DeleteOptions::default())
                .await
            {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(Error::api(format!("deleting namespace {ns}"), e)),
            }
        }
        Ok(())
    }

    /// Deletes Network `name` if it exists and waits until it is gone; with
    /// `wait_for_config_map`, also until the garbage collector has taken its ConfigMap.
    async fn delete_network_and_wait(
        &self,
        name: &str,
        wait_for_config_map: bool,
    ) -> Result<(), Error> {
        let ns = &self.options.namespace;
        match self.networks.delete(name, &DeleteOptions::default()).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(Error::api(format!("deleting Network {ns}/{name}"), e)),
        }
        wait_for(
            &format!("Network {ns}/{name} to be deleted"),
            self.timeout(),
            || async {
                match self.networks.get(name, &GetOptions::default()).await {
                    Ok(_) => Ok(false),
                    Err(e) if e.is_not_found() => Ok(true),
                    Err(e) => Err(Error::api(format!("reading Network {ns}/{name}"), e)),
                }
            },
        )
        .await?;
        if wait_for_config_map {
            let cm = config_map_name(name);
            wait_for(
                &format!("ConfigMap {ns}/{cm} to be garbage-collected"),
                self.timeout(),
                || async { Ok(self.get_config_map(&cm).await?.is_none()) },
            )
            .await?;
        }
        Ok(())
    }

    async fn get_config_map(&self, name: &str) -> Result<Option<ConfigMap>, Error> {
        match self.config_maps.get(name, &GetOptions::default()).await {
            Ok(cm) => Ok(Some(cm)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(Error::api(
                format!("reading ConfigMap {}/{name}", self.options.namespace),
                e,
            )),
        }
    }

    async fn get_network(&self, name: &str) -> Result<Network, Error> {
        self.networks
            .get(name, &GetOptions::default())
            .await
            .context(|| format!("reading Network {}/{name}", self.options.namespace))
    }

    /// Waits until Network `network`'s ConfigMap exists with `gateway`.
    async fn wait_for_config_map(&self, network: &str, gateway: &str) -> Result<(), Error> {
        let cm = config_map_name(network);
        wait_for(
            &format!("ConfigMap {cm} with gateway {gateway}"),
            self.timeout(),
            || async {
                let found = self.get_config_map(&cm).await?;
                Ok(found.is_some_and(|cm| data(&cm, "gateway") == gateway))
            },
        )
        .await
    }

    async fn wait_for_phase(&self, network: &str, phase: &str) -> Result<(), Error> {
        wait_for(
            &format!("Network {network} to be {phase}"),
            self.timeout(),
            || async {
                let net = self.get_network(network).await?;
                let current = net.status.as_ref().map(|s| s.phase.as_str());
                Ok(current == Some(phase))
            },
        )
        .await
    }

    async fn wait_for_observed_generation(&self, network: &str) -> Result<(), Error> {
        wait_for(
            &format!("Network {network}'s status to observe its generation"),
            self.timeout(),
            || async {
                let net = self.get_network(network).await?;
                let observed = net.status.as_ref().map_or(0, |s| s.observed_generation);
                Ok(observed == net.generation())
            },
        )
        .await
    }

    async fn print_config_map(&self, network: &str) -> Result<(), Error> {
        let name = config_map_name(network);
        let Some(cm) = self.get_config_map(&name).await? else {
            outln!("      ConfigMap {name}: none");
            return Ok(());
        };
        let owner = controlling_network(&cm)
            .map(|(owner, _)| format!("controlled by Network {owner}"))
            .unwrap_or_else(|| "no controller".to_owned());
        let mut entries: Vec<String> = cm
            .data
            .iter()
            .flat_map(|d| d.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        entries.sort();
        outln!("      ConfigMap {name}: {} ({owner})", entries.join(" "));
        Ok(())
    }

    async fn print_status(&self, network: &str) -> Result<Network, Error> {
        let net = self.get_network(network).await?;
        match &net.status {
            Some(s) => {
                outln!(
                    "      Network {network} status: {} (observedGeneration {} of {}): {}",
                    s.phase,
                    s.observed_generation,
                    net.generation(),
                    s.message
                );
                if let Some(ready) = find_status_condition(&s.conditions, READY_CONDITION) {
                    outln!(
                        "        condition {READY_CONDITION}={} reason {} since {}",
                        ready.status,
                        ready.reason,
                        ready.last_transition_time
                    );
                }
            }
            None => outln!("      Network {network} status: none yet"),
        }
        Ok(net)
    }
}

/// When the Network's `Ready` condition last changed status, if it has one.
fn ready_transition_time(network: &Network) -> Option<kclient::apimachinery::meta::Time> {
    let status = network.status.as_ref()?;
    find_status_condition(&status.conditions, READY_CONDITION).map(|c| c.last_transition_time)
}

/// The value of `key` in a ConfigMap's data, or `""`.
fn data<'a>(cm: &'a ConfigMap, key: &str) -> &'a str {
    cm.data
        .as_ref()
        .and_then(|d| d.get(key))
        .map_or("", |v| v.as_str())
}

/// How often the demo polls what it waits for; the times it prints are measured this way, so
/// they are accurate to about this much.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Checks `condition` at once and then every [`POLL_INTERVAL`] until it holds, with
/// apimachinery's `wait.PollUntilContextTimeout` ([`poll_until_timeout`]); a request that
/// fails ends the wait with its error, and `timeout` with one naming `what`.
async fn wait_for<F, Fut>(what: &str, timeout: Duration, condition: F) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, Error>>,
{
    poll_until_timeout(POLL_INTERVAL, timeout, true, condition)
        .await
        .map_err(|e| {
            e.into_condition_error()
                .unwrap_or_else(|| Error::timeout(what))
        })
}

/// `0.123 s`-style durations for the demo's lines.
fn millis(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
