//! `apply_owned` across scopes: a cluster-scoped owner may own namespaced children (in the
//! namespace the child names), while a namespaced owner may own only children of its own
//! namespace (controller-runtime's `SetControllerReference` validation; the garbage collector
//! cannot collect a cluster-scoped child of a namespaced owner, and deletes a child whose
//! namespaced owner is not in its namespace).

use kclient_api::core::v1::{ConfigMap, Namespace};
use kclient_apimachinery::{DeleteOptions, GetOptions, Object};
use kclient_clientset::Api;
use kclient_controller::apply_owned;

use crate::Setup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_owned_puts_the_child_of_a_cluster_scoped_owner_in_the_namespace_it_names() {
    let s = Setup::new().await;
    let namespaces: Api<Namespace> = Api::cluster(s.client.clone());
    let owner = namespaces
        .get(s.ns.name(), &GetOptions::default())
        .await
        .unwrap();
    let child: ConfigMap = apply_owned(
        &s.client,
        "owner-test",
        &owner,
        serde_json::json!({
            "metadata": {"name": "of-a-namespace", "namespace": s.ns.name()},
            "data": {"k": "v"},
        }),
    )
    .await
    .expect("a namespaced child of a cluster-scoped owner");
    assert_eq!(child.namespace(), s.ns.name());
    let owners = child.owner_references();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (owners[0].kind, owners[0].name, owners[0].uid),
        ("Namespace", s.ns.name(), owner.uid())
    );

    // Without a namespace the child of a cluster-scoped owner has nowhere to go.
    let error = apply_owned::<ConfigMap, _>(
        &s.client,
        "owner-test",
        &owner,
        serde_json::json!({"metadata": {"name": "nowhere"}}),
    )
    .await
    .expect_err("a namespaced child without a namespace");
    assert!(error.is_invalid_request(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_owned_refuses_a_child_outside_its_namespaced_owners_namespace() {
    let s = Setup::new().await;
    let owner = s.create_config_map("owner", &[]).await;

    // A cluster-scoped child of a namespaced owner: refused before anything is sent.
    let name = format!("{}-child", s.ns.name());
    let result = apply_owned::<Namespace, _>(
        &s.client,
        "owner-test",
        &owner,
        serde_json::json!({"metadata": {"name": name}}),
    )
    .await;
    let namespaces: Api<Namespace> = Api::cluster(s.client.clone());
    if result.is_ok() {
        let _ = namespaces.delete(&name, &DeleteOptions::default()).await;
    }
    let error = result.expect_err("a cluster-scoped child of a namespaced owner");
    assert!(error.is_invalid_request(), "{error}");
    let missing = namespaces.get(&name, &GetOptions::default()).await;
    assert!(
        matches!(&missing, Err(e) if e.is_not_found()),
        "{missing:?}"
    );

    // A child naming another namespace than its owner's.
    let error = apply_owned::<ConfigMap, _>(
        &s.client,
        "owner-test",
        &owner,
        serde_json::json!({"metadata": {"name": "elsewhere", "namespace": "default"}}),
    )
    .await
    .expect_err("a child in another namespace than its namespaced owner");
    assert!(error.is_invalid_request(), "{error}");
    let missing = s
        .config_maps()
        .get("elsewhere", &GetOptions::default())
        .await;
    assert!(
        matches!(&missing, Err(e) if e.is_not_found()),
        "{missing:?}"
    );

    // The owner's own namespace, named or not, is fine.
    for (name, namespace) in [("named", Some(s.ns.name())), ("unnamed", None)] {
        let mut metadata = serde_json::json!({"name": name});
        if let Some(namespace) = namespace {
            metadata["namespace"] = namespace.into();
        }
        let child: ConfigMap = apply_owned(
            &s.client,
            "owner-test",
            &owner,
            serde_json::json!({"metadata": metadata}),
        )
        .await
        .unwrap();
        assert_eq!(child.namespace(), s.ns.name());
    }
}
