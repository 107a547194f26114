//! Leader election on a real Lease: one leader among candidates, fast handover on release,
//! takeover after the lease duration when a leader stops renewing.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::EventSource;
use kclient_apimachinery::{GetOptions, ListOptions};
use kclient_clientset::Clientset;
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{
    ClientEventSink, EventBroadcaster, EventRecorder, LeaderCallbacks, LeaderElectionConfig,
    LeaderElector, LeaseLock,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

// Short enough for a quick test, with room for a loaded machine: a leader steps down if its
// renewals stall for the renew deadline, and a 1 s deadline is within reach of a few slow round
// trips to etcd.
const LEASE: Duration = Duration::from_secs(4);
const RENEW: Duration = Duration::from_secs(3);
const RETRY: Duration = Duration::from_millis(300);

struct Candidate {
    /// What `on_new_leader` reported, in order.
    observed: Arc<parking_lot::Mutex<Vec<String>>>,
    identity: String,
    elector: Arc<LeaderElector>,
    cancel: CancellationToken,
    run: JoinHandle<()>,
}

/// Starts a candidate; its identity is sent on `started` when it starts leading.
fn start(
    cs: &Clientset,
    ns: &str,
    identity: &str,
    release_on_cancel: bool,
    started: mpsc::UnboundedSender<(String, Instant)>,
    recorder: Option<EventRecorder>,
) -> Candidate {
    let mut lock = LeaseLock::new(cs.coordination_v1().leases(ns), "election", identity);
    if let Some(recorder) = recorder {
        lock = lock.with_event_recorder(recorder);
    }
    let id = identity.to_string();
    let observed = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let callbacks = LeaderCallbacks::new()
        .on_started_leading(move |leading| {
            let _ = started.send((id.clone(), Instant::now()));
            async move { leading.cancelled().await }
        })
        .on_stopped_leading(|| {})
        .on_new_leader({
            let observed = observed.clone();
            move |leader| observed.lock().push(leader.to_string())
        });
    let mut config = LeaderElectionConfig::new(lock, callbacks);
    config.lease_duration = LEASE;
    config.renew_deadline = RENEW;
    config.retry_period = RETRY;
    config.release_on_cancel = release_on_cancel;
    config.name = "it".into();
    let elector = Arc::new(LeaderElector::new(config).expect("valid config"));
    let cancel = CancellationToken::new();
    let run = {
        let elector = elector.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { elector.run(cancel).await })
    };
    Candidate {
        observed,
        identity: identity.into(),
        elector,
        cancel,
        run,
    }
}

async fn next_leader(
    started: &mut mpsc::UnboundedReceiver<(String, Instant)>,
) -> (String, Instant) {
    tokio::time::timeout(Duration::from_secs(15), started.recv())
        .await
        .expect("a leader within 15 s")
        .expect("the channel stays open")
}

#[tokio::test(flavor = "multi_thread")]
async fn one_leader_and_a_fast_handover_on_release() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let broadcaster = EventBroadcaster::new();
    broadcaster.start_recording_to_sink(ClientEventSink::new(env.client(Identity::Admin)));
    let recorder = broadcaster.new_recorder(EventSource {
        component: Some("election-test".into()),
        host: None,
    });

    let (tx, mut started) = mpsc::unbounded_channel();
    let a = start(
        &cs,
        ns.name(),
        "candidate-a",
        true,
        tx.clone(),
        Some(recorder.clone()),
    );
    let b = start(
        &cs,
        ns.name(),
        "candidate-b",
        true,
        tx.clone(),
        Some(recorder),
    );
    let (first, _) = next_leader(&mut started).await;

    // Over more than a lease duration, exactly one leads and both agree who.
    for _ in 0..(LEASE.as_millis() / 100 + 10) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !(a.elector.is_leader() && b.elector.is_leader()),
            "both lead"
        );
    }
    assert!(started.try_recv().is_err(), "no second leader started");
    let (leader, follower) = if first == a.identity { (a, b) } else { (b, a) };
    assert!(leader.elector.is_leader() && !follower.elector.is_leader());
    assert_eq!(follower.elector.get_leader(), leader.identity);

    let leases = cs.coordination_v1().leases(ns.name());
    let lease = leases
        .get("election", &GetOptions::default())
        .await
        .expect("lease");
    let spec = lease.spec.as_deref().expect("spec");
    assert_eq!(
        spec.holder_identity.as_deref(),
        Some(leader.identity.as_str())
    );
    assert_eq!(
        spec.lease_duration_seconds,
        i32::try_from(LEASE.as_secs()).ok()
    );
    assert_eq!(spec.lease_transitions, Some(0));
    assert!(spec.renew_time.is_some() && spec.acquire_time.is_some());

    // Cancelling the leader releases the lease: the follower takes over well within a lease
    // duration (it does not wait for expiry).
    let released = Instant::now();
    leader.cancel.cancel();
    leader.run.await.expect("leader's run ends");
    let (second, at) = next_leader(&mut started).await;
    assert_eq!(second, follower.identity);
    let handover = at - released;
    eprintln!("handover after release: {handover:?}");
    assert!(handover < LEASE / 2, "handover took {handover:?}");

    let lease = leases
        .get("election", &GetOptions::default())
        .await
        .expect("lease");
    let spec = lease.spec.as_deref().expect("spec");
    assert_eq!(
        spec.holder_identity.as_deref(),
        Some(follower.identity.as_str())
    );
    assert_eq!(
        spec.lease_transitions,
        Some(1),
        "the takeover counts a transition"
    );

    // The follower reported the first leader, then itself.
    assert_eq!(
        *follower.observed.lock(),
        vec![leader.identity.clone(), follower.identity.clone()]
    );
    follower.cancel.cancel();
    follower.run.await.expect("follower's run ends");
    let lease = leases
        .get("election", &GetOptions::default())
        .await
        .expect("lease");
    let spec = lease.spec.as_deref().expect("spec");
    assert_eq!(
        spec.holder_identity.as_deref().unwrap_or(""),
        "",
        "released"
    );
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert_eq!(spec.lease_transitions, Some(1));

    // The lock recorded LeaderElection events about the Lease.
    let events = crate::eventually(
        Duration::from_secs(10),
        "leader election events",
        || async {
            let list = cs
                .core_v1()
                .events(ns.name())
                .list(&ListOptions::default())
                .await
                .ok()?;
            let became: Vec<String> = list
                .items
                .iter()
                .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
                .filter_map(|e| e.message.as_deref().map(str::to_string))
                .filter(|m| m.ends_with("became leader"))
                .collect();
            (became.len() == 2).then_some(became)
        },
    )
    .await;
    assert!(events.iter().any(|m| m == "candidate-a became leader"));
    assert!(events.iter().any(|m| m == "candidate-b became leader"));
    broadcaster.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_that_stops_renewing_is_replaced_after_the_lease_duration() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let (tx, mut started) = mpsc::unbounded_channel();
    let a = start(&cs, ns.name(), "a", false, tx.clone(), None);
    let (first, _) = next_leader(&mut started).await;
    assert_eq!(first, "a");
    let b = start(&cs, ns.name(), "b", false, tx.clone(), None);
    crate::eventually(Duration::from_secs(15), "b to see a lead", || {
        let seen = b.elector.get_leader() == "a";
        async move { seen.then_some(()) }
    })
    .await;

    // The leader stops renewing without releasing (as if it crashed).
    let stopped = Instant::now();
    a.cancel.cancel();
    a.run.await.expect("a's run ends");
    let (second, at) = next_leader(&mut started).await;
    assert_eq!(second, "b");
    let takeover = at - stopped;
    // a last renewed about one retry period, plus that renewal's round trip, before it stopped,
    // and b waits a full lease duration from when it saw that renewal. Allow 1.2 s for the round
    // trip on a loaded machine; a takeover that did not wait for the lease to expire would come
    // within b's next retry (at most 660 ms).
    eprintln!("takeover after the leader stopped renewing: {takeover:?}");
    assert!(
        takeover >= LEASE - RETRY - Duration::from_millis(1200),
        "took over after {takeover:?}"
    );
    assert!(takeover < LEASE * 3, "took over after {takeover:?}");
    let lease = cs
        .coordination_v1()
        .leases(ns.name())
        .get("election", &GetOptions::default())
        .await
        .expect("lease");
    assert_eq!(
        lease.spec.as_deref().and_then(|s| s.lease_transitions),
        Some(1)
    );
    b.cancel.cancel();
    b.run.await.expect("b's run ends");
}

#[tokio::test(flavor = "multi_thread")]
async fn leadership_passes_down_a_line_of_candidates() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let (tx, mut started) = mpsc::unbounded_channel();
    let mut candidates: Vec<Candidate> = ["c0", "c1", "c2"]
        .iter()
        .map(|id| start(&cs, ns.name(), id, true, tx.clone(), None))
        .collect();
    let mut leaders = Vec::new();
    for round in 0..3 {
        let (leader, _) = next_leader(&mut started).await;
        assert!(!leaders.contains(&leader), "{leader} led twice");
        leaders.push(leader.clone());
        // Everyone still running agrees, and only the leader believes it leads.
        crate::eventually(Duration::from_secs(5), "agreement on the leader", || {
            let agree = candidates.iter().all(|c| {
                c.elector.get_leader() == leader && c.elector.is_leader() == (c.identity == leader)
            });
            async move { agree.then_some(()) }
        })
        .await;
        let lease = cs
            .coordination_v1()
            .leases(ns.name())
            .get("election", &GetOptions::default())
            .await
            .expect("lease");
        assert_eq!(
            lease.spec.as_deref().and_then(|s| s.lease_transitions),
            Some(round)
        );
        let index = candidates
            .iter()
            .position(|c| c.identity == leader)
            .expect("the leader is a candidate");
        let leader = candidates.remove(index);
        leader.cancel.cancel();
        leader.run.await.expect("run ends");
    }
    assert!(started.try_recv().is_err());
    let mut sorted = leaders.clone();
    sorted.sort();
    assert_eq!(sorted, ["c0", "c1", "c2"]);
}

/// client-go's `LeaseLock.Update` sets the lock's labels on a Lease that exists already (one
/// created before the labels were configured, or by another candidate), keeping its other
/// labels.
#[tokio::test(flavor = "multi_thread")]
async fn the_lock_labels_an_existing_lease_when_it_writes() {
    use kclient_api::coordination::v1::{Lease, LeaseSpec};
    use kclient_apimachinery::CreateOptions;
    use kclient_apimachinery::meta::v1::ObjectMeta;
    use kclient_tools::{LeaderElectionRecord, ResourceLock};

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let leases = cs.coordination_v1().leases(ns.name());
    let existing = Lease {
        metadata: ObjectMeta {
            name: Some("election".into()),
            labels: Some([("keep".into(), "me".into())].into_iter().collect()),
            ..ObjectMeta::default()
        },
        spec: Some(Box::new(LeaseSpec::default())),
    };
    leases
        .create(&existing, &CreateOptions::default())
        .await
        .expect("create the lease");

    let lock = LeaseLock::new(leases.clone(), "election", "candidate-a").with_labels(
        [("app".to_string(), "my-controller".to_string())]
            .into_iter()
            .collect(),
    );
    lock.get().await.expect("get");
    lock.update(LeaderElectionRecord {
        holder_identity: "candidate-a".into(),
        lease_duration_seconds: 15,
        ..LeaderElectionRecord::default()
    })
    .await
    .expect("update");

    let lease = leases
        .get("election", &GetOptions::default())
        .await
        .expect("lease");
    let labels = lease.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("app").map(|v| v.as_ref()),
        Some("my-controller"),
        "{labels:?}"
    );
    assert_eq!(
        labels.get("keep").map(|v| v.as_ref()),
        Some("me"),
        "{labels:?}"
    );
    assert_eq!(
        lease
            .spec
            .as_deref()
            .and_then(|s| s.holder_identity.as_deref()),
        Some("candidate-a")
    );
}

/// client-go's lock records "stopped leading" whenever the renew loop ends, a cancelled
/// (graceful) shutdown included, after the release: the Lease's events show the leader
/// leaving, not only arriving.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_leader_records_that_it_stopped_leading() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let broadcaster = EventBroadcaster::new();
    let watcher =
        broadcaster.start_recording_to_sink(ClientEventSink::new(env.client(Identity::Admin)));
    let recorder = broadcaster.new_recorder(EventSource {
        component: Some("election-test".into()),
        host: None,
    });
    let (tx, mut started) = mpsc::unbounded_channel();
    let a = start(&cs, ns.name(), "candidate-a", true, tx, Some(recorder));
    next_leader(&mut started).await;
    // Let it renew a few times, then shut it down.
    tokio::time::sleep(RETRY * 3).await;
    a.cancel.cancel();
    a.run.await.expect("run ends");
    broadcaster.shutdown();
    watcher.wait().await;

    let list = cs
        .core_v1()
        .events(ns.name())
        .list(&ListOptions::default())
        .await
        .expect("list events");
    let messages: Vec<&str> = list
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
        .filter_map(|e| e.message.as_deref())
        .collect();
    assert!(
        messages.contains(&"candidate-a became leader"),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"candidate-a stopped leading"),
        "{messages:?}"
    );
}
