//! The error of a failed Kubernetes API request, shared by `rest`, `clientset`, `dynamic`,
//! `discovery` and `cache`: client-go's `apierrors.StatusError` plus the transport and decode
//! failures that client-go reports as plain Go errors.
//!
//! [`Error`] is opaque: build it with the constructors (the `rest` crate does, from responses),
//! inspect it with the `is_*` checks, which follow `k8s.io/apimachinery/pkg/api/errors`: a
//! check matches the status reason, or, when the server gave no reason this version knows,
//! the HTTP code.
//!
//! Display shows the server's message, or for a failure on the client side what failed and
//! why, specific enough to act on: a transport failure shows its kind and its cause's message
//! (`connection refused by 10.0.0.1:6443 ...`, `request failed: ... the server's certificate is
//! not trusted ...`), a decode failure what was decoded and the decoder's message. It never
//! includes request bodies or headers. The cause stays reachable through
//! [`std::error::Error::source`].

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::status::{Status, StatusCause, StatusDetails, StatusReason};

/// The most bytes of a non-`Status` error response kept in the message, as client-go's
/// `maxUnstructuredResponseTextBytes`.
const MAX_UNSTRUCTURED_BODY: usize = 2048;

/// A failed Kubernetes API request: an error status from the server, a transport failure,
/// a response that could not be decoded, or a request the client refused to send.
///
/// Cheap to clone (the source is shared), so a watch or an informer can hand the same error to
/// several observers.
#[derive(Clone)]
pub struct Error {
    inner: Box<Kind>,
}

// `Error` boxes the whole `Kind`, so the size of its largest variant costs nothing on the
// success path.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
enum Kind {
    /// The server answered with an error; `Status::code` holds the HTTP code.
    Api(Status),
    /// The request did not get a response.
    Transport {
        kind: TransportErrorKind,
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// A response (or watch event) did not decode.
    Decode {
        what: String,
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// The client refused to build the request.
    InvalidRequest(String),
    /// A failure of another crate or layer (a cache index, a kubeconfig, a leader election
    /// setting), converted so that `?` works across crates.
    Other(Arc<dyn StdError + Send + Sync>),
}

/// What kind of transport failure an [`Error::transport`] is, as client-go's `utilnet`
/// distinguishes them for its retry decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The server refused the connection (it is down or restarting).
    ConnectionRefused,
    /// The connection was reset or closed early (`ECONNRESET`, unexpected EOF, HTTP/2
    /// connection lost): client-go retries GETs on these.
    ConnectionReset,
    /// The request or connection timed out on the client side.
    Timeout,
    /// Any other failure: DNS, TLS, a malformed response, ...
    Other,
}

/// A response that was not a `Status`, for [`Error::from_server_response`]
/// (the inputs of client-go's `NewGenericServerResponse`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerResponse<'a> {
    /// The HTTP status code.
    pub code: u16,
    /// The HTTP method, such as `POST` (a 409 on `POST` means "already exists").
    pub verb: &'a str,
    /// The response body; at most 2048 bytes of it are kept, and only if it is text.
    pub body: &'a [u8],
    /// The response's `Content-Type`; the body counts as text when this is `text/*`.
    pub content_type: Option<&'a str>,
    /// The `Retry-After` header in seconds, `0` if absent.
    pub retry_after_seconds: u32,
    /// The API group of the resource requested, `""` for the core group.
    pub group: &'a str,
    /// The resource requested, such as `pods`; `""` if not a resource request.
    pub resource: &'a str,
    /// The name of the object requested, `""` if none.
    pub name: &'a str,
}

impl Error {
    // ----- constructors -----

    /// An error from a `Status` the server returned, or that arrived in a watch `ERROR` event
    /// (client-go's `FromObject`).
    pub fn from_status(status: Status) -> Error {
        Error::new(Kind::Api(status))
    }

    /// An error from a `Status` decoded from an error response: `status.code` is filled from
    /// the HTTP code when the server left it unset.
    pub fn from_response_status(http_code: u16, mut status: Status) -> Error {
        if status.code == 0 {
            status.code = i32::from(http_code);
        }
        Error::from_status(status)
    }

    /// An error from an error response that was not a `Status` (an HTML page from a proxy, a
    /// plain-text message), client-go's `NewGenericServerResponse`: the HTTP code is mapped to
    /// a reason and a message, and the body, if text, is kept (capped at 2048 bytes) as an
    /// `UnexpectedServerResponse` cause.
    pub fn from_server_response(response: ServerResponse<'_>) -> Error {
        let body = &response.body[..response.body.len().min(MAX_UNSTRUCTURED_BODY)];
        let server_message = if is_text_content_type(response.content_type) {
            String::from_utf8_lossy(body).trim().to_owned()
        } else {
            "unknown".to_owned()
        };
        let (reason, mut message) =
            generic_reason_and_message(response.code, response.verb, &server_message);
        let qualified = qualified_resource(response.group, response.resource);
        if !qualified.is_empty() {
            let verb = response.verb.to_ascii_lowercase();
            message = if response.name.is_empty() {
                format!("{message} ({verb} {qualified})")
            } else {
                format!("{message} ({verb} {qualified} {})", response.name)
            };
        }
        let mut status = Status::failure(response.code, reason, message);
        status.details = Some(StatusDetails {
            name: response.name.to_owned(),
            group: response.group.to_owned(),
            kind: response.resource.to_owned(),
            causes: vec![StatusCause {
                cause_type: StatusCause::UNEXPECTED_SERVER_RESPONSE.to_owned(),
                message: server_message,
                field: String::new(),
            }],
            retry_after_seconds: i32::try_from(response.retry_after_seconds).unwrap_or(i32::MAX),
            ..StatusDetails::default()
        });
        Error::from_status(status)
    }

    /// A request that got no response: the connection was refused, reset, timed out, or
    /// failed otherwise. `source` is the underlying failure, reachable through
    /// [`std::error::Error::source`].
    pub fn transport(
        kind: TransportErrorKind,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Error {
        Error::new(Kind::Transport {
            kind,
            source: Arc::from(source.into()),
        })
    }

    /// A response that did not decode; `what` names what was being decoded (such as
    /// `"Pod"`, `"watch event"` or `"PodList"`).
    pub fn decode(what: impl Into<String>, source: impl StdError + Send + Sync + 'static) -> Error {
        Error::new(Kind::Decode {
            what: what.into(),
            source: Arc::new(source),
        })
    }

    /// A request the client refused to send, such as `"resource name may not be empty"`.
    pub fn invalid_request(message: impl Into<String>) -> Error {
        Error::new(Kind::InvalidRequest(message.into()))
    }

    /// Any other failure, so that one error type carries every failure a controller meets
    /// (as [`std::io::Error::other`] does for I/O). kclient's crates convert their own errors
    /// with this through `From`, so `?` works across them; errors that wrap an API error (a
    /// discovery request, a watch) convert to that API error instead, keeping its `is_*`
    /// answers. Display shows `error`'s message; [`Error::downcast_ref`] gives it back.
    pub fn other(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Error {
        Error::new(Kind::Other(Arc::from(error.into())))
    }

    /// A NotFound error as the API server builds it (client-go's `NewNotFound`), for caches and
    /// listers that answer from memory.
    pub fn new_not_found(group: &str, resource: &str, name: &str) -> Error {
        let qualified = qualified_resource(group, resource);
        let mut status = Status::failure(
            404,
            StatusReason::NotFound,
            format!("{qualified} \"{name}\" not found"),
        );
        status.details = Some(details(group, resource, name));
        Error::from_status(status)
    }

    /// An AlreadyExists error (client-go's `NewAlreadyExists`).
    pub fn new_already_exists(group: &str, resource: &str, name: &str) -> Error {
        let qualified = qualified_resource(group, resource);
        let mut status = Status::failure(
            409,
            StatusReason::AlreadyExists,
            format!("{qualified} \"{name}\" already exists"),
        );
        status.details = Some(details(group, resource, name));
        Error::from_status(status)
    }

    /// A Conflict error (client-go's `NewConflict`).
    pub fn new_conflict(group: &str, resource: &str, name: &str, message: &str) -> Error {
        let qualified = qualified_resource(group, resource);
        let mut status = Status::failure(
            409,
            StatusReason::Conflict,
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {message}"),
        );
        status.details = Some(details(group, resource, name));
        Error::from_status(status)
    }

    /// An Expired error (410), as a list or watch from a compacted resource version gets
    /// (client-go's `NewResourceExpired`).
    pub fn new_resource_expired(message: impl Into<String>) -> Error {
        Error::from_status(Status::failure(410, StatusReason::Expired, message))
    }

    /// A TooManyRequests error (429) with a suggested delay (client-go's `NewTooManyRequests`).
    pub fn new_too_many_requests(message: impl Into<String>, retry_after_seconds: u32) -> Error {
        let mut status = Status::failure(429, StatusReason::TooManyRequests, message);
        status.details = Some(StatusDetails {
            retry_after_seconds: i32::try_from(retry_after_seconds).unwrap_or(i32::MAX),
            ..StatusDetails::default()
        });
        Error::from_status(status)
    }

    /// An InternalError (500) (client-go's `NewInternalError`).
    pub fn new_internal_error(message: impl fmt::Display) -> Error {
        let mut status = Status::failure(
            500,
            StatusReason::InternalError,
            format!("Internal error occurred: {message}"),
        );
        status.details = Some(StatusDetails {
            causes: vec![StatusCause {
                message: message.to_string(),
                ..StatusCause::default()
            }],
            ..StatusDetails::default()
        });
        Error::from_status(status)
    }

    /// A BadRequest error (400) (client-go's `NewBadRequest`).
    pub fn new_bad_request(message: impl Into<String>) -> Error {
        Error::from_status(Status::failure(400, StatusReason::BadRequest, message))
    }

    /// A Forbidden error (403) as the authorizer reports it (client-go's `NewForbidden`):
    /// `"<resource> \"<name>\" is forbidden: <reason>"`.
    pub fn new_forbidden(group: &str, resource: &str, name: &str, reason: &str) -> Error {
        let qualified = qualified_resource(group, resource);
        let message = match (qualified.is_empty(), name.is_empty()) {
            (true, _) => format!("forbidden: {reason}"),
            (false, true) => format!("{qualified} is forbidden: {reason}"),
            (false, false) => format!("{qualified} \"{name}\" is forbidden: {reason}"),
        };
        let mut status = Status::failure(403, StatusReason::Forbidden, message);
        status.details = Some(details(group, resource, name));
        Error::from_status(status)
    }

    /// An Unauthorized error (401) (client-go's `NewUnauthorized`).
    pub fn new_unauthorized(message: &str) -> Error {
        let message = if message.is_empty() {
            "not authorized"
        } else {
            message
        };
        Error::from_status(Status::failure(401, StatusReason::Unauthorized, message))
    }

    /// A Gone error (410, reason `Gone`) (client-go's deprecated `NewGone`).
    pub fn new_gone(message: impl Into<String>) -> Error {
        Error::from_status(Status::failure(410, StatusReason::Gone, message))
    }

    /// A ServiceUnavailable error (503) (client-go's `NewServiceUnavailable`).
    pub fn new_service_unavailable(message: impl Into<String>) -> Error {
        Error::from_status(Status::failure(
            503,
            StatusReason::ServiceUnavailable,
            message,
        ))
    }

    /// A Timeout error (504): the request did not finish in time but may still complete
    /// (client-go's `NewTimeoutError`).
    pub fn new_timeout(message: &str, retry_after_seconds: u32) -> Error {
        let mut status = Status::failure(504, StatusReason::Timeout, format!("Timeout: {message}"));
        status.details = Some(StatusDetails {
            retry_after_seconds: i32::try_from(retry_after_seconds).unwrap_or(i32::MAX),
            ..StatusDetails::default()
        });
        Error::from_status(status)
    }

    /// A ServerTimeout error (500): the operation could not be completed in time and should be
    /// retried (client-go's `NewServerTimeout`).
    pub fn new_server_timeout(
        group: &str,
        resource: &str,
        operation: &str,
        retry_after_seconds: u32,
    ) -> Error {
        let qualified = qualified_resource(group, resource);
        let mut status = Status::failure(
            500,
            StatusReason::ServerTimeout,
            format!(
                "The {operation} operation against {qualified} could not be completed at this time, please try again."
            ),
        );
        status.details = Some(StatusDetails {
            retry_after_seconds: i32::try_from(retry_after_seconds).unwrap_or(i32::MAX),
            ..details(group, resource, operation)
        });
        Error::from_status(status)
    }

    /// A MethodNotAllowed error (405) (client-go's `NewMethodNotSupported`).
    pub fn new_method_not_supported(group: &str, resource: &str, action: &str) -> Error {
        let qualified = qualified_resource(group, resource);
        let mut status = Status::failure(
            405,
            StatusReason::MethodNotAllowed,
            format!("{action} is not supported on resources of kind \"{qualified}\""),
        );
        status.details = Some(details(group, resource, ""));
        Error::from_status(status)
    }

    /// An Invalid error (422) listing the invalid fields (client-go's `NewInvalid`):
    /// `causes` are `(field, message)` pairs, reported as `FieldValueInvalid`.
    pub fn new_invalid(group: &str, kind: &str, name: &str, causes: &[(&str, &str)]) -> Error {
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let message = if causes.is_empty() {
            format!("{qualified} \"{name}\" is invalid")
        } else {
            let list: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
            let joined = if list.len() == 1 {
                list[0].clone()
            } else {
                format!("[{}]", list.join(", "))
            };
            format!("{qualified} \"{name}\" is invalid: {joined}")
        };
        let mut status = Status::failure(422, StatusReason::Invalid, message);
        status.details = Some(StatusDetails {
            name: name.to_owned(),
            group: group.to_owned(),
            kind: kind.to_owned(),
            causes: causes
                .iter()
                .map(|(field, message)| StatusCause {
                    cause_type: StatusCause::FIELD_VALUE_INVALID.to_owned(),
                    message: (*message).to_owned(),
                    field: (*field).to_owned(),
                })
                .collect(),
            ..StatusDetails::default()
        });
        Error::from_status(status)
    }

    fn new(kind: Kind) -> Error {
        Error {
            inner: Box::new(kind),
        }
    }

    // ----- accessors -----

    /// The `Status` the server returned, for errors that came from the server.
    pub fn status(&self) -> Option<&Status> {
        match &*self.inner {
            Kind::Api(status) => Some(status),
            _ => None,
        }
    }

    /// The HTTP code of a server error (`status.code`), if the server reported one.
    pub fn code(&self) -> Option<u16> {
        self.status()
            .and_then(|s| u16::try_from(s.code).ok())
            .filter(|c| *c != 0)
    }

    /// The reason of a server error; [`StatusReason::Unknown`] for other errors and for reasons
    /// this version does not know (client-go's `ReasonForError`).
    pub fn reason(&self) -> StatusReason {
        self.status()
            .map_or(StatusReason::Unknown, Status::status_reason)
    }

    /// The delay the server asked for (`details.retryAfterSeconds`), if positive.
    pub fn retry_after(&self) -> Option<Duration> {
        let seconds = self.status()?.details.as_ref()?.retry_after_seconds;
        (seconds > 0).then(|| Duration::from_secs(seconds.unsigned_abs().into()))
    }

    /// Whether the error asks the client to wait before acting again, and for how long
    /// (client-go's `SuggestsClientDelay`): a ServerTimeout always does (possibly for zero
    /// seconds), any other status when it carries a positive `retryAfterSeconds`.
    pub fn suggests_client_delay(&self) -> Option<Duration> {
        let status = self.status()?;
        let details = status.details.as_ref()?;
        let seconds = u64::from(details.retry_after_seconds.max(0).unsigned_abs());
        if status.status_reason() == StatusReason::ServerTimeout || seconds > 0 {
            Some(Duration::from_secs(seconds))
        } else {
            None
        }
    }

    /// Whether the status carries a cause of this type, such as
    /// [`StatusCause::RESOURCE_VERSION_TOO_LARGE`] (client-go's `HasStatusCause`).
    pub fn has_status_cause(&self, cause_type: &str) -> bool {
        self.status().is_some_and(|s| s.cause(cause_type).is_some())
    }

    // ----- checks -----

    /// Reason and code as client-go's `reasonAndCodeForError` sees them.
    fn reason_or_code(&self, reason: StatusReason, code: u16) -> bool {
        let Some(status) = self.status() else {
            return false;
        };
        let actual = status.status_reason();
        if actual == reason {
            return true;
        }
        // A reason the client does not know falls back to the HTTP code.
        actual == StatusReason::Unknown && status.code == i32::from(code)
    }

    fn reason_is(&self, reason: StatusReason) -> bool {
        self.status().is_some_and(|s| s.status_reason() == reason)
    }

    /// The object does not exist: reason `NotFound`, or code 404 with no known reason.
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code(StatusReason::NotFound, 404)
    }

    /// A create found an object of that name: reason `AlreadyExists` (reason only: a bare 409
    /// is [`Error::is_conflict`]).
    pub fn is_already_exists(&self) -> bool {
        self.reason_is(StatusReason::AlreadyExists)
    }

    /// An update lost a race: reason `Conflict`, or code 409 with no known reason.
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code(StatusReason::Conflict, 409)
    }

    /// Reason `Gone`, or code 410 with no known reason.
    pub fn is_gone(&self) -> bool {
        self.reason_or_code(StatusReason::Gone, 410)
    }

    /// The requested resource version is too old: reason `Expired`, or [`Error::is_gone`].
    ///
    /// This is what client-go's reflector tests (`isExpiredError`: `IsResourceExpired ||
    /// IsGone`) before it relists; client-go's own `IsResourceExpired` checks the reason only.
    pub fn is_resource_expired(&self) -> bool {
        self.reason_is(StatusReason::Expired) || self.is_gone()
    }

    /// Reason `TooManyRequests`, or code 429 (whatever the reason, as client-go).
    pub fn is_too_many_requests(&self) -> bool {
        self.reason_is(StatusReason::TooManyRequests) || self.code() == Some(429)
    }

    /// Reason `Forbidden`, or code 403 with no known reason.
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code(StatusReason::Forbidden, 403)
    }

    /// Reason `Unauthorized`, or code 401 with no known reason.
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code(StatusReason::Unauthorized, 401)
    }

    /// The object failed validation: reason `Invalid`, or code 422 with no known reason.
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code(StatusReason::Invalid, 422)
    }

    /// Reason `BadRequest`, or code 400 with no known reason.
    pub fn is_bad_request(&self) -> bool {
        self.reason_or_code(StatusReason::BadRequest, 400)
    }

    /// Reason `MethodNotAllowed`, or code 405 with no known reason.
    pub fn is_method_not_supported(&self) -> bool {
        self.reason_or_code(StatusReason::MethodNotAllowed, 405)
    }

    /// Reason `NotAcceptable`, or code 406 with no known reason.
    pub fn is_not_acceptable(&self) -> bool {
        self.reason_or_code(StatusReason::NotAcceptable, 406)
    }

    /// Reason `UnsupportedMediaType`, or code 415 with no known reason.
    pub fn is_unsupported_media_type(&self) -> bool {
        self.reason_or_code(StatusReason::UnsupportedMediaType, 415)
    }

    /// Reason `RequestEntityTooLarge`, or code 413 (whatever the reason, as client-go).
    pub fn is_request_entity_too_large(&self) -> bool {
        self.reason_is(StatusReason::RequestEntityTooLarge) || self.code() == Some(413)
    }

    /// A timeout: the server's reason `Timeout` (or code 504 with no known reason), or a
    /// client-side transport timeout (see [`Error::is_transport_timeout`]).
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code(StatusReason::Timeout, 504) || self.is_transport_timeout()
    }

    /// The server asks the client to retry: reason `ServerTimeout` (reason only).
    pub fn is_server_timeout(&self) -> bool {
        self.reason_is(StatusReason::ServerTimeout)
    }

    /// Reason `InternalError`, or code 500 with no known reason.
    pub fn is_internal_error(&self) -> bool {
        self.reason_or_code(StatusReason::InternalError, 500)
    }

    /// Reason `ServiceUnavailable`, or code 503 with no known reason.
    pub fn is_service_unavailable(&self) -> bool {
        self.reason_or_code(StatusReason::ServiceUnavailable, 503)
    }

    /// Reason `StorageReadError`: the server could not read the stored object.
    pub fn is_store_read_error(&self) -> bool {
        self.reason_is(StatusReason::StoreReadError)
    }

    /// The error response was not a `Status` (it may come from a proxy, not the API server):
    /// client-go's `IsUnexpectedServerError`.
    pub fn is_unexpected_server_error(&self) -> bool {
        self.has_status_cause(StatusCause::UNEXPECTED_SERVER_RESPONSE)
    }

    /// Whether the server answered (any [`Error::status`] error).
    pub fn is_api(&self) -> bool {
        matches!(&*self.inner, Kind::Api(_))
    }

    /// The request got no response (any [`TransportErrorKind`]).
    pub fn is_transport(&self) -> bool {
        matches!(&*self.inner, Kind::Transport { .. })
    }

    /// The connection was refused (client-go's `utilnet.IsConnectionRefused`).
    pub fn is_connection_refused(&self) -> bool {
        self.transport_kind() == Some(TransportErrorKind::ConnectionRefused)
    }

    /// The connection was reset or closed early (client-go's `IsConnectionReset` /
    /// `IsProbableEOF` / `IsHTTP2ConnectionLost`).
    pub fn is_connection_reset(&self) -> bool {
        self.transport_kind() == Some(TransportErrorKind::ConnectionReset)
    }

    /// The request timed out on the client side.
    pub fn is_transport_timeout(&self) -> bool {
        self.transport_kind() == Some(TransportErrorKind::Timeout)
    }

    /// A response or watch event did not decode.
    pub fn is_decode(&self) -> bool {
        matches!(&*self.inner, Kind::Decode { .. })
    }

    /// The client refused to build the request (see [`Error::invalid_request`]).
    pub fn is_invalid_request(&self) -> bool {
        matches!(&*self.inner, Kind::InvalidRequest(_))
    }

    /// The exit code of a remote command (exec, attach) that ended with a non-zero code: the
    /// `ExitCode` cause of the `NonZeroExitCode` status the server sends on the error channel,
    /// which client-go's `remotecommand` turns into an `exec.CodeExitError`. `None` for every
    /// other error, including a command that could not be started.
    pub fn exit_code(&self) -> Option<i32> {
        let status = self.status()?;
        if status.reason != "NonZeroExitCode" {
            return None;
        }
        status
            .cause("ExitCode")
            .and_then(|c| c.message.trim().parse().ok())
    }

    /// A remote command ended with a non-zero exit code (see [`Error::exit_code`]).
    pub fn is_non_zero_exit_code(&self) -> bool {
        self.exit_code().is_some()
    }

    /// A failure from outside the API path (see [`Error::other`]).
    pub fn is_other(&self) -> bool {
        matches!(&*self.inner, Kind::Other(_))
    }

    /// The error an [`Error::other`] wraps, if it is an `E`: for example a
    /// `kclient_cache::Error` to ask `is_index_not_found()`.
    pub fn downcast_ref<E: StdError + 'static>(&self) -> Option<&E> {
        match &*self.inner {
            Kind::Other(error) => error.downcast_ref::<E>(),
            _ => None,
        }
    }

    fn transport_kind(&self) -> Option<TransportErrorKind> {
        match &*self.inner {
            Kind::Transport { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Kind::Api(status) if !status.message.is_empty() => f.write_str(&status.message),
            Kind::Api(status) => {
                write!(f, "the server responded with status code {}", status.code)?;
                if !status.reason.is_empty() {
                    write!(f, " ({})", status.reason)?;
                }
                Ok(())
            }
            Kind::Transport { kind, source } => {
                let prefix = match kind {
                    TransportErrorKind::ConnectionRefused => "connection refused",
                    TransportErrorKind::ConnectionReset => "connection reset or closed early",
                    TransportErrorKind::Timeout => "request timed out",
                    TransportErrorKind::Other => "request failed",
                };
                // The cause's own message, after the kind unless it already starts with it.
                let cause = source.to_string();
                if cause.is_empty() {
                    f.write_str(prefix)
                } else if cause.starts_with(prefix) {
                    f.write_str(&cause)
                } else {
                    write!(f, "{prefix}: {cause}")
                }
            }
            Kind::Decode { what, source } => write!(f, "failed to decode {what}: {source}"),
            Kind::InvalidRequest(message) => f.write_str(message),
            Kind::Other(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Kind::Api(status) => f.debug_tuple("Error::Api").field(status).finish(),
            Kind::Transport { kind, source } => f
                .debug_struct("Error::Transport")
                .field("kind", kind)
                .field("source", source)
                .finish(),
            Kind::Decode { what, source } => f
                .debug_struct("Error::Decode")
                .field("what", what)
                .field("source", source)
                .finish(),
            Kind::InvalidRequest(message) => f
                .debug_tuple("Error::InvalidRequest")
                .field(message)
                .finish(),
            Kind::Other(error) => f.debug_tuple("Error::Other").field(error).finish(),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &*self.inner {
            Kind::Transport { source, .. } | Kind::Decode { source, .. } => {
                Some(&**source as &(dyn StdError + 'static))
            }
            // As `std::io::Error::other`: the wrapped error is this error (same message), so the
            // chain goes on with its own cause.
            Kind::Other(error) => error.source(),
            Kind::Api(_) | Kind::InvalidRequest(_) => None,
        }
    }
}

/// `resource.group`, or `resource` for the core group (Go's `GroupResource.String`).
fn qualified_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(group: &str, resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_owned(),
        group: group.to_owned(),
        kind: resource.to_owned(),
        ..StatusDetails::default()
    }
}

/// Whether a `Content-Type` is `text/*` (client-go's `isTextResponse`). The prefix is compared
/// as bytes: the header is whatever the server sent, and slicing a `str` inside a multi-byte
/// character would panic.
fn is_text_content_type(content_type: Option<&str>) -> bool {
    let Some(content_type) = content_type else {
        return false;
    };
    let media = content_type.split(';').next().unwrap_or("").trim();
    media.len() > 5 && media.as_bytes()[..5].eq_ignore_ascii_case(b"text/")
}

/// The reason and message client-go's `NewGenericServerResponse` picks for an HTTP code.
fn generic_reason_and_message(
    code: u16,
    verb: &str,
    server_message: &str,
) -> (StatusReason, String) {
    let fixed = |reason, message: &str| (reason, message.to_owned());
    match code {
        409 => {
            let reason = if verb.eq_ignore_ascii_case("POST") {
                StatusReason::AlreadyExists
            } else {
                StatusReason::Conflict
            };
            fixed(reason, "the server reported a conflict")
        }
        404 => fixed(
            StatusReason::NotFound,
            "the server could not find the requested resource",
        ),
        400 => fixed(
            StatusReason::BadRequest,
            "the server rejected our request for an unknown reason",
        ),
        401 => fixed(
            StatusReason::Unauthorized,
            "the server has asked for the client to provide credentials",
        ),
        // The server's message says who tried to do what: keep it.
        403 => (StatusReason::Forbidden, server_message.to_owned()),
        406 => {
            if server_message.is_empty() || server_message == "unknown" {
                fixed(
                    StatusReason::NotAcceptable,
                    "the server was unable to respond with a content type that the client supports",
                )
            } else {
                (StatusReason::NotAcceptable, server_message.to_owned())
            }
        }
        415 => (
            StatusReason::UnsupportedMediaType,
            server_message.to_owned(),
        ),
        405 => fixed(
            StatusReason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        ),
        422 => fixed(
            StatusReason::Invalid,
            "the server rejected our request due to an error in our request",
        ),
        503 => fixed(
            StatusReason::ServiceUnavailable,
            "the server is currently unable to handle the request",
        ),
        504 => fixed(
            StatusReason::Timeout,
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        ),
        429 => fixed(
            StatusReason::TooManyRequests,
            "the server has received too many requests and has asked us to try again later",
        ),
        500.. => (
            StatusReason::InternalError,
            format!(
                "an error on the server ({server_message:?}) has prevented the request from succeeding"
            ),
        ),
        _ => (
            StatusReason::Unknown,
            format!(
                "the server responded with the status code {code} but did not return more information"
            ),
        ),
    }
}

/// `From` conversions into [`Error::other`] for this crate's own error types, so that `?`
/// works on them in a function returning [`Error`].
macro_rules! from_other {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for Error {
            fn from(error: $error) -> Error {
                Error::other(error)
            }
        }
    )*};
}

from_other!(
    crate::key::InvalidKeyError,
    crate::labels::SelectorError,
    crate::fields::FieldSelectorError,
    crate::json_patch::JsonPatchError,
    crate::strategic_merge_patch::StrategicPatchError,
    crate::gvk::ParseGroupVersionError,
    crate::unstructured::NestedFieldError,
    crate::meta::ParseDurationError,
    crate::meta::ParseQuantityError,
);

/// JSON that [`decode_json`](crate::decode_json) could not decode is a decode error, as a
/// response body that does not decode is.
impl From<crate::JsonError> for Error {
    fn from(error: crate::JsonError) -> Error {
        Error::decode("JSON", error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: i32, reason: &str) -> Error {
        Error::from_status(Status {
            status: Status::FAILURE.into(),
            code,
            reason: reason.into(),
            message: "m".into(),
            ..Status::default()
        })
    }

    type Check = fn(&Error) -> bool;

    /// Every check with the reason it matches and the code it falls back to (0: none).
    const CHECKS: &[(&str, Check, &str, i32)] = &[
        ("not_found", Error::is_not_found, "NotFound", 404),
        (
            "already_exists",
            Error::is_already_exists,
            "AlreadyExists",
            0,
        ),
        ("conflict", Error::is_conflict, "Conflict", 409),
        ("gone", Error::is_gone, "Gone", 410),
        ("forbidden", Error::is_forbidden, "Forbidden", 403),
        ("unauthorized", Error::is_unauthorized, "Unauthorized", 401),
        ("invalid", Error::is_invalid, "Invalid", 422),
        ("bad_request", Error::is_bad_request, "BadRequest", 400),
        (
            "method_not_supported",
            Error::is_method_not_supported,
            "MethodNotAllowed",
            405,
        ),
        (
            "not_acceptable",
            Error::is_not_acceptable,
            "NotAcceptable",
            406,
        ),
        (
            "unsupported_media_type",
            Error::is_unsupported_media_type,
            "UnsupportedMediaType",
            415,
        ),
        ("timeout", Error::is_timeout, "Timeout", 504),
        (
            "server_timeout",
            Error::is_server_timeout,
            "ServerTimeout",
            0,
        ),
        (
            "internal_error",
            Error::is_internal_error,
            "InternalError",
            500,
        ),
        (
            "service_unavailable",
            Error::is_service_unavailable,
            "ServiceUnavailable",
            503,
        ),
        (
            "store_read_error",
            Error::is_store_read_error,
            "StorageReadError",
            0,
        ),
    ];

    #[test]
    fn each_check_matches_its_reason_and_falls_back_to_its_code_only_without_a_known_reason() {
        for &(name, check, reason, code) in CHECKS {
            assert!(check(&status(0, reason)), "{name}: reason {reason}");
            assert!(
                check(&status(999, reason)),
                "{name}: reason {reason} any code"
            );
            if code != 0 {
                assert!(check(&status(code, "")), "{name}: code {code}, no reason");
                assert!(
                    check(&status(code, "Unheard")),
                    "{name}: code {code}, unknown reason"
                );
                // A known but different reason wins over the code.
                let other = if reason == "BadRequest" {
                    "NotFound"
                } else {
                    "BadRequest"
                };
                assert!(
                    !check(&status(code, other)),
                    "{name}: code {code}, reason {other}"
                );
            } else {
                for c in [400, 404, 409, 500, 504] {
                    assert!(
                        !check(&status(c, "")),
                        "{name}: must not match bare code {c}"
                    );
                }
            }
            // No other check claims this reason (Expired/Gone and TooManyRequests aside).
            for &(other_name, other_check, _, _) in CHECKS {
                if other_name != name {
                    assert!(
                        !other_check(&status(0, reason)),
                        "{other_name} must not match reason {reason}"
                    );
                }
            }
        }
    }

    #[test]
    fn too_many_requests_and_entity_too_large_match_their_code_whatever_the_reason() {
        assert!(status(0, "TooManyRequests").is_too_many_requests());
        assert!(status(429, "").is_too_many_requests());
        assert!(status(429, "InternalError").is_too_many_requests());
        assert!(!status(500, "").is_too_many_requests());
        assert!(status(0, "RequestEntityTooLarge").is_request_entity_too_large());
        assert!(status(413, "BadRequest").is_request_entity_too_large());
    }

    #[test]
    fn resource_expired_covers_expired_and_gone() {
        assert!(status(410, "Expired").is_resource_expired());
        assert!(status(0, "Expired").is_resource_expired());
        assert!(status(410, "").is_resource_expired());
        assert!(status(410, "Gone").is_resource_expired());
        assert!(!status(410, "Expired").is_gone());
        assert!(!status(500, "").is_resource_expired());
        assert!(
            Error::new_resource_expired("too old resource version: 1 (5)").is_resource_expired()
        );
    }

    #[test]
    fn status_causes_and_delays() {
        let mut s = Status::failure(504, StatusReason::Timeout, "Too large resource version");
        s.details = Some(StatusDetails {
            causes: vec![StatusCause {
                cause_type: StatusCause::RESOURCE_VERSION_TOO_LARGE.into(),
                message: "Too large resource version".into(),
                field: String::new(),
            }],
            retry_after_seconds: 1,
            ..StatusDetails::default()
        });
        let err = Error::from_status(s);
        assert!(err.has_status_cause(StatusCause::RESOURCE_VERSION_TOO_LARGE));
        assert!(!err.has_status_cause(StatusCause::FIELD_VALUE_INVALID));
        assert!(err.is_timeout());
        assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
        assert_eq!(err.suggests_client_delay(), Some(Duration::from_secs(1)));

        let mut server_timeout = Status::failure(500, StatusReason::ServerTimeout, "try again");
        server_timeout.details = Some(StatusDetails::default());
        let err = Error::from_status(server_timeout);
        assert_eq!(err.suggests_client_delay(), Some(Duration::ZERO));
        assert_eq!(err.retry_after(), None);

        assert_eq!(status(500, "InternalError").suggests_client_delay(), None);
        let err = Error::new_too_many_requests("slow down", 3);
        assert_eq!(err.suggests_client_delay(), Some(Duration::from_secs(3)));
    }

    #[test]
    fn response_status_takes_the_http_code_when_unset() {
        let err = Error::from_response_status(404, Status::default());
        assert_eq!(err.code(), Some(404));
        assert!(err.is_not_found());
        let err = Error::from_response_status(
            500,
            Status {
                code: 409,
                ..Status::default()
            },
        );
        assert_eq!(err.code(), Some(409));
        assert!(err.is_conflict());
        assert_eq!(err.to_string(), "the server responded with status code 409");
    }

    #[test]
    fn generic_server_responses_map_codes_to_reasons() {
        let cases: &[(u16, &str, StatusReason)] = &[
            (409, "POST", StatusReason::AlreadyExists),
            (409, "PUT", StatusReason::Conflict),
            (404, "GET", StatusReason::NotFound),
            (400, "GET", StatusReason::BadRequest),
            (401, "GET", StatusReason::Unauthorized),
            (403, "GET", StatusReason::Forbidden),
            (406, "GET", StatusReason::NotAcceptable),
            (415, "GET", StatusReason::UnsupportedMediaType),
            (405, "GET", StatusReason::MethodNotAllowed),
            (422, "GET", StatusReason::Invalid),
            (503, "GET", StatusReason::ServiceUnavailable),
            (504, "GET", StatusReason::Timeout),
            (429, "GET", StatusReason::TooManyRequests),
            (500, "GET", StatusReason::InternalError),
            (502, "GET", StatusReason::InternalError),
            (418, "GET", StatusReason::Unknown),
        ];
        for &(code, verb, reason) in cases {
            let err = Error::from_server_response(ServerResponse {
                code,
                verb,
                body: b"oops",
                content_type: Some("text/plain; charset=utf-8"),
                ..ServerResponse::default()
            });
            assert_eq!(err.reason(), reason, "code {code} {verb}");
            assert_eq!(err.code(), Some(code));
            assert!(err.is_unexpected_server_error());
            assert!(err.is_api());
        }
    }

    #[test]
    fn generic_server_response_messages() {
        let err = Error::from_server_response(ServerResponse {
            code: 502,
            verb: "GET",
            body: b"  <html>bad gateway</html>\n",
            content_type: Some("text/html"),
            retry_after_seconds: 2,
            group: "apps",
            resource: "deployments",
            name: "web",
        });
        assert_eq!(
            err.to_string(),
            "an error on the server (\"<html>bad gateway</html>\") has prevented the request from succeeding (get deployments.apps web)"
        );
        assert!(err.is_internal_error());
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));

        // A body that is not text is not kept.
        let err = Error::from_server_response(ServerResponse {
            code: 403,
            verb: "GET",
            body: b"\x00\x01binary",
            content_type: Some("application/octet-stream"),
            resource: "pods",
            ..ServerResponse::default()
        });
        assert_eq!(err.to_string(), "unknown (get pods)");
        assert!(err.is_forbidden());
        let cause = err
            .status()
            .unwrap()
            .cause(StatusCause::UNEXPECTED_SERVER_RESPONSE);
        assert_eq!(cause.unwrap().message, "unknown");

        // The body is capped at 2048 bytes.
        let long = "x".repeat(5000);
        let err = Error::from_server_response(ServerResponse {
            code: 403,
            verb: "GET",
            body: long.as_bytes(),
            content_type: Some("text/plain"),
            ..ServerResponse::default()
        });
        assert_eq!(err.to_string().len(), 2048);

        let err = Error::from_server_response(ServerResponse {
            code: 418,
            verb: "GET",
            ..ServerResponse::default()
        });
        assert_eq!(
            err.to_string(),
            "the server responded with the status code 418 but did not return more information"
        );
    }

    /// The `Content-Type` is the server's text: one with a multi-byte character across its
    /// fifth byte must be judged (not text), not panic on a `str` slice.
    #[test]
    fn a_non_ascii_content_type_is_not_text_and_does_not_panic() {
        // The body shown in the message: only a text body is.
        let cases = [
            ("text\u{e9}/plain", "unknown"),
            ("t\u{e9}xt/plain", "unknown"),
            ("\u{e9}", "unknown"),
            ("text\u{e9}", "unknown"),
            ("\u{1f600}\u{1f600}", "unknown"),
            ("TEXT/plain", "oops"),
            ("text/plain; charset=\u{e9}", "oops"),
            (" text/html ", "oops"),
        ];
        for (content_type, shown) in cases {
            let err = Error::from_server_response(ServerResponse {
                code: 500,
                verb: "GET",
                body: b"oops",
                content_type: Some(content_type),
                ..ServerResponse::default()
            });
            assert_eq!(
                err.to_string(),
                format!(
                    "an error on the server (\"{shown}\") has prevented the request from succeeding"
                ),
                "{content_type:?}"
            );
        }
    }

    #[test]
    fn transport_decode_and_invalid_request_errors() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = Error::transport(TransportErrorKind::ConnectionRefused, io);
        assert!(err.is_transport() && err.is_connection_refused());
        assert!(!err.is_api() && !err.is_not_found() && !err.is_timeout());
        assert_eq!(err.status(), None);
        assert_eq!(err.code(), None);
        assert_eq!(err.to_string(), "connection refused: refused");
        assert_eq!(err.source().unwrap().to_string(), "refused");
        // A cause that already names the kind is not prefixed twice.
        let err = Error::transport(
            TransportErrorKind::ConnectionRefused,
            "connection refused by 10.0.0.1:6443",
        );
        assert_eq!(err.to_string(), "connection refused by 10.0.0.1:6443");
        let err = Error::transport(TransportErrorKind::Other, "");
        assert_eq!(err.to_string(), "request failed");

        let err = Error::transport(TransportErrorKind::Timeout, "deadline elapsed");
        assert!(err.is_timeout() && err.is_transport_timeout());
        let err = Error::transport(TransportErrorKind::ConnectionReset, "eof");
        assert!(err.is_connection_reset() && !err.is_connection_refused());

        let serde_err = serde_json::from_str::<Status>("{").unwrap_err();
        let err = Error::decode("Status", serde_err);
        assert!(err.is_decode());
        assert_eq!(
            err.to_string(),
            "failed to decode Status: EOF while parsing an object at line 1 column 1"
        );
        assert!(err.source().is_some());
        let cloned = err.clone();
        assert!(cloned.is_decode());

        let err = Error::invalid_request("resource name may not be empty");
        assert!(err.is_invalid_request());
        assert!(!err.is_invalid());
        assert_eq!(err.to_string(), "resource name may not be empty");
    }

    #[test]
    fn constructors_build_what_the_server_would() {
        let err = Error::new_not_found("apps", "deployments", "web");
        assert!(err.is_not_found());
        assert_eq!(err.to_string(), "deployments.apps \"web\" not found");
        let details = err.status().unwrap().details.as_ref().unwrap();
        assert_eq!(
            (details.group.as_str(), details.kind.as_str()),
            ("apps", "deployments")
        );
        assert_eq!(
            Error::new_not_found("", "pods", "p").to_string(),
            "pods \"p\" not found"
        );
        assert!(Error::new_already_exists("", "pods", "p").is_already_exists());
        let conflict = Error::new_conflict("", "pods", "p", "the object has been modified");
        assert!(conflict.is_conflict() && !conflict.is_already_exists());
        assert!(Error::new_internal_error("boom").is_internal_error());
        let forbidden = Error::new_forbidden("", "pods", "p", "User \"bob\" cannot get");
        assert!(forbidden.is_forbidden());
        assert_eq!(
            forbidden.to_string(),
            "pods \"p\" is forbidden: User \"bob\" cannot get"
        );
        assert_eq!(
            Error::new_forbidden("", "", "", "no").to_string(),
            "forbidden: no"
        );
        assert!(Error::new_unauthorized("").is_unauthorized());
        assert_eq!(Error::new_unauthorized("").to_string(), "not authorized");
        let gone = Error::new_gone("gone");
        assert!(gone.is_gone() && gone.is_resource_expired());
        assert!(Error::new_service_unavailable("later").is_service_unavailable());
        let timeout = Error::new_timeout("slow", 2);
        assert!(timeout.is_timeout() && !timeout.is_server_timeout());
        assert_eq!(timeout.retry_after(), Some(Duration::from_secs(2)));
        let server_timeout = Error::new_server_timeout("apps", "deployments", "list", 0);
        assert!(server_timeout.is_server_timeout() && !server_timeout.is_internal_error());
        assert_eq!(server_timeout.suggests_client_delay(), Some(Duration::ZERO));
        let not_supported = Error::new_method_not_supported("", "pods", "watch");
        assert!(not_supported.is_method_not_supported());
        assert_eq!(
            not_supported.to_string(),
            "watch is not supported on resources of kind \"pods\""
        );
        let invalid = Error::new_invalid(
            "apps",
            "Deployment",
            "web",
            &[("spec.replicas", "must be >= 0")],
        );
        assert!(invalid.is_invalid());
        assert!(invalid.has_status_cause(StatusCause::FIELD_VALUE_INVALID));
        assert_eq!(
            invalid.to_string(),
            "Deployment.apps \"web\" is invalid: spec.replicas: must be >= 0"
        );
        assert!(Error::new_bad_request("bad").is_bad_request());
    }

    #[test]
    fn error_is_small_send_sync_and_static() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Error>();
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn other_errors_keep_their_message_and_can_be_recovered() {
        fn split(key: &str) -> Result<(), Error> {
            crate::split_meta_namespace_key(key)?;
            Ok(())
        }
        let err = split("a/b/c").unwrap_err();
        assert!(err.is_other());
        assert!(!err.is_api() && !err.is_not_found());
        let inner = err
            .downcast_ref::<crate::InvalidKeyError>()
            .expect("the key error");
        assert_eq!(err.to_string(), inner.to_string());
        assert!(err.to_string().contains("a/b/c"), "{err}");
        assert!(err.downcast_ref::<crate::SelectorError>().is_none());
        assert!(
            Error::new_not_found("", "pods", "p")
                .downcast_ref::<crate::InvalidKeyError>()
                .is_none()
        );
    }
}
