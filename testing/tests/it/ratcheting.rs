//! Validation ratcheting on the fake and on the real kube-apiserver alike: once a CRD's
//! schema is tightened, an update that leaves a value as it was passes, whatever the schema
//! now says of that value, while a value the update changes, and an object the update
//! changes whose required fields are missing, are refused; a set's repeated item that was
//! repeated before passes too, and an update that changes nothing passes whole. CEL rules
//! (with the `cel` feature) ratchet alike.

use std::time::Duration;

use kclient_apimachinery::PatchType;
use kclient_rest::Client;
use kclient_testenv::TestEnv;
use serde_json::{Value, json};

use crate::differences::both;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The CRD of group `group`, whose spec has these properties (and `required`).
fn crd(group: &str, spec: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("ratchets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "ratchets", "singular": "ratchet", "kind": "Ratchet",
                "listKind": "RatchetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "properties": {"spec": spec}}}}]}})
}

fn loose() -> Value {
    json!({"type": "object", "properties": {
        "min": {"type": "integer"}, "s": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "o": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        "names": {"type": "array", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "required": ["port"],
                "properties": {"port": {"type": "integer"}}}},
        "other": {"type": "integer"}}})
}

fn tight() -> Value {
    json!({"type": "object", "required": ["req"], "properties": {
        "min": {"type": "integer", "minimum": 10},
        "s": {"type": "string", "maxLength": 3,
            "x-kubernetes-validations": [{"rule": "self.size() < 3"}]},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "o": {"type": "object", "required": ["b"],
            "properties": {"a": {"type": "integer", "minimum": 3}, "b": {"type": "integer"}}},
        "names": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "string", "maxLength": 3}},
        "ports": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "required": ["port"],
                "properties": {"port": {"type": "integer"}}}},
        "other": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 50"}]},
        "req": {"type": "string"}}})
}

async fn send(
    client: &Client,
    verb: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, kclient_apimachinery::Error> {
    let request = match verb {
        "POST" => client.post(),
        "PUT" => client.put(),
        "PATCH" => client.patch(PatchType::Merge),
        _ => client.get(),
    };
    let request = request.abs_path(path);
    match body {
        Some(body) => request.json(&body).send().await,
        None => request.send().await,
    }
}

/// An outcome to compare: the object's spec, or the error's code and its causes, sorted
/// (the server lists the causes of several fields in the order it walks a Go map).
fn outcome(result: Result<Value, kclient_apimachinery::Error>) -> Value {
    match result {
        Ok(object) => json!({"spec": object["spec"]}),
        Err(e) => {
            let status = e.status().unwrap_or_else(|| panic!("a Status: {e}"));
            let mut causes: Vec<Value> = status
                .details
                .iter()
                .flat_map(|d| &d.causes)
                .map(|c| json!([c.field, c.cause_type, c.message]))
                .collect();
            causes.sort_by_key(Value::to_string);
            json!({"code": status.code, "causes": causes})
        }
    }
}

/// Gives the CRD `schema`, and on the real server waits until its handler serves it (a
/// probe object of spec `refused`, which the new schema refuses, is refused).
async fn tighten(
    client: &Client,
    (name, group, ns): (&str, &str, &str),
    (schema, refused): (Value, Value),
    real: bool,
) {
    let mut current = send(client, "GET", &format!("{CRDS}/{name}"), None)
        .await
        .expect("the CRD");
    current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = schema;
    send(client, "PUT", &format!("{CRDS}/{name}"), Some(current))
        .await
        .expect("tightening the CRD");
    if !real {
        return;
    }
    let path = format!("/apis/{group}/v1/namespaces/{ns}/ratchets");
    for _ in 0..300 {
        let probe = json!({"apiVersion": format!("{group}/v1"), "kind": "Ratchet",
            "metadata": {"name": "probe"}, "spec": refused.clone()});
        match send(client, "POST", &path, Some(probe)).await {
            Err(e) if e.is_invalid() => return,
            Ok(_) => {
                let _ = client
                    .delete()
                    .abs_path(&format!("{path}/probe"))
                    .send::<Value>()
                    .await;
            }
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not serve the tightened schema of {name} within 30 s");
}

async fn establish(client: &Client, group: &str, ns: &str) {
    let path = format!("/apis/{group}/v1/namespaces/{ns}/ratchets");
    for _ in 0..300 {
        if send(client, "GET", &path, None).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the CRD of {group} was not served within 30 s");
}

/// A schema's story on the server and in the fake alike: a CRD of a group of this run's
/// own (`{ns}.{label}.kclient.dev`, so that it is new on the server) created with the spec
/// schema `loose`; the object `r` created with `spec`; the CRD given `tight` (`probe`, a
/// spec it refuses, tells when the server serves it); each of `changes` applied to `r` as a
/// merge patch. The outcomes of the create and the changes, the server's then the fake's;
/// they must be equal.
async fn on_both(
    label: &str,
    (loose, spec): (Value, Value),
    (tight, probe): (Value, Value),
    changes: &[Value],
) -> Vec<Value> {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name();
    let group = format!("{ns}.{label}.kclient.dev");
    let name = format!("ratchets.{group}");
    let path = format!("/apis/{group}/v1/namespaces/{ns}/ratchets");
    let mut outcomes = Vec::new();
    for (client, real) in [(&b.real, true), (&b.fake, false)] {
        send(client, "POST", CRDS, Some(crd(&group, loose.clone())))
            .await
            .expect("creating the CRD");
        establish(client, &group, ns).await;
        let object = json!({"apiVersion": format!("{group}/v1"), "kind": "Ratchet",
            "metadata": {"name": "r"}, "spec": spec});
        let mut seen = vec![outcome(send(client, "POST", &path, Some(object)).await)];
        let schema = (tight.clone(), probe.clone());
        tighten(client, (&name, &group, ns), schema, real).await;
        for change in changes {
            let patch = Some(json!({"spec": change}));
            seen.push(outcome(
                send(client, "PATCH", &format!("{path}/r"), patch).await,
            ));
        }
        let _ = client
            .delete()
            .abs_path(&format!("{CRDS}/{name}"))
            .send::<Value>()
            .await;
        outcomes.push(seen);
    }
    let (real, fake) = (&outcomes[0], &outcomes[1]);
    for (i, (r, f)) in real.iter().zip(fake).enumerate() {
        assert_eq!(r, f, "step {i}: the server and the fake differ");
    }
    outcomes.swap_remove(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn values_left_as_they_were_pass_a_tightened_schema_on_both() {
    let spec = json!({"min": 5, "s": "abcdef", "tags": ["a", "a"], "o": {"a": 1},
        "names": ["toolong"], "ports": [{"port": 1}, {"port": 2}, {"port": 3}]});
    let mut changes = vec![
        json!({"other": 1}),
        json!({"min": 6}),
        json!({"s": "abcdefg"}),
        json!({"o": {"a": 2}}),
        json!({"tags": ["a", "a", "b"]}),
        json!({"tags": ["a", "b", "b"]}),
        // Pruned to nothing: the update changes no value, and passes whole.
        json!({"o": {"a": 1, "c": 1}}),
        // A set's items are not matched with the old ones: all are checked.
        json!({"names": ["toolong", "ok"]}),
        // A map list in another order is the same list: nothing changed.
        json!({"ports": [{"port": 3}, {"port": 2}, {"port": 1}]}),
        json!({"other": 1, "req": "x"}),
    ];
    if cfg!(feature = "cel") {
        // A CEL rule holds for a changed value; the unchanged `s` still passes its own.
        changes.push(json!({"other": 60}));
    }
    let probe = json!({"min": 5, "req": "x"});
    let real = on_both("ratchet", (loose(), spec), (tight(), probe), &changes).await;
    // The server refused the changed values and passed the rest (as read from it).
    assert_eq!(real[1]["code"], 422, "{}", real[1]);
    // A set that repeated an item before is not checked for repeats (nor is any other).
    assert!(!real[5].to_string().contains("Duplicate"), "{}", real[5]);
    assert!(!real[6].to_string().contains("Duplicate"), "{}", real[6]);
    assert_eq!(real[7]["spec"]["min"], 5, "{}", real[7]);
    assert!(real[8].to_string().contains("spec.names[0]"), "{}", real[8]);
    assert_eq!(real[9]["spec"]["ports"][0]["port"], 3, "{}", real[9]);
    assert_eq!(real[10]["spec"]["req"], "x", "{}", real[10]);
}

/// CEL rules ratchet too, but only their false results, and only for rules that do not
/// name `oldSelf`: a rule that fails to evaluate on a value left as it was still refuses.
#[cfg(feature = "cel")]
#[tokio::test(flavor = "multi_thread")]
async fn cel_rules_ratchet_their_false_results_only_on_both() {
    let loose = json!({"type": "object", "properties": {
        "a": {"type": "integer"}, "x": {"type": "integer"},
        "o": {"type": "object", "properties": {"b": {"type": "integer"}}}}});
    let rule = |schema: Value, rule: &str| {
        let mut schema = schema;
        schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
        schema
    };
    let tight = json!({"type": "object", "properties": {
        "a": rule(json!({"type": "integer"}), "self > 5"),
        "x": {"type": "integer"},
        "o": rule(json!({"type": "object", "properties": {"b": {"type": "integer"}}}),
            "self.b > 0")}});
    let changes = [
        // `o` is unchanged, but its rule fails to evaluate (no `b`): refused.
        json!({"x": 1}),
        // `o` changed and holds; `a` is unchanged, its rule false: passes.
        json!({"o": {"b": 1}}),
        // `a` changed: its rule holds it.
        json!({"a": 2}),
    ];
    let spec = json!({"a": 1, "o": {}});
    let real = on_both(
        "cel-ratchet",
        (loose, spec),
        (tight, json!({"a": 1})),
        &changes,
    )
    .await;
    assert!(real[1].to_string().contains("no such key"), "{}", real[1]);
    assert_eq!(real[2]["spec"]["a"], 1, "{}", real[2]);
    assert!(
        real[3].to_string().contains("failed rule: self > 5"),
        "{}",
        real[3]
    );
}
