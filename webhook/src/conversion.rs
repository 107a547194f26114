//! CRD version conversion (controller-runtime's `webhook/conversion`): the
//! `apiextensions.k8s.io/v1` [`ConversionReview`] the API server sends when a custom resource
//! is read or written in another version than it is stored in, and the [`Converter`] that
//! answers it, one object at a time.

use kclient_apimachinery::{Status, null_as_default};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the API server sends a conversion webhook and gets back (`ConversionReview`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReview {
    /// `apiextensions.k8s.io/v1` (or `v1beta1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ConversionReview`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The objects to convert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ConversionRequest>,
    /// The converted objects, or why they could not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ConversionResponse>,
}

/// Objects to convert to one version (`ConversionRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionRequest {
    /// Identifies this review; the response carries it back.
    #[serde(default)]
    pub uid: String,
    /// The `group/version` to convert every object to.
    #[serde(rename = "desiredAPIVersion", default)]
    pub desired_api_version: String,
    /// The objects, each in its own version.
    #[serde(default)]
    pub objects: Vec<Value>,
}

/// The converted objects (`ConversionResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The request's `uid`.
    #[serde(default)]
    pub uid: String,
    /// The objects converted, in the request's order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub converted_objects: Vec<Value>,
    /// `status: Success`, or `Failure` with a message.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: Status,
}

/// Converts custom resources between the versions of a CRD (controller-runtime's conversion
/// webhook, with its `Hub` and `Convertible` types folded into one function): `convert(object,
/// desired_api_version)` returns the object in `desired_api_version` (`group/version`), or why
/// it cannot. Any `Fn(Value, &str) -> Result<Value, String>` is one.
pub trait Converter: Send + Sync + 'static {
    /// `object`, whose `apiVersion` is another version of the same group, in
    /// `desired_api_version`.
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, String>;
}

impl<F> Converter for F
where
    F: Fn(Value, &str) -> Result<Value, String> + Send + Sync + 'static,
{
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, String> {
        self(object, desired_api_version)
    }
}

/// The answer to `request`: every object converted, or `Failure` with the first error (as
/// controller-runtime answers; the API server then fails the read or write). A converted
/// object must be in the desired version and keep its kind.
pub(crate) fn convert_all(
    converter: &dyn Converter,
    request: &ConversionRequest,
) -> ConversionResponse {
    let mut converted = Vec::with_capacity(request.objects.len());
    for object in &request.objects {
        let from = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        if from == request.desired_api_version {
            return failure(
                &request.uid,
                format!("conversion is not allowed between the same version {from} of {kind}"),
            );
        }
        let result = converter
            .convert(object.clone(), &request.desired_api_version)
            .and_then(|out| {
                if out["apiVersion"] != request.desired_api_version.as_str() {
                    return Err(format!(
                        "the converter returned apiVersion {} for {kind}, not {}",
                        out["apiVersion"], request.desired_api_version
                    ));
                }
                if out["kind"] != kind.as_str() {
                    return Err(format!(
                        "the converter returned kind {} for {kind}",
                        out["kind"]
                    ));
                }
                Ok(out)
            });
        match result {
            Ok(out) => converted.push(out),
            Err(message) => return failure(&request.uid, message),
        }
    }
    ConversionResponse {
        uid: request.uid.clone(),
        converted_objects: converted,
        result: Status {
            status: "Success".to_owned(),
            ..Status::default()
        },
    }
}

/// A failed conversion's answer.
pub(crate) fn failure(uid: &str, message: String) -> ConversionResponse {
    ConversionResponse {
        uid: uid.to_owned(),
        converted_objects: Vec::new(),
        result: Status {
            status: "Failure".to_owned(),
            message,
            ..Status::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(objects: Vec<Value>) -> ConversionRequest {
        ConversionRequest {
            uid: "u".into(),
            desired_api_version: "example.com/v2".into(),
            objects,
        }
    }

    #[test]
    fn objects_are_converted_in_order_or_the_review_fails() {
        let converter = |mut object: Value, to: &str| -> Result<Value, String> {
            if object["spec"]["bad"] == true {
                return Err("cannot convert a bad one".into());
            }
            object["apiVersion"] = json!(to);
            Ok(object)
        };
        let one = |name: &str, bad: bool| {
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": name}, "spec": {"bad": bad}})
        };
        let response = convert_all(&converter, &request(vec![one("a", false), one("b", false)]));
        assert_eq!(response.uid, "u");
        assert_eq!(response.result.status, "Success");
        let names: Vec<_> = response
            .converted_objects
            .iter()
            .map(|o| (o["metadata"]["name"].clone(), o["apiVersion"].clone()))
            .collect();
        assert_eq!(
            names,
            [
                (json!("a"), json!("example.com/v2")),
                (json!("b"), json!("example.com/v2"))
            ]
        );

        let response = convert_all(&converter, &request(vec![one("a", false), one("b", true)]));
        assert_eq!(response.result.status, "Failure");
        assert_eq!(response.result.message, "cannot convert a bad one");
        assert!(response.converted_objects.is_empty());

        // A converter that forgets the version, or an object already in it, fails the review.
        let lazy = |object: Value, _: &str| -> Result<Value, String> { Ok(object) };
        let response = convert_all(&lazy, &request(vec![one("a", false)]));
        assert!(
            response.result.message.contains("not example.com/v2"),
            "{}",
            response.result.message
        );
        let mut same = one("a", false);
        same["apiVersion"] = json!("example.com/v2");
        let response = convert_all(&converter, &request(vec![same]));
        assert!(
            response.result.message.contains("same version"),
            "{}",
            response.result.message
        );
    }
}
