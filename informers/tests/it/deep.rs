//! Informers of a custom resource whose objects nest as deep as the apiserver accepts (10,000
//! levels, for a CRD that keeps unknown fields; `serde_json` stops at 128): the initial LIST
//! holding them must sync, and watch events carrying them must arrive, in a dynamic informer
//! and in a typed one.

use std::time::Duration;

use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{ApiResource, GroupVersionResource, Object, Resource, Unstructured};
use kclient_cache::ResourceEventHandlerFuncs;
use kclient_informers::SharedInformerFactory;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const GROUP: &str = "deep.kclient.test";

/// A typed custom resource, as a user would declare one with a free-form spec.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Deep {
    metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<Value>,
}
kclient_apimachinery::impl_object!(Deep);
impl Resource for Deep {
    const GROUP: &'static str = GROUP;
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "deep.kclient.test/v1";
    const KIND: &'static str = "Deep";
    const PLURAL: &'static str = "deeps";
    type Scope = kclient_apimachinery::NamespaceResourceScope;
}

/// The CRD `deeps.deep.kclient.test`, whose `spec` keeps unknown fields (the dynamic client's
/// tests install the same one; installing is an apply).
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

/// Creates a `Deep` named `name` whose JSON nests `depth` levels (the object, its `spec`, and
/// arrays in `spec.x`), from a raw body, decoding nothing of the answer.
async fn create_deep(client: &Client, ns: &str, name: &str, depth: usize) {
    let arrays = depth - 2;
    let body = format!(
        r#"{{"apiVersion":"{GROUP}/v1","kind":"Deep","metadata":{{"name":"{name}"}},"spec":{{"x":{}{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    );
    client
        .post()
        .group_version(GROUP, "v1")
        .namespace(ns)
        .resource("deeps")
        .body(body)
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

/// Waits for the next name a handler sent, for up to 30 s.
async fn next_name(events: &mut mpsc::UnboundedReceiver<String>, what: &str) -> String {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .unwrap_or_else(|_| panic!("no {what} within 30 s"))
        .expect("the handler is registered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_sync_and_watch_objects_as_deep_as_the_server_accepts() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    env.install_crd(&deep_crd())
        .await
        .expect("install the CRD deeps.deep.kclient.test");
    for depth in [200, 2_000, 10_000] {
        create_deep(&client, ns.name(), &format!("d{depth}"), depth).await;
    }

    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let gvr = GroupVersionResource::new(GROUP, "v1", "deeps");
    let dynamic = factory.dynamic_informer(&ApiResource::from_gvr(&gvr, "Deep", true));
    let typed = factory.informer::<Deep>();
    let (dynamic_tx, mut dynamic_events) = mpsc::unbounded_channel();
    let (typed_tx, mut typed_events) = mpsc::unbounded_channel();
    dynamic
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |object: &std::sync::Arc<Unstructured>, _| {
                let _ = dynamic_tx.send(object.name().to_string());
            },
        ))
        .expect("add handler");
    typed
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |object: &std::sync::Arc<Deep>, _| {
                let _ = typed_tx.send(object.name().to_string());
            },
        ))
        .expect("add handler");
    factory.start();
    // The initial LIST holds every object, each two levels deeper than alone.
    let synced = tokio::time::timeout(Duration::from_secs(60), factory.wait_for_cache_sync_all())
        .await
        .expect("the informers sync although their LIST holds objects 10,000 levels deep");
    assert!(synced);
    let mut depths: Vec<usize> = dynamic
        .get_store()
        .list()
        .iter()
        .map(|o| 1 + o.as_map().values().map(depth).max().unwrap_or(0))
        .collect();
    depths.sort_unstable();
    assert_eq!(depths, [200, 2_000, 10_000]);
    let mut depths: Vec<usize> = typed
        .get_store()
        .list()
        .iter()
        .map(|o| 1 + o.spec.as_ref().map_or(0, depth))
        .collect();
    depths.sort_unstable();
    assert_eq!(depths, [200, 2_000, 10_000]);
    for events in [&mut dynamic_events, &mut typed_events] {
        let mut names = Vec::new();
        for _ in 0..3 {
            names.push(next_name(events, "initial add").await);
        }
        names.sort_unstable();
        assert_eq!(names, ["d10000", "d200", "d2000"]);
    }

    // A WATCH event carrying an object of the server's limit, one level deeper in the event.
    create_deep(&client, ns.name(), "late", 10_000).await;
    assert_eq!(next_name(&mut dynamic_events, "watched add").await, "late");
    assert_eq!(next_name(&mut typed_events, "watched add").await, "late");
    let key = format!("{}/late", ns.name());
    let late = dynamic.get_store().get_by_key(&key).expect("cached");
    assert_eq!(
        1 + late.as_map().values().map(depth).max().unwrap_or(0),
        10_000
    );
    factory.shutdown().await;
}
