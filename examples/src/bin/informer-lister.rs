//! An informer and its lister: a ConfigMap informer from the SharedInformerFactory with a
//! custom index (by the `app` label), event handlers that print what changes, and lister
//! queries answered from the local cache instead of the API server.
//!
//! It creates a namespace `informer-demo` with a few labelled ConfigMaps, queries them
//! through the lister and the index, changes and deletes some to show the handler's events,
//! and deletes the namespace at the end.
//!
//! ```sh
//! KUBECONFIG=... cargo run -p kclient-examples --bin informer-lister
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use kclient::api::core::v1::{ConfigMap, Namespace};
use kclient::prelude::*;
use kclient_examples::outln;
use kclient_examples::wait_out_namespace_deletion;
use serde_json::json;

const NAMESPACE: &str = "informer-demo";
const BY_APP: &str = "by-app";

#[tokio::main]
async fn main() -> Result<(), kclient::Error> {
    let client = Client::try_default()?;
    let clientset = Clientset::new(client.clone());
    create_namespace(&clientset).await?;
    let config_maps = clientset.core_v1().config_maps(NAMESPACE);
    for (name, app, tier) in [
        ("web-settings", "web", "frontend"),
        ("web-routes", "web", "frontend"),
        ("db-settings", "db", "backend"),
        ("queue-settings", "queue", "backend"),
    ] {
        let cm = config_map(name, app, tier);
        match config_maps.create(&cm, &CreateOptions::default()).await {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {}
            Err(e) => return Err(e),
        }
    }
    outln!("created 4 ConfigMaps in namespace {NAMESPACE}");

    // One factory per process; restricted here to the demo namespace.
    let factory = SharedInformerFactory::new(client, Duration::ZERO).with_namespace(NAMESPACE);
    let informer = factory.informer::<ConfigMap>();

    // A custom index: ConfigMaps by their `app` label (client-go's `cache.Indexers{...}`),
    // added before the informer starts. The factory already added the namespace index.
    informer.add_indexers(Indexers::new().with(BY_APP, |cm: &ConfigMap| {
        cm.labels()
            .get("app")
            .map(|app| vec![app.to_owned()])
            .unwrap_or_default()
    }))?;

    informer.add_event_handler(
        ResourceEventHandlerFuncs::new()
            .add_func(|cm: &Arc<ConfigMap>, initial| {
                let when = if initial { "initial list" } else { "watch" };
                outln!("  handler: added {} ({when})", cm.name());
            })
            .update_func(|old: &Arc<ConfigMap>, new: &Arc<ConfigMap>| {
                outln!(
                    "  handler: updated {} (resourceVersion {} -> {})",
                    new.name(),
                    old.resource_version(),
                    new.resource_version()
                );
            })
            .delete_func(|deleted: DeletedObject<ConfigMap>| match deleted {
                DeletedObject::Object(cm) => outln!("  handler: deleted {}", cm.name()),
                DeletedObject::Tombstone(t) => {
                    outln!("  handler: deleted {} (seen only on relist)", t.key)
                }
            }),
    )?;

    factory.start();
    let started = Instant::now();
    if !factory.wait_for_cache_sync_all().await {
        return Err(kclient::Error::other("the ConfigMap cache did not sync"));
    }
    outln!(
        "cache synced in {} ms; it holds {} ConfigMaps",
        started.elapsed().as_millis(),
        informer.get_store().len()
    );
    // Give the handler's initial adds a moment to print before the queries.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let lister = factory.lister::<ConfigMap>();
    let in_ns = lister.namespace(NAMESPACE);
    outln!("lister queries (answered from memory, no request to the API server):");
    let backend = in_ns.list(&Selector::parse("tier=backend")?);
    outln!("  tier=backend: {}", names(&backend));
    let not_web = in_ns.list(&Selector::parse("app!=web,app")?);
    outln!("  app!=web,app: {}", names(&not_web));
    let db = in_ns.get("db-settings")?;
    outln!(
        "  get db-settings: data tier={}",
        db.data
            .as_ref()
            .and_then(|d| d.get("tier"))
            .map_or("", |v| v.as_str())
    );
    match in_ns.get("missing") {
        Err(e) if e.is_not_found() => outln!("  get missing: NotFound, as the API would say"),
        other => outln!("  get missing: unexpected {other:?}"),
    }
    let indexer = informer.get_indexer();
    outln!("index {BY_APP}:");
    let mut apps = indexer.list_index_func_values(BY_APP);
    apps.sort();
    for app in &apps {
        let mut keys = indexer.index_keys(BY_APP, app)?;
        keys.sort();
        outln!("  {app}: {}", keys.join(", "));
    }
    let web = indexer.by_index(BY_APP, "web")?;
    outln!("  by_index({BY_APP}, web) -> {} objects", web.len());

    outln!("changing the cluster; the handler hears about it:");
    config_maps
        .patch(
            "web-routes",
            &Patch::Merge(json!({"data": {"route": "/v2"}})),
            &PatchOptions::default(),
        )
        .await?;
    config_maps
        .create(
            &config_map("web-cache", "web", "frontend"),
            &CreateOptions::default(),
        )
        .await?;
    config_maps
        .delete("queue-settings", &DeleteOptions::default())
        .await?;
    // Wait until the cache has caught up with the three changes.
    let deadline = Instant::now() + Duration::from_secs(10);
    while (indexer.by_index(BY_APP, "web")?.len() != 3 || in_ns.get("queue-settings").is_ok())
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    outln!(
        "  index {BY_APP}/web now: {}",
        names(&indexer.by_index(BY_APP, "web")?)
    );

    factory.shutdown().await;
    clientset
        .core_v1()
        .namespaces()
        .delete(NAMESPACE, &DeleteOptions::default())
        .await?;
    outln!("stopped the informer and deleted namespace {NAMESPACE}");
    Ok(())
}

fn config_map(name: &str, app: &str, tier: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("app".into(), app.into()), ("tier".into(), tier.into())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("tier".into(), tier.into())].into()),
        ..ConfigMap::default()
    }
}

/// Creates the namespace, first waiting out the deletion of one left by a previous run.
async fn create_namespace(clientset: &Clientset) -> Result<(), kclient::Error> {
    wait_out_namespace_deletion(clientset, NAMESPACE).await?;
    let namespaces = clientset.core_v1().namespaces();
    match namespaces.get(NAMESPACE, &GetOptions::default()).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match namespaces.create(&ns, &CreateOptions::default()).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}

fn names(objects: &[Arc<ConfigMap>]) -> String {
    let mut names: Vec<&str> = objects.iter().map(|o| o.name()).collect();
    names.sort_unstable();
    names.join(", ")
}
