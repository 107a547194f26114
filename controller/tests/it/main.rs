//! Integration tests of kclient-controller against the local kube-apiserver
//! (`scripts/testenv up`): ConfigMaps are the primary resource and Secrets their children,
//! each test in a namespace of its own, watched through a factory restricted to it.
//!
//! No assertion depends on timing beyond lower bounds a delay cannot undercut and generous
//! upper bounds (30 s) for things that happen in milliseconds.

mod create_or_update;
mod dynamic;
mod events;
mod finalizer;
mod leader_election;
mod manager;
mod namespaces;
mod owner;
mod predicates;
mod priority;
mod reconcile;
mod shutdown;
mod sources;
mod spans;
mod timeouts;
mod triggers;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::{CreateOptions, GetOptions, Object, PatchOptions, UpdateOptions};
use kclient_clientset::{Api, Patch};
use kclient_controller::{Action, ObjectRef};
use kclient_informers::SharedInformerFactory;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv, TestNamespace};
use kclient_tools::{DEFAULT_RETRY, retry_on_conflict};
use kclient_workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};
use parking_lot::Mutex;

/// A namespace, an admin client and a factory watching only that namespace.
pub(crate) struct Setup {
    pub(crate) ns: TestNamespace,
    pub(crate) client: Client,
    pub(crate) factory: SharedInformerFactory,
}

impl Setup {
    pub(crate) async fn new() -> Setup {
        let env = TestEnv::connect().await;
        let ns = env.namespace().await;
        let client = env.client(Identity::Admin);
        let factory =
            SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
        Setup {
            ns,
            client,
            factory,
        }
    }

    pub(crate) fn config_maps(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), self.ns.name())
    }

    pub(crate) fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), self.ns.name())
    }

    /// Creates the ConfigMap `name` with `labels`.
    pub(crate) async fn create_config_map(&self, name: &str, labels: &[(&str, &str)]) -> ConfigMap {
        let cm: ConfigMap = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": to_map(labels)},
            "data": {"k": "v"},
        }))
        .unwrap();
        self.config_maps()
            .create(&cm, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("creating ConfigMap {name}: {e}"))
    }

    /// Sets the label `key=value` on the ConfigMap `name` (an update event).
    pub(crate) async fn label_config_map(&self, name: &str, key: &str, value: &str) {
        self.config_maps()
            .patch(
                name,
                &Patch::Merge(serde_json::json!({"metadata": {"labels": {key: value}}})),
                &PatchOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("labelling ConfigMap {name}: {e}"));
    }
}

pub(crate) fn to_map(pairs: &[(&str, &str)]) -> serde_json::Map<String, serde_json::Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect()
}

/// Waits up to 30 s for `f` to hold, polling every 20 ms.
pub(crate) async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after 30s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reconciles and `on_deleted` calls, counted per name.
#[derive(Default)]
pub(crate) struct Calls {
    pub(crate) reconciled: Mutex<HashMap<String, usize>>,
    pub(crate) deleted: Mutex<HashMap<String, usize>>,
}

impl Calls {
    pub(crate) fn reconciled(&self, name: &str) -> usize {
        self.reconciled.lock().get(name).copied().unwrap_or(0)
    }

    pub(crate) fn deleted(&self, name: &str) -> usize {
        self.deleted.lock().get(name).copied().unwrap_or(0)
    }

    pub(crate) fn count_reconcile(&self, name: &str) {
        *self.reconciled.lock().entry(name.to_owned()).or_default() += 1;
    }
}

/// A reconcile that counts its calls per ConfigMap name.
pub(crate) async fn count(cm: Arc<ConfigMap>, calls: Arc<Calls>) -> Result<Action, String> {
    calls.count_reconcile(cm.name());
    Ok(Action::done())
}

/// An `on_deleted` that counts its calls per name.
pub(crate) async fn count_deleted(key: ObjectRef, calls: Arc<Calls>) -> Result<Action, String> {
    *calls.deleted.lock().entry(key.name).or_default() += 1;
    Ok(Action::done())
}

/// Makes "thief" the holder of the Lease `lease` of the test's namespace for an hour, as
/// another candidate that took it would; returns the Leases of the namespace. The holder
/// renews meanwhile, so an update can meet a newer version: it is retried on conflict.
pub(crate) async fn steal_lease(s: &Setup, lease: &str) -> Api<Lease> {
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    retry_on_conflict(DEFAULT_RETRY, || async {
        let mut held = leases.get(lease, &GetOptions::default()).await?;
        let spec = held.spec.get_or_insert_with(Default::default);
        spec.holder_identity = Some("thief".into());
        spec.lease_duration_seconds = Some(3600);
        leases.update(&held, &UpdateOptions::default()).await
    })
    .await
    .expect("taking the lease");
    leases
}

/// A metrics provider that counts reconciles by controller and result and the queue's adds by
/// queue, and tracks the active worker gauge and its maximum (the queue's other metrics are
/// dropped).
#[derive(Default)]
pub(crate) struct CountingProvider {
    pub(crate) totals: Arc<Mutex<HashMap<(String, String), u64>>>,
    pub(crate) queue_adds: Arc<Mutex<HashMap<(String, String), u64>>>,
    pub(crate) active: Arc<Mutex<(i64, i64)>>,
    pub(crate) observed: Arc<Mutex<u64>>,
}

impl CountingProvider {
    pub(crate) fn total(&self, controller: &str, result: &str) -> u64 {
        let totals = self.totals.lock();
        totals
            .get(&(controller.to_owned(), result.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// The adds counted by the queue named `queue`.
    pub(crate) fn queue_adds(&self, queue: &str) -> u64 {
        let adds = self.queue_adds.lock();
        adds.get(&(queue.to_owned(), String::new()))
            .copied()
            .unwrap_or(0)
    }
}

struct Nothing;
impl CounterMetric for Nothing {
    fn inc(&self) {}
}
impl GaugeMetric for Nothing {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl HistogramMetric for Nothing {
    fn observe(&self, _: f64) {}
}
impl SettableGaugeMetric for Nothing {
    fn set(&self, _: f64) {}
}

struct Total(Arc<Mutex<HashMap<(String, String), u64>>>, (String, String));
impl CounterMetric for Total {
    fn inc(&self) {
        *self.0.lock().entry(self.1.clone()).or_default() += 1;
    }
}
struct Active(Arc<Mutex<(i64, i64)>>);
impl GaugeMetric for Active {
    fn inc(&self) {
        let mut a = self.0.lock();
        a.0 += 1;
        a.1 = a.1.max(a.0);
    }
    fn dec(&self) {
        self.0.lock().0 -= 1;
    }
}
struct Observed(Arc<Mutex<u64>>);
impl HistogramMetric for Observed {
    fn observe(&self, _: f64) {
        *self.0.lock() += 1;
    }
}

impl MetricsProvider for CountingProvider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Nothing)
    }
    fn new_adds_metric(&self, queue: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(
            Arc::clone(&self.queue_adds),
            (queue.to_owned(), String::new()),
        ))
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Nothing)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Nothing)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Nothing)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Nothing)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Nothing)
    }
    fn new_reconcile_total_metric(&self, controller: &str, result: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(
            Arc::clone(&self.totals),
            (controller.to_owned(), result.to_owned()),
        ))
    }
    fn new_reconcile_time_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Observed(Arc::clone(&self.observed)))
    }
    fn new_active_workers_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Active(Arc::clone(&self.active)))
    }
    /// Counted as the result `terminal`.
    fn new_terminal_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(
            Arc::clone(&self.totals),
            (controller.to_owned(), "terminal".to_owned()),
        ))
    }
    /// Counted as the result `timeout`.
    fn new_reconcile_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Total(
            Arc::clone(&self.totals),
            (controller.to_owned(), "timeout".to_owned()),
        ))
    }
}
