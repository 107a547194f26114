//! Waits the examples share: a watch instead of a polling loop (client-go's `UntilWithSync`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use kclient::api::core::v1::Namespace;
use kclient::apimachinery::{Object, WatchEvent};
use kclient::cache::Indexer;
use kclient::informers::new_list_watch_from_client;
use kclient::kubernetes::Clientset;
use kclient::tools::watch::{condition, precondition, until_with_sync};

/// Waits (up to 60 s) until no namespace `namespace` is being deleted: it is absent or live.
/// An example run right after an earlier one finds its namespace still Terminating; this
/// watches that one namespace until the deletion has finished.
pub async fn wait_out_namespace_deletion(
    clientset: &Clientset,
    namespace: &str,
) -> Result<(), kclient::Error> {
    let lw = new_list_watch_from_client::<Namespace>(
        clientset.rest_client().clone(),
        None,
        &format!("metadata.name={namespace}"),
    );
    until_with_sync(
        Duration::from_secs(60),
        Arc::new(lw),
        Some(precondition(|store: &Indexer<Namespace>| {
            Ok::<_, Infallible>(store.list().iter().all(|ns| !ns.is_being_deleted()))
        })),
        vec![condition(|event: &WatchEvent<Arc<Namespace>>| {
            Ok::<_, Infallible>(matches!(event, WatchEvent::Deleted(_)))
        })],
    )
    .await?;
    Ok(())
}
