//! client-go's event expansion on `core_v1().events(ns)` against the server: `search` by
//! object and by reference, `get_field_selector` with `list`, and the
//! `*_with_event_namespace` writes of a namespace-bound and of the all-namespaces client.

use std::collections::BTreeSet;

use kclient_api::core::v1::{Event, ObjectReference, Pod};
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, ObjectList, PatchOptions,
    UpdateOptions,
};
use kclient_clientset::{Api, Clientset, object_reference};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::from_json;

/// An event named `name` in `namespace` about `about`.
fn event(name: &str, namespace: &str, about: &ObjectReference) -> Event {
    let mut event: Event = from_json(json!({
        "metadata": {"name": name},
        "reason": "Tested", "message": "the test wrote it", "type": "Normal",
        "source": {"component": "kclient-test"},
    }));
    event.set_namespace(namespace);
    event.involved_object = about.clone();
    event
}

/// A reference by kind (when given), name and namespace, without a uid.
fn reference(kind: Option<&str>, name: &str, namespace: &str) -> ObjectReference {
    ObjectReference {
        kind: kind.map(Into::into),
        name: Some(name.into()),
        namespace: (!namespace.is_empty()).then(|| namespace.into()),
        ..Default::default()
    }
}

/// The names of the events listed.
fn names(list: &ObjectList<Event>) -> BTreeSet<String> {
    list.items.iter().map(|e| e.name().to_string()).collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn events_are_searched_by_the_object_they_are_about() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let events = cs.core_v1().events(ns.name());
    let all_events = Api::<Event>::all(cs.rest_client().clone());

    let pod: Pod = from_json(json!({"metadata": {"name": "web"},
        "spec": {"schedulerName": "kclient-test-none",
            "containers": [{"name": "app", "image": "busybox"}]}}));
    let pod = cs
        .core_v1()
        .pods(ns.name())
        .create(&pod, &CreateOptions::default())
        .await
        .unwrap();
    let web = object_reference(&pod);
    let mut earlier_web = web.clone();
    earlier_web.uid = Some("00000000-0000-0000-0000-000000000001".into());
    for (name, about) in [
        ("about-web", web.clone()),
        ("about-earlier-web", earlier_web),
        ("about-db", reference(Some("Pod"), "db", ns.name())),
        (
            "about-web-config",
            reference(Some("ConfigMap"), "web", ns.name()),
        ),
    ] {
        events
            .create_with_event_namespace(&event(name, ns.name(), &about), &CreateOptions::default())
            .await
            .unwrap();
    }

    // The object itself: its name, namespace, kind and uid.
    let found = events.search(&pod).await.unwrap();
    assert_eq!(names(&found), set(&["about-web"]));
    // A reference without a uid finds the events about any object of that kind and name.
    let found = events
        .search(reference(Some("Pod"), "web", ns.name()))
        .await
        .unwrap();
    assert_eq!(names(&found), set(&["about-web", "about-earlier-web"]));
    // Without a kind, any kind.
    let found = events
        .search(reference(None, "web", ns.name()))
        .await
        .unwrap();
    assert_eq!(
        names(&found),
        set(&["about-web", "about-earlier-web", "about-web-config"])
    );
    // The all-namespaces client searches the object's namespace among all.
    let found = all_events.search(&pod).await.unwrap();
    assert_eq!(names(&found), set(&["about-web"]));
    // A namespace-bound client cannot find events of another namespace: refused unsent.
    let err = events
        .search(reference(Some("Pod"), "web", "elsewhere"))
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");

    // The selector, for list (and watch): here by name only.
    let selector = events.get_field_selector(Some("db"), None, None, None);
    assert_eq!(selector.to_string(), "involvedObject.name=db");
    let found = events
        .list(&ListOptions::default().field_selector(selector.to_string()))
        .await
        .unwrap();
    assert_eq!(names(&found), set(&["about-db"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn events_are_written_in_their_own_namespace() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let events = cs.core_v1().events(ns.name());
    let all_events = Api::<Event>::all(cs.rest_client().clone());
    let about = reference(Some("Pod"), "web", ns.name());

    // The all-namespaces client writes in the event's namespace.
    let created = all_events
        .create_with_event_namespace(&event("e", ns.name(), &about), &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(created.namespace(), ns.name());
    let stored = events.get("e", &GetOptions::default()).await.unwrap();
    assert_eq!(stored.uid(), created.uid());

    let mut changed = stored.clone();
    changed.message = Some("updated".into());
    let updated = events
        .update_with_event_namespace(&changed, &UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(updated.message.as_deref(), Some("updated"));
    // Its resourceVersion is a precondition.
    let err = all_events
        .update_with_event_namespace(&changed, &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    // A patch reads only the name and namespace of the event it is given.
    let mut incomplete = Event::default();
    incomplete.set_name("e");
    incomplete.set_namespace(ns.name());
    let patched = all_events
        .patch_with_event_namespace(
            &incomplete,
            &json!({"count": 5, "message": "patched"}),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(patched.count, Some(5));
    assert_eq!(patched.message.as_deref(), Some("patched"));

    // A namespace-bound client refuses, unsent, an event of another namespace or of none.
    let elsewhere = event(
        "x",
        "elsewhere",
        &reference(Some("Pod"), "web", "elsewhere"),
    );
    let err = events
        .create_with_event_namespace(&elsewhere, &CreateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    let err = events
        .patch_with_event_namespace(&elsewhere, &json!({}), &PatchOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    let nowhere = event("x", "", &about);
    let err = all_events
        .update_with_event_namespace(&nowhere, &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
}

/// Events about a cluster-scoped object live in `default` with an empty
/// `involvedObject.namespace`: the all-namespaces client finds them by that empty namespace,
/// a client bound to a namespace refuses to look (client-go's `Search` does the same).
#[tokio::test(flavor = "multi_thread")]
async fn events_about_a_cluster_scoped_object_are_found_from_all_namespaces() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let all_events = Api::<Event>::all(cs.rest_client().clone());
    // Unique to this test's namespace, so that a rerun finds only its own event.
    let node = format!("node-of-{}", ns.name());
    let about = reference(Some("Node"), &node, "");
    let name = format!("about-{node}");
    all_events
        .create_with_event_namespace(&event(&name, "default", &about), &CreateOptions::default())
        .await
        .unwrap();
    let found = all_events.search(about.clone()).await;
    // Cleaned up before asserting, so that a failure leaves nothing behind in `default`.
    cs.core_v1()
        .events("default")
        .delete(&name, &DeleteOptions::default())
        .await
        .unwrap();
    assert_eq!(names(&found.unwrap()), set(&[&name]));
    let err = cs
        .core_v1()
        .events(ns.name())
        .search(about)
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
}
