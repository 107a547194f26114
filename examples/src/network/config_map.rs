//! The "actual network": a ConfigMap `network-<name>` beside each Network, holding its `cidr`
//! and `gateway`, owned by it.
//!
//! In the seed article the controller would call Neutron to create a real network; here the
//! external system is a ConfigMap, so the whole loop can be watched with `kubectl`. The
//! ConfigMap carries an ownerReference to its Network with `controller: true`, which does
//! two things: the controller can tell its own ConfigMaps from someone else's (it never adopts
//! one it does not own), and the API server's garbage collector deletes the ConfigMap when the
//! Network goes, so the controller needs no finalizer.
//!
//! Drift is repaired declaratively, as the seed's section on `kubectl apply` describes: the
//! controller computes a two-way strategic merge patch from the part of the actual ConfigMap
//! it manages to the desired one and sends only that PATCH, leaving everything else (other
//! labels, annotations, fields set by other writers) untouched.

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::meta::PatchMeta;
use kclient::apimachinery::meta::v1::{ObjectMeta, OwnerReference};
use kclient::apimachinery::{Object, Resource, create_two_way_merge_patch};
use serde_json::{Map, Value, json};

use crate::network::types::Network;

/// The prefix of the ConfigMaps the controller manages: `network-<network name>`.
pub const CONFIG_MAP_PREFIX: &str = "network-";

/// The label the controller puts on its ConfigMaps, for `kubectl get cm -l ...`.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The value of [`MANAGED_BY_LABEL`], also the controller's field manager name.
pub const CONTROLLER_NAME: &str = "network-controller";

/// The name of the ConfigMap that represents Network `network_name`.
pub fn config_map_name(network_name: &str) -> String {
    format!("{CONFIG_MAP_PREFIX}{network_name}")
}

/// The name of the Network a ConfigMap named `config_map_name` would belong to, if the name
/// has the controller's form.
pub fn network_name_of(config_map_name: &str) -> Option<&str> {
    config_map_name
        .strip_prefix(CONFIG_MAP_PREFIX)
        .filter(|name| !name.is_empty())
}

/// The ConfigMap the controller wants for `network`: data `cidr` and `gateway`, the
/// managed-by label, and a controller ownerReference to the Network.
pub fn desired_config_map(network: &Network) -> ConfigMap {
    let owner = OwnerReference {
        api_version: Network::API_VERSION.into(),
        kind: Network::KIND.into(),
        name: network.name().into(),
        uid: network.uid().into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(config_map_name(network.name()).into()),
            namespace: Some(network.namespace().into()),
            labels: Some([(MANAGED_BY_LABEL.into(), CONTROLLER_NAME.into())].into()),
            owner_references: Some(vec![owner].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            [
                ("cidr".into(), network.spec.cidr.as_str().into()),
                ("gateway".into(), network.spec.gateway.as_str().into()),
            ]
            .into(),
        ),
        ..ConfigMap::default()
    }
}

/// Whether `config_map`'s controller ownerReference points at `network` (same UID, so a
/// ConfigMap left over from a deleted Network of the same name does not count).
pub fn is_controlled_by(config_map: &ConfigMap, network: &Network) -> bool {
    config_map
        .owner_references()
        .iter()
        .any(|owner| owner.controller && owner.uid == network.uid())
}

/// The controller ownerReference of `config_map` if it names a Network: `(name, uid)`.
pub fn controlling_network(config_map: &ConfigMap) -> Option<(&str, &str)> {
    config_map
        .owner_references()
        .into_iter()
        .find(|owner| owner.controller)
        .filter(|owner| owner.kind == Network::KIND && owner.api_version == Network::API_VERSION)
        .map(|owner| (owner.name, owner.uid))
}

/// The part of a ConfigMap the controller manages, as JSON: all of `data`, and its own labels.
///
/// The labels are projected onto the keys `desired` sets, so labels added by other writers are
/// neither compared nor removed; `data` is compared whole, so keys added by hand are removed
/// (the ConfigMap *is* the network, and the network has a cidr and a gateway only).
fn managed_fields(config_map: &ConfigMap, desired: &ConfigMap) -> Value {
    let mut labels = Map::new();
    for (key, _) in desired.labels().entries() {
        if let Some(value) = config_map.labels().get(key) {
            labels.insert(key.to_owned(), Value::from(value));
        }
    }
    let data: Map<String, Value> = config_map
        .data
        .iter()
        .flat_map(|data| data.iter())
        .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
        .collect();
    json!({"metadata": {"labels": labels}, "data": data})
}

/// The strategic merge patch that turns `actual` into `desired` on the fields the controller
/// manages, or `None` when they already agree.
///
/// This is client-go's `strategicpatch.CreateTwoWayMergePatch(actual, desired, ConfigMap{})`
/// restricted to those fields: diffing the whole objects would null out everything the server
/// filled in (uid, resourceVersion, managedFields, ...).
pub fn drift_patch(actual: &ConfigMap, desired: &ConfigMap) -> Option<Value> {
    let original = managed_fields(actual, desired);
    let modified = managed_fields(desired, desired);
    // Both documents are JSON objects, the only input the diff rejects; an error here would be
    // a bug in `managed_fields`, and "no patch" is the safe answer to it.
    let patch = create_two_way_merge_patch(&original, &modified, ConfigMap::patch_fields()).ok()?;
    let empty = patch.as_object().is_none_or(Map::is_empty);
    (!empty).then_some(patch)
}

#[cfg(test)]
mod tests {
    use kclient::apimachinery::apply_strategic_merge_patch;

    use super::*;

    fn network() -> Network {
        let mut net = Network::new("ns", "blue", "10.1.0.0/16", "10.1.0.1");
        net.metadata.uid = Some("uid-blue".into());
        net
    }

    fn to_json(cm: &ConfigMap) -> Value {
        serde_json::to_value(cm).unwrap()
    }

    #[test]
    fn the_desired_config_map_is_owned_by_its_network() {
        let cm = desired_config_map(&network());
        let json = to_json(&cm);
        assert_eq!(json["metadata"]["name"], "network-blue");
        assert_eq!(json["metadata"]["namespace"], "ns");
        assert_eq!(
            json["data"],
            json!({"cidr": "10.1.0.0/16", "gateway": "10.1.0.1"})
        );
        let owner = &json["metadata"]["ownerReferences"][0];
        assert_eq!(owner["apiVersion"], "samplecrd.k8s.io/v1");
        assert_eq!(owner["kind"], "Network");
        assert_eq!(owner["uid"], "uid-blue");
        assert_eq!(owner["controller"], true);
        assert!(is_controlled_by(&cm, &network()));
        assert_eq!(controlling_network(&cm), Some(("blue", "uid-blue")));

        let mut other = network();
        other.metadata.uid = Some("uid-of-a-new-blue".into());
        assert!(!is_controlled_by(&cm, &other));
        assert!(controlling_network(&ConfigMap::default()).is_none());
    }

    #[test]
    fn names_map_both_ways() {
        assert_eq!(config_map_name("blue"), "network-blue");
        assert_eq!(network_name_of("network-blue"), Some("blue"));
        assert_eq!(network_name_of("network-"), None);
        assert_eq!(network_name_of("kube-root-ca.crt"), None);
    }

    #[test]
    fn no_patch_when_in_sync_even_with_foreign_labels() {
        let desired = desired_config_map(&network());
        let mut actual = desired.clone();
        actual.metadata.uid = Some("cm-uid".into());
        actual.metadata.resource_version = Some("42".into());
        actual.metadata.labels = Some(
            [
                (MANAGED_BY_LABEL.into(), CONTROLLER_NAME.into()),
                ("team".into(), "net".into()),
            ]
            .into(),
        );
        assert_eq!(drift_patch(&actual, &desired), None);
    }

    #[test]
    fn drift_is_repaired_by_a_minimal_patch() {
        let desired = desired_config_map(&network());
        let mut actual = desired.clone();
        actual.data = Some(
            [
                ("cidr".into(), "10.1.0.0/16".into()),
                ("gateway".into(), "10.9.9.9".into()),
                ("note".into(), "edited by hand".into()),
            ]
            .into(),
        );
        actual.metadata.labels = Some([("team".into(), "net".into())].into());
        let patch = drift_patch(&actual, &desired).unwrap();
        assert_eq!(
            patch,
            json!({
                "metadata": {"labels": {MANAGED_BY_LABEL: CONTROLLER_NAME}},
                "data": {"gateway": "10.1.0.1", "note": null},
            })
        );

        // Applied as the server would, it gives the desired data and keeps the foreign label.
        let mut server_side = to_json(&actual);
        server_side =
            apply_strategic_merge_patch(&server_side, &patch, ConfigMap::patch_fields()).unwrap();
        assert_eq!(server_side["data"], to_json(&desired)["data"]);
        assert_eq!(server_side["metadata"]["labels"]["team"], "net");
        assert_eq!(
            server_side["metadata"]["labels"][MANAGED_BY_LABEL],
            CONTROLLER_NAME
        );
    }
}
