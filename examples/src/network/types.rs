//! The `Network` custom resource of the seed article and of client-go's sample-controller
//! lineage: group `samplecrd.k8s.io`, version `v1`, namespaced, a spec with `cidr` and
//! `gateway`, and a status subresource the controller writes.
//!
//! The Rust type is declared with `kclient::kubernetes::custom_resource!`, which gives it the
//! `Object`/`Resource` impls that `Api<Network>`, informers and listers need, and the CRD
//! manifest through [`CustomResource::crd_from_type`](kclient::kubernetes::CustomResource::crd_from_type):
//! the types derive `JsonSchema` (schemars, through the facade's `schema` feature), and the
//! CRD's structural `openAPIV3Schema` is made from them, as controller-gen makes a kubebuilder
//! project's from its Go types. The doc comments become the fields' descriptions
//! (`kubectl explain network.spec`).

use kclient::apimachinery::meta::v1::{Condition, ObjectMeta};
use kclient::kubernetes::custom_resource;
use kclient::kubernetes::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A network to provision: the desired state the controller reads from its lister.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kclient::kubernetes::schemars")]
pub struct Network {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// What the user asks for.
    #[serde(default)]
    pub spec: NetworkSpec,
    /// What the controller last observed and did; written through the `status` subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NetworkStatus>,
}

/// The desired network: an address range and its gateway.
///
/// Both fields are plain strings in the schema; what makes them valid (a CIDR, an address of
/// the same family inside it) is checked by the controller, which reports a violation in the
/// status, as the seed's controller would when Neutron refuses a network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kclient::kubernetes::schemars")]
pub struct NetworkSpec {
    /// The address range in CIDR notation, IPv4 (`10.1.0.0/16`) or IPv6 (`fd00::/64`).
    #[serde(default)]
    pub cidr: String,
    /// The gateway address; it must lie inside `cidr`.
    #[serde(default)]
    pub gateway: String,
}

/// What the controller reports about a Network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kclient::kubernetes::schemars")]
#[serde(rename_all = "camelCase")]
pub struct NetworkStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default)]
    pub observed_generation: i64,
    /// [`NetworkPhase::Ready`], [`NetworkPhase::Invalid`] or [`NetworkPhase::Conflict`], as text.
    #[serde(default)]
    pub phase: String,
    /// A sentence for humans: what is provisioned, or what is wrong.
    #[serde(default)]
    pub message: String,
    /// The name of the ConfigMap that represents the provisioned network.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub config_map: String,
    /// The standard conditions: [`READY_CONDITION`], `True` once the ConfigMap matches the
    /// spec, `False` with the reason when the spec is invalid or the name is taken. Set with
    /// apimachinery's `set_status_condition`, so `lastTransitionTime` moves only when the
    /// condition's status does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The type of the condition the controller keeps in [`NetworkStatus::conditions`]:
/// whether the network is provisioned as its spec says.
pub const READY_CONDITION: &str = "Ready";

/// The phases the controller writes into [`NetworkStatus::phase`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkPhase {
    /// The ConfigMap exists and matches the spec.
    Ready,
    /// The spec is invalid; nothing is provisioned until it is fixed.
    Invalid,
    /// A ConfigMap of the same name exists and belongs to someone else; it is left alone.
    Conflict,
}

impl NetworkPhase {
    /// The phase as written in the status.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkPhase::Ready => "Ready",
            NetworkPhase::Invalid => "Invalid",
            NetworkPhase::Conflict => "Conflict",
        }
    }

    /// The [`READY_CONDITION`]'s status in this phase (`True` or `False`).
    pub fn ready_status(self) -> &'static str {
        match self {
            NetworkPhase::Ready => kclient::apimachinery::CONDITION_TRUE,
            NetworkPhase::Invalid | NetworkPhase::Conflict => {
                kclient::apimachinery::CONDITION_FALSE
            }
        }
    }
}

custom_resource!(Network {
    group: "samplecrd.k8s.io",
    version: "v1",
    kind: "Network",
    plural: "networks",
    singular: "network",
    scope: Namespaced,
    short_names: ["net"],
    status: true,
});

impl Network {
    /// A Network named `name` in `namespace` with the given spec (for creating one).
    pub fn new(namespace: &str, name: &str, cidr: &str, gateway: &str) -> Network {
        Network {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            spec: NetworkSpec {
                cidr: cidr.to_owned(),
                gateway: gateway.to_owned(),
            },
            status: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use kclient::apimachinery::{Object, Resource};
    use kclient::kubernetes::CustomResource;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_type_is_the_seed_network() {
        assert_eq!(Network::API_VERSION, "samplecrd.k8s.io/v1");
        assert_eq!(Network::PLURAL, "networks");
        let crd = Network::crd_json_from_type().unwrap();
        assert_eq!(crd["metadata"]["name"], "networks.samplecrd.k8s.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert!(crd["spec"]["versions"][0]["subresources"]["status"].is_object());
    }

    /// The schema made from the types: what the API server validates and prunes with.
    #[test]
    fn the_crd_schema_comes_from_the_types() {
        let crd = Network::crd_json_from_type().unwrap();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let spec = &schema["properties"]["spec"];
        assert_eq!(spec["properties"]["cidr"]["type"], "string");
        assert_eq!(spec["properties"]["gateway"]["type"], "string");
        assert!(
            spec["properties"]["gateway"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("inside `cidr`")),
            "doc comments become descriptions: {spec}"
        );
        // `#[serde(default)]` fields are optional, so an empty spec reaches the controller,
        // which reports it in the status.
        assert!(spec.get("required").is_none(), "{spec}");
        let status = &schema["properties"]["status"]["properties"];
        for field in ["observedGeneration", "phase", "message", "configMap"] {
            assert!(status[field].is_object(), "status.{field}: {status}");
        }
        assert_eq!(status["observedGeneration"]["format"], "int64");
        // metav1.Condition as controller-gen writes it.
        let condition = &status["conditions"]["items"];
        assert_eq!(
            condition["required"],
            json!(["lastTransitionTime", "message", "reason", "status", "type"])
        );
        assert_eq!(
            condition["properties"]["lastTransitionTime"]["format"],
            "date-time"
        );
    }

    #[test]
    fn status_round_trips_in_camel_case() {
        let net: Network = serde_json::from_value(json!({
            "apiVersion": "samplecrd.k8s.io/v1",
            "kind": "Network",
            "metadata": {"name": "a", "namespace": "ns", "generation": 2},
            "spec": {"cidr": "10.0.0.0/8", "gateway": "10.0.0.1"},
            "status": {"observedGeneration": 2, "phase": "Ready", "message": "ok", "configMap": "network-a",
                "conditions": [{"type": "Ready", "status": "True", "reason": "Provisioned",
                    "message": "ok", "lastTransitionTime": "2026-01-02T03:04:05Z", "observedGeneration": 2}]},
        }))
        .unwrap();
        assert_eq!(net.name(), "a");
        assert_eq!(net.generation(), 2);
        let status = net.status.as_ref().unwrap();
        assert_eq!(status.config_map, "network-a");
        assert_eq!(status.conditions[0].reason, "Provisioned");
        assert_eq!(
            serde_json::to_value(status).unwrap()["observedGeneration"],
            2
        );
        // A Network without spec or status (as the API may serve one) still decodes.
        let bare: Network = serde_json::from_value(json!({"metadata": {"name": "b"}})).unwrap();
        assert_eq!(bare.spec, NetworkSpec::default());
    }
}
