//! Subresources: status and scale of a Deployment, pod binding, eviction and log, service
//! account token requests.

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{Binding, Pod, ServiceAccount};
use kclient_api::policy::v1::Eviction;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions, UpdateOptions,
};
use kclient_clientset::{Api, Clientset, LogOptions, LogStream, Patch};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::patch::deployment;
use crate::{from_json, to_json};

#[tokio::test(flavor = "multi_thread")]
async fn deployment_scale_and_status() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments = Clientset::new(env.client(Identity::Admin))
        .apps_v1()
        .deployments(ns.name());
    deployments
        .create(&deployment("web"), &CreateOptions::default())
        .await
        .unwrap();

    let scale = deployments
        .get_scale("web", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    let mut scale = scale;
    scale.spec = Some(from_json(json!({"replicas": 4})));
    // The deployment controller writes the Deployment meanwhile: without a resourceVersion the
    // scale update has no precondition (as `kubectl scale` without --resource-version).
    scale.metadata.resource_version = None;
    let scaled = deployments
        .update_scale("web", &scale, &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(scaled.spec.as_ref().and_then(|s| s.replicas), Some(4));
    let d = deployments
        .get("web", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(to_json(&d)["spec"]["replicas"], 4);
    let patched = deployments
        .patch_scale(
            "web",
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.as_ref().and_then(|s| s.replicas), Some(2));

    // update_status writes the status and ignores spec changes. The testenv's deployment
    // controller writes this status too: the update is unconditional (no resourceVersion), and
    // what is checked is the object each write returns.
    let mut current = to_json(
        &deployments
            .get("web", &GetOptions::default())
            .await
            .unwrap(),
    );
    current["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    current["status"] = json!({"observedGeneration": 1, "replicas": 2, "conditions": [
        {"type": "Available", "status": "False", "reason": "Testing", "message": "from a test"}]});
    current["spec"]["replicas"] = json!(9);
    let written = deployments
        .update_status(&from_json::<Deployment>(current), &UpdateOptions::default())
        .await
        .unwrap();
    let written = to_json(&written);
    assert_eq!(written["status"]["conditions"][0]["reason"], "Testing");
    assert_eq!(written["spec"]["replicas"], 2);
    let status = to_json(
        &deployments
            .get_status("web", &GetOptions::default())
            .await
            .unwrap(),
    );
    assert_eq!(status["metadata"]["name"], "web");
    assert!(status["status"].is_object(), "{status}");

    let patched = deployments
        .patch_status(
            "web",
            // Consistent whatever the controller wrote last (available <= ready <= replicas,
            // updated <= replicas).
            &Patch::Merge(
                json!({"status": {"replicas": 10, "readyReplicas": 1, "availableReplicas": 1}}),
            ),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(to_json(&patched)["status"]["readyReplicas"], 1);

    let applied = deployments
        .apply_status(
            &from_json::<Deployment>(json!({"metadata": {"name": "web"},
                "status": {"replicas": 10, "readyReplicas": 1, "availableReplicas": 1}})),
            &PatchOptions::apply("status-writer").force(true),
        )
        .await
        .unwrap();
    assert_eq!(to_json(&applied)["status"]["availableReplicas"], 1);
}

/// A pod that the testenv's kube-scheduler leaves alone (it schedules only pods of its own
/// scheduler name), so that the test binds it.
fn pod(name: &str) -> Pod {
    from_json(json!({"metadata": {"name": name},
        "spec": {"schedulerName": "kclient-test-binds-it", "containers": [{"name": "app", "image": "busybox"}]}}))
}

#[tokio::test(flavor = "multi_thread")]
async fn pod_binding_eviction_and_log() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());

    // Binding sets the node, as a scheduler does.
    pods.create(&pod("bound"), &CreateOptions::default())
        .await
        .unwrap();
    let binding: Binding = from_json(json!({"target": {"kind": "Node", "name": "node-a"}}));
    pods.bind("bound", &binding, &CreateOptions::default())
        .await
        .unwrap();
    let bound = pods.get("bound", &GetOptions::default()).await.unwrap();
    assert_eq!(to_json(&bound)["spec"]["nodeName"], "node-a");

    // No kubelet runs here: the log request reaches the server, which cannot find the node.
    let err = pods
        .log_text(
            "bound",
            &LogOptions::default().container("app").tail_lines(10),
        )
        .await
        .unwrap_err();
    assert!(err.is_api(), "the server answered: {err:?}");
    let err = pods
        .logs("bound", &LogOptions::default().follow(true))
        .await
        .unwrap_err();
    assert!(err.is_api(), "{err:?}");
    // A container the pod does not have is a bad request.
    let err = pods
        .log_text("bound", &LogOptions::default().container("nope"))
        .await
        .unwrap_err();
    assert!(err.is_bad_request(), "{err:?}");
    // The stream option reaches the server, which validates it before it looks for the node.
    // testenv's server runs with the PodLogsQuerySplitStreams gate off (its default), so it
    // refuses any stream; tailLines beside it keeps the request invalid with the gate on too.
    let err = pods
        .log_text(
            "bound",
            &LogOptions::default()
                .stream(LogStream::Stdout)
                .tail_lines(3),
        )
        .await
        .unwrap_err();
    assert!(
        err.is_invalid() && err.to_string().contains("stream"),
        "{err:?}"
    );

    // Evicting an unscheduled pod (no budget) deletes it.
    pods.create(&pod("evicted"), &CreateOptions::default())
        .await
        .unwrap();
    pods.evict("evicted", &Eviction::default()).await.unwrap();
    match pods.get("evicted", &GetOptions::default()).await {
        Err(e) => assert!(e.is_not_found(), "{e}"),
        Ok(p) => assert!(p.is_being_deleted()),
    }

    // A bound pod waits for its kubelet to confirm a graceful delete; with none, a grace
    // period of 0 removes it at once (as `kubectl delete --force --grace-period=0`).
    pods.delete("bound", &DeleteOptions::default().grace_period_seconds(0))
        .await
        .unwrap();
    let err = pods.get("bound", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn service_account_token_request() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(Identity::Admin), ns.name());
    sas.create(
        &from_json(json!({"metadata": {"name": "robot"}})),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    let request =
        from_json(json!({"spec": {"audiences": ["kclient-test"], "expirationSeconds": 600}}));
    let token = sas
        .create_token("robot", &request, &CreateOptions::default())
        .await
        .unwrap();
    let token = to_json(&token);
    let jwt = token["status"]["token"].as_str().unwrap();
    assert_eq!(jwt.split('.').count(), 3, "a JWT");
    assert!(token["status"]["expirationTimestamp"].is_string());
    assert_eq!(
        sas.get("robot", &GetOptions::default())
            .await
            .unwrap()
            .name(),
        "robot"
    );
}
