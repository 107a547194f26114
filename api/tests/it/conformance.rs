//! Conformance against the real kube-apiserver (testenv): create rich fixtures, read them back
//! raw and typed, and check that the typed value encodes back to exactly what the server sent
//! (no field lost, none invented, integers, quantities and times exact), on create and on get.
//! Statuses are written through the `status` subresource as controllers write them; reviews
//! (create-only kinds) and the `scale`, `token`, `ephemeralcontainers` and `binding`
//! subresources are checked the same way. Creates and updates use strict field validation, so
//! a misspelt fixture field or an unknown field in a typed encoding fails loudly.
//!
//! Every comparison with what the server sent is exact apart from the order of keys: where Go
//! writes an explicit `null` for an unset field (`lastProbeTime: null`, an autoscaling/v2
//! status's `currentMetrics: null`, an events.k8s.io Event's `deprecatedFirstTimestamp: null`),
//! the typed value writes `null` too (the generator reads which fields from the Go sources; see
//! `api/gen/src/go_nulls.rs`).
//!
//! With the `protobuf` feature, every object `check` and `check_status` read is also read with
//! `Accept: application/vnd.kubernetes.protobuf`: the protobuf decode must equal the JSON decode
//! in every field, and re-encoding it must give the server's protobuf bytes exactly.
//!
//! The suite runs on a testenv of its own without controllers, scheduler or simulated nodes
//! ([`quiet_env`]): they would bind its Pods and write the statuses it compares.

use kclient_apimachinery::Resource;
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};

/// The suite's apiserver: one per test process, started on first use, with no controllers,
/// scheduler or nodes, so that only the suite writes its objects (a deployment controller would
/// race its status writes, the scheduler would bind its Pods before its `binding` call).
async fn quiet_env() -> TestEnv {
    TestEnv::builder()
        .controllers(false)
        .nodes(0)
        .start_shared()
        .await
        .unwrap_or_else(|e| panic!("starting the conformance suite's testenv: {e}"))
}
use serde_json::{Value, json};

/// The kinds the checks take: with the `protobuf` feature they decode protobuf too.
#[cfg(feature = "protobuf")]
trait Kind: Resource + kclient_apimachinery::protobuf::Message + PartialEq + std::fmt::Debug {}
#[cfg(feature = "protobuf")]
impl<T: Resource + kclient_apimachinery::protobuf::Message + PartialEq + std::fmt::Debug> Kind
    for T
{
}
#[cfg(not(feature = "protobuf"))]
trait Kind: Resource {}
#[cfg(not(feature = "protobuf"))]
impl<T: Resource> Kind for T {}

/// Panics with where the Debug forms of two values first differ (a Pod's is long).
#[cfg(feature = "protobuf")]
fn assert_same<T: PartialEq + std::fmt::Debug>(left: &T, right: &T, what: &str) {
    if left != right {
        let (a, b) = (format!("{left:?}"), format!("{right:?}"));
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = at.saturating_sub(200);
        panic!(
            "{what}: differ from byte {from} of their Debug output:\n  left  {}\n  right {}",
            a.get(from..(at + 200).min(a.len())).unwrap_or(""),
            b.get(from..(at + 200).min(b.len())).unwrap_or(""),
        );
    }
}

/// Reads `name` as protobuf and as JSON (again while a controller changes it between the two
/// reads): both decodes must be equal in every field, the envelope must name `K`, and our
/// protobuf encoding of the value must be the server's bytes.
#[cfg(feature = "protobuf")]
async fn assert_protobuf_matches_json<K: Kind>(client: &Client, ns: &str, name: &str) {
    use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, Unknown, encode};
    let namespaced = <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED;
    let read = |accept: &'static str| {
        let get = client.get().group_version(K::GROUP, K::VERSION);
        let get = if namespaced { get.namespace(ns) } else { get };
        get.resource(K::PLURAL)
            .name(name)
            .header("Accept", accept)
            .bytes()
    };
    for attempt in 0.. {
        let proto = read(CONTENT_TYPE_PROTOBUF)
            .await
            .unwrap_or_else(|e| panic!("getting {} {name} as protobuf: {e}", K::KIND));
        let json = read("application/json")
            .await
            .unwrap_or_else(|e| panic!("getting {} {name} as JSON: {e}", K::KIND));
        let envelope = Unknown::decode(&proto)
            .unwrap_or_else(|e| panic!("{} {name}: protobuf envelope: {e}", K::KIND));
        assert_eq!(
            (envelope.api_version, envelope.kind),
            (K::API_VERSION, K::KIND),
            "{name}: envelope type"
        );
        let from_proto: K = envelope
            .decode_raw()
            .unwrap_or_else(|e| panic!("decoding {} {name} from protobuf: {e}", K::KIND));
        let from_json: K = kclient_apimachinery::decode_json(&json).expect("decoding JSON");
        if from_proto.resource_version() != from_json.resource_version() && attempt < 5 {
            continue;
        }
        assert_same(
            &from_proto,
            &from_json,
            &format!("{} {name}: protobuf decode vs JSON decode", K::KIND),
        );
        let ours = encode(K::API_VERSION, K::KIND, &from_proto);
        if ours != proto[..] {
            if let Ok(dir) = std::env::var("KCLIENT_PROTO_DUMP") {
                let _ = std::fs::write(format!("{dir}/{}-ours.bin", K::KIND), &ours);
                let _ = std::fs::write(format!("{dir}/{}-server.bin", K::KIND), &proto[..]);
            }
            let at = ours
                .iter()
                .zip(proto.iter())
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "{} {name}: our protobuf encoding ({} bytes) differs from the server's ({} bytes) at byte {at}:\n  ours   {:?}\n  server {:?}",
                K::KIND,
                ours.len(),
                proto.len(),
                &ours[at.saturating_sub(16)..(at + 32).min(ours.len())],
                &proto[at.saturating_sub(16)..(at + 32).min(proto.len())],
            );
        }
        break;
    }
}

/// Removes `null` members recursively (for fixtures written by hand, not for server JSON).
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
///
/// The bytes are decoded as the clients decode them (kclient's `decode_json`) and, to hold
/// that decoder to `serde_json`, by `serde_json` too: both must give the same value.
fn assert_typed_round_trip<K: Resource>(raw: &[u8], what: &str) {
    let typed: K = kclient_apimachinery::decode_json(raw)
        .unwrap_or_else(|e| panic!("decoding {} ({what}): {e}", K::KIND));
    let by_serde_json: K = serde_json::from_slice(raw)
        .unwrap_or_else(|e| panic!("decoding {} ({what}) by serde_json: {e}", K::KIND));
    let server: Value = serde_json::from_slice(raw).expect("server JSON");
    let server_by_kclient: Value = kclient_apimachinery::decode_json(raw).expect("server JSON");
    assert_eq!(server_by_kclient, server, "{} ({what}) as a Value", K::KIND);
    let ours = serde_json::to_value(&typed).expect("encoding");
    let theirs = serde_json::to_value(&by_serde_json).expect("encoding");
    assert_eq!(ours, theirs, "{} ({what}): the decoders differ", K::KIND);
    assert_eq!(ours, server, "{} ({what}) did not round-trip", K::KIND);
}

/// Creates `fixture` as a `K` in `ns`, then checks the create response and a get.
async fn check<K: Kind>(client: &Client, ns: &str, fixture: Value) {
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
    // Strict: a misspelt fixture field fails instead of being dropped unnoticed.
    let created = post
        .resource(K::PLURAL)
        .param("fieldValidation", "Strict")
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
    #[cfg(feature = "protobuf")]
    assert_protobuf_matches_json::<K>(client, ns, &name).await;
    // The typed value can be sent back: an update with it is accepted unchanged (read again
    // on a conflict: controllers write status concurrently, e.g. a CRD's).
    let mut latest = got;
    for attempt in 0.. {
        let typed: K = kclient_apimachinery::decode_json(&latest).expect("decoding");
        let put = client.put().group_version(K::GROUP, K::VERSION);
        let put = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
            put.namespace(ns)
        } else {
            put
        };
        match put
            .resource(K::PLURAL)
            .name(&name)
            .param("fieldValidation", "Strict")
            .json(&typed)
            .bytes()
            .await
        {
            Ok(updated) => {
                assert_typed_round_trip::<K>(&updated, "update response");
                break;
            }
            Err(e) if e.is_conflict() && attempt < 5 => {
                let get = client.get().group_version(K::GROUP, K::VERSION);
                let get = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
                    get.namespace(ns)
                } else {
                    get
                };
                latest = get
                    .resource(K::PLURAL)
                    .name(&name)
                    .bytes()
                    .await
                    .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
            }
            Err(e) => panic!("updating {} {name} with its typed value: {e}", K::KIND),
        }
    }
    #[cfg(feature = "protobuf")]
    assert_protobuf_update_is_a_no_op::<K>(client, ns, &name).await;
}

/// Sends the object back as a protobuf body (our encoding of our decode of the server's
/// protobuf): the server must read it as the object it stores, so the update changes nothing
/// and the resourceVersion stays. A field our encoder dropped or mangled would be a change (or
/// a 400). Reads again when a controller wrote in between.
#[cfg(feature = "protobuf")]
async fn assert_protobuf_update_is_a_no_op<K: Kind>(client: &Client, ns: &str, name: &str) {
    use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, decode_object, encode};
    let namespaced = <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED;
    for attempt in 0.. {
        let get = client.get().group_version(K::GROUP, K::VERSION);
        let get = if namespaced { get.namespace(ns) } else { get };
        let proto = get
            .resource(K::PLURAL)
            .name(name)
            .header("Accept", CONTENT_TYPE_PROTOBUF)
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("getting {} {name} as protobuf: {e}", K::KIND));
        let current: K = decode_object(&proto)
            .unwrap_or_else(|e| panic!("decoding {} {name} from protobuf: {e}", K::KIND));
        let put = client.put().group_version(K::GROUP, K::VERSION);
        let put = if namespaced { put.namespace(ns) } else { put };
        let answer = put
            .resource(K::PLURAL)
            .name(name)
            .header("Accept", CONTENT_TYPE_PROTOBUF)
            .content_type(CONTENT_TYPE_PROTOBUF)
            .body(encode(K::API_VERSION, K::KIND, &current))
            .bytes()
            .await;
        match answer {
            Ok(updated) => {
                let updated: K = decode_object(&updated).unwrap_or_else(|e| {
                    panic!("decoding {} {name}'s protobuf update answer: {e}", K::KIND)
                });
                if updated.resource_version() != current.resource_version() && attempt < 5 {
                    // A controller (or the status writer of a CRD) may have written between
                    // the read and the update; an unchanged object keeps its version.
                    continue;
                }
                assert_same(
                    &updated,
                    &current,
                    &format!(
                        "{} {name}: protobuf update of the unchanged object",
                        K::KIND
                    ),
                );
                return;
            }
            Err(e) if e.is_conflict() && attempt < 5 => continue,
            Err(e) => panic!("updating {} {name} with a protobuf body: {e}", K::KIND),
        }
    }
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
    let env = quiet_env().await;
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
    // The ConfigMap's finalizer is there to round-trip; nothing else would release it, and the
    // namespace would stay Terminating.
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::ConfigMap;
        client
            .patch(kclient_apimachinery::PatchType::Merge)
            .group_version(ConfigMap::GROUP, ConfigMap::VERSION)
            .namespace(ns)
            .resource(ConfigMap::PLURAL)
            .name("settings")
            .json(&json!({"metadata": {"finalizers": null}}))
            .bytes()
            .await
            .expect("releasing the ConfigMap's finalizer");
    }
}

#[tokio::test]
async fn more_namespaced_kinds_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();
    let t = "2024-01-02T03:04:05Z";

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{
            Event, LimitRange, PersistentVolumeClaim, PodTemplate, ReplicationController,
            ResourceQuota,
        };
        check::<LimitRange>(&client, ns, json!({
            "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "1Gi"}, "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "2"}}]}
        })).await;
        check::<ResourceQuota>(&client, ns, json!({
            "metadata": {"name": "quota"},
            "spec": {"hard": {"pods": "100", "requests.cpu": "40", "requests.memory": "100Gi"}, "scopes": ["NotBestEffort"]}
        })).await;
        check::<PersistentVolumeClaim>(&client, ns, json!({
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "volumeMode": "Filesystem", "storageClassName": "standard"}
        })).await;
        check::<PodTemplate>(
            &client,
            ns,
            json!({
                "metadata": {"name": "tpl"},
                "template": {"metadata": {"labels": {"app": "tpl"}}, "spec": pod_spec()}
            }),
        )
        .await;
        check::<ReplicationController>(&client, ns, json!({
            "metadata": {"name": "rc"},
            "spec": {"replicas": 0, "selector": {"app": "rc"}, "template": {"metadata": {"labels": {"app": "rc"}}, "spec": pod_spec()}}
        })).await;
        check::<Event>(&client, ns, json!({
            "metadata": {"name": "ev"},
            "involvedObject": {"kind": "Pod", "namespace": ns, "name": "web-0", "apiVersion": "v1"},
            "reason": "Started", "message": "Started container app", "type": "Normal", "count": 3,
            "firstTimestamp": t, "lastTimestamp": t, "source": {"component": "kubelet", "host": "node-1"}
        })).await;
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::{ControllerRevision, DaemonSet, ReplicaSet};
        check::<DaemonSet>(&client, ns, json!({
            "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {"metadata": {"labels": {"app": "agent"}}, "spec": pod_spec()},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}
        })).await;
        check::<ReplicaSet>(&client, ns, json!({
            "metadata": {"name": "rs"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "rs"}}, "template": {"metadata": {"labels": {"app": "rs"}}, "spec": pod_spec()}}
        })).await;
        check::<ControllerRevision>(&client, ns, json!({
            "metadata": {"name": "rev-1"}, "revision": 1, "data": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        })).await;
    }
    #[cfg(feature = "coordination")]
    {
        use kclient_api::coordination::v1::Lease;
        check::<Lease>(&client, ns, json!({
            "metadata": {"name": "leader"},
            "spec": {"holderIdentity": "pod-a", "leaseDurationSeconds": 15, "acquireTime": "2024-01-02T03:04:05.123456Z", "renewTime": "2024-01-02T03:04:06.654321Z", "leaseTransitions": 2}
        })).await;
    }
    #[cfg(feature = "discovery")]
    {
        use kclient_api::discovery::v1::EndpointSlice;
        check::<EndpointSlice>(&client, ns, json!({
            "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": true, "serving": true, "terminating": false}, "nodeName": "node-1", "zone": "eu-1a"}],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]
        })).await;
    }
    #[cfg(feature = "events")]
    {
        use kclient_api::events::v1::Event;
        check::<Event>(&client, ns, json!({
            "metadata": {"name": "ev2"},
            "eventTime": "2024-01-02T03:04:05.000123Z", "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
            "action": "Reconcile", "reason": "Synced", "type": "Normal", "note": "synced",
            "regarding": {"kind": "Pod", "namespace": ns, "name": "web-0"}
        })).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::Ingress;
        check::<Ingress>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["web.example.com"], "secretName": "web-tls"}],
                     "rules": [{"host": "web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}
        })).await;
    }
}

/// Deletes a cluster-scoped object created by a test, then clears the finalizers the
/// apiserver's admission added (`vac-protection` and a namespace's `kubernetes`, whose
/// controllers testenv does not run; `pv-protection`, whose controller it runs, at once).
async fn delete<K: Resource>(client: &Client, name: &str) {
    let deleted = client
        .delete()
        .group_version(K::GROUP, K::VERSION)
        .resource(K::PLURAL)
        .name(name)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("deleting {} {name}: {e}", K::KIND));
    // The answer is the object itself while finalizers hold it (with its deletion timestamp
    // and grace period), a Status otherwise.
    let answer: Value = serde_json::from_slice(&deleted).expect("server JSON");
    if answer["kind"] == K::KIND {
        assert_typed_round_trip::<K>(&deleted, "delete response");
    }
    let patch = if K::KIND == "Namespace" {
        // A namespace's own finalizers live in its spec and only the finalize subresource
        // clears them.
        let got = client
            .get()
            .group_version(K::GROUP, K::VERSION)
            .resource(K::PLURAL)
            .name(name)
            .bytes()
            .await;
        let Ok(got) = got else { return };
        let mut object: Value = serde_json::from_slice(&got).expect("server JSON");
        object["spec"]["finalizers"] = json!([]);
        client
            .put()
            .group_version(K::GROUP, K::VERSION)
            .resource(K::PLURAL)
            .name(name)
            .subresource("finalize")
            .json(&object)
            .bytes()
            .await
    } else {
        client
            .patch(kclient_apimachinery::PatchType::Merge)
            .group_version(K::GROUP, K::VERSION)
            .resource(K::PLURAL)
            .name(name)
            .json(&json!({"metadata": {"finalizers": null}}))
            .bytes()
            .await
    };
    match patch {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {}
        Err(e) => panic!("releasing {} {name}: {e}", K::KIND),
    }
}

#[tokio::test]
async fn cluster_scoped_kinds_round_trip() {
    let env = quiet_env().await;
    // The namespace only gives the objects unique names.
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();

    #[cfg(feature = "rbac")]
    {
        use kclient_api::rbac::v1::{ClusterRole, ClusterRoleBinding};
        let name = format!("reader-{suffix}");
        check::<ClusterRole>(&client, "", json!({
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}, {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "true"}}]}
        })).await;
        check::<ClusterRoleBinding>(&client, "", json!({
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "readers"}]
        })).await;
        delete::<ClusterRoleBinding>(&client, &name).await;
        delete::<ClusterRole>(&client, &name).await;
    }
    #[cfg(feature = "scheduling")]
    {
        use kclient_api::scheduling::v1::PriorityClass;
        let name = format!("high-{suffix}");
        check::<PriorityClass>(&client, "", json!({
            "metadata": {"name": name}, "value": 1000000, "globalDefault": false, "description": "high", "preemptionPolicy": "Never"
        })).await;
        delete::<PriorityClass>(&client, &name).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::{CSIDriver, StorageClass};
        let name = format!("fast-{suffix}");
        check::<StorageClass>(&client, "", json!({
            "metadata": {"name": name}, "provisioner": "example.com/csi", "parameters": {"type": "ssd"},
            "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true, "mountOptions": ["noatime"]
        })).await;
        delete::<StorageClass>(&client, &name).await;
        let name = format!("csi.{suffix}.example.com");
        check::<CSIDriver>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"attachRequired": false, "podInfoOnMount": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"], "fsGroupPolicy": "File",
                     "tokenRequests": [{"audience": "example.com", "expirationSeconds": 3600}]}
        })).await;
        delete::<CSIDriver>(&client, &name).await;
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::PersistentVolume;
        let name = format!("pv-{suffix}");
        check::<PersistentVolume>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": "/data/pv", "type": "DirectoryOrCreate"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}
        })).await;
        delete::<PersistentVolume>(&client, &name).await;
    }
    #[cfg(feature = "node")]
    {
        use kclient_api::node::v1::RuntimeClass;
        let name = format!("gvisor-{suffix}");
        check::<RuntimeClass>(&client, "", json!({
            "metadata": {"name": name}, "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {"nodeSelector": {"runtime": "gvisor"}, "tolerations": [{"key": "runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"}]}
        })).await;
        delete::<RuntimeClass>(&client, &name).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::IngressClass;
        let name = format!("nginx-{suffix}");
        check::<IngressClass>(&client, "", json!({
            "metadata": {"name": name}, "spec": {"controller": "example.com/ingress-nginx", "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p", "scope": "Cluster"}}
        })).await;
        delete::<IngressClass>(&client, &name).await;
    }
    #[cfg(feature = "apiextensions")]
    {
        use kclient_api::apiextensions::v1::CustomResourceDefinition;
        let group = format!("{suffix}.conformance.kclient.dev");
        let name = format!("widgets.{group}");
        check::<CustomResourceDefinition>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {
                "group": group, "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                    "additionalPrinterColumns": [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
                    "selectableFields": [{"jsonPath": ".spec.color"}],
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["color"],
                                "x-kubernetes-validations": [{"rule": "self.replicas <= 10", "message": "too many"}],
                                "properties": {
                                    "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 1},
                                    "color": {"type": "string", "enum": ["red", "blue"], "maxLength": 10},
                                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                                    "limits": {"type": "object", "additionalProperties": {"type": "string"}},
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                                    "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}
                                }
                            },
                            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
                        }
                    }}
                }]
            }
        })).await;
        delete::<CustomResourceDefinition>(&client, &name).await;
    }
}

/// A PEM certificate signing request (an EC P-256 key, subject `CN=x`), base64-encoded as
/// `CertificateSigningRequest.spec.request` carries it.
#[cfg(feature = "certificates")]
const CSR_PEM_BASE64: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISE1HNENBUUF3RERFS01BZ0dBMVVFQXd3QmVEQlpNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VIQTBJQQpCQTltcWlrREZLbWZjRFFCY1k4ZDFDaGRPM3hIclB3bFRsR1RrU2ZEbHVFaGxtdjEzMUxXWlY2TWpqZE8vdXhOClRUUEx5M2dLTnROZ1NQcERzMmt3YXhlZ0FEQUtCZ2dxaGtqT1BRUURBZ05KQURCR0FpRUE2U0loYzJvdUlUYkYKR1lydkt3aDVPMDhTRkZQdEcxYTV2ckpYV0FzUzk0SUNJUUQxbTRBdlg3UE0zdHpFdUUyVFRXNFFqRWFMT21MLwpXWnhOZTE2YWw0N3Q5QT09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

/// A device request body shared by `ResourceClaim` and `ResourceClaimTemplate`.
#[cfg(feature = "resource")]
fn device_claim() -> Value {
    json!({"devices": {
        "requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
            "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
            "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
        }}],
        "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "Config", "sharing": {"strategy": "TimeSlicing", "slices": 4}}}}]
    }})
}

#[tokio::test]
async fn remaining_namespaced_kinds_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::Endpoints;
        check::<Endpoints>(&client, ns, json!({
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "subsets": [{
                "addresses": [{"ip": "10.1.2.3", "hostname": "web-0", "nodeName": "node-1", "targetRef": {"kind": "Pod", "name": "web-0", "namespace": ns, "uid": "0b7f3c1e-8d7a-4f6e-9c2b-1a2b3c4d5e6f"}}],
                "notReadyAddresses": [{"ip": "10.1.2.4"}],
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"}, {"name": "dns", "port": 53, "protocol": "UDP"}]
            }]
        })).await;
    }
    #[cfg(feature = "autoscaling")]
    {
        use kclient_api::autoscaling::v1::HorizontalPodAutoscaler;
        check::<HorizontalPodAutoscaler>(&client, ns, json!({
            "metadata": {"name": "web-v1"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 70}
        })).await;
    }
    #[cfg(feature = "autoscaling")]
    {
        use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
        check::<HorizontalPodAutoscaler>(&client, ns, json!({
            "metadata": {"name": "web-v2"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 20,
                     "metrics": [
                        {"type": "Pods", "pods": {"metric": {"name": "requests_per_second", "selector": {"matchLabels": {"tier": "front"}}}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
                        {"type": "Object", "object": {"describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "web"}, "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10k"}}},
                        {"type": "External", "external": {"metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
                        {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "target": {"type": "Utilization", "averageUtilization": 80}}}
                     ],
                     "behavior": {
                        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}, {"type": "Pods", "value": 4, "periodSeconds": 15}]},
                        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Min", "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}
                     }}
        })).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::CSIStorageCapacity;
        check::<CSIStorageCapacity>(
            &client,
            ns,
            json!({
                "metadata": {"name": "cap-zone-a"}, "storageClassName": "fast",
                "nodeTopology": {"matchLabels": {"topology.example.com/zone": "a"}},
                "capacity": "100Gi", "maximumVolumeSize": "10Gi"
            }),
        )
        .await;
    }
    #[cfg(feature = "resource")]
    {
        use kclient_api::resource::v1::{ResourceClaim, ResourceClaimTemplate};
        check::<ResourceClaim>(
            &client,
            ns,
            json!({"metadata": {"name": "gpus", "labels": {"app": "train"}}, "spec": device_claim()}),
        )
        .await;
        check::<ResourceClaimTemplate>(&client, ns, json!({
            "metadata": {"name": "gpus-tpl"},
            "spec": {"metadata": {"labels": {"app": "train"}, "annotations": {"example.com/a": "b"}}, "spec": device_claim()}
        })).await;
    }
}

/// An address unique to this run: the namespace name hashed into two octets of 192.168/16.
#[cfg(feature = "networking")]
fn unique_ip(suffix: &str) -> String {
    let h = suffix
        .bytes()
        .fold(17u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("192.168.{}.{}", h % 250, (h / 250) % 250 + 1)
}

#[tokio::test]
async fn more_cluster_scoped_kinds_round_trip() {
    let env = quiet_env().await;
    // The namespace gives the objects unique names and holds the services they point at.
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();
    // Admission rules match a resource no API serves, and only namespaces labelled so that
    // none is: the webhooks and policies never fire.
    let never = json!({"matchLabels": {"conformance.kclient.dev/never": "true"}});
    let rules = json!([{"apiGroups": ["conformance.kclient.dev"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["nothings", "nothings/status"], "scope": "Namespaced"}]);

    #[cfg(feature = "admissionregistration")]
    {
        use kclient_api::admissionregistration::v1::{
            MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, MutatingWebhookConfiguration,
            ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
            ValidatingWebhookConfiguration,
        };
        let name = format!("guard-{suffix}");
        let webhook = |kind: &str| {
            json!({
                "name": format!("{kind}.{suffix}.conformance.kclient.dev"),
                "clientConfig": {"service": {"namespace": ns, "name": "webhook", "path": format!("/{kind}"), "port": 8443}},
                "rules": rules, "failurePolicy": "Ignore", "matchPolicy": "Exact", "sideEffects": "None", "timeoutSeconds": 3,
                "namespaceSelector": never, "objectSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["system"]}]},
                "admissionReviewVersions": ["v1"],
                "matchConditions": [{"name": "not-dry-run", "expression": "!request.dryRun"}]
            })
        };
        let mut mutating = webhook("mutate");
        mutating["reinvocationPolicy"] = json!("IfNeeded");
        check::<MutatingWebhookConfiguration>(
            &client,
            "",
            json!({"metadata": {"name": name, "labels": {"app": "guard"}}, "webhooks": [mutating]}),
        )
        .await;
        delete::<MutatingWebhookConfiguration>(&client, &name).await;
        check::<ValidatingWebhookConfiguration>(
            &client,
            "",
            json!({"metadata": {"name": name}, "webhooks": [webhook("validate")]}),
        )
        .await;
        delete::<ValidatingWebhookConfiguration>(&client, &name).await;

        let constraints = json!({
            "resourceRules": rules, "namespaceSelector": never, "objectSelector": {},
            "excludeResourceRules": [{"apiGroups": ["conformance.kclient.dev"], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["nothings"], "resourceNames": ["keep"]}],
            "matchPolicy": "Equivalent"
        });
        check::<ValidatingAdmissionPolicy>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": constraints, "failurePolicy": "Ignore",
                "variables": [{"name": "maxReplicas", "expression": "int(params.data.maxReplicas)"}],
                "validations": [{"expression": "object.spec.replicas <= variables.maxReplicas", "message": "too many replicas", "reason": "Invalid"},
                                {"expression": "has(object.metadata.labels)", "messageExpression": "'missing labels on ' + object.metadata.name"}],
                "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}],
                "matchConditions": [{"name": "not-dry-run", "expression": "!request.dryRun"}]
            }
        })).await;
        check::<ValidatingAdmissionPolicyBinding>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Warn", "Audit"],
                     "paramRef": {"name": "limits", "namespace": ns, "parameterNotFoundAction": "Deny"},
                     "matchResources": {"namespaceSelector": never, "matchPolicy": "Exact"}}
        })).await;
        delete::<ValidatingAdmissionPolicyBinding>(&client, &name).await;
        delete::<ValidatingAdmissionPolicy>(&client, &name).await;
        check::<MutatingAdmissionPolicy>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {
                "matchConstraints": {"resourceRules": rules, "namespaceSelector": never},
                "failurePolicy": "Ignore", "reinvocationPolicy": "IfNeeded",
                "variables": [{"name": "owner", "expression": "'team-a'"}],
                "mutations": [
                    {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"add\", path: \"/metadata/annotations\", value: {\"owner\": variables.owner}}]"}},
                    {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {\"owner\": variables.owner}}}"}}
                ],
                "matchConditions": [{"name": "not-dry-run", "expression": "!request.dryRun"}]
            }
        })).await;
        check::<MutatingAdmissionPolicyBinding>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"policyName": name, "matchResources": {"namespaceSelector": never, "objectSelector": {"matchLabels": {"app": "x"}}}}
        })).await;
        delete::<MutatingAdmissionPolicyBinding>(&client, &name).await;
        delete::<MutatingAdmissionPolicy>(&client, &name).await;
    }
    #[cfg(feature = "flowcontrol")]
    {
        use kclient_api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
        let name = format!("batch-{suffix}");
        check::<PriorityLevelConfiguration>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 5, "lendablePercent": 10, "borrowingLimitPercent": 20,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 50}}
            }}
        })).await;
        check::<FlowSchema>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {
                "priorityLevelConfiguration": {"name": name}, "matchingPrecedence": 5000,
                "distinguisherMethod": {"type": "ByNamespace"},
                "rules": [{
                    "subjects": [{"kind": "User", "user": {"name": format!("nobody-{suffix}")}},
                                 {"kind": "ServiceAccount", "serviceAccount": {"namespace": ns, "name": "robot"}},
                                 {"kind": "Group", "group": {"name": format!("nobody-{suffix}")}}],
                    "resourceRules": [{"verbs": ["get", "list"], "apiGroups": ["conformance.kclient.dev"], "resources": ["nothings"], "namespaces": [ns]},
                                      {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/conformance", "/conformance/*"]}]
                }]
            }
        })).await;
        delete::<FlowSchema>(&client, &name).await;
        delete::<PriorityLevelConfiguration>(&client, &name).await;
    }
    #[cfg(feature = "certificates")]
    {
        use kclient_api::certificates::v1::CertificateSigningRequest;
        let name = format!("csr-{suffix}");
        check::<CertificateSigningRequest>(&client, "", json!({
            "metadata": {"name": name, "labels": {"app": "csr"}},
            "spec": {"request": CSR_PEM_BASE64, "signerName": "example.com/test", "expirationSeconds": 3600,
                     "usages": ["digital signature", "key encipherment", "client auth"]}
        })).await;
        delete::<CertificateSigningRequest>(&client, &name).await;
    }
    #[cfg(feature = "apiregistration")]
    {
        use kclient_api::apiregistration::v1::APIService;
        let group = format!("{suffix}.conformance.example.com");
        let name = format!("v1.{group}");
        check::<APIService>(&client, "", json!({
            "metadata": {"name": name, "labels": {"app": "aggregated"}},
            "spec": {"group": group, "version": "v1", "service": {"namespace": ns, "name": "api", "port": 8443},
                     "insecureSkipTLSVerify": true, "groupPriorityMinimum": 1000, "versionPriority": 15}
        })).await;
        delete::<APIService>(&client, &name).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::{CSINode, VolumeAttachment, VolumeAttributesClass};
        let name = format!("attach-{suffix}");
        check::<VolumeAttachment>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"attacher": "csi.example.com", "nodeName": format!("node-{suffix}"), "source": {"persistentVolumeName": format!("pv-{suffix}")}}
        })).await;
        delete::<VolumeAttachment>(&client, &name).await;
        let name = format!("inline-{suffix}");
        check::<VolumeAttachment>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"attacher": "csi.example.com", "nodeName": format!("node-{suffix}"), "source": {"inlineVolumeSpec": {
                "accessModes": ["ReadWriteOnce"],
                "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1", "fsType": "ext4", "readOnly": true, "volumeAttributes": {"tier": "gold"},
                        "nodePublishSecretRef": {"name": "creds", "namespace": ns}}
            }}}
        })).await;
        delete::<VolumeAttachment>(&client, &name).await;
        let name = format!("node-{suffix}");
        check::<CSINode>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": name, "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 16}}]}
        })).await;
        delete::<CSINode>(&client, &name).await;
        let name = format!("gold-{suffix}");
        check::<VolumeAttributesClass>(&client, "", json!({
            "metadata": {"name": name}, "driverName": "csi.example.com", "parameters": {"iops": "3000", "throughput": "125"}
        })).await;
        delete::<VolumeAttributesClass>(&client, &name).await;
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{Namespace, Node};
        let name = format!("extra-{suffix}");
        check::<Namespace>(&client, "", json!({
            "metadata": {"name": name, "labels": {"team": "a"}, "annotations": {"example.com/owner": "team-a"}},
            "spec": {"finalizers": ["kubernetes"]}
        })).await;
        delete::<Namespace>(&client, &name).await;
        let name = format!("node-{suffix}");
        check::<Node>(&client, "", json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "eu-1a"}},
            "spec": {"podCIDR": "10.244.7.0/24", "podCIDRs": ["10.244.7.0/24", "fd00:10:244:7::/64"], "providerID": format!("example://{name}"), "unschedulable": true,
                     "taints": [{"key": "example.com/dedicated", "value": "batch", "effect": "NoSchedule"}]}
        })).await;
        delete::<Node>(&client, &name).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::{IPAddress, ServiceCIDR};
        let name = format!("extra-{suffix}");
        check::<ServiceCIDR>(
            &client,
            "",
            json!({
                "metadata": {"name": name}, "spec": {"cidrs": ["172.31.250.0/24", "fd00:fa::/112"]}
            }),
        )
        .await;
        delete::<ServiceCIDR>(&client, &name).await;
        let name = unique_ip(suffix);
        check::<IPAddress>(&client, "", json!({
            "metadata": {"name": name, "labels": {"ipaddress.kubernetes.io/managed-by": "conformance.kclient.dev"}},
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": ns, "name": "web"}}
        })).await;
        delete::<IPAddress>(&client, &name).await;
    }
    #[cfg(feature = "resource")]
    {
        use kclient_api::resource::v1::{DeviceClass, ResourceSlice};
        let name = format!("gpu-{suffix}");
        check::<DeviceClass>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].model == \"A100\""}}],
                     "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "Config", "mig": {"profile": "1g.10gb"}}}}]}
        })).await;
        delete::<DeviceClass>(&client, &name).await;
        check::<ResourceSlice>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": format!("node-{suffix}"),
                     "pool": {"name": format!("node-{suffix}"), "generation": 3, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0",
                                  "attributes": {"model": {"string": "A100"}, "index": {"int": 0}, "driverVersion": {"version": "1.2.3"}, "healthy": {"bool": true}},
                                  "capacity": {"memory": {"value": "40Gi"}, "cores": {"value": "6912"}},
                                  "taints": [{"key": "example.com/degraded", "value": "ecc", "effect": "NoSchedule"}]}]}
        })).await;
        let name2 = format!("shared-{suffix}");
        check::<ResourceSlice>(
            &client,
            "",
            json!({
                "metadata": {"name": name2},
                "spec": {"driver": "net.example.com", "allNodes": true,
                         "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "link-0", "attributes": {"speed": {"int": 400}}}]}
            }),
        )
        .await;
        delete::<ResourceSlice>(&client, &name).await;
        delete::<ResourceSlice>(&client, &name2).await;
    }
}

/// Creates a review (a create-only kind the server answers without storing it) and checks
/// that the answer round-trips and carries a status.
async fn check_review<K: Kind>(client: &Client, ns: &str, fixture: Value) {
    let post = client.post().group_version(K::GROUP, K::VERSION);
    let post = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
        post.namespace(ns)
    } else {
        post
    };
    let answer = post
        .resource(K::PLURAL)
        .json(&fixture)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("creating {}: {e}", K::KIND));
    assert_typed_round_trip::<K>(&answer, "review answer");
    let answer: Value = serde_json::from_slice(&answer).expect("server JSON");
    assert!(
        answer["status"].is_object(),
        "{} answer has no status: {answer}",
        K::KIND
    );
    #[cfg(feature = "protobuf")]
    {
        // The same review sent as a protobuf body gets the same answer, in protobuf.
        use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, decode_object, encode};
        let review: K = serde_json::from_value(fixture).expect("fixture as a typed review");
        let post = client.post().group_version(K::GROUP, K::VERSION);
        let post = if <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED {
            post.namespace(ns)
        } else {
            post
        };
        let proto = post
            .resource(K::PLURAL)
            .header("Accept", CONTENT_TYPE_PROTOBUF)
            .content_type(CONTENT_TYPE_PROTOBUF)
            .body(encode(K::API_VERSION, K::KIND, &review))
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("creating {} from a protobuf body: {e}", K::KIND));
        let from_proto: K = decode_object(&proto)
            .unwrap_or_else(|e| panic!("decoding the {} protobuf answer: {e}", K::KIND));
        // Compared as values with every list sorted: the server builds some answers from maps
        // (SelfSubjectRulesReview's rules), so their order differs from one request to the next.
        // The managedFields times are the two requests' own, and so is a SelfSubjectReview's
        // creationTimestamp (the time of its request: seen in CI one second apart when the two
        // requests straddled a second). An access review's
        // `status.reason` names the first RBAC binding the authorizer found that allows it, and
        // which one that is varies between requests when several do (seen in CI:
        // system:discovery, then system:public-info-viewer), so it is left out; `allowed` stays.
        let from_json: K = serde_json::from_value(answer).expect("typed JSON answer");
        let sorted = |review: &K| {
            let mut v = serde_json::to_value(review).expect("encoding");
            if let Some(Value::Array(entries)) = v.pointer_mut("/metadata/managedFields") {
                for entry in entries {
                    entry.as_object_mut().map(|e| e.remove("time"));
                }
            }
            if let Some(stamp) = v.pointer_mut("/metadata/creationTimestamp")
                && !stamp.is_null()
            {
                *stamp = Value::from("(set)");
            }
            if let Some(Value::Object(status)) = v.pointer_mut("/status") {
                status.remove("reason");
            }
            sort_lists(&mut v);
            v
        };
        assert_eq!(
            sorted(&from_proto),
            sorted(&from_json),
            "{}: answer to a protobuf body vs a JSON body",
            K::KIND
        );
    }
}

/// Sorts every list in `v` (recursively) by its members' JSON text.
#[cfg(feature = "protobuf")]
fn sort_lists(v: &mut Value) {
    match v {
        Value::Object(m) => m.values_mut().for_each(sort_lists),
        Value::Array(a) => {
            a.iter_mut().for_each(sort_lists);
            a.sort_by_cached_key(|x| x.to_string());
        }
        _ => {}
    }
}

#[tokio::test]
async fn review_kinds_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();

    #[cfg(feature = "authentication")]
    {
        use kclient_api::authentication::v1::{SelfSubjectReview, TokenReview};
        check_review::<SelfSubjectReview>(&client, ns, json!({"metadata": {}})).await;
        check_review::<TokenReview>(
            &client,
            ns,
            json!({"spec": {"token": "not-a-real-token", "audiences": ["https://kubernetes.default.svc"]}}),
        )
        .await;
    }
    #[cfg(feature = "authorization")]
    {
        use kclient_api::authorization::v1::{
            LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview,
            SubjectAccessReview,
        };
        check_review::<SelfSubjectAccessReview>(&client, ns, json!({
            "spec": {"resourceAttributes": {"namespace": ns, "verb": "list", "group": "apps", "version": "v1", "resource": "deployments", "subresource": "scale", "name": "web",
                                            "fieldSelector": {"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["node-1"]}]},
                                            "labelSelector": {"rawSelector": "app=web"}}}
        })).await;
        check_review::<SelfSubjectRulesReview>(&client, ns, json!({"spec": {"namespace": ns}}))
            .await;
        check_review::<SubjectAccessReview>(&client, ns, json!({
            "spec": {"user": "jane", "groups": ["devs", "system:authenticated"], "uid": "42", "extra": {"example.com/team": ["a", "b"]},
                     "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}
        })).await;
        check_review::<LocalSubjectAccessReview>(&client, ns, json!({
            "metadata": {"namespace": ns},
            "spec": {"user": "jane", "groups": ["devs"], "resourceAttributes": {"namespace": ns, "verb": "get", "resource": "pods", "name": "web-0"}}
        })).await;
    }
}

/// Writes `status` to the `status` subresource of the `K` named `name` (as controllers do)
/// and checks that the answer and a get round-trip typed with the status kept.
async fn check_status<K: Kind>(client: &Client, ns: &str, name: &str, status: Value) {
    let namespaced = <K::Scope as kclient_apimachinery::ResourceScope>::NAMESPACED;
    let get = client.get().group_version(K::GROUP, K::VERSION);
    let get = if namespaced { get.namespace(ns) } else { get };
    let got = get
        .resource(K::PLURAL)
        .name(name)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
    let mut object: Value = serde_json::from_slice(&got).expect("server JSON");
    object["status"] = status.clone();
    let put = client.put().group_version(K::GROUP, K::VERSION);
    let put = if namespaced { put.namespace(ns) } else { put };
    let updated = put
        .resource(K::PLURAL)
        .name(name)
        .subresource("status")
        .param("fieldValidation", "Strict")
        .json(&object)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("updating the status of {} {name}: {e}", K::KIND));
    assert_typed_round_trip::<K>(&updated, "status update response");
    let updated: Value = serde_json::from_slice(&updated).expect("server JSON");
    for key in status.as_object().expect("status object").keys() {
        assert!(
            !updated["status"][key].is_null(),
            "{} {name}: status.{key} was not kept by the server",
            K::KIND
        );
    }
    // The typed value, status included, can be read back and sent back.
    let get = client.get().group_version(K::GROUP, K::VERSION);
    let get = if namespaced { get.namespace(ns) } else { get };
    let got = get
        .resource(K::PLURAL)
        .name(name)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
    assert_typed_round_trip::<K>(&got, "get after status update");
    #[cfg(feature = "protobuf")]
    assert_protobuf_matches_json::<K>(client, ns, name).await;
    let typed: K = serde_json::from_slice(&got).expect("decoding");
    let put = client.put().group_version(K::GROUP, K::VERSION);
    let put = if namespaced { put.namespace(ns) } else { put };
    let again = put
        .resource(K::PLURAL)
        .name(name)
        .subresource("status")
        .param("fieldValidation", "Strict")
        .json(&typed)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("updating the status of {} {name} typed: {e}", K::KIND));
    assert_typed_round_trip::<K>(&again, "typed status update response");
}

#[tokio::test]
async fn statuses_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();
    let t = "2024-01-02T03:04:05Z";

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{Node, PersistentVolumeClaim, Pod, Service};
        check::<Pod>(
            &client,
            ns,
            json!({"metadata": {"name": "web-0"}, "spec": pod_spec()}),
        )
        .await;
        check_status::<Pod>(&client, ns, "web-0", json!({
            "phase": "Running", "qosClass": "Burstable", "startTime": t,
            "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}, {"ip": "fd00::3"}],
            "hostIP": "192.0.2.7", "hostIPs": [{"ip": "192.0.2.7"}],
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": t, "lastProbeTime": t, "reason": "Ok", "message": "ready", "observedGeneration": 1},
                           {"type": "PodScheduled", "status": "True", "lastTransitionTime": t}],
            "containerStatuses": [{
                "name": "app", "ready": true, "started": true, "restartCount": 2,
                "image": "registry.example.com/platform/checkout-service:v2.14.3", "imageID": "registry.example.com/platform/checkout-service@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "containerID": "containerd://abc123",
                "state": {"running": {"startedAt": t}},
                "lastState": {"terminated": {"exitCode": 137, "signal": 9, "reason": "OOMKilled", "message": "out of memory", "startedAt": t, "finishedAt": t, "containerID": "containerd://old"}},
                "resources": {"limits": {"memory": "512Mi", "cpu": "1500m"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
                "allocatedResources": {"cpu": "250m", "memory": "256Mi"},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": true, "recursiveReadOnly": "Disabled"}],
                "user": {"linux": {"uid": 1000, "gid": 1000, "supplementalGroups": [1000, 2000]}},
                "stopSignal": "SIGTERM"
            }]
        })).await;
        let node = format!("node-{suffix}");
        check::<Node>(
            &client,
            "",
            json!({"metadata": {"name": node}, "spec": {"podCIDR": "10.244.9.0/24"}}),
        )
        .await;
        check_status::<Node>(&client, "", &node, json!({
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"},
            "allocatable": {"cpu": "7800m", "memory": "31Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": t, "lastTransitionTime": t, "reason": "KubeletReady", "message": "kubelet is posting ready status"},
                           {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": t, "lastTransitionTime": t, "reason": "KubeletHasSufficientMemory"}],
            "addresses": [{"type": "InternalIP", "address": "192.0.2.7"}, {"type": "Hostname", "address": node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "u", "bootID": "b", "kernelVersion": "6.8.0", "osImage": "Ubuntu 24.04", "containerRuntimeVersion": "containerd://2.0.0",
                         "kubeletVersion": "v1.36.3", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64", "swap": {"capacity": 0}},
            "images": [{"names": ["registry.example.com/app@sha256:0123", "registry.example.com/app:v1"], "sizeBytes": 123456789}],
            "volumesInUse": ["kubernetes.io/csi/csi.example.com^vol-1"],
            "volumesAttached": [{"name": "kubernetes.io/csi/csi.example.com^vol-1", "devicePath": "/dev/xvdb"}],
            "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": true, "userNamespaces": true}}],
            "features": {"supplementalGroupsPolicy": true}
        })).await;
        delete::<Node>(&client, &node).await;
        check::<Service>(&client, ns, json!({
            "metadata": {"name": "lb"},
            "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                     "externalTrafficPolicy": "Local", "allocateLoadBalancerNodePorts": true, "loadBalancerClass": "example.com/lb"}
        })).await;
        check_status::<Service>(&client, ns, "lb", json!({
            "loadBalancer": {"ingress": [{"ip": "203.0.113.10", "ipMode": "VIP", "ports": [{"port": 80, "protocol": "TCP"}]}, {"hostname": "lb.example.com"}]},
            "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1, "lastTransitionTime": t, "reason": "Provisioned", "message": "ok"}]
        })).await;
        check::<PersistentVolumeClaim>(&client, ns, json!({
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "storageClassName": "standard"}
        })).await;
        check_status::<PersistentVolumeClaim>(&client, ns, "data", json!({
            "phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"},
            "conditions": [{"type": "Resizing", "status": "True", "lastProbeTime": t, "lastTransitionTime": t}]
        })).await;
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::Deployment;
        check::<Deployment>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec()}}
        })).await;
        check_status::<Deployment>(&client, ns, "web", json!({
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2, "unavailableReplicas": 1, "collisionCount": 1,
            "conditions": [{"type": "Available", "status": "True", "lastUpdateTime": t, "lastTransitionTime": t, "reason": "MinimumReplicasAvailable", "message": "ok"}]
        })).await;
    }
    #[cfg(feature = "autoscaling")]
    {
        use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
        check::<HorizontalPodAutoscaler>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 10,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}
        })).await;
        check_status::<HorizontalPodAutoscaler>(&client, ns, "web", json!({
            "observedGeneration": 1, "lastScaleTime": t, "currentReplicas": 3, "desiredReplicas": 4,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 85, "averageValue": "425m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": t, "reason": "SucceededRescale", "message": "ok"}]
        })).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::VolumeAttachment;
        let name = format!("attach-{suffix}");
        check::<VolumeAttachment>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"attacher": "csi.example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}
        })).await;
        check_status::<VolumeAttachment>(
            &client,
            "",
            &name,
            json!({
                "attached": true, "attachmentMetadata": {"devicePath": "/dev/xvdb"},
                "detachError": {"time": t, "message": "busy", "errorCode": 16}
            }),
        )
        .await;
        delete::<VolumeAttachment>(&client, &name).await;
    }
}

#[tokio::test]
async fn more_statuses_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();
    let t = "2024-01-02T03:04:05Z";
    let condition = |kind: &str| json!({"type": kind, "status": "True", "lastTransitionTime": t, "reason": "Testing", "message": "set by the conformance test"});
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": pod_spec()});

    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::{DaemonSet, ReplicaSet, StatefulSet};
        check::<StatefulSet>(&client, ns, json!({
            "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": template}
        })).await;
        check_status::<StatefulSet>(&client, ns, "db", json!({
            "observedGeneration": 1, "replicas": 2, "readyReplicas": 1, "currentReplicas": 2, "updatedReplicas": 1, "availableReplicas": 1,
            "currentRevision": "db-6d4b", "updateRevision": "db-7f9c", "collisionCount": 1, "conditions": [condition("Progressing")]
        })).await;
        check::<DaemonSet>(
            &client,
            ns,
            json!({
                "metadata": {"name": "agent"},
                "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}
            }),
        )
        .await;
        check_status::<DaemonSet>(&client, ns, "agent", json!({
            "currentNumberScheduled": 3, "numberMisscheduled": 1, "desiredNumberScheduled": 3, "numberReady": 2, "observedGeneration": 1,
            "updatedNumberScheduled": 2, "numberAvailable": 2, "numberUnavailable": 1, "collisionCount": 2, "conditions": [condition("Degraded")]
        })).await;
        check::<ReplicaSet>(&client, ns, json!({
            "metadata": {"name": "rs"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": template}
        })).await;
        check_status::<ReplicaSet>(&client, ns, "rs", json!({
            "replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 1,
            "conditions": [condition("ReplicaFailure")]
        })).await;
    }
    #[cfg(feature = "batch")]
    {
        use kclient_api::batch::v1::{CronJob, Job};
        check::<Job>(&client, ns, json!({
            "metadata": {"name": "once"},
            "spec": {"parallelism": 2, "completions": 4, "completionMode": "Indexed", "backoffLimitPerIndex": 1, "maxFailedIndexes": 2,
                     "podFailurePolicy": {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}, {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]},
                     "successPolicy": {"rules": [{"succeededIndexes": "0-1", "succeededCount": 1}]},
                     "activeDeadlineSeconds": 600, "ttlSecondsAfterFinished": 60, "podReplacementPolicy": "Failed",
                     "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}
        })).await;
        check_status::<Job>(&client, ns, "once", json!({
            "startTime": t, "active": 2, "ready": 1, "terminating": 0, "completedIndexes": "0", "failedIndexes": "3", "succeeded": 1, "failed": 1
        })).await;
        check::<CronJob>(&client, ns, json!({
            "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "suspend": true, "startingDeadlineSeconds": 120,
                     "successfulJobsHistoryLimit": 5, "failedJobsHistoryLimit": 2,
                     "jobTemplate": {"metadata": {"labels": {"app": "nightly"}}, "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}
        })).await;
        check_status::<CronJob>(&client, ns, "nightly", json!({
            "active": [{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly-28000000", "namespace": ns, "uid": "0b7f3c1e-8d7a-4f6e-9c2b-1a2b3c4d5e6f", "resourceVersion": "42"}],
            "lastScheduleTime": t, "lastSuccessfulTime": t
        })).await;
    }
    #[cfg(feature = "policy")]
    {
        use kclient_api::policy::v1::PodDisruptionBudget;
        check::<PodDisruptionBudget>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "x"}}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}
        })).await;
        check_status::<PodDisruptionBudget>(&client, ns, "web", json!({
            "observedGeneration": 1, "disruptedPods": {"web-0": t}, "disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3,
            "conditions": [{"type": "DisruptionAllowed", "status": "True", "lastTransitionTime": t, "reason": "SufficientPods", "message": "", "observedGeneration": 1}]
        })).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::{Ingress, ServiceCIDR};
        check::<Ingress>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"defaultBackend": {"resource": {"apiGroup": "example.com", "kind": "Bucket", "name": "static"}}}
        })).await;
        check_status::<Ingress>(&client, ns, "web", json!({
            "loadBalancer": {"ingress": [{"ip": "203.0.113.11", "ports": [{"port": 443, "protocol": "TCP", "error": "pending"}]}, {"hostname": "web.example.com"}]}
        })).await;
        let name = format!("status-{suffix}");
        check::<ServiceCIDR>(
            &client,
            "",
            json!({"metadata": {"name": name}, "spec": {"cidrs": ["172.31.251.0/24"]}}),
        )
        .await;
        check_status::<ServiceCIDR>(
            &client,
            "",
            &name,
            json!({"conditions": [condition("Ready")]}),
        )
        .await;
        delete::<ServiceCIDR>(&client, &name).await;
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{
            Namespace, PersistentVolume, ReplicationController, ResourceQuota,
        };
        check::<ReplicationController>(
            &client,
            ns,
            json!({
                "metadata": {"name": "rc"},
                "spec": {"replicas": 2, "selector": {"app": "x"}, "template": template}
            }),
        )
        .await;
        check_status::<ReplicationController>(&client, ns, "rc", json!({
            "replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 1,
            "conditions": [condition("ReplicaFailure")]
        })).await;
        check::<ResourceQuota>(
            &client,
            ns,
            json!({
                "metadata": {"name": "quota"}, "spec": {"hard": {"pods": "10", "requests.cpu": "4"}}
            }),
        )
        .await;
        check_status::<ResourceQuota>(&client, ns, "quota", json!({
            "hard": {"pods": "10", "requests.cpu": "4"}, "used": {"pods": "3", "requests.cpu": "1500m"}
        })).await;
        let name = format!("pv-{suffix}");
        check::<PersistentVolume>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "nfs": {"server": "nfs.example.com", "path": "/exports", "readOnly": true},
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": "data"}, "storageClassName": "slow", "mountOptions": ["hard", "nfsvers=4.1"]}
        })).await;
        check_status::<PersistentVolume>(&client, "", &name, json!({
            "phase": "Released", "message": "claim deleted", "reason": "Released", "lastPhaseTransitionTime": t
        })).await;
        delete::<PersistentVolume>(&client, &name).await;
        let name = format!("status-{suffix}");
        check::<Namespace>(&client, "", json!({"metadata": {"name": name}})).await;
        check_status::<Namespace>(&client, "", &name, json!({
            "phase": "Active",
            "conditions": [{"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "lastTransitionTime": t, "reason": "ResourcesDiscovered", "message": "all resources discovered"}]
        })).await;
        delete::<Namespace>(&client, &name).await;
    }
    #[cfg(feature = "certificates")]
    {
        use kclient_api::certificates::v1::CertificateSigningRequest;
        let name = format!("csr-status-{suffix}");
        check::<CertificateSigningRequest>(&client, "", json!({
            "metadata": {"name": name}, "spec": {"request": CSR_PEM_BASE64, "signerName": "example.com/test", "usages": ["client auth"]}
        })).await;
        check_status::<CertificateSigningRequest>(&client, "", &name, json!({
            "conditions": [{"type": "Failed", "status": "True", "reason": "SignerDown", "message": "signer unavailable", "lastUpdateTime": t, "lastTransitionTime": t}]
        })).await;
        delete::<CertificateSigningRequest>(&client, &name).await;
    }
    #[cfg(feature = "resource")]
    {
        use kclient_api::resource::v1::ResourceClaim;
        check::<ResourceClaim>(
            &client,
            ns,
            json!({"metadata": {"name": "gpus"}, "spec": device_claim()}),
        )
        .await;
        let result = |device: &str| {
            json!({"request": "gpu", "driver": "gpu.example.com", "pool": "pool-a", "device": device,
                                           "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]})
        };
        check_status::<ResourceClaim>(&client, ns, "gpus", json!({
            "allocation": {
                "devices": {"results": [result("gpu-0"), result("gpu-1")],
                            "config": [{"source": "FromClaim", "requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "Config", "slices": 4}}}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}
            },
            "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "0b7f3c1e-8d7a-4f6e-9c2b-1a2b3c4d5e6f"}],
            "devices": [{"driver": "gpu.example.com", "pool": "pool-a", "device": "gpu-0",
                         "conditions": [condition("Ready")],
                         "data": {"apiVersion": "gpu.example.com/v1", "kind": "Health", "temperature": 61},
                         "networkData": {"interfaceName": "eth1", "ips": ["10.9.0.5/24", "fd00::5/64"], "hardwareAddress": "aa:bb:cc:dd:ee:ff"}}]
        })).await;
    }
}

/// Decodes the server's bytes as `T` (a subresource's kind, which has no `Resource` impl),
/// encodes the result, and compares with the bytes; `secret` keeps values out of the message.
fn assert_round_trip_as<T>(raw: &[u8], what: &str, secret: bool)
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: T =
        kclient_apimachinery::decode_json(raw).unwrap_or_else(|e| panic!("decoding {what}: {e}"));
    let server: Value = serde_json::from_slice(raw).expect("server JSON");
    let ours = serde_json::to_value(&typed).expect("encoding");
    if secret {
        assert!(ours == server, "{what} did not round-trip");
    } else {
        assert_eq!(ours, server, "{what} did not round-trip");
    }
}

#[tokio::test]
async fn subresources_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();

    #[cfg(all(feature = "apps", feature = "autoscaling"))]
    {
        use kclient_api::apps::v1::{Deployment, StatefulSet};
        use kclient_api::autoscaling::v1::Scale;
        check::<Deployment>(&client, ns, json!({
            "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec()}}
        })).await;
        check::<StatefulSet>(&client, ns, json!({
            "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "template": {"metadata": {"labels": {"app": "db"}}, "spec": pod_spec()}}
        })).await;
        for plural in ["deployments", "statefulsets"] {
            let name = if plural == "deployments" { "web" } else { "db" };
            let got = client
                .get()
                .group_version("apps", "v1")
                .namespace(ns)
                .resource(plural)
                .name(name)
                .subresource("scale")
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("getting the scale of {plural}/{name}: {e}"));
            assert_round_trip_as::<Scale>(&got, "Scale (get)", false);
            let mut scale: Scale = serde_json::from_slice(&got).expect("decoding Scale");
            scale.spec.get_or_insert_default().replicas = Some(4);
            let put = client
                .put()
                .group_version("apps", "v1")
                .namespace(ns)
                .resource(plural)
                .name(name)
                .subresource("scale")
                .json(&scale)
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("updating the scale of {plural}/{name}: {e}"));
            assert_round_trip_as::<Scale>(&put, "Scale (update)", false);
            let put: Value = serde_json::from_slice(&put).expect("server JSON");
            assert_eq!(
                put["spec"]["replicas"], 4,
                "{plural}/{name}: scale not applied"
            );
        }
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::authentication::v1::TokenRequest;
        use kclient_api::core::v1::{Binding, Pod, ServiceAccount};
        check::<ServiceAccount>(&client, ns, json!({"metadata": {"name": "robot"}})).await;
        let issued = client
            .post()
            .group_version("", "v1")
            .namespace(ns)
            .resource("serviceaccounts")
            .name("robot")
            .subresource("token")
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"audiences": ["https://example.com"], "expirationSeconds": 3600}}))
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("requesting a token for robot: {e}"));
        assert_round_trip_as::<TokenRequest>(&issued, "TokenRequest", true);
        let issued: TokenRequest = serde_json::from_slice(&issued).expect("decoding TokenRequest");
        let status = issued.status.expect("TokenRequest has a status");
        assert!(
            status.token.is_some_and(|t| !t.is_empty()),
            "TokenRequest token is empty"
        );

        check::<Pod>(
            &client,
            ns,
            json!({"metadata": {"name": "web-0"}, "spec": pod_spec()}),
        )
        .await;
        let pod: Pod = serde_json::from_slice(
            &client
                .get()
                .group_version("", "v1")
                .namespace(ns)
                .resource("pods")
                .name("web-0")
                .bytes()
                .await
                .expect("getting web-0"),
        )
        .expect("decoding Pod");
        let mut with_debugger = serde_json::to_value(&pod).expect("encoding Pod");
        with_debugger["spec"]["ephemeralContainers"] = json!([{
            "name": "debugger", "image": "busybox:1.36", "command": ["sh"], "stdin": true, "tty": true, "targetContainerName": "app",
            "env": [{"name": "A", "value": "b"}], "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}
        }]);
        let updated = client
            .put()
            .group_version("", "v1")
            .namespace(ns)
            .resource("pods")
            .name("web-0")
            .subresource("ephemeralcontainers")
            .json(&with_debugger)
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("adding an ephemeral container to web-0: {e}"));
        assert_typed_round_trip::<Pod>(&updated, "ephemeralcontainers update response");
        let node = format!("node-{suffix}");
        let binding: Binding = serde_json::from_value(json!({
            "metadata": {"name": "web-0", "annotations": {"example.com/bound-by": "conformance"}},
            "target": {"kind": "Node", "apiVersion": "v1", "name": node}
        }))
        .expect("decoding Binding");
        client
            .post()
            .group_version("", "v1")
            .namespace(ns)
            .resource("pods")
            .name("web-0")
            .subresource("binding")
            .json(&binding)
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("binding web-0: {e}"));
        let bound = client
            .get()
            .group_version("", "v1")
            .namespace(ns)
            .resource("pods")
            .name("web-0")
            .bytes()
            .await
            .expect("getting web-0");
        assert_typed_round_trip::<Pod>(&bound, "get after binding");
        let bound: Pod = serde_json::from_slice(&bound).expect("decoding Pod");
        assert_eq!(
            bound.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some(node.as_str())
        );
        assert_eq!(
            bound
                .spec
                .as_ref()
                .and_then(|s| s.ephemeral_containers.as_ref().map(|c| c.len())),
            Some(1),
            "the ephemeral container was lost"
        );
        // No kubelet confirms a graceful deletion of a bound pod: delete it at once.
        client
            .delete()
            .group_version("", "v1")
            .namespace(ns)
            .resource("pods")
            .name("web-0")
            .param("gracePeriodSeconds", "0")
            .bytes()
            .await
            .expect("deleting web-0");
    }
}

/// A pod spec setting nearly every optional field a pod can be created with.
fn full_pod_spec() -> Value {
    let mut app = pod_spec()["containers"][0].clone();
    app["workingDir"] = json!("/srv");
    app["args"] = json!(["--verbose"]);
    app["imagePullPolicy"] = json!("IfNotPresent");
    app["envFrom"] = json!([{"prefix": "CFG_", "configMapRef": {"name": "settings", "optional": true}}, {"secretRef": {"name": "creds"}}]);
    app["env"] = json!([
        {"name": "CPU", "valueFrom": {"resourceFieldRef": {"containerName": "app", "resource": "limits.cpu", "divisor": "1m"}}},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password", "optional": false}}},
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}
    ]);
    app["startupProbe"] = json!({"exec": {"command": ["cat", "/tmp/ready"]}, "failureThreshold": 30, "periodSeconds": 2, "timeoutSeconds": 1, "successThreshold": 1, "terminationGracePeriodSeconds": 10});
    app["livenessProbe"] =
        json!({"grpc": {"port": 9090, "service": "health"}, "initialDelaySeconds": 3});
    app["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 5}}, "postStart": {"httpGet": {"path": "/started", "port": 8080, "scheme": "HTTP", "httpHeaders": [{"name": "X-A", "value": "b"}]}}});
    app["resizePolicy"] = json!([{"resourceName": "cpu", "restartPolicy": "NotRequired"}, {"resourceName": "memory", "restartPolicy": "RestartContainer"}]);
    app["resources"]["claims"] = json!([{"name": "gpu", "request": "gpu"}]);
    app["volumeMounts"] = json!([{"name": "config", "mountPath": "/etc/config", "readOnly": true, "recursiveReadOnly": "IfPossible"},
                                 {"name": "token", "mountPath": "/var/run/token", "subPath": "token", "mountPropagation": "None"},
                                 {"name": "scratch", "mountPath": "/scratch", "subPathExpr": "$(POD_NAME)"}]);
    app["volumeDevices"] = json!([{"name": "block", "devicePath": "/dev/xvdc"}]);
    app["terminationMessagePath"] = json!("/dev/termination-log");
    app["terminationMessagePolicy"] = json!("FallbackToLogsOnError");
    app["securityContext"] = json!({"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
                                    "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}, "seccompProfile": {"type": "RuntimeDefault"},
                                    "seLinuxOptions": {"level": "s0:c123,c456"}, "procMount": "Default", "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-app"}});
    app["stdin"] = json!(false);
    json!({
        "initContainers": [
            {"name": "migrate", "image": "busybox:1.36", "command": ["sh", "-c", "true"], "resources": {"requests": {"cpu": "10m"}}},
            {"name": "proxy", "image": "envoyproxy/envoy:v1.30", "restartPolicy": "Always", "ports": [{"containerPort": 15001, "hostPort": 15001, "hostIP": "127.0.0.1"}],
             "readinessProbe": {"httpGet": {"path": "/ready", "port": 15021}}}
        ],
        "containers": [app],
        "volumes": [
            {"name": "config", "configMap": {"name": "settings", "items": [{"key": "config.yaml", "path": "config.yaml", "mode": 256}], "optional": true}},
            {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
            {"name": "token", "projected": {"defaultMode": 292, "sources": [
                {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3600, "path": "token"}},
                {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}, {"path": "cpu", "resourceFieldRef": {"containerName": "app", "resource": "requests.cpu", "divisor": "1m"}}]}},
                {"secret": {"name": "creds", "items": [{"key": "password", "path": "pw"}]}},
                {"clusterTrustBundle": {"signerName": "example.com/signer", "labelSelector": {"matchLabels": {"a": "b"}}, "path": "ca.pem", "optional": true}}
            ]}},
            {"name": "block", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"type": "scratch"}}, "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Block", "storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}}}}},
            {"name": "inline", "csi": {"driver": "csi.example.com", "readOnly": true, "fsType": "ext4", "volumeAttributes": {"size": "1Gi"}, "nodePublishSecretRef": {"name": "creds"}}},
            {"name": "image", "image": {"reference": "registry.example.com/data:v1", "pullPolicy": "IfNotPresent"}},
            {"name": "secret", "secret": {"secretName": "creds", "defaultMode": 384}},
            {"name": "nfs", "nfs": {"server": "nfs.example.com", "path": "/exports"}},
            {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}}
        ],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 45, "activeDeadlineSeconds": 86400,
        "dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["svc.cluster.local"], "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
        "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["local.example.com"]}],
        "hostname": "web", "subdomain": "web-headless", "setHostnameAsFQDN": false,
        "serviceAccountName": "robot", "automountServiceAccountToken": false, "enableServiceLinks": false,
        "shareProcessNamespace": true, "hostUsers": true,
        "imagePullSecrets": [{"name": "registry"}],
        "securityContext": {"fsGroup": 2000, "fsGroupChangePolicy": "OnRootMismatch", "supplementalGroups": [3000], "supplementalGroupsPolicy": "Strict",
                            "sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "600"}], "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/app.json"},
                            "seLinuxChangePolicy": "Recursive"},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2, "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["pod-template-hash"]}],
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-0"]}]}}]
        }, "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname", "namespaces": ["other"], "namespaceSelector": {}}]}},
        "readinessGates": [{"conditionType": "example.com/ready"}],
        "schedulingGates": [{"name": "example.com/quota"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus-tpl"}],
        "os": {"name": "linux"},
        "preemptionPolicy": "PreemptLowerPriority",
        "schedulerName": "default-scheduler"
    })
}

#[tokio::test]
async fn full_pod_spec_round_trips() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{Pod, ServiceAccount};
        check::<ServiceAccount>(&client, ns, json!({"metadata": {"name": "robot"}})).await;
        // The owner must exist: testenv runs a garbage collector.
        let owner: Value = serde_json::from_slice(
            &client
                .get()
                .group_version("", "v1")
                .namespace(ns)
                .resource("serviceaccounts")
                .name("robot")
                .bytes()
                .await
                .expect("getting robot"),
        )
        .expect("server JSON");
        let owner = owner["metadata"]["uid"].clone();
        check::<Pod>(&client, ns, json!({
            "metadata": {"name": "full", "generateName": "full-", "labels": {"app": "web"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ServiceAccount", "name": "robot", "uid": owner, "controller": true, "blockOwnerDeletion": true}]},
            "spec": full_pod_spec()
        })).await;
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::Deployment;
        // Pods of a ReplicaSet may not have a deadline.
        let mut template = full_pod_spec();
        template
            .as_object_mut()
            .expect("pod spec")
            .remove("activeDeadlineSeconds");
        check::<Deployment>(&client, ns, json!({
            "metadata": {"name": "full"},
            "spec": {"replicas": 0, "minReadySeconds": 5, "revisionHistoryLimit": 3, "progressDeadlineSeconds": 120, "paused": true,
                     "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
                     "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": {"app": "web"}, "annotations": {"example.com/a": "b"}}, "spec": template}}
        })).await;
    }
}

#[tokio::test]
async fn more_specs_and_pod_status_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();
    let t = "2024-01-02T03:04:05Z";

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{Pod, Service};
        check::<Service>(&client, ns, json!({
            "metadata": {"name": "dual"},
            "spec": {"type": "NodePort", "selector": {"app": "web"}, "ipFamilyPolicy": "PreferDualStack", "ipFamilies": ["IPv4"],
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP", "appProtocol": "kubernetes.io/h2c"},
                               {"name": "dns", "port": 53, "protocol": "UDP"}],
                     "externalIPs": ["198.51.100.7"], "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Local",
                     "publishNotReadyAddresses": true, "trafficDistribution": "PreferClose"}
        })).await;
        check::<Service>(
            &client,
            ns,
            json!({
                "metadata": {"name": "headless"},
                "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 5432}]}
            }),
        )
        .await;
        check::<Service>(
            &client,
            ns,
            json!({
                "metadata": {"name": "external"},
                "spec": {"type": "ExternalName", "externalName": "db.example.com"}
            }),
        )
        .await;
        let mut spec = pod_spec();
        spec["initContainers"] = json!([{"name": "init", "image": "busybox:1.36"}]);
        check::<Pod>(
            &client,
            ns,
            json!({"metadata": {"name": "web-0"}, "spec": spec}),
        )
        .await;
        let running = |name: &str| {
            json!({"name": name, "ready": false, "restartCount": 0, "image": "busybox:1.36", "imageID": "",
                                          "state": {"waiting": {"reason": "ContainerCreating", "message": "pulling"}}})
        };
        check_status::<Pod>(&client, ns, "web-0", json!({
            "phase": "Pending", "message": "waiting", "reason": "Scheduling", "nominatedNodeName": "node-1", "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "False", "lastTransitionTime": t, "reason": "Unschedulable", "message": "0/3 nodes are available"}],
            "initContainerStatuses": [running("init")],
            "containerStatuses": [running("app")],
            "observedGeneration": 1
        })).await;
        // An eviction of a pod no budget covers is granted at once.
        let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0", "namespace": ns}, "deleteOptions": {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "preconditions": {"resourceVersion": null}}});
        #[cfg(feature = "policy")]
        {
            use kclient_api::policy::v1::Eviction;
            let typed: Eviction =
                serde_json::from_value(eviction.clone()).expect("decoding Eviction");
            let mut expected = eviction.clone();
            strip_nulls(&mut expected);
            assert_eq!(
                serde_json::to_value(&typed).expect("encoding"),
                expected,
                "Eviction did not round-trip"
            );
            client
                .post()
                .group_version("", "v1")
                .namespace(ns)
                .resource("pods")
                .name("web-0")
                .subresource("eviction")
                .json(&typed)
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("evicting web-0: {e}"));
            let gone = client
                .get()
                .group_version("", "v1")
                .namespace(ns)
                .resource("pods")
                .name("web-0")
                .bytes()
                .await;
            assert!(
                gone.is_err_and(|e| e.is_not_found()),
                "web-0 still exists after its eviction"
            );
        }
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::StatefulSet;
        check::<StatefulSet>(&client, ns, json!({
            "metadata": {"name": "db"},
            "spec": {"serviceName": "headless", "replicas": 3, "podManagementPolicy": "Parallel", "minReadySeconds": 10, "revisionHistoryLimit": 5,
                     "selector": {"matchLabels": {"app": "db"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1, "maxUnavailable": "50%"}},
                     "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
                     "ordinals": {"start": 5},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": pod_spec()},
                     "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"app": "db"}},
                                               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast", "volumeMode": "Filesystem",
                                                        "selector": {"matchLabels": {"tier": "db"}}, "volumeAttributesClassName": "gold",
                                                        "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap-1"},
                                                        "resources": {"requests": {"storage": "10Gi"}, "limits": {"storage": "20Gi"}}}}]}
        })).await;
    }
}

/// Waits (up to ten seconds) until the apiserver's own controllers have written the status of
/// the cluster-scoped `K` named `name`, then checks that it round-trips typed.
async fn check_controller_status<K: Resource>(client: &Client, name: &str, key: &str) {
    for _ in 0..100 {
        let got = client
            .get()
            .group_version(K::GROUP, K::VERSION)
            .resource(K::PLURAL)
            .name(name)
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
        let value: Value = serde_json::from_slice(&got).expect("server JSON");
        if !value["status"][key].is_null() {
            assert_typed_round_trip::<K>(&got, "get with a controller-written status");
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{} {name}: no controller wrote status.{key}", K::KIND);
}

#[tokio::test]
async fn controller_written_statuses_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();

    #[cfg(feature = "apiextensions")]
    {
        use kclient_api::apiextensions::v1::CustomResourceDefinition;
        let group = format!("{suffix}.status.kclient.dev");
        let name = format!("gadgets.{group}");
        check::<CustomResourceDefinition>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"group": group, "scope": "Cluster", "names": {"plural": "gadgets", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                                  {"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "deprecationWarning": "use v1",
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
                     "conversion": {"strategy": "None"}}
        })).await;
        check_controller_status::<CustomResourceDefinition>(&client, &name, "acceptedNames").await;
        delete::<CustomResourceDefinition>(&client, &name).await;
    }
    #[cfg(feature = "apiregistration")]
    {
        use kclient_api::apiregistration::v1::APIService;
        let group = format!("{suffix}.status.example.com");
        let name = format!("v1.{group}");
        check::<APIService>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"group": group, "version": "v1", "service": {"namespace": ns, "name": "api"}, "insecureSkipTLSVerify": true, "groupPriorityMinimum": 100, "versionPriority": 1}
        })).await;
        check_controller_status::<APIService>(&client, &name, "conditions").await;
        delete::<APIService>(&client, &name).await;
    }
    #[cfg(feature = "flowcontrol")]
    {
        use kclient_api::flowcontrol::v1::FlowSchema;
        let name = format!("dangling-{suffix}");
        // Pointing at a priority level that does not exist: the apiserver marks it dangling.
        check::<FlowSchema>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": format!("missing-{suffix}")}, "matchingPrecedence": 9000,
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": format!("nobody-{suffix}")}}],
                                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/conformance"]}]}]}
        })).await;
        check_controller_status::<FlowSchema>(&client, &name, "conditions").await;
        delete::<FlowSchema>(&client, &name).await;
    }
    #[cfg(feature = "admissionregistration")]
    {
        use kclient_api::admissionregistration::v1::ValidatingAdmissionPolicy;
        let name = format!("typed-{suffix}");
        // An expression that does not type-check against the kind it matches.
        check::<ValidatingAdmissionPolicy>(&client, "", json!({
            "metadata": {"name": name},
            "spec": {"failurePolicy": "Ignore",
                     "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}],
                                          "namespaceSelector": {"matchLabels": {"conformance.kclient.dev/never": "true"}}},
                     "validations": [{"expression": "object.spec.replicas > 'three'"}]}
        })).await;
        // The type-checking controller is kube-controller-manager's, which testenv does not
        // run: write the status as it would.
        check_status::<ValidatingAdmissionPolicy>(&client, "", &name, json!({
            "observedGeneration": 1,
            "typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0].expression", "warning": "found no matching overload for '_>_' applied to '(int, string)'"}]},
            "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "TypeChecked", "message": ""}]
        })).await;
        delete::<ValidatingAdmissionPolicy>(&client, &name).await;
    }
}

/// Lists `K` in `ns` a page of `limit` at a time and checks that every page decodes as
/// `ObjectList<K>` and encodes back to the server's page (items carry no `kind` or
/// `apiVersion` in a list; a list's own are not kept). Returns the number of items seen.
async fn check_list<K: Kind>(client: &Client, ns: &str, limit: usize) -> usize {
    use kclient_apimachinery::ObjectList;
    let mut seen = 0;
    let mut token = String::new();
    // Reads of a page that other tests' writes changed between the JSON and the protobuf read
    // (see below), retried from the JSON read.
    #[cfg(feature = "protobuf")]
    let mut changed_reads = 0;
    loop {
        let mut get = client
            .get()
            .group_version(K::GROUP, K::VERSION)
            .namespace(ns)
            .resource(K::PLURAL)
            .param("limit", limit.to_string());
        if !token.is_empty() {
            get = get.param("continue", token.clone());
        }
        let page = get
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("listing {}: {e}", K::KIND));
        let typed: ObjectList<K> = kclient_apimachinery::decode_json(&page)
            .unwrap_or_else(|e| panic!("decoding a {} list: {e}", K::KIND));
        let mut server: Value = serde_json::from_slice(&page).expect("server JSON");
        let server_by_kclient: Value = kclient_apimachinery::decode_json(&page).expect("JSON");
        assert_eq!(
            server_by_kclient,
            server,
            "a {} list page as a Value",
            K::KIND
        );
        let server = server.as_object_mut().expect("list object");
        server.remove("kind");
        server.remove("apiVersion");
        let api_version = if K::GROUP.is_empty() {
            K::VERSION.to_string()
        } else {
            format!("{}/{}", K::GROUP, K::VERSION)
        };
        for item in server["items"].as_array_mut().expect("items") {
            item["apiVersion"] = json!(api_version);
            item["kind"] = json!(K::KIND);
        }
        let ours = serde_json::to_value(&typed).expect("encoding");
        assert_eq!(
            ours,
            Value::Object(server.clone()),
            "a {} list page did not round-trip",
            K::KIND
        );
        // The same page as protobuf: the same items (a continue token pins the snapshot; the
        // first page's is the latest, and nothing else writes in this namespace).
        #[cfg(feature = "protobuf")]
        {
            use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, Unknown};
            let mut get = client
                .get()
                .group_version(K::GROUP, K::VERSION)
                .namespace(ns)
                .resource(K::PLURAL)
                .param("limit", limit.to_string())
                .header("Accept", CONTENT_TYPE_PROTOBUF);
            if !token.is_empty() {
                get = get.param("continue", token.clone());
            }
            let page = get
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("listing {} as protobuf: {e}", K::KIND));
            let envelope = Unknown::decode(&page).expect("protobuf list envelope");
            assert_eq!(envelope.kind, format!("{}List", K::KIND));
            let from_proto: ObjectList<K> = envelope
                .decode_raw()
                .unwrap_or_else(|e| panic!("decoding a {} list from protobuf: {e}", K::KIND));
            // ComponentStatuses are not stored: each read probes the components again, in an
            // order of its own and with messages of the moment, so two reads are compared by
            // count only (the protobuf decode itself must still succeed).
            // Other tests of this suite write cluster-scoped objects while it runs, so items
            // are paired by namespace and name and compared when both reads saw the same
            // resourceVersion.
            if K::KIND == "ComponentStatus" {
                assert_eq!(from_proto.items.len(), typed.items.len());
                assert_eq!(
                    from_proto.metadata.remaining_item_count,
                    typed.metadata.remaining_item_count
                );
            } else {
                let mut compared = 0;
                for p in &from_proto.items {
                    let same = typed
                        .items
                        .iter()
                        .find(|t| t.namespace() == p.namespace() && t.name() == p.name());
                    if let Some(t) = same
                        && t.resource_version() == p.resource_version()
                    {
                        assert_same(p, t, &format!("a {} list item: protobuf vs JSON", K::KIND));
                        compared += 1;
                    }
                }
                // A page whose every item another test changed or deleted between the two
                // reads (the conformance test creates and deletes VolumeAttachments, Nodes,
                // Namespaces... while this one runs) compares nothing: read both again.
                let counted_alike =
                    from_proto.metadata.remaining_item_count == typed.metadata.remaining_item_count;
                if !(typed.items.is_empty() || compared > 0) || !counted_alike {
                    changed_reads += 1;
                    assert!(
                        changed_reads < 5,
                        "{changed_reads} reads of a {} list page in a row changed between the \
                         JSON and the protobuf read (items compared: {compared} of {}; \
                         remainingItemCount {:?} vs {:?})",
                        K::KIND,
                        typed.items.len(),
                        typed.metadata.remaining_item_count,
                        from_proto.metadata.remaining_item_count,
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    continue;
                }
            }
            changed_reads = 0;
        }
        seen += typed.items.len();
        match typed.continue_token() {
            Some(next) => {
                assert!(
                    typed.metadata.remaining_item_count.is_some(),
                    "a {} page with a continue token has no remainingItemCount",
                    K::KIND
                );
                token = next.to_string();
            }
            None => return seen,
        }
    }
}

#[tokio::test]
async fn list_pages_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{ConfigMap, Pod};
        for i in 0..3 {
            check::<Pod>(&client, ns, json!({"metadata": {"name": format!("web-{i}"), "labels": {"app": "web"}}, "spec": pod_spec()})).await;
            check::<ConfigMap>(
                &client,
                ns,
                json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i.to_string()}}),
            )
            .await;
        }
        assert_eq!(check_list::<Pod>(&client, ns, 2).await, 3);
        // The namespace also holds the root CA config map every namespace gets.
        assert!(check_list::<ConfigMap>(&client, ns, 1).await >= 3);
    }
}

#[tokio::test]
async fn more_variants_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();
    let t = "2024-01-02T03:04:05Z";

    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{Event, PersistentVolume, Secret};
        check::<Secret>(
            &client,
            ns,
            json!({
                "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
                "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}, "stringData": {"ca.crt": "ca"}
            }),
        )
        .await;
        check::<Secret>(
            &client,
            ns,
            json!({
                "metadata": {"name": "registry"}, "type": "kubernetes.io/dockerconfigjson",
                "data": {".dockerconfigjson": "eyJhdXRocyI6e319"}, "immutable": true
            }),
        )
        .await;
        check::<Event>(&client, ns, json!({
            "metadata": {"name": "series"},
            "involvedObject": {"kind": "Pod", "namespace": ns, "name": "web-0", "uid": "0b7f3c1e-8d7a-4f6e-9c2b-1a2b3c4d5e6f", "fieldPath": "spec.containers{app}", "resourceVersion": "7"},
            "related": {"kind": "Node", "name": "node-1"},
            "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
            "eventTime": "2024-01-02T03:04:05.123456Z", "series": {"count": 4, "lastObservedTime": "2024-01-02T03:05:05.654321Z"},
            "action": "Restart", "reportingComponent": "kubelet", "reportingInstance": "node-1", "firstTimestamp": t, "lastTimestamp": t, "count": 5
        })).await;
        let sources = [
            (
                "csi",
                json!({"csi": {"driver": "csi.example.com", "volumeHandle": "vol-9", "readOnly": false, "fsType": "xfs", "volumeAttributes": {"a": "b"},
                                   "controllerPublishSecretRef": {"name": "s", "namespace": ns}, "nodeStageSecretRef": {"name": "s", "namespace": ns},
                                   "nodePublishSecretRef": {"name": "s", "namespace": ns}, "controllerExpandSecretRef": {"name": "s", "namespace": ns},
                                   "nodeExpandSecretRef": {"name": "s", "namespace": ns}},
                          "volumeMode": "Filesystem", "volumeAttributesClassName": "gold"}),
            ),
            (
                "local",
                json!({"local": {"path": "/mnt/disks/ssd1", "fsType": "ext4"}, "volumeMode": "Block",
                            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}),
            ),
            (
                "iscsi",
                json!({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage.disk1", "lun": 0, "iscsiInterface": "default", "fsType": "ext4",
                                       "readOnly": true, "portals": ["10.0.0.2:3260"], "chapAuthDiscovery": true, "chapAuthSession": true, "secretRef": {"name": "chap", "namespace": ns}, "initiatorName": "iqn.1996-04.de.suse:01:a"}}),
            ),
            (
                "fc",
                json!({"fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2, "fsType": "ext4", "readOnly": true}}),
            ),
        ];
        for (kind, source) in sources {
            let name = format!("pv-{kind}-{suffix}");
            let mut spec = json!({"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "fast", "mountOptions": ["ro"]});
            for (k, v) in source.as_object().expect("source") {
                spec[k] = v.clone();
            }
            if kind != "local" && kind != "csi" {
                spec.as_object_mut().expect("spec").remove("mountOptions");
            }
            check::<PersistentVolume>(
                &client,
                "",
                json!({"metadata": {"name": name}, "spec": spec}),
            )
            .await;
            delete::<PersistentVolume>(&client, &name).await;
        }
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::NetworkPolicy;
        check::<NetworkPolicy>(&client, ns, json!({
            "metadata": {"name": "egress"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "a"}}, "podSelector": {"matchExpressions": [{"key": "role", "operator": "Exists"}]}}],
                                  "ports": [{"port": "http", "protocol": "TCP"}]}],
                     "egress": [{"to": [{"ipBlock": {"cidr": "fd00::/8"}}], "ports": [{"port": 32000, "endPort": 32768, "protocol": "UDP"}, {"protocol": "SCTP"}]}, {}]}
        })).await;
    }
    #[cfg(feature = "coordination")]
    {
        use kclient_api::coordination::v1::Lease;
        check::<Lease>(&client, ns, json!({
            "metadata": {"name": "fresh"}, "spec": {"holderIdentity": "", "leaseDurationSeconds": 1, "leaseTransitions": 0}
        })).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::StorageClass;
        let name = format!("topo-{suffix}");
        check::<StorageClass>(&client, "", json!({
            "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": "false"}},
            "provisioner": "csi.example.com", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.example.com/zone", "values": ["a", "b"]}]}]
        })).await;
        delete::<StorageClass>(&client, &name).await;
    }
}

/// A self-signed PEM certificate (an EC P-256 key, subject `CN=x`), base64-encoded as
/// `CertificateSigningRequest.status.certificate` carries it.
#[cfg(feature = "certificates")]
const CERT_PEM_BASE64: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJiekNDQVJXZ0F3SUJBZ0lVYXVkTFdzNUNpcGhyR0Q3S3B0QllsQTRwTEFNd0NnWUlLb1pJemowRUF3SXcKRERFS01BZ0dBMVVFQXd3QmVEQWdGdzB5TmpFeE1qSXdNREV6TVRSYUdBOHlNVEkyTVRBeU9UQXdNVE14TkZvdwpEREVLTUFnR0ExVUVBd3dCZURCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUhBMElBQk5kSGVkaEtNOHJyCkVBejUrbUpsVGVMN3hNN0NFQTZaLzY3cWI2RzZZTlptY0FmQ2NDcXVybzVSdXN4MUM3ZHRuUFRFSVE5TmFobWMKTkxGWXJrUW9uNENqVXpCUk1CMEdBMVVkRGdRV0JCVHREY2trd1kveU1NVzRXelRLSjJ3SEYxSm81akFmQmdOVgpIU01FR0RBV2dCVHREY2trd1kveU1NVzRXelRLSjJ3SEYxSm81akFQQmdOVkhSTUJBZjhFQlRBREFRSC9NQW9HCkNDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFETUZpaWFpWmRUQnltT3ZBbFdLTEJNY2pQTVkwcWFtNkFlVEQrTS93eDcKR1FJZ2F5aE1hK0dncnhGVjVCT0FSeW9Sa2JEbEk1d3hlcml4Sk5yR1pRTWcvYUE9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

/// Approves a CSR through its `approval` subresource (typed), then issues a certificate
/// through `status`, as a signer does, and checks both answers round-trip.
#[cfg(feature = "certificates")]
#[tokio::test]
async fn certificate_signing_request_is_approved_and_issued() {
    use kclient_api::certificates::v1::CertificateSigningRequest;
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let name = format!("issued-{}", ns.name());
    let t = "2024-01-02T03:04:05Z";
    check::<CertificateSigningRequest>(&client, "", json!({
        "metadata": {"name": name},
        "spec": {"request": CSR_PEM_BASE64, "signerName": "example.com/test", "usages": ["digital signature", "server auth"], "expirationSeconds": 86400}
    })).await;
    let got = client
        .get()
        .group_version("certificates.k8s.io", "v1")
        .resource("certificatesigningrequests")
        .name(&name)
        .bytes()
        .await
        .expect("getting the CSR");
    let mut csr: CertificateSigningRequest = serde_json::from_slice(&got).expect("decoding");
    let approved = json!({"conditions": [{"type": "Approved", "status": "True", "reason": "Conformance", "message": "approved by the test", "lastUpdateTime": t, "lastTransitionTime": t}]});
    csr.status = Some(serde_json::from_value(approved).expect("decoding the status"));
    let answer = client
        .put()
        .group_version("certificates.k8s.io", "v1")
        .resource("certificatesigningrequests")
        .name(&name)
        .subresource("approval")
        .json(&csr)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("approving {name}: {e}"));
    assert_typed_round_trip::<CertificateSigningRequest>(&answer, "approval response");
    let mut status: Value =
        serde_json::from_slice::<Value>(&answer).expect("server JSON")["status"].clone();
    assert_eq!(status["conditions"][0]["type"], "Approved");
    status["certificate"] = json!(CERT_PEM_BASE64);
    check_status::<CertificateSigningRequest>(&client, "", &name, status).await;
    delete::<CertificateSigningRequest>(&client, &name).await;
}

/// Every object the cluster holds (bootstrap RBAC, flow control and priority classes, local
/// APIServices, the `kubernetes` service and its endpoints, the default ServiceCIDR, other
/// tests' objects) round-trips typed when listed across all namespaces.
#[tokio::test]
async fn every_stored_object_round_trips() {
    let env = quiet_env().await;
    let client = env.client(Identity::Admin);
    let mut total = 0;
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::*;
        total += check_list::<ComponentStatus>(&client, "", 250).await;
        total += check_list::<ConfigMap>(&client, "", 250).await;
        total += check_list::<Endpoints>(&client, "", 250).await;
        total += check_list::<Event>(&client, "", 250).await;
        total += check_list::<LimitRange>(&client, "", 250).await;
        total += check_list::<Namespace>(&client, "", 250).await;
        total += check_list::<Node>(&client, "", 250).await;
        total += check_list::<PersistentVolume>(&client, "", 250).await;
        total += check_list::<PersistentVolumeClaim>(&client, "", 250).await;
        total += check_list::<Pod>(&client, "", 250).await;
        total += check_list::<PodTemplate>(&client, "", 250).await;
        total += check_list::<ReplicationController>(&client, "", 250).await;
        total += check_list::<ResourceQuota>(&client, "", 250).await;
        total += check_list::<Secret>(&client, "", 250).await;
        total += check_list::<Service>(&client, "", 250).await;
        total += check_list::<ServiceAccount>(&client, "", 250).await;
    }
    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::*;
        total += check_list::<ControllerRevision>(&client, "", 250).await;
        total += check_list::<DaemonSet>(&client, "", 250).await;
        total += check_list::<Deployment>(&client, "", 250).await;
        total += check_list::<ReplicaSet>(&client, "", 250).await;
        total += check_list::<StatefulSet>(&client, "", 250).await;
    }
    #[cfg(feature = "admissionregistration")]
    {
        use kclient_api::admissionregistration::v1::*;
        total += check_list::<MutatingAdmissionPolicy>(&client, "", 250).await;
        total += check_list::<MutatingAdmissionPolicyBinding>(&client, "", 250).await;
        total += check_list::<MutatingWebhookConfiguration>(&client, "", 250).await;
        total += check_list::<ValidatingAdmissionPolicy>(&client, "", 250).await;
        total += check_list::<ValidatingAdmissionPolicyBinding>(&client, "", 250).await;
        total += check_list::<ValidatingWebhookConfiguration>(&client, "", 250).await;
    }
    #[cfg(feature = "apiextensions")]
    {
        use kclient_api::apiextensions::v1::CustomResourceDefinition;
        total += check_list::<CustomResourceDefinition>(&client, "", 250).await;
    }
    #[cfg(feature = "apiregistration")]
    {
        use kclient_api::apiregistration::v1::APIService;
        total += check_list::<APIService>(&client, "", 250).await;
    }
    #[cfg(feature = "autoscaling")]
    {
        total +=
            check_list::<kclient_api::autoscaling::v1::HorizontalPodAutoscaler>(&client, "", 250)
                .await;
        total +=
            check_list::<kclient_api::autoscaling::v2::HorizontalPodAutoscaler>(&client, "", 250)
                .await;
    }
    #[cfg(feature = "batch")]
    {
        use kclient_api::batch::v1::*;
        total += check_list::<CronJob>(&client, "", 250).await;
        total += check_list::<Job>(&client, "", 250).await;
    }
    #[cfg(feature = "certificates")]
    {
        use kclient_api::certificates::v1::CertificateSigningRequest;
        total += check_list::<CertificateSigningRequest>(&client, "", 250).await;
    }
    #[cfg(feature = "coordination")]
    {
        use kclient_api::coordination::v1::Lease;
        total += check_list::<Lease>(&client, "", 250).await;
    }
    #[cfg(feature = "discovery")]
    {
        use kclient_api::discovery::v1::EndpointSlice;
        total += check_list::<EndpointSlice>(&client, "", 250).await;
    }
    #[cfg(feature = "events")]
    {
        total += check_list::<kclient_api::events::v1::Event>(&client, "", 250).await;
    }
    #[cfg(feature = "flowcontrol")]
    {
        use kclient_api::flowcontrol::v1::*;
        total += check_list::<FlowSchema>(&client, "", 250).await;
        total += check_list::<PriorityLevelConfiguration>(&client, "", 250).await;
    }
    #[cfg(feature = "networking")]
    {
        use kclient_api::networking::v1::*;
        total += check_list::<IPAddress>(&client, "", 250).await;
        total += check_list::<Ingress>(&client, "", 250).await;
        total += check_list::<IngressClass>(&client, "", 250).await;
        total += check_list::<NetworkPolicy>(&client, "", 250).await;
        total += check_list::<ServiceCIDR>(&client, "", 250).await;
    }
    #[cfg(feature = "node")]
    {
        use kclient_api::node::v1::RuntimeClass;
        total += check_list::<RuntimeClass>(&client, "", 250).await;
    }
    #[cfg(feature = "policy")]
    {
        use kclient_api::policy::v1::PodDisruptionBudget;
        total += check_list::<PodDisruptionBudget>(&client, "", 250).await;
    }
    #[cfg(feature = "rbac")]
    {
        use kclient_api::rbac::v1::*;
        total += check_list::<ClusterRole>(&client, "", 250).await;
        total += check_list::<ClusterRoleBinding>(&client, "", 250).await;
        total += check_list::<Role>(&client, "", 250).await;
        total += check_list::<RoleBinding>(&client, "", 250).await;
    }
    #[cfg(feature = "resource")]
    {
        use kclient_api::resource::v1::*;
        total += check_list::<DeviceClass>(&client, "", 250).await;
        total += check_list::<ResourceClaim>(&client, "", 250).await;
        total += check_list::<ResourceClaimTemplate>(&client, "", 250).await;
        total += check_list::<ResourceSlice>(&client, "", 250).await;
    }
    #[cfg(feature = "scheduling")]
    {
        use kclient_api::scheduling::v1::PriorityClass;
        total += check_list::<PriorityClass>(&client, "", 250).await;
    }
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::*;
        total += check_list::<CSIDriver>(&client, "", 250).await;
        total += check_list::<CSINode>(&client, "", 250).await;
        total += check_list::<CSIStorageCapacity>(&client, "", 250).await;
        total += check_list::<StorageClass>(&client, "", 250).await;
        total += check_list::<VolumeAttachment>(&client, "", 250).await;
        total += check_list::<VolumeAttributesClass>(&client, "", 250).await;
    }
    // Bootstrap objects alone (cluster roles, flow schemas, priority classes) are hundreds.
    assert!(total > 100, "only {total} objects listed");
}

/// Edge values: 64-bit integers beyond a double's precision, floats and whole floats in raw
/// extensions, unusual quantity spellings the server canonicalizes, non-ASCII text.
#[tokio::test]
async fn edge_values_round_trip() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let suffix = ns.name();
    let ns = ns.name();

    #[cfg(feature = "apps")]
    {
        use kclient_api::apps::v1::ControllerRevision;
        check::<ControllerRevision>(&client, ns, json!({
            "metadata": {"name": "edge", "annotations": {"example.com/text": "é ✓ \u{2028} \"quoted\" <tag> &amp;"}},
            "revision": 9007199254740993_i64,
            "data": {"max": 9223372036854775807_i64, "min": -9223372036854775808_i64, "umax": 18446744073709551615_u64,
                     "half": 1.5, "tiny": 1e-7, "whole": 2.0, "neg": -0.25, "nested": [[], {}, null, true, "s"]}
        })).await;
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::{ConfigMap, LimitRange, Node, ResourceQuota};
        check::<ResourceQuota>(&client, ns, json!({
            "metadata": {"name": "odd"},
            "spec": {"hard": {"pods": "1e3", "requests.cpu": "0.1", "requests.memory": "1.5Gi", "limits.memory": "100k", "requests.storage": "1Ei",
                              "count/configmaps": "12M", "limits.cpu": "2000m", "requests.ephemeral-storage": "0"}}
        })).await;
        check::<LimitRange>(&client, ns, json!({
            "metadata": {"name": "ratio"},
            "spec": {"limits": [{"type": "Container", "maxLimitRequestRatio": {"cpu": "2.5", "memory": "4"}, "min": {"cpu": "1m", "memory": "1Ki"}},
                                {"type": "PersistentVolumeClaim", "max": {"storage": "1Ti"}, "min": {"storage": "1Mi"}}]}
        })).await;
        check::<ConfigMap>(&client, ns, json!({
            "metadata": {"name": "text"}, "data": {"unicode": "日本語 🚀 \u{0000}x", "empty": ""}, "binaryData": {"zero": ""}
        })).await;
        let name = format!("edge-{suffix}");
        check::<Node>(&client, "", json!({"metadata": {"name": name}})).await;
        check_status::<Node>(&client, "", &name, json!({
            "images": [{"names": ["huge:v1"], "sizeBytes": 9223372036854775807_i64}],
            "capacity": {"cpu": "96", "memory": "1536Gi", "example.com/fpga": "1", "hugepages-1Gi": "64Gi", "ephemeral-storage": "3.5T"}
        })).await;
        delete::<Node>(&client, &name).await;
    }
}

/// managedFields from the server decode into entries whose field sets (`FieldsV1`) equal ones
/// share one allocation, and encode back to the server's exact JSON.
#[cfg(feature = "core")]
#[tokio::test]
async fn equal_managed_field_sets_from_the_server_share_one_allocation() {
    use kclient_api::core::v1::ConfigMap;
    use kclient_apimachinery::ObjectList;
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    // Two objects written the same way by the same manager: equal field sets, different times
    // and names. A third, with another label key, has a set of its own.
    for (name, label) in [("a", "app"), ("b", "app"), ("c", "tier")] {
        let _: Value = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .param("fieldManager", "kclient-conformance")
            .json(&json!({"metadata": {"name": name, "labels": {label: "x"}}, "data": {"k": "v"}}))
            .send()
            .await
            .expect("create");
    }
    let raw = client
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .bytes()
        .await
        .expect("list");
    let list: ObjectList<ConfigMap> = serde_json::from_slice(&raw).expect("decoding the list");
    let set = |i: usize| {
        let entries = list.items[i]
            .metadata
            .managed_fields
            .as_ref()
            .expect("managedFields");
        assert_eq!(entries.len(), 1, "one manager");
        assert_eq!(entries[0].manager.as_deref(), Some("kclient-conformance"));
        assert_eq!(entries[0].operation.as_deref(), Some("Update"));
        entries[0].fields_v1.clone().expect("fieldsV1")
    };
    let (a, b, c) = (set(0), set(1), set(2));
    assert_eq!(a, b);
    assert!(
        a.ptr_eq(&b),
        "equal sets from two objects share one allocation"
    );
    assert_ne!(a, c);
    assert!(!a.ptr_eq(&c));
    let decoded: Value = a.decode().expect("a set is JSON");
    assert!(
        decoded["f:metadata"]["f:labels"]["f:app"].is_object(),
        "{decoded}"
    );
    // Nothing lost: each item encodes back to what the server sent.
    let server: Value = serde_json::from_slice(&raw).expect("server JSON");
    for (typed, sent) in list
        .items
        .iter()
        .zip(server["items"].as_array().unwrap().clone())
    {
        let mut ours = serde_json::to_value(typed).expect("encoding");
        // List items carry no apiVersion/kind on the wire; typed values always write them.
        let ours_obj = ours.as_object_mut().unwrap();
        ours_obj.remove("apiVersion");
        ours_obj.remove("kind");
        assert_eq!(ours, sent);
    }
}

/// Gets `name` of kind `K` as raw bytes and checks that each of `paths` (JSON pointers) is an
/// explicit `null` in the server's JSON and in the typed value's encoding, then the whole round
/// trip.
#[cfg(any(
    feature = "autoscaling",
    feature = "events",
    feature = "storage",
    feature = "core",
    feature = "batch"
))]
async fn assert_explicit_nulls<K: Resource>(client: &Client, ns: &str, name: &str, paths: &[&str]) {
    let got = client
        .get()
        .group_version(K::GROUP, K::VERSION)
        .namespace(ns)
        .resource(K::PLURAL)
        .name(name)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("getting {} {name}: {e}", K::KIND));
    let server: Value = serde_json::from_slice(&got).expect("server JSON");
    let typed: K = kclient_apimachinery::decode_json(&got).expect("decoding");
    let ours = serde_json::to_value(&typed).expect("encoding");
    for path in paths {
        let (parent, key) = path.rsplit_once('/').expect("a pointer");
        for (who, value) in [("server", &server), ("kclient", &ours)] {
            let object = value.pointer(parent).and_then(Value::as_object);
            assert_eq!(
                object.and_then(|o| o.get(key)),
                Some(&Value::Null),
                "{} {name}: {who} writes no explicit null at {path}",
                K::KIND
            );
        }
    }
    assert_typed_round_trip::<K>(&got, "get with explicit nulls");
}

#[tokio::test]
async fn explicit_nulls_from_the_server_are_written_back() {
    let env = quiet_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let ns = ns.name();
    #[cfg(feature = "autoscaling")]
    {
        use kclient_api::autoscaling::v2::HorizontalPodAutoscaler;
        check::<HorizontalPodAutoscaler>(&client, ns, json!({
            "metadata": {"name": "nulls"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}
        })).await;
        assert_explicit_nulls::<HorizontalPodAutoscaler>(
            &client,
            ns,
            "nulls",
            &["/status/currentMetrics"],
        )
        .await;
    }
    #[cfg(feature = "events")]
    {
        use kclient_api::events::v1::Event;
        check::<Event>(&client, ns, json!({
            "metadata": {"name": "nulls"},
            "eventTime": "2024-01-02T03:04:05.000123Z", "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
            "action": "Reconcile", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Pod", "namespace": ns, "name": "web-0"}
        })).await;
        assert_explicit_nulls::<Event>(
            &client,
            ns,
            "nulls",
            &["/deprecatedFirstTimestamp", "/deprecatedLastTimestamp"],
        )
        .await;
    }
    // A required list Go leaves nil is written `null` too, and the server stores an empty one
    // as nil: a CSINode of a node without CSI drivers (as the kubelet creates every node's), a
    // LimitRange without limits, a Job's pod failure policy without rules.
    #[cfg(feature = "storage")]
    {
        use kclient_api::storage::v1::CSINode;
        let name = format!("no-drivers-{ns}");
        check::<CSINode>(
            &client,
            "",
            json!({
                "metadata": {"name": name}, "spec": {"drivers": []}
            }),
        )
        .await;
        assert_explicit_nulls::<CSINode>(&client, "", &name, &["/spec/drivers"]).await;
        delete::<CSINode>(&client, &name).await;
    }
    #[cfg(feature = "core")]
    {
        use kclient_api::core::v1::LimitRange;
        check::<LimitRange>(
            &client,
            ns,
            json!({
                "metadata": {"name": "nulls"}, "spec": {"limits": []}
            }),
        )
        .await;
        assert_explicit_nulls::<LimitRange>(&client, ns, "nulls", &["/spec/limits"]).await;
    }
    #[cfg(feature = "batch")]
    {
        use kclient_api::batch::v1::Job;
        check::<Job>(&client, ns, json!({
            "metadata": {"name": "nulls"},
            "spec": {"podFailurePolicy": {"rules": []}, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "app", "image": "registry.example.com/app:1"}]
            }}}
        })).await;
        assert_explicit_nulls::<Job>(&client, ns, "nulls", &["/spec/podFailurePolicy/rules"]).await;
    }
}

/// The alpha and beta versions (the `all-beta` and `all-alpha` features) against a server of
/// their own that serves them (`--runtime-config=api/all=true`; no controllers, so only this
/// test writes):
/// - every alpha or beta resource the server lists in discovery has a generated type here, and
///   its list decodes and re-encodes to the server's exact JSON;
/// - objects of seven kinds that need no controller or feature gate are created, read and
///   updated as the GA kinds are (`check`: JSON both ways, and protobuf with the `protobuf`
///   feature).
#[cfg(all(feature = "all-beta", feature = "all-alpha"))]
#[tokio::test]
async fn unstable_versions_round_trip() {
    use kclient_api::{
        admissionregistration, apiserverinternal, certificates, coordination, networking, resource,
        scheduling, storage, storagemigration,
    };
    let env = TestEnv::builder()
        .controllers(false)
        .nodes(0)
        .runtime_config("api/all=true")
        .start()
        .await
        .unwrap_or_else(|e| panic!("starting a testenv serving every alpha and beta version: {e}"));
    let client = env.client(Identity::Admin);
    let ns = env.namespace().await;
    let ns = ns.name();

    // What the server serves: (group/version, plural) of every alpha or beta resource.
    let groups: Value = client.get().abs_path("/apis").send().await.expect("/apis");
    let mut served = std::collections::BTreeSet::new();
    for group in groups["groups"].as_array().expect("groups") {
        for version in group["versions"].as_array().expect("versions") {
            let gv = version["groupVersion"].as_str().expect("groupVersion");
            let v = version["version"].as_str().expect("version");
            if !(v.contains("alpha") || v.contains("beta")) {
                continue;
            }
            let list: Value = client
                .get()
                .abs_path(&format!("/apis/{gv}"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("/apis/{gv}: {e}"));
            for r in list["resources"].as_array().expect("resources") {
                let plural = r["name"].as_str().expect("name");
                if !plural.contains('/') {
                    served.insert(format!("{gv} {plural}"));
                }
            }
        }
    }
    assert!(
        served.len() >= 10,
        "api/all=true should serve alpha and beta resources, found only {served:?}"
    );

    // Every generated alpha or beta kind that is served: its list round-trips.
    let mut ours = std::collections::BTreeSet::new();
    macro_rules! lists {
        ($($ty:ty),* $(,)?) => {$(
            let key = format!("{} {}", <$ty as Resource>::API_VERSION, <$ty as Resource>::PLURAL);
            if served.contains(&key) {
                check_list::<$ty>(&client, "", 100).await;
            }
            ours.insert(key);
        )*};
    }
    lists!(
        admissionregistration::v1alpha1::MutatingAdmissionPolicy,
        admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
        admissionregistration::v1beta1::MutatingAdmissionPolicy,
        admissionregistration::v1beta1::MutatingAdmissionPolicyBinding,
        apiserverinternal::v1alpha1::StorageVersion,
        certificates::v1alpha1::ClusterTrustBundle,
        certificates::v1beta1::ClusterTrustBundle,
        certificates::v1beta1::PodCertificateRequest,
        coordination::v1alpha2::LeaseCandidate,
        coordination::v1beta1::LeaseCandidate,
        networking::v1beta1::IPAddress,
        networking::v1beta1::ServiceCIDR,
        resource::v1alpha3::DeviceTaintRule,
        resource::v1alpha3::ResourcePoolStatusRequest,
        resource::v1beta1::DeviceClass,
        resource::v1beta1::ResourceClaim,
        resource::v1beta1::ResourceClaimTemplate,
        resource::v1beta1::ResourceSlice,
        resource::v1beta2::DeviceClass,
        resource::v1beta2::DeviceTaintRule,
        resource::v1beta2::ResourceClaim,
        resource::v1beta2::ResourceClaimTemplate,
        resource::v1beta2::ResourceSlice,
        scheduling::v1alpha2::PodGroup,
        scheduling::v1alpha2::Workload,
        storage::v1beta1::VolumeAttributesClass,
        storagemigration::v1beta1::StorageVersionMigration,
    );
    let missing: Vec<_> = served
        .iter()
        .filter(|r| !ours.contains(*r))
        .filter(|r| r.contains(".k8s.io/") && !r.contains(".kclient.dev/"))
        .collect();
    assert!(missing.is_empty(), "served but not generated: {missing:?}");

    // Objects, where the server needs nothing else to accept them.
    check::<resource::v1beta2::DeviceClass>(
        &client,
        ns,
        json!({"metadata": {"name": "gpu-beta2"}, "spec": {"selectors": [
            {"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}),
    )
    .await;
    check::<resource::v1beta1::DeviceClass>(
        &client,
        ns,
        json!({"metadata": {"name": "gpu-beta1"}, "spec": {"selectors": [
            {"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}),
    )
    .await;
    check::<resource::v1beta2::ResourceClaim>(
        &client,
        ns,
        json!({"metadata": {"name": "claim"}, "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu-beta2", "count": 1}}]}}}),
    )
    .await;
    check::<resource::v1beta1::ResourceClaimTemplate>(
        &client,
        ns,
        json!({"metadata": {"name": "template"}, "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "deviceClassName": "gpu-beta1"}]}}}}),
    )
    .await;
    check::<storage::v1beta1::VolumeAttributesClass>(
        &client,
        ns,
        json!({"metadata": {"name": "fast"}, "driverName": "csi.example.com",
               "parameters": {"iops": "3000"}}),
    )
    .await;
    check::<networking::v1beta1::ServiceCIDR>(
        &client,
        ns,
        json!({"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.97.0.0/24"]}}),
    )
    .await;
    check::<coordination::v1beta1::LeaseCandidate>(
        &client,
        ns,
        json!({"metadata": {"name": "candidate"}, "spec": {"leaseName": "leader",
               "binaryVersion": "1.36.3", "emulationVersion": "1.36.3",
               "strategy": "OldestEmulationVersion"}}),
    )
    .await;
    // StorageVersionMigration needs the StorageVersionMigrator feature gate as well, so the
    // server does not serve it here; its list is checked above whenever it is served.
}

/// A raw field (a ControllerRevision's `data`, a `runtime.RawExtension`) holds the bytes a
/// client sent: the server checks their JSON grammar but not their UTF-8 (Go's decoder does
/// not), stores them, and writes them back as they are. client-go reads such an object, Go's
/// decoder replacing each byte that does not start a valid sequence by U+FFFD, and each lone
/// surrogate escape too, when it decodes strings. An error here would make the object, and
/// every list and watch holding it, unreadable: anyone who may create one ControllerRevision
/// would stop every kclient informer of the kind. Runs on the shared testenv, not
/// [`quiet_env`], whose `every_stored_object_round_trips` reads every object with
/// `serde_json`, which refuses such bytes.
#[cfg(feature = "apps")]
#[tokio::test(flavor = "multi_thread")]
async fn raw_fields_that_are_not_utf8_are_read_as_go_reads_them() {
    use kclient_api::apps::v1::ControllerRevision;
    use kclient_apimachinery::{ObjectList, Unstructured};
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    // `x`, a byte that is never UTF-8, `y`; a cut three-byte sequence; a lone surrogate escape
    // (kept as it is in raw text, read as U+FFFD in a string); and an escaped pair for a
    // character outside the BMP, which is fine.
    let body: &[u8] = b"{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\",\
        \"metadata\":{\"name\":\"not-utf8\"},\"revision\":1,\
        \"data\":{\"a\":\"x\xffy\",\"b\":\"\xe2\x82z\",\"c\":\"\\ud800z\",\"d\":\"\\ud83d\\ude80\"}}";
    client
        .post()
        .group_version("apps", "v1")
        .namespace(ns.name())
        .resource("controllerrevisions")
        .body(body.to_vec())
        .bytes()
        .await
        .expect("creating the ControllerRevision");
    let got = client
        .get()
        .group_version("apps", "v1")
        .namespace(ns.name())
        .resource("controllerrevisions")
        .name("not-utf8")
        .bytes()
        .await
        .expect("getting it");
    assert!(
        std::str::from_utf8(&got).is_err(),
        "the server is expected to write the raw bytes back"
    );
    // Typed: the raw text, each bad byte replaced, escapes kept as they are.
    let typed: ControllerRevision =
        kclient_apimachinery::decode_json(&got).unwrap_or_else(|e| panic!("typed: {e}"));
    let data = typed.data.as_ref().expect("data");
    assert_eq!(
        data.get(),
        "{\"a\":\"x\u{fffd}y\",\"b\":\"\u{fffd}\u{fffd}z\",\"c\":\"\\ud800z\",\"d\":\"\\ud83d\\ude80\"}"
    );
    // In a list too.
    let list = client
        .get()
        .group_version("apps", "v1")
        .namespace(ns.name())
        .resource("controllerrevisions")
        .bytes()
        .await
        .expect("listing");
    let listed: ObjectList<ControllerRevision> =
        kclient_apimachinery::decode_json(&list).unwrap_or_else(|e| panic!("list: {e}"));
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].data, typed.data);
    // Dynamic: decoded strings, as Go's decoder gives them.
    let dynamic: Unstructured =
        kclient_apimachinery::decode_json(&got).unwrap_or_else(|e| panic!("dynamic: {e}"));
    let field = |key: &str| {
        dynamic
            .nested_string(&["data", key])
            .expect("a string")
            .expect("present")
            .to_owned()
    };
    assert_eq!(field("a"), "x\u{fffd}y");
    assert_eq!(field("b"), "\u{fffd}\u{fffd}z");
    assert_eq!(field("c"), "\u{fffd}z");
    assert_eq!(field("d"), "\u{1f680}");
    // From protobuf, where the raw field holds the same bytes, the same value.
    #[cfg(feature = "protobuf")]
    {
        use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, Unknown};
        let proto = client
            .get()
            .group_version("apps", "v1")
            .namespace(ns.name())
            .resource("controllerrevisions")
            .name("not-utf8")
            .header("Accept", CONTENT_TYPE_PROTOBUF)
            .bytes()
            .await
            .expect("getting it as protobuf");
        let from_proto: ControllerRevision = Unknown::decode(&proto)
            .and_then(|envelope| envelope.decode_raw())
            .unwrap_or_else(|e| panic!("protobuf: {e}"));
        assert_eq!(from_proto.data, typed.data);
    }
    // (Sent back, the typed value holds U+FFFD where the server holds the bytes: the data of
    // a ControllerRevision is immutable, and the server refuses the update, as it refuses
    // client-go's dynamic client's, which decodes those strings the same way.)
}
