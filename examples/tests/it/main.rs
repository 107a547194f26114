//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace, and the
//! `api-resources` and `explain` examples compared with kubectl.

mod api_resources;
mod explain;
mod network_controller;
