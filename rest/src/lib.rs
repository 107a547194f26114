//! The Kubernetes REST client, the counterpart of client-go's `rest`, `transport`,
//! `tools/clientcmd` and the exec credential plugin.
//!
//! - [`Config`]: where the server is and how to authenticate, from a kubeconfig
//!   ([`Config::from_kubeconfig_file`], [`Config::from_default_kubeconfig`]), from a pod's
//!   service account ([`Config::in_cluster`]) or whichever applies ([`Config::infer`]).
//! - Kubeconfig writing, client-go's `clientcmd.ModifyConfig`: [`PathOptions`] and
//!   [`modify_config`] write an edited [`Kubeconfig`] back to the files it came from, as
//!   `kubectl config set-context` does.
//! - [`Client`]: client-go's `RESTClient`, cheap to clone, with a [`Request`] builder that
//!   decodes JSON into any `DeserializeOwned`, streams bytes, and opens typed
//!   [`WatchStream`]s.
//! - Client-side throttling ([`RateLimiter`], [`TokenBucketRateLimiter`]; QPS 5 / burst 10 by
//!   default) and retries on `Retry-After` (see [`DEFAULT_MAX_RETRIES`]).
//!
//! API errors are [`kclient_apimachinery::Error`], re-exported as [`Error`]; configuration
//! errors are [`ConfigError`]. Secrets are held in [`Secret`] and never printed.
//!
//! Environment variables read (as client-go does): `KUBECONFIG`, `HOME`,
//! `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`, `POD_NAMESPACE`, the proxy variables
//! (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), the HTTP/2 health check's
//! `HTTP2_READ_IDLE_TIMEOUT_SECONDS` and `HTTP2_PING_TIMEOUT_SECONDS`, and the environment
//! handed to exec plugins.
//!
//! Bounds on what a server or plugin can do to a client (see [`Config`]): each object, list
//! item or watch event is at most [`Config::max_object_size`] (64 MiB), a response body that
//! stops sending fails after [`Config::read_idle_timeout`] (60 s), an exec plugin run after
//! [`Config::exec_timeout`] (5 min).
//!
//! Depends on `kclient-apimachinery` only; never on `api`, the client crates or `cache`.
//!
//! ```no_run
//! use futures_util::StreamExt as _;
//! use kclient_rest::{Client, Config, Error};
//! use kclient_apimachinery::{ListOptions, WatchEvent};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(Config::infer()?)?;
//! // GET /api/v1/namespaces/default/configmaps/settings
//! let cm: serde_json::Value = client
//!     .get()
//!     .group_version("", "v1")
//!     .namespace("default")
//!     .resource("configmaps")
//!     .name("settings")
//!     .send()
//!     .await?;
//! println!("{}", cm["data"]);
//!
//! // Watch ConfigMaps from the list's resource version.
//! let rv = cm["metadata"]["resourceVersion"].as_str().unwrap_or("").to_string();
//! let mut events = client
//!     .get()
//!     .group_version("", "v1")
//!     .namespace("default")
//!     .resource("configmaps")
//!     .params(ListOptions::default().resource_version(rv).allow_watch_bookmarks(true).to_query())
//!     .watch::<serde_json::Value>()
//!     .await?;
//! while let Some(event) = events.next().await {
//!     match event {
//!         Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => println!("{}", o["metadata"]["name"]),
//!         Ok(_) => {}
//!         Err(e) if e.is_resource_expired() => break, // 410: relist
//!         Err(e) => return Err(e.into()),
//!     }
//! }
//! # let _: Option<Error> = None;
//! # Ok(()) }
//! ```

mod auth;
mod body;
mod byte_stream;
mod channel;
mod client;
mod config;
mod config_error;
mod confirm_usable;
mod env_proxy;
mod exec;
mod incluster;
mod kubeconfig;
mod kubeconfig_write;
mod line_stream;
mod metrics;
#[cfg(test)]
mod observability_tests;
pub mod port_forward;
#[cfg(feature = "prometheus")]
mod prometheus;
mod rate_limiter;
pub mod remote_command;
mod request;
mod retry;
mod round_tripper;
mod secret;
#[cfg(test)]
mod test_server;
mod tls;
mod transport;
mod upgrade;
mod url_backoff;
mod warning;
mod watch;
#[cfg(test)]
mod websocket_test_server;

pub use body::{DEFAULT_MAX_OBJECT_SIZE, DEFAULT_READ_IDLE_TIMEOUT};
pub use byte_stream::ByteStream;
pub use client::{Client, default_user_agent};
pub use config::{
    Config, ConfigOverrides, ContentType, DEFAULT_BURST, DEFAULT_QPS, ImpersonationConfig,
    ResolvedContext, TlsClientConfig,
};
pub use config_error::ConfigError;
pub use exec::{DEFAULT_EXEC_TIMEOUT, STDERR_KEPT};
pub use incluster::SERVICE_ACCOUNT_DIR;
pub use kclient_apimachinery::Error;
pub use kubeconfig::{
    AuthInfo, AuthProviderConfig, ClientConfigLoadingRules, Cluster, Context, ExecConfig,
    ExecEnvVar, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext, NamedExtension, Preferences,
};
pub use kubeconfig_write::{PathOptions, modify_config};
pub use line_stream::LineStream;
pub use metrics::{
    EXEC_CLIENT_INTERNAL_ERROR, EXEC_NO_ERROR, EXEC_PLUGIN_EXECUTION_ERROR,
    EXEC_PLUGIN_NOT_FOUND_ERROR, MetricsProvider, NO_RESPONSE_CODE, set_metrics_provider,
    url_template,
};
pub use port_forward::{PortForwardListener, PortForwarder, PortStream, PortStreamOpener};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetrics;
pub use rate_limiter::{DeadlineWaitFuture, RateLimiter, TokenBucketRateLimiter, WaitFuture};
pub use remote_command::{
    AttachedProcess, ProcessOutput, ProcessStdin, StreamOptions, TerminalResizer, TerminalSize,
};
pub use request::{Request, Verb};
pub use retry::DEFAULT_MAX_RETRIES;
pub use round_tripper::{RoundTripFuture, RoundTripper};
pub use secret::Secret;
pub use url_backoff::{BackoffManager, ENV_BACKOFF_BASE, ENV_BACKOFF_DURATION, UrlBackoff};
pub use warning::{LogWarningHandler, Warning, WarningHandler};
pub use watch::{RawWatchStream, WatchStream};
