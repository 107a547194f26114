//! Watches against the real server: every event type, and 410 from a resourceVersion older than the watch cache's window.

use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_apimachinery::{ListOptions, ResourceVersionMatch, WatchEvent};
use kclient_testenv::{Identity, TestEnv};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{configmaps, create_cm};

/// A typed object: the watch is generic over any `DeserializeOwned`.
#[derive(Debug, Deserialize)]
struct ConfigMap {
    metadata: Meta,
    #[serde(default)]
    data: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: String,
    resource_version: String,
}

async fn next<T>(w: &mut (impl futures_util::Stream<Item = T> + Unpin)) -> T {
    tokio::time::timeout(Duration::from_secs(30), w.next())
        .await
        .expect("no watch event within 30s")
        .expect("watch ended early")
}

#[tokio::test]
async fn watch_sees_added_modified_deleted_and_bookmark() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let seed = create_cm(&client, ns.name(), "seed", "0").await;

    // WatchList: initial events, then a bookmark marking their end.
    let opts = ListOptions::default()
        .allow_watch_bookmarks(true)
        .send_initial_events(true)
        .resource_version_match(ResourceVersionMatch::NotOlderThan);
    let mut w = configmaps(client.get(), ns.name())
        .params(opts.to_query())
        .watch::<ConfigMap>()
        .await
        .unwrap();
    match next(&mut w).await.unwrap() {
        WatchEvent::Added(cm) => {
            assert_eq!(cm.metadata.name, "seed");
            assert_eq!(
                cm.metadata.resource_version,
                seed["metadata"]["resourceVersion"]
            );
        }
        other => panic!("want ADDED seed, got {other:?}"),
    }
    match next(&mut w).await.unwrap() {
        WatchEvent::Bookmark(b) => assert!(b.is_initial_events_end(), "{b:?}"),
        other => panic!("want BOOKMARK, got {other:?}"),
    }

    create_cm(&client, ns.name(), "live", "1").await;
    let _: Value = configmaps(
        client.patch(kclient_apimachinery::PatchType::Merge),
        ns.name(),
    )
    .name("live")
    .json(&json!({"data": {"k": "2"}}))
    .send()
    .await
    .unwrap();
    let _: Value = configmaps(client.delete(), ns.name())
        .name("live")
        .send()
        .await
        .unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        match next(&mut w).await.unwrap() {
            WatchEvent::Added(cm) => {
                seen.push(format!("ADDED {} {}", cm.metadata.name, cm.data["k"]))
            }
            WatchEvent::Modified(cm) => {
                seen.push(format!("MODIFIED {} {}", cm.metadata.name, cm.data["k"]))
            }
            WatchEvent::Deleted(cm) => seen.push(format!("DELETED {}", cm.metadata.name)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(s) => panic!("error event {s:?}"),
        }
    }
    assert_eq!(seen, ["ADDED live 1", "MODIFIED live 2", "DELETED live"]);
}

#[tokio::test]
async fn watch_ends_cleanly_when_the_server_times_it_out() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let mut w = configmaps(client.get(), ns.name())
        .params(ListOptions::default().timeout_seconds(1).to_query())
        .watch::<Value>()
        .await
        .unwrap();
    let end = tokio::time::timeout(Duration::from_secs(20), w.next())
        .await
        .expect("server closes");
    assert!(end.is_none(), "{end:?}");
}

#[tokio::test]
async fn watch_from_a_version_older_than_the_watch_cache_is_gone() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    create_cm(&client, ns.name(), "bump", "x").await;
    // testenv starts etcd past revision 1, so "1" is older than the watch cache's window.
    let result = configmaps(client.get(), ns.name())
        .params(ListOptions::default().resource_version("1").to_query())
        .watch::<Value>()
        .await;
    // The server answers either with a 410 response or with an ERROR event.
    let err = match result {
        Err(e) => e,
        Ok(mut w) => next(&mut w).await.expect_err("want a 410 error event"),
    };
    assert!(
        err.is_resource_expired() && err.code() == Some(410),
        "{err:?}"
    );
}
