//! The metrics example's `/metrics` against the real kube-apiserver: after a real sync of an
//! informer and a change it must see, the scraped `rest_client_*`, `reflector_*` and
//! `workqueue_*` values match what the test did.
//!
//! Its own test binary with one test, because the metrics providers are process-wide.

// The example's server and informer, exactly as the example runs them (its `main` and worker
// are unused here).
#[path = "../examples/metrics.rs"]
#[allow(dead_code)]
mod example;
mod metrics_common;

use std::sync::Arc;

use kclient::Object as _;
use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::ApiResource;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::envtest::{Identity, TestEnv};
use kclient::metrics::Registry;
use kclient::workqueue::{Queue, QueueConfig};
use tokio::net::TcpListener;

use metrics_common::{eventually, scrape, value};

const CONFIGMAPS: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scraped_metrics_match_a_real_sync() {
    let mut registry = Registry::default();
    assert!(kclient::metrics::register(&mut registry));
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(example::serve_metrics(listener, Arc::new(registry)));

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let host = {
        let url = url_of(&client);
        format!("host=\"{url}\"")
    };
    for i in 0..CONFIGMAPS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{i}").into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let created: Result<ConfigMap, _> = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .json(&cm)
            .send()
            .await;
        created.unwrap_or_else(|e| panic!("creating ConfigMap cm-{i}: {e}"));
    }

    let queue: Queue<String> = Queue::with_config(QueueConfig::new().name(example::QUEUE_NAME));
    let factory = example::start_informer(client.clone(), ns.name(), queue.clone());
    assert!(
        factory.wait_for_cache_sync_all().await,
        "the informer never synced"
    );
    let informer = factory.informer::<ConfigMap>();
    let synced_rv = informer.last_sync_resource_version();
    eventually("the handler did not queue every ConfigMap", || {
        queue.len() == CONFIGMAPS
    })
    .await;

    let samples = scrape(address).await;
    let reflector = "name=\"configmaps\"";
    // The requests this test made: CONFIGMAPS creates at one URL template.
    let create = [
        "verb=\"POST\"",
        "url=\"/api/v1/namespaces/{namespace}/configmaps\"",
        host.as_str(),
    ];
    assert_eq!(
        value(
            &samples,
            "rest_client_request_duration_seconds_count",
            &create
        ),
        CONFIGMAPS as f64
    );
    assert!(
        value(
            &samples,
            "rest_client_requests_total",
            &["code=\"201\"", "method=\"POST\"", host.as_str()]
        ) >= CONFIGMAPS as f64 + 1.0,
        "the creates and the namespace's"
    );
    assert!(
        value(
            &samples,
            "rest_client_response_size_bytes_count",
            &["verb=\"POST\"", host.as_str()]
        ) >= CONFIGMAPS as f64
    );
    // The sync: one list (or watch-list) of the ConfigMaps, one open watch, the version.
    assert_eq!(value(&samples, "reflector_lists_total", &[reflector]), 1.0);
    assert_eq!(
        value(&samples, "reflector_items_per_list_sum", &[reflector]),
        CONFIGMAPS as f64
    );
    assert_eq!(
        value(&samples, "reflector_watches_total", &[reflector]),
        1.0
    );
    assert_eq!(
        value(&samples, "reflector_last_resource_version", &[reflector]),
        synced_rv
            .parse::<f64>()
            .expect("a numeric resource version")
    );
    let events_at_sync = samples
        .iter()
        .find(|(s, _)| s.starts_with("reflector_watch_events_total") && s.contains(reflector))
        .map_or(0.0, |(_, v)| *v);
    // The handler's adds, waiting in the named queue.
    assert_eq!(
        value(&samples, "workqueue_adds_total", &["name=\"configmaps\""]),
        CONFIGMAPS as f64
    );
    assert_eq!(
        value(&samples, "workqueue_depth", &["name=\"configmaps\""]),
        CONFIGMAPS as f64
    );

    // A change the watch must bring: one more event and a newer version.
    let patched: ConfigMap = client
        .patch(kclient::apimachinery::PatchType::Merge)
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .name("cm-0")
        .body(r#"{"data":{"changed":"yes"}}"#)
        .send()
        .await
        .expect("patching cm-0");
    let patched_rv = patched.resource_version().to_owned();
    eventually("the informer never saw the patch", || {
        informer.last_sync_resource_version() == patched_rv
    })
    .await;
    let samples = scrape(address).await;
    assert!(value(&samples, "reflector_watch_events_total", &[reflector]) >= events_at_sync + 1.0);
    assert!(
        value(&samples, "reflector_last_resource_version", &[reflector])
            >= patched_rv
                .parse::<f64>()
                .expect("a numeric resource version")
    );
    assert_eq!(
        value(
            &samples,
            "rest_client_request_duration_seconds_count",
            &[
                "verb=\"PATCH\"",
                "url=\"/api/v1/namespaces/{namespace}/configmaps/{name}\""
            ]
        ),
        1.0
    );

    // A metadata informer of the same resource in the same factory: its reflector has a name
    // of its own, so its list is counted apart and the typed informer's figures stay as they
    // were.
    let metadata = factory.metadata_informer(&ApiResource::of::<ConfigMap>());
    factory.start();
    eventually("the metadata informer never synced", || {
        metadata.has_synced()
    })
    .await;
    let samples = scrape(address).await;
    let of_metadata = "name=\"configmaps (metadata)\"";
    assert_eq!(
        value(&samples, "reflector_lists_total", &[of_metadata]),
        1.0
    );
    assert_eq!(
        value(&samples, "reflector_items_per_list_sum", &[of_metadata]),
        CONFIGMAPS as f64
    );
    assert_eq!(value(&samples, "reflector_lists_total", &[reflector]), 1.0);
    assert_eq!(
        value(&samples, "reflector_items_per_list_sum", &[reflector]),
        CONFIGMAPS as f64
    );

    factory.shutdown().await;
    queue.shut_down();
}

/// The `host:port` the client talks to, as the metrics label it.
fn url_of(client: &kclient::Client) -> String {
    let url = client
        .get()
        .abs_path("/version")
        .url()
        .expect("the client's URL");
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    rest.split('/').next().unwrap_or_default().to_owned()
}
