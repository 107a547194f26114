//! Integration tests of the examples crate against the local kube-apiserver (`scripts/testenv
//! up`): the Network controller run in-process, restricted to a fresh test namespace.

mod network_controller;
