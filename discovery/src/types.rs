//! The discovery documents the API server serves at `/api`, `/apis`, `/api/v1`,
//! `/apis/{group}/{version}` and `/version`: `meta/v1` `APIVersions`, `APIGroupList`,
//! `APIGroup`, `GroupVersionForDiscovery`, `ServerAddressByClientCIDR`, `APIResourceList`,
//! `APIResource`, and `version.Info`.
//!
//! Every field the server sends is kept, TypeMeta (`kind`, `apiVersion`) included, and written
//! back the way Go writes it: a decoded document re-encodes to the server's JSON value. TypeMeta
//! is empty when the server left it out (`/api/v1` sends no `apiVersion`) and is then not
//! written, as Go's `omitempty` does.
//!
//! These are plain structs (owned `String`s and `Vec`s) rather than the compact generated
//! layout: discovery results are few, built by hand from aggregated discovery, and edited by
//! the helpers that filter them, so ease of construction wins over size.

use serde::{Deserialize, Serialize};

use kclient_apimachinery::{GroupVersion, ParseGroupVersionError, null_as_default};

/// The groups the server serves under `/apis` (or the core group under `/api`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct APIGroupList {
    /// `APIGroupList`, or empty when the document had no `kind`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `v1`, or empty when the document had no `apiVersion`.
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// The groups, in the server's order (its priority order).
    #[serde(default, deserialize_with = "null_as_default")]
    pub groups: Vec<APIGroup>,
}

fn group_list_kind() -> String {
    "APIGroupList".to_owned()
}
fn resource_list_kind() -> String {
    "APIResourceList".to_owned()
}
fn v1() -> String {
    "v1".to_owned()
}

impl APIGroupList {
    /// A list of these groups.
    pub fn new(groups: Vec<APIGroup>) -> Self {
        APIGroupList {
            kind: group_list_kind(),
            api_version: v1(),
            groups,
        }
    }
}

/// One API group: its name, the versions served and the preferred one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIGroup {
    /// `APIGroup` when served alone (`/apis/{group}`); empty inside an [`APIGroupList`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `v1` when served alone (`/apis/{group}`); empty inside an [`APIGroupList`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The group's name, `""` for the core group.
    #[serde(default)]
    pub name: String,
    /// The versions served, most preferred first.
    #[serde(default, deserialize_with = "null_as_default")]
    pub versions: Vec<GroupVersionForDiscovery>,
    /// The version clients should use when they have no preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_version: Option<GroupVersionForDiscovery>,
    /// Which server address a client should use, by the client's network; usually empty for
    /// groups (the server fills it for `/api`).
    #[serde(
        default,
        rename = "serverAddressByClientCIDRs",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub server_address_by_client_cidrs: Vec<ServerAddressByClientCIDR>,
}

impl APIGroup {
    /// The group `name` serving `versions` (`["v1", "v1beta1"]`), the first one preferred.
    pub fn new(name: &str, versions: &[&str]) -> Self {
        let versions: Vec<GroupVersionForDiscovery> = versions
            .iter()
            .map(|v| GroupVersionForDiscovery::new(name, v))
            .collect();
        APIGroup {
            name: name.to_owned(),
            preferred_version: versions.first().cloned(),
            versions,
            ..APIGroup::default()
        }
    }
}

/// The address clients on one network should use to reach the server (`meta/v1`
/// `ServerAddressByClientCIDR`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerAddressByClientCIDR {
    /// The network, such as `0.0.0.0/0` (every client).
    #[serde(default, rename = "clientCIDR")]
    pub client_cidr: String,
    /// `host:port` or `ip:port` for clients on that network.
    #[serde(default, rename = "serverAddress")]
    pub server_address: String,
}

impl APIGroup {
    /// The preferred version's name, or `""`.
    pub fn preferred_version_name(&self) -> &str {
        self.preferred_version
            .as_ref()
            .map_or("", |v| v.version.as_str())
    }
}

/// One version of a group, as listed in discovery.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionForDiscovery {
    /// `group/version`, or just `version` for the core group.
    pub group_version: String,
    /// The version alone.
    pub version: String,
}

impl GroupVersionForDiscovery {
    /// The entry of `version` in `group`.
    pub fn new(group: &str, version: &str) -> Self {
        GroupVersionForDiscovery {
            group_version: GroupVersion::new(group, version).to_string(),
            version: version.to_owned(),
        }
    }
}

/// The resources of one group version (`/api/v1`, `/apis/apps/v1`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIResourceList {
    /// `APIResourceList`, or empty when the document had no `kind`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `v1`, or empty when the document had no `apiVersion` (`/api/v1` sends none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `group/version`, or just `version` for the core group.
    #[serde(default)]
    pub group_version: String,
    /// The resources and subresources (`pods`, `pods/status`, ...).
    #[serde(default, rename = "resources", deserialize_with = "null_as_default")]
    pub api_resources: Vec<APIResource>,
}

impl APIResourceList {
    /// A list of `resources` in `group_version`.
    pub fn new(group_version: impl Into<String>, resources: Vec<APIResource>) -> Self {
        APIResourceList {
            kind: resource_list_kind(),
            api_version: v1(),
            group_version: group_version.into(),
            api_resources: resources,
        }
    }

    /// The parsed group version (`""` group for `v1`).
    pub fn group_version(&self) -> Result<GroupVersion, ParseGroupVersionError> {
        GroupVersion::parse(&self.group_version)
    }
}

/// One resource or subresource served in a group version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIResource {
    /// The plural resource name (`deployments`), or `resource/subresource`.
    pub name: String,
    /// The singular name (`deployment`); may be empty from older servers.
    #[serde(default)]
    pub singular_name: String,
    /// Whether objects live in namespaces.
    #[serde(default)]
    pub namespaced: bool,
    /// The group of the kind, when it differs from the list's (subresources such as `scale`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The version of the kind, when it differs from the list's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The kind (`Deployment`, or `Scale` for `deployments/scale`).
    #[serde(default)]
    pub kind: String,
    /// The verbs the resource supports (`get`, `list`, `watch`, ...).
    #[serde(default, deserialize_with = "null_as_default")]
    pub verbs: Vec<String>,
    /// Short names (`deploy`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub short_names: Vec<String>,
    /// Categories (`all`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub categories: Vec<String>,
    /// A hash of the storage version, when the server reports it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub storage_version_hash: String,
}

impl APIResource {
    /// Whether this is a subresource entry (`pods/status`).
    pub fn is_subresource(&self) -> bool {
        self.name.contains('/')
    }

    /// Whether the resource supports `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// The versions of the core group, served at `/api` (`meta/v1` `APIVersions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct APIVersions {
    /// `APIVersions`, or empty when the document had no `kind`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Empty from the servers seen so far (`/api` sends no `apiVersion`).
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// The versions, such as `["v1"]`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub versions: Vec<String>,
    /// Which server address a client should use, by the client's network.
    #[serde(
        default,
        rename = "serverAddressByClientCIDRs",
        deserialize_with = "null_as_default"
    )]
    pub server_address_by_client_cidrs: Vec<ServerAddressByClientCIDR>,
}

/// The server's version, served at `/version` (`k8s.io/apimachinery/pkg/version.Info`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerVersion {
    /// The major version, such as `1`.
    pub major: String,
    /// The minor version, such as `36`.
    pub minor: String,
    /// The major version the server emulates, when it reports one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub emulation_major: String,
    /// The minor version the server emulates, when it reports one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub emulation_minor: String,
    /// The oldest major version the server stays compatible with, when it reports one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub min_compatibility_major: String,
    /// The oldest minor version the server stays compatible with, when it reports one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub min_compatibility_minor: String,
    /// The full version, such as `v1.36.3`.
    pub git_version: String,
    /// The commit built.
    pub git_commit: String,
    /// `clean` or `dirty`.
    pub git_tree_state: String,
    /// When it was built.
    pub build_date: String,
    /// The Go version used.
    pub go_version: String,
    /// The compiler used.
    pub compiler: String,
    /// `os/arch`.
    pub platform: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_group_list_and_resource_list() {
        let groups: APIGroupList = serde_json::from_str(
            r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps",
            "versions":[{"groupVersion":"apps/v1","version":"v1"}],
            "preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}"#,
        )
        .unwrap();
        assert_eq!(groups.groups[0].name, "apps");
        assert_eq!(groups.groups[0].preferred_version_name(), "v1");

        let list: APIResourceList = serde_json::from_str(
            r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[
            {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment",
             "verbs":["get","list"],"shortNames":["deploy"],"categories":["all"]},
            {"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling",
             "version":"v1","kind":"Scale","verbs":["get","patch","update"]}]}"#,
        )
        .unwrap();
        assert_eq!(
            list.group_version().unwrap(),
            GroupVersion::new("apps", "v1")
        );
        assert_eq!(list.api_resources[0].short_names, ["deploy"]);
        assert!(list.api_resources[1].is_subresource());
        assert!(list.api_resources[0].supports("list"));
        // Round trip keeps the wire names.
        let back: APIResourceList =
            serde_json::from_str(&serde_json::to_string(&list).unwrap()).unwrap();
        assert_eq!(back, list);
    }

    #[test]
    fn null_lists_decode_as_empty() {
        let list: APIResourceList =
            serde_json::from_str(r#"{"groupVersion":"v1","resources":null}"#).unwrap();
        assert!(list.api_resources.is_empty());
    }
}
