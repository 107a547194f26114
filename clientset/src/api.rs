//! [`Api<K>`]: the one generic typed client, client-go's `gentype.Client` (the code behind
//! every `PodInterface`, `DeploymentInterface`, ...), with the same verbs.
//!
//! The scope of `K` (`Resource::Scope`) decides which constructors exist:
//! [`Api::namespaced`] for namespaced kinds, [`Api::cluster`] for cluster-scoped ones, and
//! [`Api::all`] for reading a namespaced kind across every namespace. `Api::all` gives an
//! `Api<K, AllNamespaces>`, which has only `list` and `watch`: a single-object call on
//! "all namespaces" does not compile.
//!
//! Wire format: with the `protobuf` feature, reads of a built-in kind ask for protobuf first and
//! creates and updates send protobuf, as client-go's clientset does (see
//! [`kclient_rest::ContentType`]; `Config::content_type` can force JSON). Patches, apply,
//! subresources other than `status`, and custom resources are JSON. JSON objects sent to the
//! server get `apiVersion` and `kind` filled in from `K` when the type does not serialize them
//! (custom resource structs usually do not).

use std::marker::PhantomData;
use std::time::Duration;

use kclient_apimachinery::{
    ClusterResourceScope, CreateOptions, DeleteOptions, Error, GetOptions, ListOptions,
    NamespaceResourceScope, ObjectList, PatchOptions, Resource, ResourceScope, UpdateOptions,
};
use kclient_rest::{Client, Request, Verb, WatchStream};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::patch::Patch;

/// The scope of an [`Api`]: [`Scoped`] (one namespace, or a cluster-scoped kind) or
/// [`AllNamespaces`] (list and watch across namespaces).
pub trait ApiScope: sealed::Sealed + Send + Sync + 'static {
    /// Whether the client reads every namespace.
    const ALL_NAMESPACES: bool;
}

/// One namespace, or a cluster-scoped kind: every verb is available.
#[derive(Debug, Clone, Copy)]
pub enum Scoped {}

/// A namespaced kind across all namespaces: only `list` and `watch`.
#[derive(Debug, Clone, Copy)]
pub enum AllNamespaces {}

impl ApiScope for Scoped {
    const ALL_NAMESPACES: bool = false;
}
impl ApiScope for AllNamespaces {
    const ALL_NAMESPACES: bool = true;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Scoped {}
    impl Sealed for super::AllNamespaces {}
}

/// A typed client for the resource `K`. Cheap to clone (it holds a `kclient_rest::Client`).
///
/// ```no_run
/// # #[cfg(feature = "core")]
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_apimachinery::{GetOptions, ListOptions};
/// use kclient_api::core::v1::{Node, Pod};
/// use kclient_clientset::Api;
///
/// let client = kclient_rest::Client::try_default()?;
/// let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
/// let pod = pods.get("web-0", &GetOptions::default()).await?;
/// let every_pod = Api::<Pod>::all(client.clone()).list(&ListOptions::default()).await?;
/// let nodes = Api::<Node>::cluster(client).list(&ListOptions::default().limit(10)).await?;
/// # let _ = (pod, every_pod, nodes); Ok(()) }
/// ```
pub struct Api<K, S: ApiScope = Scoped> {
    client: Client,
    /// `""` for cluster-scoped kinds and for all namespaces.
    namespace: String,
    _marker: PhantomData<fn() -> (K, S)>,
}

impl<K, S: ApiScope> Clone for Api<K, S> {
    fn clone(&self) -> Self {
        Api {
            client: self.client.clone(),
            namespace: self.namespace.clone(),
            _marker: PhantomData,
        }
    }
}

impl<K: Resource, S: ApiScope> std::fmt::Debug for Api<K, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("api_version", &K::API_VERSION)
            .field("resource", &K::PLURAL)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Resource<Scope = NamespaceResourceScope>> Api<K> {
    /// A client for `K` objects in `namespace`. An empty namespace makes every request fail
    /// with "namespace may not be empty"; use [`Api::all`] to read across namespaces.
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Api {
            client,
            namespace: namespace.to_owned(),
            _marker: PhantomData,
        }
    }

    /// A client for `K` objects in the client's default namespace (the kubeconfig context's,
    /// or `default`).
    pub fn default_namespaced(client: Client) -> Self {
        let namespace = client.default_namespace().to_owned();
        Api::namespaced(client, &namespace)
    }

    /// A client that lists and watches `K` objects in every namespace (client-go's
    /// `Pods(metav1.NamespaceAll)`).
    pub fn all(client: Client) -> Api<K, AllNamespaces> {
        Api {
            client,
            namespace: String::new(),
            _marker: PhantomData,
        }
    }
}

impl<K: Resource<Scope = ClusterResourceScope>> Api<K> {
    /// A client for the cluster-scoped kind `K`.
    pub fn cluster(client: Client) -> Self {
        Api {
            client,
            namespace: String::new(),
            _marker: PhantomData,
        }
    }
}

/// A `Duration` of whole seconds from a `timeoutSeconds` value (client-go turns it into the
/// request timeout).
fn timeout_of(opts: &ListOptions) -> Option<Duration> {
    opts.timeout_seconds
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s.unsigned_abs()))
}

impl<K: Resource, S: ApiScope> Api<K, S> {
    /// The REST client underneath.
    pub fn rest_client(&self) -> &Client {
        &self.client
    }

    /// The namespace of this client: `""` for cluster-scoped kinds and all namespaces.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// A request for this client's resource collection, for verbs this type does not cover.
    /// Fails when a namespaced client was given an empty namespace.
    pub fn request(&self, verb: Verb) -> Result<Request, Error> {
        if K::Scope::NAMESPACED && !S::ALL_NAMESPACES && self.namespace.is_empty() {
            return Err(Error::invalid_request(format!(
                "namespace may not be empty for {}; use Api::all to read every namespace",
                K::PLURAL
            )));
        }
        Ok(self
            .client
            .verb(verb)
            .group_version(K::GROUP, K::VERSION)
            .namespace(&self.namespace)
            .resource(K::PLURAL))
    }

    /// Lists objects (client-go's `List`). `timeout_seconds` also bounds the request.
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<K>, Error> {
        let mut req = self.request(Verb::Get)?.params(opts.to_query());
        if let Some(t) = timeout_of(opts) {
            req = req.timeout(t);
        }
        #[cfg(feature = "protobuf")]
        if let Some(codec) = K::protobuf() {
            return req.send_protobuf(|body| codec.decode_list(body)).await;
        }
        req.send().await
    }

    /// Opens a watch (client-go's `Watch`): typed events as they happen, starting after
    /// `opts.resource_version`. `timeout_seconds` also bounds the wait for the response. An
    /// event whose object names another type than `K`'s apiVersion and kind is skipped and
    /// logged ([`WatchStream::expect_kind`]), never decoded into a `K`.
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<K>, Error> {
        let opts = opts.clone().watch(true);
        let mut req = self.request(Verb::Get)?.params(opts.to_query());
        if let Some(t) = timeout_of(&opts) {
            req = req.timeout(t);
        }
        #[cfg(feature = "protobuf")]
        if let Some(codec) = K::protobuf() {
            let stream = req.watch_protobuf(codec).await?;
            return Ok(stream.expect_kind(K::API_VERSION, K::KIND));
        }
        Ok(req.watch().await?.expect_kind(K::API_VERSION, K::KIND))
    }
}

/// Sends `req` and decodes one `K` from the response: protobuf first for a kind that has a
/// protobuf form (with the `protobuf` feature), JSON otherwise.
pub(crate) async fn send_object<K: Resource>(req: Request) -> Result<K, Error> {
    #[cfg(feature = "protobuf")]
    if let Some(codec) = K::protobuf() {
        return req.send_protobuf(|body| codec.decode_object(body)).await;
    }
    req.send().await
}

/// Puts `obj` in the body of `req`: protobuf for a kind that has a protobuf form when the
/// client prefers protobuf (with the `protobuf` feature), JSON otherwise.
pub(crate) fn with_object<K: Resource>(
    req: Request,
    client: &Client,
    obj: &K,
) -> Result<Request, Error> {
    #[cfg(feature = "protobuf")]
    if let Some(codec) = K::protobuf()
        && client.content_type() == kclient_rest::ContentType::Protobuf
    {
        return Ok(req.protobuf_body(codec.encode(obj)));
    }
    let _ = client;
    Ok(req.body(object_body(obj)?))
}

/// Serializes an object for the server, filling in `apiVersion` and `kind` from `K` when the
/// type leaves them out.
pub(crate) fn object_body<K: Resource>(obj: &K) -> Result<Vec<u8>, Error> {
    typed_body(obj, K::API_VERSION, K::KIND)
}

/// Serializes `value`, filling in `apiVersion` and `kind` when absent.
pub(crate) fn typed_body<T: Serialize + ?Sized>(
    value: &T,
    api_version: &str,
    kind: &str,
) -> Result<Vec<u8>, Error> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {kind}: {e}")))?;
    // Generated types write `apiVersion` first: nothing to add, no second pass.
    if bytes.starts_with(br#"{"apiVersion":"#) {
        return Ok(bytes);
    }
    let mut v: serde_json::Value = kclient_apimachinery::decode_json(&bytes)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {kind}: {e}")))?;
    if let serde_json::Value::Object(map) = &mut v {
        map.entry("apiVersion")
            .or_insert_with(|| api_version.into());
        map.entry("kind").or_insert_with(|| kind.into());
    }
    serde_json::to_vec(&v)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {kind}: {e}")))
}

impl<K: Resource> Api<K> {
    fn object(&self, verb: Verb, name: &str) -> Result<Request, Error> {
        Ok(self.request(verb)?.name(name))
    }

    /// Reads one object (client-go's `Get`).
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<K, Error> {
        send_object(self.object(Verb::Get, name)?.params(opts.to_query())).await
    }

    /// Creates an object (client-go's `Create`) and returns it as stored.
    pub async fn create(&self, obj: &K, opts: &CreateOptions) -> Result<K, Error> {
        let req = self.request(Verb::Post)?.params(opts.to_query());
        send_object(with_object(req, &self.client, obj)?).await
    }

    /// Replaces an object (client-go's `Update`); `metadata.resourceVersion` makes it a
    /// compare-and-swap that fails with a Conflict when the object changed meanwhile.
    pub async fn update(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        let req = self.object(Verb::Put, obj.name())?.params(opts.to_query());
        send_object(with_object(req, &self.client, obj)?).await
    }

    /// Deletes an object (client-go's `Delete`): propagation policy, preconditions, grace
    /// period and dry run travel in `opts`.
    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<(), Error> {
        self.object(Verb::Delete, name)?
            .body(opts.to_body())
            .bytes()
            .await
            .map(drop)
    }

    /// Deletes every object the list options select (client-go's `DeleteCollection`).
    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list_opts: &ListOptions,
    ) -> Result<(), Error> {
        let mut req = self
            .request(Verb::Delete)?
            .params(list_opts.to_query())
            .body(opts.to_body());
        if let Some(t) = timeout_of(list_opts) {
            req = req.timeout(t);
        }
        req.bytes().await.map(drop)
    }

    /// Patches an object (client-go's `Patch`) with a JSON patch, a JSON merge patch, a
    /// strategic merge patch or an apply configuration.
    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K, Error> {
        patch.check(opts)?;
        send_object(self.patch_request(name, "", patch, opts)?).await
    }

    /// The request of a patch: its body is always JSON (a patch has no protobuf form).
    fn patch_request(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<Request, Error> {
        Ok(self
            .request(Verb::Patch)?
            .content_type(patch.patch_type().content_type())
            .name(name)
            .subresource(subresource)
            .params(opts.to_query())
            .body(patch.to_body()?))
    }

    /// Patches a subresource (`status`, `scale`, ...), or the object itself when
    /// `subresource` is empty (client-go's `Patch(..., subresources...)`).
    pub async fn patch_subresource<T: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<T, Error> {
        patch.check(opts)?;
        self.patch_request(name, subresource, patch, opts)?
            .send()
            .await
    }
}

#[cfg(all(test, feature = "core"))]
mod tests {
    use kclient_api::core::v1::{Node, Pod};
    use kclient_apimachinery::{GetOptions, Object};
    use kclient_rest::Config;

    use super::*;

    fn client() -> Client {
        Client::new(Config::new("https://127.0.0.1:6443")).unwrap()
    }

    fn url(req: Result<Request, Error>) -> String {
        req.unwrap().url().unwrap()
    }

    #[test]
    fn urls_follow_the_scope_of_the_kind() {
        let pods: Api<Pod> = Api::namespaced(client(), "web");
        assert_eq!(
            url(pods.request(Verb::Get)),
            "https://127.0.0.1:6443/api/v1/namespaces/web/pods"
        );
        assert_eq!(
            url(pods.object(Verb::Get, "p0")),
            "https://127.0.0.1:6443/api/v1/namespaces/web/pods/p0"
        );
        let all = Api::<Pod>::all(client());
        assert_eq!(all.namespace(), "");
        assert_eq!(
            url(all.request(Verb::Get)),
            "https://127.0.0.1:6443/api/v1/pods"
        );
        let nodes: Api<Node> = Api::cluster(client());
        assert_eq!(
            url(nodes.object(Verb::Get, "n1")),
            "https://127.0.0.1:6443/api/v1/nodes/n1"
        );
        #[cfg(feature = "apps")]
        {
            let deployments: Api<kclient_api::apps::v1::Deployment> =
                Api::namespaced(client(), "web");
            assert_eq!(
                url(deployments
                    .request(Verb::Get)
                    .map(|r| r.name("d").subresource("scale"))),
                "https://127.0.0.1:6443/apis/apps/v1/namespaces/web/deployments/d/scale"
            );
        }
        assert_eq!(
            Api::<Pod>::default_namespaced(client()).namespace(),
            "default"
        );
    }

    #[tokio::test]
    async fn requests_without_a_namespace_or_name_fail_before_sending() {
        let pods: Api<Pod> = Api::namespaced(client(), "");
        let err = pods.get("p0", &GetOptions::default()).await.unwrap_err();
        assert!(err.is_invalid_request());
        assert!(err.to_string().starts_with("namespace may not be empty"));
        let pods: Api<Pod> = Api::namespaced(client(), "web");
        let err = pods.get("", &GetOptions::default()).await.unwrap_err();
        assert!(err.is_invalid_request());
        assert_eq!(err.to_string(), "resource name may not be empty");
        // Apply needs a name too.
        let err = pods
            .apply(&Pod::default(), &PatchOptions::apply("me"))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "obj.Name must be provided to Apply");
        let mut named = Pod::default();
        named.set_name("p0");
        let err = pods
            .apply(&named, &PatchOptions::default())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("fieldManager is required"));
    }

    #[test]
    fn list_timeouts_become_request_timeouts() {
        assert_eq!(timeout_of(&ListOptions::default()), None);
        assert_eq!(
            timeout_of(&ListOptions::default().timeout_seconds(30)),
            Some(Duration::from_secs(30))
        );
        assert_eq!(timeout_of(&ListOptions::default().timeout_seconds(0)), None);
    }
}

#[cfg(all(test, feature = "core"))]
mod send_sync {
    use kclient_api::core::v1::{Node, Pod};
    use kclient_apimachinery::ListOptions;

    use super::*;

    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send>(_: &T) {}

    /// Informers run these clients on worker tasks: clients and their futures must be Send.
    #[test]
    fn clients_and_their_futures_are_send() {
        send_sync::<Api<Pod>>();
        send_sync::<Api<Pod, AllNamespaces>>();
        send_sync::<Api<Node>>();
        send_sync::<crate::Clientset>();
        let api: Api<Pod> = Api::namespaced(
            Client::new(kclient_rest::Config::new("https://127.0.0.1:6443")).unwrap(),
            "ns",
        );
        let opts = ListOptions::default();
        send(&api.list(&opts));
        send(&api.watch(&opts));
        send(&Api::<Pod>::all(api.rest_client().clone()).list(&opts));
    }
}
