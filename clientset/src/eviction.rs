//! [`EvictionClient`], client-go's `PolicyV1().Evictions(namespace)`: a client with one verb,
//! [`evict`](EvictionClient::evict), which POSTs a `policy/v1` Eviction to the `eviction`
//! subresource of the pod the Eviction names. The API server grants it as the pod's
//! PodDisruptionBudgets allow, then deletes the pod with the Eviction's `deleteOptions`.
//!
//! Evictions are not a resource of their own (nothing lists, reads or watches them), so this
//! is not an [`Api<K>`](crate::Api). `Api::<Pod>::evict(name, eviction)` sends the same
//! request by pod name (client-go's `PodInterface.EvictV1`); both build it here.

use kclient_api::policy::v1::Eviction;
use kclient_apimachinery::{Error, Object};
use kclient_rest::{Client, Request, Verb};

use crate::PolicyV1Client;
use crate::subresource::named_body;

impl PolicyV1Client {
    /// A client that evicts pods of `namespace` (client-go's `PolicyV1().Evictions(namespace)`).
    ///
    /// ```no_run
    /// # async fn run(clientset: kclient_clientset::Clientset) -> Result<(), kclient_apimachinery::Error> {
    /// use kclient_api::policy::v1::Eviction;
    /// use kclient_apimachinery::Object;
    ///
    /// let mut eviction = Eviction::default();
    /// eviction.set_name("web-0");
    /// match clientset.policy_v1().evictions("shop").evict(&eviction).await {
    ///     Ok(()) => println!("web-0 is going"),
    ///     // A PodDisruptionBudget allows no disruption now: try again later.
    ///     Err(e) if e.is_too_many_requests() => println!("not now: {e}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn evictions(&self, namespace: &str) -> EvictionClient {
        EvictionClient {
            client: self.client.clone(),
            namespace: namespace.to_owned(),
        }
    }
}

/// Evicts pods of one namespace (client-go's `EvictionInterface`), made by
/// [`PolicyV1Client::evictions`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EvictionClient {
    client: Client,
    /// `""` when each Eviction names its own namespace.
    namespace: String,
}

impl EvictionClient {
    /// An eviction client over `client` for the pods of `namespace`.
    pub fn new(client: Client, namespace: &str) -> Self {
        EvictionClient {
            client,
            namespace: namespace.to_owned(),
        }
    }

    /// The namespace of this client.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Evicts the pod `eviction.metadata.name` (client-go's `EvictionInterface.Evict`): POSTs
    /// `eviction` to `pods/{name}/eviction` and answers once the server has granted it. The
    /// pod is then deleted with `eviction.delete_options` (a pod with no node at once, one on
    /// a node gracefully, as a delete would).
    ///
    /// The server grants an eviction that every PodDisruptionBudget selecting the pod allows,
    /// and spends one of the budget's allowed disruptions. A budget that allows none now, or
    /// that its controller has not yet observed, refuses it with a 429
    /// ([`Error::is_too_many_requests`]): try again later, as `kubectl drain` does. A pod
    /// that does not exist is a 404.
    ///
    /// The pod is looked for in the eviction's `metadata.namespace`, or in this client's
    /// namespace when the eviction has none. Fails before sending when the eviction has no
    /// name, when both namespaces are empty, or when both are set and differ (client-go sends
    /// to the eviction's namespace whatever its client's is; kclient refuses, as client-go's
    /// Events client refuses an event of another namespace).
    pub async fn evict(&self, eviction: &Eviction) -> Result<(), Error> {
        let name = eviction.name();
        if name.is_empty() {
            return Err(Error::invalid_request(
                "resource name may not be empty: set the Eviction's metadata.name to the pod's",
            ));
        }
        let namespace = match (eviction.namespace(), self.namespace.as_str()) {
            ("", "") => {
                return Err(Error::invalid_request(
                    "namespace may not be empty for an eviction: set the Eviction's \
                     metadata.namespace or the client's namespace",
                ));
            }
            (theirs, ours) if !theirs.is_empty() && !ours.is_empty() && theirs != ours => {
                return Err(Error::invalid_request(format!(
                    "can't evict a pod of namespace {theirs:?} with an eviction client of \
                     namespace {ours:?}"
                )));
            }
            ("", ours) => ours,
            (theirs, _) => theirs,
        };
        let pods = self
            .client
            .verb(Verb::Post)
            .group_version("", "v1")
            .namespace(namespace)
            .resource("pods");
        post_eviction(pods, name, eviction).await
    }
}

/// POSTs `eviction` to the `eviction` subresource of the pod `name`; `pods` is a POST request
/// for the pods of its namespace. The eviction's `metadata.name` is filled in from `name`
/// when unset. The server's answer, a `Status`, is read and dropped.
pub(crate) async fn post_eviction(
    pods: Request,
    name: &str,
    eviction: &Eviction,
) -> Result<(), Error> {
    pods.name(name)
        .subresource("eviction")
        .body(named_body(eviction, "policy/v1", "Eviction", name)?)
        .bytes()
        .await
        .map(drop)
}
