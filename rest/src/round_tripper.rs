//! `RoundTripper`: the one seam where a built request becomes a response, client-go's
//! `http.RoundTripper` as `rest.Config.Transport`/`WrapTransport` use it.
//!
//! A [`Client`](crate::Client) normally sends over its own HTTP/2 transport. Built with
//! [`Client::with_round_tripper`](crate::Client::with_round_tripper), it hands every request
//! (gets, lists, writes, watches, log streams, discovery) to the given round tripper instead,
//! after the same throttling, headers and credentials, and reads the response through the
//! same code: retries on `Retry-After`, `Status` errors, warnings, object size limits and the
//! watch decoder. This is how `kclient-testing` runs the typed, dynamic and discovery clients
//! and informers against an in-memory API server.
//!
//! What the round tripper sees: an `http::Request` whose URI is the full URL (the config's
//! host, path and query), with `User-Agent`, `Accept`, `Content-Type`, `Authorization` (when
//! the config has credentials) and impersonation headers, and the whole body as bytes (a
//! streamed request body is collected first). What it returns: an `http::Response` whose body
//! is a [`ByteStream`], read as it arrives, so a watch is a body that stays open and yields one
//! JSON event per line.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use kclient_apimachinery::Error;

use crate::byte_stream::ByteStream;

/// The future a [`RoundTripper`] returns.
pub type RoundTripFuture =
    Pin<Box<dyn Future<Output = Result<http::Response<ByteStream>, Error>> + Send + 'static>>;

/// Turns a request into a response; plugged into a client with
/// [`Client::with_round_tripper`](crate::Client::with_round_tripper).
///
/// A non-2xx response is turned into the API error by the client, as a server's would be, so
/// a round tripper answers a failure with its status code and a `Status` body. An `Err` is a
/// transport failure (a connection refused, reset or timed out); GETs whose connection was
/// reset are retried as they are against a server.
///
/// ```
/// use std::sync::Arc;
/// use bytes::Bytes;
/// use kclient_rest::{ByteStream, Client, Config, RoundTripFuture, RoundTripper};
///
/// /// Answers every request with the same JSON object.
/// struct Canned;
///
/// impl RoundTripper for Canned {
///     fn round_trip(&self, request: http::Request<Bytes>) -> RoundTripFuture {
///         assert_eq!(request.uri().path(), "/version");
///         let body = Bytes::from_static(br#"{"gitVersion":"v1.36.0"}"#);
///         Box::pin(async move {
///             Ok(http::Response::builder()
///                 .header("content-type", "application/json")
///                 .body(ByteStream::new(futures_util::stream::iter([Ok(body)])))
///                 .expect("a valid response"))
///         })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::with_round_tripper(Config::new("https://fake"), Arc::new(Canned))?;
/// let version: serde_json::Value = client.get().abs_path("/version").send().await?;
/// assert_eq!(version["gitVersion"], "v1.36.0");
/// # Ok(()) }
/// ```
pub trait RoundTripper: Send + Sync + 'static {
    /// Sends one request and returns its response, whose body may still be arriving.
    fn round_trip(&self, request: http::Request<Bytes>) -> RoundTripFuture;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures_util::StreamExt as _;
    use kclient_apimachinery::WatchEvent;
    use parking_lot::Mutex;

    use super::*;
    use crate::{Client, Config};

    /// Records each request; answers the first `fail_first` with a 429 carrying
    /// `Retry-After: 0`, watches with two events in separate chunks, everything else with the
    /// request body echoed.
    /// Method, URL, content type and body of a request.
    type Seen = (String, String, Option<String>, Bytes);

    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Vec<Seen>>,
        fail_first: Mutex<u32>,
    }

    fn body(chunks: Vec<&'static [u8]>) -> ByteStream {
        ByteStream::new(futures_util::stream::iter(
            chunks.into_iter().map(|c| Ok(Bytes::from_static(c))),
        ))
    }

    impl RoundTripper for Recorder {
        fn round_trip(&self, request: http::Request<Bytes>) -> RoundTripFuture {
            let content_type = request
                .headers()
                .get(http::header::CONTENT_TYPE)
                .map(|v| v.to_str().unwrap_or("").to_string());
            self.seen.lock().push((
                request.method().to_string(),
                request.uri().to_string(),
                content_type,
                request.body().clone(),
            ));
            let response = {
                let mut fail = self.fail_first.lock();
                if *fail > 0 {
                    *fail -= 1;
                    http::Response::builder()
                        .status(429)
                        .header("retry-after", "0")
                        .body(body(vec![
                            br#"{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429}"#,
                        ]))
                } else if request
                    .uri()
                    .query()
                    .is_some_and(|q| q.contains("watch=true"))
                {
                    http::Response::builder().body(body(vec![
                        br#"{"type":"ADDED","object":{"a":1}}"#,
                        b"\n{\"type\":\"DELETED\",\"object\":{\"a\":2}}\n",
                    ]))
                } else if request.uri().path().ends_with("/missing") {
                    http::Response::builder().status(404).body(body(vec![
                        br#"{"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"x not found"}"#,
                    ]))
                } else {
                    let echoed = request.body().clone();
                    http::Response::builder()
                        .header("content-type", "application/json")
                        .body(ByteStream::new(futures_util::stream::iter([Ok(echoed)])))
                }
            };
            Box::pin(async move { response.map_err(|e| Error::invalid_request(e.to_string())) })
        }
    }

    #[tokio::test]
    async fn requests_watches_errors_and_retries_go_through_the_round_tripper() {
        let rt = Arc::new(Recorder::default());
        let mut config = Config::new("https://fake.example");
        config.qps = -1.0;
        let client = Client::with_round_tripper(config, rt.clone()).unwrap();

        let echoed: serde_json::Value = client
            .post()
            .group_version("", "v1")
            .namespace("n")
            .resource("configmaps")
            .json(&serde_json::json!({"k": "v"}))
            .send()
            .await
            .unwrap();
        assert_eq!(echoed["k"], "v");

        // A streamed body reaches the round tripper collected.
        let chunks = futures_util::stream::iter(vec![
            Ok::<_, std::io::Error>(Bytes::from_static(b"{\"a\"")),
            Ok(Bytes::from_static(b":2}")),
        ]);
        let echoed: serde_json::Value = client
            .put()
            .abs_path("/x")
            .body_stream(chunks)
            .send()
            .await
            .unwrap();
        assert_eq!(echoed["a"], 2);

        let err = client
            .get()
            .abs_path("/missing")
            .send::<serde_json::Value>()
            .await
            .unwrap_err();
        assert!(err.is_not_found(), "{err:?}");

        *rt.fail_first.lock() = 2;
        let echoed = client.get().abs_path("/retried").bytes().await.unwrap();
        assert!(echoed.is_empty());

        let events: Vec<_> = client
            .get()
            .group_version("", "v1")
            .resource("pods")
            .watch::<serde_json::Value>()
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(events.len(), 2);
        assert!(matches!(&events[0], Ok(WatchEvent::Added(o)) if o["a"] == 1));
        assert!(matches!(&events[1], Ok(WatchEvent::Deleted(o)) if o["a"] == 2));

        let seen = rt.seen.lock().clone();
        let summary: Vec<(&str, &str)> = seen
            .iter()
            .map(|(m, u, _, _)| (m.as_str(), u.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "POST",
                    "https://fake.example/api/v1/namespaces/n/configmaps"
                ),
                ("PUT", "https://fake.example/x"),
                ("GET", "https://fake.example/missing"),
                ("GET", "https://fake.example/retried"),
                ("GET", "https://fake.example/retried"),
                ("GET", "https://fake.example/retried"),
                ("GET", "https://fake.example/api/v1/pods?watch=true"),
            ]
        );
        assert_eq!(seen[0].2.as_deref(), Some("application/json"));
        assert_eq!(&seen[0].3[..], br#"{"k":"v"}"#);
    }
}
