//! Requests and watches through a `FaultProxy` in front of the real apiserver: refused
//! connections, a watch cut mid-stream, corrupted TLS records and a stalled server each end in
//! a clear error (or a clean end of the watch) within a bound, never in a panic or a hang, and
//! the client works again once the fault is lifted.

use std::error::Error as _;
use std::future::Future;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use kclient_apimachinery::{ListOptions, WatchEvent};
use kclient_rest::{Client, Error, StreamOptions};
use kclient_testenv::{FaultProxy, Identity, TestEnv, TestNamespace};
use serde_json::{Value, json};

use crate::{configmaps, create_cm};

/// What each test starts from: a fresh namespace, a proxy in front of the apiserver, a client
/// through the proxy, and a direct client for the writes the faults must not touch.
struct Faulty {
    ns: TestNamespace,
    proxy: FaultProxy,
    client: Client,
    direct: Client,
}

impl Faulty {
    async fn start() -> Faulty {
        let env = TestEnv::connect().await;
        let proxy = env.fault_proxy().await;
        Faulty {
            ns: env.namespace().await,
            client: proxy.client(Identity::Admin),
            direct: env.client(Identity::Admin),
            proxy,
        }
    }
}

/// The bound of every wait in these tests.
const BOUND: Duration = Duration::from_secs(20);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within {BOUND:?}"))
}

/// The error's Display followed by its whole source chain.
fn chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn name_of(event: &WatchEvent<Value>) -> String {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
        other => format!("{other:?}"),
    }
}

/// A watch of the ConfigMaps in `ns` from the resourceVersion of `from`.
async fn watch_from(
    client: &Client,
    ns: &str,
    from: &Value,
    what: &str,
) -> kclient_rest::WatchStream<Value> {
    let rv = from["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_owned();
    within(
        what,
        configmaps(client.get(), ns)
            .params(ListOptions::default().resource_version(rv).to_query())
            .watch::<Value>(),
    )
    .await
    .unwrap_or_else(|e| panic!("{what}: {}", chain(&e)))
}

/// Waits for a cut watch to end: the cut is reported once as a broken connection (not as a
/// body that does not decode, and with no event after it), then the stream ends.
async fn assert_ends_with_a_cut(watch: &mut kclient_rest::WatchStream<Value>) {
    match within("the cut watch to end", watch.next()).await {
        None => panic!("the cut watch ended silently; the cut should be reported"),
        Some(Err(e)) => assert!(
            e.is_transport() && !e.is_decode(),
            "the cut was reported as something else: {}",
            chain(&e)
        ),
        Some(Ok(event)) => panic!("an event after the cut: {}", name_of(&event)),
    }
    assert!(
        within("the cut watch to end", watch.next()).await.is_none(),
        "the stream goes on after reporting the cut"
    );
}

/// A list through the proxy, to prove the client works (and to open its connection).
async fn list_through(client: &Client, ns: &str, what: &str) -> Value {
    within(what, configmaps(client.get(), ns).send::<Value>())
        .await
        .unwrap_or_else(|e| panic!("{what}: {}", chain(&e)))
}

/// A request that could not connect: a transport error whose source chain names the URL and
/// what happened to the connection.
fn assert_connection_failure(err: &Error, proxy: &FaultProxy, what: &str) {
    let text = chain(err);
    assert!(err.is_transport() && !err.is_api(), "{what}: {text}");
    assert!(
        text.contains(&proxy.addr().to_string()),
        "{what}: the error does not name the URL it failed on: {text}"
    );
    let lower = text.to_lowercase();
    assert!(
        ["connection reset", "eof", "closed"]
            .iter()
            .any(|w| lower.contains(w)),
        "{what}: the error does not say the connection was closed: {text}"
    );
}

#[tokio::test]
async fn a_request_through_a_refusing_proxy_fails_naming_the_connection_failure() {
    let Faulty {
        ns, proxy, client, ..
    } = Faulty::start().await;
    proxy.refuse(true);

    let err = within(
        "a GET through the refusing proxy",
        configmaps(client.get(), ns.name())
            .max_retries(0)
            .send::<Value>(),
    )
    .await
    .expect_err("a GET through a refusing proxy succeeded");
    assert_connection_failure(&err, &proxy, "a refused GET");
    assert_eq!(proxy.connections_refused(), 1);

    let err = within(
        "a POST through the refusing proxy",
        configmaps(client.post(), ns.name())
            .json(&json!({"metadata": {"name": "never"}}))
            .send::<Value>(),
    )
    .await
    .expect_err("a POST through a refusing proxy succeeded");
    assert_connection_failure(&err, &proxy, "a refused POST");
    assert_eq!(proxy.connections_refused(), 2, "a POST is never retried");

    // A watch whose connection closes before the response headers is an error once the
    // retries are spent (`Request::watch`'s contract), so the reflector can report it to its
    // watch error handler and back off.
    let err = within(
        "a watch through the refusing proxy",
        configmaps(client.get(), ns.name())
            .max_retries(0)
            .watch::<Value>(),
    )
    .await
    .expect_err("a refused watch must fail, not end empty");
    assert_connection_failure(&err, &proxy, "a refused watch");
    assert_eq!(proxy.connections_refused(), 3);

    // Once connections are accepted again, the same client works.
    proxy.refuse(false);
    let list = list_through(&client, ns.name(), "a list after the refusal").await;
    assert_eq!(list["items"], json!([]));
    assert_eq!(proxy.connections_accepted(), 4);
}

/// The server side closes the connection during the TLS handshake (RST or FIN): that is a
/// connection reset / early EOF (client-go: `IsConnectionReset` / `IsProbableEOF`), so the
/// error says so and a GET is retried.
#[tokio::test]
async fn a_connection_closed_during_the_tls_handshake_is_a_reset_and_a_get_is_retried() {
    let Faulty {
        ns, proxy, client, ..
    } = Faulty::start().await;
    proxy.refuse(true);
    let err = within(
        "a GET through the refusing proxy",
        configmaps(client.get(), ns.name())
            .max_retries(2)
            .send::<Value>(),
    )
    .await
    .expect_err("a GET through a refusing proxy succeeded");
    assert!(
        err.is_connection_reset(),
        "want a connection reset, got {err:?}"
    );
    // Display names the failure and the server it happened with.
    assert!(
        err.to_string().starts_with(&format!(
            "connection reset or closed early by {}",
            proxy.addr()
        )),
        "{}",
        chain(&err)
    );
    assert_eq!(
        proxy.connections_refused(),
        3,
        "one attempt and two retries, each on a new connection"
    );
}

/// A connection reset before the answer is retried for a GET read whole, but not for a
/// stream (a pod's log, client-go's `Request.Stream`, which retries only answers that carry a
/// `Retry-After`) nor for an exec upgrade (client-go's exec and port-forward executors never
/// retry: the command may already run, and a second try would run it again).
#[tokio::test]
async fn a_stream_or_an_exec_is_not_retried_after_a_connection_reset() {
    let Faulty {
        ns, proxy, client, ..
    } = Faulty::start().await;
    let pod = |client: &Client| {
        client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("pods")
            .name("p")
    };
    proxy.refuse(true);
    let Err(err) = within(
        "a log stream through the refusing proxy",
        pod(&client).subresource("log").stream(),
    )
    .await
    else {
        panic!("a log stream through a refusing proxy succeeded");
    };
    assert!(err.is_connection_reset(), "{}", chain(&err));
    assert_eq!(
        proxy.connections_refused(),
        1,
        "the stream was retried after a reset"
    );
    let Err(err) = within(
        "an exec through the refusing proxy",
        pod(&client)
            .subresource("exec")
            .param("command", "true")
            .remote_command(StreamOptions::default().stdout(true)),
    )
    .await
    else {
        panic!("an exec through a refusing proxy succeeded");
    };
    assert!(err.is_connection_reset(), "{}", chain(&err));
    assert_eq!(
        proxy.connections_refused(),
        2,
        "the exec was retried after a reset"
    );
}

/// A GET waiting on an HTTP/2 connection that the health-check ping finds dead is retried on a
/// new connection, as client-go retries a GET after `http2: client connection lost`
/// (`IsHTTP2ConnectionLost`): the loss is a broken connection, not a timeout of the request.
///
/// The ping's timings come from the environment (`HTTP2_READ_IDLE_TIMEOUT_SECONDS`,
/// `HTTP2_PING_TIMEOUT_SECONDS`), so the test runs itself again in a child process with pings
/// after 1 s that fail after 1 s more.
#[tokio::test]
async fn a_get_on_an_http2_connection_its_ping_finds_dead_is_retried() {
    const NAME: &str = "faults::a_get_on_an_http2_connection_its_ping_finds_dead_is_retried";
    if std::env::var_os("HTTP2_PING_TIMEOUT_SECONDS").is_none() {
        let out = tokio::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args(["--exact", NAME, "--nocapture"])
            .env("HTTP2_READ_IDLE_TIMEOUT_SECONDS", "1")
            .env("HTTP2_PING_TIMEOUT_SECONDS", "1")
            .output()
            .await
            .expect("run the test in a child process");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the child failed: {text}");
        assert!(text.contains("1 passed"), "the child ran no test: {text}");
        return;
    }
    let Faulty {
        ns, proxy, client, ..
    } = Faulty::start().await;
    list_through(&client, ns.name(), "a list before the stall").await;
    proxy.stall(true);
    // The first attempt's ping fails after about 2 s; the retry waits 1 s, dials a new
    // connection (which stalls too) and runs into the request's timeout.
    let err = within(
        "a list on a connection that goes silent",
        configmaps(client.get(), ns.name())
            .max_retries(1)
            .timeout(Duration::from_secs(8))
            .send::<Value>(),
    )
    .await
    .expect_err("a list from a stalled server succeeded");
    assert_eq!(
        proxy.connections_accepted(),
        2,
        "the GET was not retried on a new connection: {}",
        chain(&err)
    );
    assert!(
        chain(&err).contains("keep-alive timed out"),
        "the error does not name the lost connection: {}",
        chain(&err)
    );
    proxy.stall(false);
}

#[tokio::test]
async fn a_watch_cut_mid_stream_ends_and_a_new_watch_misses_nothing() {
    let Faulty {
        ns,
        proxy,
        client,
        direct,
    } = Faulty::start().await;

    let first = create_cm(&direct, ns.name(), "first", "0").await;
    let mut watch = watch_from(
        &client,
        ns.name(),
        &first,
        "opening a watch through the proxy",
    )
    .await;
    let second = create_cm(&direct, ns.name(), "second", "0").await;
    let event = within("the ADDED event of second", watch.next())
        .await
        .expect("the watch ended before its first event")
        .unwrap_or_else(|e| panic!("watch event: {}", chain(&e)));
    assert!(
        matches!(event, WatchEvent::Added(_)) && name_of(&event) == "second",
        "{event:?}"
    );

    assert_eq!(proxy.cut_all().await, 1, "the client's one connection");
    // While the watch is down, another object arrives.
    create_cm(&direct, ns.name(), "third", "0").await;
    // The cut watch ends cleanly and the caller watches again.
    assert_ends_with_a_cut(&mut watch).await;

    // A new watch from the last version seen gets what happened during the cut.
    let mut watch = watch_from(&client, ns.name(), &second, "re-opening the watch").await;
    let event = within("the ADDED event of third", watch.next())
        .await
        .expect("the new watch ended before its first event")
        .unwrap_or_else(|e| panic!("watch event: {}", chain(&e)));
    assert!(
        matches!(event, WatchEvent::Added(_)) && name_of(&event) == "third",
        "{event:?}"
    );
    assert_eq!(proxy.connections_accepted(), 2, "one connection per watch");
}

/// The connection is cut 20 kB into a 60 kB event (spread over many TLS records), so the
/// client holds a truncated event line when the connection ends: that is a cut connection, not
/// a server sending garbage, and must not be reported as an event that does not decode.
#[tokio::test]
async fn a_watch_cut_inside_an_event_ends_without_a_decode_error() {
    let Faulty {
        ns,
        proxy,
        client,
        direct,
    } = Faulty::start().await;

    let first = create_cm(&direct, ns.name(), "first", "0").await;
    let mut watch = watch_from(
        &client,
        ns.name(),
        &first,
        "opening a watch through the proxy",
    )
    .await;
    proxy.cut_after_server_bytes(20_000);
    create_cm(&direct, ns.name(), "big", &"x".repeat(60_000)).await;
    // The half-received event is dropped (neither delivered nor a decode error) and the watch
    // ends cleanly.
    assert_ends_with_a_cut(&mut watch).await;
    assert_eq!(proxy.connections_cut(), 1, "{proxy:?}");
}

/// A LIST whose connection is cut 30 kB into its ~100 kB body: a transport error (the
/// connection), not a decode error (a server sending garbage), and the next list works.
#[tokio::test]
async fn a_list_cut_inside_its_body_is_a_transport_error() {
    let Faulty {
        ns,
        proxy,
        client,
        direct,
    } = Faulty::start().await;
    let value = "v".repeat(2_000);
    futures_util::stream::iter(0..50)
        .for_each_concurrent(8, |i| {
            let (direct, value, ns) = (&direct, &value, ns.name());
            async move {
                create_cm(direct, ns, &format!("cm-{i:02}"), value).await;
            }
        })
        .await;
    list_through(&client, ns.name(), "a list before the cut").await;
    proxy.cut_after_server_bytes(30_000);
    let err = within(
        "a list cut inside its body",
        configmaps(client.get(), ns.name())
            .max_retries(0)
            .send::<Value>(),
    )
    .await
    .expect_err("a list cut inside its body succeeded");
    let text = chain(&err);
    assert!(
        err.is_transport() && !err.is_decode() && !err.is_api(),
        "a cut body was not reported as a transport failure: {text}"
    );
    assert!(
        text.contains("close_notify") || text.to_lowercase().contains("eof"),
        "the error does not say the connection ended early: {text}"
    );
    assert_eq!(proxy.connections_cut(), 1, "{proxy:?}");
    let list = list_through(&client, ns.name(), "a list after the cut").await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(50));
}

#[tokio::test]
async fn corrupted_server_bytes_give_a_tls_error_and_the_client_reconnects() {
    let Faulty {
        ns, proxy, client, ..
    } = Faulty::start().await;

    // On an established connection: the next record from the server fails its integrity check.
    list_through(&client, ns.name(), "a list before the corruption").await;
    proxy.corrupt_next_server_bytes(8);
    let err = within(
        "a list whose response is corrupted",
        configmaps(client.get(), ns.name())
            .max_retries(0)
            .send::<Value>(),
    )
    .await
    .expect_err("a corrupted response was accepted");
    assert_eq!(proxy.corrupted_bytes(), 8);
    assert_tls_error(
        &err,
        "a corrupted response",
        "cannot decrypt peer's message",
    );

    // The broken connection is dropped: the next request gets a new one.
    list_through(&client, ns.name(), "a list after the corruption").await;
    assert_eq!(proxy.connections_accepted(), 2);

    // In the handshake: a fresh client's first record from the server (ServerHello) is broken.
    // The armed corruption hits whichever connection the server writes to next. The server may
    // still be answering the client's alert on the connection broken above (its closing
    // frames can come late: a CI run saw this handshake succeed because they took the
    // corruption), so every other connection is closed first.
    let fresh = proxy.client(Identity::Admin);
    proxy.cut_all().await;
    proxy.corrupt_next_server_bytes(8);
    let err = within(
        "a list whose TLS handshake is corrupted",
        configmaps(fresh.get(), ns.name())
            .max_retries(0)
            .send::<Value>(),
    )
    .await
    .expect_err("a corrupted handshake was accepted");
    assert_eq!(proxy.corrupted_bytes(), 16);
    assert_tls_error(&err, "a corrupted handshake", "received corrupt message");
    list_through(&fresh, ns.name(), "a list after the corrupted handshake").await;
}

/// A transport error whose source chain says what TLS found wrong (rustls's words).
fn assert_tls_error(err: &Error, what: &str, tls_says: &str) {
    let text = chain(err);
    assert!(err.is_transport() && !err.is_api(), "{what}: {text}");
    assert!(
        text.contains(tls_says),
        "{what}: the error does not say what TLS found wrong ({tls_says:?}): {text}"
    );
}

#[tokio::test]
async fn a_stalled_server_fails_requests_with_a_timeout_within_the_bound() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let proxy = env.fault_proxy().await;
    let mut config = proxy.config(Identity::Admin);
    let timeout = Duration::from_secs(2);
    config.timeout = Some(timeout);
    let client = Client::new(config).expect("client");
    list_through(&client, ns.name(), "a list before the stall").await;

    proxy.stall(true);
    let started = Instant::now();
    let err = within(
        "a list from the stalled server",
        configmaps(client.get(), ns.name()).send::<Value>(),
    )
    .await
    .expect_err("a list from a stalled server succeeded");
    let elapsed = started.elapsed();
    assert!(
        err.is_timeout() && err.is_transport_timeout(),
        "{}",
        chain(&err)
    );
    assert!(
        err.to_string().starts_with("request timed out ("),
        "{}",
        chain(&err)
    );
    assert!(
        elapsed >= timeout - Duration::from_millis(100) && elapsed < timeout * 4,
        "the timeout of {timeout:?} fired after {elapsed:?}"
    );

    // A watch gets no response headers within the timeout: a timeout error.
    let started = Instant::now();
    let err = within(
        "a watch on the stalled server",
        configmaps(client.get(), ns.name()).watch::<Value>(),
    )
    .await
    .expect_err("a watch on a stalled server must fail");
    assert!(err.is_transport_timeout(), "{}", chain(&err));
    assert!(
        started.elapsed() < timeout * 4,
        "the watch took {:?}",
        started.elapsed()
    );
    assert_eq!(proxy.open_connections(), 1, "a stall keeps the connection");

    proxy.stall(false);
    list_through(&client, ns.name(), "a list after the stall").await;
}
