//! The dynamic client on a custom resource whose CRD is created at run time: the sample
//! `Network` (`samplecrd.k8s.io/v1`).

use std::time::{Duration, Instant};

use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, GroupVersionResource, ListOptions, Object,
    PatchOptions, PatchType, Unstructured, UpdateOptions,
};
use kclient_dynamic::DynamicClient;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// Creates the Network CRD unless it exists (other test binaries share it, so it is never
/// deleted), then waits until it is Established.
async fn ensure_network_crd(client: &Client) {
    let crds = DynamicClient::new(client.clone()).resource(GroupVersionResource::new(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
    ));
    let crd = Unstructured::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "networks.samplecrd.k8s.io",
            // `*.k8s.io` groups are protected; sample-controller's manifest says the same.
            "annotations": {"api-approved.kubernetes.io": "unapproved, experimental-only"},
        },
        "spec": {
            "group": "samplecrd.k8s.io",
            "names": {"kind": "Network", "listKind": "NetworkList", "plural": "networks", "singular": "network"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cidr": {"type": "string"}, "gateway": {"type": "string"}}}}}}}],
        }
    }))
    .unwrap();
    match crds.create(&crd, &CreateOptions::default(), "").await {
        Ok(_) => {}
        Err(err) if err.is_already_exists() => {}
        Err(err) => panic!("creating the Network CRD: {err}"),
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let current = crds
            .get("networks.samplecrd.k8s.io", &GetOptions::default(), "")
            .await
            .unwrap();
        let established = current
            .nested_slice(&["status", "conditions"])
            .unwrap()
            .into_iter()
            .flatten()
            .any(|c: &Value| c["type"] == "Established" && c["status"] == "True");
        if established {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the Network CRD never became Established"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn network(name: &str, cidr: &str) -> Unstructured {
    Unstructured::from_value(json!({
        "apiVersion": "samplecrd.k8s.io/v1",
        "kind": "Network",
        "metadata": {"name": name},
        "spec": {"cidr": cidr, "gateway": "10.0.0.1"},
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn network_objects_through_the_dynamic_client() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    ensure_network_crd(&client).await;
    let networks = DynamicClient::new(client)
        .resource(GroupVersionResource::new(
            "samplecrd.k8s.io",
            "v1",
            "networks",
        ))
        .namespace(ns.name());

    let created = networks
        .create(
            &network("net-a", "10.0.0.0/24"),
            &CreateOptions::default(),
            "",
        )
        .await
        .unwrap();
    assert_eq!(
        created.nested_string(&["spec", "cidr"]).unwrap(),
        Some("10.0.0.0/24")
    );

    let mut got = networks
        .get("net-a", &GetOptions::default(), "")
        .await
        .unwrap();
    got.set_nested_field("10.0.1.0/24", &["spec", "cidr"])
        .unwrap();
    let updated = networks
        .update(&got, &UpdateOptions::default(), "")
        .await
        .unwrap();
    assert_eq!(
        updated.nested_string(&["spec", "cidr"]).unwrap(),
        Some("10.0.1.0/24")
    );

    let patched = networks
        .patch(
            "net-a",
            PatchType::Merge,
            json!({"spec": {"gateway": "10.0.1.1"}}),
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap();
    assert_eq!(
        patched.nested_string(&["spec", "gateway"]).unwrap(),
        Some("10.0.1.1")
    );
    // Strategic merge patches do not apply to custom resources.
    let err = networks
        .patch(
            "net-a",
            PatchType::StrategicMerge,
            json!({}),
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap_err();
    assert!(err.is_unsupported_media_type(), "{err}");

    networks
        .apply(
            &network("net-b", "10.0.2.0/24"),
            &PatchOptions::apply("kclient-test"),
            "",
        )
        .await
        .unwrap();
    let list = networks.list(&ListOptions::default()).await.unwrap();
    let mut names: Vec<&str> = list.items.iter().map(|n| n.name()).collect();
    names.sort();
    assert_eq!(names, ["net-a", "net-b"]);

    networks
        .delete("net-a", &DeleteOptions::default(), "")
        .await
        .unwrap();
    assert!(
        networks
            .get("net-a", &GetOptions::default(), "")
            .await
            .unwrap_err()
            .is_not_found()
    );
}
