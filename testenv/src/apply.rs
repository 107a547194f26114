//! Server-side apply of the objects the test environment installs (CRDs, webhook
//! configurations), as one field manager, so that installing them again updates them.

use kclient_apimachinery::PatchType;
use serde_json::Value;

use crate::TestEnvError;

/// The field manager of the installs.
const FIELD_MANAGER: &str = "kclient-testenv";

/// Applies `object`, the cluster-scoped `resource` named `name` of `group`/v1, forcing
/// conflicts; `what` names it in the error (`the CustomResourceDefinition x`).
pub(crate) async fn apply_cluster_object(
    client: &kclient_rest::Client,
    (group, resource): (&str, &str),
    name: &str,
    object: &Value,
    what: &str,
) -> Result<(), TestEnvError> {
    client
        .patch(PatchType::Apply)
        .group_version(group, "v1")
        .resource(resource)
        .name(name)
        .param("fieldManager", FIELD_MANAGER)
        .param("force", "true")
        .json(object)
        .send::<Value>()
        .await
        .map_err(|source| TestEnvError::Api {
            context: format!("applying {what}"),
            source,
        })?;
    Ok(())
}
