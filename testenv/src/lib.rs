//! Test helper for kclient's integration tests: reach the local kube-apiserver that
//! `scripts/testenv` starts.
//!
//! A dev-dependency only; no library crate depends on it.
