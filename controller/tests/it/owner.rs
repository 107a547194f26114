//! Owner references on the server: `apply_owned` across scopes (a cluster-scoped owner may own
//! namespaced children, in the namespace the child names, while a namespaced owner may own
//! only children of its own namespace: controller-runtime's `SetControllerReference`
//! validation; the garbage collector cannot collect a cluster-scoped child of a namespaced
//! owner, and deletes a child whose namespaced owner is not in its namespace), and children
//! given their owners in memory by `set_controller_reference` and `set_owner_reference`, which
//! the garbage collector of testenv's controller manager then deletes with their owners.

use kclient_api::core::v1::{ConfigMap, Namespace, Secret};
use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, Object, UpdateOptions, is_controlled_by,
};
use kclient_clientset::Api;
use kclient_controller::{
    apply_owned, has_owner_reference, set_controller_reference, set_owner_reference,
};

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

/// Polls the Secret `name` every 50 ms, for up to 30 s, until `done` holds for what the server
/// answers (`None`: it is gone). The garbage collector works on its own time: there is no
/// event to wait for but the child's own change.
async fn until_secret(s: &Setup, name: &str, what: &str, done: impl Fn(Option<&Secret>) -> bool) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let secret = match s.secrets().get(name, &GetOptions::default()).await {
            Ok(secret) => Some(secret),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("reading Secret {name}: {e}"),
        };
        if done(secret.as_ref()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after 30s waiting until {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_given_owners_in_memory_are_collected_with_their_owners() {
    let s = Setup::new().await;
    let owner = s.create_config_map("owner", &[]).await;
    let second = s.create_config_map("second", &[]).await;

    // A child controlled by `owner`, created without a namespace of its own: it gets its
    // owner's, and the server keeps the reference.
    let mut only: Secret =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "only"}})).unwrap();
    set_controller_reference(&owner, &mut only).unwrap();
    assert_eq!(only.namespace(), s.ns.name());
    let only = s
        .secrets()
        .create(&only, &CreateOptions::default())
        .await
        .expect("the server accepts the controller reference");
    assert!(is_controlled_by(&only, &owner));

    // A child controlled by `owner` and also owned by `second`, the second owner added to the
    // object read back from the server and written with an update.
    let mut shared: Secret =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "shared"}})).unwrap();
    set_controller_reference(&owner, &mut shared).unwrap();
    let mut shared = s
        .secrets()
        .create(&shared, &CreateOptions::default())
        .await
        .unwrap();
    set_owner_reference(&second, &mut shared).unwrap();
    let shared = s
        .secrets()
        .update(&shared, &UpdateOptions::default())
        .await
        .expect("the server accepts a second, non-controller owner");
    assert!(is_controlled_by(&shared, &owner));
    assert!(has_owner_reference(&second, &shared));
    assert_eq!(shared.owner_references().len(), 2);

    // Deleting `owner` collects the child it alone owned; the shared child outlives it, the
    // reference to the deleted owner removed, until its last owner goes too.
    s.config_maps()
        .delete("owner", &DeleteOptions::default())
        .await
        .unwrap();
    until_secret(
        &s,
        "only",
        "the garbage collector deletes the only child",
        |secret| secret.is_none(),
    )
    .await;
    until_secret(
        &s,
        "shared",
        "the garbage collector removes the deleted owner from the shared child",
        |secret| {
            let secret = secret.expect("the shared child still has an owner");
            !has_owner_reference(&owner, secret)
        },
    )
    .await;
    s.config_maps()
        .delete("second", &DeleteOptions::default())
        .await
        .unwrap();
    until_secret(
        &s,
        "shared",
        "the garbage collector deletes the shared child",
        |secret| secret.is_none(),
    )
    .await;
}
