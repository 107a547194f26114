//! Delete with propagation policies (the testenv runs the garbage collector) and
//! preconditions, and delete_collection.

use std::time::{Duration, Instant};

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, Error, GetOptions, ListOptions, Object, PatchOptions,
    PropagationPolicy,
};
use kclient_clientset::{Api, Patch};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::{from_json, to_json};

async fn create_owner_and_dependent(cms: &Api<ConfigMap>, owner: &str, hold: bool) -> ConfigMap {
    let owner_cm = cms
        .create(
            &from_json(json!({"metadata": {"name": owner}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let mut meta = json!({
        "name": format!("{owner}-dep"),
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner,
            "uid": owner_cm.uid(), "blockOwnerDeletion": true}],
    });
    if hold {
        meta["finalizers"] = json!(["kclient.dev/hold"]);
    }
    cms.create(
        &from_json(json!({"metadata": meta})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    owner_cm
}

/// Polls `check` every 100 ms for up to 30 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn gone(cms: &Api<ConfigMap>, name: &str) -> bool {
    matches!(cms.get(name, &GetOptions::default()).await, Err(e) if e.is_not_found())
}

#[tokio::test(flavor = "multi_thread")]
async fn propagation_policies() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());

    // Orphan: the dependent stays, without its owner reference.
    create_owner_and_dependent(&cms, "orphan", false).await;
    cms.delete(
        "orphan",
        &DeleteOptions::default().propagation_policy(PropagationPolicy::Orphan),
    )
    .await
    .unwrap();
    eventually("the orphaned owner is gone", || gone(&cms, "orphan")).await;
    eventually("the dependent lost its owner reference", || async {
        let dep = cms.get("orphan-dep", &GetOptions::default()).await.unwrap();
        dep.owner_references().is_empty()
    })
    .await;

    // Background: the owner goes now, the dependent after it.
    create_owner_and_dependent(&cms, "background", false).await;
    cms.delete(
        "background",
        &DeleteOptions::default().propagation_policy(PropagationPolicy::Background),
    )
    .await
    .unwrap();
    assert!(gone(&cms, "background").await);
    eventually("the background dependent is collected", || {
        gone(&cms, "background-dep")
    })
    .await;

    // Foreground: the owner waits (deletionTimestamp, foregroundDeletion finalizer) until its
    // blocking dependent is gone; the dependent is held by a finalizer until we release it.
    create_owner_and_dependent(&cms, "foreground", true).await;
    cms.delete(
        "foreground",
        &DeleteOptions::default().propagation_policy(PropagationPolicy::Foreground),
    )
    .await
    .unwrap();
    let owner = cms.get("foreground", &GetOptions::default()).await.unwrap();
    assert!(owner.is_being_deleted());
    assert!(owner.finalizers().contains(&"foregroundDeletion"));
    eventually("the held dependent is being deleted", || async {
        cms.get("foreground-dep", &GetOptions::default())
            .await
            .unwrap()
            .is_being_deleted()
    })
    .await;
    assert!(
        !gone(&cms, "foreground").await,
        "the owner must wait for its dependent"
    );
    cms.patch(
        "foreground-dep",
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    eventually("the dependent is gone", || gone(&cms, "foreground-dep")).await;
    eventually("the foreground owner is gone", || gone(&cms, "foreground")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn preconditions_and_delete_collection() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let cm = cms
        .create(
            &from_json(json!({"metadata": {"name": "guarded", "labels": {"set": "x"}}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();

    let conflict = |r: Result<(), Error>| assert!(r.unwrap_err().is_conflict());
    conflict(
        cms.delete(
            "guarded",
            &DeleteOptions::default().precondition_uid("not-the-uid"),
        )
        .await,
    );
    conflict(
        cms.delete(
            "guarded",
            &DeleteOptions::default().precondition_resource_version("1"),
        )
        .await,
    );
    cms.delete(
        "guarded",
        &DeleteOptions::default()
            .precondition_uid(cm.uid())
            .precondition_resource_version(cm.resource_version()),
    )
    .await
    .unwrap();
    assert!(gone(&cms, "guarded").await);

    for i in 0..3 {
        cms.create(
            &from_json(json!({"metadata": {"name": format!("c{i}"), "labels": {"set": "y"}}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    }
    cms.create(
        &from_json(json!({"metadata": {"name": "keep"}})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    cms.delete_collection(
        &DeleteOptions::default(),
        &ListOptions::default().label_selector("set=y"),
    )
    .await
    .unwrap();
    let left = cms.list(&ListOptions::default()).await.unwrap();
    let names: Vec<&str> = left
        .items
        .iter()
        .map(|c| c.name())
        .filter(|n| *n != "kube-root-ca.crt")
        .collect();
    assert_eq!(names, ["keep"], "{}", to_json(&left.items));
}
