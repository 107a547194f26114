//! `Client`: client-go's `RESTClient`, one per API server, cheap to clone (an `Arc` inside).
//!
//! A client holds the transport (one HTTP/2 connection pool), the authenticator, the rate
//! limiter and the default headers. Requests are built with [`Client::get`], [`Client::post`]
//! and friends, which return a [`Request`] builder.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use kclient_apimachinery::{Error, PatchType};

use crate::auth::{Authenticator, impersonation_headers};
use crate::config::Config;
use crate::config_error::ConfigError;
use crate::rate_limiter::{LongWaitLog, RateLimiter, TokenBucketRateLimiter};
use crate::request::{Request, Verb};
use crate::round_tripper::RoundTripper;
use crate::secret::redact_url_password;
use crate::tls::build_tls;
use crate::transport::Transport;
use crate::warning::{LogWarningHandler, WarningHandler};

/// A client for one API server. Clone it freely: clones share connections, credentials and
/// the rate limiter.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_rest::{Client, Config};
///
/// let client = Client::new(Config::infer()?)?;
/// let version: serde_json::Value = client.get().abs_path("/version").send().await?;
/// println!("{}", version["gitVersion"]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

/// Where a client's requests go: its own HTTP transport, or a [`RoundTripper`].
#[allow(
    clippy::large_enum_variant,
    reason = "one per client, inside its Arc; boxing would add an indirection to every request"
)]
pub(crate) enum Backend {
    /// The HTTP/2 connections of [`crate::transport`].
    Http(Transport),
    /// A round tripper given to [`Client::with_round_tripper`] (an in-memory fake server).
    Custom(Arc<dyn RoundTripper>),
}

pub(crate) struct Inner {
    pub(crate) backend: Backend,
    pub(crate) base: url::Url,
    /// `base` as [`Client::base_url`] shows it: without the trailing `/`, and with a password in
    /// its user info as `xxxxx`.
    base_shown: String,
    /// The `host` label of this client's request metrics ([`crate::metrics::host_label`]).
    pub(crate) host_label: Arc<str>,
    pub(crate) auth: Authenticator,
    pub(crate) user_agent: HeaderValue,
    /// The config's impersonation headers, sent with every request that does not name a user
    /// to impersonate itself (see `Request::header`).
    pub(crate) default_headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) limiter: Option<Arc<dyn RateLimiter>>,
    /// When a wait on `limiter` was last logged at INFO.
    pub(crate) long_wait_log: LongWaitLog,
    /// The initial and longest backoff of the [`crate::UrlBackoff`] each request gets, from
    /// the environment ([`crate::url_backoff`]); `None` for no backoff.
    pub(crate) env_backoff: Option<(Duration, Duration)>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) read_idle_timeout: Option<Duration>,
    pub(crate) max_object_size: usize,
    pub(crate) warning_handler: Arc<dyn WarningHandler>,
    pub(crate) namespace: String,
    pub(crate) content_type: crate::ContentType,
}

/// The default `User-Agent`: `<program>/<version> (<os>/<arch>) kclient`, where `<program>` is
/// the last component of the path the program was started with (`unknown` when there is
/// none) and `<version>` kclient's, as client-go's `DefaultKubernetesUserAgent` writes
/// `<program>/<version> (<os>/<arch>) kubernetes/<commit>`.
///
/// The program's name comes first because the API server records a write that names no field
/// manager under the `User-Agent` up to its first `/`: each program then owns its own fields
/// in `managedFields`, and the audit log tells programs apart.
pub fn default_user_agent() -> String {
    let program = std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    user_agent_for(&program)
}

/// The default `User-Agent` of `program`, with the bytes a header may not hold (control
/// characters) written as `_`.
fn user_agent_for(program: &str) -> String {
    let program: String = program
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    format!(
        "{program}/{} ({}/{}) kclient",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

impl Client {
    /// Builds a client: reads TLS material and validates credentials. Needs no runtime;
    /// requests need tokio.
    pub fn new(config: Config) -> Result<Client, ConfigError> {
        Client::build(config, None)
    }

    /// Builds a client whose requests go to `round_tripper` instead of the network, with
    /// everything else as [`Client::new`] sets it up from `config` (rate limiter, credentials,
    /// headers, retries, size limits). `config.host` still forms the URLs the round tripper
    /// sees. See [`RoundTripper`]; `kclient-testing` uses it to run every client over an
    /// in-memory API server.
    pub fn with_round_tripper(
        config: Config,
        round_tripper: Arc<dyn RoundTripper>,
    ) -> Result<Client, ConfigError> {
        Client::build(config, Some(round_tripper))
    }

    fn build(
        config: Config,
        round_tripper: Option<Arc<dyn RoundTripper>>,
    ) -> Result<Client, ConfigError> {
        let host = crate::config::normalize_host(&config.host)?;
        let base = url::Url::parse(&host).map_err(|e| {
            let shown = redact_url_password(&host);
            ConfigError::invalid(format!("invalid host {shown:?}")).with_source(e)
        })?;
        let (tls, cert_slot) = build_tls(&config.tls)?;
        let backend = match round_tripper {
            Some(rt) => Backend::Custom(rt),
            None => Backend::Http(Transport::new(&config, tls, cert_slot.clone())?),
        };
        let auth = Authenticator::new(&config, cert_slot)?;
        let ua = config.user_agent.clone().unwrap_or_else(default_user_agent);
        let user_agent = HeaderValue::from_str(&ua)
            .map_err(|_| ConfigError::invalid(format!("invalid user agent {ua:?}")))?;
        let default_headers = impersonation_headers(&config.impersonate)?;
        let limiter: Option<Arc<dyn RateLimiter>> = match &config.rate_limiter {
            Some(l) => Some(l.clone()),
            // client-go builds its bucket only for a QPS above zero (0 meaning the default):
            // a negative QPS, or one that is not a number, throttles nothing.
            None if config.qps < 0.0 || config.qps.is_nan() => None,
            None => Some(Arc::new(TokenBucketRateLimiter::new(
                config.effective_qps(),
                config.effective_burst(),
            ))),
        };
        Ok(Client {
            inner: Arc::new(Inner {
                backend,
                base_shown: redact_url_password(base.as_str().trim_end_matches('/')).into_owned(),
                // From the server URL as written, not `base`, whose parser drops a default
                // port and lowers the name's case.
                host_label: crate::metrics::host_label(&host).into(),
                base,
                auth,
                user_agent,
                default_headers,
                limiter,
                long_wait_log: LongWaitLog::default(),
                env_backoff: crate::UrlBackoff::env_config(|name| std::env::var(name).ok()),
                timeout: config.timeout,
                read_idle_timeout: config.read_idle_timeout,
                max_object_size: config.max_object_size,
                warning_handler: config
                    .warning_handler
                    .clone()
                    .unwrap_or_else(|| Arc::new(LogWarningHandler)),
                namespace: config.namespace.clone(),
                content_type: config.content_type,
            }),
        })
    }

    /// A client from [`Config::infer`] (kubeconfig, else in-cluster).
    pub fn try_default() -> Result<Client, ConfigError> {
        Client::new(Config::infer()?)
    }

    /// The server's base URL, for a log line or a message: a password in its user info (which
    /// requests send as basic auth) shows as `xxxxx`, as Go's `URL.Redacted` shows it.
    pub fn base_url(&self) -> &str {
        &self.inner.base_shown
    }

    /// The wire format typed requests prefer ([`Config::content_type`]).
    pub fn content_type(&self) -> crate::ContentType {
        self.inner.content_type
    }

    /// The default namespace of the config this client was built from.
    pub fn default_namespace(&self) -> &str {
        &self.inner.namespace
    }

    /// A request with the given verb.
    pub fn verb(&self, verb: Verb) -> Request {
        Request::new(self.clone(), verb)
    }

    /// A GET request.
    pub fn get(&self) -> Request {
        self.verb(Verb::Get)
    }

    /// A POST request.
    pub fn post(&self) -> Request {
        self.verb(Verb::Post)
    }

    /// A PUT request.
    pub fn put(&self) -> Request {
        self.verb(Verb::Put)
    }

    /// A PATCH request whose body has the given patch type's content type.
    pub fn patch(&self, patch_type: PatchType) -> Request {
        self.verb(Verb::Patch)
            .content_type(patch_type.content_type())
    }

    /// A DELETE request.
    pub fn delete(&self) -> Request {
        self.verb(Verb::Delete)
    }

    /// GETs an absolute path (`/version`, `/apis`, `/openapi/v3`) and returns the body.
    pub async fn get_raw(&self, abs_path: &str) -> Result<Bytes, Error> {
        self.get().abs_path(abs_path).bytes().await
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &redact_url_password(self.inner.base.as_str()))
            .field("namespace", &self.inner.namespace)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}

    #[test]
    fn public_types_are_send_and_sync() {
        send_sync::<Client>();
        send_sync::<Config>();
        send_sync::<ConfigError>();
        send_sync::<Error>();
        send_sync::<crate::TokenBucketRateLimiter>();
        fn stream_send<T: Send>() {}
        stream_send::<crate::WatchStream<serde_json::Value>>();
        stream_send::<crate::RawWatchStream>();
        stream_send::<crate::ByteStream>();
        stream_send::<Request>();
        // The futures can be spawned on a multi-threaded runtime.
        let client = Client::new(Config::new("https://h")).unwrap();
        send(&client.get().abs_path("/x").send::<serde_json::Value>());
        send(&client.get().abs_path("/x").watch::<serde_json::Value>());
        send(&client.get().abs_path("/x").stream());
        send(&client.get_raw("/version"));
    }

    #[test]
    fn the_default_user_agent_starts_with_the_program() {
        let version = env!("CARGO_PKG_VERSION");
        let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
        assert_eq!(
            user_agent_for("my-controller"),
            format!("my-controller/{version} ({os}/{arch}) kclient")
        );
        // A header cannot hold control characters.
        let odd = user_agent_for("a\tb\nc\u{7f}");
        assert!(odd.starts_with("a_b_c_/"), "{odd}");
        assert!(HeaderValue::from_str(&odd).is_ok());
        // This test binary's own name, as cargo built it.
        let ua = default_user_agent();
        let program = ua.split('/').next().unwrap();
        assert!(
            !program.is_empty() && program != "kclient" && program != "unknown",
            "{ua}"
        );
    }
}
