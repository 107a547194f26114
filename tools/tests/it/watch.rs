//! `kclient_tools::watch` against the real kube-apiserver: a RetryWatcher resumes through a
//! cut connection (a `FaultProxy` in front of the server) without losing or repeating an
//! event and ends with an error on a real `410 Gone`; `until_with_sync`, `until` and
//! `list_watch_until` wait for conditions, end on a condition's error and on a timeout.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, WatchEvent,
};
use kclient_cache::ListerWatcher;
use kclient_clientset::{Clientset, Patch};
use kclient_informers::RestListWatch;
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::watch::{
    RetryWatcher, UntilError, condition, list_watch_until, precondition, until, until_with_sync,
};
use serde_json::json;

use crate::configmap;

/// The bound of every wait that should succeed.
const BOUND: Duration = Duration::from_secs(30);

fn value_of(cm: &ConfigMap, key: &str) -> Option<String> {
    cm.data.as_ref()?.get(key).map(|v| v.to_string())
}

/// A condition met by an add or update of `name` whose `data.v` is `value`.
fn has_value(
    name: &'static str,
    value: &'static str,
) -> kclient_tools::watch::ConditionFunc<ConfigMap> {
    condition(move |event: &WatchEvent<Arc<ConfigMap>>| {
        Ok::<_, std::convert::Infallible>(match event {
            WatchEvent::Added(cm) | WatchEvent::Modified(cm) => {
                cm.name() == name && value_of(cm, "v").as_deref() == Some(value)
            }
            _ => false,
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_watcher_resumes_through_cut_connections_without_missing_an_event() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let proxy = env.fault_proxy().await;
    let direct = Clientset::new(env.client(Identity::Admin));
    let cms = direct.core_v1().config_maps(ns.name());
    let lw =
        RestListWatch::<ConfigMap>::for_resource(proxy.client(Identity::Admin), Some(ns.name()));
    let start = lw
        .list(ListOptions::default())
        .await
        .expect("initial list through the proxy");
    let mut watcher =
        RetryWatcher::new(&start.metadata.resource_version, lw).expect("a real version");

    // 60 creates in three rounds; after each of the first two rounds every connection
    // through the proxy is cut while the watcher is between events.
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut cuts = 0;
    for round in 0..3 {
        for i in 0..20 {
            cms.create(
                &configmap(&format!("cm-{round}-{i:02}"), &[("v", "1")]),
                &CreateOptions::default(),
            )
            .await
            .expect("create");
        }
        // Take some of this round's events before the cut, the rest after.
        let want = (round + 1) * 20;
        let take_before_cut = if round < 2 { 5 } else { 20 };
        for n in 0..20 {
            if n == take_before_cut && round < 2 {
                cuts += proxy.cut_all().await;
            }
            let event = tokio::time::timeout(BOUND, watcher.next())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "round {round}: no event within {BOUND:?}; seen {}",
                        seen.len()
                    )
                })
                .expect("the stream goes on")
                .unwrap_or_else(|e| panic!("round {round}: the watcher ended with {e}"));
            match event {
                WatchEvent::Added(cm) => *seen.entry(cm.name().to_string()).or_default() += 1,
                other => panic!("unexpected event {other:?}"),
            }
        }
        assert_eq!(seen.len(), want, "round {round}");
    }
    assert!(cuts >= 2, "the proxy cut {cuts} connections");
    assert!(
        proxy.connections_accepted() >= 3,
        "the watcher reconnected: {} connections",
        proxy.connections_accepted()
    );
    let repeated: Vec<_> = seen.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        repeated.is_empty(),
        "delivered more than once: {repeated:?}"
    );
    assert_eq!(seen.len(), 60);
}

/// The one item of a watcher that ends at once: an error, and nothing after it.
async fn only_an_error(mut watcher: RetryWatcher<ConfigMap>) -> kclient_apimachinery::Error {
    let first = tokio::time::timeout(BOUND, watcher.next())
        .await
        .expect("an answer within the bound")
        .expect("one item");
    let err = first.expect_err("the stream ends with an error");
    assert!(
        tokio::time::timeout(BOUND, watcher.next())
            .await
            .expect("ended")
            .is_none(),
        "nothing after the error"
    );
    err
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_watcher_ends_with_an_error_on_410_gone() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    // testenv's etcd is past revision 1, so a watch from "1" is too old: 410.
    let lw = RestListWatch::<ConfigMap>::for_resource(env.client(Identity::Admin), Some(ns.name()));
    let err = only_an_error(RetryWatcher::new("1", lw).expect("1 is a real version")).await;
    assert!(err.is_resource_expired(), "{err}");

    // until over a RetryWatcher reports the same error.
    let lw = RestListWatch::<ConfigMap>::for_resource(env.client(Identity::Admin), Some(ns.name()));
    let err = until(BOUND, "1", lw, vec![has_value("never", "x")])
        .await
        .unwrap_err();
    assert!(
        err.api_error().is_some_and(|e| e.is_resource_expired()),
        "{err}"
    );
}

/// As client-go's since 1.31: a watch the server refuses (`403`, an identity without the
/// grant) ends the stream with that error instead of being retried forever, so `until`
/// reports it at once rather than at its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_watcher_ends_with_the_error_when_the_watch_is_forbidden() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let lw =
        RestListWatch::<ConfigMap>::for_resource(env.client(Identity::Restricted), Some(ns.name()));
    let err = only_an_error(RetryWatcher::new("1", lw).expect("1 is a real version")).await;
    assert!(err.is_forbidden(), "{err}");

    let lw =
        RestListWatch::<ConfigMap>::for_resource(env.client(Identity::Restricted), Some(ns.name()));
    let err = until(BOUND, "1", lw, vec![has_value("never", "x")])
        .await
        .unwrap_err();
    assert!(err.api_error().is_some_and(|e| e.is_forbidden()), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn until_with_sync_waits_for_a_later_update() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cms = Clientset::new(client.clone())
        .core_v1()
        .config_maps(ns.name());
    cms.create(
        &configmap("flag", &[("v", "no")]),
        &CreateOptions::default(),
    )
    .await
    .expect("create");
    let lw = Arc::new(RestListWatch::<ConfigMap>::for_resource(
        client.clone(),
        Some(ns.name()),
    ));

    // The precondition sees the synced cache; not there yet, so the conditions run.
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
    let check = precondition(move |store: &kclient_cache::Indexer<ConfigMap>| {
        let _ = synced_tx.send(store.list().len());
        Ok::<_, std::convert::Infallible>(false)
    });
    let writer = {
        let cms = cms.clone();
        tokio::spawn(async move {
            // Update only once the wait has synced, so the update is a later event.
            let seen = synced_rx.await.expect("the precondition ran");
            for v in ["still-no", "yes"] {
                cms.patch(
                    "flag",
                    &Patch::Merge(json!({"data": {"v": v}})),
                    &Default::default(),
                )
                .await
                .expect("patch");
            }
            seen
        })
    };
    let last = until_with_sync(
        BOUND,
        lw.clone(),
        Some(check),
        vec![has_value("flag", "yes")],
    )
    .await
    .expect("the condition is met");
    match last {
        Some(WatchEvent::Modified(cm)) => assert_eq!(value_of(&cm, "v").as_deref(), Some("yes")),
        other => panic!("expected the update, got {other:?}"),
    }
    let cached = writer.await.expect("writer");
    assert!(cached >= 1, "the precondition saw {cached} objects");

    // A precondition already met ends the wait at once, without events.
    let done = until_with_sync(
        BOUND,
        lw.clone(),
        Some(precondition(|store: &kclient_cache::Indexer<ConfigMap>| {
            Ok::<_, std::convert::Infallible>(store.list().iter().any(|cm| cm.name() == "flag"))
        })),
        vec![has_value("flag", "never")],
    )
    .await
    .expect("precondition met");
    assert!(done.is_none());

    // Without a precondition, the initial list arrives as adds: the current state meets it.
    let added = until_with_sync(BOUND, lw, None, vec![has_value("flag", "yes")])
        .await
        .expect("met by the initial list");
    assert!(matches!(added, Some(WatchEvent::Added(_))), "{added:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_condition_and_a_timeout_end_the_wait() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cms = Clientset::new(client.clone())
        .core_v1()
        .config_maps(ns.name());
    cms.create(
        &configmap("bad", &[("v", "corrupt")]),
        &CreateOptions::default(),
    )
    .await
    .expect("create");
    let lw = Arc::new(RestListWatch::<ConfigMap>::for_resource(
        client.clone(),
        Some(ns.name()),
    ));

    let failing = condition(|event: &WatchEvent<Arc<ConfigMap>>| match event {
        WatchEvent::Added(cm) if value_of(cm, "v").as_deref() == Some("corrupt") => {
            Err(format!("{} is corrupt", cm.name()))
        }
        _ => Ok(false),
    });
    let err = until_with_sync(BOUND, lw.clone(), None, vec![failing])
        .await
        .unwrap_err();
    match &err {
        UntilError::Condition(e) => assert_eq!(e.to_string(), "bad is corrupt"),
        other => panic!("expected the condition's error, got {other}"),
    }

    // Nothing ever meets this condition: the timeout ends the wait.
    let started = tokio::time::Instant::now();
    let err = until_with_sync(
        Duration::from_secs(2),
        lw,
        None,
        vec![has_value("bad", "fixed")],
    )
    .await
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_watch_until_finds_listed_objects_then_waits_for_new_ones() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cms = Clientset::new(client.clone())
        .core_v1()
        .config_maps(ns.name());
    cms.create(
        &configmap("first", &[("v", "1")]),
        &CreateOptions::default(),
    )
    .await
    .expect("create");
    // The first condition is met by the listed "first"; only then are "second" created and
    // "first" deleted, so only the watch from the list's version can see them.
    let (listed_tx, listed_rx) = tokio::sync::oneshot::channel::<()>();
    let mut listed_tx = Some(listed_tx);
    let first_listed = condition(move |event: &WatchEvent<Arc<ConfigMap>>| {
        let met = matches!(event, WatchEvent::Added(cm) if cm.name() == "first");
        if met && let Some(tx) = listed_tx.take() {
            let _ = tx.send(());
        }
        Ok::<_, std::convert::Infallible>(met)
    });
    let creator = {
        let cms = cms.clone();
        tokio::spawn(async move {
            listed_rx.await.expect("the first condition was met");
            cms.create(
                &configmap("second", &[("v", "2")]),
                &CreateOptions::default(),
            )
            .await
            .expect("create");
            cms.delete("first", &DeleteOptions::default())
                .await
                .expect("delete");
        })
    };
    let deleted_first = condition(|event: &WatchEvent<Arc<ConfigMap>>| {
        Ok::<_, std::convert::Infallible>(
            matches!(event, WatchEvent::Deleted(cm) if cm.name() == "first"),
        )
    });
    let lw = RestListWatch::<ConfigMap>::for_resource(client.clone(), Some(ns.name()));
    let last = list_watch_until(
        BOUND,
        lw,
        vec![first_listed, has_value("second", "2"), deleted_first],
    )
    .await
    .expect("all three conditions");
    assert!(
        matches!(&last, Some(WatchEvent::Deleted(cm)) if cm.name() == "first"),
        "{last:?}"
    );
    creator.await.expect("creator");
    assert!(
        cms.get("first", &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );
}
