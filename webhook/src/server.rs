//! [`WebhookServer`]: controller-runtime's `webhook.Server`, the HTTPS server the API server
//! calls a webhook on, with its `admission.Webhook` handling of each call.
//!
//! - TLS from a PEM certificate chain and key in files (controller-runtime's `tls.crt` and
//!   `tls.key` in its cert dir), read again when they change (checked every
//!   [`DEFAULT_CERT_CHECK_PERIOD`], as its `certwatcher` polls), so a rotated certificate is
//!   served without a restart; a pair that does not load keeps the one before, with an error
//!   logged. HTTP/1.1, which is what the API server's webhook client speaks without ALPN `h2`.
//! - Each path has its [`Handler`] or [`Converter`]; another path is a 404.
//! - An admission call is answered as controller-runtime answers it: always HTTP 200 with an
//!   `AdmissionReview` in the version of the request, whose response refuses a call it cannot
//!   read: an empty body (400), a body over [`MAX_REQUEST_SIZE`] (413; a conversion body may
//!   be up to [`DEFAULT_MAX_CONVERSION_REQUEST_SIZE`], a whole list), a `Content-Type` other
//!   than `application/json` (400), a body that is not a review with a request (400). A handler
//!   that panics is answered with 500 (`panic: ... [recovered]`) and the server goes on.
//! - A conversion call too: a `ConversionReview` back with the objects converted or a `Failure`
//!   (a converter that panics: "internal error occurred during conversion"), and HTTP 400 for a
//!   body that is not a review with a request.
//! - A connection that stalls in its TLS handshake or in a request's headers for
//!   [`DEFAULT_HEADER_TIMEOUT`] is closed (controller-runtime's `ReadHeaderTimeout`), and
//!   headers are capped at 1 MiB.
//! - Shutdown ([`BoundWebhookServer::run`]'s token): the listener closes at once, and calls in
//!   flight are answered before their connections close, within [`DEFAULT_SHUTDOWN_TIMEOUT`]
//!   (a client that never finishes its request holds no shutdown for ever).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use kclient_apimachinery::Resource;
use kclient_flowcontrol::AcceptBackoff;
use parking_lot::RwLock;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::conversion::{ConversionReview, Converter, convert_all};
use crate::error::Error;
use crate::handler::{Denial, Handler, Validation, defaulting, validating};
use crate::paths::{mutate_path, validate_path};
use crate::review::{AdmissionResponse, AdmissionReview};

/// What answers the calls of one path.
#[derive(Clone)]
enum Route {
    Admission(Arc<dyn Handler>),
    Conversion(Arc<dyn Converter>),
}

type Routes = BTreeMap<String, Route>;

/// The largest admission request body read (controller-runtime's `maxRequestSize`, 7 MiB: two
/// objects of at most 3 MiB, the old and the new, and the rest of the review).
pub const MAX_REQUEST_SIZE: usize = 7 * 1024 * 1024;

/// The largest conversion request body read by default (see
/// [`WebhookServer::max_conversion_request_size`]): the API server converts a whole list in
/// one call, so a page of large custom resources is far over [`MAX_REQUEST_SIZE`].
/// controller-runtime reads conversion bodies without a limit.
pub const DEFAULT_MAX_CONVERSION_REQUEST_SIZE: usize = 256 * 1024 * 1024;

/// How long a stopping server waits for the calls in flight before it closes their
/// connections (controller-runtime's server shuts down within a minute).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the certificate files are checked for a change (controller-runtime's certwatcher
/// polls every 10 seconds).
pub const DEFAULT_CERT_CHECK_PERIOD: Duration = Duration::from_secs(10);

/// How long a connection may take for its TLS handshake, and then for each request's headers,
/// before it is closed (controller-runtime's server: `ReadHeaderTimeout` of 32 seconds): a
/// client that stalls holds no connection for ever.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(32);

/// The largest buffer of a connection's request headers (Go's server: `MaxHeaderBytes`, 1 MiB).
const MAX_HEADER_BUFFER: usize = 1 << 20;

/// The port controller-runtime's webhook server listens on by default.
pub const DEFAULT_PORT: u16 = 9443;

/// The HTTPS server of admission webhooks (controller-runtime's `webhook.Server`): register a
/// [`Handler`] per path, [`bind`](WebhookServer::bind), then [`run`](BoundWebhookServer::run).
///
/// ```no_run
/// # async fn run() -> Result<(), kclient_webhook::Error> {
/// use kclient_api::core::v1::ConfigMap;
/// use kclient_apimachinery::Object as _;
/// use kclient_webhook::{Denial, Validation, WebhookServer, validating};
/// use tokio_util::sync::CancellationToken;
///
/// let server = WebhookServer::new("/certs/tls.crt", "/certs/tls.key")
///     .handle(
///         "/validate-configmaps",
///         validating(|v: Validation<ConfigMap>| async move {
///             match v {
///                 Validation::Delete(cm) if cm.labels().get("keep").is_some() => {
///                     Err(Denial::new("this ConfigMap is kept"))
///                 }
///                 _ => Ok(vec![]),
///             }
///         }),
///     )
///     .bind()
///     .await?;
/// println!("serving on {}", server.local_addr());
/// server.run(CancellationToken::new()).await;
/// # Ok(()) }
/// ```
pub struct WebhookServer {
    address: SocketAddr,
    cert_file: PathBuf,
    key_file: PathBuf,
    cert_check_period: Duration,
    header_timeout: Duration,
    max_conversion_request_size: usize,
    shutdown_timeout: Duration,
    routes: Routes,
}

impl fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookServer")
            .field("address", &self.address)
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .field("paths", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl WebhookServer {
    /// A server on every address at port [`DEFAULT_PORT`], serving the certificate chain in
    /// `cert_file` with the key in `key_file` (PEM; PKCS#8, PKCS#1 or SEC1 keys).
    pub fn new(cert_file: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> Self {
        WebhookServer {
            address: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            cert_file: cert_file.into(),
            key_file: key_file.into(),
            cert_check_period: DEFAULT_CERT_CHECK_PERIOD,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            max_conversion_request_size: DEFAULT_MAX_CONVERSION_REQUEST_SIZE,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            routes: BTreeMap::new(),
        }
    }

    /// Listens on `address` instead (port 0: a free port; see
    /// [`BoundWebhookServer::local_addr`]).
    pub fn address(mut self, address: SocketAddr) -> Self {
        self.address = address;
        self
    }

    /// Checks the certificate files for a change this often instead of every
    /// [`DEFAULT_CERT_CHECK_PERIOD`].
    pub fn cert_check_period(mut self, period: Duration) -> Self {
        self.cert_check_period = period;
        self
    }

    /// Closes a connection whose TLS handshake, or a request's headers, take longer than
    /// `timeout` instead of [`DEFAULT_HEADER_TIMEOUT`].
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// Reads conversion request bodies up to `bytes` instead of
    /// [`DEFAULT_MAX_CONVERSION_REQUEST_SIZE`]; a larger one is answered 413, and the API
    /// server's read that asked for the conversion fails.
    pub fn max_conversion_request_size(mut self, bytes: usize) -> Self {
        self.max_conversion_request_size = bytes;
        self
    }

    /// Waits this long, instead of [`DEFAULT_SHUTDOWN_TIMEOUT`], for the calls in flight when
    /// [`run`](BoundWebhookServer::run)'s token is cancelled, then closes their connections.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Answers the admission calls to `path` (`/validate--v1-configmap`, say: see
    /// [`validate_path`](crate::validate_path)) with `handler`; a
    /// path registered again takes the later handler.
    pub fn handle(mut self, path: &str, handler: impl Handler) -> Self {
        self.routes
            .insert(path.to_owned(), Route::Admission(Arc::new(handler)));
        self
    }

    /// Validates `K` at [`validate_path::<K>()`](crate::validate_path) with `validate` (see
    /// [`validating`](crate::validating)): controller-runtime's builder
    /// `NewWebhookManagedBy(mgr).For(&K{}).WithValidator(v)`, at the path its manifests name.
    pub fn with_validator<K, F, Fut>(self, validate: F) -> Self
    where
        K: Resource + DeserializeOwned + Send + 'static,
        F: Fn(Validation<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, Denial>> + Send + 'static,
    {
        self.handle(&validate_path::<K>(), validating(validate))
    }

    /// Defaults `K` at [`mutate_path::<K>()`](crate::mutate_path) with `default` (see
    /// [`defaulting`](crate::defaulting)): controller-runtime's builder
    /// `NewWebhookManagedBy(mgr).For(&K{}).WithDefaulter(d)`, at the path its manifests name.
    pub fn with_defaulter<K, F, Fut>(self, default: F) -> Self
    where
        K: Resource + Serialize + DeserializeOwned + Send + 'static,
        F: Fn(K) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<K, Denial>> + Send + 'static,
    {
        self.handle(&mutate_path::<K>(), defaulting(default))
    }

    /// Answers the CRD conversion calls to `path` (`/convert`, as controller-runtime serves
    /// them) with `converter`: a `ConversionReview` whose objects are converted one by one (see
    /// [`Converter`]). As controller-runtime's, a body that is not a review with a request is
    /// answered with HTTP 400, and a converter that panics fails the review.
    pub fn handle_conversion(mut self, path: &str, converter: impl Converter) -> Self {
        self.routes
            .insert(path.to_owned(), Route::Conversion(Arc::new(converter)));
        self
    }

    /// Loads the certificate and key and listens; fails when they do not load or the address
    /// cannot be listened on.
    pub async fn bind(self) -> Result<BoundWebhookServer, Error> {
        let provider = provider()?;
        let files = CertFiles {
            cert: self.cert_file,
            key: self.key_file,
        };
        let (loaded, key) = files.load(&provider)?;
        let certs = Arc::new(ReloadingCert {
            current: RwLock::new((loaded, key)),
            files,
            provider: provider.clone(),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::tls(format!("TLS versions: {e}")))?
            .with_no_client_auth()
            .with_cert_resolver(certs.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let listener = TcpListener::bind(self.address)
            .await
            .map_err(|e| Error::bind(format!("listening on {}: {e}", self.address)))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| Error::bind(format!("listening on {}: {e}", self.address)))?;
        Ok(BoundWebhookServer {
            listener,
            local_addr,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            certs,
            cert_check_period: self.cert_check_period,
            header_timeout: self.header_timeout,
            max_conversion_request_size: self.max_conversion_request_size,
            shutdown_timeout: self.shutdown_timeout,
            routes: Arc::new(self.routes),
        })
    }
}

/// A [`WebhookServer`] listening, to [`run`](BoundWebhookServer::run).
pub struct BoundWebhookServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    acceptor: TlsAcceptor,
    certs: Arc<ReloadingCert>,
    cert_check_period: Duration,
    header_timeout: Duration,
    max_conversion_request_size: usize,
    shutdown_timeout: Duration,
    routes: Arc<Routes>,
}

impl fmt::Debug for BoundWebhookServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundWebhookServer")
            .field("local_addr", &self.local_addr)
            .field("paths", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl BoundWebhookServer {
    /// The address listened on (with the port picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` is cancelled: then stops listening, answers the calls in
    /// flight and returns once their connections have closed, or after the shutdown timeout
    /// ([`WebhookServer::shutdown_timeout`]), when the connections still open are closed.
    pub async fn run(self, shutdown: CancellationToken) {
        let mut connections = JoinSet::new();
        let mut check = tokio::time::interval(self.cert_check_period);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        check.tick().await;
        let mut accept_backoff = AcceptBackoff::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = check.tick() => {
                    let certs = self.certs.clone();
                    // Reads two small files: off the runtime's threads all the same.
                    let _ = tokio::task::spawn_blocking(move || certs.reload_if_changed()).await;
                }
                accepted = self.listener.accept() => {
                    let (tcp, peer) = match accepted {
                        Ok(accepted) => {
                            accept_backoff.accepted();
                            accepted
                        }
                        Err(e) => {
                            // A connection gone before it was accepted: at once. The listener's
                            // own failure (no file descriptor left): after a wait, not a spin.
                            let Some(wait) = accept_backoff.failed(&e) else { continue };
                            tracing::error!(error = %e, retry_in = ?wait, "webhook: accepting a connection failed");
                            tokio::select! {
                                () = tokio::time::sleep(wait) => {}
                                () = shutdown.cancelled() => break,
                            }
                            continue;
                        }
                    };
                    let acceptor = self.acceptor.clone();
                    let limits = Limits {
                        routes: self.routes.clone(),
                        header_timeout: self.header_timeout,
                        max_conversion_request_size: self.max_conversion_request_size,
                    };
                    let shutdown = shutdown.clone();
                    connections.spawn(serve_connection(acceptor, tcp, peer, limits, shutdown));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(self.listener);
        let finished = tokio::time::timeout(self.shutdown_timeout, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if finished.is_err() {
            tracing::warn!(
                connections = connections.len(),
                timeout = ?self.shutdown_timeout,
                "webhook: calls still in flight at the shutdown timeout; closing their connections"
            );
            connections.shutdown().await;
        }
    }
}

/// What each connection serves, and the limits it applies.
#[derive(Clone)]
struct Limits {
    routes: Arc<Routes>,
    header_timeout: Duration,
    max_conversion_request_size: usize,
}

/// One connection: TLS, then HTTP/1.1 calls until the client closes it, or until shutdown,
/// which lets the call in flight finish.
async fn serve_connection(
    acceptor: TlsAcceptor,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    limits: Limits,
    shutdown: CancellationToken,
) {
    let header_timeout = limits.header_timeout;
    let tls = tokio::select! {
        tls = tokio::time::timeout(header_timeout, acceptor.accept(tcp)) => match tls {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => {
                tracing::debug!(%peer, error = %e, "webhook: TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!(%peer, "webhook: TLS handshake timed out");
                return;
            }
        },
        () = shutdown.cancelled() => return,
    };
    let service = service_fn(move |request| {
        let limits = limits.clone();
        async move { Ok::<_, std::convert::Infallible>(answer(request, &limits).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_HEADER_BUFFER)
        .serve_connection(TokioIo::new(tls), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "webhook: connection ended with an error");
            }
        }
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// The HTTP answer to one call.
async fn answer(request: Request<Incoming>, limits: &Limits) -> Response<Full<Bytes>> {
    let Some(route) = limits.routes.get(request.uri().path()).cloned() else {
        return plain(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let content_type = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let limit = match route {
        Route::Admission(_) => MAX_REQUEST_SIZE,
        Route::Conversion(_) => limits.max_conversion_request_size,
    };
    let body = Limited::new(request.into_body(), limit)
        .collect()
        .await
        .map(|body| body.to_bytes())
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                (
                    413,
                    format!("request entity is too large; limit is {limit} bytes"),
                )
            } else {
                (400, format!("reading the request body: {e}"))
            }
        });
    match route {
        Route::Admission(handler) => admit(&*handler, content_type, body).await,
        Route::Conversion(converter) => convert(converter, body).await,
    }
}

/// The answer to an admission call (controller-runtime's `admission.Webhook.ServeHTTP`).
async fn admit(
    handler: &dyn Handler,
    content_type: Option<String>,
    body: Result<Bytes, (u16, String)>,
) -> Response<Full<Bytes>> {
    let refuse = |code: u16, message: String| {
        review(
            &AdmissionReview::default(),
            AdmissionResponse::errored(code, message),
        )
    };
    let body = match body {
        Ok(body) => body,
        Err((code, message)) => return refuse(code, message),
    };
    if body.is_empty() {
        return refuse(400, "request body is empty".to_owned());
    }
    if content_type.as_deref() != Some("application/json") {
        return refuse(
            400,
            format!(
                "contentType={}, expected application/json",
                content_type.unwrap_or_default()
            ),
        );
    }
    let mut incoming: AdmissionReview = match serde_json::from_slice(&body) {
        Ok(incoming) => incoming,
        Err(e) => return refuse(400, format!("decoding the AdmissionReview: {e}")),
    };
    // Taken, not copied: the handler gets the objects, the answer needs only the uid.
    let Some(admission) = incoming.request.take() else {
        return refuse(400, "the AdmissionReview has no request".to_owned());
    };
    let uid = admission.uid.clone();
    // The call of `handle` too, not only the future it returns: a handler may panic before
    // its first `.await` (a validator's function runs at once).
    let mut response = match AssertUnwindSafe(async move { handler.handle(admission).await })
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(panic) => {
            let message = kclient_flowcontrol::panic_message(&*panic);
            tracing::error!(panic = %message, "webhook: the handler panicked");
            AdmissionResponse::errored(500, format!("panic: {message} [recovered]"))
        }
    };
    response.uid = uid;
    review(&incoming, response)
}

/// The answer to a conversion call (controller-runtime's conversion webhook's `ServeHTTP`).
async fn convert(
    converter: Arc<dyn Converter>,
    body: Result<Bytes, (u16, String)>,
) -> Response<Full<Bytes>> {
    let body = match body {
        Ok(body) => body,
        Err((413, message)) => return plain(StatusCode::PAYLOAD_TOO_LARGE, &message),
        Err((_, message)) => return plain(StatusCode::BAD_REQUEST, &message),
    };
    let mut review: ConversionReview = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(e) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("decoding the ConversionReview: {e}"),
            );
        }
    };
    let Some(request) = review.request.take() else {
        return plain(
            StatusCode::BAD_REQUEST,
            "the ConversionReview has no request",
        );
    };
    // Conversions are plain computations on every object of a list: off the runtime's threads.
    let converted = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(AssertUnwindSafe(|| convert_all(&*converter, &request))).map_err(
            |panic| {
                let message = kclient_flowcontrol::panic_message(&*panic).to_owned();
                tracing::error!(panic = %message, "webhook: the converter panicked");
                request.uid.clone()
            },
        )
    })
    .await;
    let response = match converted {
        Ok(Ok(response)) => response,
        Ok(Err(uid)) => {
            crate::conversion::failure(&uid, "internal error occurred during conversion".to_owned())
        }
        Err(e) => crate::conversion::failure("", format!("the conversion did not finish: {e}")),
    };
    review.response = Some(response);
    json_ok(&review)
}

/// A 200 carrying the review that answers `incoming` with `response`.
fn review(incoming: &AdmissionReview, response: AdmissionResponse) -> Response<Full<Bytes>> {
    json_ok(&incoming.answer(response))
}

/// A 200 carrying `body` as JSON.
fn json_ok<T: serde::Serialize>(body: &T) -> Response<Full<Bytes>> {
    match serde_json::to_vec(body) {
        Ok(body) => Response::builder()
            .status(StatusCode::OK)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "encoding the answer")),
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("encoding the answer: {e}"),
        ),
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response
}

/// The certificate and key files.
struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
}

impl CertFiles {
    /// Reads and loads the pair; also returns the bytes read, to tell a change later.
    fn load(&self, provider: &CryptoProvider) -> Result<(Arc<CertifiedKey>, Vec<u8>), Error> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|e| Error::tls(format!("reading {}: {e}", path.display())))
        };
        let (cert_pem, key_pem) = (read(&self.cert)?, read(&self.key)?);
        let certs = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                Error::tls(format!(
                    "reading the certificates in {}: {e}",
                    self.cert.display()
                ))
            })?;
        if certs.is_empty() {
            return Err(Error::tls(format!(
                "{} holds no PEM certificate",
                self.cert.display()
            )));
        }
        // The key's own error names the file only: never its content.
        let key = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|_| Error::tls(format!("{} holds no PEM private key", self.key.display())))?;
        let key = CertifiedKey::from_der(certs, key, provider).map_err(|e| {
            Error::tls(format!(
                "the key in {} does not fit the certificate in {}: {e}",
                self.key.display(),
                self.cert.display()
            ))
        })?;
        let mut seen = cert_pem;
        seen.extend_from_slice(&key_pem);
        Ok((Arc::new(key), seen))
    }
}

/// The served certificate, loaded again when its files change.
struct ReloadingCert {
    /// The pair served, and the bytes of the files it was loaded from.
    current: RwLock<(Arc<CertifiedKey>, Vec<u8>)>,
    files: CertFiles,
    provider: Arc<CryptoProvider>,
}

impl ReloadingCert {
    /// Loads the files again if their bytes changed; a pair that does not load is logged and
    /// the one before stays.
    fn reload_if_changed(&self) {
        let (Ok(cert), Ok(key)) = (
            std::fs::read(&self.files.cert),
            std::fs::read(&self.files.key),
        ) else {
            tracing::error!(cert = %self.files.cert.display(), key = %self.files.key.display(), "webhook: the certificate files cannot be read; serving the one loaded before");
            return;
        };
        let mut seen = cert;
        seen.extend_from_slice(&key);
        if self.current.read().1 == seen {
            return;
        }
        match self.files.load(&self.provider) {
            Ok(loaded) => {
                tracing::info!(cert = %self.files.cert.display(), "webhook: serving the new certificate");
                *self.current.write() = loaded;
            }
            Err(e) => {
                tracing::error!(error = %e, "webhook: the new certificate does not load; serving the one loaded before");
            }
        }
    }
}

impl fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("cert", &self.files.cert)
            .field("key", &self.files.key)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().0.clone())
    }
}

/// The crypto provider: the feature's (`rustls-ring` or `rustls-aws-lc`, which wins), else the
/// process's default.
#[cfg(feature = "rustls-aws-lc")]
fn provider() -> Result<Arc<CryptoProvider>, Error> {
    Ok(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

/// The crypto provider: the feature's (`rustls-ring` or `rustls-aws-lc`, which wins), else the
/// process's default.
#[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc")))]
fn provider() -> Result<Arc<CryptoProvider>, Error> {
    Ok(Arc::new(rustls::crypto::ring::default_provider()))
}

/// The crypto provider: the feature's (`rustls-ring` or `rustls-aws-lc`, which wins), else the
/// process's default.
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc")))]
fn provider() -> Result<Arc<CryptoProvider>, Error> {
    CryptoProvider::get_default().cloned().ok_or_else(|| {
        Error::tls(
            "no TLS crypto provider: turn on kclient-webhook's `rustls-ring` or `rustls-aws-lc` \
             feature, or install one with rustls's CryptoProvider::install_default",
        )
    })
}
