//! Protobuf on the wire against the real apiserver (the `protobuf` feature): typed clients ask
//! for protobuf and send it for built-in kinds, and what they read and write equals what a
//! client forced to JSON reads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{ConfigMap, Pod, Secret, Service};
use kclient_apimachinery::protobuf::ProtobufCodec;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, ObjectList, Resource,
    UpdateOptions, WatchEvent,
};
use kclient_clientset::Api;
use kclient_rest::{Client, ContentType};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::from_json;

/// Clients over the admin identity: the default (protobuf first) and one forced to JSON.
fn clients(env: &TestEnv) -> (Client, Client) {
    let protobuf = env.client(Identity::Admin);
    assert_eq!(protobuf.content_type(), ContentType::Protobuf);
    let mut config = env.config(Identity::Admin);
    config.content_type = ContentType::Json;
    (protobuf, Client::new(config).expect("a JSON client"))
}

/// Creates `obj` through the protobuf client, then checks that get, update, list and delete
/// through it give what the JSON client reads.
async fn round_trip<K>(protobuf: &Client, json: &Client, ns: &str, obj: K, change: impl Fn(&mut K))
where
    K: Resource<Scope = kclient_apimachinery::NamespaceResourceScope> + PartialEq + std::fmt::Debug,
{
    let pb_api: Api<K> = Api::namespaced(protobuf.clone(), ns);
    let json_api: Api<K> = Api::namespaced(json.clone(), ns);
    let kind = K::KIND;

    let created = pb_api
        .create(&obj, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("protobuf create of a {kind}: {e}"));
    let name = created.name().to_owned();
    let read = json_api.get(&name, &GetOptions::default()).await.unwrap();
    // A controller may write the object between the two reads; compare at one version.
    if read.resource_version() == created.resource_version() {
        assert_eq!(
            created, read,
            "{kind}: protobuf create response vs JSON get"
        );
    }
    let pb_read = pb_api.get(&name, &GetOptions::default()).await.unwrap();
    let json_read = json_api.get(&name, &GetOptions::default()).await.unwrap();
    if pb_read.resource_version() == json_read.resource_version() {
        assert_eq!(pb_read, json_read, "{kind}: protobuf get vs JSON get");
    }

    // An update sent as protobuf; retried on conflict, since controllers write some kinds.
    let updated = loop {
        let mut current = pb_api.get(&name, &GetOptions::default()).await.unwrap();
        change(&mut current);
        match pb_api.update(&current, &UpdateOptions::default()).await {
            Ok(updated) => break updated,
            Err(e) if e.is_conflict() => continue,
            Err(e) => panic!("protobuf update of {kind} {name}: {e}"),
        }
    };
    let read = json_api.get(&name, &GetOptions::default()).await.unwrap();
    if read.resource_version() == updated.resource_version() {
        assert_eq!(
            updated, read,
            "{kind}: protobuf update response vs JSON get"
        );
    }

    let pb_list = pb_api.list(&ListOptions::default()).await.unwrap();
    let json_list = json_api.list(&ListOptions::default()).await.unwrap();
    let names = |l: &ObjectList<K>| {
        l.items
            .iter()
            .map(|o| o.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&pb_list), names(&json_list), "{kind}: list names");
    if pb_list.metadata.resource_version == json_list.metadata.resource_version {
        assert_eq!(
            pb_list.items, json_list.items,
            "{kind}: protobuf list vs JSON list"
        );
    }
    pb_api
        .delete(&name, &DeleteOptions::default())
        .await
        .unwrap();
    let err = pb_api.get(&name, &GetOptions::default()).await.unwrap_err();
    assert!(
        err.is_not_found(),
        "{kind}: a protobuf get of a deleted object: {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn typed_clients_create_read_update_list_and_delete_in_protobuf_as_json_reads_them() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let (protobuf, json) = clients(&env);

    let cm: ConfigMap = from_json(json!({
        "metadata": {"name": "pb-cm", "labels": {"app": "web"}, "annotations": {"a": "b"}},
        "data": {"k": "héllo ✓"}, "binaryData": {"b": "AAEC/w=="}
    }));
    round_trip(&protobuf, &json, ns.name(), cm, |c| {
        c.data = Some(from_json(json!({"k": "changed"})));
    })
    .await;

    let secret: Secret = from_json(json!({
        "metadata": {"name": "pb-secret"}, "type": "Opaque",
        "data": {"token": "c2VjcmV0"}, "stringData": {"plain": "text"}
    }));
    round_trip(&protobuf, &json, ns.name(), secret, |s| {
        s.data = Some(from_json(json!({"token": "b3RoZXI="})));
    })
    .await;

    let svc: Service = from_json(json!({
        "metadata": {"name": "pb-svc"},
        "spec": {"selector": {"app": "web"}, "ports": [
            {"name": "http", "port": 80, "targetPort": "http"},
            {"name": "metrics", "port": 9090, "targetPort": 9091, "protocol": "TCP"}
        ]}
    }));
    round_trip(&protobuf, &json, ns.name(), svc, |s| {
        s.metadata.labels = Some(from_json(json!({"changed": "yes"})));
    })
    .await;

    let deploy: Deployment = from_json(json!({
        "metadata": {"name": "pb-deploy"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "pb"}},
            "template": {
                "metadata": {"labels": {"app": "pb"}},
                "spec": {"containers": [{
                    "name": "c", "image": "registry.example/app:1",
                    "resources": {"limits": {"cpu": "250m", "memory": "64Mi"}},
                    "env": [{"name": "A", "value": "1"}]
                }]}
            }
        }
    }));
    round_trip(&protobuf, &json, ns.name(), deploy, |d| {
        d.metadata.annotations = Some(from_json(json!({"changed": "yes"})));
    })
    .await;

    // A Pod no scheduler takes (testenv runs kube-scheduler), so nothing else writes it.
    let pod: Pod = from_json(json!({
        "metadata": {"name": "pb-pod"},
        "spec": {
            "schedulerName": "kclient-protobuf-none",
            "containers": [{"name": "c", "image": "registry.example/app:1",
                            "command": ["sleep", "3600"], "ports": [{"containerPort": 8080}]}],
            "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 30, "effect": "NoExecute"}]
        }
    }));
    round_trip(&protobuf, &json, ns.name(), pod, |p| {
        p.metadata.labels = Some(from_json(json!({"changed": "yes"})));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_answers_protobuf_and_the_protobuf_decoder_reads_it() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let (protobuf, json) = clients(&env);
    let cms: Api<ConfigMap> = Api::namespaced(protobuf.clone(), ns.name());
    cms.create(
        &from_json(json!({"metadata": {"name": "wire"}, "data": {"k": "v"}})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    let codec = ConfigMap::protobuf().expect("ConfigMap has a protobuf form");
    let request = |client: &Client| {
        client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .name("wire")
    };

    // The protobuf client asks for protobuf: the server sends it and the decoder reads it.
    let decoded = AtomicUsize::new(0);
    let cm: ConfigMap = request(&protobuf)
        .send_protobuf(|body| {
            decoded.fetch_add(1, Ordering::SeqCst);
            codec.decode_object(body)
        })
        .await
        .unwrap();
    assert_eq!(
        decoded.load(Ordering::SeqCst),
        1,
        "the body was not protobuf"
    );
    assert_eq!(cm.name(), "wire");

    // Forced to JSON, the same call asks for JSON and never calls the protobuf decoder.
    let cm: ConfigMap = request(&json)
        .send_protobuf(|body| {
            decoded.fetch_add(1, Ordering::SeqCst);
            codec.decode_object(body)
        })
        .await
        .unwrap();
    assert_eq!(
        decoded.load(Ordering::SeqCst),
        1,
        "a JSON client asked for protobuf"
    );
    assert_eq!(cm.name(), "wire");

    // A metadata-only Accept set by the caller is kept: the answer is JSON, decoded as such.
    let meta: serde_json::Value = request(&protobuf)
        .header("Accept", kclient_apimachinery::meta::ACCEPT_METADATA)
        .send_protobuf(|_| -> Result<serde_json::Value, _> {
            panic!("the caller's Accept header asked for JSON")
        })
        .await
        .unwrap();
    assert_eq!(meta["kind"], "PartialObjectMetadata");

    // A protobuf Status error keeps its meaning.
    let err = request(&protobuf)
        .name("missing")
        .send_protobuf(|body| codec.decode_object(body))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let _: ProtobufCodec<ConfigMap> = codec;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protobuf_watch_delivers_every_event_type_and_a_real_410() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let (protobuf, json) = clients(&env);
    let cms: Api<ConfigMap> = Api::namespaced(protobuf.clone(), ns.name());
    let first = cms
        .create(
            &from_json(json!({"metadata": {"name": "w0"}, "data": {"k": "0"}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();

    // A watch-list: the initial ADDED, the initial-events-end BOOKMARK, then live events.
    let opts = ListOptions::default()
        .send_initial_events(true)
        .allow_watch_bookmarks(true)
        .resource_version_match(kclient_apimachinery::ResourceVersionMatch::NotOlderThan)
        .timeout_seconds(60);
    let mut watch = cms.watch(&opts).await.unwrap();
    assert!(
        watch.is_protobuf(),
        "the server did not answer the watch in protobuf"
    );
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(20), watch.next())
            .await
            .expect("an event within 20 s")
            .expect("the watch is open")
            .expect("an event, not an error")
    };
    match next().await {
        WatchEvent::Added(cm) => assert_eq!(cm, first),
        other => panic!("expected the initial ADDED, got {other:?}"),
    }
    match next().await {
        WatchEvent::Bookmark(b) => assert!(b.is_initial_events_end(), "{b:?}"),
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
    let mut changed = first.clone();
    changed.data = Some(from_json(json!({"k": "1"})));
    let updated = cms
        .update(&changed, &UpdateOptions::default())
        .await
        .unwrap();
    cms.delete("w0", &DeleteOptions::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match next().await {
            WatchEvent::Modified(cm) => {
                assert_eq!(
                    cm, updated,
                    "the MODIFIED object equals the update's response"
                );
                seen.push("MODIFIED");
            }
            WatchEvent::Deleted(cm) => {
                assert_eq!(cm.name(), "w0");
                seen.push("DELETED");
            }
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_eq!(seen, ["MODIFIED", "DELETED"]);

    // A watch from a compacted resourceVersion: the server's 410, as an ERROR event in the
    // protobuf stream or as the response status, is the same Error as over JSON.
    for client in [&protobuf, &json] {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
        let gone = ListOptions::default()
            .resource_version("1")
            .timeout_seconds(30);
        let err = match api.watch(&gone).await {
            Err(e) => e,
            Ok(mut w) => tokio::time::timeout(Duration::from_secs(20), w.next())
                .await
                .expect("the 410 within 20 s")
                .expect("an item")
                .expect_err("resourceVersion 1 is older than the watch cache"),
        };
        assert!(
            err.is_resource_expired(),
            "{:?}: {err}",
            client.content_type()
        );
    }
}
