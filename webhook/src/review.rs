//! The `admission.k8s.io/v1` wire types (`k8s.io/api/admission/v1`): the [`AdmissionReview`]
//! the API server POSTs to a webhook, the [`AdmissionRequest`] in it and the
//! [`AdmissionResponse`] the webhook answers with, and the answers controller-runtime's
//! `admission` package builds ([`AdmissionResponse::allowed`], [`denied`](AdmissionResponse::denied),
//! [`errored`](AdmissionResponse::errored), [`with_patch`](AdmissionResponse::with_patch),
//! [`with_warnings`](AdmissionResponse::with_warnings)).
//!
//! `v1beta1` reviews have the same fields: a review is decoded whatever its `apiVersion`, and
//! the answer carries the request's `apiVersion` back (see [`AdmissionReview::answer`]).

use std::collections::BTreeMap;

use kclient_api::authentication::v1::UserInfo;
use kclient_apimachinery::{JsonPatch, Status, null_as_default};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `admission.k8s.io/v1`, the review version a webhook answers in unless asked in another.
pub const ADMISSION_V1: &str = "admission.k8s.io/v1";

/// What the API server sends a webhook and the webhook sends back (`AdmissionReview`): a
/// request going in, a response coming out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1` (or `v1beta1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `AdmissionReview`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The operation to admit, from the API server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<AdmissionRequest>,
    /// The webhook's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<AdmissionResponse>,
}

impl AdmissionReview {
    /// The review that answers this one with `response`: the same `apiVersion` (v1 when the
    /// request named none, as controller-runtime answers), the request's `uid` in the response,
    /// and no request.
    pub fn answer(&self, mut response: AdmissionResponse) -> AdmissionReview {
        if let Some(request) = &self.request {
            response.uid.clone_from(&request.uid);
        }
        AdmissionReview {
            api_version: if self.api_version.is_empty() {
                ADMISSION_V1.to_owned()
            } else {
                self.api_version.clone()
            },
            kind: "AdmissionReview".to_owned(),
            request: None,
            response: Some(response),
        }
    }
}

/// The kind of an object in a review (`metav1.GroupVersionKind`; the core group is `""`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReviewKind {
    /// The API group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// The resource of a review (`metav1.GroupVersionResource`; the core group is `""`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReviewResource {
    /// The API group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// The operation a review asks about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operation {
    /// `CREATE`.
    #[serde(rename = "CREATE")]
    Create,
    /// `UPDATE`.
    #[serde(rename = "UPDATE")]
    Update,
    /// `DELETE`.
    #[serde(rename = "DELETE")]
    Delete,
    /// `CONNECT` (exec, attach, port-forward, proxy).
    #[serde(rename = "CONNECT")]
    Connect,
    /// An operation this version does not know, as the server wrote it.
    #[serde(untagged)]
    Other(String),
}

impl Operation {
    /// The operation as the server writes it (`CREATE`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
            Operation::Other(other) => other,
        }
    }
}

/// An operation to admit (`AdmissionRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Identifies this review; the response must carry it back ([`AdmissionReview::answer`]
    /// does).
    #[serde(default)]
    pub uid: String,
    /// The kind of `object`, as the webhook registered for it (after conversion).
    #[serde(default, deserialize_with = "null_as_default")]
    pub kind: ReviewKind,
    /// The resource, as the webhook registered for it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub resource: ReviewResource,
    /// The subresource, if any (`status`, `scale`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sub_resource: String,
    /// The kind of the original request, when it differs from `kind` (an equivalent version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<ReviewKind>,
    /// The resource of the original request, when it differs from `resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<ReviewResource>,
    /// The subresource of the original request.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_sub_resource: String,
    /// The object's name; empty on a create whose name the server will generate.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's namespace; empty for cluster-scoped kinds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// What is being done.
    pub operation: Operation,
    /// Who asks.
    #[serde(default, deserialize_with = "null_as_default")]
    pub user_info: UserInfo,
    /// The object as it would be stored: set for `CREATE` and `UPDATE` (and `CONNECT`'s
    /// options object), `None` for `DELETE`.
    #[serde(default, skip_serializing_if = "is_absent")]
    pub object: Option<Value>,
    /// The object as it is: set for `UPDATE` and `DELETE`.
    #[serde(default, skip_serializing_if = "is_absent")]
    pub old_object: Option<Value>,
    /// Whether the request is a dry run: a webhook with side effects must not make them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`, ...).
    #[serde(default, skip_serializing_if = "is_absent")]
    pub options: Option<Value>,
}

fn is_absent(value: &Option<Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// The type of [`AdmissionResponse::patch`]: only `JSONPatch` exists.
pub const PATCH_TYPE_JSON_PATCH: &str = "JSONPatch";

/// A webhook's verdict (`AdmissionResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's `uid` (set by [`AdmissionReview::answer`]).
    #[serde(default)]
    pub uid: String,
    /// Whether the operation may go on.
    #[serde(default)]
    pub allowed: bool,
    /// Why: the code, reason and message the API server gives the client when not allowed.
    #[serde(default, rename = "status", skip_serializing_if = "Option::is_none")]
    pub result: Option<Status>,
    /// A JSON Patch (RFC 6902) to apply to the object: mutating webhooks only.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "base64_bytes")]
    pub patch: Vec<u8>,
    /// [`PATCH_TYPE_JSON_PATCH`] when there is a patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Annotations for the audit log, keys prefixed by the webhook's name by the server.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub audit_annotations: BTreeMap<String, String>,
    /// Warnings the API server passes to the client (a `Warning` header each).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub warnings: Vec<String>,
}

impl AdmissionResponse {
    /// Allows the operation (controller-runtime's `Allowed("")`: code 200).
    pub fn allowed() -> Self {
        AdmissionResponse {
            allowed: true,
            result: Some(Status {
                code: 200,
                ..Status::default()
            }),
            ..AdmissionResponse::default()
        }
    }

    /// Refuses the operation with `message` (controller-runtime's `Denied`: code 403, reason
    /// `Forbidden`); the client sees `admission webhook "NAME" denied the request: MESSAGE`.
    pub fn denied(message: impl Into<String>) -> Self {
        AdmissionResponse::from_status(Status {
            code: 403,
            reason: "Forbidden".to_owned(),
            message: message.into(),
            ..Status::default()
        })
    }

    /// Refuses the operation because the webhook failed (controller-runtime's `Errored`):
    /// `code` is an HTTP status (400 for a request it could not read, 500 for its own fault).
    pub fn errored(code: u16, message: impl Into<String>) -> Self {
        AdmissionResponse::from_status(Status {
            code: i32::from(code),
            message: message.into(),
            ..Status::default()
        })
    }

    /// Refuses the operation with `status` as the API server's answer (its code, reason,
    /// message and details; controller-runtime's verdict for an `APIStatus` error).
    pub fn from_status(status: Status) -> Self {
        AdmissionResponse {
            allowed: false,
            result: Some(status),
            ..AdmissionResponse::default()
        }
    }

    /// Adds `patch` to apply to the object (a mutating webhook's answer); an empty patch adds
    /// nothing.
    pub fn with_patch(mut self, patch: &JsonPatch) -> Self {
        if patch.0.is_empty() {
            return self;
        }
        // A list of plain operations always serializes.
        self.patch = serde_json::to_vec(patch).unwrap_or_default();
        self.patch_type = Some(PATCH_TYPE_JSON_PATCH.to_owned());
        self
    }

    /// Adds warnings for the client.
    pub fn with_warnings<I, S>(mut self, warnings: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.warnings.extend(warnings.into_iter().map(Into::into));
        self
    }
}

/// `[]byte` as Go's JSON writes it: standard base64.
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = Option::<String>::deserialize(d)?.unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::JsonPatchOperation;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_response_is_written_as_the_api_server_reads_it() {
        let incoming: AdmissionReview = serde_json::from_value(json!({
            "apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
            "request": {"uid": "abc", "operation": "CREATE",
                "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "userInfo": {"username": "u", "groups": ["g"]}, "dryRun": true,
                "object": {"metadata": {"name": "d"}}},
        }))
        .unwrap();
        let request = incoming.request.as_ref().unwrap();
        assert_eq!(request.operation, Operation::Create);
        assert_eq!(request.kind.kind, "Deployment");
        assert_eq!(request.dry_run, Some(true));
        let patch = JsonPatch(vec![JsonPatchOperation::Add {
            path: "/metadata/labels".into(),
            value: json!({"a": "b"}),
        }]);
        let answer = incoming.answer(
            AdmissionResponse::allowed()
                .with_patch(&patch)
                .with_warnings(["w"]),
        );
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({
                "apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                "response": {"uid": "abc", "allowed": true, "status": {"code": 200},
                    "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7ImEiOiJiIn19XQ==",
                    "patchType": "JSONPatch", "warnings": ["w"]},
            })
        );
        // An unknown operation is kept as written.
        let other: Operation = serde_json::from_value(json!("FUTURE")).unwrap();
        assert_eq!(other, Operation::Other("FUTURE".into()));
        assert_eq!(other.as_str(), "FUTURE");
        // A review with no version is answered in v1; an empty patch adds nothing.
        let answer = AdmissionReview::default()
            .answer(AdmissionResponse::denied("no").with_patch(&JsonPatch::default()));
        assert_eq!(answer.api_version, ADMISSION_V1);
        let response = answer.response.unwrap();
        assert!(response.patch.is_empty() && response.patch_type.is_none());
        assert_eq!(response.result.unwrap().reason, "Forbidden");
    }
}
