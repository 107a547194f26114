//! `for_`, `owns`, `watches` and `watches_metadata`: which events reach which key, and
//! `on_deleted` for keys whose object is gone.

use std::sync::Arc;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{CreateOptions, DeleteOptions, Object, PatchOptions};
use kclient_cache::CancellationToken;
use kclient_clientset::Patch;
use kclient_controller::{ControllerBuilder, ObjectRef, Predicate, apply_owned, owner_reference};

use crate::{Calls, Setup, count, count_deleted, eventually};

fn secret(name: &str, labels: &[(&str, &str)], owner: Option<&ConfigMap>) -> Secret {
    let owners: Vec<_> = owner.map(owner_reference).into_iter().collect();
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": crate::to_map(labels), "ownerReferences": owners},
        "stringData": {"k": "v"},
    }))
    .unwrap()
}

/// Patches the labels of the Secret `changed` (to a value it has not had), then deletes the
/// Secret `deleted`, waiting after each for one more reconcile of the ConfigMap `parent`, which
/// owns both.
async fn change_then_delete_wake_parent(s: &Setup, calls: &Calls, changed: &str, deleted: &str) {
    let before = calls.reconciled("parent");
    let label = format!("after-{before}");
    s.secrets()
        .patch(
            changed,
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"changed": label}}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    eventually("the reconcile of parent for its changed child", || {
        calls.reconciled("parent") > before
    })
    .await;
    let before = calls.reconciled("parent");
    s.secrets()
        .delete(deleted, &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the reconcile of parent for its deleted child", || {
        calls.reconciled("parent") > before
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_enqueues_the_controller_owner_of_a_child() {
    let s = Setup::new().await;
    let parent = s.create_config_map("parent", &[]).await;
    let other = s.create_config_map("other", &[]).await;
    let calls = Arc::new(Calls::default());
    let controller = ControllerBuilder::new("owns-test", &s.factory)
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));

    eventually("the first reconcile of both ConfigMaps", || {
        calls.reconciled("parent") == 1 && calls.reconciled("other") == 1
    })
    .await;

    // A child created (by server-side apply, owned by parent), then changed: each event
    // wakes its controller owner only.
    let child: Secret = apply_owned(
        &s.client,
        "owns-test",
        &parent,
        serde_json::json!({"metadata": {"name": "child"}, "stringData": {"k": "v"}}),
    )
    .await
    .unwrap();
    let owners = child.owner_references();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (
            owners[0].kind,
            owners[0].name,
            owners[0].uid,
            owners[0].controller
        ),
        ("ConfigMap", "parent", parent.uid(), true)
    );
    eventually("the reconcile of parent for its new child", || {
        calls.reconciled("parent") >= 2
    })
    .await;
    change_then_delete_wake_parent(&s, &calls, "child", "child").await;
    assert_eq!(
        calls.reconciled("other"),
        1,
        "a child of parent woke another ConfigMap"
    );
    let _ = other;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// The scenario of the owner sources that read children's metadata: ConfigMaps `parent` and
/// `other`, a Secret `early-child` owned by parent from before the start and an `orphan` owned
/// by nothing. `owns` adds the Secret source to the controller; `check` runs once the first
/// reconciles are done. Then a new child, changes and deletes of children wake parent, and no
/// Secret wakes other.
async fn children_wake_only_their_owner(
    name: &str,
    owns: impl for<'f> FnOnce(ControllerBuilder<'f, ConfigMap>) -> ControllerBuilder<'f, ConfigMap>,
    check: impl FnOnce(&Setup),
) {
    let s = Setup::new().await;
    let parent = s.create_config_map("parent", &[]).await;
    s.create_config_map("other", &[]).await;
    s.secrets()
        .create(
            &secret("early-child", &[], Some(&parent)),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    s.secrets()
        .create(&secret("orphan", &[], None), &CreateOptions::default())
        .await
        .unwrap();
    let calls = Arc::new(Calls::default());
    let controller =
        owns(ControllerBuilder::new(name, &s.factory).for_::<ConfigMap>()).reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("the first reconciles", || {
        calls.reconciled("parent") >= 1 && calls.reconciled("other") >= 1
    })
    .await;
    let other_before = calls.reconciled("other");
    check(&s);

    let before = calls.reconciled("parent");
    s.secrets()
        .create(
            &secret("late-child", &[], Some(&parent)),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("the reconcile of parent for its new child", || {
        calls.reconciled("parent") > before
    })
    .await;
    change_then_delete_wake_parent(&s, &calls, "early-child", "late-child").await;
    s.secrets()
        .patch(
            "orphan",
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"changed": "yes"}}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    // The orphan's event came before these on the same watch: once they are handled, so was
    // it.
    change_then_delete_wake_parent(&s, &calls, "early-child", "early-child").await;
    assert_eq!(
        calls.reconciled("other"),
        other_before,
        "a Secret woke other"
    );

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_metadata_enqueues_the_owner_from_a_metadata_only_cache() {
    children_wake_only_their_owner(
        "owns-metadata-test",
        |builder| builder.owns_metadata::<Secret>(),
        |s| {
            // The children are cached as metadata only, in the factory's metadata informer;
            // the typed Secret informer was never made.
            let metadata = s
                .factory
                .metadata_informer(&kclient_apimachinery::ApiResource::of::<Secret>());
            let mut cached: Vec<String> = metadata
                .get_store()
                .list()
                .iter()
                .map(|m| m.name().to_owned())
                .collect();
            cached.sort();
            assert_eq!(cached, ["early-child", "orphan"]);
            assert_eq!(
                metadata
                    .get_store()
                    .get_by_key(&format!("{}/early-child", s.ns.name()))
                    .map(|m| m.owner_references().len()),
                Some(1)
            );
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_uncached_enqueues_the_owner_without_caching_the_children() {
    children_wake_only_their_owner(
        "owns-uncached-test",
        |builder| {
            let builder = builder.owns_uncached::<Secret>();
            assert!(
                format!("{builder:?}").contains("owns Secret (uncached)"),
                "{builder:?}"
            );
            builder
        },
        |s| {
            // The factory made no informer of Secrets, typed or metadata: only the
            // ConfigMaps'.
            let factory = format!("{:?}", s.factory);
            assert!(!factory.contains("secrets"), "{factory}");
            assert!(factory.contains("v1/configmaps"), "{factory}");
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_maps_objects_to_keys_and_missing_ones_go_to_on_deleted() {
    let s = Setup::new().await;
    s.create_config_map("a", &[]).await;
    s.create_config_map("b", &[]).await;
    let calls = Arc::new(Calls::default());
    // A Secret labelled `target=<name>` concerns the ConfigMap of that name.
    let controller = ControllerBuilder::new("watches-test", &s.factory)
        .for_::<ConfigMap>()
        .watches(|secret: &Secret| {
            secret
                .labels()
                .get("target")
                .map(|name| ObjectRef::new(secret.namespace(), name))
                .into_iter()
                .collect()
        })
        .reconcile(count)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("the first reconciles", || {
        calls.reconciled("a") == 1 && calls.reconciled("b") == 1
    })
    .await;

    s.secrets()
        .create(
            &secret("points-at-b", &[("target", "b")], None),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("the reconcile of b", || calls.reconciled("b") == 2).await;
    assert_eq!(calls.reconciled("a"), 1, "a Secret mapped to b woke a");

    // A mapping to a name with no ConfigMap is a deleted call with that key.
    s.secrets()
        .create(
            &secret("points-at-ghost", &[("target", "ghost")], None),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("the deleted call of ghost", || calls.deleted("ghost") == 1).await;
    assert_eq!(calls.reconciled("ghost"), 0);

    // A primary deleted reaches on_deleted with its key.
    s.config_maps()
        .delete("a", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the deleted call of a", || calls.deleted("a") == 1).await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// A mapper that panics on a watched object known when the controller starts skips that
/// source's replay, as a live event's panic skips the event: the controller runs on (it used
/// to end with the panic, and at every restart again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mapper_that_panics_in_the_start_replay_does_not_end_the_controller() {
    let s = Setup::new().await;
    s.create_config_map("a", &[]).await;
    s.secrets()
        .create(&secret("unlabelled", &[], None), &CreateOptions::default())
        .await
        .unwrap();
    let calls = Arc::new(Calls::default());
    let controller = ControllerBuilder::new("panicking-mapper-test", &s.factory)
        .for_::<ConfigMap>()
        .watches(|secret: &Secret| {
            let target = secret.labels().get("target").expect("a mapper's bug");
            vec![ObjectRef::new(secret.namespace(), target)]
        })
        .reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("the reconcile of a", || calls.reconciled("a") == 1).await;
    // Live events still reach the mapper.
    s.secrets()
        .create(
            &secret("points-at-a", &[("target", "a")], None),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("a woken by the mapped Secret", || {
        calls.reconciled("a") == 2
    })
    .await;
    assert!(!run.is_finished(), "the controller ended");
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_metadata_maps_objects_to_keys_from_a_metadata_only_cache() {
    let s = Setup::new().await;
    s.create_config_map("a", &[]).await;
    s.create_config_map("b", &[]).await;
    let calls = Arc::new(Calls::default());
    // A Secret labelled `target=<name>` concerns the ConfigMap of that name; a predicate
    // leaves out those labelled `skip`.
    let controller = ControllerBuilder::new("watches-metadata-test", &s.factory)
        .for_::<ConfigMap>()
        .watches_metadata_with::<Secret>(
            |meta: &PartialObjectMetadata| {
                meta.labels()
                    .get("target")
                    .map(|name| ObjectRef::new(meta.namespace(), name))
                    .into_iter()
                    .collect()
            },
            vec![Predicate::new(|meta: &PartialObjectMetadata| {
                meta.labels().get("skip").is_none()
            })],
        )
        .reconcile(count)
        .on_deleted(count_deleted);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));
    eventually("the first reconciles", || {
        calls.reconciled("a") == 1 && calls.reconciled("b") == 1
    })
    .await;

    // Filtered out, then one that passes; with one worker the second's reconcile comes after
    // any the first caused.
    s.secrets()
        .create(
            &secret("skipped", &[("target", "a"), ("skip", "yes")], None),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    s.secrets()
        .create(
            &secret("points-at-b", &[("target", "b")], None),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("the reconcile of b", || calls.reconciled("b") == 2).await;
    assert_eq!(
        calls.reconciled("a"),
        1,
        "the predicate let the skipped Secret through"
    );

    // The Secrets are cached as metadata only (no data), and the typed Secret informer was
    // never made.
    let metadata = s
        .factory
        .metadata_informer(&kclient_apimachinery::ApiResource::of::<Secret>());
    let mut cached: Vec<String> = metadata
        .get_store()
        .list()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    cached.sort();
    assert_eq!(cached, ["points-at-b", "skipped"]);
    let factory = format!("{:?}", s.factory);
    assert!(
        factory.contains(r#"informers: ["v1/configmaps", "v1/secrets (metadata)"]"#),
        "{factory}"
    );

    shutdown.cancel();
    run.await.unwrap().unwrap();
}
