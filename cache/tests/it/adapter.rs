//! A `ListerWatcher` for ConfigMaps written on `kclient-rest`, and a minimal ConfigMap type:
//! what the typed clients do for real, reduced to what these tests need.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use kclient_apimachinery::{
    Error, ListOptions, Object, ObjectList, OwnerRef, ResourceVersionMatch, StringMap,
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
}

/// Lists and watches the ConfigMaps of one namespace.
pub(crate) struct ConfigMapListerWatcher {
    pub(crate) client: Client,
    pub(crate) namespace: String,
    /// LIST requests made, to tell whether the streaming initial list was used (the exact-
    /// version lists of the data consistency check are not counted).
    pub(crate) lists: Arc<AtomicUsize>,
    /// While positive, watches are opened at resourceVersion "1" (older than the watch cache's
    /// window: testenv starts etcd past it) and the count goes down: the server answers 410.
    pub(crate) stale_watches: Arc<AtomicUsize>,
}

impl ConfigMapListerWatcher {
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
        if options.resource_version_match != Some(ResourceVersionMatch::Exact) {
            self.lists.fetch_add(1, Ordering::SeqCst);
        }
        let request = self.request(&options);
        async move { request.send::<ObjectList<ConfigMap>>().await }.boxed()
    }

    fn watch(
        &self,
        mut options: ListOptions,
    ) -> BoxFuture<'_, Result<WatchStream<ConfigMap>, Error>> {
        let stale = self
            .stale_watches
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if stale.is_ok() {
            options.resource_version = Some("1".to_owned());
        }
        let request = self.request(&options);
        async move {
            let stream = request.watch::<ConfigMap>().await?;
            Ok(stream.boxed())
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
