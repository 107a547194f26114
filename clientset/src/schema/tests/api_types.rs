//! A spec embedding kclient-api's generated types (`PodTemplateSpec`, `ResourceRequirements`,
//! `Toleration`), whose `JsonSchema` (kclient-api's feature `schemars`, which the
//! dev-dependency turns on) follows the OpenAPI documents: the structural schema inlines
//! them with the shapes controller-gen writes for the Go types.

use kclient_api::core::v1::{
    LocalObjectReference, PodTemplateSpec, ResourceRequirements, Toleration,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Root, spec};

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WorkerSpec {
    /// The pods to run.
    template: PodTemplateSpec,
    resources: Option<ResourceRequirements>,
    tolerations: Vec<Toleration>,
    pull_secret: Option<LocalObjectReference>,
}

/// Every node of a schema, with its path.
fn walk<'v>(v: &'v Value, path: String, out: &mut Vec<(String, &'v Value)>) {
    out.push((path.clone(), v));
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            walk(p, format!("{path}.{k}"), out);
        }
    }
    for k in ["items", "additionalProperties"] {
        if let Some(s) = v.get(k) {
            walk(s, format!("{path}[*]"), out);
        }
    }
}

#[test]
fn generated_types_inline_with_controller_gen_shapes() {
    let spec = spec::<WorkerSpec>();
    let p = &spec["properties"];

    // The pod template: the field's own description, metadata with the fields controller-gen's
    // generateEmbeddedObjectMeta gives it (so that the server keeps the template's labels).
    let template = &p["template"];
    assert_eq!(template["type"], "object");
    assert_eq!(template["description"], "The pods to run.");
    let metadata = &template["properties"]["metadata"];
    assert_eq!(metadata["type"], "object");
    let fields: Vec<&String> = metadata["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        ["annotations", "finalizers", "labels", "name", "namespace"]
    );
    assert_eq!(
        metadata["properties"]["labels"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
    let pod = &template["properties"]["spec"];
    assert_eq!(pod["required"], json!(["containers"]));
    assert!(
        pod["description"]
            .as_str()
            .unwrap()
            .starts_with("Specification of the desired behavior of the pod."),
        "a property's description is the document's: {}",
        pod["description"]
    );

    // Containers: a map list keyed by name, their ports by port and protocol (defaulted).
    let containers = &pod["properties"]["containers"];
    assert_eq!(containers["type"], "array");
    assert_eq!(containers["x-kubernetes-list-type"], "map");
    assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
    let container = &containers["items"];
    assert_eq!(container["required"], json!(["name"]));
    assert_eq!(container["properties"]["name"]["type"], "string");
    assert!(container["properties"]["name"].get("default").is_none());
    let ports = &container["properties"]["ports"];
    assert_eq!(
        ports["x-kubernetes-list-map-keys"],
        json!(["containerPort", "protocol"])
    );
    assert_eq!(ports["items"]["required"], json!(["containerPort"]));
    let port = &ports["items"]["properties"];
    assert_eq!(port["protocol"]["default"], "TCP");
    assert_eq!(
        port["protocol"]["enum"],
        json!(["SCTP", "TCP", "UDP"]),
        "{port:#}"
    );
    assert_eq!(
        port["containerPort"],
        json!({"type": "integer", "format": "int32",
            "description": port["containerPort"]["description"]})
    );
    assert_eq!(
        container["properties"]["args"]["x-kubernetes-list-type"],
        "atomic"
    );
    assert_eq!(
        container["properties"]["imagePullPolicy"]["enum"],
        json!(["Always", "IfNotPresent", "Never"])
    );
    // Probes' ports are int-or-string.
    let http_get = &container["properties"]["livenessProbe"]["properties"]["httpGet"];
    assert_eq!(http_get["required"], json!(["port"]));
    let probe_port = &http_get["properties"]["port"];
    assert_eq!(probe_port["x-kubernetes-int-or-string"], true);
    assert!(probe_port.get("type").is_none());
    // Env from a secret: an atomic struct whose name defaults to "" (controller-gen's).
    let secret_ref = &container["properties"]["env"]["items"]["properties"]["valueFrom"]["properties"]
        ["secretKeyRef"];
    assert_eq!(secret_ref["x-kubernetes-map-type"], "atomic");
    assert_eq!(secret_ref["required"], json!(["key"]));
    assert_eq!(secret_ref["properties"]["name"]["default"], "");
    assert_eq!(
        pod["properties"]["imagePullSecrets"]["x-kubernetes-list-map-keys"],
        json!(["name"])
    );

    // Quantities, in the containers' resources and the spec's own.
    for resources in [&container["properties"]["resources"], &p["resources"]] {
        let limits = &resources["properties"]["limits"];
        assert_eq!(limits["type"], "object");
        let quantity = &limits["additionalProperties"];
        assert_eq!(quantity["x-kubernetes-int-or-string"], true);
        assert_eq!(
            quantity["anyOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
        assert_eq!(
            quantity["pattern"],
            kclient_apimachinery::meta::json_schema::QUANTITY_PATTERN
        );
        assert_eq!(
            resources["properties"]["claims"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );
    }
    assert_eq!(p["resources"]["nullable"], true);

    // Tolerations: a list of objects with the document's enums and formats.
    let tolerations = &p["tolerations"];
    assert_eq!(tolerations["type"], "array");
    let toleration = &tolerations["items"]["properties"];
    assert_eq!(
        toleration["effect"]["enum"],
        json!(["NoExecute", "NoSchedule", "PreferNoSchedule"])
    );
    assert_eq!(toleration["tolerationSeconds"]["format"], "int64");
    assert_eq!(p["pullSecret"]["x-kubernetes-map-type"], "atomic");
    assert_eq!(p["pullSecret"]["nullable"], true);

    // The descriptions make it large, but far under the API server's 3 MiB request and
    // etcd's 1.5 MiB value limits.
    let size = serde_json::to_vec(&spec).unwrap().len();
    println!("the WorkerSpec schema: {size} bytes");
    assert!(size < 1024 * 1024, "{size} bytes");

    // Nothing a CRD schema has no field for, and no default but scalars.
    let mut nodes = Vec::new();
    walk(&spec, String::new(), &mut nodes);
    assert!(nodes.len() > 500, "the pod template is inlined whole");
    for (path, node) in nodes {
        let o = node.as_object().unwrap();
        for key in o.keys() {
            assert!(
                !key.starts_with("x-kubernetes-")
                    || matches!(
                        key.as_str(),
                        "x-kubernetes-list-type"
                            | "x-kubernetes-list-map-keys"
                            | "x-kubernetes-map-type"
                            | "x-kubernetes-int-or-string"
                            | "x-kubernetes-preserve-unknown-fields"
                    ),
                "{path}: {key}"
            );
        }
        if let Some(d) = o.get("default") {
            assert!(!d.is_object() && !d.is_array(), "{path}: default {d}");
        }
    }
}

#[test]
fn a_generated_type_is_a_named_definition_for_other_generators() {
    // Outside the clientset's inlining, a generated type is one `$defs` entry, referred to.
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<Root<WorkerSpec>>();
    let v = schema.as_value();
    assert_eq!(
        v["$defs"]["WorkerSpec"]["properties"]["tolerations"]["items"]["$ref"],
        "#/$defs/Toleration"
    );
    assert_eq!(
        v["$defs"]["Toleration"]["properties"]["operator"]["type"],
        "string"
    );
}

#[cfg(feature = "apiextensions")]
#[test]
fn a_recursive_generated_type_is_refused_naming_the_field() {
    use kclient_api::apiextensions::v1::CustomResourceValidation;

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct SchemaSpec {
        validation: CustomResourceValidation,
    }

    // JSONSchemaProps refers to itself: schemars leaves a `$ref`, which a CRD cannot hold.
    let err = super::error::<Root<SchemaSpec>>();
    assert!(
        err.path().starts_with(".spec.validation.openAPIV3Schema."),
        "{err}"
    );
    assert!(err.reason().contains("recursive"), "{err}");
}
