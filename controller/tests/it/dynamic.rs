//! Primary and secondary resources chosen at run time: `for_dynamic` over a custom resource
//! whose type the program does not have (reconciled as `Unstructured`, its children found by
//! the runtime kind), `for_metadata` (reconciled as metadata), and `owns_dynamic` and
//! `watches_dynamic` beside a typed primary.

use std::collections::HashMap;
use std::sync::Arc;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{ApiResource, CreateOptions, GroupVersionKind, Object, Unstructured};
use kclient_cache::CancellationToken;
use kclient_controller::{
    Action, ControllerBuilder, ObjectRef, Predicate, owner_reference, owner_reference_for,
};
use kclient_rest::Verb;
use kclient_testenv::TestEnv;
use parking_lot::Mutex;
use serde_json::json;

use crate::{Setup, eventually};

/// What the reconciles saw, per name: how many calls, and the last value of interest.
#[derive(Default)]
struct Seen {
    calls: Mutex<HashMap<String, usize>>,
    last: Mutex<HashMap<String, String>>,
    deleted: Mutex<HashMap<String, usize>>,
}

impl Seen {
    fn calls(&self, name: &str) -> usize {
        self.calls.lock().get(name).copied().unwrap_or(0)
    }
    fn last(&self, name: &str) -> Option<String> {
        self.last.lock().get(name).cloned()
    }
    fn deleted(&self, name: &str) -> usize {
        self.deleted.lock().get(name).copied().unwrap_or(0)
    }
    fn saw(&self, name: &str, value: String) {
        *self.calls.lock().entry(name.to_owned()).or_default() += 1;
        self.last.lock().insert(name.to_owned(), value);
    }
}

async fn count_deleted(key: ObjectRef, seen: Arc<Seen>) -> Result<Action, String> {
    *seen.deleted.lock().entry(key.name).or_default() += 1;
    Ok(Action::done())
}

/// The Widget custom resource (installed once, shared by the tests; each works in its own
/// namespace), described at run time as a program that found it through discovery would.
async fn widgets() -> ApiResource {
    let env = TestEnv::connect().await;
    env.install_crd(&json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.dynamic.kclient.dev"},
        "spec": {
            "group": "dynamic.kclient.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                }},
            }],
        },
    }))
    .await
    .expect("installing the Widget CRD");
    ApiResource::new(
        &GroupVersionKind::new("dynamic.kclient.dev", "v1", "Widget"),
        "widgets",
        true,
    )
}

impl Setup {
    /// Creates the Widget `name` with `spec`; returns it.
    async fn create_widget(&self, name: &str, spec: serde_json::Value) -> Unstructured {
        self.create_labelled_widget(name, spec, json!({})).await
    }

    /// Creates the Widget `name` with `spec` and `labels`; returns it.
    async fn create_labelled_widget(
        &self,
        name: &str,
        spec: serde_json::Value,
        labels: serde_json::Value,
    ) -> Unstructured {
        self.client
            .verb(Verb::Post)
            .group_version("dynamic.kclient.dev", "v1")
            .namespace(self.ns.name())
            .resource("widgets")
            .json(&json!({
                "apiVersion": "dynamic.kclient.dev/v1", "kind": "Widget",
                "metadata": {"name": name, "labels": labels}, "spec": spec,
            }))
            .send()
            .await
            .unwrap_or_else(|e| panic!("creating Widget {name}: {e}"))
    }

    async fn patch_widget(&self, name: &str, spec: serde_json::Value) {
        self.client
            .verb(Verb::Patch)
            .group_version("dynamic.kclient.dev", "v1")
            .namespace(self.ns.name())
            .resource("widgets")
            .name(name)
            .json(&json!({"spec": spec}))
            .content_type("application/merge-patch+json")
            .send::<Unstructured>()
            .await
            .unwrap_or_else(|e| panic!("patching Widget {name}: {e}"));
    }

    async fn delete_widget(&self, name: &str) {
        self.client
            .verb(Verb::Delete)
            .group_version("dynamic.kclient.dev", "v1")
            .namespace(self.ns.name())
            .resource("widgets")
            .name(name)
            .send::<serde_json::Value>()
            .await
            .unwrap_or_else(|e| panic!("deleting Widget {name}: {e}"));
    }

    /// Creates the ConfigMap `name` controlled by `owner`, a Widget.
    async fn create_owned_config_map(
        &self,
        name: &str,
        widgets: &ApiResource,
        owner: &Unstructured,
    ) {
        let reference = owner_reference_for(widgets, owner);
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": name, "ownerReferences": [reference]},
        }))
        .unwrap();
        self.config_maps()
            .create(&cm, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("creating ConfigMap {name}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_primary_is_reconciled_as_unstructured_and_woken_by_its_children() {
    let widgets = widgets().await;
    let s = Setup::new().await;
    s.create_widget("w1", json!({"size": 3})).await;
    let seen = Arc::new(Seen::default());
    let controller = ControllerBuilder::new("dynamic-primary-test", &s.factory)
        .for_dynamic(&widgets)
        .owns::<ConfigMap>()
        .workers(1)
        .reconcile(|widget: Arc<Unstructured>, seen: Arc<Seen>| async move {
            let size = widget
                .nested_i64(&["spec", "size"])
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            seen.saw(widget.name(), format!("{} {size}", widget.kind()));
            Ok::<_, String>(Action::done())
        })
        .on_deleted(count_deleted);
    assert!(
        format!("{controller:?}").contains(r#"sources: ["for Widget", "owns ConfigMap"]"#),
        "{controller:?}"
    );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&seen), shutdown.clone()));

    eventually("the first reconcile of w1", || seen.calls("w1") == 1).await;
    assert_eq!(seen.last("w1").as_deref(), Some("Widget 3"));

    // A change of the custom object itself.
    s.patch_widget("w1", json!({"size": 5})).await;
    eventually("the reconcile of w1's change", || {
        seen.last("w1").as_deref() == Some("Widget 5")
    })
    .await;
    assert_eq!(seen.calls("w1"), 2);

    // A child that names a Widget as its controller, by the kind and group known only at run
    // time, wakes it: here one with no object (on_deleted; at least once, since the garbage
    // collector then deletes the orphan, and its delete wakes the owner again), then w2.
    let w2 = s.create_widget("w2", json!({"size": 1})).await;
    eventually("the reconcile of w2's add", || seen.calls("w2") == 1).await;
    let mut ghost = w2.clone();
    ghost.as_map_mut().insert(
        "metadata".into(),
        json!({"name": "ghost", "uid": "0000-ghost"}),
    );
    s.create_owned_config_map("ghost-child", &widgets, &ghost)
        .await;
    eventually("on_deleted of the ghost owner", || {
        seen.deleted("ghost") >= 1
    })
    .await;
    s.create_owned_config_map("w2-child", &widgets, &w2).await;
    eventually("the reconcile of w2 for its child", || {
        seen.calls("w2") == 2
    })
    .await;

    // The custom object deleted: on_deleted with its key.
    s.delete_widget("w1").await;
    eventually("on_deleted of w1", || seen.deleted("w1") == 1).await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_primary_is_reconciled_from_a_metadata_only_cache() {
    let s = Setup::new().await;
    s.create_config_map("a", &[("team", "blue")]).await;
    let seen = Arc::new(Seen::default());
    let controller = ControllerBuilder::new("metadata-primary-test", &s.factory)
        .for_metadata::<ConfigMap>()
        .owns_metadata::<Secret>()
        .workers(1)
        .reconcile(
            |cm: Arc<PartialObjectMetadata>, seen: Arc<Seen>| async move {
                let team = cm.labels().get("team").unwrap_or_default().to_owned();
                seen.saw(cm.name(), team);
                Ok::<_, String>(Action::done())
            },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&seen), shutdown.clone()));

    eventually("the first reconcile of a", || seen.calls("a") == 1).await;
    assert_eq!(seen.last("a").as_deref(), Some("blue"));
    s.label_config_map("a", "team", "green").await;
    eventually("the reconcile of a's label change", || {
        seen.last("a").as_deref() == Some("green")
    })
    .await;

    // A Secret it controls wakes it, through the Secrets' metadata informer.
    let a = s
        .config_maps()
        .get("a", &kclient_apimachinery::GetOptions::default())
        .await
        .unwrap();
    let child: Secret = serde_json::from_value(json!({
        "metadata": {"name": "child-of-a", "ownerReferences": [owner_reference(&a)]},
    }))
    .unwrap();
    let before = seen.calls("a");
    s.secrets()
        .create(&child, &CreateOptions::default())
        .await
        .unwrap();
    eventually("the reconcile of a for its child", || {
        seen.calls("a") > before
    })
    .await;

    // Only metadata informers: no typed ConfigMap or Secret cache.
    let factory = format!("{:?}", s.factory);
    assert!(
        factory.contains(r#"informers: ["v1/configmaps (metadata)", "v1/secrets (metadata)"]"#),
        "{factory}"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_dynamic_and_watches_dynamic_wake_a_typed_primary() {
    let widgets = widgets().await;
    let s = Setup::new().await;
    let a = s.create_config_map("a", &[]).await;
    s.create_config_map("b", &[]).await;
    let seen = Arc::new(Seen::default());
    // A Widget whose spec.target names a ConfigMap concerns it.
    let controller = ControllerBuilder::new("dynamic-secondary-test", &s.factory)
        .for_::<ConfigMap>()
        // Secrets labelled `ignore` wake nothing either.
        .owns_dynamic_with(
            &ApiResource::of::<Secret>(),
            vec![Predicate::new(|s: &Unstructured| {
                s.labels().get("ignore").is_none()
            })],
        )
        .watches_dynamic_with(
            &widgets,
            |widget: &Unstructured| {
                widget
                    .nested_string(&["spec", "target"])
                    .ok()
                    .flatten()
                    .map(|target| ObjectRef::new(widget.namespace(), target))
                    .into_iter()
                    .collect()
            },
            // Widgets labelled `ignore` wake nothing.
            vec![Predicate::new(|w: &Unstructured| {
                w.labels().get("ignore").is_none()
            })],
        )
        .workers(1)
        .reconcile(|cm: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            seen.saw(cm.name(), String::new());
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&seen), shutdown.clone()));
    eventually("the first reconciles", || {
        seen.calls("a") == 1 && seen.calls("b") == 1
    })
    .await;

    // An ignored Secret controlled by b, then one controlled by a, from the dynamic informer
    // of Secrets: a is woken, b is not (its child's add came first).
    let b = s
        .config_maps()
        .get("b", &kclient_apimachinery::GetOptions::default())
        .await
        .unwrap();
    for (name, owner, labels) in [
        ("ignored-child", &b, json!({"ignore": "yes"})),
        ("child", &a, json!({})),
    ] {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels, "ownerReferences": [owner_reference(owner)]},
        }))
        .unwrap();
        s.secrets()
            .create(&secret, &CreateOptions::default())
            .await
            .unwrap();
    }
    eventually("the reconcile of a for its child", || seen.calls("a") == 2).await;
    assert_eq!(seen.calls("b"), 1, "an ignored child woke its owner");

    // An ignored Widget pointing at a, then one pointing at b: a is not woken.
    s.create_labelled_widget("ignored", json!({"target": "a"}), json!({"ignore": "yes"}))
        .await;
    s.create_widget("pointer", json!({"target": "b"})).await;
    eventually("the reconcile of b for the Widget", || seen.calls("b") == 2).await;
    assert_eq!(seen.calls("a"), 2);

    let factory = format!("{:?}", s.factory);
    assert!(
        factory.contains(r#""v1/secrets (dynamic)""#)
            && factory.contains(r#""dynamic.kclient.dev/v1/widgets (dynamic)""#),
        "{factory}"
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
}
