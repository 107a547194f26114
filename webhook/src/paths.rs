//! The paths controller-runtime's webhook builder serves a kind's webhooks at, which
//! kubebuilder's `+kubebuilder:webhook` markers write into the manifests controller-gen
//! generates: serving at the same paths lets a project keep those manifests.

use kclient_apimachinery::{GroupVersionKind, Resource};

/// The path controller-runtime serves CRD conversions at.
pub const CONVERT_PATH: &str = "/convert";

/// The path of `K`'s validating webhook: `/validate-<group, dots as dashes>-<version>-<kind,
/// lowercase>` (controller-runtime's `generateValidatePath`), so `/validate--v1-configmap` for
/// a kind of the core group, whose group is empty.
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
///
/// assert_eq!(kclient_webhook::validate_path::<ConfigMap>(), "/validate--v1-configmap");
/// ```
pub fn validate_path<K: Resource>() -> String {
    validate_path_for(&GroupVersionKind::new(K::GROUP, K::VERSION, K::KIND))
}

/// The path of `K`'s mutating (defaulting) webhook: `/mutate-<group, dots as dashes>-<version>-<kind,
/// lowercase>` (controller-runtime's `generateMutatePath`).
pub fn mutate_path<K: Resource>() -> String {
    mutate_path_for(&GroupVersionKind::new(K::GROUP, K::VERSION, K::KIND))
}

/// [`validate_path`] of a kind known at run time.
pub fn validate_path_for(gvk: &GroupVersionKind) -> String {
    path("validate", gvk)
}

/// [`mutate_path`] of a kind known at run time.
pub fn mutate_path_for(gvk: &GroupVersionKind) -> String {
    path("mutate", gvk)
}

fn path(verb: &str, gvk: &GroupVersionKind) -> String {
    format!(
        "/{verb}-{}-{}-{}",
        gvk.group.replace('.', "-"),
        gvk.version,
        gvk.kind.to_ascii_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use kclient_api::core::v1::ConfigMap;

    use super::*;

    /// The paths of controller-runtime's builder, as kubebuilder's tutorial writes them.
    #[test]
    fn paths_are_controller_runtimes() {
        let cron_job = GroupVersionKind::new("batch.tutorial.kubebuilder.io", "v1", "CronJob");
        assert_eq!(
            validate_path_for(&cron_job),
            "/validate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
        assert_eq!(
            mutate_path_for(&cron_job),
            "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
        assert_eq!(validate_path::<ConfigMap>(), "/validate--v1-configmap");
        assert_eq!(mutate_path::<ConfigMap>(), "/mutate--v1-configmap");
    }
}
