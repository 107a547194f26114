//! [`Error`]: why a webhook server could not start.

use std::fmt;

/// Why [`WebhookServer::bind`](crate::WebhookServer::bind) failed. It names the files or the
/// address, never a key's content.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Tls,
    Bind,
}

impl Error {
    pub(crate) fn tls(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Tls,
            message: message.into(),
        }
    }

    pub(crate) fn bind(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Bind,
            message: message.into(),
        }
    }

    /// The certificate or key could not be read or loaded (or no crypto provider is set).
    pub fn is_tls(&self) -> bool {
        self.kind == ErrorKind::Tls
    }

    /// The address could not be listened on.
    pub fn is_bind(&self) -> bool {
        self.kind == ErrorKind::Bind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "webhook server: {}", self.message)
    }
}

impl std::error::Error for Error {}
