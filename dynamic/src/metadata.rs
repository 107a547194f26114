//! [`MetadataClient`] and [`MetadataResource`]: client-go's `metadata` package, which reads and
//! watches only the metadata of any resource as [`PartialObjectMetadata`].
//!
//! The server strips spec and status itself when asked with
//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (or
//! `as=PartialObjectMetadataList` for lists), so an informer of metadata holds a fraction of
//! the objects' size: what controllers that only follow names, labels, owners or finalizers
//! need (client-go's garbage collector and namespace controller use it). Should a server (or an
//! aggregated API) ignore the request and send whole objects, they still decode: everything
//! but the metadata is skipped.

use kclient_apimachinery::meta::{
    ACCEPT_METADATA, ACCEPT_METADATA_LIST, PartialObjectMetadata, PartialObjectMetadataList,
};
use kclient_apimachinery::{
    DeleteOptions, Error, GetOptions, GroupVersionResource, ListOptions, PatchOptions, PatchType,
};
use kclient_rest::{Client, Config, ConfigError, Request, Verb, WatchStream};

use crate::patch_body::PatchBody;
use crate::target::{Target, timeout_of};

/// A client for the metadata of any resource (client-go's `metadata.Client`). Cheap to clone.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_apimachinery::{GroupVersionResource, ListOptions, Object};
/// use kclient_dynamic::MetadataClient;
///
/// let metadata = MetadataClient::for_config(kclient_rest::Config::infer()?)?;
/// let pods = GroupVersionResource::new("", "v1", "pods");
/// let list = metadata.resource(pods).namespace("default").list(&ListOptions::default()).await?;
/// for pod in &list.items {
///     println!("{} {:?}", pod.name(), pod.metadata.labels);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct MetadataClient {
    client: Client,
}

impl MetadataClient {
    /// A metadata client over `client`.
    pub fn new(client: Client) -> Self {
        MetadataClient { client }
    }

    /// A metadata client for `config`.
    pub fn for_config(config: Config) -> Result<Self, ConfigError> {
        Client::new(config).map(MetadataClient::new)
    }

    /// The REST client underneath.
    pub fn rest_client(&self) -> &Client {
        &self.client
    }

    /// The metadata of `gvr`, in every namespace (or cluster-scoped) until
    /// [`MetadataResource::namespace`] narrows it.
    pub fn resource(&self, gvr: GroupVersionResource) -> MetadataResource {
        MetadataResource {
            target: Target {
                client: self.client.clone(),
                gvr,
                namespace: String::new(),
            },
        }
    }
}

/// The metadata of one resource, optionally in one namespace (client-go's
/// `metadata.ResourceInterface`).
#[derive(Debug, Clone)]
pub struct MetadataResource {
    target: Target,
}

impl MetadataResource {
    /// The same resource in `namespace` (`""` for every namespace or a cluster-scoped one).
    pub fn namespace(&self, namespace: &str) -> MetadataResource {
        MetadataResource {
            target: Target {
                namespace: namespace.to_owned(),
                ..self.target.clone()
            },
        }
    }

    /// The group/version/resource.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.target.gvr
    }

    fn request(&self, verb: Verb) -> Request {
        self.target.request(verb)
    }

    fn object(&self, verb: Verb, name: &str, subresource: &str) -> Request {
        self.target.object(verb, name, subresource)
    }

    /// The metadata of one object (or of a subresource of it).
    pub async fn get(
        &self,
        name: &str,
        opts: &GetOptions,
        subresource: &str,
    ) -> Result<PartialObjectMetadata, Error> {
        self.object(Verb::Get, name, subresource)
            .header("Accept", ACCEPT_METADATA)
            .params(opts.to_query())
            .send()
            .await
    }

    /// The metadata of the objects the options select. `timeout_seconds` also bounds the
    /// request.
    pub async fn list(&self, opts: &ListOptions) -> Result<PartialObjectMetadataList, Error> {
        let mut req = self
            .request(Verb::Get)
            .header("Accept", ACCEPT_METADATA_LIST)
            .params(opts.to_query());
        if let Some(t) = timeout_of(opts) {
            req = req.timeout(t);
        }
        req.send().await
    }

    /// A watch whose events carry only metadata.
    pub async fn watch(
        &self,
        opts: &ListOptions,
    ) -> Result<WatchStream<PartialObjectMetadata>, Error> {
        let opts = opts.clone().watch(true);
        let mut req = self
            .request(Verb::Get)
            .header("Accept", ACCEPT_METADATA)
            .params(opts.to_query());
        if let Some(t) = timeout_of(&opts) {
            req = req.timeout(t);
        }
        req.watch().await
    }

    /// Deletes an object (or a subresource of it).
    pub async fn delete(
        &self,
        name: &str,
        opts: &DeleteOptions,
        subresource: &str,
    ) -> Result<(), Error> {
        self.target.delete(name, opts, subresource).await
    }

    /// Deletes every object the list options select.
    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list_opts: &ListOptions,
    ) -> Result<(), Error> {
        self.target.delete_collection(opts, list_opts).await
    }

    /// Patches an object (for example its labels, annotations, owners or finalizers) and
    /// returns the patched object's metadata.
    pub async fn patch(
        &self,
        name: &str,
        patch_type: PatchType,
        data: impl Into<PatchBody>,
        opts: &PatchOptions,
        subresource: &str,
    ) -> Result<PartialObjectMetadata, Error> {
        self.object(Verb::Patch, name, subresource)
            .header("Accept", ACCEPT_METADATA)
            .content_type(patch_type.content_type())
            .params(opts.to_query())
            .body(data.into().into_bytes())
            .send()
            .await
    }
}
