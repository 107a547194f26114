//! `meta/v1` `Status` and `ListMeta`, written by hand because every layer needs them before
//! (and independently of) the generated types: the API server returns a `Status` for every
//! failed request and inside watch `ERROR` events, and every list carries a `ListMeta`.
//!
//! Decoding is tolerant, as Go's is: every field is optional, `null` reads as absent and
//! unknown fields are ignored. Encoding omits empty fields (Go's `omitempty`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::de::{is_zero_i32, null_as_default};

/// Metadata of a list response (`metav1.ListMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// The resource version the list was served at; start a watch from here.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub resource_version: String,
    /// The token for the next page of a paginated list, `""` on the last page.
    #[serde(
        default,
        rename = "continue",
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub continue_token: String,
    /// The number of items left after this page, when the server could count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
    /// Deprecated and no longer set by servers since 1.20.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub self_link: String,
}

/// The result of an operation that returns no object, most often a failure
/// (`metav1.Status`).
///
/// A [`crate::Error`] built from a response carries one; see [`crate::Error::status`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `Status`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `v1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// List metadata; servers leave it empty in practice.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_empty_list_meta"
    )]
    pub metadata: ListMeta,
    /// `Success` or `Failure`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub status: String,
    /// A human-readable description of the result.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    /// A machine-readable reason, such as `NotFound`; `""` when unknown. See
    /// [`Status::status_reason`] for the typed form.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reason: String,
    /// Extra data about the reason, such as the object's name and kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The suggested HTTP return code, `0` if not set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i32"
    )]
    pub code: i32,
}

fn is_empty_list_meta(meta: &ListMeta) -> bool {
    *meta == ListMeta::default()
}

impl Status {
    /// `status` of a successful operation.
    pub const SUCCESS: &'static str = "Success";
    /// `status` of a failed operation.
    pub const FAILURE: &'static str = "Failure";

    /// A failed `Status` with the given code, reason and message, as the API server builds
    /// them.
    pub fn failure(code: u16, reason: StatusReason, message: impl Into<String>) -> Self {
        Status {
            kind: "Status".to_owned(),
            api_version: "v1".to_owned(),
            status: Self::FAILURE.to_owned(),
            message: message.into(),
            reason: reason.as_str().to_owned(),
            code: i32::from(code),
            ..Status::default()
        }
    }

    /// Whether `status` is `Success`.
    pub fn is_success(&self) -> bool {
        self.status == Self::SUCCESS
    }

    /// Whether `status` is `Failure`.
    pub fn is_failure(&self) -> bool {
        self.status == Self::FAILURE
    }

    /// The reason as a [`StatusReason`]; [`StatusReason::Unknown`] for `""` and for reasons
    /// this version does not know.
    pub fn status_reason(&self) -> StatusReason {
        StatusReason::from_wire(&self.reason)
    }

    /// The cause of the given type (`details.causes[].reason`), if any.
    pub fn cause(&self, cause_type: &str) -> Option<&StatusCause> {
        self.details
            .as_ref()?
            .causes
            .iter()
            .find(|c| c.cause_type == cause_type)
    }
}

/// Extra data about a [`Status`] (`metav1.StatusDetails`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The name of the object the status is about, if any.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// The API group of that object.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub group: String,
    /// The kind (or, in many server errors, the resource) of that object.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// The UID of that object, if known.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub uid: String,
    /// The individual causes, such as one per invalid field.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub causes: Vec<StatusCause>,
    /// Seconds the client should wait before retrying, `0` if the server did not say.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i32"
    )]
    pub retry_after_seconds: i32,
}

/// One cause of a failure (`metav1.StatusCause`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// The cause type, such as `FieldValueInvalid` or `ResourceVersionTooLarge`; on the wire
    /// this is the `reason` field.
    #[serde(
        default,
        rename = "reason",
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub cause_type: String,
    /// A human-readable description of the cause.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    /// The field path the cause is about, such as `spec.replicas`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub field: String,
}

impl StatusCause {
    /// The cause type the API server reports when a list or watch asked for a resource
    /// version newer than it has (`metav1.CauseTypeResourceVersionTooLarge`).
    pub const RESOURCE_VERSION_TOO_LARGE: &'static str = "ResourceVersionTooLarge";
    /// The cause type the client adds when the response was not a `Status`
    /// (`metav1.CauseTypeUnexpectedServerResponse`).
    pub const UNEXPECTED_SERVER_RESPONSE: &'static str = "UnexpectedServerResponse";
    /// A field value was not valid (`metav1.CauseTypeFieldValueInvalid`).
    pub const FIELD_VALUE_INVALID: &'static str = "FieldValueInvalid";
    /// A required field was missing (`metav1.CauseTypeFieldValueRequired`).
    pub const FIELD_VALUE_REQUIRED: &'static str = "FieldValueRequired";
    /// A server-side apply conflict on a field (`metav1.CauseTypeFieldManagerConflict`).
    pub const FIELD_MANAGER_CONFLICT: &'static str = "FieldManagerConflict";
}

/// The machine-readable reason of a failed [`Status`] (`metav1.StatusReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusReason {
    /// No reason given, or one this version does not know.
    Unknown,
    /// 401: the client must authenticate.
    Unauthorized,
    /// 403: the authenticated user may not perform the action.
    Forbidden,
    /// 404: the resource does not exist.
    NotFound,
    /// 409: a create found an object of that name already.
    AlreadyExists,
    /// 409: an update was made against an old version of the object.
    Conflict,
    /// 410: the item is no longer available (deprecated in favour of `Expired`).
    Gone,
    /// 422: the object failed validation.
    Invalid,
    /// 500 (usually): the server could not complete the request in time; retry.
    ServerTimeout,
    /// 500: the server failed to read or decode stored data.
    StoreReadError,
    /// 504: the request did not finish within its timeout.
    Timeout,
    /// 429: too many requests; retry later.
    TooManyRequests,
    /// 400: the request was malformed.
    BadRequest,
    /// 405: the action is not supported on this resource.
    MethodNotAllowed,
    /// 406: the server cannot produce an accepted content type.
    NotAcceptable,
    /// 413: the request body was too large.
    RequestEntityTooLarge,
    /// 415: the request's content type is not supported.
    UnsupportedMediaType,
    /// 500: an internal server error.
    InternalError,
    /// 410: the requested resource version is too old (compacted).
    Expired,
    /// 503: the service is unavailable.
    ServiceUnavailable,
}

impl StatusReason {
    const ALL: [StatusReason; 20] = [
        StatusReason::Unknown,
        StatusReason::Unauthorized,
        StatusReason::Forbidden,
        StatusReason::NotFound,
        StatusReason::AlreadyExists,
        StatusReason::Conflict,
        StatusReason::Gone,
        StatusReason::Invalid,
        StatusReason::ServerTimeout,
        StatusReason::StoreReadError,
        StatusReason::Timeout,
        StatusReason::TooManyRequests,
        StatusReason::BadRequest,
        StatusReason::MethodNotAllowed,
        StatusReason::NotAcceptable,
        StatusReason::RequestEntityTooLarge,
        StatusReason::UnsupportedMediaType,
        StatusReason::InternalError,
        StatusReason::Expired,
        StatusReason::ServiceUnavailable,
    ];

    /// The wire form, such as `NotFound`; `""` for [`StatusReason::Unknown`].
    pub fn as_str(self) -> &'static str {
        match self {
            StatusReason::Unknown => "",
            StatusReason::Unauthorized => "Unauthorized",
            StatusReason::Forbidden => "Forbidden",
            StatusReason::NotFound => "NotFound",
            StatusReason::AlreadyExists => "AlreadyExists",
            StatusReason::Conflict => "Conflict",
            StatusReason::Gone => "Gone",
            StatusReason::Invalid => "Invalid",
            StatusReason::ServerTimeout => "ServerTimeout",
            StatusReason::StoreReadError => "StorageReadError",
            StatusReason::Timeout => "Timeout",
            StatusReason::TooManyRequests => "TooManyRequests",
            StatusReason::BadRequest => "BadRequest",
            StatusReason::MethodNotAllowed => "MethodNotAllowed",
            StatusReason::NotAcceptable => "NotAcceptable",
            StatusReason::RequestEntityTooLarge => "RequestEntityTooLarge",
            StatusReason::UnsupportedMediaType => "UnsupportedMediaType",
            StatusReason::InternalError => "InternalError",
            StatusReason::Expired => "Expired",
            StatusReason::ServiceUnavailable => "ServiceUnavailable",
        }
    }

    /// Reads the wire form; unknown strings give [`StatusReason::Unknown`].
    pub fn from_wire(reason: &str) -> StatusReason {
        if reason.is_empty() {
            return StatusReason::Unknown;
        }
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == reason)
            .unwrap_or(StatusReason::Unknown)
    }
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusReason::Unknown => f.write_str("Unknown"),
            other => f.write_str(other.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_server_status_with_causes() {
        let json = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"Deployment.apps \"x\" is invalid: spec.replicas: Invalid value: -1",
            "reason":"Invalid","details":{"name":"x","group":"apps","kind":"Deployment",
            "causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1","field":"spec.replicas"}]},
            "code":422,"futureField":{"a":1}}"#;
        let status: Status = serde_json::from_str(json).unwrap();
        assert!(status.is_failure());
        assert_eq!(status.code, 422);
        assert_eq!(status.status_reason(), StatusReason::Invalid);
        let details = status.details.as_ref().unwrap();
        assert_eq!(details.kind, "Deployment");
        let cause = status.cause(StatusCause::FIELD_VALUE_INVALID).unwrap();
        assert_eq!(cause.field, "spec.replicas");
        assert!(status.cause("Other").is_none());
    }

    #[test]
    fn tolerates_nulls_and_missing_fields() {
        let status: Status = serde_json::from_str(
            r#"{"message":null,"details":{"causes":null,"retryAfterSeconds":null},"code":null}"#,
        )
        .unwrap();
        assert_eq!(status.message, "");
        assert_eq!(status.code, 0);
        assert_eq!(status.details.unwrap().retry_after_seconds, 0);
        let empty: Status = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Status::default());
    }

    #[test]
    fn encodes_without_empty_fields() {
        let status = Status::failure(404, StatusReason::NotFound, "pods \"p\" not found");
        let json = serde_json::to_string(&status).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" not found","reason":"NotFound","code":404}"#
        );
    }

    #[test]
    fn list_meta_round_trips() {
        let meta: ListMeta = serde_json::from_str(
            r#"{"resourceVersion":"42","continue":"abc","remainingItemCount":7}"#,
        )
        .unwrap();
        assert_eq!(meta.resource_version, "42");
        assert_eq!(meta.continue_token, "abc");
        assert_eq!(meta.remaining_item_count, Some(7));
        let back = serde_json::to_string(&meta).unwrap();
        assert_eq!(
            back,
            r#"{"resourceVersion":"42","continue":"abc","remainingItemCount":7}"#
        );
    }

    #[test]
    fn every_reason_round_trips_through_its_wire_form() {
        for reason in StatusReason::ALL {
            assert_eq!(StatusReason::from_wire(reason.as_str()), reason);
        }
        assert_eq!(
            StatusReason::from_wire("SomethingNew"),
            StatusReason::Unknown
        );
    }
}
