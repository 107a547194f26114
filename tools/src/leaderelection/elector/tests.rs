//! Unit tests of the elector's timing rules against an in-memory lock with real
//! compare-and-swap semantics, on tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kclient_apimachinery::Error as ApiError;
use tokio::sync::mpsc;

use super::*;
use crate::leaderelection::config::LeaderCallbacks;
use crate::leaderelection::healthz::HealthzAdaptor;
use crate::leaderelection::resource_lock::{LockFuture, ResourceLock};

#[derive(Default)]
struct Store {
    record: Option<LeaderElectionRecord>,
    version: u64,
    writes: usize,
    /// How long each call takes.
    slow: Duration,
    /// Each call (`get` or `update`) and when it started.
    calls: Vec<(&'static str, Instant)>,
}

/// One candidate's view of a shared in-memory lock: updates are compare-and-swap on the
/// version this candidate last read or wrote.
struct MemoryLock {
    store: Arc<Mutex<Store>>,
    identity: String,
    seen: Mutex<Option<u64>>,
    unreachable: Arc<AtomicBool>,
}

impl MemoryLock {
    fn new(store: &Arc<Mutex<Store>>, identity: &str) -> (Self, Arc<AtomicBool>) {
        let unreachable = Arc::new(AtomicBool::new(false));
        let lock = MemoryLock {
            store: store.clone(),
            identity: identity.into(),
            seen: Mutex::new(None),
            unreachable: unreachable.clone(),
        };
        (lock, unreachable)
    }

    /// Waits as long as a call takes.
    async fn take_time(&self) {
        let slow = self.store.lock().slow;
        if !slow.is_zero() {
            tokio::time::sleep(slow).await;
        }
    }

    fn check_reachable(&self) -> Result<(), ApiError> {
        if self.unreachable.load(Ordering::SeqCst) {
            return Err(ApiError::new_internal_error("apiserver unreachable"));
        }
        Ok(())
    }
}

impl ResourceLock for MemoryLock {
    fn get(&self) -> LockFuture<'_, LeaderElectionRecord> {
        Box::pin(async move {
            self.store.lock().calls.push(("get", Instant::now()));
            tokio::task::yield_now().await;
            self.take_time().await;
            self.check_reachable()?;
            let store = self.store.lock();
            let record = store
                .record
                .clone()
                .ok_or_else(|| ApiError::new_not_found("coordination.k8s.io", "leases", "l"))?;
            *self.seen.lock() = Some(store.version);
            Ok(record)
        })
    }

    fn create(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.check_reachable()?;
            let mut store = self.store.lock();
            if store.record.is_some() {
                return Err(ApiError::new_already_exists(
                    "coordination.k8s.io",
                    "leases",
                    "l",
                ));
            }
            store.record = Some(record);
            store.version += 1;
            store.writes += 1;
            *self.seen.lock() = Some(store.version);
            Ok(())
        })
    }

    fn update(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()> {
        Box::pin(async move {
            self.store.lock().calls.push(("update", Instant::now()));
            tokio::task::yield_now().await;
            self.take_time().await;
            self.check_reachable()?;
            let mut store = self.store.lock();
            let seen = *self.seen.lock();
            if seen != Some(store.version) {
                return Err(ApiError::new_conflict(
                    "coordination.k8s.io",
                    "leases",
                    "l",
                    "the object has been modified",
                ));
            }
            store.record = Some(record);
            store.version += 1;
            store.writes += 1;
            *self.seen.lock() = Some(store.version);
            Ok(())
        })
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        "memory/l".into()
    }
}

const LEASE: Duration = Duration::from_secs(2);
const RENEW: Duration = Duration::from_secs(1);
const RETRY: Duration = Duration::from_millis(300);

/// What a candidate's callbacks saw.
struct Probe {
    started: mpsc::UnboundedReceiver<Instant>,
    started_count: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
    leaders: Arc<Mutex<Vec<String>>>,
    leading_cancelled: Arc<AtomicBool>,
}

fn candidate(
    store: &Arc<Mutex<Store>>,
    identity: &str,
    release_on_cancel: bool,
) -> (Arc<LeaderElector>, Probe, Arc<AtomicBool>) {
    watched_candidate(store, identity, release_on_cancel, None)
}

/// A [`candidate`] whose configuration carries `watch_dog`.
fn watched_candidate(
    store: &Arc<Mutex<Store>>,
    identity: &str,
    release_on_cancel: bool,
    watch_dog: Option<&HealthzAdaptor>,
) -> (Arc<LeaderElector>, Probe, Arc<AtomicBool>) {
    let (lock, unreachable) = MemoryLock::new(store, identity);
    let (tx, started) = mpsc::unbounded_channel();
    let started_count = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let leaders = Arc::new(Mutex::new(Vec::new()));
    let leading_cancelled = Arc::new(AtomicBool::new(false));
    let callbacks = {
        let started_count = started_count.clone();
        let stopped = stopped.clone();
        let leaders = leaders.clone();
        let leading_cancelled = leading_cancelled.clone();
        LeaderCallbacks::new()
            .on_started_leading(move |token| {
                started_count.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send(Instant::now());
                let leading_cancelled = leading_cancelled.clone();
                async move {
                    token.cancelled().await;
                    leading_cancelled.store(true, Ordering::SeqCst);
                }
            })
            .on_stopped_leading(move || {
                stopped.fetch_add(1, Ordering::SeqCst);
            })
            .on_new_leader(move |id| leaders.lock().push(id.to_string()))
    };
    let mut config = LeaderElectionConfig::new(lock, callbacks);
    config.lease_duration = LEASE;
    config.renew_deadline = RENEW;
    config.retry_period = RETRY;
    config.release_on_cancel = release_on_cancel;
    config.watch_dog = watch_dog.cloned();
    let elector = Arc::new(LeaderElector::new(config).expect("valid config"));
    let probe = Probe {
        started,
        started_count,
        stopped,
        leaders,
        leading_cancelled,
    };
    (elector, probe, unreachable)
}

fn spawn_run(elector: &Arc<LeaderElector>) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = CancellationToken::new();
    let e = elector.clone();
    let token = cancel.clone();
    (cancel, tokio::spawn(async move { e.run(token).await }))
}

fn stored(store: &Arc<Mutex<Store>>) -> LeaderElectionRecord {
    store.lock().record.clone().expect("a record")
}

fn config_with(
    lease: u64,
    renew: u64,
    retry: u64,
    callbacks: LeaderCallbacks,
) -> LeaderElectionConfig {
    let store = Arc::new(Mutex::new(Store::default()));
    let (lock, _) = MemoryLock::new(&store, "me");
    let mut config = LeaderElectionConfig::new(lock, callbacks);
    config.lease_duration = Duration::from_millis(lease);
    config.renew_deadline = Duration::from_millis(renew);
    config.retry_period = Duration::from_millis(retry);
    config
}

fn both_callbacks() -> LeaderCallbacks {
    LeaderCallbacks::new()
        .on_started_leading(|_| async {})
        .on_stopped_leading(|| {})
}

#[test]
fn validation_follows_client_go() {
    let ok = |lease, renew, retry| {
        LeaderElector::new(config_with(lease, renew, retry, both_callbacks()))
    };
    assert!(ok(15_000, 10_000, 2_000).is_ok());
    assert!(ok(2_000, 1_000, 300).is_ok());
    let cases = [
        (
            10_000,
            10_000,
            2_000,
            "lease_duration must be greater than renew_deadline",
        ),
        (
            15_000,
            2_400,
            2_000,
            "renew_deadline must be greater than retry_period",
        ),
        (15_000, 10_000, 0, "retry_period must be greater than zero"),
    ];
    for (lease, renew, retry, message) in cases {
        let err = ok(lease, renew, retry).expect_err(message);
        assert!(err.is_invalid_config());
        assert!(err.to_string().contains(message), "{err}");
    }
    // Just above the jitter bound is fine.
    assert!(ok(15_000, 2_401, 2_000).is_ok());
    let mut huge = config_with(15_000, 10_000, 2_000, both_callbacks());
    huge.lease_duration = Duration::MAX;
    huge.renew_deadline = Duration::MAX - Duration::from_secs(1);
    let err = LeaderElector::new(huge).expect_err("lease_duration Duration::MAX");
    assert!(err.to_string().contains("leaseDurationSeconds"), "{err}");
    // A retry period whose jittered bound exceeds `Duration::MAX` is refused, not a panic.
    let mut huge = config_with(15_000, 10_000, 2_000, both_callbacks());
    huge.retry_period = Duration::MAX;
    let err = LeaderElector::new(huge).expect_err("retry_period Duration::MAX");
    assert!(
        err.to_string()
            .contains("renew_deadline must be greater than retry_period"),
        "{err}"
    );

    let no_start = LeaderCallbacks::new().on_stopped_leading(|| {});
    let err = LeaderElector::new(config_with(15_000, 10_000, 2_000, no_start)).expect_err("start");
    assert!(err.to_string().contains("on_started_leading"));
    let no_stop = LeaderCallbacks::new().on_started_leading(|_| async {});
    let err = LeaderElector::new(config_with(15_000, 10_000, 2_000, no_stop)).expect_err("stop");
    assert!(err.to_string().contains("on_stopped_leading"));

    let store = Arc::new(Mutex::new(Store::default()));
    let (lock, _) = MemoryLock::new(&store, "");
    let err = LeaderElector::new(LeaderElectionConfig::new(lock, both_callbacks()))
        .expect_err("empty identity");
    assert!(err.to_string().contains("identity"));
}

#[test]
fn defaults_are_the_core_components_durations() {
    let config = config_with(1, 1, 1, both_callbacks());
    let store = Arc::new(Mutex::new(Store::default()));
    let (lock, _) = MemoryLock::new(&store, "me");
    let defaults = LeaderElectionConfig::new(lock, both_callbacks());
    assert_eq!(defaults.lease_duration, Duration::from_secs(15));
    assert_eq!(defaults.renew_deadline, Duration::from_secs(10));
    assert_eq!(defaults.retry_period, Duration::from_secs(2));
    assert!(!defaults.release_on_cancel);
    drop(config);
}

#[tokio::test(start_paused = true)]
async fn a_lone_candidate_creates_the_lock_and_keeps_renewing() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, _) = candidate(&store, "a", false);
    let (cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("started leading");
    assert!(a.is_leader());
    assert_eq!(a.get_leader(), "a");
    let record = stored(&store);
    assert_eq!(record.holder_identity, "a");
    assert_eq!(record.lease_duration_seconds, 2);
    assert_eq!(record.leader_transitions, 0);
    let acquired_at = record.acquire_time;

    tokio::time::sleep(Duration::from_secs(10)).await;
    let record = stored(&store);
    assert_eq!(
        record.acquire_time, acquired_at,
        "renewals keep the acquire time"
    );
    assert!(store.lock().writes >= 10, "renewed every retry period");
    assert_eq!(*probe.leaders.lock(), vec!["a".to_string()]);

    cancel.cancel();
    handle.await.expect("run ends");
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 1);
    assert!(probe.leading_cancelled.load(Ordering::SeqCst));
    // No release configured: the record still names a.
    assert_eq!(stored(&store).holder_identity, "a");
}

#[tokio::test(start_paused = true)]
async fn two_candidates_never_both_lead() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, probe_a, _) = candidate(&store, "a", false);
    let (b, probe_b, _) = candidate(&store, "b", false);
    let (cancel_a, run_a) = spawn_run(&a);
    let (cancel_b, run_b) = spawn_run(&b);
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!(a.is_leader() && b.is_leader()), "both lead");
    }
    let started =
        probe_a.started_count.load(Ordering::SeqCst) + probe_b.started_count.load(Ordering::SeqCst);
    assert_eq!(started, 1, "exactly one candidate started leading");
    assert!(a.is_leader() ^ b.is_leader());
    assert_eq!(a.get_leader(), b.get_leader());
    cancel_a.cancel();
    cancel_b.cancel();
    run_a.await.expect("a ends");
    run_b.await.expect("b ends");
}

#[tokio::test(start_paused = true)]
async fn expiry_is_judged_from_the_observed_time_not_the_renew_time() {
    let store = Arc::new(Mutex::new(Store::default()));
    // A record written by a holder whose clock is decades behind, and that then died.
    store.lock().record = Some(LeaderElectionRecord {
        holder_identity: "gone".into(),
        lease_duration_seconds: 2,
        acquire_time: Some(MicroTime::from_unix_micros(0)),
        renew_time: Some(MicroTime::from_unix_micros(0)),
        leader_transitions: 4,
        ..LeaderElectionRecord::default()
    });
    store.lock().version = 1;
    let (b, mut probe, _) = candidate(&store, "b", false);
    let start = Instant::now();
    let (cancel, handle) = spawn_run(&b);
    let started = probe.started.recv().await.expect("b takes over");
    let waited = started - start;
    // Not at once (the ancient renewTime does not count): only after a full lease of seeing
    // no change, and within one jittered retry after that.
    assert!(waited > LEASE, "took over after {waited:?}");
    assert!(
        waited <= LEASE + RETRY.mul_f64(1.0 + JITTER_FACTOR),
        "took over after {waited:?}"
    );
    assert_eq!(
        *probe.leaders.lock(),
        vec!["gone".to_string(), "b".to_string()]
    );
    assert_eq!(
        stored(&store).leader_transitions,
        5,
        "takeover counts a transition"
    );
    cancel.cancel();
    handle.await.expect("run ends");
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_cannot_renew_stops_after_the_renew_deadline() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, unreachable) = candidate(&store, "a", false);
    let (_cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    unreachable.store(true, Ordering::SeqCst);
    let cut = Instant::now();
    handle.await.expect("run ends by itself");
    let gave_up = cut.elapsed();
    // The failure is seen at the next renewal (one retry period away at most), then retried
    // until the renew deadline.
    assert!(
        gave_up >= RENEW && gave_up <= RENEW + RETRY,
        "gave up after {gave_up:?}"
    );
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 1);
    tokio::task::yield_now().await;
    assert!(probe.leading_cancelled.load(Ordering::SeqCst));
}

/// A leader whose server stops answering ends its term when its renewals give up, before
/// it tries to release the lease (which hangs as long as the renew deadline allows): a
/// successor may lead already.
#[tokio::test(start_paused = true)]
async fn a_leader_that_cannot_renew_ends_its_term_before_the_release() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, _) = candidate(&store, "a", true);
    let (_cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    let cut = Instant::now();
    // Every call hangs from now on.
    store.lock().slow = Duration::from_secs(3600);
    while !probe.leading_cancelled.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ended = cut.elapsed();
    assert!(
        ended <= RENEW + RETRY + Duration::from_millis(20),
        "the term ended {ended:?} after the cut"
    );
    assert!(!handle.is_finished(), "the release is still being tried");
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 0);
    handle.await.expect("run ends by itself");
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 1);
}

/// Failed renewals are retried on a fixed tick from each attempt's start, as client-go's
/// `PollUntilContextTimeout` retries them: a slow attempt does not push the next one back.
#[tokio::test(start_paused = true)]
async fn failed_renewals_are_retried_on_a_fixed_tick() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, unreachable) = candidate(&store, "a", false);
    let (_cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    // Between two renewals.
    tokio::time::sleep(RETRY / 2).await;
    {
        let mut store = store.lock();
        store.slow = Duration::from_millis(100);
        store.calls.clear();
    }
    unreachable.store(true, Ordering::SeqCst);
    handle.await.expect("run ends by itself");
    let attempts: Vec<Instant> = store
        .lock()
        .calls
        .iter()
        .filter(|(call, _)| *call == "update")
        .map(|(_, at)| *at)
        .collect();
    // Each failed attempt is an update and then a read, 100 ms each; the attempts still
    // start every retry period until the renew deadline (sliding, they would be 500 ms
    // apart, and only two would fit).
    assert_eq!(attempts.len(), 4, "attempts at {attempts:?}");
    for pair in attempts.windows(2) {
        assert_eq!(pair[1] - pair[0], RETRY, "attempts at {attempts:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn release_on_cancel_hands_over_at_once() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe_a, _) = candidate(&store, "a", true);
    let (b, mut probe_b, _) = candidate(&store, "b", true);
    let (cancel_a, run_a) = spawn_run(&a);
    probe_a.started.recv().await.expect("a leads");
    let (cancel_b, run_b) = spawn_run(&b);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(a.is_leader() && !b.is_leader());
    assert_eq!(b.get_leader(), "a");

    let released_at = Instant::now();
    cancel_a.cancel();
    run_a.await.expect("a ends");
    let record = stored(&store);
    assert_eq!(record.holder_identity, "");
    assert_eq!(record.lease_duration_seconds, 1);
    assert_eq!(record.leader_transitions, 0);
    assert!(!a.is_leader());

    let started = probe_b.started.recv().await.expect("b takes over");
    let handover = started - released_at;
    assert!(
        handover <= RETRY.mul_f64(1.0 + JITTER_FACTOR),
        "handover took {handover:?}"
    );
    assert_eq!(stored(&store).leader_transitions, 1);
    assert_eq!(stored(&store).holder_identity, "b");
    cancel_b.cancel();
    run_b.await.expect("b ends");
    assert_eq!(stored(&store).holder_identity, "", "b released too");
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_follower_never_leads_and_still_reports_stopped() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe_a, _) = candidate(&store, "a", true);
    let (b, probe_b, _) = candidate(&store, "b", true);
    let (cancel_a, run_a) = spawn_run(&a);
    probe_a.started.recv().await.expect("a leads");
    let (cancel_b, run_b) = spawn_run(&b);
    tokio::time::sleep(Duration::from_secs(1)).await;
    cancel_b.cancel();
    run_b.await.expect("b ends");
    assert_eq!(probe_b.started_count.load(Ordering::SeqCst), 0);
    assert_eq!(probe_b.stopped.load(Ordering::SeqCst), 1);
    // A follower's release leaves the leader's record alone.
    assert_eq!(stored(&store).holder_identity, "a");
    cancel_a.cancel();
    run_a.await.expect("a ends");
}

#[tokio::test(start_paused = true)]
async fn check_reports_a_stuck_leader() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, _) = candidate(&store, "a", false);
    let (cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    assert!(a.check(Duration::from_secs(1)).is_ok());
    cancel.cancel();
    handle.await.expect("run ends");
    // Still believes it leads (no release), and nothing renews any more.
    tokio::time::sleep(LEASE + Duration::from_secs(2)).await;
    let err = a.check(Duration::from_secs(1)).expect_err("stale");
    assert!(err.is_lease_expired());
    // A tolerance too large to add to the lease duration tolerates anything.
    assert!(a.check(Duration::MAX).is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_healthz_adaptor_fails_only_while_its_leader_cannot_renew() {
    const TOLERANCE: Duration = Duration::from_secs(1);
    let store = Arc::new(Mutex::new(Store::default()));
    // Made before the elector, as a /healthz endpoint is: it passes while there is none.
    let healthz = HealthzAdaptor::new(TOLERANCE);
    assert_eq!(healthz.name(), "leaderElection");
    assert_eq!(healthz.max_tolerable_expired_lease(), TOLERANCE);
    assert!(healthz.check().is_ok(), "no elector yet");
    let (a, mut probe_a, unreachable_a) = watched_candidate(&store, "a", true, Some(&healthz));
    assert!(healthz.check().is_ok(), "not leading yet");

    // Leading and renewing: healthy, however long it lasts.
    let (_cancel_a, run_a) = spawn_run(&a);
    probe_a.started.recv().await.expect("a leads");
    tokio::time::sleep(LEASE * 5).await;
    assert!(a.is_leader());
    assert!(healthz.check().is_ok(), "renewing");

    // A follower with a healthz of its own: healthy while it does not lead.
    let follower_healthz = HealthzAdaptor::new(TOLERANCE);
    let (b, mut probe_b, _) = watched_candidate(&store, "b", true, Some(&follower_healthz));
    let (cancel_b, run_b) = spawn_run(&b);
    tokio::time::sleep(LEASE).await;
    assert!(!b.is_leader());
    assert!(follower_healthz.check().is_ok(), "a follower");

    // a loses the API server: it stops leading after the renew deadline but, unable to
    // read the lock, still believes it holds it. Healthy until the lease plus the tolerance
    // have passed since its last renewal, unhealthy after.
    unreachable_a.store(true, Ordering::SeqCst);
    let cut = Instant::now();
    run_a.await.expect("a stops leading");
    assert!(a.is_leader(), "still the holder a last saw");
    assert!(healthz.check().is_ok(), "within the tolerated expiry");
    tokio::time::sleep_until(cut + LEASE + TOLERANCE + RETRY).await;
    let error = healthz.check().expect_err("a leader that cannot renew");
    assert!(error.is_lease_expired(), "{error}");
    assert!(
        error
            .to_string()
            .contains("failed election to renew leadership")
    );

    // b takes over and renews: its healthz passes.
    probe_b.started.recv().await.expect("b leads");
    tokio::time::sleep(LEASE).await;
    assert!(follower_healthz.check().is_ok(), "b renewing");

    // a reaches the API server again and competes: it sees b lead, so it is healthy again.
    unreachable_a.store(false, Ordering::SeqCst);
    let (cancel_a, run_a) = spawn_run(&a);
    tokio::time::sleep(LEASE).await;
    assert_eq!(a.get_leader(), "b");
    assert!(healthz.check().is_ok(), "a follower again");
    cancel_a.cancel();
    cancel_b.cancel();
    run_a.await.expect("a ends");
    run_b.await.expect("b ends");
}

#[tokio::test(start_paused = true)]
async fn an_outside_write_sends_the_leader_through_the_slow_path_and_it_keeps_leading() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, _) = candidate(&store, "a", false);
    let (cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    // Someone else bumps the stored version (as a label edit on the Lease would): the
    // leader's next optimistic update conflicts.
    {
        let mut s = store.lock();
        s.version += 1;
    }
    let writes_before = store.lock().writes;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(a.is_leader());
    assert!(store.lock().writes > writes_before + 5, "renewals resumed");
    assert_eq!(stored(&store).holder_identity, "a");
    assert_eq!(
        stored(&store).leader_transitions,
        0,
        "a renewal, not a takeover"
    );
    assert_eq!(probe.started_count.load(Ordering::SeqCst), 1);
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 0);
    cancel.cancel();
    handle.await.expect("run ends");
}

#[tokio::test(start_paused = true)]
async fn a_renew_time_in_the_future_does_not_delay_a_takeover() {
    let store = Arc::new(Mutex::new(Store::default()));
    // A dead holder whose clock ran far ahead: its renewTime is in the future.
    store.lock().record = Some(LeaderElectionRecord {
        holder_identity: "ahead".into(),
        lease_duration_seconds: 2,
        renew_time: Some(MicroTime::from_unix_micros(i64::MAX / 2)),
        acquire_time: Some(MicroTime::from_unix_micros(i64::MAX / 2)),
        ..LeaderElectionRecord::default()
    });
    store.lock().version = 1;
    let (b, mut probe, _) = candidate(&store, "b", false);
    let start = Instant::now();
    let (cancel, handle) = spawn_run(&b);
    let started = probe.started.recv().await.expect("b takes over");
    let waited = started - start;
    assert!(waited > LEASE, "took over after {waited:?}");
    assert!(
        waited <= LEASE + RETRY.mul_f64(1.0 + JITTER_FACTOR),
        "took over after {waited:?}"
    );
    cancel.cancel();
    handle.await.expect("run ends");
}

/// A `run` future that is dropped (the task aborted, or a `select!` on a shutdown signal
/// taking the other branch) no longer renews the lease: the leader's work must end with it,
/// or it would go on after another candidate took over.
#[tokio::test(start_paused = true)]
async fn dropping_run_ends_the_leaders_work() {
    let store = Arc::new(Mutex::new(Store::default()));
    let (a, mut probe, _) = candidate(&store, "a", false);
    let (_cancel, handle) = spawn_run(&a);
    probe.started.recv().await.expect("a leads");
    handle.abort();
    assert!(handle.await.expect_err("aborted").is_cancelled());
    // Let the leader's task see its token.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(
        probe.leading_cancelled.load(Ordering::SeqCst),
        "the leader's work still runs after run was dropped"
    );
}
