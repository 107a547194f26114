//! Typed informers over protobuf (the `protobuf` feature) against the real apiserver: a
//! factory whose client prefers protobuf and one forced to JSON hold equal caches, through
//! the initial sync and through creates, updates and deletes.

use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::Object;
use kclient_cache::SharedIndexInformer;
use kclient_informers::SharedInformerFactory;
use kclient_rest::{Client, ContentType};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// Every cached object of `informer`, by key, sorted.
fn cached<K: Object + PartialEq + std::fmt::Debug>(
    informer: &SharedIndexInformer<K>,
) -> Vec<(String, std::sync::Arc<K>)> {
    let mut all: Vec<_> = informer
        .get_indexer()
        .list()
        .into_iter()
        .map(|o| (o.name().to_owned(), o))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// Waits until both caches hold `want` names and equal objects.
async fn converge<K: Object + PartialEq + std::fmt::Debug>(
    protobuf: &SharedIndexInformer<K>,
    json: &SharedIndexInformer<K>,
    want: &[String],
) {
    for _ in 0..400 {
        let (p, j) = (cached(protobuf), cached(json));
        let names: Vec<_> = p.iter().map(|(n, _)| n.clone()).collect();
        if names == want && p == j {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (p, j) = (cached(protobuf), cached(json));
    panic!(
        "{}: the protobuf and JSON caches did not converge on {want:?}:\n  protobuf: {p:?}\n  json: {j:?}",
        std::any::type_name::<K>()
    );
}

/// Two factories on `namespace`: one whose client prefers protobuf (the default) and one forced
/// to JSON.
fn factories(env: &TestEnv, namespace: &str) -> [SharedInformerFactory; 2] {
    let mut json_config = env.config(Identity::Admin);
    json_config.content_type = ContentType::Json;
    [
        SharedInformerFactory::new(env.client(Identity::Admin), Duration::ZERO)
            .with_namespace(namespace),
        SharedInformerFactory::new(Client::new(json_config).unwrap(), Duration::ZERO)
            .with_namespace(namespace),
    ]
}

/// Starts the factories and waits until each has synced.
async fn start_and_sync(factories: &[SharedInformerFactory]) {
    for f in factories {
        f.start();
        assert!(
            tokio::time::timeout(Duration::from_secs(30), f.wait_for_cache_sync_all())
                .await
                .expect("synced within 30 s"),
            "the factory stopped before it synced"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn protobuf_and_json_informers_hold_equal_caches() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let admin = env.client(Identity::Admin);
    for i in 0..20 {
        crate::create_core(
            &admin,
            ns.name(),
            "configmaps",
            json!({
                "metadata": {"name": format!("cm-{i:02}"), "labels": {"i": i.to_string()}},
                "data": {"k": "v".repeat(i)}
            }),
        )
        .await;
        crate::create_core(
            &admin,
            ns.name(),
            "secrets",
            json!({
                "metadata": {"name": format!("s-{i:02}")},
                "data": {"k": "AAEC/w=="}
            }),
        )
        .await;
    }
    let factories = factories(&env, ns.name());
    let cms: Vec<SharedIndexInformer<ConfigMap>> = factories
        .iter()
        .map(|f| f.informer::<ConfigMap>())
        .collect();
    let secrets: Vec<SharedIndexInformer<Secret>> =
        factories.iter().map(|f| f.informer::<Secret>()).collect();
    start_and_sync(&factories).await;
    let names = |prefix: &str, n: usize| {
        (0..n)
            .map(|i| format!("{prefix}-{i:02}"))
            .collect::<Vec<_>>()
    };
    converge(&cms[0], &cms[1], &names("cm", 20)).await;
    converge(&secrets[0], &secrets[1], &names("s", 20)).await;

    // Writes after the sync arrive through both watches.
    for i in 0..5 {
        let _: Value = admin
            .put()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .name(&format!("cm-{i:02}"))
            .json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": format!("cm-{i:02}")}, "data": {"changed": "yes"}}))
            .send()
            .await
            .unwrap();
        let _: Value = admin
            .delete()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("secrets")
            .name(&format!("s-{i:02}"))
            .send()
            .await
            .unwrap();
    }
    crate::create_core(
        &admin,
        ns.name(),
        "configmaps",
        json!({"metadata": {"name": "cm-20"}}),
    )
    .await;
    converge(&cms[0], &cms[1], &names("cm", 21)).await;
    let remaining: Vec<String> = (5..20).map(|i| format!("s-{i:02}")).collect();
    converge(&secrets[0], &secrets[1], &remaining).await;
    let changed = cms[0]
        .get_indexer()
        .get_by_key(&format!("{}/cm-00", ns.name()))
        .unwrap();
    assert_eq!(
        changed
            .data
            .as_ref()
            .and_then(|d| d.get("changed"))
            .map(|v| v.to_string()),
        Some("yes".to_owned())
    );
    for f in &factories {
        f.shutdown().await;
    }
}

/// Metadata-only lists and watches in protobuf (`;as=PartialObjectMetadataList`): the server
/// answers protobuf, and the metadata informers over protobuf and over JSON hold equal caches.
#[tokio::test(flavor = "multi_thread")]
async fn metadata_informers_over_protobuf_equal_json_ones() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kclient_apimachinery::ApiResource;
    use kclient_apimachinery::meta::{
        ACCEPT_METADATA_LIST, ACCEPT_METADATA_LIST_PROTOBUF, PartialObjectMetadata,
        PartialObjectMetadataList,
    };
    use kclient_apimachinery::protobuf::ProtobufCodec;

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let admin = env.client(Identity::Admin);
    for i in 0..10 {
        crate::create_core(
            &admin,
            ns.name(),
            "configmaps",
            json!({
                "metadata": {"name": format!("m-{i:02}"), "labels": {"i": i.to_string()},
                             "annotations": {"note": "x".repeat(i)}},
                "data": {"big": "y".repeat(1000)}
            }),
        )
        .await;
    }
    let list = |accept: &'static str| {
        admin
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .header("Accept", accept)
    };
    let decoded = AtomicUsize::new(0);
    let codec = ProtobufCodec::<PartialObjectMetadata>::partial_object_metadata();
    let pb: PartialObjectMetadataList = list(ACCEPT_METADATA_LIST_PROTOBUF)
        .send_protobuf(|body| {
            decoded.fetch_add(1, Ordering::SeqCst);
            codec.decode_list(body)
        })
        .await
        .unwrap();
    assert_eq!(
        decoded.load(Ordering::SeqCst),
        1,
        "the metadata list was not protobuf"
    );
    let js: PartialObjectMetadataList = list(ACCEPT_METADATA_LIST).send().await.unwrap();
    assert_eq!(pb.items.len(), 10);
    if pb.metadata.resource_version == js.metadata.resource_version {
        assert_eq!(pb.items, js.items, "metadata list: protobuf vs JSON");
    }

    let factories = factories(&env, ns.name());
    let informers: Vec<SharedIndexInformer<PartialObjectMetadata>> = factories
        .iter()
        .map(|f| f.metadata_informer(&ApiResource::of::<ConfigMap>()))
        .collect();
    start_and_sync(&factories).await;
    let names = |n: usize| (0..n).map(|i| format!("m-{i:02}")).collect::<Vec<_>>();
    converge(&informers[0], &informers[1], &names(10)).await;
    // A watch event in protobuf carries the same metadata as the JSON one.
    crate::create_core(
        &admin,
        ns.name(),
        "configmaps",
        json!({"metadata": {"name": "m-10", "labels": {"late": "yes"}}}),
    )
    .await;
    converge(&informers[0], &informers[1], &names(11)).await;
    for f in &factories {
        f.shutdown().await;
    }
}
