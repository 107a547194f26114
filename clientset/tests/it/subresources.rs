//! Subresources: status and scale of a Deployment, pod binding, eviction (by pod and through
//! `policy_v1().evictions`) and log, service account token requests.

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

/// An Eviction naming `name`, in `namespace` when given.
fn eviction(name: &str, namespace: Option<&str>) -> Eviction {
    let mut eviction = Eviction::default();
    eviction.set_name(name);
    if let Some(ns) = namespace {
        eviction.set_namespace(ns);
    }
    eviction
}

/// client-go's `PolicyV1().Evictions(ns).Evict(ctx, eviction)`: the pod the eviction names is
/// evicted, in the eviction's namespace or the client's; a budget that has not been observed
/// refuses a running pod's eviction with 429.
#[tokio::test(flavor = "multi_thread")]
async fn policy_v1_evictions_evict_the_pod_the_eviction_names() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let clientset = Clientset::new(env.client(Identity::Admin));
    let pods = clientset.core_v1().pods(ns.name());
    let evictions = clientset.policy_v1().evictions(ns.name());
    assert_eq!(evictions.namespace(), ns.name());

    // An unscheduled pod with no budget is deleted at once.
    pods.create(&pod("a"), &CreateOptions::default())
        .await
        .unwrap();
    evictions.evict(&eviction("a", None)).await.unwrap();
    let err = pods.get("a", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");

    // The eviction's own namespace serves a client made without one (as client-go's
    // `Evictions("")`), and agrees with a client made with it.
    for (client_ns, name) in [("", "b"), (ns.name(), "c")] {
        pods.create(&pod(name), &CreateOptions::default())
            .await
            .unwrap();
        clientset
            .policy_v1()
            .evictions(client_ns)
            .evict(&eviction(name, Some(ns.name())))
            .await
            .unwrap();
        let err = pods.get(name, &GetOptions::default()).await.unwrap_err();
        assert!(err.is_not_found(), "{name}: {err}");
    }

    // A pod that does not exist.
    let err = evictions.evict(&eviction("nope", None)).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");

    // Refused before sending: no name, no namespace at all, or two namespaces.
    pods.create(&pod("kept"), &CreateOptions::default())
        .await
        .unwrap();
    let err = evictions.evict(&Eviction::default()).await.unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    let err = clientset
        .policy_v1()
        .evictions("")
        .evict(&eviction("kept", None))
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    let err = evictions
        .evict(&eviction("kept", Some("elsewhere")))
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    pods.get("kept", &GetOptions::default()).await.unwrap();

    // A running, ready pod that a budget selects. No disruption controller runs here: the
    // test writes the budget's status as one would. (A budget not yet observed is refused
    // with a Retry-After of 10 s, which the client honours ten times, as client-go's does.)
    let mut guarded = pod("guarded");
    guarded.metadata.labels = Some(from_json(json!({"app": "guarded"})));
    pods.create(&guarded, &CreateOptions::default())
        .await
        .unwrap();
    // Left unscheduled (no pod GC or kubelet touches it): a Pending pod is evicted whatever
    // its budgets say, a Running one only as they allow.
    pods.patch_status(
        "guarded",
        &Patch::Merge(json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}})),
        &PatchOptions::default(),
    )
    .await
    .unwrap();
    let budgets = clientset.policy_v1().pod_disruption_budgets(ns.name());
    budgets
        .create(
            &from_json(json!({"metadata": {"name": "guard"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let budget_status = |allowed: i32| {
        Patch::Merge(
            json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
            "currentHealthy": 1 + allowed, "desiredHealthy": 1, "expectedPods": 1 + allowed}}),
        )
    };
    budgets
        .patch_status("guard", &budget_status(0), &PatchOptions::default())
        .await
        .unwrap();
    let err = evictions
        .evict(&eviction("guarded", None))
        .await
        .unwrap_err();
    assert!(err.is_too_many_requests(), "{err}");
    let kept = pods.get("guarded", &GetOptions::default()).await.unwrap();
    assert!(!kept.is_being_deleted());

    // Once the budget allows a disruption, the eviction spends it and the pod goes.
    budgets
        .patch_status("guard", &budget_status(1), &PatchOptions::default())
        .await
        .unwrap();
    evictions.evict(&eviction("guarded", None)).await.unwrap();
    let err = pods
        .get("guarded", &GetOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let spent = budgets.get("guard", &GetOptions::default()).await.unwrap();
    assert_eq!(to_json(&spent)["status"]["disruptionsAllowed"], 0);
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
