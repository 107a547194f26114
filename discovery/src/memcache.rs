//! [`MemCacheClient`]: discovery cached in memory until invalidated (client-go's
//! `discovery/cached/memory`).
//!
//! The first call fetches everything (one aggregated round, or the groups and then every
//! group version concurrently) and keeps it; later calls answer from memory. A group version
//! whose fetch failed with a transient error (connection refused or reset, timeout, 5xx, 429) is
//! fetched again when asked for. [`CachedDiscoveryInterface::fresh`] is true once the cache
//! holds data fetched by this client; [`CachedDiscoveryInterface::invalidate`] drops it, and
//! the data of a delegate that caches too (a disk cache under the memory cache), as
//! client-go's `Invalidate` does.
//!
//! The cache's lock is a plain mutex held only to read or swap the maps, never across a
//! request; an async mutex makes concurrent first calls share one refresh.
//!
//! An invalidate is never lost. client-go's `Invalidate` takes the lock its refresh holds, so
//! it waits for a refresh in flight; here `invalidate` is synchronous and does not wait, but
//! it starts a new generation, and a refresh that began in an older one answers its own
//! caller (whose call began before the invalidate) without keeping the answer: every call
//! that begins after `invalidate` returns is answered from the server after it.

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
    /// Counts the invalidates: a refresh keeps its answer only if none came while its
    /// requests were in flight.
    generation: u64,
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

    /// Answers `read` from valid data, filling the cache first if it is not valid
    /// (client-go's `refreshLocked`). `read` runs under the state lock, so an invalidate
    /// cannot slip in between the refresh and the read.
    async fn read_valid<T>(&self, read: impl FnOnce(&State) -> T) -> Result<T, Error> {
        {
            let state = self.state.lock();
            if state.valid {
                return Ok(read(&state));
            }
        }
        let _refresh = self.refresh.lock().await;
        let generation = {
            let state = self.state.lock();
            if state.valid {
                return Ok(read(&state)); // another caller refreshed while we waited
            }
            state.generation
        };
        let mut fetched = self.fetch().await?;
        fetched.generation = generation;
        let mut state = self.state.lock();
        if state.generation == generation {
            *state = fetched;
            return Ok(read(&state));
        }
        // Invalidated while the requests were in flight: the answer may predate the
        // invalidate, so it answers this call only and is not kept.
        drop(state);
        Ok(read(&fetched))
    }

    /// Fetches everything: one aggregated round, or the groups and then every group
    /// version concurrently.
    async fn fetch(&self) -> Result<State, Error> {
        let found = self.delegate.groups_and_maybe_resources().await?;
        if let Some(resources) = found.resources {
            let mut entries = HashMap::new();
            for (gv, list) in resources {
                entries.insert(gv.to_string(), Ok(list));
            }
            for (gv, err) in found.failed {
                entries.insert(gv.to_string(), Err(err));
            }
            return Ok(State {
                generation: 0,
                valid: true,
                groups: found.groups,
                entries,
                received_aggregated: true,
            });
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
        Ok(State {
            generation: 0,
            valid: true,
            groups: found.groups,
            entries,
            received_aggregated: false,
        })
    }
}

impl<D: DiscoveryInterface> DiscoveryInterface for MemCacheClient<D> {
    async fn server_version(&self) -> Result<ServerVersion, Error> {
        self.delegate.server_version().await
    }

    fn invalidate_if_cached(&self) {
        CachedDiscoveryInterface::invalidate(self);
    }

    async fn server_groups(&self) -> Result<APIGroupList, Error> {
        self.read_valid(|state| state.groups.clone()).await
    }

    async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, Error> {
        let (cached, generation) = self
            .read_valid(|state| (state.entries.get(group_version).cloned(), state.generation))
            .await?;
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
                let mut state = self.state.lock();
                // Not into a cache invalidated (or refreshed) since the entry was read.
                if state.valid && state.generation == generation {
                    state
                        .entries
                        .insert(group_version.to_owned(), fresh.clone());
                }
                fresh
            }
            Some(entry) => entry,
        }
    }

    async fn groups_and_maybe_resources(&self) -> Result<GroupsAndMaybeResources, Error> {
        self.read_valid(|state| {
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
        })
        .await?
    }
}

impl<D: DiscoveryInterface> CachedDiscoveryInterface for MemCacheClient<D> {
    fn fresh(&self) -> bool {
        self.state.lock().valid
    }

    fn invalidate(&self) {
        // The delegate first: a refresh that begins after the new generation below must not
        // find the delegate's old answers.
        self.delegate.invalidate_if_cached();
        let mut state = self.state.lock();
        *state = State {
            generation: state.generation.wrapping_add(1),
            ..State::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
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
        let timed_out = kclient_apimachinery::Error::transport(
            kclient_apimachinery::TransportErrorKind::Timeout,
            "no answer within 32s",
        );
        for failure in [
            kclient_apimachinery::Error::new_internal_error("etcd is down"),
            timed_out,
        ] {
            transient_failure_is_fetched_again(failure).await;
        }
    }

    async fn transient_failure_is_fetched_again(failure: kclient_apimachinery::Error) {
        let fake = FakeDiscovery::new(false);
        fake.failing.lock().insert("apps/v1".into(), failure.into());
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
    async fn an_invalidate_during_a_refresh_is_not_lost() {
        for aggregated in [false, true] {
            let cache = Arc::new(MemCacheClient::new(FakeDiscovery::new(aggregated)));
            let fake = cache.delegate();
            let gate = fake.hold();
            let first = tokio::spawn({
                let cache = cache.clone();
                async move { cache.server_groups().await.unwrap() }
            });
            while fake.group_requests.load(Ordering::SeqCst) == 0 {
                tokio::task::yield_now().await;
            }
            // The refresh has asked; a CRD's group appears and the caller, having seen it,
            // invalidates before the answer arrives.
            fake.add("samplecrd.k8s.io", "v1", "networks", "Network", &[]);
            cache.invalidate();
            gate.add_permits(1);
            let first = first.await.unwrap();
            assert_eq!(
                first.groups.len(),
                2,
                "the call in flight gets what it asked for"
            );
            assert!(
                !cache.fresh(),
                "an answer older than invalidate() is not kept"
            );

            let names: Vec<String> = cache
                .server_groups()
                .await
                .unwrap()
                .groups
                .into_iter()
                .map(|g| g.name)
                .collect();
            assert_eq!(names, ["", "apps", "samplecrd.k8s.io"], "{aggregated}");
            assert_eq!(fake.group_requests.load(Ordering::SeqCst), 2);
            let networks = cache
                .server_resources_for_group_version("samplecrd.k8s.io/v1")
                .await
                .unwrap();
            assert_eq!(networks.api_resources[0].kind, "Network");
            assert!(cache.fresh());
        }
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
