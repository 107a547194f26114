//! Unit tests of the Network controller's reconcile against kclient-testing's fake API
//! server: no cluster, one process, each test in milliseconds. The controller runs unchanged
//! under its manager (its informers, workqueue, clientset and event recorder all talk to the
//! fake); the tests drive it through the API as a user would and assert both the outcome and
//! the exact requests the controller sent, read from the fake's recorded actions, and read the
//! manager's probe and metrics endpoints.

use std::net::SocketAddr;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{CreateOptions, Error, GetOptions, PatchOptions, PatchType};
use kclient::cache::CancellationToken;
use kclient::kubernetes::{Api, Clientset, Patch};
use kclient::testing::{Action, Fake, Reaction};
use kclient_examples::{
    Network, NetworkController, NetworkControllerOptions, READY_CONDITION, SyncEvent, SyncOutcome,
    http_get, install_crd,
};
use serde_json::json;
use tokio::sync::broadcast;

const NS: &str = "default";

/// A controller running over a fresh fake, with typed clients to act as a user.
struct Fixture {
    fake: Fake,
    controller: NetworkController,
    networks: Api<Network>,
    config_maps: Api<ConfigMap>,
    events: broadcast::Receiver<SyncEvent>,
    shutdown: CancellationToken,
    running: tokio::task::JoinHandle<Result<(), kclient_examples::Error>>,
}

impl Fixture {
    /// Installs the CRD in a new fake (scripting it first with `setup`), starts the
    /// controller and waits for its caches; then forgets the actions of the setup.
    async fn start(setup: impl FnOnce(&Fake)) -> Fixture {
        Fixture::start_with(setup, |controller| controller).await
    }

    /// [`start`](Self::start), with `configure` applied to the controller before it runs.
    async fn start_with(
        setup: impl FnOnce(&Fake),
        configure: impl FnOnce(NetworkController) -> NetworkController,
    ) -> Fixture {
        let fake = Fake::new();
        let client = fake.client();
        install_crd(&Clientset::new(client.clone()), Duration::from_secs(5))
            .await
            .expect("the CRD installs on the fake");
        setup(&fake);
        let controller = NetworkController::new(
            client.clone(),
            NetworkControllerOptions {
                namespace: Some(NS.into()),
                workers: 1,
                resync: Duration::ZERO,
                max_retries: 5,
            },
        )
        .expect("the controller builds");
        let controller = configure(controller);
        let events = controller.subscribe();
        let shutdown = CancellationToken::new();
        let running = tokio::spawn({
            let (controller, shutdown) = (controller.clone(), shutdown.clone());
            async move { controller.run(shutdown).await }
        });
        for _ in 0..1000 {
            if controller.has_synced() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(controller.has_synced(), "the caches sync within 5 s");
        fake.clear_actions();
        Fixture {
            networks: Api::namespaced(client.clone(), NS),
            config_maps: Api::namespaced(client, NS),
            fake,
            controller,
            events,
            shutdown,
            running,
        }
    }

    /// The next reconcile outcome of Network `name`.
    async fn next_outcome(&mut self, name: &str) -> SyncOutcome {
        let key = format!("{NS}/{name}");
        loop {
            let event = tokio::time::timeout(Duration::from_secs(10), self.events.recv())
                .await
                .expect("a reconcile within 10 s")
                .expect("the controller's event channel is open");
            if event.key == key {
                return event.outcome;
            }
        }
    }

    /// The next reconcile of Network `name` that did something: reconciles that found
    /// everything up to date (the echo of the controller's own status write, the ConfigMap's
    /// add event) are skipped.
    async fn next_change(&mut self, name: &str) -> SyncOutcome {
        loop {
            match self.next_outcome(name).await {
                SyncOutcome::UpToDate => {}
                other => return other,
            }
        }
    }

    /// The actions the controller sent (the tests' own requests are read ones, or are
    /// filtered out by resource), leaving out Events.
    fn writes(&self) -> Vec<Action> {
        self.fake
            .actions()
            .into_iter()
            .filter(|a| !matches!(a.verb.as_str(), "get" | "list" | "watch"))
            .filter(|a| a.resource != "events")
            .collect()
    }

    async fn stop(self) {
        self.shutdown.cancel();
        let result = tokio::time::timeout(Duration::from_secs(10), self.running)
            .await
            .expect("the controller stops within 10 s")
            .expect("the controller task does not panic");
        result.expect("a clean shutdown");
    }
}

fn summary(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| {
            let sub = if a.subresource.is_empty() {
                String::new()
            } else {
                format!("/{}", a.subresource)
            };
            let patch = a
                .patch_type
                .map(|p| format!(" ({})", p.content_type()))
                .unwrap_or_default();
            format!("{} {}{sub} {}{patch}", a.verb, a.resource, a.name)
        })
        .collect()
}

#[tokio::test]
async fn a_new_network_gets_its_config_map_and_a_ready_status() {
    let mut f = Fixture::start(|_| {}).await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_outcome("net-a").await, SyncOutcome::Created);
    let cm = f
        .config_maps
        .get("network-net-a", &GetOptions::default())
        .await
        .unwrap();
    let data = serde_json::to_value(&cm).unwrap()["data"].clone();
    assert_eq!(data, json!({"cidr": "10.0.0.0/24", "gateway": "10.0.0.1"}));
    let network = f
        .networks
        .get("net-a", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(network.status.as_ref().unwrap().phase, "Ready");
    // The user's create, the controller's ConfigMap create and its status patch, in this
    // order (later reconciles may follow; they write nothing new, see the spec-change test).
    let writes = f.writes();
    assert_eq!(
        summary(&writes)[..3],
        [
            "create networks ",
            "create configmaps ",
            "patch networks/status net-a (application/merge-patch+json)",
        ]
    );
    assert_eq!(
        writes[1].query_param("fieldManager"),
        Some("network-controller")
    );
    f.stop().await;
}

#[tokio::test]
async fn a_spec_change_is_one_strategic_merge_patch_of_the_config_map() {
    let mut f = Fixture::start(|_| {}).await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_outcome("net-a").await, SyncOutcome::Created);
    f.fake.clear_actions();
    f.networks
        .patch(
            "net-a",
            &Patch::Merge(json!({"spec": {"gateway": "10.0.0.254"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_change("net-a").await, SyncOutcome::Updated);
    // The repair is a strategic merge PATCH of network-net-a carrying the new gateway. The
    // reconcile that follows the controller's own status write may find its ConfigMap cache
    // not yet updated and send the same patch once more (as it would against a server), so
    // the test allows one or two identical patches and nothing else.
    let patches = f.fake.actions_matching("patch", "configmaps");
    assert!(matches!(patches.len(), 1 | 2), "{:?}", summary(&patches));
    for p in &patches {
        assert_eq!(p.name, "network-net-a");
        assert_eq!(p.patch_type, Some(PatchType::StrategicMerge));
        assert_eq!(p.body.as_ref().unwrap()["data"]["gateway"], "10.0.0.254");
    }
    f.stop().await;
}

#[tokio::test]
async fn drift_in_the_config_map_is_repaired() {
    let mut f = Fixture::start(|_| {}).await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_outcome("net-a").await, SyncOutcome::Created);
    f.fake.clear_actions();
    // Someone edits the ConfigMap by hand.
    f.config_maps
        .patch(
            "network-net-a",
            &Patch::Merge(json!({"data": {"cidr": "192.168.0.0/16"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_change("net-a").await, SyncOutcome::Updated);
    let cm = f
        .config_maps
        .get("network-net-a", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&cm).unwrap()["data"]["cidr"],
        "10.0.0.0/24"
    );
    // One strategic merge PATCH of network-net-a restores the cidr (a second identical one
    // may follow from a lagging cache, see above); no other write touches the ConfigMap.
    let writes: Vec<Action> = f
        .fake
        .actions()
        .into_iter()
        .filter(|a| {
            a.resource == "configmaps" && a.verb != "get" && a.verb != "list" && a.verb != "watch"
        })
        .collect();
    let repairs: Vec<&Action> = writes
        .iter()
        .filter(|a| a.query_param("fieldManager") == Some("network-controller"))
        .collect();
    assert!(matches!(repairs.len(), 1 | 2), "{:?}", summary(&writes));
    for r in &repairs {
        assert_eq!(r.name, "network-net-a");
        assert_eq!(r.patch_type, Some(PatchType::StrategicMerge));
        assert_eq!(r.body.as_ref().unwrap()["data"]["cidr"], "10.0.0.0/24");
    }
    f.stop().await;
}

#[tokio::test]
async fn an_invalid_spec_is_reported_in_the_status_and_provisions_nothing() {
    let mut f = Fixture::start(|_| {}).await;
    f.networks
        .create(
            &Network::new(NS, "bad", "not-a-cidr", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let outcome = f.next_outcome("bad").await;
    assert!(matches!(outcome, SyncOutcome::Invalid(_)), "{outcome:?}");
    let network = f.networks.get("bad", &GetOptions::default()).await.unwrap();
    assert_eq!(network.status.as_ref().unwrap().phase, "Invalid");
    assert!(f.fake.actions_matching("create", "configmaps").is_empty());
    let status_patches = f.fake.actions_matching("patch", "networks/status");
    assert!(!status_patches.is_empty());
    for p in &status_patches {
        assert_eq!(p.body.as_ref().unwrap()["status"]["phase"], "Invalid");
    }
    f.stop().await;
}

#[tokio::test]
async fn a_name_too_long_for_its_config_map_is_reported_invalid_and_not_retried() {
    let mut f = Fixture::start(|_| {}).await;
    // A valid Network name (253 characters at most) whose ConfigMap name, `network-` and
    // 246 characters, the API server would refuse on every create.
    let name = "n".repeat(246);
    f.networks
        .create(
            &Network::new(NS, &name, "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let outcome = f.next_outcome(&name).await;
    let SyncOutcome::Invalid(message) = &outcome else {
        panic!("expected Invalid, got {outcome:?}");
    };
    assert!(message.contains("at most 245 characters"), "{message}");
    let network = f.networks.get(&name, &GetOptions::default()).await.unwrap();
    assert_eq!(network.status.as_ref().unwrap().phase, "Invalid");
    assert!(f.fake.actions_matching("create", "configmaps").is_empty());
    f.stop().await;
}

#[tokio::test]
async fn a_foreign_config_map_of_the_same_name_is_left_alone() {
    let mut f = Fixture::start(|fake| {
        fake.tracker()
            .add_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "network-net-a", "namespace": NS},
                "data": {"owner": "someone else"}}))
            .unwrap();
    })
    .await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let outcome = f.next_outcome("net-a").await;
    assert!(matches!(outcome, SyncOutcome::Conflict(_)), "{outcome:?}");
    let network = f
        .networks
        .get("net-a", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(network.status.as_ref().unwrap().phase, "Conflict");
    let writes = f.writes();
    assert!(
        writes.iter().all(|a| a.resource != "configmaps"),
        "the foreign ConfigMap is not written: {:?}",
        summary(&writes)
    );
    let cm = f
        .config_maps
        .get("network-net-a", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&cm).unwrap()["data"]["owner"],
        "someone else"
    );
    f.stop().await;
}

#[tokio::test]
async fn an_api_error_is_retried_with_backoff() {
    let mut f = Fixture::start(|fake| {
        let failures = std::sync::atomic::AtomicUsize::new(0);
        // The first ConfigMap create fails with a 500; the retry reaches the tracker.
        fake.prepend_reactor("create", "configmaps", move |_| {
            if failures.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                Reaction::Error(Error::new_internal_error("etcd leader changed"))
            } else {
                Reaction::Continue
            }
        });
    })
    .await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    match f.next_outcome("net-a").await {
        SyncOutcome::Failed { error, will_retry } => {
            assert!(will_retry);
            assert!(error.contains("etcd leader changed"), "{error}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(f.next_outcome("net-a").await, SyncOutcome::Created);
    // The failed create and the retry that succeeded (a reconcile reading a lagging cache
    // may try once more and get AlreadyExists).
    assert!(f.fake.actions_matching("create", "configmaps").len() >= 2);
    assert!(
        f.config_maps
            .get("network-net-a", &GetOptions::default())
            .await
            .is_ok()
    );
    f.stop().await;
}

/// A free port on the loopback, for the manager's servers.
const LOCAL: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

#[tokio::test]
async fn the_status_carries_a_ready_condition_that_follows_the_phase() {
    let mut f = Fixture::start(|_| {}).await;
    f.networks
        .create(
            &Network::new(NS, "net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_outcome("net-a").await, SyncOutcome::Created);
    let network = f
        .networks
        .get("net-a", &GetOptions::default())
        .await
        .unwrap();
    let status = network.status.unwrap();
    assert_eq!(status.conditions.len(), 1, "{:?}", status.conditions);
    let ready = &status.conditions[0];
    assert_eq!(
        (
            ready.type_.as_str(),
            ready.status.as_str(),
            ready.reason.as_str()
        ),
        (READY_CONDITION, "True", "Provisioned")
    );
    assert_eq!(
        ready.observed_generation,
        Some(network.metadata.generation.unwrap_or(0))
    );
    assert!(!ready.last_transition_time.is_zero());

    // An invalid spec turns it False, with the reason the Warning event has.
    f.networks
        .patch(
            "net-a",
            &Patch::Merge(json!({"spec": {"gateway": "192.168.0.1"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert!(matches!(
        f.next_change("net-a").await,
        SyncOutcome::Invalid(_)
    ));
    let patches = f.fake.actions_matching("patch", "networks/status");
    let last = patches.last().unwrap().body.as_ref().unwrap();
    let conditions = &last["status"]["conditions"];
    assert_eq!(conditions.as_array().map(Vec::len), Some(1), "{conditions}");
    assert_eq!(conditions[0]["status"], "False");
    assert_eq!(conditions[0]["reason"], "InvalidSpec");
    assert!(
        conditions[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("outside cidr")),
        "{conditions}"
    );
    f.stop().await;
}

#[tokio::test]
async fn the_manager_serves_readiness_and_the_reconcile_metrics() {
    let mut f = Fixture::start_with(
        |_| {},
        |controller| controller.with_health_probes(LOCAL).with_metrics(LOCAL),
    )
    .await;
    let probes = f.controller.health_probe_addr().expect("probes are served");
    let metrics = f.controller.metrics_addr().expect("metrics are served");
    assert_ne!(probes.port(), 0, "the port picked is told");

    // The caches have synced (the fixture waited): ready, with the manager's check.
    let readyz = http_get(probes, "/readyz?verbose").await.unwrap();
    assert_eq!(readyz.status, 200, "{}", readyz.body);
    assert!(
        readyz.body.contains("[+]informer-sync ok"),
        "{}",
        readyz.body
    );
    let healthz = http_get(probes, "/healthz").await.unwrap();
    assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok"));

    f.networks
        .create(
            &Network::new(NS, "net-m", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(f.next_outcome("net-m").await, SyncOutcome::Created);
    let answer = http_get(metrics, "/metrics").await.unwrap();
    assert_eq!(answer.status, 200);
    // The metrics registry is the process's: other tests' reconciles count too, so only
    // the presence of the series is asserted.
    assert!(
        answer.body.lines().any(|line| line.starts_with(
            r#"controller_runtime_reconcile_total{controller="network-controller",result="success"}"#
        )),
        "{}",
        answer.body
    );
    f.stop().await;
    assert!(
        http_get(probes, "/healthz").await.is_err(),
        "the probe server stops with the manager"
    );
}
