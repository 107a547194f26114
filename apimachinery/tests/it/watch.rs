//! Watch streams from the real server decode into `WatchEvent`, including the WatchList
//! protocol's initial events and its `k8s.io/initial-events-end` bookmark.

use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{
    ListOptions, Object, ObjectList, ResourceVersionMatch, Unstructured, WatchEvent,
};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::{configmaps, create_configmap};

async fn next<S, T>(stream: &mut S) -> WatchEvent<T>
where
    S: futures_util::Stream<Item = Result<WatchEvent<T>, kclient_apimachinery::Error>> + Unpin,
{
    match tokio::time::timeout(Duration::from_secs(20), stream.next()).await {
        Ok(Some(Ok(event))) => event,
        Ok(Some(Err(e))) => panic!("watch error: {e}"),
        Ok(None) => panic!("watch ended early"),
        Err(_) => panic!("no watch event within 20s"),
    }
}

#[tokio::test]
async fn watch_list_sends_initial_events_then_the_end_bookmark() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for name in ["a", "b"] {
        create_configmap(&client, ns.name(), name, json!({"watched": "yes"})).await;
    }
    create_configmap(&client, ns.name(), "other", json!({})).await;

    let opts = ListOptions::default()
        .watch(true)
        .label_selector("watched=yes")
        .allow_watch_bookmarks(true)
        .send_initial_events(true)
        .resource_version_match(ResourceVersionMatch::NotOlderThan)
        .timeout_seconds(60);
    let mut stream = configmaps(client.get(), ns.name())
        .params(opts.to_query())
        .watch::<Unstructured>()
        .await
        .expect("open watch");

    let mut initial = Vec::new();
    let bookmark = loop {
        match next(&mut stream).await {
            WatchEvent::Added(cm) => initial.push(cm.name().to_owned()),
            WatchEvent::Bookmark(b) if b.is_initial_events_end() => break b,
            WatchEvent::Bookmark(_) => {}
            other => panic!(
                "unexpected {:?} before the initial-events-end bookmark",
                other.event_type()
            ),
        }
    };
    initial.sort();
    assert_eq!(initial, ["a", "b"]);
    assert!(!bookmark.resource_version.is_empty());

    // Changes after the initial state arrive in order.
    create_configmap(&client, ns.name(), "c", json!({"watched": "yes"})).await;
    let _: Value = configmaps(
        client.patch(kclient_apimachinery::PatchType::Merge),
        ns.name(),
    )
    .name("c")
    .json(&json!({"data": {"k": "changed"}}))
    .send()
    .await
    .unwrap();
    let _: Value = configmaps(client.delete(), ns.name())
        .name("c")
        .send()
        .await
        .unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        match next(&mut stream).await {
            WatchEvent::Added(cm) => seen.push(("ADDED", cm)),
            WatchEvent::Modified(cm) => seen.push(("MODIFIED", cm)),
            WatchEvent::Deleted(cm) => seen.push(("DELETED", cm)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(status) => panic!("watch error event: {status:?}"),
        }
    }
    let kinds: Vec<_> = seen.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED"]);
    assert!(seen.iter().all(|(_, cm)| cm.name() == "c"));
    assert_eq!(seen[1].1.nested_string(&["data", "k"]), Ok(Some("changed")));
}

#[tokio::test]
async fn watch_from_a_list_resource_version_sees_only_later_changes() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    create_configmap(&client, ns.name(), "before", json!({})).await;

    let list: ObjectList<Unstructured> = configmaps(client.get(), ns.name()).send().await.unwrap();
    assert_eq!(list.items.len(), 1);
    let opts = ListOptions::default()
        .watch(true)
        .resource_version(list.resource_version())
        .timeout_seconds(60);
    let mut stream = configmaps(client.get(), ns.name())
        .params(opts.to_query())
        .watch::<Unstructured>()
        .await
        .unwrap();
    create_configmap(&client, ns.name(), "after", json!({})).await;
    match next(&mut stream).await {
        WatchEvent::Added(cm) => assert_eq!(cm.name(), "after"),
        other => panic!("expected ADDED, got {:?}", other.event_type()),
    }
}
