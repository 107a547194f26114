//! The `Network` custom resource of the seed article and of client-go's sample-controller
//! lineage: group `samplecrd.k8s.io`, version `v1`, namespaced, a spec with `cidr` and
//! `gateway`, and a status subresource the controller writes.
//!
//! The Rust type is declared with `kclient::kubernetes::custom_resource!`, which gives it the
//! `Object`/`Resource` impls that `Api<Network>`, informers and listers need, and the CRD
//! manifest through [`CustomResource::crd`](kclient::kubernetes::CustomResource::crd).

use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::kubernetes::custom_resource;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A network to provision: the desired state the controller reads from its lister.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkSpec {
    /// The address range in CIDR notation, IPv4 (`10.1.0.0/16`) or IPv6 (`fd00::/64`).
    #[serde(default)]
    pub cidr: String,
    /// The gateway address; it must lie inside `cidr`.
    #[serde(default)]
    pub gateway: String,
}

/// What the controller reports about a Network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

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

    /// The OpenAPI v3 schema of the CRD's only version. The spec fields are plain strings;
    /// their meaning (a CIDR, an address inside it) is checked by the controller, which
    /// reports violations in the status, as the seed's controller would when Neutron refuses
    /// a network.
    pub fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "cidr": {"type": "string"},
                        "gateway": {"type": "string"},
                    },
                },
                "status": {
                    "type": "object",
                    "properties": {
                        "observedGeneration": {"type": "integer", "format": "int64"},
                        "phase": {"type": "string"},
                        "message": {"type": "string"},
                        "configMap": {"type": "string"},
                    },
                },
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use kclient::apimachinery::{Object, Resource};
    use kclient::kubernetes::CustomResource;

    use super::*;

    #[test]
    fn the_type_is_the_seed_network() {
        assert_eq!(Network::API_VERSION, "samplecrd.k8s.io/v1");
        assert_eq!(Network::PLURAL, "networks");
        let crd = Network::crd_json(Network::schema());
        assert_eq!(crd["metadata"]["name"], "networks.samplecrd.k8s.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert!(crd["spec"]["versions"][0]["subresources"]["status"].is_object());
    }

    #[test]
    fn status_round_trips_in_camel_case() {
        let net: Network = serde_json::from_value(json!({
            "apiVersion": "samplecrd.k8s.io/v1",
            "kind": "Network",
            "metadata": {"name": "a", "namespace": "ns", "generation": 2},
            "spec": {"cidr": "10.0.0.0/8", "gateway": "10.0.0.1"},
            "status": {"observedGeneration": 2, "phase": "Ready", "message": "ok", "configMap": "network-a"},
        }))
        .unwrap();
        assert_eq!(net.name(), "a");
        assert_eq!(net.generation(), 2);
        let status = net.status.as_ref().unwrap();
        assert_eq!(status.config_map, "network-a");
        assert_eq!(
            serde_json::to_value(status).unwrap()["observedGeneration"],
            2
        );
        // A Network without spec or status (as the API may serve one) still decodes.
        let bare: Network = serde_json::from_value(json!({"metadata": {"name": "b"}})).unwrap();
        assert_eq!(bare.spec, NetworkSpec::default());
    }
}
