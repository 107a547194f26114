//! [`Apply`]: what a server-side apply sends, a whole typed object or an apply configuration of
//! one kind (`kclient_api::applyconfigurations`, client-go's `applyconfigurations`).

use crate::Resource;

/// A body for server-side apply of kind [`Apply::Kind`]: every typed resource (a whole object,
/// whose required fields are always sent and so owned; its unset optional fields are not sent,
/// not even those that its plain JSON encoding writes as `null` as Go does) and every
/// generated apply configuration (`DeploymentApplyConfiguration`, which sends only the fields
/// that are set).
///
/// A type of your own (a custom resource) is sent as its `Serialize` writes it: give its
/// optional fields `#[serde(skip_serializing_if = "Option::is_none")]`, or each unset one is
/// a `null` that claims the field and conflicts with the manager that set it.
///
/// The typed clients' `apply` and `apply_status` take `impl Apply<Kind = K>`, so a
/// `Deployment` configuration applied through an `Api<ConfigMap>` does not compile.
pub trait Apply {
    /// The kind the body applies to (the typed object itself, or the kind a configuration
    /// configures).
    type Kind: Resource;

    /// `metadata.name`, or `""` when unset (apply needs a name: the typed clients refuse an
    /// empty one before sending).
    fn apply_name(&self) -> &str;

    /// The JSON body. A configuration built without its constructor may lack `apiVersion` and
    /// `kind`; the typed clients fill them from [`Apply::Kind`].
    ///
    /// # Errors
    ///
    /// When the value cannot be serialized as JSON.
    fn apply_body(&self) -> Result<serde_json::Value, serde_json::Error>;
}

impl<K: Resource> Apply for K {
    type Kind = K;

    fn apply_name(&self) -> &str {
        self.name()
    }

    fn apply_body(&self) -> Result<serde_json::Value, serde_json::Error> {
        // A `null` would claim the field (see `meta::go_null`).
        crate::meta::go_null::without_unset_nulls(|| serde_json::to_value(self))
    }
}
