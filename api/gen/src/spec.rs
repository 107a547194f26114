//! Loading the checked-in OpenAPI v3 documents (`api/openapi/*.json`) into one map of schemas
//! plus the resource table (plural and scope of every kind, read from the paths), and
//! importing (trimming) documents from a Kubernetes source tree or a live server.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::{Map, Value};

/// The resource table key: (group, version, kind).
pub(crate) type Gvk = (String, String, String);

/// How a kind is served: its plural resource name, whether it is namespaced, whether the
/// server can list and watch it (what an informer needs), and the subresources it can patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceInfo {
    pub(crate) plural: String,
    pub(crate) namespaced: bool,
    pub(crate) watchable: bool,
    /// The subresources served with a `patch` action (`status`, `scale`, `resize`, ...):
    /// those a field manager can apply to, so those whose managed fields can be extracted.
    pub(crate) patchable_subresources: BTreeSet<String>,
}

/// Every schema of every document, and the resource table.
pub(crate) struct Spec {
    pub(crate) schemas: BTreeMap<String, Value>,
    pub(crate) resources: BTreeMap<Gvk, ResourceInfo>,
    /// The document file names that were read.
    pub(crate) documents: Vec<String>,
}

/// Reads every `*.json` in `dir`.
pub(crate) fn load(dir: &Path) -> Result<Spec, String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    let mut spec = Spec {
        schemas: BTreeMap::new(),
        resources: BTreeMap::new(),
        documents: names.clone(),
    };
    let mut watchable = BTreeSet::new();
    let mut patchable = BTreeSet::new();
    for name in &names {
        let path = dir.join(name);
        let text =
            fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))?;
        if let Some(schemas) = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
        {
            for (k, v) in schemas {
                spec.schemas.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
            for (p, item) in paths {
                collect_resource(&mut spec.resources, p, item)?;
                collect_watchable(&mut watchable, item);
                collect_patchable_subresource(&mut patchable, p, item);
            }
        }
    }
    for (gvk, info) in &mut spec.resources {
        info.watchable = watchable.contains(&(gvk.clone(), "list"))
            && watchable.contains(&(gvk.clone(), "watch"));
        info.patchable_subresources = patchable
            .iter()
            .filter(|(g, v, plural, _)| (g, v, plural) == (&gvk.0, &gvk.1, &info.plural))
            .map(|(_, _, _, sub)| sub.clone())
            .collect();
    }
    Ok(spec)
}

/// Records the plural and scope of the kind served at path `p`, if `p` is a collection or
/// object path (not a subresource, not a deprecated watch path).
fn collect_resource(
    resources: &mut BTreeMap<Gvk, ResourceInfo>,
    p: &str,
    item: &Value,
) -> Result<(), String> {
    if p.contains("/watch/") {
        return Ok(());
    }
    let mut segments: Vec<&str> = p.trim_matches('/').split('/').collect();
    if segments.last() == Some(&"{name}") {
        segments.pop();
    }
    let Some(plural) = segments.last().copied() else {
        return Ok(());
    };
    if plural.starts_with('{') || segments.len() < 2 {
        return Ok(());
    }
    let parent = segments[segments.len() - 2];
    if parent == "{name}" {
        return Ok(()); // a subresource
    }
    let namespaced = parent == "{namespace}";
    let Some(ops) = item.as_object() else {
        return Ok(());
    };
    for op in ops.values() {
        let Some(gvk) = op.get("x-kubernetes-group-version-kind") else {
            continue;
        };
        let get = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let key = (get("group"), get("version"), get("kind"));
        let entry = resources.entry(key.clone()).or_insert(ResourceInfo {
            plural: plural.to_string(),
            namespaced,
            watchable: false,
            patchable_subresources: BTreeSet::new(),
        });
        if entry.plural != plural {
            return Err(format!(
                "kind {key:?} is served under two plurals: {} and {plural}",
                entry.plural
            ));
        }
        entry.namespaced |= namespaced;
    }
    Ok(())
}

/// Records (group, version, plural, subresource) when `p` is a subresource path
/// (`.../{plural}/{name}/{subresource}`) with a `patch` action. The group and version are
/// the path's (`/api/v1`, `/apis/{group}/{version}`): a subresource's operations carry the
/// kind they send (`autoscaling/v1 Scale` for `deployments/scale`), not the parent's.
fn collect_patchable_subresource(
    patchable: &mut BTreeSet<(String, String, String, String)>,
    p: &str,
    item: &Value,
) {
    if p.contains("/watch/") {
        return;
    }
    let segments: Vec<&str> = p.trim_matches('/').split('/').collect();
    let (group, version) = match segments.as_slice() {
        ["api", version, ..] => ("", *version),
        ["apis", group, version, ..] => (*group, *version),
        _ => return,
    };
    let [.., plural, "{name}", sub] = segments.as_slice() else {
        return;
    };
    if sub.starts_with('{') || plural.starts_with('{') {
        return;
    }
    let patch = item.as_object().is_some_and(|ops| {
        ops.values()
            .any(|op| op.get("x-kubernetes-action").and_then(Value::as_str) == Some("patch"))
    });
    if patch {
        patchable.insert((
            group.to_string(),
            version.to_string(),
            (*plural).to_string(),
            (*sub).to_string(),
        ));
    }
}

/// Records the kinds that a path's operations can list and watch: those with both a `list`
/// and a watch (`watch` or `watchlist`) action somewhere in the documents.
fn collect_watchable(watchable: &mut BTreeSet<(Gvk, &'static str)>, item: &Value) {
    let Some(ops) = item.as_object() else {
        return;
    };
    for op in ops.values() {
        let (Some(gvk), Some(action)) = (
            op.get("x-kubernetes-group-version-kind"),
            op.get("x-kubernetes-action").and_then(Value::as_str),
        ) else {
            continue;
        };
        let verb = match action {
            "list" => "list",
            "watch" | "watchlist" => "watch",
            _ => continue,
        };
        let get = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        watchable.insert(((get("group"), get("version"), get("kind")), verb));
    }
}

/// Copies the documents of `src_dir` into `dest_dir`, keeping only what the generator reads: the schemas, and per path operation the action and
/// group-version-kind.
pub(crate) fn import(src_dir: &Path, dest_dir: &Path) -> Result<usize, String> {
    fs::create_dir_all(dest_dir).map_err(|e| format!("creating {}: {e}", dest_dir.display()))?;
    let mut count = 0;
    let mut entries: Vec<_> = fs::read_dir(src_dir)
        .map_err(|e| format!("reading {}: {e}", src_dir.display()))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let text = fs::read_to_string(entry.path()).map_err(|e| format!("reading {name}: {e}"))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("parsing {name}: {e}"))?;
        let mut out = Map::new();
        if let Some(info) = doc.get("info") {
            out.insert("info".into(), info.clone());
        }
        let mut paths = Map::new();
        if let Some(src_paths) = doc.get("paths").and_then(Value::as_object) {
            for (p, item) in src_paths {
                let mut ops = Map::new();
                for (method, op) in item.as_object().into_iter().flatten() {
                    let mut kept = Map::new();
                    for key in ["x-kubernetes-action", "x-kubernetes-group-version-kind"] {
                        if let Some(v) = op.get(key) {
                            kept.insert(key.into(), v.clone());
                        }
                    }
                    if !kept.is_empty() {
                        ops.insert(method.clone(), Value::Object(kept));
                    }
                }
                if !ops.is_empty() {
                    paths.insert(p.clone(), Value::Object(ops));
                }
            }
        }
        out.insert("paths".into(), Value::Object(paths));
        if let Some(schemas) = doc.pointer("/components/schemas") {
            let mut components = Map::new();
            components.insert("schemas".into(), schemas.clone());
            out.insert("components".into(), Value::Object(components));
        }
        let text = serde_json::to_string(&Value::Object(out))
            .map_err(|e| format!("encoding {name}: {e}"))?;
        fs::write(dest_dir.join(&name), text + "\n").map_err(|e| format!("writing {name}: {e}"))?;
        count += 1;
    }
    Ok(count)
}
