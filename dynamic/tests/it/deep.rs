//! Objects nested as deep as the apiserver accepts: a custom resource whose schema keeps
//! unknown fields may nest 10,000 levels (the server's JSON decoder refuses the 10,001st), far
//! past `serde_json`'s 128. Every way the dynamic client and the REST client read such an
//! object (get, list, watch, a raw watch, a typed struct) must decode it.

use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{
    GetOptions, GroupVersionResource, ListOptions, Object, Unstructured, WatchEvent, WatchEventType,
};
use kclient_dynamic::DynamicClient;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

const GROUP: &str = "deep.kclient.test";

fn deeps() -> GroupVersionResource {
    GroupVersionResource::new(GROUP, "v1", "deeps")
}

/// The CRD `deeps.deep.kclient.test`, whose `spec` keeps unknown fields. Other test binaries
/// install the same one (installing is an apply), and it is never deleted.
fn deep_crd() -> Value {
    let name = format!("deeps.{GROUP}");
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": "Deep", "listKind": "DeepList", "plural": "deeps", "singular": "deep"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}],
        }
    })
}

/// A `Deep` named `name` whose JSON nests `depth` levels: the object, its `spec`, and arrays
/// inside `spec.x`.
fn deep_body(name: &str, depth: usize) -> Vec<u8> {
    let arrays = depth - 2;
    format!(
        r#"{{"apiVersion":"{GROUP}/v1","kind":"Deep","metadata":{{"name":"{name}"}},"spec":{{"x":{}{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
    .into_bytes()
}

/// Creates the object with a raw body (its JSON is written, not serialized) and returns nothing
/// decoded from the answer.
async fn create_deep(client: &Client, ns: &str, name: &str, depth: usize) {
    client
        .post()
        .group_version(GROUP, "v1")
        .namespace(ns)
        .resource("deeps")
        .body(deep_body(name, depth))
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("creating {name} ({depth} levels): {e}"));
}

/// How many levels `value` nests, walked without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(entries) => Box::new(entries.values()),
            _ => continue,
        };
        deepest = deepest.max(level);
        stack.extend(children.map(|child| (child, level + 1)));
    }
    deepest
}

/// The depth of an object as the map it is.
fn object_depth(object: &Unstructured) -> usize {
    1 + object.as_map().values().map(depth).max().unwrap_or(0)
}

/// A typed custom resource, as a user would declare one with a free-form spec.
#[derive(Debug, serde::Deserialize)]
struct DeepTyped {
    metadata: ObjectMeta,
    spec: Value,
}

/// The depths the test creates: past `serde_json`'s limit, far past it, and the server's
/// own limit.
const DEPTHS: [usize; 3] = [200, 2_000, 10_000];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_as_deep_as_the_server_accepts_decode_on_every_read_path() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    env.install_crd(&deep_crd())
        .await
        .expect("install the CRD deeps.deep.kclient.test");
    // The server refuses one level more than its limit; the limit itself it accepts.
    let refused = client
        .post()
        .group_version(GROUP, "v1")
        .namespace(ns.name())
        .resource("deeps")
        .body(deep_body("too-deep", 10_001))
        .bytes()
        .await
        .expect_err("the server refuses 10,001 levels");
    assert!(refused.is_bad_request(), "{refused}");
    for depth in DEPTHS {
        create_deep(&client, ns.name(), &format!("d{depth}"), depth).await;
    }
    let deeps = DynamicClient::new(client.clone())
        .resource(deeps())
        .namespace(ns.name());

    // GET, each object alone.
    for want in DEPTHS {
        let got = deeps
            .get(&format!("d{want}"), &GetOptions::default(), "")
            .await
            .unwrap_or_else(|e| panic!("GET of the {want}-level object: {e}"));
        assert_eq!(object_depth(&got), want);
    }

    // LIST: the objects are two levels deeper in it.
    let list = deeps
        .list(&ListOptions::default())
        .await
        .unwrap_or_else(|e| panic!("LIST of the deep objects: {e}"));
    let mut depths: Vec<usize> = list.items.iter().map(object_depth).collect();
    depths.sort_unstable();
    assert_eq!(depths, DEPTHS);

    // WATCH from the list's resourceVersion 0: an ADDED event per object, one level deeper.
    let mut watch = deeps
        .watch(&{
            let mut opts = ListOptions::default();
            opts.resource_version = Some("0".into());
            opts
        })
        .await
        .expect("watch");
    let mut depths = Vec::new();
    while depths.len() < DEPTHS.len() {
        match tokio::time::timeout(Duration::from_secs(30), watch.next()).await {
            Ok(Some(Ok(WatchEvent::Added(object)))) => depths.push(object_depth(&object)),
            other => panic!("expected an ADDED event, got {other:?}"),
        }
    }
    depths.sort_unstable();
    assert_eq!(depths, DEPTHS);

    // The raw watch, which checks each event's object while skipping it.
    let mut raw = client
        .get()
        .group_version(GROUP, "v1")
        .namespace(ns.name())
        .resource("deeps")
        .param("watch", "true")
        .param("resourceVersion", "0")
        .watch_raw()
        .await
        .expect("raw watch");
    let mut names = Vec::new();
    while names.len() < DEPTHS.len() {
        match tokio::time::timeout(Duration::from_secs(30), raw.next()).await {
            Ok(Some(Ok(event))) => {
                assert_eq!(event.event_type, WatchEventType::Added);
                let object: Unstructured =
                    kclient_apimachinery::decode_json(event.object.get().as_bytes())
                        .unwrap_or_else(|e| panic!("the raw event's object: {e}"));
                names.push(object.name().to_string());
            }
            other => panic!("expected a raw ADDED event, got {other:?}"),
        }
    }
    names.sort_unstable();
    assert_eq!(names, ["d10000", "d200", "d2000"]);

    // A typed struct through the REST client.
    for want in DEPTHS {
        let typed: DeepTyped = client
            .get()
            .group_version(GROUP, "v1")
            .namespace(ns.name())
            .resource("deeps")
            .name(&format!("d{want}"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("the {want}-level object as a typed struct: {e}"));
        assert_eq!(typed.metadata.name.as_deref(), Some(&*format!("d{want}")));
        assert_eq!(1 + depth(&typed.spec), want);
    }
}
