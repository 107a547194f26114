//! The OS threads of a controller-shaped process, counted against the real kube-apiserver:
//! 40 informers (ConfigMaps), 2 handlers on each, and 40 delaying workqueues drained by async
//! workers, on a multi-thread tokio runtime with its default worker count.
//!
//! The target (issue 21): at most 2x the runtime's worker threads plus 8 further threads, in
//! all (this test's own harness threads included). Handlers run on the cache's shared handler
//! pool and the delaying queues on the workqueue's one timer thread, so the count does not grow
//! with informers, handlers or queues. The test prints the count and each thread's name:
//! `cargo test -p kclient-informers --test threads -- --nocapture`.
//!
//! It is its own test binary so that no other test's threads are counted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::Object;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_cache::ResourceEventHandlerFuncs;
use kclient_informers::SharedInformerFactory;
use kclient_testenv::{Identity, TestEnv};
use kclient_workqueue::DelayingQueue;

const INFORMERS: usize = 40;
const HANDLERS_PER_INFORMER: usize = 2;
const QUEUES: usize = 40;
const CONFIGMAPS: usize = 3;

/// The names of this process's threads, by name, with how many have it.
fn threads() -> BTreeMap<String, usize> {
    let mut names = BTreeMap::new();
    let tasks = std::fs::read_dir("/proc/self/task")
        .unwrap_or_else(|e| panic!("reading /proc/self/task (Linux only): {e}"));
    for task in tasks {
        let task = task.expect("an entry of /proc/self/task");
        let name = std::fs::read_to_string(task.path().join("comm"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "?".to_owned());
        *names.entry(name).or_insert(0) += 1;
    }
    names
}

/// Waits, bounded, until `done` holds, then returns; panics with `what` otherwise.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn forty_informers_two_handlers_each_and_forty_queues_share_a_few_threads() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let workers = runtime.metrics().num_workers();
    let (count, names) = runtime.block_on(async {
        let env = TestEnv::connect().await;
        let ns = env.namespace().await;
        let client = env.client(Identity::Admin);
        for i in 0..CONFIGMAPS {
            let cm = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(format!("cm-{i}").into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            let created: Result<ConfigMap, _> = client
                .post()
                .group_version("", "v1")
                .namespace(ns.name())
                .resource("configmaps")
                .json(&cm)
                .send()
                .await;
            created.unwrap_or_else(|e| panic!("creating ConfigMap cm-{i}: {e}"));
        }

        let processed = Arc::new(AtomicUsize::new(0));
        let queues: Vec<DelayingQueue<String>> =
            (0..QUEUES).map(|_| DelayingQueue::new()).collect();
        let mut workers_done = Vec::new();
        for queue in &queues {
            let queue = queue.clone();
            let processed = processed.clone();
            workers_done.push(tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    processed.fetch_add(1, Ordering::SeqCst);
                    queue.done(&key);
                }
            }));
        }

        let delivered = Arc::new(AtomicUsize::new(0));
        let mut factories = Vec::new();
        for i in 0..INFORMERS {
            let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
                .with_namespace(ns.name());
            let informer = factory.informer::<ConfigMap>();
            for h in 0..HANDLERS_PER_INFORMER {
                let queue = queues[i % QUEUES].clone();
                let delivered = delivered.clone();
                informer
                    .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
                        move |cm: &Arc<ConfigMap>, _| {
                            delivered.fetch_add(1, Ordering::SeqCst);
                            // One handler through the delay path, one straight in.
                            let key = format!("{}/{}/{h}", i, cm.name());
                            if h == 0 {
                                queue.add_after(key, Duration::from_millis(5));
                            } else {
                                queue.add(key);
                            }
                        },
                    ))
                    .expect("adding a handler");
            }
            factory.start();
            factories.push(factory);
        }
        for factory in &factories {
            assert!(
                factory.wait_for_cache_sync_all().await,
                "an informer never synced"
            );
        }
        let expected = INFORMERS * HANDLERS_PER_INFORMER * CONFIGMAPS;
        eventually("not every handler got every ConfigMap", || {
            delivered.load(Ordering::SeqCst) == expected
        })
        .await;
        eventually("the queues' workers did not process every key", || {
            processed.load(Ordering::SeqCst) == expected
        })
        .await;

        // The handler pool adds a thread when its work waits 50 ms with none taken (on a
        // loaded machine, a stalled core can look like a blocking handler), and ends it after
        // 10 s without work: count the threads the process settles on, waiting out such
        // threads for at most 15 s.
        let target = 2 * workers + 8;
        let settle = Instant::now() + Duration::from_secs(15);
        let (count, names) = loop {
            let names = threads();
            let count = names.values().sum::<usize>();
            if count <= target || Instant::now() >= settle {
                break (count, names);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };

        for factory in &factories {
            factory.shutdown().await;
        }
        for queue in &queues {
            queue.shut_down();
        }
        for done in workers_done {
            done.await.expect("a queue worker");
        }
        (count, names)
    });
    println!(
        "threads: {count} with {INFORMERS} informers x {HANDLERS_PER_INFORMER} handlers and \
         {QUEUES} delaying queues; runtime workers: {workers}; by name: {names:?}"
    );
    let target = 2 * workers + 8;
    assert!(
        count <= target,
        "{count} OS threads, more than the target 2 x {workers} runtime workers + 8 = {target}: {names:?}"
    );
}
