//! `create_or_update` and `create_or_patch` on the server (controller-runtime's
//! `controllerutil.CreateOrUpdate` and `CreateOrPatch`): created when missing, unchanged (no
//! request) when `mutate` changes nothing, updated or patched otherwise, the status through its
//! subresource; a `mutate` that fails or renames the object writes nothing; a quantity the
//! server stores in another form is no change (apimachinery's `equality.Semantic`).

use kclient_api::core::v1::{ConfigMap, ResourceQuota, Service};
use kclient_apimachinery::meta::{Map, Quantity};
use kclient_apimachinery::{GetOptions, Object};
use kclient_clientset::Api;
use kclient_controller::{CreateOrUpdateError, OperationResult, create_or_patch, create_or_update};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::Setup;

/// Edits `obj` as JSON.
fn edit<K: Serialize + DeserializeOwned>(obj: &mut K, f: impl FnOnce(&mut Value)) {
    let mut value = serde_json::to_value(&*obj).expect("encode");
    f(&mut value);
    *obj = serde_json::from_value(value).expect("decode");
}

fn named<K: DeserializeOwned>(namespace: &str, name: &str) -> K {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": namespace}}))
        .expect("an object with a name")
}

fn set_data(value: &str) -> impl FnOnce(&mut ConfigMap) -> Result<(), std::convert::Infallible> {
    let value = value.to_owned();
    move |cm| {
        edit(cm, |v| v["data"] = json!({"k": value}));
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_update_creates_updates_and_leaves_alone_as_controller_runtime() {
    let s = Setup::new().await;
    let ns = s.ns.name().to_owned();
    let config_maps: Api<ConfigMap> = s.config_maps();

    let mut cm: ConfigMap = named(&ns, "cou");
    let result = create_or_update(&s.client, &mut cm, set_data("one"))
        .await
        .expect("create");
    assert_eq!(result, OperationResult::Created);
    assert!(!cm.uid().is_empty(), "obj is the object as created");
    let created_version = cm.resource_version().to_owned();

    // The same wish again: nothing is written (the resourceVersion stays).
    let mut cm: ConfigMap = named(&ns, "cou");
    let result = create_or_update(&s.client, &mut cm, set_data("one"))
        .await
        .expect("no change");
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(cm.resource_version(), created_version);
    assert_eq!(
        cm.data.as_ref().and_then(|d| d.get("k")).map(|v| &**v),
        Some("one")
    );

    let mut cm: ConfigMap = named(&ns, "cou");
    let result = create_or_update(&s.client, &mut cm, set_data("two"))
        .await
        .expect("update");
    assert_eq!(result, OperationResult::Updated);
    assert_ne!(cm.resource_version(), created_version);
    let stored = config_maps
        .get("cou", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(
        stored.data.as_ref().and_then(|d| d.get("k")).map(|v| &**v),
        Some("two")
    );
    assert_eq!(stored.resource_version(), cm.resource_version());

    // A mutate that renames the object, or fails, writes nothing.
    let mut cm: ConfigMap = named(&ns, "cou");
    let error = create_or_update(&s.client, &mut cm, |cm: &mut ConfigMap| {
        cm.set_name("other");
        Ok::<_, std::convert::Infallible>(())
    })
    .await
    .expect_err("a renamed object");
    assert!(
        matches!(&error, CreateOrUpdateError::KeyChanged { before, after, .. }
            if *before == format!("{ns}/cou") && *after == format!("{ns}/other")),
        "{error}"
    );
    let mut missing: ConfigMap = named(&ns, "never");
    let error = create_or_update(&s.client, &mut missing, |_: &mut ConfigMap| {
        Err(std::io::Error::other("no"))
    })
    .await
    .expect_err("a failing mutate");
    assert!(matches!(error, CreateOrUpdateError::Mutate(_)), "{error}");
    let error = config_maps
        .get("never", &GetOptions::default())
        .await
        .expect_err("not created");
    assert!(error.is_not_found(), "{error}");
    assert!(
        config_maps
            .get("other", &GetOptions::default())
            .await
            .is_err(),
        "nothing renamed was written"
    );

    // An update over a stale read fails with the server's Conflict.
    let mut cm: ConfigMap = named(&ns, "cou");
    let api = config_maps.clone();
    let error = create_or_update(&s.client, &mut cm, |cm: &mut ConfigMap| {
        // Another writer changes the object between the read and the update.
        let mut other = cm.clone();
        edit(&mut other, |v| v["data"] = json!({"k": "theirs"}));
        let other = futures_block(api.update(&other, &Default::default())).expect("their update");
        assert_ne!(other.resource_version(), cm.resource_version());
        edit(cm, |v| v["data"] = json!({"k": "ours"}));
        Ok::<_, std::convert::Infallible>(())
    })
    .await
    .expect_err("a conflict");
    assert!(
        matches!(&error, CreateOrUpdateError::Api(e) if e.is_conflict()),
        "{error}"
    );

    // No namespace for a namespaced kind: refused before any request.
    let mut nowhere: ConfigMap = named("", "cou");
    let error = create_or_update(&s.client, &mut nowhere, set_data("x"))
        .await
        .expect_err("no namespace");
    assert!(
        matches!(&error, CreateOrUpdateError::Api(e) if e.is_invalid_request()),
        "{error}"
    );
}

/// Runs a future to completion from inside a synchronous `mutate` (on a multi-thread runtime).
fn futures_block<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

fn service(namespace: &str) -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": "cop", "namespace": namespace},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
    }))
    .expect("a Service")
}

fn ingress_ip(svc: &Service) -> Option<String> {
    let v = serde_json::to_value(svc).unwrap();
    v["status"]["loadBalancer"]["ingress"][0]["ip"]
        .as_str()
        .map(str::to_owned)
}

fn label(svc: &Service) -> Option<String> {
    svc.labels().get("tier").map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_patch_patches_the_object_and_its_status_apart_as_controller_runtime() {
    let s = Setup::new().await;
    let ns = s.ns.name().to_owned();
    let services: Api<Service> = Api::namespaced(s.client.clone(), &ns);
    let set = |tier: Option<&'static str>, ip: Option<&'static str>| {
        move |svc: &mut Service| {
            edit(svc, |v| {
                if let Some(tier) = tier {
                    v["metadata"]["labels"] = json!({"tier": tier});
                }
                if let Some(ip) = ip {
                    v["status"] = json!({"loadBalancer": {"ingress": [{"ip": ip}]}});
                }
            });
            Ok::<_, std::convert::Infallible>(())
        }
    };

    let mut svc = service(&ns);
    let result = create_or_patch(&s.client, &mut svc, set(Some("web"), None))
        .await
        .expect("create");
    assert_eq!(result, OperationResult::Created);

    let mut svc = service(&ns);
    let result = create_or_patch(&s.client, &mut svc, set(Some("web"), None))
        .await
        .expect("no change");
    assert_eq!(result, OperationResult::Unchanged);

    // The status alone: only the status subresource is patched.
    let mut svc = service(&ns);
    let result = create_or_patch(&s.client, &mut svc, set(None, Some("10.0.0.1")))
        .await
        .expect("status");
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert_eq!(ingress_ip(&svc).as_deref(), Some("10.0.0.1"));

    // The object alone.
    let mut svc = service(&ns);
    let result = create_or_patch(&s.client, &mut svc, set(Some("db"), None))
        .await
        .expect("labels");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(label(&svc).as_deref(), Some("db"));

    // Both: two patches, and `obj` ends with both changes, as stored.
    let mut svc = service(&ns);
    let result = create_or_patch(&s.client, &mut svc, set(Some("cache"), Some("10.0.0.2")))
        .await
        .expect("both");
    assert_eq!(result, OperationResult::UpdatedStatus);
    assert_eq!(
        (label(&svc).as_deref(), ingress_ip(&svc).as_deref()),
        (Some("cache"), Some("10.0.0.2"))
    );
    let stored = services.get("cop", &GetOptions::default()).await.unwrap();
    assert_eq!(
        (label(&stored).as_deref(), ingress_ip(&stored).as_deref()),
        (Some("cache"), Some("10.0.0.2"))
    );
    assert_eq!(stored.resource_version(), svc.resource_version());
    // The patches changed only what `mutate` changed: the port the server defaulted stays.
    let v = serde_json::to_value(&stored).unwrap();
    assert_eq!(v["spec"]["ports"][0]["port"], json!(80));
}

/// A quota whose `mutate` writes its amounts as people write them (`0.5` CPU, `1024Mi`) and an
/// empty list of scopes.
fn quota_of(
    cpu: &'static str,
) -> impl Fn(&mut ResourceQuota) -> Result<(), std::convert::Infallible> {
    move |quota| {
        let spec = quota.spec.get_or_insert_with(Default::default);
        let mut hard = Map::new();
        hard.insert("cpu", Quantity::from(cpu));
        hard.insert("memory", Quantity::from("1024Mi"));
        spec.hard = Some(hard);
        spec.scopes = Some(Vec::new().into());
        Ok(())
    }
}

fn hard(quota: &ResourceQuota, resource: &str) -> Option<String> {
    let hard = quota.spec.as_ref()?.hard.as_ref()?;
    hard.get(resource).map(|q| q.as_str().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quantities_the_server_rewrites_are_no_change_as_with_equality_semantic() {
    let s = Setup::new().await;
    let ns = s.ns.name().to_owned();

    let mut quota: ResourceQuota = named(&ns, "semantic");
    let result = create_or_update(&s.client, &mut quota, quota_of("0.5"))
        .await
        .expect("create");
    assert_eq!(result, OperationResult::Created);
    // The server stored the canonical forms: the text differs from what mutate writes.
    assert_eq!(hard(&quota, "cpu").as_deref(), Some("500m"));
    assert_eq!(hard(&quota, "memory").as_deref(), Some("1Gi"));
    let created_version = quota.resource_version().to_owned();

    // The same amounts again: no update, by either function.
    for patch in [false, true] {
        let mut quota: ResourceQuota = named(&ns, "semantic");
        let result = if patch {
            create_or_patch(&s.client, &mut quota, quota_of("0.5")).await
        } else {
            create_or_update(&s.client, &mut quota, quota_of("0.5")).await
        }
        .expect("no change");
        assert_eq!(result, OperationResult::Unchanged, "patch: {patch}");
        assert_eq!(quota.resource_version(), created_version, "patch: {patch}");
    }

    // Another amount is a change, for both.
    let mut quota: ResourceQuota = named(&ns, "semantic");
    let result = create_or_update(&s.client, &mut quota, quota_of("0.6"))
        .await
        .expect("update");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(hard(&quota, "cpu").as_deref(), Some("600m"));
    let mut quota: ResourceQuota = named(&ns, "semantic");
    let result = create_or_patch(&s.client, &mut quota, quota_of("1000m"))
        .await
        .expect("patch");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(hard(&quota, "cpu").as_deref(), Some("1"));

    // Each part is told apart semantically: the spec's amounts are the same, the status is
    // new, so only the status is patched.
    let version = quota.resource_version().to_owned();
    let mut quota: ResourceQuota = named(&ns, "semantic");
    let result = create_or_patch(&s.client, &mut quota, |quota: &mut ResourceQuota| {
        quota_of("1")(quota)?;
        let mut hard = Map::new();
        hard.insert("cpu", Quantity::from("1000m"));
        quota.status.get_or_insert_with(Default::default).hard = Some(hard);
        Ok::<_, std::convert::Infallible>(())
    })
    .await
    .expect("patch the status");
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert_ne!(quota.resource_version(), version);
    let status_hard = quota.status.as_ref().and_then(|s| s.hard.as_ref());
    let status_cpu = status_hard.and_then(|h| h.get("cpu")).map(|q| q.as_str());
    assert_eq!(status_cpu, Some("1"));
}
