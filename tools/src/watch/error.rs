//! [`UntilError`]: why a wait of [`until`](super::until) and its relatives ended without its
//! conditions being met.

use std::fmt;

/// Any error a condition may return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a wait ended before its conditions were met.
#[derive(Debug)]
#[non_exhaustive]
pub enum UntilError {
    /// The timeout passed (client-go's `wait.ErrWaitTimeout`).
    Timeout,
    /// The cancellation token fired.
    Cancelled,
    /// The watch ended and cannot resume (client-go's `ErrWatchClosed`); a plain watch given
    /// to [`until_without_retry`](super::until_without_retry) ended.
    WatchClosed,
    /// The server failed the watch or list for good, for example `410 Gone` (the resource
    /// version is too old: list again and start from the list's version), or refused an
    /// invalid request.
    Watch(kclient_apimachinery::Error),
    /// The informer of [`until_with_sync`](super::until_with_sync) refused the handler.
    Informer(kclient_cache::Error),
    /// A condition or precondition returned this error.
    Condition(BoxError),
}

impl UntilError {
    /// Whether the wait ended because its timeout passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, UntilError::Timeout)
    }

    /// The server's error, when the watch or list failed.
    pub fn api_error(&self) -> Option<&kclient_apimachinery::Error> {
        match self {
            UntilError::Watch(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for UntilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UntilError::Timeout => f.write_str("timed out waiting for the condition"),
            UntilError::Cancelled => f.write_str("cancelled while waiting for the condition"),
            UntilError::WatchClosed => f.write_str("the watch closed before the condition was met"),
            UntilError::Watch(e) => write!(f, "watching for the condition: {e}"),
            UntilError::Informer(e) => write!(f, "starting the informer: {e}"),
            UntilError::Condition(e) => write!(f, "the condition failed: {e}"),
        }
    }
}

impl std::error::Error for UntilError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UntilError::Watch(e) => Some(e),
            UntilError::Informer(e) => Some(e),
            UntilError::Condition(e) => Some(&**e),
            _ => None,
        }
    }
}

/// So that `?` on a wait works in a function returning the API error (`kclient::Error`): a
/// failed watch converts to the server's error, keeping its `is_*` answers (`is_gone()`), and
/// anything else to an [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<UntilError>()` gives this error back.
impl From<UntilError> for kclient_apimachinery::Error {
    fn from(error: UntilError) -> Self {
        match error {
            UntilError::Watch(api) => api,
            other => kclient_apimachinery::Error::other(other),
        }
    }
}
