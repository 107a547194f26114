//! Patches built here apply on the real server exactly as they apply locally: strategic merge
//! patches (with the generated Deployment patch metadata), JSON merge patches and JSON patches
//! (also where the server's json-patch library departs from RFC 6902).

use kclient_api::apps::v1::Deployment;
use kclient_apimachinery::meta::PatchMeta;
use kclient_apimachinery::{
    JsonPatch, JsonPatchOperation, PatchType, apply_json_patch, apply_merge_patch,
    apply_strategic_merge_patch, create_merge_patch, create_two_way_merge_patch,
};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::{configmaps, deployments};

/// The seed article's nginx Deployment with the given image.
fn nginx(image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{
                    "name": "nginx",
                    "image": image,
                    "ports": [{"containerPort": 80}]
                }]}
            }
        }
    })
}

/// Sends a strategic merge patch built from `original` to `modified` to the live object and
/// checks that the server's result matches applying the same patch locally.
async fn patch_and_compare(
    client: &Client,
    ns: &str,
    live: &Value,
    original: &Value,
    modified: &Value,
) -> Value {
    let schema = Deployment::patch_fields();
    let patch = create_two_way_merge_patch(original, modified, schema).expect("create patch");
    let server: Value = deployments(client.patch(PatchType::StrategicMerge), ns)
        .name("nginx-deployment")
        .json(&patch)
        .send()
        .await
        .unwrap_or_else(|e| panic!("patch {patch}: {e}"));
    let local = apply_strategic_merge_patch(live, &patch, schema).expect("apply patch locally");
    // The server also defaults what the patch added (imagePullPolicy, defaultMode, ...), so
    // the local result must be contained in the server's.
    assert_contained(&local["spec"], &server["spec"], "spec");
    assert_eq!(server["metadata"]["labels"], local["metadata"]["labels"]);
    server
}

/// Every value of `local` is in `server` at the same place; lists have the same length.
fn assert_contained(local: &Value, server: &Value, path: &str) {
    match (local, server) {
        (Value::Object(l), Value::Object(s)) => {
            for (k, v) in l {
                let Some(sv) = s.get(k) else {
                    panic!("{path}.{k} is {v} locally but absent on the server");
                };
                assert_contained(v, sv, &format!("{path}.{k}"));
            }
        }
        (Value::Array(l), Value::Array(s)) => {
            assert_eq!(l.len(), s.len(), "{path}: local {local} vs server {server}");
            for (i, (lv, sv)) in l.iter().zip(s).enumerate() {
                assert_contained(lv, sv, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(local, server, "{path}"),
    }
}

#[tokio::test]
async fn seed_deployment_image_update() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let original = nginx("nginx:1.7.9");
    let live: Value = deployments(client.post(), ns.name())
        .json(&original)
        .send()
        .await
        .unwrap();

    let modified = nginx("nginx:1.21.6");
    let patch =
        create_two_way_merge_patch(&original, &modified, Deployment::patch_fields()).unwrap();
    assert_eq!(
        patch,
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "nginx"}],
            "containers": [{"image": "nginx:1.21.6", "name": "nginx"}]
        }}}})
    );
    let server = patch_and_compare(&client, ns.name(), &live, &original, &modified).await;
    let container = &server["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.21.6");
    // Defaults the server filled in on create survive the patch.
    assert_eq!(container["ports"][0]["protocol"], "TCP");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
}

#[tokio::test]
async fn sidecar_injection_and_removal() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let original = nginx("nginx:1.21.6");
    let live: Value = deployments(client.post(), ns.name())
        .json(&original)
        .send()
        .await
        .unwrap();

    // The seed article's Istio initializer: add the Envoy container and its config volume,
    // plus an env var on the app container.
    let mut injected = original.clone();
    let pod_spec = &mut injected["spec"]["template"]["spec"];
    pod_spec["containers"][0]["env"] = json!([{"name": "MESH", "value": "on"}]);
    pod_spec["containers"].as_array_mut().unwrap().push(json!({
        "name": "envoy",
        "image": "lyft/envoy:845747b",
        "volumeMounts": [{"name": "envoy-conf", "mountPath": "/etc/envoy"}]
    }));
    pod_spec["volumes"] = json!([{"name": "envoy-conf", "configMap": {"name": "envoy"}}]);
    let live = patch_and_compare(&client, ns.name(), &live, &original, &injected).await;
    let containers = live["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    let names: Vec<_> = containers
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nginx", "envoy"]);

    // Take it out again: `$patch: delete` items and a removed field.
    let server = patch_and_compare(&client, ns.name(), &live, &injected, &original).await;
    let pod_spec = &server["spec"]["template"]["spec"];
    assert_eq!(pod_spec["containers"].as_array().unwrap().len(), 1);
    assert!(pod_spec["containers"][0].get("env").is_none());
    assert!(pod_spec.get("volumes").is_none());
}

#[tokio::test]
async fn strategy_switch_uses_retain_keys() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let mut original = nginx("nginx:1.21.6");
    original["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}});
    let live: Value = deployments(client.post(), ns.name())
        .json(&original)
        .send()
        .await
        .unwrap();

    let mut modified = original.clone();
    modified["spec"]["strategy"] = json!({"type": "Recreate"});
    let patch =
        create_two_way_merge_patch(&original, &modified, Deployment::patch_fields()).unwrap();
    assert_eq!(
        patch["spec"]["strategy"]["$retainKeys"],
        json!(["type"]),
        "the generated metadata marks strategy as retainKeys: {patch}"
    );
    let server = patch_and_compare(&client, ns.name(), &live, &original, &modified).await;
    assert_eq!(server["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[tokio::test]
async fn finalizers_merge_as_a_primitive_list() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let mut original = nginx("nginx:1.21.6");
    original["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b"]);
    let _: Value = deployments(client.post(), ns.name())
        .json(&original)
        .send()
        .await
        .unwrap();

    let mut modified = original.clone();
    modified["metadata"]["finalizers"] = json!(["example.com/b", "example.com/c"]);
    let patch =
        create_two_way_merge_patch(&original, &modified, Deployment::patch_fields()).unwrap();
    assert_eq!(
        patch["metadata"],
        json!({
            "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
            "$setElementOrder/finalizers": ["example.com/b", "example.com/c"],
            "finalizers": ["example.com/c"]
        })
    );
    let server: Value = deployments(client.patch(PatchType::StrategicMerge), ns.name())
        .name("nginx-deployment")
        .json(&patch)
        .send()
        .await
        .unwrap();
    assert_eq!(
        server["metadata"]["finalizers"],
        json!(["example.com/b", "example.com/c"])
    );

    // Clear them so the namespace can go away.
    let _: Value = deployments(client.patch(PatchType::Merge), ns.name())
        .name("nginx-deployment")
        .json(&json!({"metadata": {"finalizers": null}}))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn merge_patch_and_json_patch_match_local_application() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let original = json!({"metadata": {"name": "cm", "labels": {"a": "1", "b": "2"}}, "data": {"x": "1", "y": "2"}});
    let live: Value = configmaps(client.post(), ns.name())
        .json(&original)
        .send()
        .await
        .unwrap();

    let modified = json!({"metadata": {"name": "cm", "labels": {"a": "1", "c": "3"}}, "data": {"x": "changed"}});
    let patch = create_merge_patch(&original, &modified);
    let server: Value = configmaps(client.patch(PatchType::Merge), ns.name())
        .name("cm")
        .json(&patch)
        .send()
        .await
        .unwrap();
    let mut local = live.clone();
    apply_merge_patch(&mut local, &patch);
    assert_eq!(server["data"], local["data"]);
    assert_eq!(server["metadata"]["labels"], local["metadata"]["labels"]);
    assert_eq!(server["data"], modified["data"]);

    let ops = JsonPatch(vec![
        JsonPatchOperation::Test {
            path: "/data/x".into(),
            value: json!("changed"),
        },
        JsonPatchOperation::Add {
            path: "/data/z".into(),
            value: json!("new"),
        },
        JsonPatchOperation::Remove {
            path: "/metadata/labels/c".into(),
        },
        JsonPatchOperation::Copy {
            from: "/data/x".into(),
            path: "/data/w".into(),
        },
    ]);
    let server2: Value = configmaps(client.patch(PatchType::Json), ns.name())
        .name("cm")
        .json(&ops)
        .send()
        .await
        .unwrap();
    let mut local2 = server.clone();
    ops.apply(&mut local2).unwrap();
    assert_eq!(server2["data"], local2["data"]);
    assert_eq!(server2["metadata"]["labels"], local2["metadata"]["labels"]);

    // A failing `test` operation fails the whole patch on the server as it does here.
    let failing = JsonPatch(vec![JsonPatchOperation::Test {
        path: "/data/x".into(),
        value: json!("nope"),
    }]);
    assert!(failing.apply(&mut local2.clone()).is_err());
    let err = configmaps(client.patch(PatchType::Json), ns.name())
        .name("cm")
        .json(&failing)
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(
        err.is_invalid() || err.is_bad_request() || err.is_conflict(),
        "{err:?}"
    );
}

/// `apply_json_patch` gives what the server gives, where the server's json-patch library
/// departs from RFC 6902 too: each patch goes to the server and is applied locally to the
/// object the server held before it; a patch the server takes gives the same spec and labels,
/// one it refuses with 422 fails an operation locally, one it refuses with 400 is malformed.
#[tokio::test]
async fn json_patch_applies_locally_as_on_the_server() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    // With an annotation from the start: the Deployment controller adds its own meanwhile,
    // and the local copy must have the map already.
    let mut deployment = nginx("nginx:1");
    deployment["metadata"]["annotations"] = json!({"seed": "1"});
    let mut live: Value = deployments(client.post(), ns.name())
        .json(&deployment)
        .send()
        .await
        .unwrap();
    let args = "/spec/template/spec/containers/0/args";
    let patches = [
        json!([{"op": "add", "path": args, "value": ["a", "b"]}]),
        // A negative index counts from the end.
        json!([{"op": "add", "path": format!("{args}/-1"), "value": "z"}]),
        json!([{"op": "remove", "path": format!("{args}/-1")}]),
        // Indexes are read as Go's strconv.Atoi reads them.
        json!([{"op": "add", "path": format!("{args}/01"), "value": "y"}]),
        // `replace` of a missing member adds it.
        json!([{"op": "replace", "path": "/metadata/labels/new", "value": "x"}]),
        // `test` of a missing member against null holds.
        json!([{"op": "test", "path": "/metadata/labels/missing", "value": null},
            {"op": "add", "path": "/metadata/labels/tested", "value": "1"}]),
        json!([{"op": "test", "path": "/spec/replicas", "value": 3}]),
        // The server compares numbers by their JSON text: `3.0` is not `3`.
        json!([{"op": "test", "path": "/spec/replicas", "value": 3.0}]),
        json!([{"op": "test", "path": "/spec/replicas", "value": 3e0}]),
        // The server writes `<`, `>`, `&`, U+2028 and U+2029 escaped (Go's HTML-safe JSON)
        // and compares that text with the patch's: a `test` of such a string fails.
        json!([{"op": "add", "path": "/metadata/annotations/html", "value": "x<y"},
            {"op": "add", "path": "/metadata/annotations/amp", "value": "a&b"},
            {"op": "add", "path": "/metadata/annotations/ls", "value": "a\u{2028}b"},
            {"op": "add", "path": "/metadata/annotations/plain", "value": "é \"q\" \\ \n"},
            {"op": "add", "path": format!("{args}/-"), "value": "x>y"}]),
        json!([{"op": "test", "path": "/metadata/annotations/plain", "value": "é \"q\" \\ \n"}]),
        json!([{"op": "test", "path": "/metadata/annotations/html", "value": "x<y"}]),
        json!([{"op": "test", "path": "/metadata/annotations/amp", "value": "a&b"}]),
        json!([{"op": "test", "path": "/metadata/annotations/ls", "value": "a\u{2028}b"}]),
        json!([{"op": "test", "path": args, "value": ["a", "y", "b", "x>y"]}]),
        json!([{"op": "test", "path": "/metadata/labels/missing", "value": "1"}]),
        json!([{"op": "test", "path": "/metadata/labels/app", "value": "other"}]),
        json!([{"op": "replace", "path": format!("{args}/9"), "value": "w"}]),
        json!([{"op": "replace", "path": format!("{args}/-"), "value": "w"}]),
        json!([{"op": "remove", "path": "/metadata/labels/nope"}]),
        json!([{"op": "move", "from": "/metadata/labels/nope", "path": "/metadata/labels/m"}]),
        json!([{"op": "add", "path": "", "value": {}}]),
        json!([{"op": "bogus", "path": "/metadata/labels/app"}]),
        json!([{"op": "add", "value": "1"}]),
        json!({"op": "add", "path": "/metadata/labels/x", "value": "1"}),
        json!([1]),
    ];
    for patch in patches {
        let local = apply_json_patch(&live, &patch);
        let server = deployments(client.patch(PatchType::Json), ns.name())
            .name("nginx-deployment")
            .json(&patch)
            .send::<Value>()
            .await;
        match (server, local) {
            (Ok(server), Ok(local)) => {
                assert_eq!(server["spec"], local["spec"], "{patch}");
                assert_eq!(
                    server["metadata"]["labels"], local["metadata"]["labels"],
                    "{patch}"
                );
                // Only the annotations set here: the Deployment controller writes its own.
                for key in ["html", "amp", "ls", "plain"] {
                    assert_eq!(
                        server["metadata"]["annotations"][key],
                        local["metadata"]["annotations"][key],
                        "{patch}"
                    );
                }
                live = server;
            }
            (Err(server), Err(local)) => {
                assert_eq!(
                    server.is_invalid(),
                    local.is_operation_failed(),
                    "{patch}: {server:?} / {local}"
                );
                assert_eq!(
                    server.is_bad_request(),
                    local.is_malformed(),
                    "{patch}: {server:?} / {local}"
                );
            }
            (server, local) => panic!("{patch}: the server gives {server:?}, locally {local:?}"),
        }
    }
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["a", "y", "b", "x>y"])
    );
    assert_eq!(live["metadata"]["annotations"]["html"], "x<y");
    assert_eq!(live["metadata"]["labels"]["new"], "x");
    assert_eq!(live["metadata"]["labels"]["tested"], "1");
}
