//! kclient's own Kubernetes API types, generated from the OpenAPI documents of the pinned
//! Kubernetes version, as client-go has `k8s.io/api`.
//!
//! Depends on `kclient-apimachinery` only; never on `rest` or any client crate.
