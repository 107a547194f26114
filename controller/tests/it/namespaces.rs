//! A controller over a set of namespaces, each watched by a factory of its own
//! (`with_factory`), under a manager that starts and waits for every factory, as an identity
//! granted only those namespaces: the objects of every watched namespace reach one queue,
//! children wake their owners in their namespace, `reconcile_all_on` replays every namespace
//! once, deletes reach `on_deleted`, and a namespace no factory watches is never reconciled.
//! The controller waits for every factory's caches, and refuses factories that overlap.
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::{CreateOptions, DeleteOptions, Object};
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::manager::Manager;
use kclient_controller::{Action, ControllerBuilder, ObjectRef, owner_reference};
use kclient_informers::SharedInformerFactory;
use kclient_rest::Verb;
use kclient_testenv::{Identity, TestEnv};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{Setup, eventually};

/// Reconciles counted by `namespace/name`.
#[derive(Default)]
struct Seen(Mutex<HashMap<String, usize>>);

impl Seen {
    fn of(&self, key: &str) -> usize {
        self.0.lock().get(key).copied().unwrap_or(0)
    }
    fn in_namespace(&self, namespace: &str) -> usize {
        let prefix = format!("{namespace}/");
        self.0
            .lock()
            .iter()
            .filter(|(key, _)| key.starts_with(&prefix))
            .map(|(_, n)| n)
            .sum()
    }
}

async fn create(client: &kclient_rest::Client, namespace: &str, name: &str) -> ConfigMap {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    cms.create(
        &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
        &CreateOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("creating ConfigMap {namespace}/{name}: {e}"))
}

/// Lets `kclient-restricted`, which has no other grant, read ConfigMaps and Secrets in
/// `namespace`.
async fn grant_reads(admin: &kclient_rest::Client, namespace: &str) {
    for (resource, body) in [
        (
            "roles",
            json!({"metadata": {"name": "reader"}, "rules": [{
                "apiGroups": [""], "resources": ["configmaps", "secrets"],
                "verbs": ["get", "list", "watch"],
            }]}),
        ),
        (
            "rolebindings",
            json!({"metadata": {"name": "reader"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                              "name": "kclient-restricted"}]}),
        ),
    ] {
        admin
            .verb(Verb::Post)
            .group_version("rbac.authorization.k8s.io", "v1")
            .namespace(namespace)
            .resource(resource)
            .json(&body)
            .send::<serde_json::Value>()
            .await
            .unwrap_or_else(|e| panic!("creating the {resource} in {namespace}: {e}"));
    }
}

/// Under a manager that starts, waits for and shuts down both factories, as an identity whose
/// roles grant only the two namespaces (so no factory could watch every namespace).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_controller_reconciles_the_namespaces_of_its_factories() {
    let s = Setup::new().await;
    let env = TestEnv::connect().await;
    let (second, unwatched) = (env.namespace().await, env.namespace().await);
    let (first, second_ns, other) = (s.ns.name(), second.name(), unwatched.name());
    grant_reads(&s.client, first).await;
    grant_reads(&s.client, second_ns).await;
    let restricted = env.client(Identity::Restricted);
    let factory = |namespace: &str| {
        SharedInformerFactory::new(restricted.clone(), Duration::ZERO).with_namespace(namespace)
    };
    create(&s.client, first, "a").await;
    let b = create(&s.client, second_ns, "b").await;
    create(&s.client, other, "c").await;

    let mut manager = Manager::builder(factory(first))
        .with_factory(factory(second_ns))
        .build()
        .unwrap();
    let seen = Arc::new(Seen::default());
    let (tick, mut ticks) = mpsc::channel::<()>(1);
    let controller = ControllerBuilder::new("namespaces-test", manager.factory())
        .with_factory(&manager.factories()[1])
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .reconcile_all_on(futures_util::stream::poll_fn(move |cx| ticks.poll_recv(cx)))
        .workers(1)
        .reconcile(|cm: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            let key = format!("{}/{}", cm.namespace(), cm.name());
            *seen.0.lock().entry(key).or_default() += 1;
            Ok::<_, String>(Action::done())
        })
        .on_deleted(|key: ObjectRef, seen: Arc<Seen>| async move {
            *seen.0.lock().entry(format!("deleted {key}")).or_default() += 1;
            Ok::<_, String>(Action::done())
        });
    // Each source described once, however many factories it watches through.
    assert!(
        format!("{controller:?}")
            .contains(r#"sources: ["for ConfigMap", "owns Secret", "reconcile_all_on a stream"]"#),
        "{controller:?}"
    );
    manager
        .add_controller(controller, Arc::clone(&seen))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));

    let (a_key, b_key) = (format!("{first}/a"), format!("{second_ns}/b"));
    eventually(
        "the first reconciles of a and b, in their namespaces",
        || seen.of(&a_key) == 1 && seen.of(&b_key) == 1,
    )
    .await;

    // A child of b, in b's namespace, wakes b.
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), second_ns);
    secrets
        .create(
            &serde_json::from_value(json!({"metadata": {
                "name": "child", "ownerReferences": [owner_reference(&b)],
            }}))
            .unwrap(),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    eventually("b's reconcile for its child", || seen.of(&b_key) == 2).await;

    // A ConfigMap created in the second namespace, and a tick: every watched namespace's
    // ConfigMaps again, each once (each namespace's cache is its factory's alone).
    let d_key = format!("{second_ns}/d");
    create(&s.client, second_ns, "d").await;
    eventually("d's reconcile", || seen.of(&d_key) == 1).await;
    tick.send(()).await.unwrap();
    eventually("the tick's reconciles in both namespaces", || {
        seen.of(&a_key) == 2 && seen.of(&b_key) == 3 && seen.of(&d_key) == 2
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        (seen.of(&a_key), seen.of(&b_key), seen.of(&d_key)),
        (2, 3, 2),
        "reconciled more than once per event"
    );
    assert_eq!(
        seen.in_namespace(other),
        0,
        "a namespace no factory watches was reconciled"
    );

    // A delete in the second namespace: the key reaches on_deleted.
    let cms: Api<ConfigMap> = Api::namespaced(s.client.clone(), second_ns);
    cms.delete("d", &DeleteOptions::default()).await.unwrap();
    eventually("on_deleted of d", || {
        seen.of(&format!("deleted {d_key}")) == 1
    })
    .await;

    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caches_of_every_factory_are_waited_for_and_overlaps_are_refused() {
    let s = Setup::new().await;
    let env = TestEnv::connect().await;
    let second = env.namespace().await;
    let never_started =
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(second.name());
    let noop = |_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, String>(Action::done()) };
    // The second factory is never started: its cache never syncs, and the controller says so.
    let controller = ControllerBuilder::new("namespaces-sync-test", &s.factory)
        .with_factory(&never_started)
        .for_::<ConfigMap>()
        .cache_sync_timeout(Duration::from_secs(2))
        .reconcile(noop);
    s.factory.start();
    let err = controller
        .run(Arc::new(()), CancellationToken::new())
        .await
        .expect_err("a factory that never started");
    assert!(err.is_cache_sync(), "{err}");

    // A factory of every namespace beside a namespaced one, or two of one namespace: refused.
    let everywhere = SharedInformerFactory::new(s.client.clone(), Duration::ZERO);
    let again =
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(s.ns.name());
    for (other, problem) in [
        (
            &everywhere,
            "one of its factories watches every namespace".to_owned(),
        ),
        (
            &again,
            format!("two of its factories watch namespace {}", s.ns.name()),
        ),
    ] {
        let err = ControllerBuilder::new("namespaces-overlap-test", &s.factory)
            .with_factory(other)
            .for_::<ConfigMap>()
            .reconcile(noop)
            .run(Arc::new(()), CancellationToken::new())
            .await
            .expect_err("overlapping factories");
        assert!(err.is_overlapping_factories(), "{err}");
        assert!(err.to_string().contains(&problem), "{err}");
    }
    // A manager refuses such a controller when it is added, before anything starts.
    let mut manager =
        Manager::builder(SharedInformerFactory::new(s.client.clone(), Duration::ZERO))
            .build()
            .unwrap();
    let overlapping = ControllerBuilder::new("namespaces-overlap-test", manager.factory())
        .with_factory(&s.factory)
        .for_::<ConfigMap>()
        .reconcile(noop);
    let err = manager
        .add_controller(overlapping, Arc::new(()))
        .expect_err("overlapping factories");
    assert!(err.is_overlapping_factories(), "{err}");

    // The same factory twice is the one factory.
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(
        ControllerBuilder::new("namespaces-same-test", &s.factory)
            .with_factory(&s.factory)
            .for_::<ConfigMap>()
            .reconcile(noop)
            .run(Arc::new(()), shutdown.clone()),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!run.is_finished(), "the same factory twice was refused");
    shutdown.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_uncached_watches_the_children_of_every_namespace() {
    let s = Setup::new().await;
    let env = TestEnv::connect().await;
    let second = env.namespace().await;
    let second_factory =
        SharedInformerFactory::new(s.client.clone(), Duration::ZERO).with_namespace(second.name());
    let a = create(&s.client, s.ns.name(), "a").await;
    let b = create(&s.client, second.name(), "b").await;
    let seen = Arc::new(Seen::default());
    let controller = ControllerBuilder::new("namespaces-uncached-test", &s.factory)
        .with_factory(&second_factory)
        .for_::<ConfigMap>()
        .owns_uncached::<Secret>()
        .workers(1)
        .reconcile(|cm: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            let key = format!("{}/{}", cm.namespace(), cm.name());
            *seen.0.lock().entry(key).or_default() += 1;
            Ok::<_, String>(Action::done())
        });
    s.factory.start();
    second_factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::clone(&seen), shutdown.clone()));
    let (a_key, b_key) = (format!("{}/a", s.ns.name()), format!("{}/b", second.name()));
    eventually("the first reconciles", || {
        seen.of(&a_key) >= 1 && seen.of(&b_key) >= 1
    })
    .await;
    let (a_before, b_before) = (seen.of(&a_key), seen.of(&b_key));
    for (owner, namespace) in [(&a, s.ns.name()), (&b, second.name())] {
        let secrets: Api<Secret> = Api::namespaced(s.client.clone(), namespace);
        secrets
            .create(
                &serde_json::from_value(json!({"metadata": {
                    "name": "child", "ownerReferences": [owner_reference(owner)],
                }}))
                .unwrap(),
                &CreateOptions::default(),
            )
            .await
            .unwrap();
    }
    eventually("both owners woken by their children", || {
        seen.of(&a_key) > a_before && seen.of(&b_key) > b_before
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
    second_factory.shutdown().await;
}
