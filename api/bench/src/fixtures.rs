//! Synthetic but realistic objects: Pods of Deployments (about 7 KB of compact JSON, a third
//! of it managedFields), ConfigMaps and Deployments. Namespaces, images, node names and label
//! keys come from small sets, as in real clusters; names, UIDs and IPs are unique.

use serde_json::{Value, json};

/// A deterministic pseudo-random sequence (no dependency, same data every run).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[(self.next() % 16) as usize]))
            .collect()
    }
    fn uid(&mut self) -> String {
        format!(
            "{}-{}-{}-{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(4),
            self.hex(4),
            self.hex(12)
        )
    }
}

const NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "payments-production",
    "web-frontend",
    "monitoring",
];
const APPS: &[&str] = &[
    "checkout-service",
    "frontend",
    "recommendation-engine",
    "cart",
    "prometheus-node-exporter",
    "api-gateway",
];
const IMAGES: &[&str] = &[
    "registry.example.com/platform/checkout-service:v2.14.3",
    "registry.example.com/web/frontend:2024.11.02-1f3c9a7",
    "docker.io/library/nginx:1.27.2",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "registry.example.com/platform/api-gateway:v0.31.0",
];
const NODES: &[&str] = &[
    "ip-10-0-12-201.eu-west-1.compute.internal",
    "ip-10-0-14-17.eu-west-1.compute.internal",
    "ip-10-0-33-162.eu-west-1.compute.internal",
    "ip-10-0-47-88.eu-west-1.compute.internal",
];

fn managed_fields(rng: &mut Rng) -> Value {
    let time = "2024-11-02T10:11:12Z";
    json!([
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": time,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": {".": {}, "f:app": {}, "f:app.kubernetes.io/name": {}, "f:pod-template-hash": {}, "f:tier": {}},
                    "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{}\"}}", rng.uid()): {}}
                },
                "f:spec": {
                    "f:containers": {
                        "k:{\"name\":\"app\"}": {
                            ".": {}, "f:env": {".": {}, "k:{\"name\":\"LOG_LEVEL\"}": {".": {}, "f:name": {}, "f:value": {}},
                                "k:{\"name\":\"POD_NAME\"}": {".": {}, "f:name": {}, "f:valueFrom": {".": {}, "f:fieldRef": {}}}},
                            "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                            "f:ports": {".": {}, "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}},
                            "f:readinessProbe": {".": {}, "f:failureThreshold": {}, "f:httpGet": {".": {}, "f:path": {}, "f:port": {}, "f:scheme": {}}, "f:periodSeconds": {}, "f:successThreshold": {}, "f:timeoutSeconds": {}},
                            "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}}, "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                            "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
                            "f:volumeMounts": {".": {}, "k:{\"mountPath\":\"/etc/config\"}": {".": {}, "f:mountPath": {}, "f:name": {}, "f:readOnly": {}}}
                        }
                    },
                    "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                    "f:securityContext": {}, "f:terminationGracePeriodSeconds": {},
                    "f:volumes": {".": {}, "k:{\"name\":\"config\"}": {".": {}, "f:configMap": {".": {}, "f:defaultMode": {}, "f:name": {}}, "f:name": {}}}
                }
            }
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": time,
            "fieldsType": "FieldsV1",
            "subresource": "status",
            "fieldsV1": {
                "f:status": {
                    "f:conditions": {
                        "k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                        "k:{\"type\":\"Initialized\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                        "k:{\"type\":\"PodReadyToStartContainers\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                        "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}
                    },
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
                    "f:podIPs": {".": {}, format!("k:{{\"ip\":\"10.1.{}.{}\"}}", rng.next() % 255, rng.next() % 255): {".": {}, "f:ip": {}}},
                    "f:startTime": {}
                }
            }
        }
    ])
}

fn pod_spec(rng: &mut Rng, app: &str, image: &str, node: Option<&str>) -> Value {
    let mut spec = json!({
        "volumes": [
            {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
            {"name": "kube-api-access-x7k2p", "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ], "defaultMode": 420}}
        ],
        "containers": [{
            "name": "app",
            "image": image,
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
                {"name": "LOG_LEVEL", "value": "info"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}
            ],
            "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
            "volumeMounts": [
                {"name": "config", "readOnly": true, "mountPath": "/etc/config"},
                {"name": "kube-api-access-x7k2p", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
            ],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"
        }],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ],
        "priority": 0,
        "enableServiceLinks": true,
        "preemptionPolicy": "PreemptLowerPriority"
    });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    let _ = rng;
    spec
}

/// A Pod of a Deployment, running on a node.
pub(crate) fn pod(rng: &mut Rng) -> Value {
    let ns = rng.pick(NAMESPACES);
    let app = rng.pick(APPS);
    let image = rng.pick(IMAGES);
    let node = rng.pick(NODES);
    let hash = rng.hex(10);
    let name = format!("{app}-{hash}-{}", rng.hex(5));
    let ip = format!("10.1.{}.{}", rng.next() % 255, rng.next() % 255);
    let host_ip = format!("10.0.{}.{}", rng.next() % 255, rng.next() % 255);
    let t = "2024-11-02T10:11:12Z";
    let cond = |ty: &str| json!({"type": ty, "status": "True", "lastProbeTime": null, "lastTransitionTime": t});
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "generateName": format!("{app}-{hash}-"),
            "namespace": ns,
            "uid": rng.uid(),
            "resourceVersion": format!("{}", 100_000 + rng.next() % 900_000),
            "creationTimestamp": t,
            "labels": {"app": app, "app.kubernetes.io/name": app, "pod-template-hash": hash, "tier": "backend"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-11-01T08:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{hash}"), "uid": rng.uid(), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": managed_fields(rng)
        },
        "spec": pod_spec(rng, app, image, Some(node)),
        "status": {
            "phase": "Running",
            "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": t,
            "containerStatuses": [{
                "name": "app",
                "state": {"running": {"startedAt": t}},
                "lastState": {},
                "ready": true,
                "restartCount": 0,
                "image": image,
                "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), "4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"),
                "containerID": format!("containerd://{}", rng.hex(64)),
                "started": true,
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/config", "readOnly": true, "recursiveReadOnly": "Disabled"},
                    {"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true, "recursiveReadOnly": "Disabled"}
                ]
            }],
            "qosClass": "Burstable"
        }
    })
}

/// A ConfigMap with a few settings.
pub(crate) fn config_map(rng: &mut Rng) -> Value {
    let ns = rng.pick(NAMESPACES);
    let app = rng.pick(APPS);
    json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": format!("{app}-config-{}", rng.hex(6)),
            "namespace": ns,
            "uid": rng.uid(),
            "resourceVersion": format!("{}", 100_000 + rng.next() % 900_000),
            "creationTimestamp": "2024-11-02T10:11:12Z",
            "labels": {"app": app, "app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": ns},
            "managedFields": [{"manager": "helm", "operation": "Update", "apiVersion": "v1", "time": "2024-11-02T10:11:12Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:LOG_LEVEL": {}, "f:config.yaml": {}, "f:FEATURE_FLAGS": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:app.kubernetes.io/managed-by": {}}}}}]
        },
        "data": {
            "LOG_LEVEL": "info",
            "FEATURE_FLAGS": "new-checkout,fast-search",
            "config.yaml": format!("server:\n  port: 8080\n  name: {app}\ncache:\n  ttl: 30s\n  size: 1024\n")
        }
    })
}

/// A Deployment with its status.
pub(crate) fn deployment(rng: &mut Rng) -> Value {
    let ns = rng.pick(NAMESPACES);
    let app = rng.pick(APPS);
    let image = rng.pick(IMAGES);
    let name = format!("{app}-{}", rng.hex(4));
    let t = "2024-11-02T10:11:12Z";
    json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": rng.uid(),
            "resourceVersion": format!("{}", 100_000 + rng.next() % 900_000),
            "generation": 3,
            "creationTimestamp": t,
            "labels": {"app": app},
            "annotations": {"deployment.kubernetes.io/revision": "3"},
            "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1", "time": t, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}}]
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": pod_spec(rng, app, image, None)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        },
        "status": {
            "observedGeneration": 3, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": t, "lastTransitionTime": t, "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": t, "lastTransitionTime": t, "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{name}-6d4cf56db6\" has successfully progressed.")}
            ]
        }
    })
}
