//! A custom resource embedding kclient-api's generated types (`PodTemplateSpec`,
//! `ResourceRequirements`, `Vec<Toleration>`), its CRD made from the Rust type (features
//! `schema` and kclient-api's `schemars`), against the real kube-apiserver: the server takes
//! the schema as structural, keeps every field of a full pod template (pruning drops nothing,
//! the template's labels included), defaults what controller-gen's CRDs default, and refuses
//! pod templates of the wrong shape.

use kclient_api::core::v1::{PodTemplateSpec, ResourceRequirements, Toleration};
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{CreateOptions, GetOptions, Object};
use kclient_clientset::schemars::JsonSchema;
use kclient_clientset::{Api, custom_resource};
use kclient_testenv::{Identity, TestEnv};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::crd_schema::{assert_refused, install_structural};
use crate::{from_json, to_json};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct WorkerPool {
    metadata: ObjectMeta,
    spec: WorkerPoolSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WorkerPoolSpec {
    /// The pods of the pool.
    template: PodTemplateSpec,
    /// What the pool as a whole may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget: Option<ResourceRequirements>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
}

custom_resource!(WorkerPool {
    group: "schema.kclient.example.com",
    version: "v1",
    kind: "WorkerPool",
    plural: "workerpools",
    singular: "workerpool",
    scope: Namespaced,
});

/// A pod template using much of PodSpec: containers with ports, env from secrets and
/// fields, resources, probes of every kind, mounts; init containers, volumes, affinity,
/// topology spread, security contexts, tolerations, pull secrets.
fn template() -> PodTemplateSpec {
    from_json(json!({
        "metadata": {
            "labels": {"app": "worker", "tier": "batch"},
            "annotations": {"example.com/checksum": "abc123"},
        },
        "spec": {
            "serviceAccountName": "worker",
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 45,
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "imagePullSecrets": [{"name": "registry"}],
            "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000,
                "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [{
                "name": "migrate",
                "image": "registry.example.com/worker:1.2.3",
                "command": ["/bin/migrate", "--up"],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }],
            "containers": [{
                "name": "worker",
                "image": "registry.example.com/worker:1.2.3",
                "imagePullPolicy": "IfNotPresent",
                "args": ["--queue", "jobs", "--queue", "jobs"],
                "ports": [
                    {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                    {"name": "dns", "containerPort": 8053, "protocol": "UDP"},
                ],
                "env": [
                    {"name": "MODE", "value": "batch"},
                    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "worker-token", "key": "token", "optional": false}}},
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
                    {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
                ],
                "envFrom": [{"configMapRef": {"name": "worker-config"}, "prefix": "CFG_"}],
                "resources": {
                    "limits": {"cpu": "2", "memory": "1536Mi", "nvidia.com/gpu": 1},
                    "requests": {"cpu": "500m", "memory": "1Gi"},
                },
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP",
                    "httpHeaders": [{"name": "X-Probe", "value": "1"}]},
                    "initialDelaySeconds": 10, "periodSeconds": 5, "failureThreshold": 3},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
                "startupProbe": {"exec": {"command": ["cat", "/ready"]}},
                "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
                "volumeMounts": [
                    {"name": "data", "mountPath": "/data"},
                    {"name": "config", "mountPath": "/etc/worker", "readOnly": true},
                ],
                "securityContext": {"allowPrivilegeEscalation": false,
                    "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                    "readOnlyRootFilesystem": true},
            }],
            "volumes": [
                {"name": "data", "emptyDir": {"sizeLimit": "10Gi", "medium": "Memory"}},
                {"name": "config", "configMap": {"name": "worker-config", "defaultMode": 420,
                    "items": [{"key": "worker.yaml", "path": "worker.yaml"}]}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "worker-data"}},
            ],
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]}]}},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100,
                    "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "worker"}}}}]},
            },
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "worker"}}}],
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
        },
    }))
}

fn pool(name: &str) -> WorkerPool {
    let mut p = WorkerPool {
        metadata: ObjectMeta::default(),
        spec: WorkerPoolSpec {
            template: template(),
            budget: Some(from_json(json!({
                "limits": {"cpu": "64", "memory": "256Gi"},
                "claims": [{"name": "gpus", "request": "large"}],
            }))),
            tolerations: vec![from_json(
                json!({"key": "spot", "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 300}),
            )],
        },
    };
    p.set_name(name);
    p
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crd_embedding_a_pod_template_is_structural_keeps_and_enforces_it() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);

    install_structural::<WorkerPool>(&env, &client).await;

    // Every field survives pruning, the template's labels and annotations too.
    let pools: Api<WorkerPool> = Api::namespaced(client.clone(), ns.name());
    let want = pool("pool-a");
    let created = pools
        .create(&want, &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(created.spec, want.spec);
    let got = pools.get("pool-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.spec, want.spec);
    assert_eq!(
        to_json(&got.spec.template.metadata)["labels"]["app"],
        "worker"
    );

    // The server defaults what the document defaults, as for a Go operator's CRD: a port's
    // protocol (a key of the ports map list).
    let mut bare = pool("pool-b");
    bare.spec.template = from_json(json!({"spec": {"containers": [{
        "name": "worker", "image": "w", "ports": [{"containerPort": 80}]}]}}));
    let created = pools
        .create(&bare, &CreateOptions::default())
        .await
        .unwrap();
    let port = to_json(&created.spec.template)["spec"]["containers"][0]["ports"][0].clone();
    assert_eq!(port, json!({"containerPort": 80, "protocol": "TCP"}));

    // The server enforces the pod template's schema: each is refused as Invalid, naming the field.
    let container = |extra: serde_json::Value| {
        let mut c = json!({"name": "worker", "image": "w"});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"spec": {"template": {"spec": {"containers": [c]}}}})
    };
    let refused = [
        (
            container(json!({"ports": [{"containerPort": "eighty"}]})),
            "spec.template.spec.containers[0].ports[0].containerPort",
        ),
        (
            container(json!({"imagePullPolicy": "Sometimes"})),
            "spec.template.spec.containers[0].imagePullPolicy",
        ),
        (
            container(json!({"resources": {"limits": {"cpu": "lots"}}})),
            "spec.template.spec.containers[0].resources.limits.cpu",
        ),
        (
            container(json!({"livenessProbe": {"httpGet": {"path": "/"}}})),
            "spec.template.spec.containers[0].livenessProbe.httpGet.port",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"image": "w"}]}}}}),
            "spec.template.spec.containers[0].name",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "a", "image": "w"}, {"name": "a", "image": "v"}]}}}}),
            "spec.template.spec.containers[1]",
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": []}, "metadata": {"labels": {"app": 1}}}}}),
            "spec.template.metadata.labels.app",
        ),
        (
            json!({"spec": {"template": {"spec": {"volumes": [{"name": "v", "emptyDir": {"sizeLimit": true}}]}}}}),
            "spec.template.spec.volumes[0].emptyDir.sizeLimit",
        ),
        (
            json!({"spec": {"tolerations": [{"effect": "Sometimes"}]}}),
            "spec.tolerations[0].effect",
        ),
        (
            json!({"spec": {"budget": {"claims": [{"request": "x"}]}}}),
            "spec.budget.claims[0].name",
        ),
    ];
    assert_refused(&pools, "pool-a", refused).await;

    // The refused patches changed nothing.
    let got = pools.get("pool-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.spec, want.spec);
}
