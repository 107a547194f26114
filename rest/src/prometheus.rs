//! [`PrometheusMetrics`] (feature `prometheus`): the request metrics under the names Kubernetes
//! components export (component-base's `restclient` registrations of client-go's hooks), in a
//! `prometheus-client` registry.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::metrics::MetricsProvider;

/// Labels of the latency histogram: component-base's verb and host, and the URL template
/// client-go hands its `RequestLatency` hook (component-base drops it; kclient keeps it, as
/// the template has few values).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    verb: String,
    url: String,
    host: String,
}

/// Labels of the size and rate-limiter histograms.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerbHost {
    verb: String,
    host: String,
}

/// Labels of `rest_client_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    code: String,
    method: String,
    host: String,
}

/// Labels of `rest_client_request_retries_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RetryLabels {
    code: String,
    verb: String,
    host: String,
}

/// Labels of `rest_client_exec_plugin_call_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExecLabels {
    code: String,
    call_status: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// component-base's latency buckets, 5 ms to 60 s.
fn latency_histogram() -> Histogram {
    Histogram::new([
        0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
    ])
}

/// component-base's size buckets, 64 B to 16 MiB.
fn size_histogram() -> Histogram {
    Histogram::new([
        64.0, 256.0, 512.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
        16777216.0,
    ])
}

/// A [`MetricsProvider`] that registers client-go's request metrics in a `prometheus-client`
/// [`Registry`]:
///
/// | metric | labels |
/// | --- | --- |
/// | `rest_client_request_duration_seconds` (histogram) | `verb`, `url` (template), `host` |
/// | `rest_client_rate_limiter_duration_seconds` (histogram) | `verb`, `host` |
/// | `rest_client_request_size_bytes` (histogram) | `verb`, `host` |
/// | `rest_client_response_size_bytes` (histogram) | `verb`, `host` |
/// | `rest_client_requests_total` (counter) | `code`, `method`, `host` |
/// | `rest_client_request_retries_total` (counter) | `code`, `verb`, `host` |
/// | `rest_client_exec_plugin_call_total` (counter) | `code`, `call_status` |
///
/// Set it for the process with [`set_metrics_provider`](crate::set_metrics_provider):
///
/// ```
/// use std::sync::Arc;
/// use kclient_rest::{PrometheusMetrics, set_metrics_provider};
/// use prometheus_client::registry::Registry;
///
/// let mut registry = Registry::default();
/// set_metrics_provider(Arc::new(PrometheusMetrics::new(&mut registry)));
/// ```
#[derive(Clone)]
pub struct PrometheusMetrics {
    latency: HistogramFamily<LatencyLabels>,
    rate_limiter: HistogramFamily<VerbHost>,
    request_size: HistogramFamily<VerbHost>,
    response_size: HistogramFamily<VerbHost>,
    results: Family<ResultLabels, Counter>,
    retries: Family<RetryLabels, Counter>,
    exec_calls: Family<ExecLabels, Counter>,
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics").finish_non_exhaustive()
    }
}

impl PrometheusMetrics {
    /// Registers the seven metric families in `registry` (use
    /// `Registry::sub_registry_with_prefix` for a prefix).
    pub fn new(registry: &mut Registry) -> Self {
        let metrics = PrometheusMetrics {
            latency: Family::new_with_constructor(latency_histogram),
            rate_limiter: Family::new_with_constructor(latency_histogram),
            request_size: Family::new_with_constructor(size_histogram),
            response_size: Family::new_with_constructor(size_histogram),
            results: Family::default(),
            retries: Family::default(),
            exec_calls: Family::default(),
        };
        registry.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, URL template and host.",
            metrics.latency.clone(),
        );
        registry.register(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            metrics.rate_limiter.clone(),
        );
        registry.register(
            "rest_client_request_size_bytes",
            "Request size in bytes. Broken down by verb and host.",
            metrics.request_size.clone(),
        );
        registry.register(
            "rest_client_response_size_bytes",
            "Response size in bytes. Broken down by verb and host.",
            metrics.response_size.clone(),
        );
        // prometheus-client appends `_total` to counters.
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            metrics.results.clone(),
        );
        registry.register(
            "rest_client_request_retries",
            "Number of request retries, partitioned by status code, verb, and host.",
            metrics.retries.clone(),
        );
        registry.register(
            "rest_client_exec_plugin_call",
            "Number of calls to an exec plugin, partitioned by the type of event encountered \
             (no_error, plugin_execution_error, plugin_not_found_error) and an exit code. The \
             exit code is 0 if and only if the plugin call was successful.",
            metrics.exec_calls.clone(),
        );
        metrics
    }
}

fn verb_host(verb: &str, host: &str) -> VerbHost {
    VerbHost {
        verb: verb.to_owned(),
        host: host.to_owned(),
    }
}

impl MetricsProvider for PrometheusMetrics {
    fn request_latency(&self, verb: &str, url_template: &str, host: &str, latency: Duration) {
        self.latency
            .get_or_create(&LatencyLabels {
                verb: verb.to_owned(),
                url: url_template.to_owned(),
                host: host.to_owned(),
            })
            .observe(latency.as_secs_f64());
    }

    fn rate_limiter_latency(&self, verb: &str, _url_template: &str, host: &str, wait: Duration) {
        self.rate_limiter
            .get_or_create(&verb_host(verb, host))
            .observe(wait.as_secs_f64());
    }

    fn request_size(&self, verb: &str, host: &str, bytes: u64) {
        self.request_size
            .get_or_create(&verb_host(verb, host))
            .observe(bytes as f64);
    }

    fn response_size(&self, verb: &str, host: &str, bytes: u64) {
        self.response_size
            .get_or_create(&verb_host(verb, host))
            .observe(bytes as f64);
    }

    fn request_result(&self, code: &str, method: &str, host: &str) {
        self.results
            .get_or_create(&ResultLabels {
                code: code.to_owned(),
                method: method.to_owned(),
                host: host.to_owned(),
            })
            .inc();
    }

    fn request_retry(&self, code: &str, verb: &str, host: &str) {
        self.retries
            .get_or_create(&RetryLabels {
                code: code.to_owned(),
                verb: verb.to_owned(),
                host: host.to_owned(),
            })
            .inc();
    }

    fn exec_plugin_call(&self, exit_code: i32, call_status: &str) {
        self.exec_calls
            .get_or_create(&ExecLabels {
                code: exit_code.to_string(),
                call_status: call_status.to_owned(),
            })
            .inc();
    }
}
