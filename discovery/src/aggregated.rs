//! Aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`): every group,
//! version and resource in one response per root (`/api`, `/apis`), and its conversion to the
//! per-group documents (client-go's `discovery/aggregated_discovery.go`).
//!
//! The server sends this shape when asked with [`ACCEPT_AGGREGATED`]; a version whose
//! aggregated API server is unreachable is marked `Stale` and becomes a per-version error
//! rather than a failure of the whole discovery.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::types::{
    APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery,
};
use kclient_apimachinery::{GroupVersion, null_as_default};

/// The `Accept` header of a discovery request: aggregated discovery v2 first, the per-group
/// documents as fallback (client-go's `AcceptV2 + "," + AcceptV1`; v2beta1 is no longer served
/// by supported servers).
pub const ACCEPT_AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Whether a response `Content-Type` says the body is an aggregated v2 discovery document
/// (client-go's `ContentTypeIsGVK` for `apidiscovery.k8s.io/v2, Kind=APIGroupDiscoveryList`).
pub fn is_aggregated_content_type(content_type: &str) -> bool {
    let mut parts = content_type.split(';');
    let base = parts.next().unwrap_or("").trim();
    if !base.eq_ignore_ascii_case("application/json") {
        return false;
    }
    let (mut g, mut v, mut as_) = (None, None, None);
    for param in parts {
        if let Some((key, value)) = param.split_once('=') {
            let value = value.trim().trim_matches('"');
            match key.trim().to_ascii_lowercase().as_str() {
                "g" => g = Some(value),
                "v" => v = Some(value),
                "as" => as_ = Some(value),
                _ => {}
            }
        }
    }
    g == Some("apidiscovery.k8s.io") && v == Some("v2") && as_ == Some("APIGroupDiscoveryList")
}

/// Every group under one root, as aggregated discovery serves it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct APIGroupDiscoveryList {
    /// The groups, in the server's priority order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<APIGroupDiscovery>,
}

/// The metadata of an [`APIGroupDiscovery`]: only the name is used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDiscoveryMeta {
    /// The group's name, `""` for the core group.
    #[serde(default)]
    pub name: String,
}

/// One group with all its versions and resources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct APIGroupDiscovery {
    /// Holds the group's name.
    #[serde(default)]
    pub metadata: GroupDiscoveryMeta,
    /// The versions, most preferred first.
    #[serde(default, deserialize_with = "null_as_default")]
    pub versions: Vec<APIVersionDiscovery>,
}

/// Whether a version's resources are current or could not be refreshed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiscoveryFreshness {
    /// The aggregated API server behind the version could not be reached.
    Stale,
    /// Up to date; also a value this client does not know (a newer server's), as client-go
    /// counts a version stale only when it says `Stale`.
    #[default]
    #[serde(other)]
    Current,
}

/// One version of a group and its resources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct APIVersionDiscovery {
    /// The version, such as `v1`.
    pub version: String,
    /// The top-level resources.
    #[serde(default, deserialize_with = "null_as_default")]
    pub resources: Vec<APIResourceDiscovery>,
    /// Whether the resources are current.
    #[serde(default)]
    pub freshness: DiscoveryFreshness,
}

/// Whether a resource is namespaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResourceScope {
    /// Namespaced.
    Namespaced,
    /// Cluster-wide; also a value this client does not know, as client-go counts a resource
    /// namespaced only when it says `Namespaced`.
    #[default]
    #[serde(other)]
    Cluster,
}

/// A kind as aggregated discovery names it; empty group and version mean "the resource's".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveryKind {
    /// The group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

impl DiscoveryKind {
    fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty() && self.kind.is_empty()
    }
}

/// One resource of a version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIResourceDiscovery {
    /// The plural name.
    pub resource: String,
    /// The kind of objects served.
    #[serde(default)]
    pub response_kind: Option<DiscoveryKind>,
    /// Namespaced or cluster-wide.
    #[serde(default)]
    pub scope: ResourceScope,
    /// The singular name.
    #[serde(default)]
    pub singular_resource: String,
    /// Supported verbs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub verbs: Vec<String>,
    /// Short names.
    #[serde(default, deserialize_with = "null_as_default")]
    pub short_names: Vec<String>,
    /// Categories.
    #[serde(default, deserialize_with = "null_as_default")]
    pub categories: Vec<String>,
    /// Subresources (`status`, `scale`, ...).
    #[serde(default, deserialize_with = "null_as_default")]
    pub subresources: Vec<APISubresourceDiscovery>,
}

/// One subresource of a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APISubresourceDiscovery {
    /// The subresource's name, such as `status`.
    pub subresource: String,
    /// The kind of objects served.
    #[serde(default)]
    pub response_kind: Option<DiscoveryKind>,
    /// The kinds accepted in requests.
    #[serde(default, deserialize_with = "null_as_default")]
    pub accepted_types: Vec<DiscoveryKind>,
    /// Supported verbs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub verbs: Vec<String>,
}

/// Aggregated discovery split into the per-group documents: the groups, the resources of
/// every current version, and an error for every stale one.
#[derive(Debug, Clone, Default)]
pub struct SplitDiscovery {
    /// The groups, with their current versions only.
    pub groups: APIGroupList,
    /// The resources of each current version.
    pub resources: BTreeMap<GroupVersion, APIResourceList>,
    /// The versions that are stale.
    pub failed: BTreeMap<GroupVersion, Error>,
}

/// Splits an aggregated document into groups, resources and stale-version errors (client-go's
/// `SplitGroupsAndResources`). Resources with no response kind are left out, as client-go does.
pub fn split_groups_and_resources(list: APIGroupDiscoveryList) -> SplitDiscovery {
    let mut out = SplitDiscovery::default();
    for group in list.items {
        let name = group.metadata.name;
        let mut api_group = APIGroup {
            name: name.clone(),
            ..APIGroup::default()
        };
        for version in group.versions {
            let gv = GroupVersion::new(&name, &version.version);
            if version.freshness == DiscoveryFreshness::Stale {
                out.failed
                    .insert(gv.clone(), Error::stale_group_version(gv));
                continue;
            }
            let entry = GroupVersionForDiscovery::new(&name, &version.version);
            if api_group.preferred_version.is_none() {
                api_group.preferred_version = Some(entry.clone());
            }
            api_group.versions.push(entry);
            let mut resources = Vec::new();
            for r in version.resources {
                // The parent goes before its subresources, as in client-go.
                resources.extend(convert_resource(&r));
                for sub in &r.subresources {
                    if let Some(kind) = sub.response_kind.as_ref().filter(|k| !k.is_empty()) {
                        resources.push(APIResource {
                            name: format!("{}/{}", r.resource, sub.subresource),
                            singular_name: r.singular_resource.clone(),
                            namespaced: r.scope == ResourceScope::Namespaced,
                            group: kind.group.clone(),
                            version: kind.version.clone(),
                            kind: kind.kind.clone(),
                            verbs: sub.verbs.clone(),
                            ..APIResource::default()
                        });
                    }
                }
            }
            out.resources
                .insert(gv.clone(), APIResourceList::new(gv.to_string(), resources));
        }
        out.groups.groups.push(api_group);
    }
    out
}

fn convert_resource(r: &APIResourceDiscovery) -> Option<APIResource> {
    let kind = r.response_kind.as_ref().filter(|k| !k.is_empty())?;
    Some(APIResource {
        name: r.resource.clone(),
        singular_name: r.singular_resource.clone(),
        namespaced: r.scope == ResourceScope::Namespaced,
        group: kind.group.clone(),
        version: kind.version.clone(),
        kind: kind.kind.clone(),
        verbs: r.verbs.clone(),
        short_names: r.short_names.clone(),
        categories: r.categories.clone(),
        storage_version_hash: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2",
      "metadata":{},"items":[
      {"metadata":{"name":"apps"},"versions":[{"version":"v1","freshness":"Current","resources":[
        {"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},
         "scope":"Namespaced","singularResource":"deployment","verbs":["get","list"],
         "shortNames":["deploy"],"categories":["all"],
         "subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","update"]},
                         {"subresource":"status","responseKind":{"group":"","version":"","kind":"Deployment"},"verbs":["get"]}]},
        {"resource":"broken","scope":"Cluster","verbs":["get"]}]}]},
      {"metadata":{"name":"metrics.k8s.io"},"versions":[
        {"version":"v1beta1","freshness":"Stale","resources":[]},
        {"version":"v1alpha1","freshness":"Current","resources":[
          {"resource":"pods","responseKind":{"kind":"PodMetrics"},"scope":"Namespaced","verbs":["get"]}]}]}]}"#;

    /// A freshness or scope this client does not know (from a newer server) is read as
    /// client-go reads it, current and cluster-wide, instead of failing the whole document.
    #[test]
    fn unknown_freshness_and_scope_read_as_client_go_reads_them() {
        let doc = r#"{"items":[{"metadata":{"name":"x.example"},"versions":[
            {"version":"v1","freshness":"Refreshing","resources":[
              {"resource":"things","responseKind":{"kind":"Thing"},"scope":"Galactic","verbs":["get"]}]}]}]}"#;
        let list: APIGroupDiscoveryList = serde_json::from_str(doc).unwrap();
        let version = &list.items[0].versions[0];
        assert_eq!(version.freshness, DiscoveryFreshness::Current);
        assert_eq!(version.resources[0].scope, ResourceScope::Cluster);
        let split = split_groups_and_resources(list);
        assert!(split.failed.is_empty());
        let things = &split.resources[&GroupVersion::new("x.example", "v1")];
        assert!(!things.api_resources[0].namespaced);
    }

    #[test]
    fn splits_groups_resources_and_stale_versions() {
        let list: APIGroupDiscoveryList = serde_json::from_str(DOC).unwrap();
        let split = split_groups_and_resources(list);
        assert_eq!(split.groups.groups.len(), 2);
        let apps = &split.groups.groups[0];
        assert_eq!(apps.name, "apps");
        assert_eq!(apps.preferred_version_name(), "v1");
        let res = &split.resources[&GroupVersion::new("apps", "v1")];
        assert_eq!(res.group_version, "apps/v1");
        let names: Vec<_> = res.api_resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["deployments", "deployments/scale", "deployments/status"]
        );
        assert_eq!(res.api_resources[1].group, "autoscaling");
        assert_eq!(res.api_resources[1].kind, "Scale");
        assert!(res.api_resources[0].namespaced);
        assert_eq!(res.api_resources[0].short_names, ["deploy"]);

        // The stale version is an error, and the next version becomes the preferred one.
        let metrics = &split.groups.groups[1];
        assert_eq!(metrics.versions.len(), 1);
        assert_eq!(metrics.preferred_version_name(), "v1alpha1");
        let failed = &split.failed[&GroupVersion::new("metrics.k8s.io", "v1beta1")];
        assert!(failed.is_stale_group_version());
    }

    #[test]
    fn recognizes_the_aggregated_content_type() {
        assert!(is_aggregated_content_type(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        ));
        assert!(is_aggregated_content_type(
            "application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList; charset=utf-8"
        ));
        assert!(!is_aggregated_content_type("application/json"));
        assert!(!is_aggregated_content_type(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
        assert!(!is_aggregated_content_type(""));
    }
}
