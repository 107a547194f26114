//! Typed informers over protobuf (the `protobuf` feature) against the real apiserver: a
//! factory whose client prefers protobuf and one forced to JSON hold equal caches, through
//! the initial sync and through creates, updates and deletes.

use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::Resource;
use kclient_cache::SharedIndexInformer;
use kclient_informers::SharedInformerFactory;
use kclient_rest::{Client, ContentType};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// Every cached object of `informer`, by key, sorted.
fn cached<K: Resource + PartialEq + std::fmt::Debug>(
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
async fn converge<K: Resource + PartialEq + std::fmt::Debug>(
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
        K::KIND
    );
}

async fn create(client: &Client, ns: &str, resource: &str, body: Value) {
    let _: Value = client
        .post()
        .group_version("", "v1")
        .namespace(ns)
        .resource(resource)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("creating {resource}: {e}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn protobuf_and_json_informers_hold_equal_caches() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let admin = env.client(Identity::Admin);
    for i in 0..20 {
        create(
            &admin,
            ns.name(),
            "configmaps",
            json!({
                "metadata": {"name": format!("cm-{i:02}"), "labels": {"i": i.to_string()}},
                "data": {"k": "v".repeat(i)}
            }),
        )
        .await;
        create(
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
    let mut json_config = env.config(Identity::Admin);
    json_config.content_type = ContentType::Json;
    let factories = [
        SharedInformerFactory::new(env.client(Identity::Admin), Duration::ZERO)
            .with_namespace(ns.name()),
        SharedInformerFactory::new(Client::new(json_config).unwrap(), Duration::ZERO)
            .with_namespace(ns.name()),
    ];
    let cms: Vec<SharedIndexInformer<ConfigMap>> = factories
        .iter()
        .map(|f| f.informer::<ConfigMap>())
        .collect();
    let secrets: Vec<SharedIndexInformer<Secret>> =
        factories.iter().map(|f| f.informer::<Secret>()).collect();
    for f in &factories {
        f.start();
        assert!(
            tokio::time::timeout(Duration::from_secs(30), f.wait_for_cache_sync_all())
                .await
                .expect("synced within 30 s"),
            "the factory stopped before it synced"
        );
    }
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
    create(
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
