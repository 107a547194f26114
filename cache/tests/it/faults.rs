//! A SharedIndexInformer whose every connection goes through a `FaultProxy` in front of the
//! real apiserver, while a writer (not through the proxy) creates, updates and deletes
//! ConfigMaps: connections are cut several times (between events and inside the event
//! stream), refused for a second, stalled for a second, and a TLS record is corrupted.
//! Afterwards the cache and an event handler's view must equal a fresh list (same names, same
//! resourceVersions): no event and no object lost. Each fault is proved to have hit the
//! informer: after each break the reflector must open a new watch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use kclient_apimachinery::{Error, ListOptions, ObjectList};
use kclient_cache::{
    Backoff, CancellationToken, ListerWatcher, REFLECTOR_BACKOFF, ReflectorOptions,
    SharedIndexInformer, SharedIndexInformerOptions, WatchStream, wait_for_cache_sync,
};
use kclient_testenv::{FaultProxy, Identity, TestEnv, TestNamespace, most_within};
use parking_lot::Mutex;

use crate::adapter::{
    ConfigMap, ConfigMapListerWatcher, ConfigMaps, ForcedRelists, View, Wire, mirror_handler,
    view_of,
};

/// The bound of every wait.
const BOUND: Duration = Duration::from_secs(20);

/// Writes in flight at once.
const CONCURRENCY: usize = 8;

/// How often waits poll.
const POLL: Duration = Duration::from_millis(20);

/// The most lists and watches one informer may ask for within a second in these tests: the
/// backoff's first delays (100, 200, 400 ms, jittered up to twice that) after a fault, plus
/// the re-watch after a healthy close. A retry loop without backoff makes hundreds.
const MAX_REQUESTS_PER_SECOND: usize = 8;

/// What the reflector asked of its [`ListerWatcher`].
#[derive(Debug, Default)]
struct Calls {
    lists: AtomicUsize,
    watches: AtomicUsize,
    /// Watches whose response headers arrived (the stream is open).
    watches_opened: AtomicUsize,
    /// Items (events and errors) received on each opened watch, in opening order.
    items_per_watch: Mutex<Vec<usize>>,
    /// When each list and watch was asked for.
    times: Mutex<Vec<tokio::time::Instant>>,
}

impl Calls {
    fn record(&self) {
        self.times.lock().push(tokio::time::Instant::now());
    }

    /// The request-rate guard: the most lists and watches asked for within any one second.
    fn most_in_one_second(&self) -> usize {
        most_within(&self.times.lock(), Duration::from_secs(1))
    }
}

/// Counts the calls of the informer's reflector and what each watch received.
struct Counting {
    inner: ConfigMapListerWatcher,
    calls: Arc<Calls>,
    /// While set, every watch asks for resourceVersion "1" (so the server answers 410); the
    /// next list clears it.
    force_410_until_relist: Arc<AtomicBool>,
}

impl ListerWatcher<ConfigMap> for Counting {
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<ConfigMap>, Error>> {
        self.calls.lists.fetch_add(1, Ordering::SeqCst);
        self.calls.record();
        self.force_410_until_relist.store(false, Ordering::SeqCst);
        self.inner.list(options)
    }

    fn watch(&self, options: ListOptions) -> BoxFuture<'_, Result<WatchStream<ConfigMap>, Error>> {
        self.calls.watches.fetch_add(1, Ordering::SeqCst);
        self.calls.record();
        let mut options = options;
        if self.force_410_until_relist.load(Ordering::SeqCst) {
            options.resource_version = Some("1".to_owned());
        }
        let calls = self.calls.clone();
        let open = self.inner.watch(options);
        async move {
            let stream = open.await?;
            let index = {
                let mut items = calls.items_per_watch.lock();
                items.push(0);
                items.len() - 1
            };
            calls.watches_opened.fetch_add(1, Ordering::SeqCst);
            let stream = stream.inspect(move |_| calls.items_per_watch.lock()[index] += 1);
            Ok(stream.boxed())
        }
        .boxed()
    }
}

/// An informer on `namespace` through `proxy`, a handler mirroring its events into a
/// [`View`], and the errors its watch-error handler received.
struct Watched {
    informer: SharedIndexInformer<ConfigMap>,
    calls: Arc<Calls>,
    /// While set, watches ask for resourceVersion "1" and the server answers 410, until the
    /// reflector relists.
    force_410_until_relist: Arc<AtomicBool>,
    mirror: Arc<Mutex<View>>,
    errors: Arc<Mutex<Vec<Error>>>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Watched {
    async fn start(
        proxy: &FaultProxy,
        namespace: &str,
        use_watch_list: bool,
        wire: Wire,
    ) -> Watched {
        let calls = Arc::new(Calls::default());
        let force_410_until_relist: Arc<AtomicBool> = Arc::default();
        let lw = Counting {
            inner: ConfigMapListerWatcher {
                client: proxy.client(Identity::Admin),
                namespace: namespace.to_owned(),
                wire,
                lists: Arc::default(),
                forced_relists: ForcedRelists::default(),
            },
            calls: calls.clone(),
            force_410_until_relist: force_410_until_relist.clone(),
        };
        let informer = SharedIndexInformer::with_options(
            Arc::new(lw),
            SharedIndexInformerOptions::default().reflector(
                ReflectorOptions::default()
                    .name(format!("faults-{namespace}"))
                    .use_watch_list(use_watch_list)
                    // Short retry delays keep the test fast; the paths taken are the same.
                    .backoff(Backoff {
                        duration: Duration::from_millis(100),
                        cap: Duration::from_secs(1),
                        ..REFLECTOR_BACKOFF
                    }),
            ),
        );
        let errors: Arc<Mutex<Vec<Error>>> = Arc::default();
        let seen = errors.clone();
        informer
            .set_watch_error_handler(move |_, e| seen.lock().push(e.clone()))
            .expect("set the watch error handler");
        let (mirror, registration) = mirror_handler(&informer);
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, cancel) = (informer.clone(), cancel.clone());
            async move { informer.run(cancel).await }
        });
        let synced = tokio::time::timeout(
            BOUND,
            wait_for_cache_sync(&cancel, &[&informer, &registration]),
        )
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the informer did not sync through the proxy within {BOUND:?}; errors: {:?}",
                errors.lock()
            )
        });
        assert!(synced, "the informer stopped before it synced");
        Watched {
            informer,
            calls,
            force_410_until_relist,
            mirror,
            errors,
            cancel,
            task,
        }
    }

    fn opened(&self) -> usize {
        self.calls.watches_opened.load(Ordering::SeqCst)
    }

    /// Waits until the cache and the handler's view both equal a fresh list.
    async fn assert_converges(&self, cms: &ConfigMaps) {
        let fresh = view_of(
            cms.list()
                .await
                .expect("a fresh list")
                .items
                .into_iter()
                .map(Arc::new),
        );
        let deadline = tokio::time::Instant::now() + BOUND;
        loop {
            let cached = view_of(self.informer.get_indexer().list());
            let mirrored = self.mirror.lock().clone();
            if cached == fresh && mirrored == fresh {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "after the faults the informer did not converge on a fresh list within \
                     {BOUND:?}:\n  cache:   {}\n  handler: {}\n  calls: {:?}\n  errors: {:?}",
                    diff(&cached, &fresh),
                    diff(&mirrored, &fresh),
                    self.calls,
                    self.errors.lock()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn stop(self) {
        // Every path that lists or watches again goes through the backoff (here 100 ms
        // doubling to 1 s): a few quick retries after a fault, never a loop.
        let most = self.calls.most_in_one_second();
        assert!(
            most <= MAX_REQUESTS_PER_SECOND,
            "{most} lists and watches within one second: a retry loop ignores the backoff; {:?}",
            self.calls
        );
        self.cancel.cancel();
        tokio::time::timeout(BOUND, self.task)
            .await
            .expect("the informer stopped within the bound")
            .expect("the informer task");
    }
}

/// What `got` lacks, has in excess, or has at another version than `want` (a few of each).
fn diff(got: &View, want: &View) -> String {
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    let stale: Vec<_> = want
        .iter()
        .filter(|(k, v)| got.get(*k).is_some_and(|g| g != *v))
        .map(|(k, v)| format!("{k} at {:?} not {v}", got[k]))
        .collect();
    format!(
        "{} objects, {} missing {:?}, {} extra {:?}, {} stale {:?}",
        got.len(),
        missing.len(),
        &missing[..missing.len().min(5)],
        extra.len(),
        &extra[..extra.len().min(5)],
        stale.len(),
        &stale[..stale.len().min(5)],
    )
}

/// Polls `done` until it holds, panicking with `what` after the bound.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + BOUND;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} within {BOUND:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

enum Op {
    Create(String),
    Update(ConfigMap),
    Delete(String),
}

/// One batch of writes: `creates` new ConfigMaps named after `round`, then updates of the
/// oldest live ones and deletes of the next; `live` follows what the server holds.
async fn write_batch(
    cms: &ConfigMaps,
    live: &mut BTreeMap<String, ConfigMap>,
    round: &str,
    creates: usize,
    updates: usize,
    deletes: usize,
) -> Vec<String> {
    let created: Vec<String> = (0..creates).map(|i| format!("{round}-{i:03}")).collect();
    let mut existing = live.values();
    let mut ops: Vec<Op> = created.iter().cloned().map(Op::Create).collect();
    ops.extend(existing.by_ref().take(updates).cloned().map(|mut cm| {
        let next = cm.data.get("value").map_or(0, |v| v.parse().unwrap_or(0)) + 1;
        cm.data.insert("value".to_owned(), next.to_string());
        Op::Update(cm)
    }));
    ops.extend(
        existing
            .take(deletes)
            .map(|cm| Op::Delete(cm.metadata.name.clone())),
    );
    let results: Vec<(String, Option<ConfigMap>)> = futures_util::stream::iter(ops)
        .map(|op| async move {
            match op {
                Op::Create(name) => {
                    let cm = cms
                        .create(&ConfigMap::new(&name, "0"))
                        .await
                        .unwrap_or_else(|e| panic!("create {name}: {e}"));
                    (name, Some(cm))
                }
                Op::Update(cm) => {
                    let name = cm.metadata.name.clone();
                    let cm = cms
                        .update(&cm)
                        .await
                        .unwrap_or_else(|e| panic!("update {name}: {e}"));
                    (name, Some(cm))
                }
                Op::Delete(name) => {
                    cms.delete(&name)
                        .await
                        .unwrap_or_else(|e| panic!("delete {name}: {e}"));
                    (name, None)
                }
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    for (name, cm) in results {
        match cm {
            Some(cm) => live.insert(name, cm),
            None => live.remove(&name),
        };
    }
    created
}

/// The informer keeps up through cuts (between events and inside them), a refusal, a stall and
/// a corrupted TLS record while ~550 writes happen.
async fn loses_nothing_through_faults(use_watch_list: bool, wire: Wire) {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    let proxy = env.fault_proxy().await;
    let mut live = BTreeMap::new();
    write_batch(&cms, &mut live, "initial", 100, 0, 0).await;
    let watched = Watched::start(&proxy, ns.name(), use_watch_list, wire).await;
    assert_eq!(watched.informer.get_indexer().len(), 100);

    // The watch that was open before the latest fault that broke it.
    let mut broken_at = 0;
    for round in 0..9 {
        let name = format!("r{round}");
        wait_until(
            &format!("before round {round}, the reflector did not open a new watch"),
            || watched.opened() > broken_at,
        )
        .await;
        match round {
            // Cut: every connection closes; the writes land while the reflector reconnects.
            0 | 1 | 3 | 5 | 6 => {
                broken_at = watched.opened();
                let cut = proxy.cut_all().await;
                assert!(cut >= 1, "round {round}: no connection to cut");
                write_batch(&cms, &mut live, &name, 25, 15, 10).await;
            }
            // Refuse: cut, and refuse new connections for a second while writing.
            2 => {
                let refused_before = proxy.connections_refused();
                proxy.refuse(true);
                broken_at = watched.opened();
                let cut = proxy.cut_all().await;
                assert!(cut >= 1, "round {round}: no connection to cut");
                write_batch(&cms, &mut live, &name, 25, 15, 10).await;
                wait_until(
                    "the reflector did not try to reconnect while connections were refused",
                    || proxy.connections_refused() > refused_before,
                )
                .await;
                tokio::time::sleep(Duration::from_secs(1)).await;
                proxy.refuse(false);
            }
            // Stall: nothing passes for a second; the writes must not show up meanwhile.
            4 => {
                proxy.stall(true);
                let created = write_batch(&cms, &mut live, &name, 25, 15, 10).await;
                let indexer = watched.informer.get_indexer();
                let leaked: Vec<&String> = created
                    .iter()
                    .filter(|n| indexer.get_by_key(&format!("{}/{n}", ns.name())).is_some())
                    .collect();
                assert!(
                    leaked.is_empty(),
                    "objects created during the stall reached the cache: {leaked:?}"
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
                proxy.stall(false);
            }
            // Cut inside the stream: the connection closes 3 kB into the events of the writes
            // (inside a TLS record, most likely inside an event).
            7 => {
                broken_at = watched.opened();
                let cut_before = proxy.connections_cut();
                proxy.cut_after_server_bytes(3_000);
                write_batch(&cms, &mut live, &name, 25, 15, 10).await;
                wait_until("the watch was not cut 3 kB into the events", || {
                    proxy.connections_cut() > cut_before
                })
                .await;
                wait_until("the reflector did not watch again after the cut", || {
                    watched.opened() > broken_at
                })
                .await;
            }
            // Corrupt: a TLS record of the events fails its integrity check.
            8 => {
                broken_at = watched.opened();
                let corrupted_before = proxy.corrupted_bytes();
                proxy.corrupt_next_server_bytes(8);
                write_batch(&cms, &mut live, &name, 25, 15, 10).await;
                wait_until("no byte of the events was corrupted", || {
                    proxy.corrupted_bytes() >= corrupted_before + 8
                })
                .await;
                wait_until(
                    "the reflector did not watch again after a corrupted record",
                    || watched.opened() > broken_at,
                )
                .await;
            }
            _ => unreachable!(),
        }
    }
    watched.assert_converges(&cms).await;
    assert_eq!(
        view_of(watched.informer.get_indexer().list()).len(),
        live.len()
    );

    let calls = &watched.calls;
    eprintln!(
        "use_watch_list={use_watch_list} {wire:?}: {calls:?}; proxy: {} accepted, {} refused, {} cut; \
         errors reported: {:?}",
        proxy.connections_accepted(),
        proxy.connections_refused(),
        proxy.connections_cut(),
        watched.errors.lock()
    );
    assert!(proxy.connections_cut() >= 7, "{proxy:?}");
    assert!(
        watched.opened() >= 9,
        "one watch at sync and one after each of the 8 breaks: {calls:?}"
    );
    // Faults are network failures: whatever reached the error handler says so.
    for e in watched.errors.lock().iter() {
        assert!(
            e.is_transport() && !e.to_string().is_empty(),
            "a fault was reported as something else: {e:?}"
        );
    }
    watched.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_with_watch_list_loses_nothing_through_cut_refused_and_stalled_connections() {
    loses_nothing_through_faults(true, Wire::Json).await;
}

/// The same faults with the events in protobuf frames: cuts between and inside frames, a
/// refusal, a stall and a corrupted TLS record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_over_protobuf_with_watch_list_loses_nothing_through_cut_refused_and_stalled_connections()
 {
    loses_nothing_through_faults(true, Wire::Protobuf).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_over_protobuf_with_list_and_watch_loses_nothing_through_cut_refused_and_stalled_connections()
 {
    loses_nothing_through_faults(false, Wire::Protobuf).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_with_list_and_watch_loses_nothing_through_cut_refused_and_stalled_connections() {
    loses_nothing_through_faults(false, Wire::Json).await;
}

/// The informer's connection is cut in the middle of the initial watch-list stream (after
/// 40 kB of the ~150 kB the server sends for 300 ConfigMaps, so inside a TLS record and an
/// event): the reflector starts over and the cache is complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_during_the_initial_watch_list_still_syncs_every_object() {
    cut_during_the_initial_watch_list(Wire::Json).await;
}

/// The same cut inside the protobuf frames of the initial watch-list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_during_the_initial_watch_list_over_protobuf_still_syncs_every_object() {
    cut_during_the_initial_watch_list(Wire::Protobuf).await;
}

async fn cut_during_the_initial_watch_list(wire: Wire) {
    let (watched, proxy, _ns) = cut_during_the_initial_sync(true, wire).await;
    let calls = &watched.calls;
    let items = calls.items_per_watch.lock().clone();
    assert!(
        items.len() >= 2 && (1..300).contains(&items[0]),
        "the first watch should have been cut after some but not all of its 300 initial \
         events, and a second one opened: {calls:?}"
    );
    assert_eq!(proxy.connections_cut(), 1, "{proxy:?}");
    watched.stop().await;
}

/// The same cut inside the initial LIST's body: the failed list reaches the error handler as
/// a transport failure (not as a body that does not decode), the reflector lists again and
/// the cache is complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_during_the_initial_list_still_syncs_every_object() {
    cut_during_the_initial_list(Wire::Json).await;
}

/// The same cut inside the initial LIST's protobuf body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_during_the_initial_list_over_protobuf_still_syncs_every_object() {
    cut_during_the_initial_list(Wire::Protobuf).await;
}

async fn cut_during_the_initial_list(wire: Wire) {
    let (watched, proxy, _ns) = cut_during_the_initial_sync(false, wire).await;
    let calls = &watched.calls;
    assert!(
        calls.lists.load(Ordering::SeqCst) >= 2,
        "the cut list was not listed again: {calls:?}"
    );
    {
        let errors = watched.errors.lock();
        assert!(!errors.is_empty(), "the failed list was not reported");
        for e in errors.iter() {
            assert!(
                e.is_transport() && !e.is_decode(),
                "a cut list body was reported as something else: {e:?}"
            );
        }
    }
    assert_eq!(proxy.connections_cut(), 1, "{proxy:?}");
    watched.stop().await;
}

/// 300 ConfigMaps (~150 kB), an informer whose first connection is cut 40 kB into what the
/// server sends; returns once the informer has converged on a fresh list (with the namespace,
/// which lives as long as the caller keeps it).
async fn cut_during_the_initial_sync(
    use_watch_list: bool,
    wire: Wire,
) -> (Watched, FaultProxy, TestNamespace) {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    let proxy = env.fault_proxy().await;
    let mut live = BTreeMap::new();
    write_batch(&cms, &mut live, "initial", 300, 0, 0).await;
    proxy.cut_after_server_bytes(40_000);
    let watched = Watched::start(&proxy, ns.name(), use_watch_list, wire).await;
    watched.assert_converges(&cms).await;
    assert_eq!(watched.informer.get_indexer().len(), 300);
    eprintln!(
        "use_watch_list={use_watch_list}: {:?}; errors reported: {:?}",
        watched.calls,
        watched.errors.lock()
    );
    (watched, proxy, ns)
}

/// A namespace with some ConfigMaps and an informer on it through a fresh FaultProxy, synced.
struct Synced {
    /// Deleted when dropped, so it lives as long as the test.
    _ns: TestNamespace,
    cms: ConfigMaps,
    proxy: FaultProxy,
    live: BTreeMap<String, ConfigMap>,
    watched: Watched,
}

impl Synced {
    async fn start(initial: usize, use_watch_list: bool) -> Synced {
        let env = TestEnv::connect().await;
        let ns = env.namespace().await;
        let cms = ConfigMaps {
            client: env.client(Identity::Admin),
            namespace: ns.name().to_owned(),
        };
        let proxy = env.fault_proxy().await;
        let mut live = BTreeMap::new();
        write_batch(&cms, &mut live, "initial", initial, 0, 0).await;
        let watched = Watched::start(&proxy, ns.name(), use_watch_list, Wire::Json).await;
        Synced {
            _ns: ns,
            cms,
            proxy,
            live,
            watched,
        }
    }
}

/// Deletes made while the informer is cut off (its connections cut, new ones refused) are
/// never seen as watch events: the re-watch is answered 410 (the server's history has moved
/// past the informer's version; here every watch asks for version "1", which testenv's
/// server has always compacted, until the reflector relists), so the reflector relists and
/// infers the deletions. Each must reach the
/// handlers as a `DeletedObject::Tombstone` holding the last known state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_missed_during_a_cut_reach_handlers_as_tombstones_from_the_relist() {
    use kclient_cache::{DeletedObject, ResourceEventHandlerFuncs};

    let Synced {
        _ns,
        cms,
        proxy,
        mut live,
        watched,
    } = Synced::start(30, false).await;
    /// A deletion a handler saw: key, whether a tombstone, the last known version.
    type Deletion = (String, bool, Option<String>);
    let deletions: Arc<Mutex<Vec<Deletion>>> = Arc::default();
    let seen = deletions.clone();
    watched
        .informer
        .add_event_handler(ResourceEventHandlerFuncs::new().delete_func(
            move |deleted: DeletedObject<ConfigMap>| {
                let state = deleted
                    .object()
                    .map(|cm| cm.metadata.resource_version.clone());
                let tombstone = matches!(deleted, DeletedObject::Tombstone(_));
                seen.lock().push((deleted.key(), tombstone, state));
            },
        ))
        .expect("add the handler");
    let lists_before = watched.calls.lists.load(Ordering::SeqCst);

    watched.force_410_until_relist.store(true, Ordering::SeqCst);
    proxy.refuse(true);
    assert!(proxy.cut_all().await >= 1, "no connection to cut");
    let before = live.len();
    write_batch(&cms, &mut live, "unused", 0, 0, 10).await;
    assert_eq!(live.len(), before - 10);
    proxy.refuse(false);

    watched.assert_converges(&cms).await;
    wait_until("ten deletions reached the handler", || {
        deletions.lock().len() >= 10
    })
    .await;
    let deletions = deletions.lock().clone();
    assert_eq!(deletions.len(), 10, "{deletions:?}");
    for (key, tombstone, state) in &deletions {
        assert!(
            tombstone,
            "{key} was deleted without a tombstone: {deletions:?}"
        );
        assert!(
            state.is_some(),
            "{key}'s tombstone lost the last known state"
        );
    }
    assert!(
        watched.calls.lists.load(Ordering::SeqCst) > lists_before,
        "no relist: {:?}",
        watched.calls
    );
    watched.stop().await;
}

/// A connection that freezes without closing (every byte held, nothing sent back, as a dead
/// peer or a broken middlebox does) is found by the HTTP/2 ping (every 30 s, 15 s to answer):
/// the watch fails within 45 s, the failure reaches the watch-error handler, and once the
/// network flows again the informer follows new writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_http2_connection_is_detected_within_45_seconds_and_the_watch_reopened() {
    let Synced {
        _ns,
        cms,
        proxy,
        mut live,
        watched,
    } = Synced::start(5, true).await;
    let errors_before = watched.errors.lock().len();
    let watches_before = watched.calls.watches.load(Ordering::SeqCst);

    let frozen_at = tokio::time::Instant::now();
    proxy.stall(true);
    let deadline = frozen_at + Duration::from_secs(50);
    while watched.errors.lock().len() == errors_before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the frozen connection was not detected within 50 s: {:?}, {} watches before",
            watched.calls,
            watches_before
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let detected = frozen_at.elapsed();
    eprintln!("frozen connection detected after {detected:?}");
    assert!(
        detected <= Duration::from_secs(46),
        "detected after {detected:?}; the ping should find it within 45 s"
    );
    assert!(
        watched.errors.lock()[errors_before..]
            .iter()
            .all(Error::is_transport),
        "{:?}",
        watched.errors.lock()
    );

    proxy.stall(false);
    write_batch(&cms, &mut live, "after", 3, 2, 1).await;
    watched.assert_converges(&cms).await;
    watched.stop().await;
}
