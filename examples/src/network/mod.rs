//! The Network controller: the seed article's custom controller for the `Network` resource,
//! built the way client-go's sample-controller is.
//!
//! - [`types`]: the `Network` custom resource (`samplecrd.k8s.io/v1`).
//! - [`crd`]: installing its CustomResourceDefinition and waiting until it is Established.
//! - [`validation`]: what a valid spec is (a CIDR and a gateway inside it).
//! - [`config_map`]: the "actual network", a ConfigMap owned by the Network, and the two-way
//!   merge patch that repairs it.
//! - [`controller`]: informers, handlers, the rate-limited workqueue, workers and reconcile.
//! - [`demo`]: the guided tour `network-controller --demo` prints.

pub(crate) mod config_map;
pub(crate) mod controller;
pub(crate) mod crd;
pub(crate) mod demo;
pub(crate) mod types;
pub(crate) mod validation;
