//! The eviction cases under PodDisruptionBudgets: which budget speaks for a Pod, when a
//! disruption is spent, when an unready Pod goes without one, dry runs and preconditions.
//! No disruption controller runs in testenv (nor in the fake) and node-1 is no simulated
//! node, so each case writes the budgets' and the Pods' status itself, as the disruption
//! controller and a kubelet would. Refusals are compared whole ([`Step::exact`]): their
//! message, causes and retry delay are what a caller reads.

use serde_json::{Value, json};

use super::{MERGE, OTHER_UID, PODS, TIME, case, evict, pod_path};
use crate::differential::{Case, Step, get, patch, post};

const PDBS: &str = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets";

/// A Pod labelled `app: {app}` on node-1, where nothing runs it.
fn app_pod(name: &str, app: &str) -> Step {
    post(
        PODS,
        json!({"metadata": {"name": name, "labels": {"app": app}},
            "spec": {"nodeName": "node-1", "schedulerName": "kclient-differential-none",
                "containers": [{"name": "app", "image": "app:1"}]}}),
    )
    .names()
}

/// Writes a Pod's status as its kubelet would: Running, Ready or not.
fn running(name: &str, ready: bool) -> Step {
    let ready = if ready { "True" } else { "False" };
    patch(
        &format!("{}/status", pod_path(name)),
        MERGE,
        json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": ready}]}}),
    )
    .names()
}

/// A budget of `minAvailable: 1` over the Pods labelled `app: {app}`, with `more` spec.
fn budget(name: &str, app: &str, more: Value) -> Step {
    let mut spec = json!({"minAvailable": 1, "selector": {"matchLabels": {"app": app}}});
    for (k, v) in more.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    post(PDBS, json!({"metadata": {"name": name}, "spec": spec})).names()
}

/// Writes a budget's status as the disruption controller would, observing generation 1.
fn budget_status(name: &str, allowed: i64, current: i64, desired: i64, expected: i64) -> Step {
    patch(
        &format!("{PDBS}/{name}/status"),
        MERGE,
        json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
            "currentHealthy": current, "desiredHealthy": desired, "expectedPods": expected}}),
    )
    .names()
}

fn get_budget(name: &str) -> Step {
    get(&format!("{PDBS}/{name}"))
}

/// An eviction whose whole answer is compared.
fn evict_exact(name: &str, delete_options: Option<Value>) -> Step {
    evict(name, delete_options).exact()
}

pub(super) fn eviction_budget_cases() -> Vec<Case> {
    vec![
        case(
            "eviction budgets: a Ready Pod spends a disruption the budget allows",
            vec![
                app_pod("a", "web"),
                running("a", true),
                app_pod("c", "web"),
                running("c", true),
                app_pod("d", "web"),
                running("d", true),
                budget("b", "web", json!({})),
                budget_status("b", 2, 3, 1, 3),
                evict_exact("a", None),
                get(&pod_path("a")).names(),
                // One disruption left: the budget's conditions stay as they were.
                get_budget("b"),
                evict_exact("c", None),
                // None left: the budget says so in its DisruptionAllowed condition.
                get_budget("b"),
                evict_exact("d", None),
                get(&pod_path("d")).names(),
            ],
        ),
        case(
            "eviction budgets: a refusal says why the budget allows no disruption",
            vec![
                app_pod("d", "web"),
                running("d", true),
                budget("b", "web", json!({})),
                budget_status("b", 0, 3, 1, 3),
                patch(
                    &format!("{PDBS}/b/status"),
                    MERGE,
                    json!({"status": {"conditions": [{"type": "DisruptionAllowed",
                        "status": "False", "reason": "Paused", "message": "on hold",
                        "observedGeneration": 1, "lastTransitionTime": TIME}]}}),
                )
                .names(),
                evict_exact("d", None),
                // A failed sync comes first: the counts are not to be trusted then.
                patch(
                    &format!("{PDBS}/b/status"),
                    MERGE,
                    json!({"status": {"currentHealthy": 0,
                        "conditions": [{"type": "DisruptionAllowed", "status": "False",
                        "reason": "SyncFailed", "message": "no scale subresource",
                        "observedGeneration": 1, "lastTransitionTime": TIME}]}}),
                )
                .names(),
                evict_exact("d", None),
                // Another reason gives way to the counts when there are too few healthy Pods.
                patch(
                    &format!("{PDBS}/b/status"),
                    MERGE,
                    json!({"status": {"conditions": [{"type": "DisruptionAllowed",
                        "status": "False", "reason": "Paused", "message": "on hold",
                        "observedGeneration": 1, "lastTransitionTime": TIME}]}}),
                )
                .names(),
                evict_exact("d", None),
                // A disruption spent keeps the False condition's time, and takes its reason.
                budget_status("b", 1, 3, 1, 3),
                evict_exact("d", None),
                get_budget("b"),
            ],
        ),
        case(
            "eviction budgets: an unready Pod goes without a disruption while the budget is healthy",
            vec![
                app_pod("a", "web"),
                running("a", false),
                app_pod("c", "web"),
                running("c", false),
                app_pod("d", "web"),
                running("d", true),
                budget("b", "web", json!({})),
                budget_status("b", 0, 1, 1, 3),
                evict_exact("a", None),
                get(&pod_path("a")).names(),
                get_budget("b"),
                // A Ready Pod needs a disruption.
                evict_exact("d", None),
                // Fewer healthy Pods than desired: the unready Pod needs one too.
                budget_status("b", 0, 0, 1, 3),
                evict_exact("c", None),
                // A budget that desires none is not healthy either.
                budget_status("b", 0, 0, 0, 3),
                evict_exact("c", None),
                get(&pod_path("c")).names(),
            ],
        ),
        case(
            "eviction budgets: a budget not yet observed stops Ready Pods only",
            vec![
                app_pod("a", "web"),
                running("a", false),
                app_pod("d", "web"),
                running("d", true),
                budget("b", "web", json!({})),
                budget_status("b", 1, 1, 1, 2),
                // A new generation the disruption controller has not seen.
                patch(
                    &format!("{PDBS}/b"),
                    MERGE,
                    json!({"spec": {"minAvailable": 2}}),
                )
                .names(),
                evict_exact("d", None),
                get(&pod_path("d")).names(),
                evict_exact("a", None),
                get_budget("b"),
            ],
        ),
        case(
            "eviction budgets: the unhealthy Pod eviction policy",
            vec![
                app_pod("a", "web"),
                running("a", false),
                app_pod("d", "web"),
                running("d", true),
                budget(
                    "b",
                    "web",
                    json!({"unhealthyPodEvictionPolicy": "AlwaysAllow"}),
                ),
                budget_status("b", 0, 0, 1, 2),
                evict_exact("d", None),
                // AlwaysAllow: an unready Pod goes however unhealthy the budget is.
                evict_exact("a", None),
                get(&pod_path("a")).names(),
                get_budget("b"),
                // IfHealthyBudget is the default's rule.
                app_pod("e", "db"),
                running("e", false),
                budget(
                    "x",
                    "db",
                    json!({"unhealthyPodEvictionPolicy": "IfHealthyBudget"}),
                ),
                budget_status("x", 0, 0, 1, 1),
                evict_exact("e", None),
                budget_status("x", 0, 1, 1, 1),
                evict_exact("e", None),
            ],
        ),
        case(
            "eviction budgets: which budgets select a Pod",
            vec![
                app_pod("a", "web"),
                running("a", true),
                budget("b1", "web", json!({})),
                budget_status("b1", 1, 2, 1, 2),
                budget("b2", "web", json!({})),
                budget_status("b2", 1, 2, 1, 2),
                // Two budgets: refused, and neither is spent.
                evict_exact("a", None),
                get(&pod_path("a")).names(),
                get_budget("b1"),
                // A Pending Pod goes whatever its budgets.
                app_pod("p", "web"),
                evict_exact("p", None),
                get(&pod_path("p")).names(),
                // A budget without a selector selects nothing.
                post(
                    PDBS,
                    json!({"metadata": {"name": "none"}, "spec": {"minAvailable": 1}}),
                )
                .names(),
                budget_status("none", 0, 0, 1, 0),
                app_pod("n", "other"),
                running("n", true),
                evict_exact("n", None),
                // An empty selector selects every Pod of the namespace.
                post(
                    PDBS,
                    json!({"metadata": {"name": "all"},
                        "spec": {"minAvailable": 1, "selector": {}}}),
                )
                .names(),
                budget_status("all", 0, 0, 1, 0),
                app_pod("m", "other"),
                running("m", true),
                evict_exact("m", None),
                get(&pod_path("m")).names(),
            ],
        ),
        case(
            "eviction budgets: a dry run changes neither the Pod nor the budget",
            vec![
                app_pod("a", "web"),
                running("a", true),
                budget("b", "web", json!({})),
                budget_status("b", 1, 2, 1, 2),
                evict_exact("a", Some(json!({"dryRun": ["All"]}))),
                get(&pod_path("a")).names(),
                get_budget("b"),
                evict_exact("a", None).q("dryRun", "All"),
                // The query's and the body's dry runs must agree.
                evict_exact("a", Some(json!({"dryRun": ["All", "All"]}))).q("dryRun", "All"),
                evict_exact("a", Some(json!({"dryRun": ["All"]}))).q("dryRun", "All"),
                get(&pod_path("a")).names(),
                get_budget("b"),
                // An unready Pod under a healthy budget.
                app_pod("u", "web"),
                running("u", false),
                evict_exact("u", Some(json!({"dryRun": ["All"]}))),
                get(&pod_path("u")).names(),
                // A Pod no budget selects.
                app_pod("t", "other"),
                evict_exact("t", Some(json!({"dryRun": ["All"]}))),
                get(&pod_path("t")).names(),
            ],
        ),
        case(
            "eviction budgets: preconditions",
            vec![
                app_pod("a", "web"),
                running("a", false),
                app_pod("d", "web"),
                running("d", true),
                budget("b", "web", json!({})),
                budget_status("b", 1, 1, 1, 2),
                // An unready Pod goes on the version the eviction read; a conflict then
                // reads as the budget's refusal, unless the caller named a version.
                evict_exact("a", Some(json!({"preconditions": {"uid": OTHER_UID}}))),
                evict_exact(
                    "a",
                    Some(json!({"preconditions": {"resourceVersion": "1"}})),
                ),
                get(&pod_path("a")).names(),
                // A Ready Pod spends the disruption before its preconditions fail.
                evict_exact("d", Some(json!({"preconditions": {"uid": OTHER_UID}}))),
                get(&pod_path("d")).names(),
                get_budget("b"),
                evict_exact("a", Some(json!({"preconditions": {"uid": "$uid:0"}}))),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "eviction budgets: options the eviction refuses",
            vec![
                app_pod("a", "web"),
                evict_exact(
                    "a",
                    Some(json!({"ignoreStoreReadErrorWithClusterBreakingPotential": true})),
                ),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "eviction budgets: too many evictions the disruption controller has not seen",
            vec![
                app_pod("a", "web"),
                running("a", true),
                budget("b", "web", json!({})),
                budget_status("b", 1, 2, 1, 2),
                patch(
                    &format!("{PDBS}/b/status"),
                    MERGE,
                    json!({"status": {"disruptedPods": (0..2001)
                        .map(|i| (format!("gone-{i}"), json!("2020-01-02T03:04:05Z")))
                        .collect::<serde_json::Map<String, Value>>()}}),
                )
                .names(),
                evict_exact("a", None),
                get(&pod_path("a")).names(),
            ],
        ),
    ]
}
