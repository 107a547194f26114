//! CRUD, selectors, pagination, watch and dry run through the typed client and the
//! clientset's navigation.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use kclient_api::coordination::v1::Lease;
use kclient_api::core::v1::{ConfigMap, Pod};
use kclient_api::rbac::v1::Role;
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, UpdateOptions, WatchEvent,
};
use kclient_clientset::{Api, Clientset};
use kclient_testenv::{Identity, TestEnv};
use serde_json::json;

use crate::{from_json, to_json};

fn configmap(name: &str, labels: serde_json::Value) -> ConfigMap {
    from_json(json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
}

#[tokio::test(flavor = "multi_thread")]
async fn crud_through_the_clientset() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cs = Clientset::new(env.client(Identity::Admin));
    let cms = cs.core_v1().config_maps(ns.name());

    let created = cms
        .create(
            &configmap("one", json!({"app": "web"})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(created.name(), "one");
    assert_eq!(Object::namespace(&created), ns.name());
    assert!(!created.uid().is_empty());

    let err = cms
        .create(&configmap("one", json!({})), &CreateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");

    let mut got = cms.get("one", &GetOptions::default()).await.unwrap();
    assert_eq!(to_json(&got)["data"]["k"], "v");
    got.data = Some(from_json(json!({"k": "w"})));
    let updated = cms.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!(to_json(&updated)["data"]["k"], "w");
    assert_ne!(updated.resource_version(), got.resource_version());
    // A stale resourceVersion is a conflict.
    let err = cms
        .update(&got, &UpdateOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    cms.delete("one", &DeleteOptions::default()).await.unwrap();
    let err = cms.get("one", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found());

    // Another group through the navigation: coordination.k8s.io/v1 leases.
    let leases = cs.coordination_v1().leases(ns.name());
    let lease: Lease = from_json(json!({"metadata": {"name": "leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}));
    leases
        .create(&lease, &CreateOptions::default())
        .await
        .unwrap();
    let lease = leases.get("leader", &GetOptions::default()).await.unwrap();
    assert_eq!(to_json(&lease)["spec"]["holderIdentity"], "a");

    // A cluster-scoped kind.
    let namespaces = cs
        .core_v1()
        .namespaces()
        .list(&ListOptions::default())
        .await
        .unwrap();
    assert!(namespaces.items.iter().any(|n| n.name() == ns.name()));
}

#[tokio::test(flavor = "multi_thread")]
async fn selectors_pagination_and_all_namespaces() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    for i in 0..7 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        cms.create(
            &configmap(&format!("cm-{i}"), json!({"suite": "paging", "tier": tier})),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    }

    let even = cms
        .list(&ListOptions::default().label_selector("suite=paging,tier=even"))
        .await
        .unwrap();
    assert_eq!(even.items.len(), 4);
    let not_even = cms
        .list(&ListOptions::default().label_selector("suite=paging,tier!=even"))
        .await
        .unwrap();
    assert_eq!(not_even.items.len(), 3);
    let by_name = cms
        .list(&ListOptions::default().field_selector("metadata.name=cm-3"))
        .await
        .unwrap();
    assert_eq!(by_name.items.len(), 1);
    assert_eq!(by_name.items[0].name(), "cm-3");

    // limit/continue: 7 objects in pages of 3 -> 3 pages.
    let mut names = BTreeSet::new();
    let mut pages = 0;
    let mut opts = ListOptions::default()
        .label_selector("suite=paging")
        .limit(3);
    loop {
        let page = cms.list(&opts).await.unwrap();
        pages += 1;
        assert!(page.items.len() <= 3);
        names.extend(page.items.iter().map(|c| c.name().to_owned()));
        match page.continue_token() {
            Some(token) => opts = opts.continue_token(token),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names.len(), 7);

    // Reading every namespace is explicit, and finds ours.
    let everywhere = Api::<ConfigMap>::all(client)
        .list(&ListOptions::default().label_selector("suite=paging"))
        .await
        .unwrap();
    assert!(
        everywhere
            .items
            .iter()
            .filter(|c| Object::namespace(*c) == ns.name())
            .count()
            == 7
    );
}

/// A Role's name is only checked as a path segment, so it may hold a tab or a line break:
/// the request for it must name that object, not the one whose name lacks them.
#[tokio::test(flavor = "multi_thread")]
async fn names_with_tabs_and_line_breaks_address_their_own_object() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let roles: Api<Role> = Api::namespaced(env.client(Identity::Admin), ns.name());
    for name in ["ab", "a\tb", "a\nb"] {
        let role: Role = from_json(json!({"metadata": {"name": name}}));
        roles
            .create(&role, &CreateOptions::default())
            .await
            .unwrap();
    }
    for name in ["a\tb", "a\nb"] {
        let got = roles.get(name, &GetOptions::default()).await.unwrap();
        assert_eq!(got.name(), name);
        roles.delete(name, &DeleteOptions::default()).await.unwrap();
        let err = roles.get(name, &GetOptions::default()).await.unwrap_err();
        assert!(err.is_not_found(), "{err}");
    }
    // The role without them is still there.
    let left = roles.get("ab", &GetOptions::default()).await.unwrap();
    assert_eq!(left.name(), "ab");
}

/// A write without a field manager is recorded under the program's name, as the server reads
/// it from the `User-Agent` (client-go sends `<program>/<version> ...`): two programs on
/// kclient must not share one manager.
#[tokio::test(flavor = "multi_thread")]
async fn writes_without_a_field_manager_are_owned_by_the_program() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let created = cms
        .create(&configmap("owned", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    let program = std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap();
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|entry| entry.manager.as_deref())
        .collect();
    assert_eq!(managers, [program.as_str()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_yields_typed_events() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let start = cms.list(&ListOptions::default()).await.unwrap();
    let mut events = cms
        .watch(
            &ListOptions::default()
                .resource_version(start.resource_version())
                .timeout_seconds(60),
        )
        .await
        .unwrap();

    let created = cms
        .create(&configmap("watched", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    let mut changed = created.clone();
    changed.data = Some(from_json(json!({"k": "changed"})));
    cms.update(&changed, &UpdateOptions::default())
        .await
        .unwrap();
    cms.delete("watched", &DeleteOptions::default())
        .await
        .unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("an event within 10s")
            .expect("the watch is open")
            .expect("a decoded event");
        match event {
            WatchEvent::Added(cm) => seen.push(("ADDED", cm)),
            WatchEvent::Modified(cm) => seen.push(("MODIFIED", cm)),
            WatchEvent::Deleted(cm) => seen.push(("DELETED", cm)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(status) => panic!("watch error {status:?}"),
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED"]);
    assert_eq!(to_json(&seen[1].1)["data"]["k"], "changed");
    assert!(seen.iter().all(|(_, cm)| cm.name() == "watched"));
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_persists_nothing() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let dry = cms
        .create(
            &configmap("dry", json!({})),
            &CreateOptions::default().dry_run(true),
        )
        .await
        .unwrap();
    assert_eq!(dry.name(), "dry");
    assert!(
        cms.get("dry", &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );

    let real = cms
        .create(&configmap("real", json!({})), &CreateOptions::default())
        .await
        .unwrap();
    let mut changed = real.clone();
    changed.data = Some(from_json(json!({"k": "dry"})));
    cms.update(&changed, &UpdateOptions::default().dry_run(true))
        .await
        .unwrap();
    cms.delete("real", &DeleteOptions::default().dry_run(true))
        .await
        .unwrap();
    let still = cms.get("real", &GetOptions::default()).await.unwrap();
    assert_eq!(to_json(&still)["data"]["k"], "v");
    assert_eq!(still.resource_version(), real.resource_version());
}

#[tokio::test(flavor = "multi_thread")]
async fn forbidden_for_an_identity_without_grants() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Restricted), ns.name());
    let err = pods.list(&ListOptions::default()).await.unwrap_err();
    assert!(err.is_forbidden(), "{err}");
}

/// A typed watch skips an event whose object is of another kind (a broken proxy or aggregated
/// API could send one) rather than decoding it into `K`, and goes on with the next; the server
/// here is scripted, as no real API server sends one.
#[tokio::test(flavor = "multi_thread")]
async fn a_typed_watch_skips_an_object_of_another_kind() {
    use kclient_testenv::{MisbehavingServer, Reply, StreamEnd};
    let line = |event: serde_json::Value| {
        let mut line = serde_json::to_vec(&event).unwrap();
        line.push(b'\n');
        line
    };
    let server = MisbehavingServer::start(move |_req| {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a-pod", "namespace": "ns", "resourceVersion": "101"}});
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a-cm", "namespace": "ns", "resourceVersion": "102"}});
        Reply::watch_lines(
            [
                line(json!({"type": "ADDED", "object": pod})),
                line(json!({"type": "ADDED", "object": cm})),
            ],
            StreamEnd::Finish,
        )
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
    let events: Vec<_> = cms
        .watch(&ListOptions::default())
        .await
        .unwrap()
        .collect()
        .await;
    let names: Vec<String> = events
        .into_iter()
        .map(|e| match e.expect("a decoded event") {
            WatchEvent::Added(cm) => cm.name().to_owned(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(names, ["a-cm"], "the Pod was decoded as a ConfigMap");
}

/// A 200 whose body is a `Status` saying NotFound (a broken aggregated API could send one) is
/// the NotFound error, as client-go's typed `Get` (`Result.Into`) returns it, not a ConfigMap
/// decoded from the Status's fields: in JSON, and with the `protobuf` feature in protobuf too.
#[tokio::test(flavor = "multi_thread")]
async fn a_200_status_that_says_not_found_is_the_not_found_error() {
    use kclient_apimachinery::{Status, StatusReason};
    use kclient_testenv::{MisbehavingServer, Reply};
    let status = Status::failure(404, StatusReason::NotFound, "configmaps \"x\" not found");
    let json_body = serde_json::to_vec(&status).unwrap();
    let server = MisbehavingServer::start(move |_req| Reply::json(json_body.clone())).await;
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
    let got = cms.get("x", &GetOptions::default()).await;
    let err = got.expect_err("a NotFound Status is not a ConfigMap");
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.to_string(), "configmaps \"x\" not found");

    #[cfg(feature = "protobuf")]
    {
        let body = kclient_apimachinery::protobuf::encode("v1", "Status", &status);
        server.set_handler(move |_req| Reply::Body {
            status: 200,
            content_type: kclient_apimachinery::protobuf::CONTENT_TYPE_PROTOBUF.to_owned(),
            body: body.clone(),
        });
        assert_eq!(
            server.client().content_type(),
            kclient_rest::ContentType::Protobuf
        );
        let got = cms.get("x", &GetOptions::default()).await;
        let err = got.expect_err("a protobuf NotFound Status is not a ConfigMap");
        assert!(err.is_not_found(), "{err:?}");
        assert_eq!(err.to_string(), "configmaps \"x\" not found");
    }
}
