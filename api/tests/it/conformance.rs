//! Conformance against the real kube-apiserver (testenv): create rich fixtures, read them back
//! raw and typed, and check that the typed value encodes back to exactly what the server sent
//! (no field lost, none invented, integers, quantities and times exact), on create and on get.
//!
//! The server writes `null` for some unset fields (`creationTimestamp: null` in pod
//! templates, `lastProbeTime: null`); typed values omit them, so nulls are removed from the
//! server's JSON before comparing.

use kclient_apimachinery::Resource;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// Removes `null` members recursively.
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// Decodes the server's bytes as `K`, encodes the result, and compares with the bytes.
fn assert_typed_round_trip<K: Resource>(raw: &[u8], what: &str) {
    let typed: K = serde_json::from_slice(raw)
        .unwrap_or_else(|e| panic!("decoding {} ({what}): {e}", K::KIND));
    let mut server: Value = serde_json::from_slice(raw).expect("server JSON");
    strip_nulls(&mut server);
    let ours = serde_json::to_value(&typed).expect("encoding");
    assert_eq!(ours, server, "{} ({what}) did not round-trip", K::KIND);
}

/// Creates `fixture` as a `K` in `ns`, then checks the create response and a get.
async fn check<K: Resource>(client: &Client, ns: &str, fixture: Value) {
    let name = fixture["metadata"]["name"]
        .as_str()
        .expect("fixture name")
        .to_string();
    let post = client.post().group_version(K::GROUP, K::VERSION);
    let post = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
        post.namespace(ns)
    } else {
        post
    };
    let created = post
        .resource(K::PLURAL)
        .json(&fixture)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("creating {} {name}: {e}", K::KIND));
    assert_typed_round_trip::<K>(&created, "create response");
    let get = client.get().group_version(K::GROUP, K::VERSION);
    let get = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
        get.namespace(ns)
    } else {
        get
    };
    let got = get
        .resource(K::PLURAL)
        .name(&name)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
    assert_typed_round_trip::<K>(&got, "get");
    // The typed value can be sent back: an update with it is accepted unchanged.
    let typed: K = serde_json::from_slice(&got).expect("decoding");
    let put = client.put().group_version(K::GROUP, K::VERSION);
    let put = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
        put.namespace(ns)
    } else {
        put
    };
    let updated = put
        .resource(K::PLURAL)
        .name(&name)
        .json(&typed)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("updating {} {name} with its typed value: {e}", K::KIND));
    assert_typed_round_trip::<K>(&updated, "update response");
}

fn pod_spec() -> Value {
    json!({
        "containers": [{
            "name": "app",
            "image": "registry.example.com/platform/checkout-service:v2.14.3",
            "command": ["/bin/app", "--port=8080"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [
                {"name": "LOG_LEVEL", "value": "info"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
            ],
            "resources": {"limits": {"memory": "512Mi", "cpu": "1500m"}, "requests": {"cpu": "0.25", "memory": "256Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
            "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 5},
            "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": true}]
        }],
        "volumes": [
            {"name": "config", "configMap": {"name": "settings", "defaultMode": 420}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, "topologyKey": "kubernetes.io/hostname"}}
        ]}},
        "terminationGracePeriodSeconds": 30
    })
}

#[tokio::test]
async fn typed_objects_round_trip_through_the_apiserver() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();
    let labels = json!({"app": "web", "app.kubernetes.io/name": "checkout-service"});

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
        check::<ConfigMap>(&client, ns, json!({
            "metadata": {"name": "settings", "labels": labels, "annotations": {"example.com/a-rather-long-annotation-key": "v"}, "finalizers": ["example.com/keep"]},
            "data": {"LOG_LEVEL": "info", "config.yaml": "server:\n  port: 8080\n"},
            "binaryData": {"blob": "AAECAwQ="}
        })).await;
        check::<Secret>(
            &client,
            ns,
            json!({
                "metadata": {"name": "creds"}, "type": "Opaque",
                "data": {"password": "aHVudGVyMg=="}, "immutable": false
            }),
        )
        .await;
        check::<Service>(&client, ns, json!({
            "metadata": {"name": "web", "labels": labels},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
                     "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 600}}}
        })).await;
        check::<ServiceAccount>(&client, ns, json!({
            "metadata": {"name": "robot"}, "automountServiceAccountToken": false, "imagePullSecrets": [{"name": "creds"}]
        })).await;
        check::<Pod>(
            &client,
            ns,
            json!({
                "metadata": {"name": "web-0", "labels": labels},
                "spec": pod_spec()
            }),
        )
        .await;
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::{Deployment, StatefulSet};
        check::<Deployment>(&client, ns, json!({
            "metadata": {"name": "web", "labels": labels, "generation": 9},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
                     "template": {"metadata": {"labels": labels}, "spec": pod_spec()}}
        })).await;
        check::<StatefulSet>(&client, ns, json!({
            "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": pod_spec()},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}]}
        })).await;
    }
    #[cfg(feature = "batch")]
    {
        use kclient_api::batch::v1::{CronJob, Job};
        check::<Job>(&client, ns, json!({
            "metadata": {"name": "once"},
            "spec": {"backoffLimit": 2, "completions": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36", "args": ["true"]}]}}}
        })).await;
        check::<CronJob>(&client, ns, json!({
            "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "timeZone": "Etc/UTC", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}
        })).await;
    }
    #[cfg(feature = "rbac")]
    {
        use kclient_api::rbac::v1::{Role, RoleBinding};
        check::<Role>(&client, ns, json!({
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["get", "list", "watch"]}]
        })).await;
        check::<RoleBinding>(&client, ns, json!({
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": ns}]
        })).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::NetworkPolicy;
        check::<NetworkPolicy>(&client, ns, json!({
            "metadata": {"name": "deny"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}], "ports": [{"port": 8080, "protocol": "TCP"}]}]}
        })).await;
    }
    #[cfg(feature = "policy")]
    {
        use kclient_api::policy::v1::PodDisruptionBudget;
        check::<PodDisruptionBudget>(
            &client,
            ns,
            json!({
                "metadata": {"name": "web"},
                "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
            }),
        )
        .await;
    }
    #[cfg(feature = "autoscaling")]
    {
        use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
        check::<HorizontalPodAutoscaler>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}
        })).await;
    }
}
