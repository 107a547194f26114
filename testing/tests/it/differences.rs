//! Where the fake deliberately differs from kube-apiserver (the list in the crate docs), each
//! difference shown against both: the same requests, the server's answer, the fake's answer.

use std::time::Duration;

use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use kclient_testing::Fake;
use serde_json::{Value, json};

/// A namespace on the real server and the same namespace in a new fake, with a client for
/// each.
pub(crate) struct Both {
    pub(crate) real: Client,
    pub(crate) fake: Client,
    pub(crate) ns: kclient_testenv::TestNamespace,
}

pub(crate) async fn both(env: &TestEnv) -> Both {
    crate::differential::ensure_case_nodes(&env.client(Identity::Admin)).await;
    let ns = env.namespace().await;
    let fake = Fake::new().client();
    let _: Value = fake
        .post()
        .abs_path("/api/v1/namespaces")
        .json(&json!({"metadata": {"name": ns.name()}}))
        .send()
        .await
        .expect("the namespace in the fake");
    Both {
        real: env.client(Identity::Admin),
        fake,
        ns,
    }
}

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn pods(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/pods")
}

async fn post(client: &Client, path: &str, body: Value) -> Value {
    client
        .post()
        .abs_path(path)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"))
}

/// 1. Defaults only for some kinds: a Pod gets the defaults testenv's server gives it
/// (testenv runs without the ServiceAccount admission plugin, and so does the fake: a
/// cluster with it also sets the ServiceAccount and mounts its token volume), while kinds
/// the fake does not default (a PersistentVolumeClaim here) are stored as written.
#[tokio::test(flavor = "multi_thread")]
async fn defaults_are_filled_for_some_kinds_only() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let pods = pods(b.ns.name());
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "schedulerName": "kclient-differential-none",
        "containers": [{"name": "app", "image": "app:1",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
    let real = post(&b.real, &pods, pod.clone()).await;
    let fake = post(&b.fake, &pods, pod).await;
    assert_eq!(real["spec"], fake["spec"]);
    assert_eq!(real["status"], fake["status"]);
    assert!(real["spec"]["serviceAccountName"].is_null(), "{real}");

    let claims = format!("/api/v1/namespaces/{}/persistentvolumeclaims", b.ns.name());
    let claim = json!({"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let real = post(&b.real, &claims, claim.clone()).await;
    let fake = post(&b.fake, &claims, claim).await;
    assert_eq!(real["spec"]["volumeMode"], "Filesystem");
    assert!(fake["spec"]["volumeMode"].is_null(), "{fake}");
}

/// 1. A custom resource is validated by its CRD's schema on both, but for its CEL rules
/// (`x-kubernetes-validations`): without the `cel` feature the fake does not evaluate them;
/// with it, it does, with every library the server declares, but it does not type-check
/// the rules when the CRD is written, as the server does.
#[tokio::test(flavor = "multi_thread")]
async fn cel_rules_are_checked_only_in_part_in_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    crate::differential::ensure_test_crds(&b.real).await;
    for name in ["gauges", "libraries"] {
        let crd = crate::differential::test_crds()
            .into_iter()
            .find(|crd| crd["metadata"]["name"] == format!("{name}.diff.kclient.dev"))
            .expect("the test CRD");
        post(
            &b.fake,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        )
        .await;
    }
    let path = format!(
        "/apis/diff.kclient.dev/v1/namespaces/{}/gauges",
        b.ns.name()
    );
    let gauge = |spec: Value| {
        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gauge",
            "metadata": {"name": "g"}, "spec": spec})
    };
    // A bound the schema sets is refused by both.
    for client in [&b.real, &b.fake] {
        let refused: Result<Value, _> = client
            .post()
            .abs_path(&path)
            .json(&gauge(json!({"min": 0})))
            .send()
            .await;
        let e = refused.expect_err("spec.min under its minimum");
        assert!(e.is_invalid(), "{e}");
    }
    if cfg!(feature = "cel") {
        // The fake evaluates the libraries the server declares: isURL() here.
        let site = gauge(json!({"site": "https://example.com/"}));
        for client in [&b.real, &b.fake] {
            let created = post(client, &path, site.clone()).await;
            assert_eq!(created["spec"]["site"], "https://example.com/");
        }
        // The server type-checks a CRD's rules when it is written (an int compared with
        // a double has no overload); the fake takes the CRD, and evaluates the rule.
        let typed = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "typechecks.differences.kclient.dev"},
            "spec": {"group": "differences.kclient.dev", "scope": "Namespaced",
                "names": {"plural": "typechecks", "singular": "typecheck",
                    "kind": "TypeCheck", "listKind": "TypeCheckList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"n": {"type": "integer",
                            "x-kubernetes-validations": [{"rule": "self == 1.0"}]}}}}}}}]}});
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let real: Result<Value, _> = b.real.post().abs_path(crds).json(&typed).send().await;
        let e = real.expect_err("the server type-checks the rule");
        assert!(
            e.is_invalid()
                && e.to_string()
                    .contains("found no matching overload for '_==_' applied to '(int, double)'"),
            "{e}"
        );
        let fake = post(&b.fake, crds, typed).await;
        assert_eq!(
            fake["metadata"]["name"],
            "typechecks.differences.kclient.dev"
        );
    } else {
        let ruled = gauge(json!({"ruled": 0}));
        let real: Result<Value, _> = b.real.post().abs_path(&path).json(&ruled).send().await;
        let e = real.expect_err("the server checks the rule");
        assert!(e.is_invalid() && e.to_string().contains("self > 0"), "{e}");
        let fake = post(&b.fake, &path, ruled).await;
        assert_eq!(fake["spec"]["ruled"], 0);
    }
}

/// 2. A built-in kind's update entry marks only ObjectMeta's maps it created as owned
/// themselves: the server writes `".":{}` beside the fields of a ConfigMap's `data` that a
/// create brought, as of its annotations; the fake only beside the annotations'. (Apply
/// entries, and a custom resource's update entries, are the server's: `tests/it/apply.rs`.)
#[tokio::test(flavor = "multi_thread")]
async fn a_built_in_updates_entry_marks_only_object_meta_maps_in_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let path = cms(b.ns.name());
    let body = json!({"metadata": {"name": "marked", "annotations": {"a": "1"}},
        "data": {"k": "v"}});
    let mut sets = Vec::new();
    for client in [&b.real, &b.fake] {
        let created: Value = client
            .post()
            .abs_path(&path)
            .param("fieldManager", "creator")
            .json(&body)
            .send()
            .await
            .expect("creating the ConfigMap");
        sets.push(created["metadata"]["managedFields"][0]["fieldsV1"].clone());
    }
    assert_eq!(
        sets[0],
        json!({"f:data": {".": {}, "f:k": {}},
            "f:metadata": {"f:annotations": {".": {}, "f:a": {}}}})
    );
    assert_eq!(
        sets[1],
        json!({"f:data": {"f:k": {}},
            "f:metadata": {"f:annotations": {".": {}, "f:a": {}}}})
    );
}

/// 3. A continue token lasts until 256 newer paged lists in the fake; on the server, until
/// etcd is compacted past its resourceVersion. (Lists at a resourceVersion, `Exact` and
/// `NotOlderThan`, are as the server's: see the differential cases "list at a version".)
#[tokio::test(flavor = "multi_thread")]
async fn continue_tokens_expire_after_256_newer_paged_lists() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let path = cms(b.ns.name());
    let mut still_valid = Vec::new();
    for client in [&b.real, &b.fake] {
        post(client, &path, json!({"metadata": {"name": "a"}})).await;
        post(client, &path, json!({"metadata": {"name": "b"}})).await;
        let page = |token: Option<String>| {
            let mut request = client.get().abs_path(&path).param("limit", "1");
            if let Some(t) = token {
                request = request.param("continue", t);
            }
            request.send::<Value>()
        };
        let first = page(None).await.unwrap();
        let token = first["metadata"]["continue"].as_str().unwrap().to_string();
        for _ in 0..256 {
            page(None).await.unwrap();
        }
        still_valid.push(match page(Some(token)).await {
            Ok(second) => {
                assert_eq!(second["items"][0]["metadata"]["name"], "b");
                true
            }
            Err(e) if e.is_resource_expired() => false,
            Err(e) => panic!("the second page: {e}"),
        });
    }
    assert_eq!(still_valid, [true, false], "[real, fake]");
}

/// The names of the ConfigMaps of a namespace with, for each, its finalizers and owners'
/// names: what the garbage collector changes.
async fn owners_and_finalizers(client: &Client, path: &str) -> Vec<Value> {
    let list: Value = client.get().abs_path(path).send().await.unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let owners: Vec<Value> = i["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| r["name"].clone())
                .collect();
            json!({"name": i["metadata"]["name"], "owners": owners,
                "finalizers": i["metadata"]["finalizers"],
                "deleting": i["metadata"]["deletionTimestamp"].is_string()})
        })
        .collect()
}

/// Removes every finalizer of the object at `path`.
async fn release(client: &Client, path: &str) {
    let _: Value = client
        .patch(kclient_apimachinery::PatchType::Merge)
        .abs_path(path)
        .json(&json!({"metadata": {"finalizers": null}}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("releasing {path}: {e}"));
}

/// Polls the real server until the ConfigMaps of `path` look like `want` (its garbage
/// collector works asynchronously); returns what it saw last.
/// (Up to two minutes: the namespace controller may first work through the namespaces the
/// differential suite, running beside this test, deletes by the hundred.)
async fn converge(client: &Client, path: &str, want: &Value) -> Vec<Value> {
    let mut seen = Vec::new();
    for _ in 0..1200 {
        seen = owners_and_finalizers(client, path).await;
        if json!(seen) == *want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

/// 4. Garbage collection is synchronous in the fake: when a delete returns, the dependents
/// are already deleted (background, foreground) or orphaned, and the owner gone when no
/// dependent blocks it; testenv's garbage collector gets to the same state later.
#[tokio::test(flavor = "multi_thread")]
async fn garbage_collection_is_done_when_the_delete_returns() {
    let env = TestEnv::connect().await;
    for policy in ["Background", "Orphan", "Foreground"] {
        let b = both(&env).await;
        let path = cms(b.ns.name());
        let mut fake_states = Vec::new();
        let mut real_states = Vec::new();
        for (client, is_fake) in [(&b.fake, true), (&b.real, false)] {
            let owner = post(client, &path, json!({"metadata": {"name": "owner"}})).await;
            let owner_ref = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true}]);
            post(
                client,
                &path,
                json!({"metadata": {"name": "plain", "ownerReferences": owner_ref}}),
            )
            .await;
            post(
                client,
                &path,
                json!({"metadata": {"name": "held", "ownerReferences": owner_ref,
                    "finalizers": ["kclient.dev/hold"]}}),
            )
            .await;
            let marked: Value = client
                .delete()
                .abs_path(&format!("{path}/owner"))
                .json(&json!({"propagationPolicy": policy}))
                .send()
                .await
                .unwrap();
            let after_delete = if is_fake {
                owners_and_finalizers(client, &path).await
            } else {
                converge(client, &path, &fake_states[0]).await
            };
            // The last finalizer goes: what waited for it follows.
            release(client, &format!("{path}/held")).await;
            let after_release = if is_fake {
                owners_and_finalizers(client, &path).await
            } else {
                converge(client, &path, &fake_states[1]).await
            };
            let states = if is_fake {
                &mut fake_states
            } else {
                &mut real_states
            };
            states.push(json!(after_delete));
            states.push(json!(after_release));
            states.push(marked["metadata"]["finalizers"].clone());
        }
        assert_eq!(real_states, fake_states, "{policy}: [real, fake]");
    }
}

/// 4b. Deleting a namespace in the fake deletes its content and the namespace at once when
/// nothing holds them (the server answers Terminating too, and its namespace controller
/// finishes later).
#[tokio::test]
async fn a_namespace_deletion_completes_at_once_in_the_fake() {
    let fake = Fake::new();
    let client = fake.client();
    post(
        &client,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "gone"}}),
    )
    .await;
    post(&client, &cms("gone"), json!({"metadata": {"name": "a"}})).await;
    let answer: Value = client
        .delete()
        .abs_path("/api/v1/namespaces/gone")
        .send()
        .await
        .unwrap();
    assert_eq!(answer["status"]["phase"], "Terminating");
    let err = client
        .get()
        .abs_path("/api/v1/namespaces/gone")
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(
        fake.tracker()
            .list_values("", "v1", "configmaps", "gone")
            .is_empty()
    );
}

/// 4b, what does not differ: content that finalizers hold is marked for deletion and stays,
/// and holds its namespace in `Terminating` (with `spec.finalizers` still `kubernetes`, a
/// second delete answered as the server answers it, new content refused) until the last
/// finalizer goes; then the namespace goes too. The server gets there later, so its states
/// are polled until they equal the fake's.
#[tokio::test(flavor = "multi_thread")]
async fn content_finalizers_hold_a_deleted_namespace_on_both() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let ns = b.ns.name().to_string();
    let path = cms(&ns);
    let ns_path = format!("/api/v1/namespaces/{ns}");
    let namespace_state = |got: Result<Value, kclient_rest::Error>| match got {
        Ok(n) => json!({"phase": n["status"]["phase"],
            "deleting": n["metadata"]["deletionTimestamp"].is_string(),
            "spec": n["spec"], "finalizers": n["metadata"]["finalizers"]}),
        Err(e) => json!({"error": e.code()}),
    };
    let outcome = |got: Result<Value, kclient_rest::Error>| match got {
        Ok(_) => json!("ok"),
        Err(e) => json!({"error": e.code()}),
    };
    let mut seen: [Vec<Value>; 2] = Default::default();
    for (i, client) in [&b.fake, &b.real].into_iter().enumerate() {
        let is_fake = i == 0;
        post(client, &path, json!({"metadata": {"name": "plain"}})).await;
        post(
            client,
            &path,
            json!({"metadata": {"name": "held", "finalizers": ["kclient.dev/hold"]}}),
        )
        .await;
        let answer = client.delete().abs_path(&ns_path).send::<Value>().await;
        seen[i].push(namespace_state(answer));
        let content = if is_fake {
            owners_and_finalizers(client, &path).await
        } else {
            converge(client, &path, &json!(seen[0][1])).await
        };
        seen[i].push(json!(content));
        let get = client.get().abs_path(&ns_path).send::<Value>().await;
        let marked_at = get.as_ref().ok().map(|n| n["metadata"].clone());
        seen[i].push(namespace_state(get));
        // A second delete changes nothing: the namespace is answered as it is.
        let again = client.delete().abs_path(&ns_path).send::<Value>().await;
        if let (Ok(again), Some(marked)) = (&again, &marked_at) {
            assert_eq!(
                again["metadata"]["deletionTimestamp"], marked["deletionTimestamp"],
                "fake: {is_fake}"
            );
            if is_fake {
                assert_eq!(
                    again["metadata"]["resourceVersion"],
                    marked["resourceVersion"]
                );
            }
        }
        seen[i].push(outcome(again));
        let create = client
            .post()
            .abs_path(&path)
            .json(&json!({"metadata": {"name": "late"}}))
            .send::<Value>()
            .await;
        seen[i].push(outcome(create));
        release(client, &format!("{path}/held")).await;
        let mut gone = json!(null);
        for _ in 0..if is_fake { 1 } else { 1200 } {
            gone = namespace_state(client.get().abs_path(&ns_path).send::<Value>().await);
            if gone == json!({"error": 404}) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        seen[i].push(gone);
    }
    let [fake, real] = seen;
    assert_eq!(real, fake, "[real, fake]");
    // What the fake does, spelled out.
    assert_eq!(
        fake[1],
        json!([{"name": "held", "owners": [], "finalizers": ["kclient.dev/hold"],
            "deleting": true}])
    );
    assert_eq!(fake[2]["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(fake[5], json!({"error": 404}));
}

/// 4c. Garbage collection again, for a Pod on a node deleted with the Orphan policy: the
/// collector removes the `orphan` finalizer (at once in the fake, later on the server), and
/// the Pod stays in its grace period with no finalizer left, waiting for a kubelet (node-1
/// has none in either).
#[tokio::test(flavor = "multi_thread")]
async fn an_orphaned_pod_in_its_grace_period_outlasts_its_orphan_finalizer() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let path = pods(b.ns.name());
    let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "node-1",
        "schedulerName": "kclient-differential-none",
        "containers": [{"name": "app", "image": "app:1"}]}});
    let state = |got: &Result<Value, kclient_rest::Error>| match got {
        Ok(p) => json!({"finalizers": p["metadata"]["finalizers"],
            "deleting": p["metadata"]["deletionTimestamp"].is_string(),
            "grace": p["metadata"]["deletionGracePeriodSeconds"]}),
        Err(e) => json!({"error": e.code()}),
    };
    let want = json!({"finalizers": null, "deleting": true, "grace": 30});
    let mut seen = Vec::new();
    // The fake is read once: its collector has finished when the delete returns.
    for (client, tries) in [(&b.fake, 1), (&b.real, 300)] {
        post(client, &path, pod.clone()).await;
        let marked: Value = client
            .delete()
            .abs_path(&format!("{path}/p"))
            .json(&json!({"propagationPolicy": "Orphan"}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("DELETE {path}/p: {e}"));
        assert_eq!(
            marked["metadata"]["finalizers"],
            json!(["orphan"]),
            "the delete's answer: {marked}"
        );
        let mut last = Value::Null;
        for _ in 0..tries {
            last = state(&client.get().abs_path(&format!("{path}/p")).send().await);
            if last == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        seen.push(last);
    }
    assert_eq!(
        seen,
        [want.clone(), want],
        "[fake, real] after the collector"
    );
}

/// 5. Bookmarks come only on request in the fake (the server sends one about every minute).
#[tokio::test]
async fn bookmarks_come_only_when_the_test_asks() {
    use futures_util::StreamExt;
    let fake = Fake::new();
    let client = fake.client();
    let mut events = client
        .get()
        .abs_path(&cms("default"))
        .param("allowWatchBookmarks", "true")
        .param(
            "resourceVersion",
            fake.tracker().resource_version().to_string(),
        )
        .watch::<Value>()
        .await
        .unwrap();
    post(&client, &cms("default"), json!({"metadata": {"name": "a"}})).await;
    fake.tracker().send_bookmarks();
    let first = events.next().await.unwrap().unwrap();
    assert_eq!(
        first.event_type(),
        kclient_apimachinery::WatchEventType::Added
    );
    let second = events.next().await.unwrap().unwrap();
    assert_eq!(
        second.event_type(),
        kclient_apimachinery::WatchEventType::Bookmark
    );
}

/// 6. Subresources: `pods/log` is always empty (no container runs; the server too answers
/// 204 for a Pod that never ran).
#[tokio::test(flavor = "multi_thread")]
async fn logs_are_empty() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let pods = pods(b.ns.name());
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "schedulerName": "kclient-differential-none",
        "containers": [{"name": "app", "image": "app:1"}]}});
    let mut logs = Vec::new();
    for client in [&b.real, &b.fake] {
        post(client, &pods, pod.clone()).await;
        let log = client
            .get()
            .abs_path(&format!("{pods}/p/log"))
            .bytes()
            .await
            .unwrap();
        logs.push(log.len());
        let missing = client
            .get()
            .abs_path(&format!("{pods}/nope/log"))
            .bytes()
            .await
            .unwrap_err();
        assert!(missing.is_not_found(), "{missing}");
    }
    assert_eq!(logs, [0, 0], "[real, fake]");
}

/// 7. Bad requests get the server's code and reason, in the fake's own words.
#[tokio::test(flavor = "multi_thread")]
async fn error_messages_are_worded_by_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let path = cms(b.ns.name());
    let body = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}});
    let send = |client: &Client| client.post().abs_path(&path).json(&body).send::<Value>();
    let real = send(&b.real).await.unwrap_err();
    let fake = send(&b.fake).await.unwrap_err();
    assert!(
        real.is_bad_request() && fake.is_bad_request(),
        "{real} / {fake}"
    );
    assert_eq!(real.code(), fake.code());
    assert_ne!(real.to_string(), fake.to_string());
}

/// 8. No kubelet in the fake: a Pod on a node deleted with a grace period stays Terminating
/// (its deletionTimestamp set, as on the server) until something deletes it with
/// `gracePeriodSeconds: 0`; on testenv, kwok's simulated kubelet finishes it.
#[tokio::test(flavor = "multi_thread")]
async fn terminating_pods_wait_for_a_kubelet_the_fake_does_not_have() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let path = pods(b.ns.name());
    let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "kwok-node-0",
        "containers": [{"name": "app", "image": "app:1"}]}});
    for client in [&b.real, &b.fake] {
        post(client, &path, pod.clone()).await;
        let marked: Value = client
            .delete()
            .abs_path(&format!("{path}/p"))
            .send()
            .await
            .unwrap();
        assert!(
            marked["metadata"]["deletionTimestamp"].is_string(),
            "{marked}"
        );
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
    }
    let mut gone = false;
    for _ in 0..600 {
        let got: Result<Value, _> = b.real.get().abs_path(&format!("{path}/p")).send().await;
        if got.as_ref().is_err_and(|e| e.is_not_found()) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "testenv's kwok kubelet finishes the Pod within 60 s");
    let fake: Value = b
        .fake
        .get()
        .abs_path(&format!("{path}/p"))
        .send()
        .await
        .unwrap();
    assert!(fake["metadata"]["deletionTimestamp"].is_string(), "{fake}");
    // As a kubelet would: the final delete with no grace period.
    let _: Value = b
        .fake
        .delete()
        .abs_path(&format!("{path}/p"))
        .json(&json!({"gracePeriodSeconds": 0}))
        .send()
        .await
        .unwrap();
    let err = b
        .fake
        .get()
        .abs_path(&format!("{path}/p"))
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

/// 9. No conversion between versions of a built-in kind: each group version is its own store
/// in the fake (an HPA created through autoscaling/v2 is not found through autoscaling/v1).
/// (A CRD's versions without a conversion webhook share their objects on both: the
/// differential case "custom resources: versions without a conversion webhook serve the
/// same objects".)
#[tokio::test(flavor = "multi_thread")]
async fn versions_of_a_kind_are_separate_stores() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let v2 = format!(
        "/apis/autoscaling/v2/namespaces/{}/horizontalpodautoscalers",
        b.ns.name()
    );
    let v1 = v2.replace("/v2/", "/v1/");
    let hpa = json!({"metadata": {"name": "h"}, "spec": {"maxReplicas": 3,
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}});
    let mut found = Vec::new();
    for client in [&b.real, &b.fake] {
        post(client, &v2, hpa.clone()).await;
        let got: Result<Value, _> = client.get().abs_path(&format!("{v1}/h")).send().await;
        found.push(match got {
            Ok(h) => h["apiVersion"] == "autoscaling/v1",
            Err(e) if e.is_not_found() => false,
            Err(e) => panic!("reading the HPA through v1: {e}"),
        });
    }
    assert_eq!(found, [true, false], "[real, fake]");
}

/// 7. An invalid value's error is one cause in the fake; the server may give several for it
/// (one per rule the value breaks), naming the same field.
#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_field_is_one_cause_in_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let cms = cms(b.ns.name());
    // An update (here a merge patch) that writes an invalid label value.
    let mut answers = Vec::new();
    for client in [&b.real, &b.fake] {
        let _: Value = client
            .post()
            .abs_path(&cms)
            .json(&json!({"metadata": {"name": "a"}}))
            .send()
            .await
            .expect("a ConfigMap");
        let patched: Result<Value, _> = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .abs_path(&format!("{cms}/a"))
            .json(&json!({"metadata": {"labels": {"x": "a/b"}}}))
            .send()
            .await;
        answers.push(patched);
    }
    let fake = answers.pop().expect("the fake's answer");
    let real = answers.pop().expect("the server's answer");
    let fields = |e: kclient_apimachinery::Error| -> Vec<String> {
        let status = e.status().expect("an API error").clone();
        status
            .details
            .map(|d| d.causes.into_iter().map(|c| c.field).collect())
            .unwrap_or_default()
    };
    let real = fields(real.unwrap_err());
    assert!(
        real.len() > 1 && real.iter().all(|f| f == "metadata.labels"),
        "{real:?}"
    );
    assert_eq!(fields(fake.unwrap_err()), ["metadata.labels"]);
}

/// 10. A `null` that a JSON patch writes where a built-in kind has a string stays `null` in
/// the fake; the server stores `""`.
#[tokio::test(flavor = "multi_thread")]
async fn a_null_string_stays_null_in_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let cms = cms(b.ns.name());
    let mut answers = Vec::new();
    for client in [&b.real, &b.fake] {
        let _: Value = client
            .post()
            .abs_path(&cms)
            .json(&json!({"metadata": {"name": "a"}, "data": {"k": "v"}}))
            .send()
            .await
            .expect("a ConfigMap");
        let patched: Value = client
            .patch(kclient_apimachinery::PatchType::Json)
            .abs_path(&format!("{cms}/a"))
            .json(
                &json!([{"op": "copy", "from": "/data/missing", "path": "/data/copied"},
                {"op": "add", "path": "/data/added"}]),
            )
            .send()
            .await
            .expect("the patch applies");
        answers.push(patched["data"].clone());
    }
    assert_eq!(answers[0], json!({"k": "v", "copied": "", "added": ""}));
    assert_eq!(answers[1], json!({"k": "v", "copied": null, "added": null}));
}

/// 11. Built-in objects are stored as written: a field the kind does not have stays in the
/// fake (the server drops it, and with `fieldValidation=Strict` refuses the write), and a
/// condition's unset `lastProbeTime` is left out where the server writes `null`.
#[tokio::test(flavor = "multi_thread")]
async fn built_in_objects_are_stored_as_written_in_the_fake() {
    let env = TestEnv::connect().await;
    let b = both(&env).await;
    let pods = pods(b.ns.name());
    let pod = json!({"metadata": {"name": "a"}, "notAField": 1,
        "spec": {"schedulerName": "kclient-differential-none",
            "containers": [{"name": "app", "image": "app:1"}]}});
    let mut answers = Vec::new();
    for client in [&b.real, &b.fake] {
        let created = post(client, &pods, pod.clone()).await;
        let patched: Value = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .abs_path(&format!("{pods}/a/status"))
            .json(&json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}))
            .send()
            .await
            .expect("the status patch applies");
        let strict = client
            .post()
            .abs_path(&pods)
            .param("fieldValidation", "Strict")
            .json(&json!({"metadata": {"name": "b"}, "notAField": 1,
                "spec": {"containers": [{"name": "app", "image": "app:1"}]}}))
            .send::<Value>()
            .await;
        answers.push((
            created.get("notAField").cloned(),
            patched["status"]["conditions"][0].clone(),
            strict.map_err(|e| e.is_bad_request()),
        ));
    }
    let (real, fake) = (&answers[0], &answers[1]);
    assert_eq!(real.0, None);
    assert_eq!(fake.0, Some(json!(1)));
    assert_eq!(
        real.1,
        json!({"type": "Ready", "status": "False", "lastProbeTime": null,
            "lastTransitionTime": null})
    );
    assert_eq!(fake.1, json!({"type": "Ready", "status": "False"}));
    assert_eq!(
        real.2.as_ref().err(),
        Some(&true),
        "strict: 400 on the server"
    );
    assert!(fake.2.is_ok(), "strict: accepted by the fake");
}

/// 12. Quantities are stored as written: the server stores them in canonical form.
#[tokio::test(flavor = "multi_thread")]
async fn quantities_are_stored_as_written_in_the_fake() {
    let env = TestEnv::connect().await;
    let both = both(&env).await;
    let path = format!("/api/v1/namespaces/{}/resourcequotas", both.ns.name());
    let quota = json!({"metadata": {"name": "q"},
        "spec": {"hard": {"cpu": "1000m", "memory": "1024Mi"}}});
    let real = post(&both.real, &path, quota.clone()).await;
    let fake = post(&both.fake, &path, quota).await;
    assert_eq!(real["spec"]["hard"], json!({"cpu": "1", "memory": "1Gi"}));
    assert_eq!(
        fake["spec"]["hard"],
        json!({"cpu": "1000m", "memory": "1024Mi"})
    );
}
