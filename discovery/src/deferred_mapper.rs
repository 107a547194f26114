//! [`DeferredDiscoveryRESTMapper`]: a RESTMapper built from a cached discovery client on
//! first use and rebuilt when a lookup misses (client-go's
//! `restmapper.DeferredDiscoveryRESTMapper` wrapped in the shortcut expander).
//!
//! client-go rebuilds on a miss only while the discovery cache is not `Fresh`, which a memory
//! cache always is once filled, so a CRD created after the first lookup is never found. Here
//! a miss also rebuilds when the snapshot in use was not built by that very lookup: a lookup
//! that misses costs one rediscovery, and a kind created at run time is found. Lookups that
//! hit cost nothing but a read of the snapshot.
//!
//! A reset is never lost. It does not wait for a build in flight (client-go's `Reset` does
//! not either, but its discovery cache's `Invalidate` does); it starts a new generation, and a
//! build that began in an older one answers its own lookup without keeping the snapshot, so
//! every lookup that begins after `reset` returns uses discovery from after it.
//!
//! Misses at the same time cost one rediscovery, not one each: a miss resets only the
//! snapshot it missed on. One that finds a newer generation already (another miss reset since
//! it read its snapshot) waits for that rebuild, whose discovery began after its own lookup
//! did.

use std::sync::Arc;

use futures_util::lock::Mutex as AsyncMutex;
use kclient_apimachinery::{GroupKind, GroupVersionKind, GroupVersionResource};
use parking_lot::Mutex;

use crate::error::Error;
use crate::interface::CachedDiscoveryInterface;
use crate::rest_mapper::{DiscoveryRESTMapper, RESTMapping};

/// A RESTMapper over a cached discovery client, built on first use. A lookup that misses
/// rebuilds it once (one rediscovery), so kinds created at run time are found.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_discovery::{DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient};
///
/// let discovery = MemCacheClient::new(DiscoveryClient::for_config(kclient_rest::Config::infer()?)?);
/// let mapper = DeferredDiscoveryRESTMapper::new(discovery);
/// let mapping = mapper.mapping_for("deploy").await?;
/// assert_eq!(mapping.resource.resource, "deployments");
/// assert!(mapping.scope.is_namespaced());
/// # Ok(()) }
/// ```
pub struct DeferredDiscoveryRESTMapper<D> {
    discovery: D,
    snapshot: Mutex<Snapshot>,
    build: AsyncMutex<()>,
}

#[derive(Default)]
struct Snapshot {
    mapper: Option<Arc<DiscoveryRESTMapper>>,
    /// Counts the resets: a build keeps its mapper only if none came while it ran.
    generation: u64,
}

impl<D> std::fmt::Debug for DeferredDiscoveryRESTMapper<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredDiscoveryRESTMapper")
            .field("built", &self.snapshot.lock().mapper.is_some())
            .finish_non_exhaustive()
    }
}

impl<D: CachedDiscoveryInterface> DeferredDiscoveryRESTMapper<D> {
    /// A mapper over `discovery`; nothing is fetched until the first lookup.
    pub fn new(discovery: D) -> Self {
        DeferredDiscoveryRESTMapper {
            discovery,
            snapshot: Mutex::new(Snapshot::default()),
            build: AsyncMutex::new(()),
        }
    }

    /// The discovery client underneath.
    pub fn discovery(&self) -> &D {
        &self.discovery
    }

    /// Drops the snapshot and invalidates the discovery cache (client-go's `Reset`). A
    /// build in flight keeps no snapshot; the next lookup rebuilds from fresh discovery.
    pub fn reset(&self) {
        let generation = self.snapshot.lock().generation;
        // A reset that comes meanwhile does the same work, after this call began.
        self.reset_from(generation);
    }

    /// [`reset`](Self::reset), unless a reset came since the snapshot of `generation` was
    /// read: the rebuild that one starts serves this caller too.
    fn reset_from(&self, generation: u64) {
        let mut snapshot = self.snapshot.lock();
        if snapshot.generation != generation {
            return;
        }
        // The cache first: a build that starts after the new generation then asks a cache
        // that was already invalidated.
        self.discovery.invalidate();
        *snapshot = Snapshot {
            mapper: None,
            generation: generation.wrapping_add(1),
        };
    }

    /// The current snapshot, building it if there is none, with its generation; the flag says
    /// whether this call built the snapshot now in use.
    async fn current(&self) -> Result<(Arc<DiscoveryRESTMapper>, u64, bool), Error> {
        {
            let snapshot = self.snapshot.lock();
            if let Some(m) = snapshot.mapper.clone() {
                return Ok((m, snapshot.generation, false));
            }
        }
        let _guard = self.build.lock().await;
        let generation = {
            let snapshot = self.snapshot.lock();
            if let Some(m) = snapshot.mapper.clone() {
                return Ok((m, snapshot.generation, false));
            }
            snapshot.generation
        };
        // Partial discovery still maps what was found, as client-go's GetAPIGroupResources.
        let found = self.discovery.server_groups_and_resources().await?;
        let mapper = Arc::new(DiscoveryRESTMapper::new(
            &found.value.to_api_group_resources(),
        ));
        let mut snapshot = self.snapshot.lock();
        if snapshot.generation != generation {
            // Reset while discovery was in flight: the answer may predate the reset, so it
            // serves this lookup only, which may rebuild on a miss.
            return Ok((mapper, generation, false));
        }
        snapshot.mapper = Some(mapper.clone());
        Ok((mapper, generation, true))
    }

    /// Runs a lookup, rebuilding the snapshot once if it misses on a snapshot this call did
    /// not build.
    async fn lookup<T>(
        &self,
        f: impl Fn(&DiscoveryRESTMapper) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (mapper, generation, built_now) = self.current().await?;
        match f(&mapper) {
            Err(err) if err.is_no_match() && (!built_now || !self.discovery.fresh()) => {
                self.reset_from(generation);
                let (mapper, _, _) = self.current().await?;
                f(&mapper)
            }
            other => other,
        }
    }

    /// The current snapshot (built if needed), for synchronous lookups.
    pub async fn snapshot(&self) -> Result<Arc<DiscoveryRESTMapper>, Error> {
        Ok(self.current().await?.0)
    }

    /// See [`DiscoveryRESTMapper::kind_for`].
    pub async fn kind_for(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<GroupVersionKind, Error> {
        self.lookup(|m| m.kind_for(resource)).await
    }

    /// See [`DiscoveryRESTMapper::kinds_for`].
    pub async fn kinds_for(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionKind>, Error> {
        self.lookup(|m| m.kinds_for(resource)).await
    }

    /// See [`DiscoveryRESTMapper::resource_for`].
    pub async fn resource_for(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<GroupVersionResource, Error> {
        self.lookup(|m| m.resource_for(resource)).await
    }

    /// See [`DiscoveryRESTMapper::resources_for`].
    pub async fn resources_for(
        &self,
        resource: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionResource>, Error> {
        self.lookup(|m| m.resources_for(resource)).await
    }

    /// See [`DiscoveryRESTMapper::rest_mapping`].
    pub async fn rest_mapping(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<RESTMapping, Error> {
        self.lookup(|m| m.rest_mapping(group_kind, versions)).await
    }

    /// See [`DiscoveryRESTMapper::rest_mappings`].
    pub async fn rest_mappings(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<Vec<RESTMapping>, Error> {
        self.lookup(|m| m.rest_mappings(group_kind, versions)).await
    }

    /// See [`DiscoveryRESTMapper::mapping_for`].
    pub async fn mapping_for(&self, arg: &str) -> Result<RESTMapping, Error> {
        self.lookup(|m| m.mapping_for(arg)).await
    }

    /// See [`DiscoveryRESTMapper::resource_singularizer`].
    pub async fn resource_singularizer(&self, resource: &str) -> Result<String, Error> {
        self.lookup(|m| m.resource_singularizer(resource)).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::fake::FakeDiscovery;
    use crate::memcache::MemCacheClient;

    #[tokio::test]
    async fn a_kind_created_after_the_first_lookup_is_found() {
        let mapper =
            DeferredDiscoveryRESTMapper::new(MemCacheClient::new(FakeDiscovery::new(true)));
        let deploy = mapper.mapping_for("deploy").await.unwrap();
        assert_eq!(
            deploy.resource,
            GroupVersionResource::new("apps", "v1", "deployments")
        );
        let requests = || {
            mapper
                .discovery()
                .delegate()
                .group_requests
                .load(Ordering::SeqCst)
        };
        assert_eq!(requests(), 1);
        // Hits do not rediscover.
        mapper.mapping_for("pods").await.unwrap();
        assert_eq!(requests(), 1);

        mapper
            .discovery()
            .delegate()
            .add("samplecrd.k8s.io", "v1", "networks", "Network", &[]);
        let net = mapper
            .mapping_for("networks.samplecrd.k8s.io")
            .await
            .unwrap();
        assert_eq!(
            net.group_version_kind,
            GroupVersionKind::new("samplecrd.k8s.io", "v1", "Network")
        );
        assert_eq!(requests(), 2);

        // A real miss rediscovers once, then reports no match.
        assert!(
            mapper
                .mapping_for("widgets")
                .await
                .unwrap_err()
                .is_no_match()
        );
        assert_eq!(requests(), 3);
    }

    #[tokio::test]
    async fn a_reset_during_a_build_is_not_lost() {
        let mapper = Arc::new(DeferredDiscoveryRESTMapper::new(FakeDiscovery::new(true)));
        let fake = mapper.discovery();
        let gate = fake.hold();
        let first = tokio::spawn({
            let mapper = mapper.clone();
            async move { mapper.snapshot().await.unwrap() }
        });
        while fake.group_requests.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        // The build has asked; a CRD is created and the caller resets before the answer
        // arrives.
        fake.add("samplecrd.k8s.io", "v1", "networks", "Network", &[]);
        mapper.reset();
        gate.add_permits(1);
        let networks = GroupVersionResource::new("", "", "networks");
        let first = first.await.unwrap();
        assert!(
            first.resource_for(&networks).unwrap_err().is_no_match(),
            "the call in flight gets the snapshot it asked for"
        );

        // A snapshot built from an answer older than reset() is not kept.
        let now = mapper.snapshot().await.unwrap();
        assert_eq!(
            now.resource_for(&networks).unwrap(),
            GroupVersionResource::new("samplecrd.k8s.io", "v1", "networks")
        );
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 2);
    }

    /// Lookups that miss at the same time rediscover once between them: a miss that comes
    /// while another's rebuild is in flight waits for it instead of discarding it.
    #[tokio::test]
    async fn misses_at_the_same_time_rediscover_once() {
        let mapper = Arc::new(DeferredDiscoveryRESTMapper::new(MemCacheClient::new(
            FakeDiscovery::new(true),
        )));
        let (_, generation, _) = mapper.current().await.unwrap();
        let fake = mapper.discovery().delegate();
        let requests = || fake.group_requests.load(Ordering::SeqCst);
        assert_eq!(requests(), 1);
        fake.add("samplecrd.k8s.io", "v1", "networks", "Network", &[]);
        // Eight lookups miss on that snapshot; the first one's rebuild is in flight when the
        // others come to reset.
        let gate = fake.hold();
        mapper.reset_from(generation);
        let first = tokio::spawn({
            let mapper = mapper.clone();
            async move { mapper.current().await.map(|(m, _, _)| m) }
        });
        while requests() < 2 {
            tokio::task::yield_now().await;
        }
        let others: Vec<_> = (0..7)
            .map(|_| {
                mapper.reset_from(generation);
                let mapper = mapper.clone();
                tokio::spawn(async move { mapper.current().await.map(|(m, _, _)| m) })
            })
            .collect();
        gate.add_permits(8);
        let networks = GroupVersionResource::new("", "", "networks");
        for lookup in std::iter::once(first).chain(others) {
            let snapshot = lookup.await.unwrap().unwrap();
            assert_eq!(
                snapshot.resource_for(&networks).unwrap().group,
                "samplecrd.k8s.io"
            );
        }
        assert_eq!(requests(), 2, "one rediscovery for the eight misses");
    }
}

#[cfg(test)]
mod send_sync {
    use super::*;
    use crate::{DiscoveryClient, DiskCachedDiscoveryClient, MemCacheClient};

    fn send_sync<T: Send + Sync + 'static>() {}

    #[test]
    fn clients_and_mappers_are_send_and_sync() {
        send_sync::<DiscoveryClient>();
        send_sync::<MemCacheClient<DiscoveryClient>>();
        send_sync::<DiskCachedDiscoveryClient<MemCacheClient<DiscoveryClient>>>();
        send_sync::<DeferredDiscoveryRESTMapper<MemCacheClient<DiscoveryClient>>>();
        send_sync::<crate::DiscoveryRESTMapper>();
        send_sync::<crate::Error>();
    }
}
