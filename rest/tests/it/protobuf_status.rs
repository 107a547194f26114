//! Error responses in protobuf (requests with `Accept: application/vnd.kubernetes.protobuf`)
//! decode into the same `Error`, with the same `is_*()` answers and message, as the JSON ones:
//! 404 (not found), 409 (already exists, conflict) and 410 (expired continue token).

use kclient_apimachinery::Error;
use kclient_apimachinery::protobuf::CONTENT_TYPE_PROTOBUF;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};

use super::{configmaps, create_cm};

/// Sends `request` twice, asking for protobuf and for JSON, and returns both errors.
async fn both(
    client: &Client,
    request: impl Fn(&Client, &str) -> kclient_rest::Request,
) -> (Error, Error) {
    let proto = request(client, CONTENT_TYPE_PROTOBUF)
        .bytes()
        .await
        .expect_err("the protobuf request must fail");
    let json = request(client, "application/json")
        .bytes()
        .await
        .expect_err("the JSON request must fail");
    (proto, json)
}

fn assert_same_error(proto: &Error, json: &Error) {
    let (p, j) = (
        proto.status().expect("protobuf Status"),
        json.status().expect("JSON Status"),
    );
    assert_eq!(p.code, j.code);
    assert_eq!(p.reason, j.reason);
    assert_eq!(p.message, j.message);
    assert_eq!(p.details, j.details);
    assert_eq!(proto.to_string(), json.to_string());
}

#[tokio::test]
async fn protobuf_status_errors_match_json_ones() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let ns = ns.name();
    let client = env.client(Identity::Admin);

    // 404.
    let (p, j) = both(&client, |c, accept| {
        configmaps(c.get(), ns)
            .name("missing")
            .header("Accept", accept)
    })
    .await;
    assert!(p.is_not_found(), "{p}");
    assert_same_error(&p, &j);

    // 409 AlreadyExists.
    create_cm(&client, ns, "taken", "v").await;
    let (p, j) = both(&client, |c, accept| {
        configmaps(c.post(), ns)
            .header("Accept", accept)
            .json(&serde_json::json!({"metadata": {"name": "taken"}}))
    })
    .await;
    assert!(p.is_already_exists(), "{p}");
    assert_same_error(&p, &j);

    // 409 Conflict: an update at a stale resourceVersion.
    let (p, j) = both(&client, |c, accept| {
        configmaps(c.put(), ns)
            .name("taken")
            .header("Accept", accept)
            .json(&serde_json::json!({"metadata": {"name": "taken", "resourceVersion": "1"}}))
    })
    .await;
    assert!(p.is_conflict(), "{p}");
    assert_same_error(&p, &j);

    // 410: a continue token from a compacted past.
    let (p, j) = both(&client, |c, accept| {
        configmaps(c.get(), ns)
            .param("limit", "1")
            .param(
                "continue",
                // {"v":"meta.k8s.io/v1","rv":1,"start":"a"} in base64: a resource version long
                // compacted away.
                "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0",
            )
            .header("Accept", accept)
    })
    .await;
    assert!(p.is_resource_expired() || p.is_gone(), "{p}");
    assert_same_error(&p, &j);
}
