//! Server-side apply of a built-in kind's `listType=map` lists (containers, env), on the
//! fake and on the real kube-apiserver alike: items are owned one by one under their keys,
//! so an item its manager stops applying goes, unless another manager owns it too.

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
