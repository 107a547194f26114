//! Group, version, kind and resource identifiers (client-go's `runtime/schema`):
//! [`GroupVersion`], [`GroupVersionKind`], [`GroupVersionResource`], [`GroupKind`] and
//! [`GroupResource`], with their string forms and parsers.
//!
//! The core group is the empty string: its `apiVersion` is `v1` and its URL prefix is
//! `/api/v1`; every other group's `apiVersion` is `group/version` under `/apis/group/version`.

use std::fmt;
use std::str::FromStr;

/// An API group and version, such as `apps/v1` or (the core group) `v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersion {
    /// The group, `""` for the core group.
    pub group: String,
    /// The version, such as `v1`.
    pub version: String,
}

impl GroupVersion {
    /// A group and version.
    pub fn new(group: impl Into<String>, version: impl Into<String>) -> Self {
        GroupVersion {
            group: group.into(),
            version: version.into(),
        }
    }

    /// Parses an `apiVersion`: `group/version`, `version` (the core group), or `""`/`"/"`
    /// (empty). More than one `/` is an error (client-go's `ParseGroupVersion`).
    pub fn parse(api_version: &str) -> Result<Self, ParseGroupVersionError> {
        if api_version.is_empty() || api_version == "/" {
            return Ok(GroupVersion::default());
        }
        match api_version.split_once('/') {
            None => Ok(GroupVersion::new("", api_version)),
            Some((group, version)) if !version.contains('/') => {
                Ok(GroupVersion::new(group, version))
            }
            Some(_) => Err(ParseGroupVersionError {
                input: api_version.to_owned(),
            }),
        }
    }

    /// Whether group and version are both empty.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty()
    }

    /// The `apiVersion` string: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        self.to_string()
    }

    /// The URL prefix of this group version: `/api/v1` for the core group, else
    /// `/apis/{group}/{version}`.
    pub fn api_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// This group version with a kind.
    pub fn with_kind(&self, kind: impl Into<String>) -> GroupVersionKind {
        GroupVersionKind::new(self.group.clone(), self.version.clone(), kind)
    }

    /// This group version with a resource.
    pub fn with_resource(&self, resource: impl Into<String>) -> GroupVersionResource {
        GroupVersionResource::new(self.group.clone(), self.version.clone(), resource)
    }
}

impl fmt::Display for GroupVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.version)
        } else {
            write!(f, "{}/{}", self.group, self.version)
        }
    }
}

impl FromStr for GroupVersion {
    type Err = ParseGroupVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GroupVersion::parse(s)
    }
}

/// An `apiVersion` with more than one `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseGroupVersionError {
    input: String,
}

impl fmt::Display for ParseGroupVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unexpected GroupVersion string: {:?}", self.input)
    }
}

impl std::error::Error for ParseGroupVersionError {}

/// A group, version and kind: what a serialized object says it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionKind {
    /// The group, `""` for the core group.
    pub group: String,
    /// The version.
    pub version: String,
    /// The kind, such as `Deployment`.
    pub kind: String,
}

impl GroupVersionKind {
    /// A group, version and kind.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        GroupVersionKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// From an object's `apiVersion` and `kind`; an unparsable `apiVersion` gives an empty
    /// group and version (client-go's `FromAPIVersionAndKind`).
    pub fn from_api_version_and_kind(api_version: &str, kind: &str) -> Self {
        let gv = GroupVersion::parse(api_version).unwrap_or_default();
        GroupVersionKind::new(gv.group, gv.version, kind)
    }

    /// The GVK of a [`Resource`](crate::Resource) type.
    pub fn of<K: crate::Resource>() -> Self {
        GroupVersionKind::new(K::GROUP, K::VERSION, K::KIND)
    }

    /// The `apiVersion` string.
    pub fn api_version(&self) -> String {
        self.group_version().to_string()
    }

    /// Group and version.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(self.group.clone(), self.version.clone())
    }

    /// Group and kind.
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(self.group.clone(), self.kind.clone())
    }

    /// Whether all three parts are empty.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty() && self.kind.is_empty()
    }
}

impl fmt::Display for GroupVersionKind {
    /// client-go's form: `apps/v1, Kind=Deployment` (`/v1, Kind=Pod` for the core group).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// A group, version and resource: what a URL names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionResource {
    /// The group, `""` for the core group.
    pub group: String,
    /// The version.
    pub version: String,
    /// The resource (plural, lowercase), such as `deployments`.
    pub resource: String,
}

impl GroupVersionResource {
    /// A group, version and resource.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        GroupVersionResource {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// The GVR of a [`Resource`](crate::Resource) type.
    pub fn of<K: crate::Resource>() -> Self {
        GroupVersionResource::new(K::GROUP, K::VERSION, K::PLURAL)
    }

    /// Parses `resource.version.group` when there are at least two dots (client-go's
    /// `ParseResourceArg`); the [`GroupResource`] reading of the same string is always given.
    pub fn parse_resource_arg(arg: &str) -> (Option<GroupVersionResource>, GroupResource) {
        let gvr = (arg.matches('.').count() >= 2).then(|| {
            let mut parts = arg.splitn(3, '.');
            let resource = parts.next().unwrap_or_default();
            let version = parts.next().unwrap_or_default();
            let group = parts.next().unwrap_or_default();
            GroupVersionResource::new(group, version, resource)
        });
        (gvr, GroupResource::parse(arg))
    }

    /// Group and version.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(self.group.clone(), self.version.clone())
    }

    /// Group and resource.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.resource.clone())
    }

    /// Whether all three parts are empty.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty() && self.resource.is_empty()
    }
}

impl fmt::Display for GroupVersionResource {
    /// client-go's form: `apps/v1, Resource=deployments`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}, Resource={}",
            self.group, self.version, self.resource
        )
    }
}

/// A group and kind, without a version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKind {
    /// The group, `""` for the core group.
    pub group: String,
    /// The kind.
    pub kind: String,
}

impl GroupKind {
    /// A group and kind.
    pub fn new(group: impl Into<String>, kind: impl Into<String>) -> Self {
        GroupKind {
            group: group.into(),
            kind: kind.into(),
        }
    }

    /// Parses `Kind.group` (`Kind` alone for the core group); everything after the first dot
    /// is the group (client-go's `ParseGroupKind`).
    pub fn parse(s: &str) -> Self {
        match s.split_once('.') {
            Some((kind, group)) => GroupKind::new(group, kind),
            None => GroupKind::new("", s),
        }
    }

    /// This group kind at a version.
    pub fn with_version(&self, version: impl Into<String>) -> GroupVersionKind {
        GroupVersionKind::new(self.group.clone(), version, self.kind.clone())
    }

    /// Whether both parts are empty.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.kind.is_empty()
    }
}

impl fmt::Display for GroupKind {
    /// `Kind.group`, or `Kind` for the core group.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// A group and resource, without a version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// The group, `""` for the core group.
    pub group: String,
    /// The resource, such as `deployments`.
    pub resource: String,
}

impl GroupResource {
    /// A group and resource.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        GroupResource {
            group: group.into(),
            resource: resource.into(),
        }
    }

    /// Parses `resource.group` (`resource` alone for the core group), as in
    /// `deployments.apps`; everything after the first dot is the group (client-go's
    /// `ParseGroupResource`).
    pub fn parse(s: &str) -> Self {
        match s.split_once('.') {
            Some((resource, group)) => GroupResource::new(group, resource),
            None => GroupResource::new("", s),
        }
    }

    /// This group resource at a version.
    pub fn with_version(&self, version: impl Into<String>) -> GroupVersionResource {
        GroupVersionResource::new(self.group.clone(), version, self.resource.clone())
    }

    /// Whether both parts are empty.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.resource.is_empty()
    }
}

impl fmt::Display for GroupResource {
    /// `resource.group`, or `resource` for the core group.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_group_versions() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("v1", Some(("", "v1"))),
            ("apps/v1", Some(("apps", "v1"))),
            (
                "rbac.authorization.k8s.io/v1",
                Some(("rbac.authorization.k8s.io", "v1")),
            ),
            ("", Some(("", ""))),
            ("/", Some(("", ""))),
            ("a/b/c", None),
        ];
        for (input, expected) in cases {
            let got = GroupVersion::parse(input).ok();
            let expected = expected.map(|(g, v)| GroupVersion::new(g, v));
            assert_eq!(got, expected, "{input:?}");
        }
        assert_eq!(
            GroupVersion::parse("a/b/c").unwrap_err().to_string(),
            "unexpected GroupVersion string: \"a/b/c\""
        );
        let gv: GroupVersion = "batch/v1".parse().unwrap();
        assert_eq!(gv.to_string(), "batch/v1");
        assert_eq!(GroupVersion::new("", "v1").to_string(), "v1");
    }

    #[test]
    fn api_paths() {
        assert_eq!(GroupVersion::new("", "v1").api_path(), "/api/v1");
        assert_eq!(GroupVersion::new("apps", "v1").api_path(), "/apis/apps/v1");
    }

    #[test]
    fn display_forms_match_client_go() {
        assert_eq!(
            GroupVersionKind::new("apps", "v1", "Deployment").to_string(),
            "apps/v1, Kind=Deployment"
        );
        assert_eq!(
            GroupVersionKind::new("", "v1", "Pod").to_string(),
            "/v1, Kind=Pod"
        );
        assert_eq!(
            GroupVersionResource::new("apps", "v1", "deployments").to_string(),
            "apps/v1, Resource=deployments"
        );
        assert_eq!(
            GroupKind::new("apps", "Deployment").to_string(),
            "Deployment.apps"
        );
        assert_eq!(GroupKind::new("", "Pod").to_string(), "Pod");
        assert_eq!(
            GroupResource::new("apps", "deployments").to_string(),
            "deployments.apps"
        );
        assert_eq!(GroupResource::new("", "pods").to_string(), "pods");
    }

    #[test]
    fn parses_group_resources_and_kinds() {
        assert_eq!(
            GroupResource::parse("deployments.apps"),
            GroupResource::new("apps", "deployments")
        );
        assert_eq!(
            GroupResource::parse("roles.rbac.authorization.k8s.io"),
            GroupResource::new("rbac.authorization.k8s.io", "roles")
        );
        assert_eq!(GroupResource::parse("pods"), GroupResource::new("", "pods"));
        assert_eq!(
            GroupKind::parse("Deployment.apps"),
            GroupKind::new("apps", "Deployment")
        );
        assert_eq!(GroupKind::parse("Pod"), GroupKind::new("", "Pod"));

        let (gvr, gr) = GroupVersionResource::parse_resource_arg("deployments.v1.apps");
        assert_eq!(
            gvr,
            Some(GroupVersionResource::new("apps", "v1", "deployments"))
        );
        assert_eq!(gr, GroupResource::new("v1.apps", "deployments"));
        let (gvr, gr) = GroupVersionResource::parse_resource_arg("deployments.apps");
        assert_eq!(gvr, None);
        assert_eq!(gr, GroupResource::new("apps", "deployments"));
    }

    #[test]
    fn conversions() {
        let gvk = GroupVersionKind::from_api_version_and_kind("apps/v1", "Deployment");
        assert_eq!(gvk, GroupVersionKind::new("apps", "v1", "Deployment"));
        assert_eq!(gvk.api_version(), "apps/v1");
        assert_eq!(gvk.group_kind().with_version("v1"), gvk);
        assert_eq!(
            GroupVersionKind::from_api_version_and_kind("a/b/c", "X"),
            GroupVersionKind::new("", "", "X")
        );
        let gvr = GroupVersion::new("apps", "v1").with_resource("deployments");
        assert_eq!(gvr.group_resource().with_version("v1"), gvr);
        assert_eq!(gvr.group_version().with_kind("Deployment"), gvk);
        assert!(GroupVersionResource::default().is_empty());
    }
}
