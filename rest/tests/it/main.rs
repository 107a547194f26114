//! Integration tests of kclient-rest against the local kube-apiserver (`scripts/testenv up`),
//! plus kubeconfig resolution checked against `kubectl config view --minify --flatten`.

mod auth;
mod crud;
mod faults;
mod kubeconfig_write;
mod kubectl;
#[cfg(feature = "protobuf")]
mod protobuf_status;
#[cfg(feature = "protobuf")]
mod protobuf_strings;
mod support;
mod watch;

use support::{configmaps, create_cm};
