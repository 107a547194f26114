//! Graceful shutdown: reconciles in progress finish, none starts once `run` has returned,
//! and a reconcile that outlives the shutdown timeout is cancelled (and no longer counted as
//! active).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kclient_api::core::v1::ConfigMap;
use kclient_cache::CancellationToken;
use kclient_controller::{Action, ControllerBuilder};

use crate::{CountingProvider, Setup, eventually};

#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    finished: AtomicUsize,
    /// Set once `run` has returned.
    stopped: AtomicBool,
    after_stop: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_reconciles_finish_and_none_starts_after_shutdown() {
    in_flight_reconciles_finish_and_none_starts_after_shutdown_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_reconciles_finish_and_none_starts_after_shutdown_on_the_priority_queue() {
    in_flight_reconciles_finish_and_none_starts_after_shutdown_on(true).await;
}

async fn in_flight_reconciles_finish_and_none_starts_after_shutdown_on(priority_queue: bool) {
    let s = Setup::new().await;
    for i in 0..6 {
        s.create_config_map(&format!("cm-{i}"), &[]).await;
    }
    let counts = Arc::new(Counts::default());
    let controller = ControllerBuilder::new("shutdown-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .workers(2)
        .reconcile(|_cm: Arc<ConfigMap>, counts: Arc<Counts>| async move {
            if counts.stopped.load(Ordering::SeqCst) {
                counts.after_stop.fetch_add(1, Ordering::SeqCst);
            }
            counts.started.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(300)).await;
            counts.finished.fetch_add(1, Ordering::SeqCst);
            // Keep the queue busy: every key comes straight back.
            Ok::<_, String>(Action::requeue_after(Duration::from_millis(1)))
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&counts), shutdown.clone()));
    eventually("two reconciles in progress", || {
        counts.started.load(Ordering::SeqCst) >= 2
    })
    .await;

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("run did not return within 30s of shutdown")
        .unwrap()
        .unwrap();
    counts.stopped.store(true, Ordering::SeqCst);
    let started = counts.started.load(Ordering::SeqCst);
    assert_eq!(
        counts.finished.load(Ordering::SeqCst),
        started,
        "run returned before the reconciles in progress finished"
    );

    // Events keep coming and requeued keys come due; nothing may reconcile them now.
    for i in 0..6 {
        s.label_config_map(&format!("cm-{i}"), "after", "stop")
            .await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(counts.after_stop.load(Ordering::SeqCst), 0);
    assert_eq!(
        counts.started.load(Ordering::SeqCst),
        started,
        "a reconcile started after run returned"
    );
}

/// Marks the reconcile's future dropped (a finished one would too, but this one cannot
/// finish: it sleeps for an hour).
struct SetOnDrop(Arc<(AtomicBool, AtomicBool)>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.1.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_past_the_shutdown_timeout_is_cancelled() {
    let s = Setup::new().await;
    s.create_config_map("stuck", &[]).await;
    let state = Arc::new((AtomicBool::new(false), AtomicBool::new(false)));
    let provider = Arc::new(CountingProvider::default());
    let controller = ControllerBuilder::new("timeout-test", &s.factory)
        .for_::<ConfigMap>()
        .shutdown_timeout(Duration::from_millis(200))
        .metrics_provider(Arc::clone(&provider) as _)
        .reconcile(
            |_cm: Arc<ConfigMap>, state: Arc<(AtomicBool, AtomicBool)>| async move {
                state.0.store(true, Ordering::SeqCst);
                let _dropped = SetOnDrop(Arc::clone(&state));
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok::<_, String>(Action::done())
            },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&state), shutdown.clone()));
    eventually("the stuck reconcile", || state.0.load(Ordering::SeqCst)).await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("run did not return within 30s of shutdown")
        .unwrap()
        .unwrap();
    assert!(
        state.1.load(Ordering::SeqCst),
        "the stuck reconcile was not cancelled"
    );
    assert_eq!(
        *provider.active.lock(),
        (0, 1),
        "the active workers gauge (now, peak) after the cancelled reconcile"
    );
}

/// The drain test's state: reconciles started, and the gate the first one waits at.
struct Gate {
    started: AtomicUsize,
    open: tokio::sync::Semaphore,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_drains_the_queued_keys_unless_told_not_to() {
    a_shutdown_drains_the_queued_keys_unless_told_not_to_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_drains_the_queued_keys_unless_told_not_to_on_the_priority_queue() {
    a_shutdown_drains_the_queued_keys_unless_told_not_to_on(true).await;
}

async fn a_shutdown_drains_the_queued_keys_unless_told_not_to_on(priority_queue: bool) {
    const KEYS: usize = 6;
    let s = Setup::new().await;
    for i in 0..KEYS {
        s.create_config_map(&format!("cm-{i}"), &[]).await;
    }
    for drain in [true, false] {
        let gate = Arc::new(Gate {
            started: AtomicUsize::new(0),
            open: tokio::sync::Semaphore::new(0),
        });
        // One worker: while the first reconcile waits at the gate, the other keys wait in
        // the queue.
        let controller = ControllerBuilder::new(format!("drain-{drain}-test"), &s.factory)
            .for_::<ConfigMap>()
            .priority_queue(priority_queue)
            .workers(1)
            .drain_on_shutdown(drain)
            .reconcile(|_cm: Arc<ConfigMap>, gate: Arc<Gate>| async move {
                if gate.started.fetch_add(1, Ordering::SeqCst) == 0 {
                    let _permit = gate.open.acquire().await;
                }
                Ok::<_, String>(Action::done())
            });
        s.factory.start();
        let shutdown = CancellationToken::new();
        let run = tokio::spawn(controller.run(Arc::clone(&gate), shutdown.clone()));
        eventually("the first reconcile", || {
            gate.started.load(Ordering::SeqCst) == 1
        })
        .await;
        shutdown.cancel();
        gate.open.add_permits(1);
        tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("run did not return within 30s of shutdown")
            .unwrap()
            .unwrap();
        let expected = if drain { KEYS } else { 1 };
        assert_eq!(
            gate.started.load(Ordering::SeqCst),
            expected,
            "reconciles with drain_on_shutdown({drain})"
        );
    }
}

/// An informer whose task panics before its cache syncs (here an index function that panics
/// on one ConfigMap) ends `run` with a cache-sync error. It used to leave the controller
/// waiting forever, warning every 10 s that the factory might not have been started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_that_dies_before_syncing_ends_run_with_an_error() {
    let s = Setup::new().await;
    s.create_config_map("boom", &[]).await;
    let informer = s.factory.informer::<ConfigMap>();
    let mut explodes = kclient_cache::Indexers::new();
    explodes.add("explodes", |cm: &ConfigMap| {
        assert_ne!(
            cm.metadata.name.as_deref(),
            Some("boom"),
            "index function panics"
        );
        Vec::new()
    });
    informer.add_indexers(explodes).unwrap();
    let controller = ControllerBuilder::new("dies-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile(
            |_cm: Arc<ConfigMap>, _ctx: Arc<()>| async move { Ok::<_, String>(Action::done()) },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        controller.run(Arc::new(()), shutdown.clone()),
    )
    .await
    .expect("run still waits for a cache that will never sync");
    let error = result.expect_err("the controller cannot start");
    assert!(error.is_cache_sync(), "{error}");
    assert!(error.to_string().contains("dies-test"), "{error}");
    assert!(!shutdown.is_cancelled());
    s.factory.shutdown().await;
}
