//! The discovery client against the server: groups and resources match the raw endpoints,
//! aggregated and per-group discovery agree, preferred resources, the caches.

use std::collections::{BTreeMap, BTreeSet};

use kclient_discovery::prelude::*;
use kclient_discovery::{
    APIGroupList, APIResourceList, APIVersions, Discovered, DiscoveryClient,
    DiskCachedDiscoveryClient, GroupsAndResources, MemCacheClient,
};
use kclient_testenv::{Identity, TestEnv};

fn discovery(env: &TestEnv) -> DiscoveryClient {
    DiscoveryClient::new(env.client(Identity::Admin))
}

/// Built-in groups only: other tests create CRD groups concurrently.
fn builtin(group: &str) -> bool {
    group.is_empty() || group.ends_with("k8s.io") || !group.contains('.')
}

#[tokio::test]
async fn server_version_is_the_pinned_one() {
    let env = TestEnv::connect().await;
    let version = discovery(&env).server_version().await.unwrap();
    assert_eq!(version.major, "1");
    assert!(version.git_version.starts_with("v1.36."), "{version:?}");
}

#[tokio::test]
async fn groups_match_the_raw_endpoints() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let raw_api: APIVersions =
        serde_json::from_slice(&client.get_raw("/api").await.unwrap()).unwrap();
    let raw_apis: APIGroupList =
        serde_json::from_slice(&client.get_raw("/apis").await.unwrap()).unwrap();

    let groups = discovery(&env).server_groups().await.unwrap();
    let core = &groups.groups[0];
    assert_eq!(core.name, "");
    let core_versions: Vec<&str> = core.versions.iter().map(|v| v.version.as_str()).collect();
    assert_eq!(core_versions, raw_api.versions);

    let ours: BTreeMap<&str, (&str, Vec<&str>)> = groups.groups[1..]
        .iter()
        .filter(|g| builtin(&g.name))
        .map(|g| {
            let versions = g
                .versions
                .iter()
                .map(|v| v.group_version.as_str())
                .collect();
            (g.name.as_str(), (g.preferred_version_name(), versions))
        })
        .collect();
    let raw: BTreeMap<&str, (&str, Vec<&str>)> = raw_apis
        .groups
        .iter()
        .filter(|g| builtin(&g.name))
        .map(|g| {
            let versions = g
                .versions
                .iter()
                .map(|v| v.group_version.as_str())
                .collect();
            (g.name.as_str(), (g.preferred_version_name(), versions))
        })
        .collect();
    assert_eq!(ours, raw);
    assert!(ours.contains_key("apps") && ours.contains_key("coordination.k8s.io"));

    // One group version's resources, against the raw document.
    let raw_apps: APIResourceList =
        serde_json::from_slice(&client.get_raw("/apis/apps/v1").await.unwrap()).unwrap();
    let apps = discovery(&env)
        .server_resources_for_group_version("apps/v1")
        .await
        .unwrap();
    assert_eq!(apps, raw_apps);
    let deployments = apps
        .api_resources
        .iter()
        .find(|r| r.name == "deployments")
        .unwrap();
    assert_eq!(deployments.kind, "Deployment");
    assert!(deployments.namespaced);
    assert!(deployments.short_names.contains(&"deploy".to_owned()));
}

/// `(group version, resource) -> (kind, namespaced, verbs, short names)` of built-in groups.
type Summary = BTreeMap<(String, String), (String, bool, BTreeSet<String>, Vec<String>)>;

fn summarize(found: &GroupsAndResources) -> Summary {
    let mut out = Summary::new();
    for list in &found.resources {
        let group = list.group_version().unwrap().group;
        if !builtin(&group) {
            continue;
        }
        for r in &list.api_resources {
            out.insert(
                (list.group_version.clone(), r.name.clone()),
                (
                    r.kind.clone(),
                    r.namespaced,
                    r.verbs.iter().cloned().collect(),
                    r.short_names.clone(),
                ),
            );
        }
    }
    out
}

#[tokio::test]
async fn aggregated_and_per_group_discovery_agree() {
    let env = TestEnv::connect().await;
    let aggregated = discovery(&env).server_groups_and_resources().await.unwrap();
    let legacy = discovery(&env)
        .with_legacy()
        .server_groups_and_resources()
        .await
        .unwrap();
    assert!(aggregated.is_complete(), "{:?}", aggregated.error());
    assert!(legacy.is_complete(), "{:?}", legacy.error());
    let names = |f: &GroupsAndResources| -> Vec<String> {
        f.groups
            .iter()
            .filter(|g| builtin(&g.name))
            .map(|g| g.name.clone())
            .collect()
    };
    assert_eq!(names(&aggregated.value), names(&legacy.value));
    let (a, l) = (summarize(&aggregated.value), summarize(&legacy.value));
    assert_eq!(a, l);
    assert!(a.len() > 100, "only {} resources and subresources", a.len());
    assert!(a.contains_key(&("apps/v1".to_owned(), "deployments/scale".to_owned())));
}

#[tokio::test]
async fn preferred_resources_pick_one_version_per_resource() {
    let env = TestEnv::connect().await;
    let d = discovery(&env);
    let preferred = d
        .server_preferred_resources()
        .await
        .unwrap()
        .into_complete()
        .unwrap();
    let find = |gv: &str, name: &str| {
        preferred
            .iter()
            .filter(|l| l.group_version == gv)
            .flat_map(|l| &l.api_resources)
            .any(|r| r.name == name)
    };
    assert!(find("v1", "pods"));
    assert!(find("apps/v1", "deployments"));
    assert!(find("v1", "nodes"));
    assert!(
        !preferred
            .iter()
            .flat_map(|l| &l.api_resources)
            .any(|r| r.name.contains('/'))
    );
    // Each group resource appears once.
    let mut seen = BTreeSet::new();
    for list in &preferred {
        let group = list.group_version().unwrap().group;
        for r in &list.api_resources {
            assert!(
                seen.insert((group.clone(), r.name.clone())),
                "{group}/{} twice",
                r.name
            );
        }
    }
    let namespaced = d
        .server_preferred_namespaced_resources()
        .await
        .unwrap()
        .into_complete()
        .unwrap();
    let all: Vec<&str> = namespaced
        .iter()
        .flat_map(|l| &l.api_resources)
        .map(|r| r.name.as_str())
        .collect();
    assert!(all.contains(&"pods") && !all.contains(&"nodes") && !all.contains(&"namespaces"));
    // A group version with no namespaced resource is left out, as client-go's `FilteredBy`
    // does (apiregistration.k8s.io/v1 serves only the cluster-wide apiservices).
    let empty: Vec<&str> = namespaced
        .iter()
        .filter(|l| l.api_resources.is_empty())
        .map(|l| l.group_version.as_str())
        .collect();
    assert!(empty.is_empty(), "empty lists: {empty:?}");
}

#[tokio::test]
async fn memory_and_disk_caches_answer_like_the_server() {
    let env = TestEnv::connect().await;
    let live = discovery(&env).server_groups_and_resources().await.unwrap();

    let mem = MemCacheClient::new(discovery(&env));
    assert!(!mem.fresh());
    let cached = mem.server_groups_and_resources().await.unwrap();
    assert!(mem.fresh());
    assert_eq!(summarize(&cached.value), summarize(&live.value));

    let tmp = tempfile::tempdir().unwrap();
    let disk = DiskCachedDiscoveryClient::for_config(env.config(Identity::Admin), tmp.path(), None)
        .unwrap();
    let first = disk.server_groups_and_resources().await.unwrap();
    assert_eq!(summarize(&first.value), summarize(&live.value));
    assert!(tmp.path().join("servergroups.json").is_file());
    assert!(tmp.path().join("apps/v1/serverresources.json").is_file());
    assert!(tmp.path().join("v1/serverresources.json").is_file());

    // A second client reads the files: same answer, not fresh.
    let again =
        DiskCachedDiscoveryClient::for_config(env.config(Identity::Admin), tmp.path(), None)
            .unwrap();
    let second = again.server_groups_and_resources().await.unwrap();
    assert_eq!(summarize(&second.value), summarize(&first.value));
    assert!(!again.fresh());

    // Code generic over the traits (brought in by the prelude) gets the same answers as the
    // inherent methods used above.
    assert_eq!(
        summarize(&through_traits(&mem).await.value),
        summarize(&cached.value)
    );
    assert_eq!(
        summarize(&through_traits(&again).await.value),
        summarize(&second.value)
    );
}

async fn through_traits<D: CachedDiscoveryInterface>(d: &D) -> Discovered<GroupsAndResources> {
    DiscoveryInterface::server_groups_and_resources(d)
        .await
        .unwrap()
}
