//! `SharedInformerFactory::with_transform` against the real kube-apiserver: the factory's
//! transform reaches every informer it makes (typed, dynamic, metadata, and one a caller's
//! constructor makes), for listed and for watched objects, before handlers see them. The
//! transform here drops `managedFields`, which the server writes on every create.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, PodTemplate};
use kclient_apimachinery::{ApiResource, Object, Unstructured};
use kclient_cache::{ResourceEventHandlerFuncs, SharedIndexInformer};
use kclient_informers::{RestListWatch, SharedInformerFactory};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use parking_lot::Mutex;
use serde_json::json;

async fn create(client: &Client, ns: &str, resource: &str, name: &str) {
    let body = match resource {
        "podtemplates" => json!({"metadata": {"name": name}, "template": {"spec": {
            "containers": [{"name": "c", "image": "busybox"}]}}}),
        _ => json!({"metadata": {"name": name}, "data": {"v": "x"}}),
    };
    crate::create_core(client, ns, resource, body).await;
}

fn unstructured_has_managed_fields(o: &Unstructured) -> bool {
    o.metadata()
        .is_some_and(|m| m.contains_key("managedFields"))
}

/// The names of `informer`'s cached objects for which `managed` says the object still has
/// managed fields, and of all it caches.
fn cached<K: Object>(
    informer: &SharedIndexInformer<K>,
    managed: impl Fn(&K) -> bool,
) -> (Vec<String>, Vec<String>) {
    let mut all = Vec::new();
    let mut with_managed = Vec::new();
    for o in informer.get_store().list() {
        if o.name() == "kube-root-ca.crt" {
            continue;
        }
        all.push(o.name().to_owned());
        if managed(&o) {
            with_managed.push(o.name().to_owned());
        }
    }
    all.sort();
    with_managed.sort();
    (with_managed, all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_factory_transform_reaches_every_informer_it_makes_for_listed_and_watched_objects() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    create(&client, ns.name(), "configmaps", "listed").await;
    create(&client, ns.name(), "podtemplates", "listed").await;

    // The server does write managed fields: an informer without the transform keeps them.
    let plain =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let untransformed = plain.informer::<ConfigMap>();
    plain.start();
    assert!(plain.wait_for_cache_sync_all().await);
    assert_eq!(
        cached(&untransformed, |cm| cm.metadata.managed_fields.is_some()),
        (vec!["listed".to_owned()], vec!["listed".to_owned()]),
        "without a transform the cache keeps what the server sent"
    );
    plain.shutdown().await;

    let calls = Arc::new(Mutex::new(0usize));
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
        .with_namespace(ns.name())
        .with_transform({
            let calls = Arc::clone(&calls);
            move |object| {
                *calls.lock() += 1;
                object.clear_managed_fields();
            }
        });
    let typed = factory.informer::<ConfigMap>();
    let dynamic = factory.dynamic_informer(&ApiResource::of::<ConfigMap>());
    let metadata = factory.metadata_informer(&ApiResource::of::<ConfigMap>());
    let namespace = ns.name().to_owned();
    let constructed = factory.informer_for::<PodTemplate>(|client, resync| {
        let lw = RestListWatch::<PodTemplate>::for_resource(client.clone(), Some(&namespace));
        SharedIndexInformer::new(Arc::new(lw), resync, Default::default())
    });
    // What the typed informer's handler receives, listed or watched.
    let delivered: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    typed
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func({
            let delivered = Arc::clone(&delivered);
            move |cm: &Arc<ConfigMap>, _| {
                delivered
                    .lock()
                    .push((cm.name().to_owned(), cm.metadata.managed_fields.is_some()));
            }
        }))
        .expect("add a handler");
    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);

    // Watched objects go through it too.
    create(&client, ns.name(), "configmaps", "watched").await;
    create(&client, ns.name(), "podtemplates", "watched").await;
    let both = vec!["listed".to_owned(), "watched".to_owned()];
    let caches = || {
        (
            cached(&typed, |cm| cm.metadata.managed_fields.is_some()),
            cached(&dynamic, unstructured_has_managed_fields),
            cached(&metadata, |m| m.metadata.managed_fields.is_some()),
            cached(&constructed, |t| t.metadata.managed_fields.is_some()),
        )
    };
    let want = (
        (vec![], both.clone()),
        (vec![], both.clone()),
        (vec![], both.clone()),
        (vec![], both.clone()),
    );
    let converged = tokio::time::timeout(Duration::from_secs(30), async {
        while caches() != want {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        converged.is_ok(),
        "every cache holds both objects, none with managed fields: {:?}",
        caches()
    );
    let mut delivered = delivered.lock().clone();
    delivered.retain(|(name, _)| name != "kube-root-ca.crt");
    delivered.sort();
    assert_eq!(
        delivered,
        [("listed".to_owned(), false), ("watched".to_owned(), false)],
        "the handler saw the transformed objects"
    );
    // Once per object and informer (the namespace's kube-root-ca.crt included).
    assert!(
        *calls.lock() >= 8,
        "the transform ran {} times",
        calls.lock()
    );
    factory.shutdown().await;
}
