//! serde_yaml_ng against serde-saphyr on what kclient parses as YAML: kubeconfigs and
//! multi-document manifests. The measurement behind ARCHITECTURE.md's choice of YAML parser.
//!
//!     cargo bench -p kclient-rest --bench yaml_parsers
//!
//! For each input and parser: the median and range of 15 rounds (each round parses the input
//! enough times to take about 100 ms), interleaved so that a noisy neighbour hits both alike,
//! and whether the pathological input (deeply nested flow sequences, which fuzzing found slow
//! in serde_yaml_ng) is refused or parsed, and how long that took.

use std::hint::black_box;
use std::time::{Duration, Instant};

use kclient_rest::Kubeconfig;

/// A kubeconfig of three clusters, users and contexts, with certificate and key data inline
/// (about 15 KB), as a cloud provider's CLI writes them.
fn kubeconfig() -> String {
    let blob = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM".repeat(36);
    let mut text = String::from(
        "apiVersion: v1\nkind: Config\npreferences: {}\ncurrent-context: ctx-0\nclusters:\n",
    );
    for i in 0..3 {
        text += &format!(
            "- name: cluster-{i}\n  cluster:\n    server: https://10.0.{i}.1:6443\n    certificate-authority-data: {blob}\n"
        );
    }
    text += "users:\n";
    for i in 0..3 {
        text += &format!(
            "- name: user-{i}\n  user:\n    client-certificate-data: {blob}\n    client-key-data: {blob}\n"
        );
    }
    text += "contexts:\n";
    for i in 0..3 {
        text += &format!(
            "- name: ctx-{i}\n  context:\n    cluster: cluster-{i}\n    user: user-{i}\n    namespace: team-{i}\n"
        );
    }
    text
}

/// 200 documents alternating a Deployment and a Service (about 105 KB), as `kubectl apply -f`
/// reads them.
fn manifests() -> String {
    let mut text = String::new();
    for i in 0..100 {
        text += &format!(
            r#"---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: shop
  labels:
    app: web-{i}
    tier: frontend
  annotations:
    description: "the storefront, replica set {i}"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web-{i}
  template:
    metadata:
      labels:
        app: web-{i}
    spec:
      containers:
      - name: web
        image: registry.example.com/shop/web:1.{i}.0
        args: ["--port=8080", "--log-level=info"]
        ports:
        - containerPort: 8080
          name: http
        env:
        - name: MODE
          value: production
        - name: REPLICA
          value: "{i}"
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: 5
---
apiVersion: v1
kind: Service
metadata:
  name: web-{i}
  namespace: shop
spec:
  selector:
    app: web-{i}
  ports:
  - port: 80
    targetPort: http
"#
        );
    }
    text
}

/// Runs `f` `reps` times and answers the time per run.
fn time(reps: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed() / reps
}

/// How many runs of `f` take about 100 ms.
fn calibrate(mut f: impl FnMut()) -> u32 {
    let once = time(3, &mut f).max(Duration::from_micros(1));
    (Duration::from_millis(100).as_nanos() / once.as_nanos()).clamp(1, 100_000) as u32
}

fn report(what: &str, name: &str, samples: &mut [Duration]) {
    samples.sort();
    let median = samples[samples.len() / 2];
    println!(
        "| {what} | {name} | {:.1} | {:.1} - {:.1} |",
        median.as_secs_f64() * 1e6,
        samples[0].as_secs_f64() * 1e6,
        samples[samples.len() - 1].as_secs_f64() * 1e6
    );
}

fn compare(what: &str, mut ng: impl FnMut(), mut saphyr: impl FnMut()) {
    let reps = calibrate(&mut ng).min(calibrate(&mut saphyr));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        a.push(time(reps, &mut ng));
        b.push(time(reps, &mut saphyr));
    }
    report(what, "serde_yaml_ng 0.10", &mut a);
    report(what, "serde-saphyr 2.2", &mut b);
}

fn main() {
    let config = kubeconfig();
    let docs = manifests();
    println!(
        "kubeconfig {} bytes, manifests {} bytes in 200 documents\n",
        config.len(),
        docs.len()
    );
    println!("| input | parser | median us | range us |");
    println!("| --- | --- | --- | --- |");
    compare(
        "kubeconfig -> Kubeconfig",
        || {
            black_box(serde_yaml_ng::from_str::<Kubeconfig>(black_box(&config)).unwrap());
        },
        || {
            black_box(serde_saphyr::from_str::<Kubeconfig>(black_box(&config)).unwrap());
        },
    );
    compare(
        "manifests -> 200 serde_json::Value",
        || {
            let values: Vec<serde_json::Value> =
                serde_yaml_ng::Deserializer::from_str(black_box(&docs))
                    .map(|doc| serde::Deserialize::deserialize(doc).unwrap())
                    .collect();
            assert_eq!(values.len(), 200);
            black_box(values);
        },
        || {
            let values: Vec<serde_json::Value> =
                serde_saphyr::from_multiple(black_box(&docs)).unwrap();
            assert_eq!(values.len(), 200);
            black_box(values);
        },
    );
    // Deeply nested flow sequences: 64 KiB of `[`.
    let nested = "[".repeat(64 * 1024);
    let start = Instant::now();
    let ng = serde_yaml_ng::from_str::<serde_json::Value>(&nested);
    let ng_time = start.elapsed();
    let start = Instant::now();
    let saphyr = serde_saphyr::from_str::<serde_json::Value>(&nested);
    let saphyr_time = start.elapsed();
    println!("\n64 KiB of `[`:");
    for (name, result, took) in [
        (
            "serde_yaml_ng",
            ng.map(drop).map_err(|e| e.to_string()),
            ng_time,
        ),
        (
            "serde-saphyr",
            saphyr.map(drop).map_err(|e| e.to_string()),
            saphyr_time,
        ),
    ] {
        let outcome = match result {
            Ok(()) => "parsed".to_string(),
            Err(e) => format!("refused: {}", e.lines().next().unwrap_or("")),
        };
        println!("- {name}: {outcome} in {:.1} ms", took.as_secs_f64() * 1e3);
    }
}
