//! `Config`: everything a [`Client`](crate::Client) needs to reach one API server, the
//! counterpart of client-go's `rest.Config`, and its constructors (kubeconfig, in-cluster, infer).
//!
//! Selecting from a kubeconfig follows client-go's `DirectClientConfig`: the context is the
//! override's, else `current-context`; the cluster, user and namespace come from the context
//! unless overridden; the namespace defaults to `default`. A context, cluster or user that is
//! named but missing is an error naming it.
//!
//! **Credentials go over TLS only.** As client-go's `DirectClientConfig.ClientConfig` reads the
//! user's credentials only when `restclient.IsConfigTransportTLS` (the server URL is `https`),
//! a kubeconfig whose server is plain `http://` gives a [`Config`] without any of the user's
//! credentials: no token, token file, username and password, exec plugin, client certificate or
//! client key (a client certificate is only ever presented in a TLS handshake, so it is left out
//! too, as client-go leaves it out). Impersonation (`as`, `as-uid`, `as-groups`,
//! `as-user-extra`) is not a credential and is kept, as in client-go. This holds for every
//! kubeconfig load: [`Config::from_kubeconfig`] and everything built on it
//! ([`Config::from_kubeconfig_file`], [`Config::from_default_kubeconfig`], [`Config::infer`],
//! [`Config::build_config_from_flags`]). A server written without a scheme (`host:port`) is
//! read as `https://host:port`. Credentials set on a [`Config`] by hand are sent whatever the
//! scheme.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::body::{DEFAULT_MAX_OBJECT_SIZE, DEFAULT_READ_IDLE_TIMEOUT};
use crate::config_error::{ConfigError, Kind};
use crate::exec::DEFAULT_EXEC_TIMEOUT;
use crate::kubeconfig::{
    AuthInfo, ClientConfigLoadingRules, Cluster, EXEC_CLUSTER_EXTENSION, ExecConfig, Kubeconfig,
    NamedCluster,
};
use crate::rate_limiter::RateLimiter;
use crate::secret::{Secret, redact_url_password};
use crate::warning::WarningHandler;

/// client-go's `DefaultQPS`: used when [`Config::qps`] is 0.
pub const DEFAULT_QPS: f32 = 5.0;
/// client-go's `DefaultBurst`: used when [`Config::burst`] is 0.
pub const DEFAULT_BURST: i32 = 10;

/// Connection settings for one API server: URL, TLS, credentials, throttling, timeouts.
///
/// Build one with [`Config::new`], [`Config::from_kubeconfig_file`], [`Config::in_cluster`] or
/// [`Config::infer`], adjust the public fields, then pass it to
/// [`Client::new`](crate::Client::new). `Debug` never prints secrets.
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    /// The server's base URL, `https://host:port` (a path prefix is kept).
    pub host: String,
    /// The default namespace of the selected context (`default` when none is set).
    pub namespace: String,
    /// TLS settings.
    pub tls: TlsClientConfig,
    /// A bearer token. A [`Config::bearer_token_file`] takes precedence when both are set.
    pub bearer_token: Option<Secret<String>>,
    /// A file holding a bearer token, re-read at most once a minute.
    pub bearer_token_file: Option<PathBuf>,
    /// Basic-auth user name. Basic auth is used when it is set and not empty, as client-go's
    /// `HasBasicAuth`; it may not be combined with a token or token file.
    pub username: Option<String>,
    /// Basic-auth password, sent with [`Config::username`]. Without a username it is ignored,
    /// as in client-go: it does not count as a credential.
    pub password: Option<Secret<String>>,
    /// An exec credential plugin. As in client-go, it runs only when the config has no other
    /// credential: no token or token file, no username (a password without one is no
    /// credential), and no client certificate with its key (its settings are still checked by [`Client::new`](crate::Client::new)).
    pub exec_provider: Option<ExecConfig>,
    /// How long one run of the exec plugin may take before it is killed and the requests
    /// waiting for it fail ([`DEFAULT_EXEC_TIMEOUT`], five minutes, by default). client-go has
    /// no limit; a plugin that never returns would hang every request.
    pub exec_timeout: Duration,
    /// Who to impersonate.
    pub impersonate: ImpersonationConfig,
    /// The `User-Agent`; [`default_user_agent`](crate::default_user_agent)'s
    /// `<program>/<version> (<os>/<arch>) kclient` when unset. The server records a write
    /// without a field manager under the part before the first `/`.
    pub user_agent: Option<String>,
    /// Queries per second of the default token-bucket limiter: 0 means [`DEFAULT_QPS`], a
    /// negative value (or NaN) disables client-side throttling.
    pub qps: f32,
    /// Burst of the default limiter: 0 means [`DEFAULT_BURST`].
    pub burst: i32,
    /// A limiter replacing the QPS/burst token bucket.
    pub rate_limiter: Option<Arc<dyn RateLimiter>>,
    /// The timeout of each request: a deadline over the whole request, its retries and their
    /// waits included (for streams and watches: until the response headers), also sent as
    /// `?timeout=` as client-go sends it; see [`Request::timeout`](crate::Request::timeout).
    /// Zero, or a timeout too long for the clock to represent, is none.
    pub timeout: Option<Duration>,
    /// How long the body of a non-streaming response may send nothing before the request
    /// fails ([`DEFAULT_READ_IDLE_TIMEOUT`], 60 s, by default; `None` waits forever, as
    /// client-go does). It bounds the body of an error response too, watches' and streams'
    /// included. The events of a watch or the bytes of a stream
    /// ([`Request::stream`](crate::Request::stream)) are not bounded by it: a quiet watch is
    /// normal.
    ///
    /// What finds a stalled or dead connection, and how fast:
    /// - this timeout: a server or proxy that keeps a connection open and stops sending a
    ///   response body, over HTTP/1.1 or HTTP/2, after 60 s;
    /// - HTTP/2 pings (client-go's `HTTP2_READ_IDLE_TIMEOUT_SECONDS`, 30 s, and
    ///   `HTTP2_PING_TIMEOUT_SECONDS`, 15 s, read from the environment as client-go reads them):
    ///   a connection on which nothing arrives for 30 s is pinged and closed if the ping is not
    ///   answered within 15 s, so a dead or frozen HTTP/2 connection, watches included, fails
    ///   within about 45 s; `HTTP2_READ_IDLE_TIMEOUT_SECONDS=0` turns the pings off;
    /// - TCP keep-alive (as client-go's dialer: probes after 30 s idle, every 30 s, 9 of
    ///   them): a peer that is gone (host down, connection dropped by a NAT or firewall) on an
    ///   idle connection, within about 5 minutes, whatever the protocol;
    /// - nothing finds an HTTP/1.1 watch whose server or proxy keeps the connection open and
    ///   stops sending, as in client-go: it ends when the server's `timeoutSeconds` elapses
    ///   (the reflector asks for 5 to 10 minutes).
    pub read_idle_timeout: Option<Duration>,
    /// The largest object accepted, in bytes ([`DEFAULT_MAX_OBJECT_SIZE`], 64 MiB, by
    /// default): a watch event (one line) longer than this, a single object's body, or one
    /// element of a list's `items`, is refused with an error naming this setting, as soon as
    /// that many bytes of it have arrived. A list as a whole is never capped. Bodies read as
    /// bytes ([`Request::bytes`](crate::Request::bytes), logs) are not capped.
    pub max_object_size: usize,
    /// A proxy URL (`http`, `https`, `socks5`); when unset the `HTTPS_PROXY`/`HTTP_PROXY`/
    /// `NO_PROXY` environment variables apply, read with the rules of Go's
    /// `ProxyFromEnvironment` (no `ALL_PROXY`, never for `localhost` or a loopback address,
    /// `NO_PROXY` entries with ports and CIDR blocks; see `rest/src/env_proxy.rs`). A `socks5`
    /// proxy, here or in the environment, is given the server's name to resolve, as Go's
    /// SOCKS5 dialer does (curl's `socks5h`).
    pub proxy_url: Option<String>,
    /// Ask the server not to compress responses. By default requests carry
    /// `Accept-Encoding: gzip`, so the apiserver compresses large responses (over 128 KB, such
    /// as big LISTs), which are decompressed transparently, as client-go's transport does; on a
    /// fast network the compression may cost more CPU than it saves time.
    pub disable_compression: bool,
    /// Receives `Warning` headers; when unset they are logged with `tracing` at warn level.
    pub warning_handler: Option<Arc<dyn WarningHandler>>,
    /// The wire format typed clients and informers use for built-in kinds
    /// ([`ContentType::Protobuf`] by default, as client-go's clientset). Setting
    /// [`ContentType::Json`] forces JSON everywhere (client-go's `ContentType:
    /// "application/json"`). Protobuf is only spoken with the `protobuf` feature, and only for
    /// kinds that have a protobuf form; see [`ContentType`].
    pub content_type: ContentType,
}

/// The wire format of typed requests, client-go's `rest.Config.ContentType`.
///
/// Which request uses which format:
/// - reads (get, list, watch) of a built-in kind through a typed client or informer ask for
///   `application/vnd.kubernetes.protobuf, application/json`, and create and update send
///   protobuf bodies, when this is [`ContentType::Protobuf`] and the `protobuf` feature is on;
/// - patches and server-side apply send JSON bodies (their responses may be protobuf);
/// - metadata-only requests (the metadata client and informers) ask for
///   `PartialObjectMetadata` in protobuf first;
/// - custom resources (the server answers them in JSON), the dynamic client and discovery are
///   JSON;
/// - every response is decoded by its own `Content-Type`, so a server that answers JSON to a
///   protobuf request (an aggregated API server, for example) still works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentType {
    /// Protobuf for kinds that have a protobuf form, JSON for the others (the default).
    #[default]
    Protobuf,
    /// JSON for everything.
    Json,
}

/// TLS settings, client-go's `TLSClientConfig`. Data takes precedence over the matching file.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TlsClientConfig {
    /// Skip server certificate verification. Only set when a kubeconfig says so explicitly.
    pub insecure: bool,
    /// The name to verify the server certificate against instead of the URL's host.
    pub server_name: Option<String>,
    /// PEM CA certificates file.
    pub ca_file: Option<PathBuf>,
    /// PEM CA certificates.
    pub ca_data: Option<Vec<u8>>,
    /// PEM client certificate file.
    pub cert_file: Option<PathBuf>,
    /// PEM client certificate.
    pub cert_data: Option<Vec<u8>>,
    /// PEM private key file.
    pub key_file: Option<PathBuf>,
    /// PEM private key.
    pub key_data: Option<Secret<Vec<u8>>>,
}

impl TlsClientConfig {
    /// Skip server certificate verification. Only set when a kubeconfig says so explicitly.
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// The name to verify the server certificate against instead of the URL's host.
    pub fn server_name(mut self, server_name: impl Into<String>) -> Self {
        self.server_name = Some(server_name.into());
        self
    }

    /// PEM CA certificates file.
    pub fn ca_file(mut self, ca_file: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(ca_file.into());
        self
    }

    /// PEM CA certificates.
    pub fn ca_data(mut self, ca_data: Vec<u8>) -> Self {
        self.ca_data = Some(ca_data);
        self
    }

    /// PEM client certificate file.
    pub fn cert_file(mut self, cert_file: impl Into<PathBuf>) -> Self {
        self.cert_file = Some(cert_file.into());
        self
    }

    /// PEM client certificate.
    pub fn cert_data(mut self, cert_data: Vec<u8>) -> Self {
        self.cert_data = Some(cert_data);
        self
    }

    /// PEM private key file.
    pub fn key_file(mut self, key_file: impl Into<PathBuf>) -> Self {
        self.key_file = Some(key_file.into());
        self
    }

    /// PEM private key.
    pub fn key_data(mut self, key_data: Secret<Vec<u8>>) -> Self {
        self.key_data = Some(key_data);
        self
    }
}

/// Impersonation headers (`Impersonate-User`, `-Uid`, `-Group`, `-Extra-*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImpersonationConfig {
    /// The user to act as.
    pub user_name: Option<String>,
    /// The UID to act as.
    pub uid: Option<String>,
    /// The groups to act as.
    pub groups: Vec<String>,
    /// Extra user fields.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl ImpersonationConfig {
    /// The user to act as.
    pub fn user_name(mut self, user_name: impl Into<String>) -> Self {
        self.user_name = Some(user_name.into());
        self
    }

    /// The UID to act as.
    pub fn uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = Some(uid.into());
        self
    }

    /// The groups to act as.
    pub fn groups(mut self, groups: Vec<String>) -> Self {
        self.groups = groups;
        self
    }

    /// Extra user fields.
    pub fn extra(mut self, extra: BTreeMap<String, Vec<String>>) -> Self {
        self.extra = extra;
        self
    }
}

/// Overrides applied on top of a kubeconfig, like kubectl's `--context`, `--cluster`, `--user`
/// and `--namespace`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// Use this context instead of `current-context`.
    pub context: Option<String>,
    /// Use this cluster instead of the context's.
    pub cluster: Option<String>,
    /// Use this user instead of the context's.
    pub user: Option<String>,
    /// Use this namespace instead of the context's.
    pub namespace: Option<String>,
}

/// The context, cluster and user a kubeconfig resolves to after overrides.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResolvedContext {
    /// The context's name (empty when none was selected).
    pub context_name: String,
    /// The cluster's name.
    pub cluster_name: String,
    /// The user's name (empty for anonymous).
    pub user_name: String,
    /// The namespace (`default` when none is set).
    pub namespace: String,
    /// The cluster's settings.
    pub cluster: Cluster,
    /// The user's settings.
    pub auth_info: AuthInfo,
}

impl Kubeconfig {
    /// Selects the context, cluster and user, applying `overrides`.
    pub fn resolve(&self, overrides: &ConfigOverrides) -> Result<ResolvedContext, ConfigError> {
        let context_name = overrides
            .context
            .clone()
            .or_else(|| self.current_context.clone())
            .unwrap_or_default();
        let context = if context_name.is_empty() {
            None
        } else {
            Some(self.context(&context_name).ok_or_else(|| {
                ConfigError::new(
                    Kind::NotFound,
                    format!("context {context_name:?} not found in kubeconfig"),
                )
            })?)
        };
        let cluster_name = overrides
            .cluster
            .clone()
            .or_else(|| context.map(|c| c.cluster.clone()))
            .unwrap_or_default();
        if cluster_name.is_empty() {
            return Err(ConfigError::new(
                Kind::Invalid,
                "invalid configuration: no configuration has been provided (no context or cluster selected)",
            ));
        }
        let cluster = self.cluster(&cluster_name).ok_or_else(|| {
            ConfigError::new(
                Kind::NotFound,
                format!(
                    "cluster {cluster_name:?} (context {context_name:?}) not found in kubeconfig"
                ),
            )
        })?;
        let user_name = overrides
            .user
            .clone()
            .or_else(|| context.map(|c| c.user.clone()))
            .unwrap_or_default();
        let auth_info = if user_name.is_empty() {
            AuthInfo::default()
        } else {
            self.auth_info(&user_name)
                .ok_or_else(|| {
                    ConfigError::new(
                        Kind::NotFound,
                        format!(
                            "user {user_name:?} (context {context_name:?}) not found in kubeconfig"
                        ),
                    )
                })?
                .clone()
        };
        let namespace = overrides
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .or_else(|| {
                context
                    .and_then(|c| c.namespace.clone())
                    .filter(|n| !n.is_empty())
            })
            .unwrap_or_else(|| "default".to_string());
        Ok(ResolvedContext {
            context_name,
            cluster_name,
            user_name,
            namespace,
            cluster: cluster.clone(),
            auth_info,
        })
    }
}

impl Config {
    /// A config for `host` with no credentials and client-go's defaults.
    pub fn new(host: impl Into<String>) -> Config {
        Config {
            host: host.into(),
            namespace: "default".to_string(),
            tls: TlsClientConfig::default(),
            bearer_token: None,
            bearer_token_file: None,
            username: None,
            password: None,
            exec_provider: None,
            exec_timeout: DEFAULT_EXEC_TIMEOUT,
            impersonate: ImpersonationConfig::default(),
            user_agent: None,
            qps: 0.0,
            burst: 0,
            rate_limiter: None,
            timeout: None,
            read_idle_timeout: Some(DEFAULT_READ_IDLE_TIMEOUT),
            max_object_size: DEFAULT_MAX_OBJECT_SIZE,
            proxy_url: None,
            disable_compression: false,
            warning_handler: None,
            content_type: ContentType::default(),
        }
    }

    /// Builds a config from a loaded kubeconfig and overrides.
    ///
    /// The user's credentials (token, token file, basic auth, exec plugin, client certificate
    /// and key) are used only when the server is `https`, as in client-go: over plain `http`
    /// they are left out (with a warning naming the user), so that they never cross the network
    /// in cleartext. Impersonation is kept either way.
    pub fn from_kubeconfig(
        kubeconfig: &Kubeconfig,
        overrides: &ConfigOverrides,
    ) -> Result<Config, ConfigError> {
        let r = kubeconfig.resolve(overrides)?;
        crate::confirm_usable::confirm_usable(&r)?;
        if r.cluster.server.is_empty() {
            return Err(ConfigError::new(
                Kind::Invalid,
                format!("cluster {:?} has no server defined", r.cluster_name),
            ));
        }
        if let Some(provider) = &r.auth_info.auth_provider {
            return Err(ConfigError::new(
                Kind::Invalid,
                format!(
                    "user {:?}: auth-provider {:?} is not supported; use an exec plugin",
                    r.user_name, provider.name
                ),
            ));
        }
        let mut config = Config::new(r.cluster.server.clone());
        config.host = normalize_host(&r.cluster.server)
            .map_err(|e| e.context(&format!("cluster {:?}: server", r.cluster_name)))?;
        config.namespace = r.namespace;
        config.proxy_url = r.cluster.proxy_url.clone().filter(|p| !p.is_empty());
        config.disable_compression = r.cluster.disable_compression;
        config.tls = TlsClientConfig {
            insecure: r.cluster.insecure_skip_tls_verify,
            server_name: r.cluster.tls_server_name.clone().filter(|s| !s.is_empty()),
            ca_file: r.cluster.certificate_authority.clone(),
            ca_data: r.cluster.certificate_authority_data.clone(),
            ..TlsClientConfig::default()
        };
        let user = r.auth_info;
        // Impersonation is not a credential: client-go applies it whatever the scheme.
        config.impersonate = ImpersonationConfig {
            user_name: user.impersonate.clone().filter(|u| !u.is_empty()),
            uid: user.impersonate_uid.clone().filter(|u| !u.is_empty()),
            groups: user.impersonate_groups.clone(),
            extra: user.impersonate_user_extra.clone(),
        };
        if is_transport_tls(&config.host) {
            config.tls.cert_file = user.client_certificate;
            config.tls.cert_data = user.client_certificate_data;
            // A key without a certificate is not used, as client-go's `HasCertAuth` needs both
            // (kubectl accepts such a user).
            if config.tls.cert_file.is_some()
                || config.tls.cert_data.as_ref().is_some_and(|d| !d.is_empty())
            {
                config.tls.key_file = user.client_key;
                config.tls.key_data = user.client_key_data;
            }
            config.bearer_token = user.token.filter(|t| !t.expose().is_empty());
            config.bearer_token_file = user.token_file;
            config.username = user.username.filter(|u| !u.is_empty());
            config.password = user.password;
            // client-go's getUserIdentificationPartialConfig:
            // `ExecProvider.Config = cluster.Extensions["client.authentication.k8s.io/exec"]`.
            config.exec_provider = user.exec.map(|mut exec| {
                exec.config = r.cluster.extension(EXEC_CLUSTER_EXTENSION).cloned();
                exec
            });
        } else if has_credentials(&user) {
            tracing::warn!(
                user = %r.user_name,
                cluster = %r.cluster_name,
                "the cluster's server is plain http: the user's credentials are not used (they are only sent over TLS, as in client-go)"
            );
        }
        Ok(config)
    }

    /// Loads exactly this kubeconfig file (which must exist) and uses its current context.
    pub fn from_kubeconfig_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Self::from_kubeconfig_file_with(path, &ConfigOverrides::default())
    }

    /// Loads exactly this kubeconfig file with overrides.
    pub fn from_kubeconfig_file_with(
        path: impl AsRef<Path>,
        overrides: &ConfigOverrides,
    ) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let kubeconfig = ClientConfigLoadingRules::explicit(path).load()?;
        Config::from_kubeconfig(&kubeconfig, overrides).map_err(|e| e.in_file(path))
    }

    /// Loads the kubeconfig with client-go's default rules (`KUBECONFIG` path list merged in
    /// order, else `~/.kube/config`) and applies `overrides`.
    pub fn from_default_kubeconfig(overrides: &ConfigOverrides) -> Result<Config, ConfigError> {
        let kubeconfig = ClientConfigLoadingRules::from_env().load()?;
        Config::from_kubeconfig(&kubeconfig, overrides)
    }

    /// client-go's `clientcmd.BuildConfigFromFlags(masterURL, kubeconfigPath)`: the kubeconfig
    /// file `kubeconfig_path` (its current context) with its server replaced by `master_url`;
    /// either may be empty. With both empty, the in-cluster config is tried first (with a
    /// warning, as client-go logs one); when that fails the result is an error saying that
    /// nothing was configured. With only `master_url`, the config has that server and no
    /// credentials. As in client-go, a `master_url` also drops the cluster's `tls-server-name`,
    /// and the user's credentials are used only when the server (the `master_url` if given) is
    /// `https` (the rule of [`Config::from_kubeconfig`]).
    pub fn build_config_from_flags(
        master_url: &str,
        kubeconfig_path: impl AsRef<Path>,
    ) -> Result<Config, ConfigError> {
        let path = kubeconfig_path.as_ref();
        let no_path = path.as_os_str().is_empty();
        if no_path && master_url.is_empty() {
            tracing::warn!(
                "neither a kubeconfig nor a master URL was specified; using the in-cluster config, which might not work"
            );
            match Config::in_cluster() {
                Ok(config) => return Ok(config),
                Err(e) => {
                    tracing::warn!(error = %e, "in-cluster config failed; falling back to the default config")
                }
            }
            return Err(ConfigError::new(
                Kind::Invalid,
                "invalid configuration: no configuration has been provided (give a kubeconfig path or a master URL)",
            ));
        }
        let mut kubeconfig = if no_path {
            Kubeconfig::default()
        } else {
            ClientConfigLoadingRules::explicit(path).load()?
        };
        let in_file = |e: ConfigError| if no_path { e } else { e.in_file(path) };
        if !master_url.is_empty() {
            let context = kubeconfig
                .current_context
                .as_deref()
                .and_then(|name| kubeconfig.context(name))
                .cloned();
            let cluster = context
                .as_ref()
                .and_then(|c| kubeconfig.cluster_mut(&c.cluster));
            match (cluster, context) {
                (Some(cluster), _) => {
                    // A server override also drops the kubeconfig's TLS server name, as
                    // client-go's getCluster does.
                    cluster.server = master_url.to_string();
                    cluster.tls_server_name = None;
                }
                // The context's cluster is not in the file: client-go overrides the empty
                // cluster it merges for it, and keeps the context's user and namespace.
                (None, Some(context)) => kubeconfig.clusters.push(NamedCluster {
                    name: context.cluster,
                    cluster: Cluster {
                        server: master_url.to_string(),
                        ..Cluster::default()
                    },
                }),
                (None, None) => return Ok(Config::new(normalize_host(master_url)?)),
            }
        }
        // A plain-http master gets no credentials: from_kubeconfig leaves them out.
        Config::from_kubeconfig(&kubeconfig, &ConfigOverrides::default()).map_err(in_file)
    }

    /// The kubeconfig (default rules) when it selects a cluster, else the in-cluster config.
    ///
    /// Like client-go's deferred loader, the in-cluster config is used when the kubeconfig
    /// selects no cluster: no kubeconfig file exists, the merged files are empty, they set no
    /// `current-context`, or the current context's cluster is not among them (and its user, if
    /// any, is one kubectl accepts). Outside a cluster, the kubeconfig's own error is returned
    /// then (or, without any kubeconfig, an error for which
    /// [`ConfigError::is_not_in_cluster`] holds).
    pub fn infer() -> Result<Config, ConfigError> {
        let kubeconfig = ClientConfigLoadingRules::from_env().load()?;
        Config::infer_from(&kubeconfig, Config::in_cluster)
    }

    /// [`Config::infer`] on a loaded kubeconfig, with `in_cluster` for [`Config::in_cluster`].
    fn infer_from(
        kubeconfig: &Kubeconfig,
        in_cluster: impl FnOnce() -> Result<Config, ConfigError>,
    ) -> Result<Config, ConfigError> {
        if !selects_no_cluster(kubeconfig) {
            return Config::from_kubeconfig(kubeconfig, &ConfigOverrides::default());
        }
        match in_cluster() {
            Ok(config) => Ok(config),
            // Outside a cluster, a kubeconfig that has entries says what it lacks.
            Err(e) if e.is_not_in_cluster() && !kubeconfig.is_empty() => {
                Config::from_kubeconfig(kubeconfig, &ConfigOverrides::default())
            }
            Err(e) if e.is_not_in_cluster() => Err(ConfigError::new(
                Kind::NotInCluster,
                "no kubeconfig found (KUBECONFIG, ~/.kube/config) and not running in a cluster",
            )
            .with_source(e)),
            Err(e) => Err(e),
        }
    }

    /// The QPS the default limiter uses after applying the 0-means-default rule.
    pub(crate) fn effective_qps(&self) -> f32 {
        if self.qps == 0.0 {
            DEFAULT_QPS
        } else {
            self.qps
        }
    }

    /// The burst the default limiter uses after applying the 0-means-default rule.
    pub(crate) fn effective_burst(&self) -> u32 {
        if self.burst <= 0 {
            DEFAULT_BURST as u32
        } else {
            self.burst as u32
        }
    }
}

/// True when `kubeconfig` selects no cluster, what client-go's `ConfirmUsable` reports as
/// `ErrEmptyConfig` (its only problem being `ErrEmptyCluster`) and its deferred loader answers
/// with the in-cluster config: no current context, or a current context that exists and names
/// a cluster the kubeconfig does not have, with a user (if it exists) that kubectl accepts.
fn selects_no_cluster(kubeconfig: &Kubeconfig) -> bool {
    let name = kubeconfig.current_context.as_deref().unwrap_or("");
    if name.is_empty() {
        return true;
    }
    let Some(context) = kubeconfig.context(name) else {
        return false;
    };
    if kubeconfig.cluster(&context.cluster).is_some() {
        return false;
    }
    let user = kubeconfig
        .auth_info(&context.user)
        .cloned()
        .unwrap_or_default();
    crate::confirm_usable::auth_info_problems(&context.user, &user).is_empty()
}

/// client-go's `restclient.IsConfigTransportTLS` for a host [`normalize_host`] returned: the
/// scheme is `https`. The user's credentials are read from a kubeconfig only when it holds.
fn is_transport_tls(host: &str) -> bool {
    // `normalize_host` gives the scheme in lower case.
    host.starts_with("https://")
}

/// True when `user` holds any credential (what an `http` server does not get).
fn has_credentials(user: &AuthInfo) -> bool {
    user.token.as_ref().is_some_and(|t| !t.expose().is_empty())
        || user.token_file.is_some()
        || user.username.as_deref().is_some_and(|u| !u.is_empty())
        || user.password.is_some()
        || user.exec.is_some()
        || user.client_certificate.is_some()
        || user.client_certificate_data.is_some()
        || user.client_key.is_some()
        || user.client_key_data.is_some()
}

/// Checks a server URL, adding `https://` when the scheme is missing, as client-go does. The
/// URL is kept as written but for its scheme, in lower case as Go's parser gives it, and a
/// trailing `/`: client-go's `Config.Host` is the kubeconfig's server, or in a pod
/// `https://` + the service's host and port, as written, and its request metrics label the
/// host as written (`https://h:443` is `h:443`, where a parsed URL drops the default port).
pub(crate) fn normalize_host(server: &str) -> Result<String, ConfigError> {
    // A password in the URL's user info is not shown in errors (as Go's `URL.Redacted`).
    let shown = redact_url_password(server);
    // As the URL parser reads it: without leading and trailing spaces and control characters.
    let server = server.trim_matches(|c: char| c <= ' ');
    let with_scheme = if server.contains("://") {
        server.to_string()
    } else {
        format!("https://{server}")
    };
    let url = url::Url::parse(&with_scheme).map_err(|e| {
        ConfigError::invalid(format!("invalid server url {shown:?}")).with_source(e)
    })?;
    match url.scheme() {
        "https" | "http" => {}
        other => {
            return Err(ConfigError::invalid(format!(
                "invalid server url {shown:?}: unsupported scheme {other:?}"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::invalid(format!(
            "invalid server url {shown:?}: no host"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::invalid(format!(
            "invalid server url {shown:?}: query or fragment not allowed"
        )));
    }
    let (scheme, rest) = with_scheme
        .split_once("://")
        .unwrap_or(("https", &with_scheme));
    Ok(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        rest.trim_end_matches('/')
    ))
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("host", &redact_url_password(&self.host))
            .field("namespace", &self.namespace)
            .field("tls", &self.tls)
            .field("bearer_token", &self.bearer_token)
            .field("bearer_token_file", &self.bearer_token_file)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("exec_provider", &self.exec_provider)
            .field("exec_timeout", &self.exec_timeout)
            .field("impersonate", &self.impersonate)
            .field("user_agent", &self.user_agent)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field(
                "rate_limiter",
                &self.rate_limiter.as_ref().map(|_| "custom"),
            )
            .field("timeout", &self.timeout)
            .field("read_idle_timeout", &self.read_idle_timeout)
            .field("max_object_size", &self.max_object_size)
            .field(
                "proxy_url",
                &self.proxy_url.as_deref().map(redact_url_password),
            )
            .field("disable_compression", &self.disable_compression)
            .field(
                "warning_handler",
                &self.warning_handler.as_ref().map(|_| "custom"),
            )
            .field("content_type", &self.content_type)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = r#"
current-context: dev
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: "Q0E=", tls-server-name: api.internal}
- name: c2
  cluster: {server: "c2.example:443", insecure-skip-tls-verify: true, proxy-url: "socks5://127.0.0.1:1080"}
- name: noserver
  cluster: {}
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team}
- name: prod
  context: {cluster: c2, user: u2}
- name: ghost-cluster
  context: {cluster: nope, user: u1}
- name: ghost-user
  context: {cluster: c1, user: nope}
- name: empty-server
  context: {cluster: noserver}
users:
- name: u1
  user: {token: tok1, as: jane, as-groups: [g1, g2], as-user-extra: {scopes: [a, b]}}
- name: u2
  user: {username: admin, password: pw}
- name: legacy
  user: {auth-provider: {name: gcp}}
"#;

    fn cfg() -> Kubeconfig {
        Kubeconfig::from_yaml(CFG).unwrap()
    }

    #[test]
    fn current_context_is_used() {
        let c = Config::from_kubeconfig(&cfg(), &ConfigOverrides::default()).unwrap();
        assert_eq!(c.host, "https://10.0.0.1:6443");
        assert_eq!(c.namespace, "team");
        assert_eq!(c.tls.ca_data.as_deref(), Some(&b"CA"[..]));
        assert_eq!(c.tls.server_name.as_deref(), Some("api.internal"));
        assert_eq!(c.bearer_token.as_ref().unwrap().expose(), "tok1");
        assert_eq!(c.impersonate.user_name.as_deref(), Some("jane"));
        assert_eq!(c.impersonate.groups, ["g1", "g2"]);
        assert_eq!(c.impersonate.extra["scopes"], ["a", "b"]);
        assert!(!format!("{c:?}").contains("tok1"));
    }

    #[test]
    fn overrides_table() {
        let k = cfg();
        // (context, cluster, user, namespace) -> (host, namespace, has token, username); the
        // host as client-go's `Config.Host`: the server as written (`c2.example:443`, its
        // explicit default port kept) with the scheme it lacks.
        let table = [
            (
                (Some("prod"), None, None, None),
                ("https://c2.example:443", "default", false, Some("admin")),
            ),
            (
                (Some("prod"), None, None, Some("x")),
                ("https://c2.example:443", "x", false, Some("admin")),
            ),
            (
                (None, Some("c2"), None, None),
                ("https://c2.example:443", "team", true, None),
            ),
            (
                (None, None, Some("u2"), None),
                ("https://10.0.0.1:6443", "team", false, Some("admin")),
            ),
            (
                (Some("dev"), None, None, Some("")),
                ("https://10.0.0.1:6443", "team", true, None),
            ),
        ];
        for ((context, cluster, user, namespace), (host, ns, token, username)) in table {
            let o = ConfigOverrides {
                context: context.map(Into::into),
                cluster: cluster.map(Into::into),
                user: user.map(Into::into),
                namespace: namespace.map(Into::into),
            };
            let c = Config::from_kubeconfig(&k, &o).unwrap();
            assert_eq!(c.host, host, "{o:?}");
            assert_eq!(c.namespace, ns, "{o:?}");
            assert_eq!(c.bearer_token.is_some(), token, "{o:?}");
            assert_eq!(c.username.as_deref(), username, "{o:?}");
        }
        let prod = Config::from_kubeconfig(
            &k,
            &ConfigOverrides {
                context: Some("prod".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(prod.tls.insecure);
        assert_eq!(prod.proxy_url.as_deref(), Some("socks5://127.0.0.1:1080"));
    }

    #[test]
    fn missing_names_are_errors_naming_them() {
        let k = cfg();
        let cases = [
            (Some("nope"), None, "context \"nope\""),
            (Some("ghost-cluster"), None, "cluster \"nope\""),
            (Some("ghost-user"), None, "user \"nope\""),
            (None, Some("missing-user"), "user \"missing-user\""),
        ];
        for (context, user, needle) in cases {
            let o = ConfigOverrides {
                context: context.map(Into::into),
                user: user.map(Into::into),
                ..Default::default()
            };
            let err = Config::from_kubeconfig(&k, &o).unwrap_err();
            assert!(err.is_not_found(), "{err:?}");
            assert!(err.to_string().contains(needle), "{err} / {needle}");
        }
        let o = ConfigOverrides {
            context: Some("empty-server".into()),
            ..Default::default()
        };
        let err = Config::from_kubeconfig(&k, &o).unwrap_err();
        assert!(
            err.is_invalid() && err.to_string().contains("no server"),
            "{err}"
        );
        let o = ConfigOverrides {
            user: Some("legacy".into()),
            ..Default::default()
        };
        let err = Config::from_kubeconfig(&k, &o).unwrap_err();
        assert!(err.to_string().contains("gcp"), "{err}");
        let err = Config::from_kubeconfig(&Kubeconfig::default(), &ConfigOverrides::default())
            .unwrap_err();
        assert!(err.is_invalid(), "{err}");
    }

    #[test]
    fn host_normalization() {
        assert_eq!(
            normalize_host("1.2.3.4:6443").unwrap(),
            "https://1.2.3.4:6443"
        );
        assert_eq!(
            normalize_host("https://h/prefix/").unwrap(),
            "https://h/prefix"
        );
        assert_eq!(
            normalize_host("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        // As written, as client-go's `Config.Host`: a default port and the name's case kept,
        // the scheme in lower case.
        assert_eq!(normalize_host("https://h:443").unwrap(), "https://h:443");
        assert_eq!(
            normalize_host("HTTPS://Example.COM:443/").unwrap(),
            "https://Example.COM:443"
        );
        for bad in [
            "ftp://h",
            "https://",
            "https://h:99999",
            "https://h/?a=b",
            "ht tp://x",
        ] {
            assert!(normalize_host(bad).unwrap_err().is_invalid(), "{bad}");
        }
    }

    /// Every secret a kubeconfig can hold, set at once; no public config type may print one.
    #[test]
    fn no_public_config_type_prints_a_secret_in_debug() {
        use crate::kubeconfig::ExecEnvVar;
        use base64::Engine as _;
        let key_b64 = base64::engine::general_purpose::STANDARD.encode("SECRET-KEY-DATA");
        let yaml = format!(
            r#"
current-context: main
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
    proxy-url: "http://proxyuser:SECRET-PROXY-PASSWORD@proxy.example:3128"
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {{audience: SECRET-EXTENSION}}
contexts:
- name: main
  context: {{cluster: c, user: u}}
- name: legacy
  context: {{cluster: c, user: legacy}}
users:
- name: u
  user:
    token: SECRET-TOKEN
    username: admin
    password: SECRET-PASSWORD
    client-key-data: {key_b64}
    exec:
      command: /usr/bin/get-token
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
      args: ["--token=SECRET-EXEC-ARG", "SECRET-EXEC-ARG-2"]
      env:
      - name: TOKEN
        value: SECRET-EXEC-ENV
- name: legacy
  user:
    auth-provider:
      name: oidc
      config:
        client-secret: SECRET-AUTH-PROVIDER
        id-token: SECRET-ID-TOKEN
        refresh-token: SECRET-REFRESH-TOKEN
"#
        );
        let secrets = [
            "SECRET",
            key_b64.as_str(),
            // The base64 of "SECRET" in any alignment of a longer text.
            "U0VDUkVU",
            "NFQ1JFV",
            "TRUNSRV",
        ];
        let kubeconfig = Kubeconfig::from_yaml(&yaml).unwrap();
        // The secrets were read (the test would prove nothing otherwise).
        let user = kubeconfig.auth_info("u").unwrap();
        assert_eq!(user.token.as_ref().unwrap().expose(), "SECRET-TOKEN");
        let exec = user.exec.clone().unwrap();
        assert_eq!(exec.args[0], "--token=SECRET-EXEC-ARG");
        assert_eq!(exec.env[0].value, "SECRET-EXEC-ENV");
        let cluster = kubeconfig.cluster("c").unwrap().clone();
        assert!(cluster.proxy_url.as_deref().unwrap().contains("SECRET"));

        // A token with basic auth is refused, as kubectl refuses it: the config gets the token
        // by hand.
        let methods_error =
            Config::from_kubeconfig(&kubeconfig, &ConfigOverrides::default()).unwrap_err();
        let mut without_token = kubeconfig.clone();
        without_token.auth_info_mut("u").unwrap().token = None;
        let mut config =
            Config::from_kubeconfig(&without_token, &ConfigOverrides::default()).unwrap();
        config.bearer_token = user.token.clone();
        assert!(config.proxy_url.as_deref().unwrap().contains("SECRET"));
        let exec_data = config.exec_provider.as_ref().unwrap().config.as_ref();
        assert_eq!(exec_data.unwrap()["audience"], "SECRET-EXTENSION");
        let resolved = kubeconfig.resolve(&ConfigOverrides::default()).unwrap();
        let legacy = ConfigOverrides {
            context: Some("legacy".into()),
            ..Default::default()
        };
        let legacy_error = Config::from_kubeconfig(&kubeconfig, &legacy).unwrap_err();
        // A client needs one kind of credential: the exec plugin and the proxy.
        let mut client_config = config.clone();
        client_config.bearer_token = None;
        client_config.username = None;
        client_config.password = None;
        client_config.tls.key_data = None;
        let client = crate::Client::new(client_config).unwrap();
        let mut bad_proxy = config.clone();
        bad_proxy.proxy_url = Some("ftp://proxyuser:SECRET-PROXY-PASSWORD@proxy.example".into());
        let proxy_error = crate::Client::new(bad_proxy).unwrap_err();

        let outputs = [
            ("Kubeconfig", format!("{kubeconfig:?}")),
            ("NamedCluster", format!("{:?}", kubeconfig.clusters[0])),
            ("Cluster", format!("{cluster:?}")),
            ("NamedContext", format!("{:?}", kubeconfig.contexts[0])),
            ("Context", format!("{:?}", kubeconfig.contexts[0].context)),
            ("NamedAuthInfo", format!("{:?}", kubeconfig.auth_infos)),
            ("AuthInfo", format!("{user:?}")),
            (
                "AuthProviderConfig",
                format!(
                    "{:?}",
                    kubeconfig.auth_info("legacy").unwrap().auth_provider
                ),
            ),
            ("ExecConfig", format!("{exec:?}")),
            ("ExecEnvVar", format!("{:?}", exec.env[0])),
            (
                "ExecEnvVar::new",
                format!("{:?}", ExecEnvVar::new("TOKEN", "SECRET-EXEC-ENV")),
            ),
            ("ResolvedContext", format!("{resolved:?}")),
            ("Config", format!("{config:?}")),
            ("TlsClientConfig", format!("{:?}", config.tls)),
            ("ImpersonationConfig", format!("{:?}", config.impersonate)),
            ("ConfigOverrides", format!("{legacy:?}")),
            (
                "ClientConfigLoadingRules",
                format!("{:?}", ClientConfigLoadingRules::default()),
            ),
            ("Client", format!("{client:?}")),
            (
                "ConfigError (auth-provider)",
                format!("{legacy_error:?} {legacy_error}"),
            ),
            (
                "ConfigError (proxy)",
                format!("{proxy_error:?} {proxy_error}"),
            ),
            (
                "ConfigError (token and basic auth)",
                format!("{methods_error:?} {methods_error}"),
            ),
        ];
        for (what, output) in &outputs {
            for secret in secrets {
                assert!(
                    !output.contains(secret),
                    "{what} prints the secret {secret:?}: {output}"
                );
            }
        }
        // What is redacted still says that it is there.
        let config_debug = &outputs[12].1;
        assert!(
            config_debug.contains("http://proxyuser:xxxxx@proxy.example:3128"),
            "{config_debug}"
        );
        assert!(
            config_debug.contains(r#"args: [<redacted>, <redacted>]"#),
            "{config_debug}"
        );
        assert!(
            config_debug.contains(r#"ExecEnvVar { name: "TOKEN", value: <redacted> }"#),
            "{config_debug}"
        );
    }

    /// kubectl's `ConfirmUsable` (clientcmd's `validateAuthInfo`) refuses a user with a token
    /// and a non-empty username or password, whatever the server's scheme: "more than one
    /// authentication method". An empty password is none.
    #[test]
    fn a_token_with_a_username_or_password_is_refused_as_kubectl_refuses_it() {
        let users = r#"
users:
- name: token-and-password
  user: {token: SECRET-TOKEN, password: SECRET-PASSWORD}
- name: token-and-username
  user: {token: SECRET-TOKEN, username: admin}
- name: token-and-empty-password
  user: {token: SECRET-TOKEN, password: ""}
- name: token-file-and-password
  user: {tokenFile: /var/run/token, password: SECRET-PASSWORD}
"#;
        let k =
            Kubeconfig::from_yaml(&format!("{SCHEMES}{}", users.replace("users:\n", ""))).unwrap();
        for cluster in ["https", "http"] {
            for user in ["token-and-password", "token-and-username"] {
                let o = ConfigOverrides {
                    cluster: Some(cluster.into()),
                    user: Some(user.into()),
                    ..Default::default()
                };
                let err = Config::from_kubeconfig(&k, &o).unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!(
                        "invalid configuration: more than one authentication method found for {user}; found [token basicAuth], only one is allowed"
                    ),
                    "cluster {cluster}"
                );
            }
            // The token file is not counted, as in kubectl; the password is then no
            // credential (no username), so the token file is used.
            for user in ["token-and-empty-password", "token-file-and-password"] {
                let o = ConfigOverrides {
                    cluster: Some(cluster.into()),
                    user: Some(user.into()),
                    ..Default::default()
                };
                Config::from_kubeconfig(&k, &o).unwrap();
            }
        }
    }

    /// Which of a user's credentials a config carries, by name.
    fn credentials_of(c: &Config) -> Vec<&'static str> {
        let set = [
            ("token", c.bearer_token.is_some()),
            ("token file", c.bearer_token_file.is_some()),
            ("username", c.username.is_some()),
            ("password", c.password.is_some()),
            ("exec", c.exec_provider.is_some()),
            ("cert file", c.tls.cert_file.is_some()),
            ("cert data", c.tls.cert_data.is_some()),
            ("key file", c.tls.key_file.is_some()),
            ("key data", c.tls.key_data.is_some()),
        ];
        set.into_iter()
            .filter(|(_, s)| *s)
            .map(|(n, _)| n)
            .collect()
    }

    const SCHEMES: &str = r#"
current-context: http-token
clusters:
- name: http
  cluster: {server: "http://10.0.0.1:8080", certificate-authority-data: "Q0E=", insecure-skip-tls-verify: true}
- name: https
  cluster: {server: "https://10.0.0.1:6443"}
- name: bare
  cluster: {server: "10.0.0.1:6443"}
contexts:
- name: http-token
  context: {cluster: http, user: token}
users:
- name: token
  user: {token: SECRET-TOKEN, as: jane, as-groups: [g]}
- name: token-file
  user: {tokenFile: /var/run/token}
- name: basic
  user: {username: admin, password: SECRET-PASSWORD}
- name: exec
  user: {exec: {command: plugin, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}
- name: cert-files
  user: {client-certificate: /c.crt, client-key: /c.key}
- name: cert-data
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}
"#;

    /// client-go's `DirectClientConfig.ClientConfig` reads the user's credentials only when
    /// `restclient.IsConfigTransportTLS` (an https server): over plain http no kind of
    /// credential is used, even with a CA or insecure-skip-tls-verify on the cluster (they do
    /// not make an http URL encrypted); impersonation is kept, as client-go keeps it.
    #[test]
    fn credentials_are_read_only_for_an_https_server() {
        let k = Kubeconfig::from_yaml(SCHEMES).unwrap();
        let users: [(&str, &[&str]); 6] = [
            ("token", &["token"]),
            ("token-file", &["token file"]),
            ("basic", &["username", "password"]),
            ("exec", &["exec"]),
            ("cert-files", &["cert file", "key file"]),
            ("cert-data", &["cert data", "key data"]),
        ];
        for (cluster, tls) in [("http", false), ("https", true), ("bare", true)] {
            for (user, credentials) in users {
                let o = ConfigOverrides {
                    cluster: Some(cluster.into()),
                    user: Some(user.into()),
                    ..Default::default()
                };
                let c = Config::from_kubeconfig(&k, &o).unwrap();
                let want: &[&str] = if tls { credentials } else { &[] };
                assert_eq!(credentials_of(&c), want, "cluster {cluster}, user {user}");
            }
        }
        let o = ConfigOverrides {
            cluster: Some("http".into()),
            user: Some("token".into()),
            ..Default::default()
        };
        let c = Config::from_kubeconfig(&k, &o).unwrap();
        assert_eq!(c.impersonate.user_name.as_deref(), Some("jane"));
        assert_eq!(c.impersonate.groups, ["g"]);
        // The cluster's own TLS settings stay (they are not the user's credentials).
        assert_eq!(c.tls.ca_data.as_deref(), Some(&b"CA"[..]));

        // build_config_from_flags goes through the same rule: a master URL's scheme decides,
        // whatever the kubeconfig's cluster says about TLS.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, SCHEMES).unwrap();
        let c = Config::build_config_from_flags("", &path).unwrap();
        assert_eq!(credentials_of(&c), [] as [&str; 0]);
        let c = Config::build_config_from_flags("http://m.example:8080", &path).unwrap();
        assert_eq!(credentials_of(&c), [] as [&str; 0]);
        assert_eq!(c.impersonate.user_name.as_deref(), Some("jane"));
        let c = Config::build_config_from_flags("https://m.example:8443", &path).unwrap();
        assert_eq!(credentials_of(&c), ["token"]);
    }

    /// The request a client built from an http kubeconfig sends carries no `Authorization`.
    #[tokio::test]
    async fn a_plain_http_server_from_a_kubeconfig_gets_no_authorization_header() {
        use crate::test_server::{Reply, TestServer};
        let s = TestServer::start(vec![Reply::Http(
            200,
            vec![("Content-Type", "application/json".into())],
            "{}".into(),
        )])
        .await;
        let yaml = format!(
            "current-context: c\nclusters:\n- name: c\n  cluster: {{server: \"{}\"}}\n\
             contexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
             users:\n- name: u\n  user: {{token: SECRET-TOKEN}}\n",
            s.url
        );
        let k = Kubeconfig::from_yaml(&yaml).unwrap();
        let mut config = Config::from_kubeconfig(&k, &ConfigOverrides::default()).unwrap();
        config.qps = -1.0;
        let client = crate::Client::new(config).unwrap();
        let _: serde_json::Value = client.get().abs_path("/version").send().await.unwrap();
        let head = s.seen.lock()[0].head.to_ascii_lowercase();
        assert!(head.starts_with("get /version"), "{head}");
        assert!(!head.contains("authorization"), "{head}");
        assert!(!head.contains("secret-token"), "{head}");
    }

    /// client-go's deferred loader (`DeferredLoadingClientConfig.ClientConfig`) turns to the
    /// in-cluster config whenever the kubeconfig's only problem is `ErrEmptyConfig`: no
    /// current context, or a current context whose cluster is not in the kubeconfig (its
    /// `ConfirmUsable` then finds only `ErrEmptyCluster`). Outside a cluster that error stays
    /// the answer. Any other problem (a current context that does not exist, a user kubectl
    /// refuses) is returned without trying the in-cluster config.
    #[test]
    fn infer_uses_the_in_cluster_config_when_the_kubeconfig_selects_no_cluster() {
        let in_cluster = || Ok(Config::new("https://10.96.0.1:443"));
        let not_in_cluster = || Err(ConfigError::new(Kind::NotInCluster, "not in a cluster"));
        let entries = r#"
clusters:
- name: c
  cluster: {server: "https://kube.example:6443"}
users:
- name: u
  user: {token: SECRET-TOKEN}
- name: bad
  user: {client-certificate-data: Q0VSVA==}
contexts:
- name: x
  context: {cluster: c, user: u}
- name: lost
  context: {cluster: missing, user: u}
- name: bad-user
  context: {cluster: missing, user: bad}
"#;
        let with_current = |current: &str| {
            Kubeconfig::from_yaml(&format!("{entries}current-context: {current}\n")).unwrap()
        };
        let no_current = Kubeconfig::from_yaml(entries).unwrap();
        for (what, k) in [
            ("no current context", no_current.clone()),
            ("its cluster is missing", with_current("lost")),
            ("nothing", Kubeconfig::default()),
        ] {
            let c = Config::infer_from(&k, in_cluster).unwrap();
            assert_eq!(c.host, "https://10.96.0.1:443", "{what}");
        }
        let c = Config::infer_from(&with_current("x"), in_cluster).unwrap();
        assert_eq!(c.host, "https://kube.example:6443");
        // Outside a cluster: the kubeconfig's own error, or "no kubeconfig" for none.
        for k in [no_current, with_current("lost")] {
            let err = Config::infer_from(&k, not_in_cluster).unwrap_err();
            let own = Config::from_kubeconfig(&k, &ConfigOverrides::default()).unwrap_err();
            assert!(!err.is_not_in_cluster(), "{err}");
            assert_eq!(err.to_string(), own.to_string());
        }
        let err = Config::infer_from(&Kubeconfig::default(), not_in_cluster).unwrap_err();
        assert!(err.is_not_in_cluster(), "{err}");
        // Other problems are the answer, in a cluster too.
        let tried = || -> Result<Config, ConfigError> { panic!("in-cluster config tried") };
        for current in ["nope", "bad-user"] {
            let err = Config::infer_from(&with_current(current), tried).unwrap_err();
            assert!(!err.is_not_in_cluster(), "{current}: {err}");
        }
    }

    #[test]
    fn rate_limit_defaults() {
        let mut c = Config::new("https://h");
        assert_eq!((c.effective_qps(), c.effective_burst()), (5.0, 10));
        c.qps = 50.0;
        c.burst = 100;
        assert_eq!((c.effective_qps(), c.effective_burst()), (50.0, 100));
    }
}
