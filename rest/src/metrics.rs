//! Request metrics: the [`MetricsProvider`] trait (client-go's `k8s.io/client-go/tools/metrics`
//! hooks), the process-wide provider, and the URL template requests are labelled with.
//!
//! What the client reports, and when (client-go's points of measurement):
//!
//! | hook | labels | when |
//! | --- | --- | --- |
//! | [`request_latency`](MetricsProvider::request_latency) | verb, URL template, host | once per request, retries and throttling included: until the body is read, or until the response headers for a watch or stream |
//! | [`rate_limiter_latency`](MetricsProvider::rate_limiter_latency) | verb, URL template, host | each wait on the client's rate limiter |
//! | [`request_size`](MetricsProvider::request_size) | verb, host | each attempt with a body of known size (0 without a body) |
//! | [`response_size`](MetricsProvider::response_size) | verb, host | each body read whole, a final error answer's included when it has one (not watches or streams, nor answers that are retried) |
//! | [`request_result`](MetricsProvider::request_result) | code, method, host | each attempt: the status code, or `<error>` when no response came |
//! | [`request_retry`](MetricsProvider::request_retry) | code, verb, host | each attempt after the first, when its result is known: its own status code or `<error>` |
//! | [`exec_plugin_call`](MetricsProvider::exec_plugin_call) | exit code, call status | each run of an exec credential plugin |
//!
//! The URL template ([`url_template`]) replaces the namespace and the object name with
//! `{namespace}` and `{name}`, as client-go's `finalURLTemplate` does, so a label never holds
//! an object's name and the number of series stays bounded.
//!
//! The provider is set once for the process ([`set_metrics_provider`], client-go's
//! `metrics.Register`); until then nothing is measured. With the `prometheus` feature,
//! `PrometheusMetrics` registers the metrics under the names Kubernetes components export.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The code label of an attempt that got no response (client-go's).
pub const NO_RESPONSE_CODE: &str = "<error>";

/// The call status of an exec plugin run that succeeded (client-go's `no_error`).
pub const EXEC_NO_ERROR: &str = "no_error";
/// The call status of an exec plugin that ran and failed (client-go's
/// `plugin_execution_error`): it exited non-zero, timed out or wrote no valid credential.
pub const EXEC_PLUGIN_EXECUTION_ERROR: &str = "plugin_execution_error";
/// The call status of an exec plugin that could not be started (client-go's
/// `plugin_not_found_error`).
pub const EXEC_PLUGIN_NOT_FOUND_ERROR: &str = "plugin_not_found_error";
/// The call status of an exec plugin run the client lost track of (client-go's
/// `client_internal_error`).
pub const EXEC_CLIENT_INTERNAL_ERROR: &str = "client_internal_error";

/// Receives the client's measurements, the counterpart of client-go's `tools/metrics`
/// interfaces. Every method has an empty default, so a provider implements what it records.
///
/// Methods are called on the request's task and must not block.
pub trait MetricsProvider: Send + Sync {
    /// One request's latency (client-go's `RequestLatency`).
    fn request_latency(&self, verb: &str, url_template: &str, host: &str, latency: Duration) {
        let _ = (verb, url_template, host, latency);
    }
    /// One wait on the client-side rate limiter (client-go's `RateLimiterLatency`).
    fn rate_limiter_latency(&self, verb: &str, url_template: &str, host: &str, wait: Duration) {
        let _ = (verb, url_template, host, wait);
    }
    /// The size in bytes of one attempt's body (client-go's `RequestSize`).
    fn request_size(&self, verb: &str, host: &str, bytes: u64) {
        let _ = (verb, host, bytes);
    }
    /// The size in bytes of a response body read whole (client-go's `ResponseSize`).
    fn response_size(&self, verb: &str, host: &str, bytes: u64) {
        let _ = (verb, host, bytes);
    }
    /// One attempt's result: the status code or [`NO_RESPONSE_CODE`] (client-go's
    /// `RequestResult`).
    fn request_result(&self, code: &str, method: &str, host: &str) {
        let _ = (code, method, host);
    }
    /// One retry made: an attempt after the first, with its own result's code, as
    /// [`request_result`](Self::request_result) has it (client-go's `RequestRetry`, counted in
    /// `withRetry.After` for attempts 2..N).
    fn request_retry(&self, code: &str, verb: &str, host: &str) {
        let _ = (code, verb, host);
    }
    /// One run of an exec credential plugin: its exit code (0 on success, 1 when it could not
    /// be started or did not exit) and one of the `EXEC_*` call statuses (client-go's
    /// `ExecPluginCalls`).
    fn exec_plugin_call(&self, exit_code: i32, call_status: &str) {
        let _ = (exit_code, call_status);
    }
}

static PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Sets the process-wide provider (client-go's `metrics.Register`); only the first call takes
/// effect, and it returns whether this one did.
pub fn set_metrics_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    PROVIDER.set(provider).is_ok()
}

/// The provider set with [`set_metrics_provider`], if any.
pub(crate) fn provider() -> Option<&'static dyn MetricsProvider> {
    PROVIDER.get().map(|p| p.as_ref())
}

/// The path of a request with the namespace and the object name replaced by `{namespace}`
/// and `{name}` (client-go's `finalURLTemplate`); segments after a subresource (a proxy path)
/// become `{path}`. Paths outside `/api` and `/apis` (`/version`, `/openapi/v3`) are kept.
/// `path` is taken from the server's root: the requests of a client whose server URL has a
/// path of its own are labelled with that path kept in front of the template of the rest.
///
/// ```
/// use kclient_rest::url_template;
/// assert_eq!(url_template("/api/v1/namespaces/default/pods/web-0"),
///            "/api/v1/namespaces/{namespace}/pods/{name}");
/// assert_eq!(url_template("/apis/apps/v1/namespaces/default/deployments"),
///            "/apis/apps/v1/namespaces/{namespace}/deployments");
/// assert_eq!(url_template("/api/v1/namespaces/default"), "/api/v1/namespaces/{name}");
/// assert_eq!(url_template("/api/v1/nodes/n1/status"), "/api/v1/nodes/{name}/status");
/// ```
pub fn url_template(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let prefix = match segments.first() {
        Some(&"api") => 2,
        Some(&"apis") => 3,
        _ => return format!("/{}", segments.join("/")),
    };
    if segments.len() <= prefix {
        return format!("/{}", segments.join("/"));
    }
    let mut out: Vec<&str> = segments[..prefix].to_vec();
    let mut rest = &segments[prefix..];
    if rest[0] == "namespaces" {
        match rest.len() {
            1 => {}
            // A namespace itself, or its `status` or `finalize` subresource: the name of the
            // object. (A namespaced resource's collection otherwise.)
            2 => {
                out.push("namespaces");
                out.push("{name}");
                return format!("/{}", out.join("/"));
            }
            3 if rest[2] == "status" || rest[2] == "finalize" => {
                out.push("namespaces");
                out.push("{name}");
                out.extend(rest.get(2));
                return format!("/{}", out.join("/"));
            }
            _ => {
                out.push("namespaces");
                out.push("{namespace}");
                rest = &rest[2..];
            }
        }
    }
    // resource, name, subresource, then anything else.
    for (i, segment) in rest.iter().enumerate() {
        match i {
            0 => out.push(segment),
            1 => out.push("{name}"),
            2 => out.push(segment),
            _ => {
                out.push("{path}");
                break;
            }
        }
    }
    format!("/{}", out.join("/"))
}

/// The template of `path`, a request's path under a server URL whose path is `base_path`
/// (`/k8s/clusters/c-1` for a cluster behind a proxy): the base path is kept as it is and what
/// follows it is templated with [`url_template`], as client-go's `finalURLTemplate` trims the
/// base path before it replaces the namespace and the name.
pub(crate) fn url_template_under(base_path: &str, path: &str) -> String {
    let base = base_path.trim_end_matches('/');
    if !base.is_empty()
        && let Some(rest) = path.strip_prefix(base)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return match url_template(rest).as_str() {
            "/" => base.to_owned(),
            template => format!("{base}{template}"),
        };
    }
    url_template(path)
}

/// The `host` label of a client's requests, from its server URL as
/// [`normalize_host`](crate::config::normalize_host) keeps it: client-go labels by the base
/// URL's `Host` (Go's `url.URL.Host`), the host and port as written. So an explicit port stays
/// even when it is the scheme's default (`https://h:443` is `h:443`, `https://h` is `h`), the
/// name keeps its case and an IPv6 address its brackets, and user info and path do not count.
/// Percent escapes are decoded, as Go decodes them.
pub(crate) fn host_label(server: &str) -> String {
    let after_scheme = server.split_once("://").map_or(server, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    // Each `%XX` as the byte it stands for (invalid UTF-8 as U+FFFD).
    percent_encoding::percent_decode_str(host)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_templates() {
        let cases = [
            ("/api", "/api"),
            ("/api/v1", "/api/v1"),
            ("/apis/apps/v1", "/apis/apps/v1"),
            ("/version", "/version"),
            ("/openapi/v3/apis/apps/v1", "/openapi/v3/apis/apps/v1"),
            ("/api/v1/pods", "/api/v1/pods"),
            ("/api/v1/namespaces", "/api/v1/namespaces"),
            ("/api/v1/namespaces/ns1", "/api/v1/namespaces/{name}"),
            (
                "/api/v1/namespaces/ns1/finalize",
                "/api/v1/namespaces/{name}/finalize",
            ),
            (
                "/api/v1/namespaces/ns1/configmaps",
                "/api/v1/namespaces/{namespace}/configmaps",
            ),
            (
                "/api/v1/namespaces/ns1/pods/p1",
                "/api/v1/namespaces/{namespace}/pods/{name}",
            ),
            (
                "/api/v1/namespaces/ns1/pods/p1/log",
                "/api/v1/namespaces/{namespace}/pods/{name}/log",
            ),
            (
                "/api/v1/namespaces/ns1/services/s:80/proxy/a/b",
                "/api/v1/namespaces/{namespace}/services/{name}/proxy/{path}",
            ),
            ("/api/v1/nodes/n1", "/api/v1/nodes/{name}"),
            (
                "/apis/apps/v1/namespaces/ns1/deployments/d/scale",
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            ),
            (
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
            ),
        ];
        for (path, want) in cases {
            assert_eq!(url_template(path), want, "{path}");
        }
    }

    #[test]
    fn url_templates_under_a_base_path() {
        let cases = [
            (
                "",
                "/api/v1/namespaces/ns/pods/p",
                "/api/v1/namespaces/{namespace}/pods/{name}",
            ),
            ("/", "/api/v1/nodes/n1", "/api/v1/nodes/{name}"),
            (
                "/k8s/clusters/c-1",
                "/k8s/clusters/c-1/api/v1/namespaces/ns/pods/p",
                "/k8s/clusters/c-1/api/v1/namespaces/{namespace}/pods/{name}",
            ),
            (
                "/k8s/clusters/c-1/",
                "/k8s/clusters/c-1/apis/apps/v1/namespaces/ns/deployments/d/scale",
                "/k8s/clusters/c-1/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            ),
            ("/prefix", "/prefix/version", "/prefix/version"),
            ("/prefix", "/prefix", "/prefix"),
            // Not under the base path (an absolute path that left it): templated whole.
            (
                "/prefix",
                "/prefixed/api/v1/nodes/n1",
                "/prefixed/api/v1/nodes/n1",
            ),
            ("/prefix", "/api/v1/nodes/n1", "/api/v1/nodes/{name}"),
        ];
        for (base, path, want) in cases {
            assert_eq!(url_template_under(base, path), want, "{base} {path}");
        }
    }

    /// Go's `url.URL.Host` of each server URL, as `url.Parse` gives it.
    #[test]
    fn host_labels_are_the_host_as_written() {
        let cases = [
            ("https://127.0.0.1:6443", "127.0.0.1:6443"),
            ("https://example.com", "example.com"),
            ("https://example.com:443", "example.com:443"),
            ("http://example.com:80/", "example.com:80"),
            (
                "https://Example.COM:8443/k8s/clusters/c-1",
                "Example.COM:8443",
            ),
            ("https://user:p%40ss@host:1/x", "host:1"),
            ("https://[::1]:443", "[::1]:443"),
            ("https://[::1]", "[::1]"),
            ("https://b%C3%BCcher.example:443", "b\u{fc}cher.example:443"),
        ];
        for (server, want) in cases {
            assert_eq!(host_label(server), want, "{server}");
        }
    }
}
