//! Integration tests of kclient-discovery against the local kube-apiserver
//! (`scripts/testenv up`).

mod bad_documents;
mod crd;
mod discovery;
mod mapper;
mod openapi;
mod reencode;
