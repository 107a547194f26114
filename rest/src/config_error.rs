//! `ConfigError`: why a kubeconfig, an in-cluster environment or a `Config` could not be used.
//!
//! It names the file, the context/cluster/user or the field that was wrong; it never contains
//! a secret value.

use std::error::Error as StdError;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// An error loading or using client configuration (kubeconfig, in-cluster, TLS material).
///
/// Cheap to clone (the source is shared): one failed exec plugin run is handed to every
/// request that waited for it.
#[derive(Clone)]
pub struct ConfigError {
    kind: Kind,
    message: String,
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A file was missing or unreadable.
    Io,
    /// A file or field could not be parsed.
    Parse,
    /// The named context, cluster or user does not exist.
    NotFound,
    /// A value is present but not usable (bad URL, conflicting settings, bad PEM).
    Invalid,
    /// Neither a kubeconfig nor an in-cluster environment was found.
    NotInCluster,
    /// An exec credential plugin failed.
    Exec,
}

impl ConfigError {
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        ConfigError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn with_source(
        mut self,
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        self.source = Some(Arc::from(source.into()));
        self
    }

    pub(crate) fn io(path: &Path, err: std::io::Error) -> Self {
        ConfigError::new(Kind::Io, format!("cannot read {}: {err}", path.display()))
            .with_source(err)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        ConfigError::new(Kind::Invalid, message)
    }

    /// A file, folder or environment variable was missing or could not be read.
    pub fn is_io(&self) -> bool {
        self.kind == Kind::Io
    }

    /// The file or a field in it could not be parsed (YAML, base64, PEM).
    pub fn is_parse(&self) -> bool {
        self.kind == Kind::Parse
    }

    /// A context, cluster or user named by the kubeconfig or an override does not exist.
    pub fn is_not_found(&self) -> bool {
        self.kind == Kind::NotFound
    }

    /// A value was present but unusable (a bad server URL, conflicting auth settings, bad PEM).
    pub fn is_invalid(&self) -> bool {
        self.kind == Kind::Invalid
    }

    /// The process is not in a cluster (`KUBERNETES_SERVICE_HOST`/`_PORT` unset), like client-go's
    /// `ErrNotInCluster`.
    pub fn is_not_in_cluster(&self) -> bool {
        self.kind == Kind::NotInCluster
    }

    /// An exec credential plugin failed or returned unusable credentials.
    pub fn is_exec(&self) -> bool {
        self.kind == Kind::Exec
    }

    /// Prefixes the message with the file this error is about.
    pub(crate) fn in_file(mut self, path: &Path) -> Self {
        self.prefix(&path.display().to_string());
        self
    }

    /// Prefixes the message with what it is about (`what: message`).
    pub(crate) fn prefix(&mut self, what: &str) {
        self.message = format!("{what}: {}", self.message);
    }

    /// This error, its message prefixed with what it is about (`what: message`).
    pub(crate) fn context(mut self, what: &str) -> Self {
        self.prefix(what);
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ConfigError");
        d.field("kind", &self.kind).field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", &source.to_string());
        }
        d.finish()
    }
}

impl StdError for ConfigError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// So that `?` on [`Config`](crate::Config) and [`Client`](crate::Client) construction works in
/// a function returning the API error (`kclient::Error`): the result is an
/// [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<ConfigError>()` gives this error back.
impl From<ConfigError> for kclient_apimachinery::Error {
    fn from(error: ConfigError) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}
