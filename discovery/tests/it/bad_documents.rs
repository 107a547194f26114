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

fn not_found() -> Reply {
    Reply::Body {
        status: 404,
        content_type: "application/json".into(),
        body: br#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#.to_vec(),
    }
}

/// A client of `server` whose objects may be at most 1 MiB.
fn small_objects(server: &MisbehavingServer) -> DiscoveryClient {
    let mut config = server.config();
    config.max_object_size = 1 << 20;
    DiscoveryClient::for_config(config).unwrap()
}

/// A document bigger than `Config::max_object_size` is refused as soon as that much of it has
/// arrived, as any object the client reads is, whichever document it is: a broken aggregated
/// API server (or a proxy) streaming without end does not grow the client's memory until
/// the discovery timeout.
#[tokio::test]
async fn a_huge_document_is_refused_at_the_object_size_limit() {
    const HUGE: u64 = 32 << 20;
    let huge_string = |prefix: &str, suffix: &str| Reply::Generated {
        status: 200,
        content_type: "application/json".into(),
        prefix: prefix.as_bytes().to_vec(),
        fill: b'a',
        len: HUGE,
        suffix: suffix.as_bytes().to_vec(),
        end: kclient_testenv::StreamEnd::Finish,
    };
    let cases: [(&str, Reply); 3] = [
        (
            "/api",
            huge_string(r#"{"kind":"APIVersions","versions":[""#, r#""]}"#),
        ),
        (
            "/apis",
            huge_string(r#"{"kind":"APIGroupList","groups":[{"name":""#, r#""}]}"#),
        ),
        (
            "/apis/apps/v1",
            huge_string(
                r#"{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[{"name":""#,
                r#""}]}"#,
            ),
        ),
    ];
    for (path, reply) in cases {
        let server = MisbehavingServer::start(move |req| match req.path.as_str() {
            p if p == path => reply.clone(),
            "/api" => aggregated(CORE),
            "/apis" => aggregated(r#"{"kind":"APIGroupDiscoveryList","items":[]}"#),
            _ => not_found(),
        })
        .await;
        let discovery = small_objects(&server);
        let result = if path == "/apis/apps/v1" {
            discovery
                .server_resources_for_group_version("apps/v1")
                .await
                .map(drop)
        } else {
            discovery.server_groups().await.map(drop)
        };
        let Err(err) = result else {
            panic!("{path}: a document of {HUGE} bytes was accepted");
        };
        assert!(
            err.to_string().contains("Config::max_object_size"),
            "{path}: {err}"
        );
    }
}

/// Garbage and an HTML page are decode errors naming the document; a body cut short is the
/// connection's error, naming the document too.
#[tokio::test]
async fn garbage_and_truncated_documents_are_clear_errors() {
    let cases: [(&str, Reply, &str); 3] = [
        (
            "garbage",
            Reply::json(&b"{\"kind\":\"APIGroupDiscoveryList\",\"items\":[{]"[..]),
            "/apis",
        ),
        (
            "an HTML page",
            Reply::Body {
                status: 200,
                content_type: "text/html".into(),
                body: b"<html>a proxy's login page</html>".to_vec(),
            },
            "/apis",
        ),
        (
            "a truncated body",
            Reply::Truncated {
                status: 200,
                content_type: AGGREGATED.into(),
                promised: 10_000,
                body: CORE.as_bytes()[..100].to_vec(),
                end: kclient_testenv::StreamEnd::Close,
            },
            "/apis",
        ),
    ];
    for (name, reply, path) in cases {
        let server = MisbehavingServer::start(move |req| match req.path.as_str() {
            "/api" => aggregated(CORE),
            p if p == path => reply.clone(),
            _ => not_found(),
        })
        .await;
        let err = DiscoveryClient::new(server.client())
            .server_groups_and_resources()
            .await
            .unwrap_err();
        let message = err.to_string();
        if name == "a truncated body" {
            assert!(
                err.api_error().is_some_and(|e| e.is_connection_reset()),
                "{name}: {message}"
            );
        }
        assert!(message.contains("/apis"), "{name}: {message}");
    }
}
