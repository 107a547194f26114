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

/// A CRD with several versions, one of them not served: the served ones map (the preferred,
/// highest one when no version is asked for), the unserved one is no match; serving it and
/// adding a short name later is picked up by the next lookup that misses.
#[tokio::test]
async fn crd_versions_served_and_unserved_then_changed() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let seed = format!("{}-{:04x}", std::process::id(), rand_suffix());
    let group = format!("v{seed}.discovery.kclient.dev");
    // A short name of this run alone: another run's CRD on the same server (a developer's
    // shared testenv) with the same one would make the lookup below ambiguous.
    let short_name = format!("gdg{}", seed.replace('-', "x"));
    let crd = TestCrd::create_with(
        &client,
        &group,
        json!({"kind": "Gadget", "plural": "gadgets", "singular": "gadget"}),
        &[
            ("v1alpha1", true, false),
            ("v1beta1", false, false),
            ("v1", true, true),
        ],
    )
    .await;
    let gk = GroupKind::new(group.clone(), "Gadget");
    let gvr = |v: &str| GroupVersionResource::new(group.clone(), v, "gadgets");

    let mapper =
        DeferredDiscoveryRESTMapper::new(MemCacheClient::new(DiscoveryClient::new(client.clone())));
    // The server lists v1 before v1alpha1 (kube-aware version order): v1 is preferred.
    assert_eq!(
        mapper.rest_mapping(&gk, &[]).await.unwrap().resource,
        gvr("v1")
    );
    assert_eq!(
        mapper
            .resources_for(&GroupVersionResource::new(group.clone(), "", "gadget"))
            .await
            .unwrap(),
        [gvr("v1"), gvr("v1alpha1")]
    );
    assert_eq!(
        mapper
            .rest_mapping(&gk, &["v1beta1", "v1alpha1"])
            .await
            .unwrap()
            .resource,
        gvr("v1alpha1")
    );
    let err = mapper.rest_mapping(&gk, &["v1beta1"]).await.unwrap_err();
    assert!(err.is_no_match(), "{err}");
    assert_eq!(
        err.to_string(),
        format!(r#"no matches for kind "Gadget" in version "{group}/v1beta1""#)
    );
    assert!(
        mapper
            .mapping_for(&format!("gadgets.v1beta1.{group}"))
            .await
            .unwrap_err()
            .is_no_match()
    );

    // Serve v1beta1 and add a short name: the lookups that miss rebuild the mapper.
    let schema = json!({"openAPIV3Schema": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}});
    crd.patch_and_wait(
        json!({"spec": {
        "names": {"shortNames": [short_name]},
        "versions": [
            {"name": "v1alpha1", "served": true, "storage": false, "schema": schema},
            {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
            {"name": "v1", "served": true, "storage": true, "schema": schema},
        ]}}),
        "v1beta1",
    )
    .await;
    crd.wait_short_name(&short_name).await;
    assert_eq!(
        mapper
            .rest_mapping(&gk, &["v1beta1"])
            .await
            .unwrap()
            .resource,
        gvr("v1beta1")
    );
    assert_eq!(
        mapper
            .resource_for(&GroupVersionResource::new("", "", &short_name))
            .await
            .unwrap(),
        gvr("v1")
    );
    crd.delete().await;
}

/// The singular of a resource created after the mapper was built is found, as every other
/// lookup that misses rebuilds the mapper (client-go's deferred mapper retries a failed
/// `ResourceSingularizer` as it retries the other lookups).
#[tokio::test]
async fn the_singular_of_a_crd_created_later_is_found() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let mapper =
        DeferredDiscoveryRESTMapper::new(MemCacheClient::new(DiscoveryClient::new(client.clone())));
    assert_eq!(
        mapper.resource_singularizer("deploy").await.unwrap(),
        "deployment"
    );
    // A plural no other CRD of the server has.
    let seed = format!("{}x{:04x}", std::process::id(), rand_suffix());
    let group = format!("s{seed}.discovery.kclient.dev");
    let crd = TestCrd::create_with(
        &client,
        &group,
        json!({"kind": format!("Sing{seed}"), "plural": format!("sing{seed}s"),
               "singular": format!("sing{seed}")}),
        &[("v1", true, true)],
    )
    .await;
    let singular = mapper.resource_singularizer(&format!("sing{seed}s")).await;
    crd.delete().await;
    assert_eq!(singular.unwrap(), format!("sing{seed}"));
}

/// A few random hex digits from the clock, so concurrent runs use different groups.
fn rand_suffix() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    (nanos >> 8) as u16
}
