//! The Network controller against the real apiserver: each test installs the CRD, starts a
//! controller restricted to its own namespace, drives it through the API as a user would, and
//! stops it (checking that shutdown completes).
//!
//! Every test runs against both implementations: `runtime::*` against the flagship
//! `NetworkController` (on `kclient::controller`), `hand_written::*` against
//! `SampleController` (client-go's parts, by hand).
//!
//! They run on kclient's envtest as a user's project would: `TestEnv::builder().start_shared()`
//! starts one local apiserver for this test process (from the cached binary, built from the
//! crate's Go sources if missing), and each test takes its own namespace.

use std::time::{Duration, Instant};

use crate::eventually;
use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, PatchOptions,
    find_status_condition,
};
use kclient::cache::CancellationToken;
use kclient::envtest::{Identity, TestEnv, TestNamespace};
use kclient::kubernetes::{Api, Clientset, Patch};
use kclient_examples::{
    AnyNetworkController, CrdInstall, DemoOptions, Implementation, Network,
    NetworkControllerOptions, READY_CONDITION, SyncEvent, SyncOutcome, install_crd, run_demo,
};
use serde_json::json;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

const TIMEOUT: Duration = Duration::from_secs(30);
/// The garbage collector may take longer than a reconcile.
const GC_TIMEOUT: Duration = Duration::from_secs(90);

/// A running controller in a fresh namespace, with clients to act as a user.
struct Fixture {
    _ns: TestNamespace,
    clientset: Clientset,
    namespace: String,
    networks: Api<Network>,
    config_maps: Api<ConfigMap>,
    controller: AnyNetworkController,
    events: broadcast::Receiver<SyncEvent>,
    shutdown: CancellationToken,
    running: JoinHandle<Result<(), kclient_examples::Error>>,
}

/// The apiserver these tests share, started once for the test process.
async fn envtest() -> TestEnv {
    TestEnv::builder()
        .start_shared()
        .await
        .unwrap_or_else(|e| panic!("starting the envtest apiserver: {e}"))
}

impl Fixture {
    async fn start(implementation: Implementation) -> Fixture {
        Fixture::start_with_resync(implementation, Duration::ZERO).await
    }

    /// A fixture running `implementation`, whose informers resync every `resync`.
    async fn start_with_resync(implementation: Implementation, resync: Duration) -> Fixture {
        let env = envtest().await;
        let ns = env.namespace().await;
        let namespace = ns.name().to_owned();
        let client = env.client(Identity::Admin);
        install_crd(&Clientset::new(client.clone()), TIMEOUT)
            .await
            .expect("installing the Network CRD");
        let controller = AnyNetworkController::new(
            implementation,
            client.clone(),
            NetworkControllerOptions {
                namespace: Some(namespace.clone()),
                workers: 2,
                resync,
                max_retries: 5,
            },
        )
        .expect("creating the controller");
        let events = controller.subscribe();
        let shutdown = CancellationToken::new();
        let running = tokio::spawn({
            let (controller, shutdown) = (controller.clone(), shutdown.clone());
            async move { controller.run(shutdown).await }
        });
        eventually("the controller's caches to sync", TIMEOUT, || async {
            controller.has_synced().then_some(())
        })
        .await;
        Fixture {
            _ns: ns,
            clientset: Clientset::new(client.clone()),
            networks: Api::namespaced(client.clone(), &namespace),
            config_maps: Api::namespaced(client, &namespace),
            namespace,
            controller,
            events,
            shutdown,
            running,
        }
    }

    /// Stops the controller and checks that it stops promptly and cleanly.
    async fn stop(self) {
        self.shutdown.cancel();
        let result = tokio::time::timeout(Duration::from_secs(10), self.running)
            .await
            .expect("the controller stops within 10s of cancellation")
            .expect("the controller task does not panic");
        result.expect("run returns Ok after a clean shutdown");
    }

    fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.namespace)
    }

    async fn create_network(&self, name: &str, cidr: &str, gateway: &str) -> Network {
        self.networks
            .create(
                &Network::new(&self.namespace, name, cidr, gateway),
                &CreateOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("creating Network {name}: {e}"))
    }

    async fn network(&self, name: &str) -> Network {
        self.networks
            .get(name, &GetOptions::default())
            .await
            .unwrap_or_else(|e| panic!("reading Network {name}: {e}"))
    }

    async fn config_map(&self, name: &str) -> Option<ConfigMap> {
        match self.config_maps.get(name, &GetOptions::default()).await {
            Ok(cm) => Some(cm),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("reading ConfigMap {name}: {e}"),
        }
    }

    /// Waits until ConfigMap `name` has exactly `data`.
    async fn wait_for_data(&self, name: &str, expected: &[(&str, &str)]) -> ConfigMap {
        eventually(
            &format!("ConfigMap {name} to hold {expected:?}"),
            TIMEOUT,
            || async {
                self.config_map(name)
                    .await
                    .filter(|cm| data_of(cm) == sorted(expected))
            },
        )
        .await
    }

    /// Waits until Network `name` reports `phase` for its current generation.
    async fn wait_for_phase(&self, name: &str, phase: &str) -> Network {
        eventually(
            &format!("Network {name} to be {phase}"),
            TIMEOUT,
            || async {
                let net = self.network(name).await;
                let status = net.status.clone().unwrap_or_default();
                (status.phase == phase && status.observed_generation == net.generation())
                    .then_some(net)
            },
        )
        .await
    }

    /// Waits until the controller has recorded an Event with `reason` about Network `name`.
    async fn wait_for_event(&self, name: &str, reason: &str) {
        let events = self.clientset.core_v1().events(&self.namespace);
        let selector = format!("involvedObject.kind=Network,involvedObject.name={name}");
        eventually(
            &format!("a {reason} event about {name}"),
            TIMEOUT,
            || async {
                let list = events
                    .list(&ListOptions::default().field_selector(selector.as_str()))
                    .await
                    .expect("listing events");
                list.items
                    .iter()
                    .any(|e| {
                        e.reason.as_deref() == Some(reason)
                            && e.source.as_ref().and_then(|s| s.component.as_deref())
                                == Some("network-controller")
                    })
                    .then_some(())
            },
        )
        .await
    }

    /// Waits until the controller has reported nothing about `key` for 700 ms; returns what
    /// it reported until then.
    async fn settle(&mut self, key: &str) -> Vec<SyncOutcome> {
        let deadline = Instant::now() + TIMEOUT;
        let mut seen = Vec::new();
        loop {
            tokio::time::sleep(Duration::from_millis(700)).await;
            let outcomes = self.drain_outcomes(key);
            if outcomes.is_empty() {
                return seen;
            }
            seen.extend(outcomes);
            assert!(Instant::now() < deadline, "{key} never settled");
        }
    }

    /// The outcomes the controller reported for `key` since the last call.
    fn drain_outcomes(&mut self, key: &str) -> Vec<SyncOutcome> {
        let mut outcomes = Vec::new();
        loop {
            match self.events.try_recv() {
                Ok(event) if event.key == key => outcomes.push(event.outcome),
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return outcomes,
            }
        }
    }
}

fn data_of(cm: &ConfigMap) -> Vec<(String, String)> {
    let mut data: Vec<(String, String)> = cm
        .data
        .iter()
        .flat_map(|d| d.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    data.sort();
    data
}

fn sorted(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    pairs.sort();
    pairs
}

/// Runs each named test, a `fn(Implementation)`, once per implementation: in module `runtime`
/// against the flagship, in `hand_written` against `SampleController`.
macro_rules! against_both {
    ($($test:ident),* $(,)?) => {
        mod runtime {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(kclient_examples::Implementation::Runtime).await
                }
            )*
        }
        mod hand_written {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(kclient_examples::Implementation::HandWritten).await
                }
            )*
        }
    };
}

against_both!(
    creates_a_config_map_per_network_and_follows_spec_changes,
    periodic_resyncs_are_not_reconciled,
    repairs_a_config_map_edited_or_deleted_by_hand,
    reports_an_invalid_spec_in_status_without_requeuing_it,
    api_errors_are_retried_with_backoff_a_bounded_number_of_times,
    refuses_to_adopt_a_foreign_config_map_until_it_goes,
    a_deleted_networks_config_map_is_garbage_collected,
    the_demo_runs_to_completion,
);

async fn creates_a_config_map_per_network_and_follows_spec_changes(implementation: Implementation) {
    let fx = Fixture::start(implementation).await;
    let blue = fx.create_network("blue", "10.1.0.0/16", "10.1.0.1").await;
    fx.create_network("green", "fd00:1::/64", "fd00:1::1").await;

    let cm = fx
        .wait_for_data(
            "network-blue",
            &[("cidr", "10.1.0.0/16"), ("gateway", "10.1.0.1")],
        )
        .await;
    let owners = cm.owner_references();
    assert_eq!(owners.len(), 1, "one owner: {owners:?}");
    assert_eq!(owners[0].kind, "Network");
    assert_eq!(owners[0].name, "blue");
    assert_eq!(owners[0].uid, blue.uid());
    assert!(owners[0].controller, "the Network is the controller owner");
    fx.wait_for_data(
        "network-green",
        &[("cidr", "fd00:1::/64"), ("gateway", "fd00:1::1")],
    )
    .await;

    let ready = fx.wait_for_phase("blue", "Ready").await;
    let status = ready.status.unwrap();
    assert_eq!(status.config_map, "network-blue");
    assert_eq!(status.observed_generation, 1);
    // The Ready condition survives the server's pruning: the CRD's schema, made from the
    // types, has the conditions.
    let condition = find_status_condition(&status.conditions, READY_CONDITION)
        .unwrap_or_else(|| panic!("a Ready condition in {status:?}"))
        .clone();
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_str()),
        ("True", "Provisioned")
    );
    assert_eq!(condition.observed_generation, Some(1));
    fx.wait_for_event("blue", "ConfigMapCreated").await;
    fx.wait_for_event("blue", "Synced").await;

    // The declarative update: a merge PATCH of the spec, as `kubectl apply` sends.
    fx.networks
        .patch(
            "blue",
            &Patch::Merge(json!({"spec": {"cidr": "10.2.0.0/16", "gateway": "10.2.0.254"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    fx.wait_for_data(
        "network-blue",
        &[("cidr", "10.2.0.0/16"), ("gateway", "10.2.0.254")],
    )
    .await;
    let updated = fx.wait_for_phase("blue", "Ready").await;
    assert_eq!(updated.generation(), 2);
    let status = updated.status.unwrap();
    assert!(status.message.contains("10.2.0.254"));
    // Still Ready: the condition follows the generation, its transition time stays.
    let after = find_status_condition(&status.conditions, READY_CONDITION).unwrap();
    assert_eq!(after.observed_generation, Some(2));
    assert!(after.message.contains("10.2.0.254"));
    assert_eq!(after.last_transition_time, condition.last_transition_time);
    fx.stop().await;
}

async fn periodic_resyncs_are_not_reconciled(implementation: Implementation) {
    // Informers resync every second: each one is an update with equal resourceVersions,
    // which the handlers skip, as the seed explains.
    let mut fx = Fixture::start_with_resync(implementation, Duration::from_secs(1)).await;
    fx.create_network("steady", "10.8.0.0/16", "10.8.0.1").await;
    fx.wait_for_phase("steady", "Ready").await;
    let key = fx.key("steady");
    fx.settle(&key).await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let during = fx.drain_outcomes(&key);
    assert!(
        during.is_empty(),
        "three resyncs went by; none should reach the queue: {during:?}"
    );
    fx.stop().await;
}

async fn repairs_a_config_map_edited_or_deleted_by_hand(implementation: Implementation) {
    let fx = Fixture::start(implementation).await;
    fx.create_network("red", "192.168.0.0/16", "192.168.0.1")
        .await;
    let want = [("cidr", "192.168.0.0/16"), ("gateway", "192.168.0.1")];
    fx.wait_for_data("network-red", &want).await;

    // Drift: a changed value, an added key, and a label of someone else's that must survive.
    fx.config_maps
        .patch(
            "network-red",
            &Patch::Merge(json!({
                "metadata": {"labels": {"team": "netops"}},
                "data": {"gateway": "192.168.9.9", "note": "edited by hand"},
            })),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    let repaired = fx.wait_for_data("network-red", &want).await;
    assert_eq!(
        repaired.labels().get("team"),
        Some("netops"),
        "the repair patch touches only the fields the controller manages"
    );

    // Deleted by hand: created again.
    fx.config_maps
        .delete("network-red", &DeleteOptions::default())
        .await
        .unwrap();
    let recreated = fx.wait_for_data("network-red", &want).await;
    assert!(!recreated.labels().contains_key("team"), "a new object");
    fx.stop().await;
}

async fn reports_an_invalid_spec_in_status_without_requeuing_it(implementation: Implementation) {
    let mut fx = Fixture::start(implementation).await;
    fx.create_network("bad", "10.3.0.0/16", "10.4.0.1").await;
    let net = fx.wait_for_phase("bad", "Invalid").await;
    let status = net.status.unwrap();
    let message = status.message;
    assert!(
        message.contains("gateway 10.4.0.1 is outside cidr 10.3.0.0/16"),
        "{message}"
    );
    let ready = find_status_condition(&status.conditions, READY_CONDITION).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "InvalidSpec")
    );
    assert!(fx.config_map("network-bad").await.is_none());
    fx.wait_for_event("bad", "InvalidSpec").await;

    // Settle, then watch a quiet period: no retries with backoff, no reconciles at all.
    let key = fx.key("bad");
    let before = fx.settle(&key).await;
    assert!(
        before.iter().all(|o| matches!(o, SyncOutcome::Invalid(_))),
        "an invalid spec is not a failure to retry: {before:?}"
    );
    assert_eq!(fx.controller.num_requeues(&key), 0);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let quiet = fx.drain_outcomes(&key);
    assert!(
        quiet.is_empty(),
        "reconciled again without a change: {quiet:?}"
    );

    // Fixing the spec brings it back.
    fx.networks
        .patch(
            "bad",
            &Patch::Merge(json!({"spec": {"gateway": "10.3.0.1"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    fx.wait_for_data(
        "network-bad",
        &[("cidr", "10.3.0.0/16"), ("gateway", "10.3.0.1")],
    )
    .await;
    fx.wait_for_phase("bad", "Ready").await;
    fx.stop().await;
}

async fn api_errors_are_retried_with_backoff_a_bounded_number_of_times(
    implementation: Implementation,
) {
    let mut fx = Fixture::start(implementation).await;
    fx.create_network("blocked", "10.7.0.0/16", "10.7.0.1")
        .await;
    let want = [("cidr", "10.7.0.0/16"), ("gateway", "10.7.0.1")];
    fx.wait_for_data("network-blocked", &want).await;
    fx.wait_for_phase("blocked", "Ready").await;
    let key = fx.key("blocked");
    // Let the echo of the status write pass: an event arriving during the failures below
    // would add a retry cycle of its own (a delayed retry is not cancelled by forget).
    fx.settle(&key).await;

    // Someone edits the ConfigMap and marks it immutable in the same request: every repair
    // PATCH is now a real API error (422 Invalid) the controller cannot get past.
    fx.config_maps
        .patch(
            "network-blocked",
            &Patch::Merge(json!({"immutable": true, "data": {"gateway": "10.7.9.9"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();

    let mut failures = Vec::new();
    eventually("the controller to give up on the key", TIMEOUT, || {
        failures.extend(fx.drain_outcomes(&key).into_iter().filter_map(|o| match o {
            SyncOutcome::Failed { error, will_retry } => Some((error, will_retry)),
            _ => None,
        }));
        let gave_up = failures.last().is_some_and(|(_, retry)| !retry);
        async move { gave_up.then_some(()) }
    })
    .await;
    // The first attempt and max_retries (5) retries with backoff; only the last is not
    // requeued.
    assert_eq!(failures.len(), 6, "{failures:?}");
    assert!(failures[..5].iter().all(|(_, retry)| *retry));
    assert!(
        failures[0].0.contains("patching ConfigMap") && failures[0].0.contains("immutable"),
        "{}",
        failures[0].0
    );
    assert_eq!(
        fx.controller.num_requeues(&key),
        0,
        "forgotten after giving up"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = fx.drain_outcomes(&key);
    assert!(
        after.is_empty(),
        "dropped until something changes, yet: {after:?} (failures: {failures:?})"
    );

    // Deleting the broken ConfigMap is such a change: it is created again, as desired.
    fx.config_maps
        .delete("network-blocked", &DeleteOptions::default())
        .await
        .unwrap();
    fx.wait_for_data("network-blocked", &want).await;
    fx.stop().await;
}

async fn refuses_to_adopt_a_foreign_config_map_until_it_goes(implementation: Implementation) {
    let fx = Fixture::start(implementation).await;
    let foreign = ConfigMap {
        metadata: ObjectMeta {
            name: Some("network-taken".into()),
            ..ObjectMeta::default()
        },
        data: Some([("owner".into(), "someone else".into())].into()),
        ..ConfigMap::default()
    };
    fx.config_maps
        .create(&foreign, &CreateOptions::default())
        .await
        .unwrap();
    fx.create_network("taken", "10.5.0.0/16", "10.5.0.1").await;
    let net = fx.wait_for_phase("taken", "Conflict").await;
    assert!(
        net.status
            .unwrap()
            .message
            .contains("not managed by this Network")
    );
    let untouched = fx.config_map("network-taken").await.unwrap();
    assert_eq!(data_of(&untouched), sorted(&[("owner", "someone else")]));
    assert!(untouched.owner_references().is_empty(), "not adopted");

    // The foreign ConfigMap's delete event wakes the Network up.
    fx.config_maps
        .delete("network-taken", &DeleteOptions::default())
        .await
        .unwrap();
    fx.wait_for_data(
        "network-taken",
        &[("cidr", "10.5.0.0/16"), ("gateway", "10.5.0.1")],
    )
    .await;
    fx.wait_for_phase("taken", "Ready").await;
    fx.stop().await;
}

async fn a_deleted_networks_config_map_is_garbage_collected(implementation: Implementation) {
    let mut fx = Fixture::start(implementation).await;
    fx.create_network("gone", "10.6.0.0/16", "10.6.0.1").await;
    fx.wait_for_data(
        "network-gone",
        &[("cidr", "10.6.0.0/16"), ("gateway", "10.6.0.1")],
    )
    .await;
    fx.networks
        .delete("gone", &DeleteOptions::default())
        .await
        .unwrap();
    let started = Instant::now();
    eventually(
        "the garbage collector to delete network-gone",
        GC_TIMEOUT,
        || async { fx.config_map("network-gone").await.is_none().then_some(()) },
    )
    .await;
    eprintln!(
        "garbage collection of the owned ConfigMap took {:?}",
        started.elapsed()
    );
    // The controller saw the delete and did nothing but report it.
    let key = fx.key("gone");
    eventually(
        "the controller to reconcile the deleted key",
        TIMEOUT,
        || {
            let gone = fx
                .drain_outcomes(&key)
                .into_iter()
                .any(|o| o == SyncOutcome::Gone);
            async move { gone.then_some(()) }
        },
    )
    .await;
    fx.stop().await;
}

/// The CRD made from the types comes back from the server as it was sent, so a second
/// install finds it up to date (the check that decides whether to update an older one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crd_made_from_the_types_is_installed_as_built() {
    let env = envtest().await;
    let clientset = Clientset::new(env.client(Identity::Admin));
    install_crd(&clientset, TIMEOUT)
        .await
        .expect("installing the Network CRD");
    assert_eq!(
        install_crd(&clientset, TIMEOUT).await.unwrap(),
        CrdInstall::Unchanged
    );
}

async fn the_demo_runs_to_completion(implementation: Implementation) {
    let env = envtest().await;
    let ns = env.namespace().await;
    run_demo(
        env.config(Identity::Admin),
        DemoOptions {
            namespace: ns.name().to_owned(),
            workers: 2,
            step_timeout: GC_TIMEOUT,
            implementation,
        },
    )
    .await
    .expect("the demo completes");
    // It cleaned up after itself: no Networks left (their ConfigMaps went with them).
    let networks: Api<Network> = Api::namespaced(env.client(Identity::Admin), ns.name());
    for name in ["net-a", "net-b", "net-bad"] {
        let err = networks
            .get(name, &GetOptions::default())
            .await
            .unwrap_err();
        assert!(err.is_not_found(), "{name}: {err}");
    }
}
