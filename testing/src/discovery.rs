//! Fake discovery: the `/api`, `/apis`, `/apis/{group}`, per-group-version and `/version`
//! documents, built from the [`ResourceRegistry`] (kclient-api's built-in resources plus the
//! registered custom resources), in the plain format and, for `/api` and `/apis` asked with
//! `as=APIGroupDiscoveryList`, in the aggregated `apidiscovery.k8s.io/v2` format that
//! kclient's `DiscoveryClient` asks for first.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::registry::ResourceRegistry;

/// kube-apiserver's version priority: GA before beta before alpha, higher numbers first,
/// anything else last in alphabetical order.
fn version_rank(version: &str) -> (u8, i64, i64, String) {
    let Some(rest) = version.strip_prefix('v') else {
        return (3, 0, 0, version.to_string());
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<i64>() else {
        return (3, 0, 0, version.to_string());
    };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (0, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n.parse::<i64>().unwrap_or(-1))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (2, n.parse::<i64>().unwrap_or(-1))
    } else {
        return (3, 0, 0, version.to_string());
    };
    (level, -major, -minor, String::new())
}

/// Group name to its versions, preferred first.
fn groups(registry: &ResourceRegistry) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for info in registry.iter() {
        let r = &info.api_resource;
        let versions = out.entry(r.group.clone()).or_default();
        if !versions.contains(&r.version) {
            versions.push(r.version.clone());
        }
    }
    for versions in out.values_mut() {
        versions.sort_by_key(|v| version_rank(v));
    }
    out
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": list,
        "preferredVersion": list.first().cloned().unwrap_or(Value::Null),
    })
}

/// The `Content-Type` of an aggregated discovery document.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The aggregated discovery document (`APIGroupDiscoveryList`) of `/api` or `/apis`: every
/// group, its versions preferred first, their resources with their subresources.
pub(crate) fn aggregated(registry: &ResourceRegistry, path: &str) -> Option<Value> {
    let core = match path.trim_end_matches('/') {
        "/api" => true,
        "/apis" => false,
        _ => return None,
    };
    let items: Vec<Value> = groups(registry)
        .iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    json!({"version": v, "resources": aggregated_resources(registry, group, v),
                        "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": group}, "versions": versions})
        })
        .collect();
    Some(json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }))
}

/// The resources of a group version in the aggregated shape: the plain document's entries,
/// with each `resource/sub` entry folded into its resource's `subresources`.
fn aggregated_resources(registry: &ResourceRegistry, group: &str, version: &str) -> Vec<Value> {
    let Some(list) = resource_list(registry, group, version) else {
        return Vec::new();
    };
    let mut out: Vec<Value> = Vec::new();
    for entry in list["resources"].as_array().into_iter().flatten() {
        let name = entry["name"].as_str().unwrap_or("");
        let kind = |e: &Value| {
            json!({"group": e["group"].as_str().unwrap_or(group),
                "version": e["version"].as_str().unwrap_or(version), "kind": e["kind"]})
        };
        match name.split_once('/') {
            None => {
                let scope = if entry["namespaced"].as_bool() == Some(true) {
                    "Namespaced"
                } else {
                    "Cluster"
                };
                let mut resource = json!({"resource": name, "responseKind": kind(entry),
                    "scope": scope, "singularResource": entry["singularName"],
                    "verbs": entry["verbs"], "subresources": []});
                for field in ["shortNames", "categories"] {
                    if !entry[field].is_null() {
                        resource[field] = entry[field].clone();
                    }
                }
                out.push(resource);
            }
            Some((parent, sub)) => {
                if let Some(p) = out.iter_mut().find(|r| r["resource"] == parent)
                    && let Some(subs) = p["subresources"].as_array_mut()
                {
                    subs.push(json!({"subresource": sub, "responseKind": kind(entry),
                        "verbs": entry["verbs"]}));
                }
            }
        }
    }
    out
}

/// The document at a discovery path, or `None` when the path is not a discovery path (or
/// names a group or version that is not served).
pub(crate) fn document(registry: &ResourceRegistry, path: &str) -> Option<Value> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["version"] => Some(json!({
            "major": "1",
            "minor": "36",
            "gitVersion": "v1.36.0-kclient-fake",
            "platform": "fake",
        })),
        ["api"] => Some(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "fake"}],
        })),
        ["apis"] => {
            let list: Vec<Value> = groups(registry)
                .iter()
                .filter(|(g, _)| !g.is_empty())
                .map(|(g, v)| group_doc(g, v))
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": list}))
        }
        ["apis", group] => {
            let all = groups(registry);
            let versions = all.get(*group)?;
            let mut doc = group_doc(group, versions);
            doc["kind"] = json!("APIGroup");
            doc["apiVersion"] = json!("v1");
            Some(doc)
        }
        ["api", version] => resource_list(registry, "", version),
        ["apis", group, version] => resource_list(registry, group, version),
        _ => None,
    }
}

/// The subresources other than status and scale the fake serves for a resource: name,
/// group, version, kind and verb.
fn served_subresources(
    info: &crate::registry::ResourceInfo,
) -> &'static [(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
)] {
    let r = &info.api_resource;
    match (r.group.as_str(), r.kind.as_str()) {
        ("", "Pod") => &[
            ("binding", "", "", "Binding", "create"),
            ("eviction", "policy", "v1", "Eviction", "create"),
            ("log", "", "", "Pod", "get"),
        ],
        ("", "ServiceAccount") => &[(
            "token",
            "authentication.k8s.io",
            "v1",
            "TokenRequest",
            "create",
        )],
        _ => &[],
    }
}

fn resource_list(registry: &ResourceRegistry, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for info in registry.iter() {
        let r = &info.api_resource;
        if r.group != group || r.version != version {
            continue;
        }
        let mut entry = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        if !info.categories.is_empty() {
            entry["categories"] = json!(info.categories);
        }
        resources.push(entry);
        if info.has_status {
            resources.push(json!({
                "name": format!("{}/status", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if info.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        for (sub, group, version, kind, verb) in served_subresources(info) {
            let mut entry = json!({
                "name": format!("{}/{sub}", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind,
                "verbs": [verb],
            });
            if !group.is_empty() {
                entry["group"] = json!(group);
                entry["version"] = json!(version);
            }
            resources.push(entry);
        }
    }
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_as_the_server_prefers_them() {
        let mut v = vec!["v1beta1", "v1", "v2", "v1alpha1", "v2beta2", "foo"];
        v.sort_by_key(|v| version_rank(v));
        assert_eq!(v, ["v2", "v1", "v2beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    #[test]
    fn documents_come_from_the_registry() {
        let r = ResourceRegistry::builtin();
        let apis = document(&r, "/apis").unwrap();
        let autoscaling = apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "autoscaling")
            .unwrap();
        assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
        let core = document(&r, "/api/v1").unwrap();
        let names: Vec<&str> = core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"pods") && names.contains(&"pods/status"));
        for sub in [
            "pods/binding",
            "pods/eviction",
            "pods/log",
            "serviceaccounts/token",
            "replicationcontrollers/scale",
        ] {
            assert!(names.contains(&sub), "{sub} in {names:?}");
        }
        assert!(!names.contains(&"configmaps/scale"));
        let apps = document(&r, "/apis/apps/v1").unwrap();
        let scale = apps["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "deployments/scale")
            .unwrap();
        assert_eq!(scale["group"], "autoscaling");
        assert_eq!(scale["kind"], "Scale");
        assert!(document(&r, "/apis/nope.example.com/v1").is_none());
    }

    #[test]
    fn aggregated_documents_fold_subresources_into_their_resources() {
        let r = ResourceRegistry::builtin();
        let core = aggregated(&r, "/api").unwrap();
        let items = core["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["metadata"]["name"], "");
        let v1 = &items[0]["versions"][0];
        assert_eq!(v1["version"], "v1");
        let pods = v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "pods")
            .unwrap();
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(pods["responseKind"]["kind"], "Pod");
        let subs: Vec<&str> = pods["subresources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["subresource"].as_str())
            .collect();
        assert_eq!(subs, ["status", "binding", "eviction", "log"]);
        let apis = aggregated(&r, "/apis").unwrap();
        let apps = apis["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == "apps")
            .unwrap();
        let deployments = apps["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "deployments")
            .unwrap();
        assert_eq!(
            deployments["subresources"][1]["responseKind"],
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        );
        assert!(aggregated(&r, "/apis/apps").is_none());
    }
}
