//! The HTTP transport: a reqwest client over the rustls config from [`crate::tls`], and the
//! mapping of transport failures to [`Error`] kinds.
//!
//! HTTP/2 is used whenever the server offers it through ALPN (kube-apiserver does), so all
//! requests and watches of a `Client` share one TCP connection per server.
//!
//! Dead connections are found as client-go finds them (what each check detects, and how
//! fast, is listed on [`Config::read_idle_timeout`](crate::Config::read_idle_timeout)):
//! - TCP: 30 s connect timeout; keep-alive probes after 30 s idle, every 30 s, 9 of them (Go's
//!   `net.Dialer{KeepAlive: 30s}` as client-go sets it, with Go's default count).
//! - HTTP/2: a ping when nothing was received for `HTTP2_READ_IDLE_TIMEOUT_SECONDS` (30 s by
//!   default; `0` turns the check off), the connection closed when the ping is not answered
//!   within `HTTP2_PING_TIMEOUT_SECONDS` (15 s by default; `0` means 15 s, as in Go's
//!   `http2.Transport`). These environment variables are read when a connection pool is built,
//!   as client-go reads them when it builds a transport; an empty one counts as unset, and one
//!   that is not a whole number of seconds (or is negative) is ignored with a warning. hyper's
//!   keep-alive interval is measured from the last frame received, which is Go's read-idle
//!   timeout, and pings idle connections too. A request on a connection its ping finds dead
//!   fails with a connection reset ([`Error::is_connection_reset`], hyper's "keep-alive timed
//!   out"), not a timeout: Go's `http2: client connection lost`, after which client-go
//!   retries a GET on a new connection.
//!
//! One difference from Go needs care: when an HTTP/2 connection has as many open streams as
//! the server allows (kube-apiserver announces 100), Go's client dials another connection,
//! while hyper queues the request until a stream frees up, so long-lived watches would starve
//! every other request. [`Transport`] therefore keeps a small set of connections (each its own
//! reqwest client) and places at most [`MAX_LONG_RUNNING_PER_CONNECTION`] watches or streams
//! on each, opening another connection when all are that full; short requests go to the
//! connection with the fewest long-running streams.
//!
//! `tls-server-name` is the name of the TLS handshake, as client-go makes it
//! (`tls.Config.ServerName`): sent as SNI and checked against the certificate. reqwest takes
//! the SNI from the request URL's host and offers no other way to set it, so a request's URL
//! names the server by `tls-server-name` on the wire ([`ServerNameRoute`]), a resolver sends
//! the connection to the server URL's host (looked up at each connect), an upgrade's `Host`
//! header names the server URL, and errors name the server URL again. Two differences from Go
//! remain: over HTTP/2 the `:authority` (and over HTTP/1.1 the `Host` of a request other than
//! an upgrade) is `tls-server-name`, since reqwest writes both from the URL; and through a
//! proxy (`proxy-url`, or `HTTPS_PROXY` not excluded by `NO_PROXY`) the SNI stays the URL's
//! host, since the proxy would be asked to connect to `tls-server-name` instead.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use kclient_apimachinery::{Error, TransportErrorKind};

use crate::config::Config;
use crate::config_error::ConfigError;
use crate::env_proxy::EnvProxy;
use crate::secret::redact_url_password;
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
    /// Where requests are sent when `tls-server-name` names the handshake.
    route: Option<Arc<ServerNameRoute>>,
    /// The proxy settings of the environment, read once with the transport (Go reads them
    /// once per process).
    env_proxy: Arc<EnvProxy>,
}

/// How a request reaches a server whose handshake is named by `tls-server-name` (see the
/// module docs): its URL names `name` instead of the server URL's `host`, and the resolver
/// connects `name` to `host`.
#[derive(Debug)]
pub(crate) struct ServerNameRoute {
    /// The server URL's host, as the URL writes it (`10.0.0.1`, `[::1]`, `api.example`).
    host: String,
    /// `tls-server-name`, as a URL writes it (lower case).
    name: String,
    /// The `Host` header an upgrade sends: the server URL's host and port.
    authority: http::HeaderValue,
}

impl ServerNameRoute {
    /// The route of `config`, when it has a `tls-server-name` that is a DNS name other than
    /// the URL's host, and no proxy carries the connection.
    fn new(config: &Config, env_proxy: &EnvProxy) -> Option<ServerNameRoute> {
        let name = config
            .tls
            .server_name
            .as_deref()
            .filter(|n| !n.is_empty())?;
        // An IP address is never sent as SNI (Go's `hostnameInSNI`; `build_tls` turns SNI
        // off), and only the certificate check uses it.
        if name.parse::<IpAddr>().is_ok() {
            return None;
        }
        let url = url::Url::parse(&crate::config::normalize_host(&config.host).ok()?).ok()?;
        if url.scheme() != "https" {
            return None;
        }
        let host = url.host_str()?.to_string();
        let mut wire = url.clone();
        wire.set_host(Some(name)).ok()?;
        let name = wire.host_str()?.to_string();
        if name.eq_ignore_ascii_case(&host) {
            return None;
        }
        let proxied = config.proxy_url.as_deref().is_some_and(|p| !p.is_empty())
            || env_proxy.proxy_for(&url).is_some();
        if proxied {
            tracing::debug!(
                tls_server_name = %name,
                "through a proxy the TLS handshake names the server URL's host; tls-server-name is only checked against the certificate"
            );
            return None;
        }
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        };
        Some(ServerNameRoute {
            authority: http::HeaderValue::from_str(&authority).ok()?,
            host,
            name,
        })
    }

    /// The URL a request for `url` is given to reqwest with.
    pub(crate) fn wire_url<'a>(&self, url: &'a url::Url) -> Cow<'a, url::Url> {
        if url
            .host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(&self.host))
        {
            let mut wire = url.clone();
            if wire.set_host(Some(&self.name)).is_ok() {
                return Cow::Owned(wire);
            }
        }
        Cow::Borrowed(url)
    }
}

/// The resolver of a client with a [`ServerNameRoute`]: `tls-server-name` resolves to the
/// server URL's host, looked up when a connection is made; any other name as usual.
struct ServerNameResolver(Arc<ServerNameRoute>);

impl reqwest::dns::Resolve for ServerNameResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let target = if name.as_str().eq_ignore_ascii_case(&self.0.name) {
            self.0.host.clone()
        } else {
            name.as_str().to_string()
        };
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            let literal = target.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
            if let Ok(ip) = literal.unwrap_or(&target).parse::<IpAddr>() {
                let addrs: reqwest::dns::Addrs = Box::new(std::iter::once(SocketAddr::new(ip, 0)));
                return Ok(addrs);
            }
            let found: Vec<SocketAddr> = tokio::net::lookup_host((target.as_str(), 0))
                .await?
                .collect();
            let addrs: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

struct Conns {
    list: Vec<Arc<Conn>>,
    /// The HTTP/1.1-only client for WebSocket upgrades, built on first use.
    upgrade: Option<reqwest::Client>,
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
    /// The transport of `config` over `tls`. With an exec plugin or certificate files, whose
    /// client certificate can change, TLS sessions are never resumed: a resumed session keeps the identity of
    /// the handshake it resumes, so a connection made after a rotation would present the old
    /// certificate again (client-go's transport keeps no TLS session cache at all).
    pub(crate) fn new(
        config: &Config,
        mut tls: rustls::ClientConfig,
        cert_slot: Arc<ClientCertSlot>,
    ) -> Result<Self, ConfigError> {
        if config.exec_provider.is_some() || cert_slot.reloads_files() {
            tls.resumption = rustls::client::Resumption::disabled();
        }
        let env_proxy = Arc::new(EnvProxy::from_env());
        let route = ServerNameRoute::new(config, &env_proxy).map(Arc::new);
        let first = build_http(
            config,
            tls.clone(),
            HttpVersion::Negotiated,
            route.as_ref(),
            &env_proxy,
        )?;
        Ok(Transport {
            config: config.clone(),
            route,
            env_proxy,
            tls,
            conns: Mutex::new(Conns {
                list: vec![Arc::new(Conn {
                    http: first,
                    long_running: Arc::default(),
                })],
                upgrade: None,
                cert_generation: cert_slot.generation(),
            }),
            cert_slot,
        })
    }

    /// Drops every connection when an exec plugin rotated the client certificate, or its
    /// files hold a new one, so new requests handshake with the new one (requests in flight
    /// keep their connection).
    fn refresh_after_rotation(&self, conns: &mut Conns) {
        self.cert_slot.reload_files_if_due();
        let generation = self.cert_slot.generation();
        if generation == conns.cert_generation {
            return;
        }
        match build_http(
            &self.config,
            self.tls.clone(),
            HttpVersion::Negotiated,
            self.route.as_ref(),
            &self.env_proxy,
        ) {
            Ok(http) => {
                tracing::debug!("client certificate rotated, closing old connections");
                conns.list = vec![Arc::new(Conn {
                    http,
                    long_running: Arc::default(),
                })];
                conns.upgrade = None;
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

    /// The client for a WebSocket upgrade (exec, attach, port-forward): HTTP/1.1 only, since
    /// an HTTP/2 stream cannot switch protocols, with the same TLS settings, client
    /// certificate, proxy and timeouts as every other request. An upgraded connection leaves
    /// the pool, so each upgrade dials its own.
    pub(crate) fn for_upgrade(&self) -> Result<reqwest::Client, ConfigError> {
        let mut conns = self.conns.lock();
        self.refresh_after_rotation(&mut conns);
        if let Some(http) = &conns.upgrade {
            return Ok(http.clone());
        }
        let http = build_http(
            &self.config,
            self.tls.clone(),
            HttpVersion::Http1Only,
            self.route.as_ref(),
            &self.env_proxy,
        )?;
        conns.upgrade = Some(http.clone());
        Ok(http)
    }

    /// Where requests go when `tls-server-name` names the handshake.
    pub(crate) fn route(&self) -> Option<&Arc<ServerNameRoute>> {
        self.route.as_ref()
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
                    http: build_http(
                        &self.config,
                        self.tls.clone(),
                        HttpVersion::Negotiated,
                        self.route.as_ref(),
                        &self.env_proxy,
                    )?,
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

/// client-go's dialer keep-alive (`net.Dialer{KeepAlive: 30 * time.Second}`): Go uses it as
/// both the idle time before the first probe and the interval between probes.
const TCP_KEEPALIVE: Duration = Duration::from_secs(30);

/// Go's default number of unanswered keep-alive probes before a connection is dropped.
const TCP_KEEPALIVE_PROBES: u32 = 9;

/// The HTTP/2 health check: ping after this long without a frame (`None`: never), and give up
/// on the connection when the ping is not answered within the second value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Http2Health {
    pub(crate) read_idle: Option<Duration>,
    pub(crate) ping_timeout: Duration,
}

impl Http2Health {
    /// From `HTTP2_READ_IDLE_TIMEOUT_SECONDS` and `HTTP2_PING_TIMEOUT_SECONDS`, as client-go.
    fn from_env() -> Self {
        Self::from_values(
            std::env::var("HTTP2_READ_IDLE_TIMEOUT_SECONDS")
                .ok()
                .as_deref(),
            std::env::var("HTTP2_PING_TIMEOUT_SECONDS").ok().as_deref(),
        )
    }

    /// client-go's `readIdleTimeoutSeconds` and `pingTimeoutSeconds`: 30 and 15 by default,
    /// an empty value is unset, a read-idle of 0 disables the check, a ping timeout of 0 is
    /// 15 s (golang.org/x/net's default). A value that is not a whole number of seconds is
    /// ignored with a warning, as in client-go; so is a negative one (Go would ping without
    /// pause, or fail every ping).
    pub(crate) fn from_values(read_idle: Option<&str>, ping_timeout: Option<&str>) -> Self {
        fn seconds(name: &str, value: Option<&str>, default: u64) -> u64 {
            let Some(text) = value.filter(|v| !v.is_empty()) else {
                return default;
            };
            match text.parse::<i64>() {
                Ok(n) if n >= 0 => n.unsigned_abs(),
                _ => {
                    tracing::warn!(
                        "illegal {name} ({text:?}): not a whole number of seconds >= 0; the default {default} is used"
                    );
                    default
                }
            }
        }
        let read_idle = seconds("HTTP2_READ_IDLE_TIMEOUT_SECONDS", read_idle, 30);
        let ping = match seconds("HTTP2_PING_TIMEOUT_SECONDS", ping_timeout, 15) {
            0 => 15,
            n => n,
        };
        Http2Health {
            read_idle: (read_idle > 0).then(|| Duration::from_secs(read_idle)),
            ping_timeout: Duration::from_secs(ping),
        }
    }
}

/// Which HTTP versions a client may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HttpVersion {
    /// HTTP/2 when the server offers it through ALPN, else HTTP/1.1.
    Negotiated,
    /// HTTP/1.1 only (ALPN offers `http/1.1` alone), for protocol upgrades.
    Http1Only,
}

fn build_http(
    config: &Config,
    mut tls: rustls::ClientConfig,
    version: HttpVersion,
    route: Option<&Arc<ServerNameRoute>>,
    env_proxy: &Arc<EnvProxy>,
) -> Result<reqwest::Client, ConfigError> {
    let h2 = Http2Health::from_env();
    if version == HttpVersion::Http1Only {
        // reqwest takes a preconfigured rustls config's ALPN list as it is.
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    }
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(Duration::from_secs(30))
        .tcp_keepalive(TCP_KEEPALIVE)
        .tcp_keepalive_interval(TCP_KEEPALIVE)
        .tcp_keepalive_retries(TCP_KEEPALIVE_PROBES)
        .pool_idle_timeout(Duration::from_secs(90))
        .http2_keep_alive_interval(h2.read_idle)
        .http2_keep_alive_timeout(h2.ping_timeout)
        .http2_keep_alive_while_idle(true)
        // As Go's transport under client-go: ask for gzip (the apiserver compresses responses
        // over 128 KB, such as large LISTs) and decompress transparently.
        .gzip(!config.disable_compression)
        .redirect(reqwest::redirect::Policy::none());
    if version == HttpVersion::Http1Only {
        builder = builder.http1_only();
    }
    if let Some(route) = route {
        builder = builder.dns_resolver(ServerNameResolver(route.clone()));
        // Over HTTP/1.1 the `Host` header can name the server URL while the URL names the
        // handshake; over HTTP/2 a `host` differing from `:authority` would be malformed, so
        // only the HTTP/1.1-only client (upgrades, as Go's WebSocket dialer) sets it.
        if version == HttpVersion::Http1Only {
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::HOST, route.authority.clone());
            builder = builder.default_headers(headers);
        }
    }
    if let Some(proxy) = config.proxy_url.as_deref().filter(|p| !p.is_empty()) {
        let shown = redact_url_password(proxy);
        let mut url = url::Url::parse(proxy).map_err(|e| {
            ConfigError::invalid(format!("invalid proxy-url {shown:?}")).with_source(e)
        })?;
        match url.scheme() {
            "http" | "https" | "socks5h" => {}
            // Go's SOCKS5 dialer (kubectl's) sends the server's name for the proxy to resolve;
            // reqwest's `socks5` resolves it locally, its `socks5h` as Go does. A cluster
            // reached through `ssh -D` often has a name only the far side resolves.
            "socks5" => {
                if url.set_scheme("socks5h").is_err() {
                    return Err(ConfigError::invalid(format!("invalid proxy-url {shown:?}")));
                }
            }
            other => {
                return Err(ConfigError::invalid(format!(
                    "invalid proxy-url {shown:?}: unsupported scheme {other:?}"
                )));
            }
        }
        let proxy = reqwest::Proxy::all(url.as_str())
            .map_err(|e| ConfigError::invalid("invalid proxy-url").with_source(e))?;
        builder = builder.proxy(proxy);
    } else {
        // reqwest's own reading of the environment follows curl (ALL_PROXY, a loopback server
        // proxied, `.foo.com` matching `foo.com`, no ports in NO_PROXY, socks5 resolved
        // locally); client-go's is Go's.
        builder = builder.no_proxy();
        // With a route, the server is reached directly (it is built only then).
        if route.is_none() && !env_proxy.is_empty() {
            let env_proxy = env_proxy.clone();
            builder = builder.proxy(reqwest::Proxy::custom(move |url| env_proxy.proxy_for(url)));
        }
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
    // hyper reports it as a timeout; Go's transport as `http2: client connection lost`, which
    // client-go counts as a lost connection (`IsHTTP2ConnectionLost`) and retries a GET after.
    if http2_connection_lost(err) {
        return TransportErrorKind::ConnectionReset;
    }
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

/// Whether the HTTP/2 health-check ping found the connection dead (hyper's "keep-alive timed
/// out", which it keeps private): the connection is lost, whatever the request's own timeout.
fn http2_connection_lost(err: &(dyn StdError + 'static)) -> bool {
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = current {
        if e.to_string() == "keep-alive timed out" {
            return true;
        }
        current = e.source();
    }
    false
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

/// Maps a reqwest error to the shared API error, whose `Display` then says what failed and
/// why (see [`TransportFailure`]).
pub(crate) fn transport_error(err: reqwest::Error) -> Error {
    let kind = classify(&err);
    let message = describe(kind, &err);
    Error::transport(
        kind,
        TransportFailure {
            message,
            source: err,
        },
    )
}

/// A transport failure told the way a user can act on it: which server, what happened, and
/// the innermost cause (`connection refused by 10.0.0.1:6443`, `TLS handshake with
/// 10.0.0.1:6443 failed: the server's certificate is not trusted ...`). The reqwest error and
/// its chain stay reachable through `source()`.
#[derive(Debug)]
struct TransportFailure {
    message: String,
    source: reqwest::Error,
}

impl std::fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for TransportFailure {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.source)
    }
}

/// The message of a [`TransportFailure`]. The URL names the request; it never holds
/// credentials (they travel in headers).
fn describe(kind: TransportErrorKind, err: &reqwest::Error) -> String {
    let url = err.url();
    let server = url.map_or_else(
        || "the server".to_string(),
        |u| {
            let host = u.host_str().unwrap_or("");
            match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_string(),
            }
        },
    );
    let target = url.map_or_else(String::new, |u| format!(" ({u})"));
    let cause = innermost_cause(err);
    if let Some(tls) = find_tls_error(err) {
        return format!(
            "TLS handshake with {server} failed{target}: {}",
            explain_tls(tls)
        );
    }
    if kind == TransportErrorKind::ConnectionReset && http2_connection_lost(err) {
        return format!(
            "connection reset or closed early by {server}{target}: the HTTP/2 ping got no \
             answer (keep-alive timed out), the connection is lost"
        );
    }
    match kind {
        TransportErrorKind::ConnectionRefused => {
            format!("connection refused by {server}{target}: {cause}")
        }
        TransportErrorKind::ConnectionReset => {
            format!("connection reset or closed early by {server}{target}: {cause}")
        }
        TransportErrorKind::Timeout => format!("request timed out{target}: {cause}"),
        _ => format!("request failed on {server}{target}: {cause}"),
    }
}

/// The message of the deepest error in the chain (the OS error, the TLS alert), looking
/// inside I/O errors that wrap another error without exposing it as `source()`.
fn innermost_cause(err: &(dyn StdError + 'static)) -> String {
    let mut current: &(dyn StdError + 'static) = err;
    loop {
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
        {
            return innermost_cause(inner);
        }
        match current.source() {
            Some(next) => current = next,
            None => return current.to_string(),
        }
    }
}

/// The rustls error in the chain, if the failure was the TLS handshake.
fn find_tls_error<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
            && let Some(tls) = find_tls_error(inner)
        {
            return Some(tls);
        }
        current = e.source();
    }
    None
}

/// What a TLS failure means for the user, and what to change.
fn explain_tls(tls: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    let rustls::Error::InvalidCertificate(cert) = tls else {
        return tls.to_string();
    };
    match cert {
        C::UnknownIssuer => format!(
            "the server's certificate is not trusted ({tls}): it is not signed by the \
             configured certificate authority; check certificate-authority or \
             certificate-authority-data in the kubeconfig (the system's roots are used when \
             neither is set)"
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => format!(
            "the server's certificate is not valid for the name the client checks, the server \
             URL's host or tls-server-name when set ({tls}); use a name the certificate holds"
        ),
        C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
            format!(
                "the server's certificate is outside its validity period ({tls}); check the \
                 server's certificate and this machine's clock"
            )
        }
        _ => format!("the server's certificate was rejected ({tls})"),
    }
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

    /// The two test client certificates, and a server that names the one presented (`1` or
    /// `2`).
    fn two_certificate_server() -> (
        &'static str,
        &'static str,
        crate::test_server::ClientCertTestServer,
    ) {
        let cert1 = include_str!("testdata/cert.pem");
        let cert2 = include_str!("testdata/cert2.pem");
        let server = crate::test_server::ClientCertTestServer::start(&[
            ("1", cert1.as_bytes()),
            ("2", cert2.as_bytes()),
        ]);
        (cert1, cert2, server)
    }

    /// A client certificate rotated by an exec plugin reaches the server on the very request
    /// whose credentials rotated it: that request is given a connection made after the
    /// rotation, and the new connection does not resume the TLS session of the old
    /// certificate (which would present the old one again), as client-go, whose transport
    /// closes its connections on rotation and keeps no TLS session cache.
    #[tokio::test]
    async fn a_rotated_client_certificate_reaches_the_server_on_the_next_request() {
        let (cert1, cert2, server) = two_certificate_server();
        // The plugin's credentials expire at once, so it runs for every request: runs 1 and 2
        // hand out certificate 1, runs 3 and 4 certificate 2.
        let dir = tempfile::tempdir().unwrap();
        let credential = |cert: &str, key: &str| {
            serde_json::json!({
                "kind": "ExecCredential",
                "apiVersion": "client.authentication.k8s.io/v1",
                "status": {
                    "clientCertificateData": cert,
                    "clientKeyData": key,
                    "expirationTimestamp": "2000-01-01T00:00:00Z",
                }
            })
            .to_string()
        };
        let d = dir.path();
        std::fs::write(
            d.join("1.json"),
            credential(cert1, include_str!("testdata/key.pem")),
        )
        .unwrap();
        std::fs::write(
            d.join("2.json"),
            credential(cert2, include_str!("testdata/key2.pem")),
        )
        .unwrap();
        let script = d.join("plugin.sh");
        let d = d.display();
        std::fs::write(
            &script,
            format!(
                "n=$(cat {d}/runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > {d}/runs\n\
                 if [ $n -le 2 ]; then cat {d}/1.json; else cat {d}/2.json; fi\n"
            ),
        )
        .unwrap();
        let mut exec = crate::ExecConfig::new("/bin/sh", "client.authentication.k8s.io/v1");
        exec.args = vec![script.display().to_string()];
        exec.interactive_mode = Some("Never".into());
        let mut config = Config::new(format!("https://127.0.0.1:{}", server.port));
        config.tls.ca_data = Some(include_bytes!("testdata/tls-ca.pem").to_vec());
        config.qps = -1.0;
        config.exec_provider = Some(exec);
        let client = crate::Client::new(config).unwrap();
        let mut presented = Vec::new();
        for _ in 0..4 {
            let answer: serde_json::Value = client.get().abs_path("/whoami").send().await.unwrap();
            presented.push(answer["cert"].as_str().unwrap_or_default().to_string());
        }
        assert_eq!(
            presented,
            ["1", "1", "2", "2"],
            "the certificate each request presented"
        );
    }

    /// A client certificate and key given as files (a kubeconfig's `client-certificate` and
    /// `client-key`) are read again, as client-go's transport reloads them: when the files
    /// change (a certificate renewed on disk before the old one expires), the connections are
    /// dropped and the next request presents the new pair; a pair that cannot be read (a
    /// renewal half written) leaves the old one in use.
    #[tokio::test]
    async fn client_certificate_files_are_reloaded_when_they_change() {
        let (cert1, cert2, server) = two_certificate_server();
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, key_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        std::fs::write(&cert_file, cert1).unwrap();
        std::fs::write(&key_file, include_str!("testdata/key.pem")).unwrap();
        let mut config = Config::new(format!("https://127.0.0.1:{}", server.port));
        config.tls.ca_data = Some(include_bytes!("testdata/tls-ca.pem").to_vec());
        config.tls.cert_file = Some(cert_file.clone());
        config.tls.key_file = Some(key_file.clone());
        let (tls, slot) = crate::tls::build_tls(&config.tls).unwrap();
        // Checked on every request here; a client checks at most once a minute.
        slot.set_file_check_period(Duration::ZERO);
        let t = Transport::new(&config, tls, slot).unwrap();
        let url = format!("https://127.0.0.1:{}/whoami", server.port);
        let presented = |t: &Transport| {
            let http = t.for_request();
            let url = url.clone();
            async move {
                let body = http.get(url).send().await.unwrap().bytes().await.unwrap();
                let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
                answer["cert"].as_str().unwrap_or_default().to_string()
            }
        };
        assert_eq!(presented(&t).await, "1");
        // Half a renewal: the new certificate with the old key. Not usable, the old pair stays.
        std::fs::write(&cert_file, cert2).unwrap();
        assert_eq!(presented(&t).await, "1");
        std::fs::write(&key_file, include_str!("testdata/key2.pem")).unwrap();
        assert_eq!(presented(&t).await, "2", "the renewed pair is presented");
        assert_eq!(presented(&t).await, "2");
    }

    /// `Display` of every transport and credential failure says what failed and why; the
    /// cause chain stays reachable through `source()`.
    #[tokio::test]
    async fn transport_and_credential_errors_name_their_cause_in_display() {
        use crate::test_server::TlsTestServer;
        let ca: &[u8] = include_bytes!("testdata/tls-ca.pem");
        let server = TlsTestServer::start(
            include_bytes!("testdata/tls-server.pem"),
            include_bytes!("testdata/tls-server-key.pem"),
        );
        let port = server.port;
        let client = |ca: &[u8], name: Option<&str>| {
            let mut c = Config::new(format!("https://127.0.0.1:{port}"));
            c.tls.ca_data = Some(ca.to_vec());
            c.tls.server_name = name.map(Into::into);
            c.qps = -1.0;
            crate::Client::new(c).unwrap()
        };
        // The control: with its CA and its name the server answers.
        let body = client(ca, None)
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap();
        assert_eq!(&body[..], b"{}");

        // A CA that did not sign the server's certificate.
        let err = client(include_bytes!("testdata/cert2.pem"), None)
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap_err();
        let text = err.to_string();
        for needle in [
            &format!("TLS handshake with 127.0.0.1:{port} failed"),
            "not trusted",
            "UnknownIssuer",
            "certificate-authority-data",
        ] {
            assert!(text.contains(needle), "{needle:?} not in {text}");
        }
        assert!(
            err.source().is_some_and(|s| s.source().is_some()),
            "{err:?}"
        );

        // A certificate that does not hold the name checked.
        let err = client(ca, Some("wrong.example"))
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap_err();
        let text = err.to_string();
        for needle in ["not valid for the name", "wrong.example", "tls-server-name"] {
            assert!(text.contains(needle), "{needle:?} not in {text}");
        }

        // Nobody listens.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut c = Config::new(format!("http://127.0.0.1:{closed}"));
        c.qps = -1.0;
        let err = crate::Client::new(c)
            .unwrap()
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap_err();
        assert!(err.is_connection_refused(), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("connection refused by 127.0.0.1:{closed}")),
            "{text}"
        );

        // An exec plugin that fails: its name, its exit code and what it said.
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plugin.sh");
        std::fs::write(
            &script,
            "echo 'login required: run sso-login' >&2\nexit 3\n",
        )
        .unwrap();
        let mut exec = crate::ExecConfig::new("/bin/sh", "client.authentication.k8s.io/v1");
        exec.args = vec![script.to_string_lossy().into_owned()];
        exec.interactive_mode = Some("Never".into());
        let mut c = Config::new(format!("https://127.0.0.1:{port}"));
        c.tls.ca_data = Some(ca.to_vec());
        c.exec_provider = Some(exec);
        let err = crate::Client::new(c)
            .unwrap()
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap_err();
        let text = err.to_string();
        for needle in [
            "exec plugin \"/bin/sh\"",
            "exited with code 3",
            "stderr: login required: run sso-login",
        ] {
            assert!(text.contains(needle), "{needle:?} not in {text}");
        }
        assert!(err.source().is_some(), "{err:?}");
    }

    /// `tls-server-name` is the name of the TLS handshake, as client-go's `tls.Config.ServerName`
    /// makes it in Go: sent as SNI (a server behind an SNI-routing proxy is reached only so)
    /// and checked against the certificate, on every kind of connection (requests, streams,
    /// WebSocket upgrades), while the TCP connection still goes to the server URL's host and
    /// an upgrade's `Host` header still names it. The name here resolves nowhere, so a
    /// connection made to it would fail. A failure still names the server URL. A
    /// `tls-server-name` that is an IP address sends no SNI, as in Go.
    #[tokio::test]
    async fn tls_server_name_is_sent_as_sni_and_the_connection_goes_to_the_url_host() {
        use crate::test_server::{NameRecordingTlsServer, SeenName};
        const NAME: &str = "apiserver.sni-test.invalid";
        let server = NameRecordingTlsServer::start();
        let port = server.port;
        let client = |ca: &[u8], name: &str| {
            let mut c = Config::new(format!("https://127.0.0.1:{port}"));
            c.tls.ca_data = Some(ca.to_vec());
            c.tls.server_name = Some(name.into());
            c.qps = -1.0;
            crate::Client::new(c).unwrap()
        };
        let ca = include_bytes!("testdata/sni-ca.pem");
        let c = client(ca, NAME);
        let body = c.get().abs_path("/version").bytes().await.unwrap();
        assert_eq!(&body[..], b"{}");
        let streamed = c.get().abs_path("/logs").stream().await;
        assert!(streamed.is_ok(), "{:?}", streamed.err());
        drop(streamed);
        // The test server answers 200, so the upgrade fails after the request was seen.
        let upgrade = c
            .get()
            .abs_path("/exec")
            .upgrade_websocket(&["v5.channel.k8s.io"])
            .await;
        assert!(upgrade.is_err());
        let seen = server.seen.lock().clone();
        assert_eq!(seen.len(), 3, "{seen:?}");
        for s in &seen {
            assert_eq!(s.sni.as_deref(), Some(NAME), "{seen:?}");
        }
        assert_eq!(
            seen[2],
            SeenName {
                sni: Some(NAME.into()),
                host: Some(format!("127.0.0.1:{port}")),
            },
            "the upgrade's Host header names the server URL"
        );

        // A CA that did not sign the certificate: the error names the server URL.
        let err = client(include_bytes!("testdata/tls-ca.pem"), NAME)
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap_err();
        let text = err.to_string();
        for needle in [
            format!("TLS handshake with 127.0.0.1:{port} failed"),
            format!("https://127.0.0.1:{port}/version"),
        ] {
            assert!(text.contains(&needle), "{needle:?} not in {text}");
        }

        // An IP address as tls-server-name: no SNI (the certificate is not checked here). The
        // server takes connections one at a time, so this one is the last it saw.
        let mut c = Config::new(format!("https://localhost:{port}"));
        c.tls.insecure = true;
        c.tls.server_name = Some("127.0.0.1".into());
        c.qps = -1.0;
        crate::Client::new(c)
            .unwrap()
            .get()
            .abs_path("/version")
            .bytes()
            .await
            .unwrap();
        let last = server.seen.lock().last().cloned().unwrap();
        assert_eq!(last.sni, None, "{last:?}");
    }

    #[test]
    fn http2_health_check_settings_read_as_client_go_reads_them() {
        let secs = |n| Some(Duration::from_secs(n));
        // (HTTP2_READ_IDLE_TIMEOUT_SECONDS, HTTP2_PING_TIMEOUT_SECONDS) -> (read idle, ping)
        let table = [
            ((None, None), (secs(30), 15)),
            ((Some(""), Some("")), (secs(30), 15)),
            ((Some("10"), Some("5")), (secs(10), 5)),
            ((Some("0"), None), (None, 15)),
            ((None, Some("0")), (secs(30), 15)),
            ((Some("+7"), Some("007")), (secs(7), 7)),
            ((Some("ten"), Some("1.5")), (secs(30), 15)),
            ((Some(" 10"), Some("5s")), (secs(30), 15)),
            ((Some("-1"), Some("-5")), (secs(30), 15)),
        ];
        for ((idle, ping), (want_idle, want_ping)) in table {
            assert_eq!(
                Http2Health::from_values(idle, ping),
                Http2Health {
                    read_idle: want_idle,
                    ping_timeout: Duration::from_secs(want_ping),
                },
                "{idle:?} {ping:?}"
            );
        }
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
        let http = build_http(
            &Config::new("http://127.0.0.1"),
            tls,
            HttpVersion::Negotiated,
            None,
            &Default::default(),
        )
        .unwrap();
        let err = http
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .unwrap_err();
        assert_eq!(classify(&err), TransportErrorKind::ConnectionRefused);
    }
}
