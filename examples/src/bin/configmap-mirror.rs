//! Copies every ConfigMap labelled `mirror=true` into a target namespace as
//! `<namespace>.<name>`, keeps the copy equal to its source, and deletes it when the source goes
//! or loses the label; on client-go's parts through the facade: an informer and its lister,
//! handlers enqueueing keys, a rate-limited workqueue, two workers, shutdown on SIGINT/SIGTERM.
//!
//! `cargo run -p kclient-examples --bin configmap-mirror -- TARGET_NAMESPACE [SOURCE_NAMESPACE]`

use std::sync::Arc;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::prelude::*;

/// On each copy: its source's key, so a copy whose source went while no mirror ran is found.
const MIRRORED_FROM: &str = "kclient.io/mirrored-from";
const COPY_LABEL: &str = "kclient.io/mirror-copy";

struct Mirror {
    sources: Lister<ConfigMap>,
    copies: Api<ConfigMap>,
    target: String,
}

#[tokio::main]
async fn main() -> Result<(), kclient::Error> {
    let usage =
        || kclient::Error::other("usage: configmap-mirror TARGET_NAMESPACE [SOURCE_NAMESPACE]");
    let mut args = std::env::args().skip(1);
    let (target, namespace) = (args.next().ok_or_else(usage)?, args.next());
    let shutdown = shutdown_on_signal();
    let client = Client::try_default()?;
    let mut factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
        .with_tweak_list_options(|o| o.label_selector = Some("mirror=true".into()));
    if let Some(namespace) = namespace {
        factory = factory.with_namespace(namespace);
    }
    let informer = factory.informer::<ConfigMap>();
    let queue = Arc::new(RateLimitingQueue::new(default_controller_rate_limiter()));
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    informer.add_event_handler(
        ResourceEventHandlerFuncs::new()
            .add_func(move |cm: &Arc<ConfigMap>, _| on_add.add(meta_namespace_key(cm)))
            .update_func(move |_, cm: &Arc<ConfigMap>| on_update.add(meta_namespace_key(cm)))
            .delete_func(move |gone: DeletedObject<ConfigMap>| on_delete.add(gone.key())),
    )?;
    factory.start();
    if !factory.wait_for_cache_sync_all().await {
        return Err(kclient::Error::other("the ConfigMap cache did not sync"));
    }
    let mirror = Arc::new(Mirror {
        sources: factory.lister(),
        copies: Api::namespaced(client, &target),
        target,
    });
    // Copies whose source went while no mirror ran: their keys get reconciled too.
    let copies = ListOptions::default().label_selector(format!("{COPY_LABEL}=true"));
    for copy in mirror.copies.list(&copies).await?.items {
        if let Some(source) = copy.annotations().get(MIRRORED_FROM) {
            queue.add(source.to_owned());
        }
    }
    let workers: Vec<_> = (0..2)
        .map(|_| tokio::spawn(worker(queue.clone(), mirror.clone())))
        .collect();
    eprintln!("configmap-mirror: synced; mirroring into {}", mirror.target);
    shutdown.cancelled().await;
    queue.shut_down();
    for worker in workers {
        let _ = worker.await;
    }
    factory.shutdown().await;
    Ok(())
}

/// Takes keys until the queue shuts down; a failed key is retried with backoff, 5 times.
async fn worker(queue: Arc<RateLimitingQueue<String>>, mirror: Arc<Mirror>) {
    while let Some(key) = queue.get().await {
        match mirror.sync(&key).await {
            Ok(()) => queue.forget(&key),
            Err(e) if queue.num_requeues(&key) < 5 => {
                eprintln!("configmap-mirror: {key}: {e}; retrying");
                queue.add_rate_limited(key.clone());
            }
            Err(e) => {
                eprintln!("configmap-mirror: {key}: {e}; giving up");
                queue.forget(&key);
            }
        }
        queue.done(&key);
    }
}

impl Mirror {
    /// Makes the copy of the source `key` match it (server-side apply), or deletes it.
    async fn sync(&self, key: &str) -> Result<(), kclient::Error> {
        let (namespace, name) = split_meta_namespace_key(key)?;
        let namespace = namespace.unwrap_or_default();
        let copy_name = format!("{namespace}.{name}");
        let source = match self.sources.namespace(namespace).get(name) {
            Err(e) if e.is_not_found() => None,
            source => Some(source?).filter(|_| namespace != self.target),
        };
        // Another writer's ConfigMap of the copy's name is neither written nor deleted.
        let copy_uid = match self.copies.get(&copy_name, &GetOptions::default()).await {
            Err(e) if e.is_not_found() => None,
            Ok(cm) if cm.annotations().get(MIRRORED_FROM) == Some(key) => Some(cm.uid().to_owned()),
            Ok(_) => {
                let gone = if source.is_none() { "gone, but " } else { "" };
                eprintln!("configmap-mirror: {key}: {gone}{copy_name} is not its copy; left alone");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let Some(source) = source else {
            let Some(uid) = copy_uid else { return Ok(()) };
            let only_it = DeleteOptions::default().precondition_uid(uid);
            let deleted = self.copies.delete(&copy_name, &only_it).await;
            return deleted.or_else(|e| if e.is_not_found() { Ok(()) } else { Err(e) });
        };
        let copy = ConfigMap {
            metadata: ObjectMeta {
                name: Some(copy_name.into()),
                labels: Some([(COPY_LABEL.into(), "true".into())].into()),
                annotations: Some([(MIRRORED_FROM.into(), key.into())].into()),
                ..ObjectMeta::default()
            },
            data: source.data.clone(),
            binary_data: source.binary_data.clone(),
            ..ConfigMap::default()
        };
        // Forced: a copy edited by hand is taken back.
        let apply = PatchOptions::apply("configmap-mirror").force(true);
        self.copies.apply(&copy, &apply).await.map(drop)
    }
}
