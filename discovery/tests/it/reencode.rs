//! Every discovery document the server serves decodes into the discovery types and re-encodes
//! to exactly the server's JSON value (object key order aside): `/version`, `/api`, `/apis`,
//! `/apis/{group}` for every group, `/api/v1` and `/apis/{group}/{version}` for every group
//! version, a CRD's group included.

use kclient_discovery::{APIGroup, APIGroupList, APIResourceList, APIVersions, ServerVersion};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::crd::TestCrd;

/// Fetches `path`, decodes it as `T`, re-encodes it and asserts the result equals the raw
/// JSON. `None` when the document is gone (another test's CRD group deleted meanwhile).
async fn round_trip<T: DeserializeOwned + Serialize>(client: &Client, path: &str) -> Option<T> {
    let raw = match client.get_raw(path).await {
        Ok(raw) => raw,
        Err(e) if e.is_not_found() => return None,
        Err(e) => panic!("GET {path}: {e}"),
    };
    let server: Value =
        serde_json::from_slice(&raw).unwrap_or_else(|e| panic!("GET {path} is not JSON: {e}"));
    let typed: T = serde_json::from_slice(&raw)
        .unwrap_or_else(|e| panic!("decoding GET {path} as {}: {e}", std::any::type_name::<T>()));
    let ours = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        ours,
        server,
        "{path} re-encoded as {} differs from the server's document",
        std::any::type_name::<T>()
    );
    Some(typed)
}

#[tokio::test]
async fn discovery_documents_re_encode_to_the_servers_json() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let crd = TestCrd::create(&client, "reencode").await;

    let version: ServerVersion = round_trip(&client, "/version").await.unwrap();
    assert!(!version.emulation_minor.is_empty(), "{version:?}");

    let api: APIVersions = round_trip(&client, "/api").await.unwrap();
    assert_eq!(api.kind, "APIVersions");
    assert_eq!(api.versions, ["v1"]);
    assert!(
        !api.server_address_by_client_cidrs.is_empty(),
        "/api lists serverAddressByClientCIDRs: {api:?}"
    );
    let core: APIResourceList = round_trip(&client, "/api/v1").await.unwrap();
    assert!(core.api_version.is_empty(), "/api/v1 sends no apiVersion");
    assert!(core.api_resources.iter().any(|r| r.name == "pods"));

    let groups: APIGroupList = round_trip(&client, "/apis").await.unwrap();
    assert_eq!(
        (groups.kind.as_str(), groups.api_version.as_str()),
        ("APIGroupList", "v1")
    );
    let mut group_documents = 0;
    let mut resource_lists = 0;
    let mut saw_crd = false;
    for group in &groups.groups {
        let path = format!("/apis/{}", group.name);
        let Some(alone) = round_trip::<APIGroup>(&client, &path).await else {
            continue;
        };
        assert_eq!(
            (alone.kind.as_str(), alone.name.as_str()),
            ("APIGroup", group.name.as_str())
        );
        group_documents += 1;
        for version in &group.versions {
            let path = format!("/apis/{}", version.group_version);
            if let Some(list) = round_trip::<APIResourceList>(&client, &path).await {
                resource_lists += 1;
                if group.name == crd.group {
                    saw_crd = list
                        .api_resources
                        .iter()
                        .any(|r| r.name == crd.plural && r.short_names == ["wdg"]);
                }
            }
        }
    }
    crd.delete().await;
    assert!(saw_crd, "the test CRD's resource list was compared");
    // Every built-in group answers (only other tests' CRD groups may vanish meanwhile).
    let builtin = groups
        .groups
        .iter()
        .filter(|g| g.name.ends_with("k8s.io") || !g.name.contains('.'))
        .count();
    assert!(group_documents >= builtin, "{group_documents} < {builtin}");
    assert!(resource_lists >= builtin, "{resource_lists} < {builtin}");
}
