//! Integration tests of kclient-dynamic against the local kube-apiserver
//! (`scripts/testenv up`).

mod builtin;
mod custom;
mod deep;
mod metadata;
