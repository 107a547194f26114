//! An informer started before its CustomResourceDefinition exists, and client-go's
//! `NewListWatchFromClient` with a typed resource, against the real apiserver.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{ApiResource, GroupVersionKind, Object, Unstructured};
use kclient_cache::{CancellationToken, SharedIndexInformer};
use kclient_informers::{RestListWatch, new_list_watch_from_client};
use kclient_testenv::{Identity, TestEnv};
use parking_lot::Mutex;
use serde_json::{Value, json};

const GROUP: &str = "later.kclient.test";

/// The CRD's manifest: a namespaced `Later` kind with a free-form spec.
fn crd(plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": format!("{plural}-one"), "kind": "Later", "listKind": "LaterList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}
            }]
        }
    })
}

/// A dynamic informer on a resource whose CRD is created only after the informer starts:
/// its lists fail (404, reported to the watch-error handler, retried through the backoff)
/// until the CRD is served, then it syncs and follows the new resource.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_started_before_its_crd_exists_syncs_once_the_crd_is_created() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let plural = format!("laters{}", ns.name().replace('-', ""));
    let resource = ApiResource::new(&GroupVersionKind::new(GROUP, "v1", "Later"), &plural, true);

    let informer = SharedIndexInformer::<Unstructured>::new(
        Arc::new(RestListWatch::dynamic(
            client.clone(),
            resource,
            Some(ns.name()),
        )),
        Duration::ZERO,
        Default::default(),
    );
    let errors: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let seen = errors.clone();
    informer
        .set_watch_error_handler(move |_, e| seen.lock().push((e.to_string(), e.is_not_found())))
        .unwrap();
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });

    // The resource does not exist yet: the informer cannot sync, and says why.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !errors.lock().iter().any(|(_, not_found)| *not_found) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no NotFound reached the watch-error handler within 30 s: {:?}",
            errors.lock()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!informer.has_synced());

    let _: Value = client
        .post()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .json(&crd(&plural))
        .send()
        .await
        .expect("create the CRD");
    // An object of the new kind, created as soon as the resource is served.
    let object = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Later", "metadata": {"name": "first"}, "spec": {"n": 1}});
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let created: Result<Value, _> = client
            .post()
            .group_version(GROUP, "v1")
            .namespace(ns.name())
            .resource(&plural)
            .json(&object)
            .send()
            .await;
        match created {
            Ok(_) => break,
            Err(e) if tokio::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("the new resource was not served within 30 s: {e}"),
        }
    }
    // The informer's retries are spaced by its backoff (up to 30-60 s in steady failure), so
    // allow that long for it to notice.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(70);
    while !(informer.has_synced()
        && informer
            .get_store()
            .list()
            .iter()
            .any(|o| o.name() == "first"))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the informer did not sync after the CRD was created; errors {:?}",
            errors.lock()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cancel.cancel();
    run.await.expect("informer task");
    let _: Result<Value, _> = client
        .delete()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .name(&format!("{plural}.{GROUP}"))
        .send()
        .await;
}

/// client-go's `NewListWatchFromClient(client, "configmaps", ns, fields.OneTermEqualSelector(...))`
/// with a typed resource: only the selected object is cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_list_watch_from_client_lists_and_watches_what_its_field_selector_selects() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    for name in ["keep", "other"] {
        let _: Value = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .json(&json!({"metadata": {"name": name}, "data": {"v": "1"}}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
    }
    let lw = new_list_watch_from_client::<ConfigMap>(
        client.clone(),
        Some(ns.name()),
        "metadata.name=keep",
    );
    let informer = SharedIndexInformer::new(Arc::new(lw), Duration::ZERO, Default::default());
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    let names = || {
        let mut names: Vec<String> = informer
            .get_store()
            .list()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        names.sort();
        names
    };
    tokio::time::timeout(Duration::from_secs(30), async {
        while !informer.has_synced() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("synced");
    assert_eq!(names(), ["keep"]);
    // A change to the selected object arrives through the watch; the other's does not.
    for name in ["keep", "other"] {
        let _: Value = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .name(name)
            .json(&json!({"data": {"v": "2"}}))
            .send()
            .await
            .expect("patch");
    }
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let keep = informer
                .get_store()
                .get_by_key(&format!("{}/keep", ns.name()));
            if keep.is_some_and(|c| {
                c.data.as_ref().and_then(|d| d.get("v")).map(|v| v.as_str()) == Some("2")
            }) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the selected object's change arrived");
    assert_eq!(names(), ["keep"]);
    cancel.cancel();
    run.await.expect("informer task");
}
