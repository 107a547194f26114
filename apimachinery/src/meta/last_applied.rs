//! The annotation in which client-side `kubectl apply` keeps the configuration it applied, and
//! how object metadata's `Debug` keeps it out of logs.
//!
//! `kubectl apply` (without `--server-side`) writes the whole object it was given into this
//! annotation. For a Secret that is the Secret's `data` or `stringData`, in clear text. The
//! Secret's own `Debug` hides those fields, but it prints its metadata, and a metadata-only
//! cache of Secrets (`PartialObjectMetadata`) holds nothing but metadata. So every `Debug` of
//! object metadata (`ObjectMeta`, its apply configuration, an `Unstructured`'s) shows this
//! annotation's value as `<redacted>`, whatever the object's kind. The value itself stays in
//! the object: read it with `annotations().get(LAST_APPLIED_CONFIGURATION_ANNOTATION)`.

use std::fmt;

use crate::StringMap;

/// The annotation in which client-side `kubectl apply` keeps the configuration it last applied
/// (for a Secret, its data in clear text; see the module docs).
pub const LAST_APPLIED_CONFIGURATION_ANNOTATION: &str =
    "kubectl.kubernetes.io/last-applied-configuration";

/// What the `Debug` of object metadata shows for the value of
/// [`LAST_APPLIED_CONFIGURATION_ANNOTATION`].
pub(crate) const REDACTED: &str = "<redacted>";

/// The annotations of object metadata as its `Debug` shows them: a map, with the value of
/// [`LAST_APPLIED_CONFIGURATION_ANNOTATION`] as `<redacted>`. For generated code.
#[doc(hidden)]
pub fn debug_annotations<M: StringMap>(annotations: Option<&M>) -> Option<DebugAnnotations<'_>> {
    annotations.map(|map| DebugAnnotations(map))
}

/// See [`debug_annotations`].
#[doc(hidden)]
pub struct DebugAnnotations<'a>(&'a dyn StringMap);

impl fmt::Debug for DebugAnnotations<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (key, value) in self.0.entries() {
            if key == LAST_APPLIED_CONFIGURATION_ANNOTATION {
                map.entry(&key, &REDACTED);
            } else {
                map.entry(&key, &value);
            }
        }
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::PartialObjectMetadata;
    use crate::meta::v1::ObjectMeta;

    /// Typed metadata, alone or as a metadata-only object (what a metadata informer on Secrets
    /// caches), hides the annotation's value and shows the rest.
    #[test]
    fn metadata_debug_hides_the_last_applied_configuration() {
        const MARKER: &str = "c2VjcmV0LWZyb20ta3ViZWN0bC1hcHBseQ==";
        let applied = format!(r#"{{"apiVersion":"v1","data":{{"password":"{MARKER}"}}}}"#);
        let meta: ObjectMeta = serde_json::from_value(serde_json::json!({
            "name": "db",
            "annotations": {
                LAST_APPLIED_CONFIGURATION_ANNOTATION: applied,
                "team": "payments",
            },
        }))
        .unwrap();
        let partial = PartialObjectMetadata {
            metadata: meta.clone(),
            ..Default::default()
        };
        for shown in [
            format!("{meta:?}"),
            format!("{meta:#?}"),
            format!("{partial:?}"),
        ] {
            assert!(!shown.contains(MARKER), "{shown}");
            assert!(shown.contains(REDACTED), "{shown}");
            assert!(
                shown.contains("\"team\": \"payments\"") && shown.contains("\"db\""),
                "{shown}"
            );
        }
        // Without annotations it prints as before: `None`.
        let bare = ObjectMeta::default();
        assert!(format!("{bare:?}").contains("annotations: None"));
    }
}
