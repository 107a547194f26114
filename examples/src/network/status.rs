//! Writing a Network's status, the same for both controllers: through the status
//! subresource, and only when it changed.

use kclient::apimachinery::{Object, PatchOptions, meta_namespace_key};
use kclient::kubernetes::{Api, Clientset, Patch};
use serde_json::json;

use crate::error::Error;
use crate::network::config_map::CONTROLLER_NAME;
use crate::network::types::{Network, NetworkPhase, NetworkStatus};

/// Writes the Network's status through the status subresource, unless it already says
/// the same (no write, no new resourceVersion, no event echoing back). Returns whether it
/// wrote.
pub(crate) async fn update_status(
    clientset: &Clientset,
    network: &Network,
    phase: NetworkPhase,
    message: &str,
    config_map: &str,
) -> Result<bool, Error> {
    let status = NetworkStatus {
        observed_generation: network.generation(),
        phase: phase.as_str().to_owned(),
        message: message.to_owned(),
        config_map: config_map.to_owned(),
    };
    if network.status.as_ref() == Some(&status) {
        return Ok(false);
    }
    let status_json = serde_json::to_value(&status)
        .map_err(|e| Error::api("encoding the status", encode_error(e)))?;
    // A merge patch of the whole status object: `configMap: null` clears a stale name.
    let mut body = json!({"status": status_json});
    if config_map.is_empty() {
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
