//! Leader election: of two controllers on one Lease only the leader reconciles; when it shuts
//! down the other takes over, and no reconcile of one overlaps a reconcile of the other. A
//! leader that loses its lease cancels its reconciles at once, and reconciles the keys it left
//! pending in its next term; one whose `run` is dropped releases the lease; a leader election
//! health check reports a leader that cannot renew.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::{Action, ControllerBuilder};
use kclient_informers::SharedInformerFactory;
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{HealthzAdaptor, LeaderCallbacks, LeaderElectionConfig, LeaseLock};
use parking_lot::Mutex;

use crate::{Setup, eventually, steal_lease};

/// What both controllers' reconciles saw.
#[derive(Default)]
struct Tracker {
    /// Reconciles in progress per controller.
    in_flight: Mutex<HashMap<&'static str, usize>>,
    /// Reconciles that started while the other controller had one in progress.
    overlaps: AtomicUsize,
    /// Reconciles started per controller.
    started: Mutex<HashMap<&'static str, usize>>,
    /// Set once the first leader's `run` has returned; reconciles of it after that count.
    first_stopped: Mutex<Option<&'static str>>,
    after_stop: AtomicUsize,
    keys: Mutex<HashMap<&'static str, std::collections::HashSet<String>>>,
}

impl Tracker {
    fn started(&self, who: &str) -> usize {
        self.started.lock().get(who).copied().unwrap_or(0)
    }
}

struct Ctx {
    who: &'static str,
    tracker: Arc<Tracker>,
}

async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, String> {
    let t = &ctx.tracker;
    {
        let mut in_flight = t.in_flight.lock();
        if in_flight.iter().any(|(who, n)| *who != ctx.who && *n > 0) {
            t.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        *in_flight.entry(ctx.who).or_default() += 1;
        *t.started.lock().entry(ctx.who).or_default() += 1;
        if *t.first_stopped.lock() == Some(ctx.who) {
            t.after_stop.fetch_add(1, Ordering::SeqCst);
        }
        t.keys
            .lock()
            .entry(ctx.who)
            .or_default()
            .insert(cm.name().to_owned());
    }
    // Longer than a follower takes to acquire a released lease (retry period 300 ms with
    // jitter): a leader releasing before its reconciles end would be caught overlapping.
    tokio::time::sleep(Duration::from_millis(800)).await;
    *t.in_flight.lock().entry(ctx.who).or_default() -= 1;
    // Keep every key busy so that a hand-over happens under load.
    Ok(Action::requeue_after(Duration::from_millis(20)))
}

fn election(client: &kclient_rest::Client, ns: &str, who: &str) -> LeaderElectionConfig {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    let mut config = LeaderElectionConfig::new(
        LeaseLock::new(leases, "controller-test", who),
        LeaderCallbacks::new(),
    );
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_secs(1);
    config.retry_period = Duration::from_millis(300);
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leaders_hand_over_without_reconciling_at_the_same_time() {
    leaders_hand_over_without_reconciling_at_the_same_time_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leaders_hand_over_without_reconciling_at_the_same_time_on_the_priority_queue() {
    leaders_hand_over_without_reconciling_at_the_same_time_on(true).await;
}

async fn leaders_hand_over_without_reconciling_at_the_same_time_on(priority_queue: bool) {
    const KEYS: usize = 5;
    let s = Setup::new().await;
    for i in 0..KEYS {
        s.create_config_map(&format!("cm-{i}"), &[]).await;
    }
    let env = TestEnv::connect().await;
    let tracker = Arc::new(Tracker::default());
    let mut runs = HashMap::new();
    let mut factories = Vec::new();
    for who in ["alpha", "beta"] {
        let client = env.client(Identity::Admin);
        let factory =
            SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(s.ns.name());
        let controller = ControllerBuilder::new(format!("leader-test-{who}"), &factory)
            .for_::<ConfigMap>()
            .priority_queue(priority_queue)
            .workers(2)
            // A leader whose renewals stall for the renew deadline steps down, and the
            // follower would then start while the test still expects one leader: a longer
            // deadline than `election`'s 1 s keeps a few slow round trips on a loaded machine
            // from doing that.
            .leader_election(
                election(&client, s.ns.name(), who)
                    .lease_duration(Duration::from_secs(4))
                    .renew_deadline(Duration::from_secs(3)),
            )
            .reconcile(reconcile);
        factory.start();
        let shutdown = CancellationToken::new();
        let ctx = Arc::new(Ctx {
            who,
            tracker: Arc::clone(&tracker),
        });
        let run = tokio::spawn(controller.run(ctx, shutdown.clone()));
        runs.insert(who, (shutdown, run));
        factories.push(factory);
    }

    eventually("a leader reconciling every key", || {
        tracker.keys.lock().values().any(|keys| keys.len() == KEYS)
    })
    .await;
    let leader = if tracker.started("alpha") > 0 {
        "alpha"
    } else {
        "beta"
    };
    let follower = if leader == "alpha" { "beta" } else { "alpha" };
    assert_eq!(
        tracker.started(follower),
        0,
        "the follower reconciled while {leader} led"
    );

    // The leader shuts down: it stops reconciling, then releases the lease.
    let (shutdown, run) = runs.remove(leader).unwrap();
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the leader's run did not return within 30s")
        .unwrap()
        .unwrap();
    *tracker.first_stopped.lock() = Some(leader);

    eventually("the follower taking over every key", || {
        tracker
            .keys
            .lock()
            .get(follower)
            .is_some_and(|keys| keys.len() == KEYS)
    })
    .await;
    let (shutdown, run) = runs.remove(follower).unwrap();
    shutdown.cancel();
    run.await.unwrap().unwrap();

    assert_eq!(
        tracker.overlaps.load(Ordering::SeqCst),
        0,
        "a reconcile started while the other controller had one in progress"
    );
    assert_eq!(
        tracker.after_stop.load(Ordering::SeqCst),
        0,
        "{leader} reconciled after run returned"
    );
    for factory in factories {
        factory.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_its_lease_stops_reconciling_and_competes_again() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let count = Arc::new(AtomicUsize::new(0));
    let controller = ControllerBuilder::new("lease-loss-test", &s.factory)
        .for_::<ConfigMap>()
        .leader_election(election(&s.client, s.ns.name(), "alpha"))
        .reconcile(|_cm: Arc<ConfigMap>, count: Arc<AtomicUsize>| async move {
            count.fetch_add(1, Ordering::SeqCst);
            // Reconcile continuously while leading.
            Ok::<_, String>(Action::requeue_after(Duration::from_millis(20)))
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&count), shutdown.clone()));
    eventually("reconciles while leading", || {
        count.load(Ordering::SeqCst) >= 5
    })
    .await;

    // Someone else takes the lease for an hour: renewals fail, and after the renew deadline
    // the controller stops reconciling.
    let leases = steal_lease(&s, "controller-test").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let before = count.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(1)).await;
        if count.load(Ordering::SeqCst) == before {
            break; // A whole second without a reconcile: stopped.
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still reconciling 30s after the lease was taken"
        );
    }

    // The thief goes away (the Lease is deleted): the controller competes again, wins, and
    // reconciles again with its informers still warm.
    let stopped_at = count.load(Ordering::SeqCst);
    leases
        .delete(
            "controller-test",
            &kclient_apimachinery::DeleteOptions::default(),
        )
        .await
        .unwrap();
    eventually("reconciles after winning the lease again", || {
        count.load(Ordering::SeqCst) > stopped_at + 5
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// A Lease lock whose next `get` or `update` panics once `panic_once` is set.
struct PanickingLock {
    inner: LeaseLock,
    panic_once: Arc<AtomicBool>,
}

impl kclient_tools::ResourceLock for PanickingLock {
    fn get(&self) -> kclient_tools::LockFuture<'_, kclient_tools::LeaderElectionRecord> {
        assert!(
            !self.panic_once.swap(false, Ordering::SeqCst),
            "the lock broke"
        );
        self.inner.get()
    }
    fn create(
        &self,
        record: kclient_tools::LeaderElectionRecord,
    ) -> kclient_tools::LockFuture<'_, ()> {
        self.inner.create(record)
    }
    fn update(
        &self,
        record: kclient_tools::LeaderElectionRecord,
    ) -> kclient_tools::LockFuture<'_, ()> {
        assert!(
            !self.panic_once.swap(false, Ordering::SeqCst),
            "the lock broke"
        );
        self.inner.update(record)
    }
    fn identity(&self) -> &str {
        self.inner.identity()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// An elector that panics (here its lock, while renewing) is run again: the controller
/// stops reconciling, competes again and leads again, rather than idling for good with no
/// elector.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_whose_elector_panics_competes_again() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let count = Arc::new(AtomicUsize::new(0));
    let panic_once = Arc::new(AtomicBool::new(false));
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    let mut config = LeaderElectionConfig::new(
        PanickingLock {
            inner: LeaseLock::new(leases, "controller-test", "alpha"),
            panic_once: Arc::clone(&panic_once),
        },
        LeaderCallbacks::new(),
    );
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_secs(1);
    config.retry_period = Duration::from_millis(300);
    let controller = ControllerBuilder::new("elector-panic-test", &s.factory)
        .for_::<ConfigMap>()
        .leader_election(config)
        .reconcile(|_cm: Arc<ConfigMap>, count: Arc<AtomicUsize>| async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(Action::requeue_after(Duration::from_millis(20)))
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&count), shutdown.clone()));
    eventually("reconciles while leading", || {
        count.load(Ordering::SeqCst) >= 5
    })
    .await;
    panic_once.store(true, Ordering::SeqCst);
    eventually("the lock panicked", || !panic_once.load(Ordering::SeqCst)).await;
    let after = count.load(Ordering::SeqCst);
    eventually("reconciles after winning the lease again", || {
        count.load(Ordering::SeqCst) > after + 50
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// Whether a reconcile started, and whether its future was dropped (cancelled).
#[derive(Default)]
struct Stuck {
    started: AtomicBool,
    dropped: AtomicBool,
}

/// Marks the reconcile's future dropped.
struct DropMark(Arc<Stuck>);

impl Drop for DropMark {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_its_lease_cancels_the_reconcile_in_progress() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let stuck = Arc::new(Stuck::default());
    let controller = ControllerBuilder::new("lease-loss-cancel-test", &s.factory)
        .for_::<ConfigMap>()
        // Far past what the test waits for: only the lost lease may end the reconcile.
        .shutdown_timeout(Duration::from_secs(3600))
        .leader_election(election(&s.client, s.ns.name(), "alpha"))
        .reconcile(|_cm: Arc<ConfigMap>, stuck: Arc<Stuck>| async move {
            stuck.started.store(true, Ordering::SeqCst);
            let _mark = DropMark(Arc::clone(&stuck));
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&stuck), shutdown.clone()));
    eventually("the reconcile in progress", || {
        stuck.started.load(Ordering::SeqCst)
    })
    .await;

    // The new holder may reconcile as soon as it leads: this one's reconcile must end once
    // it knows the lease is lost (renew deadline 1 s), not after the shutdown timeout.
    steal_lease(&s, "controller-test").await;
    eventually("the reconcile cancelled once the lease was lost", || {
        stuck.dropped.load(Ordering::SeqCst)
    })
    .await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_running_controller_releases_its_lease() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let count = Arc::new(AtomicUsize::new(0));
    let controller = ControllerBuilder::new("dropped-run-test", &s.factory)
        .for_::<ConfigMap>()
        .leader_election(election(&s.client, s.ns.name(), "alpha"))
        .reconcile(|_cm: Arc<ConfigMap>, count: Arc<AtomicUsize>| async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let run = tokio::spawn(controller.run(Arc::clone(&count), CancellationToken::new()));
    eventually("a reconcile while leading", || {
        count.load(Ordering::SeqCst) >= 1
    })
    .await;

    // Aborting the task drops `run` before it returns, as a `select!` or a timeout would.
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    // The elector stops with it and releases the lease, instead of renewing it for the life
    // of the process while nothing reconciles.
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let lease = leases
            .get(
                "controller-test",
                &kclient_apimachinery::GetOptions::default(),
            )
            .await
            .unwrap();
        let holder = lease.spec.and_then(|spec| spec.holder_identity);
        if holder.as_deref().unwrap_or_default().is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease is still held by {holder:?} 30s after run was dropped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A leader election configuration the elector refuses fails `run`, and the error says which
/// rule it breaks, not only that the configuration is invalid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_election_config_says_what_is_wrong() {
    let s = Setup::new().await;
    let config = election(&s.client, s.ns.name(), "a")
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_secs(5));
    let controller = ControllerBuilder::new("invalid-election", &s.factory)
        .for_::<ConfigMap>()
        .leader_election(config)
        .reconcile(|_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, String>(Action::done()) });
    // The factory is not started: the configuration is refused before the caches are waited
    // for (which can take minutes on a large cluster), not after.
    let error = tokio::time::timeout(
        Duration::from_secs(10),
        controller.run(Arc::new(()), CancellationToken::new()),
    )
    .await
    .expect("run fails at once, without waiting for the caches")
    .expect_err("the configuration is refused");
    assert!(error.is_leader_election(), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("invalid-election")
            && message.contains("lease_duration must be greater than renew_deadline"),
        "the message names the controller and the broken rule: {message}"
    );
}

/// What the carry-over test's reconciles saw.
#[derive(Default)]
struct Carried {
    /// The probe's reconcile started, and its future was dropped (the term was abandoned).
    probe: Stuck,
    /// Reconciles of the failing key.
    failures: AtomicUsize,
    /// The keys `on_deleted` was called with.
    deleted: Mutex<Vec<String>>,
}

/// A key whose retry was waiting for its backoff when leadership was lost, and whose object
/// is deleted before the next term, is still handled in that term: the term's pending keys
/// carry over, so `on_deleted` sees the deletion, and the key's failures are forgotten in the
/// rate limiter the terms share instead of staying there for the life of the process. So is
/// a key whose reconcile the lost lease cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_waiting_for_its_retry_when_leadership_is_lost_is_handled_in_the_next_term() {
    a_key_waiting_for_its_retry_when_leadership_is_lost_is_handled_in_the_next_term_on(false).await;
}

/// The same on the priority queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_waiting_for_its_retry_when_leadership_is_lost_is_handled_in_the_next_term_on_the_priority_queue()
 {
    a_key_waiting_for_its_retry_when_leadership_is_lost_is_handled_in_the_next_term_on(true).await;
}

async fn a_key_waiting_for_its_retry_when_leadership_is_lost_is_handled_in_the_next_term_on(
    priority_queue: bool,
) {
    let s = Setup::new().await;
    s.create_config_map("failing", &[]).await;
    s.create_config_map("probe", &[]).await;
    // Every failure waits 5 s: far longer than the lease takes to be lost below.
    let limiter = Arc::new(kclient_workqueue::ItemExponentialFailureRateLimiter::new(
        Duration::from_secs(5),
        Duration::from_secs(5),
    ));
    let carried = Arc::new(Carried::default());
    let controller = ControllerBuilder::new("carry-over-test", &s.factory)
        .for_::<ConfigMap>()
        .priority_queue(priority_queue)
        .workers(2)
        .rate_limiter(Arc::clone(&limiter))
        // The probe's reconcile never ends by itself: only a lost lease or the shutdown
        // timeout ends it.
        .shutdown_timeout(Duration::from_secs(1))
        .leader_election(election(&s.client, s.ns.name(), "alpha"))
        .reconcile(|cm: Arc<ConfigMap>, carried: Arc<Carried>| async move {
            if cm.name() == "probe" {
                carried.probe.started.store(true, Ordering::SeqCst);
                let _probe = ProbeMark(Arc::clone(&carried));
                std::future::pending::<()>().await;
            }
            carried.failures.fetch_add(1, Ordering::SeqCst);
            Err::<Action, _>("failing".to_owned())
        })
        .on_deleted(|key, carried: Arc<Carried>| async move {
            carried.deleted.lock().push(key.to_string());
            Ok(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&carried), shutdown.clone()));
    let key = kclient_controller::ObjectRef::new(s.ns.name(), "failing");
    eventually("the first failure, its retry waiting 5 s", || {
        carried.failures.load(Ordering::SeqCst) >= 1 && carried.probe.started.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(
        kclient_workqueue::RateLimiter::num_requeues(&*limiter, &key),
        1
    );

    // The lease is lost: the term ends, its reconciles are cancelled (the probe's too).
    let leases = steal_lease(&s, "controller-test").await;
    eventually("the term abandoned", || {
        carried.probe.dropped.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(
        carried.failures.load(Ordering::SeqCst),
        1,
        "the retry is still waiting for its backoff"
    );

    // While no term runs, both objects are deleted, and the cache sees them gone.
    let lister = s.factory.informer::<ConfigMap>().get_indexer();
    for name in ["failing", "probe"] {
        s.config_maps()
            .delete(name, &kclient_apimachinery::DeleteOptions::default())
            .await
            .unwrap();
        let cache_key = format!("{}/{name}", s.ns.name());
        eventually("the cache without the deleted object", || {
            lister.get_by_key(&cache_key).is_none()
        })
        .await;
    }

    // The controller leads again: both deletions reach on_deleted (the key waiting for its
    // retry, and the key whose reconcile was cancelled), and the rate limiter forgets the
    // failing key.
    leases
        .delete(
            "controller-test",
            &kclient_apimachinery::DeleteOptions::default(),
        )
        .await
        .unwrap();
    let probe = kclient_controller::ObjectRef::new(s.ns.name(), "probe").to_string();
    eventually("on_deleted called for both keys carried over", || {
        let deleted = carried.deleted.lock();
        deleted.contains(&key.to_string()) && deleted.contains(&probe)
    })
    .await;
    assert_eq!(
        kclient_workqueue::RateLimiter::num_requeues(&*limiter, &key),
        0,
        "the rate limiter still holds the failures of a key handled for good"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// Marks the carry-over probe's reconcile future dropped.
struct ProbeMark(Arc<Carried>);

impl Drop for ProbeMark {
    fn drop(&mut self) {
        self.0.probe.dropped.store(true, Ordering::SeqCst);
    }
}

/// A health check given to the controller's leader election (client-go's `WatchDog`) passes
/// while the controller leads and renews, fails once it cannot renew for the lease duration
/// plus the tolerance (its API server unreachable), and passes again once it leads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_election_healthz_fails_while_the_lease_cannot_be_renewed() {
    const TOLERANCE: Duration = Duration::from_secs(1);
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let env = TestEnv::connect().await;
    // Only the elector goes through the proxy: the informers keep their own connection.
    let proxy = env.fault_proxy().await;
    let healthz = HealthzAdaptor::new(TOLERANCE);
    assert!(healthz.check().is_ok(), "no elector yet");
    let config =
        election(&proxy.client(Identity::Admin), s.ns.name(), "alpha").watch_dog(healthz.clone());
    let lease_duration = config.lease_duration;
    let retry_period = config.retry_period;
    let count = Arc::new(AtomicUsize::new(0));
    let controller = ControllerBuilder::new("healthz-test", &s.factory)
        .for_::<ConfigMap>()
        .leader_election(config)
        .reconcile(|_cm: Arc<ConfigMap>, count: Arc<AtomicUsize>| async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&count), shutdown.clone()));
    eventually("a reconcile while leading", || {
        count.load(Ordering::SeqCst) >= 1
    })
    .await;

    // Renewing: healthy for longer than the lease plus the tolerance.
    let renewing_until = tokio::time::Instant::now() + (lease_duration + TOLERANCE) * 2;
    while tokio::time::Instant::now() < renewing_until {
        healthz.check().expect("healthy while renewing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The API server becomes unreachable for the elector: the controller stops leading after
    // the renew deadline, but still believes it holds the lease, and the check fails once
    // the lease plus the tolerance have passed since its last renewal.
    proxy.refuse(true);
    proxy.cut_all().await;
    let cut = tokio::time::Instant::now();
    eventually("the check failing", || healthz.check().is_err()).await;
    // The last renewal came up to a retry period, plus the round trip of the renewal that
    // followed it, before the cut: allow half a second for that round trip on a loaded
    // machine. A check that ignored the tolerance would fail by 2 s after the cut.
    const ROUND_TRIP: Duration = Duration::from_millis(500);
    assert!(
        cut.elapsed() + retry_period + ROUND_TRIP >= lease_duration + TOLERANCE,
        "failed {:?} after the cut, before the lease and the tolerance ran out",
        cut.elapsed()
    );
    let error = healthz.check().unwrap_err();
    assert!(error.is_lease_expired(), "{error}");

    // Reachable again: it takes the lease back (nobody else wrote it) and is healthy.
    proxy.refuse(false);
    eventually("the check passing again", || healthz.check().is_ok()).await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}
