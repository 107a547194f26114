//! Error statuses from the real server classify as client-go's `apierrors` would.

use kclient_apimachinery::{Error, StatusCause, StatusReason};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::{configmaps, create_configmap};

async fn expect_err(result: Result<Value, Error>) -> Error {
    match result {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn not_found() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let err = expect_err(
        configmaps(client.get(), ns.name())
            .name("missing")
            .send()
            .await,
    )
    .await;
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.code(), Some(404));
    assert_eq!(err.reason(), StatusReason::NotFound);
    assert_eq!(err.to_string(), r#"configmaps "missing" not found"#);
    let details = err
        .status()
        .and_then(|s| s.details.as_ref())
        .expect("details");
    assert_eq!(
        (details.kind.as_str(), details.name.as_str()),
        ("configmaps", "missing")
    );
    assert!(!err.is_conflict() && !err.is_transport() && !err.is_unexpected_server_error());
}

#[tokio::test]
async fn already_exists_and_conflict() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let created = create_configmap(&client, ns.name(), "dup", json!({})).await;

    let err = expect_err(
        configmaps(client.post(), ns.name())
            .json(&json!({"metadata": {"name": "dup"}}))
            .send()
            .await,
    )
    .await;
    assert!(err.is_already_exists(), "{err:?}");
    assert!(
        !err.is_conflict(),
        "AlreadyExists is a known reason, so 409 alone does not make a Conflict"
    );
    assert_eq!(err.code(), Some(409));

    // Update twice from the same resource version: the second loses.
    let mut update = created.clone();
    update["data"] = json!({"k": "first"});
    let _: Value = configmaps(client.put(), ns.name())
        .name("dup")
        .json(&update)
        .send()
        .await
        .unwrap();
    update["data"] = json!({"k": "second"});
    let err = expect_err(
        configmaps(client.put(), ns.name())
            .name("dup")
            .json(&update)
            .send()
            .await,
    )
    .await;
    assert!(err.is_conflict(), "{err:?}");
    assert!(!err.is_already_exists());
    assert!(
        err.to_string()
            .starts_with("Operation cannot be fulfilled on configmaps \"dup\""),
        "{err}"
    );
}

#[tokio::test]
async fn invalid_with_field_causes() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let err = expect_err(
        configmaps(client.post(), ns.name())
            .json(&json!({"metadata": {"name": "Not_Valid"}}))
            .send()
            .await,
    )
    .await;
    assert!(err.is_invalid(), "{err:?}");
    assert_eq!(err.code(), Some(422));
    assert!(
        err.has_status_cause(StatusCause::FIELD_VALUE_INVALID),
        "{:?}",
        err.status()
    );
    let cause = err
        .status()
        .unwrap()
        .cause(StatusCause::FIELD_VALUE_INVALID)
        .unwrap();
    assert_eq!(cause.field, "metadata.name");
}

#[tokio::test]
async fn forbidden_and_unauthorized() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let restricted = env.client(Identity::Restricted);
    let err = expect_err(configmaps(restricted.get(), ns.name()).send().await).await;
    assert!(err.is_forbidden(), "{err:?}");
    assert_eq!(err.code(), Some(403));
    assert!(err.to_string().contains("is forbidden"), "{err}");

    let mut config = env.config(Identity::Admin);
    config.bearer_token = Some(kclient_rest::Secret::new("not-a-valid-token".to_owned()));
    let stranger = Client::new(config).expect("client");
    let err = expect_err(configmaps(stranger.get(), ns.name()).send().await).await;
    assert!(err.is_unauthorized(), "{err:?}");
    assert_eq!(err.code(), Some(401));
    assert!(
        !err.to_string().contains("not-a-valid-token"),
        "tokens never reach error text"
    );
}

#[tokio::test]
async fn bad_request_and_method_not_allowed() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let err = expect_err(
        configmaps(client.get(), ns.name())
            .param("labelSelector", "x in")
            .send()
            .await,
    )
    .await;
    assert!(err.is_bad_request(), "{err:?}");
    // The client-side parser rejects the same selector.
    assert!(kclient_apimachinery::Selector::parse("x in").is_err());

    // POST to an item path is not a thing.
    let err = expect_err(
        configmaps(client.post(), ns.name())
            .name("x")
            .json(&json!({"metadata": {"name": "x"}}))
            .send()
            .await,
    )
    .await;
    assert!(err.is_method_not_supported(), "{err:?}");
    assert_eq!(err.code(), Some(405));
}

#[tokio::test]
async fn resource_version_too_large() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let list: Value = configmaps(client.get(), ns.name()).send().await.unwrap();
    let rv: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let err = expect_err(
        configmaps(client.get(), ns.name())
            .param("resourceVersion", (rv + 1_000_000).to_string())
            .param("resourceVersionMatch", "NotOlderThan")
            // The 504 carries Retry-After, which the client would honour ten times.
            .max_retries(0)
            .send()
            .await,
    )
    .await;
    assert!(
        err.has_status_cause(StatusCause::RESOURCE_VERSION_TOO_LARGE),
        "{err:?}"
    );
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.suggests_client_delay().is_some(), "{err:?}");
}

#[tokio::test]
async fn non_status_responses_map_their_code() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let err = client
        .get_raw("/no-such-path")
        .await
        .expect_err("an unknown path is a 404");
    assert!(err.is_not_found(), "{err:?}");
    assert!(
        err.is_unexpected_server_error(),
        "the body was not a Status: {err:?}"
    );
    assert_eq!(err.code(), Some(404));
}
