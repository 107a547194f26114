//! [`sync_network`]: the reconcile step both Network controllers share once they hold the
//! Network from the cache (the seed's `syncHandler` after its lister lookup): validate the
//! name and spec, ensure the `network-<name>` ConfigMap (create it when missing, refuse a foreign one,
//! repair drift with a strategic merge patch), then write the status.
//!
//! How each controller gets the Network and what it does with the outcome stays its own:
//! [`NetworkController`](crate::NetworkController) is handed the object by the runtime,
//! [`SampleController`](crate::SampleController) splits the queue's key and reads the lister,
//! as client-go's sample-controller does.

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{CreateOptions, Object, PatchOptions, meta_namespace_key};
use kclient::cache::Lister;
use kclient::kubernetes::{Clientset, Patch};
use kclient::tools::{EventRecorder, EventType};

use crate::error::{ApiContext, Error};
use crate::network::config_map::{
    CONTROLLER_NAME, config_map_name, desired_config_map, drift_patch, is_controlled_by,
};
use crate::network::status::{Observed, update_status};
use crate::network::sync_event::SyncOutcome;
use crate::network::types::{Network, NetworkPhase};
use crate::network::validation::{validate_name, validate_spec};

/// What a sync reads and writes through: the clientset for writes, the ConfigMap cache for
/// the actual state, the recorder for the Network's events.
pub(crate) struct SyncContext<'a> {
    pub(crate) clientset: &'a Clientset,
    pub(crate) config_maps: &'a Lister<ConfigMap>,
    pub(crate) recorder: &'a EventRecorder,
}

/// Brings `network`'s ConfigMap and status in line with its spec and says what it did.
///
/// An invalid spec and a foreign ConfigMap are outcomes (reported in the status, with a
/// Warning event), not errors: they wait for the next change. Errors are failed API calls,
/// worth retrying.
pub(crate) async fn sync_network(
    network: &Network,
    ctx: &SyncContext<'_>,
) -> Result<SyncOutcome, Error> {
    let key = meta_namespace_key(network);
    if network.is_being_deleted() {
        return Ok(SyncOutcome::Gone);
    }
    // A name whose ConfigMap name the API server would refuse can only be fixed by
    // recreating the Network; retrying the create would fail every time.
    let invalid = match validate_name(network.name()) {
        Err(invalid) => Some(("InvalidName", format!("invalid name: {invalid}"))),
        Ok(()) => validate_spec(&network.spec)
            .err()
            .map(|invalid| ("InvalidSpec", format!("invalid spec: {invalid}"))),
    };
    if let Some((reason, message)) = invalid {
        let observed = Observed {
            phase: NetworkPhase::Invalid,
            reason,
            message: &message,
            config_map: "",
        };
        if update_status(ctx.clientset, network, observed).await? {
            tracing::warn!("{key}: {message}; waiting for it to change");
            ctx.recorder
                .event(network, EventType::Warning, reason, &message);
        }
        return Ok(SyncOutcome::Invalid(message));
    }
    let outcome = ensure_config_map(network, ctx).await?;
    if matches!(outcome, SyncOutcome::Conflict(_)) {
        return Ok(outcome);
    }

    let cm_name = config_map_name(network.name());
    let message = format!(
        "ConfigMap {cm_name} holds cidr {} and gateway {}",
        network.spec.cidr, network.spec.gateway
    );
    let observed = Observed {
        phase: NetworkPhase::Ready,
        reason: "Provisioned",
        message: &message,
        config_map: &cm_name,
    };
    if update_status(ctx.clientset, network, observed).await? {
        // The seed's "Synced" event, recorded when the status changes rather than on every
        // reconcile.
        ctx.recorder.event(
            network,
            EventType::Normal,
            "Synced",
            "Network synced successfully",
        );
    }
    Ok(outcome)
}

/// The ConfigMap step: `Created`, `Updated` (drift repaired), `UpToDate`, or `Conflict` (a
/// ConfigMap of that name controlled by something else; the status says so).
async fn ensure_config_map(network: &Network, ctx: &SyncContext<'_>) -> Result<SyncOutcome, Error> {
    let (namespace, name) = (network.namespace(), network.name());
    let key = meta_namespace_key(network);
    let cm_name = config_map_name(name);
    let desired = desired_config_map(network);
    let config_maps = ctx.clientset.core_v1().config_maps(namespace);
    let actual = match ctx.config_maps.namespace(namespace).get(&cm_name) {
        Ok(actual) => actual,
        Err(e) if e.is_not_found() => {
            config_maps
                .create(
                    &desired,
                    &CreateOptions::default().field_manager(CONTROLLER_NAME),
                )
                .await
                .context(|| format!("creating ConfigMap {namespace}/{cm_name}"))?;
            let message = format!(
                "created ConfigMap {cm_name} (cidr {}, gateway {})",
                network.spec.cidr, network.spec.gateway
            );
            tracing::info!("{key}: {message}");
            ctx.recorder
                .event(network, EventType::Normal, "ConfigMapCreated", &message);
            return Ok(SyncOutcome::Created);
        }
        Err(e) => {
            let context = format!("reading ConfigMap {namespace}/{cm_name} from the cache");
            return Err(Error::api(context, e));
        }
    };
    if !is_controlled_by(&actual, network) {
        let message = format!(
            "ConfigMap {cm_name} already exists and is not managed by this Network; \
             delete or rename it"
        );
        let observed = Observed {
            phase: NetworkPhase::Conflict,
            reason: "ConfigMapExists",
            message: &message,
            config_map: "",
        };
        if update_status(ctx.clientset, network, observed).await? {
            tracing::warn!("{key}: {message}");
            // sample-controller's reason for the same refusal.
            ctx.recorder
                .event(network, EventType::Warning, "ErrResourceExists", &message);
        }
        return Ok(SyncOutcome::Conflict(message));
    }
    let Some(patch) = drift_patch(&actual, &desired) else {
        return Ok(SyncOutcome::UpToDate);
    };
    tracing::info!("{key}: ConfigMap {cm_name} drifted; patching it: {patch}");
    config_maps
        .patch(
            &cm_name,
            &Patch::StrategicMerge(patch),
            &PatchOptions::default().field_manager(CONTROLLER_NAME),
        )
        .await
        .context(|| format!("patching ConfigMap {namespace}/{cm_name}"))?;
    let message = format!("patched ConfigMap {cm_name} to match the spec");
    ctx.recorder
        .event(network, EventType::Normal, "ConfigMapUpdated", &message);
    Ok(SyncOutcome::Updated)
}
