//! Label and field selectors select on the real server what they match locally, and their
//! canonical string form is what the server accepts.

use kclient_apimachinery::{FieldSelector, Object, ObjectList, Selector, Unstructured};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::{configmaps, create_configmap};

#[tokio::test]
async fn label_selectors_select_what_they_match() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let objects = [
        ("web-1", json!({"app": "web", "tier": "front", "rank": "1"})),
        (
            "web-2",
            json!({"app": "web", "tier": "front", "rank": "5", "canary": "true"}),
        ),
        ("api", json!({"app": "api", "tier": "back", "rank": "3"})),
        ("db", json!({"app": "db", "tier": "back"})),
        ("bare", json!({})),
    ];
    for (name, labels) in &objects {
        create_configmap(&client, ns.name(), name, labels.clone()).await;
    }
    let all: ObjectList<Unstructured> = configmaps(client.get(), ns.name()).send().await.unwrap();
    assert_eq!(all.items.len(), objects.len());

    for input in [
        "",
        "app=web",
        "app==web,tier=front",
        "app!=web",
        "tier in (front, back)",
        "tier notin (back)",
        "canary",
        "!canary",
        "app in (web,api),!canary",
        "rank>2",
        "rank<2",
        "tier=back,rank",
    ] {
        let selector = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        let mut expected: Vec<_> = all
            .items
            .iter()
            .filter(|cm| selector.matches(cm.labels()))
            .map(|cm| cm.name().to_owned())
            .collect();
        let listed: ObjectList<Unstructured> = configmaps(client.get(), ns.name())
            .param("labelSelector", selector.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"));
        let mut got: Vec<_> = listed.items.iter().map(|cm| cm.name().to_owned()).collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "selector {input:?} (sent as {selector:?})");
    }
}

#[tokio::test]
async fn field_selectors_select_what_they_match() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for name in ["one", "two", "three"] {
        create_configmap(&client, ns.name(), name, json!({})).await;
    }
    let all: ObjectList<Unstructured> = configmaps(client.get(), ns.name()).send().await.unwrap();
    for input in [
        "metadata.name=two",
        "metadata.name!=two",
        "metadata.name!=two,metadata.name!=one",
        // client-go drops a term with neither field nor value: these select everything.
        "!=",
        "==",
        "!=,metadata.name=two",
    ] {
        let selector = FieldSelector::parse(input).unwrap();
        let mut expected: Vec<_> = all
            .items
            .iter()
            .filter(|cm| {
                selector.matches_with(|field| match field {
                    "metadata.name" => Some(cm.name()),
                    "metadata.namespace" => Some(cm.namespace()),
                    _ => None,
                })
            })
            .map(|cm| cm.name().to_owned())
            .collect();
        let listed: ObjectList<Unstructured> = configmaps(client.get(), ns.name())
            .param("fieldSelector", selector.to_string())
            .send()
            .await
            .unwrap();
        let mut got: Vec<_> = listed.items.iter().map(|cm| cm.name().to_owned()).collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{input}");
    }
}
