//! Integration tests of the informer machinery against the real kube-apiserver that
//! `scripts/testenv up` starts. The cache crate knows nothing about HTTP, so these tests bring
//! their own adapter ([`adapter`]): a `ListerWatcher` for ConfigMaps over `kclient-rest`.
//! [`misbehaving`] points the same adapter at a scripted server that sends what a broken
//! apiserver or proxy can send.

mod adapter;
mod faults;
mod informer;
mod misbehaving;
