//! [`DynamicClient`] and [`DynamicResource`]: client-go's `dynamic.DynamicClient` and its
//! `ResourceInterface`, for any group/version/resource as [`Unstructured`] objects.
//!
//! Requests are always JSON (client-go's `ConfigFor` forces it). Paths are `/api/{version}`
//! for the core group and `/apis/{group}/{version}` otherwise, with
//! `/namespaces/{namespace}` when a namespace is set. A call that needs a name fails before
//! any request is sent when the name is empty ("resource name may not be empty").

use kclient_apimachinery::{
    CreateOptions, Error, GetOptions, GroupVersionResource, ListOptions, PatchOptions, PatchType,
    Unstructured, UnstructuredList, UpdateOptions,
};
use kclient_rest::{Client, Config, ConfigError, Request, Verb, WatchStream};

use crate::patch_body::PatchBody;
use crate::target::{Target, shared_resource_methods, timeout_of};

/// A client for any resource the server serves, including custom resources created at run
/// time. Cheap to clone.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_apimachinery::{GroupVersionResource, ListOptions};
/// use kclient_dynamic::DynamicClient;
///
/// let dynamic = DynamicClient::for_config(kclient_rest::Config::infer()?)?;
/// let networks = GroupVersionResource::new("samplecrd.k8s.io", "v1", "networks");
/// let list = dynamic.resource(networks).namespace("default").list(&ListOptions::default()).await?;
/// for net in &list.items {
///     println!("{:?}", net.nested_string(&["spec", "cidr"])?);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DynamicClient {
    client: Client,
}

impl DynamicClient {
    /// A dynamic client over an existing REST client.
    pub fn new(client: Client) -> Self {
        DynamicClient { client }
    }

    /// A dynamic client for a configuration (client-go's `NewForConfig`).
    pub fn for_config(config: Config) -> Result<Self, ConfigError> {
        Ok(DynamicClient::new(Client::new(config)?))
    }

    /// The REST client underneath.
    pub fn rest_client(&self) -> &Client {
        &self.client
    }

    /// The client of one resource: cluster-wide (or across all namespaces) until
    /// [`DynamicResource::namespace`] narrows it.
    pub fn resource(&self, gvr: GroupVersionResource) -> DynamicResource {
        DynamicResource {
            target: Target {
                client: self.client.clone(),
                gvr,
                namespace: String::new(),
            },
        }
    }
}

/// The client of one resource, optionally in one namespace (client-go's
/// `NamespaceableResourceInterface` / `ResourceInterface`).
#[derive(Debug, Clone)]
pub struct DynamicResource {
    target: Target,
}

fn body_of(obj: &Unstructured) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(obj)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the object: {e}")))
}

impl DynamicResource {
    shared_resource_methods!();

    /// A request for the resource collection.
    pub fn request(&self, verb: Verb) -> Request {
        self.target.request(verb)
    }

    /// Reads an object, or a subresource of it when `subresource` is not empty.
    pub async fn get(
        &self,
        name: &str,
        opts: &GetOptions,
        subresource: &str,
    ) -> Result<Unstructured, Error> {
        self.object(Verb::Get, name, subresource)
            .params(opts.to_query())
            .send()
            .await
    }

    /// Lists objects. `timeout_seconds` also bounds the request. Items get the list's
    /// `apiVersion` and item kind when the server leaves both out (it does for built-in
    /// kinds), as client-go's `UnstructuredList` decoding does.
    pub async fn list(&self, opts: &ListOptions) -> Result<UnstructuredList, Error> {
        let mut req = self.request(Verb::Get).params(opts.to_query());
        if let Some(t) = timeout_of(opts) {
            req = req.timeout(t);
        }
        let mut list: UnstructuredList = req.send().await?;
        fill_item_kinds(&mut list);
        Ok(list)
    }

    /// Opens a watch of [`Unstructured`] events.
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<Unstructured>, Error> {
        let opts = opts.clone().watch(true);
        let mut req = self.request(Verb::Get).params(opts.to_query());
        if let Some(t) = timeout_of(&opts) {
            req = req.timeout(t);
        }
        req.watch().await
    }

    /// Creates an object, or POSTs it to a subresource of the object it names when
    /// `subresource` is not empty (then the object needs a name).
    pub async fn create(
        &self,
        obj: &Unstructured,
        opts: &CreateOptions,
        subresource: &str,
    ) -> Result<Unstructured, Error> {
        let req = if subresource.is_empty() {
            self.request(Verb::Post)
        } else {
            self.object(Verb::Post, obj_name(obj), subresource)
        };
        req.params(opts.to_query()).body(body_of(obj)?).send().await
    }

    /// Replaces an object (or a subresource of it).
    pub async fn update(
        &self,
        obj: &Unstructured,
        opts: &UpdateOptions,
        subresource: &str,
    ) -> Result<Unstructured, Error> {
        self.object(Verb::Put, obj_name(obj), subresource)
            .params(opts.to_query())
            .body(body_of(obj)?)
            .send()
            .await
    }

    /// Replaces an object's status.
    pub async fn update_status(
        &self,
        obj: &Unstructured,
        opts: &UpdateOptions,
    ) -> Result<Unstructured, Error> {
        self.update(obj, opts, "status").await
    }

    /// Patches an object (or a subresource of it) with `data` of `patch_type`. Strategic
    /// merge patches are refused by the server for custom resources.
    pub async fn patch(
        &self,
        name: &str,
        patch_type: PatchType,
        data: impl Into<PatchBody>,
        opts: &PatchOptions,
        subresource: &str,
    ) -> Result<Unstructured, Error> {
        self.object(Verb::Patch, name, subresource)
            .content_type(patch_type.content_type())
            .params(opts.to_query())
            .body(data.into().into_bytes())
            .send()
            .await
    }

    /// Server-side apply of `obj` (client-go's `Apply`): the name comes from the object,
    /// `opts` must name a field manager, and an object that already carries
    /// `metadata.managedFields` is refused.
    pub async fn apply(
        &self,
        obj: &Unstructured,
        opts: &PatchOptions,
        subresource: &str,
    ) -> Result<Unstructured, Error> {
        let has_managed_fields = obj
            .nested_slice(&["metadata", "managedFields"])
            .ok()
            .flatten()
            .is_some_and(|m| !m.is_empty());
        if has_managed_fields {
            return Err(Error::invalid_request(
                "cannot apply an object with managed fields already set; remove \
                 metadata.managedFields and keep only the fields this manager owns",
            ));
        }
        if opts.field_manager.as_deref().unwrap_or("").is_empty() {
            return Err(Error::invalid_request(
                "PatchOptions.fieldManager is required for apply requests",
            ));
        }
        self.patch(
            obj_name(obj),
            PatchType::Apply,
            body_of(obj)?,
            opts,
            subresource,
        )
        .await
    }

    /// Server-side apply of the status.
    pub async fn apply_status(
        &self,
        obj: &Unstructured,
        opts: &PatchOptions,
    ) -> Result<Unstructured, Error> {
        self.apply(obj, opts, "status").await
    }
}

/// Sets `apiVersion` and `kind` on items that lack both, from the list's (`ConfigMapList`
/// items are `ConfigMap`s), as client-go's `UnstructuredList` decoding does: an item that names
/// either is left as the server sent it.
fn fill_item_kinds(list: &mut UnstructuredList) {
    let kind = list.kind.strip_suffix("List").unwrap_or(&list.kind);
    for item in &mut list.items {
        if item.api_version().is_empty() && item.kind().is_empty() {
            item.set_api_version(&list.api_version);
            item.set_kind(kind);
        }
    }
}

fn obj_name(obj: &Unstructured) -> &str {
    kclient_apimachinery::Object::name(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dynamic() -> DynamicClient {
        DynamicClient::for_config(Config::new("https://127.0.0.1:6443")).unwrap()
    }

    fn url(req: Request) -> String {
        req.url().unwrap()
    }

    #[test]
    fn paths_follow_group_and_scope() {
        let d = dynamic();
        let cm = d.resource(GroupVersionResource::new("", "v1", "configmaps"));
        assert_eq!(
            url(cm.request(Verb::Get)),
            "https://127.0.0.1:6443/api/v1/configmaps"
        );
        assert_eq!(
            url(cm.namespace("ns1").object(Verb::Get, "settings", "")),
            "https://127.0.0.1:6443/api/v1/namespaces/ns1/configmaps/settings"
        );
        let deploy = d
            .resource(GroupVersionResource::new("apps", "v1", "deployments"))
            .namespace("ns1");
        assert_eq!(
            url(deploy.object(Verb::Put, "web", "scale")),
            "https://127.0.0.1:6443/apis/apps/v1/namespaces/ns1/deployments/web/scale"
        );
        let nodes = d.resource(GroupVersionResource::new("", "v1", "nodes"));
        assert_eq!(
            url(nodes.object(Verb::Get, "n1", "status")),
            "https://127.0.0.1:6443/api/v1/nodes/n1/status"
        );
    }

    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send>(_: &T) {}

    #[test]
    fn clients_and_their_futures_are_send() {
        send_sync::<DynamicClient>();
        send_sync::<DynamicResource>();
        let r = dynamic().resource(GroupVersionResource::new("", "v1", "pods"));
        let opts = ListOptions::default();
        send(&r.list(&opts));
        send(&r.watch(&opts));
    }

    #[test]
    fn list_items_get_the_list_kind() {
        let mut list: UnstructuredList = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMapList", "metadata": {},
            "items": [{"metadata": {"name": "a"}},
                      {"apiVersion": "x/v2", "kind": "Other", "metadata": {"name": "b"}},
                      {"kind": "Third", "metadata": {"name": "c"}},
                      {"apiVersion": "y/v3", "metadata": {"name": "d"}}],
        }))
        .unwrap();
        fill_item_kinds(&mut list);
        assert_eq!(list.items[0].api_version(), "v1");
        assert_eq!(list.items[0].kind(), "ConfigMap");
        assert_eq!(list.items[1].api_version(), "x/v2");
        assert_eq!(list.items[1].kind(), "Other");
        // One of the two given: the item is left as sent, as client-go leaves it.
        assert_eq!(list.items[2].api_version(), "");
        assert_eq!(list.items[2].kind(), "Third");
        assert_eq!(list.items[3].api_version(), "y/v3");
        assert_eq!(list.items[3].kind(), "");
    }

    #[test]
    fn an_empty_name_fails_before_sending() {
        let d = dynamic().resource(GroupVersionResource::new("", "v1", "configmaps"));
        let err = d.object(Verb::Get, "", "").url().unwrap_err();
        assert!(err.is_invalid_request());
        assert_eq!(err.to_string(), "resource name may not be empty");
    }

    /// Serves `body` as a 200 JSON response to every connection, on loopback.
    async fn serve(body: Vec<u8>) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let body = body.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut buf).await {
                            Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                            _ => return,
                        }
                    }
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = sock.write_all(reply.as_bytes()).await;
                    let _ = sock.write_all(&body).await;
                });
            }
        });
        url
    }

    /// The object size limit holds on the dynamic path as on the typed one: an Unstructured
    /// list item, object or watch event past `Config::max_object_size` is an error naming it.
    #[tokio::test]
    async fn objects_past_the_size_limit_are_refused_by_the_dynamic_client() {
        use futures_util::StreamExt as _;
        let big = "x".repeat(10_000);
        let cm = |name: &str, data: &str| {
            format!(r#"{{"metadata":{{"name":"{name}"}},"data":{{"k":"{data}"}}}}"#)
        };
        let client = |url: String| {
            let mut config = Config::new(url);
            config.qps = -1.0;
            config.max_object_size = 4096;
            DynamicClient::for_config(config)
                .unwrap()
                .resource(GroupVersionResource::new("", "v1", "configmaps"))
                .namespace("ns1")
        };
        let items: Vec<String> = (0..100).map(|i| cm(&format!("c{i}"), "small")).collect();
        let list = |items: &[String]| {
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMapList","metadata":{{}},"items":[{}]}}"#,
                items.join(",")
            )
            .into_bytes()
        };
        // A list longer than the limit with small items reads.
        let ok = list(&items);
        assert!(ok.len() > 4096);
        let got = client(serve(ok).await)
            .list(&ListOptions::default())
            .await
            .unwrap();
        assert_eq!(got.items.len(), 100);
        // One big item does not.
        let mut with_big = items.clone();
        with_big[7] = cm("big", &big);
        let err = client(serve(list(&with_big)).await)
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        assert!(err.is_decode(), "{err:?}");
        assert!(
            err.to_string()
                .contains("item 7 of the list's items is larger than 4096 bytes"),
            "{err}"
        );
        // Nor a big object.
        let err = client(serve(cm("big", &big).into_bytes()).await)
            .get("big", &GetOptions::default(), "")
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains(
                "the object is larger than 4096 bytes, the limit set by Config::max_object_size"
            ),
            "{err}"
        );
        // Nor a big watch event.
        let event = format!(r#"{{"type":"ADDED","object":{}}}"#, cm("big", &big));
        let mut watch = client(serve(format!("{event}\n").into_bytes()).await)
            .watch(&ListOptions::default())
            .await
            .unwrap();
        let err = watch.next().await.unwrap().unwrap_err();
        assert!(
            err.to_string().contains(
                "a watch event is larger than 4096 bytes, the limit set by Config::max_object_size"
            ),
            "{err}"
        );
        assert!(watch.next().await.is_none());
    }

    #[tokio::test]
    async fn apply_refuses_managed_fields_and_a_missing_field_manager() {
        let d = dynamic()
            .resource(GroupVersionResource::new("", "v1", "configmaps"))
            .namespace("ns1");
        let with_managed = Unstructured::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": [{"manager": "x"}]},
        }))
        .unwrap();
        let err = d
            .apply(&with_managed, &PatchOptions::apply("me"), "")
            .await
            .unwrap_err();
        assert!(err.is_invalid_request());
        assert!(err.to_string().contains("managed fields"));
        let plain = Unstructured::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
        }))
        .unwrap();
        let err = d
            .apply(&plain, &PatchOptions::default(), "")
            .await
            .unwrap_err();
        assert!(err.is_invalid_request());
        // No server listens on that address: both failed before any request.
    }
}
