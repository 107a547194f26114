//! The Network controller: the seed article's custom controller for the `Network` resource,
//! twice: on kclient's controller runtime (the flagship) and by hand the way client-go's
//! sample-controller is.
//!
//! - [`types`]: the `Network` custom resource (`samplecrd.k8s.io/v1`), whose types derive
//!   the CRD's schema.
//! - [`crd`]: installing its CustomResourceDefinition (or updating an older one) and waiting
//!   until it is Established.
//! - [`validation`]: what a valid spec is (a CIDR and a gateway inside it).
//! - [`config_map`]: the "actual network", a ConfigMap owned by the Network, and the two-way
//!   merge patch that repairs it.
//! - [`controller`]: the flagship controller on `kclient::controller`'s runtime: a manager
//!   (leader election, probes, metrics), a builder, predicates and one reconcile function.
//! - [`sample_controller`]: the same controller by hand on client-go's parts: informers,
//!   handlers, the rate-limited workqueue, workers and reconcile.
//! - [`sync`]: the reconcile step both share once they hold the Network: validate the spec,
//!   ensure the ConfigMap, write the status.
//! - [`options`], [`sync_event`], [`status`]: what both take, report and write (the status
//!   with its `Ready` condition).
//! - [`implementation`]: choosing one of the two at run time (the demo, the tests).
//! - [`command_line`]: the flags both binaries take.
//! - [`demo`]: the guided tour `network-controller --demo` prints.
//! - [`http_get`]: reading the manager's probe and metrics endpoints.

pub(crate) mod command_line;
pub(crate) mod config_map;
pub(crate) mod controller;
pub(crate) mod crd;
pub(crate) mod demo;
pub(crate) mod http_get;
pub(crate) mod implementation;
pub(crate) mod options;
pub(crate) mod sample_controller;
pub(crate) mod status;
pub(crate) mod sync;
pub(crate) mod sync_event;
pub(crate) mod types;
pub(crate) mod validation;
