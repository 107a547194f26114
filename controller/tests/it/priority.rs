//! The priority queue (`priority_queue(true)`): the keys of the objects listed at the start
//! wait behind real changes, and a reconcile's requeue priority puts its key ahead of lower
//! ones (or, without one, keeps the priority the key was handed out with). The other reconcile
//! semantics on the priority queue are the parametrized tests of `reconcile.rs`, `shutdown.rs`
//! and `leader_election.rs`.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_controller::{Action, ControllerBuilder};
use kclient_workqueue::ItemExponentialFailureRateLimiter;
use parking_lot::Mutex;

use crate::{Setup, eventually};

/// The reconciles, in order: the object's name and whether it carried the label `changed`.
#[derive(Default)]
struct Seen {
    order: Mutex<Vec<(String, bool)>>,
}

impl Seen {
    /// How many distinct objects were reconciled.
    fn distinct(&self) -> usize {
        let order = self.order.lock();
        let names: std::collections::HashSet<&str> = order.iter().map(|(n, _)| &**n).collect();
        names.len()
    }
}

/// With one worker and a backlog of objects listed at the start, an object that changes is
/// reconciled ahead of the backlog: one already reconciled comes back at once (the default
/// queue would put it behind every listed key), and one still queued rises with its change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_is_reconciled_before_the_backlog_of_unchanged_objects() {
    const OBJECTS: usize = 60;
    // The backlog takes OBJECTS x PACE = 6 s; the changes need to overtake half of it.
    const PACE: Duration = Duration::from_millis(100);
    let s = Setup::new().await;
    for i in 0..OBJECTS {
        s.create_config_map(&format!("cm-{i:02}"), &[]).await;
    }
    let seen = Arc::new(Seen::default());
    let controller = ControllerBuilder::new("priority-backlog-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(true)
        .reconcile(|cm: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            let changed = cm.labels().get("changed").is_some();
            seen.order.lock().push((cm.name().to_owned(), changed));
            tokio::time::sleep(PACE).await;
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&seen), shutdown.clone()));
    eventually("the first reconciles", || seen.order.lock().len() >= 2).await;
    let (done, queued) = {
        let order = seen.order.lock();
        let done = order[0].0.clone();
        let queued = (0..OBJECTS)
            .map(|i| format!("cm-{i:02}"))
            .find(|name| !order.iter().any(|(n, _)| n == name))
            .expect("an object not reconciled yet");
        (done, queued)
    };
    s.label_config_map(&done, "changed", "yes").await;
    s.label_config_map(&queued, "changed", "yes").await;

    eventually("both changes reconciled", || {
        seen.order
            .lock()
            .iter()
            .filter(|(_, changed)| *changed)
            .count()
            == 2
    })
    .await;
    let reconciled = seen.distinct();
    assert!(
        reconciled <= OBJECTS / 2,
        "the changes were reconciled after {reconciled} of the {OBJECTS} listed objects"
    );
    eventually("every object reconciled", || seen.distinct() == OBJECTS).await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
    let order = seen.order.lock();
    let times = |name: &str| order.iter().filter(|(n, _)| n == name).count();
    assert_eq!(times(&done), 2, "{order:?}");
    assert!(
        order.iter().any(|(n, changed)| *n == queued && *changed),
        "{queued} was not reconciled with its change: {order:?}"
    );
}

/// The reconciles of the requeue test, in order, by object name.
#[derive(Default)]
struct Requeues {
    order: Mutex<Vec<String>>,
}

/// With one worker and a backlog of listed keys (at the low priority): a requeue with a
/// priority above theirs comes back before them, from a success or an error policy; one
/// without a priority keeps the priority its key was handed out with and comes back behind
/// the backlog, from a success or an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requeue_with_a_priority_comes_back_ahead_of_lower_ones() {
    const OBJECTS: usize = 30;
    let s = Setup::new().await;
    for i in 0..OBJECTS {
        s.create_config_map(&format!("cm-{i:02}"), &[]).await;
    }
    let requeues = Arc::new(Requeues::default());
    let controller = ControllerBuilder::new("priority-requeue-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(true)
        // Errors are retried at once: their place comes from their priority alone.
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::ZERO,
            Duration::ZERO,
        ))
        .reconcile(|cm: Arc<ConfigMap>, requeues: Arc<Requeues>| async move {
            let position = {
                let mut order = requeues.order.lock();
                order.push(cm.name().to_owned());
                order.len() - 1
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
            // By position: 0 asks to come back next, 1 is its return; 2 comes back without a
            // priority; 3 fails (the error policy keeps the priority), 4 fails (the policy
            // raises it), 5 is its return.
            match position {
                // With no backoff (the rate limiter above), `requeue` is back at once.
                0 => Ok(Action::requeue().with_priority(1)),
                2 => Ok(Action::requeue()),
                3 => Err("keep"),
                4 => Err("raise"),
                _ => Ok(Action::done()),
            }
        })
        .error_policy(|_key, error, _retries, _requeues| {
            if *error == "raise" {
                Action::requeue().with_priority(1)
            } else {
                Action::requeue()
            }
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&requeues), shutdown.clone()));
    // Every object once, and four of them twice.
    eventually("every reconcile", || {
        requeues.order.lock().len() == OBJECTS + 4
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();

    let order = requeues.order.lock().clone();
    assert_eq!(order[1], order[0], "a requeue at priority 1: {order:?}");
    assert_eq!(
        order[5], order[4],
        "an error retried at priority 1: {order:?}"
    );
    // The requeue and the error retry without a priority come after every first reconcile.
    let last_first = (0..OBJECTS)
        .map(|i| {
            let name = format!("cm-{i:02}");
            order.iter().position(|n| *n == name).unwrap()
        })
        .max()
        .unwrap();
    for kept in [&order[2], &order[3]] {
        let again = order.iter().rposition(|n| n == kept).unwrap();
        assert!(
            again > last_first,
            "{kept} came back at {again}, before the backlog (through at {last_first}): {order:?}"
        );
    }
}

/// The first failure and the retry of each key.
#[derive(Default)]
struct Failures {
    failed: Mutex<std::collections::HashMap<String, std::time::Instant>>,
    retried: Mutex<Vec<Duration>>,
}

/// controller-runtime's default backoff on the priority queue is per key alone: after many
/// keys fail at once each is retried on its own 5 ms backoff, not ten a second as under the
/// default queue's overall bucket (burst 100), which would space the last 50 of 150 retries
/// over five seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_failures_are_retried_each_on_its_own_backoff() {
    const OBJECTS: usize = 150;
    let s = Setup::new().await;
    for i in 0..OBJECTS {
        s.create_config_map(&format!("cm-{i:03}"), &[]).await;
    }
    let controller = ControllerBuilder::new("priority-backoff-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(true)
        .workers(8)
        .reconcile(|cm: Arc<ConfigMap>, failures: Arc<Failures>| async move {
            let first = failures.failed.lock().get(cm.name()).copied();
            match first {
                None => {
                    let now = std::time::Instant::now();
                    failures.failed.lock().insert(cm.name().to_owned(), now);
                    Err("first time")
                }
                Some(at) => {
                    failures.retried.lock().push(at.elapsed());
                    Ok(Action::done())
                }
            }
        });
    s.factory.start();
    let failures = Arc::new(Failures::default());
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&failures), shutdown.clone()));
    eventually("every key retried", || {
        failures.retried.lock().len() == OBJECTS
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
    let slowest = failures.retried.lock().iter().copied().max().unwrap();
    // The bucket would hold the last retries back 5 s; the per-key backoff is 5 ms.
    assert!(
        slowest < Duration::from_secs(2),
        "a retry came {slowest:?} after its failure"
    );
}
