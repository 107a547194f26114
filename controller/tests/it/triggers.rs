//! Triggers: `reconcile_on` streams of keys and `reconcile_all_on` streams of ticks, polled
//! only while the controller reconciles.
//!
//! A trigger's items come from a tokio channel of capacity 1 turned into a stream, so a test
//! sees whether the controller has read an item: `capacity()` is 0 while it waits unread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::Stream;
use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{DeleteOptions, Object, Selector};
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::{Action, ControllerBuilder, ObjectRef, Predicate};
use kclient_tools::{LeaderCallbacks, LeaderElectionConfig, LeaseLock};
use tokio::sync::mpsc;

use crate::{Calls, Setup, count_deleted, eventually, steal_lease};

/// Counts the reconciles per name; the ConfigMap "busy" keeps requeueing itself, so that its
/// count shows whether the controller reconciles.
async fn count_or_keep_busy(cm: Arc<ConfigMap>, calls: Arc<Calls>) -> Result<Action, String> {
    calls.count_reconcile(cm.name());
    if cm.name() == "busy" {
        return Ok(Action::requeue_after(Duration::from_millis(20)));
    }
    Ok(Action::done())
}

/// A channel of capacity 1 and the stream of what it receives.
fn channel<T: Send + 'static>() -> (mpsc::Sender<T>, impl Stream<Item = T> + Send + 'static) {
    let (tx, mut rx) = mpsc::channel(1);
    (
        tx,
        futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_from_a_trigger_are_reconciled_without_predicates_and_missing_ones_reach_on_deleted() {
    let s = Setup::new().await;
    s.create_config_map("a", &[]).await;
    s.create_config_map("b", &[]).await;
    let calls = Arc::new(Calls::default());
    let (keys, trigger) = channel();
    // No informer event passes: every reconcile below comes from the trigger.
    let controller = ControllerBuilder::new("trigger-keys-test", &s.factory)
        .for_::<ConfigMap>()
        .with_predicate(Predicate::new(|_: &ConfigMap| false))
        .reconcile_on(trigger)
        .workers(1)
        .reconcile(count_or_keep_busy)
        .on_deleted(count_deleted);
    // Sent while the controller runs but its caches have not synced (the factory is not
    // started yet): it waits in the stream, unread, until reconciling starts.
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    keys.send(ObjectRef::new(s.ns.name(), "a")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(keys.capacity(), 0, "read before the caches synced");
    assert_eq!(calls.reconciled("a"), 0);
    s.factory.start();

    eventually("the reconcile of the key sent before the start", || {
        calls.reconciled("a") == 1
    })
    .await;
    keys.send(ObjectRef::new(s.ns.name(), "b")).await.unwrap();
    keys.send(ObjectRef::new(s.ns.name(), "missing"))
        .await
        .unwrap();
    eventually("the reconcile of b and on_deleted of missing", || {
        calls.reconciled("b") == 1 && calls.deleted("missing") == 1
    })
    .await;
    // Nothing but the trigger enqueued a: once.
    assert_eq!(calls.reconciled("a"), 1);

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trigger_that_ends_or_panics_leaves_the_controller_running() {
    let s = Setup::new().await;
    let calls = Arc::new(Calls::default());
    let trigger = futures_util::stream::iter([ObjectRef::new(s.ns.name(), "early")]);
    let polled = Arc::new(AtomicBool::new(false));
    let broken = futures_util::stream::poll_fn({
        let polled = Arc::clone(&polled);
        move |_| -> std::task::Poll<Option<ObjectRef>> {
            polled.store(true, Ordering::SeqCst);
            panic!("a trigger that panics when polled")
        }
    });
    let controller = ControllerBuilder::new("trigger-ends-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile_on(trigger)
        .reconcile_on(broken)
        .workers(1)
        .reconcile(count_or_keep_busy)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("on_deleted of the one key the stream held", || {
        calls.deleted("early") == 1
    })
    .await;
    // One stream has ended, the other panicked; the informer's events still reach the
    // reconcile.
    s.create_config_map("later", &[]).await;
    eventually(
        "the reconcile of a ConfigMap created after the stream ended",
        || calls.reconciled("later") == 1,
    )
    .await;
    assert!(
        polled.load(Ordering::SeqCst),
        "the panicking trigger was never polled"
    );
    assert!(!run.is_finished());
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_all_on_reconciles_every_cached_primary_that_passes_the_predicates() {
    let s = Setup::new().await;
    s.create_config_map("in-1", &[("pick", "yes")]).await;
    s.create_config_map("in-2", &[("pick", "yes")]).await;
    s.create_config_map("out", &[]).await;
    let calls = Arc::new(Calls::default());
    let (ticks, trigger) = channel();
    let controller = ControllerBuilder::new("trigger-all-test", &s.factory)
        .for_::<ConfigMap>()
        .with_predicate(Predicate::label_selector(
            Selector::parse("pick=yes").unwrap(),
        ))
        .reconcile_all_on(trigger)
        .workers(1)
        .reconcile(count_or_keep_busy)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    // The start's replay: each picked ConfigMap once.
    eventually("the first reconcile of in-1 and in-2", || {
        calls.reconciled("in-1") == 1 && calls.reconciled("in-2") == 1
    })
    .await;

    // Each tick: every picked ConfigMap again, "out" never.
    ticks.send(()).await.unwrap();
    eventually("the reconciles of the first tick", || {
        calls.reconciled("in-1") == 2 && calls.reconciled("in-2") == 2
    })
    .await;
    // A ConfigMap created meanwhile is cached, so the next tick names it too (after its own
    // add's reconcile).
    s.create_config_map("in-3", &[("pick", "yes")]).await;
    eventually("the reconcile of in-3's add", || {
        calls.reconciled("in-3") == 1
    })
    .await;
    ticks.send(()).await.unwrap();
    eventually("the reconciles of the second tick", || {
        calls.reconciled("in-1") == 3
            && calls.reconciled("in-2") == 3
            && calls.reconciled("in-3") == 2
    })
    .await;
    assert_eq!(
        calls.reconciled("out"),
        0,
        "a tick passed the predicates by"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

fn election(client: &kclient_rest::Client, ns: &str) -> LeaderElectionConfig {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    let mut config = LeaderElectionConfig::new(
        LeaseLock::new(leases, "trigger-test", "alpha"),
        LeaderCallbacks::new(),
    );
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_secs(1);
    config.retry_period = Duration::from_millis(300);
    config
}

/// A trigger is read only while the controller leads: an item sent while another candidate
/// holds the lease stays in the stream, and is reconciled once the controller leads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trigger_is_read_only_while_leading_and_kept_across_terms() {
    let s = Setup::new().await;
    // Reconciled continuously while leading: shows when reconciling stops.
    s.create_config_map("busy", &[]).await;
    let calls = Arc::new(Calls::default());
    let (keys, trigger) = channel();
    let controller = ControllerBuilder::new("trigger-leader-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile_on(trigger)
        .leader_election(election(&s.client, s.ns.name()))
        .reconcile(count_or_keep_busy)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("reconciles while leading", || calls.reconciled("busy") >= 5).await;
    keys.send(ObjectRef::new(s.ns.name(), "first"))
        .await
        .unwrap();
    eventually("on_deleted of the key sent while leading", || {
        calls.deleted("first") == 1
    })
    .await;

    // Another candidate takes the lease: after the renew deadline the term ends.
    let leases = steal_lease(&s, "trigger-test").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let before = calls.reconciled("busy");
        tokio::time::sleep(Duration::from_secs(1)).await;
        if calls.reconciled("busy") == before {
            break; // A whole second without a reconcile: the term has ended.
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still reconciling 30s after the lease was taken"
        );
    }
    // Sent while following: nobody reads it.
    keys.send(ObjectRef::new(s.ns.name(), "second"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(keys.capacity(), 0, "the trigger was read while following");
    assert_eq!(calls.deleted("second"), 0);

    // The thief goes away: the controller leads again and reads the trigger kept from its
    // first term.
    leases
        .delete("trigger-test", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("on_deleted of the key sent while following", || {
        calls.deleted("second") == 1
    })
    .await;
    assert_eq!(calls.deleted("first"), 1);
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// A stream that is always ready spends the task's cooperative budget, so on a runtime of one
/// thread the workers, and the task that shuts the controller down, still run.
#[tokio::test(flavor = "current_thread")]
async fn a_trigger_that_is_always_ready_does_not_hold_its_runtime_thread() {
    // Without the budget this test would never get its thread back: a watchdog thread says so
    // and ends the process instead of letting it hang. The test's end, however it ends (a
    // failed assertion too), stands the watchdog down.
    struct Finished(Arc<AtomicBool>);
    impl Drop for Finished {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let finished = Arc::new(AtomicBool::new(false));
    let _stand_down = Finished(Arc::clone(&finished));
    std::thread::spawn({
        let finished = Arc::clone(&finished);
        move || {
            std::thread::sleep(Duration::from_secs(120));
            if !finished.load(Ordering::SeqCst) {
                eprintln!(
                    "a_trigger_that_is_always_ready_does_not_hold_its_runtime_thread: the \
                     trigger held the runtime thread for 120 s; aborting"
                );
                std::process::abort();
            }
        }
    });
    let s = Setup::new().await;
    let calls = Arc::new(Calls::default());
    let endless = futures_util::stream::repeat(ObjectRef::new(s.ns.name(), "again"));
    let controller = ControllerBuilder::new("trigger-endless-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile_on(endless)
        .reconcile(count_or_keep_busy)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    // The worker runs beside the trigger, again and again.
    eventually("on_deleted of the repeated key, many times", || {
        calls.deleted("again") >= 20
    })
    .await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the controller stopped within 30 s")
        .unwrap()
        .unwrap();
}
