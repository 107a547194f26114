//! Which container of a pod `kubectl logs` and `kubectl exec` use when none is named (`-c`):
//! kubectl's `podcmd.FindOrDefaultContainerByName`.

use kclient::api::core::v1::Pod;
use kclient::apimachinery::Object;

/// The annotation that names a pod's default container for kubectl.
pub const DEFAULT_CONTAINER_ANNOTATION: &str = "kubectl.kubernetes.io/default-container";

/// The container kubectl uses when none is named: the one the
/// `kubectl.kubernetes.io/default-container` annotation names when the pod has it, else the
/// first. The second value is what kubectl prints on stderr then, if anything: `Defaulted
/// container "a" out of: a, b, i (init)` when the first was taken from a pod with other
/// containers. `None` for a pod without containers.
pub fn default_container(pod: &Pod) -> Option<(String, Option<String>)> {
    let spec = pod.spec.as_ref()?;
    if let Some(name) = pod.annotations().get(DEFAULT_CONTAINER_ANNOTATION)
        && !name.is_empty()
        && spec.containers.iter().any(|c| c.name == name)
    {
        return Some((name.to_owned(), None));
    }
    let first = spec.containers.first()?.name.to_string();
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let ephemeral = spec.ephemeral_containers.as_deref().unwrap_or_default();
    if spec.containers.len() == 1 && init.is_empty() && ephemeral.is_empty() {
        return Some((first, None));
    }
    // In kubectl's order: containers, then ephemeral, then init containers.
    let all: Vec<String> = spec
        .containers
        .iter()
        .map(|c| c.name.to_string())
        .chain(ephemeral.iter().map(|c| format!("{} (ephem)", c.name)))
        .chain(init.iter().map(|c| format!("{} (init)", c.name)))
        .collect();
    let notice = format!("Defaulted container {first:?} out of: {}", all.join(", "));
    Some((first, Some(notice)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_annotated_container_else_the_first_said_as_kubectl_says_it() {
        let one = pod(serde_json::json!({"spec": {"containers": [{"name": "main"}]}}));
        assert_eq!(default_container(&one), Some(("main".into(), None)));
        let many = pod(serde_json::json!({"spec": {
            "containers": [{"name": "a"}, {"name": "b"}],
            "initContainers": [{"name": "setup"}],
            "ephemeralContainers": [{"name": "debug"}]}}));
        assert_eq!(
            default_container(&many),
            Some((
                "a".into(),
                Some("Defaulted container \"a\" out of: a, b, debug (ephem), setup (init)".into())
            ))
        );
        let with_init = pod(serde_json::json!({"spec": {
            "containers": [{"name": "a"}], "initContainers": [{"name": "setup"}]}}));
        assert!(default_container(&with_init).unwrap().1.is_some());
        let annotated = pod(serde_json::json!({
            "metadata": {"annotations": {DEFAULT_CONTAINER_ANNOTATION: "b"}},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}));
        assert_eq!(default_container(&annotated), Some(("b".into(), None)));
        // An annotation naming no container of the pod is passed over.
        let wrong = pod(serde_json::json!({
            "metadata": {"annotations": {DEFAULT_CONTAINER_ANNOTATION: "gone"}},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}));
        assert_eq!(default_container(&wrong).unwrap().0, "a");
        assert_eq!(default_container(&pod(serde_json::json!({}))), None);
    }
}
