//! Discovery of API groups and resources, the counterpart of client-go's `discovery` and
//! `restmapper` packages.
//!
//! - [`DiscoveryClient`]: the server's version, groups and resources, through aggregated
//!   discovery (one request per root) with automatic fallback to the per-group documents.
//!   Partial failures (an aggregated API server down) come back as data next to what
//!   succeeded ([`Discovered`]), as client-go's `ErrGroupDiscoveryFailed` does.
//! - [`MemCacheClient`] and [`DiskCachedDiscoveryClient`]: the memory cache (fresh /
//!   invalidate) and kubectl's disk cache with a time to live.
//! - [`DiscoveryRESTMapper`] and [`DeferredDiscoveryRESTMapper`]: kind to resource and back,
//!   short and singular names, preferred versions, scope; the deferred one is built from
//!   discovery on first use and rebuilt when a lookup misses.
//! - [`OpenAPIV3Client`]: the OpenAPI v3 index and per-group-version documents, cached, and a
//!   kind's schema ([`ResourceSchema`]) with `kubectl explain`'s reading of a field
//!   ([`ResourceSchema::explain`]).
//!
//! All three share [`DiscoveryInterface`]; the caches add [`CachedDiscoveryInterface`]. The
//! clients also have every method as an inherent method, so calling them needs no import;
//! code generic over discovery clients brings the traits in with
//! `use kclient_discovery::prelude::*;`.
//! Depends on `rest` and `apimachinery`; never on `api`, `cache` or `informers`.
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kclient_discovery::{DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient};
//!
//! let discovery = MemCacheClient::new(DiscoveryClient::for_config(kclient_rest::Config::infer()?)?);
//! for group in discovery.server_groups().await?.groups {
//!     println!("{} (preferred {})", group.name, group.preferred_version_name());
//! }
//!
//! let mapper = DeferredDiscoveryRESTMapper::new(discovery);
//! for arg in ["deploy", "deployments", "Deployment", "deployment.apps", "deployments.v1.apps"] {
//!     let mapping = mapper.mapping_for(arg).await?;
//!     println!("{arg} -> {} ({})", mapping.resource, mapping.group_version_kind.kind);
//! }
//! # Ok(()) }
//! ```

mod aggregated;
mod deferred_mapper;
mod discovery_client;
mod disk_cache;
mod error;
mod explain;
#[cfg(test)]
mod fake;
mod inherent;
mod interface;
mod memcache;
mod openapi;
mod rest_mapper;
mod types;

/// The discovery traits, for code generic over discovery clients:
/// `use kclient_discovery::prelude::*;`.
///
/// ```
/// use kclient_discovery::prelude::*;
///
/// /// The number of groups any discovery client sees.
/// async fn group_count(d: &impl DiscoveryInterface) -> Result<usize, kclient_discovery::Error> {
///     Ok(d.server_groups().await?.groups.len())
/// }
/// ```
pub mod prelude {
    pub use crate::interface::{CachedDiscoveryInterface, DiscoveryInterface};
}

pub use aggregated::{
    ACCEPT_AGGREGATED, APIGroupDiscovery, APIGroupDiscoveryList, APIResourceDiscovery,
    APISubresourceDiscovery, APIVersionDiscovery, DiscoveryFreshness, DiscoveryKind,
    GroupDiscoveryMeta, ResourceScope, SplitDiscovery, is_aggregated_content_type,
    split_groups_and_resources,
};
pub use deferred_mapper::DeferredDiscoveryRESTMapper;
pub use discovery_client::{DEFAULT_DISCOVERY_BURST, DEFAULT_DISCOVERY_TIMEOUT, DiscoveryClient};
pub use disk_cache::{
    DEFAULT_DISK_CACHE_TTL, DiskCachedDiscoveryClient, default_discovery_cache_dir,
    discovery_cache_dir,
};
pub use error::Error;
pub use explain::{ExplainedField, FieldSummary};
pub use interface::{
    CachedDiscoveryInterface, Discovered, DiscoveryInterface, GroupsAndMaybeResources,
    GroupsAndResources, server_groups_and_resources, server_preferred_resources,
};
pub use memcache::MemCacheClient;
pub use openapi::{OpenAPIV3Client, OpenAPIV3Path, ResourceSchema, openapi_v3_path};
pub use rest_mapper::{APIGroupResources, DiscoveryRESTMapper, RESTMapping, RESTScope};
pub use types::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR, ServerVersion,
};
