//! Predicates end to end, and reconciles and error policies that panic.
//!
//! "This event did not wake the key" is shown without waiting for a timeout: with one worker,
//! keys are reconciled in the order their events were handled, and one source's events are
//! handled in order, so once a later event of the same source has been reconciled, any
//! reconcile the earlier event caused has happened too.

use std::collections::HashMap;
use std::sync::Arc;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::{CreateOptions, Object, PatchOptions};
use kclient_cache::CancellationToken;
use kclient_clientset::Patch;
use kclient_controller::{Action, ControllerBuilder, EventFilter, Predicate, owner_reference};
use parking_lot::Mutex;

use crate::{CountingProvider, Setup, eventually};

/// Reconciles counted per ConfigMap name.
#[derive(Default)]
struct Calls(Mutex<HashMap<String, usize>>);

impl Calls {
    fn of(&self, name: &str) -> usize {
        self.0.lock().get(name).copied().unwrap_or(0)
    }
}

async fn count(cm: Arc<ConfigMap>, calls: Arc<Calls>) -> Result<Action, String> {
    *calls.0.lock().entry(cm.name().to_owned()).or_default() += 1;
    Ok(Action::done())
}

impl Setup {
    async fn patch_config_map(&self, name: &str, patch: serde_json::Value) {
        self.config_maps()
            .patch(name, &Patch::Merge(patch), &PatchOptions::default())
            .await
            .unwrap_or_else(|e| panic!("patching ConfigMap {name}: {e}"));
    }

    async fn patch_secret(&self, name: &str, patch: serde_json::Value) {
        self.secrets()
            .patch(name, &Patch::Merge(patch), &PatchOptions::default())
            .await
            .unwrap_or_else(|e| panic!("patching Secret {name}: {e}"));
    }

    async fn create_child(&self, name: &str, owner: &ConfigMap) {
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "ownerReferences": [owner_reference(owner)]},
            "stringData": {"k": "v"},
        }))
        .unwrap();
        self.secrets()
            .create(&secret, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("creating Secret {name}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicates_decide_which_events_reach_the_reconcile() {
    let s = Setup::new().await;
    // Created before the controller starts, so each is reconciled exactly once at the start
    // (see a_panicking_reconcile_counts_as_an_error_and_is_retried).
    let a = s.create_config_map("a", &[]).await;
    let b = s.create_config_map("b", &[]).await;
    let calls = Arc::new(Calls::default());
    // ConfigMaps: adds pass unless the name starts with "ignored"; updates pass when the labels
    // change. Secrets (children): updates pass when the annotations change.
    let controller = ControllerBuilder::new("predicates-test", &s.factory)
        .for_::<ConfigMap>()
        .with_predicate(Predicate::new(|cm: &ConfigMap| {
            !cm.name().starts_with("ignored")
        }))
        .with_predicate(Predicate::labels_changed())
        .owns_with::<Secret>(vec![Predicate::annotations_changed()])
        .workers(1)
        .reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));

    eventually("the first reconcile of a and b", || {
        calls.of("a") == 1 && calls.of("b") == 1
    })
    .await;
    // Created once the workers run, so that its add event (not the term's start) is what the
    // predicate filters here; objects_cached_before_the_start_pass_the_primary_predicates_too
    // covers the start.
    s.create_config_map("ignored", &[]).await;

    // A data change of a is filtered; a label change of b is not. b's reconcile comes after
    // any reconcile of a's earlier event, so a stays at 1. The ignored ConfigMap's add,
    // handled before b's label change, was filtered too.
    s.patch_config_map("a", serde_json::json!({"data": {"k": "changed"}}))
        .await;
    s.label_config_map("b", "step", "1").await;
    eventually("b's reconcile for its label change", || calls.of("b") == 2).await;
    assert_eq!(calls.of("a"), 1, "a data-only change passed labels_changed");
    assert_eq!(calls.of("ignored"), 0, "the add predicate let 'ignored' in");

    // A label change of a passes.
    s.label_config_map("a", "step", "1").await;
    eventually("a's reconcile for its label change", || calls.of("a") == 2).await;

    // Children: creating one passes (adds are not filtered by annotations_changed); a data
    // change of a's child is filtered, an annotation change of b's child is not.
    s.create_child("child-a", &a).await;
    s.create_child("child-b", &b).await;
    eventually("the reconciles for the new children", || {
        calls.of("a") == 3 && calls.of("b") == 3
    })
    .await;
    s.patch_secret(
        "child-a",
        serde_json::json!({"stringData": {"k": "changed"}}),
    )
    .await;
    s.patch_secret(
        "child-b",
        serde_json::json!({"metadata": {"annotations": {"step": "1"}}}),
    )
    .await;
    eventually("b's reconcile for its child's annotation", || {
        calls.of("b") == 4
    })
    .await;
    assert_eq!(
        calls.of("a"),
        3,
        "a child's data change passed annotations_changed"
    );

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// An event filter applies to every source: the start's replay, the primary's events and the
/// children's. "Not woken" is shown as in the test above: a later event of the same source for
/// another key has been reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_filter_applies_to_every_source() {
    let s = Setup::new().await;
    let paused = serde_json::json!({"metadata": {"annotations": {"example.com/paused": "true"}}});
    let a = s.create_config_map("a", &[]).await;
    let b = s.create_config_map("b", &[]).await;
    s.create_config_map("held", &[]).await;
    s.patch_config_map("held", paused.clone()).await;
    let calls = Arc::new(Calls::default());
    // Nothing marked paused, of any type, wakes the controller.
    let unpaused =
        !EventFilter::new(|obj: &dyn Object| obj.annotations().contains_key("example.com/paused"));
    let controller = ControllerBuilder::new("event-filter-test", &s.factory)
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .with_event_filter(unpaused)
        .workers(1)
        .reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));

    // The replay at the start: a and b, not the paused one.
    eventually("the first reconciles of a and b", || {
        calls.of("a") == 1 && calls.of("b") == 1
    })
    .await;
    // Children: a's child created (passes), then paused (filtered); b's child created after.
    s.create_child("child-a", &a).await;
    eventually("a's reconcile for its child", || calls.of("a") == 2).await;
    s.patch_secret("child-a", paused.clone()).await;
    s.create_child("child-b", &b).await;
    eventually("b's reconcile for its child", || calls.of("b") == 2).await;
    assert_eq!(
        calls.of("a"),
        2,
        "a paused child's update passed the filter"
    );
    // The start's keys went out before the children's: held was not among them.
    assert_eq!(
        calls.of("held"),
        0,
        "the replay at the start passed a paused ConfigMap"
    );
    // The primary: a paused (filtered), then b labelled (passes).
    s.patch_config_map("a", paused.clone()).await;
    s.label_config_map("b", "step", "1").await;
    eventually("b's reconcile for its label", || calls.of("b") == 3).await;
    assert_eq!(
        calls.of("a"),
        2,
        "a paused ConfigMap's update passed the filter"
    );
    // Unpaused, the held one passes, and was never reconciled before.
    s.patch_config_map(
        "held",
        serde_json::json!({"metadata": {"annotations": {"example.com/paused": null}}}),
    )
    .await;
    eventually("held's reconcile once unpaused", || calls.of("held") == 1).await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// Reconciles that panic the first `panics` times for "boom".
struct Boom {
    panics: usize,
    calls: Calls,
}

async fn boom(cm: Arc<ConfigMap>, ctx: Arc<Boom>) -> Result<Action, String> {
    let call = {
        let mut calls = ctx.calls.0.lock();
        let n = calls.entry(cm.name().to_owned()).or_default();
        *n += 1;
        *n
    };
    if cm.name() == "boom" && call <= ctx.panics {
        panic!("reconcile of boom panics (call {call})");
    }
    Ok(Action::done())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_reconcile_counts_as_an_error_and_is_retried() {
    let s = Setup::new().await;
    // Both exist before the controller starts, so each is enqueued exactly once at the start
    // (their initial-list events reach the handler before the queue runs). One created while
    // the controller starts can be enqueued twice, by its event and by the start, and be
    // reconciled twice: the counts below would then never match.
    s.create_config_map("boom", &[]).await;
    s.create_config_map("calm", &[]).await;
    let provider = Arc::new(CountingProvider::default());
    let ctx = Arc::new(Boom {
        panics: 2,
        calls: Calls::default(),
    });
    let controller = ControllerBuilder::new("panic-test", &s.factory)
        .for_::<ConfigMap>()
        .workers(2)
        .metrics_provider(Arc::clone(&provider) as _)
        .reconcile(boom);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&ctx), shutdown.clone()));

    // Two panics, each retried with backoff, then a success that forgets the key.
    eventually("boom's third reconcile", || ctx.calls.of("boom") == 3).await;
    eventually("calm's reconcile", || ctx.calls.of("calm") == 1).await;
    eventually("the metrics of 2 errors and 2 successes", || {
        provider.total("panic-test", "error") == 2 && provider.total("panic-test", "success") == 2
    })
    .await;

    // The workers survived: a later change is reconciled as usual.
    s.label_config_map("boom", "after", "panics").await;
    eventually("boom's reconcile after the panics", || {
        ctx.calls.of("boom") == 4
    })
    .await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
    assert_eq!(
        ctx.calls.of("boom"),
        4,
        "boom was reconciled again after shutdown"
    );
}

/// The calls of the reconcile of the test below, and of its error policy.
#[derive(Default)]
struct Unruly {
    calls: Calls,
    policy_calls: Mutex<usize>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_before_the_reconcile_future_or_in_the_error_policy_is_retried_too() {
    let s = Setup::new().await;
    // "early": the reconcile function panics before it returns its future, on its first
    // call. "policy": the reconcile fails on its first call, and the error policy panics on
    // its first. "calm" never fails.
    for name in ["early", "policy", "calm"] {
        s.create_config_map(name, &[]).await;
    }
    let provider = Arc::new(CountingProvider::default());
    // One worker: were a panic to end it, nothing would be reconciled after.
    let controller = ControllerBuilder::new("unruly-test", &s.factory)
        .for_::<ConfigMap>()
        .workers(1)
        .metrics_provider(Arc::clone(&provider) as _)
        .reconcile(|cm: Arc<ConfigMap>, ctx: Arc<Unruly>| {
            let call = {
                let mut calls = ctx.calls.0.lock();
                let n = calls.entry(cm.name().to_owned()).or_default();
                *n += 1;
                *n
            };
            if cm.name() == "early" && call == 1 {
                panic!("the reconcile of early panics before its future");
            }
            let fail = cm.name() == "policy" && call == 1;
            async move {
                if fail {
                    Err("the first reconcile of policy fails".to_owned())
                } else {
                    Ok(Action::done())
                }
            }
        })
        .error_policy(|_key, _error: &String, _retries, ctx: &Unruly| {
            let mut calls = ctx.policy_calls.lock();
            *calls += 1;
            if *calls == 1 {
                panic!("the error policy panics on its first call");
            }
            Action::requeue()
        });
    s.factory.start();
    let ctx = Arc::new(Unruly::default());
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&ctx), shutdown.clone()));

    // Each panic is an error retried with backoff; the retry succeeds.
    eventually("early reconciled again after its panic", || {
        ctx.calls.of("early") == 2
    })
    .await;
    eventually(
        "policy reconciled again after its error policy panicked",
        || ctx.calls.of("policy") == 2,
    )
    .await;
    eventually("calm reconciled", || ctx.calls.of("calm") == 1).await;
    eventually("the metrics of 2 errors and 3 successes", || {
        provider.total("unruly-test", "error") == 2 && provider.total("unruly-test", "success") == 3
    })
    .await;
    assert_eq!(*ctx.policy_calls.lock(), 1, "the error policy's calls");
    assert_eq!(provider.active.lock().0, 0, "active workers once idle");

    // The one worker lives on: a later change is reconciled as usual.
    s.label_config_map("calm", "after", "panics").await;
    eventually("calm reconciled after the panics", || {
        ctx.calls.of("calm") == 2
    })
    .await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

/// controller-runtime starts a controller with each source's initial list as Create events:
/// a ConfigMap the primary predicates filter out is not reconciled for its own sake, even
/// when it was cached before the controller started reconciling, but one that owns a child
/// is, through the child's Create event (`owns` has predicates of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_cached_before_the_start_pass_the_primary_predicates_too() {
    let s = Setup::new().await;
    s.create_config_map("ignored", &[]).await;
    let owner = s.create_config_map("ignored-owner", &[]).await;
    s.create_child("child", &owner).await;
    s.create_config_map("wanted", &[]).await;
    let calls = Arc::new(Calls::default());
    let controller = ControllerBuilder::new("initial-predicates-test", &s.factory)
        .for_::<ConfigMap>()
        .with_predicate(Predicate::new(|cm: &ConfigMap| {
            !cm.name().starts_with("ignored")
        }))
        .owns::<Secret>()
        .workers(1)
        .reconcile(count);
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&calls), shutdown.clone()));

    eventually("the first reconcile of wanted", || calls.of("wanted") == 1).await;
    eventually("the reconcile of the child's owner", || {
        calls.of("ignored-owner") == 1
    })
    .await;
    // A later event of the same source, reconciled after anything the start enqueued.
    s.label_config_map("wanted", "step", "1").await;
    eventually("wanted's reconcile for its label", || {
        calls.of("wanted") == 2
    })
    .await;
    assert_eq!(
        calls.of("ignored"),
        0,
        "a ConfigMap the predicate filters out was reconciled at the start"
    );

    shutdown.cancel();
    run.await.unwrap().unwrap();
}
