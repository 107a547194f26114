//! The discovery methods as inherent methods of [`DiscoveryClient`], [`MemCacheClient`] and
//! [`DiskCachedDiscoveryClient`], so that `client.server_groups()` works without importing
//! [`DiscoveryInterface`] (client-go's methods need no import either).
//!
//! Each one calls the trait's implementation for its type, so the two paths always answer
//! the same; code generic over discovery clients keeps using the traits (or
//! [`crate::prelude`]).

use crate::discovery_client::DiscoveryClient;
use crate::disk_cache::DiskCachedDiscoveryClient;
use crate::error::Error;
use crate::interface::{
    CachedDiscoveryInterface, Discovered, DiscoveryInterface, GroupsAndMaybeResources,
    GroupsAndResources,
};
use crate::memcache::MemCacheClient;
use crate::types::{APIGroupList, APIResourceList, ServerVersion};

/// Inherent forms of every [`DiscoveryInterface`] method for `impl {generics} Type`.
macro_rules! inherent_discovery_methods {
    (impl $({$($generics:tt)*})? $ty:ty) => {
        impl $(<$($generics)*>)? $ty {
            /// The server's version (`/version`); see
            /// [`DiscoveryInterface::server_version`].
            pub async fn server_version(&self) -> Result<ServerVersion, Error> {
                <Self as DiscoveryInterface>::server_version(self).await
            }

            /// Every group with its versions and preferred version (`/api` and `/apis`); see
            /// [`DiscoveryInterface::server_groups`].
            pub async fn server_groups(&self) -> Result<APIGroupList, Error> {
                <Self as DiscoveryInterface>::server_groups(self).await
            }

            /// The resources of one group version (`v1`, `apps/v1`); see
            /// [`DiscoveryInterface::server_resources_for_group_version`].
            pub async fn server_resources_for_group_version(
                &self,
                group_version: &str,
            ) -> Result<APIResourceList, Error> {
                <Self as DiscoveryInterface>::server_resources_for_group_version(
                    self,
                    group_version,
                )
                .await
            }

            /// Groups, and every version's resources when aggregated discovery gave them;
            /// see [`DiscoveryInterface::groups_and_maybe_resources`].
            pub async fn groups_and_maybe_resources(
                &self,
            ) -> Result<GroupsAndMaybeResources, Error> {
                <Self as DiscoveryInterface>::groups_and_maybe_resources(self).await
            }

            /// Every group and the resources of all its versions (client-go's
            /// `ServerGroupsAndResources`); see
            /// [`DiscoveryInterface::server_groups_and_resources`].
            pub async fn server_groups_and_resources(
                &self,
            ) -> Result<Discovered<GroupsAndResources>, Error> {
                <Self as DiscoveryInterface>::server_groups_and_resources(self).await
            }

            /// Each group resource in its preferred version (client-go's
            /// `ServerPreferredResources`); see
            /// [`DiscoveryInterface::server_preferred_resources`].
            pub async fn server_preferred_resources(
                &self,
            ) -> Result<Discovered<Vec<APIResourceList>>, Error> {
                <Self as DiscoveryInterface>::server_preferred_resources(self).await
            }

            /// [`Self::server_preferred_resources`] limited to namespaced resources; see
            /// [`DiscoveryInterface::server_preferred_namespaced_resources`].
            pub async fn server_preferred_namespaced_resources(
                &self,
            ) -> Result<Discovered<Vec<APIResourceList>>, Error> {
                <Self as DiscoveryInterface>::server_preferred_namespaced_resources(self).await
            }
        }
    };
}

/// Inherent forms of the [`CachedDiscoveryInterface`] methods for `impl {generics} Type`.
macro_rules! inherent_cached_discovery_methods {
    (impl $({$($generics:tt)*})? $ty:ty) => {
        impl $(<$($generics)*>)? $ty {
            /// Whether everything returned so far came from the server during this client's
            /// life; see [`CachedDiscoveryInterface::fresh`].
            pub fn fresh(&self) -> bool {
                <Self as CachedDiscoveryInterface>::fresh(self)
            }

            /// Drops the cached data, so that the next call asks the server again; see
            /// [`CachedDiscoveryInterface::invalidate`].
            pub fn invalidate(&self) {
                <Self as CachedDiscoveryInterface>::invalidate(self)
            }
        }
    };
}

inherent_discovery_methods!(impl DiscoveryClient);
inherent_discovery_methods!(impl {D: DiscoveryInterface} MemCacheClient<D>);
inherent_discovery_methods!(impl {D: CachedDiscoveryInterface} DiskCachedDiscoveryClient<D>);
inherent_cached_discovery_methods!(impl {D: DiscoveryInterface} MemCacheClient<D>);
inherent_cached_discovery_methods!(impl {D: CachedDiscoveryInterface} DiskCachedDiscoveryClient<D>);
