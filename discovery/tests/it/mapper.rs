//! The RESTMapper over live discovery: built-in names, short names and kinds, and a CRD
//! created after the mapper was first used.

use kclient_apimachinery::{GroupKind, GroupVersionKind, GroupVersionResource};
use kclient_discovery::{DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient, RESTScope};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::crd::TestCrd;

#[tokio::test]
async fn resolves_builtin_resources_and_a_fresh_crd() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let mapper =
        DeferredDiscoveryRESTMapper::new(MemCacheClient::new(DiscoveryClient::new(client.clone())));

    for arg in [
        "deploy",
        "deployments",
        "deployment",
        "Deployment",
        "deployment.apps",
        "deployments.v1.apps",
    ] {
        let m = mapper
            .mapping_for(arg)
            .await
            .unwrap_or_else(|e| panic!("{arg}: {e}"));
        assert_eq!(
            m.resource,
            GroupVersionResource::new("apps", "v1", "deployments"),
            "{arg}"
        );
        assert_eq!(
            m.group_version_kind,
            GroupVersionKind::new("apps", "v1", "Deployment")
        );
        assert_eq!(m.scope, RESTScope::Namespace);
    }
    let node = mapper
        .rest_mapping(&GroupKind::new("", "Node"), &[])
        .await
        .unwrap();
    assert_eq!(node.resource.resource, "nodes");
    assert_eq!(node.scope, RESTScope::Root);
    assert_eq!(
        mapper
            .kind_for(&GroupVersionResource::new("", "", "po"))
            .await
            .unwrap(),
        GroupVersionKind::new("", "v1", "Pod")
    );
    // `events` exists in core and events.k8s.io; the core group wins.
    assert_eq!(
        mapper
            .resource_for(&GroupVersionResource::new("", "", "events"))
            .await
            .unwrap(),
        GroupVersionResource::new("", "v1", "events")
    );
    // autoscaling serves v1 and v2; v2 is preferred.
    assert_eq!(
        mapper
            .resource_for(&GroupVersionResource::new("", "", "hpa"))
            .await
            .unwrap()
            .version,
        "v2"
    );

    // A CRD created after the mapper's first use is found by its next lookup.
    let seed = format!("m{}-{:04x}", std::process::id(), rand_suffix());
    let crd = TestCrd::create(&client, &seed).await;
    let m = mapper
        .mapping_for(&format!("widgets.{}", crd.group))
        .await
        .unwrap();
    assert_eq!(
        m.group_version_kind,
        GroupVersionKind::new(crd.group.clone(), "v1", "Widget")
    );
    assert!(m.scope.is_namespaced());
    let short = mapper
        .resource_for(&GroupVersionResource::new(crd.group.clone(), "", "wdg"))
        .await
        .unwrap();
    assert_eq!(short.resource, "widgets");

    assert!(
        mapper
            .mapping_for("nosuchthings")
            .await
            .unwrap_err()
            .is_no_match()
    );
    crd.delete().await;
}

/// A category lists every resource that declares it, whatever version serves it: here a
/// group's preferred version is `v1` (from one CRD) while another CRD of the group is served
/// only in `v1alpha1`, as client-go's discovery category expander reads every version.
#[tokio::test]
async fn a_category_lists_resources_of_every_version() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let group = format!(
        "c{}-{:04x}.discovery.kclient.dev",
        std::process::id(),
        rand_suffix()
    );
    let category = format!("kclient-{}", group.split('.').next().unwrap_or_default());
    let gadgets = TestCrd::create_with(
        &client,
        &group,
        json!({"kind": "Gadget", "plural": "gadgets", "categories": [category]}),
        &[("v1", true, true)],
    )
    .await;
    let gizmos = TestCrd::create_with(
        &client,
        &group,
        json!({"kind": "Gizmo", "plural": "gizmos", "categories": [category]}),
        &[("v1alpha1", true, true)],
    )
    .await;

    let mapper =
        DeferredDiscoveryRESTMapper::new(MemCacheClient::new(DiscoveryClient::new(client.clone())));
    let snapshot = mapper.snapshot().await.unwrap();
    let mut expanded = snapshot.expand_category(&category);
    expanded.sort();
    assert_eq!(
        expanded,
        [
            (group.clone(), "gadgets".to_owned()),
            (group.clone(), "gizmos".to_owned())
        ]
    );
    gadgets.delete().await;
    gizmos.delete().await;
}

/// A few random hex digits from the clock, so concurrent runs use different groups.
fn rand_suffix() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    (nanos >> 8) as u16
}
