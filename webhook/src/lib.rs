//! Admission and conversion webhooks, as controller-runtime's `webhook`, `webhook/admission`
//! and `webhook/conversion` packages give them to Go controllers: the API server asks the
//! webhook, over HTTPS, whether to admit (and how to change) each create, update or delete of
//! the objects it registered for, and how to convert a custom resource between the versions
//! of its CRD.
//!
//! - [`review`](AdmissionReview): the `admission.k8s.io/v1` wire types, [`AdmissionReview`],
//!   [`AdmissionRequest`] and [`AdmissionResponse`], with the answers controller-runtime builds
//!   ([`AdmissionResponse::allowed`], [`denied`](AdmissionResponse::denied),
//!   [`errored`](AdmissionResponse::errored), [`with_patch`](AdmissionResponse::with_patch),
//!   [`with_warnings`](AdmissionResponse::with_warnings)).
//! - [`Handler`]: what answers the calls of one path; any `async` function from a request to a
//!   response is one. [`validating`] (controller-runtime's `CustomValidator`) decodes the
//!   objects of a kind for a function that admits or refuses each create, update or delete;
//!   [`defaulting`] (its `CustomDefaulter`) lets a function change the object and answers with
//!   the JSON Patch ([`create_json_patch`](kclient_apimachinery::create_json_patch)) between
//!   the object sent and the object returned.
//! - [`Converter`]: CRD version conversion (controller-runtime's conversion webhook): any
//!   `Fn(object, desired_api_version) -> Result<object, String>` answers the API server's
//!   [`ConversionReview`]s for a CRD whose `spec.conversion.strategy` is `Webhook`.
//! - [`WebhookServer`]: the HTTPS server (controller-runtime's `webhook.Server`, port 9443 by
//!   default), a handler or converter per path, its certificate read again when the files
//!   change, bad calls refused as controller-runtime refuses them, bounded request bodies.
//!
//! Register the webhook with the API server in a `ValidatingWebhookConfiguration` or
//! `MutatingWebhookConfiguration` naming the server (a Service, or a URL) and the CA that
//! signed its certificate (`caBundle`). Served at [`validate_path`] and [`mutate_path`]
//! (and conversions at [`CONVERT_PATH`]), the handlers answer at the paths controller-runtime
//! serves, which the manifests that controller-gen writes from kubebuilder's markers name;
//! [`WebhookServer::with_validator`] and [`WebhookServer::with_defaulter`] register a kind's
//! handlers there, as controller-runtime's `NewWebhookManagedBy(mgr).For(&K{})` does.
//!
//! ```no_run
//! use kclient_api::core::v1::ConfigMap;
//! use kclient_webhook::{
//!     Denial, Validation, WebhookServer, defaulting, mutate_path, validate_path, validating,
//! };
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run() -> Result<(), kclient_webhook::Error> {
//! let server = WebhookServer::new("/certs/tls.crt", "/certs/tls.key")
//!     .handle(
//!         &validate_path::<ConfigMap>(), // "/validate--v1-configmap"
//!         validating(|v: Validation<ConfigMap>| async move {
//!             match v {
//!                 Validation::Create(cm) | Validation::Update { new: cm, .. }
//!                     if cm.data.as_ref().is_some_and(|d| d.get("password").is_some()) =>
//!                 {
//!                     Err(Denial::new("put passwords in a Secret"))
//!                 }
//!                 _ => Ok(vec![]),
//!             }
//!         }),
//!     )
//!     .handle(
//!         &mutate_path::<ConfigMap>(),
//!         defaulting(|mut cm: ConfigMap| async move {
//!             let data = cm.data.get_or_insert_with(Default::default);
//!             if data.get("mode").is_none() {
//!                 data.insert("mode", "off".into());
//!             }
//!             Ok(cm)
//!         }),
//!     )
//!     .bind()
//!     .await?;
//! let shutdown = CancellationToken::new();
//! server.run(shutdown).await;
//! # Ok(()) }
//! ```

mod conversion;
mod error;
mod handler;
mod paths;
mod review;
mod server;

pub use crate::conversion::{ConversionRequest, ConversionResponse, ConversionReview, Converter};
pub use crate::error::Error;
pub use crate::handler::{Denial, Handler, HandlerFuture, Validation, defaulting, validating};
pub use crate::paths::{
    CONVERT_PATH, mutate_path, mutate_path_for, validate_path, validate_path_for,
};
pub use crate::review::{
    ADMISSION_V1, AdmissionRequest, AdmissionResponse, AdmissionReview, Operation,
    PATCH_TYPE_JSON_PATCH, ReviewKind, ReviewResource,
};
pub use crate::server::{
    BoundWebhookServer, DEFAULT_CERT_CHECK_PERIOD, DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONVERSION_REQUEST_SIZE, DEFAULT_PORT, DEFAULT_SHUTDOWN_TIMEOUT, MAX_REQUEST_SIZE,
    WebhookServer,
};
