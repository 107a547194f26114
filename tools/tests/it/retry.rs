//! `retry_on_conflict` against real 409 Conflicts from concurrent updates.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kclient_apimachinery::{CreateOptions, GetOptions, UpdateOptions};
use kclient_clientset::Clientset;
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{DEFAULT_RETRY, retry_on_conflict};
use tokio::sync::Barrier;

use crate::configmap;

#[tokio::test(flavor = "multi_thread")]
async fn retry_on_conflict_resolves_concurrent_updates() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let cms = cs.core_v1().config_maps(ns.name());
    cms.create(
        &configmap("counter", &[("n", "0")]),
        &CreateOptions::default(),
    )
    .await
    .expect("create");

    // Every writer's first attempt reads the same version, then they all write: all but one
    // get a 409 from the server and must re-read and retry.
    const WRITERS: usize = 4;
    let barrier = Arc::new(Barrier::new(WRITERS));
    let attempts = Arc::new(AtomicUsize::new(0));
    let conflicts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let cms = cms.clone();
        let barrier = barrier.clone();
        let attempts = attempts.clone();
        let conflicts = conflicts.clone();
        tasks.push(tokio::spawn(async move {
            let mut first = true;
            retry_on_conflict(DEFAULT_RETRY, || {
                let cms = cms.clone();
                let barrier = barrier.clone();
                let conflicts = conflicts.clone();
                let synchronize = std::mem::replace(&mut first, false);
                attempts.fetch_add(1, Ordering::SeqCst);
                async move {
                    let mut cm = cms.get("counter", &GetOptions::default()).await?;
                    if synchronize {
                        barrier.wait().await;
                    }
                    let data = cm.data.get_or_insert_with(Default::default);
                    let n: u32 = data.get("n").and_then(|v| v.parse().ok()).unwrap_or(0);
                    data.insert("n", (n + 1).to_string().into());
                    let result = cms.update(&cm, &UpdateOptions::default()).await;
                    if let Err(e) = &result
                        && e.is_conflict()
                    {
                        conflicts.fetch_add(1, Ordering::SeqCst);
                    }
                    result
                }
            })
            .await
        }));
    }
    for task in tasks {
        task.await
            .expect("task")
            .expect("update succeeds after retries");
    }
    let cm = cms
        .get("counter", &GetOptions::default())
        .await
        .expect("get");
    let n = cm
        .data
        .as_ref()
        .and_then(|d| d.get("n"))
        .map(|v| v.to_string());
    assert_eq!(n.as_deref(), Some("4"), "no update was lost");
    assert!(
        conflicts.load(Ordering::SeqCst) >= WRITERS - 1,
        "the server sent conflicts"
    );
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        WRITERS + conflicts.load(Ordering::SeqCst),
        "every conflict was retried once more"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_on_conflict_returns_the_last_conflict_when_steps_run_out() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let cms = cs.core_v1().config_maps(ns.name());
    let created = cms
        .create(
            &configmap("stale", &[("k", "v")]),
            &CreateOptions::default(),
        )
        .await
        .expect("create");
    // Move the object on, then keep writing the stale copy: every try conflicts.
    let mut newer = created.clone();
    newer
        .data
        .get_or_insert_with(Default::default)
        .insert("k", "w".into());
    cms.update(&newer, &UpdateOptions::default())
        .await
        .expect("update");
    let attempts = AtomicUsize::new(0);
    let opts = UpdateOptions::default();
    let err = retry_on_conflict(DEFAULT_RETRY, || {
        attempts.fetch_add(1, Ordering::SeqCst);
        cms.update(&created, &opts)
    })
    .await
    .expect_err("a stale write never succeeds");
    assert!(err.is_conflict(), "{err}");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        DEFAULT_RETRY.steps as usize
    );
}
