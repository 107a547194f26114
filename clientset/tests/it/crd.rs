//! The sample-controller's `Network` custom resource: its CRD produced from the Rust type
//! and created through the clientset, then Network objects through the typed client and,
//! for comparison, the dynamic client.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, GroupVersionResource, ListOptions, Object,
    PatchOptions, UpdateOptions, WatchEvent,
};
use kclient_clientset::{Api, Clientset, CustomResource, Patch, custom_resource};
use kclient_dynamic::DynamicClient;
use kclient_testenv::{Identity, TestEnv};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::to_json;

/// `samplecrd.k8s.io/v1` `Network`, as in sample-controller.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Network {
    metadata: ObjectMeta,
    spec: NetworkSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct NetworkSpec {
    cidr: String,
    gateway: String,
}

custom_resource!(Network {
    group: "samplecrd.k8s.io",
    version: "v1",
    kind: "Network",
    plural: "networks",
    singular: "network",
    scope: Namespaced,
});

fn network(name: &str, cidr: &str, gateway: &str) -> Network {
    let mut n = Network {
        spec: NetworkSpec {
            cidr: cidr.into(),
            gateway: gateway.into(),
        },
        ..Network::default()
    };
    n.set_name(name);
    n
}

/// Creates the Network CRD unless it exists (the dynamic crate's tests share it, so it is
/// never deleted), then waits until it is Established.
async fn ensure_network_crd(cs: &Clientset) {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"cidr": {"type": "string"}, "gateway": {"type": "string"}}}}});
    let crd = Network::crd(schema).unwrap();
    let crds = cs.apiextensions_v1().custom_resource_definitions();
    match crds.create(&crd, &CreateOptions::default()).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating the Network CRD: {e}"),
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let current = crds
            .get("networks.samplecrd.k8s.io", &GetOptions::default())
            .await
            .unwrap();
        let established = to_json(&current)["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
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

#[tokio::test(flavor = "multi_thread")]
async fn network_objects_through_the_typed_and_dynamic_clients() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cs = Clientset::new(client.clone());
    ensure_network_crd(&cs).await;

    let networks: Api<Network> = Api::namespaced(client.clone(), ns.name());
    let start = networks.list(&ListOptions::default()).await.unwrap();
    let mut events = networks
        .watch(&ListOptions::default().resource_version(start.resource_version()))
        .await
        .unwrap();

    let created = networks
        .create(
            &network("net-a", "10.0.0.0/24", "10.0.0.1"),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.cidr, "10.0.0.0/24");
    assert!(!created.uid().is_empty());
    match tokio::time::timeout(Duration::from_secs(10), events.next()).await {
        Ok(Some(Ok(WatchEvent::Added(n)))) => assert_eq!(n.spec.gateway, "10.0.0.1"),
        other => panic!(
            "expected ADDED, got {:?}",
            other.map(|o| o.map(|r| r.map(|e| e.event_type())))
        ),
    }

    let mut got = networks.get("net-a", &GetOptions::default()).await.unwrap();
    got.spec.cidr = "10.0.1.0/24".into();
    let updated = networks
        .update(&got, &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(updated.spec.cidr, "10.0.1.0/24");

    let patched = networks
        .patch(
            "net-a",
            &Patch::Merge(json!({"spec": {"gateway": "10.0.1.1"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.gateway, "10.0.1.1");

    networks
        .apply(
            &network("net-b", "10.0.2.0/24", "10.0.2.1"),
            &PatchOptions::apply("kclient-test"),
        )
        .await
        .unwrap();

    // The dynamic client sees the same objects.
    let dynamic = DynamicClient::new(client)
        .resource(GroupVersionResource::new(
            "samplecrd.k8s.io",
            "v1",
            "networks",
        ))
        .namespace(ns.name());
    let net_a = dynamic
        .get("net-a", &GetOptions::default(), "")
        .await
        .unwrap();
    assert_eq!(
        net_a.nested_string(&["spec", "cidr"]).unwrap(),
        Some("10.0.1.0/24")
    );
    assert_eq!(
        net_a.nested_string(&["spec", "gateway"]).unwrap(),
        Some("10.0.1.1")
    );
    let list = dynamic.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);

    let typed_list = networks.list(&ListOptions::default()).await.unwrap();
    let mut specs: Vec<NetworkSpec> = typed_list.items.into_iter().map(|n| n.spec).collect();
    specs.sort_by(|a, b| a.cidr.cmp(&b.cidr));
    assert_eq!(specs[1].gateway, "10.0.2.1");

    networks
        .delete("net-a", &DeleteOptions::default())
        .await
        .unwrap();
    assert!(
        networks
            .get("net-a", &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );
}
