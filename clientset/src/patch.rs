//! [`Patch`]: the body of a PATCH request, one variant per patch type the API server accepts
//! (client-go passes a `types.PatchType` and raw bytes; here the two travel together).

use kclient_apimachinery::{Error, PatchOptions, PatchType};
use serde_json::Value;

/// A patch and its type.
///
/// ```
/// use kclient_clientset::Patch;
/// use serde_json::json;
///
/// let scale_up = Patch::Merge(json!({"spec": {"replicas": 3}}));
/// let relabel = Patch::Json(json!([{"op": "add", "path": "/metadata/labels/tier", "value": "web"}]));
/// assert_eq!(scale_up.patch_type().content_type(), "application/merge-patch+json");
/// assert_eq!(relabel.patch_type().content_type(), "application/json-patch+json");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// A JSON Patch (RFC 6902): an array of operations.
    Json(Value),
    /// A JSON merge patch (RFC 7386): a partial object where `null` deletes.
    Merge(Value),
    /// A strategic merge patch: like a merge patch, but lists merge by key where the type's
    /// schema says so. Built-in types only.
    StrategicMerge(Value),
    /// A server-side apply configuration: the fields the field manager owns. Sent as JSON
    /// with the `application/apply-patch+yaml` content type (JSON is YAML).
    Apply(Value),
}

impl Patch {
    /// The patch type (and so the request's content type).
    pub fn patch_type(&self) -> PatchType {
        match self {
            Patch::Json(_) => PatchType::Json,
            Patch::Merge(_) => PatchType::Merge,
            Patch::StrategicMerge(_) => PatchType::StrategicMerge,
            Patch::Apply(_) => PatchType::Apply,
        }
    }

    fn value(&self) -> &Value {
        match self {
            Patch::Json(v) | Patch::Merge(v) | Patch::StrategicMerge(v) | Patch::Apply(v) => v,
        }
    }

    /// The request body.
    pub fn to_body(&self) -> Result<Vec<u8>, Error> {
        serde_json::to_vec(self.value())
            .map_err(|e| Error::invalid_request(format!("cannot serialize the patch: {e}")))
    }

    /// Checks what the server would reject anyway, before sending: an apply patch needs a
    /// field manager, `force` is only for apply patches, and a JSON patch is an array.
    pub(crate) fn check(&self, opts: &PatchOptions) -> Result<(), Error> {
        let no_manager = opts.field_manager.as_deref().unwrap_or("").is_empty();
        match self {
            Patch::Apply(_) if no_manager => {
                return Err(Error::invalid_request(
                    "PatchOptions.fieldManager is required for apply requests",
                ));
            }
            Patch::Json(v) if !v.is_array() => {
                return Err(Error::invalid_request(
                    "a JSON patch must be an array of operations",
                ));
            }
            _ => {}
        }
        if opts.force.is_some() && !matches!(self, Patch::Apply(_)) {
            return Err(Error::invalid_request(
                "force may only be set for apply patches",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_and_types() {
        let p =
            Patch::StrategicMerge(json!({"spec": {"containers": [{"name": "a", "image": "b"}]}}));
        assert_eq!(p.patch_type(), PatchType::StrategicMerge);
        assert_eq!(
            String::from_utf8(p.to_body().unwrap()).unwrap(),
            r#"{"spec":{"containers":[{"image":"b","name":"a"}]}}"#
        );
        assert_eq!(
            Patch::Apply(json!({})).patch_type().content_type(),
            "application/apply-patch+yaml"
        );
    }

    #[test]
    fn checks_options_before_sending() {
        let apply = Patch::Apply(json!({"metadata": {"name": "x"}}));
        assert!(
            apply
                .check(&PatchOptions::default())
                .unwrap_err()
                .is_invalid_request()
        );
        assert!(apply.check(&PatchOptions::apply("me").force(true)).is_ok());
        let merge = Patch::Merge(json!({}));
        assert!(merge.check(&PatchOptions::default().force(true)).is_err());
        assert!(merge.check(&PatchOptions::default()).is_ok());
        assert!(
            Patch::Json(json!({"op": "add"}))
                .check(&PatchOptions::default())
                .is_err()
        );
    }
}
