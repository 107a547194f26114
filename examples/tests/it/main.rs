//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace, and the
//! `api-resources`, `explain` and `cluster-info` examples compared with kubectl.

mod api_resources;
mod cluster_info;
mod explain;
mod network_controller;
