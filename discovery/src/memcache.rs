//! [`MemCacheClient`]: discovery cached in memory until invalidated (client-go's
//! `discovery/cached/memory`).
//!
//! The first call fetches everything (one aggregated round, or the groups and then every
//! group version concurrently) and keeps it; later calls answer from memory. A group version
//! whose fetch failed with a transient error (connection refused or reset, 5xx, 429) is
//! fetched again when asked for. [`CachedDiscoveryInterface::fresh`] is true once the cache
//! holds data fetched by this client; [`CachedDiscoveryInterface::invalidate`] drops it.
//!
//! The cache's lock is a plain mutex held only to read or swap the maps, never across a
//! request; an async mutex makes concurrent first calls share one refresh.

use std::collections::{BTreeMap, HashMap};

use futures_util::lock::Mutex as AsyncMutex;
use kclient_apimachinery::GroupVersion;
use parking_lot::Mutex;

use crate::error::Error;
use crate::interface::{
    CachedDiscoveryInterface, DiscoveryInterface, GroupsAndMaybeResources,
    fetch_group_version_resources,
};
use crate::types::{APIGroupList, APIResourceList, ServerVersion};

#[derive(Default)]
struct State {
    valid: bool,
    groups: APIGroupList,
    /// By `group/version` string, as client-go keys it.
    entries: HashMap<String, Result<APIResourceList, Error>>,
    received_aggregated: bool,
}

/// A discovery client caching another one's answers in memory.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_discovery::{DiscoveryClient, MemCacheClient};
///
/// let cached = MemCacheClient::new(DiscoveryClient::for_config(kclient_rest::Config::infer()?)?);
/// let groups = cached.server_groups().await?; // fetched
/// let again = cached.server_groups().await?; // from memory
/// assert_eq!(groups, again);
/// cached.invalidate(); // the next call fetches again
/// # Ok(()) }
/// ```
pub struct MemCacheClient<D> {
    delegate: D,
    state: Mutex<State>,
    refresh: AsyncMutex<()>,
}

impl<D> std::fmt::Debug for MemCacheClient<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("MemCacheClient")
            .field("valid", &state.valid)
            .field("group_versions", &state.entries.len())
            .finish_non_exhaustive()
    }
}

impl<D: DiscoveryInterface> MemCacheClient<D> {
    /// Caches `delegate`'s answers.
    pub fn new(delegate: D) -> Self {
        MemCacheClient {
            delegate,
            state: Mutex::new(State::default()),
            refresh: AsyncMutex::new(()),
        }
    }

    /// The client whose answers are cached.
    pub fn delegate(&self) -> &D {
        &self.delegate
    }

    /// Fills the cache if it is not valid (client-go's `refreshLocked`).
    async fn ensure_valid(&self) -> Result<(), Error> {
        if self.state.lock().valid {
            return Ok(());
        }
        let _guard = self.refresh.lock().await;
        if self.state.lock().valid {
            return Ok(()); // another caller refreshed while we waited
        }
        let found = self.delegate.groups_and_maybe_resources().await?;
        if let Some(resources) = found.resources {
            let mut entries = HashMap::new();
            for (gv, list) in resources {
                entries.insert(gv.to_string(), Ok(list));
            }
            for (gv, err) in found.failed {
                entries.insert(gv.to_string(), Err(err));
            }
            *self.state.lock() = State {
                valid: true,
                groups: found.groups,
                entries,
                received_aggregated: true,
            };
            return Ok(());
        }
        if found.groups.groups.is_empty() {
            return Err(Error::invalid("the server returned no API groups"));
        }
        let (ok, failed) = fetch_group_version_resources(&self.delegate, &found.groups).await;
        let mut entries = HashMap::new();
        for (gv, list) in ok {
            let entry = if list.api_resources.is_empty() {
                Err(Error::empty_response(&gv.to_string()))
            } else {
                Ok(list)
            };
            entries.insert(gv.to_string(), entry);
        }
        for (gv, err) in failed {
            entries.insert(gv.to_string(), Err(err));
        }
        *self.state.lock() = State {
            valid: true,
            groups: found.groups,
            entries,
            received_aggregated: false,
        };
        Ok(())
    }
}

impl<D: DiscoveryInterface> DiscoveryInterface for MemCacheClient<D> {
    async fn server_version(&self) -> Result<ServerVersion, Error> {
        self.delegate.server_version().await
    }

    async fn server_groups(&self) -> Result<APIGroupList, Error> {
        self.ensure_valid().await?;
        Ok(self.state.lock().groups.clone())
    }

    async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, Error> {
        self.ensure_valid().await?;
        let cached = self.state.lock().entries.get(group_version).cloned();
        match cached {
            None => Err(Error::not_in_cache(group_version)),
            Some(Err(err)) if err.is_transient() => {
                let fresh = self
                    .delegate
                    .server_resources_for_group_version(group_version)
                    .await
                    .and_then(|list| {
                        if list.api_resources.is_empty() {
                            Err(Error::empty_response(group_version))
                        } else {
                            Ok(list)
                        }
                    });
                self.state
                    .lock()
                    .entries
                    .insert(group_version.to_owned(), fresh.clone());
                fresh
            }
            Some(entry) => entry,
        }
    }

    async fn groups_and_maybe_resources(&self) -> Result<GroupsAndMaybeResources, Error> {
        self.ensure_valid().await?;
        let state = self.state.lock();
        let mut found = GroupsAndMaybeResources {
            groups: state.groups.clone(),
            resources: None,
            failed: BTreeMap::new(),
        };
        if state.received_aggregated && !state.entries.is_empty() {
            let mut resources = BTreeMap::new();
            for (gv, entry) in &state.entries {
                let gv = GroupVersion::parse(gv).map_err(|e| {
                    Error::invalid(format!("failed to parse group version ({gv}): {e}"))
                })?;
                match entry {
                    Ok(list) => {
                        resources.insert(gv, list.clone());
                    }
                    Err(err) => {
                        found.failed.insert(gv, err.clone());
                    }
                }
            }
            found.resources = Some(resources);
        }
        Ok(found)
    }
}

impl<D: DiscoveryInterface> CachedDiscoveryInterface for MemCacheClient<D> {
    fn fresh(&self) -> bool {
        self.state.lock().valid
    }

    fn invalidate(&self) {
        *self.state.lock() = State::default();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::fake::FakeDiscovery;

    #[tokio::test]
    async fn answers_from_memory_until_invalidated() {
        let cache = MemCacheClient::new(FakeDiscovery::new(false));
        assert!(!cache.fresh());
        let groups = cache.server_groups().await.unwrap();
        assert_eq!(groups.groups.len(), 2);
        assert!(cache.fresh());
        let fake = cache.delegate();
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 1);
        assert_eq!(fake.resource_requests.load(Ordering::SeqCst), 2);

        let pods = cache
            .server_resources_for_group_version("v1")
            .await
            .unwrap();
        assert_eq!(pods.api_resources[0].name, "pods");
        let all = cache.server_groups_and_resources().await.unwrap();
        assert_eq!(all.value.resources.len(), 2);
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 1);
        assert_eq!(fake.resource_requests.load(Ordering::SeqCst), 2);
        assert!(
            cache
                .server_resources_for_group_version("nope/v1")
                .await
                .unwrap_err()
                .is_not_in_cache()
        );

        cache.invalidate();
        assert!(!cache.fresh());
        cache.server_groups().await.unwrap();
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn transient_failures_are_fetched_again() {
        let fake = FakeDiscovery::new(false);
        fake.failing.lock().insert(
            "apps/v1".into(),
            kclient_apimachinery::Error::new_internal_error("etcd is down").into(),
        );
        let cache = MemCacheClient::new(fake);
        let all = cache.server_groups_and_resources().await.unwrap();
        assert_eq!(all.value.resources.len(), 1);
        assert!(all.error().is_some_and(|e| e.is_group_discovery_failed()));

        cache.delegate().failing.lock().clear();
        let apps = cache
            .server_resources_for_group_version("apps/v1")
            .await
            .unwrap();
        assert_eq!(apps.api_resources[0].kind, "Deployment");
        assert!(
            cache
                .server_groups_and_resources()
                .await
                .unwrap()
                .is_complete()
        );
    }

    #[tokio::test]
    async fn aggregated_discovery_fills_the_cache_in_one_round() {
        let cache = MemCacheClient::new(FakeDiscovery::new(true));
        let all = cache.server_groups_and_resources().await.unwrap();
        assert_eq!(all.value.groups.len(), 2);
        assert_eq!(all.value.resources.len(), 2);
        let fake = cache.delegate();
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 1);
        assert_eq!(fake.resource_requests.load(Ordering::SeqCst), 0);
        let found = cache.groups_and_maybe_resources().await.unwrap();
        assert_eq!(found.resources.map(|r| r.len()), Some(2));
    }
}
