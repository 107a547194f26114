//! The four patch types and server-side apply with conflicts and `force`.

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{CreateOptions, Object, PatchOptions};
use kclient_clientset::{Api, Patch};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::{from_json, to_json};

pub(crate) fn deployment(name: &str) -> Deployment {
    from_json(json!({
        "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "a", "image": "nginx:1"}]}}},
    }))
}

#[tokio::test(flavor = "multi_thread")]
async fn json_merge_and_strategic_merge_patches() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    cms.create(
        &from_json(json!({"metadata": {"name": "p"}, "data": {"a": "1"}})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();

    let json_patched = cms
        .patch(
            "p",
            &Patch::Json(json!([
                {"op": "add", "path": "/metadata/labels", "value": {"tier": "web"}},
                {"op": "replace", "path": "/data/a", "value": "2"}
            ])),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(json_patched.labels().get("tier"), Some("web"));
    assert_eq!(to_json(&json_patched)["data"]["a"], "2");

    let merged = cms
        .patch(
            "p",
            &Patch::Merge(json!({"data": {"a": null, "b": "3"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(to_json(&merged)["data"], json!({"b": "3"}));

    // A strategic merge patch merges the containers list by name; a merge patch replaces it.
    let deployments: Api<Deployment> = Api::namespaced(client, ns.name());
    deployments
        .create(&deployment("smp"), &CreateOptions::default())
        .await
        .unwrap();
    let containers = |d: &Deployment| -> Vec<String> {
        to_json(d)["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let sidecar = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox"}]}}}});
    let smp = deployments
        .patch(
            "smp",
            &Patch::StrategicMerge(sidecar.clone()),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    let mut names = containers(&smp);
    names.sort();
    assert_eq!(names, ["a", "b"]);
    let replaced = deployments
        .patch("smp", &Patch::Merge(sidecar), &PatchOptions::default())
        .await
        .unwrap();
    assert_eq!(containers(&replaced), ["b"]);

    // Options the server would refuse are refused before sending.
    let err = cms
        .patch(
            "p",
            &Patch::Merge(json!({})),
            &PatchOptions::default().force(true),
        )
        .await
        .unwrap_err();
    assert!(err.is_invalid_request());
}

#[tokio::test(flavor = "multi_thread")]
async fn server_side_apply_conflicts_then_force() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let desired = |value: &str| -> ConfigMap {
        from_json(json!({"metadata": {"name": "ssa"}, "data": {"owned": value}}))
    };

    let alice = cms
        .apply(&desired("alice"), &PatchOptions::apply("alice"))
        .await
        .unwrap();
    assert_eq!(to_json(&alice)["data"]["owned"], "alice");

    let err = cms
        .apply(&desired("bob"), &PatchOptions::apply("bob"))
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert!(err.to_string().contains("alice"), "{err}");

    let bob = cms
        .apply(&desired("bob"), &PatchOptions::apply("bob").force(true))
        .await
        .unwrap();
    assert_eq!(to_json(&bob)["data"]["owned"], "bob");
    let managers: Vec<String> = to_json(&bob)["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap().to_owned())
        .collect();
    assert!(managers.contains(&"bob".to_owned()), "{managers:?}");

    // An apply patch through `patch`, and apply's dry run.
    let raw = cms
        .patch(
            "ssa",
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "ssa"}, "data": {"extra": "x"}})),
            &PatchOptions::apply("carol"),
        )
        .await
        .unwrap();
    assert_eq!(to_json(&raw)["data"]["extra"], "x");
    let dry = cms
        .apply(&desired("dry"), &PatchOptions::apply("bob").dry_run(true))
        .await
        .unwrap();
    assert_eq!(to_json(&dry)["data"]["owned"], "dry");
    let after = cms.get("ssa", &Default::default()).await.unwrap();
    assert_eq!(to_json(&after)["data"]["owned"], "bob");
    assert_eq!(after.name(), "ssa");
}
