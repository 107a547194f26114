//! Server-side apply with the generated apply configurations
//! (`kclient_api::applyconfigurations`) against the real apiserver: a partial apply leaves
//! other managers' fields and ownership alone, conflicts and force, client-go's extract,
//! change, apply cycle, and a status apply.

use kclient_api::applyconfigurations::apps::v1::{
    DeploymentSpecApplyConfiguration, DeploymentStatusApplyConfiguration, deployment,
    extract_deployment, extract_deployment_status,
};
use kclient_api::applyconfigurations::core::v1::{
    ContainerApplyConfiguration, PodSpecApplyConfiguration, PodTemplateSpecApplyConfiguration,
};
use kclient_api::applyconfigurations::meta::v1::{
    LabelSelectorApplyConfiguration, ObjectMetaApplyConfiguration,
};
use kclient_api::apps::v1::Deployment;
use kclient_apimachinery::PatchOptions;
use kclient_clientset::Api;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::to_json;

/// The `fieldsV1` of `manager`'s entry with `operation` and `subresource` (`""` for none), or
/// `None` when it has no such entry.
fn fields_of<K: serde::Serialize>(
    obj: &K,
    manager: &str,
    operation: &str,
    subresource: &str,
) -> Option<Value> {
    to_json(obj)["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| {
            e["manager"] == manager
                && e["operation"] == operation
                && e["subresource"].as_str().unwrap_or("") == subresource
        })
        .map(|e| e["fieldsV1"].clone())
}

/// A whole Deployment configuration as its owner applies it: labels, selector, template with
/// one container, two replicas.
fn owner_config(
    name: &str,
    namespace: &str,
) -> kclient_api::applyconfigurations::apps::v1::DeploymentApplyConfiguration {
    deployment(name, namespace)
        .with_labels([("app", name)])
        .with_spec(
            DeploymentSpecApplyConfiguration::default()
                .with_replicas(2)
                .with_selector(
                    LabelSelectorApplyConfiguration::default().with_match_labels([("app", name)]),
                )
                .with_template(
                    PodTemplateSpecApplyConfiguration::default()
                        .with_metadata(
                            ObjectMetaApplyConfiguration::default().with_labels([("app", name)]),
                        )
                        .with_spec(
                            PodSpecApplyConfiguration::default().with_containers([
                                ContainerApplyConfiguration::default()
                                    .with_name("web")
                                    .with_image("nginx:1.27"),
                            ]),
                        ),
                ),
        )
}

/// Applying only `spec.replicas` through a configuration sends only that field: the other
/// manager keeps everything else and its ownership of it; the first manager then loses only
/// `spec.replicas`, after a conflict and a forced apply.
#[tokio::test(flavor = "multi_thread")]
async fn applying_only_replicas_leaves_other_managers_fields_and_ownership() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());

    let created = deployments
        .apply(
            &owner_config("web", ns.name()),
            &PatchOptions::apply("owner"),
        )
        .await
        .unwrap();
    let owner_before = fields_of(&created, "owner", "Apply", "").expect("owner's entry");
    assert_eq!(owner_before["f:spec"]["f:replicas"], json!({}));

    // The scaler's body has no selector and no template (a typed Deployment would send both).
    let scale = deployment("web", ns.name())
        .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(5));
    assert_eq!(
        serde_json::to_value(&scale).unwrap()["spec"],
        json!({"replicas": 5})
    );

    // Both want spec.replicas: a conflict naming the owner and the field.
    let err = deployments
        .apply(&scale, &PatchOptions::apply("scaler"))
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let message = err.to_string();
    assert!(message.contains("owner"), "{message}");
    assert!(message.contains(".spec.replicas"), "{message}");

    // Forced: the scaler takes spec.replicas, and only it.
    let scaled = deployments
        .apply(&scale, &PatchOptions::apply("scaler").force(true))
        .await
        .unwrap();
    assert_eq!(scaled.spec.as_ref().and_then(|s| s.replicas), Some(5));
    let scaler = fields_of(&scaled, "scaler", "Apply", "").expect("scaler's entry");
    assert_eq!(scaler, json!({"f:spec": {"f:replicas": {}}}));
    // The owner keeps all its other fields, and they are unchanged.
    let mut owner_expected = owner_before.clone();
    owner_expected["f:spec"]
        .as_object_mut()
        .unwrap()
        .remove("f:replicas");
    let owner_after = fields_of(&scaled, "owner", "Apply", "").expect("owner's entry");
    assert_eq!(owner_after, owner_expected);
    let json = to_json(&scaled);
    assert_eq!(json["metadata"]["labels"]["app"], "web");
    assert_eq!(json["spec"]["selector"]["matchLabels"]["app"], "web");
    assert_eq!(
        json["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    // Without force, a configuration that agrees on a value shares ownership (no conflict).
    let same_image = deployment("web", ns.name()).with_spec(
        DeploymentSpecApplyConfiguration::default().with_template(
            PodTemplateSpecApplyConfiguration::default().with_spec(
                PodSpecApplyConfiguration::default().with_containers([
                    ContainerApplyConfiguration::default()
                        .with_name("web")
                        .with_image("nginx:1.27"),
                ]),
            ),
        ),
    );
    let shared = deployments
        .apply(&same_image, &PatchOptions::apply("auditor"))
        .await
        .unwrap();
    let auditor = fields_of(&shared, "auditor", "Apply", "").expect("auditor's entry");
    assert_eq!(
        auditor["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["f:image"],
        json!({})
    );
    assert_eq!(
        fields_of(&shared, "owner", "Apply", ""),
        Some(owner_expected)
    );
}

/// client-go's documented cycle: extract what a manager owns, change one field, apply it
/// back: the manager owns what it owned, plus the change, and nothing else.
#[tokio::test(flavor = "multi_thread")]
async fn extract_change_apply_keeps_exactly_the_owned_fields() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());

    let created = deployments
        .apply(
            &owner_config("cycle", ns.name()),
            &PatchOptions::apply("owner"),
        )
        .await
        .unwrap();
    // Another manager's field, which extraction for "owner" must leave out.
    let annotated = deployments
        .apply(
            &deployment("cycle", ns.name()).with_annotations([("note", "other")]),
            &PatchOptions::apply("other"),
        )
        .await
        .unwrap();
    let owned_before = fields_of(&annotated, "owner", "Apply", "").expect("owner's entry");
    assert_eq!(
        fields_of(&created, "owner", "Apply", ""),
        Some(owned_before.clone())
    );

    let extracted = extract_deployment(&annotated, "owner").unwrap();
    // Exactly what the owner applied: the configuration it sent, nothing the server or the
    // other manager set (no annotations, no strategy or defaults, no status).
    assert_eq!(extracted, owner_config("cycle", ns.name()));
    // Nothing for a manager that never applied.
    assert_eq!(
        extract_deployment(&annotated, "nobody").unwrap(),
        deployment("cycle", ns.name())
    );

    // Change one field and apply it back.
    let mut changed = extracted;
    changed
        .spec
        .as_mut()
        .unwrap()
        .template
        .as_mut()
        .unwrap()
        .spec
        .as_mut()
        .unwrap()
        .containers
        .as_mut()
        .unwrap()[0]
        .image = Some("nginx:1.28".into());
    let changed = changed.with_labels([("tier", "front")]);
    let applied = deployments
        .apply(&changed, &PatchOptions::apply("owner"))
        .await
        .unwrap();
    let json = to_json(&applied);
    assert_eq!(
        json["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );
    assert_eq!(json["metadata"]["annotations"]["note"], "other");
    let mut expected = owned_before;
    expected["f:metadata"]["f:labels"]["f:tier"] = json!({});
    assert_eq!(fields_of(&applied, "owner", "Apply", ""), Some(expected));
    assert_eq!(extract_deployment(&applied, "owner").unwrap(), changed);
}

/// `apply_status` with a status configuration: the fields are owned on the `status`
/// subresource, and `extract_deployment_status` reads back exactly them.
#[tokio::test(flavor = "multi_thread")]
async fn applying_a_status_configuration() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());
    deployments
        .apply(
            &owner_config("status", ns.name()),
            &PatchOptions::apply("owner"),
        )
        .await
        .unwrap();

    // The testenv's deployment controller and kwok node run this Deployment's two Pods and
    // may have written `availableReplicas: 2` by now. The server rejects a status whose
    // available replicas exceed its ready ones, so this configuration sets both, consistently,
    // whatever the controller wrote.
    let status = deployment("status", ns.name()).with_status(
        DeploymentStatusApplyConfiguration::default()
            .with_replicas(2)
            .with_ready_replicas(1)
            .with_available_replicas(1)
            .with_observed_generation(1),
    );
    let applied = deployments
        .apply_status(&status, &PatchOptions::apply("status-writer").force(true))
        .await
        .unwrap();
    let s = applied.status.as_ref().expect("status");
    assert_eq!((s.replicas, s.ready_replicas), (Some(2), Some(1)));
    let owned = fields_of(&applied, "status-writer", "Apply", "status").expect("status entry");
    for field in [
        "f:replicas",
        "f:readyReplicas",
        "f:availableReplicas",
        "f:observedGeneration",
    ] {
        assert_eq!(owned["f:status"][field], json!({}), "{owned}");
    }
    assert!(fields_of(&applied, "status-writer", "Apply", "").is_none());

    assert_eq!(
        extract_deployment_status(&applied, "status-writer").unwrap(),
        status
    );
    // The same manager owns nothing on the main resource.
    assert_eq!(
        extract_deployment(&applied, "status-writer").unwrap(),
        deployment("status", ns.name())
    );
}

/// Extraction of list-maps keyed by several fields (container ports by port and protocol),
/// set lists (finalizers), atomic lists (args) and a granular struct applied empty
/// (`resources: {}`): only what the owner applied comes back, never the items, values or
/// members another manager added.
#[tokio::test(flavor = "multi_thread")]
async fn extract_keeps_only_the_owned_items_of_list_maps_sets_and_atomic_lists() {
    use kclient_api::applyconfigurations::core::v1::{
        ContainerPortApplyConfiguration, EnvVarApplyConfiguration,
        ResourceRequirementsApplyConfiguration,
    };
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let container = |ports: Vec<(i32, &str)>, env: Vec<&str>| {
        ContainerApplyConfiguration::default()
            .with_name("web")
            .with_image("nginx:1.27")
            .with_ports(ports.into_iter().map(|(p, proto)| {
                ContainerPortApplyConfiguration::default()
                    .with_container_port(p)
                    .with_protocol(proto)
            }))
            .with_env(env.into_iter().map(|n| {
                EnvVarApplyConfiguration::default()
                    .with_name(n)
                    .with_value(n)
            }))
    };
    let mut owner = owner_config("lists", ns.name());
    let spec = owner.spec.as_mut().unwrap().template.as_mut().unwrap();
    spec.spec.as_mut().unwrap().containers = Some(vec![
        container(vec![(53, "TCP")], vec!["A"])
            .with_args(["x", "y"])
            .with_resources(ResourceRequirementsApplyConfiguration::default()),
    ]);
    let owner = owner.with_finalizers(["example.com/owner"]);
    deployments
        .apply(&owner, &PatchOptions::apply("owner"))
        .await
        .unwrap();
    let other = deployment("lists", ns.name())
        .with_finalizers(["example.com/other"])
        .with_spec(
            DeploymentSpecApplyConfiguration::default().with_template(
                PodTemplateSpecApplyConfiguration::default().with_spec(
                    PodSpecApplyConfiguration::default().with_containers([container(
                        vec![(53, "UDP")],
                        vec!["B"],
                    )
                    .with_resources(
                        ResourceRequirementsApplyConfiguration::default()
                            .with_limits([("cpu", "1".into())]),
                    )]),
                ),
            ),
        );
    let both = deployments
        .apply(&other, &PatchOptions::apply("other"))
        .await
        .unwrap();
    // The owner applied `resources: {}`: it owns the field, as a leaf, but not the limits
    // the other manager put in it since.
    let owned = fields_of(&both, "owner", "Apply", "").expect("owner's entry");
    assert_eq!(
        owned["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["f:resources"],
        json!({})
    );
    assert_eq!(
        to_json(&both)["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "1"}})
    );
    assert_eq!(extract_deployment(&both, "owner").unwrap(), owner);
}

/// As client-go's `WithArgs()` and `WithLabels(map[string]string{})`, a `with_*` builder of a
/// list or map given nothing leaves the field unset: a configuration built from an empty
/// collection does not send `args: []` and so does not take the atomic `args` from the
/// manager that owns it (a Conflict without force, wiping them with it).
#[tokio::test(flavor = "multi_thread")]
async fn builders_given_nothing_leave_the_field_unset() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let mut owner = owner_config("empty", ns.name());
    let spec = owner.spec.as_mut().unwrap().template.as_mut().unwrap();
    spec.spec.as_mut().unwrap().containers.as_mut().unwrap()[0].args = Some(vec!["x".into()]);
    deployments
        .apply(&owner, &PatchOptions::apply("owner"))
        .await
        .unwrap();

    let no_args: Vec<String> = Vec::new();
    let no_labels: Vec<(String, String)> = Vec::new();
    let other = deployment("empty", ns.name())
        .with_labels(no_labels)
        .with_finalizers(no_args.clone())
        .with_spec(
            DeploymentSpecApplyConfiguration::default().with_template(
                PodTemplateSpecApplyConfiguration::default().with_spec(
                    PodSpecApplyConfiguration::default().with_containers([
                        ContainerApplyConfiguration::default()
                            .with_name("web")
                            .with_args(no_args)
                            .with_env([]),
                    ]),
                ),
            ),
        );
    assert_eq!(
        serde_json::to_value(&other).unwrap(),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "empty", "namespace": ns.name()},
            "spec": {"template": {"spec": {"containers": [{"name": "web"}]}}},
        })
    );
    let applied = deployments
        .apply(&other, &PatchOptions::apply("other"))
        .await
        .unwrap();
    assert_eq!(
        to_json(&applied)["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["x"])
    );
    let owned = fields_of(&applied, "other", "Apply", "").expect("other's entry");
    assert_eq!(
        owned["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"],
        json!({".": {}, "f:name": {}})
    );
    assert!(owned["f:metadata"].get("f:labels").is_none(), "{owned}");
}

/// A typed object applied claims only what it sets and its required fields: the optional
/// fields it leaves unset are not sent, not even those Go writes as `null` when unset (a
/// condition's `lastTransitionTime`, a status's `currentMetrics`). Sent as `null`, each would
/// be a claim on the field: a Conflict with the manager that set it, and with force its value
/// removed.
#[tokio::test(flavor = "multi_thread")]
async fn a_typed_object_applied_does_not_claim_the_fields_it_leaves_unset() {
    use kclient_api::applyconfigurations::autoscaling::v2::HorizontalPodAutoscalerApplyConfiguration;
    use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let hpas: Api<HorizontalPodAutoscaler> =
        Api::namespaced(env.client(Identity::Admin), ns.name());
    let owner: HorizontalPodAutoscalerApplyConfiguration = serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "typed", "namespace": ns.name()},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 3,
        },
    }))
    .unwrap();
    hpas.apply(&owner, &PatchOptions::apply("owner"))
        .await
        .unwrap();
    // The status writer stamps the condition's transition time.
    let stamped: HorizontalPodAutoscalerApplyConfiguration = serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "typed", "namespace": ns.name()},
        "status": {
            "desiredReplicas": 1,
            "conditions": [{
                "type": "AbleToScale",
                "status": "True",
                "lastTransitionTime": "2024-01-02T03:04:05Z",
            }],
        },
    }))
    .unwrap();
    hpas.apply_status(&stamped, &PatchOptions::apply("clock").force(true))
        .await
        .unwrap();

    // Another manager agrees on the condition, through a typed object without a time.
    let typed: HorizontalPodAutoscaler = crate::from_json(json!({
        "metadata": {"name": "typed"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 3,
        },
        "status": {
            "desiredReplicas": 1,
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "Agreed"}],
        },
    }));
    let applied = hpas
        .apply_status(&typed, &PatchOptions::apply("typed"))
        .await
        .unwrap();
    let json = to_json(&applied);
    assert_eq!(
        json["status"]["conditions"][0]["lastTransitionTime"],
        "2024-01-02T03:04:05Z"
    );
    let clock = fields_of_hpa(&json, "clock");
    let condition = "k:{\"type\":\"AbleToScale\"}";
    assert_eq!(
        clock["f:status"]["f:conditions"][condition]["f:lastTransitionTime"],
        json!({}),
        "{clock}"
    );
    let typed = fields_of_hpa(&json, "typed");
    assert_eq!(
        typed,
        json!({"f:status": {
            "f:desiredReplicas": {},
            "f:conditions": {condition: {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}}},
        }}),
    );
}

/// The `fieldsV1` of `manager`'s `Apply` entry on the `status` subresource of an object's JSON.
fn fields_of_hpa(json: &Value, manager: &str) -> Value {
    json["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| e["manager"] == manager && e["subresource"] == "status")
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or_else(|| panic!("no status entry of {manager}: {json}"))
}

/// `apply_scale` (client-go's `ApplyScale`) with a Scale configuration: the replicas change,
/// the answer is the Scale, and the Deployment records the manager as an `Apply` through
/// `scale` owning `spec.replicas`; a second manager applying the same value shares it, one
/// applying another value conflicts unless it forces.
#[cfg(feature = "apply")]
#[tokio::test(flavor = "multi_thread")]
async fn applying_a_scale_configuration() {
    use kclient_api::applyconfigurations::apps::v1::{
        extract_deployment_from, extract_deployment_scale,
    };
    use kclient_api::applyconfigurations::autoscaling::v1::{ScaleSpecApplyConfiguration, scale};

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let deployments: Api<Deployment> = Api::namespaced(env.client(Identity::Admin), ns.name());
    deployments
        .apply(
            &owner_config("scaled", ns.name()),
            &PatchOptions::apply("owner"),
        )
        .await
        .unwrap();
    let replicas = |n| scale().with_spec(ScaleSpecApplyConfiguration::default().with_replicas(n));

    // The owner applied the replicas: taking them needs force.
    let conflict = deployments
        .apply_scale("scaled", &replicas(3), &PatchOptions::apply("autoscaler"))
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    let scaled = deployments
        .apply_scale(
            "scaled",
            &replicas(3),
            &PatchOptions::apply("autoscaler").force(true),
        )
        .await
        .unwrap();
    assert_eq!(scaled.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(scaled.metadata.name.as_deref(), Some("scaled"));

    let read = deployments
        .get("scaled", &Default::default())
        .await
        .unwrap();
    assert_eq!(read.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(
        fields_of(&read, "autoscaler", "Apply", "scale"),
        Some(json!({"f:spec": {"f:replicas": {}}}))
    );
    assert!(fields_of(&read, "autoscaler", "Apply", "").is_none());
    // Extracted, the manager's scale entry is the Deployment's `spec.replicas` (client-go's
    // `ExtractDeploymentScale`), through the named wrapper and through `_from` alike; it owns
    // nothing on the main resource, and the owner nothing through `scale`.
    let replicas_only = deployment("scaled", ns.name())
        .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(3));
    assert_eq!(
        extract_deployment_scale(&read, "autoscaler").unwrap(),
        replicas_only
    );
    assert_eq!(
        extract_deployment_from(&read, "autoscaler", "scale").unwrap(),
        replicas_only
    );
    assert_eq!(
        extract_deployment(&read, "autoscaler").unwrap(),
        deployment("scaled", ns.name())
    );
    assert_eq!(
        extract_deployment_scale(&read, "owner").unwrap(),
        deployment("scaled", ns.name())
    );
    // The owner lost the replicas, and kept the rest.
    let owner = fields_of(&read, "owner", "Apply", "").expect("the owner's entry");
    assert!(owner["f:spec"].get("f:replicas").is_none(), "{owner}");
    assert!(owner["f:spec"].get("f:template").is_some(), "{owner}");

    // A second manager applying the same value shares the field; another value conflicts.
    deployments
        .apply_scale("scaled", &replicas(3), &PatchOptions::apply("second"))
        .await
        .unwrap();
    let conflict = deployments
        .apply_scale("scaled", &replicas(5), &PatchOptions::apply("second"))
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    let read = deployments
        .get("scaled", &Default::default())
        .await
        .unwrap();
    assert_eq!(read.spec.as_ref().and_then(|s| s.replicas), Some(3));
    for manager in ["autoscaler", "second"] {
        assert_eq!(
            fields_of(&read, manager, "Apply", "scale"),
            Some(json!({"f:spec": {"f:replicas": {}}})),
            "{manager}"
        );
    }

    // Apply needs a field manager: refused before sending.
    let unmanaged = deployments
        .apply_scale("scaled", &replicas(1), &PatchOptions::default())
        .await
        .unwrap_err();
    assert!(unmanaged.is_invalid_request(), "{unmanaged}");
}

/// A map applied empty (`data: {}`, `labels: {}`) is owned as a leaf; extracting it gives the
/// map empty, not with the keys another manager wrote, so that applying the extracted
/// configuration back leaves those keys to their manager alone.
#[tokio::test(flavor = "multi_thread")]
async fn a_map_applied_empty_is_extracted_empty() {
    use kclient_api::applyconfigurations::core::v1::{config_map, extract_config_map};
    use kclient_api::core::v1::ConfigMap;

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client(Identity::Admin), ns.name());
    config_maps
        .apply(
            &config_map("maps", ns.name())
                .with_data([("a", "1")])
                .with_labels([("x", "y")]),
            &PatchOptions::apply("other"),
        )
        .await
        .unwrap();
    let mut empty = config_map("maps", ns.name());
    empty.data = Some(Default::default());
    empty.metadata.as_mut().unwrap().labels = Some(Default::default());
    let both = config_maps
        .apply(&empty, &PatchOptions::apply("me"))
        .await
        .unwrap();
    let mine = |cm: &ConfigMap| fields_of(cm, "me", "Apply", "");
    let owned = mine(&both).expect("me's entry");
    assert_eq!(
        owned,
        json!({"f:data": {}, "f:metadata": {"f:labels": {}}}),
        "the server owns an empty map as a leaf"
    );
    assert_eq!(to_json(&both)["data"], json!({"a": "1"}));

    let extracted = extract_config_map(&both, "me").unwrap();
    assert_eq!(extracted, empty);
    let reapplied = config_maps
        .apply(&extracted, &PatchOptions::apply("me"))
        .await
        .unwrap();
    assert_eq!(
        mine(&reapplied),
        Some(owned),
        "me owns none of other's keys"
    );
}

/// What a manager applies through a Pod's `resize` and `ephemeralcontainers` subresources is
/// recorded on those subresources, and `extract_pod_resize` and
/// `extract_pod_ephemeralcontainers` (client-go's `ExtractPodResize`,
/// `ExtractPodEphemeralcontainers`) read back exactly it, as the Pod's fields.
#[tokio::test(flavor = "multi_thread")]
async fn extracting_what_was_applied_through_a_pods_resize_and_ephemeralcontainers() {
    use kclient_api::applyconfigurations::core::v1::{
        EphemeralContainerApplyConfiguration, PodSchedulingGateApplyConfiguration,
        ResourceRequirementsApplyConfiguration, extract_pod, extract_pod_ephemeralcontainers,
        extract_pod_from, extract_pod_resize, pod,
    };
    use kclient_api::core::v1::Pod;
    use kclient_apimachinery::meta::Quantity;
    use kclient_clientset::Patch;

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let pods: Api<Pod> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let cpu = |request: &str, limit: &str| {
        ResourceRequirementsApplyConfiguration::default()
            .with_requests([("cpu", Quantity::from(request))])
            .with_limits([("cpu", Quantity::from(limit))])
    };
    let container = |resources| {
        ContainerApplyConfiguration::default()
            .with_name("app")
            .with_image("registry.k8s.io/pause:3.10")
            .with_resources(resources)
    };
    // Held unscheduled by a gate: the server refuses to resize a Pod on a node that does not
    // say it supports resizing, as the testenv's kwok nodes do not.
    pods.apply(
        &pod("resized", ns.name()).with_spec(
            PodSpecApplyConfiguration::default()
                .with_containers([container(cpu("100m", "200m"))])
                .with_scheduling_gates([
                    PodSchedulingGateApplyConfiguration::default().with_name("example.com/hold")
                ]),
        ),
        &PatchOptions::apply("owner"),
    )
    .await
    .unwrap();

    // The resizer sends the container's name (the list's key) and the resources it sets.
    let resize = pod("resized", ns.name()).with_spec(
        PodSpecApplyConfiguration::default().with_containers([
            ContainerApplyConfiguration::default()
                .with_name("app")
                .with_resources(cpu("150m", "300m")),
        ]),
    );
    let resized: Pod = pods
        .patch_subresource(
            "resized",
            "resize",
            &Patch::Apply(to_json(&resize)),
            &PatchOptions::apply("resizer").force(true),
        )
        .await
        .unwrap();
    let owned = fields_of(&resized, "resizer", "Apply", "resize").expect("resize entry");
    assert!(
        owned["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:resources"].is_object(),
        "{owned}"
    );
    assert_eq!(extract_pod_resize(&resized, "resizer").unwrap(), resize);
    assert_eq!(
        extract_pod_from(&resized, "resizer", "resize").unwrap(),
        resize
    );
    assert_eq!(
        extract_pod(&resized, "resizer").unwrap(),
        pod("resized", ns.name())
    );

    let debugger = pod("resized", ns.name()).with_spec(
        PodSpecApplyConfiguration::default().with_ephemeral_containers([
            EphemeralContainerApplyConfiguration::default()
                .with_name("debugger")
                .with_image("registry.k8s.io/pause:3.10"),
        ]),
    );
    let debugged: Pod = pods
        .patch_subresource(
            "resized",
            "ephemeralcontainers",
            &Patch::Apply(to_json(&debugger)),
            &PatchOptions::apply("debug"),
        )
        .await
        .unwrap();
    assert!(fields_of(&debugged, "debug", "Apply", "ephemeralcontainers").is_some());
    assert_eq!(
        extract_pod_ephemeralcontainers(&debugged, "debug").unwrap(),
        debugger
    );
    // Each manager's entry is read only through its own subresource.
    assert_eq!(
        extract_pod_resize(&debugged, "debug").unwrap(),
        pod("resized", ns.name())
    );
    assert_eq!(
        extract_pod_ephemeralcontainers(&debugged, "resizer").unwrap(),
        pod("resized", ns.name())
    );
}
