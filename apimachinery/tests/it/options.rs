//! Request options are accepted by the real server as they are encoded here.

use kclient_apimachinery::{
    CreateOptions, DeleteOptions, FieldValidation, GetOptions, ListOptions, Object, ObjectList,
    PropagationPolicy, Unstructured,
};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::{configmaps, create_configmap};

#[tokio::test]
async fn pagination_with_limit_and_continue() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for name in ["p1", "p2", "p3"] {
        create_configmap(&client, ns.name(), name, json!({})).await;
    }
    let mut names = Vec::new();
    let mut opts = ListOptions::default().limit(2);
    let mut pages = 0;
    loop {
        let page: ObjectList<Unstructured> = configmaps(client.get(), ns.name())
            .params(opts.to_query())
            .send()
            .await
            .unwrap();
        pages += 1;
        assert!(page.items.len() <= 2);
        names.extend(page.items.iter().map(|cm| cm.name().to_owned()));
        match page.continue_token() {
            Some(token) => opts = ListOptions::default().limit(2).continue_token(token),
            None => break,
        }
    }
    assert_eq!(pages, 2);
    assert_eq!(names, ["p1", "p2", "p3"]);
}

#[tokio::test]
async fn dry_run_and_strict_field_validation() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);

    let created: Value = configmaps(client.post(), ns.name())
        .params(CreateOptions::default().dry_run(true).to_query())
        .json(&json!({"metadata": {"name": "dry"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(created["metadata"]["name"], "dry");
    let err = configmaps(client.get(), ns.name())
        .name("dry")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(
        err.is_not_found(),
        "a dry-run create persists nothing: {err:?}"
    );

    let err = configmaps(client.post(), ns.name())
        .params(
            CreateOptions::default()
                .field_manager("kclient-test")
                .field_validation(FieldValidation::Strict)
                .to_query(),
        )
        .json(&json!({"metadata": {"name": "strict"}, "bogus": 1}))
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(
        err.is_bad_request(),
        "strict validation rejects unknown fields: {err:?}"
    );
    assert!(err.to_string().contains("bogus"), "{err}");
}

#[tokio::test]
async fn get_options_and_delete_options_body() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let created = create_configmap(&client, ns.name(), "del", json!({})).await;

    let cached: Unstructured = configmaps(client.get(), ns.name())
        .name("del")
        .params(GetOptions::default().resource_version("0").to_query())
        .send()
        .await
        .unwrap();
    assert_eq!(cached.name(), "del");

    // A precondition on another UID fails with a Conflict: the body was read.
    let wrong = DeleteOptions::default()
        .precondition_uid("00000000-0000-0000-0000-000000000000")
        .propagation_policy(PropagationPolicy::Foreground);
    let err = configmaps(client.delete(), ns.name())
        .name("del")
        .body(wrong.to_body())
        .content_type("application/json")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err:?}");

    let uid = created["metadata"]["uid"].as_str().unwrap();
    let right = DeleteOptions::default()
        .precondition_uid(uid)
        .grace_period_seconds(0)
        .propagation_policy(PropagationPolicy::Background);
    let _: Value = configmaps(client.delete(), ns.name())
        .name("del")
        .body(right.to_body())
        .content_type("application/json")
        .send()
        .await
        .unwrap();
    let err = configmaps(client.get(), ns.name())
        .name("del")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_not_found());
}
