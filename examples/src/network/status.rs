//! Writing a Network's status, the same for both controllers: the phase, message and
//! ConfigMap name, and the `Ready` condition set with apimachinery's
//! [`set_status_condition`] (its `lastTransitionTime` moves only when its status does); written
//! through the status subresource, and only when it changed.

use kclient::apimachinery::meta::v1::Condition;
use kclient::apimachinery::{Object, PatchOptions, meta_namespace_key, set_status_condition};
use kclient::kubernetes::{Api, Clientset, Patch};
use serde_json::json;

use crate::error::Error;
use crate::network::config_map::CONTROLLER_NAME;
use crate::network::types::{Network, NetworkPhase, NetworkStatus, READY_CONDITION};

/// What a reconcile found, to be written into the status.
pub(crate) struct Observed<'a> {
    /// The phase.
    pub(crate) phase: NetworkPhase,
    /// The `Ready` condition's reason: a CamelCase word (`Provisioned`, `InvalidSpec`, ...).
    pub(crate) reason: &'a str,
    /// A sentence for humans, in the status and the condition.
    pub(crate) message: &'a str,
    /// The ConfigMap's name, or `""` when there is none of ours.
    pub(crate) config_map: &'a str,
}

/// The status `network` should have after observing `observed`: the conditions it has, with
/// the `Ready` condition set as [`set_status_condition`] sets it.
pub(crate) fn desired_status(network: &Network, observed: &Observed<'_>) -> NetworkStatus {
    let mut conditions = network
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    set_status_condition(
        &mut conditions,
        Condition {
            type_: READY_CONDITION.into(),
            status: observed.phase.ready_status().into(),
            reason: observed.reason.into(),
            message: observed.message.into(),
            observed_generation: Some(network.generation()),
            ..Condition::default()
        },
    );
    NetworkStatus {
        observed_generation: network.generation(),
        phase: observed.phase.as_str().to_owned(),
        message: observed.message.to_owned(),
        config_map: observed.config_map.to_owned(),
        conditions,
    }
}

/// Writes the Network's status through the status subresource, unless it already says
/// the same (no write, no new resourceVersion, no event echoing back). Returns whether it
/// wrote.
pub(crate) async fn update_status(
    clientset: &Clientset,
    network: &Network,
    observed: Observed<'_>,
) -> Result<bool, Error> {
    let status = desired_status(network, &observed);
    if network.status.as_ref() == Some(&status) {
        return Ok(false);
    }
    let status_json = serde_json::to_value(&status)
        .map_err(|e| Error::api("encoding the status", encode_error(e)))?;
    // A merge patch of the whole status object (the conditions list is replaced whole):
    // `configMap: null` clears a stale name.
    let mut body = json!({"status": status_json});
    if status.config_map.is_empty() {
        body["status"]["configMap"] = serde_json::Value::Null;
    }
    let api: Api<Network> = Api::namespaced(clientset.rest_client().clone(), network.namespace());
    match api
        .patch_status(
            network.name(),
            &Patch::Merge(body),
            &PatchOptions::default().field_manager(CONTROLLER_NAME),
        )
        .await
    {
        Ok(_) => Ok(true),
        // Deleted meanwhile: its delete event is on its way.
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(Error::api(
            format!(
                "updating the status of Network {}",
                meta_namespace_key(network)
            ),
            e,
        )),
    }
}

fn encode_error(e: serde_json::Error) -> kclient::apimachinery::Error {
    kclient::apimachinery::Error::invalid_request(e.to_string())
}

#[cfg(test)]
mod tests {
    use kclient::apimachinery::meta::Time;
    use kclient::apimachinery::{find_status_condition, is_status_condition_true};

    use super::*;

    fn observed(phase: NetworkPhase, reason: &'static str) -> Observed<'static> {
        Observed {
            phase,
            reason,
            message: "m",
            config_map: "",
        }
    }

    #[test]
    fn the_ready_condition_moves_its_transition_time_only_when_its_status_changes() {
        let mut network = Network::new("ns", "a", "10.0.0.0/8", "10.0.0.1");
        network.metadata.generation = Some(1);
        let first = desired_status(&network, &observed(NetworkPhase::Ready, "Provisioned"));
        assert!(is_status_condition_true(&first.conditions, READY_CONDITION));
        let ready = find_status_condition(&first.conditions, READY_CONDITION).unwrap();
        assert_eq!(ready.observed_generation, Some(1));
        assert!(!ready.last_transition_time.is_zero());

        // An old transition time, so that a new one would differ.
        let mut status = first.clone();
        let old = Time::from_unix_seconds(1_000_000_000);
        status.conditions[0].last_transition_time = old;
        network.status = Some(status);
        network.metadata.generation = Some(2);

        // Still Ready at the next generation: the reason, message and generation follow,
        // the transition time stays.
        let again = desired_status(&network, &observed(NetworkPhase::Ready, "Provisioned"));
        let ready = find_status_condition(&again.conditions, READY_CONDITION).unwrap();
        assert_eq!(ready.last_transition_time, old);
        assert_eq!(ready.observed_generation, Some(2));

        // Invalid: the status turns False and the transition time moves.
        let invalid = desired_status(&network, &observed(NetworkPhase::Invalid, "InvalidSpec"));
        let ready = find_status_condition(&invalid.conditions, READY_CONDITION).unwrap();
        assert_eq!(ready.status, "False");
        assert_eq!(ready.reason, "InvalidSpec");
        assert_ne!(ready.last_transition_time, old);
        assert_eq!(invalid.conditions.len(), 1, "one condition per type");
    }

    #[test]
    fn an_unchanged_status_is_recognised() {
        let mut network = Network::new("ns", "a", "10.0.0.0/8", "10.0.0.1");
        let status = desired_status(
            &network,
            &observed(NetworkPhase::Conflict, "ConfigMapExists"),
        );
        network.status = Some(status.clone());
        assert_eq!(
            desired_status(
                &network,
                &observed(NetworkPhase::Conflict, "ConfigMapExists")
            ),
            status,
            "no write when nothing changed"
        );
    }
}
