//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace, and the
//! `api-resources` example compared with kubectl.

mod api_resources;
mod network_controller;
