//! Discovery documents the local apiserver does not send but servers in the field do, or that a
//! broken server or proxy sends: served by testenv's `MisbehavingServer`.

use kclient_discovery::DiscoveryClient;
use kclient_testenv::{MisbehavingServer, Reply};

/// The `Content-Type` kube-apiserver answers aggregated discovery with.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn aggregated(body: &str) -> Reply {
    Reply::Body {
        status: 200,
        content_type: AGGREGATED.to_owned(),
        body: body.as_bytes().to_vec(),
    }
}

const CORE: &str = r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2",
  "metadata":{},"items":[{"metadata":{},"versions":[{"version":"v1","resources":[
  {"resource":"pods","responseKind":{"group":"","version":"","kind":"Pod"},"scope":"Namespaced",
   "singularResource":"pod","verbs":["get","list"]}],"freshness":"Current"}]}]}"#;

/// `/apis` as kube-aggregator serves it for an aggregated API server that publishes only
/// subresources (KubeVirt's `subresources.kubevirt.io`): the aggregator makes up the parent
/// with no kind and no verbs (apiserver's `ConvertGroupVersionIntoToDiscovery`), and Go writes
/// the nil verbs as `null`; a subresource registered without verbs is `null` too.
const APIS_WITH_NULLS: &str = r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2",
  "metadata":{},"items":[
  {"metadata":{"name":"apps","creationTimestamp":null},"versions":[{"version":"v1","resources":[
    {"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},
     "scope":"Namespaced","singularResource":"deployment","verbs":["get","list"]}],
    "freshness":"Current"}]},
  {"metadata":{"name":"subresources.kubevirt.io","creationTimestamp":null},"versions":[
    {"version":"v1","resources":[
      {"resource":"virtualmachineinstances","responseKind":{"group":"","version":"","kind":""},
       "scope":"Namespaced","singularResource":"","verbs":null,
       "subresources":[
         {"subresource":"console","responseKind":{"group":"","version":"","kind":""},"verbs":["get"]},
         {"subresource":"pause","responseKind":{"group":"subresources.kubevirt.io","version":"v1","kind":"VirtualMachineInstance"},"verbs":null}]}],
     "freshness":"Current"}]}]}"#;

#[tokio::test]
async fn null_lists_in_aggregated_discovery_are_empty() {
    let server = MisbehavingServer::start(|req| match req.path.as_str() {
        "/api" => aggregated(CORE),
        "/apis" => aggregated(APIS_WITH_NULLS),
        _ => Reply::Body {
            status: 404,
            content_type: "application/json".into(),
            body: b"{}".to_vec(),
        },
    })
    .await;
    let found = DiscoveryClient::new(server.client())
        .server_groups_and_resources()
        .await
        .unwrap();
    assert!(found.is_complete(), "{:?}", found.error());
    let names: Vec<&str> = found.value.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["", "apps", "subresources.kubevirt.io"]);
    let kubevirt = found
        .value
        .resources
        .iter()
        .find(|l| l.group_version == "subresources.kubevirt.io/v1")
        .unwrap();
    // The parent and the subresource without a kind are left out, as client-go leaves them.
    let resources: Vec<(&str, &[String])> = kubevirt
        .api_resources
        .iter()
        .map(|r| (r.name.as_str(), r.verbs.as_slice()))
        .collect();
    assert_eq!(resources, [("virtualmachineinstances/pause", &[][..])]);
    // Nothing went to the per-group documents.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.path == "/api" || r.path == "/apis")
    );
}
