//! [`DiscoveryClient`]: asks the API server what it serves (client-go's
//! `discovery.DiscoveryClient`).
//!
//! Groups come from `/api` and `/apis`, one request each, asking for aggregated discovery
//! first (`Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
//! application/json`): a server that supports it answers with every version's resources in
//! that same response; an older one answers with the plain group list, and the resources are
//! then fetched per group version (`/api/v1`, `/apis/{group}/{version}`), concurrently.
//!
//! Every document is read as an object is (`Request::send`): its `Content-Type` must be JSON,
//! and it is held to `Config::max_object_size` (a root document group by group), refused as
//! soon as that much of it has arrived.

use std::collections::BTreeMap;
use std::time::Duration;

use kclient_rest::{Client, Config, ConfigError};
use serde::Deserialize;

use crate::aggregated::{
    ACCEPT_AGGREGATED, APIGroupDiscovery, APIGroupDiscoveryList, split_groups_and_resources,
};
use crate::error::Error;
use crate::interface::{
    Discovered, DiscoveryInterface, GroupsAndMaybeResources, GroupsAndResources,
    server_groups_and_resources, server_preferred_resources,
};
use crate::types::{
    APIGroup, APIGroupList, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR, ServerVersion,
};
use kclient_apimachinery::null_as_default;

/// client-go's `defaultTimeout` for discovery clients.
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(32);
/// client-go's `defaultBurst` for discovery clients: discovery fans out into many requests.
pub const DEFAULT_DISCOVERY_BURST: i32 = 300;
/// How often a partial discovery failure is retried as a whole (client-go's
/// `defaultRetries`).
const DEFAULT_RETRIES: usize = 2;

/// A discovery client over a REST client. Cheap to clone.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_discovery::DiscoveryClient;
///
/// let discovery = DiscoveryClient::for_config(kclient_rest::Config::infer()?)?;
/// println!("{}", discovery.server_version().await?.git_version);
/// let found = discovery.server_groups_and_resources().await?;
/// for list in &found.value.resources {
///     for r in &list.api_resources {
///         println!("{} {}", list.group_version, r.name);
///     }
/// }
/// if let Some(err) = found.error() {
///     eprintln!("partial discovery: {err}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DiscoveryClient {
    client: Client,
    use_legacy_discovery: bool,
}

/// A root document (`/api` or `/apis`) in any of its forms, decoded in one pass: aggregated
/// discovery's `items`, `/api`'s `versions` or `/apis`'s `groups`; `kind` says which.
#[derive(Deserialize)]
struct RootDocument {
    #[serde(default)]
    kind: String,
    #[serde(default, rename = "apiVersion")]
    api_version: String,
    #[serde(default, deserialize_with = "null_as_default")]
    items: Vec<APIGroupDiscovery>,
    #[serde(default, deserialize_with = "null_as_default")]
    groups: Vec<APIGroup>,
    #[serde(default, deserialize_with = "null_as_default")]
    versions: Vec<String>,
    #[serde(
        default,
        rename = "serverAddressByClientCIDRs",
        deserialize_with = "null_as_default"
    )]
    server_address_by_client_cidrs: Vec<ServerAddressByClientCIDR>,
}

/// A root document: aggregated, or the plain list.
enum Root {
    Aggregated(APIGroupDiscoveryList),
    Plain(RootDocument),
}

impl DiscoveryClient {
    /// A discovery client sharing an existing REST client (its rate limiter and
    /// connections).
    pub fn new(client: Client) -> Self {
        DiscoveryClient {
            client,
            use_legacy_discovery: false,
        }
    }

    /// A discovery client with its own REST client, using client-go's discovery defaults
    /// when `config` leaves them unset: a 32 s timeout and a burst of 300.
    pub fn for_config(mut config: Config) -> Result<Self, ConfigError> {
        if config.timeout.is_none() {
            config.timeout = Some(DEFAULT_DISCOVERY_TIMEOUT);
        }
        if config.burst == 0 {
            config.burst = DEFAULT_DISCOVERY_BURST;
        }
        Ok(DiscoveryClient::new(Client::new(config)?))
    }

    /// The same client asking only for the per-group documents, never aggregated discovery
    /// (client-go's `WithLegacy`).
    pub fn with_legacy(&self) -> Self {
        DiscoveryClient {
            client: self.client.clone(),
            use_legacy_discovery: true,
        }
    }

    /// The REST client underneath.
    pub fn rest_client(&self) -> &Client {
        &self.client
    }

    fn accept(&self) -> &'static str {
        if self.use_legacy_discovery {
            "application/json"
        } else {
            ACCEPT_AGGREGATED
        }
    }

    /// Reads a root document. Read as every object is (`send`): a JSON `Content-Type`, and
    /// each group (or the rest of the document) held to `Config::max_object_size`, so a
    /// server streaming without end costs bounded memory.
    async fn get_root(&self, path: &str) -> Result<Root, kclient_apimachinery::Error> {
        let doc: RootDocument = self
            .client
            .get()
            .abs_path(path)
            .header("Accept", self.accept())
            .send()
            .await?;
        if doc.kind == "APIGroupDiscoveryList" {
            return Ok(Root::Aggregated(APIGroupDiscoveryList { items: doc.items }));
        }
        Ok(Root::Plain(doc))
    }

    /// `/api`: the core group (client-go's `downloadLegacy`). A 404 means no core group.
    async fn download_legacy(&self) -> Result<GroupsAndMaybeResources, Error> {
        match self.get_root("/api").await {
            Err(err) if err.is_not_found() => Ok(GroupsAndMaybeResources {
                resources: Some(BTreeMap::new()),
                ..GroupsAndMaybeResources::default()
            }),
            Err(err) => Err(err.into()),
            Ok(Root::Aggregated(list)) => {
                let split = split_groups_and_resources(list);
                Ok(GroupsAndMaybeResources {
                    groups: split.groups,
                    resources: Some(split.resources),
                    failed: split.failed,
                })
            }
            Ok(Root::Plain(doc)) => {
                let versions = APIVersions {
                    kind: doc.kind,
                    api_version: doc.api_version,
                    versions: doc.versions,
                    server_address_by_client_cidrs: doc.server_address_by_client_cidrs,
                };
                let mut group = APIGroup::default();
                if !versions.versions.is_empty() {
                    group.versions = versions
                        .versions
                        .iter()
                        .map(|v| GroupVersionForDiscovery::new("", v))
                        .collect();
                    group.preferred_version = group.versions.first().cloned();
                }
                Ok(GroupsAndMaybeResources {
                    groups: APIGroupList::new(vec![group]),
                    resources: None,
                    failed: BTreeMap::new(),
                })
            }
        }
    }

    /// `/apis`: every other group (client-go's `downloadAPIs`).
    async fn download_apis(&self) -> Result<GroupsAndMaybeResources, Error> {
        match self.get_root("/apis").await? {
            Root::Aggregated(list) => {
                let split = split_groups_and_resources(list);
                Ok(GroupsAndMaybeResources {
                    groups: split.groups,
                    resources: Some(split.resources),
                    failed: split.failed,
                })
            }
            Root::Plain(doc) => Ok(GroupsAndMaybeResources {
                groups: APIGroupList {
                    kind: doc.kind,
                    api_version: doc.api_version,
                    groups: doc.groups,
                },
                resources: None,
                failed: BTreeMap::new(),
            }),
        }
    }
}

impl DiscoveryInterface for DiscoveryClient {
    async fn server_version(&self) -> Result<ServerVersion, Error> {
        Ok(self.client.get().abs_path("/version").send().await?)
    }

    async fn server_groups(&self) -> Result<APIGroupList, Error> {
        Ok(self.groups_and_maybe_resources().await?.groups)
    }

    async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, Error> {
        if group_version.is_empty() {
            return Err(Error::invalid("groupVersion shouldn't be empty"));
        }
        let path = if group_version == "v1" {
            "/api/v1".to_owned()
        } else {
            format!("/apis/{group_version}")
        };
        match self
            .client
            .get()
            .abs_path(&path)
            .send::<APIResourceList>()
            .await
        {
            Ok(mut list) => {
                if list.group_version.is_empty() {
                    list.group_version = group_version.to_owned();
                }
                Ok(list)
            }
            // A server without the core group (client-go tolerates it).
            Err(err) if group_version == "v1" && err.is_not_found() => {
                Ok(APIResourceList::new("v1", Vec::new()))
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Both roots, merged; resources are present only if both answered with aggregated
    /// discovery (client-go's `GroupsAndMaybeResources`).
    async fn groups_and_maybe_resources(&self) -> Result<GroupsAndMaybeResources, Error> {
        let (legacy, apis) =
            futures_util::future::join(self.download_legacy(), self.download_apis()).await;
        let mut merged = legacy?;
        let apis = apis?;
        merged.groups.groups.extend(apis.groups.groups);
        merged.resources = match (merged.resources, apis.resources) {
            (Some(mut core), Some(rest)) => {
                core.extend(rest);
                Some(core)
            }
            _ => None,
        };
        merged.failed.extend(apis.failed);
        Ok(merged)
    }

    /// Retried as a whole once when some group versions fail (client-go's `withRetries`).
    async fn server_groups_and_resources(&self) -> Result<Discovered<GroupsAndResources>, Error> {
        let mut result = server_groups_and_resources(self).await?;
        for _ in 1..DEFAULT_RETRIES {
            if result.is_complete() {
                break;
            }
            result = server_groups_and_resources(self).await?;
        }
        Ok(result)
    }

    /// Retried as a whole once when some group versions fail (client-go's `withRetries`).
    async fn server_preferred_resources(&self) -> Result<Discovered<Vec<APIResourceList>>, Error> {
        let mut result = server_preferred_resources(self).await?;
        for _ in 1..DEFAULT_RETRIES {
            if result.is_complete() {
                break;
            }
            result = server_preferred_resources(self).await?;
        }
        Ok(result)
    }
}
