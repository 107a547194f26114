//! Applying a PATCH body to a stored object as kube-apiserver does, with kclient's own patch
//! code: JSON patches with the semantics of the server's json-patch library
//! ([`apply_json_patch`]), JSON merge patches ([`apply_merge_patch`]) and strategic merge
//! patches ([`apply_strategic_merge_patch`] over the generated patch tables). Server-side
//! apply bodies are decoded here and merged by the tracker.

use kclient_apimachinery::meta::FieldMeta;
use kclient_apimachinery::{
    Error, PatchType, Status, StatusReason, apply_json_patch, apply_merge_patch,
    apply_strategic_merge_patch,
};
use serde_json::Value;

use crate::registry::ResourceInfo;

/// The most operations the server takes in one JSON patch.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The patch type of a `Content-Type`, or the server's 415 for any other.
pub(crate) fn patch_type(content_type: &str) -> Result<PatchType, Error> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    [
        PatchType::Json,
        PatchType::Merge,
        PatchType::StrategicMerge,
        PatchType::Apply,
    ]
    .into_iter()
    .find(|t| t.content_type() == media)
    .ok_or_else(|| unsupported_media_type(content_type))
}

fn unsupported_media_type(content_type: &str) -> Error {
    with_empty_details(Status::failure(
        415,
        StatusReason::UnsupportedMediaType,
        format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, \
             application/apply-patch+yaml (got {content_type:?})"
        ),
    ))
}

/// The server's generic errors carry empty details.
fn with_empty_details(mut status: Status) -> Error {
    status.details = Some(kclient_apimachinery::StatusDetails::default());
    Error::from_status(status)
}

/// Decodes a patch body of `patch_type` for `info` (strategic merge patches are refused for
/// custom resources with 415, as the server refuses them).
pub(crate) fn decode(
    info: &ResourceInfo,
    patch_type: PatchType,
    body: &[u8],
) -> Result<Value, Error> {
    match patch_type {
        // Here the server's 415 carries no details.
        PatchType::StrategicMerge if info.patch_fields.is_none() => {
            Err(Error::from_status(Status::failure(
                415,
                StatusReason::UnsupportedMediaType,
                format!(
                    "the body of the request was in an unknown format - accepted media types \
                     include: application/json-patch+json, application/merge-patch+json, \
                     application/apply-patch+yaml (got {:?})",
                    patch_type.content_type()
                ),
            )))
        }
        PatchType::Apply => serde_yaml_ng::from_slice::<Value>(body)
            .map_err(|e| Error::new_bad_request(format!("error decoding YAML: {e}"))),
        _ => serde_json::from_slice::<Value>(body)
            .map_err(|e| Error::new_bad_request(format!("error decoding patch: {e}"))),
    }
}

/// Applies a decoded JSON, merge or strategic merge patch to `existing`.
pub(crate) fn apply(
    info: &ResourceInfo,
    patch_type: PatchType,
    patch: &Value,
    existing: &Value,
) -> Result<Value, Error> {
    match patch_type {
        PatchType::Json => {
            // The server decodes the patch, then refuses one of too many operations with 413
            // before applying any.
            if let Some(ops) = patch.as_array()
                && ops.len() > MAX_JSON_PATCH_OPERATIONS
                && ops.iter().all(|op| op.is_object() || op.is_null())
            {
                return Err(Error::from_status(Status::failure(
                    413,
                    StatusReason::RequestEntityTooLarge,
                    format!(
                        "Request entity too large: The allowed maximum operations in a JSON \
                         patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        ops.len()
                    ),
                )));
            }
            let patched = apply_json_patch(existing, patch).map_err(|e| {
                if e.is_malformed() {
                    Error::new_bad_request(format!("error decoding patch: {e}"))
                } else {
                    unprocessable(&e.to_string())
                }
            })?;
            // A `replace` of the whole object by an array applies; the server then fails to
            // decode the result into the object's type, with 422.
            if !patched.is_object() {
                return Err(Error::new_invalid(
                    "",
                    "",
                    "",
                    &[("patch", "the patched object is not a JSON object")],
                ));
            }
            Ok(patched)
        }
        PatchType::Merge => {
            if !patch.is_object() {
                return Err(Error::new_bad_request(
                    "invalid merge patch: the patch is not a JSON object",
                ));
            }
            let mut doc = existing.clone();
            apply_merge_patch(&mut doc, patch);
            Ok(doc)
        }
        PatchType::StrategicMerge => {
            let fields: &'static [FieldMeta] = info.patch_fields.unwrap_or(&[]);
            apply_strategic_merge_patch(existing, patch, fields)
                .map_err(|e| Error::new_bad_request(e.to_string()))
        }
        PatchType::Apply => Err(Error::invalid_request(
            "server-side apply is merged by the tracker",
        )),
    }
}

/// The server's answer to a patch that does not apply (422).
fn unprocessable(message: &str) -> Error {
    with_empty_details(Status::failure(422, StatusReason::Invalid, message))
}
