//! The kubeconfig file format (client-go's `clientcmd/api/v1`) and its loading rules.
//!
//! [`Kubeconfig`] is one parsed file or the merge of several. [`ClientConfigLoadingRules`] finds
//! the files the way client-go does:
//!
//! - an explicit path (`--kubeconfig`) must exist and is used alone;
//! - otherwise `KUBECONFIG` is read as a path list (`:`-separated on Unix), deduplicated, and
//!   files in it that do not exist are skipped;
//! - otherwise `$HOME/.kube/config` is used if it exists.
//!
//! Within one file a name may appear only once per list (clusters, contexts, users, and each
//! list of extensions): client-go refuses a file with `duplicate name "x" in list`, and so the
//! whole load, whichever file of the list holds it; kclient refuses it the same way, naming the
//! file and the name.
//!
//! Merging follows client-go: for clusters, contexts and users the **first file to define a
//! name wins** and that entry is kept whole (no field-by-field merge); `current-context` is the
//! first non-empty one. Relative paths in a file (`certificate-authority`, `client-certificate`,
//! `client-key`, `tokenFile`, and an exec `command` that contains a `/`) are resolved against that
//! file's folder before merging.
//!
//! This module reads the environment variables `KUBECONFIG` and `HOME`, as client-go does.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use kclient_apimachinery::null_as_default;
use serde::{Deserialize, Deserializer};

use crate::config_error::{ConfigError, Kind};
use crate::secret::{Redacted, RedactedList, Secret, redact_url_password};

/// A kubeconfig: clusters, users (auth infos), contexts and the current context.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Kubeconfig {
    /// The context used when no override names one.
    #[serde(default)]
    pub current_context: Option<String>,
    /// Named clusters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named contexts (cluster + user + namespace).
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// Named users, client-go's `AuthInfos`.
    #[serde(default, rename = "users", deserialize_with = "null_as_default")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// Settings for command-line tools.
    #[serde(default, deserialize_with = "null_as_default")]
    pub preferences: Preferences,
    /// Extensions of the whole file, kept as read so that tools built on kclient can carry
    /// their own data.
    #[serde(default, deserialize_with = "null_as_default")]
    pub extensions: Vec<NamedExtension>,
}

/// Settings for command-line tools, client-go's `Preferences`. When files are merged, `colors`
/// is on if any file turns it on, and the first file to name an extension wins.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Preferences {
    /// Whether a tool may colour its output.
    #[serde(default, deserialize_with = "null_as_default")]
    pub colors: bool,
    /// Named extensions of the preferences.
    #[serde(default, deserialize_with = "null_as_default")]
    pub extensions: Vec<NamedExtension>,
}

/// An extension with its name: data a kubeconfig carries for other tools, client-go's
/// `NamedExtension`. Its value is kept as read; `Debug` shows only the name, since a tool may
/// keep anything in it.
#[derive(Clone, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedExtension {
    /// The extension's name.
    pub name: String,
    /// Its value.
    #[serde(default)]
    pub extension: serde_json::Value,
}

impl NamedExtension {
    /// An extension named `name` holding `extension`.
    pub fn new(name: impl Into<String>, extension: serde_json::Value) -> Self {
        NamedExtension {
            name: name.into(),
            extension,
        }
    }
}

impl fmt::Debug for NamedExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamedExtension")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Adds the extensions of `from` whose names `to` does not have yet.
fn merge_extensions(to: &mut Vec<NamedExtension>, from: Vec<NamedExtension>) {
    for e in from {
        if !to.iter().any(|m| m.name == e.name) {
            to.push(e);
        }
    }
}

/// A cluster with its name.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// The cluster's settings.
    #[serde(default)]
    pub cluster: Cluster,
}

/// How to reach a cluster: server URL and TLS settings. `Debug` hides the password of a server
/// or proxy URL.
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Cluster {
    /// `https://host:port`, optionally with a path prefix.
    #[serde(default, deserialize_with = "null_as_default")]
    pub server: String,
    /// The name to verify the server certificate against, instead of the URL's host.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Skip server certificate verification (dangerous; logged as a warning).
    #[serde(default, deserialize_with = "null_as_default")]
    pub insecure_skip_tls_verify: bool,
    /// Path to a PEM file of CA certificates.
    #[serde(default)]
    pub certificate_authority: Option<PathBuf>,
    /// PEM CA certificates (base64 in the file), taking precedence over the path.
    #[serde(default, deserialize_with = "base64_opt")]
    pub certificate_authority_data: Option<Vec<u8>>,
    /// A proxy for all requests to this cluster (`http`, `https` or `socks5` URL).
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// Ask the server not to compress responses.
    #[serde(default, deserialize_with = "null_as_default")]
    pub disable_compression: bool,
    /// The cluster's extensions, client-go's `Cluster.Extensions`, kept as read. The one named
    /// `client.authentication.k8s.io/exec` is handed to the user's exec plugin as
    /// [`ExecConfig::config`] (`spec.cluster.config`, with `provideClusterInfo`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub extensions: Vec<NamedExtension>,
    /// The file this entry came from, used to resolve relative paths.
    #[serde(skip)]
    pub location_of_origin: Option<PathBuf>,
}

/// The cluster extension passed to exec plugins, client-go's `clusterExtensionKey`.
pub(crate) const EXEC_CLUSTER_EXTENSION: &str = "client.authentication.k8s.io/exec";

impl Cluster {
    /// The extension named `name`, if the cluster has one.
    pub fn extension(&self, name: &str) -> Option<&serde_json::Value> {
        self.extensions
            .iter()
            .find(|e| e.name == name)
            .map(|e| &e.extension)
    }
}

/// A context with its name.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedContext {
    /// The name `current-context` refers to.
    pub name: String,
    /// The context's settings.
    #[serde(default)]
    pub context: Context,
}

/// A cluster, a user and a default namespace.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Context {
    /// The cluster's name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub cluster: String,
    /// The user's (auth info's) name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub user: String,
    /// The default namespace; `default` when empty.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The file this entry came from, where [`modify_config`](crate::modify_config) writes it
    /// back.
    #[serde(skip)]
    pub location_of_origin: Option<PathBuf>,
}

/// A user (auth info) with its name.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// The user's credentials.
    #[serde(default)]
    pub user: AuthInfo,
}

/// Credentials for a cluster: certificates, tokens, basic auth, an exec plugin, impersonation.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct AuthInfo {
    /// Path to a PEM client certificate.
    #[serde(default)]
    pub client_certificate: Option<PathBuf>,
    /// PEM client certificate (base64 in the file).
    #[serde(default, deserialize_with = "base64_opt")]
    pub client_certificate_data: Option<Vec<u8>>,
    /// Path to a PEM private key.
    #[serde(default)]
    pub client_key: Option<PathBuf>,
    /// PEM private key (base64 in the file).
    #[serde(default, deserialize_with = "base64_secret_opt")]
    pub client_key_data: Option<Secret<Vec<u8>>>,
    /// A bearer token.
    #[serde(default)]
    pub token: Option<Secret<String>>,
    /// A file holding a bearer token, re-read every minute.
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<PathBuf>,
    /// The user to impersonate.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// The UID to impersonate.
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// The groups to impersonate.
    #[serde(default, rename = "as-groups", deserialize_with = "null_as_default")]
    pub impersonate_groups: Vec<String>,
    /// Extra fields to impersonate.
    #[serde(
        default,
        rename = "as-user-extra",
        deserialize_with = "null_as_default"
    )]
    pub impersonate_user_extra: BTreeMap<String, Vec<String>>,
    /// Basic-auth user name.
    #[serde(default)]
    pub username: Option<String>,
    /// Basic-auth password.
    #[serde(default)]
    pub password: Option<Secret<String>>,
    /// A legacy auth provider plugin (none is built in, as in current client-go).
    #[serde(default)]
    pub auth_provider: Option<AuthProviderConfig>,
    /// An exec credential plugin.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
    /// The file this entry came from, used to resolve relative paths.
    #[serde(skip)]
    pub location_of_origin: Option<PathBuf>,
}

/// A legacy `auth-provider` stanza; only its name is kept (to report it as unsupported).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct AuthProviderConfig {
    /// The provider's name (`gcp`, `azure`, `oidc`, ...).
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

/// An exec credential plugin (`client.authentication.k8s.io`), as in client-go's `ExecConfig`.
///
/// `Debug` prints the arguments and the environment values as `<redacted>` (they often carry
/// tokens, as client-go's `ExecConfig.String` assumes too).
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecConfig {
    /// The program to run; a relative path containing `/` is resolved against the kubeconfig's
    /// folder, a bare name is looked up in `PATH`.
    pub command: String,
    /// Its arguments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Extra environment variables, added to the process environment.
    #[serde(default, deserialize_with = "null_as_default")]
    pub env: Vec<ExecEnvVar>,
    /// `client.authentication.k8s.io/v1` or `client.authentication.k8s.io/v1beta1`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub api_version: String,
    /// Text shown when the command cannot be found; control and format characters (a
    /// terminal escape sequence) are shown as `U+001B`, as client-go shows them.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Pass the cluster's details to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` or `Always`; required for v1, defaults to `IfAvailable` for v1beta1.
    #[serde(default)]
    pub interactive_mode: Option<String>,
    /// Data for the plugin about the cluster it authenticates to, client-go's
    /// `ExecConfig.Config`: not a field of the user's `exec` in the file, but the cluster's
    /// `client.authentication.k8s.io/exec` extension, which
    /// [`Config::from_kubeconfig`](crate::Config::from_kubeconfig) puts here. The plugin gets
    /// it as `spec.cluster.config` in `KUBERNETES_EXEC_INFO` when `provideClusterInfo` is set.
    /// Never written back to a kubeconfig; `Debug` shows only whether it is set.
    #[serde(skip)]
    pub config: Option<serde_json::Value>,
}

/// One environment variable for an exec plugin. `Debug` shows the name, never the value.
#[derive(Clone, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ExecEnvVar {
    /// The variable's name.
    pub name: String,
    /// Its value.
    #[serde(default, deserialize_with = "null_as_default")]
    pub value: String,
}

impl ExecEnvVar {
    /// A variable `name=value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        ExecEnvVar {
            name: name.into(),
            value: value.into(),
        }
    }
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &redact_url_password(&self.server))
            .field("tls_server_name", &self.tls_server_name)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("certificate_authority", &self.certificate_authority)
            .field(
                "certificate_authority_data",
                &self.certificate_authority_data,
            )
            .field(
                "proxy_url",
                &self.proxy_url.as_deref().map(redact_url_password),
            )
            .field("disable_compression", &self.disable_compression)
            .field("extensions", &self.extensions)
            .field("location_of_origin", &self.location_of_origin)
            .finish()
    }
}

impl fmt::Debug for ExecConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecConfig")
            .field("command", &self.command)
            .field("args", &RedactedList(self.args.len()))
            .field("env", &self.env)
            .field("api_version", &self.api_version)
            .field("install_hint", &self.install_hint)
            .field("provide_cluster_info", &self.provide_cluster_info)
            .field("interactive_mode", &self.interactive_mode)
            .field("config", &self.config.as_ref().map(|_| Redacted))
            .finish()
    }
}

impl fmt::Debug for ExecEnvVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecEnvVar")
            .field("name", &self.name)
            .field("value", &Redacted)
            .finish()
    }
}

impl ExecConfig {
    /// An exec plugin running `command` with the given API version and no arguments.
    pub fn new(command: impl Into<String>, api_version: impl Into<String>) -> Self {
        ExecConfig {
            command: command.into(),
            api_version: api_version.into(),
            ..ExecConfig::default()
        }
    }
}

impl Kubeconfig {
    /// Parses kubeconfig YAML (or JSON). An empty document is an empty config, as in client-go.
    ///
    /// A value of the wrong type is an error naming its cluster, context or user (and, for the
    /// fields that hold secrets, the field), never quoting the value. Like client-go (which
    /// turns the YAML into JSON before decoding), a string field does not accept a number or a
    /// boolean: `password: 84736251` is refused, `password: "84736251"` is read. A key with no
    /// value (null) reads as unset, as in client-go. A name given twice in one list (two
    /// clusters, users, contexts or extensions of one parent with the same name) is refused,
    /// as client-go refuses it: `clusters: duplicate name "c" in list`.
    pub fn from_yaml(text: &str) -> Result<Kubeconfig, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Kubeconfig::default());
        }
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(yaml_error)?;
        if value.is_null() {
            return Ok(Kubeconfig::default());
        }
        check_fields(&value)?;
        let config = Kubeconfig::deserialize(&value).map_err(|e| decode_error(&value, &e))?;
        check_duplicate_names(&value)?;
        Ok(config)
    }

    /// Reads and parses one file, records it as each entry's origin and resolves relative paths
    /// against its folder (client-go's `LoadFromFile` + `ResolveLocalPaths`).
    pub fn read_from(path: impl AsRef<Path>) -> Result<Kubeconfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
        let mut config = Kubeconfig::from_yaml(&text).map_err(|e| e.in_file(path))?;
        let origin = path.to_path_buf();
        let base = absolute_dir(path).map_err(|e| ConfigError::io(path, e))?;
        for named in &mut config.contexts {
            named.context.location_of_origin = Some(origin.clone());
        }
        for named in &mut config.clusters {
            named.cluster.location_of_origin = Some(origin.clone());
            resolve(&mut named.cluster.certificate_authority, &base);
        }
        for named in &mut config.auth_infos {
            let user = &mut named.user;
            user.location_of_origin = Some(origin.clone());
            resolve(&mut user.client_certificate, &base);
            resolve(&mut user.client_key, &base);
            resolve(&mut user.token_file, &base);
            if let Some(exec) = &mut user.exec
                && exec.command.contains(std::path::MAIN_SEPARATOR)
                && !Path::new(&exec.command).is_absolute()
            {
                exec.command = base.join(&exec.command).to_string_lossy().into_owned();
            }
        }
        Ok(config)
    }

    /// Merges files in precedence order: the first file to define a cluster, context or user
    /// name wins (the entry is kept whole), and the first non-empty `current-context` wins.
    /// `preferences.colors` is on if any file turns it on; for the extensions of the file and of
    /// its preferences, the first file to name one wins (client-go's merge rules).
    pub fn merge(files: impl IntoIterator<Item = Kubeconfig>) -> Kubeconfig {
        let mut merged = Kubeconfig::default();
        for file in files {
            if merged.current_context.as_deref().unwrap_or("").is_empty() {
                merged.current_context = file.current_context.filter(|c| !c.is_empty());
            }
            for c in file.clusters {
                if !merged.clusters.iter().any(|m| m.name == c.name) {
                    merged.clusters.push(c);
                }
            }
            for c in file.contexts {
                if !merged.contexts.iter().any(|m| m.name == c.name) {
                    merged.contexts.push(c);
                }
            }
            for a in file.auth_infos {
                if !merged.auth_infos.iter().any(|m| m.name == a.name) {
                    merged.auth_infos.push(a);
                }
            }
            merged.preferences.colors |= file.preferences.colors;
            merge_extensions(
                &mut merged.preferences.extensions,
                file.preferences.extensions,
            );
            merge_extensions(&mut merged.extensions, file.extensions);
        }
        merged
    }

    /// Loads with the default rules (`KUBECONFIG`, else `~/.kube/config`).
    pub fn load() -> Result<Kubeconfig, ConfigError> {
        ClientConfigLoadingRules::from_env().load()
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&Context> {
        self.contexts
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.context)
    }

    /// The cluster named `name`.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.cluster)
    }

    /// The user (auth info) named `name`.
    pub fn auth_info(&self, name: &str) -> Option<&AuthInfo> {
        self.auth_infos
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.user)
    }

    /// The context named `name`, to modify it in place (its origin file is kept).
    pub fn context_mut(&mut self, name: &str) -> Option<&mut Context> {
        self.contexts
            .iter_mut()
            .find(|c| c.name == name)
            .map(|c| &mut c.context)
    }

    /// The cluster named `name`, to modify it in place (its origin file is kept).
    pub fn cluster_mut(&mut self, name: &str) -> Option<&mut Cluster> {
        self.clusters
            .iter_mut()
            .find(|c| c.name == name)
            .map(|c| &mut c.cluster)
    }

    /// The user (auth info) named `name`, to modify it in place (its origin file is kept).
    pub fn auth_info_mut(&mut self, name: &str) -> Option<&mut AuthInfo> {
        self.auth_infos
            .iter_mut()
            .find(|c| c.name == name)
            .map(|c| &mut c.user)
    }

    /// Adds the context `name`, or replaces it whole. A replacement without an origin file
    /// keeps the replaced entry's, so that [`modify_config`](crate::modify_config) writes it
    /// where it was.
    pub fn set_context(&mut self, name: impl Into<String>, mut context: Context) {
        let name = name.into();
        match self.contexts.iter_mut().find(|c| c.name == name) {
            Some(named) => {
                if context.location_of_origin.is_none() {
                    context.location_of_origin = named.context.location_of_origin.take();
                }
                named.context = context;
            }
            None => self.contexts.push(NamedContext { name, context }),
        }
    }

    /// Adds the cluster `name`, or replaces it whole (keeping its origin file, as
    /// [`Kubeconfig::set_context`] does).
    pub fn set_cluster(&mut self, name: impl Into<String>, mut cluster: Cluster) {
        let name = name.into();
        match self.clusters.iter_mut().find(|c| c.name == name) {
            Some(named) => {
                if cluster.location_of_origin.is_none() {
                    cluster.location_of_origin = named.cluster.location_of_origin.take();
                }
                named.cluster = cluster;
            }
            None => self.clusters.push(NamedCluster { name, cluster }),
        }
    }

    /// Adds the user (auth info) `name`, or replaces it whole (keeping its origin file, as
    /// [`Kubeconfig::set_context`] does).
    pub fn set_auth_info(&mut self, name: impl Into<String>, mut user: AuthInfo) {
        let name = name.into();
        match self.auth_infos.iter_mut().find(|c| c.name == name) {
            Some(named) => {
                if user.location_of_origin.is_none() {
                    user.location_of_origin = named.user.location_of_origin.take();
                }
                named.user = user;
            }
            None => self.auth_infos.push(NamedAuthInfo { name, user }),
        }
    }

    /// Removes the context `name`; true if it existed.
    pub fn remove_context(&mut self, name: &str) -> bool {
        let before = self.contexts.len();
        self.contexts.retain(|c| c.name != name);
        self.contexts.len() != before
    }

    /// Removes the cluster `name`; true if it existed.
    pub fn remove_cluster(&mut self, name: &str) -> bool {
        let before = self.clusters.len();
        self.clusters.retain(|c| c.name != name);
        self.clusters.len() != before
    }

    /// Removes the user (auth info) `name`; true if it existed.
    pub fn remove_auth_info(&mut self, name: &str) -> bool {
        let before = self.auth_infos.len();
        self.auth_infos.retain(|c| c.name != name);
        self.auth_infos.len() != before
    }

    /// True when nothing at all is configured (no entries, no current context).
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
            && self.contexts.is_empty()
            && self.auth_infos.is_empty()
            && self.current_context.as_deref().unwrap_or("").is_empty()
    }
}

/// Which kubeconfig files to read, client-go's `ClientConfigLoadingRules`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfigLoadingRules {
    /// Files merged in order when there is no explicit path; missing ones are skipped.
    pub precedence: Vec<PathBuf>,
    /// A file that must exist and is used alone (`--kubeconfig`).
    pub explicit_path: Option<PathBuf>,
}

impl ClientConfigLoadingRules {
    /// client-go's defaults: the `KUBECONFIG` path list (deduplicated) when it is set and
    /// non-empty, else `$HOME/.kube/config`.
    pub fn from_env() -> Self {
        let env = std::env::var_os("KUBECONFIG");
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Self::from_values(env.as_deref(), home.as_deref())
    }

    fn from_values(kubeconfig: Option<&std::ffi::OsStr>, home: Option<&Path>) -> Self {
        let mut precedence: Vec<PathBuf> = Vec::new();
        match kubeconfig.filter(|v| !v.is_empty()) {
            Some(list) => {
                for path in std::env::split_paths(list) {
                    if !path.as_os_str().is_empty() && !precedence.contains(&path) {
                        precedence.push(path);
                    }
                }
            }
            None => {
                if let Some(home) = home {
                    precedence.push(home.join(".kube").join("config"));
                }
            }
        }
        ClientConfigLoadingRules {
            precedence,
            explicit_path: None,
        }
    }

    /// Rules that read exactly one file, which must exist.
    pub fn explicit(path: impl Into<PathBuf>) -> Self {
        ClientConfigLoadingRules {
            precedence: Vec::new(),
            explicit_path: Some(path.into()),
        }
    }

    /// Rules that merge these files in order (missing ones are skipped).
    pub fn with_precedence(paths: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        let mut precedence: Vec<PathBuf> = Vec::new();
        for p in paths {
            let p = p.into();
            if !precedence.contains(&p) {
                precedence.push(p);
            }
        }
        ClientConfigLoadingRules {
            precedence,
            explicit_path: None,
        }
    }

    /// Reads and merges the files. A missing explicit file, an unreadable file or a file that
    /// does not parse is an error naming the file.
    pub fn load(&self) -> Result<Kubeconfig, ConfigError> {
        if let Some(path) = &self.explicit_path {
            // Only a file that is not there is "does not exist" (Go's `os.IsNotExist`); any other
            // failure to reach it is the read's own error.
            if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
                return Err(ConfigError::new(
                    Kind::Io,
                    format!("kubeconfig {} does not exist", path.display()),
                ));
            }
            return Kubeconfig::read_from(path);
        }
        let mut files = Vec::new();
        for path in &self.precedence {
            match std::fs::metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                _ => files.push(Kubeconfig::read_from(path)?),
            }
        }
        Ok(Kubeconfig::merge(files))
    }
}

pub(crate) fn absolute_dir(path: &Path) -> std::io::Result<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new(""));
    if dir.is_absolute() {
        Ok(dir.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(dir))
    }
}

fn resolve(path: &mut Option<PathBuf>, base: &Path) {
    if let Some(p) = path {
        if p.as_os_str().is_empty() {
            *path = None;
        } else if p.is_relative() {
            *p = base.join(&*p);
        }
    }
}

pub(crate) fn decode_base64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(&compact)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&compact))
}

/// How a field checked before the typed decode must read.
#[derive(Clone, Copy)]
enum Field {
    /// A string (or nothing).
    Text,
    /// A string of base64 (or nothing).
    Base64,
}

/// A section of the file (`clusters`), its entries' settings key (`cluster`) and the fields
/// checked there.
type Section = (&'static str, &'static str, &'static [(&'static str, Field)]);

/// The fields checked before the typed decode, by section: every one that holds a secret (a
/// token, a password, a key, a proxy URL's password) or base64 data.
const CHECKED: [Section; 2] = [
    (
        "clusters",
        "cluster",
        &[
            ("certificate-authority-data", Field::Base64),
            ("proxy-url", Field::Text),
        ],
    ),
    (
        "users",
        "user",
        &[
            ("client-certificate-data", Field::Base64),
            ("client-key-data", Field::Base64),
            ("token", Field::Text),
            ("password", Field::Text),
        ],
    ),
];

/// A kubeconfig that is not YAML: the error says where, but not in the parser's words, which
/// may quote the text (a secret); those stay in its `source()`.
pub(crate) fn yaml_error(e: serde_yaml_ng::Error) -> ConfigError {
    let message = match e.location() {
        Some(at) => format!(
            "invalid kubeconfig yaml at line {} column {}",
            at.line(),
            at.column()
        ),
        None => "invalid kubeconfig yaml".to_owned(),
    };
    ConfigError::new(Kind::Parse, message).with_source(e)
}

/// Checks the fields that hold secrets or base64 data before the typed decode, so that a bad
/// one is reported naming the field and its cluster or user, and never its value (serde's
/// messages quote the value they could not use: `invalid type: integer `84736251``). The exec
/// plugin's arguments and environment values are checked too: they often carry tokens.
fn check_fields(value: &serde_yaml_ng::Value) -> Result<(), ConfigError> {
    for (list, entry, fields) in CHECKED {
        let Some(items) = value.get(list).and_then(serde_yaml_ng::Value::as_sequence) else {
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            let Some(settings) = item.get(entry) else {
                continue;
            };
            let fail = |message: String| {
                ConfigError::new(
                    Kind::Parse,
                    format!("{}: {message}", entry_name(item, list, entry, index)),
                )
            };
            for (field, how) in fields {
                if let Some(v) = settings.get(*field) {
                    check_field(v, field, *how, true).map_err(fail)?;
                }
            }
            let Some(exec) = settings.get("exec") else {
                continue;
            };
            if let Some(args) = exec.get("args").and_then(serde_yaml_ng::Value::as_sequence) {
                for (i, arg) in args.iter().enumerate() {
                    check_field(arg, &format!("exec args[{i}]"), Field::Text, false)
                        .map_err(fail)?;
                }
            }
            if let Some(env) = exec.get("env").and_then(serde_yaml_ng::Value::as_sequence) {
                for (i, var) in env.iter().enumerate() {
                    if let Some(v) = var.get("value") {
                        let name = match var.get("name").and_then(serde_yaml_ng::Value::as_str) {
                            Some(name) => format!("exec env {name:?}"),
                            None => format!("exec env[{i}]"),
                        };
                        check_field(v, &format!("{name} value"), Field::Text, true)
                            .map_err(fail)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks one field's value; the error names `field` and what was found, never the value.
fn check_field(
    v: &serde_yaml_ng::Value,
    field: &str,
    how: Field,
    optional: bool,
) -> Result<(), String> {
    use serde_yaml_ng::Value;
    let found = match v {
        Value::String(text) => {
            return match how {
                Field::Text => Ok(()),
                // The decode error names an offset and at most one bad character, never the
                // data (a key must not leak).
                Field::Base64 => decode_base64(text)
                    .map(drop)
                    .map_err(|e| format!("{field} is not valid base64: {e}")),
            };
        }
        Value::Null if optional => return Ok(()),
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    };
    let hint = if matches!(v, Value::Bool(_) | Value::Number(_)) {
        " (put it in quotes)"
    } else {
        ""
    };
    Err(format!("{field} must be a string, not {found}{hint}"))
}

/// Refuses a name that appears twice in one named list, as client-go's v1 conversion does
/// (`duplicate name "x" in list`) when it turns each list into a map: clusters, users and
/// contexts, and the extensions of the file, of its preferences and of each cluster, user and
/// context, in the order client-go converts them. An extension without a value (missing or
/// null) takes no place in client-go's map, so the same name may follow it. Only names are
/// quoted, never values.
fn check_duplicate_names(value: &serde_yaml_ng::Value) -> Result<(), ConfigError> {
    use serde_yaml_ng::Value;
    /// The name of a list entry: absent or null is client-go's empty name; another type is
    /// not a name (client-go fails to decode it; kclient does not read those lists).
    fn name_of(item: &Value) -> Option<&str> {
        match item.get("name") {
            None | Some(Value::Null) => Some(""),
            Some(name) => name.as_str(),
        }
    }
    /// The first name taken twice in `list`; `value_key` is where an entry keeps its value,
    /// and for extensions (`nil_frees`) an entry without one takes no place.
    fn first_duplicate<'a>(
        list: Option<&'a Value>,
        value_key: &str,
        nil_frees: bool,
    ) -> Option<&'a str> {
        let items = list?.as_sequence()?;
        let mut taken = std::collections::HashSet::new();
        for item in items {
            let Some(name) = name_of(item) else { continue };
            if taken.contains(name) {
                return Some(name);
            }
            if !nil_frees || item.get(value_key).is_some_and(|v| !v.is_null()) {
                taken.insert(name);
            }
        }
        None
    }
    let duplicate = |what: &str, name: &str| {
        ConfigError::new(
            Kind::Parse,
            format!("{what}: duplicate name {name:?} in list"),
        )
    };
    fn extensions(parent: Option<&Value>) -> Option<&str> {
        first_duplicate(parent.and_then(|p| p.get("extensions")), "extension", true)
    }
    if let Some(name) = extensions(value.get("preferences")) {
        return Err(duplicate("preferences: extensions", name));
    }
    for (list, entry) in [
        ("clusters", "cluster"),
        ("users", "user"),
        ("contexts", "context"),
    ] {
        if let Some(items) = value.get(list).and_then(Value::as_sequence) {
            for (index, item) in items.iter().enumerate() {
                if let Some(name) = extensions(item.get(entry)) {
                    let what = entry_name(item, list, entry, index);
                    return Err(duplicate(&format!("{what}: extensions"), name));
                }
            }
        }
        if let Some(name) = first_duplicate(value.get(list), entry, false) {
            return Err(duplicate(list, name));
        }
    }
    if let Some(name) = extensions(Some(value)) {
        return Err(duplicate("extensions", name));
    }
    Ok(())
}

/// `user "jane"`, or `users[1]` for an entry without a name.
fn entry_name(item: &serde_yaml_ng::Value, list: &str, entry: &str, index: usize) -> String {
    match item.get("name").and_then(serde_yaml_ng::Value::as_str) {
        Some(name) => format!("{entry} {name:?}"),
        None => format!("{list}[{index}]"),
    }
}

/// The error of a typed decode that failed: which cluster, context or user it is about (the
/// first entry that does not decode on its own), and serde's message without the value it
/// quotes.
fn decode_error(value: &serde_yaml_ng::Value, e: &serde_yaml_ng::Error) -> ConfigError {
    fn first_bad<T: serde::de::DeserializeOwned>(
        value: &serde_yaml_ng::Value,
        list: &str,
        entry: &str,
    ) -> Option<String> {
        let items = value.get(list)?.as_sequence()?;
        let (index, item) = items
            .iter()
            .enumerate()
            .find(|(_, item)| T::deserialize(*item).is_err())?;
        Some(format!("{}: ", entry_name(item, list, entry, index)))
    }
    let entry = first_bad::<NamedCluster>(value, "clusters", "cluster")
        .or_else(|| first_bad::<NamedContext>(value, "contexts", "context"))
        .or_else(|| first_bad::<NamedAuthInfo>(value, "users", "user"))
        .unwrap_or_default();
    ConfigError::new(
        Kind::Parse,
        format!(
            "invalid kubeconfig: {entry}{}",
            without_value(&e.to_string())
        ),
    )
}

/// serde's `invalid type` and `invalid value` messages with the value they quote left out:
/// `invalid type: integer `84736251`, expected a string` becomes `invalid type: integer,
/// expected a string` (a string value is quoted with `"`, others with backquotes).
fn without_value(message: &str) -> String {
    for marker in ["invalid type: ", "invalid value: "] {
        let Some(at) = message.find(marker) else {
            continue;
        };
        let (head, rest) = message.split_at(at + marker.len());
        let Some(quote) = rest.find(['`', '"']) else {
            return message.to_string();
        };
        // The value comes right after what it is (`integer`, `string`), before `, expected`.
        if rest
            .find(", expected")
            .is_some_and(|expected| expected < quote)
        {
            return message.to_string();
        }
        let mut tail = rest[quote..].char_indices();
        let open = tail.next().map(|(_, c)| c);
        let mut end = rest.len();
        let mut escaped = false;
        for (i, c) in tail {
            if escaped {
                escaped = false;
            } else if c == '\\' && open == Some('"') {
                escaped = true;
            } else if Some(c) == open {
                end = quote + i + c.len_utf8();
                break;
            }
        }
        return format!("{head}{}{}", rest[..quote].trim_end(), &rest[end..]);
    }
    message.to_string()
}

fn base64_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) if s.is_empty() => Ok(None),
        Some(s) => decode_base64(&s)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("invalid base64: {e}"))),
    }
}

fn base64_secret_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Secret<Vec<u8>>>, D::Error> {
    // The decode error text never includes the input, so the secret does not leak.
    Ok(base64_opt(d)?.map(Secret::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferences_and_extensions_merge_as_client_go_merges_them() {
        let first = Kubeconfig::from_yaml(
            "preferences:\n  extensions:\n  - {name: shared, extension: {from: first}}\n\
             extensions:\n- {name: tool, extension: [1, 2]}\n",
        )
        .unwrap();
        let second = Kubeconfig::from_yaml(
            "preferences:\n  colors: true\n  extensions:\n  - {name: shared, extension: {from: second}}\n  - {name: own, extension: {secret: hunter2}}\n\
             extensions: null\n",
        )
        .unwrap();
        assert!(!first.preferences.colors);
        let merged = Kubeconfig::merge([first, second]);
        // Colours are on if any file turns them on; the first file to name an extension wins.
        assert!(merged.preferences.colors);
        let names: Vec<_> = merged
            .preferences
            .extensions
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, ["shared", "own"]);
        assert_eq!(
            merged.preferences.extensions[0].extension,
            serde_json::json!({"from": "first"})
        );
        assert_eq!(
            merged.extensions,
            [NamedExtension::new("tool", serde_json::json!([1, 2]))]
        );
        // An extension's value stays out of Debug output.
        let debug = format!("{merged:?}");
        assert!(debug.contains("\"own\""), "{debug}");
        assert!(!debug.contains("hunter2"), "{debug}");
        // `preferences: null` and a missing section read as the defaults.
        let empty = Kubeconfig::from_yaml("preferences: null\n").unwrap();
        assert_eq!(empty.preferences, Preferences::default());
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    const A: &str = r#"
apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
    certificate-authority: ca/a.crt
- name: only-a
  cluster:
    server: https://only-a.example
contexts:
- name: ctx-a
  context: {cluster: shared, user: alice, namespace: ns-a}
users:
- name: alice
  user:
    client-certificate: certs/alice.crt
    client-key: /abs/alice.key
    tokenFile: tok
    exec:
      command: ./bin/plugin
      apiVersion: client.authentication.k8s.io/v1
"#;

    const B: &str = r#"
current-context: ctx-b
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
    insecure-skip-tls-verify: true
- name: only-b
  cluster:
    server: https://only-b.example
contexts:
- name: ctx-b
  context: {cluster: only-b, user: bob}
users:
- name: alice
  user: {token: from-b}
- name: bob
  user:
    token: bob-token
    exec: {command: kubelogin, apiVersion: client.authentication.k8s.io/v1beta1}
"#;

    #[test]
    fn merge_first_file_wins_per_entry_and_paths_resolve_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "one/a.yaml", A);
        let b = write(dir.path(), "two/b.yaml", B);
        // Table: precedence order -> (current context, shared server, alice has token).
        let table: &[(&[&PathBuf], &str, &str, bool)] = &[
            (&[&a, &b], "ctx-a", "https://a.example:6443", false),
            (&[&b, &a], "ctx-b", "https://b.example:6443", true),
            (&[&a, &a, &b], "ctx-a", "https://a.example:6443", false),
        ];
        for (order, ctx, server, alice_token) in table {
            let rules =
                ClientConfigLoadingRules::with_precedence(order.iter().map(|p| (*p).clone()));
            let merged = rules.load().unwrap();
            assert_eq!(merged.current_context.as_deref(), Some(*ctx));
            assert_eq!(merged.cluster("shared").unwrap().server, *server);
            assert_eq!(merged.clusters.len(), 3);
            assert_eq!(
                merged.auth_info("alice").unwrap().token.is_some(),
                *alice_token
            );
        }
        let merged = ClientConfigLoadingRules::with_precedence([&a, &b])
            .load()
            .unwrap();
        let shared = merged.cluster("shared").unwrap();
        // The whole entry comes from the first file: no field from b's "shared" leaks in.
        assert!(!shared.insecure_skip_tls_verify);
        assert_eq!(
            shared.certificate_authority.as_deref(),
            Some(dir.path().join("one/ca/a.crt").as_path())
        );
        let alice = merged.auth_info("alice").unwrap();
        assert_eq!(
            alice.client_certificate.as_deref(),
            Some(dir.path().join("one/certs/alice.crt").as_path())
        );
        assert_eq!(
            alice.client_key.as_deref(),
            Some(Path::new("/abs/alice.key"))
        );
        assert_eq!(
            alice.token_file.as_deref(),
            Some(dir.path().join("one/tok").as_path())
        );
        assert_eq!(
            alice.exec.as_ref().unwrap().command,
            dir.path().join("one/./bin/plugin").to_string_lossy()
        );
        // A PATH-based command stays as it is.
        assert_eq!(
            merged
                .auth_info("bob")
                .unwrap()
                .exec
                .as_ref()
                .unwrap()
                .command,
            "kubelogin"
        );
        assert_eq!(alice.location_of_origin.as_deref(), Some(a.as_path()));
    }

    #[test]
    fn missing_files_in_the_list_are_skipped_but_an_explicit_one_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.yaml", A);
        let missing = dir.path().join("nope.yaml");
        let merged = ClientConfigLoadingRules::with_precedence([&missing, &a])
            .load()
            .unwrap();
        assert_eq!(merged.current_context.as_deref(), Some("ctx-a"));
        let err = ClientConfigLoadingRules::explicit(&missing)
            .load()
            .unwrap_err();
        assert!(err.is_io());
        assert!(err.to_string().contains("nope.yaml"), "{err}");
        assert!(err.to_string().contains("does not exist"), "{err}");
        // A path that cannot be reached for another reason is not "does not exist": the read
        // says why, as client-go's loader (which stops only on `os.IsNotExist`) does.
        let under_a_file = a.join("kubeconfig");
        let err = ClientConfigLoadingRules::explicit(&under_a_file)
            .load()
            .unwrap_err();
        assert!(err.is_io());
        assert!(!err.to_string().contains("does not exist"), "{err}");
        assert!(err.to_string().contains("a.yaml/kubeconfig"), "{err}");
        let empty = ClientConfigLoadingRules::with_precedence([&missing])
            .load()
            .unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn env_list_is_split_and_deduplicated_else_home() {
        let rules = ClientConfigLoadingRules::from_values(
            Some(std::ffi::OsStr::new("/a:/b::/a:/c")),
            Some(Path::new("/home/u")),
        );
        assert_eq!(
            rules.precedence,
            vec![
                PathBuf::from("/a"),
                PathBuf::from("/b"),
                PathBuf::from("/c")
            ]
        );
        let rules = ClientConfigLoadingRules::from_values(
            Some(std::ffi::OsStr::new("")),
            Some(Path::new("/home/u")),
        );
        assert_eq!(
            rules.precedence,
            vec![PathBuf::from("/home/u/.kube/config")]
        );
    }

    #[test]
    fn malformed_files_name_the_file_and_never_panic() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("tabs.yaml", "clusters:\n\t- name: x"),
            ("wrongtype.yaml", "clusters: 5"),
            (
                "badb64.yaml",
                "clusters:\n- name: x\n  cluster:\n    certificate-authority-data: '!!!notbase64'",
            ),
            ("list.yaml", "- 1\n- 2"),
            ("noname.yaml", "users:\n- user: {token: x}"),
        ];
        for (name, text) in cases {
            let path = write(dir.path(), name, text);
            let err = ClientConfigLoadingRules::explicit(&path)
                .load()
                .unwrap_err();
            assert!(err.is_parse(), "{name}: {err:?}");
            assert!(err.to_string().contains(name), "{name}: {err}");
        }
        // Text that is not YAML: the message says where, without quoting the text.
        let path = write(
            dir.path(),
            "cut.yaml",
            "users:\n- name: u\n  user: {token: \"abc",
        );
        let err = ClientConfigLoadingRules::explicit(&path)
            .load()
            .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("at line 3 column"), "{message}");
        assert!(!message.contains("abc"), "{message}");
        // Empty and null documents are empty configs.
        for text in [
            "",
            "   \n",
            "~\n",
            "clusters: null\nusers: null\ncontexts: null",
        ] {
            let cfg = Kubeconfig::from_yaml(text).unwrap();
            assert!(cfg.is_empty(), "{text:?}");
        }
    }

    /// client-go's v1 conversion turns each named list into a map and refuses a name twice in
    /// one list ("duplicate name ... in list"): clusters, users, contexts, and the extensions
    /// of the file, its preferences and each cluster, user and context. An extension with no
    /// value (null) takes no place in the map, so the same name may follow it. The file is
    /// refused when loaded, so every load that reads it fails, as kubectl does.
    #[test]
    fn a_name_twice_in_one_list_is_refused_naming_the_file_and_the_name() {
        let ext = "extensions: [{name: e, extension: 1}, {name: e, extension: 2}]";
        let cases = [
            (
                "clusters:\n- name: c\n  cluster: {server: https://a}\n- name: c\n  cluster: {server: https://b}".to_string(),
                "clusters: duplicate name \"c\" in list",
            ),
            (
                "users:\n- name: u\n  user: {token: SECRET-1}\n- name: v\n- name: u\n  user: {token: SECRET-2}".to_string(),
                "users: duplicate name \"u\" in list",
            ),
            (
                "contexts:\n- name: x\n  context: {cluster: c}\n- name: x\n  context: {cluster: d}".to_string(),
                "contexts: duplicate name \"x\" in list",
            ),
            (
                format!("{ext}\n"),
                "extensions: duplicate name \"e\" in list",
            ),
            (
                format!("preferences:\n  {ext}\n"),
                "preferences: extensions: duplicate name \"e\" in list",
            ),
            (
                format!("clusters:\n- name: c\n  cluster:\n    {ext}\n"),
                "cluster \"c\": extensions: duplicate name \"e\" in list",
            ),
            (
                format!("users:\n- name: u\n  user:\n    {ext}\n"),
                "user \"u\": extensions: duplicate name \"e\" in list",
            ),
            (
                format!("contexts:\n- name: x\n  context:\n    {ext}\n"),
                "context \"x\": extensions: duplicate name \"e\" in list",
            ),
            (
                "extensions: [{name: e, extension: 1}, {name: e}]".to_string(),
                "extensions: duplicate name \"e\" in list",
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (text, want) in cases {
            let err = Kubeconfig::from_yaml(&text).unwrap_err();
            assert!(err.is_parse(), "{text}: {err:?}");
            assert_eq!(err.to_string(), want, "{text}");
            assert!(!format!("{err:?}").contains("SECRET"), "{err:?}");
            // Loaded as a file of a KUBECONFIG list, the whole load fails naming the file.
            let path = write(dir.path(), "dup.yaml", &text);
            let ok = write(
                dir.path(),
                "ok.yaml",
                "clusters:\n- name: ok\n  cluster: {server: https://ok}",
            );
            let err = ClientConfigLoadingRules::with_precedence([&ok, &path])
                .load()
                .unwrap_err();
            assert_eq!(err.to_string(), format!("{}: {want}", path.display()));
        }
        // The same name in different lists, and an extension after a null one of the same
        // name, are fine.
        for text in [
            "clusters: [{name: a}]\nusers: [{name: a}]\ncontexts: [{name: a}]",
            "extensions: [{name: e}, {name: e, extension: 1}]",
            "extensions: [{name: e, extension: null}, {name: e, extension: null}]",
            "clusters:\n- name: a\n  cluster: {extensions: [{name: e, extension: 1}]}\n- name: b\n  cluster: {extensions: [{name: e, extension: 1}]}",
        ] {
            Kubeconfig::from_yaml(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
    }

    #[test]
    fn bad_base64_names_the_field_and_the_cluster_or_user() {
        let cases = [
            (
                "clusters:\n- name: prod\n  cluster:\n    certificate-authority-data: '!!!notbase64'",
                "cluster \"prod\": certificate-authority-data is not valid base64",
            ),
            (
                "users:\n- name: jane\n  user:\n    client-certificate-data: 'a b c !'",
                "user \"jane\": client-certificate-data is not valid base64",
            ),
            (
                "users:\n- name: ok\n  user: {}\n- user:\n    client-key-data: 'S3CR3T-KEY%%'",
                "users[1]: client-key-data is not valid base64",
            ),
        ];
        for (text, want) in cases {
            let err = Kubeconfig::from_yaml(text).unwrap_err();
            assert!(err.is_parse(), "{err:?}");
            assert!(err.to_string().contains(want), "{err} / {want}");
            assert!(!format!("{err} {err:?}").contains("S3CR3T"), "{err:?}");
        }
        // Valid data (with line breaks, without padding) still reads.
        let cfg = Kubeconfig::from_yaml(
            "clusters:\n- name: c\n  cluster:\n    certificate-authority-data: \"Q0\\nE\"",
        )
        .unwrap();
        assert_eq!(
            cfg.cluster("c")
                .unwrap()
                .certificate_authority_data
                .as_deref(),
            Some(&b"CA"[..])
        );
    }

    /// A value of the wrong type in a field that holds a secret (client-go refuses a YAML number
    /// where a string belongs, as kclient does) is an error naming the user or cluster and the
    /// field, never quoting the value; other wrong types name their entry and leave the value
    /// out too.
    #[test]
    fn wrong_types_name_the_entry_and_field_never_the_value() {
        let cases = [
            (
                "users:\n- name: u\n  user:\n    username: admin\n    password: 84736251\n",
                "user \"u\": password must be a string, not a number (put it in quotes)",
            ),
            (
                "users:\n- name: u\n  user: {token: 84736251}\n",
                "user \"u\": token must be a string, not a number",
            ),
            (
                "users:\n- name: u\n  user: {token: 8473.6251}\n",
                "user \"u\": token must be a string, not a number",
            ),
            (
                "users:\n- user: {client-key-data: 84736251}\n",
                "users[0]: client-key-data must be a string, not a number",
            ),
            (
                "users:\n- name: u\n  user:\n    exec: {command: x, args: [--token, 84736251]}\n",
                "user \"u\": exec args[1] must be a string, not a number",
            ),
            (
                "users:\n- name: u\n  user:\n    exec: {command: x, env: [{name: TOKEN, value: 84736251}]}\n",
                "user \"u\": exec env \"TOKEN\" value must be a string, not a number",
            ),
            (
                "clusters:\n- name: c\n  cluster: {server: https://h, proxy-url: 84736251}\n",
                "cluster \"c\": proxy-url must be a string, not a number",
            ),
            // Fields without secrets, and shapes the checks above do not cover: serde's message
            // without the value it quotes.
            (
                "users:\n- name: ok\n- name: u\n  user: \"s3cr3t \\\" 84736251, expected x\"\n",
                "invalid kubeconfig: user \"u\": invalid type: string, expected struct AuthInfo",
            ),
            (
                "users:\n- name: u\n  user: {username: 84736251}\n",
                "invalid kubeconfig: user \"u\": invalid type: integer, expected a string",
            ),
            (
                "contexts:\n- name: x\n  context: {namespace: 84736251}\n",
                "invalid kubeconfig: context \"x\": invalid type: integer, expected a string",
            ),
        ];
        for (text, want) in cases {
            let err = Kubeconfig::from_yaml(text).unwrap_err();
            let shown = format!("{err} | {err:?}");
            assert!(err.is_parse(), "{shown}");
            assert!(err.to_string().contains(want), "{shown}\nwant: {want}");
            for secret in ["84736251", "8473.6251", "s3cr3t"] {
                assert!(!shown.contains(secret), "{shown}");
            }
        }
        // Quoted, the same values read as strings; an auth-provider's config is not decoded.
        let cfg = Kubeconfig::from_yaml(
            "users:\n- name: u\n  user:\n    password: \"84736251\"\n    auth-provider: {name: oidc, config: {client-secret: 84736251}}\n",
        )
        .unwrap();
        let user = cfg.auth_info("u").unwrap();
        assert_eq!(user.password.as_ref().unwrap().expose(), "84736251");
    }

    #[test]
    fn without_value_drops_only_the_quoted_value() {
        let cases = [
            (
                "invalid type: integer `84736251`, expected a string",
                "invalid type: integer, expected a string",
            ),
            (
                r#"invalid value: string "a\"b, expected `c`", expected struct X"#,
                "invalid value: string, expected struct X",
            ),
            (
                "invalid type: floating point `1.5`, expected a string",
                "invalid type: floating point, expected a string",
            ),
            (
                "invalid type: sequence, expected a string",
                "invalid type: sequence, expected a string",
            ),
            ("missing field `name`", "missing field `name`"),
            // An unterminated quote drops everything after it.
            ("invalid type: string \"abc", "invalid type: string"),
        ];
        for (message, want) in cases {
            assert_eq!(without_value(message), want, "{message}");
        }
    }

    /// A key written with no value (`insecure-skip-tls-verify:`, as a template leaves it when
    /// its variable is unset) is YAML's null, which kubectl reads as the field's zero value
    /// (client-go decodes the file as JSON, where null leaves a field unset).
    #[test]
    fn keys_without_a_value_read_as_unset_as_kubectl_reads_them() {
        let k = Kubeconfig::from_yaml(
            r#"
current-context: c
preferences:
  colors:
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify:
    disable-compression:
contexts:
- name: c
  context:
    cluster: c
    user: u
users:
- name: u
  user:
    exec:
      command: plugin
      apiVersion: client.authentication.k8s.io/v1beta1
      provideClusterInfo:
      env:
      - name: REGION
        value:
"#,
        )
        .unwrap();
        let cluster = k.cluster("c").unwrap();
        assert!(!cluster.insecure_skip_tls_verify);
        assert!(!cluster.disable_compression);
        assert!(!k.preferences.colors);
        let exec = k.auth_info("u").unwrap().exec.as_ref().unwrap();
        assert!(!exec.provide_cluster_info);
        assert_eq!(exec.env[0].value, "");
        let context =
            Kubeconfig::from_yaml("contexts:\n- name: c\n  context:\n    cluster:\n    user:\n")
                .unwrap();
        assert_eq!(context.context("c").unwrap().user, "");
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let cfg = Kubeconfig::from_yaml(
            "users:\n- name: u\n  user:\n    token: tok-SECRET\n    password: pw-SECRET\n    client-key-data: a2V5LVNFQ1JFVA==\n",
        )
        .unwrap();
        let user = cfg.auth_info("u").unwrap();
        assert_eq!(
            user.client_key_data.as_ref().unwrap().expose(),
            b"key-SECRET"
        );
        let debug = format!("{cfg:?}");
        assert!(!debug.contains("SECRET"), "{debug}");
    }
}
