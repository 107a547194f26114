//! `Time` reads what the server stores: a custom resource's `date-time` field holds its text
//! as sent, in any spelling the server's format check accepts, and Go's `metav1.Time` decodes
//! the ones `time.Parse(time.RFC3339, ..)` reads.

use kclient_apimachinery::decode_json;
use kclient_apimachinery::meta::Time;
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

#[tokio::test]
async fn a_comma_fraction_stored_in_a_custom_resource_decodes() {
    let env = TestEnv::connect().await;
    env.install_crd(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "stamps.times.example.com"},
        "spec": {
            "group": "times.example.com",
            "names": {"kind": "Stamp", "plural": "stamps"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "at": {"type": "string", "format": "date-time"}}}}}}}],
        },
    }))
    .await
    .expect("installing the Stamp CRD");
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    client
        .post()
        .group_version("times.example.com", "v1")
        .namespace(ns.name())
        .resource("stamps")
        .json(
            &json!({"apiVersion": "times.example.com/v1", "kind": "Stamp",
            "metadata": {"name": "comma"}, "spec": {"at": "2024-01-01T09:00:00,5+01:00"}}),
        )
        .send::<serde_json::Value>()
        .await
        .expect("the server's date-time format accepts a comma before the fraction");
    let raw = client
        .get()
        .group_version("times.example.com", "v1")
        .namespace(ns.name())
        .resource("stamps")
        .name("comma")
        .bytes()
        .await
        .expect("get");

    #[derive(serde::Deserialize)]
    struct Stamp {
        spec: Spec,
    }
    #[derive(serde::Deserialize)]
    struct Spec {
        at: Time,
    }
    let stamp: Stamp = decode_json(&raw).expect("decoding the Stamp as Go's metav1.Time does");
    assert_eq!(stamp.spec.at.to_string(), "2024-01-01T08:00:00Z");
}
