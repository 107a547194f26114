//! The error of this crate's library functions (the network controller, its CRD installer and
//! its demo): an API request that failed, a wait that ran out of time, a controller the
//! runtime could not run, or an endpoint of its manager that could not be read.

use std::fmt;

/// What went wrong; see the `is_*` checks.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// A request to the API server failed.
    Api {
        context: String,
        source: kclient::apimachinery::Error,
    },
    /// The client configuration could not be turned into a client.
    Config(kclient::rest::ConfigError),
    /// Something did not happen in time.
    Timeout(String),
    /// The controller was stopped before it was ready, or could not register a handler.
    Stopped(String),
    /// The controller runtime could not run the controller.
    Controller(kclient::controller::Error),
    /// Reading an endpoint of the controller's manager (`/readyz`, `/metrics`) failed.
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl Error {
    /// An API error with what was being done (`"creating ConfigMap ns/network-a"`).
    pub(crate) fn api(context: impl Into<String>, source: kclient::apimachinery::Error) -> Error {
        Error {
            kind: Kind::Api {
                context: context.into(),
                source,
            },
        }
    }

    /// A client configuration that could not be used.
    pub(crate) fn config(source: kclient::rest::ConfigError) -> Error {
        Error {
            kind: Kind::Config(source),
        }
    }

    /// A wait for `what` that ran out of time.
    pub(crate) fn timeout(what: impl Into<String>) -> Error {
        Error {
            kind: Kind::Timeout(what.into()),
        }
    }

    /// The controller stopped (or was stopped) before `what`.
    pub(crate) fn stopped(what: impl Into<String>) -> Error {
        Error {
            kind: Kind::Stopped(what.into()),
        }
    }

    /// The controller runtime's refusal to run the controller.
    pub(crate) fn controller(source: kclient::controller::Error) -> Error {
        Error {
            kind: Kind::Controller(source),
        }
    }

    /// A failed read of one of the manager's endpoints, with what was being read.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error {
            kind: Kind::Io {
                context: context.into(),
                source,
            },
        }
    }

    /// Whether reading one of the manager's endpoints (`/readyz`, `/metrics`) failed.
    pub fn is_io(&self) -> bool {
        matches!(self.kind, Kind::Io { .. })
    }

    /// Whether the controller runtime could not run the controller (an informer refused its
    /// handlers, or the leader election configuration is invalid).
    pub fn is_controller(&self) -> bool {
        matches!(self.kind, Kind::Controller(_))
    }

    /// Whether an API request failed; [`api_error`](Self::api_error) gives it.
    pub fn is_api(&self) -> bool {
        matches!(self.kind, Kind::Api { .. })
    }

    /// Whether the client configuration could not be used.
    pub fn is_config(&self) -> bool {
        matches!(self.kind, Kind::Config(_))
    }

    /// Whether a wait ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, Kind::Timeout(_))
    }

    /// Whether the controller stopped before it could do what was asked.
    pub fn is_stopped(&self) -> bool {
        matches!(self.kind, Kind::Stopped(_))
    }

    /// The API error, for its `is_not_found()`, `is_conflict()`, ... checks.
    pub fn api_error(&self) -> Option<&kclient::apimachinery::Error> {
        match &self.kind {
            Kind::Api { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Api { context, .. } | Kind::Io { context, .. } => write!(f, "{context}"),
            Kind::Config(_) => write!(f, "building a client from the configuration"),
            Kind::Timeout(what) => write!(f, "timed out waiting for {what}"),
            Kind::Stopped(what) => write!(f, "stopped before {what}"),
            Kind::Controller(_) => write!(f, "running the Network controller"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Api { source, .. } => Some(source),
            Kind::Config(source) => Some(source),
            Kind::Controller(source) => Some(source),
            Kind::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Adds the context of a failed API request.
pub(crate) trait ApiContext<T> {
    /// Wraps the error with `context` (evaluated only on error).
    fn context(self, context: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T> ApiContext<T> for Result<T, kclient::apimachinery::Error> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|e| Error::api(context(), e))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn display_shows_its_level_and_source_gives_the_cause() {
        let cause = kclient::apimachinery::Error::new_not_found("", "configmaps", "network-a");
        let err = Error::api("creating ConfigMap ns/network-a", cause);
        assert!(err.is_api() && !err.is_timeout());
        assert_eq!(err.to_string(), "creating ConfigMap ns/network-a");
        assert!(err.api_error().unwrap().is_not_found());
        assert!(err.source().unwrap().to_string().contains("network-a"));

        let err = Error::timeout("the CRD to become Established");
        assert!(err.is_timeout() && err.source().is_none());
        assert_eq!(
            err.to_string(),
            "timed out waiting for the CRD to become Established"
        );
        assert!(Error::stopped("the caches synced").is_stopped());
    }
}
