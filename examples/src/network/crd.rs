//! Installing the Network CustomResourceDefinition: create it if missing, bring an older
//! definition up to date (the status subresource, the short name, and the schema, which is
//! made from the Rust types by [`CustomResource::crd_from_type`], so a CRD installed by an
//! older build is updated when the types change), and wait until the API server reports it
//! Established, that is, serving `networks.samplecrd.k8s.io`.
//!
//! The seed's controller is started before its CRD exists and logs "the server could not find
//! the requested resource" until someone runs `kubectl apply -f crd/network.yaml`; installing
//! the CRD first makes the controller start cleanly.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use kclient::api::apiextensions::v1::CustomResourceDefinition;
use kclient::apimachinery::{CreateOptions, GetOptions, PatchOptions, Resource, WatchEvent};
use kclient::cache::Indexer;
use kclient::informers::new_list_watch_from_client;
use kclient::kubernetes::{Clientset, CustomResource, Patch};
use kclient::tools::watch::{UntilError, condition, precondition, until_with_sync};
use serde_json::json;

use crate::error::{ApiContext, Error};
use crate::network::types::Network;

/// What [`install_crd`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrdInstall {
    /// The CRD did not exist and was created.
    Created,
    /// The CRD existed without the status subresource, the short name or the types' schema
    /// and was updated.
    Updated,
    /// The CRD existed as needed.
    Unchanged,
}

/// The name of the Network CRD.
pub fn crd_name() -> String {
    format!("{}.{}", Network::PLURAL, Network::GROUP)
}

/// The Network CRD as this build describes it: [`CustomResource::crd_from_type`], the
/// schema made from [`Network`]'s `#[derive(JsonSchema)]`.
pub fn network_crd() -> Result<CustomResourceDefinition, Error> {
    Network::crd_from_type().map_err(|e| Error::api("building the Network CRD from its types", e))
}

/// Makes sure the Network CRD exists as [`network_crd`] describes it and waits (up to
/// `timeout`) until it is Established.
pub async fn install_crd(clientset: &Clientset, timeout: Duration) -> Result<CrdInstall, Error> {
    let crds = clientset.apiextensions_v1().custom_resource_definitions();
    let name = crd_name();
    let wanted = network_crd()?;

    let outcome = match crds.get(&name, &GetOptions::default()).await {
        Ok(existing) => {
            if is_up_to_date(&existing, &wanted) {
                CrdInstall::Unchanged
            } else {
                // A merge patch replaces the `versions` list whole with ours, and the names
                // (the short name `net`).
                let spec = serde_json::to_value(&wanted.spec)
                    .map_err(|e| Error::api("encoding the CRD", decode_error(e)))?;
                let patch = Patch::Merge(
                    json!({"spec": {"versions": spec["versions"], "names": spec["names"]}}),
                );
                crds.patch(&name, &patch, &PatchOptions::default())
                    .await
                    .context(|| format!("updating CustomResourceDefinition {name}"))?;
                CrdInstall::Updated
            }
        }
        Err(e) if e.is_not_found() => match crds.create(&wanted, &CreateOptions::default()).await {
            Ok(_) => CrdInstall::Created,
            // Someone else created it in the meantime: theirs is ours too.
            Err(e) if e.is_already_exists() => CrdInstall::Unchanged,
            Err(e) => {
                return Err(Error::api(
                    format!("creating CustomResourceDefinition {name}"),
                    e,
                ));
            }
        },
        Err(e) => {
            return Err(Error::api(
                format!("reading CustomResourceDefinition {name}"),
                e,
            ));
        }
    };

    // Wait for Established with a watch rather than polling: an informer over this one CRD
    // (client-go's UntilWithSync). The precondition sees the synced cache, so a CRD that is
    // Established already ends the wait at once.
    let lw = new_list_watch_from_client::<CustomResourceDefinition>(
        clientset.rest_client().clone(),
        None,
        &format!("metadata.name={name}"),
    );
    let waited = until_with_sync(
        timeout,
        Arc::new(lw),
        Some(precondition(|store: &Indexer<CustomResourceDefinition>| {
            Ok::<_, Infallible>(store.list().iter().any(|crd| is_established(crd)))
        })),
        vec![condition(
            |event: &WatchEvent<Arc<CustomResourceDefinition>>| {
                Ok::<_, Infallible>(matches!(
                    event,
                    WatchEvent::Added(crd) | WatchEvent::Modified(crd) if is_established(crd)
                ))
            },
        )],
    )
    .await;
    match waited {
        Ok(_) => Ok(outcome),
        Err(e) if e.is_timeout() => Err(Error::timeout(format!(
            "CustomResourceDefinition {name} to become Established"
        ))),
        Err(UntilError::Watch(e)) => Err(Error::api(
            format!("watching CustomResourceDefinition {name}"),
            e,
        )),
        Err(e) => Err(Error::stopped(format!(
            "waiting for CustomResourceDefinition {name} to become Established: {e}"
        ))),
    }
}

fn decode_error(e: serde_json::Error) -> kclient::apimachinery::Error {
    kclient::apimachinery::Error::invalid_request(e.to_string())
}

/// Whether the installed CRD serves v1 as `wanted` does: served, with the status subresource
/// and the same `openAPIV3Schema` (an older definition, such as the one other tests of this
/// workspace create or an older build of this controller installed, may lack the status or
/// its conditions, and the API server would prune what its schema lacks), and has the short
/// name `net`.
fn is_up_to_date(crd: &CustomResourceDefinition, wanted: &CustomResourceDefinition) -> bool {
    let has_short_name = crd
        .spec
        .names
        .short_names
        .as_ref()
        .is_some_and(|names| names.iter().any(|n| n == "net"));
    let schema_of = |crd: &CustomResourceDefinition| {
        crd.spec
            .versions
            .iter()
            .find(|v| v.name == Network::VERSION)
            .map(|v| {
                (
                    v.served,
                    v.subresources
                        .as_ref()
                        .and_then(|s| s.status.clone())
                        .is_some(),
                    serde_json::to_value(&v.schema).ok(),
                )
            })
    };
    has_short_name && schema_of(crd).is_some_and(|installed| Some(installed) == schema_of(wanted))
}

/// Whether the CRD has the condition `Established=True`.
fn is_established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_crd_is_up_to_date_and_an_older_one_is_not() {
        let ours = network_crd().unwrap();
        assert!(is_up_to_date(&ours, &ours));
        assert_eq!(crd_name(), "networks.samplecrd.k8s.io");

        // The definition without status that other tests of this workspace create.
        let older = Network::crd(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "cidr": {"type": "string"}, "gateway": {"type": "string"}}}}}))
        .unwrap();
        assert!(!is_up_to_date(&older, &ours));

        // The hand-written schema of earlier builds: a status, but no conditions.
        let before_conditions = Network::crd(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "cidr": {"type": "string"}, "gateway": {"type": "string"}}},
            "status": {"type": "object", "properties": {
                "observedGeneration": {"type": "integer", "format": "int64"},
                "phase": {"type": "string"}, "message": {"type": "string"},
                "configMap": {"type": "string"}}}}}))
        .unwrap();
        assert!(!is_up_to_date(&before_conditions, &ours));

        // Ours without the short name, or without the status subresource.
        let mut no_short_name = ours.clone();
        no_short_name.spec.names.short_names = None;
        assert!(!is_up_to_date(&no_short_name, &ours));
        let mut no_status = ours.clone();
        no_status.spec.versions[0].subresources = None;
        assert!(!is_up_to_date(&no_status, &ours));
    }

    #[test]
    fn established_reads_the_condition() {
        let mut crd = network_crd().unwrap();
        assert!(!is_established(&crd));
        crd = serde_json::from_value({
            let mut json = serde_json::to_value(&crd).unwrap();
            json["status"] = json!({"conditions": [
                {"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": "True"},
            ]});
            json
        })
        .unwrap();
        assert!(is_established(&crd));
    }
}
