//! Integration tests of the test helper itself, against the local kube-apiserver: each identity
//! authenticates as the right user, and test namespaces come and go.

mod envtest;
mod leaks;
mod pods;

use std::time::Duration;

use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// This test binary, set to run only the test `name` (`--exact`, on one thread): a child test
/// process, for what a test cannot do to its own process (be killed, start with another
/// `TMPDIR` or environment).
fn child_test(name: &str) -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::current_exe().expect("this test binary"));
    command.args([name, "--exact", "--test-threads=1"]);
    command
}

/// Asks the apiserver who the caller is (SelfSubjectReview).
async fn whoami(env: &TestEnv, identity: Identity) -> Value {
    let review: Value = env
        .client(identity)
        .post()
        .group_version("authentication.k8s.io", "v1")
        .resource("selfsubjectreviews")
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .expect("SelfSubjectReview");
    review["status"]["userInfo"].clone()
}

#[tokio::test]
async fn configmap_round_trip_in_a_test_namespace() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let body = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "round-trip"},
        "data": {"greeting": "hello", "empty": ""},
    });
    let created: Value = client
        .post()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .json(&body)
        .send()
        .await
        .expect("create");
    assert_eq!(created["metadata"]["namespace"], ns.name());
    let read: Value = client
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .name("round-trip")
        .send()
        .await
        .expect("get");
    assert_eq!(read["data"], body["data"]);
    assert_eq!(read["metadata"]["uid"], created["metadata"]["uid"]);
}

#[tokio::test]
async fn restricted_identity_is_forbidden() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let err = env
        .client(Identity::Restricted)
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .send::<Value>()
        .await
        .expect_err("the restricted user has no RBAC grants");
    assert!(err.is_forbidden(), "expected 403, got {err}");
    assert_eq!(err.code(), Some(403));
    assert_eq!(
        whoami(&env, Identity::Restricted).await["username"],
        "kclient-restricted"
    );
}

#[tokio::test]
async fn each_identity_authenticates_as_its_user() {
    let env = TestEnv::connect().await;
    let admin = whoami(&env, Identity::Admin).await;
    assert_eq!(admin["username"], "kclient-admin");
    assert!(
        admin["groups"]
            .as_array()
            .expect("groups")
            .contains(&json!("system:masters"))
    );
    let cert = whoami(&env, Identity::Cert).await;
    assert_eq!(
        cert["username"], "kclient-cert-user",
        "client-certificate authentication"
    );
    assert!(
        cert["groups"]
            .as_array()
            .expect("groups")
            .contains(&json!("system:masters"))
    );
}

#[tokio::test]
async fn dropped_test_namespace_is_deleted() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let name = ns.name().to_string();
    drop(ns);
    let client = env.client(Identity::Admin);
    // The namespace controller finalizes it; until then it reads as Terminating.
    for _ in 0..100 {
        match client
            .get()
            .group_version("", "v1")
            .resource("namespaces")
            .name(&name)
            .send::<Value>()
            .await
        {
            Err(e) if e.is_not_found() => return,
            Ok(got) => assert_eq!(got["status"]["phase"], "Terminating"),
            Err(e) => panic!("reading namespace {name}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("namespace {name} still exists 20s after deletion");
}

/// Creates a ConfigMap named `name` in `namespace`.
async fn create_configmap(env: &TestEnv, namespace: &str, name: &str) {
    let _: Value = env
        .client(Identity::Admin)
        .post()
        .group_version("", "v1")
        .namespace(namespace)
        .resource("configmaps")
        .json(&json!({"metadata": {"name": name}}))
        .send()
        .await
        .expect("create");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_from_resource_version_1_is_gone_from_the_first_request() {
    use futures_util::StreamExt;
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    create_configmap(&env, ns.name(), "moves-the-revision").await;
    // No compaction: testenv starts etcd past revision 1, so "1" is older than the window of
    // every watch cache however young the server is.
    let mut events = env
        .client(Identity::Admin)
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .param("resourceVersion", "1")
        .param("watch", "true")
        .watch::<Value>()
        .await
        .expect("the watch request itself is accepted");
    let first = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("the server answers within 10s");
    match first {
        Some(Err(e)) => {
            // Reason Expired, code 410: "too old resource version".
            assert!(e.is_resource_expired(), "expected 410 Expired, got {e}");
            assert_eq!(e.code(), Some(410));
        }
        Some(Ok(event)) => panic!("expected a 410 error event, got {event:?}"),
        None => panic!("the watch ended without an event"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_etcd_expires_continue_tokens_from_before_it() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    for name in ["a", "b", "c"] {
        create_configmap(&env, ns.name(), name).await;
    }
    let page = |token: Option<String>| {
        let mut request = env
            .client(Identity::Admin)
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .param("limit", "1");
        if let Some(token) = token {
            request = request.param("continue", &token);
        }
        request.send::<Value>()
    };
    let first = page(None).await.expect("first page");
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_owned();
    // Before the compaction the token is good: the list continues at its resourceVersion.
    let second = page(Some(token.clone())).await.expect("second page");
    assert_eq!(second["items"][0]["metadata"]["name"], "b");
    create_configmap(&env, ns.name(), "d").await;
    env.compact_etcd().await;
    // The apiserver learns of the compaction from etcd and its watch cache drops older snapshots
    // within its 15 s poll period; from then on the token's resourceVersion is gone.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match page(Some(token.clone())).await {
            Err(e) if e.is_resource_expired() => {
                assert_eq!(e.code(), Some(410), "{e}");
                break;
            }
            Err(e) => panic!("expected 410 Expired, got {e}"),
            Ok(_) => assert!(
                tokio::time::Instant::now() < deadline,
                "the continue token still worked 30s after the compaction"
            ),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
