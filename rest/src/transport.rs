//! The HTTP transport: a reqwest client over the rustls config from [`crate::tls`], and the
//! mapping of transport failures to [`Error`] kinds.
//!
//! HTTP/2 is used whenever the server offers it through ALPN (kube-apiserver does), so all
//! requests and watches of a `Client` share one TCP connection per server. Keep-alive settings
//! follow client-go's transport: 30s dial timeout and TCP keep-alive, HTTP/2 pings after 30s
//! without frames, failing after a 15s ping timeout.
//!
//! One difference from Go needs care: when an HTTP/2 connection has as many open streams as
//! the server allows (kube-apiserver announces 100), Go's client dials another connection,
//! while hyper queues the request until a stream frees up, so long-lived watches would starve
//! every other request. [`Transport`] therefore keeps a small set of connections (each its own
//! reqwest client) and places at most [`MAX_LONG_RUNNING_PER_CONNECTION`] watches or streams
//! on each, opening another connection when all are that full; short requests go to the
//! connection with the fewest long-running streams.

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use kclient_apimachinery::{Error, TransportErrorKind};

use crate::config::Config;
use crate::config_error::ConfigError;
use crate::tls::ClientCertSlot;

/// Watches and streams placed on one connection before another is opened; well below the
/// 100 concurrent streams kube-apiserver allows, so short requests always find a free stream.
pub(crate) const MAX_LONG_RUNNING_PER_CONNECTION: usize = 50;

/// One connection pool (one HTTP/2 connection per server) and its long-running stream count.
struct Conn {
    http: reqwest::Client,
    long_running: Arc<AtomicUsize>,
}

/// The set of connections of a client.
pub(crate) struct Transport {
    config: Config,
    tls: rustls::ClientConfig,
    cert_slot: Arc<ClientCertSlot>,
    conns: Mutex<Conns>,
}

struct Conns {
    list: Vec<Arc<Conn>>,
    /// The client-certificate generation the connections were made with.
    cert_generation: u64,
}

/// Counts a watch or stream against its connection until dropped.
pub(crate) struct LongRunningGuard {
    count: Arc<AtomicUsize>,
}

impl Drop for LongRunningGuard {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Transport {
    pub(crate) fn new(
        config: &Config,
        tls: rustls::ClientConfig,
        cert_slot: Arc<ClientCertSlot>,
    ) -> Result<Self, ConfigError> {
        let first = build_http(config, tls.clone())?;
        Ok(Transport {
            config: config.clone(),
            tls,
            conns: Mutex::new(Conns {
                list: vec![Arc::new(Conn {
                    http: first,
                    long_running: Arc::default(),
                })],
                cert_generation: cert_slot.generation(),
            }),
            cert_slot,
        })
    }

    /// Drops every connection when an exec plugin rotated the client certificate, so new
    /// requests handshake with the new one (requests in flight keep their connection).
    fn refresh_after_rotation(&self, conns: &mut Conns) {
        let generation = self.cert_slot.generation();
        if generation == conns.cert_generation {
            return;
        }
        match build_http(&self.config, self.tls.clone()) {
            Ok(http) => {
                tracing::debug!("client certificate rotated, closing old connections");
                conns.list = vec![Arc::new(Conn {
                    http,
                    long_running: Arc::default(),
                })];
                conns.cert_generation = generation;
            }
            Err(e) => tracing::warn!(error = %e, "cannot reconnect after certificate rotation"),
        }
    }

    /// The client for a short request: the connection with the fewest long-running streams.
    pub(crate) fn for_request(&self) -> reqwest::Client {
        let mut conns = self.conns.lock();
        self.refresh_after_rotation(&mut conns);
        conns
            .list
            .iter()
            .min_by_key(|c| c.long_running.load(Ordering::Relaxed))
            .map(|c| c.http.clone())
            .unwrap_or_else(|| conns.list[0].http.clone())
    }

    /// How many connection pools exist (for tests).
    #[cfg(test)]
    pub(crate) fn connection_count(&self) -> usize {
        self.conns.lock().list.len()
    }

    /// The client for a watch or stream, and the guard that counts it.
    pub(crate) fn for_long_running(
        &self,
    ) -> Result<(reqwest::Client, LongRunningGuard), ConfigError> {
        let mut conns = self.conns.lock();
        self.refresh_after_rotation(&mut conns);
        let free = conns
            .list
            .iter()
            .find(|c| c.long_running.load(Ordering::Relaxed) < MAX_LONG_RUNNING_PER_CONNECTION)
            .cloned();
        let conn = match free {
            Some(c) => c,
            None => {
                let c = Arc::new(Conn {
                    http: build_http(&self.config, self.tls.clone())?,
                    long_running: Arc::default(),
                });
                tracing::debug!(
                    connections = conns.list.len() + 1,
                    "opening another connection for long-running requests"
                );
                conns.list.push(c.clone());
                c
            }
        };
        conn.long_running.fetch_add(1, Ordering::Relaxed);
        Ok((
            conn.http.clone(),
            LongRunningGuard {
                count: conn.long_running.clone(),
            },
        ))
    }
}

fn build_http(config: &Config, tls: rustls::ClientConfig) -> Result<reqwest::Client, ConfigError> {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(Duration::from_secs(30))
        .tcp_keepalive(Duration::from_secs(30))
        .pool_idle_timeout(Duration::from_secs(90))
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(15))
        .http2_keep_alive_while_idle(true)
        // As Go's transport under client-go: ask for gzip (the apiserver compresses responses
        // over 128 KB, such as large LISTs) and decompress transparently.
        .gzip(!config.disable_compression)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(proxy) = config.proxy_url.as_deref().filter(|p| !p.is_empty()) {
        let url = url::Url::parse(proxy).map_err(|e| {
            ConfigError::invalid(format!("invalid proxy-url {proxy:?}")).with_source(e)
        })?;
        match url.scheme() {
            "http" | "https" | "socks5" | "socks5h" => {}
            other => {
                return Err(ConfigError::invalid(format!(
                    "invalid proxy-url {proxy:?}: unsupported scheme {other:?}"
                )));
            }
        }
        let proxy = reqwest::Proxy::all(url.as_str())
            .map_err(|e| ConfigError::invalid("invalid proxy-url").with_source(e))?;
        builder = builder.proxy(proxy);
    }
    builder
        .build()
        .map_err(|e| ConfigError::invalid("cannot build the http client").with_source(e))
}

/// Classifies a transport failure by walking its source chain, looking inside I/O errors that
/// wrap other errors (hyper and rustls wrap the OS error of a reset in a custom `io::Error`,
/// whose `source()` skips it) and, where a link does not expose its cause (`h2::Error` has no
/// `source()`), at the text of each link.
pub(crate) fn classify(err: &(dyn StdError + 'static)) -> TransportErrorKind {
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    let mut kind = TransportErrorKind::Other;
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            return TransportErrorKind::Timeout;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if let Some(found) = classify_io(io) {
                return found;
            }
            if let Some(inner) = io.get_ref() {
                let inner_kind = classify(inner);
                if inner_kind != TransportErrorKind::Other {
                    return inner_kind;
                }
            }
        }
        if let Some(found) = classify_text(&e.to_string()) {
            kind = found;
        }
        current = e.source();
    }
    kind
}

fn classify_io(io: &std::io::Error) -> Option<TransportErrorKind> {
    use std::io::ErrorKind as K;
    match io.kind() {
        K::ConnectionRefused => Some(TransportErrorKind::ConnectionRefused),
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            Some(TransportErrorKind::ConnectionReset)
        }
        K::TimedOut => Some(TransportErrorKind::Timeout),
        _ => None,
    }
}

/// What a link's message says, for links that do not expose their cause.
fn classify_text(text: &str) -> Option<TransportErrorKind> {
    let text = text.to_ascii_lowercase();
    const RESET: [&str; 8] = [
        "connection closed before message completed",
        "connection reset",
        "broken pipe",
        "unexpected end of file",
        "unexpected eof",
        "goaway",
        // rustls, when the peer closes the TCP connection without ending the TLS session
        // (in the handshake or mid-body).
        "close_notify",
        "tls handshake eof",
    ];
    if RESET.iter().any(|needle| text.contains(needle)) {
        Some(TransportErrorKind::ConnectionReset)
    } else if text.contains("connection refused") {
        Some(TransportErrorKind::ConnectionRefused)
    } else {
        None
    }
}

/// Maps a reqwest error to the shared API error.
pub(crate) fn transport_error(err: reqwest::Error) -> Error {
    let kind = classify(&err);
    // The URL stays in the message to name the request; it never holds credentials.
    Error::transport(kind, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(std::io::Error);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl StdError for Wrap {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn classification() {
        use std::io::ErrorKind as K;
        let table = [
            (K::ConnectionRefused, TransportErrorKind::ConnectionRefused),
            (K::ConnectionReset, TransportErrorKind::ConnectionReset),
            (K::UnexpectedEof, TransportErrorKind::ConnectionReset),
            (K::TimedOut, TransportErrorKind::Timeout),
            (K::PermissionDenied, TransportErrorKind::Other),
        ];
        for (io, want) in table {
            assert_eq!(classify(&Wrap(std::io::Error::from(io))), want, "{io:?}");
        }
        // A reset wrapped in a custom io::Error (what a TLS handshake cut by the peer gives):
        // `source()` skips the inner error, `get_ref()` does not.
        let nested = std::io::Error::other(std::io::Error::from(K::ConnectionReset));
        assert_eq!(classify(&Wrap(nested)), TransportErrorKind::ConnectionReset);
        // A link without `source()` that only says so in its text (h2's I/O errors).
        #[derive(Debug)]
        struct Opaque(&'static str);
        impl std::fmt::Display for Opaque {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl StdError for Opaque {}
        for (text, want) in [
            (
                "peer closed connection without sending TLS close_notify: https://docs.rs/rustls",
                TransportErrorKind::ConnectionReset,
            ),
            (
                "Connection reset by peer (os error 104)",
                TransportErrorKind::ConnectionReset,
            ),
            (
                "Connection refused (os error 111)",
                TransportErrorKind::ConnectionRefused,
            ),
            (
                "received corrupt message of type InvalidContentType",
                TransportErrorKind::Other,
            ),
        ] {
            assert_eq!(classify(&Opaque(text)), want, "{text}");
        }
    }

    #[test]
    fn certificate_rotation_replaces_connections() {
        use crate::tls::{build_tls, certified_key, tests::TEST_CERT, tests::TEST_KEY};
        let (tls, slot) = build_tls(&Default::default()).unwrap();
        let t = Transport::new(&Config::new("https://h"), tls, slot.clone()).unwrap();
        let guards: Vec<_> = (0..=MAX_LONG_RUNNING_PER_CONNECTION)
            .map(|_| t.for_long_running().unwrap())
            .collect();
        assert_eq!(
            t.connection_count(),
            2,
            "the 51st stream opens a second connection"
        );
        t.for_request();
        assert_eq!(t.connection_count(), 2);
        slot.set(certified_key(TEST_CERT.as_bytes(), TEST_KEY.as_bytes()).unwrap());
        t.for_request();
        assert_eq!(
            t.connection_count(),
            1,
            "rotation drops the old connections"
        );
        // An RSA (PKCS#8) pair works too, and another rotation is seen.
        slot.set(
            certified_key(
                include_bytes!("testdata/cert2.pem"),
                include_bytes!("testdata/key2.pem"),
            )
            .unwrap(),
        );
        let (_, _g) = t.for_long_running().unwrap();
        assert_eq!(t.connection_count(), 1);
        drop(guards);
    }

    #[tokio::test]
    async fn refused_connection_is_classified() {
        // Bind then drop a listener so the port is (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let (tls, _) = crate::tls::build_tls(&Default::default()).unwrap();
        let http = build_http(&Config::new("http://127.0.0.1"), tls).unwrap();
        let err = http
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .unwrap_err();
        assert_eq!(classify(&err), TransportErrorKind::ConnectionRefused);
    }
}
