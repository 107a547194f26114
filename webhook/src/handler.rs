//! What answers a review: a [`Handler`] (any `async` function from an [`AdmissionRequest`] to
//! an [`AdmissionResponse`]), or the typed ones controller-runtime builds for a kind:
//! [`validating`] (its `CustomValidator`) and [`defaulting`] (its `CustomDefaulter`).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use kclient_apimachinery::{JsonPatch, JsonPatchOperation, Status, create_json_patch};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::review::{AdmissionRequest, AdmissionResponse, Operation};

/// The future a [`Handler`] returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = AdmissionResponse> + Send + 'a>>;

/// Answers the requests of one webhook path (controller-runtime's `admission.Handler`). Any
/// `Fn(AdmissionRequest) -> impl Future<Output = AdmissionResponse>` is one; the server fills in
/// the response's `uid` and answers in the review's version.
pub trait Handler: Send + Sync + 'static {
    /// The verdict on `request`.
    fn handle(&self, request: AdmissionRequest) -> HandlerFuture<'_>;
}

impl<F, Fut> Handler for F
where
    F: Fn(AdmissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send + 'static,
{
    fn handle(&self, request: AdmissionRequest) -> HandlerFuture<'_> {
        Box::pin(self(request))
    }
}

/// Why a typed handler refuses an operation: a message (answered as controller-runtime answers
/// an error, 403 `Forbidden`) or a whole `Status` (answered as it is, as controller-runtime
/// answers an `APIStatus` error), with warnings for the client either way.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    status: Status,
    warnings: Vec<String>,
}

impl Denial {
    /// Refuses with `message` (code 403, reason `Forbidden`).
    pub fn new(message: impl Into<String>) -> Self {
        Denial {
            status: Status {
                code: 403,
                reason: "Forbidden".to_owned(),
                message: message.into(),
                ..Status::default()
            },
            warnings: Vec::new(),
        }
    }

    /// Refuses with `status` as the API server's answer (its code, reason, message, details).
    pub fn with_status(status: Status) -> Self {
        Denial {
            status,
            warnings: Vec::new(),
        }
    }

    /// Adds warnings for the client.
    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    fn into_response(self) -> AdmissionResponse {
        AdmissionResponse::from_status(self.status).with_warnings(self.warnings)
    }
}

impl From<kclient_apimachinery::Error> for Denial {
    /// An API error's `Status` (a Conflict met while checking, say), else its message.
    fn from(error: kclient_apimachinery::Error) -> Self {
        match error.status() {
            Some(status) => Denial::with_status(status.clone()),
            None => Denial::new(error.to_string()),
        }
    }
}

/// What a validating handler is asked about an object of kind `K`.
#[derive(Debug, Clone, PartialEq)]
pub enum Validation<K> {
    /// The object is being created: it as it would be stored.
    Create(K),
    /// The object is being updated.
    Update {
        /// As it is.
        old: K,
        /// As it would be stored.
        new: K,
    },
    /// The object is being deleted: it as it is.
    Delete(K),
}

/// A handler that validates objects of kind `K` with `validate` (controller-runtime's
/// `WithValidator`): `Ok(warnings)` admits the operation, an `Err` refuses it; both may carry
/// warnings for the client. `CONNECT` is admitted without asking; an object that does not decode
/// as a `K` is refused with 400, as is an operation this version does not know.
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
/// use kclient_webhook::{Denial, Validation, validating};
///
/// let handler = validating(|validation: Validation<ConfigMap>| async move {
///     let cm = match validation {
///         Validation::Create(cm) | Validation::Update { new: cm, .. } => cm,
///         Validation::Delete(_) => return Ok(vec![]),
///     };
///     match cm.data.as_ref().and_then(|d| d.get("mode")) {
///         Some(mode) if *mode != "on" && *mode != "off" => {
///             Err(Denial::new(format!("mode must be on or off, not {mode}")))
///         }
///         None => Ok(vec!["no mode: off is assumed".to_owned()]),
///         Some(_) => Ok(vec![]),
///     }
/// });
/// # let _ = handler;
/// ```
pub fn validating<K, F, Fut>(validate: F) -> impl Handler
where
    K: DeserializeOwned + Send + 'static,
    F: Fn(Validation<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>, Denial>> + Send + 'static,
{
    Validating {
        validate,
        _kind: PhantomData,
    }
}

struct Validating<K, F> {
    validate: F,
    _kind: PhantomData<fn() -> K>,
}

impl<K, F, Fut> Handler for Validating<K, F>
where
    K: DeserializeOwned + Send + 'static,
    F: Fn(Validation<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>, Denial>> + Send + 'static,
{
    fn handle(&self, request: AdmissionRequest) -> HandlerFuture<'_> {
        let validation = match request.operation {
            Operation::Connect => return Box::pin(async { AdmissionResponse::allowed() }),
            Operation::Create => decode(request.object.as_ref(), "object").map(Validation::Create),
            Operation::Update => decode(request.object.as_ref(), "object").and_then(|new| {
                let old = decode(request.old_object.as_ref(), "oldObject")?;
                Ok(Validation::Update { old, new })
            }),
            // The object being deleted is the old one.
            Operation::Delete => {
                decode(request.old_object.as_ref(), "oldObject").map(Validation::Delete)
            }
            Operation::Other(other) => Err(format!("unknown operation {other:?}")),
        };
        let verdict = validation.map(&self.validate);
        Box::pin(async move {
            match verdict {
                Err(refusal) => AdmissionResponse::errored(400, refusal),
                Ok(verdict) => match verdict.await {
                    Ok(warnings) => AdmissionResponse::allowed().with_warnings(warnings),
                    Err(denial) => denial.into_response(),
                },
            }
        })
    }
}

/// A handler that sets defaults on objects of kind `K` with `default` (controller-runtime's
/// `WithDefaulter`), for a mutating webhook: it gets the object, returns it as it should be
/// stored, and the API server is answered with the JSON Patch between the two. `DELETE` is
/// admitted without asking; an object that does not decode as a `K` is refused with 400; an
/// `Err` refuses the operation.
///
/// The patch is computed from the object as the API server sent it, so that fields `K` does
/// not know (a newer server's) are left alone: the removals that only decoding into `K` would
/// cause are dropped, as controller-runtime drops them.
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
/// use kclient_webhook::defaulting;
///
/// let handler = defaulting(|mut cm: ConfigMap| async move {
///     let data = cm.data.get_or_insert_with(Default::default);
///     if data.get("mode").is_none() {
///         data.insert("mode", "off".into());
///     }
///     Ok(cm)
/// });
/// # let _ = handler;
/// ```
pub fn defaulting<K, F, Fut>(default: F) -> impl Handler
where
    K: Serialize + DeserializeOwned + Send + 'static,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<K, Denial>> + Send + 'static,
{
    Defaulting {
        default,
        _kind: PhantomData,
    }
}

struct Defaulting<K, F> {
    default: F,
    _kind: PhantomData<fn() -> K>,
}

impl<K, F, Fut> Handler for Defaulting<K, F>
where
    K: Serialize + DeserializeOwned + Send + 'static,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<K, Denial>> + Send + 'static,
{
    fn handle(&self, request: AdmissionRequest) -> HandlerFuture<'_> {
        if request.operation == Operation::Delete {
            return Box::pin(async { AdmissionResponse::allowed() });
        }
        let raw = request.object.unwrap_or(Value::Null);
        let decoded = decode::<K>(Some(&raw), "object");
        let typed = decoded
            .as_ref()
            .ok()
            .map(|obj| serde_json::to_value(obj).map_err(|e| e.to_string()));
        let defaulted = decoded.map(&self.default);
        Box::pin(async move {
            let defaulted = match defaulted {
                Err(refusal) => return AdmissionResponse::errored(400, refusal),
                Ok(future) => match future.await {
                    Ok(obj) => obj,
                    Err(denial) => return denial.into_response(),
                },
            };
            let after = serde_json::to_value(&defaulted).map_err(|e| e.to_string());
            let (typed, after) = match (typed, after) {
                (Some(Ok(typed)), Ok(after)) => (typed, after),
                (Some(Err(e)), _) | (_, Err(e)) => {
                    return AdmissionResponse::errored(500, format!("encoding the object: {e}"));
                }
                (None, _) => return AdmissionResponse::errored(500, "the object was not decoded"),
            };
            if typed == after {
                return AdmissionResponse::allowed();
            }
            let decoding_removes = create_json_patch(&raw, &typed);
            let mut patch = create_json_patch(&raw, &after);
            patch.0.retain(|op| {
                !matches!(op, JsonPatchOperation::Remove { .. }) || !decoding_removes.0.contains(op)
            });
            AdmissionResponse::allowed().with_patch(&JsonPatch(patch.0))
        })
    }
}

/// Decodes the review's `what` (`object` or `oldObject`) as a `K`, or says why it cannot (the
/// message of the 400 that refuses the review).
fn decode<K: DeserializeOwned>(value: Option<&Value>, what: &str) -> Result<K, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Err(format!("there is no content to decode in {what}"));
    };
    // From the borrowed tree: an object of up to 3 MiB is not copied first.
    K::deserialize(value).map_err(|e| format!("decoding the {what} of the review: {e}"))
}

#[cfg(test)]
mod tests {
    use kclient_api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;
    use crate::review::PATCH_TYPE_JSON_PATCH;

    fn request(operation: &str, object: Value, old: Value) -> AdmissionRequest {
        serde_json::from_value(json!({
            "uid": "u", "operation": operation, "object": object, "oldObject": old,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        }))
        .unwrap()
    }

    fn code(response: &AdmissionResponse) -> i32 {
        response.result.as_ref().map_or(0, |s| s.code)
    }

    fn patch_of(response: &AdmissionResponse) -> Value {
        serde_json::from_slice(&response.patch).unwrap()
    }

    /// The patch leaves alone what only decoding into the type would drop (a field a newer
    /// server sends), as controller-runtime's dropSchemeRemovals does, and carries the change.
    #[tokio::test]
    async fn defaulting_patches_only_what_the_function_changed() {
        let handler = defaulting(|mut cm: ConfigMap| async move {
            let data = cm.data.get_or_insert_with(Default::default);
            if data.get("mode").is_none() {
                data.insert("mode", "off".into());
            }
            Ok(cm)
        });
        let raw = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "newerField": {"a": 1}}, "unknownTop": true});
        let response = handler.handle(request("CREATE", raw, Value::Null)).await;
        assert!(response.allowed);
        assert_eq!(response.patch_type.as_deref(), Some(PATCH_TYPE_JSON_PATCH));
        assert_eq!(
            patch_of(&response),
            json!([{"op": "add", "path": "/data", "value": {"mode": "off"}}])
        );

        // Nothing changed: no patch. A delete is not asked about.
        let response = handler
            .handle(request(
                "CREATE",
                json!({"metadata": {"name": "x"}, "data": {"mode": "on"}}),
                Value::Null,
            ))
            .await;
        assert!(response.allowed && response.patch.is_empty());
        let never = defaulting(|_: ConfigMap| async move { Err(Denial::new("asked")) });
        let response = never
            .handle(request("DELETE", Value::Null, json!({})))
            .await;
        assert!(response.allowed);
        // An object that is not a ConfigMap is refused with 400; an Err with its denial.
        let response = handler
            .handle(request("CREATE", json!({"data": 7}), Value::Null))
            .await;
        assert!(!response.allowed);
        assert_eq!(code(&response), 400);
        let response = never
            .handle(request(
                "CREATE",
                json!({"metadata": {"name": "x"}}),
                Value::Null,
            ))
            .await;
        assert_eq!((response.allowed, code(&response)), (false, 403));
    }

    #[tokio::test]
    async fn validating_dispatches_by_operation_as_controller_runtime() {
        let handler = validating(|v: Validation<ConfigMap>| async move {
            match v {
                Validation::Create(cm) => Ok(vec![format!(
                    "create {}",
                    cm.metadata.name.unwrap_or_default()
                )]),
                Validation::Update { old, new } => Err(Denial::new(format!(
                    "update {} -> {}",
                    old.metadata.resource_version.unwrap_or_default(),
                    new.metadata.resource_version.unwrap_or_default()
                ))
                .warn("w")),
                Validation::Delete(cm) => Err(Denial::with_status(Status {
                    code: 409,
                    reason: "Conflict".into(),
                    message: format!("delete {}", cm.metadata.name.unwrap_or_default()),
                    ..Status::default()
                })),
            }
        });
        let cm = |name: &str, rv: &str| json!({"metadata": {"name": name, "resourceVersion": rv}});
        let response = handler
            .handle(request("CREATE", cm("a", "1"), Value::Null))
            .await;
        assert!(response.allowed);
        assert_eq!(response.warnings, ["create a"]);
        let response = handler
            .handle(request("UPDATE", cm("a", "2"), cm("a", "1")))
            .await;
        assert_eq!((response.allowed, code(&response)), (false, 403));
        assert_eq!(response.result.as_ref().unwrap().message, "update 1 -> 2");
        assert_eq!(response.warnings, ["w"]);
        // A delete is asked about the object as it is (oldObject).
        let response = handler
            .handle(request("DELETE", Value::Null, cm("gone", "3")))
            .await;
        assert_eq!(code(&response), 409);
        assert_eq!(response.result.as_ref().unwrap().message, "delete gone");
        // CONNECT is admitted; an operation this version does not know is a 400.
        assert!(
            handler
                .handle(request("CONNECT", json!({}), Value::Null))
                .await
                .allowed
        );
        let response = handler
            .handle(request("PATCH", cm("a", "1"), Value::Null))
            .await;
        assert_eq!((response.allowed, code(&response)), (false, 400));
        assert!(
            response
                .result
                .unwrap()
                .message
                .contains(r#"unknown operation "PATCH""#)
        );
        // An update without its old object cannot be validated.
        let response = handler
            .handle(request("UPDATE", cm("a", "2"), Value::Null))
            .await;
        assert_eq!(code(&response), 400);
    }
}
