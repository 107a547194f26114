//! The traits of generated resource types: `Resource` constants from the OpenAPI paths,
//! `Object` through `metadata`, `apiVersion`/`kind` on serialization, patch metadata.

// Every test that uses these needs `core` (the groups that depend on it enable it).
#[cfg(feature = "core")]
use kclient_apimachinery::meta::PatchMeta;
#[cfg(feature = "core")]
use kclient_apimachinery::{Object, Resource, ResourceScope};

#[cfg(feature = "core")]
#[test]
fn pod_is_a_namespaced_core_resource() {
    use kclient_api::core::v1::Pod;
    assert_eq!(Pod::GROUP, "");
    assert_eq!(Pod::VERSION, "v1");
    assert_eq!(Pod::API_VERSION, "v1");
    assert_eq!(Pod::KIND, "Pod");
    assert_eq!(Pod::PLURAL, "pods");
    const { assert!(<Pod as Resource>::Scope::NAMESPACED) };
}

#[cfg(feature = "core")]
#[test]
fn node_and_namespace_are_cluster_scoped() {
    use kclient_api::core::v1::{Namespace, Node};
    assert_eq!(Node::PLURAL, "nodes");
    const { assert!(!<Node as Resource>::Scope::NAMESPACED) };
    assert_eq!(Namespace::PLURAL, "namespaces");
    const { assert!(!<Namespace as Resource>::Scope::NAMESPACED) };
}

#[cfg(all(feature = "apps", feature = "apiextensions", feature = "rbac"))]
#[test]
fn group_resources() {
    use kclient_api::apiextensions::v1::CustomResourceDefinition;
    use kclient_api::apps::v1::Deployment;
    use kclient_api::rbac::v1::ClusterRole;
    assert_eq!(Deployment::API_VERSION, "apps/v1");
    assert_eq!(Deployment::PLURAL, "deployments");
    assert_eq!(CustomResourceDefinition::GROUP, "apiextensions.k8s.io");
    assert_eq!(
        CustomResourceDefinition::PLURAL,
        "customresourcedefinitions"
    );
    const { assert!(!<CustomResourceDefinition as Resource>::Scope::NAMESPACED) };
    assert_eq!(ClusterRole::API_VERSION, "rbac.authorization.k8s.io/v1");
}

#[cfg(feature = "core")]
#[test]
fn serialization_adds_type_meta_and_omits_absent_fields() {
    use kclient_api::core::v1::{ConfigMap, Pod};
    use kclient_apimachinery::meta::v1::ObjectMeta;
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        data: Some([("a".into(), "1".into())].into()),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&cm).unwrap(),
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"default"},"data":{"a":"1"}}"#
    );
    let pod: Pod = serde_json::from_str(r#"{"metadata":{"name":"p","finalizers":[]}}"#).unwrap();
    assert_eq!(pod.name(), "p");
    // An explicitly empty list stays explicit: `finalizers: []` matters in a merge patch.
    assert_eq!(
        serde_json::to_string(&pod).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"finalizers":[],"name":"p"}}"#
    );
}

#[cfg(feature = "core")]
#[test]
fn unknown_fields_are_ignored_and_integers_exact() {
    use kclient_api::core::v1::Pod;
    let pod: Pod = serde_json::from_str(
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","generation":9007199254740993},
            "spec":{"futureField":1,"containers":[{"name":"c","resources":{"limits":{"cpu":"1500m"}}}]}}"#,
    )
    .unwrap();
    assert_eq!(pod.generation(), 9_007_199_254_740_993);
    let spec = pod.spec.as_ref().unwrap();
    let limits = spec.containers[0]
        .resources
        .as_ref()
        .unwrap()
        .limits
        .as_ref()
        .unwrap();
    assert_eq!(limits.get("cpu").unwrap().to_milli(), Some(1500));
}

#[cfg(feature = "core")]
#[test]
fn patch_metadata_is_queryable() {
    use kclient_api::core::v1::{Pod, PodSpec};
    let containers = PodSpec::patch_field("containers").unwrap();
    assert!(containers.is_merge());
    assert_eq!(containers.patch_merge_key, Some("name"));
    let spec = Pod::patch_field("spec").unwrap();
    let nested = spec.nested();
    assert!(
        nested
            .iter()
            .any(|f| f.name == "containers" && f.patch_merge_key == Some("name"))
    );
    let volumes = PodSpec::patch_field("volumes").unwrap();
    assert!(volumes.is_retain_keys());
}

#[cfg(feature = "core")]
#[test]
fn credentials_never_reach_debug_output() {
    use kclient_api::core::v1::Secret;

    let secret: Secret = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "data": {"password": "c3VwZXItc2VjcmV0LXZhbHVl"},
        "stringData": {"token": "plain-text-credential"},
        "type": "Opaque",
    }))
    .expect("decode Secret");
    let shown = format!("{secret:?}");
    assert!(
        shown.contains("\"db\"") && shown.contains("Opaque"),
        "{shown}"
    );
    assert!(shown.contains("<redacted>"), "{shown}");
    for leaked in [
        "c3VwZXItc2VjcmV0LXZhbHVl",
        "super-secret-value",
        "plain-text-credential",
        "password",
    ] {
        assert!(!shown.contains(leaked), "Debug shows {leaked}: {shown}");
    }

    // `kubectl apply` keeps the whole Secret in an annotation: its value is hidden too, in
    // the typed Secret and in its apply configuration (what `extract_secret` returns).
    let applied = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
        "stringData": {"token": "plain-text-credential"}})
    .to_string();
    let annotation = kclient_apimachinery::meta::LAST_APPLIED_CONFIGURATION_ANNOTATION;
    let mut applied_secret = secret.clone();
    applied_secret
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(annotation, applied.as_str().into());
    let hides_the_credential = |shown: String| {
        assert!(shown.contains(annotation), "{shown}");
        assert!(!shown.contains("plain-text-credential"), "{shown}");
    };
    hides_the_credential(format!("{applied_secret:?}"));
    #[cfg(feature = "apply")]
    hides_the_credential(format!(
        "{:?}",
        kclient_api::applyconfigurations::core::v1::secret("db", "prod")
            .with_annotations([(annotation, applied.as_str())])
    ));
}

#[cfg(feature = "authentication")]
#[test]
fn tokens_never_reach_debug_output() {
    use kclient_api::authentication::v1::{TokenRequestStatus, TokenReviewSpec};

    let status: TokenRequestStatus = serde_json::from_value(serde_json::json!({
        "token": "eyJhbGciOiJSUzI1NiJ9.sa-token",
        "expirationTimestamp": "2030-01-01T00:00:00Z",
    }))
    .expect("decode TokenRequestStatus");
    let shown = format!("{status:?}");
    assert!(
        !shown.contains("sa-token") && shown.contains("<redacted>"),
        "{shown}"
    );

    let spec: TokenReviewSpec =
        serde_json::from_value(serde_json::json!({"token": "review-me-token"})).expect("decode");
    let shown = format!("{spec:?}");
    assert!(
        !shown.contains("review-me-token") && shown.contains("<redacted>"),
        "{shown}"
    );
}

/// The fields Go writes as `null` when unset are written so by a typed object's JSON (as Go
/// writes it), but left out of its apply body, where a `null` would claim them; a kind's own
/// such field (`ControllerRevision.data`) as well as a nested one (a condition's times).
#[cfg(all(feature = "apps", feature = "autoscaling"))]
#[test]
fn unset_fields_go_writes_as_null_are_left_out_of_apply_bodies() {
    use kclient_api::apps::v1::ControllerRevision;
    use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
    use kclient_apimachinery::Apply;
    use serde_json::json;

    let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "status": {"desiredReplicas": 1, "conditions": [{"type": "AbleToScale", "status": "True"}]},
    }))
    .unwrap();
    let plain = serde_json::to_value(&hpa).unwrap();
    assert_eq!(plain["status"]["currentMetrics"], json!(null));
    assert_eq!(
        plain["status"]["conditions"][0]["lastTransitionTime"],
        json!(null)
    );
    assert!(
        plain["status"]["conditions"][0]
            .as_object()
            .unwrap()
            .contains_key("lastTransitionTime")
    );
    let body = hpa.apply_body().unwrap();
    assert_eq!(
        body["status"],
        json!({"desiredReplicas": 1, "conditions": [{"type": "AbleToScale", "status": "True"}]})
    );
    // Set values are sent, and plain encoding is unchanged afterwards.
    let stamped: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "status": {"desiredReplicas": 1, "conditions": [
            {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z"},
        ]},
    }))
    .unwrap();
    assert_eq!(
        stamped.apply_body().unwrap()["status"]["conditions"][0]["lastTransitionTime"],
        "2024-01-02T03:04:05Z"
    );
    assert_eq!(serde_json::to_value(&hpa).unwrap(), plain);

    let revision: ControllerRevision =
        serde_json::from_value(json!({"metadata": {"name": "r"}, "revision": 1})).unwrap();
    assert!(
        serde_json::to_value(&revision)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("data")
    );
    assert_eq!(
        revision.apply_body().unwrap(),
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"}, "revision": 1})
    );
}

/// A required field whose Go type is a pointer without `omitempty` is `null` in Go's JSON
/// when nil: in an object no validation has seen yet (an admission webhook's review of a
/// Deployment created without a selector, an Ingress path without a type), as client-go
/// reads it. Such a `null` decodes as the field's default instead of failing the object.
#[cfg(all(
    feature = "apps",
    feature = "networking",
    feature = "admissionregistration"
))]
#[test]
fn null_required_pointer_fields_decode_as_their_default() {
    use kclient_api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use kclient_api::apps::v1::Deployment;
    use kclient_api::networking::v1::Ingress;

    let deployment: Deployment = kclient_apimachinery::decode_json(
        br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
            "spec":{"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}}}}"#,
    )
    .expect("a null selector and containers");
    let spec = deployment.spec.expect("spec");
    assert_eq!(spec.selector, Default::default());
    assert!(spec.template.spec.expect("pod spec").containers.is_empty());
    let ingress: Ingress = kclient_apimachinery::decode_json(
        br#"{"metadata":{"name":"web"},"spec":{"rules":[{"http":{"paths":[
            {"path":"/","pathType":null,"backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}"#,
    )
    .expect("a null pathType");
    let rules = ingress.spec.expect("spec").rules.expect("rules");
    let http = rules[0].http.as_ref().expect("http");
    assert_eq!(http.paths[0].path_type, "");
    let webhooks: ValidatingWebhookConfiguration = kclient_apimachinery::decode_json(
        br#"{"metadata":{"name":"w"},"webhooks":[{"name":"w.example.com","clientConfig":{},
            "sideEffects":null,"admissionReviewVersions":null}]}"#,
    )
    .expect("a null sideEffects");
    let webhook = &webhooks.webhooks.expect("webhooks")[0];
    assert_eq!(webhook.side_effects, "");
    // A required `[]byte` that is empty: Go writes it `null`, and reads it back as nil.
    #[cfg(feature = "certificates")]
    {
        use kclient_api::certificates::v1::CertificateSigningRequest;
        let csr: CertificateSigningRequest = kclient_apimachinery::decode_json(
            br#"{"metadata":{"name":"c"},"spec":{"request":null,"signerName":"example.com/s"}}"#,
        )
        .expect("a null request");
        assert!(csr.spec.request.as_bytes().is_empty());
        let json = serde_json::to_value(&csr).expect("encode");
        assert_eq!(json["spec"]["request"], serde_json::Value::Null);
    }
    // And serde_json's decoder agrees.
    let by_serde_json: Deployment = serde_json::from_str(
        r#"{"metadata":{"name":"web"},"spec":{"selector":null,"template":{}}}"#,
    )
    .expect("serde_json: a null selector");
    assert_eq!(
        by_serde_json.spec.expect("spec").selector,
        Default::default()
    );
}

/// An empty required list Go leaves nil is `null` in Go's JSON, and the server writes every
/// empty one so (it stores them nil): a typed value writes it so too, except in an apply
/// body, where it stays `[]` (a `null` there would be a value the applier sets).
#[cfg(feature = "storage")]
#[test]
fn empty_required_lists_go_leaves_nil_encode_as_null_outside_apply_bodies() {
    use kclient_api::storage::v1::CSINode;
    use kclient_apimachinery::Apply;
    use serde_json::json;

    let node: CSINode =
        serde_json::from_value(json!({"metadata": {"name": "n"}, "spec": {"drivers": null}}))
            .unwrap();
    assert!(node.spec.drivers.is_empty());
    assert_eq!(
        serde_json::to_value(&node).unwrap()["spec"],
        json!({"drivers": null})
    );
    assert_eq!(node.apply_body().unwrap()["spec"], json!({"drivers": []}));
    let with_one: CSINode = serde_json::from_value(
        json!({"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "d", "nodeID": "n"}]}}),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&with_one).unwrap()["spec"]["drivers"][0]["name"],
        "d"
    );
}
