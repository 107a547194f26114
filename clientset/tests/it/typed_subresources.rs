//! client-go's typed subresource methods beyond status and scale, against the real server:
//! a pod's ephemeral containers and in-place resize, a CertificateSigningRequest's approval,
//! a namespace's finalize, and `ProxyGet` through a pod and a service.

use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_api::certificates::v1::CertificateSigningRequest;
use kclient_api::core::v1::{Endpoints, Namespace, Pod, Service};
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Resource, UpdateOptions, WatchEvent,
};
use kclient_clientset::{Api, Clientset};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::{from_json, to_json};

/// How long a controller may take to act before the test fails saying so.
const DEADLINE: Duration = Duration::from_secs(120);

/// Waits, through a watch of the one object, until `done` holds for it; `None` when it is
/// deleted first.
async fn wait_for<K>(api: &Api<K>, name: &str, mut done: impl FnMut(&Value) -> bool) -> Option<K>
where
    K: Resource + serde::de::DeserializeOwned + serde::Serialize + Clone,
{
    let fut = async {
        let current = match api.get(name, &GetOptions::default()).await {
            Ok(k) => k,
            Err(e) if e.is_not_found() => return None,
            Err(e) => panic!("get {name}: {e}"),
        };
        if done(&to_json(&current)) {
            return Some(current);
        }
        let opts = ListOptions::default()
            .field_selector(format!("metadata.name={name}"))
            .resource_version(current.resource_version());
        let mut events = api.watch(&opts).await.expect("watch");
        while let Some(event) = events.next().await {
            match event.expect("watch event") {
                WatchEvent::Added(k) | WatchEvent::Modified(k) if done(&to_json(&k)) => {
                    return Some(k);
                }
                WatchEvent::Deleted(_) => return None,
                _ => {}
            }
        }
        panic!("the watch of {name} ended");
    };
    tokio::time::timeout(DEADLINE, fut)
        .await
        .unwrap_or_else(|_| panic!("{name}: not done within {DEADLINE:?}"))
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

#[tokio::test(flavor = "multi_thread")]
async fn pod_ephemeral_containers_and_resize() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods = Clientset::new(env.client(Identity::Admin))
        .core_v1()
        .pods(ns.name());
    let resources = json!({"requests": {"cpu": "100m", "memory": "64Mi"},
                           "limits": {"cpu": "100m", "memory": "64Mi"}});
    pods.create(
        &from_json(
            json!({"metadata": {"name": "debuggee"}, "spec": {"containers": [
            {"name": "app", "image": "busybox", "command": ["sleep", "3600"],
             "resources": resources}]}}),
        ),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    let running = wait_for(&pods, "debuggee", ready).await.expect("the pod");

    // UpdateEphemeralContainers: the new container comes back in the Pod; the label sent
    // beside it is not written (the subresource takes only spec.ephemeralContainers).
    let mut body = to_json(&running);
    body["metadata"]["labels"] = json!({"sent": "beside"});
    body["spec"]["ephemeralContainers"] = json!([{"name": "debugger", "image": "busybox",
        "targetContainerName": "app", "terminationMessagePolicy": "File"}]);
    let updated = pods
        .update_ephemeral_containers("debuggee", &from_json(body), &UpdateOptions::default())
        .await
        .unwrap();
    let updated = to_json(&updated);
    assert_eq!(
        updated["spec"]["ephemeralContainers"][0]["name"],
        "debugger"
    );
    assert_eq!(
        updated["spec"]["ephemeralContainers"][0]["targetContainerName"],
        "app"
    );
    assert!(updated["metadata"]["labels"]["sent"].is_null(), "{updated}");
    let stored = to_json(&pods.get("debuggee", &GetOptions::default()).await.unwrap());
    assert_eq!(stored["spec"]["ephemeralContainers"][0]["name"], "debugger");
    // An ephemeral container cannot be removed.
    let mut removed = updated.clone();
    removed["spec"]["ephemeralContainers"] = json!([]);
    let err = pods
        .update_ephemeral_containers("debuggee", &from_json(removed), &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    // The name in the URL must be the body's.
    let err = pods
        .update_ephemeral_containers("other", &from_json(updated), &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_bad_request() || err.is_not_found(), "{err:?}");

    // UpdateResize, on a pod no scheduler binds: the server refuses a resize on a node that
    // does not declare support for it, as testenv's simulated nodes do not. The container's
    // new resources come back in the Pod's spec.
    pods.create(
        &from_json(json!({"metadata": {"name": "resized"}, "spec": {
            "schedulerName": "kclient-test-binds-it",
            "containers": [{"name": "app", "image": "busybox", "resources": resources}]}})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    let mut body = to_json(&pods.get("resized", &GetOptions::default()).await.unwrap());
    body["spec"]["containers"][0]["resources"] = json!({
        "requests": {"cpu": "200m", "memory": "64Mi"},
        "limits": {"cpu": "200m", "memory": "64Mi"}});
    let resized = to_json(
        &pods
            .update_resize("resized", &from_json(body), &UpdateOptions::default())
            .await
            .unwrap(),
    );
    assert_eq!(
        resized["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "200m"
    );
    assert_eq!(
        resized["spec"]["containers"][0]["resources"]["limits"]["cpu"],
        "200m"
    );
    // A resize that would make the Guaranteed pod Burstable is refused.
    let mut body = resized;
    body["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("400m");
    let err = pods
        .update_resize("resized", &from_json(body), &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
}

/// A PEM certificate request for `CN=kclient-test` (P-256), base64 as the API holds it.
const CSR_PEM_BASE64: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUU1Ia0NBUUF3RnpFVk1CTUdBMVVFQXd3TWEyTnNhV1Z1ZEMxMFpYTjBNRmt3RXdZSEtvWkl6ajBDQVFZSQpLb1pJemowREFRY0RRZ0FFalBhdDlibzBQdHBrTnA2VWxYdVYzZnZZeWhyTE53TkpKR0ZTYWU0Nm1HSm5wV2htClo4enJQWEQ2bHhyU2xza2dqeWNPbnh5cEo2L0lLUXhXM04yeHFhQUFNQW9HQ0NxR1NNNDlCQU1DQTBjQU1FUUMKSUN5RWJJL0VBaTRTU09NRnhuY2JCV2tCQzgzUFNSR2x2ZGJ0RkdTMmUwOUJBaUJENkhQRFVYZzF6RXNYZjZlVwpQdWNVQXR0dnV6TkJFM085UWl4WnorSUJVZz09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

#[tokio::test(flavor = "multi_thread")]
async fn certificate_signing_request_approval() {
    let env = TestEnv::connect().await;
    // A cluster-scoped name no other test run shares: the test namespace's.
    let ns = env.namespace().await;
    let name = format!("{}-csr", ns.name());
    let csrs = Clientset::new(env.client(Identity::Admin))
        .certificates_v1()
        .certificate_signing_requests();
    let csr: CertificateSigningRequest = from_json(json!({"metadata": {"name": name},
        "spec": {"request": CSR_PEM_BASE64, "signerName": "kclient.test/signer",
                 "usages": ["client auth"]}}));
    let created = csrs.create(&csr, &CreateOptions::default()).await.unwrap();

    let mut body = to_json(&created);
    body["status"]["conditions"] = json!([{"type": "Approved", "status": "True",
        "reason": "KclientTest", "message": "approved by the test"}]);
    // Only the conditions are taken: a usage changed beside them is not written.
    body["spec"]["usages"] = json!(["server auth"]);
    let approved = to_json(
        &csrs
            .update_approval(&name, &from_json(body), &UpdateOptions::default())
            .await
            .unwrap(),
    );
    let conditions = approved["status"]["conditions"].as_array().unwrap();
    assert!(
        conditions.iter().any(|c| c["type"] == "Approved"
            && c["status"] == "True"
            && c["reason"] == "KclientTest"),
        "{approved}"
    );
    assert_eq!(approved["spec"]["usages"], json!(["client auth"]));
    let stored = to_json(&csrs.get(&name, &GetOptions::default()).await.unwrap());
    assert_eq!(stored["status"]["conditions"][0]["type"], "Approved");

    // Approved and Denied together are refused.
    let mut both = stored;
    both["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Denied", "status": "True", "reason": "Both"}));
    let err = csrs
        .update_approval(&name, &from_json(both), &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    csrs.delete(&name, &DeleteOptions::default()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn namespace_finalize() {
    let env = TestEnv::connect().await;
    let scratch = env.namespace().await;
    let namespaces = Clientset::new(env.client(Identity::Admin))
        .core_v1()
        .namespaces();
    // A namespace of this test's own, held by a spec finalizer no controller removes.
    let name = format!("{}-fin", scratch.name());
    let created = namespaces
        .create(
            &from_json::<Namespace>(json!({"metadata": {"name": name},
                "spec": {"finalizers": ["kclient.test/hold"]}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        to_json(&created)["spec"]["finalizers"],
        json!(["kclient.test/hold", "kubernetes"])
    );
    namespaces
        .delete(&name, &DeleteOptions::default())
        .await
        .unwrap();
    // The namespace controller empties it and removes its own finalizer; ours holds it.
    let held = wait_for(&namespaces, &name, |ns| {
        ns["spec"]["finalizers"] == json!(["kclient.test/hold"])
    })
    .await
    .expect("the namespace is held by its finalizer");
    assert_eq!(to_json(&held)["status"]["phase"], "Terminating");

    let mut body = to_json(&held);
    body["spec"]["finalizers"] = json!([]);
    // The status is the stored one, whatever the body says.
    body["status"]["phase"] = json!("Active");
    let finalized = to_json(
        &namespaces
            .finalize(&from_json(body), &UpdateOptions::default())
            .await
            .unwrap(),
    );
    assert!(
        finalized["spec"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{finalized}"
    );
    assert!(
        finalized["metadata"]["labels"]["sent"].is_null(),
        "{finalized}"
    );
    // With no finalizer left, the namespace controller deletes it.
    assert!(
        wait_for(&namespaces, &name, |_| false).await.is_none(),
        "the finalized namespace goes away"
    );
}

/// This machine's address on its default route: what the API server may proxy to (it
/// refuses loopback addresses).
fn routable_address() -> std::net::IpAddr {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").expect("bind a UDP socket");
    // Connecting a UDP socket sends nothing; it only picks the route and so the address.
    socket
        .connect("192.0.2.1:9")
        .or_else(|_| socket.connect("8.8.8.8:53"))
        .expect("the proxy tests need a non-loopback address with a route");
    let ip = socket.local_addr().expect("local address").ip();
    assert!(
        !ip.is_loopback() && !ip.is_unspecified(),
        "the proxy tests need a non-loopback address, found {ip}"
    );
    ip
}

/// Serves one HTTP request on `listener` and answers with its request line.
async fn echo_request_line(listener: tokio::net::TcpListener) {
    let (mut conn, _) = listener.accept().await.expect("accept");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut chunk).await.expect("read the request");
        assert!(n > 0, "the request ended early");
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf);
    let line = text.lines().next().unwrap_or_default().to_owned();
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{line}",
        line.len()
    );
    conn.write_all(response.as_bytes()).await.expect("answer");
    conn.shutdown().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_get_through_a_pod_and_a_service() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ip = routable_address();

    // A pod on a node no simulator runs (so nothing rewrites its status), whose IP is this
    // machine's: the API server proxies to it.
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.name());
    pods.create(
        &from_json(
            json!({"metadata": {"name": "web"}, "spec": {"nodeName": "kclient-no-node",
            "containers": [{"name": "app", "image": "busybox"}]}}),
        ),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    let mut pod = to_json(&pods.get("web", &GetOptions::default()).await.unwrap());
    pod["status"]["phase"] = json!("Running");
    pod["status"]["podIP"] = json!(ip.to_string());
    pod["status"]["podIPs"] = json!([{"ip": ip.to_string()}]);
    pods.update_status(&from_json(pod), &UpdateOptions::default())
        .await
        .unwrap();

    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = tokio::spawn(echo_request_line(listener));
    let body = pods
        .proxy_get(
            "http",
            "web",
            &port.to_string(),
            "/some/path",
            &[("q", "a b")],
        )
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"GET /some/path?q=a+b HTTP/1.1");
    served.await.unwrap();

    // A service without a selector, whose endpoint is the same address.
    let services: Api<Service> = Api::namespaced(client.clone(), ns.name());
    services
        .create(
            &from_json(json!({"metadata": {"name": "web"},
                "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // The server proxies to an address of the service's Endpoints (v1, not EndpointSlices)
    // whose target is a Pod with that IP.
    let endpoints: Api<Endpoints> = Api::namespaced(client, ns.name());
    endpoints
        .create(
            &from_json(json!({"metadata": {"name": "web"}, "subsets": [{
                "addresses": [{"ip": ip.to_string(),
                    "targetRef": {"kind": "Pod", "name": "web", "namespace": ns.name()}}],
                "ports": [{"name": "http", "port": port}]}]})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let served = tokio::spawn(echo_request_line(listener));
    // No scheme; the port by its name.
    let body = services
        .proxy_get("", "web", "http", "healthz", &[])
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"GET /healthz HTTP/1.1");
    served.await.unwrap();

    // A name is required before anything is sent.
    let Err(err) = services.proxy_get("", "", "", "", &[]) else {
        panic!("a request without a name");
    };
    assert!(err.is_invalid_request(), "{err:?}");
}
