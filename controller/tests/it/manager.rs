//! The manager against the real apiserver: one election for two managers (only the leader
//! runs its leader runnables; the runnables that need no election run on both; a leader that
//! shuts down releases the lease and the other takes over at once), a runnable's error and a
//! lost lease stopping the manager, the probes (readyz failing until the caches sync, per-check
//! paths, verbose bodies, healthz with the election's check), the metrics endpoint, the order
//! of the graceful shutdown, and its timeout; `elected()` without an election, while another
//! candidate holds the lease, and once it is freed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{GetOptions, Object};
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::manager::{
    Checker, INFORMER_SYNC_CHECK, Manager, MetricsRenderer, PROMETHEUS_TEXT_CONTENT_TYPE, Runnable,
};
use kclient_controller::{Action, ControllerBuilder};
use kclient_informers::SharedInformerFactory;
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{HealthzAdaptor, LeaderCallbacks, LeaderElectionConfig, LeaseLock};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::{Setup, eventually, steal_lease};

const LEASE: &str = "manager-test";

fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// An election on the test's Lease as `who`, releasing on cancel.
fn election(
    client: &kclient_rest::Client,
    ns: &str,
    who: &str,
    lease: Duration,
) -> LeaderElectionConfig {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    LeaderElectionConfig::new(LeaseLock::new(leases, LEASE, who), LeaderCallbacks::new())
        .lease_duration(lease)
        .renew_deadline(lease / 2)
        .retry_period(Duration::from_millis(300))
        .release_on_cancel(true)
}

/// The holder of the test's Lease, `""` when released.
async fn holder(s: &Setup) -> String {
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    leases
        .get(LEASE, &GetOptions::default())
        .await
        .ok()
        .and_then(|l| l.spec)
        .and_then(|spec| spec.holder_identity)
        .map(|h| h.to_string())
        .unwrap_or_default()
}

/// `GET path` on `addr` over HTTP/1.1: the status, the content type and the body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
    tcp.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a response with headers");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    (status, content_type, body.to_owned())
}

/// A runnable named `name` that records `name` in `log` when it is stopped, after running
/// `on_stop` (to observe what is still up at that moment).
fn recording<F, Fut>(name: &'static str, log: &Arc<Mutex<Vec<String>>>, on_stop: F) -> Runnable
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = String> + Send + 'static,
{
    let log = Arc::clone(log);
    Runnable::new(name, move |stop| async move {
        log.lock().push(format!("{name} started"));
        stop.cancelled().await;
        let seen = on_stop().await;
        log.lock().push(format!("{name} stopped{seen}"));
        Ok::<_, std::io::Error>(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_of_two_managers_leads_and_hands_over_when_shut_down() {
    let s = Setup::new().await;
    let env = TestEnv::connect().await;
    let leading: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let others: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let mut runs = Vec::new();
    for who in ["alpha", "beta"] {
        let client = env.client(Identity::Admin);
        let factory =
            SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(s.ns.name());
        // A long lease: a takeover within it proves the lease was released, not expired.
        let mut manager = Manager::builder(factory)
            .leader_election(election(&client, s.ns.name(), who, Duration::from_secs(20)))
            .build()
            .unwrap();
        let l = Arc::clone(&leading);
        manager
            .add(Runnable::new("leader-work", move |stop| async move {
                l.lock().push(who);
                stop.cancelled().await;
                Ok::<_, std::io::Error>(())
            }))
            .unwrap();
        let o = Arc::clone(&others);
        manager
            .add(
                Runnable::new("everywhere", move |stop| async move {
                    o.lock().push(who);
                    stop.cancelled().await;
                    Ok::<_, std::io::Error>(())
                })
                .needs_leader_election(false),
            )
            .unwrap();
        let shutdown = CancellationToken::new();
        runs.push((who, shutdown.clone(), tokio::spawn(manager.run(shutdown))));
        if who == "alpha" {
            // alpha first, so that it is the leader the test stops.
            eventually("alpha leading", || leading.lock().len() == 1).await;
        }
    }
    eventually(
        "the runnables that need no election on both managers",
        || others.lock().len() == 2,
    )
    .await;
    // beta competes for a while without leading.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(*leading.lock(), vec!["alpha"], "only one manager leads");
    assert_eq!(holder(&s).await, "alpha");

    let (_, shutdown, run) = runs.remove(0);
    let stopped_at = tokio::time::Instant::now();
    shutdown.cancel();
    run.await.unwrap().expect("alpha stops cleanly");
    eventually("beta taking over", || leading.lock().len() == 2).await;
    assert_eq!(*leading.lock(), vec!["alpha", "beta"]);
    let took = stopped_at.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "beta took over after {took:?}: the lease (20 s) was not released"
    );
    assert_eq!(holder(&s).await, "beta");
    let (_, shutdown, run) = runs.remove(0);
    shutdown.cancel();
    run.await.unwrap().expect("beta stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runnable_error_stops_the_manager_which_returns_it() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(s.factory).build().unwrap();
    let cancelled = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&cancelled);
    manager
        .add(Runnable::new("patient", move |stop| async move {
            stop.cancelled().await;
            c.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    manager
        .add(Runnable::new("failing", |_stop| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err(std::io::Error::other("boom"))
        }))
        .unwrap();
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        manager.run(CancellationToken::new()),
    )
    .await
    .expect("the manager did not stop within 30s")
    .expect_err("the runnable's error");
    assert!(err.is_runnable(), "{err}");
    assert_eq!(err.to_string(), "runnable failing failed: boom");
    let source = std::error::Error::source(&err).expect("the runnable's error as source");
    assert_eq!(
        source
            .downcast_ref::<std::io::Error>()
            .map(|e| e.to_string()),
        Some("boom".to_owned())
    );
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the other runnable was stopped gracefully"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_runnable_stops_the_manager_too() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(s.factory).build().unwrap();
    manager
        .add(
            Runnable::new("panicking", |_stop| async {
                tokio::task::yield_now().await;
                panic!("oops");
                #[allow(unreachable_code)]
                Ok::<_, std::io::Error>(())
            })
            .needs_leader_election(false),
        )
        .unwrap();
    let err = manager.run(CancellationToken::new()).await.unwrap_err();
    assert!(err.is_runnable(), "{err}");
    assert_eq!(err.to_string(), "runnable panicking panicked: oops");
}

/// A runnable whose start function panics before it returns its future fails the manager as
/// one whose future panics does, rather than unwinding out of `run`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runnable_panicking_as_it_starts_stops_the_manager() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(s.factory).build().unwrap();
    manager
        .add(
            Runnable::new(
                "eager",
                |_stop| -> std::future::Ready<Result<(), std::io::Error>> { panic!("at start") },
            )
            .needs_leader_election(false),
        )
        .unwrap();
    let outcome = tokio::spawn(manager.run(CancellationToken::new()))
        .await
        .expect("run returned rather than unwinding");
    let err = outcome.unwrap_err();
    assert!(err.is_runnable(), "{err}");
    assert_eq!(err.to_string(), "runnable eager panicked: at start");
}

/// Sets its flag when dropped: tells that a runnable's future was cancelled or ended.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A runnable that sets `started` when it starts and ignores its stop token: only being
/// aborted ends it, which sets `dropped`.
fn deaf_runnable(
    name: &'static str,
    started: &Arc<AtomicBool>,
    dropped: &Arc<AtomicBool>,
) -> Runnable {
    let (started, dropped) = (Arc::clone(started), Arc::clone(dropped));
    Runnable::new(name, move |_stop| async move {
        started.store(true, Ordering::SeqCst);
        let _flag = SetOnDrop(dropped);
        std::future::pending::<()>().await;
        Ok::<_, std::io::Error>(())
    })
}

/// A Lease lock whose calls hang (stay pending) once `hang` is set. Each hanging call, when
/// the elector gives it up, records in `stopped_when_given_up` whether `leader_stopped` was
/// set by then: the last one given up is the attempt to release the lease.
struct HangingLock {
    inner: LeaseLock,
    hang: Arc<AtomicBool>,
    leader_stopped: Arc<AtomicBool>,
    stopped_when_given_up: Arc<Mutex<Option<bool>>>,
}

impl HangingLock {
    /// The lock of candidate `alpha` on the Lease [`LEASE`] in the test's namespace.
    fn new(
        s: &Setup,
        hang: &Arc<AtomicBool>,
        leader_stopped: &Arc<AtomicBool>,
        stopped_when_given_up: &Arc<Mutex<Option<bool>>>,
    ) -> Self {
        let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
        Self {
            inner: LeaseLock::new(leases, LEASE, "alpha"),
            hang: Arc::clone(hang),
            leader_stopped: Arc::clone(leader_stopped),
            stopped_when_given_up: Arc::clone(stopped_when_given_up),
        }
    }

    fn hanging<T: Send + 'static>(&self) -> kclient_tools::LockFuture<'static, T> {
        let (stopped, seen) = (
            Arc::clone(&self.leader_stopped),
            Arc::clone(&self.stopped_when_given_up),
        );
        struct GivenUp(Arc<AtomicBool>, Arc<Mutex<Option<bool>>>);
        impl Drop for GivenUp {
            fn drop(&mut self) {
                *self.1.lock() = Some(self.0.load(Ordering::SeqCst));
            }
        }
        Box::pin(async move {
            let _given_up = GivenUp(stopped, seen);
            std::future::pending().await
        })
    }
}

impl kclient_tools::ResourceLock for HangingLock {
    fn get(&self) -> kclient_tools::LockFuture<'_, kclient_tools::LeaderElectionRecord> {
        if self.hang.load(Ordering::SeqCst) {
            return self.hanging();
        }
        self.inner.get()
    }
    fn create(
        &self,
        record: kclient_tools::LeaderElectionRecord,
    ) -> kclient_tools::LockFuture<'_, ()> {
        if self.hang.load(Ordering::SeqCst) {
            return self.hanging();
        }
        self.inner.create(record)
    }
    fn update(
        &self,
        record: kclient_tools::LeaderElectionRecord,
    ) -> kclient_tools::LockFuture<'_, ()> {
        if self.hang.load(Ordering::SeqCst) {
            return self.hanging();
        }
        self.inner.update(record)
    }
    fn identity(&self) -> &str {
        self.inner.identity()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// The renewals give up when the API hangs: the leader runnables stop at once, before the
/// elector's attempt to release the lease (which hangs too, up to the renew deadline) ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_runnables_stop_when_the_renewals_give_up_not_after_the_release() {
    let s = Setup::new().await;
    let hang = Arc::new(AtomicBool::new(false));
    let leader_stopped = Arc::new(AtomicBool::new(false));
    let stopped_when_given_up = Arc::new(Mutex::new(None));
    let lock = HangingLock::new(&s, &hang, &leader_stopped, &stopped_when_given_up);
    let config = LeaderElectionConfig::new(lock, LeaderCallbacks::new())
        .lease_duration(Duration::from_secs(4))
        .renew_deadline(Duration::from_secs(2))
        .retry_period(Duration::from_millis(300))
        .release_on_cancel(true);
    let mut manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(config)
    .build()
    .unwrap();
    let leading = Arc::new(AtomicBool::new(false));
    manager
        .add(deaf_runnable("leader-work", &leading, &leader_stopped))
        .unwrap();
    let run = tokio::spawn(manager.run(CancellationToken::new()));
    eventually("leading", || leading.load(Ordering::SeqCst)).await;
    hang.store(true, Ordering::SeqCst);
    let err = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the manager did not stop within 30s")
        .unwrap()
        .expect_err("leader election lost");
    assert!(err.is_leader_election_lost(), "{err}");
    assert!(leader_stopped.load(Ordering::SeqCst));
    assert_eq!(
        *stopped_when_given_up.lock(),
        Some(true),
        "the leader runnable stopped before the release attempt was given up"
    );
}

/// A stop was asked for, and a leader runnable takes its grace (here it ignores its token); the
/// lease is lost meanwhile (the renewals give up when the API hangs). Another candidate may
/// lead then: the runnable is aborted at once, not left running for the rest of the graceful
/// shutdown timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_lost_while_the_leader_runnables_drain_cuts_their_grace_short() {
    let s = Setup::new().await;
    let hang = Arc::new(AtomicBool::new(false));
    let leader_stopped = Arc::new(AtomicBool::new(false));
    let unused = Arc::new(Mutex::new(None));
    let lock = HangingLock::new(&s, &hang, &leader_stopped, &unused);
    let config = LeaderElectionConfig::new(lock, LeaderCallbacks::new())
        .lease_duration(Duration::from_secs(4))
        .renew_deadline(Duration::from_secs(2))
        .retry_period(Duration::from_millis(300));
    let mut manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(config)
    .graceful_shutdown_timeout(Duration::from_secs(120))
    .build()
    .unwrap();
    let leading = Arc::new(AtomicBool::new(false));
    manager
        .add(deaf_runnable("slow-leader-work", &leading, &leader_stopped))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually("leading", || leading.load(Ordering::SeqCst)).await;
    shutdown.cancel();
    hang.store(true, Ordering::SeqCst);
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the manager did not stop within 30s: the leader runnable kept its grace")
        .unwrap();
    assert!(leader_stopped.load(Ordering::SeqCst));
    // The lease lost is logged; `run` answers for the stop that was asked for.
    assert!(result.is_ok(), "{result:?}");
}

/// An elector that panics (here in the `on_new_leader` callback, on seeing the lease stolen)
/// renews nothing any more: the manager takes it as the lease lost and stops its leader
/// runnables, rather than running them beside the new leader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elector_that_panics_counts_as_the_lease_lost() {
    let s = Setup::new().await;
    let mut config = election(&s.client, s.ns.name(), "alpha", Duration::from_secs(2));
    config.callbacks = std::mem::take(&mut config.callbacks)
        .on_new_leader(|who| assert_eq!(who, "alpha", "a new leader"));
    let mut manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(config)
    .build()
    .unwrap();
    let leading = Arc::new(AtomicBool::new(false));
    let l = Arc::clone(&leading);
    manager
        .add(Runnable::new("leader-work", move |stop| async move {
            l.store(true, Ordering::SeqCst);
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    let run = tokio::spawn(manager.run(CancellationToken::new()));
    eventually("leading", || leading.load(Ordering::SeqCst)).await;
    steal_lease(&s, LEASE).await;
    let err = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the manager did not stop within 30s of its elector's panic")
        .unwrap()
        .expect_err("leader election lost");
    assert!(err.is_leader_election_lost(), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_lease_stops_the_manager_with_leader_election_lost() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(election(
        &s.client,
        s.ns.name(),
        "alpha",
        Duration::from_secs(2),
    ))
    .build()
    .unwrap();
    let leading = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let others_stopped = Arc::new(AtomicBool::new(false));
    let (l, st) = (Arc::clone(&leading), Arc::clone(&stopped));
    manager
        .add(Runnable::new("leader-work", move |stop| async move {
            l.store(true, Ordering::SeqCst);
            // Cancelled at its next `.await` when the lease is lost; a drop guard tells.
            let _flag = SetOnDrop(st);
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    let o = Arc::clone(&others_stopped);
    manager
        .add(
            Runnable::new("everywhere", move |stop| async move {
                stop.cancelled().await;
                o.store(true, Ordering::SeqCst);
                Ok::<_, std::io::Error>(())
            })
            .needs_leader_election(false),
        )
        .unwrap();
    let run = tokio::spawn(manager.run(CancellationToken::new()));
    eventually("leading", || leading.load(Ordering::SeqCst)).await;

    // Another candidate takes the lease for an hour: the renewals fail.
    steal_lease(&s, LEASE).await;

    let err = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the manager did not stop within 30s of losing its lease")
        .unwrap()
        .expect_err("leader election lost");
    assert!(err.is_leader_election_lost(), "{err}");
    assert!(err.to_string().contains("leader election lost"), "{err}");
    assert!(
        stopped.load(Ordering::SeqCst),
        "the leader runnable was cancelled"
    );
    assert!(
        others_stopped.load(Ordering::SeqCst),
        "the other runnables were stopped"
    );
    assert_eq!(holder(&s).await, "thief");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_until_the_caches_sync_then_passes() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let env = TestEnv::connect().await;
    // The informer lists through a proxy that holds every byte until the test lets go.
    let proxy = env.fault_proxy().await;
    proxy.stall(true);
    let factory = SharedInformerFactory::new(proxy.client(Identity::Admin), Duration::ZERO)
        .with_namespace(s.ns.name());
    let mut manager = Manager::builder(factory)
        .health_probe_bind_address(any_port())
        .build()
        .unwrap();
    let _ = manager.factory().informer::<ConfigMap>();
    manager.add_readyz_check("custom", Checker::ping());
    manager.add_healthz_check("alive", Checker::ping());
    let addr = manager.health_probe_addr().unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));

    // Served before the caches sync, failing.
    let mut before = (0, String::new(), String::new());
    for _ in 0..100 {
        if let Ok(tcp) = tokio::net::TcpStream::connect(addr).await {
            drop(tcp);
            before = get(addr, "/readyz").await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        before,
        (
            500,
            "text/plain; charset=utf-8".to_owned(),
            "[+]custom ok\n[-]informer-sync failed: reason withheld\nhealthz check failed\n"
                .to_owned()
        )
    );
    assert_eq!(
        get(addr, &format!("/readyz/{INFORMER_SYNC_CHECK}")).await,
        (
            500,
            "text/plain; charset=utf-8".to_owned(),
            "internal server error: the informer caches have not synced yet\n".to_owned()
        )
    );
    assert_eq!(get(addr, "/readyz?exclude=informer-sync").await.0, 200);
    // Liveness does not depend on the caches.
    assert_eq!(get(addr, "/healthz").await.0, 200);

    proxy.stall(false);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if get(addr, "/readyz").await.0 == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "readyz still failing 30s after the caches could sync"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(get(addr, "/readyz").await.2, "ok");
    assert_eq!(
        get(addr, "/readyz?verbose").await,
        (
            200,
            "text/plain; charset=utf-8".to_owned(),
            "[+]custom ok\n[+]informer-sync ok\nhealthz check passed\n".to_owned()
        )
    );
    assert_eq!(get(addr, "/readyz/informer-sync").await.2, "ok");
    assert_eq!(get(addr, "/readyz/custom/").await.2, "ok");
    // The path is percent-decoded, as Go's URL.Path is: %63 is `c`.
    assert_eq!(get(addr, "/readyz/%63ustom").await.2, "ok");
    assert_eq!(get(addr, "/readyz/nope").await.0, 404);
    assert_eq!(get(addr, "/healthz/alive").await.2, "ok");
    assert_eq!(
        get(addr, "/healthz?verbose=1&exclude=alive&exclude=missing")
            .await
            .2,
        "[+]alive excluded: ok\nwarn: some health checks cannot be excluded: no matches for \
         \"missing\"\nhealthz check passed\n"
    );
    assert_eq!(get(addr, "/other").await.0, 404);
    assert_eq!(get(addr, "/healthzz").await.0, 404);

    shutdown.cancel();
    run.await.unwrap().unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the probe server still listens after run returned"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_has_ping_and_the_leader_election_check() {
    let s = Setup::new().await;
    // No election: pkg/healthz's `ping` stands in.
    let manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .health_probe_bind_address(any_port())
    .build()
    .unwrap();
    let addr = manager.health_probe_addr().unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually_ok(addr, "/healthz").await;
    assert_eq!(
        get(addr, "/healthz?verbose").await.2,
        "[+]ping ok\nhealthz check passed\n"
    );
    assert_eq!(get(addr, "/healthz/ping").await.2, "ok");
    shutdown.cancel();
    run.await.unwrap().unwrap();

    // With an election: its HealthzAdaptor, `leaderElection`.
    let adaptor = HealthzAdaptor::new(Duration::from_secs(5));
    let manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(
        election(&s.client, s.ns.name(), "alpha", Duration::from_secs(4)).watch_dog(adaptor),
    )
    .health_probe_bind_address(any_port())
    .build()
    .unwrap();
    let addr = manager.health_probe_addr().unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually_ok(addr, "/healthz").await;
    assert_eq!(
        get(addr, "/healthz?verbose").await.2,
        "[+]leaderElection ok\nhealthz check passed\n"
    );
    assert_eq!(get(addr, "/healthz/leaderElection").await.2, "ok");
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// Waits up to 30 s for `path` on `addr` to answer 200.
async fn eventually_ok(addr: SocketAddr, path: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if tokio::net::TcpStream::connect(addr).await.is_ok() && get(addr, path).await.0 == 200 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path} not answering 200 within 30s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_from_the_renderer() {
    let s = Setup::new().await;
    let scrapes = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&scrapes);
    let manager = Manager::builder(s.factory)
        .metrics_bind_address(
            any_port(),
            MetricsRenderer::prometheus_text(move || {
                let n = n.fetch_add(1, Ordering::SeqCst) + 1;
                Ok::<_, std::fmt::Error>(format!("# TYPE scrapes counter\nscrapes {n}\n"))
            }),
        )
        .build()
        .unwrap();
    let addr = manager.metrics_addr().unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually_ok(addr, "/metrics").await;
    let (status, content_type, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert_eq!(content_type, PROMETHEUS_TEXT_CONTENT_TYPE);
    let n = scrapes.load(Ordering::SeqCst);
    assert_eq!(body, format!("# TYPE scrapes counter\nscrapes {n}\n"));
    assert_eq!(get(addr, "/").await.0, 404);
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_in_use_fails_the_build() {
    let s = Setup::new().await;
    let taken = std::net::TcpListener::bind(any_port()).unwrap();
    let err = Manager::builder(s.factory)
        .health_probe_bind_address(taken.local_addr().unwrap())
        .build()
        .unwrap_err();
    assert!(err.is_bind(), "{err}");
    assert!(
        err.to_string().starts_with(&format!(
            "manager: cannot listen on {} for the health probe: ",
            taken.local_addr().unwrap()
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_stops_leaders_then_the_lease_then_others_then_caches_then_servers() {
    let s = Setup::new().await;
    let factory = Arc::new(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    );
    let mut manager = Manager::builder(Arc::clone(&factory))
        .leader_election(election(
            &s.client,
            s.ns.name(),
            "alpha",
            Duration::from_secs(20),
        ))
        .health_probe_bind_address(any_port())
        .build()
        .unwrap();
    let informer = manager.factory().informer::<ConfigMap>();
    let addr = manager.health_probe_addr().unwrap();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    // What each sees as it stops: the lease holder, whether the cache runs and the probes
    // answer.
    let observe = move || {
        let (leases, informer) = (leases.clone(), informer.clone());
        async move {
            let holder = leases
                .get(LEASE, &GetOptions::default())
                .await
                .ok()
                .and_then(|l| l.spec?.holder_identity)
                .map(|h| h.to_string())
                .unwrap_or_default();
            let probes = get(addr, "/healthz").await.0;
            format!(
                " (holder {holder:?}, cache running {}, probes {probes})",
                !informer.is_stopped()
            )
        }
    };
    manager
        .add(recording("leader", &log, observe.clone()))
        .unwrap();
    manager
        .add(recording("other", &log, observe).needs_leader_election(false))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually("both started", || log.lock().len() == 2).await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
    assert_eq!(
        *log.lock(),
        vec![
            "other started".to_owned(),
            "leader started".to_owned(),
            "leader stopped (holder \"alpha\", cache running true, probes 200)".to_owned(),
            "other stopped (holder \"\", cache running true, probes 200)".to_owned(),
        ]
    );
    // Then the caches, then the servers.
    assert!(factory.informer::<ConfigMap>().is_stopped());
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runnable_that_ignores_cancellation_makes_the_shutdown_time_out() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(s.factory)
        .graceful_shutdown_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&dropped);
    manager
        .add(Runnable::new("stubborn", move |_stop| async move {
            let _flag = SetOnDrop(d);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    manager
        .add(Runnable::new("polite", |stop| async move {
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = tokio::time::Instant::now();
    shutdown.cancel();
    let err = run.await.unwrap().expect_err("a shutdown timeout");
    let took = started.elapsed();
    assert!(err.is_shutdown_timeout(), "{err}");
    assert_eq!(err.still_running(), ["runnable stubborn"]);
    assert_eq!(
        err.to_string(),
        "manager: failed waiting for all runnables to end within grace period of 500ms; still \
         running: runnable stubborn"
    );
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(10),
        "{took:?}"
    );
    eventually("the stubborn runnable cancelled", || {
        dropped.load(Ordering::SeqCst)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_run_under_the_manager_and_may_not_bring_their_own_election_or_a_taken_name() {
    let s = Setup::new().await;
    s.create_config_map("cm", &[]).await;
    let mut manager = Manager::builder(s.factory).build().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    for name in ["first", "second"] {
        let controller = ControllerBuilder::new(name, manager.factory())
            .for_::<ConfigMap>()
            .reconcile(|cm: Arc<ConfigMap>, seen: Arc<AtomicUsize>| async move {
                assert_eq!(cm.name(), "cm");
                seen.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>(Action::done())
            });
        manager
            .add_controller(controller, Arc::clone(&seen))
            .unwrap();
    }
    // A controller with its own election is refused.
    let own = ControllerBuilder::new("own-election", manager.factory())
        .for_::<ConfigMap>()
        .leader_election(election(
            &s.client,
            s.ns.name(),
            "x",
            Duration::from_secs(4),
        ))
        .reconcile(|_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, String>(Action::done()) });
    let err = manager.add_controller(own, Arc::new(())).unwrap_err();
    assert!(err.is_leader_election(), "{err}");
    assert!(
        err.to_string()
            .starts_with("controller own-election has a leader election of its own"),
        "{err}"
    );
    // A second controller named "first" is refused; a plain runnable of that name is not.
    let again = ControllerBuilder::new("first", manager.factory())
        .for_::<ConfigMap>()
        .reconcile(|_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, String>(Action::done()) });
    let err = manager.add_controller(again, Arc::new(())).unwrap_err();
    assert!(err.is_duplicate_name(), "{err}");
    assert_eq!(
        err.to_string(),
        "manager: a controller named first was added already; controller names must be \
         unique, since they name the controllers' queues, metrics and logs"
    );
    manager
        .add(Runnable::new("first", |stop| async move {
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();

    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually("both controllers reconciling the ConfigMap", || {
        seen.load(Ordering::SeqCst) >= 2
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_shutdown_timeout_waits_for_nothing_and_reports_nothing() {
    let s = Setup::new().await;
    let mut manager = Manager::builder(s.factory)
        .graceful_shutdown_timeout(Duration::ZERO)
        .build()
        .unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let st = Arc::clone(&started);
    manager
        .add(Runnable::new("stubborn", move |_stop| async move {
            st.store(true, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    eventually("the runnable started", || started.load(Ordering::SeqCst)).await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("a zero timeout does not wait")
        .unwrap()
        .expect("controller-runtime's 0: no timeout error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_election_is_refused_by_build() {
    let s = Setup::new().await;
    // renew_deadline must be below lease_duration.
    let config = election(&s.client, s.ns.name(), "alpha", Duration::from_secs(4))
        .renew_deadline(Duration::from_secs(4));
    let err = Manager::builder(s.factory)
        .leader_election(config)
        .build()
        .unwrap_err();
    assert!(err.is_leader_election(), "{err}");
    assert_eq!(
        err.to_string(),
        "manager: invalid leader election configuration: lease_duration must be greater than \
         renew_deadline"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elected_resolves_without_an_election_once_the_caches_synced() {
    let s = Setup::new().await;
    s.create_config_map("before", &[]).await;
    let factory = Arc::new(s.factory);
    // An informer the caches' sync waits for.
    let config_maps = factory.informer::<ConfigMap>();
    let manager = Manager::builder(Arc::clone(&factory)).build().unwrap();
    let elected = manager.elected();
    assert!(!elected.is_elected(), "elected before run");
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    let led = tokio::time::timeout(Duration::from_secs(30), elected.wait())
        .await
        .expect("not elected 30s after the start without an election");
    assert!(led);
    assert!(elected.is_elected());
    // Elected comes after the caches' sync.
    assert!(config_maps.has_synced());
    assert!(
        config_maps
            .get_store()
            .get_by_key(&format!("{}/before", s.ns.name()))
            .is_some()
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
    // It stays elected after the stop, as controller-runtime's closed channel does.
    assert!(elected.wait().await);
}

/// Makes "thief" the holder of the test's Lease for an hour, before any manager runs.
async fn lease_held_by_thief(s: &Setup) -> Api<Lease> {
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), s.ns.name());
    let now = kclient_apimachinery::meta::MicroTime::now();
    let mut lease = Lease::default();
    lease.metadata.name = Some(LEASE.into());
    let spec = lease.spec.get_or_insert_with(Default::default);
    spec.holder_identity = Some("thief".into());
    spec.lease_duration_seconds = Some(3600);
    spec.acquire_time = Some(now);
    spec.renew_time = Some(now);
    leases
        .create(&lease, &kclient_apimachinery::CreateOptions::default())
        .await
        .expect("creating the thief's Lease");
    leases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elected_waits_for_the_lease_and_says_so_when_the_manager_stops_first() {
    let s = Setup::new().await;
    let leases = lease_held_by_thief(&s).await;

    // A manager that never wins: wait() returns false once it stops.
    let manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(election(
        &s.client,
        s.ns.name(),
        "alpha",
        Duration::from_secs(2),
    ))
    .build()
    .unwrap();
    let elected = manager.elected();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    assert!(
        tokio::time::timeout(Duration::from_secs(2), elected.wait())
            .await
            .is_err(),
        "elected while another candidate holds the lease"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
    assert!(
        !elected.wait().await,
        "a manager that never led said it had"
    );
    assert!(!elected.is_elected());

    // Another manager, then the thief goes: it wins, and wait() returns true.
    let manager = Manager::builder(
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name()),
    )
    .leader_election(election(
        &s.client,
        s.ns.name(),
        "beta",
        Duration::from_secs(2),
    ))
    .build()
    .unwrap();
    let elected = manager.elected();
    let started = Arc::new(AtomicBool::new(false));
    let st = Arc::clone(&started);
    let mut manager = manager;
    manager
        .add(Runnable::new("leader-work", move |stop| async move {
            st.store(true, Ordering::SeqCst);
            stop.cancelled().await;
            Ok::<_, std::io::Error>(())
        }))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));
    leases
        .delete(LEASE, &kclient_apimachinery::DeleteOptions::default())
        .await
        .unwrap();
    let led = tokio::time::timeout(Duration::from_secs(30), elected.wait())
        .await
        .expect("not elected 30s after the lease was freed");
    assert!(led);
    assert_eq!(holder(&s).await, "beta");
    eventually("the leader runnable started", || {
        started.load(Ordering::SeqCst)
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elected_says_false_when_the_manager_is_dropped_without_running() {
    let s = Setup::new().await;
    let manager = Manager::builder(s.factory).build().unwrap();
    let elected = manager.elected();
    let waiter = tokio::spawn({
        let elected = elected.clone();
        async move { elected.wait().await }
    });
    // As a program whose setup failed after taking the signal drops its manager.
    drop(manager);
    let led = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("a waiter still waiting 30 s after the manager was dropped")
        .unwrap();
    assert!(!led);
    assert!(!elected.is_elected());
}
