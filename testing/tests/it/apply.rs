//! Server-side apply on the fake and on the real kube-apiserver alike: keyed lists (a
//! built-in kind's containers and env, a custom resource's lists as its CRD's schema keys
//! them) merge and are owned item by item under their keys, so an item its manager stops
//! applying goes unless another manager owns it too; a field another manager owns (through
//! an apply or an update) and the apply changes is a conflict, worded as the server words
//! it, unless the apply forces, which takes the field; a configuration whose keyed lists
//! cannot be keyed is refused as the server refuses it.

use kclient_rest::Client;
use kclient_testenv::TestEnv;
use serde_json::{Value, json};

use crate::differences::both;

/// The Deployment `web` that `manager` applies with `containers`.
async fn apply(client: &Client, ns: &str, manager: &str, spec: Value) -> Value {
    client
        .patch(kclient_apimachinery::PatchType::Apply)
        .abs_path(&format!("/apis/apps/v1/namespaces/{ns}/deployments/web"))
        .param("fieldManager", manager)
        .json(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": spec}))
        .send::<Value>()
        .await
        .unwrap_or_else(|e| panic!("{manager} applying: {e}"))
}

/// The names of the Deployment's containers, each with the names of its env entries.
fn containers(deployment: &Value) -> Vec<(String, Vec<String>)> {
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|item| item["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                names(&c["env"]),
            )
        })
        .collect()
}

fn named(expected: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    expected
        .iter()
        .map(|(name, env)| {
            (
                (*name).to_owned(),
                env.iter().map(|e| (*e).to_owned()).collect(),
            )
        })
        .collect()
}

/// `owner` applies an app container (env A and B, a port) and a sidecar, `helper` applies
/// the same sidecar; `owner` then stops applying the sidecar and env B: B goes, the sidecar
/// stays while `helper` owns it, and goes when `helper` stops applying it too.
#[tokio::test(flavor = "multi_thread")]
async fn an_item_dropped_from_a_configuration_goes_unless_another_manager_owns_it() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    let template = |containers: Value| {
        json!({
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers},
            },
        })
    };
    let app = |env: Value| {
        json!({"name": "app", "image": "nginx:1.27", "env": env,
            "ports": [{"containerPort": 80}]})
    };
    let sidecar = json!({"name": "sidecar", "image": "busybox:1.36"});
    let both_env = json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]);

    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        apply(
            client,
            ns,
            "owner",
            template(json!([app(both_env.clone()), sidecar])),
        )
        .await;
        apply(
            client,
            ns,
            "helper",
            json!({"template": {"spec": {"containers": [sidecar]}}}),
        )
        .await;
        let dropped = apply(
            client,
            ns,
            "owner",
            template(json!([app(json!([{"name": "A", "value": "1"}]))])),
        )
        .await;
        assert_eq!(
            containers(&dropped),
            named(&[("app", &["A"]), ("sidecar", &[])]),
            "{which}: the sidecar stays while the helper owns it"
        );
        let released = apply(client, ns, "helper", json!({"replicas": 1})).await;
        assert_eq!(
            containers(&released),
            named(&[("app", &["A"])]),
            "{which}: the sidecar goes when no manager applies it"
        );
    }
}

/// The ConfigMap `settings` that `manager` applies with `data`, forced or not.
async fn apply_cm(
    client: &Client,
    ns: &str,
    manager: &str,
    data: Value,
    force: bool,
) -> Result<Value, kclient_apimachinery::Error> {
    let mut request = client
        .patch(kclient_apimachinery::PatchType::Apply)
        .abs_path(&format!("/api/v1/namespaces/{ns}/configmaps/settings"))
        .param("fieldManager", manager);
    if force {
        request = request.param("force", "true");
    }
    request
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings"}, "data": data}))
        .send::<Value>()
        .await
}

/// The refused apply's message and its causes (reason, message, field).
fn refusal(error: &kclient_apimachinery::Error) -> (String, Vec<(String, String, String)>) {
    let status = error.status().expect("a Status");
    assert_eq!(status.code, 409, "{error}");
    assert_eq!(status.reason, "Conflict", "{error}");
    let causes = status
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| (c.cause_type.clone(), c.message.clone(), c.field.clone()))
                .collect()
        })
        .unwrap_or_default();
    (status.message.clone(), causes)
}

/// Whether `manager`'s entry (of `operation`) owns `data.<key>`.
fn owns_key(cm: &Value, manager: &str, operation: &str, key: &str) -> bool {
    cm["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| {
            e["manager"] == manager
                && e["operation"] == operation
                && e["fieldsV1"]["f:data"].get(format!("f:{key}")).is_some()
        })
}

/// Conflicts with an applier and with an updater, in the server's words; the same value
/// applied by two managers is shared without conflict; a forced apply takes the field.
#[tokio::test(flavor = "multi_thread")]
async fn conflicts_and_force_are_the_servers() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    let mut refusals = Vec::new();
    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        apply_cm(client, ns, "mgr-a", json!({"a": "1", "b": "1"}), false)
            .await
            .unwrap_or_else(|e| panic!("{which}: {e}"));
        // Another value of two of mgr-a's fields: two conflicts.
        let two = apply_cm(
            client,
            ns,
            "mgr-b",
            json!({"a": "2", "b": "2", "c": "1"}),
            false,
        )
        .await
        .unwrap_err();
        // The same value: shared, no conflict.
        apply_cm(client, ns, "mgr-b", json!({"a": "1"}), false)
            .await
            .unwrap_or_else(|e| panic!("{which}: {e}"));
        // An update's field: a conflict with the updater, named with its apiVersion.
        let _: Value = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .abs_path(&format!("/api/v1/namespaces/{ns}/configmaps/settings"))
            .param("fieldManager", "editor")
            .body(r#"{"data":{"d":"1"}}"#)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: {e}"));
        let one = apply_cm(
            client,
            ns,
            "mgr-a",
            json!({"a": "1", "b": "1", "d": "2"}),
            false,
        )
        .await
        .unwrap_err();
        refusals.push((refusal(&two), refusal(&one)));
        // Forced, the field changes and is mgr-b's alone; mgr-a keeps what it still shares.
        let forced = apply_cm(client, ns, "mgr-b", json!({"a": "1", "b": "3"}), true)
            .await
            .unwrap_or_else(|e| panic!("{which}: {e}"));
        assert_eq!(forced["data"]["b"], "3", "{which}");
        assert!(
            owns_key(&forced, "mgr-b", "Apply", "b"),
            "{which}: {forced}"
        );
        assert!(
            !owns_key(&forced, "mgr-a", "Apply", "b"),
            "{which}: {forced}"
        );
        assert!(
            owns_key(&forced, "mgr-a", "Apply", "a"),
            "{which}: {forced}"
        );
        assert!(
            owns_key(&forced, "mgr-b", "Apply", "a"),
            "{which}: {forced}"
        );
        assert!(
            owns_key(&forced, "editor", "Update", "d"),
            "{which}: {forced}"
        );
    }
    assert_eq!(
        refusals[0], refusals[1],
        "the server's refusals, then the fake's"
    );
    let ((two, causes), _) = &refusals[0];
    assert_eq!(causes.len(), 2, "{two}");
}

/// Through the `scale` subresource as through the object: replicas another manager applied
/// are a conflict, in the server's words, until the autoscaler forces, which takes them.
#[tokio::test(flavor = "multi_thread")]
async fn a_scale_apply_conflicts_and_forces_as_on_the_server() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    let spec = json!({
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        },
    });
    let scale = |client: &Client, force: bool| {
        let mut request = client
            .patch(kclient_apimachinery::PatchType::Apply)
            .abs_path(&format!(
                "/apis/apps/v1/namespaces/{ns}/deployments/web/scale"
            ))
            .param("fieldManager", "autoscaler");
        if force {
            request = request.param("force", "true");
        }
        request
            .json(&json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "web"}, "spec": {"replicas": 3}}))
            .send::<Value>()
    };
    let mut refusals = Vec::new();
    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        apply(client, ns, "owner", spec.clone()).await;
        let refused = scale(client, false).await.unwrap_err();
        refusals.push(refusal(&refused));
        let forced = scale(client, true)
            .await
            .unwrap_or_else(|e| panic!("{which}: {e}"));
        assert_eq!(forced["spec"]["replicas"], 3, "{which}");
    }
    assert_eq!(
        refusals[0], refusals[1],
        "the server's refusal, then the fake's"
    );
    assert_eq!(refusals[0].1.len(), 1, "{:?}", refusals[0]);
}

/// What the server does not count as a conflict, on both: a field below a map that the
/// object's creator holds only as an empty map (every container's `resources: {}`), and a
/// field a status apply sends outside `status`, which the status endpoint ignores. And what
/// it does: a port's name that an update changed, keyed with its defaulted `protocol`.
#[tokio::test(flavor = "multi_thread")]
async fn empty_maps_ignored_fields_and_defaulted_keys_conflict_as_on_the_server() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let created = json!({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        },
    }});
    let container = |cpu: Option<&str>, port: &str| {
        let mut c = json!({"name": "app", "ports": [{"containerPort": 80, "name": port}]});
        if let Some(cpu) = cpu {
            c["resources"] = json!({"limits": {"cpu": cpu}});
        }
        json!({"template": {"spec": {"containers": [c]}}})
    };
    let mut refusals = Vec::new();
    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        let _: Value = client
            .post()
            .abs_path(&deployments)
            .param("fieldManager", "creator")
            .json(&created)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: creating: {e}"));
        // The creator holds `resources: {}` as a map only: the limit is the applier's.
        apply(client, ns, "tuner", container(Some("1"), "http")).await;
        let tuned = apply(client, ns, "tuner", container(Some("2"), "http")).await;
        let app = &tuned["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(app["resources"]["limits"]["cpu"], "2", "{which}");
        // An update renames the port: the name is the updater's, under the key with the
        // protocol the server defaulted.
        let _: Value = client
            .patch(kclient_apimachinery::PatchType::StrategicMerge)
            .abs_path(&format!("{deployments}/web"))
            .param("fieldManager", "renamer")
            .body(
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","ports":[{"containerPort":80,"name":"web"}]}]}}}}"#,
            )
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: renaming: {e}"));
        let refused = client
            .patch(kclient_apimachinery::PatchType::Apply)
            .abs_path(&format!("{deployments}/web"))
            .param("fieldManager", "tuner")
            .json(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web"}, "spec": container(Some("2"), "http")}))
            .send::<Value>()
            .await
            .unwrap_err();
        refusals.push(refusal(&refused));
        // Through `status`, the configuration's spec is ignored, not compared. (The status
        // it sends is a condition of its own, which testenv's deployment controller, writing
        // the others meanwhile, does not own.)
        let _: Value = client
            .patch(kclient_apimachinery::PatchType::Apply)
            .abs_path(&format!("{deployments}/web/status"))
            .param("fieldManager", "reporter")
            .json(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web"}, "spec": {"replicas": 7},
                "status": {"conditions": [{"type": "Example", "status": "True"}]}}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: a status apply: {e}"));
    }
    assert_eq!(
        refusals[0], refusals[1],
        "the server's refusal, then the fake's"
    );
    assert_eq!(
        refusals[0].1,
        [(
            "FieldManagerConflict".to_owned(),
            "conflict with \"renamer\" using apps/v1".to_owned(),
            ".spec.template.spec.containers[name=\"app\"].ports[containerPort=80,protocol=\"TCP\"].name"
                .to_owned()
        )]
    );
}

/// The CRD of `Probe`, whose schema keys its lists: `spec.ports` a list-map by port and
/// protocol, `spec.tags` a set, `status.conditions` a list-map by type; `spec.args` is
/// atomic (no list type). Created on both; returns once the server serves the resource.
async fn probe_crd(b: &crate::differences::Both) {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "probes.apply.kclient.dev"},
        "spec": {
            "group": "apply.kclient.dev", "scope": "Namespaced",
            "names": {"plural": "probes", "singular": "probe", "kind": "Probe",
                "listKind": "ProbeList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "required": ["port", "protocol"],
                                "properties": {"port": {"type": "integer"},
                                    "protocol": {"type": "string"},
                                    "name": {"type": "string"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}}}},
                    "status": {"type": "object", "properties": {
                        "conditions": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["type"],
                            "items": {"type": "object", "required": ["type"],
                                "properties": {"type": {"type": "string"},
                                    "status": {"type": "string"}}}}}}}}}}],
        },
    });
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    for client in [&b.real, &b.fake] {
        let created: Result<Value, _> = client.post().abs_path(crds).json(&crd).send().await;
        if let Err(e) = &created {
            assert!(e.is_already_exists(), "creating the CRD: {e}");
        }
    }
    // The server serves the new resource a moment after the CRD is created.
    let list = format!(
        "/apis/apply.kclient.dev/v1/namespaces/{}/probes",
        b.ns.name()
    );
    for _ in 0..100 {
        match b.real.get().abs_path(&list).send::<Value>().await {
            Ok(_) => return,
            Err(e) if e.is_not_found() => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!("listing probes on the server: {e}"),
        }
    }
    panic!("the server never served probes");
}

/// `manager` applies the Probe `p` (through `status` when `status` is set).
async fn apply_probe(
    client: &Client,
    ns: &str,
    manager: &str,
    body: Value,
    status: bool,
) -> Result<Value, kclient_apimachinery::Error> {
    let mut path = format!("/apis/apply.kclient.dev/v1/namespaces/{ns}/probes/p");
    if status {
        path.push_str("/status");
    }
    let mut config = json!({"apiVersion": "apply.kclient.dev/v1", "kind": "Probe",
        "metadata": {"name": "p"}});
    if let (Some(c), Some(b)) = (config.as_object_mut(), body.as_object()) {
        c.extend(b.clone());
    }
    client
        .patch(kclient_apimachinery::PatchType::Apply)
        .abs_path(&path)
        .param("fieldManager", manager)
        .json(&config)
        .send::<Value>()
        .await
}

/// What the test compares of a Probe: spec, status, and each manager's fields.
fn probe_state(probe: &Value) -> Value {
    let mut entries: Vec<Value> = probe["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            json!([
                e["manager"],
                e["operation"],
                e["subresource"],
                e["fieldsV1"]
            ])
        })
        .collect();
    entries.sort_by_key(|e| e.to_string());
    json!({"spec": probe["spec"], "status": probe["status"], "managedFields": entries})
}

/// A custom resource's keyed lists, as its CRD's schema keys them, on both: two managers'
/// port (list-map by two keys) and tag (set) items merge, in the server's order, each
/// owned under its key; a conflict names the item's field; an item its only manager stops
/// applying goes; two controllers' status conditions live side by side; a configuration
/// with duplicate keys is refused with the server's message.
#[tokio::test(flavor = "multi_thread")]
async fn a_custom_resources_keyed_lists_merge_and_are_owned_by_key_as_on_the_server() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    probe_crd(&b).await;
    let port = |port: u16, name: Option<&str>| {
        let mut p = json!({"port": port, "protocol": "TCP"});
        if let Some(name) = name {
            p["name"] = json!(name);
        }
        p
    };
    let condition = |t: &str, s: &str| json!({"type": t, "status": s});
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        let mut steps = Vec::new();
        let mut step = |result: Result<Value, kclient_apimachinery::Error>, what: &str| {
            let state = match result {
                Ok(probe) => probe_state(&probe),
                Err(e) => {
                    let status = e.status().unwrap_or_else(|| panic!("{which}: {what}: {e}"));
                    json!({"code": status.code, "message": status.message,
                        "causes": status.details.as_ref().map(|d| d.causes.iter()
                            .map(|c| json!([c.cause_type, c.message, c.field])).collect::<Vec<_>>())})
                }
            };
            steps.push(state.clone());
            state
        };
        let a = json!({"spec": {"ports": [port(80, Some("a")), port(81, None)],
            "tags": ["x", "y"], "args": ["1"]}});
        let state = step(apply_probe(client, ns, "mgr-a", a, false).await, "mgr-a");
        assert!(state.get("code").is_none(), "{which}: {state}");
        // Another item, a shared one with the same value, and a set item of its own.
        let b_config = json!({"spec": {"ports": [port(82, None), port(80, Some("a"))],
            "tags": ["z", "x"]}});
        let state = step(
            apply_probe(client, ns, "mgr-b", b_config, false).await,
            "mgr-b",
        );
        let ports: Vec<&Value> = state["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| &p["port"])
            .collect();
        assert_eq!(ports, [82, 80, 81], "{which}: {state}");
        assert_eq!(state["spec"]["tags"], json!(["z", "x", "y"]), "{which}");
        // Another value of mgr-a's port name: a conflict on that item's field.
        let renamed = json!({"spec": {"ports": [port(80, Some("b"))]}});
        let state = step(
            apply_probe(client, ns, "mgr-b", renamed, false).await,
            "rename",
        );
        assert_eq!(state["code"], 409, "{which}: {state}");
        // mgr-a stops applying port 81 and tag y, which only it owns: they go. Its args
        // list is atomic: replaced.
        let fewer = json!({"spec": {"ports": [port(80, Some("a"))], "tags": ["x"],
            "args": ["2"]}});
        let state = step(
            apply_probe(client, ns, "mgr-a", fewer, false).await,
            "fewer",
        );
        assert_eq!(state["spec"]["tags"], json!(["z", "x"]), "{which}");
        // Two controllers' conditions, side by side; one dropped goes.
        let ready = json!({"status": {"conditions": [condition("Ready", "True")]}});
        step(apply_probe(client, ns, "ready", ready, true).await, "ready");
        let synced = json!({"status": {"conditions": [condition("Synced", "False")]}});
        let state = step(
            apply_probe(client, ns, "synced", synced, true).await,
            "synced",
        );
        assert_eq!(
            state["status"]["conditions"],
            json!([condition("Ready", "True"), condition("Synced", "False")]),
            "{which}"
        );
        let none = json!({"status": {"conditions": []}});
        let state = step(
            apply_probe(client, ns, "ready", none, true).await,
            "unready",
        );
        assert_eq!(
            state["status"]["conditions"],
            json!([condition("Synced", "False")]),
            "{which}"
        );
        // Keys the server cannot build an item from: refused before anything is merged.
        // (One fault each: the server lists several in the order it walks a Go map.)
        let duplicate = json!({"spec": {"ports": [port(83, None), port(83, Some("c"))]}});
        let state = step(
            apply_probe(client, ns, "mgr-c", duplicate, false).await,
            "duplicate",
        );
        assert_eq!(state["code"], 500, "{which}: {state}");
        let keyless = json!({"spec": {"tags": ["q"], "ports": [{"name": "x"}]}});
        step(
            apply_probe(client, ns, "mgr-c", keyless, false).await,
            "keyless",
        );
        let null = json!({"status": {"conditions": [null]}});
        step(apply_probe(client, ns, "mgr-c", null, true).await, "null");
        let twice = json!({"spec": {"tags": ["q", "q"]}});
        step(
            apply_probe(client, ns, "mgr-c", twice, false).await,
            "twice",
        );
        seen.push(steps);
    }
    for (i, (real, fake)) in seen[0].iter().zip(&seen[1]).enumerate() {
        assert_eq!(real, fake, "step {i}: the server's result, then the fake's");
    }
}

/// An update's `managedFields` entry in a custom resource, on both: a create owns every
/// field, each object, list and map it created marked as owned itself (`"."`); a later
/// update owns what it changed, the item it added marked too, and takes it from the
/// others.
#[tokio::test(flavor = "multi_thread")]
async fn a_custom_resources_update_entries_are_the_servers() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    probe_crd(&b).await;
    let probes = format!("/apis/apply.kclient.dev/v1/namespaces/{ns}/probes");
    let mut seen = Vec::new();
    for (client, which) in [(&b.real, "server"), (&b.fake, "fake")] {
        let created: Value = client
            .post()
            .abs_path(&probes)
            .param("fieldManager", "creator")
            .json(
                &json!({"apiVersion": "apply.kclient.dev/v1", "kind": "Probe",
                "metadata": {"name": "u", "labels": {"app": "x"}},
                "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "args": ["1"]}}),
            )
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: creating: {e}"));
        let edited: Value = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .abs_path(&format!("{probes}/u"))
            .param("fieldManager", "editor")
            .body(
                r#"{"metadata":{"annotations":{"note":"n"}},"spec":{"args":["2"],"tags":["b"],"ports":[{"port":80,"protocol":"TCP"},{"port":90,"protocol":"TCP","name":"n"}]}}"#,
            )
            .send()
            .await
            .unwrap_or_else(|e| panic!("{which}: editing: {e}"));
        seen.push((probe_state(&created), probe_state(&edited)));
    }
    assert_eq!(seen[0], seen[1], "the server's entries, then the fake's");
    let editor = &seen[0].1["managedFields"][1];
    assert_eq!(editor[0], "editor");
    assert_eq!(
        editor[3]["f:spec"]["f:tags"],
        json!({".": {}, "v:\"b\"": {}})
    );
    assert_eq!(seen[0].0["managedFields"][0][3]["f:spec"]["."], json!({}));
}
