//! A SharedIndexInformer on ConfigMaps against the real apiserver.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use kclient_cache::{
    CancellationToken, ReflectorOptions, ResourceEventHandlerFuncs, SharedIndexInformer,
    SharedIndexInformerOptions, namespace_indexers, wait_for_cache_sync,
};
use kclient_testenv::{Identity, TestEnv};
use parking_lot::Mutex;

use crate::adapter::{ConfigMap, ConfigMapListerWatcher, ConfigMaps, mirror_handler, view_of};

/// Requests in flight at once while writing.
const CONCURRENCY: usize = 16;

/// An informer on the ConfigMaps of `namespace`, and the count of LIST requests it makes.
/// The informer's LIST count and the errors its watch-error handler received.
struct Observed {
    lists: Arc<AtomicUsize>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Observed {
    /// Fails if the data consistency check (on in every informer here) found a difference.
    fn assert_consistent(&self) {
        let errors = self.errors.lock();
        assert!(
            !errors.iter().any(|e| e.contains("data consistency")),
            "{errors:?}"
        );
    }
}

/// An informer on the ConfigMaps of `namespace`, checking each sync against a LIST at the
/// same version (client-go's data consistency check).
fn informer(
    env: &TestEnv,
    namespace: &str,
    use_watch_list: bool,
    use_real_fifo: bool,
) -> (SharedIndexInformer<ConfigMap>, Observed) {
    informer_with(
        env,
        namespace,
        use_watch_list,
        use_real_fifo,
        0,
        Duration::ZERO,
    )
}

/// [`informer`] that is made to relist `forced_relists` times (its watches answered 410 until
/// then), with a resync period.
fn informer_with(
    env: &TestEnv,
    namespace: &str,
    use_watch_list: bool,
    use_real_fifo: bool,
    forced_relists: usize,
    resync_period: Duration,
) -> (SharedIndexInformer<ConfigMap>, Observed) {
    let (lw, lists) =
        ConfigMapListerWatcher::json(env.client(Identity::Admin), namespace, forced_relists);
    let lw = Arc::new(lw);
    let informer = SharedIndexInformer::with_options(
        lw,
        SharedIndexInformerOptions::default()
            .indexers(namespace_indexers())
            .resync_period(resync_period)
            .reflector(
                ReflectorOptions::default()
                    .name(format!("configmaps-{namespace}"))
                    .use_watch_list(use_watch_list)
                    .check_data_consistency(true),
            )
            .use_real_fifo(use_real_fifo),
    );
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = errors.clone();
    informer
        .set_watch_error_handler(move |_, e| seen.lock().push(e.to_string()))
        .unwrap();
    (informer, Observed { lists, errors })
}

fn run(
    informer: &SharedIndexInformer<ConfigMap>,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    (cancel, task)
}

async fn create_many(cms: &ConfigMaps, names: impl Iterator<Item = String>) -> Vec<ConfigMap> {
    futures_util::stream::iter(names)
        .map(|name| async move {
            cms.create(&ConfigMap::new(&name, "0"))
                .await
                .expect("create")
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await
}

/// Writes 1,000 ConfigMaps, updates each, deletes a third, while an informer watches; then
/// the informer's cache and a handler's mirror must equal a fresh LIST.
async fn stays_equal_to_a_fresh_list(use_watch_list: bool, use_real_fifo: bool) {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = Arc::new(ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    });

    // Some objects exist before the informer starts, the rest arrive while it runs.
    create_many(&cms, (0..100).map(|i| format!("cm-{i:04}"))).await;
    let (informer, observed) = informer(&env, ns.name(), use_watch_list, use_real_fifo);
    let (mirror, registration) = mirror_handler(&informer);
    let (cancel, task) = run(&informer);
    assert!(
        tokio::time::timeout(
            Duration::from_secs(30),
            wait_for_cache_sync(&cancel, &[&informer, &registration])
        )
        .await
        .expect("informer synced within 30s")
    );
    assert_eq!(informer.get_indexer().len(), 100);

    let writer = tokio::spawn({
        let cms = cms.clone();
        async move {
            let created = create_many(&cms, (100..1000).map(|i| format!("cm-{i:04}"))).await;
            let all: Vec<ConfigMap> = cms.list().await.expect("list").items;
            assert_eq!(all.len(), 1000, "{} created", created.len());
            futures_util::stream::iter(all)
                .map(|mut cm| {
                    let cms = cms.clone();
                    async move {
                        cm.data.insert("value".into(), "1".into());
                        cms.update(&cm).await.expect("update");
                        let n: usize = cm.metadata.name[3..].parse().unwrap();
                        if n.is_multiple_of(3) {
                            cms.delete(&cm.metadata.name).await.expect("delete");
                        }
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .collect::<Vec<()>>()
                .await;
        }
    });
    writer.await.expect("writer");

    let fresh = view_of(
        cms.list()
            .await
            .expect("fresh list")
            .items
            .into_iter()
            .map(Arc::new),
    );
    assert_eq!(fresh.len(), 1000 - 334);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let cached = view_of(informer.get_indexer().list());
        let mirrored = mirror.lock().clone();
        if cached == fresh && mirrored == fresh {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            let missing: Vec<_> = fresh
                .keys()
                .filter(|k| !cached.contains_key(*k))
                .take(5)
                .collect();
            let extra: Vec<_> = cached
                .keys()
                .filter(|k| !fresh.contains_key(*k))
                .take(5)
                .collect();
            panic!(
                "the cache did not converge on the fresh list within 60s: {} cached, {} listed, \
                 {} mirrored; missing {missing:?}, extra {extra:?}",
                cached.len(),
                fresh.len(),
                mirrored.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!informer.last_sync_resource_version().is_empty());
    // The streaming initial list worked against the real server: no LIST was needed.
    let expected_lists = if use_watch_list { 0 } else { 1 };
    assert_eq!(observed.lists.load(Ordering::SeqCst), expected_lists);
    observed.assert_consistent();
    cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_with_watch_list_stays_equal_to_a_fresh_list_under_1000_writes() {
    stays_equal_to_a_fresh_list(true, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_with_list_and_watch_stays_equal_to_a_fresh_list_under_1000_writes() {
    stays_equal_to_a_fresh_list(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_on_the_real_fifo_stays_equal_to_a_fresh_list_under_1000_writes() {
    stays_equal_to_a_fresh_list(true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_added_after_sync_receives_every_existing_object_exactly_once() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    create_many(&cms, (0..300).map(|i| format!("cm-{i:04}"))).await;

    let (informer, _) = informer(&env, ns.name(), true, false);
    let (cancel, task) = run(&informer);
    assert!(
        tokio::time::timeout(
            Duration::from_secs(30),
            wait_for_cache_sync(&cancel, &[&informer])
        )
        .await
        .expect("informer synced within 30s")
    );

    let adds: Arc<Mutex<HashMap<String, (usize, bool)>>> = Arc::default();
    let seen = adds.clone();
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |cm: &Arc<ConfigMap>, initial| {
                let mut seen = seen.lock();
                let entry = seen.entry(cm.metadata.name.clone()).or_insert((0, true));
                entry.0 += 1;
                entry.1 &= initial;
            },
        ))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), registration.wait_for_sync())
        .await
        .expect("the late handler synced within 30s");

    let adds = adds.lock().clone();
    assert_eq!(adds.len(), 300);
    for (name, (count, initial)) in &adds {
        assert_eq!(*count, 1, "{name} added {count} times");
        assert!(initial, "{name} not marked as part of the initial list");
    }
    cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_answered_with_410_relists_and_the_cache_stays_correct() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    create_many(&cms, (0..20).map(|i| format!("cm-{i:04}"))).await;

    let (lw, lists) = ConfigMapListerWatcher::json(env.client(Identity::Admin), ns.name(), 1);
    let lw = Arc::new(lw);
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let informer = SharedIndexInformer::with_options(
        lw,
        SharedIndexInformerOptions::default()
            .reflector(ReflectorOptions::default().use_watch_list(false)),
    );
    let seen = errors.clone();
    informer
        .set_watch_error_handler(move |_, e| seen.lock().push(e.to_string()))
        .unwrap();
    let (cancel, task) = run(&informer);
    assert!(
        tokio::time::timeout(
            Duration::from_secs(30),
            wait_for_cache_sync(&cancel, &[&informer])
        )
        .await
        .expect("informer synced within 30s")
    );
    // The first watch gets 410; the reflector relists (after its backoff) and watches again.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while lists.load(Ordering::SeqCst) < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no relist after the 410 within 30s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cms.create(&ConfigMap::new("after-410", "x"))
        .await
        .expect("create");
    cms.delete("cm-0000").await.expect("delete");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let fresh = view_of(
            cms.list()
                .await
                .expect("list")
                .items
                .into_iter()
                .map(Arc::new),
        );
        if view_of(informer.get_indexer().list()) == fresh {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache did not converge after the relist"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A 410 on a watch is routine: it relists without reporting an error.
    assert!(errors.lock().is_empty(), "{:?}", errors.lock());
    cancel.cancel();
    task.await.unwrap();
}

/// Waits until `done`, polling, for at most `bound`.
async fn wait_until(what: &str, bound: Duration, done: impl FnMut() -> bool) {
    wait_until_showing(what, bound, done, String::new).await;
}

/// [`wait_until`], whose failure also says what `state` describes at the deadline.
async fn wait_until_showing(
    what: &str,
    bound: Duration,
    mut done: impl FnMut() -> bool,
    state: impl Fn() -> String,
) {
    let deadline = tokio::time::Instant::now() + bound;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} within {bound:?}{}",
            state()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Counts what one handler receives: adds, updates with a new version, and updates whose
/// old and new version are the same (resyncs, and a relist finding an object unchanged).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Counts {
    adds: usize,
    changes: usize,
    same_version_updates: usize,
}

fn counting_handler(informer: &SharedIndexInformer<ConfigMap>) -> Arc<Mutex<Counts>> {
    let counts: Arc<Mutex<Counts>> = Arc::default();
    let (a, u) = (counts.clone(), counts.clone());
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |_: &Arc<ConfigMap>, _| a.lock().adds += 1)
                .update_func(move |old: &Arc<ConfigMap>, new: &Arc<ConfigMap>| {
                    let mut counts = u.lock();
                    if old.metadata.resource_version == new.metadata.resource_version {
                        counts.same_version_updates += 1;
                    } else {
                        counts.changes += 1;
                    }
                }),
        )
        .unwrap();
    counts
}

/// client-go's rule: a relist re-delivers every unchanged object to each handler as an update
/// when no resync period is set (a handler is "syncing" until a resync check says otherwise),
/// so a controller reconciles whatever it may have missed. The first watch is answered 410 by
/// the real server, which forces the relist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_after_410_delivers_an_update_per_unchanged_object_to_every_handler() {
    const N: usize = 300;
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    create_many(&cms, (0..N).map(|i| format!("cm-{i:04}"))).await;
    // The first list is served from the watch cache, which may not hold all N yet; the relist
    // would then bring the rest as adds, not as the updates counted here.
    cms.wait_for_watch_cache(N).await;
    let (informer, observed) = informer_with(&env, ns.name(), false, false, 1, Duration::ZERO);
    let first = counting_handler(&informer);
    let second = counting_handler(&informer);
    let (cancel, task) = run(&informer);
    // On a timeout, say how far it got: whether the relist came, and what the handlers saw.
    wait_until_showing(
        "both handlers got the relist's updates",
        Duration::from_secs(60),
        || first.lock().same_version_updates >= N && second.lock().same_version_updates >= N,
        || {
            format!(
                ": lists {}, handlers {:?} and {:?}, synced {}, watch errors {:?}",
                observed.lists.load(Ordering::SeqCst),
                *first.lock(),
                *second.lock(),
                informer.has_synced(),
                observed.errors.lock()
            )
        },
    )
    .await;
    // Nothing more arrives: one update per object, no second relist.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let expected = Counts {
        adds: N,
        changes: 0,
        same_version_updates: N,
    };
    assert_eq!(*first.lock(), expected);
    assert_eq!(*second.lock(), expected);
    assert_eq!(
        observed.lists.load(Ordering::SeqCst),
        2,
        "the list, then the relist"
    );
    observed.assert_consistent();
    cancel.cancel();
    task.await.unwrap();
}

/// With a resync period of 2 s an idle informer delivers a resync round about every 2 s:
/// client-go's informer delivered 15 rounds in 31 s on the same server (the rounds were
/// undercounted, 8 to 10, while the resync timer ticked on a fixed schedule).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_rounds_on_the_real_server_match_client_go_over_31_seconds() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    create_many(&cms, std::iter::once("resynced".to_owned())).await;
    let (informer, observed) =
        informer_with(&env, ns.name(), true, false, 0, Duration::from_secs(2));
    let counts = counting_handler(&informer);
    let (cancel, task) = run(&informer);
    wait_until("the informer synced", Duration::from_secs(30), || {
        informer.has_synced()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(31)).await;
    let rounds = counts.lock().same_version_updates;
    assert!(
        (14..=16).contains(&rounds),
        "{rounds} resync rounds in 31 s at a 2 s period; client-go gives 15"
    );
    observed.assert_consistent();
    cancel.cancel();
    task.await.unwrap();
}

/// A `FilteringResourceEventHandler` on a real informer: objects moving into the filter
/// arrive as adds, out of it as deletes, and its view ends equal to the filtered fresh list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtering_handler_sees_objects_enter_and_leave_its_filter() {
    use kclient_cache::{DeletedObject, FilteringResourceEventHandler};

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    let created = create_many(&cms, (0..40).map(|i| format!("cm-{i:04}"))).await;
    let (informer, observed) = informer(&env, ns.name(), true, false);
    let selected = |cm: &ConfigMap| cm.data.get("value").is_some_and(|v| v == "selected");
    let view: Arc<Mutex<std::collections::BTreeSet<String>>> = Arc::default();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (v_add, v_update, v_delete) = (view.clone(), view.clone(), view.clone());
    let (l_add, l_update, l_delete) = (log.clone(), log.clone(), log.clone());
    let inner = ResourceEventHandlerFuncs::new()
        .add_func(move |cm: &Arc<ConfigMap>, _| {
            v_add.lock().insert(cm.metadata.name.clone());
            l_add.lock().push(format!("add {}", cm.metadata.name));
        })
        .update_func(move |_, cm: &Arc<ConfigMap>| {
            assert!(v_update.lock().contains(&cm.metadata.name));
            l_update.lock().push(format!("update {}", cm.metadata.name));
        })
        .delete_func(move |deleted: DeletedObject<ConfigMap>| {
            let key = deleted.key();
            let name = key.rsplit('/').next().unwrap_or_default().to_owned();
            v_delete.lock().remove(&name);
            l_delete.lock().push(format!("delete {name}"));
        });
    informer
        .add_event_handler(FilteringResourceEventHandler::new(selected, inner))
        .unwrap();
    let (cancel, task) = run(&informer);
    wait_until("the informer synced", Duration::from_secs(30), || {
        informer.has_synced()
    })
    .await;
    assert!(
        log.lock().is_empty(),
        "nothing is selected yet: {:?}",
        log.lock()
    );

    // Select ten, then change two of them while selected, unselect three, delete two more.
    let mut created = created;
    created.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut selected_now: Vec<ConfigMap> = Vec::new();
    for mut cm in created
        .into_iter()
        .filter(|cm| cm.metadata.name.as_str() < "cm-0010")
    {
        cm.data.insert("value".into(), "selected".into());
        selected_now.push(cms.update(&cm).await.expect("select"));
    }
    for cm in &mut selected_now[..2] {
        cm.data.insert("other".into(), "x".into());
        *cm = cms.update(cm).await.expect("change while selected");
    }
    for cm in &mut selected_now[2..5] {
        cm.data.insert("value".into(), "no".into());
        *cm = cms.update(cm).await.expect("unselect");
    }
    for cm in &selected_now[5..7] {
        cms.delete(&cm.metadata.name).await.expect("delete");
    }
    let want: std::collections::BTreeSet<String> =
        ["cm-0000", "cm-0001", "cm-0007", "cm-0008", "cm-0009"]
            .map(String::from)
            .into();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while *view.lock() != want {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the filtered view did not converge within 30 s: {:?}, events {:?}",
            view.lock(),
            log.lock()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let fresh: std::collections::BTreeSet<String> = cms
        .list()
        .await
        .expect("list")
        .items
        .iter()
        .filter(|cm| selected(cm))
        .map(|cm| cm.metadata.name.clone())
        .collect();
    assert_eq!(fresh, want);
    let log = log.lock().clone();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("add")).count(),
        10,
        "{log:?}"
    );
    assert_eq!(
        log.iter().filter(|l| l.starts_with("update")).count(),
        2,
        "{log:?}"
    );
    assert_eq!(
        log.iter().filter(|l| l.starts_with("delete")).count(),
        5,
        "{log:?}"
    );
    observed.assert_consistent();
    cancel.cancel();
    task.await.unwrap();
}

/// The adapter, with the first watch-list opened at a resource version far ahead of the
/// server's: what an informer asks when it reconnects to an apiserver whose watch cache lags
/// behind the one it was synced from. Records every watch's options.
struct AheadOnFirstWatchList {
    inner: ConfigMapListerWatcher,
    watches: Mutex<Vec<kclient_apimachinery::ListOptions>>,
}

impl kclient_cache::ListerWatcher<ConfigMap> for AheadOnFirstWatchList {
    fn list(
        &self,
        options: kclient_apimachinery::ListOptions,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<kclient_apimachinery::ObjectList<ConfigMap>, kclient_apimachinery::Error>,
    > {
        self.inner.list(options)
    }

    fn watch(
        &self,
        mut options: kclient_apimachinery::ListOptions,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<kclient_cache::WatchStream<ConfigMap>, kclient_apimachinery::Error>,
    > {
        let mut watches = self.watches.lock();
        if options.send_initial_events == Some(true) && watches.is_empty() {
            options.resource_version = Some("999999999".to_owned());
        }
        watches.push(options.clone());
        drop(watches);
        self.inner.watch(options)
    }
}

/// A watch-list at a resource version the server has not reached is answered with an ERROR
/// event in the stream (504, cause `ResourceVersionTooLarge`, after the server has waited
/// ~3 s for it). client-go's `watchList` then marks the version unusable and opens the
/// watch-list again at the latest version (`isErrorRetriableWithSideEffectsFn`), rather than
/// falling back to a LIST, whose own attempt at that version the server would make wait and
/// retry too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_list_ahead_of_the_server_is_retried_at_the_latest_version_without_a_list() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms = ConfigMaps {
        client: env.client(Identity::Admin),
        namespace: ns.name().to_owned(),
    };
    create_many(&cms, (0..5).map(|i| format!("cm-{i}"))).await;
    let (inner, lists) = ConfigMapListerWatcher::json(env.client(Identity::Admin), ns.name(), 0);
    let lw = Arc::new(AheadOnFirstWatchList {
        inner,
        watches: Mutex::default(),
    });
    let informer = SharedIndexInformer::with_options(
        lw.clone(),
        SharedIndexInformerOptions::default()
            .reflector(ReflectorOptions::default().use_watch_list(true)),
    );
    let (cancel, task) = run(&informer);
    assert!(
        tokio::time::timeout(
            Duration::from_secs(30),
            wait_for_cache_sync(&cancel, &[&informer])
        )
        .await
        .expect("informer synced within 30s")
    );
    assert_eq!(informer.get_indexer().list_keys().len(), 5);
    let watches = lw.watches.lock().clone();
    assert_eq!(
        lists.load(Ordering::SeqCst),
        0,
        "the reflector fell back to a LIST; its watches: {watches:?}"
    );
    assert!(watches.len() >= 2, "{watches:?}");
    assert_eq!(watches[1].send_initial_events, Some(true), "{watches:?}");
    assert_eq!(
        watches[1].resource_version, None,
        "the second watch-list must ask for the latest version: {watches:?}"
    );
    cancel.cancel();
    task.await.unwrap();
}
