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
//!
//! With the `protobuf` feature, and unless the client's `Config::content_type` forces JSON,
//! requests ask for the metadata in protobuf first
//! (`application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`), as
//! client-go's metadata client does; custom resources are answered in JSON, and every answer
//! is decoded by its `Content-Type`.

use kclient_apimachinery::meta::{
    ACCEPT_METADATA, ACCEPT_METADATA_LIST, PartialObjectMetadata, PartialObjectMetadataList,
};
#[cfg(feature = "protobuf")]
use kclient_apimachinery::protobuf::ProtobufCodec;
use kclient_apimachinery::{
    Error, GetOptions, GroupVersionResource, ListOptions, PatchOptions, PatchType,
};
use kclient_rest::{Client, Config, ConfigError, Request, Verb, WatchStream};

use crate::patch_body::PatchBody;
use crate::target::{Target, shared_resource_methods, timeout_of};

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
    shared_resource_methods!();

    fn request(&self, verb: Verb) -> Request {
        self.target.request(verb)
    }

    /// The `Accept` header of an object or watch request: metadata in protobuf first when the
    /// client prefers protobuf (with the `protobuf` feature), else in JSON.
    fn accept(&self, list: bool) -> &'static str {
        #[cfg(feature = "protobuf")]
        if self.target.client.content_type() == kclient_rest::ContentType::Protobuf {
            use kclient_apimachinery::meta::{
                ACCEPT_METADATA_LIST_PROTOBUF, ACCEPT_METADATA_PROTOBUF,
            };
            return if list {
                ACCEPT_METADATA_LIST_PROTOBUF
            } else {
                ACCEPT_METADATA_PROTOBUF
            };
        }
        if list {
            ACCEPT_METADATA_LIST
        } else {
            ACCEPT_METADATA
        }
    }

    /// The metadata of one object (or of a subresource of it).
    pub async fn get(
        &self,
        name: &str,
        opts: &GetOptions,
        subresource: &str,
    ) -> Result<PartialObjectMetadata, Error> {
        let req = self
            .object(Verb::Get, name, subresource)
            .header("Accept", self.accept(false))
            .params(opts.to_query());
        send_metadata(req).await
    }

    /// The metadata of the objects the options select. `timeout_seconds` also bounds the
    /// request.
    pub async fn list(&self, opts: &ListOptions) -> Result<PartialObjectMetadataList, Error> {
        let mut req = self
            .request(Verb::Get)
            .header("Accept", self.accept(true))
            .params(opts.to_query());
        if let Some(t) = timeout_of(opts) {
            req = req.timeout(t);
        }
        #[cfg(feature = "protobuf")]
        {
            let codec = ProtobufCodec::partial_object_metadata();
            req.send_protobuf(|body| codec.decode_list(body)).await
        }
        #[cfg(not(feature = "protobuf"))]
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
            .header("Accept", self.accept(false))
            .params(opts.to_query());
        if let Some(t) = timeout_of(&opts) {
            req = req.timeout(t);
        }
        #[cfg(feature = "protobuf")]
        return req
            .watch_protobuf(ProtobufCodec::partial_object_metadata())
            .await;
        #[cfg(not(feature = "protobuf"))]
        req.watch().await
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
        let req = self
            .object(Verb::Patch, name, subresource)
            .header("Accept", self.accept(false))
            .content_type(patch_type.content_type())
            .params(opts.to_query())
            .body(data.into().into_bytes());
        send_metadata(req).await
    }
}

/// Sends a metadata request and decodes the object by the response's `Content-Type`
/// (protobuf with the `protobuf` feature, JSON otherwise).
async fn send_metadata(req: Request) -> Result<PartialObjectMetadata, Error> {
    #[cfg(feature = "protobuf")]
    {
        let codec = ProtobufCodec::partial_object_metadata();
        req.send_protobuf(|body| codec.decode_object(body)).await
    }
    #[cfg(not(feature = "protobuf"))]
    req.send().await
}
