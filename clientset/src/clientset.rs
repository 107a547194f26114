//! [`Clientset`]: client-go's `kubernetes.Clientset`, the entry point that navigates to a
//! typed client per group version and resource (`clientset.apps_v1().deployments("ns")`).
//! The per-group-version accessors are generated (`generated.rs`).

use kclient_apimachinery::Resource;
use kclient_rest::{Client, Config, ConfigError};

use crate::api::{AllNamespaces, Api};

/// Typed clients for every built-in resource of the pinned Kubernetes version, sharing one
/// REST client (one connection pool, one rate limiter). Cheap to clone. Each group's
/// accessors (`core_v1`, `apps_v1`, ...) exist when its cargo feature is enabled (all of them
/// by default).
#[derive(Debug, Clone)]
pub struct Clientset {
    client: Client,
}

impl Clientset {
    /// A clientset over an existing REST client.
    pub fn new(client: Client) -> Self {
        Clientset { client }
    }

    /// A clientset for a configuration (client-go's `NewForConfig`).
    pub fn for_config(config: Config) -> Result<Self, ConfigError> {
        Ok(Clientset::new(Client::new(config)?))
    }

    /// A clientset for the inferred configuration: `KUBECONFIG` or `~/.kube/config`, else
    /// in-cluster.
    pub fn try_default() -> Result<Self, ConfigError> {
        Ok(Clientset::new(Client::try_default()?))
    }

    /// The REST client underneath (client-go's `RESTClient()`), also the way to build a
    /// typed client for a custom resource: `Api::<Network>::namespaced(cs.rest_client().clone(), "ns")`.
    pub fn rest_client(&self) -> &Client {
        &self.client
    }

    /// A client reading `K` across all namespaces (`list` and `watch`).
    pub fn all_namespaces<K>(&self) -> Api<K, AllNamespaces>
    where
        K: Resource<Scope = kclient_apimachinery::NamespaceResourceScope>,
    {
        Api::all(self.client.clone())
    }
}
