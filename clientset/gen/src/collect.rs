//! Reading the OpenAPI v3 documents of every served group version into the table of
//! resources the clientset exposes: kind, plural, scope, Rust type, verbs and subresources.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

/// One top-level resource of a group version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resource {
    pub(crate) plural: String,
    pub(crate) kind: String,
    pub(crate) namespaced: bool,
    /// The Rust path of the object type below `kclient_api`, such as `apps::v1::Deployment`.
    pub(crate) rust_type: String,
    /// Verbs in client-go's vocabulary: get, list, watch, create, update, patch, delete,
    /// deletecollection.
    pub(crate) verbs: BTreeSet<String>,
    /// Subresource names (`status`, `scale`, `log`, ...).
    pub(crate) subresources: BTreeSet<String>,
    /// What each subresource serves: its actions (`get`, `put`, `post`, `patch`, ...), each
    /// with the kind of its body, as `group/version/Kind` (`/v1/Pod`,
    /// `authentication.k8s.io/v1/TokenRequest`).
    pub(crate) subresource_actions: BTreeMap<String, BTreeMap<String, String>>,
}

/// One group version and its resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupVersion {
    pub(crate) group: String,
    pub(crate) version: String,
    /// The Go package name of the group (`core`, `apps`, `rbac`, `flowcontrol`): the module
    /// of its types in `kclient-api`.
    pub(crate) package: String,
    pub(crate) resources: BTreeMap<String, Resource>,
}

impl GroupVersion {
    /// The cargo feature of its clients, the same as kclient-api's for its types: the group
    /// package for a GA version, `<package>-<version>` for an alpha or beta one.
    pub(crate) fn feature(&self) -> String {
        feature(&self.package, &self.version)
    }
}

/// The feature of a group package's version (see [`GroupVersion::feature`]).
pub(crate) fn feature(package: &str, version: &str) -> String {
    if is_unstable(version) {
        format!("{package}-{version}")
    } else {
        package.to_string()
    }
}

/// Whether a version is alpha or beta (`v1alpha3`, `v1beta2`).
pub(crate) fn is_unstable(version: &str) -> bool {
    version.contains("alpha") || version.contains("beta")
}

/// Reads every group version document of `dir` (`api__v1_openapi.json`,
/// `apis__{group}__{version}_openapi.json`), alpha and beta versions included (their clients
/// sit behind opt-in features, [`GroupVersion::feature`]).
pub(crate) fn load(dir: &Path) -> Result<Vec<GroupVersion>, String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_openapi.json") && n.contains("__"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let text =
            fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))?;
        let stem = name.trim_end_matches("_openapi.json");
        let parts: Vec<&str> = stem.split("__").collect();
        let (group, version) = match parts.as_slice() {
            ["api", v] => ("", *v),
            ["apis", g, v] => (*g, *v),
            // Non-API documents (`.well-known__openid-configuration`, `openid__v1__jwks`).
            _ => continue,
        };
        let gv = collect(&doc, group, version).map_err(|e| format!("{name}: {e}"))?;
        if !gv.resources.is_empty() {
            out.push(gv);
        }
    }
    // The core group first, then by group name, then by version.
    out.sort_by(|a, b| {
        (!a.group.is_empty(), &a.group, &a.version).cmp(&(
            !b.group.is_empty(),
            &b.group,
            &b.version,
        ))
    });
    Ok(out)
}

fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}/")
    } else {
        format!("/apis/{group}/{version}/")
    }
}

/// Where a path points, relative to its group version.
enum Target<'a> {
    Collection { plural: &'a str, namespaced: bool },
    Object { plural: &'a str, namespaced: bool },
    Subresource { plural: &'a str, name: &'a str },
    Watch { plural: &'a str },
}

fn classify(rest: &str) -> Option<Target<'_>> {
    let segs: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    if segs.first() == Some(&"watch") {
        let plural = match segs.as_slice() {
            ["watch", "namespaces", "{namespace}", plural, ..] => plural,
            ["watch", plural, ..] => plural,
            _ => return None,
        };
        return Some(Target::Watch { plural });
    }
    let (namespaced, tail): (bool, &[&str]) = match segs.as_slice() {
        ["namespaces", "{namespace}", tail @ ..] if !tail.is_empty() => (true, tail),
        tail => (false, tail),
    };
    match tail {
        [plural] if !plural.is_empty() => Some(Target::Collection { plural, namespaced }),
        [plural, "{name}"] => Some(Target::Object { plural, namespaced }),
        [plural, "{name}", sub] => Some(Target::Subresource { plural, name: sub }),
        _ => None,
    }
}

/// The schema that declares `group/version, Kind=kind` (its `x-kubernetes-group-version-kind`).
fn schema_of<'a>(doc: &'a Value, group: &str, version: &str, kind: &str) -> Option<&'a str> {
    let schemas = doc.pointer("/components/schemas")?.as_object()?;
    schemas.iter().find_map(|(name, schema)| {
        let gvks = schema.get("x-kubernetes-group-version-kind")?.as_array()?;
        gvks.iter()
            .any(|gvk| {
                let field = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("");
                field("group") == group && field("version") == version && field("kind") == kind
            })
            .then_some(name.as_str())
    })
}

/// `io.k8s.api.apps.v1.Deployment` -> (`apps`, `apps::v1::Deployment`).
fn rust_type(schema: &str) -> Result<(String, String), String> {
    let parts: Vec<&str> = schema.split('.').collect();
    let (package, version, name) = match parts.as_slice() {
        ["io", "k8s", "api", g, v, n] => (*g, *v, *n),
        [
            "io",
            "k8s",
            "apiextensions-apiserver",
            "pkg",
            "apis",
            g,
            v,
            n,
        ]
        | ["io", "k8s", "kube-aggregator", "pkg", "apis", g, v, n] => (*g, *v, *n),
        _ => return Err(format!("no kclient-api module for schema {schema}")),
    };
    Ok((package.to_owned(), format!("{package}::{version}::{name}")))
}

/// What the paths say about one resource, before its Rust type is known.
struct Found {
    kind: String,
    namespaced: bool,
    verbs: BTreeSet<String>,
}

fn collect(doc: &Value, group: &str, version: &str) -> Result<GroupVersion, String> {
    let mut gv = GroupVersion {
        group: group.to_owned(),
        version: version.to_owned(),
        package: String::new(),
        resources: BTreeMap::new(),
    };
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Ok(gv);
    };
    let pre = prefix(group, version);
    let mut watched = BTreeSet::new();
    let mut subs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut sub_actions: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    for (path, item) in paths {
        let Some(rest) = path.strip_prefix(&pre) else {
            continue;
        };
        let Some(target) = classify(rest) else {
            continue;
        };
        let (plural, namespaced, top) = match target {
            Target::Watch { plural } => {
                watched.insert(plural.to_owned());
                continue;
            }
            Target::Subresource { plural, name } => {
                subs.entry(plural.to_owned())
                    .or_default()
                    .insert(name.to_owned());
                let actions = sub_actions
                    .entry(plural.to_owned())
                    .or_default()
                    .entry(name.to_owned())
                    .or_default();
                for op in item.as_object().into_iter().flat_map(|ops| ops.values()) {
                    let Some(action) = op.get("x-kubernetes-action").and_then(Value::as_str) else {
                        continue;
                    };
                    let Some(gvk) = op.get("x-kubernetes-group-version-kind") else {
                        continue;
                    };
                    let field = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("");
                    actions.insert(
                        action.to_owned(),
                        format!("{}/{}/{}", field("group"), field("version"), field("kind")),
                    );
                }
                continue;
            }
            Target::Collection { plural, namespaced } => (plural, namespaced, false),
            Target::Object { plural, namespaced } => (plural, namespaced, true),
        };
        let Some(ops) = item.as_object() else {
            continue;
        };
        for op in ops.values() {
            let Some(action) = op.get("x-kubernetes-action").and_then(Value::as_str) else {
                continue;
            };
            let Some(kind) = op
                .pointer("/x-kubernetes-group-version-kind/kind")
                .and_then(Value::as_str)
            else {
                continue;
            };
            let verb = match action {
                "get" if top => "get",
                "list" => "list",
                "post" => "create",
                "put" => "update",
                "patch" => "patch",
                "delete" => "delete",
                "deletecollection" => "deletecollection",
                _ => continue,
            };
            let entry = found.entry(plural.to_owned()).or_insert_with(|| Found {
                kind: kind.to_owned(),
                namespaced: false,
                verbs: BTreeSet::new(),
            });
            entry.namespaced |= namespaced;
            entry.verbs.insert(verb.to_owned());
        }
    }
    for (plural, f) in found {
        let schema = schema_of(doc, group, version, &f.kind)
            .ok_or_else(|| format!("no schema for kind {} of resource {plural}", f.kind))?;
        let (package, rust) = rust_type(schema)?;
        gv.package = package;
        gv.resources.insert(
            plural.clone(),
            Resource {
                plural,
                kind: f.kind,
                namespaced: f.namespaced,
                rust_type: rust,
                verbs: f.verbs,
                subresources: BTreeSet::new(),
                subresource_actions: BTreeMap::new(),
            },
        );
    }
    for (plural, names) in subs {
        if let Some(r) = gv.resources.get_mut(&plural) {
            r.subresources = names;
            r.subresource_actions = sub_actions.remove(&plural).unwrap_or_default();
        }
    }
    for plural in watched {
        if let Some(r) = gv.resources.get_mut(&plural) {
            r.verbs.insert("watch".to_owned());
        }
    }
    Ok(gv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        assert!(matches!(
            classify("namespaces/{namespace}/pods"),
            Some(Target::Collection {
                plural: "pods",
                namespaced: true
            })
        ));
        assert!(matches!(
            classify("namespaces/{name}"),
            Some(Target::Object {
                plural: "namespaces",
                namespaced: false
            })
        ));
        assert!(matches!(
            classify("namespaces/{name}/finalize"),
            Some(Target::Subresource {
                plural: "namespaces",
                name: "finalize"
            })
        ));
        assert!(matches!(
            classify("namespaces/{namespace}/pods/{name}/log"),
            Some(Target::Subresource {
                plural: "pods",
                name: "log"
            })
        ));
        assert!(matches!(
            classify("watch/namespaces/{namespace}/pods"),
            Some(Target::Watch { plural: "pods" })
        ));
        assert!(classify("namespaces/{namespace}/pods/{name}/proxy/{path}").is_none());
    }

    #[test]
    fn maps_schemas_to_rust_paths() {
        assert_eq!(
            rust_type("io.k8s.api.apps.v1.Deployment").unwrap(),
            ("apps".to_owned(), "apps::v1::Deployment".to_owned())
        );
        assert_eq!(
            rust_type(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
            )
            .unwrap()
            .1,
            "apiextensions::v1::CustomResourceDefinition"
        );
        assert!(rust_type("io.k8s.apimachinery.pkg.apis.meta.v1.Status").is_err());
    }
}
