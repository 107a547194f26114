//! The discovery traits ([`DiscoveryInterface`], [`CachedDiscoveryInterface`]) and the
//! helpers every implementation shares (client-go's `ServerGroupsAndResources`,
//! `ServerPreferredResources`, `ServerPreferredNamespacedResources`,
//! `fetchGroupVersionResources`).
//!
//! Partial failures are data, not just errors: [`Discovered`] carries what succeeded together
//! with the group versions that failed, as client-go returns results alongside an
//! `ErrGroupDiscoveryFailed`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;

use futures_util::future::join_all;
use kclient_apimachinery::{GroupResource, GroupVersion};

use crate::error::Error;
use crate::rest_mapper::APIGroupResources;
use crate::types::{APIGroup, APIGroupList, APIResource, APIResourceList, ServerVersion};

/// A discovery result and the group versions that could not be discovered.
#[derive(Debug, Clone, Default)]
pub struct Discovered<T> {
    /// What was discovered.
    pub value: T,
    /// The group versions that failed, and why.
    pub failed: BTreeMap<GroupVersion, Error>,
}

impl<T> Discovered<T> {
    /// Whether every group version was discovered.
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty()
    }

    /// The partial failure as client-go's `ErrGroupDiscoveryFailed`, if any group version
    /// failed.
    pub fn error(&self) -> Option<Error> {
        (!self.failed.is_empty()).then(|| Error::group_discovery_failed(self.failed.clone()))
    }

    /// The value if nothing failed, else the partial failure error.
    pub fn into_complete(self) -> Result<T, Error> {
        match self.error() {
            None => Ok(self.value),
            Some(err) => Err(err),
        }
    }
}

/// Groups and the resources of their versions, in the server's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupsAndResources {
    /// The groups.
    pub groups: Vec<APIGroup>,
    /// The resources of every discovered group version.
    pub resources: Vec<APIResourceList>,
}

impl GroupsAndResources {
    /// The input of a [`DiscoveryRESTMapper`](crate::DiscoveryRESTMapper) (client-go's
    /// `restmapper.GetAPIGroupResources`).
    pub fn to_api_group_resources(&self) -> Vec<APIGroupResources> {
        let by_gv: HashMap<&str, &APIResourceList> = self
            .resources
            .iter()
            .map(|r| (r.group_version.as_str(), r))
            .collect();
        self.groups
            .iter()
            .map(|group| APIGroupResources {
                group: group.clone(),
                versioned_resources: group
                    .versions
                    .iter()
                    .filter_map(|v| {
                        by_gv
                            .get(v.group_version.as_str())
                            .map(|r| (v.version.clone(), r.api_resources.clone()))
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Groups, and, when the server answered with aggregated discovery, every version's
/// resources (client-go's `GroupsAndMaybeResources`).
#[derive(Debug, Clone, Default)]
pub struct GroupsAndMaybeResources {
    /// The groups, in the server's order.
    pub groups: APIGroupList,
    /// The resources by group version, when they came with the groups.
    pub resources: Option<BTreeMap<GroupVersion, APIResourceList>>,
    /// Group versions reported stale.
    pub failed: BTreeMap<GroupVersion, Error>,
}

/// What a discovery client answers (client-go's `DiscoveryInterface`). Implemented by
/// [`DiscoveryClient`](crate::DiscoveryClient), [`MemCacheClient`](crate::MemCacheClient)
/// and [`DiskCachedDiscoveryClient`](crate::DiskCachedDiscoveryClient).
pub trait DiscoveryInterface: Send + Sync {
    /// The server's version (`/version`).
    fn server_version(&self) -> impl Future<Output = Result<ServerVersion, Error>> + Send;

    /// Every group with its versions and preferred version (`/api` and `/apis`).
    fn server_groups(&self) -> impl Future<Output = Result<APIGroupList, Error>> + Send;

    /// The resources of one group version (`v1`, `apps/v1`).
    fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> impl Future<Output = Result<APIResourceList, Error>> + Send;

    /// Groups, and every version's resources if one round of requests could get them
    /// (aggregated discovery). The default asks only for the groups.
    fn groups_and_maybe_resources(
        &self,
    ) -> impl Future<Output = Result<GroupsAndMaybeResources, Error>> + Send {
        async move {
            Ok(GroupsAndMaybeResources {
                groups: self.server_groups().await?,
                resources: None,
                failed: BTreeMap::new(),
            })
        }
    }

    /// Drops the client's cached data if it caches: a caching client (one that is a
    /// [`CachedDiscoveryInterface`]) answers with its
    /// [`invalidate`](CachedDiscoveryInterface::invalidate), any other does nothing (the
    /// default). A caching client calls it on the client it wraps when it is invalidated,
    /// as client-go's caching clients invalidate a delegate that is a
    /// `CachedDiscoveryInterface`, so that a memory cache over a disk cache asks the server
    /// again.
    fn invalidate_if_cached(&self) {}

    /// Every group and the resources of all its versions (client-go's
    /// `ServerGroupsAndResources`). Group versions that fail are reported in
    /// [`Discovered::failed`]; the call fails only if the groups cannot be listed.
    fn server_groups_and_resources(
        &self,
    ) -> impl Future<Output = Result<Discovered<GroupsAndResources>, Error>> + Send
    where
        Self: Sized,
    {
        server_groups_and_resources(self)
    }

    /// For every group resource, its entry in the preferred version of its group (or the
    /// first version serving it), grouped by version (client-go's
    /// `ServerPreferredResources`).
    fn server_preferred_resources(
        &self,
    ) -> impl Future<Output = Result<Discovered<Vec<APIResourceList>>, Error>> + Send
    where
        Self: Sized,
    {
        server_preferred_resources(self)
    }

    /// [`DiscoveryInterface::server_preferred_resources`] limited to namespaced resources;
    /// a group version left with none is left out (client-go's
    /// `ServerPreferredNamespacedResources`, through `FilteredBy`).
    fn server_preferred_namespaced_resources(
        &self,
    ) -> impl Future<Output = Result<Discovered<Vec<APIResourceList>>, Error>> + Send
    where
        Self: Sized,
    {
        async move {
            let mut all = server_preferred_resources(self).await?;
            for list in &mut all.value {
                list.api_resources.retain(|r| r.namespaced);
            }
            all.value.retain(|list| !list.api_resources.is_empty());
            Ok(all)
        }
    }
}

/// A discovery client backed by a cache (client-go's `CachedDiscoveryInterface`).
pub trait CachedDiscoveryInterface: DiscoveryInterface {
    /// Whether everything returned so far came from the server during this client's life
    /// (and so a miss is a real miss, not stale data).
    fn fresh(&self) -> bool;

    /// Drops the cached data, and the data of the client it wraps if that one caches too
    /// ([`DiscoveryInterface::invalidate_if_cached`]); the next call asks the server again.
    /// An implementation also implements `invalidate_if_cached` as a call to this, so that
    /// a cache wrapping it passes its invalidates on.
    fn invalidate(&self);
}

/// Fetches the resources of every version of every group concurrently (client-go's
/// `fetchGroupVersionResources`).
pub(crate) async fn fetch_group_version_resources<D: DiscoveryInterface + ?Sized>(
    d: &D,
    groups: &APIGroupList,
) -> (
    BTreeMap<GroupVersion, APIResourceList>,
    BTreeMap<GroupVersion, Error>,
) {
    let gvs: Vec<GroupVersion> = groups
        .groups
        .iter()
        .flat_map(|g| {
            g.versions
                .iter()
                .map(move |v| GroupVersion::new(g.name.clone(), v.version.clone()))
        })
        .collect();
    let results = join_all(gvs.iter().map(|gv| {
        let gv_string = gv.to_string();
        async move { d.server_resources_for_group_version(&gv_string).await }
    }))
    .await;
    let mut ok = BTreeMap::new();
    let mut failed = BTreeMap::new();
    for (gv, result) in gvs.into_iter().zip(results) {
        match result {
            Ok(list) => {
                ok.insert(gv, list);
            }
            Err(err) => {
                failed.insert(gv, err);
            }
        }
    }
    (ok, failed)
}

/// client-go's `discovery.ServerGroupsAndResources`.
pub async fn server_groups_and_resources<D: DiscoveryInterface + ?Sized>(
    d: &D,
) -> Result<Discovered<GroupsAndResources>, Error> {
    let found = d.groups_and_maybe_resources().await?;
    let groups = found.groups.groups;
    let (by_gv, failed) = match found.resources {
        Some(resources) => (resources, found.failed),
        None => {
            let list = APIGroupList::new(groups.clone());
            fetch_group_version_resources(d, &list).await
        }
    };
    // In the server's group and version order.
    let mut resources = Vec::new();
    let mut by_gv = by_gv;
    for g in &groups {
        for v in &g.versions {
            if let Some(list) = by_gv.remove(&GroupVersion::new(g.name.clone(), v.version.clone()))
            {
                resources.push(list);
            }
        }
    }
    resources.extend(by_gv.into_values());
    Ok(Discovered {
        value: GroupsAndResources { groups, resources },
        failed,
    })
}

/// client-go's `discovery.ServerPreferredResources`.
pub async fn server_preferred_resources<D: DiscoveryInterface + ?Sized>(
    d: &D,
) -> Result<Discovered<Vec<APIResourceList>>, Error> {
    let found = d.groups_and_maybe_resources().await?;
    let (by_gv, failed) = match found.resources {
        Some(resources) => (resources, found.failed),
        None => fetch_group_version_resources(d, &found.groups).await,
    };
    Ok(Discovered {
        value: preferred(&found.groups, &by_gv),
        failed,
    })
}

/// Picks, for every group resource, the preferred version's entry if it serves it, else the
/// first version's (in the group's order); subresources are left out.
pub(crate) fn preferred(
    groups: &APIGroupList,
    by_gv: &BTreeMap<GroupVersion, APIResourceList>,
) -> Vec<APIResourceList> {
    let mut chosen: BTreeMap<GroupResource, (usize, APIResource)> = BTreeMap::new();
    let mut lists: Vec<APIResourceList> = Vec::new();
    for g in &groups.groups {
        let preferred = g.preferred_version_name();
        for v in &g.versions {
            let gv = GroupVersion::new(g.name.clone(), v.version.clone());
            let Some(list) = by_gv.get(&gv) else {
                continue;
            };
            let index = lists.len();
            lists.push(APIResourceList::new(v.group_version.clone(), Vec::new()));
            for r in list.api_resources.iter().filter(|r| !r.is_subresource()) {
                let key = GroupResource::new(g.name.clone(), r.name.clone());
                if chosen.contains_key(&key) && v.version != preferred {
                    continue;
                }
                chosen.insert(key, (index, r.clone()));
            }
        }
    }
    // Each version's list gets its chosen resources, by name.
    for (index, r) in chosen.into_values() {
        if let Some(list) = lists.get_mut(index) {
            list.api_resources.push(r);
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GroupVersionForDiscovery;

    fn res(name: &str) -> APIResource {
        APIResource {
            name: name.into(),
            kind: "K".into(),
            namespaced: name != "nodes",
            ..APIResource::default()
        }
    }

    #[test]
    fn preferred_takes_the_preferred_version_first() {
        let groups = APIGroupList::new(vec![APIGroup {
            name: "autoscaling".into(),
            versions: vec![
                GroupVersionForDiscovery::new("autoscaling", "v1"),
                GroupVersionForDiscovery::new("autoscaling", "v2"),
            ],
            preferred_version: Some(GroupVersionForDiscovery::new("autoscaling", "v2")),
            ..APIGroup::default()
        }]);
        let mut by_gv = BTreeMap::new();
        by_gv.insert(
            GroupVersion::new("autoscaling", "v1"),
            APIResourceList::new(
                "autoscaling/v1",
                vec![res("hpas"), res("hpas/status"), res("onlyv1")],
            ),
        );
        by_gv.insert(
            GroupVersion::new("autoscaling", "v2"),
            APIResourceList::new("autoscaling/v2", vec![res("hpas")]),
        );
        let lists = preferred(&groups, &by_gv);
        assert_eq!(lists.len(), 2);
        assert_eq!(lists[0].group_version, "autoscaling/v1");
        let v1: Vec<_> = lists[0]
            .api_resources
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(v1, ["onlyv1"]);
        let v2: Vec<_> = lists[1]
            .api_resources
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(v2, ["hpas"]);
    }

    #[test]
    fn discovered_reports_partial_failures() {
        let mut d = Discovered {
            value: 1,
            failed: BTreeMap::new(),
        };
        assert!(d.is_complete());
        assert!(d.error().is_none());
        d.failed.insert(
            GroupVersion::new("metrics.k8s.io", "v1beta1"),
            Error::stale_group_version(GroupVersion::new("metrics.k8s.io", "v1beta1")),
        );
        assert!(d.error().is_some_and(|e| e.is_group_discovery_failed()));
        assert!(d.into_complete().is_err());
    }
}
