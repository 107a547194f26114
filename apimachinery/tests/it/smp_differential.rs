//! Differential tests of strategic merge patches against the real apiserver, which applies them
//! (client-go's `StrategicMergeMapPatch` over the built-in types' struct tags) to built-in kinds.
//!
//! Applying: each hand-written patch (every directive, on every kind of merged list of a
//! Deployment, a Service and object metadata) goes to the server as a dry run and is applied
//! locally to the object the server held; the local result, sent back as a dry-run update so
//! that the server defaults it as it defaults its own, must equal the server's result.
//!
//! Creating: for random (original, modified) pairs of Deployments, the two-way patch goes to
//! an object created from `original`; the server's result must contain `modified` (what the
//! server adds being its defaults), and must again equal the local application.
//!
//! A patch the server refuses is not compared (the local code may apply what the server's
//! validation then rejects), but a patch the server applies must apply locally.

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{ConfigMap, Service};
use kclient_apimachinery::meta::{FieldMeta, PatchMeta};
use kclient_apimachinery::{PatchType, apply_strategic_merge_patch, create_two_way_merge_patch};
use kclient_rest::{Client, Request};
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Map, Value, json};

use crate::{configmaps, deployments};

fn services(req: Request, ns: &str) -> Request {
    req.group_version("", "v1")
        .namespace(ns)
        .resource("services")
}

/// The object a case patches.
#[derive(Clone, Copy)]
enum Kind {
    ConfigMap,
    Deployment,
    Service,
}

impl Kind {
    fn request(self, req: Request, ns: &str) -> Request {
        match self {
            Kind::ConfigMap => configmaps(req, ns),
            Kind::Deployment => deployments(req, ns),
            Kind::Service => services(req, ns),
        }
    }

    fn schema(self) -> &'static [FieldMeta] {
        match self {
            Kind::ConfigMap => ConfigMap::patch_fields(),
            Kind::Deployment => Deployment::patch_fields(),
            Kind::Service => Service::patch_fields(),
        }
    }
}

/// Removes every finalizer of the `kind` object `name`, so that the namespace can go.
async fn clear_finalizers(client: &Client, ns: &str, kind: Kind, name: &str) {
    let _: Value = kind
        .request(client.patch(PatchType::Merge), ns)
        .name(name)
        .json(&json!({"metadata": {"finalizers": null}}))
        .send()
        .await
        .unwrap();
}

/// What a patch did on the server and locally.
enum Outcome {
    /// Both applied it to the same object.
    Same(Value),
    /// The server refused it: not compared.
    ServerRefused(String),
}

/// The object without the fields that differ between two writes of the same content.
fn comparable(mut object: Value) -> Value {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        meta.remove("resourceVersion");
    }
    object
}

/// Sends `patch` to the object `name` as a dry run and applies it locally to the object the
/// server held; returns the server's result if both agree, or a description of how they
/// differ.
async fn differential(
    client: &Client,
    ns: &str,
    kind: Kind,
    name: &str,
    patch: &Value,
) -> Result<Outcome, String> {
    // The Deployment controller writes status and annotations meanwhile: a conflict on the
    // dry-run update means the object changed between reading and writing; read it again.
    for _ in 0..5 {
        let live: Value = kind
            .request(client.get(), ns)
            .name(name)
            .send()
            .await
            .map_err(|e| format!("get {name}: {e}"))?;
        let server = kind
            .request(client.patch(PatchType::StrategicMerge), ns)
            .name(name)
            .param("dryRun", "All")
            .json(patch)
            .send::<Value>()
            .await;
        let server = match server {
            Ok(server) => server,
            Err(e) => return Ok(Outcome::ServerRefused(e.to_string())),
        };
        let local = apply_strategic_merge_patch(&live, patch, kind.schema())
            .map_err(|e| format!("the server applies it, locally: {e}; server gives {server}"))?;
        let normalised = kind
            .request(client.put(), ns)
            .name(name)
            .param("dryRun", "All")
            .json(&local)
            .send::<Value>()
            .await;
        let normalised = match normalised {
            Ok(n) => n,
            Err(e) if e.is_conflict() => continue,
            Err(e) => {
                return Err(format!(
                    "the local result is refused by the server ({e}):\nlocal  {local}\nserver {server}"
                ));
            }
        };
        if server["metadata"]["resourceVersion"] != live["metadata"]["resourceVersion"] {
            // The server patched a newer object than the one read.
            continue;
        }
        let (server, normalised) = (comparable(server), comparable(normalised));
        if server != normalised {
            return Err(format!(
                "results differ:\nserver {server}\nlocal  {normalised}\n(local before defaulting {local})"
            ));
        }
        return Ok(Outcome::Same(server));
    }
    Err("the object kept changing".to_owned())
}

/// Runs every patch through [`differential`]; panics listing every disagreement. Returns
/// how many the server applied.
async fn check_all(client: &Client, ns: &str, kind: Kind, name: &str, patches: &[Value]) -> usize {
    let mut failures = Vec::new();
    let mut applied = 0;
    for patch in patches {
        match differential(client, ns, kind, name, patch).await {
            Ok(Outcome::Same(_)) => applied += 1,
            Ok(Outcome::ServerRefused(why)) => {
                eprintln!("server refused {patch}: {why}");
            }
            Err(why) => failures.push(format!("patch {patch}\n{why}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} patches disagree:\n\n{}",
        failures.len(),
        patches.len(),
        failures.join("\n\n")
    );
    applied
}

/// A Deployment with every kind of merged list of a pod template.
fn rich_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "smp",
            "labels": {"app": "smp", "tier": "web"},
            "annotations": {"note": "a"}
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "smp"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "smp"}},
                "spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1"}],
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "args": ["--a", "--b"],
                            "env": [
                                {"name": "A", "value": "1"},
                                {"name": "B", "value": "2"},
                                {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                            ],
                            "ports": [
                                {"containerPort": 80, "protocol": "TCP", "name": "http"},
                                {"containerPort": 53, "protocol": "UDP", "name": "dns"}
                            ],
                            "volumeMounts": [
                                {"name": "data", "mountPath": "/data"},
                                {"name": "conf", "mountPath": "/etc/conf", "readOnly": true}
                            ]
                        },
                        {"name": "sidecar", "image": "proxy:1", "env": [{"name": "X", "value": "x"}]}
                    ],
                    "volumes": [
                        {"name": "data", "emptyDir": {}},
                        {"name": "conf", "configMap": {"name": "conf"}}
                    ],
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                    "imagePullSecrets": [{"name": "reg1"}, {"name": "reg2"}],
                    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a.local"]}],
                    "nodeSelector": {"disk": "ssd"},
                    "securityContext": {"runAsUser": 1000, "runAsNonRoot": true}
                }
            }
        }
    })
}

fn pod_spec(patch: Value) -> Value {
    json!({"spec": {"template": {"spec": patch}}})
}

/// Hand-written patches with every directive, on the rich Deployment.
fn deployment_patches() -> Vec<Value> {
    vec![
        // Plain changes of a merged item, with and without $setElementOrder.
        pod_spec(json!({"containers": [{"name": "app", "image": "app:2"}]})),
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "app", "image": "app:2"}]
        })),
        // Reordering only.
        pod_spec(json!({"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]})),
        pod_spec(json!({"$setElementOrder/volumes": [{"name": "conf"}, {"name": "data"}]})),
        // An order that names only some items, or items that do not exist.
        pod_spec(json!({"$setElementOrder/containers": [{"name": "sidecar"}]})),
        pod_spec(json!({"$setElementOrder/containers": [{"name": "ghost"}, {"name": "sidecar"}]})),
        // A new item, placed by the order or not.
        pod_spec(json!({"containers": [{"name": "new", "image": "new:1"}]})),
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "app"}, {"name": "new"}, {"name": "sidecar"}],
            "containers": [{"name": "new", "image": "new:1"}]
        })),
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "new"}, {"name": "sidecar"}, {"name": "app"}],
            "containers": [{"name": "new", "image": "new:1"}, {"name": "app", "image": "app:3"}]
        })),
        // Deleting items.
        pod_spec(json!({"containers": [{"name": "sidecar", "$patch": "delete"}]})),
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "app"}],
            "containers": [{"name": "sidecar", "$patch": "delete"}]
        })),
        pod_spec(json!({"containers": [{"name": "ghost", "$patch": "delete"}]})),
        // Replacing the whole list.
        pod_spec(
            json!({"containers": [{"name": "only", "image": "only:1"}, {"$patch": "replace"}]}),
        ),
        pod_spec(
            json!({"containers": [{"$patch": "replace"}, {"name": "only", "image": "only:1"}]}),
        ),
        // Nested merged lists: env, ports, volumeMounts.
        pod_spec(
            json!({"containers": [{"name": "app", "env": [{"name": "B", "value": "22"}, {"name": "D", "value": "4"}]}]}),
        ),
        pod_spec(json!({"containers": [{"name": "app",
            "$setElementOrder/env": [{"name": "D"}, {"name": "C"}, {"name": "A"}, {"name": "B"}],
            "env": [{"name": "D", "value": "4"}]}]})),
        pod_spec(
            json!({"containers": [{"name": "app", "env": [{"name": "A", "$patch": "delete"}, {"name": "C", "value": "3"}]}]}),
        ),
        pod_spec(
            json!({"containers": [{"name": "app", "env": [{"name": "C", "value": "3", "valueFrom": null}]}]}),
        ),
        pod_spec(json!({"containers": [{"name": "app", "env": [{"$patch": "replace"}]}]})),
        pod_spec(json!({"containers": [{"name": "app", "env": null}]})),
        pod_spec(
            json!({"containers": [{"name": "app", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]}),
        ),
        // Ports are merged by containerPort alone: a UDP port 80 merges into the TCP one.
        pod_spec(
            json!({"containers": [{"name": "app", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]}),
        ),
        pod_spec(
            json!({"containers": [{"name": "app", "ports": [{"containerPort": 53, "$patch": "delete"}]}]}),
        ),
        pod_spec(json!({"containers": [{"name": "app",
            "$setElementOrder/ports": [{"containerPort": 53}, {"containerPort": 80}]}]})),
        pod_spec(
            json!({"containers": [{"name": "app", "volumeMounts": [{"mountPath": "/data", "$patch": "delete"}]}]}),
        ),
        pod_spec(
            json!({"containers": [{"name": "app", "volumeMounts": [{"mountPath": "/data", "name": "conf"}]}]}),
        ),
        // kubectl apply after replacing env B with D, where the server also has C (which
        // the last-applied configuration never had): the server orders by its list as the
        // deletion and the addition left it in place (Go slice aliasing), C before D.
        pod_spec(json!({"containers": [{"name": "app",
            "$setElementOrder/env": [{"name": "A"}, {"name": "D"}],
            "env": [{"name": "D", "value": "4"}, {"name": "B", "$patch": "delete"}]}]})),
        pod_spec(json!({
            "$setElementOrder/imagePullSecrets": [{"name": "reg2"}, {"name": "reg3"}],
            "imagePullSecrets": [{"name": "reg3"}, {"name": "reg1", "$patch": "delete"}]
        })),
        // A nested item patched in a list with an order for both levels.
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
            "containers": [{"name": "app",
                "$setElementOrder/env": [{"name": "C"}, {"name": "B"}, {"name": "A"}],
                "env": [{"name": "B", "value": "b"}]}]
        })),
        // Volumes: merged by name with retainKeys.
        pod_spec(
            json!({"volumes": [{"name": "conf", "$retainKeys": ["name", "secret"], "secret": {"secretName": "s"}}]}),
        ),
        pod_spec(json!({"volumes": [{"name": "conf", "secret": {"secretName": "s"}}]})),
        pod_spec(
            json!({"volumes": [{"name": "data", "$retainKeys": ["name", "emptyDir"], "emptyDir": {"medium": "Memory"}}]}),
        ),
        pod_spec(
            json!({"volumes": [{"name": "extra", "$retainKeys": ["name", "emptyDir"], "emptyDir": {}}]}),
        ),
        pod_spec(
            json!({"volumes": [{"name": "conf", "configMap": {"name": "other", "$patch": "replace"}}]}),
        ),
        pod_spec(
            json!({"volumes": [{"name": "conf", "configMap": {"$patch": "delete"}, "secret": {"secretName": "s"}}]}),
        ),
        // Lists without a strategy are replaced.
        pod_spec(json!({"tolerations": [{"key": "other", "operator": "Exists"}]})),
        pod_spec(json!({"containers": [{"name": "app", "args": ["--c"]}]})),
        pod_spec(
            json!({"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b.local"]}, {"ip": "10.0.0.2", "hostnames": ["c.local"]}]}),
        ),
        pod_spec(
            json!({"imagePullSecrets": [{"name": "reg3"}, {"name": "reg1", "$patch": "delete"}]}),
        ),
        pod_spec(
            json!({"$setElementOrder/imagePullSecrets": [{"name": "reg2"}, {"name": "reg3"}, {"name": "reg1"}],
            "imagePullSecrets": [{"name": "reg3"}]}),
        ),
        // Maps: nulls, replace and delete directives.
        pod_spec(json!({"nodeSelector": {"disk": null, "zone": "a"}})),
        pod_spec(json!({"nodeSelector": {"$patch": "replace", "zone": "a"}})),
        pod_spec(json!({"securityContext": {"$patch": "replace", "runAsGroup": 5}})),
        pod_spec(json!({"securityContext": {"$patch": "delete"}})),
        pod_spec(json!({"securityContext": {"runAsUser": null, "fsGroup": 7}})),
        pod_spec(json!({"securityContext": null})),
        // New values carrying nulls and directives.
        pod_spec(
            json!({"dnsConfig": {"nameservers": ["1.1.1.1"], "searches": null, "options": [{"name": "ndots", "value": "2"}]}}),
        ),
        pod_spec(
            json!({"containers": [{"name": "new", "image": "n:1", "env": [{"name": "Z", "value": null}], "resources": null}]}),
        ),
        pod_spec(
            json!({"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": null}}}]}),
        ),
        // Deployment strategy: retainKeys.
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": null}}}),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        json!({"spec": {"strategy": {"$retainKeys": ["rollingUpdate", "type"], "rollingUpdate": {"maxSurge": 2}}}}),
        json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": null}}}}),
        // Metadata: labels, annotations, finalizers (merged scalars), ownerReferences.
        json!({"metadata": {"labels": {"tier": null, "new": "1"}, "annotations": {"note": null}}}),
        json!({"metadata": {"finalizers": ["example.com/b", "example.com/a"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["example.com/a", "example.com/c"],
            "finalizers": ["example.com/c"]}}),
        json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}]}}),
        // Types that do not match the original.
        pod_spec(json!({"nodeSelector": "flat"})),
        pod_spec(json!({"containers": {"name": "app"}})),
        // Bad directives.
        pod_spec(json!({"containers": [{"name": "app", "$patch": "merge"}]})),
        pod_spec(json!({"securityContext": {"$patch": "explode"}})),
        pod_spec(
            json!({"volumes": [{"name": "conf", "$retainKeys": ["name"], "secret": {"secretName": "s"}}]}),
        ),
        pod_spec(
            json!({"$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "sidecar", "image": "p:2"}, {"name": "app", "image": "a:2"}]}),
        ),
        pod_spec(json!({"containers": [{"image": "nameless"}]})),
    ]
}

#[tokio::test]
async fn applied_patches_match_the_server_on_a_deployment() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let _: Value = deployments(client.post(), ns.name())
        .json(&rich_deployment())
        .send()
        .await
        .unwrap();
    let patches = deployment_patches();
    let applied = check_all(&client, ns.name(), Kind::Deployment, "smp", &patches).await;
    assert!(applied * 4 > patches.len() * 3, "only {applied} applied");
}

#[tokio::test]
async fn applied_patches_match_the_server_on_a_service() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let service = json!({
        "metadata": {"name": "smp", "finalizers": ["example.com/a", "example.com/b"]},
        "spec": {
            "selector": {"app": "smp"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                {"name": "dns", "port": 53, "protocol": "UDP"},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP"}
            ]
        }
    });
    let _: Value = services(client.post(), ns.name())
        .json(&service)
        .send()
        .await
        .unwrap();
    let patches = vec![
        json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}),
        json!({"spec": {"ports": [{"port": 443, "name": "https", "protocol": "TCP"}]}}),
        // Merged by port alone: both port-53 items are deleted, the first one patched.
        json!({"spec": {"ports": [{"port": 53, "$patch": "delete"}]}}),
        json!({"spec": {"ports": [{"port": 53, "protocol": "UDP", "name": "dns2"}]}}),
        json!({"spec": {"$setElementOrder/ports": [{"port": 53}, {"port": 80}]}}),
        json!({"spec": {"$setElementOrder/ports": [{"port": 53}, {"port": 53}, {"port": 80}]}}),
        json!({"spec": {"$setElementOrder/ports": [{"port": 443}, {"port": 80}, {"port": 53}],
            "ports": [{"port": 443, "name": "https"}]}}),
        json!({"spec": {"ports": [{"$patch": "replace"}, {"port": 81, "name": "x"}]}}),
        json!({"spec": {"ports": [{"port": 80, "name": "h", "targetPort": null}]}}),
        json!({"spec": {"selector": {"app": null, "other": "x"}}}),
        json!({"spec": {"selector": {"$patch": "replace", "only": "y"}}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"],
            "$setElementOrder/finalizers": ["example.com/b", "example.com/c"],
            "finalizers": ["example.com/c"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["example.com/b", "example.com/a"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["example.com/b"]}}),
        json!({"metadata": {"finalizers": ["example.com/c", "example.com/a"]}}),
        json!({"metadata": {"finalizers": null}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/x"]}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": []}}),
        json!({"metadata": {"$setElementOrder/finalizers": []}}),
    ];
    let applied = check_all(&client, ns.name(), Kind::Service, "smp", &patches).await;
    assert!(applied * 4 > patches.len() * 3, "only {applied} applied");

    // Let the namespace go.
    clear_finalizers(&client, ns.name(), Kind::Service, "smp").await;
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A random subset of `items` in a random order.
    fn subset<T: Clone>(&mut self, items: &[T]) -> Vec<T> {
        let mut out: Vec<T> = items.iter().filter(|_| self.chance(50)).cloned().collect();
        for i in (1..out.len()).rev() {
            let j = self.below(i + 1);
            out.swap(i, j);
        }
        out
    }
}

fn insert_list(map: &mut Map<String, Value>, key: &str, items: Vec<Value>) {
    if !items.is_empty() {
        map.insert(key.to_owned(), Value::Array(items));
    }
}

fn random_container(rng: &mut Rng, name: &str, volumes: &[String]) -> Value {
    let mut c = Map::new();
    c.insert("name".into(), json!(name));
    c.insert(
        "image".into(),
        json!(format!("{name}:{}", rng.pick(&["1", "2"]))),
    );
    if rng.chance(40) {
        let args = rng.subset(&["--a", "--b", "--c"]);
        insert_list(&mut c, "args", args.into_iter().map(Value::from).collect());
    }
    let env = rng
        .subset(&["A", "B", "C", "D"])
        .into_iter()
        .map(|n| {
            if rng.chance(20) {
                json!({"name": n, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
            } else {
                json!({"name": n, "value": *rng.pick(&["1", "2"])})
            }
        })
        .collect();
    insert_list(&mut c, "env", env);
    let ports = rng
        .subset(&[80, 443, 8080])
        .into_iter()
        .map(|p| {
            let mut port = json!({"containerPort": p});
            if rng.chance(50) {
                port["protocol"] = json!(rng.pick(&["TCP", "UDP"]));
            }
            port
        })
        .collect();
    insert_list(&mut c, "ports", ports);
    let mounts = rng
        .subset(volumes)
        .into_iter()
        .map(|v| {
            let mut m = json!({"name": v, "mountPath": format!("/mnt/{v}")});
            if rng.chance(30) {
                m["readOnly"] = json!(true);
            }
            m
        })
        .collect();
    insert_list(&mut c, "volumeMounts", mounts);
    if rng.chance(30) {
        c.insert(
            "resources".into(),
            json!({"limits": {"cpu": *rng.pick(&["1", "2"])}}),
        );
    }
    Value::Object(c)
}

fn random_deployment(rng: &mut Rng, name: &str) -> Value {
    let mut labels = Map::new();
    labels.insert("app".into(), json!("gen"));
    for l in rng.subset(&["l1", "l2"]) {
        labels.insert(l.into(), json!(*rng.pick(&["x", "y"])));
    }
    let mut metadata = json!({"name": name, "labels": labels});
    if rng.chance(30) {
        metadata["annotations"] = json!({"a": *rng.pick(&["1", "2"])});
    }
    let finalizers = rng.subset(&["example.com/a", "example.com/b", "example.com/c"]);
    if !finalizers.is_empty() {
        metadata["finalizers"] = json!(finalizers);
    }

    let volumes: Vec<(String, Value)> = rng
        .subset(&["v1", "v2", "v3"])
        .into_iter()
        .map(|v| {
            let source = match rng.below(3) {
                0 => json!({"name": v, "emptyDir": {}}),
                1 => json!({"name": v, "configMap": {"name": *rng.pick(&["c1", "c2"])}}),
                _ => json!({"name": v, "secret": {"secretName": *rng.pick(&["s1", "s2"])}}),
            };
            (v.to_owned(), source)
        })
        .collect();
    let volume_names: Vec<String> = volumes.iter().map(|(n, _)| n.clone()).collect();
    let mut spec = Map::new();
    let mut names = rng.subset(&["c1", "c2", "c3"]);
    if names.is_empty() {
        names.push(*rng.pick(&["c1", "c2", "c3"]));
    }
    let containers = names
        .into_iter()
        .map(|n| random_container(rng, n, &volume_names))
        .collect();
    insert_list(&mut spec, "containers", containers);
    let inits = rng
        .subset(&["i1", "i2"])
        .into_iter()
        .map(|n| random_container(rng, n, &volume_names))
        .collect();
    insert_list(&mut spec, "initContainers", inits);
    insert_list(
        &mut spec,
        "volumes",
        volumes.into_iter().map(|(_, v)| v).collect(),
    );
    let secrets = rng
        .subset(&["r1", "r2", "r3"])
        .into_iter()
        .map(|n| json!({"name": n}))
        .collect();
    insert_list(&mut spec, "imagePullSecrets", secrets);
    let aliases = rng
        .subset(&["10.0.0.1", "10.0.0.2"])
        .into_iter()
        .map(|ip| {
            let mut hostnames = rng.subset(&["a", "b"]);
            if hostnames.is_empty() {
                hostnames.push("c");
            }
            json!({"ip": ip, "hostnames": hostnames})
        })
        .collect();
    insert_list(&mut spec, "hostAliases", aliases);
    if rng.chance(40) {
        let tolerations = rng
            .subset(&["k1", "k2"])
            .into_iter()
            .map(|k| json!({"key": k, "operator": "Exists"}))
            .collect();
        insert_list(&mut spec, "tolerations", tolerations);
    }
    if rng.chance(40) {
        let mut selector = Map::new();
        for k in rng.subset(&["disk", "zone"]) {
            selector.insert(k.into(), json!(*rng.pick(&["a", "b"])));
        }
        if !selector.is_empty() {
            spec.insert("nodeSelector".into(), Value::Object(selector));
        }
    }
    if rng.chance(40) {
        spec.insert(
            "securityContext".into(),
            json!({"runAsUser": *rng.pick(&[1000, 2000])}),
        );
    }

    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "gen"}},
            "template": {"metadata": {"labels": {"app": "gen"}}, "spec": spec}
        }
    });
    match rng.below(4) {
        0 => deployment["spec"]["strategy"] = json!({"type": "Recreate"}),
        1 => {
            deployment["spec"]["strategy"] =
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": *rng.pick(&[1, 2])}})
        }
        2 => deployment["spec"]["strategy"] = json!({"type": "RollingUpdate"}),
        _ => {}
    }
    deployment
}

/// Every value of `expected` is in `actual` at the same place, and lists have the same
/// length (the server adds only its defaults).
fn contained(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let Some(av) = a.get(k) else {
                    return Err(format!("{path}.{k} is {v} but absent"));
                };
                contained(v, av, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!("{path}: expected {expected}, got {actual}"));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                contained(ev, av, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

#[tokio::test]
async fn created_patches_give_the_modified_deployment_on_the_server() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let schema = Deployment::patch_fields();
    let mut rng = Rng(0x5eed);
    let mut failures = Vec::new();
    let mut compared = 0;
    let pairs = 40;
    for i in 0..pairs {
        let name = format!("gen-{i}");
        let original = random_deployment(&mut rng, &name);
        let modified = random_deployment(&mut rng, &name);
        let created: Result<Value, _> = deployments(client.post(), ns.name())
            .json(&original)
            .send()
            .await;
        if let Err(e) = created {
            // The generator made something the server does not validate.
            eprintln!("create refused {original}: {e}");
            continue;
        }
        let patch = match create_two_way_merge_patch(&original, &modified, schema) {
            Ok(patch) => patch,
            Err(e) => {
                failures.push(format!("{original} -> {modified}: {e}"));
                continue;
            }
        };
        match differential(&client, ns.name(), Kind::Deployment, &name, &patch).await {
            Ok(Outcome::Same(server)) => {
                compared += 1;
                let checks = [
                    contained(&modified["spec"], &server["spec"], "spec"),
                    contained(
                        &modified["metadata"]["finalizers"],
                        &server["metadata"]["finalizers"],
                        "finalizers",
                    ),
                ];
                for check in checks {
                    if let Err(why) = check {
                        failures.push(format!(
                            "original {original}\nmodified {modified}\npatch {patch}\n{why}"
                        ));
                    }
                }
                if modified["metadata"]["labels"] != server["metadata"]["labels"] {
                    failures.push(format!(
                        "labels: patch {patch} gives {}",
                        server["metadata"]["labels"]
                    ));
                }
            }
            Ok(Outcome::ServerRefused(why)) => {
                eprintln!("server refused {patch}: {why}");
            }
            Err(why) => failures.push(format!(
                "original {original}\nmodified {modified}\npatch {patch}\n{why}"
            )),
        }
        // Let the namespace go.
        clear_finalizers(&client, ns.name(), Kind::Deployment, &name).await;
    }
    assert!(
        failures.is_empty(),
        "{} of {pairs} pairs disagree:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(compared * 2 > pairs, "only {compared} of {pairs} compared");
}

/// A random strategic merge patch of a merged list of objects `list` keyed by `key` with
/// keys from `keys`: an order directive, changed, new and deleted items, sometimes a replace
/// directive or a null.
fn random_object_list_patch(
    rng: &mut Rng,
    patch: &mut Map<String, Value>,
    list: &str,
    key: &str,
    keys: &[Value],
    item: &dyn Fn(&mut Rng, &Value) -> Value,
) {
    if rng.chance(50) {
        let order = rng
            .subset(keys)
            .into_iter()
            .map(|k| json!({key: k}))
            .collect();
        patch.insert(format!("$setElementOrder/{list}"), Value::Array(order));
    }
    if rng.chance(5) {
        patch.insert(list.to_owned(), Value::Null);
        return;
    }
    if rng.chance(70) {
        let mut items: Vec<Value> = rng
            .subset(keys)
            .into_iter()
            .map(|k| {
                if rng.chance(25) {
                    json!({key: k, "$patch": "delete"})
                } else {
                    item(rng, &k)
                }
            })
            .collect();
        if rng.chance(8) {
            let at = rng.below(items.len() + 1);
            items.insert(at, json!({"$patch": "replace"}));
        }
        patch.insert(list.to_owned(), Value::Array(items));
    }
}

/// A random patch of a merged list of scalars.
fn random_scalar_list_patch(
    rng: &mut Rng,
    patch: &mut Map<String, Value>,
    list: &str,
    values: &[Value],
) {
    if rng.chance(50) {
        patch.insert(
            format!("$setElementOrder/{list}"),
            Value::Array(rng.subset(values)),
        );
    }
    if rng.chance(50) {
        patch.insert(list.to_owned(), Value::Array(rng.subset(values)));
    }
    if rng.chance(40) {
        // Not a value the patch also adds: the server applies the two lists in the order of
        // Go's map iteration, which is random.
        let added = patch.get(list).cloned().unwrap_or_default();
        let deleted = rng
            .subset(values)
            .into_iter()
            .filter(|v| !added.as_array().is_some_and(|a| a.contains(v)))
            .collect();
        patch.insert(
            format!("$deleteFromPrimitiveList/{list}"),
            Value::Array(deleted),
        );
    }
}

fn env_item(rng: &mut Rng, name: &Value) -> Value {
    match rng.below(3) {
        0 => json!({"name": name, "value": *rng.pick(&["p", "q"])}),
        1 => json!({"name": name}),
        _ => json!({"name": name, "value": *rng.pick(&["p", "q"]), "valueFrom": null}),
    }
}

/// Random patches with every directive, applied to Deployments whose merged lists have items
/// the patches do not name (server-only items), in various orders, and duplicates.
#[tokio::test]
async fn random_directive_patches_match_the_server() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let lives = [
        (
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}]),
            json!([{"name": "r1"}, {"name": "r2"}]),
            json!(["example.com/a", "example.com/b"]),
        ),
        (
            json!([{"name": "D", "value": "4"}, {"name": "B", "value": "2"}, {"name": "X", "value": "x"}, {"name": "A", "value": "1"}]),
            json!([{"name": "r3"}, {"name": "r1"}, {"name": "r4"}]),
            json!(["example.com/c", "example.com/x", "example.com/a"]),
        ),
        (
            // Duplicate names: the server warns but keeps them.
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "A", "value": "3"}]),
            json!([{"name": "r2"}]),
            json!(["example.com/b"]),
        ),
    ];
    for (i, (env_list, secrets, finalizers)) in lives.iter().enumerate() {
        let mut deployment = rich_deployment();
        deployment["metadata"]["name"] = json!(format!("live-{i}"));
        deployment["metadata"]["finalizers"] = finalizers.clone();
        let pod = &mut deployment["spec"]["template"]["spec"];
        pod["containers"][0]["env"] = env_list.clone();
        pod["imagePullSecrets"] = secrets.clone();
        let _: Value = deployments(client.post(), ns.name())
            .json(&deployment)
            .send()
            .await
            .unwrap();
    }

    let names: Vec<Value> = ["A", "B", "C", "D", "E"].iter().map(|n| json!(n)).collect();
    let secrets: Vec<Value> = ["r1", "r2", "r3", "r4"].iter().map(|n| json!(n)).collect();
    let finalizers: Vec<Value> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| json!(format!("example.com/{n}")))
        .collect();
    let mut rng = Rng(0xd1ff);
    let mut failures = Vec::new();
    let mut applied = 0;
    let rounds = 150;
    for round in 0..rounds {
        let mut app = Map::new();
        app.insert("name".into(), json!("app"));
        random_object_list_patch(&mut rng, &mut app, "env", "name", &names, &env_item);
        let mut pod = Map::new();
        pod.insert("containers".into(), json!([app]));
        random_object_list_patch(
            &mut rng,
            &mut pod,
            "imagePullSecrets",
            "name",
            &secrets,
            &|_, k| json!({"name": k}),
        );
        let mut metadata = Map::new();
        random_scalar_list_patch(&mut rng, &mut metadata, "finalizers", &finalizers);
        let patch = json!({"metadata": metadata, "spec": {"template": {"spec": pod}}});
        let name = format!("live-{}", round % lives.len());
        match differential(&client, ns.name(), Kind::Deployment, &name, &patch).await {
            Ok(Outcome::Same(_)) => applied += 1,
            Ok(Outcome::ServerRefused(why)) => eprintln!("server refused {patch}: {why}"),
            Err(why) => failures.push(format!("{name}: patch {patch}\n{why}")),
        }
    }
    for i in 0..lives.len() {
        clear_finalizers(&client, ns.name(), Kind::Deployment, &format!("live-{i}")).await;
    }
    assert!(
        failures.is_empty(),
        "{} of {rounds} patches disagree:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(applied * 3 > rounds, "only {applied} of {rounds} applied");
}

/// A `$setElementOrder` that leaves out the items its list adds (here an empty one) orders
/// them by client-go's `less`, which is not an order for items it cannot find: where they land
/// is up to Go's stable sort, insertion sort for up to 20 items and merges beyond.
#[tokio::test]
async fn orders_missing_added_items_as_the_server_does() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let finalizer = |i: usize| json!(format!("example.com/f{i:02}"));
    for (name, count) in [("few", 3), ("many", 45)] {
        let finalizers: Vec<Value> = (0..count).map(finalizer).collect();
        let _: Value = configmaps(client.post(), ns.name())
            .json(&json!({"metadata": {"name": name, "finalizers": finalizers}}))
            .send()
            .await
            .unwrap();
        let added = |from: usize, n: usize| -> Value { (from..from + n).map(finalizer).collect() };
        let patches = [
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": added(90, 1)}}),
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": added(90, 3)}}),
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": added(70, 30)}}),
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers":
                [finalizer(95), finalizer(1), finalizer(80), finalizer(2)]}}),
        ];
        check_all(&client, ns.name(), Kind::ConfigMap, name, &patches).await;
        clear_finalizers(&client, ns.name(), Kind::ConfigMap, name).await;
    }

    // The same for a list of objects: env variables of a container.
    let mut deployment = rich_deployment();
    let env_list: Vec<Value> = (0..30)
        .map(|i| json!({"name": format!("V{i:02}"), "value": "1"}))
        .collect();
    deployment["spec"]["template"]["spec"]["containers"][0]["env"] = json!(env_list);
    let _: Value = deployments(client.post(), ns.name())
        .json(&deployment)
        .send()
        .await
        .unwrap();
    let added = |names: &[&str]| -> Value {
        names
            .iter()
            .map(|n| json!({"name": n, "value": "2"}))
            .collect()
    };
    let patches = [
        pod_spec(json!({"containers": [{"name": "app",
            "$setElementOrder/env": [], "env": added(&["N1", "N2"])}]})),
        pod_spec(json!({"containers": [{"name": "app",
            "$setElementOrder/env": [], "env": added(&["N1", "V03", "N2", "V28"])}]})),
        pod_spec(json!({"$setElementOrder/imagePullSecrets": [],
            "imagePullSecrets": [{"name": "reg9"}, {"name": "reg8"}]})),
    ];
    check_all(&client, ns.name(), Kind::Deployment, "smp", &patches).await;
}
