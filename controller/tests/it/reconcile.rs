//! Reconcile semantics: `requeue_after`, rate-limited retries of errors and `forget` after a
//! success, the error policy, the bound on concurrent reconciles and per-key exclusivity, and
//! the reconcile metrics.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_controller::{Action, ControllerBuilder};
use kclient_workqueue::ItemExponentialFailureRateLimiter;
use parking_lot::Mutex;

use crate::{CountingProvider, Setup, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_after_reconciles_again_after_the_delay() {
    requeue_after_reconciles_again_after_the_delay_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_after_reconciles_again_after_the_delay_on_the_priority_queue() {
    requeue_after_reconciles_again_after_the_delay_on(true).await;
}

async fn requeue_after_reconciles_again_after_the_delay_on(priority_queue: bool) {
    let s = Setup::new().await;
    s.create_config_map("periodic", &[]).await;
    let starts: Arc<Mutex<Vec<Instant>>> = Arc::default();
    const DELAY: Duration = Duration::from_millis(300);
    let controller = ControllerBuilder::new("requeue-after-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .reconcile(
            |_cm: Arc<ConfigMap>, starts: Arc<Mutex<Vec<Instant>>>| async move {
                let mut starts = starts.lock();
                starts.push(Instant::now());
                // Three requeues, then done.
                Ok::<_, String>(if starts.len() < 4 {
                    Action::requeue_after(DELAY)
                } else {
                    Action::done()
                })
            },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&starts), shutdown.clone()));
    eventually("four reconciles", || starts.lock().len() >= 4).await;
    // Nothing changes the ConfigMap, so after `done` no fifth reconcile comes: give it three
    // more delays to show up if it were going to.
    tokio::time::sleep(DELAY * 3).await;
    let starts = starts.lock().clone();
    assert_eq!(
        starts.len(),
        4,
        "reconciled after Action::done() with no event"
    );
    for pair in starts.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= DELAY,
            "requeued after {gap:?}, before the {DELAY:?} asked for"
        );
    }
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// With a merge window, a burst of changes to one object causes one reconcile, the window
/// after the first change: the events after the first merge into the key while it waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_window_folds_a_burst_of_changes_into_one_reconcile() {
    let s = Setup::new().await;
    s.create_config_map("bursty", &[]).await;
    // Long enough that five patches fit well inside it on a loaded machine.
    const WINDOW: Duration = Duration::from_secs(4);
    let starts: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let controller = ControllerBuilder::new("merge-window-test", &s.factory)
        .for_::<ConfigMap>()
        .merge_window(WINDOW)
        .reconcile(
            |_cm: Arc<ConfigMap>, starts: Arc<Mutex<Vec<Instant>>>| async move {
                starts.lock().push(Instant::now());
                Ok::<_, String>(Action::done())
            },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&starts), shutdown.clone()));
    // The first add of the key goes out at once: no key has come back yet.
    eventually("the first reconcile", || starts.lock().len() == 1).await;
    // Five changes, each an update event that adds the key again.
    let burst_start = Instant::now();
    for step in 0..5 {
        s.label_config_map("bursty", "step", &step.to_string())
            .await;
    }
    let burst = burst_start.elapsed();
    assert!(
        burst < WINDOW / 2,
        "the burst took {burst:?}; the test needs it well inside the window"
    );
    eventually("a reconcile after the burst", || starts.lock().len() >= 2).await;
    // Room for further reconciles, had the events not merged.
    tokio::time::sleep(WINDOW / 2).await;
    let starts = starts.lock().clone();
    assert_eq!(
        starts.len(),
        2,
        "five changes within the window caused {} reconciles",
        starts.len() - 1
    );
    let waited = starts[1] - burst_start;
    assert!(
        waited >= WINDOW,
        "reconciled {waited:?} after the burst began, inside the window"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// What the error test's reconcile and error policy saw.
#[derive(Default)]
struct Failing {
    /// Reconciles left to fail.
    fail: AtomicUsize,
    starts: Mutex<Vec<Instant>>,
    /// The `retries` the error policy was given, in order.
    retries: Mutex<Vec<usize>>,
    successes: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_back_off_with_the_rate_limiter_and_a_success_forgets() {
    errors_back_off_with_the_rate_limiter_and_a_success_forgets_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_back_off_with_the_rate_limiter_and_a_success_forgets_on_the_priority_queue() {
    errors_back_off_with_the_rate_limiter_and_a_success_forgets_on(true).await;
}

async fn errors_back_off_with_the_rate_limiter_and_a_success_forgets_on(priority_queue: bool) {
    let s = Setup::new().await;
    s.create_config_map("flaky", &[]).await;
    let state = Arc::new(Failing::default());
    state.fail.store(3, Ordering::SeqCst);
    let metrics = Arc::new(CountingProvider::default());
    const BASE: Duration = Duration::from_millis(50);
    let controller = ControllerBuilder::new("backoff-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            BASE,
            Duration::from_secs(10),
        ))
        .metrics_provider(metrics.clone())
        .reconcile(|_cm: Arc<ConfigMap>, state: Arc<Failing>| async move {
            state.starts.lock().push(Instant::now());
            let failing = state
                .fail
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                Err("the backend is down".to_owned())
            } else {
                state.successes.fetch_add(1, Ordering::SeqCst);
                Ok(Action::done())
            }
        })
        .error_policy(|_key, error: &String, retries, state: &Failing| {
            assert_eq!(error, "the backend is down");
            state.retries.lock().push(retries);
            Action::requeue()
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&state), shutdown.clone()));

    eventually("three failures then a success", || {
        state.successes.load(Ordering::SeqCst) == 1
    })
    .await;
    // Three failures, each requeued with the key's growing failure count.
    assert_eq!(*state.retries.lock(), [0, 1, 2]);
    let starts = state.starts.lock().clone();
    assert_eq!(starts.len(), 4);
    for (i, pair) in starts.windows(2).enumerate() {
        let least = BASE * 2u32.pow(i as u32);
        let gap = pair[1] - pair[0];
        assert!(
            gap >= least,
            "retry {i} came after {gap:?}, before its backoff {least:?}"
        );
    }

    // The success forgot the failures: a new failure starts the backoff from zero again.
    state.fail.store(1, Ordering::SeqCst);
    s.label_config_map("flaky", "touched", "1").await;
    // The reconcile counts its success before it returns, and the worker records the metrics
    // after: wait for the total, which the worker records last.
    eventually("a failure then a success after the update", || {
        state.successes.load(Ordering::SeqCst) == 2 && metrics.total("backoff-test", "success") == 2
    })
    .await;
    assert_eq!(*state.retries.lock(), [0, 1, 2, 0]);

    assert_eq!(metrics.total("backoff-test", "error"), 4);
    assert_eq!(metrics.total("backoff-test", "success"), 2);
    assert_eq!(
        *metrics.observed.lock(),
        6,
        "one reconcile time per reconcile"
    );
    assert_eq!(metrics.active.lock().0, 0, "active workers once idle");
    // The queue, named after the controller, reports to the same provider: at least the
    // first add, the three retries and the update's.
    assert!(
        metrics.queue_adds("backoff-test") >= 5,
        "queue adds: {}",
        metrics.queue_adds("backoff-test")
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_policy_can_give_up_on_a_key() {
    an_error_policy_can_give_up_on_a_key_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_policy_can_give_up_on_a_key_on_the_priority_queue() {
    an_error_policy_can_give_up_on_a_key_on(true).await;
}

async fn an_error_policy_can_give_up_on_a_key_on(priority_queue: bool) {
    let s = Setup::new().await;
    s.create_config_map("hopeless", &[]).await;
    let attempts = Arc::new(AtomicUsize::new(0));
    let metrics = Arc::new(CountingProvider::default());
    let controller = ControllerBuilder::new("give-up-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .metrics_provider(metrics.clone())
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_millis(10),
        ))
        .reconcile(
            |_cm: Arc<ConfigMap>, attempts: Arc<AtomicUsize>| async move {
                attempts.fetch_add(1, Ordering::SeqCst);
                Err::<Action, _>("never works")
            },
        )
        // Retry twice, then wait for the next change.
        .error_policy(|_key, _error, retries, _attempts| {
            if retries < 2 {
                Action::requeue()
            } else {
                Action::done()
            }
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&attempts), shutdown.clone()));
    eventually("three attempts", || attempts.load(Ordering::SeqCst) >= 3).await;
    // Retries come within 10 ms; give a dropped key a full second to come back if it would.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "retried after the policy gave up"
    );
    // The next event brings it back, with a fresh failure history: three attempts again.
    s.label_config_map("hopeless", "touched", "1").await;
    eventually("three more attempts", || {
        attempts.load(Ordering::SeqCst) >= 6
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 6);
    // Each give-up is a terminal error (controller-runtime's metric), each attempt an error.
    assert_eq!(metrics.total("give-up-test", "terminal"), 2);
    assert_eq!(metrics.total("give-up-test", "error"), 6);
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// What the load test's reconciles saw.
#[derive(Default)]
struct Load {
    active: AtomicUsize,
    max_active: AtomicUsize,
    in_flight: Mutex<HashSet<String>>,
    overlap: AtomicBool,
    per_key: Mutex<HashMap<String, usize>>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn at_most_n_reconciles_at_once_and_never_one_key_twice() {
    at_most_n_reconciles_at_once_and_never_one_key_twice_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn at_most_n_reconciles_at_once_and_never_one_key_twice_on_the_priority_queue() {
    at_most_n_reconciles_at_once_and_never_one_key_twice_on(true).await;
}

async fn at_most_n_reconciles_at_once_and_never_one_key_twice_on(priority_queue: bool) {
    const WORKERS: usize = 4;
    const KEYS: usize = 24;
    const ROUNDS: usize = 5;
    let s = Setup::new().await;
    for i in 0..KEYS {
        s.create_config_map(&format!("cm-{i}"), &[]).await;
    }
    let load = Arc::new(Load::default());
    let metrics = Arc::new(CountingProvider::default());
    let controller = ControllerBuilder::new("load-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .workers(WORKERS)
        .metrics_provider(metrics.clone())
        .reconcile(|cm: Arc<ConfigMap>, load: Arc<Load>| async move {
            let key = cm.name().to_owned();
            let now = load.active.fetch_add(1, Ordering::SeqCst) + 1;
            load.max_active.fetch_max(now, Ordering::SeqCst);
            if !load.in_flight.lock().insert(key.clone()) {
                load.overlap.store(true, Ordering::SeqCst);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            load.in_flight.lock().remove(&key);
            load.active.fetch_sub(1, Ordering::SeqCst);
            let rounds = {
                let mut per_key = load.per_key.lock();
                let n = per_key.entry(key).or_default();
                *n += 1;
                *n
            };
            // Each key asks to come back at once a few times, while the test also changes it.
            Ok::<_, String>(if rounds < ROUNDS {
                Action::requeue_after(Duration::from_millis(1))
            } else {
                Action::done()
            })
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&load), shutdown.clone()));
    // Events for the keys while they are being reconciled.
    for round in 0..3 {
        for i in 0..KEYS {
            s.label_config_map(&format!("cm-{i}"), "round", &round.to_string())
                .await;
        }
    }
    eventually("every key reconciled its rounds", || {
        let per_key = load.per_key.lock();
        per_key.len() == KEYS && per_key.values().all(|n| *n >= ROUNDS)
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();

    let max = load.max_active.load(Ordering::SeqCst);
    assert!(
        max <= WORKERS,
        "{max} reconciles ran at once with {WORKERS} workers"
    );
    assert!(
        max >= 2,
        "the load never ran two reconciles at once (max {max})"
    );
    assert!(
        !load.overlap.load(Ordering::SeqCst),
        "one key was reconciled twice at once"
    );
    let (active_now, active_max) = *metrics.active.lock();
    assert_eq!(active_now, 0);
    assert!(
        (1..=WORKERS as i64).contains(&active_max),
        "active workers gauge peaked at {active_max}"
    );
    assert!(metrics.total("load-test", "requeue_after") >= (KEYS * (ROUNDS - 1)) as u64);
}
