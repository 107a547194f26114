//! Tests of what a request reports about itself: its metrics (through a recording
//! [`MetricsProvider`], set once for this test binary), its tracing span, and that no
//! credential reaches either, a log event, or `Debug` output.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::kubeconfig::ExecConfig;
use crate::test_server::{Reply, TestServer};
use crate::{Client, Config, MetricsProvider, set_metrics_provider};

/// Every measurement, one line each.
#[derive(Default)]
struct Recorder {
    lines: Mutex<Vec<String>>,
}

impl Recorder {
    fn push(&self, line: String) {
        self.lines.lock().push(line);
    }

    /// The lines that name `host`, in order (each test's server has its own port).
    fn for_host(&self, host: &str) -> Vec<String> {
        self.lines
            .lock()
            .iter()
            .filter(|l| l.split(' ').any(|w| w == host))
            .cloned()
            .collect()
    }

    fn count(&self, line: &str) -> usize {
        self.lines.lock().iter().filter(|l| *l == line).count()
    }
}

impl MetricsProvider for Recorder {
    fn request_latency(&self, verb: &str, url_template: &str, host: &str, _: std::time::Duration) {
        self.push(format!("latency {verb} {url_template} {host}"));
    }
    fn rate_limiter_latency(
        &self,
        verb: &str,
        url_template: &str,
        host: &str,
        _: std::time::Duration,
    ) {
        self.push(format!("rate-limiter {verb} {url_template} {host}"));
    }
    fn request_size(&self, verb: &str, host: &str, bytes: u64) {
        self.push(format!("request-size {verb} {host} {bytes}"));
    }
    fn response_size(&self, verb: &str, host: &str, bytes: u64) {
        self.push(format!("response-size {verb} {host} {bytes}"));
    }
    fn request_result(&self, code: &str, method: &str, host: &str) {
        self.push(format!("result {code} {method} {host}"));
    }
    fn request_retry(&self, code: &str, verb: &str, host: &str) {
        self.push(format!("retry {code} {verb} {host}"));
    }
    fn exec_plugin_call(&self, exit_code: i32, call_status: &str) {
        self.push(format!("exec {exit_code} {call_status}"));
    }
}

fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<Arc<Recorder>> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let recorder = Arc::new(Recorder::default());
        assert!(
            set_metrics_provider(recorder.clone()),
            "only these tests set the metrics provider"
        );
        recorder
    })
}

fn ok(body: &str) -> Reply {
    Reply::Http(
        200,
        vec![("Content-Type", "application/json".into())],
        body.into(),
    )
}

fn unavailable_retry_at_once() -> Reply {
    Reply::Http(503, vec![("Retry-After", "0".into())], String::new())
}

fn host_of(server: &TestServer) -> String {
    server.url.trim_start_matches("http://").to_owned()
}

/// An exec plugin config running `script` with `/bin/sh`.
fn exec(script: &str) -> ExecConfig {
    ExecConfig {
        command: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        api_version: "client.authentication.k8s.io/v1".into(),
        interactive_mode: Some("Never".into()),
        ..ExecConfig::default()
    }
}

/// Each attempt counts in the results; each attempt after the first also counts as a retry,
/// with its own outcome's code, when its answer comes (client-go's `withRetry.After`): two
/// 503s then a 200 are the retries `503` (the second attempt) and `200` (the third).
#[tokio::test]
async fn each_attempt_retry_and_request_is_measured_under_its_url_template() {
    let recorder = recorder();
    let server = TestServer::start(vec![
        unavailable_retry_at_once(),
        unavailable_retry_at_once(),
        ok("{}"),
    ])
    .await;
    let mut config = Config::new(server.url.clone());
    config.qps = 1000.0;
    config.burst = 1000;
    let client = Client::new(config).unwrap();
    let _: serde_json::Value = client
        .get()
        .group_version("", "v1")
        .namespace("ns1")
        .resource("pods")
        .name("web-0")
        .send()
        .await
        .unwrap();
    let host = host_of(&server);
    let template = "/api/v1/namespaces/{namespace}/pods/{name}";
    assert_eq!(
        recorder.for_host(&host),
        vec![
            format!("rate-limiter GET {template} {host}"),
            format!("request-size GET {host} 0"),
            format!("result 503 GET {host}"),
            format!("rate-limiter GET {template} {host}"),
            format!("request-size GET {host} 0"),
            format!("result 503 GET {host}"),
            format!("retry 503 GET {host}"),
            format!("rate-limiter GET {template} {host}"),
            format!("request-size GET {host} 0"),
            format!("result 200 GET {host}"),
            format!("retry 200 GET {host}"),
            format!("response-size GET {host} 2"),
            format!("latency GET {template} {host}"),
        ]
    );
}

#[tokio::test]
async fn a_refused_connection_is_an_error_result_and_a_body_has_its_size() {
    let recorder = recorder();
    // A port nothing listens on: bind, take the address, close.
    let address = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let mut config = Config::new(format!("http://{address}"));
    config.qps = -1.0;
    let client = Client::new(config).unwrap();
    let result: Result<serde_json::Value, _> = client
        .post()
        .group_version("", "v1")
        .namespace("ns1")
        .resource("configmaps")
        .body(r#"{"data":{}}"#)
        .max_retries(0)
        .send()
        .await;
    assert!(result.is_err());
    let host = address.to_string();
    assert_eq!(
        recorder.for_host(&host),
        vec![
            format!("request-size POST {host} 11"),
            format!("result <error> POST {host}"),
            format!("latency POST /api/v1/namespaces/{{namespace}}/configmaps {host}"),
        ]
    );
}

/// A server URL with a path (a cluster behind Rancher's or another proxy's
/// `/k8s/clusters/<id>`) keeps that path in front of the template, and the namespace and
/// name after it are still replaced (client-go's `finalURLTemplate` trims the base path
/// first): the metrics' `url` label and the span's `url.path` stay bounded.
#[tokio::test]
async fn a_server_url_with_a_path_still_templates_namespace_and_name() {
    let recorder = recorder();
    let logs = kclient_testenv::LogCapture::with_spans(tracing::Level::TRACE, true);
    let server = TestServer::start(vec![ok("{}")]).await;
    let mut config = Config::new(format!("{}/k8s/clusters/c-1", server.url));
    config.qps = -1.0;
    let client = Client::new(config).unwrap();
    let _: serde_json::Value = client
        .get()
        .group_version("", "v1")
        .namespace("ns-base-path")
        .resource("pods")
        .name("web-base-path")
        .send()
        .await
        .unwrap();
    // The request went to the path under the server URL's.
    let seen = server.seen.lock()[0].head.clone();
    assert!(
        seen.starts_with("GET /k8s/clusters/c-1/api/v1/namespaces/ns-base-path/pods/web-base-path"),
        "{seen}"
    );
    let host = host_of(&server);
    let template = "/k8s/clusters/c-1/api/v1/namespaces/{namespace}/pods/{name}";
    assert_eq!(
        recorder.for_host(&host),
        vec![
            format!("request-size GET {host} 0"),
            format!("result 200 GET {host}"),
            format!("response-size GET {host} 2"),
            format!("latency GET {template} {host}"),
        ]
    );
    let text = logs.text();
    let span = text
        .lines()
        .find(|l| l.contains("HTTP request") && l.contains(": close time."))
        .unwrap_or_else(|| panic!("no HTTP request span in:\n{text}"));
    assert!(span.contains(&format!("url.path={template}")), "{span}");
    assert!(!span.contains("web-base-path"), "{span}");
}

/// Credentials that cannot be had (an exec plugin that fails) end the attempt with no
/// response: it counts as a `<error>` result, as in client-go, where the credential plugin
/// runs inside the round trip.
#[tokio::test]
async fn a_request_without_credentials_counts_as_an_error_result() {
    let recorder = recorder();
    let server = TestServer::start(vec![ok("{}")]).await;
    let mut config = Config::new(server.url.clone());
    config.qps = -1.0;
    // An exit code no other test's plugin uses.
    config.exec_provider = Some(exec("exit 78"));
    let client = Client::new(config).unwrap();
    let failed: Result<serde_json::Value, _> = client.get().abs_path("/version").send().await;
    assert!(failed.is_err());
    assert!(server.seen.lock().is_empty(), "nothing reached the server");
    let host = host_of(&server);
    assert_eq!(
        recorder.for_host(&host),
        vec![
            format!("request-size GET {host} 0"),
            format!("result <error> GET {host}"),
            format!("latency GET /version {host}"),
        ]
    );
}

/// An error answer's body is a response too: its size is recorded, as client-go's `Do`
/// records the body of any result that has one.
#[tokio::test]
async fn an_error_response_body_has_its_size() {
    const NOT_FOUND: &str =
        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
    let recorder = recorder();
    let server = TestServer::start(vec![Reply::Http(
        404,
        vec![("Content-Type", "application/json".into())],
        NOT_FOUND.into(),
    )])
    .await;
    let mut config = Config::new(server.url.clone());
    config.qps = -1.0;
    let client = Client::new(config).unwrap();
    let missing: Result<serde_json::Value, _> = client
        .get()
        .group_version("", "v1")
        .namespace("ns1")
        .resource("configmaps")
        .name("missing")
        .send()
        .await;
    assert!(missing.unwrap_err().is_not_found());
    let host = host_of(&server);
    assert_eq!(
        recorder.for_host(&host),
        vec![
            format!("request-size GET {host} 0"),
            format!("result 404 GET {host}"),
            format!("response-size GET {host} {}", NOT_FOUND.len()),
            format!("latency GET /api/v1/namespaces/{{namespace}}/configmaps/{{name}} {host}"),
        ]
    );
}

#[tokio::test]
async fn exec_plugin_runs_are_counted_by_exit_code_and_status() {
    let recorder = recorder();
    let server = TestServer::start(vec![ok("{}")]).await;
    let mut config = Config::new(server.url.clone());
    config.qps = -1.0;
    // An exit code no other test's plugin uses.
    config.exec_provider = Some(exec("exit 77"));
    let client = Client::new(config).unwrap();
    let failed: Result<serde_json::Value, _> = client.get().abs_path("/version").send().await;
    assert!(failed.is_err());
    assert_eq!(recorder.count("exec 77 plugin_execution_error"), 1);

    let mut config = Config::new(server.url.clone());
    config.qps = -1.0;
    config.exec_provider = Some(exec("/nonexistent/kclient-test-plugin"));
    let client = Client::new(config).unwrap();
    let failed: Result<serde_json::Value, _> = client.get().abs_path("/version").send().await;
    // The shell ran and reported the missing program with its exit code 127.
    assert!(failed.is_err());
    assert_eq!(recorder.count("exec 127 plugin_execution_error"), 1);
}

#[tokio::test]
async fn requests_get_an_http_span_and_no_secret_reaches_spans_events_or_debug() {
    const TOKEN: &str = "kclient-secret-token-4f2a";
    const EXEC_TOKEN: &str = "kclient-secret-exec-token-9c1d";
    const PASSWORD: &str = "kclient-secret-password-77e0";
    let logs = kclient_testenv::LogCapture::with_spans(tracing::Level::TRACE, true);

    let server = TestServer::start(vec![
        unavailable_retry_at_once(),
        ok("{}"),
        Reply::Http(401, vec![], String::new()),
        ok("{}"),
    ])
    .await;
    let mut config = Config::new(server.url.clone());
    config.qps = -1.0;
    config.bearer_token = Some(TOKEN.into());
    let client = Client::new(config.clone()).unwrap();
    let _: serde_json::Value = client
        .get()
        .group_version("apps", "v1")
        .namespace("ns1")
        .resource("deployments")
        .name("web")
        .send()
        .await
        .unwrap();

    let mut exec_config = Config::new(server.url.clone());
    exec_config.qps = -1.0;
    exec_config.exec_provider = Some(exec(&format!(
        r#"echo '{{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{{"token":"{EXEC_TOKEN}"}}}}'"#
    )));
    let exec_client = Client::new(exec_config.clone()).unwrap();
    let unauthorized: Result<serde_json::Value, _> =
        exec_client.get().abs_path("/version").send().await;
    let unauthorized = unauthorized.unwrap_err();
    let _: serde_json::Value = exec_client.get().abs_path("/version").send().await.unwrap();

    // The credentials were in play: the server saw them.
    let seen: Vec<String> = server.seen.lock().iter().map(|s| s.head.clone()).collect();
    assert!(seen[0].contains(TOKEN), "{seen:?}");
    assert!(seen[2].contains(EXEC_TOKEN), "{seen:?}");

    let text = logs.text();
    // The first request's span as it closes, with its status and retry count.
    let span = text
        .lines()
        .find(|l| {
            l.contains("HTTP request") && l.contains("deployments") && l.contains(": close time.")
        })
        .unwrap_or_else(|| panic!("no HTTP request span in:\n{text}"));
    for field in [
        "http.request.method=\"GET\"",
        "url.path=/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        "server.address=\"127.0.0.1\"",
        "http.response.status_code=200",
        "http.request.resend_count=1",
    ] {
        assert!(span.contains(field), "{field} not in {span}");
    }
    assert!(text.contains("http.response.status_code=401"), "{text}");

    let mut basic = Config::new(server.url.clone());
    basic.username = Some("user".into());
    basic.password = Some(PASSWORD.into());
    let debug = format!(
        "{config:?} {client:?} {exec_config:?} {exec_client:?} {unauthorized:?} {unauthorized} \
         {basic:?}"
    );
    for secret in [TOKEN, EXEC_TOKEN, PASSWORD] {
        assert!(!text.contains(secret), "{secret} in the trace:\n{text}");
        assert!(
            !debug.contains(secret),
            "{secret} in Debug output:\n{debug}"
        );
    }
}

/// A password in the server URL's user info (`https://admin:PASSWORD@host`, which the
/// transport sends as basic auth, as Go's `http.Client` does) is shown as `xxxxx`, as Go's
/// `url.URL.Redacted` shows it, wherever the URL is printed: `Debug` of the config, the
/// kubeconfig cluster and the client, the error of a WebSocket upgrade the server refused, the
/// error about an unusable server URL, and what `Client::base_url` and `Request::url` return;
/// the error of a connection refused leaves the user info out.
#[tokio::test]
async fn a_password_in_the_server_url_reaches_no_debug_output_or_error() {
    const PASSWORD: &str = "kclient-secret-url-password-31b8";
    let logs = kclient_testenv::LogCapture::with_spans(tracing::Level::TRACE, true);
    let server = TestServer::start(vec![ok("{}")]).await;
    let url = server
        .url
        .replace("http://", &format!("http://admin:{PASSWORD}@"));
    let mut config = Config::new(url.clone());
    config.qps = -1.0;
    let client = Client::new(config.clone()).unwrap();
    let _: serde_json::Value = client.get().abs_path("/version").send().await.unwrap();
    // An upgrade the server answers without switching protocols.
    let upgrade = client
        .get()
        .abs_path("/exec")
        .upgrade_websocket(&["v5.channel.k8s.io"])
        .await
        .err()
        .expect("the server did not switch protocols");
    let bad_scheme =
        Client::new(Config::new(format!("ftp://admin:{PASSWORD}@host.example"))).unwrap_err();
    let kubeconfig = crate::Kubeconfig::from_yaml(&format!(
        "clusters:\n- name: c\n  cluster: {{server: \"https://admin:{PASSWORD}@h.example\"}}\n"
    ))
    .unwrap();

    // The URL's credentials were in play: the server saw them as basic auth.
    let seen = server.seen.lock()[0].head.clone();
    assert!(
        seen.to_ascii_lowercase().contains("authorization: basic"),
        "{seen}"
    );

    // The accessors that hand the URL out, for a log line or an error message.
    let base_url = client.base_url().to_owned();
    let request_url = client.get().abs_path("/version").url().unwrap();
    // A transport failure (nothing listens on the port any more), whose error names the URL.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut refused_config = Config::new(format!("http://admin:{PASSWORD}@127.0.0.1:{closed}"));
    refused_config.qps = -1.0;
    let refused = Client::new(refused_config)
        .unwrap()
        .get()
        .abs_path("/version")
        .send::<serde_json::Value>()
        .await
        .expect_err("nothing listens");
    assert!(refused.to_string().contains("/version"), "{refused}");
    let debug = format!(
        "{config:?} {client:?} {kubeconfig:?} {upgrade} {upgrade:?} {bad_scheme} {bad_scheme:?} \
         {base_url} {request_url} {refused} {refused:?}"
    );
    assert!(
        !debug.contains(PASSWORD),
        "the password in Debug or an error:\n{debug}"
    );
    for shown in [
        format!("{config:?}"),
        format!("{client:?}"),
        format!("{kubeconfig:?}"),
        upgrade.to_string(),
        bad_scheme.to_string(),
        base_url,
        request_url,
    ] {
        assert!(
            shown.contains("admin:xxxxx@"),
            "the URL is shown redacted: {shown}"
        );
    }
    let text = logs.text();
    assert!(
        !text.contains(PASSWORD),
        "the password in the trace:\n{text}"
    );
}

/// Answers every request with `200 {}`, wherever it is addressed.
struct AnswerOk;

impl crate::RoundTripper for AnswerOk {
    fn round_trip(&self, _: http::Request<bytes::Bytes>) -> crate::RoundTripFuture {
        Box::pin(async {
            let body = crate::ByteStream::new(futures_util::stream::iter([Ok(
                bytes::Bytes::from_static(b"{}"),
            )]));
            Ok(http::Response::builder()
                .header("content-type", "application/json")
                .body(body)
                .expect("a response"))
        })
    }
}

/// The `host` label is the server URL's host as written, client-go's `req.c.base.Host` (Go's
/// `url.URL.Host`): an explicit port stays even when it is the scheme's default, the name's
/// case stays, user info and path do not count, and a server without a scheme is
/// `https://` + it.
#[tokio::test]
async fn the_host_label_is_the_server_urls_host_as_written() {
    let recorder = recorder();
    // (server, host label, URL template of `/version` below the server's path)
    let cases = [
        (
            "https://default-port.example:443",
            "default-port.example:443",
            "/version",
        ),
        (
            "http://default-http-port.example:80",
            "default-http-port.example:80",
            "/version",
        ),
        ("https://no-port.example", "no-port.example", "/version"),
        (
            "https://no-port-with-path.example/k8s/c1",
            "no-port-with-path.example",
            "/k8s/c1/version",
        ),
        (
            "https://user:secret@Mixed-Case.Example:6443/prefix",
            "Mixed-Case.Example:6443",
            "/prefix/version",
        ),
        ("no-scheme.example:443", "no-scheme.example:443", "/version"),
        ("https://[fd00::1]:443", "[fd00::1]:443", "/version"),
    ];
    for (server, want, template) in cases {
        let mut config = Config::new(server);
        config.qps = -1.0;
        let client = Client::with_round_tripper(config, Arc::new(AnswerOk)).unwrap();
        let _: serde_json::Value = client.get().abs_path("/version").send().await.unwrap();
        assert_eq!(
            recorder.for_host(want),
            [
                format!("request-size GET {want} 0"),
                format!("result 200 GET {want}"),
                format!("response-size GET {want} 2"),
                format!("latency GET {template} {want}"),
            ],
            "{server}"
        );
    }
}
