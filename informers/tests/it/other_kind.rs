//! `RestListWatch` watches skip an event whose object is of another kind (client-go's
//! reflector checks each object against its expected type or GroupVersionKind), for typed and
//! dynamic informers; metadata-only watches, whose objects are `PartialObjectMetadata`, keep
//! every event.

use futures_util::StreamExt;
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{ApiResource, ListOptions, Object};
use kclient_cache::ListerWatcher;
use kclient_informers::RestListWatch;
use kclient_testenv::{MisbehavingServer, Reply, StreamEnd};
use serde_json::json;

/// A server whose every watch sends a Pod, then a ConfigMap, then a PartialObjectMetadata, and
/// ends.
async fn server() -> MisbehavingServer {
    MisbehavingServer::start(|_| {
        let object = |api_version: &str, kind: &str, name: &str| {
            serde_json::to_vec(&json!({
                "type": "ADDED",
                "object": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"},
                },
            }))
            .unwrap()
        };
        Reply::watch_lines(
            [
                object("v1", "Pod", "a-pod"),
                object("v1", "ConfigMap", "a-configmap"),
                object("meta.k8s.io/v1", "PartialObjectMetadata", "metadata"),
            ],
            StreamEnd::Finish,
        )
    })
    .await
}

/// The names of the objects a watch of `lw` delivers.
async fn names<K: Object>(lw: impl ListerWatcher<K>) -> Vec<String> {
    lw.watch(ListOptions::default())
        .await
        .expect("open the watch")
        .map(|e| {
            let event = e.expect("an event");
            event
                .object()
                .map(|o| o.name().to_owned())
                .unwrap_or_default()
        })
        .collect()
        .await
}

#[tokio::test]
async fn watches_skip_objects_of_another_kind() {
    let server = server().await;
    let typed = RestListWatch::<ConfigMap>::for_resource(server.client(), Some("ns"));
    assert_eq!(names(typed).await, ["a-configmap"]);
    let dynamic =
        RestListWatch::dynamic(server.client(), ApiResource::of::<ConfigMap>(), Some("ns"));
    assert_eq!(names(dynamic).await, ["a-configmap"]);
    let metadata =
        RestListWatch::metadata(server.client(), ApiResource::of::<ConfigMap>(), Some("ns"));
    assert_eq!(names(metadata).await.len(), 3);
}
