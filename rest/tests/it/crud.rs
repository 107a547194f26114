//! Raw CRUD of a ConfigMap and the mapping of API failures to error checks.

use kclient_apimachinery::PatchType;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::{configmaps, create_cm};

#[tokio::test]
async fn configmap_crud_round_trip() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let created = create_cm(&client, ns.name(), "crud", "v1").await;
    assert_eq!(created["data"]["k"], "v1");

    let got: Value = configmaps(client.get(), ns.name())
        .name("crud")
        .send()
        .await
        .unwrap();
    assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);

    let mut updated = got.clone();
    updated["data"]["k"] = json!("v2");
    let updated: Value = configmaps(client.put(), ns.name())
        .name("crud")
        .json(&updated)
        .send()
        .await
        .unwrap();
    assert_eq!(updated["data"]["k"], "v2");

    let patched: Value = configmaps(client.patch(PatchType::Merge), ns.name())
        .name("crud")
        .json(&json!({"data": {"other": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched["data"], json!({"k": "v2", "other": "x"}));

    let list: Value = configmaps(client.get(), ns.name())
        .params([("limit", "10".to_string())])
        .send()
        .await
        .unwrap();
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    let _: Value = configmaps(client.delete(), ns.name())
        .name("crud")
        .send()
        .await
        .unwrap();
    let err = configmaps(client.get(), ns.name())
        .name("crud")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn api_errors_map_to_checks() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);

    // 404
    let err = configmaps(client.get(), ns.name())
        .name("missing")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_not_found() && err.code() == Some(404), "{err:?}");

    // 409 AlreadyExists: create twice.
    let first = create_cm(&client, ns.name(), "dup", "a").await;
    let err = configmaps(client.post(), ns.name())
        .json(&json!({"metadata": {"name": "dup"}}))
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_already_exists() && !err.is_conflict(), "{err:?}");

    // 409 Conflict: update with a stale resourceVersion.
    let mut fresh = first.clone();
    fresh["data"]["k"] = json!("b");
    let _: Value = configmaps(client.put(), ns.name())
        .name("dup")
        .json(&fresh)
        .send()
        .await
        .unwrap();
    let mut stale = first.clone();
    stale["data"]["k"] = json!("c");
    let err = configmaps(client.put(), ns.name())
        .name("dup")
        .json(&stale)
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_conflict() && err.code() == Some(409), "{err:?}");

    // 422 Invalid: a name that is not a DNS subdomain.
    let err = configmaps(client.post(), ns.name())
        .json(&json!({"metadata": {"name": "Not_Valid"}}))
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_invalid() && err.code() == Some(422), "{err:?}");

    // 403 Forbidden: a user without grants.
    let restricted = env.client(Identity::Restricted);
    let err = configmaps(restricted.get(), ns.name())
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_forbidden() && err.code() == Some(403), "{err:?}");
    assert!(err.to_string().contains("kclient-restricted"), "{err}");

    // A bad body is a decode error, not a panic.
    let err = client
        .get()
        .abs_path("/version")
        .send::<Vec<u8>>()
        .await
        .unwrap_err();
    assert!(err.is_decode(), "{err:?}");
}

#[tokio::test]
async fn raw_get_and_warnings() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let version: Value =
        serde_json::from_slice(&client.get_raw("/version").await.unwrap()).unwrap();
    assert!(
        version["gitVersion"].as_str().unwrap().starts_with("v1.36"),
        "{version}"
    );
    let openapi = client.get_raw("/openapi/v3").await.unwrap();
    assert!(openapi.starts_with(b"{"));

    // An unknown field with fieldValidation=Warn comes back as a Warning header.
    let (_, warnings): (Value, _) = configmaps(client.post(), ns.name())
        .param("fieldValidation", "Warn")
        .json(&json!({"metadata": {"name": "warned"}, "bogusField": 1}))
        .send_with_warnings()
        .await
        .unwrap();
    assert!(
        warnings.iter().any(|w| w.text.contains("bogusField")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn request_timeout_is_sent_to_the_server() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let list: Value = client
        .get()
        .group_version("", "v1")
        .resource("namespaces")
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .unwrap();
    assert_eq!(list["kind"], "NamespaceList");
}

/// A LIST over 128 KB comes gzip-compressed from the real server unless the config disables
/// compression, and decodes the same either way. Bytes are counted by a proxy in front of the
/// server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_lists_come_compressed_unless_disabled() {
    use futures_util::StreamExt;
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    // 200 ConfigMaps of ~1.2 KB of repetitive text: ~300 KB of JSON, which gzip shrinks a lot.
    let text = "a line of configuration that repeats\n".repeat(32);
    futures_util::stream::iter(0..200)
        .map(|i| {
            let (client, ns, text) = (&client, ns.name(), &text);
            async move {
                let _: Value = configmaps(client.post(), ns)
                    .json(
                        &json!({"metadata": {"name": format!("big-{i:03}")}, "data": {"k": text}}),
                    )
                    .send()
                    .await
                    .expect("create");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
    let mut lists = Vec::new();
    for disable in [false, true] {
        let proxy = env.fault_proxy().await;
        let mut config = proxy.config(Identity::Admin);
        config.disable_compression = disable;
        let client = kclient_rest::Client::new(config).expect("client");
        let before = proxy.bytes_to_client();
        let list: Value = configmaps(client.get(), ns.name())
            .send()
            .await
            .expect("list");
        let wire = proxy.bytes_to_client() - before;
        let json_len = serde_json::to_vec(&list).unwrap().len() as u64;
        assert_eq!(list["items"].as_array().unwrap().len(), 200);
        println!("disable_compression={disable}: {wire} bytes on the wire, {json_len} of JSON");
        if disable {
            assert!(
                wire > json_len,
                "uncompressed: {wire} bytes on the wire for {json_len} of JSON"
            );
        } else {
            assert!(
                wire * 5 < json_len,
                "compressed: {wire} bytes on the wire for {json_len} of JSON"
            );
        }
        lists.push(list);
    }
    // The items (the list's own resourceVersion moves with any write on the shared server).
    assert_eq!(lists[0]["items"], lists[1]["items"]);
}
