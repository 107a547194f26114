//! Serves client-go's metrics on `/metrics`: an informer on the ConfigMaps of a namespace feeds
//! a named workqueue, and the request (`rest_client_*`), reflector (`reflector_*`) and
//! workqueue (`workqueue_*`) metrics of the process are served from one Prometheus registry.
//!
//! ```sh
//! cargo run -p kclient --features prometheus --example metrics -- default 127.0.0.1:9090
//! curl -s 127.0.0.1:9090/metrics | grep -E '^(rest_client|reflector|workqueue)_'
//! ```
//!
//! The server is a few lines on tokio's `TcpListener` (one response per connection), enough
//! for a scraper; a real program would mount the encoder on its own HTTP server.

use std::sync::Arc;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::cache::ResourceEventHandlerFuncs;
use kclient::informers::SharedInformerFactory;
use kclient::metrics::Registry;
use kclient::workqueue::{Queue, QueueConfig};
use kclient::{Client, Object};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// The name of the example's workqueue, its `name` label in the `workqueue_*` metrics.
pub(crate) const QUEUE_NAME: &str = "configmaps";

/// The media type of what `prometheus_client::encoding::text::encode` writes.
pub(crate) const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Answers `GET /metrics` with the registry's text encoding, and anything else with 404,
/// until the listener fails.
pub(crate) async fn serve_metrics(listener: TcpListener, registry: Arc<Registry>) {
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            return;
        };
        let registry = Arc::clone(&registry);
        tokio::spawn(async move {
            // The request line is all this server reads; a scraper's request fits in 4 KiB.
            let mut buf = vec![0u8; 4096];
            let Ok(n) = conn.read(&mut buf).await else {
                return;
            };
            let request = String::from_utf8_lossy(&buf[..n]);
            let (status, body) = if request.starts_with("GET /metrics ") {
                let mut text = String::new();
                match prometheus_client::encoding::text::encode(&mut text, &registry) {
                    Ok(()) => ("200 OK", text),
                    Err(e) => (
                        "500 Internal Server Error",
                        format!("encoding failed: {e}\n"),
                    ),
                }
            } else {
                ("404 Not Found", "only /metrics is served here\n".to_owned())
            };
            // prometheus-client writes OpenMetrics text (a counter's `# TYPE` line names it
            // without `_total`, and `# EOF` ends it): say so, or a scraper reads it with the
            // Prometheus 0.0.4 parser and takes the counters for untyped series.
            let content_type = if status.starts_with("200") {
                OPENMETRICS_CONTENT_TYPE
            } else {
                "text/plain; charset=utf-8"
            };
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
            let _ = conn.shutdown().await;
        });
    }
}

/// Starts an informer on the ConfigMaps of `namespace` whose handler adds each ConfigMap's
/// name to `queue`; returns its factory (shut it down to stop).
pub(crate) fn start_informer(
    client: Client,
    namespace: &str,
    queue: Queue<String>,
) -> SharedInformerFactory {
    let factory = SharedInformerFactory::new(client, Duration::ZERO).with_namespace(namespace);
    let informer = factory.informer::<ConfigMap>();
    let on_update = queue.clone();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |cm: &Arc<ConfigMap>, _| queue.add(cm.name().to_owned()))
                .update_func(move |_, cm: &Arc<ConfigMap>| on_update.add(cm.name().to_owned())),
        )
        .expect("a handler can be added to a new informer");
    factory.start();
    factory
}

/// Drains `queue` until it shuts down: the "work" is logging the key.
pub(crate) async fn run_worker(queue: Queue<String>) {
    while let Some(key) = queue.get().await {
        tracing::info!(key, "processed");
        queue.done(&key);
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let namespace = args.next().unwrap_or_else(|| "default".to_owned());
    let address = args.next().unwrap_or_else(|| "127.0.0.1:9090".to_owned());

    let mut registry = Registry::default();
    kclient::metrics::register(&mut registry);
    let listener = TcpListener::bind(&address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    println!("serving http://{address}/metrics");
    tokio::spawn(serve_metrics(listener, Arc::new(registry)));

    let client = Client::new(kclient::Config::infer()?)?;
    let queue = Queue::with_config(QueueConfig::new().name(QUEUE_NAME));
    let factory = start_informer(client, &namespace, queue.clone());
    let worker = tokio::spawn(run_worker(queue.clone()));

    let cancel = kclient::signal::shutdown_on_signal();
    cancel.cancelled().await;
    factory.shutdown().await;
    queue.shut_down_with_drain().await;
    worker.await?;
    Ok(())
}
