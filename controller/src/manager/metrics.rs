//! [`MetricsRenderer`]: what the manager's metrics endpoint serves (controller-runtime's
//! metrics server), from a function the program gives, so that this crate depends on no
//! metrics library: the facade's `kclient::metrics` registry, or any other.
//!
//! The endpoint is `GET /metrics` on the [metrics address](crate::manager::ManagerBuilder::metrics_bind_address);
//! every other path is a 404, as controller-runtime's server without extra handlers. It runs
//! whether or not the manager leads (Prometheus scrapes every replica). A render that fails
//! or panics is answered with 500 and its reason.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::manager::server::Answer;

/// The content type of OpenMetrics text, what `prometheus-client`'s text encoder (under
/// `kclient::metrics`) writes.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The content type of the Prometheus text format 0.0.4 (what `prometheus`'s `TextEncoder`
/// and Go's `promhttp` write without negotiation).
pub const PROMETHEUS_TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

type RenderFn = Arc<dyn Fn() -> Result<String, String> + Send + Sync>;

/// Renders the metrics for each scrape: a function returning the exposition text, and the
/// content type it is in.
///
/// With the facade's registry (`kclient::metrics`, feature `prometheus`), the function
/// encodes the registry with `prometheus_client::encoding::text::encode` into a `String`
/// and the renderer is [`openmetrics`](Self::openmetrics); any function returning the text
/// will do:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use kclient_controller::manager::MetricsRenderer;
///
/// let scrapes = Arc::new(AtomicU64::new(0));
/// let renderer = MetricsRenderer::prometheus_text(move || {
///     let n = scrapes.fetch_add(1, Ordering::Relaxed) + 1;
///     Ok::<_, std::fmt::Error>(format!("# TYPE scrapes counter\nscrapes {n}\n"))
/// });
/// # let _ = renderer;
/// ```
#[derive(Clone)]
pub struct MetricsRenderer {
    content_type: &'static str,
    render: RenderFn,
}

impl fmt::Debug for MetricsRenderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsRenderer")
            .field("content_type", &self.content_type)
            .finish_non_exhaustive()
    }
}

impl MetricsRenderer {
    /// Serves what `render` returns as `content_type`; an error is answered with 500.
    pub fn new<F, E>(content_type: &'static str, render: F) -> Self
    where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        MetricsRenderer {
            content_type,
            render: Arc::new(move || render().map_err(|e| e.to_string())),
        }
    }

    /// Serves OpenMetrics text ([`OPENMETRICS_CONTENT_TYPE`]), what `prometheus-client`
    /// writes.
    pub fn openmetrics<F, E>(render: F) -> Self
    where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        MetricsRenderer::new(OPENMETRICS_CONTENT_TYPE, render)
    }

    /// Serves the Prometheus text format ([`PROMETHEUS_TEXT_CONTENT_TYPE`]).
    pub fn prometheus_text<F, E>(render: F) -> Self
    where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        MetricsRenderer::new(PROMETHEUS_TEXT_CONTENT_TYPE, render)
    }

    /// The answer to a request for `path`.
    pub(crate) fn answer(&self, path: &str) -> Answer {
        if path != "/metrics" {
            return Answer::text(404, "404 page not found\n".to_owned());
        }
        let render = Arc::clone(&self.render);
        match std::panic::catch_unwind(AssertUnwindSafe(|| render())) {
            Ok(Ok(body)) => Answer {
                status: 200,
                content_type: self.content_type,
                body,
            },
            Ok(Err(reason)) => Answer::text(500, format!("error gathering metrics: {reason}\n")),
            Err(panic) => Answer::text(
                500,
                format!(
                    "error gathering metrics: the renderer panicked: {}\n",
                    kclient_flowcontrol::panic_message(&*panic)
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_metrics_only_on_metrics_and_reports_render_failures() {
        let ok = MetricsRenderer::openmetrics(|| Ok::<_, std::fmt::Error>("# EOF\n".to_owned()));
        let a = ok.answer("/metrics");
        assert_eq!(
            (a.status, a.content_type, a.body.as_str()),
            (200, OPENMETRICS_CONTENT_TYPE, "# EOF\n")
        );
        let a = ok.answer("/metrics/");
        assert_eq!((a.status, a.body.as_str()), (404, "404 page not found\n"));

        let failing = MetricsRenderer::prometheus_text(|| Err::<String, _>("registry locked"));
        let a = failing.answer("/metrics");
        assert_eq!(
            (a.status, a.body.as_str()),
            (500, "error gathering metrics: registry locked\n")
        );

        let panicking = MetricsRenderer::prometheus_text(|| -> Result<String, String> {
            panic!("bad collector")
        });
        let a = panicking.answer("/metrics");
        assert_eq!(
            (a.status, a.body.as_str()),
            (
                500,
                "error gathering metrics: the renderer panicked: bad collector\n"
            )
        );
    }
}
