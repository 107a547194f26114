//! Costs of the hot paths of kclient-apimachinery: decoding a watch event line (one pass into a
//! typed Pod, against decoding through `serde_json::Value`, into `Unstructured`, and leaving the
//! object raw), parsing and matching a label selector, and creating and applying the seed
//! Deployment's two-way strategic merge patch.
//!
//! Run: `cargo bench -p kclient-apimachinery --bench machinery` (a plain binary,
//! `harness = false`). Each figure is the best of a few runs, to damp the noise of a shared
//! machine.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::Pod;
use kclient_apimachinery::meta::PatchMeta;
use kclient_apimachinery::{
    RawWatchEvent, Selector, Unstructured, WatchEvent, apply_strategic_merge_patch,
    create_two_way_merge_patch, decode_json,
};
use serde_json::{Value, json};

const RUNS: usize = 5;

/// The best time per iteration over `RUNS` runs of `iters` iterations.
fn best(iters: u32, mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed() / iters
        })
        .min()
        .unwrap_or_default()
}

/// A Deployment-made Pod of about 4 KB with managedFields, as watches deliver them.
fn pod_event() -> String {
    let containers: Vec<Value> = (0..2)
        .map(|i| {
            json!({
                "name": format!("c{i}"),
                "image": format!("registry.example.com/team/app-{i}:v1.2.3"),
                "ports": [{"containerPort": 8080 + i, "protocol": "TCP", "name": "http"}],
                "env": [{"name": "MODE", "value": "production"}, {"name": "REGION", "value": "eu-west-1"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            })
        })
        .collect();
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-7d9c8b6f5-x2k4p",
            "generateName": "web-7d9c8b6f5-",
            "namespace": "production",
            "uid": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
            "resourceVersion": "123456789",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7d9c8b6f5", "tier": "front"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c8b6f5",
                "uid": "1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809", "controller": true, "blockOwnerDeletion": true
            }],
            "managedFields": [{
                "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                             "f:spec": {"f:containers": {"k:{\"name\":\"c0\"}": {".": {}, "f:image": {}}}}}
            }]
        },
        "spec": {
            "containers": containers,
            "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "nodeName": "node-17",
            "serviceAccountName": "default",
            "schedulerName": "default-scheduler",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:10Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
            "hostIP": "10.0.0.17",
            "podIP": "10.244.3.21",
            "startTime": "2026-01-01T00:00:00Z",
            "qosClass": "Burstable"
        }
    });
    // The API server writes `type` before `object`; `json!` would sort the keys.
    format!(r#"{{"type":"MODIFIED","object":{pod}}}"#)
}

fn seed_deployment(image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": image, "ports": [{"containerPort": 80}]}]}
            }
        }
    })
}

fn report(what: &str, per_op: Duration, bytes: Option<usize>) {
    let ns = per_op.as_nanos();
    match bytes {
        Some(b) => {
            let mb_s = b as f64 / per_op.as_secs_f64() / 1e6;
            println!("{what:<58} {ns:>9} ns/op  {mb_s:>7.0} MB/s");
        }
        None => println!("{what:<58} {ns:>9} ns/op"),
    }
}

fn main() {
    let line = pod_event();
    let n = line.len();
    println!("watch event line: {n} bytes");
    // Every decode measured below succeeds; they decode as the clients do (`decode_json`).
    decode_json::<WatchEvent<Pod>>(line.as_bytes()).expect("the Pod event decodes");
    decode_json::<WatchEvent<Unstructured>>(line.as_bytes()).expect("the event decodes");
    decode_json::<RawWatchEvent>(line.as_bytes()).expect("the raw event decodes");
    report(
        "WatchEvent<Pod> (one pass)",
        best(2_000, || {
            black_box(decode_json::<WatchEvent<Pod>>(black_box(line.as_bytes())).ok());
        }),
        Some(n),
    );
    let object_first = format!(
        r#"{{"object":{},"type":"MODIFIED"}}"#,
        &line[r#"{"type":"MODIFIED","object":"#.len()..line.len() - 1]
    );
    decode_json::<WatchEvent<Pod>>(object_first.as_bytes()).expect("object-first decodes");
    report(
        "WatchEvent<Pod> with `object` before `type` (buffered)",
        best(2_000, || {
            black_box(decode_json::<WatchEvent<Pod>>(black_box(object_first.as_bytes())).ok());
        }),
        Some(n),
    );
    report(
        "WatchEvent<Pod> through serde_json::Value",
        best(2_000, || {
            let v: Value = serde_json::from_str(black_box(&line)).unwrap_or_default();
            black_box(serde_json::from_value::<WatchEvent<Pod>>(v).ok());
        }),
        Some(n),
    );
    report(
        "WatchEvent<Unstructured>",
        best(2_000, || {
            black_box(decode_json::<WatchEvent<Unstructured>>(black_box(line.as_bytes())).ok());
        }),
        Some(n),
    );
    report(
        "RawWatchEvent (object left raw)",
        best(2_000, || {
            black_box(decode_json::<RawWatchEvent>(black_box(line.as_bytes())).ok());
        }),
        Some(n),
    );

    let selector_text = "app=web,tier in (front,back),!canary,env!=dev";
    report(
        "Selector::parse (4 requirements)",
        best(20_000, || {
            black_box(Selector::parse(black_box(selector_text)).ok());
        }),
        None,
    );
    let selector = Selector::parse(selector_text).unwrap_or_default();
    let labels: BTreeMap<String, String> = (0..8)
        .map(|i| (format!("label-{i}"), format!("value-{i}")))
        .chain([
            ("app".to_owned(), "web".to_owned()),
            ("tier".to_owned(), "front".to_owned()),
        ])
        .collect();
    report(
        "Selector::matches (10 labels, matching)",
        best(200_000, || {
            black_box(selector.matches(black_box(&labels)));
        }),
        None,
    );

    let original = seed_deployment("nginx:1.7.9");
    let modified = seed_deployment("nginx:1.21.6");
    let schema = Deployment::patch_fields();
    report(
        "create_two_way_merge_patch (seed Deployment image)",
        best(5_000, || {
            black_box(
                create_two_way_merge_patch(black_box(&original), black_box(&modified), schema).ok(),
            );
        }),
        None,
    );
    let patch = create_two_way_merge_patch(&original, &modified, schema).unwrap_or_default();
    report(
        "apply_strategic_merge_patch (seed Deployment image)",
        best(5_000, || {
            black_box(
                apply_strategic_merge_patch(black_box(&original), black_box(&patch), schema).ok(),
            );
        }),
        None,
    );
}
