//! `Action`: one request the fake received, recorded in order (client-go's `testing.Action`),
//! so a test can assert what a controller sent.

use kclient_apimachinery::PatchType;
use serde_json::Value;

/// One recorded request: verb, resource, namespace, name, subresource, patch type and body.
///
/// Verbs are client-go's: `get`, `list`, `watch`, `create`, `update`, `patch` (server-side
/// apply too, with [`PatchType::Apply`]), `delete` and `delete-collection`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The verb.
    pub verb: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The resource (plural), such as `configmaps`.
    pub resource: String,
    /// The subresource, such as `status`; `""` for the object itself.
    pub subresource: String,
    /// The namespace; `""` for cluster-scoped resources and requests across namespaces.
    pub namespace: String,
    /// The object's name; `""` for collections (and for creates, whose name is in the body).
    pub name: String,
    /// The patch type of a `patch`.
    pub patch_type: Option<PatchType>,
    /// The decoded body (the object of a create or update, the patch of a patch, the
    /// `DeleteOptions` of a delete), `None` when the request had none.
    pub body: Option<Value>,
    /// The query parameters, such as `labelSelector`, `fieldManager` or `dryRun`.
    pub query: Vec<(String, String)>,
}

impl Action {
    /// Whether this action has `verb` (or `verb` is `*`) on `resource` (or `resource` is `*`);
    /// `resource` may name a subresource as `pods/status`.
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        let verb_ok = verb == "*" || verb == self.verb;
        let resource_ok = resource == "*"
            || match resource.split_once('/') {
                Some((r, sub)) => r == self.resource && sub == self.subresource,
                None => resource == self.resource && self.subresource.is_empty(),
            };
        verb_ok && resource_ok
    }

    /// The value of a query parameter.
    pub fn query_param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_by_verb_resource_and_subresource() {
        let a = Action {
            verb: "update".into(),
            group: String::new(),
            version: "v1".into(),
            resource: "pods".into(),
            subresource: "status".into(),
            namespace: "n".into(),
            name: "p".into(),
            patch_type: None,
            body: None,
            query: vec![("fieldManager".into(), "me".into())],
        };
        assert!(a.matches("update", "pods/status"));
        assert!(a.matches("*", "*"));
        assert!(!a.matches("update", "pods"));
        assert!(!a.matches("patch", "pods/status"));
        assert_eq!(a.query_param("fieldManager"), Some("me"));
    }
}
