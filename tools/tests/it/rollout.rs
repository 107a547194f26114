//! `kclient_tools::rollout` against the local cluster, where the deployment controller,
//! the scheduler and a simulated node run pods: a Deployment is created, scaled and given a
//! new template, and each rollout is waited on until the Deployment is available, as
//! `kubectl rollout status` waits (and kubectl agrees it is done); a rollout whose pods can
//! never be scheduled ends with the progress-deadline error.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::apps::v1::Deployment;
use kclient_apimachinery::{CreateOptions, PatchOptions};
use kclient_clientset::{Api, Clientset, Patch};
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::rollout::{RolloutError, RolloutStatus, wait_for_deployment_rollout};
use kclient_tools::watch::UntilError;
use parking_lot::Mutex;
use serde_json::json;

/// The bound of each wait: a rollout here takes about a second when the machine is idle.
const BOUND: Duration = Duration::from_secs(120);

fn deployment(name: &str, replicas: i32, extra_spec: serde_json::Value) -> Deployment {
    let mut spec = json!({
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        },
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra_spec.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))
        .expect("valid Deployment JSON")
}

/// Waits for the rollout, returning the Deployment when done and every message seen.
async fn wait(deployments: &Api<Deployment>, name: &str) -> (Arc<Deployment>, Vec<String>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let done = wait_for_deployment_rollout(deployments, name, None, BOUND, move |s| {
        record.lock().push(s.message().to_owned())
    })
    .await
    .unwrap_or_else(|e| panic!("rollout of {name}: {e}"));
    let seen = seen.lock().clone();
    (done, seen)
}

/// What the status of a done Deployment must say: every replica updated and available, the
/// latest generation observed.
fn assert_rolled_out(d: &Deployment, replicas: i32) {
    let status = d.status.as_deref().expect("a status");
    assert_eq!(status.observed_generation, d.metadata.generation);
    assert_eq!(status.updated_replicas, Some(replicas), "{status:?}");
    assert_eq!(status.available_replicas, Some(replicas), "{status:?}");
    assert_eq!(status.replicas, Some(replicas), "{status:?}");
}

async fn kubectl_rollout_status(env: &TestEnv, namespace: &str, name: &str) -> String {
    let output = tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
        .args([
            "--namespace",
            namespace,
            "rollout",
            "status",
            "--timeout=60s",
        ])
        .arg(format!("deployment/{name}"))
        .kill_on_drop(true)
        .output()
        .await
        .expect("kubectl is installed and on PATH");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test(flavor = "multi_thread")]
async fn waits_for_create_scale_and_template_change() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments = Clientset::new(env.client(Identity::Admin))
        .apps_v1()
        .deployments(ns.name());
    deployments
        .create(&deployment("web", 2, json!({})), &CreateOptions::default())
        .await
        .expect("create the Deployment");
    let (done, seen) = wait(&deployments, "web").await;
    assert_rolled_out(&done, 2);
    assert_eq!(
        seen.last().map(String::as_str),
        Some("deployment \"web\" successfully rolled out"),
        "{seen:?}"
    );
    // Every message before the last was a waiting one.
    assert!(
        seen[..seen.len() - 1]
            .iter()
            .all(|m| m.starts_with("Waiting for deployment")),
        "{seen:?}"
    );

    // Scale up and change the template at once: a new ReplicaSet replaces the old one.
    let changed = deployments
        .patch(
            "web",
            &Patch::StrategicMerge(json!({"spec": {"replicas": 3, "template": {"metadata": {
                "annotations": {"kclient.dev/restartedAt": "now"}}}}})),
            &PatchOptions::default(),
        )
        .await
        .expect("patch the Deployment");
    let (done, seen) = wait(&deployments, "web").await;
    assert_rolled_out(&done, 3);
    assert!(
        done.metadata.generation >= changed.metadata.generation,
        "the wait ended on a state before the change: {:?} < {:?}",
        done.metadata.generation,
        changed.metadata.generation
    );
    assert_eq!(
        seen.last().map(String::as_str),
        Some("deployment \"web\" successfully rolled out")
    );
    // kubectl agrees.
    let kubectl = kubectl_rollout_status(&env, ns.name(), "web").await;
    assert_eq!(kubectl, "deployment \"web\" successfully rolled out\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollout_past_its_progress_deadline_is_an_error() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments = Clientset::new(env.client(Identity::Admin))
        .apps_v1()
        .deployments(ns.name());
    // No node has this label: the pod stays Pending, and after one second without progress
    // the deployment controller sets Progressing=False, reason ProgressDeadlineExceeded.
    let mut stuck = serde_json::to_value(deployment(
        "stuck",
        1,
        json!({"progressDeadlineSeconds": 1}),
    ))
    .expect("JSON");
    stuck["spec"]["template"]["spec"]["nodeSelector"] = json!({"kclient.dev/no-such-node": "x"});
    let stuck: Deployment = serde_json::from_value(stuck).expect("valid Deployment JSON");
    deployments
        .create(&stuck, &CreateOptions::default())
        .await
        .expect("create the Deployment");
    let statuses = Arc::new(Mutex::new(Vec::<RolloutStatus>::new()));
    let record = statuses.clone();
    let err = wait_for_deployment_rollout(&deployments, "stuck", None, BOUND, move |s| {
        record.lock().push(s.clone())
    })
    .await
    .unwrap_err();
    let UntilError::Condition(cause) = &err else {
        panic!("not the condition's error: {err:?}");
    };
    assert_eq!(
        cause.downcast_ref::<RolloutError>(),
        Some(&RolloutError::ProgressDeadlineExceeded {
            name: "stuck".into()
        }),
        "{err}"
    );
    assert!(statuses.lock().iter().all(|s| !s.is_done()));
}
