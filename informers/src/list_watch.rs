//! [`ListerWatcher`]s over the REST client: the adapters that connect the cache, which knows
//! nothing about HTTP, to the API server (client-go's `NewListWatchFromClient` and the
//! `ListFunc`/`WatchFunc` pairs of its generated informers).
//!
//! They live here rather than in `cache` (which must not know HTTP) or in the client crates
//! (which must not know the cache): `informers` is the first crate that sees both.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use kclient_apimachinery::meta::{ACCEPT_METADATA, ACCEPT_METADATA_LIST, PartialObjectMetadata};
use kclient_apimachinery::{
    ApiResource, Error, ListOptions, ObjectList, Resource, Unstructured, UnstructuredList,
};
use kclient_cache::{ListerWatcher, WatchStream};
use kclient_rest::Client;
use serde::de::DeserializeOwned;

/// Lists and watches one resource through a [`Client`], decoding objects as `K`.
///
/// The resource is described at run time by an [`ApiResource`], so the same adapter serves
/// generated types ([`RestListWatch::for_resource`]), custom resource types, and
/// [`Unstructured`] objects of any resource ([`RestListWatch::dynamic`]).
pub struct RestListWatch<K> {
    client: Client,
    resource: ApiResource,
    namespace: Option<String>,
    tweak: Option<Arc<TweakFn>>,
    /// `Accept` headers of lists and of watches, when not plain JSON (metadata-only).
    accept: Option<(&'static str, &'static str)>,
    /// Whether watch events must name the resource's apiVersion and kind (all but the
    /// metadata-only watches, whose objects are `PartialObjectMetadata`): an event of another
    /// kind is skipped and logged, as client-go's reflector does.
    check_kind: bool,
    /// Sends a list request and decodes its page in place of the plain decode: the dynamic
    /// adapter reads the list's own `apiVersion` and `kind` to give them to items that name
    /// neither.
    decode_list: Option<DecodeList<K>>,
    /// The protobuf form of a built-in kind, negotiated when the client prefers it.
    #[cfg(feature = "protobuf")]
    protobuf: Option<kclient_apimachinery::protobuf::ProtobufCodec<K>>,
    _type: std::marker::PhantomData<fn() -> K>,
}

/// Adjusts a list or watch's options (client-go's `TweakListOptionsFunc`).
pub type TweakListOptionsFunc = dyn Fn(&mut ListOptions) + Send + Sync;

pub(crate) type TweakFn = TweakListOptionsFunc;

type DecodeList<K> =
    fn(kclient_rest::Request, ApiResource) -> BoxFuture<'static, Result<ObjectList<K>, Error>>;

impl<K> std::fmt::Debug for RestListWatch<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestListWatch")
            .field("resource", &self.resource.plural)
            .field("group", &self.resource.group)
            .field("version", &self.resource.version)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Resource> RestListWatch<K> {
    /// Lists and watches `K` in `namespace`, or in every namespace (and for cluster-scoped
    /// kinds) when it is `None`.
    ///
    /// With the `protobuf` feature, a built-in kind is listed and watched in protobuf when the
    /// client prefers it (see `kclient_rest::ContentType`).
    pub fn for_resource(client: Client, namespace: Option<&str>) -> Self {
        #[cfg_attr(not(feature = "protobuf"), allow(unused_mut))]
        let mut lw = RestListWatch::new(client, ApiResource::of::<K>(), namespace);
        #[cfg(feature = "protobuf")]
        {
            lw.protobuf = K::protobuf();
        }
        lw
    }
}

impl RestListWatch<PartialObjectMetadata> {
    /// Lists and watches only the metadata of any resource (client-go's metadata informers):
    /// the server sends [`PartialObjectMetadata`], so the cache holds no spec or status.
    ///
    /// With the `protobuf` feature, and unless the client forces JSON, it asks for the
    /// metadata in protobuf first, as client-go's metadata informers do (custom resources are
    /// answered in JSON).
    pub fn metadata(client: Client, resource: ApiResource, namespace: Option<&str>) -> Self {
        #[cfg(feature = "protobuf")]
        let protobuf = client.content_type() == kclient_rest::ContentType::Protobuf;
        let mut lw = RestListWatch::new(client, resource, namespace);
        lw.accept = Some((ACCEPT_METADATA_LIST, ACCEPT_METADATA));
        lw.check_kind = false;
        #[cfg(feature = "protobuf")]
        if protobuf {
            use kclient_apimachinery::meta::{
                ACCEPT_METADATA_LIST_PROTOBUF, ACCEPT_METADATA_PROTOBUF,
            };
            lw.accept = Some((ACCEPT_METADATA_LIST_PROTOBUF, ACCEPT_METADATA_PROTOBUF));
            lw.protobuf =
                Some(kclient_apimachinery::protobuf::ProtobufCodec::partial_object_metadata());
        }
        lw
    }
}

impl RestListWatch<Unstructured> {
    /// Lists and watches any resource as [`Unstructured`] objects, like client-go's dynamic
    /// informers.
    ///
    /// The server leaves `apiVersion` and `kind` out of the items of a built-in kind's list; a
    /// listed item that lacks both gets the list's (`ConfigMapList` items are `ConfigMap`s), as
    /// client-go's `UnstructuredList` decoding gives them, so objects from a list carry them as
    /// watched ones do, even when `resource` names no kind (a resource known only by its
    /// group, version and plural). A list that names neither leaves the resource's.
    pub fn dynamic(client: Client, resource: ApiResource, namespace: Option<&str>) -> Self {
        let mut lw = RestListWatch::new(client, resource, namespace);
        lw.decode_list = Some(decode_unstructured_list);
        lw
    }
}

/// Sends `request` and decodes the page as an [`UnstructuredList`], whose `apiVersion` and
/// kind go to every item that names neither.
fn decode_unstructured_list(
    request: kclient_rest::Request,
    resource: ApiResource,
) -> BoxFuture<'static, Result<ObjectList<Unstructured>, Error>> {
    async move {
        let list = request.send::<UnstructuredList>().await?;
        let api_version = match list.api_version.as_str() {
            "" => resource.api_version.as_str(),
            listed => listed,
        };
        let kind = match list.kind.as_str() {
            "" => resource.kind.as_str(),
            listed => listed.strip_suffix("List").unwrap_or(listed),
        };
        let mut items = list.items;
        for item in &mut items {
            if item.api_version().is_empty() && item.kind().is_empty() {
                item.set_api_version(api_version);
                item.set_kind(kind);
            }
        }
        Ok(ObjectList {
            metadata: list.metadata,
            items,
        })
    }
    .boxed()
}

impl<K> RestListWatch<K> {
    /// A lister-watcher for `resource`, decoding objects as `K`.
    pub fn new(client: Client, resource: ApiResource, namespace: Option<&str>) -> Self {
        // A namespace means nothing for a cluster-scoped resource; the URL must not carry one.
        let namespace = namespace
            .filter(|ns| !ns.is_empty() && resource.namespaced)
            .map(str::to_owned);
        RestListWatch {
            client,
            resource,
            namespace,
            tweak: None,
            accept: None,
            check_kind: true,
            decode_list: None,
            #[cfg(feature = "protobuf")]
            protobuf: None,
            _type: std::marker::PhantomData,
        }
    }

    /// Adjusts the options of every list and watch after the reflector set its own, for example
    /// to add a label or field selector (client-go's `TweakListOptionsFunc`).
    pub fn with_tweak_list_options(
        self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.with_shared_tweak(Arc::new(tweak))
    }

    pub(crate) fn with_shared_tweak(mut self, tweak: Arc<TweakFn>) -> Self {
        self.tweak = Some(tweak);
        self
    }

    fn request(&self, options: &mut ListOptions) -> kclient_rest::Request {
        if let Some(tweak) = &self.tweak {
            tweak(options);
        }
        let mut request = self
            .client
            .get()
            .group_version(&self.resource.group, &self.resource.version)
            .resource(&self.resource.plural)
            .params(options.to_query());
        if let Some(ns) = &self.namespace {
            request = request.namespace(ns);
        }
        request
    }
}

impl<K: DeserializeOwned + Send + 'static> ListerWatcher<K> for RestListWatch<K> {
    fn list(&self, mut options: ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        options.watch = false;
        let mut request = self.request(&mut options);
        if let Some((list, _)) = self.accept {
            request = request.header("Accept", list);
        }
        // As in client-go's generated clients, timeoutSeconds also bounds the request.
        if let Some(secs) = options.timeout_seconds.filter(|s| *s > 0) {
            request = request.timeout(Duration::from_secs(secs.unsigned_abs()));
        }
        #[cfg(feature = "protobuf")]
        if let Some(codec) = self.protobuf {
            return request
                .send_protobuf(move |body| codec.decode_list(body))
                .boxed();
        }
        if let Some(decode) = self.decode_list {
            return decode(request, self.resource.clone());
        }
        request.send::<ObjectList<K>>().boxed()
    }

    fn watch(&self, mut options: ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        options.watch = true;
        // The server ends the watch after timeoutSeconds; no client-side deadline is set, so a
        // slow clock or a late final chunk never turns a normal end into an error.
        let mut request = self.request(&mut options);
        if let Some((_, watch)) = self.accept {
            request = request.header("Accept", watch);
        }
        #[cfg(feature = "protobuf")]
        let protobuf = self.protobuf;
        let expected = self.check_kind.then(|| {
            (
                self.resource.api_version.clone(),
                self.resource.kind.clone(),
            )
        });
        let checked = move |stream: kclient_rest::WatchStream<K>| match expected {
            Some((api_version, kind)) => stream.expect_kind(api_version, kind).boxed(),
            None => stream.boxed(),
        };
        async move {
            #[cfg(feature = "protobuf")]
            if let Some(codec) = protobuf {
                return Ok(checked(request.watch_protobuf(codec).await?));
            }
            Ok(checked(request.watch::<K>().await?))
        }
        .boxed()
    }
}

/// client-go's `NewListWatchFromClient(client, resource, namespace, fieldSelector)`: lists and
/// watches `K` in `namespace` (every namespace when `None`) restricted by a field selector such as
/// `spec.nodeName=node-1` (empty for none).
pub fn new_list_watch_from_client<K: Resource>(
    client: Client,
    namespace: Option<&str>,
    field_selector: &str,
) -> RestListWatch<K> {
    let lw = RestListWatch::<K>::for_resource(client, namespace);
    if field_selector.is_empty() {
        return lw;
    }
    let selector = field_selector.to_owned();
    lw.with_tweak_list_options(move |opts| opts.field_selector = Some(selector.clone()))
}

/// A [`ListerWatcher`] whose every request's options are adjusted by a tweak first: how the
/// factory applies a per-informer tweak to a caller's own source.
pub(crate) struct Tweaked<K> {
    pub(crate) inner: Arc<dyn ListerWatcher<K>>,
    pub(crate) tweak: Arc<TweakFn>,
}

impl<K: Send + 'static> ListerWatcher<K> for Tweaked<K> {
    fn list(&self, mut options: ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        (self.tweak)(&mut options);
        self.inner.list(options)
    }
    fn watch(&self, mut options: ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        (self.tweak)(&mut options);
        self.inner.watch(options)
    }
    fn supports_watch_list(&self) -> bool {
        self.inner.supports_watch_list()
    }
}

/// Both tweaks, `first` then `second`, as one.
pub(crate) fn chain_tweaks(
    first: Option<Arc<TweakFn>>,
    second: Option<Arc<TweakFn>>,
) -> Option<Arc<TweakFn>> {
    match (first, second) {
        (Some(a), Some(b)) => Some(Arc::new(move |opts: &mut ListOptions| {
            a(opts);
            b(opts);
        })),
        (a, b) => a.or(b),
    }
}
