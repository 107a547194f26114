//! [`OpenAPIV3Client`]: the server's OpenAPI v3 documents (client-go's `openapi.Client`
//! with its `cached` wrapper, and `openapi3.Root`).
//!
//! `/openapi/v3` is an index: for every group version (`api/v1`, `apis/apps/v1`) the URL of
//! its document, carrying a content hash (`/openapi/v3/apis/apps/v1?hash=…`). Documents are
//! fetched on first use and kept in memory by that URL, so a changed document (a new hash
//! after a CRD changed) is fetched again once the index is refreshed; the index itself is
//! kept until [`OpenAPIV3Client::invalidate`], as the discovery caches do. With
//! [`OpenAPIV3Client::with_disk_cache`] the documents are also kept in files named after their
//! path and hash, which never go stale (a changed document has a new hash), so a later process
//! reads them instead of the server, as kubectl's HTTP cache under `~/.kube/cache` does; a
//! damaged file is fetched again and replaced. A resource's
//! schema is the entry of `components.schemas` whose `x-kubernetes-group-version-kind`
//! names its kind ([`ResourceSchema`]); [`ResourceSchema::explain`] reads a field's type and
//! description from it as `kubectl explain` does.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kclient_apimachinery::{GroupVersion, GroupVersionKind};
use kclient_rest::Client;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;

/// One entry of the `/openapi/v3` index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct OpenAPIV3Path {
    /// Where the document is served, with its content hash
    /// (`/openapi/v3/apis/apps/v1?hash=…`).
    #[serde(default, rename = "serverRelativeURL")]
    pub server_relative_url: String,
}

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    paths: BTreeMap<String, OpenAPIV3Path>,
}

#[derive(Default)]
struct Cache {
    index: Option<Arc<BTreeMap<String, OpenAPIV3Path>>>,
    /// Documents by their hashed URL.
    documents: HashMap<String, Arc<Value>>,
}

/// Reads and caches the server's OpenAPI v3 documents. Cheap to share behind an `Arc`; the
/// cache's lock is never held across a request.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_apimachinery::GroupVersionKind;
/// use kclient_discovery::OpenAPIV3Client;
///
/// let openapi = OpenAPIV3Client::new(kclient_rest::Client::new(kclient_rest::Config::infer()?)?);
/// let deployment = openapi
///     .resource_schema(&GroupVersionKind::new("apps", "v1", "Deployment"))
///     .await?;
/// let replicas = deployment.explain(&["spec", "replicas"])?;
/// println!("{} <{}>: {}", replicas.name, replicas.type_name, replicas.description);
/// # Ok(()) }
/// ```
pub struct OpenAPIV3Client {
    client: Client,
    cache: Mutex<Cache>,
    /// The folder of the documents' files, when they are kept on disk.
    disk: Option<PathBuf>,
}

impl std::fmt::Debug for OpenAPIV3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cache = self.cache.lock();
        f.debug_struct("OpenAPIV3Client")
            .field("index_cached", &cache.index.is_some())
            .field("documents_cached", &cache.documents.len())
            .field("disk_cache", &self.disk)
            .finish_non_exhaustive()
    }
}

/// The index key of a group version's document: `api/v1` or `apis/{group}/{version}`.
pub fn openapi_v3_path(gv: &GroupVersion) -> String {
    if gv.group.is_empty() {
        format!("api/{}", gv.version)
    } else {
        format!("apis/{}/{}", gv.group, gv.version)
    }
}

impl OpenAPIV3Client {
    /// A client over `client` (its rate limiter and connections).
    pub fn new(client: Client) -> Self {
        OpenAPIV3Client {
            client,
            cache: Mutex::new(Cache::default()),
            disk: None,
        }
    }

    /// A client that also keeps the documents in files in `dir` (created when missing), for
    /// later processes: kubectl's `~/.kube/cache/...` is a natural place
    /// ([`default_discovery_cache_dir`](crate::default_discovery_cache_dir) gives its
    /// discovery folder for a host). The index is always read from the server once per
    /// client, so a changed document is found by its new hash. Files are written atomically;
    /// a failure to write one is logged and the document is still returned.
    pub fn with_disk_cache(client: Client, dir: impl Into<PathBuf>) -> Self {
        OpenAPIV3Client {
            disk: Some(dir.into()),
            ..OpenAPIV3Client::new(client)
        }
    }

    /// The file holding the document of index entry `path` served at `url`, when documents
    /// are kept on disk and the URL carries a plain content hash.
    fn disk_file(&self, path: &str, url: &str) -> Option<PathBuf> {
        let dir = self.disk.as_deref()?;
        let hash = url
            .split_once('?')?
            .1
            .split('&')
            .find_map(|p| p.strip_prefix("hash="))?;
        if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let name: String = path
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(dir.join(format!("{name}.{hash}.json")))
    }

    /// A document read from its file, or `None` (missing or damaged: fetched again).
    fn read_disk(file: &Path) -> Option<Value> {
        let bytes = std::fs::read(file).ok()?;
        match kclient_apimachinery::decode_json(&bytes) {
            Ok(doc) => Some(doc),
            Err(err) => {
                tracing::debug!(file = %file.display(), error = %err, "ignoring a damaged OpenAPI cache file");
                None
            }
        }
    }

    /// The index (`/openapi/v3`): every document's path and URL (client-go's `Paths`).
    pub async fn paths(&self) -> Result<Arc<BTreeMap<String, OpenAPIV3Path>>, Error> {
        if let Some(index) = self.cache.lock().index.clone() {
            return Ok(index);
        }
        let body = self.client.get_raw("/openapi/v3").await?;
        let index: Index = kclient_apimachinery::decode_json(&body).map_err(|e| {
            Error::from(kclient_apimachinery::Error::decode(
                "/openapi/v3 index".to_owned(),
                e,
            ))
        })?;
        let index = Arc::new(index.paths);
        self.cache.lock().index = Some(index.clone());
        Ok(index)
    }

    /// The document at `path` of the index (`api/v1`, `apis/apps/v1`), from the cache when
    /// it holds the same hashed URL.
    pub async fn document(&self, path: &str) -> Result<Arc<Value>, Error> {
        let index = self.paths().await?;
        let Some(entry) = index.get(path) else {
            return Err(Error::invalid(format!(
                "the server's OpenAPI v3 index (/openapi/v3) has no document {path:?}; \
                 check the group version is served (`kubectl api-versions`)"
            )));
        };
        let url = entry.server_relative_url.clone();
        if !url.starts_with('/') {
            return Err(Error::invalid(format!(
                "the server's OpenAPI v3 index gives document {path:?} the URL {url:?}, \
                 which is not a path on the server"
            )));
        }
        if let Some(doc) = self.cache.lock().documents.get(&url).cloned() {
            return Ok(doc);
        }
        let file = self.disk_file(path, &url);
        if let Some(doc) = file.as_deref().and_then(Self::read_disk) {
            let doc = Arc::new(doc);
            self.cache.lock().documents.insert(url, doc.clone());
            return Ok(doc);
        }
        // The hash travels as a query parameter, not as part of the path.
        let (url_path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
        let mut request = self
            .client
            .get()
            .abs_path(url_path)
            .header("Accept", "application/json");
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            request = request.param(key, value);
        }
        let body = request.bytes().await?;
        let doc: Value = kclient_apimachinery::decode_json(&body).map_err(|e| {
            Error::from(kclient_apimachinery::Error::decode(
                format!("OpenAPI v3 document {path}"),
                e,
            ))
        })?;
        if let Some(file) = &file
            && let Err(err) = crate::disk_cache::write_cache_file(file, &body)
        {
            tracing::debug!(error = %err, "failed to write the OpenAPI cache");
        }
        let doc = Arc::new(doc);
        self.cache.lock().documents.insert(url, doc.clone());
        Ok(doc)
    }

    /// The document of one group version (client-go's `openapi3.Root.GVSpec`).
    pub async fn group_version_document(&self, gv: &GroupVersion) -> Result<Arc<Value>, Error> {
        self.document(&openapi_v3_path(gv)).await
    }

    /// The schema of `gvk`'s objects, found in its group version's document by its
    /// `x-kubernetes-group-version-kind`.
    pub async fn resource_schema(&self, gvk: &GroupVersionKind) -> Result<ResourceSchema, Error> {
        let gv = GroupVersion::new(&gvk.group, &gvk.version);
        let document = self.group_version_document(&gv).await?;
        ResourceSchema::find(document, gvk)
    }

    /// Drops the cached index and documents; the next call asks the server again.
    pub fn invalidate(&self) {
        *self.cache.lock() = Cache::default();
    }
}

/// The OpenAPI v3 schema of one kind, inside its group version's document (which resolves
/// its `$ref`s).
#[derive(Debug, Clone)]
pub struct ResourceSchema {
    gvk: GroupVersionKind,
    name: String,
    document: Arc<Value>,
}

impl ResourceSchema {
    /// Finds `gvk`'s schema in `document`: the first entry of `components.schemas`, in name
    /// order, listing `gvk` in its `x-kubernetes-group-version-kind`, as kubectl does.
    pub fn find(document: Arc<Value>, gvk: &GroupVersionKind) -> Result<ResourceSchema, Error> {
        let schemas = document["components"]["schemas"]
            .as_object()
            .map(|m| m.iter().collect::<BTreeMap<_, _>>())
            .unwrap_or_default();
        let name = schemas.into_iter().find_map(|(name, schema)| {
            let kinds = schema["x-kubernetes-group-version-kind"].as_array()?;
            kinds
                .iter()
                .any(|k| {
                    k["group"].as_str().unwrap_or("") == gvk.group
                        && k["version"].as_str().unwrap_or("") == gvk.version
                        && k["kind"].as_str().unwrap_or("") == gvk.kind
                })
                .then(|| name.clone())
        });
        match name {
            Some(name) => Ok(ResourceSchema {
                gvk: gvk.clone(),
                name,
                document,
            }),
            None => Err(Error::invalid(format!(
                "GVK {gvk} not found in the OpenAPI v3 schema of its group version"
            ))),
        }
    }

    /// The kind.
    pub fn group_version_kind(&self) -> &GroupVersionKind {
        &self.gvk
    }

    /// The schema's name in `components.schemas` (`io.k8s.api.apps.v1.Deployment`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema itself.
    pub fn schema(&self) -> &Value {
        &self.document["components"]["schemas"][&self.name]
    }

    /// The whole group version document, for resolving `$ref`s.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The field at `path` (`["spec", "replicas"]`; empty for the kind itself): its type,
    /// description and subfields, as `kubectl explain` shows them.
    pub fn explain(&self, path: &[&str]) -> Result<crate::explain::ExplainedField, Error> {
        self.explain_at(path, false)
    }

    /// [`explain`](ResourceSchema::explain) with every subfield's own subfields under it, down
    /// to the leaves, as `kubectl explain --recursive` lists them (see
    /// [`FieldSummary::fields`](crate::FieldSummary::fields)).
    pub fn explain_recursive(
        &self,
        path: &[&str],
    ) -> Result<crate::explain::ExplainedField, Error> {
        self.explain_at(path, true)
    }

    fn explain_at(
        &self,
        path: &[&str],
        recursive: bool,
    ) -> Result<crate::explain::ExplainedField, Error> {
        crate::explain::explain(&self.document, self.schema(), path, recursive).ok_or_else(|| {
            Error::invalid(format!(
                "field \"{}\" does not exist in {}",
                path.last().copied().unwrap_or(""),
                self.gvk.kind
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_follow_the_index_layout() {
        assert_eq!(openapi_v3_path(&GroupVersion::new("", "v1")), "api/v1");
        assert_eq!(
            openapi_v3_path(&GroupVersion::new("apps", "v1")),
            "apis/apps/v1"
        );
    }

    #[test]
    fn finds_a_kind_by_its_group_version_kind() {
        let doc = Arc::new(json!({"components": {"schemas": {
            "a.List": {"type": "object"},
            "io.k8s.api.apps.v1.Deployment": {"type": "object", "description": "D",
                "x-kubernetes-group-version-kind": [
                    {"group": "apps", "kind": "Deployment", "version": "v1"}]},
        }}}));
        let found = ResourceSchema::find(
            doc.clone(),
            &GroupVersionKind::new("apps", "v1", "Deployment"),
        )
        .unwrap();
        assert_eq!(found.name(), "io.k8s.api.apps.v1.Deployment");
        assert_eq!(found.schema()["description"], "D");
        let missing = ResourceSchema::find(doc, &GroupVersionKind::new("apps", "v1", "Nope"));
        assert!(missing.unwrap_err().to_string().contains("Nope"));
    }
}
