//! The finalizer helper through a real deletion: added on the first reconcile, cleanup once
//! the deletionTimestamp is set, removed with a patch that survives a conflict and keeps
//! another controller's finalizer; and neither cleanup nor a finalizer removal for a new
//! object that took the name of the one being deleted. controllerutil's in-memory helpers
//! (`add_finalizer`, `remove_finalizer`) through updates. `finalizer_dynamic` on `Unstructured`
//! and metadata-only objects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::meta::PartialObjectMetadata;
use kclient_apimachinery::{
    ApiResource, CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions, Unstructured,
    UpdateOptions,
};
use kclient_cache::CancellationToken;
use kclient_clientset::{Api, Patch};
use kclient_controller::{
    Action, ControllerBuilder, FinalizerError, FinalizerEvent, ObjectRef, add_finalizer,
    contains_finalizer, finalizer, finalizer_dynamic, remove_finalizer,
};
use kclient_rest::Client;
use parking_lot::Mutex;

use crate::{Setup, eventually};

const FINALIZER: &str = "kclient.dev/test-cleanup";
const OTHER: &str = "other.example.com/keep";

struct Ctx {
    client: Client,
    config_maps: Api<ConfigMap>,
    applied: AtomicUsize,
    cleaned: Mutex<Vec<String>>,
    deleted: Mutex<Vec<ObjectRef>>,
}

async fn reconcile(
    cm: Arc<ConfigMap>,
    ctx: Arc<Ctx>,
) -> Result<Action, FinalizerError<kclient_apimachinery::Error>> {
    let inner = Arc::clone(&ctx);
    finalizer(&ctx.client, FINALIZER, cm, |event| async move {
        match event {
            FinalizerEvent::Apply(cm) => {
                assert!(
                    cm.finalizers().contains(&FINALIZER),
                    "Apply without the finalizer"
                );
                inner.applied.fetch_add(1, Ordering::SeqCst);
                Ok(Action::done())
            }
            FinalizerEvent::Cleanup(cm) => {
                assert!(cm.is_being_deleted());
                // Someone writes the object meanwhile: the removal patch, computed from the
                // version we were given, meets a conflict and must read again.
                inner
                    .config_maps
                    .patch(
                        cm.name(),
                        &Patch::Merge(
                            serde_json::json!({"metadata": {"labels": {"cleanup": "seen"}}}),
                        ),
                        &PatchOptions::default(),
                    )
                    .await?;
                inner.cleaned.lock().push(cm.name().to_owned());
                Ok(Action::done())
            }
        }
    })
    .await
}

/// Removes every finalizer of the ConfigMap `name` (a deleted one then goes).
async fn clear_finalizers(config_maps: &Api<ConfigMap>, name: &str) {
    config_maps
        .patch(
            name,
            &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("clearing the finalizers of {name}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizer_is_added_runs_cleanup_on_deletion_and_is_removed() {
    let s = Setup::new().await;
    let ctx = Arc::new(Ctx {
        client: s.client.clone(),
        config_maps: s.config_maps(),
        applied: AtomicUsize::new(0),
        cleaned: Mutex::default(),
        deleted: Mutex::default(),
    });
    s.create_config_map("guarded", &[]).await;
    let controller = ControllerBuilder::new("finalizer-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile(reconcile)
        .on_deleted(|key, ctx: Arc<Ctx>| async move {
            ctx.deleted.lock().push(key);
            Ok(Action::done())
        });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&ctx), shutdown.clone()));

    eventually("the first Apply", || {
        ctx.applied.load(Ordering::SeqCst) >= 1
    })
    .await;
    let cm = s
        .config_maps()
        .get("guarded", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(
        cm.finalizers(),
        [FINALIZER],
        "the finalizer was not added on the server"
    );

    // Another controller's finalizer joins; removing ours must keep it.
    s.config_maps()
        .patch(
            "guarded",
            &Patch::Json(serde_json::json!([
                {"op": "add", "path": "/metadata/finalizers/-", "value": OTHER}
            ])),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    s.config_maps()
        .delete("guarded", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the cleanup", || !ctx.cleaned.lock().is_empty()).await;

    let mut remaining = Vec::new();
    for _ in 0..1500 {
        let cm = s
            .config_maps()
            .get("guarded", &GetOptions::default())
            .await
            .unwrap();
        remaining = cm.finalizers().iter().map(|f| f.to_string()).collect();
        if remaining == [OTHER] {
            assert_eq!(cm.labels().get("cleanup"), Some("seen"));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        remaining,
        [OTHER],
        "our finalizer was not removed, or the other one was lost"
    );
    assert_eq!(
        *ctx.cleaned.lock(),
        ["guarded"],
        "cleanup ran more than once"
    );

    // The other finalizer goes: the API server deletes the object, and the controller sees
    // the key with no object.
    clear_finalizers(&s.config_maps(), "guarded").await;
    eventually("the deleted call", || !ctx.deleted.lock().is_empty()).await;
    assert_eq!(
        *ctx.deleted.lock(),
        [ObjectRef::new(s.ns.name(), "guarded")]
    );
    let gone = s.config_maps().get("guarded", &GetOptions::default()).await;
    assert!(gone.is_err_and(|e| e.is_not_found()));
    assert_eq!(*ctx.cleaned.lock(), ["guarded"], "cleanup ran again");

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// A ConfigMap `name` guarded by [`FINALIZER`], labelled `which`.
fn guarded(name: &str, which: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "finalizers": [FINALIZER],
            "labels": {"which": which},
        },
    }))
    .unwrap()
}

/// Creates the guarded ConfigMap `name` and deletes it: returns it as the server holds it
/// then, being deleted and kept by its finalizer.
async fn deleting(config_maps: &Api<ConfigMap>, name: &str) -> ConfigMap {
    config_maps
        .create(&guarded(name, "first"), &CreateOptions::default())
        .await
        .unwrap();
    config_maps
        .delete(name, &DeleteOptions::default())
        .await
        .unwrap();
    let deleting = config_maps.get(name, &GetOptions::default()).await.unwrap();
    assert!(deleting.is_being_deleted());
    deleting
}

/// Creates a second guarded ConfigMap `name` once the first, whose finalizers were cleared,
/// has gone.
async fn create_in_its_place(config_maps: &Api<ConfigMap>, name: &str) -> ConfigMap {
    for _ in 0..1500 {
        match config_maps
            .create(&guarded(name, "second"), &CreateOptions::default())
            .await
        {
            Ok(cm) => return cm,
            // The first one may not be gone yet.
            Err(e) if e.is_already_exists() => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(e) => panic!("creating the second ConfigMap {name}: {e}"),
        }
    }
    panic!("the second ConfigMap {name} was never created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_is_not_run_on_a_new_object_that_took_the_deleted_ones_name() {
    let s = Setup::new().await;
    let config_maps = s.config_maps();
    // What an informer's cache can still hold: the first object, being deleted, with the
    // finalizer.
    let stale = deleting(&config_maps, "reused").await;
    // Its finalizer goes (say, by this helper on an earlier event), the object with it, and
    // a new one takes the name, carrying the same finalizer (from its manifest).
    clear_finalizers(&config_maps, "reused").await;
    let second = create_in_its_place(&config_maps, "reused").await;
    assert_ne!(second.uid(), stale.uid());

    let events = Mutex::new(Vec::new());
    let action = finalizer(&s.client, FINALIZER, Arc::new(stale), |event| {
        events.lock().push(match event {
            FinalizerEvent::Apply(cm) => format!("apply {}", cm.uid()),
            FinalizerEvent::Cleanup(cm) => format!("cleanup {}", cm.uid()),
        });
        async { Ok::<_, kclient_apimachinery::Error>(Action::done()) }
    })
    .await
    .unwrap();
    assert_eq!(action, Action::done());
    assert!(
        events.lock().is_empty(),
        "the helper ran {:?} for the new object",
        events.lock()
    );
    let live = config_maps
        .get("reused", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(live.uid(), second.uid());
    assert_eq!(
        live.finalizers(),
        [FINALIZER],
        "the new object's finalizer was removed"
    );

    // Let the namespace go at the end of the test.
    clear_finalizers(&config_maps, "reused").await;
}

/// The removal after cleanup meets a conflict because the object it cleaned up went (another
/// party cleared its finalizers) and a new one took its name, with the same finalizer: the
/// helper's second look finds another object, whose finalizer is not its to remove.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_removal_after_cleanup_leaves_a_new_object_of_the_same_name_alone() {
    let s = Setup::new().await;
    let config_maps = s.config_maps();
    let deleting = deleting(&config_maps, "replaced").await;

    let second_uid = Mutex::new(String::new());
    let action = finalizer(&s.client, FINALIZER, Arc::new(deleting.clone()), |event| {
        let config_maps = config_maps.clone();
        let second_uid = &second_uid;
        async move {
            let FinalizerEvent::Cleanup(cm) = event else {
                panic!("Apply for an object being deleted");
            };
            // While the cleanup runs, someone else clears the finalizers: the object goes,
            // and a new one takes its name.
            clear_finalizers(&config_maps, cm.name()).await;
            let second = create_in_its_place(&config_maps, cm.name()).await;
            *second_uid.lock() = second.uid().to_owned();
            Ok::<_, kclient_apimachinery::Error>(Action::done())
        }
    })
    .await
    .unwrap();
    assert_eq!(action, Action::done());
    let live = config_maps
        .get("replaced", &GetOptions::default())
        .await
        .unwrap();
    assert_ne!(live.uid(), deleting.uid());
    assert_eq!(live.uid(), *second_uid.lock());
    assert_eq!(
        live.finalizers(),
        [FINALIZER],
        "the new object's finalizer was removed"
    );

    // Let the namespace go at the end of the test.
    clear_finalizers(&config_maps, "replaced").await;
}

/// controllerutil's helpers edit the list in memory; an update stores it, and the server
/// holds a deleted object until the list is empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_and_remove_finalizer_edit_the_list_an_update_stores() {
    let s = Setup::new().await;
    let config_maps = s.config_maps();
    let mut cm = s.create_config_map("held", &[]).await;
    assert!(add_finalizer(&mut cm, "example.com/other"));
    assert!(add_finalizer(&mut cm, FINALIZER));
    assert!(!add_finalizer(&mut cm, FINALIZER));
    let mut cm = config_maps
        .update(&cm, &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(cm.finalizers(), ["example.com/other", FINALIZER]);

    config_maps
        .delete("held", &DeleteOptions::default())
        .await
        .unwrap();
    let held = config_maps
        .get("held", &GetOptions::default())
        .await
        .unwrap();
    assert!(held.is_being_deleted());
    assert!(contains_finalizer(&held, FINALIZER));

    // One removed: still held by the other.
    cm = held;
    assert!(remove_finalizer(&mut cm, FINALIZER));
    assert!(!remove_finalizer(&mut cm, FINALIZER));
    let mut cm = config_maps
        .update(&cm, &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(cm.finalizers(), ["example.com/other"]);
    // The last removed: the list is left out of the update, and the server deletes the object.
    assert!(remove_finalizer(&mut cm, "example.com/other"));
    assert!(cm.metadata.finalizers.is_none());
    config_maps
        .update(&cm, &UpdateOptions::default())
        .await
        .unwrap();
    let err = config_maps
        .get("held", &GetOptions::default())
        .await
        .expect_err("deleted once its finalizers were gone");
    assert!(err.is_not_found(), "{err}");
}

/// `obj` as the object type of a dynamic or metadata-only controller.
fn retyped<T: serde::de::DeserializeOwned>(obj: &ConfigMap) -> Arc<T> {
    Arc::new(serde_json::from_value(serde_json::to_value(obj).unwrap()).expect("retyped"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizer_dynamic_guards_unstructured_and_metadata_only_objects() {
    let s = Setup::new().await;
    let config_maps = s.config_maps();
    let resource = ApiResource::of::<ConfigMap>();
    let cm = s.create_config_map("dyn-guarded", &[]).await;

    // Unstructured: the finalizer is added, then Apply runs on the object as patched.
    let applied = Mutex::new(Vec::new());
    let obj: Arc<Unstructured> = retyped(&cm);
    finalizer_dynamic(&s.client, &resource, FINALIZER, obj, |event| async {
        match event {
            FinalizerEvent::Apply(obj) => {
                applied.lock().push(obj.finalizers().join(","));
                Ok::<_, kclient_apimachinery::Error>(Action::done())
            }
            FinalizerEvent::Cleanup(_) => panic!("cleanup of a live object"),
        }
    })
    .await
    .expect("apply");
    assert_eq!(*applied.lock(), [FINALIZER]);
    let cm = config_maps
        .get("dyn-guarded", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(cm.finalizers(), [FINALIZER], "not added on the server");

    // Metadata only: the object being deleted is cleaned up, the finalizer removed, and the
    // server deletes it.
    config_maps
        .delete("dyn-guarded", &DeleteOptions::default())
        .await
        .unwrap();
    let deleting = config_maps
        .get("dyn-guarded", &GetOptions::default())
        .await
        .unwrap();
    let obj: Arc<PartialObjectMetadata> = retyped(&deleting);
    let cleaned = AtomicUsize::new(0);
    finalizer_dynamic(&s.client, &resource, FINALIZER, obj, |event| async {
        match event {
            FinalizerEvent::Cleanup(obj) => {
                assert!(obj.is_being_deleted());
                cleaned.fetch_add(1, Ordering::SeqCst);
                Ok::<_, kclient_apimachinery::Error>(Action::done())
            }
            FinalizerEvent::Apply(_) => panic!("apply of an object being deleted"),
        }
    })
    .await
    .expect("cleanup");
    assert_eq!(cleaned.load(Ordering::SeqCst), 1);
    let err = config_maps
        .get("dyn-guarded", &GetOptions::default())
        .await
        .expect_err("deleted once the finalizer was removed");
    assert!(err.is_not_found(), "{err}");
}
