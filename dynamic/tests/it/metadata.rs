//! The metadata client against the real server: the server sends only metadata (kind
//! `PartialObjectMetadata`, no data), for get, list, watch and patch, and deletes work.

use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, GroupVersionResource, ListOptions, Object,
    PatchOptions, PatchType, Unstructured, WatchEvent,
};
use kclient_dynamic::{DynamicClient, MetadataClient};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

fn big_configmap(name: &str) -> Unstructured {
    Unstructured::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "meta"}},
        "data": {"big": "x".repeat(10_000)},
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_only_get_list_watch_patch_and_delete() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let gvr = GroupVersionResource::new("", "v1", "configmaps");
    let full = DynamicClient::new(client.clone())
        .resource(gvr.clone())
        .namespace(ns.name());
    let meta = MetadataClient::new(client.clone())
        .resource(gvr)
        .namespace(ns.name());

    let created = full
        .create(&big_configmap("one"), &CreateOptions::default(), "")
        .await
        .unwrap();

    // Get: metadata only, as the server's PartialObjectMetadata.
    let got = meta.get("one", &GetOptions::default(), "").await.unwrap();
    assert_eq!(got.kind.as_deref(), Some("PartialObjectMetadata"));
    assert_eq!(got.api_version.as_deref(), Some("meta.k8s.io/v1"));
    assert_eq!(got.name(), "one");
    assert_eq!(got.uid(), created.uid());
    assert_eq!(got.labels().get("app"), Some("meta"));
    // The server did strip the data: the raw response is small.
    let raw = client
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .name("one")
        .header("Accept", kclient_apimachinery::meta::ACCEPT_METADATA)
        .bytes()
        .await
        .unwrap();
    assert!(
        raw.len() < 2_000,
        "{} bytes: {}",
        raw.len(),
        String::from_utf8_lossy(&raw)
    );
    assert!(!String::from_utf8_lossy(&raw).contains("xxxx"));

    // Watch from now, then list, patch and delete while it runs.
    let list = meta.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].name(), "one");
    let mut events = meta
        .watch(&ListOptions::default().resource_version(list.metadata.resource_version.clone()))
        .await
        .unwrap();
    full.create(&big_configmap("two"), &CreateOptions::default(), "")
        .await
        .unwrap();
    let patched = meta
        .patch(
            "one",
            PatchType::Merge,
            serde_json::to_vec(&json!({"metadata": {"labels": {"patched": "yes"}}})).unwrap(),
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap();
    assert_eq!(patched.kind.as_deref(), Some("PartialObjectMetadata"));
    assert_eq!(patched.labels().get("patched"), Some("yes"));
    meta.delete("two", &DeleteOptions::default(), "")
        .await
        .unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("an event within 20 s")
            .expect("the watch is open")
            .expect("a metadata event");
        match event {
            WatchEvent::Added(o) => seen.push(format!("added {}", o.name())),
            WatchEvent::Modified(o) => {
                assert_eq!(o.kind.as_deref(), Some("PartialObjectMetadata"));
                seen.push(format!("modified {}", o.name()))
            }
            WatchEvent::Deleted(o) => seen.push(format!("deleted {}", o.name())),
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_eq!(seen, ["added two", "modified one", "deleted two"]);

    // delete_collection by label.
    meta.delete_collection(
        &DeleteOptions::default(),
        &ListOptions::default().label_selector("app=meta"),
    )
    .await
    .unwrap();
    let left = meta.list(&ListOptions::default()).await.unwrap();
    assert!(left.items.is_empty(), "{:?}", left.items);
}
