//! `SharedInformerFactory::for_resource` against the real kube-apiserver: asking for a resource
//! by type and by GroupVersionResource, in either order, opens one watch (counted by the
//! server's own metrics); resources without a Rust type fall back to dynamic informers; and
//! `informer_with` / `informer_for` apply per-informer tweaks, indexers and constructors.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, PodTemplate};
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{
    ApiResource, GroupVersionKind, GroupVersionResource, Object, Resource, Selector,
};
use kclient_cache::{DeletedObject, Indexers, ResourceEventHandlerFuncs, SharedIndexInformer};
use kclient_informers::{
    InformerOptions, Representation, SharedInformerFactory, new_list_watch_from_client,
};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// A custom resource type for the CRD `gadgets.h14.kclient.test`, which only this file uses.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Gadget {
    metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<Value>,
}
kclient_apimachinery::impl_object!(Gadget);
impl Resource for Gadget {
    const GROUP: &'static str = "h14.kclient.test";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "h14.kclient.test/v1";
    const KIND: &'static str = "Gadget";
    const PLURAL: &'static str = "gadgets";
    type Scope = kclient_apimachinery::NamespaceResourceScope;
}

/// Creates (or keeps) a namespaced CRD `<plural>.h14.kclient.test` that keeps unknown fields,
/// and waits until the server serves it.
async fn ensure_crd(client: &Client, kind: &str, plural: &str) {
    let name = format!("{plural}.h14.kclient.test");
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "h14.kclient.test",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    });
    let created: Result<Value, _> = client
        .post()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .json(&crd)
        .send()
        .await;
    match created {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating CRD {name}: {e}"),
    }
    for _ in 0..300 {
        let current: Value = client
            .get()
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .name(&name)
            .send()
            .await
            .unwrap_or_else(|e| panic!("reading CRD {name}: {e}"));
        let established = current["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        });
        if established {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("CRD {name} did not become Established in 30 s");
}

async fn create_object(client: &Client, ns: &str, gvr: &GroupVersionResource, body: Value) {
    let _: Value = client
        .post()
        .group_version(&gvr.group, &gvr.version)
        .namespace(ns)
        .resource(&gvr.resource)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("creating a {gvr} in {ns}: {e}"));
}

/// The server's count of namespace-scoped WATCH requests of `resource`: those open now
/// (`apiserver_longrunning_requests`) and those finished (`apiserver_request_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Watches {
    open: u64,
    finished: u64,
}

async fn watches(admin: &Client, group: &str, resource: &str) -> Watches {
    let text = admin
        .get()
        .abs_path("/metrics")
        .bytes()
        .await
        .expect("reading the apiserver's /metrics as admin");
    let text = String::from_utf8_lossy(&text);
    let labels = [
        format!("group=\"{group}\""),
        format!("resource=\"{resource}\""),
        "scope=\"namespace\"".to_string(),
        "verb=\"WATCH\"".to_string(),
        "subresource=\"\"".to_string(),
    ];
    let sum = |metric: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with(&format!("{metric}{{")))
            .filter(|l| labels.iter().all(|label| l.contains(label.as_str())))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .map(|v| v as u64)
            .sum()
    };
    Watches {
        open: sum("apiserver_longrunning_requests"),
        finished: sum("apiserver_request_total"),
    }
}

/// Polls the metrics until `done` holds (for up to 30 s) and returns the last reading.
async fn watches_until(
    admin: &Client,
    group: &str,
    resource: &str,
    what: &str,
    done: impl Fn(Watches) -> bool,
) -> Watches {
    let mut last = watches(admin, group, resource).await;
    for _ in 0..150 {
        if done(last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        last = watches(admin, group, resource).await;
    }
    panic!("{what}: the server's watch count of {resource} stayed at {last:?}");
}

/// The informer names a factory lists in its Debug output.
fn informer_names(factory: &SharedInformerFactory) -> String {
    let debug = format!("{factory:?}");
    debug
        .split("informers: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_type_by_type_and_by_resource_in_either_order_is_one_watch() {
    let env = TestEnv::connect().await;
    let admin = env.client(Identity::Admin);
    let (ns_a, ns_b) = (env.namespace().await, env.namespace().await);
    let gvr = GroupVersionResource::new("", "v1", "podtemplates");
    for (ns, name) in [(ns_a.name(), "tpl-a"), (ns_b.name(), "tpl-b")] {
        create_object(
            &admin,
            ns,
            &gvr,
            json!({"metadata": {"name": name, "labels": {"app": "x"}}, "template": {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}),
        )
        .await;
    }
    let before = watches(&admin, "", "podtemplates").await;

    // Order 1: by type, then by resource.
    let by_type_first =
        SharedInformerFactory::new(admin.clone(), Duration::ZERO).with_namespace(ns_a.name());
    let typed = by_type_first.informer::<PodTemplate>();
    let generic = by_type_first.for_resource(&gvr).expect("for_resource");
    assert_eq!(generic.representation(), Representation::Typed);
    assert_eq!(generic.resource().kind, "PodTemplate");
    let from_generic = generic
        .informer::<PodTemplate>()
        .expect("the generic informer holds PodTemplates");
    // Order 2: by resource, then by type. With the built-in registry (feature `registry`)
    // the factory knows PodTemplate's type before it is asked for it; without, for_resource
    // of a type not asked for yet is dynamic, and the typed informer is a second one.
    let registry = cfg!(feature = "registry");
    let by_gvr_first =
        SharedInformerFactory::new(admin.clone(), Duration::ZERO).with_namespace(ns_b.name());
    let generic_b = if registry {
        by_gvr_first.for_resource(&gvr).expect("for_resource")
    } else {
        // A bare GVR of an unknown type in a namespace-restricted factory has no known scope.
        assert!(by_gvr_first.for_resource(&gvr).is_err());
        by_gvr_first.for_api_resource(&ApiResource::from_gvr(&gvr, "PodTemplate", true))
    };
    let typed_b = by_gvr_first.informer::<PodTemplate>();
    assert!(generic_b.informer::<ConfigMap>().is_none());
    assert_eq!(informer_names(&by_type_first), "[\"v1/podtemplates\"");
    if registry {
        assert_eq!(generic_b.representation(), Representation::Typed);
        assert_eq!(informer_names(&by_gvr_first), "[\"v1/podtemplates\"");
    } else {
        assert_eq!(generic_b.representation(), Representation::Dynamic);
        assert_eq!(
            informer_names(&by_gvr_first),
            "[\"v1/podtemplates\", \"v1/podtemplates (dynamic)\""
        );
        // Once the type is known, for_resource returns the typed informer.
        let now = by_gvr_first.for_resource(&gvr).expect("for_resource");
        assert_eq!(now.representation(), Representation::Typed);
    }
    let watches_expected = if registry { 2 } else { 3 };

    by_type_first.start();
    by_gvr_first.start();
    assert!(by_type_first.wait_for_cache_sync_all().await);
    assert!(by_gvr_first.wait_for_cache_sync_all().await);
    // The handles are one informer: each sees its factory's one object.
    let typed_b_again = by_gvr_first
        .for_resource(&gvr)
        .expect("for_resource")
        .informer::<PodTemplate>()
        .expect("typed now");
    for (informer, other, name) in [
        (&typed, &from_generic, "tpl-a"),
        (&typed_b, &typed_b_again, "tpl-b"),
    ] {
        let names: Vec<String> = informer
            .get_store()
            .list()
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        assert_eq!(names, [name]);
        assert_eq!(
            other.get_store().list_keys(),
            informer.get_store().list_keys()
        );
    }
    let objects = generic_b
        .lister()
        .by_namespace(ns_b.name())
        .list(&Selector::parse("app=x").unwrap());
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].name(), "tpl-b");

    // Two factories, one watch each (with the registry), open now.
    let open = watches_until(&admin, "", "podtemplates", "while running", |w| {
        w.open >= before.open + watches_expected
    })
    .await;
    assert_eq!(
        open.open,
        before.open + watches_expected,
        "{before:?} -> {open:?}"
    );

    by_type_first.shutdown().await;
    by_gvr_first.shutdown().await;
    let after = watches_until(&admin, "", "podtemplates", "after shutdown", |w| {
        w.open == before.open && w.finished >= before.finished + watches_expected
    })
    .await;
    assert_eq!(
        after.finished,
        before.finished + watches_expected,
        "the server saw {} watch requests for two factories",
        after.finished - before.finished
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_type_shared_after_informer_and_unknown_resources_are_dynamic() {
    let env = TestEnv::connect().await;
    let admin = env.client(Identity::Admin);
    ensure_crd(&admin, "Gadget", "gadgets").await;
    ensure_crd(&admin, "Gizmo", "gizmos").await;
    let ns = env.namespace().await;
    let gadgets = GroupVersionResource::of::<Gadget>();
    let gizmos = GroupVersionResource::new("h14.kclient.test", "v1", "gizmos");
    for (gvr, kind) in [(&gadgets, "Gadget"), (&gizmos, "Gizmo")] {
        for name in ["one", "two"] {
            create_object(
                &admin,
                ns.name(),
                gvr,
                json!({"apiVersion": "h14.kclient.test/v1", "kind": kind,
                       "metadata": {"name": name, "labels": {"n": name}}}),
            )
            .await;
        }
    }
    let before = watches(&admin, "h14.kclient.test", "gadgets").await;

    let factory =
        SharedInformerFactory::new(admin.clone(), Duration::ZERO).with_namespace(ns.name());
    // The CRD type is asked for first, so for_resource knows it.
    let typed = factory.informer::<Gadget>();
    let generic = factory.for_resource(&gadgets).expect("for_resource");
    assert_eq!(generic.representation(), Representation::Typed);
    assert!(generic.informer::<Gadget>().is_some());
    // A resource without a Rust type: from its ApiResource, a dynamic informer.
    let gizmo_resource = ApiResource::from_gvr(&gizmos, "Gizmo", true);
    let dynamic = factory.for_api_resource(&gizmo_resource);
    assert_eq!(dynamic.representation(), Representation::Dynamic);
    assert!(dynamic.informer::<Gadget>().is_none());
    // A bare GVR of an unknown resource in a namespace-restricted factory: its scope is
    // unknown, so the factory says so rather than guessing a URL.
    let err = factory
        .for_resource(&GroupVersionResource::new(
            "h14.kclient.test",
            "v1",
            "unknowns",
        ))
        .expect_err("unknown scope");
    assert!(err.to_string().contains("for_api_resource"), "{err}");
    // Once the dynamic informer exists, the bare GVR finds it.
    let again = factory.for_resource(&gizmos).expect("known now");
    assert_eq!(again.representation(), Representation::Dynamic);

    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);
    let mut names: Vec<String> = typed
        .get_store()
        .list()
        .iter()
        .map(|g| g.name().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["one", "two"]);
    let lister = dynamic.lister();
    let mut gizmo_names: Vec<String> = lister
        .list(&Selector::everything())
        .iter()
        .map(|o| o.name().to_string())
        .collect();
    gizmo_names.sort();
    assert_eq!(gizmo_names, ["one", "two"]);
    let one = lister.by_namespace(ns.name()).get("one").expect("get one");
    assert_eq!(one.labels().get("n"), Some("one"));
    assert!(
        lister
            .get_by_key(&format!("{}/two", ns.name()))
            .is_some_and(|o| o.name() == "two")
    );
    match lister.by_namespace(ns.name()).get("three") {
        Err(e) => assert!(e.is_not_found(), "{e}"),
        Ok(o) => panic!("got {} for a missing object", o.name()),
    }
    assert_eq!(
        generic
            .lister()
            .by_namespace(ns.name())
            .list(&Selector::parse("n=two").unwrap())
            .len(),
        1
    );

    let open = watches_until(
        &admin,
        "h14.kclient.test",
        "gadgets",
        "while running",
        |w| w.open > before.open,
    )
    .await;
    assert_eq!(open.open, before.open + 1, "{before:?} -> {open:?}");
    factory.shutdown().await;
    let after = watches_until(
        &admin,
        "h14.kclient.test",
        "gadgets",
        "after shutdown",
        |w| w.open == before.open && w.finished > before.finished,
    )
    .await;
    assert_eq!(
        after.finished,
        before.finished + 1,
        "{before:?} -> {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_with_tweak_and_indexer_and_informer_for_with_a_constructor() {
    let env = TestEnv::connect().await;
    let admin = env.client(Identity::Admin);
    let ns = env.namespace().await;
    let configmaps = GroupVersionResource::new("", "v1", "configmaps");
    for (name, team) in [("blue-1", "blue"), ("blue-2", "blue"), ("red-1", "red")] {
        create_object(
            &admin,
            ns.name(),
            &configmaps,
            json!({"metadata": {"name": name, "labels": {"team": team}}, "data": {"team": team}}),
        )
        .await;
    }
    let factory =
        SharedInformerFactory::new(admin.clone(), Duration::ZERO).with_namespace(ns.name());
    let blue = factory.informer_with::<ConfigMap>(
        InformerOptions::new()
            .tweak_list_options(|opts| opts.label_selector = Some("team=blue".into()))
            .indexer("by-team", |cm: &ConfigMap| {
                cm.data
                    .as_ref()
                    .and_then(|d| d.get("team"))
                    .map(|t| t.to_string())
                    .into_iter()
                    .collect()
            }),
    );
    // Later requests share it, options and all.
    let same = factory.informer::<ConfigMap>();
    let generic = factory.for_resource(&configmaps).expect("for_resource");

    // client-go's InformerFor(obj, newFunc): a caller-made informer, shared like the others.
    let factory_b = SharedInformerFactory::new(admin.clone(), Duration::ZERO);
    let namespace = ns.name().to_string();
    let red = factory_b.informer_for::<ConfigMap>(|client, resync| {
        let lw = new_list_watch_from_client::<ConfigMap>(
            client.clone(),
            Some(&namespace),
            "metadata.name=red-1",
        );
        SharedIndexInformer::new(Arc::new(lw), resync, Default::default())
    });
    let red_again = factory_b
        .for_resource(&configmaps)
        .expect("for_resource")
        .informer::<ConfigMap>()
        .expect("typed");

    factory.start();
    factory_b.start();
    assert!(factory.wait_for_cache_sync_all().await);
    assert!(factory_b.wait_for_cache_sync_all().await);

    let names = |informer: &SharedIndexInformer<ConfigMap>| {
        let mut names: Vec<String> = informer
            .get_store()
            .list()
            .iter()
            .map(|o| o.name().to_string())
            .filter(|n| n != "kube-root-ca.crt")
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&blue), ["blue-1", "blue-2"]);
    assert_eq!(names(&same), ["blue-1", "blue-2"]);
    assert_eq!(generic.lister().list(&Selector::everything()).len(), 2);
    let by_team = blue
        .get_indexer()
        .by_index("by-team", "blue")
        .expect("index");
    assert_eq!(by_team.len(), 2);
    assert!(
        blue.get_indexer()
            .by_index("namespace", ns.name())
            .is_ok_and(|v| v.len() == 2),
        "the namespace index is kept beside the extra one"
    );
    assert_eq!(names(&red), ["red-1"]);
    assert_eq!(names(&red_again), ["red-1"]);

    factory.shutdown().await;
    factory_b.shutdown().await;
}

/// What a handler added through a [`GenericInformer`](kclient_informers::GenericInformer) saw,
/// one line per event.
fn recording_handler(
    events: tokio::sync::mpsc::UnboundedSender<String>,
) -> ResourceEventHandlerFuncs<dyn Object> {
    let (adds, updates) = (events.clone(), events.clone());
    ResourceEventHandlerFuncs::<dyn Object>::new()
        .add_func(move |obj: &Arc<dyn Object>, initial| {
            let _ = adds.send(format!("add {} initial={initial}", obj.name()));
        })
        .update_func(move |old: &Arc<dyn Object>, new: &Arc<dyn Object>| {
            let labels = |o: &Arc<dyn Object>| o.labels().get("app").unwrap_or("").to_owned();
            let _ = updates.send(format!(
                "update {} app {} -> {}",
                new.name(),
                labels(old),
                labels(new)
            ));
        })
        .delete_func(move |deleted: DeletedObject<dyn Object>| {
            let _ = events.send(format!(
                "delete {} tombstone={}",
                deleted.key(),
                deleted.is_tombstone()
            ));
        })
}

/// The next event a recording handler saw, failing the test after 30 s.
async fn next_event(events: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .expect("no event within 30s")
        .expect("the handler is gone")
}

fn names(objects: Vec<Arc<dyn Object>>) -> Vec<String> {
    let mut names: Vec<String> = objects.iter().map(|o| o.name().to_owned()).collect();
    names.sort();
    names
}

/// Handlers and index functions added through a `GenericInformer` see the objects as
/// `dyn Object`, whether the informer underneath is typed (configmaps, a built-in type) or
/// dynamic (a custom resource without a Rust type): the replay of what the cache held when the
/// handler joined, adds, updates and deletes as they happen, index lookups that follow the
/// changes, and nothing more once the handler is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_and_indexers_added_through_a_generic_informer_see_dyn_objects() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    ensure_crd(&client, "Sprocket", "sprockets").await;
    let factory =
        SharedInformerFactory::new(client.clone(), Duration::ZERO).with_namespace(ns.name());
    let configmaps_gvr = GroupVersionResource::new("", "v1", "configmaps");
    // The body of a new object of `gvr` (whose kind is `kind`).
    let object = |gvr: &GroupVersionResource, kind: &str, name: &str, app: Option<&str>| {
        let api_version = GroupVersionKind::new(&gvr.group, &gvr.version, kind).api_version();
        let mut body = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        if let Some(app) = app {
            body["metadata"]["labels"] = json!({ "app": app });
        }
        body
    };
    let sprockets = ApiResource::new(
        &GroupVersionKind::new("h14.kclient.test", "v1", "Sprocket"),
        "sprockets",
        true,
    );
    let cases = [
        (
            configmaps_gvr.clone(),
            "ConfigMap",
            factory.for_resource(&configmaps_gvr).unwrap(),
            Representation::Typed,
        ),
        (
            sprockets.gvr(),
            "Sprocket",
            factory.for_api_resource(&sprockets),
            Representation::Dynamic,
        ),
    ];
    for (gvr, kind, generic, representation) in &cases {
        assert_eq!(generic.representation(), *representation, "{gvr}");
        generic
            .add_indexers(Indexers::new().with("by-app", |o: &dyn Object| {
                o.labels()
                    .get("app")
                    .map(|app| vec![app.to_owned()])
                    .unwrap_or_default()
            }))
            .unwrap();
        create_object(
            &client,
            ns.name(),
            gvr,
            object(gvr, kind, "first", Some("a")),
        )
        .await;
    }
    factory.start();
    assert!(factory.wait_for_cache_sync_all().await);

    for (gvr, kind, generic, _) in &cases {
        let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let registration = generic.add_event_handler(recording_handler(tx)).unwrap();
        // Joined after the sync: what the cache holds is replayed as initial adds.
        assert_eq!(
            next_event(&mut events).await,
            "add first initial=true",
            "{gvr}"
        );

        create_object(
            &client,
            ns.name(),
            gvr,
            object(gvr, kind, "second", Some("a")),
        )
        .await;
        assert_eq!(
            next_event(&mut events).await,
            "add second initial=false",
            "{gvr}"
        );
        assert_eq!(
            names(generic.by_index("by-app", "a").unwrap()),
            ["first", "second"],
            "{gvr}"
        );

        let _: Value = client
            .patch(kclient_apimachinery::PatchType::Merge)
            .group_version(&gvr.group, &gvr.version)
            .namespace(ns.name())
            .resource(&gvr.resource)
            .name("second")
            .json(&json!({"metadata": {"labels": {"app": "b"}}}))
            .send()
            .await
            .expect("patch");
        assert_eq!(
            next_event(&mut events).await,
            "update second app a -> b",
            "{gvr}"
        );
        assert_eq!(names(generic.by_index("by-app", "a").unwrap()), ["first"]);
        assert_eq!(names(generic.by_index("by-app", "b").unwrap()), ["second"]);
        let Err(missing) = generic.by_index("no-such-index", "a") else {
            panic!("{gvr}: a lookup in an index never added found objects");
        };
        assert!(missing.to_string().contains("no-such-index"), "{missing}");

        let _: Value = client
            .delete()
            .group_version(&gvr.group, &gvr.version)
            .namespace(ns.name())
            .resource(&gvr.resource)
            .name("first")
            .send()
            .await
            .expect("delete");
        assert_eq!(
            next_event(&mut events).await,
            format!("delete {}/first tombstone=false", ns.name()),
            "{gvr}"
        );

        // Removed: a handler added after it sees the next object, the removed one does not.
        generic.remove_event_handler(&registration);
        let (tx, mut sentinel) = tokio::sync::mpsc::unbounded_channel();
        generic.add_event_handler(recording_handler(tx)).unwrap();
        assert_eq!(next_event(&mut sentinel).await, "add second initial=true");
        create_object(&client, ns.name(), gvr, object(gvr, kind, "third", None)).await;
        assert_eq!(next_event(&mut sentinel).await, "add third initial=false");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            events.try_recv().ok(),
            None,
            "{gvr}: the removed handler got an event"
        );
    }
    factory.shutdown().await;
}
