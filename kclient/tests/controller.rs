//! The facade end to end against testenv's kube-apiserver: a controller's pieces imported
//! only through `kclient::prelude` (clientset, informer factory, lister, event handlers,
//! rate-limited workqueue, key functions) see a ConfigMap created and then deleted.

use std::sync::Arc;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::prelude::*;
use kclient_testenv::{Identity, TestEnv};

/// Waits for the next key, failing instead of hanging if none comes.
async fn next_key(queue: &RateLimitingQueue<String>) -> String {
    tokio::time::timeout(Duration::from_secs(60), queue.get())
        .await
        .expect("no key reached the workqueue within 60 s")
        .expect("the workqueue shut down")
}

// Multi-threaded: the test namespace is deleted in Drop, which blocks while the client sends
// the DELETE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_feeds_a_lister_and_a_workqueue_through_the_facade() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = Client::new(env.config(Identity::Admin)).expect("a client for testenv");
    let clientset = Clientset::new(client.clone());
    let config_maps: Api<ConfigMap> = clientset.core_v1().config_maps(ns.name());

    let mut cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    cm.data
        .get_or_insert_with(Default::default)
        .insert("mode", "fast".into());
    config_maps
        .create(&cm, &CreateOptions::default())
        .await
        .expect("creating the ConfigMap");

    let factory = SharedInformerFactory::new(client, Duration::ZERO).with_namespace(ns.name());
    let informer: SharedIndexInformer<ConfigMap> = factory.informer::<ConfigMap>();
    let lister: Lister<ConfigMap> = informer.lister();
    let queue = Arc::new(RateLimitingQueue::new(default_controller_rate_limiter::<
        String,
    >()));
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |cm: &Arc<ConfigMap>, _| on_add.add(meta_namespace_key(cm)))
                .update_func(move |_, cm: &Arc<ConfigMap>| on_update.add(meta_namespace_key(cm)))
                .delete_func(move |gone: DeletedObject<ConfigMap>| on_delete.add(gone.key())),
        )
        .expect("adding the handler before start");
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert!(
        !synced.is_empty() && synced.values().all(|s| *s),
        "not synced: {synced:?}"
    );

    // The initial list's add.
    let key = next_key(&queue).await;
    assert_eq!(key, format!("{}/settings", ns.name()));
    let (namespace, name) = split_meta_namespace_key(&key).expect("a namespace/name key");
    assert_eq!(namespace, Some(ns.name()));
    let cached = lister
        .namespace(ns.name())
        .get(name)
        .expect("the lister has the ConfigMap");
    assert_eq!(
        cached
            .data
            .as_ref()
            .and_then(|d| d.get("mode"))
            .map(|v| v.as_str()),
        Some("fast")
    );
    queue.forget(&key);
    queue.done(&key);

    // The delete: the handler runs after the cache has dropped the object.
    config_maps
        .delete("settings", &DeleteOptions::default())
        .await
        .expect("deleting the ConfigMap");
    let key = next_key(&queue).await;
    assert_eq!(key, format!("{}/settings", ns.name()));
    let err = lister
        .namespace(ns.name())
        .get("settings")
        .expect_err("the lister still has the deleted ConfigMap");
    assert!(err.is_not_found(), "{err}");
    queue.done(&key);

    queue.shut_down();
    factory.shutdown().await;
}
