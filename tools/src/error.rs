//! [`Error`], the error of this crate's own checks: an invalid leader election configuration
//! or event. Requests to the API server fail with [`kclient_apimachinery::Error`] instead.

use std::fmt;

/// An error from `kclient-tools`: what was wrong, with `is_*()` checks for the kind.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    InvalidConfig,
    LeaseExpired,
}

impl Error {
    pub(crate) fn invalid_config(message: impl Into<String>) -> Error {
        Error {
            kind: Kind::InvalidConfig,
            message: message.into(),
        }
    }

    pub(crate) fn lease_expired(message: impl Into<String>) -> Error {
        Error {
            kind: Kind::LeaseExpired,
            message: message.into(),
        }
    }

    /// Whether a configuration was rejected (client-go's `NewLeaderElector` errors).
    pub fn is_invalid_config(&self) -> bool {
        self.kind == Kind::InvalidConfig
    }

    /// Whether a leader failed to renew its lease for longer than tolerated
    /// (from [`LeaderElector::check`](crate::LeaderElector::check)).
    pub fn is_lease_expired(&self) -> bool {
        self.kind == Kind::LeaseExpired
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// So that `?` works in a function returning the API error (`kclient::Error`): the result is an
/// [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<kclient_tools::Error>()` gives this error back.
impl From<Error> for kclient_apimachinery::Error {
    fn from(error: Error) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}
