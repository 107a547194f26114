//! [`Error`], the one error of discovery and the RESTMapper: a failed request, a partial
//! discovery (client-go's `ErrGroupDiscoveryFailed`), a stale group version, a lookup the
//! RESTMapper could not answer (`NoResourceMatchError`, `NoKindMatchError`,
//! `AmbiguousResourceError`), or a disk cache that could not be used.

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error as StdError;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use kclient_apimachinery::{GroupKind, GroupVersion, GroupVersionKind, GroupVersionResource};

/// A discovery or RESTMapper failure. Cheap to clone, so caches can keep it.
#[derive(Clone)]
pub struct Error {
    inner: Arc<Repr>,
}

enum Repr {
    Request(kclient_apimachinery::Error),
    GroupDiscoveryFailed(BTreeMap<GroupVersion, Error>),
    StaleGroupVersion(GroupVersion),
    EmptyResponse(String),
    NotInCache(String),
    NoResourceMatch(GroupVersionResource),
    NoKindMatch {
        group_kind: GroupKind,
        versions: Vec<String>,
    },
    AmbiguousResource {
        partial: GroupVersionResource,
        resources: Vec<GroupVersionResource>,
        kinds: Vec<GroupVersionKind>,
    },
    AmbiguousKind {
        partial: GroupKind,
        kinds: Vec<GroupVersionKind>,
    },
    Invalid(String),
    Cache {
        path: PathBuf,
        source: Box<dyn StdError + Send + Sync>,
    },
}

impl Error {
    fn new(kind: Repr) -> Error {
        Error {
            inner: Arc::new(kind),
        }
    }

    pub(crate) fn group_discovery_failed(groups: BTreeMap<GroupVersion, Error>) -> Error {
        Error::new(Repr::GroupDiscoveryFailed(groups))
    }

    pub(crate) fn stale_group_version(gv: GroupVersion) -> Error {
        Error::new(Repr::StaleGroupVersion(gv))
    }

    pub(crate) fn empty_response(group_version: &str) -> Error {
        Error::new(Repr::EmptyResponse(group_version.to_owned()))
    }

    pub(crate) fn not_in_cache(group_version: &str) -> Error {
        Error::new(Repr::NotInCache(group_version.to_owned()))
    }

    pub(crate) fn no_resource_match(partial: GroupVersionResource) -> Error {
        Error::new(Repr::NoResourceMatch(partial))
    }

    pub(crate) fn no_kind_match(group_kind: GroupKind, versions: &[&str]) -> Error {
        Error::new(Repr::NoKindMatch {
            group_kind,
            versions: versions.iter().map(|v| (*v).to_owned()).collect(),
        })
    }

    pub(crate) fn ambiguous_resource(
        partial: GroupVersionResource,
        resources: Vec<GroupVersionResource>,
        kinds: Vec<GroupVersionKind>,
    ) -> Error {
        Error::new(Repr::AmbiguousResource {
            partial,
            resources,
            kinds,
        })
    }

    pub(crate) fn ambiguous_kind(partial: GroupKind, kinds: Vec<GroupVersionKind>) -> Error {
        Error::new(Repr::AmbiguousKind { partial, kinds })
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(Repr::Invalid(message.into()))
    }

    pub(crate) fn cache(
        path: impl Into<PathBuf>,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Error {
        Error::new(Repr::Cache {
            path: path.into(),
            source: source.into(),
        })
    }

    /// Whether some group versions could not be discovered while others could (client-go's
    /// `IsGroupDiscoveryFailedError`); [`Error::failed_groups`] says which and why.
    pub fn is_group_discovery_failed(&self) -> bool {
        matches!(*self.inner, Repr::GroupDiscoveryFailed(_))
    }

    /// The group versions that failed and why, for a partial discovery failure.
    pub fn failed_groups(&self) -> Option<&BTreeMap<GroupVersion, Error>> {
        match &*self.inner {
            Repr::GroupDiscoveryFailed(groups) => Some(groups),
            _ => None,
        }
    }

    /// Whether aggregated discovery marked this group version stale (its aggregated API
    /// server is unreachable).
    pub fn is_stale_group_version(&self) -> bool {
        matches!(*self.inner, Repr::StaleGroupVersion(_))
    }

    /// Whether the RESTMapper found no resource or kind for the lookup (client-go's
    /// `meta.IsNoMatchError`).
    pub fn is_no_match(&self) -> bool {
        matches!(
            *self.inner,
            Repr::NoResourceMatch(_) | Repr::NoKindMatch { .. }
        )
    }

    /// Whether the lookup matched several resources or kinds with no way to prefer one
    /// (client-go's `meta.IsAmbiguousError`).
    pub fn is_ambiguous(&self) -> bool {
        matches!(
            *self.inner,
            Repr::AmbiguousResource { .. } | Repr::AmbiguousKind { .. }
        )
    }

    /// Whether a cached discovery client does not know the group version asked for
    /// (client-go's `memory.ErrCacheNotFound`).
    pub fn is_not_in_cache(&self) -> bool {
        matches!(*self.inner, Repr::NotInCache(_))
    }

    /// Whether the disk cache could not be read or written.
    pub fn is_cache(&self) -> bool {
        matches!(*self.inner, Repr::Cache { .. })
    }

    /// The failed API request behind this error, if it is one.
    pub fn api_error(&self) -> Option<&kclient_apimachinery::Error> {
        match &*self.inner {
            Repr::Request(err) => Some(err),
            _ => None,
        }
    }

    /// Whether the server answered 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        self.api_error().is_some_and(|e| e.is_not_found())
    }

    /// Whether the failure is worth retrying soon: a connection refused or reset, a request
    /// that timed out, a 5xx or a 429 (client-go memcache's `isTransientError`, which counts a
    /// deadline exceeded).
    pub fn is_transient(&self) -> bool {
        self.api_error().is_some_and(|e| {
            e.is_connection_refused()
                || e.is_connection_reset()
                || e.is_transport_timeout()
                || e.code().is_some_and(|c| c >= 500)
                || e.is_too_many_requests()
        })
    }
}

impl From<kclient_apimachinery::Error> for Error {
    fn from(err: kclient_apimachinery::Error) -> Error {
        Error::new(Repr::Request(err))
    }
}

/// So that `?` on discovery or the RESTMapper works in a function returning the API error
/// (`kclient::Error`): a failed request converts to the request's own error, keeping its
/// `is_*` answers, and anything else to an [`Error::other`](kclient_apimachinery::Error::other)
/// from which `downcast_ref::<kclient_discovery::Error>()` gives this error back.
impl From<Error> for kclient_apimachinery::Error {
    fn from(error: Error) -> Self {
        match error.api_error() {
            Some(api) => api.clone(),
            None => kclient_apimachinery::Error::other(error),
        }
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Repr::Request(err) => fmt::Display::fmt(err, f),
            Repr::GroupDiscoveryFailed(groups) => {
                f.write_str("unable to retrieve the complete list of server APIs: ")?;
                for (i, (gv, err)) in groups.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{gv}: {err}")?;
                }
                Ok(())
            }
            Repr::StaleGroupVersion(gv) => write!(f, "stale GroupVersion discovery: {gv}"),
            Repr::EmptyResponse(gv) => write!(f, "received empty response for: {gv}"),
            Repr::NotInCache(gv) => {
                write!(f, "group version {gv} not found in the discovery cache")
            }
            Repr::NoResourceMatch(partial) => {
                write!(f, "no matches for {partial}")
            }
            Repr::NoKindMatch {
                group_kind,
                versions,
            } => {
                // client-go's words: the group versions searched, sorted and each once.
                let searched: BTreeSet<String> = versions
                    .iter()
                    .map(|v| GroupVersion::new(&group_kind.group, v).to_string())
                    .collect();
                let kind = &group_kind.kind;
                match searched.len() {
                    0 => write!(
                        f,
                        "no matches for kind {kind:?} in group {:?}",
                        group_kind.group
                    ),
                    1 => {
                        let version = searched.first().map_or("", String::as_str);
                        write!(f, "no matches for kind {kind:?} in version {version:?}")
                    }
                    _ => {
                        write!(f, "no matches for kind {kind:?} in versions [")?;
                        for (i, version) in searched.iter().enumerate() {
                            if i > 0 {
                                f.write_str(" ")?;
                            }
                            write!(f, "{version:?}")?;
                        }
                        f.write_str("]")
                    }
                }
            }
            Repr::AmbiguousResource {
                partial,
                resources,
                kinds,
            } => {
                write!(f, "{partial} matches multiple ")?;
                if kinds.is_empty() {
                    write!(f, "resources [{}]", join(resources))
                } else {
                    write!(f, "kinds [{}]", join(kinds))
                }
            }
            Repr::AmbiguousKind { partial, kinds } => {
                write!(f, "{partial} matches multiple kinds [{}]", join(kinds))
            }
            Repr::Invalid(message) => f.write_str(message),
            Repr::Cache { path, .. } => {
                write!(f, "discovery cache file {} is unusable", path.display())
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Repr::Request(err) => f.debug_tuple("Error::Request").field(err).finish(),
            Repr::Cache { path, source } => f
                .debug_struct("Error::Cache")
                .field("path", path)
                .field("source", source)
                .finish(),
            _ => write!(f, "Error({self})"),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &*self.inner {
            Repr::Request(err) => err.source(),
            Repr::Cache { source, .. } => Some(&**source as &(dyn StdError + 'static)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_discovery_failed_lists_groups_in_order() {
        let mut groups = BTreeMap::new();
        groups.insert(
            GroupVersion::new("metrics.k8s.io", "v1beta1"),
            Error::stale_group_version(GroupVersion::new("metrics.k8s.io", "v1beta1")),
        );
        groups.insert(
            GroupVersion::new("a.io", "v1"),
            Error::empty_response("a.io/v1"),
        );
        let err = Error::group_discovery_failed(groups);
        assert!(err.is_group_discovery_failed());
        assert_eq!(err.failed_groups().map(BTreeMap::len), Some(2));
        assert_eq!(
            err.to_string(),
            "unable to retrieve the complete list of server APIs: a.io/v1: received empty \
             response for: a.io/v1, metrics.k8s.io/v1beta1: stale GroupVersion discovery: \
             metrics.k8s.io/v1beta1"
        );
    }

    #[test]
    fn match_errors_are_classified() {
        let err = Error::no_resource_match(GroupVersionResource::new("", "", "foos"));
        assert!(err.is_no_match());
        assert!(!err.is_ambiguous());
        let err = Error::no_kind_match(GroupKind::new("apps", "Foo"), &[]);
        assert!(err.is_no_match());
        assert_eq!(
            err.to_string(),
            r#"no matches for kind "Foo" in group "apps""#
        );
        let err = Error::ambiguous_kind(
            GroupKind::new("a", "K"),
            vec![
                GroupVersionKind::new("a", "v1", "K"),
                GroupVersionKind::new("a", "v2", "K"),
            ],
        );
        assert!(err.is_ambiguous());
    }
}
