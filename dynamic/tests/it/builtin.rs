//! The dynamic client on built-in resources: core and named groups, namespaced and
//! cluster-scoped, every verb.

use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, GroupVersionResource, ListOptions, Object,
    PatchOptions, PatchType, Unstructured, UpdateOptions, WatchEvent,
};
use kclient_dynamic::DynamicClient;
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

fn configmap(name: &str, app: &str) -> Unstructured {
    Unstructured::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": app}},
        "data": {"k": "v"},
    }))
    .unwrap()
}

// Multi-threaded: the test namespace's Drop blocks this thread while it deletes.
#[tokio::test(flavor = "multi_thread")]
async fn configmap_crud_patch_apply_and_watch() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let dynamic = DynamicClient::new(env.client(Identity::Admin));
    let cms = dynamic
        .resource(GroupVersionResource::new("", "v1", "configmaps"))
        .namespace(ns.name());

    let created = cms
        .create(&configmap("one", "web"), &CreateOptions::default(), "")
        .await
        .unwrap();
    assert_eq!(created.name(), "one");
    assert_eq!(created.namespace(), ns.name());
    assert!(!created.resource_version().is_empty());
    cms.create(&configmap("two", "db"), &CreateOptions::default(), "")
        .await
        .unwrap();

    let got = cms.get("one", &GetOptions::default(), "").await.unwrap();
    assert_eq!(got.nested_string(&["data", "k"]).unwrap(), Some("v"));

    let web = cms
        .list(&ListOptions::default().label_selector("app=web"))
        .await
        .unwrap();
    assert_eq!(web.items.len(), 1);
    assert_eq!(web.kind, "ConfigMapList");
    assert_eq!(web.items[0].kind(), "ConfigMap");
    assert_eq!(web.items[0].api_version(), "v1");

    let mut changed = got.clone();
    changed.set_nested_field("w", &["data", "k"]).unwrap();
    let updated = cms
        .update(&changed, &UpdateOptions::default(), "")
        .await
        .unwrap();
    assert_eq!(updated.nested_string(&["data", "k"]).unwrap(), Some("w"));
    // The old resource version no longer matches: a conflict.
    let err = cms
        .update(&got, &UpdateOptions::default(), "")
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let patched = cms
        .patch(
            "one",
            PatchType::Merge,
            json!({"data": {"extra": "1"}}),
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap();
    assert_eq!(
        patched.nested_string(&["data", "extra"]).unwrap(),
        Some("1")
    );
    let patched = cms
        .patch(
            "one",
            PatchType::Json,
            r#"[{"op":"remove","path":"/data/extra"}]"#,
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap();
    assert_eq!(patched.nested_string(&["data", "extra"]).unwrap(), None);

    let applied = cms
        .apply(
            &configmap("three", "web"),
            &PatchOptions::apply("kclient-test"),
            "",
        )
        .await
        .unwrap();
    assert_eq!(applied.name(), "three");

    let mut watch = cms
        .watch(&ListOptions::default().resource_version(applied.resource_version()))
        .await
        .unwrap();
    cms.delete("three", &DeleteOptions::default(), "")
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .expect("a watch event")
        .expect("an open watch")
        .expect("a decoded event");
    match event {
        WatchEvent::Deleted(obj) => assert_eq!(obj.name(), "three"),
        other => panic!("unexpected {:?}", other.event_type()),
    }

    cms.delete_collection(
        &DeleteOptions::default(),
        &ListOptions::default().label_selector("app in (web,db)"),
    )
    .await
    .unwrap();
    let left = cms
        .list(&ListOptions::default().label_selector("app"))
        .await
        .unwrap();
    assert!(left.items.is_empty());
    let err = cms
        .get("one", &GetOptions::default(), "")
        .await
        .unwrap_err();
    assert!(err.is_not_found());
}

#[tokio::test(flavor = "multi_thread")]
async fn named_groups_cluster_scope_and_subresources() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let dynamic = DynamicClient::new(env.client(Identity::Admin));

    // A cluster-scoped list under /api/v1.
    let namespaces = dynamic
        .resource(GroupVersionResource::new("", "v1", "namespaces"))
        .list(&ListOptions::default())
        .await
        .unwrap();
    assert!(namespaces.items.iter().any(|n| n.name() == ns.name()));

    // A named group under /apis, with the scale subresource.
    let deployments = dynamic
        .resource(GroupVersionResource::new("apps", "v1", "deployments"))
        .namespace(ns.name());
    let deploy = Unstructured::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }))
    .unwrap();
    deployments
        .create(&deploy, &CreateOptions::default(), "")
        .await
        .unwrap();
    let scale = deployments
        .get("web", &GetOptions::default(), "scale")
        .await
        .unwrap();
    assert_eq!(scale.kind(), "Scale");
    assert_eq!(scale.nested_i64(&["spec", "replicas"]).unwrap(), Some(1));
    let scaled = deployments
        .patch(
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 3}}),
            &PatchOptions::default(),
            "scale",
        )
        .await
        .unwrap();
    assert_eq!(scaled.nested_i64(&["spec", "replicas"]).unwrap(), Some(3));

    // update_status writes only the status. testenv's deployment controller writes the
    // status too, so a conflict means: read again and retry, as a controller would.
    let mut attempts = 0;
    let after = loop {
        let mut current = deployments
            .get("web", &GetOptions::default(), "")
            .await
            .unwrap();
        current
            .set_nested_field(
                json!([{"type": "Available", "status": "False", "reason": "Test", "message": "m"}]),
                &["status", "conditions"],
            )
            .unwrap();
        current.set_nested_field(7, &["spec", "replicas"]).unwrap();
        match deployments
            .update_status(&current, &UpdateOptions::default())
            .await
        {
            Err(e) if e.is_conflict() && attempts < 20 => attempts += 1,
            other => break other.unwrap(),
        }
    };
    assert_eq!(after.nested_i64(&["spec", "replicas"]).unwrap(), Some(3));
    assert_eq!(
        after
            .nested_slice(&["status", "conditions"])
            .unwrap()
            .map(Vec::len),
        Some(1)
    );

    // Missing names fail before sending.
    let err = deployments
        .get("", &GetOptions::default(), "")
        .await
        .unwrap_err();
    assert!(err.is_invalid_request());
    assert_eq!(err.to_string(), "resource name may not be empty");
}
