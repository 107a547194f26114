//! The clients of kclient, unchanged, over the fake: the typed clientset and `Api<K>`, an
//! informer and its lister, the dynamic client, discovery and the RESTMapper, a dynamic
//! informer over a custom resource; plus reactors and recorded actions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{
    ApiResource, CreateOptions, DeleteOptions, Error, GetOptions, GroupKind, GroupVersionKind,
    GroupVersionResource, ListOptions, Object, PatchOptions, PatchType, Selector, Unstructured,
    UpdateOptions, WatchEvent,
};
use kclient_cache::ResourceEventHandlerFuncs;
use kclient_clientset::{Api, Clientset, Patch};
use kclient_discovery::{DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient};
use kclient_dynamic::DynamicClient;
use kclient_informers::SharedInformerFactory;
use kclient_testing::{Fake, Reaction};
use serde_json::json;

use crate::{from_json, to_json};

fn configmap(name: &str, labels: serde_json::Value) -> ConfigMap {
    from_json(json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
}

/// Waits for the next item of a channel, failing the test (not timing it) if nothing comes.
async fn next<T>(rx: &mut tokio::sync::mpsc::UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an event within 10 s")
        .expect("the channel is open")
}

#[tokio::test]
async fn the_typed_clientset_runs_over_the_fake() {
    let fake = Fake::new();
    let cs = Clientset::new(fake.client());
    let cms = cs.core_v1().config_maps("default");

    let created = cms
        .create(
            &configmap("one", json!({"app": "web"})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(Object::namespace(&created), "default");
    assert!(!created.uid().is_empty());
    let err = cms
        .create(&configmap("one", json!({})), &CreateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    cms.create(
        &configmap("two", json!({"app": "db"})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();

    let web = cms
        .list(&ListOptions::default().label_selector("app=web"))
        .await
        .unwrap();
    assert_eq!(web.items.len(), 1);
    assert_eq!(web.items[0].name(), "one");
    let by_name = cms
        .list(&ListOptions::default().field_selector("metadata.name=two"))
        .await
        .unwrap();
    assert_eq!(by_name.items[0].name(), "two");

    let mut got = cms.get("one", &GetOptions::default()).await.unwrap();
    got.data = Some(from_json(json!({"k": "w"})));
    let updated = cms.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!(to_json(&updated)["data"]["k"], "w");
    let err = cms
        .update(&got, &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let patched = cms
        .patch(
            "one",
            &Patch::StrategicMerge(json!({"data": {"p": "1"}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(to_json(&patched)["data"], json!({"k": "w", "p": "1"}));

    cms.delete("one", &DeleteOptions::default()).await.unwrap();
    assert!(
        cms.get("one", &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );

    // A kind with a status subresource and a generation, through Api<K>.
    let deployments: Api<Deployment> = Api::namespaced(fake.client(), "default");
    let d: Deployment = from_json(json!({"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}));
    let d = deployments
        .create(&d, &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(d.generation(), 1);
    let mut with_status = to_json(&d);
    with_status["status"] = json!({"replicas": 3});
    let d = deployments
        .update_status(&from_json(with_status), &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(to_json(&d)["status"]["replicas"], 3);
    assert_eq!(d.generation(), 1, "a status write keeps the generation");
    let d = deployments
        .patch(
            "web",
            &Patch::StrategicMerge(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": "app:2"}]}}}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(d.generation(), 2);
    assert_eq!(
        to_json(&d)["spec"]["template"]["spec"]["containers"][0]["image"],
        "app:2"
    );
    assert_eq!(
        to_json(&d)["status"]["replicas"],
        3,
        "status survives spec writes"
    );

    // Finalizers: delete marks, the last finalizer's removal deletes.
    let held: ConfigMap = from_json(json!({"metadata": {"name": "held",
        "finalizers": ["example.com/hold"]}}));
    cms.create(&held, &CreateOptions::default()).await.unwrap();
    cms.delete("held", &DeleteOptions::default()).await.unwrap();
    let marked = cms.get("held", &GetOptions::default()).await.unwrap();
    assert!(to_json(&marked)["metadata"]["deletionTimestamp"].is_string());
    cms.patch(
        "held",
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    assert!(
        cms.get("held", &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );

    // Server-side apply creates, then merges, recording the manager.
    let applied = cms
        .patch(
            "applied",
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "applied"}, "data": {"a": "1"}})),
            &PatchOptions::default().field_manager("tests").force(true),
        )
        .await
        .unwrap();
    let managers = to_json(&applied)["metadata"]["managedFields"].clone();
    assert_eq!(managers[0]["manager"], "tests");
    assert_eq!(managers[0]["operation"], "Apply");
}

#[tokio::test]
async fn an_informer_and_its_lister_run_over_the_fake() {
    let fake = Fake::new();
    fake.tracker()
        .add(&configmap("seeded", json!({"app": "web"})))
        .unwrap();
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.informer::<ConfigMap>();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (add, update, delete) = (tx.clone(), tx.clone(), tx);
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |cm: &Arc<ConfigMap>, _| {
                    let _ = add.send(format!("add {}", cm.name()));
                })
                .update_func(move |_, cm: &Arc<ConfigMap>| {
                    let _ = update.send(format!("update {}", cm.name()));
                })
                .delete_func(move |cm| {
                    let _ = delete.send(format!("delete {}", cm.key()));
                }),
        )
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);
    assert_eq!(next(&mut rx).await, "add seeded");

    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");
    cms.create(
        &configmap("new", json!({"app": "web"})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(next(&mut rx).await, "add new");
    cms.patch(
        "new",
        &Patch::Merge(json!({"data": {"k": "changed"}})),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(next(&mut rx).await, "update new");
    cms.delete("seeded", &DeleteOptions::default())
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, "delete default/seeded");

    let lister = factory.lister::<ConfigMap>();
    let listed = lister
        .namespace("default")
        .list(&Selector::parse("app=web").unwrap());
    assert_eq!(listed.len(), 1);
    assert_eq!(
        to_json(&*lister.namespace("default").get("new").unwrap())["data"]["k"],
        "changed"
    );
    factory.shutdown().await;
}

/// `samplecrd.k8s.io/v1` `Network`, as in sample-controller.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Network {
    metadata: kclient_apimachinery::meta::v1::ObjectMeta,
    spec: NetworkSpec,
}

kclient_clientset::custom_resource!(Network {
    group: "samplecrd.k8s.io",
    version: "v1",
    kind: "Network",
    plural: "networks",
    singular: "network",
    scope: Namespaced,
});

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct NetworkSpec {
    cidr: String,
}

#[tokio::test]
async fn dynamic_client_discovery_rest_mapper_and_a_dynamic_informer_over_a_crd() {
    use kclient_clientset::CustomResource as _;
    let fake = Fake::new();
    let cs = Clientset::new(fake.client());
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"cidr": {"type": "string"}}}}});
    let crd = cs
        .apiextensions_v1()
        .custom_resource_definitions()
        .create(&Network::crd(schema).unwrap(), &CreateOptions::default())
        .await
        .unwrap();
    // The fake reports it Established at once, as a test waiting for it expects.
    let crd = cs
        .apiextensions_v1()
        .custom_resource_definitions()
        .get(crd.name(), &GetOptions::default())
        .await
        .unwrap();
    let conditions = to_json(&crd)["status"]["conditions"].clone();
    assert!(
        conditions
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True"),
        "{conditions}"
    );

    let discovery = DiscoveryClient::new(fake.client());
    let mapper = DeferredDiscoveryRESTMapper::new(MemCacheClient::new(discovery));
    let mapping = mapper
        .rest_mapping(&GroupKind::new("samplecrd.k8s.io", "Network"), &[])
        .await
        .unwrap();
    assert_eq!(mapping.resource.resource, "networks");
    let deployments = mapper
        .rest_mapping(&GroupKind::new("apps", "Deployment"), &[])
        .await
        .unwrap();
    assert_eq!(deployments.resource.resource, "deployments");

    let resource = ApiResource::new(
        &GroupVersionKind::new("samplecrd.k8s.io", "v1", "Network"),
        "networks",
        true,
    );
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.dynamic_informer(&resource);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |n: &Arc<Unstructured>, _| {
                let _ = tx.send(n.name().to_string());
            },
        ))
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);

    let dynamic = DynamicClient::new(fake.client());
    let networks = dynamic
        .resource(GroupVersionResource::new(
            "samplecrd.k8s.io",
            "v1",
            "networks",
        ))
        .namespace("default");
    let obj = Unstructured::from_value(json!({"apiVersion": "samplecrd.k8s.io/v1",
        "kind": "Network", "metadata": {"name": "net-a"}, "spec": {"cidr": "10.0.0.0/24"}}))
    .unwrap();
    let created = networks
        .create(&obj, &CreateOptions::default(), "")
        .await
        .unwrap();
    assert_eq!(created.generation(), 1);
    assert_eq!(next(&mut rx).await, "net-a");
    // Custom resources refuse strategic merge patches, as the server does.
    let err = networks
        .patch(
            "net-a",
            PatchType::StrategicMerge,
            json!({"spec": {"cidr": "x"}}),
            &PatchOptions::default(),
            "",
        )
        .await
        .unwrap_err();
    assert!(err.is_unsupported_media_type(), "{err}");

    // Deleting the CRD deletes its objects, with an event each, and ends their watches, as
    // the server's CRD finalizer and storage teardown do.
    let mut watch = networks
        .watch(&ListOptions::default().resource_version(created.resource_version()))
        .await
        .unwrap();
    cs.apiextensions_v1()
        .custom_resource_definitions()
        .delete(crd.name(), &DeleteOptions::default())
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .expect("an event within 10 s");
    match event {
        Some(Ok(WatchEvent::Deleted(gone))) => assert_eq!(gone.name(), "net-a"),
        other => panic!("expected net-a's deletion, got {other:?}"),
    }
    let end = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .expect("the watch ends within 10 s");
    assert!(end.is_none(), "the watch ends with its resource");
    factory.shutdown().await;
}

#[tokio::test]
async fn reactors_script_errors_and_actions_record_every_request() {
    let fake = Fake::new();
    fake.tracker()
        .add(&configmap("network-net-a", json!({})))
        .unwrap();
    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");

    // The first update conflicts, later ones reach the tracker.
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    fake.prepend_reactor("update", "configmaps", move |_| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            Reaction::Error(Error::new_conflict(
                "",
                "configmaps",
                "network-net-a",
                "scripted",
            ))
        } else {
            Reaction::Continue
        }
    });
    // Every get of one name answers a canned object.
    fake.prepend_reactor("get", "configmaps", |action| {
        if action.name == "canned" {
            Reaction::Object(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "canned", "namespace": "default"}}))
        } else {
            Reaction::Continue
        }
    });
    // Lists fail with 500; deletes are throttled without Retry-After (so not retried).
    fake.append_reactor("list", "configmaps", |_| {
        Reaction::Error(Error::new_internal_error("etcd is down"))
    });
    fake.append_reactor("delete", "*", |_| {
        Reaction::Error(Error::new_too_many_requests("slow down", 0))
    });

    let got = cms
        .get("network-net-a", &GetOptions::default())
        .await
        .unwrap();
    let err = cms
        .update(&got, &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    cms.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!(
        cms.get("canned", &GetOptions::default())
            .await
            .unwrap()
            .name(),
        "canned"
    );
    let err = cms.list(&ListOptions::default()).await.unwrap_err();
    assert!(err.is_internal_error(), "{err}");
    let err = cms
        .delete("network-net-a", &DeleteOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_too_many_requests(), "{err}");

    // A 429 with Retry-After is retried by the client, as against a server.
    let throttled = Arc::new(AtomicUsize::new(0));
    let count = throttled.clone();
    fake.prepend_reactor("patch", "configmaps", move |_| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            Reaction::Error(Error::new_too_many_requests("slow down", 1))
        } else {
            Reaction::Continue
        }
    });
    fake.clear_actions();
    cms.patch(
        "network-net-a",
        &Patch::StrategicMerge(json!({"data": {"x": "1"}})),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    // Two requests reached the fake (the 429 and the retry), each a strategic merge PATCH.
    let patches = fake.actions_matching("patch", "configmaps");
    assert_eq!(patches.len(), 2);
    assert!(
        patches
            .iter()
            .all(|a| a.patch_type == Some(PatchType::StrategicMerge)
                && a.name == "network-net-a"
                && a.namespace == "default"
                && a.body == Some(json!({"data": {"x": "1"}})))
    );
    assert_eq!(fake.actions().len(), 2);
}

#[tokio::test]
async fn watches_resume_from_a_resource_version_and_expire_after_compaction() {
    let fake = Fake::new();
    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");
    let a = cms
        .create(&configmap("a", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    cms.create(
        &configmap("b", json!({"app": "web"})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    cms.delete("a", &DeleteOptions::default()).await.unwrap();
    // From a's resourceVersion: b added, a deleted, then what comes next.
    let mut events = cms
        .watch(
            &ListOptions::default()
                .resource_version(a.resource_version())
                .allow_watch_bookmarks(true),
        )
        .await
        .unwrap();
    let mut summary = Vec::new();
    for _ in 0..2 {
        match events.next().await.unwrap().unwrap() {
            WatchEvent::Added(o) => summary.push(format!("ADDED {}", o.name())),
            WatchEvent::Deleted(o) => summary.push(format!("DELETED {}", o.name())),
            other => summary.push(format!("{:?}", other.event_type())),
        }
    }
    assert_eq!(summary, ["ADDED b", "DELETED a"]);
    fake.tracker().send_bookmarks();
    match events.next().await.unwrap().unwrap() {
        WatchEvent::Bookmark(b) => {
            assert_eq!(
                b.resource_version,
                fake.tracker().resource_version().to_string()
            );
        }
        other => panic!("expected a bookmark, got {:?}", other.event_type()),
    }
    drop(events);

    fake.tracker().compact();
    let mut events = cms
        .watch(&ListOptions::default().resource_version(a.resource_version()))
        .await
        .unwrap();
    let err = events.next().await.unwrap().unwrap_err();
    assert!(err.is_resource_expired(), "{err}");
}

#[tokio::test]
async fn the_metadata_client_and_a_metadata_informer_run_over_the_fake() {
    use kclient_apimachinery::meta::PartialObjectMetadata;
    use kclient_dynamic::MetadataClient;
    let fake = Fake::new();
    fake.tracker()
        .add(&configmap("seeded", json!({"app": "web"})))
        .unwrap();
    let metadata = MetadataClient::new(fake.client());
    let cms = metadata
        .resource(GroupVersionResource::new("", "v1", "configmaps"))
        .namespace("default");
    let list = cms.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].name(), "seeded");
    let one = cms.get("seeded", &GetOptions::default(), "").await.unwrap();
    assert_eq!(one.labels().get("app"), Some("web"));
    // The request asked for the reduced form, as against a server.
    let action = fake.actions().pop().unwrap();
    assert_eq!(action.verb, "get");

    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.metadata_informer(&ApiResource::new(
        &GroupVersionKind::new("", "v1", "ConfigMap"),
        "configmaps",
        true,
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |m: &Arc<PartialObjectMetadata>, _| {
                let _ = tx.send(m.name().to_string());
            },
        ))
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);
    assert_eq!(next(&mut rx).await, "seeded");
    Clientset::new(fake.client())
        .core_v1()
        .config_maps("default")
        .create(&configmap("later", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, "later");
    factory.shutdown().await;
}

#[tokio::test]
async fn seeding_from_typed_objects_unstructured_values_and_yaml() {
    let fake = Fake::new();
    let tracker = fake.tracker();
    tracker
        .add(&from_json::<ConfigMap>(
            json!({"metadata": {"name": "typed", "namespace": "team-a"}}),
        ))
        .unwrap();
    let u = Unstructured::from_value(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "unstructured", "namespace": "team-a"}}))
    .unwrap();
    tracker.add_value(u.into()).unwrap();
    let seeded = tracker
        .add_yaml(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team-b}\n\
             spec: {replicas: 2}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: empty}\n\
             ---\napiVersion: v1\nkind: ConfigMap\n\
             metadata: {name: dumped, namespace: team-b, resourceVersion: \"9999\"}\n",
        )
        .unwrap();
    assert_eq!(seeded.len(), 3);
    // A fixture dumped from a cluster keeps its resourceVersion out: the tracker assigns one,
    // as client-go's tracker accepts it (a POST of it is refused, as the server refuses it).
    assert_ne!(seeded[2]["metadata"]["resourceVersion"], "9999");
    // Seeding created the namespaces the objects live in.
    let cs = Clientset::new(fake.client());
    let namespaces = cs
        .core_v1()
        .namespaces()
        .list(&ListOptions::default())
        .await
        .unwrap();
    let names: Vec<&str> = namespaces.items.iter().map(|n| n.name()).collect();
    for ns in ["default", "empty", "team-a", "team-b"] {
        assert!(names.contains(&ns), "{ns} in {names:?}");
    }
    let d = cs
        .apps_v1()
        .deployments("team-b")
        .get("web", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(d.generation(), 1);
    assert_eq!(to_json(&d)["spec"]["replicas"], 2);
    // An object of a kind nobody serves is refused with a message saying what to do.
    let err = tracker
        .add_value(
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}}),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("register custom resources first"),
        "{err}"
    );
    // Creating through the API in a namespace that does not exist is NotFound, as on a server.
    let err = cs
        .core_v1()
        .config_maps("nowhere")
        .create(&configmap("a", json!({})), &CreateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn bad_requests_get_the_servers_kind_of_error() {
    let fake = Fake::new();
    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");
    let err = cms
        .list(&ListOptions::default().label_selector("app in ("))
        .await
        .unwrap_err();
    assert!(err.is_bad_request(), "{err}");
    let err = cms
        .create(
            &from_json(json!({"metadata": {}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err}");
    cms.create(&configmap("a", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    let err = cms
        .patch(
            "a",
            &Patch::Json(json!([{"op": "test", "path": "/data/k", "value": "other"}])),
            &PatchOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err}");
    let client = fake.client();
    let err = client
        .post()
        .group_version("", "v1")
        .namespace("default")
        .resource("configmaps")
        .json(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}}))
        .send::<serde_json::Value>()
        .await
        .unwrap_err();
    assert!(err.is_bad_request(), "{err}");
}

#[tokio::test]
async fn watch_reactors_and_watch_timeouts() {
    let fake = Fake::new();
    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");
    fake.prepend_reactor("watch", "configmaps", |action| {
        if action.query_param("labelSelector") == Some("fail=yes") {
            Reaction::Error(Error::new_internal_error("scripted watch failure"))
        } else {
            Reaction::Continue
        }
    });
    let err = cms
        .watch(&ListOptions::default().label_selector("fail=yes"))
        .await
        .unwrap_err();
    assert!(err.is_internal_error(), "{err}");
    // timeoutSeconds ends the stream, as the server ends a watch.
    tokio::time::pause();
    let mut events = cms
        .watch(&ListOptions::default().timeout_seconds(5))
        .await
        .unwrap();
    assert!(
        events.next().await.is_none(),
        "the watch ends after its timeout"
    );
    assert_eq!(fake.tracker().watch_count(), 0);
    // A timeout the clock cannot add means none: no panic, and the watch stays open.
    let mut events = cms
        .watch(&ListOptions::default().timeout_seconds(i64::MAX))
        .await
        .unwrap();
    cms.create(&configmap("late", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    match events.next().await {
        Some(Ok(WatchEvent::Added(cm))) => assert_eq!(cm.name(), "late"),
        other => panic!("expected the ADDED event of late, got {other:?}"),
    }
}

#[tokio::test]
async fn apply_merges_lists_of_built_ins_by_key() {
    let fake = Fake::new();
    let deployments: Api<Deployment> = Api::namespaced(fake.client(), "default");
    let config = |image: &str| {
        Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": image}]}}}}))
    };
    let opts = PatchOptions::default().field_manager("deployer");
    deployments
        .patch("web", &config("app:1"), &opts)
        .await
        .unwrap();
    // Another writer adds a sidecar.
    deployments
        .patch(
            "web",
            &Patch::StrategicMerge(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "sidecar", "image": "proxy:1"}]}}}})),
            &PatchOptions::default().field_manager("injector"),
        )
        .await
        .unwrap();
    let d = deployments
        .patch("web", &config("app:2"), &opts)
        .await
        .unwrap();
    let mut containers: Vec<String> = to_json(&d)["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}={}",
                c["name"].as_str().unwrap(),
                c["image"].as_str().unwrap()
            )
        })
        .collect();
    containers.sort();
    assert_eq!(
        containers,
        ["app=app:2", "sidecar=proxy:1"],
        "the applier's container changed, the sidecar stayed"
    );
    let managers: Vec<String> = to_json(&d)["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["manager"].as_str().unwrap(),
                e["operation"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(managers, ["deployer Apply", "injector Update"]);
    assert_eq!(d.generation(), 3);
}

#[tokio::test]
async fn a_continue_token_of_a_forgotten_list_is_expired() {
    let fake = Fake::new();
    let cms = Clientset::new(fake.client())
        .core_v1()
        .config_maps("default");
    for name in ["a", "b"] {
        cms.create(&configmap(name, json!({})), &CreateOptions::default())
            .await
            .unwrap();
    }
    let first = cms.list(&ListOptions::default().limit(1)).await.unwrap();
    let token = first.continue_token().expect("a second page").to_string();
    // The tracker remembers the last 256 unfinished lists.
    for _ in 0..256 {
        cms.list(&ListOptions::default().limit(1)).await.unwrap();
    }
    let err = cms
        .list(&ListOptions::default().limit(1).continue_token(token))
        .await
        .unwrap_err();
    assert!(err.is_resource_expired(), "{err}");
}

/// An eviction of a Running, Ready Pod asks the PodDisruptionBudget selecting it, by the
/// status a test wrote (no disruption controller runs in the fake), and spends the
/// disruption.
#[tokio::test]
async fn evictions_respect_disruption_budgets_by_their_status() {
    let fake = Fake::new();
    let client = fake.client();
    fake.tracker()
        .add_yaml(
            "
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {nodeName: node-1, containers: [{name: app, image: app:1}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
",
        )
        .unwrap();
    let pods = "/api/v1/namespaces/default/pods";
    let pdb = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web";
    let status = |path: String, body: serde_json::Value| {
        let client = client.clone();
        async move {
            client
                .patch(PatchType::Merge)
                .abs_path(&format!("{path}/status"))
                .json(&body)
                .send::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    // Ready: an unready Pod would go without a disruption while the budget is healthy.
    status(
        format!("{pods}/web-1"),
        json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    let evict = || {
        client
            .post()
            .abs_path(&format!("{pods}/web-1/eviction"))
            .json(&json!({"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": "web-1"}}))
            .max_retries(0)
            .send::<serde_json::Value>()
    };
    // Not yet observed by a disruption controller: refused.
    let err = evict().await.unwrap_err();
    assert_eq!(err.code(), Some(429), "{err}");
    status(
        pdb.to_string(),
        json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}),
    )
    .await;
    let err = evict().await.unwrap_err();
    assert_eq!(err.code(), Some(429), "{err}");
    status(
        pdb.to_string(),
        json!({"status": {"disruptionsAllowed": 1, "currentHealthy": 2, "expectedPods": 2}}),
    )
    .await;
    let done = evict().await.unwrap();
    assert_eq!(done["status"], "Success");
    let budget: serde_json::Value = client.get().abs_path(pdb).send().await.unwrap();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
    assert!(budget["status"]["disruptedPods"]["web-1"].is_string());
    // On a node, the Pod is terminating, told why.
    let pod: serde_json::Value = client
        .get()
        .abs_path(&format!("{pods}/web-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30);
    let conditions = pod["status"]["conditions"].as_array().unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "DisruptionTarget" && c["reason"] == "EvictionByEvictionAPI"),
        "{pod}"
    );
    let actions = fake.actions_matching("create", "pods/eviction");
    assert_eq!(actions.len(), 3);
}

/// A budget whose status counts a negative number of disruptions forbids an eviction (403),
/// as the eviction registry does, rather than asking to retry. (The server's validation of
/// a `policy/v1` status refuses a negative count, so the differential cases cannot reach
/// this; the fake's does not refuse it.)
#[tokio::test]
async fn a_budget_with_negative_disruptions_forbids_evictions() {
    let fake = Fake::new();
    fake.tracker()
        .add_yaml(
            "
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {nodeName: node-1, containers: [{name: app, image: app:1}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
",
        )
        .unwrap();
    // Seeded as created, so without status: written as a kubelet and a disruption
    // controller gone wrong would.
    for (path, status) in [
        (
            "/api/v1/namespaces/default/pods/web-1/status",
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}),
        ),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web/status",
            json!({"observedGeneration": 1, "disruptionsAllowed": -1, "currentHealthy": 1,
                "desiredHealthy": 1, "expectedPods": 1}),
        ),
    ] {
        let _: serde_json::Value = fake
            .client()
            .patch(PatchType::Merge)
            .abs_path(path)
            .json(&json!({ "status": status }))
            .send()
            .await
            .unwrap();
    }
    let err = fake
        .client()
        .post()
        .abs_path("/api/v1/namespaces/default/pods/web-1/eviction")
        .json(&json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": "web-1"}}))
        .max_retries(0)
        .send::<serde_json::Value>()
        .await
        .unwrap_err();
    assert!(err.is_forbidden(), "{err}");
    assert_eq!(
        err.to_string(),
        "poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative"
    );
}

/// The clientset's `policy_v1().evictions(ns)` (client-go's `PolicyV1().Evictions(ns)`) runs
/// over the fake as over the server: the pod the eviction names goes, recorded as a create of
/// `pods/eviction`, and a pod a budget protects stays (429).
#[tokio::test]
async fn the_eviction_client_evicts_over_the_fake() {
    use kclient_api::policy::v1::Eviction;
    let fake = Fake::new();
    fake.tracker()
        .add_yaml(
            "
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default}
spec: {containers: [{name: app, image: app:1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: default, labels: {app: db}}
spec: {nodeName: node-1, containers: [{name: app, image: app:1}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
",
        )
        .unwrap();
    let cs = Clientset::new(fake.client());
    // Seeded as created, so without status: written as a kubelet and the disruption
    // controller would.
    cs.core_v1()
        .pods("default")
        .patch_status(
            "db-0",
            &Patch::Merge(json!({"status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    cs.policy_v1()
        .pod_disruption_budgets("default")
        .patch_status(
            "db",
            &Patch::Merge(
                json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0,
                "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}),
            ),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    let evictions = cs.policy_v1().evictions("default");
    let mut eviction = Eviction::default();
    eviction.set_name("web-0");
    evictions.evict(&eviction).await.unwrap();
    let err = cs
        .core_v1()
        .pods("default")
        .get("web-0", &GetOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");

    eviction.set_name("db-0");
    let err = evictions.evict(&eviction).await.unwrap_err();
    assert_eq!(err.code(), Some(429), "{err}");
    cs.core_v1()
        .pods("default")
        .get("db-0", &GetOptions::default())
        .await
        .unwrap();
    let actions = fake.actions_matching("create", "pods/eviction");
    assert_eq!(actions.len(), 2);
}

/// client-go's `Events(ns).Search(objOrRef)` over the fake: the events about an object, by
/// the `involvedObject` field selector the server serves.
#[tokio::test]
async fn events_are_searched_over_the_fake() {
    use kclient_api::core::v1::{Event, ObjectReference};
    let fake = Fake::new();
    fake.tracker()
        .add_yaml(
            "
apiVersion: v1
kind: Event
metadata: {name: about-web, namespace: default}
involvedObject: {kind: Pod, name: web, namespace: default, uid: u-1}
---
apiVersion: v1
kind: Event
metadata: {name: about-db, namespace: default}
involvedObject: {kind: Pod, name: db, namespace: default}
---
apiVersion: v1
kind: Event
metadata: {name: about-node, namespace: default}
involvedObject: {kind: Node, name: web}
",
        )
        .unwrap();
    let cs = Clientset::new(fake.client());
    let names = |list: kclient_apimachinery::ObjectList<Event>| -> Vec<String> {
        list.items.iter().map(|e| e.name().to_string()).collect()
    };
    let web = ObjectReference {
        kind: Some("Pod".into()),
        name: Some("web".into()),
        namespace: Some("default".into()),
        uid: Some("u-1".into()),
        ..Default::default()
    };
    let found = cs.core_v1().events("default").search(web).await.unwrap();
    assert_eq!(names(found), ["about-web"]);
    let node = ObjectReference {
        kind: Some("Node".into()),
        name: Some("web".into()),
        ..Default::default()
    };
    let found = Api::<Event>::all(fake.client()).search(node).await.unwrap();
    assert_eq!(names(found), ["about-node"]);
}

/// The fake answers discovery's first request, for aggregated discovery, in that format,
/// which kclient's discovery decodes into the same groups and resources.
#[tokio::test]
async fn discovery_is_served_aggregated_when_asked() {
    use kclient_rest::RoundTripper as _;
    let fake = Fake::new();
    let request = http::Request::get("https://kclient-fake.invalid/apis")
        .header(http::header::ACCEPT, kclient_discovery::ACCEPT_AGGREGATED)
        .body(bytes::Bytes::new())
        .unwrap();
    let response = fake.round_trip(request).await.unwrap();
    let content_type = response.headers()[http::header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        kclient_discovery::is_aggregated_content_type(&content_type),
        "{content_type}"
    );
    let mut body = Vec::new();
    let mut stream = response.into_body();
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk.unwrap());
    }
    let list: kclient_discovery::APIGroupDiscoveryList = serde_json::from_slice(&body).unwrap();
    let split = kclient_discovery::split_groups_and_resources(list);
    assert!(split.failed.is_empty());
    let apps = split
        .resources
        .get(&kclient_apimachinery::GroupVersion::new("apps", "v1"))
        .expect("apps/v1");
    let names: Vec<&str> = apps.api_resources.iter().map(|r| r.name.as_str()).collect();
    assert!(
        names.contains(&"deployments") && names.contains(&"deployments/scale"),
        "{names:?}"
    );
    // The DiscoveryClient reads it as from a server.
    let discovery = DiscoveryClient::new(fake.client());
    let resources = discovery
        .server_resources_for_group_version("apps/v1")
        .await
        .unwrap();
    assert!(
        resources
            .api_resources
            .iter()
            .any(|r| r.name == "deployments")
    );
}

/// A watch from a resourceVersion the tracker has not reached waits for it, as the server's
/// watch cache does: the changes before it are not sent, the ones after it are.
#[tokio::test(start_paused = true)]
async fn a_watch_from_a_future_version_waits_for_it() {
    let fake = Fake::new();
    let client = fake.client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let future = fake.tracker().resource_version() + 2;
    let mut events = client
        .get()
        .abs_path(cms)
        .param("resourceVersion", future.to_string())
        .param("allowWatchBookmarks", "true")
        .watch::<serde_json::Value>()
        .await
        .unwrap();
    for name in ["a", "b", "c"] {
        let _: serde_json::Value = client
            .post()
            .abs_path(cms)
            .json(&json!({"metadata": {"name": name}}))
            .send()
            .await
            .unwrap();
    }
    fake.tracker().send_bookmarks();
    let first = events.next().await.unwrap().unwrap();
    match first {
        WatchEvent::Added(obj) => assert_eq!(obj["metadata"]["name"], "c"),
        other => panic!("the first event is c's ADDED, not {other:?}"),
    }
    let second = events.next().await.unwrap().unwrap();
    assert_eq!(
        second.event_type(),
        kclient_apimachinery::WatchEventType::Bookmark
    );
}

/// The subresources kube-apiserver serves that the fake does not (ephemeral containers,
/// resize, CSR approval, namespace finalize, proxy) answer with an error that says so, not a
/// NotFound a caller would read as "the object is gone", nor a success.
#[tokio::test]
async fn unserved_subresources_say_the_fake_does_not_serve_them() {
    use kclient_api::certificates::v1::CertificateSigningRequest;
    use kclient_api::core::v1::{Namespace, Pod};
    use kclient_apimachinery::{CreateOptions, Object as _, UpdateOptions};

    let fake = Fake::new();
    let cs = Clientset::new(fake.client());
    let pods = cs.core_v1().pods("default");
    let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
    .unwrap();
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    let check = |err: kclient_apimachinery::Error, path: &str| {
        assert!(!err.is_not_found(), "{path}: {err}");
        assert!(err.is_method_not_supported(), "{path}: {err:?}");
        assert!(
            err.to_string().contains(path) && err.to_string().contains("reactor"),
            "{path}: {err}"
        );
    };
    let opts = UpdateOptions::default();
    check(
        pods.update_ephemeral_containers("p", &pod, &opts)
            .await
            .unwrap_err(),
        "pods/ephemeralcontainers",
    );
    check(
        pods.update_resize("p", &pod, &opts).await.unwrap_err(),
        "pods/resize",
    );
    let err = pods
        .proxy_get("", "p", "80", "/", &[])
        .unwrap()
        .bytes()
        .await
        .unwrap_err();
    check(err, "pods/proxy");

    let mut ns = Namespace::default();
    ns.set_name("default");
    let namespaces = cs.core_v1().namespaces();
    namespaces.create(&ns, &CreateOptions::default()).await.ok();
    check(
        namespaces.finalize(&ns, &opts).await.unwrap_err(),
        "namespaces/finalize",
    );

    let csrs = cs.certificates_v1().certificate_signing_requests();
    let csr: CertificateSigningRequest = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "c"},
        "spec": {"request": "aGk=", "signerName": "kclient.test/signer"}}))
    .unwrap();
    csrs.create(&csr, &CreateOptions::default()).await.unwrap();
    check(
        csrs.update_approval("c", &csr, &opts).await.unwrap_err(),
        "certificatesigningrequests/approval",
    );
}

/// Deleting a Namespace that a finalizer or a propagation policy holds deletes its content at
/// once too (the namespace controller's work), and the namespace stays Terminating while a
/// finalizer holds it.
#[tokio::test]
async fn a_namespace_held_by_a_finalizer_still_loses_its_content() {
    let client = Fake::new().client();
    for (ns, finalizers, policy) in [
        ("held", json!(["example.com/keep"]), None),
        ("foreground", json!([]), Some("Foreground")),
        ("orphan", json!([]), Some("Orphan")),
    ] {
        let _: serde_json::Value = client
            .post()
            .abs_path("/api/v1/namespaces")
            .json(&json!({"metadata": {"name": ns, "finalizers": finalizers}}))
            .send()
            .await
            .unwrap();
        let _: serde_json::Value = client
            .post()
            .abs_path(&format!("/api/v1/namespaces/{ns}/configmaps"))
            .json(&json!({"metadata": {"name": "content"}}))
            .send()
            .await
            .unwrap();
        let mut options = json!({});
        if let Some(policy) = policy {
            options["propagationPolicy"] = json!(policy);
        }
        let _: serde_json::Value = client
            .delete()
            .abs_path(&format!("/api/v1/namespaces/{ns}"))
            .json(&options)
            .send()
            .await
            .unwrap();
        let content = client
            .get()
            .abs_path(&format!("/api/v1/namespaces/{ns}/configmaps/content"))
            .send::<serde_json::Value>()
            .await;
        assert!(
            content.is_err_and(|e| e.is_not_found()),
            "{ns}: the content is deleted"
        );
        let namespace = client
            .get()
            .abs_path(&format!("/api/v1/namespaces/{ns}"))
            .send::<serde_json::Value>()
            .await;
        if ns == "held" {
            let namespace = namespace.expect("held by its finalizer");
            assert_eq!(namespace["status"]["phase"], "Terminating");
        } else {
            assert!(namespace.is_err_and(|e| e.is_not_found()), "{ns} is gone");
        }
    }
}

/// A status write whose conditions are not objects, over stored conditions that have no type,
/// is no panic (the server refuses it with 400; the fake stores built-ins as written,
/// difference 11, and may keep it).
#[tokio::test]
async fn a_pod_status_with_conditions_that_are_not_objects_is_no_panic() {
    let client = Fake::new().client();
    let _: serde_json::Value = client
        .post()
        .abs_path("/api/v1/namespaces")
        .json(&json!({"metadata": {"name": "ns"}}))
        .send()
        .await
        .unwrap();
    let _: serde_json::Value = client
        .post()
        .abs_path("/api/v1/namespaces/ns/pods")
        .json(&json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}}))
        .send()
        .await
        .unwrap();
    let _: serde_json::Value = client
        .patch(PatchType::Merge)
        .abs_path("/api/v1/namespaces/ns/pods/p/status")
        .json(&json!({"status": {"conditions": [{"status": "True", "observedGeneration": 2}]}}))
        .send()
        .await
        .unwrap();
    let written = client
        .patch(PatchType::Merge)
        .abs_path("/api/v1/namespaces/ns/pods/p/status")
        .json(&json!({"status": {"conditions": ["x"]}}))
        .send::<serde_json::Value>()
        .await;
    // Stored as written (the fake keeps built-ins as JSON) or refused: either way, no panic.
    if let Err(e) = written {
        assert!(e.code().is_some_and(|c| (400..500).contains(&c)), "{e}");
    }
}
