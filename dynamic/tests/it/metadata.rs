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

/// With the `protobuf` feature the metadata client reads protobuf: its answers equal those of
/// a client forced to JSON, for built-in kinds (protobuf on the wire) and custom resources
/// (the server answers JSON).
#[cfg(feature = "protobuf")]
#[tokio::test(flavor = "multi_thread")]
async fn metadata_over_protobuf_equals_metadata_over_json() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let mut config = env.config(Identity::Admin);
    config.content_type = kclient_rest::ContentType::Json;
    let json_client = kclient_rest::Client::new(config).unwrap();
    let gvr = GroupVersionResource::new("", "v1", "configmaps");
    let full = DynamicClient::new(client.clone())
        .resource(gvr.clone())
        .namespace(ns.name());
    for name in ["a", "b", "c"] {
        full.create(&big_configmap(name), &CreateOptions::default(), "")
            .await
            .unwrap();
    }
    let pb = MetadataClient::new(client)
        .resource(gvr.clone())
        .namespace(ns.name());
    let js = MetadataClient::new(json_client)
        .resource(gvr)
        .namespace(ns.name());
    let (p, j) = (
        pb.get("a", &GetOptions::default(), "").await.unwrap(),
        js.get("a", &GetOptions::default(), "").await.unwrap(),
    );
    assert_eq!(p, j, "get: protobuf vs JSON");
    let (p, j) = (
        pb.list(&ListOptions::default()).await.unwrap(),
        js.list(&ListOptions::default()).await.unwrap(),
    );
    assert_eq!(p.items.len(), 3);
    if p.metadata.resource_version == j.metadata.resource_version {
        assert_eq!(p.items, j.items, "list: protobuf vs JSON");
    }
    // Watch events from the same version carry the same metadata.
    let from = ListOptions::default().resource_version(p.metadata.resource_version.clone());
    let mut pw = pb.watch(&from).await.unwrap();
    let mut jw = js.watch(&from).await.unwrap();
    assert!(pw.is_protobuf() && !jw.is_protobuf());
    full.delete("b", &DeleteOptions::default(), "")
        .await
        .unwrap();
    async fn next(
        w: &mut kclient_rest::WatchStream<kclient_apimachinery::meta::PartialObjectMetadata>,
    ) -> WatchEvent<kclient_apimachinery::meta::PartialObjectMetadata> {
        tokio::time::timeout(Duration::from_secs(20), w.next())
            .await
            .expect("an event within 20 s")
            .expect("the watch is open")
            .expect("an event")
    }
    match (next(&mut pw).await, next(&mut jw).await) {
        (WatchEvent::Deleted(p), WatchEvent::Deleted(j)) => {
            assert_eq!(p, j, "DELETED: protobuf vs JSON");
            assert_eq!(p.name(), "b");
        }
        other => panic!("expected two DELETED events, got {other:?}"),
    }
}
