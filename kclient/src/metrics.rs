//! Prometheus metrics for the whole client in one registry (feature `prometheus`): client-go's
//! request metrics (`rest_client_*`), the reflector metrics (`reflector_*`) and the workqueue
//! metrics (`workqueue_*`), as a Kubernetes component exports them, and the controller
//! runtime's (`controller_runtime_*`, made by the workqueue's provider).
//!
//! [`register`] creates the three providers in one `prometheus-client` [`Registry`] and sets
//! each as its crate's process-wide provider; serve the registry's text encoding on `/metrics`
//! (see `examples/metrics.rs` in this crate), or let a controller manager serve it with
//! `manager_renderer` (feature `tools`). That encoding is OpenMetrics text: serve it as
//! `application/openmetrics-text; version=1.0.0; charset=utf-8`, not as the Prometheus 0.0.4
//! `text/plain`, whose parser would read its counters as untyped series.
//!
//! ```
//! use kclient::workqueue::{Queue, QueueConfig};
//! use prometheus_client::registry::Registry;
//!
//! let mut registry = Registry::default();
//! assert!(kclient::metrics::register(&mut registry));
//! let queue = Queue::with_config(QueueConfig::new().name("pods"));
//! queue.add("default/web");
//!
//! let mut text = String::new();
//! prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
//! assert!(text.contains(r#"workqueue_adds_total{name="pods"} 1"#));
//! # queue.shut_down();
//! ```

use std::sync::Arc;

/// The `prometheus-client` crate these metrics are registered with, for its text encoder
/// (`prometheus_client::encoding::text::encode`) at the version kclient uses.
pub use prometheus_client;
pub use prometheus_client::registry::Registry;

/// Registers the request, reflector and workqueue metrics in `registry` and makes them the
/// process's providers. Providers are set once per process: the return value says whether all
/// three were set by this call (false if some were set before, by an earlier call or
/// directly; those keep reporting where they were registered).
pub fn register(registry: &mut Registry) -> bool {
    let rest = kclient_rest::set_metrics_provider(Arc::new(kclient_rest::PrometheusMetrics::new(
        registry,
    )));
    let reflector = kclient_cache::set_reflector_metrics_provider(Arc::new(
        kclient_cache::PrometheusReflectorMetrics::new(registry),
    ));
    let workqueue = kclient_workqueue::set_metrics_provider(Arc::new(
        kclient_workqueue::PrometheusMetricsProvider::new(registry),
    ));
    rest && reflector && workqueue
}

/// What a controller manager's `/metrics` endpoint serves for `registry` (features
/// `prometheus` and `tools`): its OpenMetrics text, rendered at each scrape.
///
/// ```no_run
/// # fn run(factory: kclient::informers::SharedInformerFactory) -> Result<(), kclient::controller::Error> {
/// use std::net::SocketAddr;
/// use std::sync::Arc;
/// use kclient::controller::manager::Manager;
/// use kclient::metrics::Registry;
///
/// let mut registry = Registry::default();
/// kclient::metrics::register(&mut registry);
/// let manager = Manager::builder(factory)
///     .metrics_bind_address(
///         SocketAddr::from(([0, 0, 0, 0], 8080)),
///         kclient::metrics::manager_renderer(Arc::new(registry)),
///     )
///     .build()?;
/// # let _ = manager; Ok(()) }
/// ```
#[cfg(feature = "tools")]
pub fn manager_renderer(registry: Arc<Registry>) -> kclient_controller::manager::MetricsRenderer {
    kclient_controller::manager::MetricsRenderer::openmetrics(move || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).map(|()| text)
    })
}
