//! The error of this crate's own operations: index look-ups, informer lifecycle and queue
//! shutdown.
//!
//! Errors that come from the API server (a failed LIST, a 410 on a watch) keep their own type,
//! `kclient_apimachinery::Error`, and reach users through the reflector's watch-error handler;
//! a lister's "not found" is such an API error too, so callers test it with `is_not_found()` as
//! they would for a GET.

use std::fmt;

/// An error from a store, an indexer, a queue or an informer of this crate.
///
/// Opaque on purpose: test what happened with the `is_*` methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    IndexNotFound(String),
    IndexerConflict(Vec<String>),
    AlreadyStarted,
    Stopped,
}

impl Error {
    pub(crate) fn index_not_found(name: &str) -> Self {
        Error {
            kind: Kind::IndexNotFound(name.to_owned()),
        }
    }

    pub(crate) fn indexer_conflict(mut names: Vec<String>) -> Self {
        names.sort();
        Error {
            kind: Kind::IndexerConflict(names),
        }
    }

    pub(crate) fn already_started() -> Self {
        Error {
            kind: Kind::AlreadyStarted,
        }
    }

    pub(crate) fn stopped() -> Self {
        Error {
            kind: Kind::Stopped,
        }
    }

    /// The named index does not exist on this indexer.
    pub fn is_index_not_found(&self) -> bool {
        matches!(self.kind, Kind::IndexNotFound(_))
    }

    /// `add_indexers` was given a name that is already registered.
    pub fn is_indexer_conflict(&self) -> bool {
        matches!(self.kind, Kind::IndexerConflict(_))
    }

    /// The informer has already started, and the call is only allowed before that
    /// (`set_transform`, `set_watch_error_handler`).
    pub fn is_already_started(&self) -> bool {
        matches!(self.kind, Kind::AlreadyStarted)
    }

    /// The informer has stopped and accepts no new handlers or indexers.
    pub fn is_stopped(&self) -> bool {
        matches!(self.kind, Kind::Stopped)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::IndexNotFound(name) => write!(f, "index with name {name} does not exist"),
            Kind::IndexerConflict(names) => write!(f, "indexer conflict: {}", names.join(", ")),
            Kind::AlreadyStarted => f.write_str("informer has already started"),
            Kind::Stopped => f.write_str("informer has already stopped"),
        }
    }
}

impl std::error::Error for Error {}

/// So that `?` on an index look-up or an informer call works in a function returning the API
/// error (`kclient::Error`): the result is an [`Error::other`](kclient_apimachinery::Error::other)
/// from which `downcast_ref::<kclient_cache::Error>()` gives this error back.
impl From<Error> for kclient_apimachinery::Error {
    fn from(error: Error) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_lowercase_without_period() {
        let errors = [
            Error::index_not_found("byNode"),
            Error::indexer_conflict(vec!["b".into(), "a".into()]),
            Error::already_started(),
            Error::stopped(),
        ];
        for e in errors {
            let text = e.to_string();
            assert!(text.starts_with(|c: char| c.is_lowercase()), "{text}");
            assert!(!text.ends_with('.'), "{text}");
        }
        assert_eq!(
            Error::indexer_conflict(vec!["b".into(), "a".into()]).to_string(),
            "indexer conflict: a, b"
        );
        assert!(Error::index_not_found("x").is_index_not_found());
        assert!(!Error::stopped().is_already_started());
    }
}
