//! Informers against the real kube-apiserver: the cache converges on the server's state under
//! load, survives a real `410 Gone`, and late handlers get every object exactly once.

mod for_resource;
mod other_kind;
#[cfg(feature = "protobuf")]
mod protobuf;
mod transform;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{
    ApiResource, GroupVersionKind, ListOptions, Object, ObjectList, Unstructured,
};
use kclient_cache::{
    CancellationToken, ListWatch, ListerWatcher, ResourceEventHandlerFuncs, SharedIndexInformer,
};
use kclient_informers::{RestListWatch, SharedInformerFactory};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use parking_lot::Mutex;
use serde_json::{Value, json};

mod crd_and_client;
mod deep;

fn configmaps() -> ApiResource {
    ApiResource::new(
        &GroupVersionKind::new("", "v1", "ConfigMap"),
        "configmaps",
        true,
    )
}

async fn create(client: &Client, ns: &str, name: &str, value: &str) {
    let body = json!({"metadata": {"name": name}, "data": {"v": value}});
    create_core(client, ns, "configmaps", body).await;
}

/// Creates `body`, an object of the core (`v1`) `resource`, in `ns`; panics naming the
/// resource on an error.
async fn create_core(client: &Client, ns: &str, resource: &str, body: Value) {
    let _: Value = client
        .post()
        .group_version("", "v1")
        .namespace(ns)
        .resource(resource)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("creating {resource}: {e}"));
}

/// The server's view: name -> (resourceVersion, data.v), from a fresh LIST.
async fn server_state(client: &Client, ns: &str) -> BTreeMap<String, (String, String)> {
    let list: ObjectList<Unstructured> = client
        .get()
        .group_version("", "v1")
        .namespace(ns)
        .resource("configmaps")
        .send()
        .await
        .expect("list");
    list.items.iter().map(summary).collect()
}

fn summary(cm: &Unstructured) -> (String, (String, String)) {
    let v = cm
        .nested_string(&["data", "v"])
        .ok()
        .flatten()
        .unwrap_or_default()
        .to_string();
    (
        cm.name().to_string(),
        (cm.resource_version().to_string(), v),
    )
}

fn cache_state(informer: &SharedIndexInformer<Unstructured>) -> BTreeMap<String, (String, String)> {
    informer
        .get_store()
        .list()
        .iter()
        .filter(|o| o.name() != "kube-root-ca.crt")
        .map(|o| summary(o))
        .collect()
}

/// Polls until the cache equals a fresh LIST, for up to 30 s.
async fn assert_converges(client: &Client, ns: &str, informer: &SharedIndexInformer<Unstructured>) {
    let mut last = (BTreeMap::new(), BTreeMap::new());
    for _ in 0..150 {
        let server: BTreeMap<_, _> = server_state(client, ns)
            .await
            .into_iter()
            .filter(|(name, _)| name != "kube-root-ca.crt")
            .collect();
        let cached = cache_state(informer);
        if server == cached {
            return;
        }
        last = (server, cached);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!(
        "cache did not converge: server has {} objects, cache {}; first difference: {:?}",
        last.0.len(),
        last.1.len(),
        last.0.iter().find(|(k, v)| last.1.get(*k) != Some(v))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_matches_a_fresh_list_under_1000_creates_updates_deletes() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let informer = SharedIndexInformer::new(
        Arc::new(RestListWatch::dynamic(
            client.clone(),
            configmaps(),
            Some(ns.name()),
        )),
        Duration::ZERO,
        Default::default(),
    );
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move { informer.run(cancel).await }
    });
    informer.get_store(); // the cache exists before sync; it is simply empty
    assert!(
        tokio::time::timeout(Duration::from_secs(30), async {
            while !informer.has_synced() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .is_ok(),
        "informer did not sync"
    );

    // 1,000 objects: create all, update every second one, delete every third one, with 8
    // writers at a time.
    let names: Vec<String> = (0..1000).map(|i| format!("cm-{i:04}")).collect();
    let ns_name = ns.name().to_string();
    futures_util::stream::iter(names.clone())
        .for_each_concurrent(8, |name| {
            let client = client.clone();
            let ns = ns_name.clone();
            async move { create(&client, &ns, &name, "created").await }
        })
        .await;
    futures_util::stream::iter(names.iter().enumerate().filter(|(i, _)| i % 2 == 0))
        .for_each_concurrent(8, |(_, name)| {
            let client = client.clone();
            let ns = ns_name.clone();
            async move {
                let _: Value = client
                    .patch(kclient_apimachinery::PatchType::Merge)
                    .group_version("", "v1")
                    .namespace(&ns)
                    .resource("configmaps")
                    .name(name)
                    .json(&json!({"data": {"v": "updated"}}))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("update {name}: {e}"));
            }
        })
        .await;
    futures_util::stream::iter(names.iter().enumerate().filter(|(i, _)| i % 3 == 0))
        .for_each_concurrent(8, |(_, name)| {
            let client = client.clone();
            let ns = ns_name.clone();
            async move {
                let _: Value = client
                    .delete()
                    .group_version("", "v1")
                    .namespace(&ns)
                    .resource("configmaps")
                    .name(name)
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("delete {name}: {e}"));
            }
        })
        .await;

    assert_converges(&client, ns.name(), &informer).await;
    let cached = cache_state(&informer);
    assert_eq!(cached.len(), 1000 - 334, "every third of 1,000 deleted");
    assert_eq!(cached["cm-0002"].1, "updated");
    assert_eq!(cached["cm-0001"].1, "created");
    assert!(!cached.contains_key("cm-0003"));
    cancel.cancel();
    run.await.expect("informer task");
}

/// Sends the first watch after the initial list from resourceVersion "1", which the real
/// apiserver no longer has once the test compacted etcd: it answers `410 Gone` (too old
/// resource version). Everything else is passed through untouched.
struct StaleFirstWatch {
    inner: RestListWatch<Unstructured>,
    watches: Mutex<u32>,
    saw_relist: Mutex<u32>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_relists_after_a_real_410_and_converges() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for i in 0..20 {
        create(&client, ns.name(), &format!("before-{i}"), "x").await;
    }
    // The first watch asks for resourceVersion "1": testenv starts etcd past it, so it is older
    // than the watch cache's window and the server answers 410.
    let lw = Arc::new(StaleFirstWatch {
        inner: RestListWatch::dynamic(client.clone(), configmaps(), Some(ns.name())),
        watches: Mutex::new(0),
        saw_relist: Mutex::new(0),
    });
    let list_lw = Arc::clone(&lw);
    let watch_lw = Arc::clone(&lw);
    let wrapped = ListWatch::new(
        move |opts: ListOptions| {
            let lw = Arc::clone(&list_lw);
            async move {
                *lw.saw_relist.lock() += 1;
                lw.inner.list(opts).await
            }
        },
        move |mut opts: ListOptions| {
            let lw = Arc::clone(&watch_lw);
            async move {
                let first = {
                    let mut n = lw.watches.lock();
                    *n += 1;
                    *n == 1
                };
                if first {
                    opts.resource_version = Some("1".into());
                }
                lw.inner.watch(opts).await
            }
        },
    )
    .without_watch_list_semantics();
    let informer = SharedIndexInformer::new(Arc::new(wrapped), Duration::ZERO, Default::default());
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move { informer.run(cancel).await }
    });
    for i in 0..20 {
        create(&client, ns.name(), &format!("after-{i}"), "y").await;
    }
    assert_converges(&client, ns.name(), &informer).await;
    assert_eq!(cache_state(&informer).len(), 40);
    assert!(
        *lw.watches.lock() >= 2,
        "the 410 watch was followed by another watch"
    );
    assert!(
        *lw.saw_relist.lock() >= 2,
        "the 410 made the reflector list again"
    );
    cancel.cancel();
    run.await.expect("informer task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_added_after_sync_receives_every_object_once() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for i in 0..50 {
        create(&client, ns.name(), &format!("late-{i:02}"), "x").await;
    }
    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let informer = factory.dynamic_informer(&configmaps());
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert_eq!(synced.values().filter(|s| **s).count(), 1, "{synced:?}");

    let adds: Arc<Mutex<HashMap<String, (u32, bool)>>> = Arc::default();
    let seen = Arc::clone(&adds);
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |obj: &Arc<Unstructured>, initial| {
                let mut seen = seen.lock();
                let entry = seen.entry(obj.name().to_string()).or_insert((0, initial));
                entry.0 += 1;
            },
        ))
        .expect("add handler");
    tokio::time::timeout(Duration::from_secs(10), registration.wait_for_sync())
        .await
        .expect("the registration syncs");
    let adds = adds.lock().clone();
    let ours: Vec<_> = adds
        .iter()
        .filter(|(name, _)| name.starts_with("late-"))
        .collect();
    assert_eq!(ours.len(), 50);
    for (name, (count, initial)) in ours {
        assert_eq!(*count, 1, "{name} delivered {count} times");
        assert!(
            *initial,
            "{name} should be marked as part of the initial list"
        );
    }
    // The same informer is shared: asking again returns it, with its cache already full.
    assert!(factory.dynamic_informer(&configmaps()).has_synced());
    factory.shutdown().await;
    assert!(informer.is_stopped());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tweaks_and_field_selectors_restrict_what_is_cached() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for (name, team) in [("blue-1", "blue"), ("blue-2", "blue"), ("red-1", "red")] {
        let _: Value = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .json(&json!({"metadata": {"name": name, "labels": {"team": team}}}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
    }
    let names = |informer: &SharedIndexInformer<Unstructured>| {
        let mut names: Vec<String> = informer
            .get_store()
            .list()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        names.sort();
        names
    };

    // A factory-wide tweak (client-go's WithTweakListOptions) adds a label selector.
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
        .with_namespace(ns.name())
        .with_tweak_list_options(|opts| opts.label_selector = Some("team=blue".into()));
    let informer = factory.dynamic_informer(&configmaps());
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    assert_eq!(names(&informer), ["blue-1", "blue-2"]);
    factory.shutdown().await;

    // client-go's NewListWatchFromClient shape: a field selector on metadata.name.
    let lw = RestListWatch::dynamic(client.clone(), configmaps(), Some(ns.name()))
        .with_tweak_list_options(|opts| opts.field_selector = Some("metadata.name=red-1".into()));
    let informer = SharedIndexInformer::new(Arc::new(lw), Duration::ZERO, Default::default());
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    tokio::time::timeout(Duration::from_secs(30), async {
        while !informer.has_synced() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("informer synced");
    assert_eq!(names(&informer), ["red-1"]);
    cancel.cancel();
    run.await.expect("informer task");
}

/// `metadata_lister_watcher` lists and watches as the factory's metadata informer would: in the
/// factory's namespace, with its list options, metadata only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_lister_watcher_applies_the_factory_namespace_and_tweak() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let other = env.namespace().await;
    let client = env.client(Identity::Admin);
    for (namespace, name) in [
        (ns.name(), "picked"),
        (ns.name(), "left"),
        (other.name(), "picked"),
    ] {
        create(&client, namespace, name, "value").await;
    }
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
        .with_namespace(ns.name())
        .with_tweak_list_options(|o| o.field_selector = Some("metadata.name=picked".into()));
    let lw = factory.metadata_lister_watcher(&configmaps());
    let list = lw.list(ListOptions::default()).await.expect("list");
    let got: Vec<_> = list
        .items
        .iter()
        .map(|m| {
            (
                m.metadata
                    .namespace
                    .as_deref()
                    .unwrap_or_default()
                    .to_owned(),
                m.metadata.name.as_deref().unwrap_or_default().to_owned(),
                m.kind.as_deref().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [(
            ns.name().to_owned(),
            "picked".to_owned(),
            "PartialObjectMetadata".to_owned()
        )]
    );
    // No informer was made for it.
    assert!(
        !format!("{factory:?}").contains("configmaps"),
        "{factory:?}"
    );
}

/// A metadata informer caches only metadata (the server strips `data`), stays equal to the
/// server under writes, and holds far fewer bytes than a full informer of the same objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_informer_caches_only_metadata_and_follows_changes() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let big = "x".repeat(5_000);
    futures_util::stream::iter(0..40)
        .for_each_concurrent(8, |i| {
            let (client, ns, big) = (&client, ns.name(), &big);
            async move { create(client, ns, &format!("cm-{i:02}"), big).await }
        })
        .await;
    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let metadata = factory.metadata_informer(&configmaps());
    let full = factory.dynamic_informer(&configmaps());
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));

    let cached = metadata.get_store().list();
    assert_eq!(cached.len(), 40);
    for pom in &cached {
        assert_eq!(
            pom.kind.as_deref(),
            Some("PartialObjectMetadata"),
            "{pom:?}"
        );
        assert!(!pom.metadata.uid.as_deref().unwrap_or_default().is_empty());
    }
    // What each cache holds, as JSON: the full objects carry the 5 kB values, the metadata
    // does not.
    let bytes = |v: Vec<Vec<u8>>| v.iter().map(Vec::len).sum::<usize>();
    let metadata_bytes = bytes(
        cached
            .iter()
            .map(|o| serde_json::to_vec(&**o).unwrap())
            .collect(),
    );
    let full_bytes = bytes(
        full.get_store()
            .list()
            .iter()
            .map(|o| serde_json::to_vec(&**o).unwrap())
            .collect(),
    );
    assert!(
        metadata_bytes * 10 < full_bytes,
        "metadata {metadata_bytes} bytes, full {full_bytes}"
    );

    // Changes arrive as metadata too: a label added, an object deleted, one created.
    let _: Value = client
        .patch(kclient_apimachinery::PatchType::Merge)
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .name("cm-00")
        .json(&json!({"metadata": {"labels": {"seen": "yes"}}}))
        .send()
        .await
        .expect("patch");
    let _: Value = client
        .delete()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .name("cm-01")
        .send()
        .await
        .expect("delete");
    create(&client, ns.name(), "late", "v").await;
    let want: BTreeMap<String, String> = server_state(&client, ns.name())
        .await
        .into_iter()
        .map(|(name, (rv, _))| (name, rv))
        .collect();
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let got: BTreeMap<String, String> = metadata
                .get_store()
                .list()
                .iter()
                .map(|o| (o.name().to_string(), o.resource_version().to_string()))
                .collect();
            if got == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the metadata cache converged on the server's state");
    let labelled = metadata
        .get_store()
        .get_by_key(&format!("{}/cm-00", ns.name()))
        .expect("cm-00 cached");
    assert_eq!(labelled.labels().get("seen"), Some("yes"));
    factory.shutdown().await;
}

/// The server leaves `apiVersion` and `kind` out of the items of a built-in kind's list;
/// client-go's dynamic informer lists through the dynamic client, whose `UnstructuredList`
/// decoding gives each item the list's, so objects from the initial list carry them as
/// watched ones do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_list_items_carry_their_api_version_and_kind() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    create(&client, ns.name(), "listed", "x").await;

    let lw = RestListWatch::dynamic(client.clone(), configmaps(), Some(ns.name()));
    let list = lw.list(ListOptions::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].api_version(), "v1");
    assert_eq!(list.items[0].kind(), "ConfigMap");

    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let informer = factory.dynamic_informer(&configmaps());
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    let cached = informer.get_store().list();
    assert_eq!(cached.len(), 1);
    assert_eq!(cached[0].api_version(), "v1");
    assert_eq!(cached[0].kind(), "ConfigMap");
    factory.shutdown().await;
}

/// `for_resource` of a resource whose Rust type the factory does not know (an aggregated
/// API's, or a built-in one without the `registry` feature) makes a dynamic informer from the
/// bare GroupVersionResource, whose kind is unknown. client-go's dynamic informer gives list
/// items the list's `apiVersion` and kind (`ConfigMapList` items are `ConfigMap`s), so the
/// kind must come from the list, not from the resource.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_list_items_get_the_list_kind_when_the_resource_names_none() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    create(&client, ns.name(), "listed", "x").await;

    let gvr = kclient_apimachinery::GroupVersionResource::new("", "v1", "configmaps");
    let kindless = ApiResource::from_gvr(&gvr, "", true);
    let lw = RestListWatch::dynamic(client.clone(), kindless, Some(ns.name()));
    let list = lw.list(ListOptions::default()).await.expect("list");
    let listed = list
        .items
        .iter()
        .find(|o| o.name() == "listed")
        .expect("listed");
    assert_eq!(listed.api_version(), "v1");
    assert_eq!(listed.kind(), "ConfigMap");
}
