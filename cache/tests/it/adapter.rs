//! A `ListerWatcher` for ConfigMaps written on `kclient-rest`, and a minimal ConfigMap type:
//! what the typed clients do for real, reduced to what these tests need.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::meta::{IStr, StrMap};
use kclient_apimachinery::protobuf::{
    Message, ProtoError, ProtobufCodec, Reader, WireType, Writer, merge, merge_map, put, put_map,
};
use kclient_apimachinery::{
    Error, ListOptions, Object, ObjectList, OwnerRef, Resource, ResourceVersionMatch, StringMap,
};
use kclient_cache::{ListerWatcher, WatchStream};
use kclient_rest::Client;
use serde::{Deserialize, Serialize};

/// The metadata fields the tests use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Meta {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) resource_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) uid: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) annotations: BTreeMap<String, String>,
}

/// A core/v1 ConfigMap, reduced to metadata and data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigMap {
    #[serde(default)]
    pub(crate) metadata: Meta,
    #[serde(default)]
    pub(crate) data: BTreeMap<String, String>,
}

impl ConfigMap {
    pub(crate) fn new(name: &str, value: &str) -> Self {
        let mut cm = ConfigMap::default();
        cm.metadata.name = name.to_owned();
        cm.data.insert("value".to_owned(), value.to_owned());
        cm
    }
}

impl Object for ConfigMap {
    fn name(&self) -> &str {
        &self.metadata.name
    }
    fn namespace(&self) -> &str {
        &self.metadata.namespace
    }
    fn resource_version(&self) -> &str {
        &self.metadata.resource_version
    }
    fn uid(&self) -> &str {
        &self.metadata.uid
    }
    fn generation(&self) -> i64 {
        0
    }
    fn labels(&self) -> &dyn StringMap {
        &self.metadata.labels
    }
    fn annotations(&self) -> &dyn StringMap {
        &self.metadata.annotations
    }
    fn finalizers(&self) -> Vec<&str> {
        Vec::new()
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        Vec::new()
    }
    fn is_being_deleted(&self) -> bool {
        false
    }
    fn set_name(&mut self, name: &str) {
        self.metadata.name = name.to_owned();
    }
    fn set_namespace(&mut self, namespace: &str) {
        self.metadata.namespace = namespace.to_owned();
    }
    fn set_resource_version(&mut self, resource_version: &str) {
        self.metadata.resource_version = resource_version.to_owned();
    }
    /// This stand-in carries no finalizers (`finalizers()` is always empty).
    fn set_finalizers(&mut self, _: Vec<String>) {}
    fn clear_managed_fields(&mut self) {}
}

/// A ConfigMap's protobuf form (`metadata` = 1, `data` = 2; other fields skipped), so that
/// the same tests run over protobuf.
impl Message for ConfigMap {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => {
                let mut meta = ObjectMeta::default();
                merge(&mut meta, field, wire, r)?;
                let map = |m: Option<StrMap>| {
                    m.map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect()
                    })
                    .unwrap_or_default()
                };
                self.metadata = Meta {
                    name: meta.name.map(|v| v.to_string()).unwrap_or_default(),
                    namespace: meta.namespace.map(|v| v.to_string()).unwrap_or_default(),
                    resource_version: meta
                        .resource_version
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                    uid: meta.uid.map(|v| v.to_string()).unwrap_or_default(),
                    labels: map(meta.labels),
                    annotations: map(meta.annotations),
                };
                Ok(())
            }
            2 => {
                let mut data = StrMap::default();
                merge_map(&mut data, field, wire, r)?;
                self.data
                    .extend(data.iter().map(|(k, v)| (k.to_string(), v.to_string())));
                Ok(())
            }
            _ => r.skip(wire),
        }
    }

    fn encode_fields(&self, w: &mut Writer) {
        let strs = |m: &BTreeMap<String, String>| {
            StrMap::from(
                m.iter()
                    .map(|(k, v)| (IStr::from(k.as_str()), IStr::from(v.as_str())))
                    .collect::<Vec<_>>(),
            )
        };
        fn some<'a, T: From<&'a str>>(s: &'a str) -> Option<T> {
            (!s.is_empty()).then(|| s.into())
        }
        let meta = ObjectMeta {
            name: some(&self.metadata.name),
            namespace: some(&self.metadata.namespace),
            resource_version: some(&self.metadata.resource_version),
            uid: some(&self.metadata.uid),
            labels: Some(strs(&self.metadata.labels)),
            annotations: Some(strs(&self.metadata.annotations)),
            ..ObjectMeta::default()
        };
        put(w, 1, &meta);
        put_map(w, 2, &strs(&self.data));
    }
}

impl Resource for ConfigMap {
    const GROUP: &'static str = "";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "ConfigMap";
    const PLURAL: &'static str = "configmaps";
    type Scope = kclient_apimachinery::NamespaceResourceScope;
}

/// The wire format a lister-watcher asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Json,
    /// Protobuf first (the server answers ConfigMaps in protobuf).
    Protobuf,
}

/// Lists and watches the ConfigMaps of one namespace.
pub(crate) struct ConfigMapListerWatcher {
    pub(crate) client: Client,
    pub(crate) namespace: String,
    pub(crate) wire: Wire,
    /// LIST requests made, to tell whether the streaming initial list was used (the exact-
    /// version lists of the data consistency check are not counted).
    pub(crate) lists: Arc<AtomicUsize>,
    /// The relists a test forces (none by default).
    pub(crate) forced_relists: ForcedRelists,
}

/// Relists forced through the server: until the lister-watcher has completed one full LIST
/// more than the count, its watches are opened at resourceVersion "1", older than the watch
/// cache's window (testenv starts etcd past it), which the server answers 410, and the
/// reflector relists. Counting completed lists rather than watch attempts keeps the 410
/// coming when an attempt, or a list, fails for another reason first (a 429 under load).
/// Only for list-and-watch informers: a watch-list sync makes no LIST, so every watch would
/// get the 410.
#[derive(Default)]
pub(crate) struct ForcedRelists {
    count: usize,
    completed_lists: AtomicUsize,
}

impl ForcedRelists {
    /// Forces `count` relists.
    pub(crate) fn new(count: usize) -> Self {
        ForcedRelists {
            count,
            completed_lists: AtomicUsize::new(0),
        }
    }

    /// Whether the next watch is to get a 410.
    fn stale_watch_due(&self) -> bool {
        self.count > 0 && self.completed_lists.load(Ordering::SeqCst) <= self.count
    }
}

impl ConfigMapListerWatcher {
    /// A JSON source of `namespace`'s ConfigMaps that forces `forced_relists` relists, with the
    /// counter of its LISTs.
    pub(crate) fn json(
        client: Client,
        namespace: &str,
        forced_relists: usize,
    ) -> (Self, Arc<AtomicUsize>) {
        let lists = Arc::new(AtomicUsize::new(0));
        let source = ConfigMapListerWatcher {
            client,
            namespace: namespace.to_owned(),
            wire: Wire::Json,
            lists: Arc::clone(&lists),
            forced_relists: ForcedRelists::new(forced_relists),
        };
        (source, lists)
    }

    fn request(&self, options: &ListOptions) -> kclient_rest::Request {
        self.client
            .get()
            .group_version("", "v1")
            .namespace(&self.namespace)
            .resource("configmaps")
            .params(options.to_query())
    }
}

impl ListerWatcher<ConfigMap> for ConfigMapListerWatcher {
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<ConfigMap>, Error>> {
        let full = options.resource_version_match != Some(ResourceVersionMatch::Exact);
        if full {
            self.lists.fetch_add(1, Ordering::SeqCst);
        }
        let request = self.request(&options);
        let wire = self.wire;
        async move {
            let list = match wire {
                Wire::Json => request.send::<ObjectList<ConfigMap>>().await,
                Wire::Protobuf => {
                    let codec = ProtobufCodec::<ConfigMap>::of();
                    let decoded = AtomicUsize::new(0);
                    let list = request
                        .send_protobuf(|body| {
                            decoded.fetch_add(1, Ordering::SeqCst);
                            codec.decode_list(body)
                        })
                        .await?;
                    assert_eq!(
                        decoded.into_inner(),
                        1,
                        "the server did not answer in protobuf"
                    );
                    Ok(list)
                }
            };
            if full && list.is_ok() {
                self.forced_relists
                    .completed_lists
                    .fetch_add(1, Ordering::SeqCst);
            }
            list
        }
        .boxed()
    }

    fn watch(
        &self,
        mut options: ListOptions,
    ) -> BoxFuture<'_, Result<WatchStream<ConfigMap>, Error>> {
        if self.forced_relists.stale_watch_due() {
            options.resource_version = Some("1".to_owned());
        }
        let request = self.request(&options);
        let wire = self.wire;
        async move {
            let stream = match wire {
                Wire::Json => request.watch::<ConfigMap>().await?,
                Wire::Protobuf => {
                    let stream = request.watch_protobuf(ProtobufCodec::of()).await?;
                    assert!(stream.is_protobuf(), "the server did not watch in protobuf");
                    stream
                }
            };
            // As informers' `RestListWatch` does: objects of another kind are skipped.
            Ok(stream
                .expect_kind(ConfigMap::API_VERSION, ConfigMap::KIND)
                .boxed())
        }
        .boxed()
    }
}

/// CRUD helpers for the writer side of the tests.
pub(crate) struct ConfigMaps {
    pub(crate) client: Client,
    pub(crate) namespace: String,
}

impl ConfigMaps {
    fn base(&self, request: kclient_rest::Request) -> kclient_rest::Request {
        request
            .group_version("", "v1")
            .namespace(&self.namespace)
            .resource("configmaps")
    }

    pub(crate) async fn create(&self, cm: &ConfigMap) -> Result<ConfigMap, Error> {
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": cm.metadata,
            "data": cm.data,
        });
        self.base(self.client.post()).json(&body).send().await
    }

    pub(crate) async fn update(&self, cm: &ConfigMap) -> Result<ConfigMap, Error> {
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": cm.metadata,
            "data": cm.data,
        });
        self.base(self.client.put())
            .name(&cm.metadata.name)
            .json(&body)
            .send()
            .await
    }

    pub(crate) async fn delete(&self, name: &str) -> Result<(), Error> {
        self.base(self.client.delete())
            .name(name)
            .send::<serde_json::Value>()
            .await
            .map(|_| ())
    }

    pub(crate) async fn list(&self) -> Result<ObjectList<ConfigMap>, Error> {
        self.base(self.client.get()).send().await
    }

    /// Waits, at most 30 s, until a LIST at resourceVersion "0" (served from the watch cache,
    /// which may trail the writes just made, as a reflector's first list is) holds `count`
    /// ConfigMaps: a test that counts what the first list brings starts only then.
    pub(crate) async fn wait_for_watch_cache(&self, count: usize) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let list: ObjectList<ConfigMap> = self
                .base(self.client.get())
                .param("resourceVersion", "0")
                .send()
                .await
                .expect("list from the watch cache");
            if list.items.len() == count {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the watch cache held {} of {count} ConfigMaps after 30 s",
                list.items.len()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// What a cache or a handler holds, by name: each ConfigMap's resourceVersion.
pub(crate) type View = BTreeMap<String, String>;

/// The view of `objects`.
pub(crate) fn view_of(objects: impl IntoIterator<Item = Arc<ConfigMap>>) -> View {
    objects
        .into_iter()
        .map(|cm| {
            (
                cm.metadata.name.clone(),
                cm.metadata.resource_version.clone(),
            )
        })
        .collect()
}

/// Adds a handler to `informer` that applies every add, update and delete to a view, so a test
/// can check that handlers saw everything the cache holds.
pub(crate) fn mirror_handler(
    informer: &kclient_cache::SharedIndexInformer<ConfigMap>,
) -> (
    Arc<parking_lot::Mutex<View>>,
    kclient_cache::ResourceEventHandlerRegistration,
) {
    use kclient_cache::{DeletedObject, ResourceEventHandlerFuncs};
    let mirror: Arc<parking_lot::Mutex<View>> = Arc::default();
    let (m_add, m_update, m_delete) = (mirror.clone(), mirror.clone(), mirror.clone());
    let registration = informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |cm: &Arc<ConfigMap>, _| {
                    m_add.lock().insert(
                        cm.metadata.name.clone(),
                        cm.metadata.resource_version.clone(),
                    );
                })
                .update_func(move |_, cm: &Arc<ConfigMap>| {
                    m_update.lock().insert(
                        cm.metadata.name.clone(),
                        cm.metadata.resource_version.clone(),
                    );
                })
                .delete_func(move |deleted: DeletedObject<ConfigMap>| {
                    let key = deleted.key();
                    let name = key.rsplit('/').next().unwrap_or_default().to_owned();
                    m_delete.lock().remove(&name);
                }),
        )
        .expect("add the mirroring event handler");
    (mirror, registration)
}
