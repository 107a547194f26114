//! A CRD whose schema is made from the Rust type (`CustomResource::crd_from_type`, feature
//! `schema`), against the real kube-apiserver: the server takes it as structural, keeps every
//! field of an object created through `Api<T>` (pruning drops nothing), and enforces it
//! (objects of the wrong shape are refused).

use std::collections::{BTreeMap, BTreeSet};

use kclient_apimachinery::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kclient_apimachinery::meta::{
    ByteString, Duration, IntOrString, MicroTime, Quantity, RawJson, Time,
};
use kclient_apimachinery::{CreateOptions, GetOptions, Object, PatchOptions, UpdateOptions};
use kclient_clientset::schemars::JsonSchema;
use kclient_clientset::{Api, Clientset, CustomResource, Patch, custom_resource};
use kclient_testenv::{Identity, TestEnv};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::to_json;

/// A fleet of workers: every shape the schema rewrite handles.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Fleet {
    /// Standard object metadata: a doc comment here must not reach the schema, whose
    /// `metadata` the server takes only as `type: object`.
    metadata: ObjectMeta,
    spec: FleetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<FleetStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct FleetSpec {
    display_name: String,
    replica_count: i32,
    max_surge: IntOrString,
    memory: Quantity,
    paused_until: Option<Time>,
    /// Sent as `null` (no `skip_serializing_if`): the schema must say `nullable`.
    note: Option<String>,
    mode: Mode,
    strategy: Strategy,
    source: Source,
    #[serde(flatten)]
    placement: Placement,
    tags: BTreeMap<String, String>,
    ports: Vec<Port>,
    /// Anything: `x-kubernetes-preserve-unknown-fields`.
    extra: serde_json::Value,
    tuning: Tuning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Mode {
    Rolling,
    Recreate,
}

/// Externally tagged, with data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Strategy {
    Canary { steps: Vec<u32> },
    BlueGreen(BlueGreen),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct BlueGreen {
    preview_service: String,
}

/// Internally tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Source {
    Git {
        url: String,
        revision: Option<String>,
    },
    Image {
        reference: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Placement {
    region: String,
    zones: Vec<String>,
    /// A set: the server refuses a repeated item.
    pools: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Port {
    name: String,
    port: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Tuning {
    level: Level,
    cpu_limit: Option<Quantity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Level {
    value: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct FleetStatus {
    #[serde(default)]
    conditions: Vec<Condition>,
    observed_generation: Option<i64>,
    ready_replicas: i32,
}

custom_resource!(Fleet {
    group: "schema.kclient.example.com",
    version: "v1",
    kind: "Fleet",
    plural: "fleets",
    singular: "fleet",
    scope: Namespaced,
    status: true,
});

/// Installs `K`'s CRD made from its type, and checks that the server established it and found
/// its schema structural (no `NonStructuralSchema` condition).
pub(crate) async fn install_structural<K: CustomResource + JsonSchema>(
    env: &TestEnv,
    client: &kclient_rest::Client,
) {
    let crd = K::crd_from_type()
        .unwrap_or_else(|e| panic!("{}'s schema is not structural: {e}", K::KIND));
    env.install_crd(&crd)
        .await
        .unwrap_or_else(|e| panic!("the server refused {}'s CRD: {e}", K::KIND));
    let served = Clientset::new(client.clone())
        .apiextensions_v1()
        .custom_resource_definitions()
        .get(
            &format!("{}.{}", K::PLURAL, K::GROUP),
            &GetOptions::default(),
        )
        .await
        .unwrap();
    let conditions = to_json(&served)["status"]["conditions"].clone();
    let conditions = conditions.as_array().expect("the CRD has conditions");
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True"),
        "{conditions:#?}"
    );
    assert!(
        !conditions
            .iter()
            .any(|c| c["type"] == "NonStructuralSchema"),
        "the server finds the schema not structural: {conditions:#?}"
    );
}

/// Checks that the server refuses each merge patch of the object `name` as Invalid, with an
/// error naming its field.
pub(crate) async fn assert_refused<K: CustomResource + std::fmt::Debug>(
    api: &Api<K>,
    name: &str,
    refused: impl IntoIterator<Item = (serde_json::Value, &str)>,
) {
    for (patch, field) in refused {
        let err = api
            .patch(name, &Patch::Merge(patch.clone()), &PatchOptions::default())
            .await
            .expect_err(&format!("the server took {patch}"));
        assert!(err.is_invalid(), "{patch}: {err}");
        assert!(err.to_string().contains(field), "{patch}: {err}");
    }
}

fn fleet(name: &str) -> Fleet {
    let mut f = Fleet {
        metadata: ObjectMeta::default(),
        spec: FleetSpec {
            display_name: "Fleet A".into(),
            replica_count: 3,
            max_surge: IntOrString::String("25%".into()),
            memory: Quantity("1536Mi".into()),
            paused_until: Some(Time::from_unix_seconds(1_800_000_000)),
            note: None,
            mode: Mode::Recreate,
            strategy: Strategy::Canary {
                // A repeated item: a Vec is not a set.
                steps: vec![10, 10, 100],
            },
            source: Source::Git {
                url: "https://example.com/repo.git".into(),
                revision: Some("main".into()),
            },
            placement: Placement {
                region: "eu-west".into(),
                zones: vec!["a".into(), "b".into(), "a".into()],
                pools: BTreeSet::from(["gpu".into(), "spot".into()]),
            },
            tags: BTreeMap::from([("team".into(), "infra".into())]),
            ports: vec![Port {
                name: "http".into(),
                port: 8080,
            }],
            extra: json!({"free": {"form": [1, "two", null, {"three": 3.5}]}}),
            tuning: Tuning {
                level: Level { value: 7 },
                cpu_limit: Some(Quantity("500m".into())),
            },
        },
        status: None,
    };
    f.set_name(name);
    f
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crd_made_from_the_type_is_structural_keeps_and_enforces_its_fields() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);

    install_structural::<Fleet>(&env, &client).await;

    // Every field survives the server's pruning, through create, get and the status.
    let fleets: Api<Fleet> = Api::namespaced(client.clone(), ns.name());
    let want = fleet("fleet-a");
    let created = fleets
        .create(&want, &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(created.spec, want.spec);
    let got = fleets.get("fleet-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.spec, want.spec);
    let raw = to_json(&got);
    assert!(raw["spec"]["note"].is_null());
    assert_eq!(raw["spec"]["region"], "eu-west", "flattened onto spec");

    let status = FleetStatus {
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "AllWorkersUp".into(),
            message: "3 of 3 workers are up".into(),
            last_transition_time: Time::from_unix_seconds(1_700_000_000),
            observed_generation: Some(1),
        }],
        observed_generation: Some(1),
        ready_replicas: 3,
    };
    let mut with_status = got.clone();
    with_status.status = Some(status.clone());
    fleets
        .update_status(&with_status, &UpdateOptions::default())
        .await
        .unwrap();
    let got = fleets.get("fleet-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.status.as_ref(), Some(&status));
    assert_eq!(got.spec, want.spec);

    // Other variants of the enums are kept too.
    let mut other = fleet("fleet-b");
    other.spec.strategy = Strategy::BlueGreen(BlueGreen {
        preview_service: "preview".into(),
    });
    other.spec.source = Source::Image {
        reference: "registry.example.com/app:1".into(),
    };
    other.spec.max_surge = IntOrString::Int(2);
    other.spec.paused_until = None;
    let created = fleets
        .create(&other, &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(created.spec, other.spec);

    // The server enforces the schema: each of these is refused as Invalid, naming the field.
    let refused = [
        (
            json!({"spec": {"replicaCount": "three"}}),
            "spec.replicaCount",
        ),
        (json!({"spec": {"mode": "Sideways"}}), "spec.mode"),
        (json!({"spec": {"memory": "1.5GB"}}), "spec.memory"),
        (
            json!({"spec": {"tuning": {"level": {"value": -1}}}}),
            "spec.tuning.level.value",
        ),
        (
            json!({"spec": {"ports": [{"name": "x"}]}}),
            "spec.ports[0].port",
        ),
        (
            json!({"spec": {"strategy": {"blueGreen": {"previewService": "p"}}}}),
            "spec.strategy",
        ),
        (
            json!({"spec": {"source": {"type": "image", "url": "u"}}}),
            "spec.source",
        ),
        (
            json!({"spec": {"source": {"type": "svn", "url": "u"}}}),
            "spec.source.type",
        ),
        (json!({"spec": {"region": 5}}), "spec.region"),
        (json!({"spec": {"pools": ["gpu", "gpu"]}}), "spec.pools[1]"),
    ];
    assert_refused(&fleets, "fleet-a", refused).await;
    let bad_condition = json!({"status": {"conditions": [{
        "type": "Ready", "status": "Maybe", "reason": "R", "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z"}]}});
    let err = fleets
        .patch_status(
            "fleet-a",
            &Patch::Merge(bad_condition),
            &PatchOptions::default(),
        )
        .await
        .expect_err("a condition status outside True, False, Unknown");
    assert!(err.is_invalid(), "{err}");
    assert!(
        err.to_string().contains("status.conditions[0].status"),
        "{err}"
    );

    // The refused patches changed nothing.
    let got = fleets.get("fleet-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.spec, want.spec);
}

/// The shapes the Fleet does not hold: untagged and adjacently tagged enums, an optional
/// enum with data, a flattened enum and map, the other apimachinery value types.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Gizmo {
    metadata: ObjectMeta,
    spec: GizmoSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GizmoSpec {
    selector: LabelSelector,
    target: Target,
    port: PortRef,
    action: Action,
    backup: Option<Strategy>,
    seen: MicroTime,
    every: Duration,
    secret: ByteString,
    raw: RawJson,
    limits: Vec<BTreeMap<String, u64>>,
    ratio: f32,
    #[serde(flatten)]
    source: Source,
}

/// Untagged, of objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Target {
    ByName { name: String },
    ById { id: i64 },
}

/// Untagged, an integer or a string: int-or-string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum PortRef {
    Number(i32),
    Name(String),
}

/// Adjacently tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", content = "args")]
enum Action {
    Restart(Port),
    Drain(Port),
}

custom_resource!(Gizmo {
    group: "schema.kclient.example.com",
    version: "v1",
    kind: "Gizmo",
    plural: "gizmos",
    singular: "gizmo",
    scope: Namespaced,
});

#[tokio::test(flavor = "multi_thread")]
async fn enums_of_every_tagging_and_the_other_value_types_round_trip() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    install_structural::<Gizmo>(&env, &client).await;

    let gizmos: Api<Gizmo> = Api::namespaced(client, ns.name());
    let mut want = Gizmo {
        metadata: ObjectMeta::default(),
        spec: GizmoSpec {
            selector: LabelSelector {
                match_labels: Some([("app".into(), "web".into())].into_iter().collect()),
                match_expressions: None,
            },
            target: Target::ById { id: 42 },
            port: PortRef::Name("http".into()),
            action: Action::Drain(Port {
                name: "grace".into(),
                port: 30,
            }),
            backup: Some(Strategy::BlueGreen(BlueGreen {
                preview_service: "b".into(),
            })),
            seen: MicroTime::from_unix_micros(1_700_000_000_123_456),
            every: Duration::parse("1h30m").unwrap(),
            secret: ByteString(b"\x00\xffbytes".to_vec().into_boxed_slice()),
            raw: RawJson::from(json!({"any": ["thing", 1]})),
            limits: vec![BTreeMap::from([("cpu".into(), u64::from(u32::MAX) + 1)])],
            ratio: 0.5,
            source: Source::Image {
                reference: "r".into(),
            },
        },
    };
    want.set_name("gizmo-a");
    let created = gizmos
        .create(&want, &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(to_json(&created.spec), to_json(&want.spec));
    let got = gizmos.get("gizmo-a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.spec, want.spec);

    let refused = [
        (
            json!({"spec": {"target": {"id": null, "name": null, "other": 1}}}),
            "spec.target",
        ),
        (json!({"spec": {"port": true}}), "spec.port"),
        (
            json!({"spec": {"action": {"op": "Reboot"}}}),
            "spec.action.op",
        ),
        (
            json!({"spec": {"limits": [{"cpu": -1}]}}),
            "spec.limits[0].cpu",
        ),
    ];
    assert_refused(&gizmos, "gizmo-a", refused).await;
}
