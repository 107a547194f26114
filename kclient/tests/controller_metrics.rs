//! A live controller's Prometheus export against the real kube-apiserver: a controller named
//! `cm-metrics` reconciles the ConfigMaps of a test namespace with reconciles that succeed,
//! fail, panic, requeue and requeue after a delay, and `/metrics` (the metrics example's
//! server) is scraped while one reconcile is held and after all are done. The reconcile counts
//! by result, the error and panic counts, the reconcile time histogram, the active and the
//! maximum workers and the workqueue metrics, all under the controller's name, must match
//! what the reconciles did.
//!
//! Its own test binary with one test, because the metrics providers are process-wide.

// The example's `/metrics` server, exactly as the example runs it (the rest is unused here).
#[path = "../examples/metrics.rs"]
#[allow(dead_code)]
mod example;
mod metrics_common;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kclient::Object as _;
use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::cache::CancellationToken;
use kclient::controller::{Action, ControllerBuilder};
use kclient::envtest::{Identity, TestEnv};
use kclient::informers::SharedInformerFactory;
use kclient::metrics::Registry;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use metrics_common::{eventually, scrape_until, value, value_if_there};

const CONTROLLER: &str = "cm-metrics";

/// The results a reconcile is counted under.
const RESULTS: [&str; 4] = ["success", "error", "requeue", "requeue_after"];

/// What the reconciles did, by ConfigMap name and result label.
#[derive(Default)]
struct Tally {
    /// Reconciles per name, counting the one in progress.
    calls: HashMap<String, usize>,
    /// Finished reconciles per result label (`success`, `error`, `requeue`, `requeue_after`).
    results: HashMap<&'static str, u64>,
    /// When `held` started, and whether it is in progress.
    held_since: Option<Instant>,
}

struct Ctx {
    tally: Mutex<Tally>,
    /// `held`'s reconcile waits for a permit.
    release: Semaphore,
}

impl Ctx {
    fn tally(&self) -> MutexGuard<'_, Tally> {
        self.tally
            .lock()
            .expect("no reconcile panicked holding the tally")
    }

    /// Whether every reconcile started has finished, but for `running` of them.
    fn all_finished_but(&self, running: usize) -> bool {
        let tally = self.tally();
        tally.calls.values().sum::<usize>() as u64
            == tally.results.values().sum::<u64>() + running as u64
    }

    fn finished(&self, result: &'static str) {
        *self.tally().results.entry(result).or_default() += 1;
    }

    fn result(&self, result: &str) -> u64 {
        self.tally().results.get(result).copied().unwrap_or(0)
    }

    fn held_since(&self) -> Option<Instant> {
        self.tally().held_since
    }

    fn calls(&self, name: &str) -> usize {
        self.tally().calls.get(name).copied().unwrap_or(0)
    }
}

/// `fail` fails twice, `boom` panics once, `again` asks for a rate-limited requeue once, `later` for a requeue
/// after 50 ms once, `held` waits until the test releases it; everything else succeeds.
async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, String> {
    let name = cm.name().to_owned();
    let call = {
        let mut tally = ctx.tally();
        let calls = tally.calls.entry(name.clone()).or_default();
        *calls += 1;
        let call = *calls;
        if name == "held" {
            tally.held_since = Some(Instant::now());
        }
        call
    };
    match (name.as_str(), call) {
        ("fail", 1 | 2) => {
            ctx.finished("error");
            Err(format!(
                "failure {call} of ConfigMap fail, as the test wants"
            ))
        }
        ("boom", 1) => {
            // A panic is an error (controller-runtime counts it in both).
            ctx.finished("error");
            panic!("ConfigMap boom's first reconcile panics, as the test wants");
        }
        ("again", 1) => {
            ctx.finished("requeue");
            Ok(Action::requeue())
        }
        ("later", 1) => {
            ctx.finished("requeue_after");
            Ok(Action::requeue_after(Duration::from_millis(50)))
        }
        ("held", _) => {
            let permit = ctx.release.acquire().await.expect("the semaphore is open");
            permit.forget();
            ctx.finished("success");
            Ok(Action::done())
        }
        _ => {
            ctx.finished("success");
            Ok(Action::done())
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_controller_exports_its_metrics_under_its_name() {
    let mut registry = Registry::default();
    assert!(kclient::metrics::register(&mut registry));
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(example::serve_metrics(listener, Arc::new(registry)));

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let names = ["ok-0", "ok-1", "fail", "boom", "again", "later", "held"];
    for name in names {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let created: Result<ConfigMap, _> = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .json(&cm)
            .send()
            .await;
        created.unwrap_or_else(|e| panic!("creating ConfigMap {name}: {e}"));
    }

    let factory = SharedInformerFactory::new(client, Duration::ZERO).with_namespace(ns.name());
    let controller = ControllerBuilder::new(CONTROLLER, &factory)
        .for_::<ConfigMap>()
        .workers(2)
        .reconcile(reconcile);
    factory.start();
    let ctx = Arc::new(Ctx {
        tally: Default::default(),
        release: Semaphore::new(0),
    });
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&ctx), shutdown.clone()));

    // Everything but `held` has reached its final success; `held` is in progress.
    eventually("every ConfigMap but held reconciled to success", || {
        ctx.calls("fail") == 3
            && ctx.calls("boom") == 2
            && ctx.calls("again") == 2
            && ctx.calls("later") == 2
            && ctx.calls("ok-0") == 1
            && ctx.calls("ok-1") == 1
            && ctx.held_since().is_some()
            // Every reconcile started, except held's, has finished.
            && ctx.all_finished_but(1)
    })
    .await;
    let controller = format!("controller=\"{CONTROLLER}\"");
    let controller = controller.as_str();
    // A reconcile tallies its result before it returns; the worker counts it after.
    let totals_match = |samples: &BTreeMap<String, f64>| {
        RESULTS.iter().all(|result| {
            let label = format!("result=\"{result}\"");
            let exported = value_if_there(
                samples,
                "controller_runtime_reconcile_total",
                &[controller, &label],
            );
            exported.unwrap_or(0.0) == ctx.result(result) as f64
        })
    };
    let active = |samples: &BTreeMap<String, f64>| {
        value_if_there(samples, "controller_runtime_active_workers", &[controller])
    };
    let samples = scrape_until(address, |s| active(s) == Some(1.0) && totals_match(s)).await;
    assert_eq!(
        value(&samples, "controller_runtime_active_workers", &[controller]),
        1.0,
        "held's reconcile is the only one in progress"
    );
    for result in RESULTS {
        let label = format!("result=\"{result}\"");
        assert_eq!(
            value(
                &samples,
                "controller_runtime_reconcile_total",
                &[controller, &label]
            ),
            ctx.result(result) as f64,
            "reconciles ending in {result} while held runs"
        );
    }
    assert_eq!(ctx.result("error"), 3);
    assert_eq!(ctx.result("requeue"), 1);
    assert_eq!(ctx.result("requeue_after"), 1);
    let queue = "name=\"cm-metrics\"";
    // Nothing waits in the controller's queue: held is being processed.
    assert_eq!(value(&samples, "workqueue_depth", &[queue]), 0.0);

    // Release held, let it finish, and scrape the final state.
    let held_since = ctx.held_since().expect("held started");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let held_for_at_least = held_since.elapsed();
    ctx.release.add_permits(1);
    eventually("held's reconcile finishing", || ctx.all_finished_but(0)).await;
    // The metrics are recorded right after the reconcile returns, the queue's work duration
    // last (at `done`): wait for them in the export.
    let total: u64 = ctx.tally().results.values().sum();
    let samples = scrape_until(address, |s| {
        active(s) == Some(0.0)
            && totals_match(s)
            && value_if_there(s, "workqueue_work_duration_seconds_count", &[queue])
                == Some(total as f64)
    })
    .await;
    for result in RESULTS {
        let label = format!("result=\"{result}\"");
        assert_eq!(
            value(
                &samples,
                "controller_runtime_reconcile_total",
                &[controller, &label]
            ),
            ctx.result(result) as f64,
            "reconciles ending in {result}"
        );
    }
    // controller-runtime's error, panic and worker-count series: a panic counts as an error.
    assert_eq!(
        value(
            &samples,
            "controller_runtime_reconcile_errors_total",
            &[controller]
        ),
        3.0
    );
    assert_eq!(
        value(
            &samples,
            "controller_runtime_reconcile_panics_total",
            &[controller]
        ),
        1.0
    );
    assert_eq!(
        value(
            &samples,
            "controller_runtime_max_concurrent_reconciles",
            &[controller]
        ),
        2.0
    );
    // No reconcile timeout is set, and no error policy gives up: the series are there, at
    // zero.
    for series in [
        "controller_runtime_reconcile_timeouts_total",
        "controller_runtime_terminal_reconcile_errors_total",
    ] {
        assert_eq!(value(&samples, series, &[controller]), 0.0, "{series}");
    }
    // One observation per reconcile; held's alone lasted at least as long as it was held.
    assert_eq!(
        value(
            &samples,
            "controller_runtime_reconcile_time_seconds_count",
            &[controller]
        ),
        total as f64
    );
    assert!(
        value(
            &samples,
            "controller_runtime_reconcile_time_seconds_sum",
            &[controller]
        ) >= held_for_at_least.as_secs_f64(),
        "the time histogram's sum covers held's reconcile ({held_for_at_least:?})"
    );
    assert_eq!(
        value(
            &samples,
            "controller_runtime_reconcile_time_seconds_bucket",
            &[controller, "le=\"+Inf\""]
        ),
        total as f64
    );
    // The controller's queue, under its name: every key of the namespace added once at the
    // start, plus the five delayed re-adds (two errors, a panic, one rate-limited requeue,
    // one requeue_after), each counted as a retry; nothing left.
    let keys = ctx.tally().calls.len() as f64;
    assert_eq!(value(&samples, "workqueue_retries_total", &[queue]), 5.0);
    assert_eq!(
        value(&samples, "workqueue_adds_total", &[queue]),
        keys + 5.0
    );
    assert_eq!(value(&samples, "workqueue_depth", &[queue]), 0.0);
    assert_eq!(
        value(&samples, "workqueue_work_duration_seconds_count", &[queue]),
        total as f64
    );

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the controller stops within 30 s")
        .expect("the controller task does not panic")
        .expect("run returns Ok");
    factory.shutdown().await;
}
