//! [`PartialObjectMetadata`], `metav1.PartialObjectMetadata`: only the metadata of an object,
//! what metadata-only lists, watches and informers receive
//! (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`).

use crate::meta::IStr;
use crate::meta::v1::ObjectMeta;

/// The `Accept` header that asks the server for an object (or watch events) as
/// [`PartialObjectMetadata`], falling back to the whole object as JSON where the server does not
/// offer it (the whole object still decodes as `PartialObjectMetadata`).
pub const ACCEPT_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// The `Accept` header that asks the server for a list as [`PartialObjectMetadataList`].
pub const ACCEPT_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// [`ACCEPT_METADATA`] asking for protobuf first (client-go's metadata client sends the same):
/// the server answers metadata-only protobuf, or JSON where it has no protobuf form (custom
/// resources), which [`ACCEPT_METADATA`]'s first choice then gives.
pub const ACCEPT_METADATA_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
     application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// [`ACCEPT_METADATA_LIST`] asking for protobuf first.
pub const ACCEPT_METADATA_LIST_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
     application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// An object's metadata without its spec or status.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PartialObjectMetadata {
    /// `apiVersion` as sent by the server (`meta.k8s.io/v1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<IStr>,
    /// `kind` as sent by the server (`PartialObjectMetadata`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<IStr>,
    /// The object's metadata.
    pub metadata: ObjectMeta,
}

crate::impl_object!(PartialObjectMetadata);

/// `metav1.PartialObjectMetadataList`: a metadata-only list response.
pub type PartialObjectMetadataList = crate::ObjectList<PartialObjectMetadata>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;

    #[test]
    fn decodes_a_metadata_only_list() {
        let l: PartialObjectMetadataList = serde_json::from_str(
            r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",
                "metadata":{"resourceVersion":"7"},
                "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#,
        )
        .unwrap();
        assert_eq!(l.items.len(), 2);
        assert_eq!(l.items[1].name(), "b");
    }

    #[test]
    fn decodes_a_metadata_only_object() {
        let p: PartialObjectMetadata = serde_json::from_str(
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
                "metadata":{"name":"x","namespace":"y"},"spec":{"ignored":1}}"#,
        )
        .unwrap();
        assert_eq!((p.name(), p.namespace()), ("x", "y"));
        assert_eq!(p.kind.as_deref(), Some("PartialObjectMetadata"));
    }
}
