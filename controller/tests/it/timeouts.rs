//! The controller's reconcile timeout (controller-runtime's `ReconciliationTimeout`) and the
//! cache sync timeouts of a controller and of a manager (`CacheSyncTimeout`), and a manager's
//! runnables that start before its caches.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_cache::CancellationToken;
use kclient_clientset::custom_resource;
use kclient_controller::manager::Manager;
use kclient_controller::{Action, ControllerBuilder};
use kclient_workqueue::ItemExponentialFailureRateLimiter;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::{CountingProvider, Setup, eventually};

/// A custom resource whose CustomResourceDefinition is never installed: the API server does
/// not serve it, so its informer's list fails (404) and is retried, and its cache never syncs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Unserved {
    metadata: ObjectMeta,
}

custom_resource!(Unserved {
    group: "never-installed.kclient.example.com",
    version: "v1",
    kind: "Unserved",
    plural: "unserveds",
    singular: "unserved",
    scope: Namespaced,
});

/// Sets its flag when dropped: tells a reconcile future cancelled from one that finished.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Slow {
    starts: Mutex<Vec<Instant>>,
    /// Set when the first reconcile's future is dropped.
    first_dropped: Arc<AtomicBool>,
    /// Set when the first reconcile got past its sleep (it must not).
    first_finished: AtomicBool,
    calls: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_past_its_timeout_is_cancelled_counted_as_failed_and_retried() {
    let s = Setup::new().await;
    s.create_config_map("slow", &[]).await;
    const TIMEOUT: Duration = Duration::from_millis(300);
    let metrics = Arc::new(CountingProvider::default());
    let controller = ControllerBuilder::new("reconcile-timeout-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile_timeout(TIMEOUT)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(10),
            Duration::from_secs(1),
        ))
        .metrics_provider(metrics.clone())
        .reconcile(|_cm: Arc<ConfigMap>, slow: Arc<Slow>| async move {
            slow.starts.lock().push(Instant::now());
            if slow.calls.fetch_add(1, Ordering::SeqCst) == 0 {
                let _flag = DropFlag(Arc::clone(&slow.first_dropped));
                tokio::time::sleep(Duration::from_secs(60)).await;
                slow.first_finished.store(true, Ordering::SeqCst);
            }
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let slow = Arc::new(Slow::default());
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&slow), shutdown.clone()));
    eventually("a second reconcile after the first timed out", || {
        slow.starts.lock().len() >= 2
    })
    .await;
    assert!(
        slow.first_dropped.load(Ordering::SeqCst),
        "the timed-out reconcile's future was not dropped"
    );
    assert!(!slow.first_finished.load(Ordering::SeqCst));
    let starts = slow.starts.lock().clone();
    let gap = starts[1] - starts[0];
    assert!(
        gap >= TIMEOUT,
        "retried {gap:?} after the first start, before its {TIMEOUT:?} timeout"
    );
    eventually("the retry's success counted", || {
        metrics.total("reconcile-timeout-test", "success") >= 1
    })
    .await;
    assert_eq!(metrics.total("reconcile-timeout-test", "error"), 1);
    assert_eq!(metrics.total("reconcile-timeout-test", "timeout"), 1);
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// Within the timeout, or with a zero one, which sets none (as in controller-runtime).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_within_its_timeout_is_untouched() {
    for timeout in [Duration::from_secs(20), Duration::ZERO] {
        a_reconcile_within_its_timeout_is_untouched_with(timeout).await;
    }
}

async fn a_reconcile_within_its_timeout_is_untouched_with(timeout: Duration) {
    let s = Setup::new().await;
    s.create_config_map("quick", &[]).await;
    let metrics = Arc::new(CountingProvider::default());
    let controller = ControllerBuilder::new("reconcile-in-time-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile_timeout(timeout)
        .metrics_provider(metrics.clone())
        .reconcile(|_cm: Arc<ConfigMap>, calls: Arc<AtomicUsize>| async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let calls = Arc::new(AtomicUsize::new(0));
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("the reconcile counted", || {
        metrics.total("reconcile-in-time-test", "success") == 1
    })
    .await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "timeout {timeout:?}");
    assert_eq!(metrics.total("reconcile-in-time-test", "error"), 0);
    assert_eq!(metrics.total("reconcile-in-time-test", "timeout"), 0);
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_whose_caches_never_sync_fails_after_its_cache_sync_timeout() {
    let s = Setup::new().await;
    const TIMEOUT: Duration = Duration::from_millis(1500);
    let controller = ControllerBuilder::new("cache-sync-timeout-test", &s.factory)
        .for_::<Unserved>()
        .cache_sync_timeout(TIMEOUT)
        .reconcile(
            |_u: Arc<Unserved>, _ctx: Arc<()>| async move { Ok::<_, String>(Action::done()) },
        );
    s.factory.start();
    let started = Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        controller.run(Arc::new(()), CancellationToken::new()),
    )
    .await
    .expect("the controller was still waiting 30 s later")
    .unwrap_err();
    let waited = started.elapsed();
    assert!(err.is_cache_sync(), "{err}");
    assert!(waited >= TIMEOUT, "failed after {waited:?}");
    let message = err.to_string();
    assert!(
        message.contains("cache-sync-timeout-test") && message.contains("timed out after 1.5s"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_whose_caches_never_sync_fails_after_its_cache_sync_timeout() {
    let s = Setup::new().await;
    const TIMEOUT: Duration = Duration::from_millis(1500);
    // An informer of the factory's that cannot sync: the manager waits for every one.
    let _informer = s.factory.informer::<Unserved>();
    let mut manager = Manager::builder(s.factory)
        .cache_sync_timeout(TIMEOUT)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let r = Arc::clone(&ran);
    manager
        .add(kclient_controller::manager::Runnable::new(
            "never-started",
            move |_stop| async move {
                r.store(true, Ordering::SeqCst);
                Ok::<_, std::io::Error>(())
            },
        ))
        .unwrap();
    // A server the caches could need (a conversion webhook) starts before them all the same,
    // and is stopped when the manager gives up.
    let served = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let (sv, st) = (Arc::clone(&served), Arc::clone(&stopped));
    manager
        .add(
            kclient_controller::manager::Runnable::new("webhook-server", move |stop| async move {
                sv.store(true, Ordering::SeqCst);
                stop.cancelled().await;
                st.store(true, Ordering::SeqCst);
                Ok::<_, std::io::Error>(())
            })
            .starts_before_caches(),
        )
        .unwrap();
    let started = Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        manager.run(CancellationToken::new()),
    )
    .await
    .expect("the manager was still waiting 30 s later")
    .unwrap_err();
    assert!(err.is_cache_sync(), "{err}");
    assert!(started.elapsed() >= TIMEOUT);
    assert!(err.to_string().contains("timed out after 1.5s"), "{err}");
    assert!(
        !ran.load(Ordering::SeqCst),
        "a runnable started before the caches synced"
    );
    assert!(
        served.load(Ordering::SeqCst),
        "the runnable marked starts_before_caches never started"
    );
    assert!(stopped.load(Ordering::SeqCst), "it was not stopped");
}
