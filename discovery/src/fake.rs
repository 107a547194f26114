//! An in-memory [`DiscoveryInterface`] for unit tests: serves fixed groups and resources,
//! counts requests, can fail a group version or switch aggregated discovery on, and can hold
//! an answer in flight while a test changes the server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kclient_apimachinery::GroupVersion;
use parking_lot::Mutex;

use crate::error::Error;
use crate::interface::{CachedDiscoveryInterface, DiscoveryInterface, GroupsAndMaybeResources};
use crate::types::{
    APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery, ServerVersion,
};

pub(crate) struct FakeDiscovery {
    pub(crate) groups: Mutex<Vec<APIGroup>>,
    pub(crate) resources: Mutex<BTreeMap<String, APIResourceList>>,
    pub(crate) failing: Mutex<BTreeMap<String, Error>>,
    pub(crate) aggregated: bool,
    pub(crate) group_requests: AtomicUsize,
    pub(crate) resource_requests: AtomicUsize,
    /// Set by [`FakeDiscovery::hold`]: the next groups request waits for a permit.
    hold: Mutex<Option<Arc<tokio::sync::Semaphore>>>,
}

impl FakeDiscovery {
    /// Core `v1` with pods and `apps/v1` with deployments.
    pub(crate) fn new(aggregated: bool) -> Self {
        let fake = FakeDiscovery {
            groups: Mutex::new(Vec::new()),
            resources: Mutex::new(BTreeMap::new()),
            failing: Mutex::new(BTreeMap::new()),
            aggregated,
            group_requests: AtomicUsize::new(0),
            resource_requests: AtomicUsize::new(0),
            hold: Mutex::new(None),
        };
        fake.add("", "v1", "pods", "Pod", &["po"]);
        fake.add("apps", "v1", "deployments", "Deployment", &["deploy"]);
        fake
    }

    /// Makes the next groups request read the server's state, count itself in
    /// `group_requests`, then wait for a permit on the returned semaphore before answering:
    /// an answer in flight while the test changes the server.
    pub(crate) fn hold(&self) -> Arc<tokio::sync::Semaphore> {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        *self.hold.lock() = Some(gate.clone());
        gate
    }

    pub(crate) fn add(&self, group: &str, version: &str, plural: &str, kind: &str, short: &[&str]) {
        let gv = GroupVersion::new(group, version).to_string();
        let mut groups = self.groups.lock();
        if !groups.iter().any(|g| g.name == group) {
            groups.push(APIGroup {
                name: group.into(),
                versions: vec![GroupVersionForDiscovery::new(group, version)],
                preferred_version: Some(GroupVersionForDiscovery::new(group, version)),
                ..APIGroup::default()
            });
        }
        self.resources
            .lock()
            .entry(gv.clone())
            .or_insert_with(|| APIResourceList::new(gv, Vec::new()))
            .api_resources
            .push(APIResource {
                name: plural.into(),
                singular_name: kind.to_lowercase(),
                namespaced: true,
                kind: kind.into(),
                verbs: vec!["get".into(), "list".into()],
                short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                ..APIResource::default()
            });
    }
}

impl DiscoveryInterface for FakeDiscovery {
    async fn server_version(&self) -> Result<ServerVersion, Error> {
        Ok(ServerVersion {
            git_version: "v1.36.3".into(),
            ..ServerVersion::default()
        })
    }

    async fn server_groups(&self) -> Result<APIGroupList, Error> {
        let groups = APIGroupList::new(self.groups.lock().clone());
        self.group_requests.fetch_add(1, Ordering::SeqCst);
        let hold = self.hold.lock().take();
        if let Some(gate) = hold {
            let _permit = gate.acquire().await.expect("the gate is never closed");
        }
        Ok(groups)
    }

    async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, Error> {
        self.resource_requests.fetch_add(1, Ordering::SeqCst);
        if let Some(err) = self.failing.lock().get(group_version) {
            return Err(err.clone());
        }
        self.resources
            .lock()
            .get(group_version)
            .cloned()
            .ok_or_else(|| {
                kclient_apimachinery::Error::new_not_found("", "groupversions", group_version)
                    .into()
            })
    }

    async fn groups_and_maybe_resources(&self) -> Result<GroupsAndMaybeResources, Error> {
        if !self.aggregated {
            return Ok(GroupsAndMaybeResources {
                groups: self.server_groups().await?,
                resources: None,
                failed: BTreeMap::new(),
            });
        }
        // The resources as they are when the request arrives, even if the answer is held.
        let snapshot = self.resources.lock().clone();
        let groups = self.server_groups().await?;
        let mut resources = BTreeMap::new();
        let mut failed = BTreeMap::new();
        for (gv, list) in &snapshot {
            let parsed = GroupVersion::parse(gv).map_err(|e| Error::invalid(e.to_string()))?;
            match self.failing.lock().get(gv) {
                Some(err) => {
                    failed.insert(parsed, err.clone());
                }
                None => {
                    resources.insert(parsed, list.clone());
                }
            }
        }
        Ok(GroupsAndMaybeResources {
            groups,
            resources: Some(resources),
            failed,
        })
    }
}

/// Not a cache: every call asks the fake server, so what it answers is always fresh and
/// there is nothing to drop.
impl CachedDiscoveryInterface for FakeDiscovery {
    fn fresh(&self) -> bool {
        true
    }

    fn invalidate(&self) {}
}
