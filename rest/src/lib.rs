//! The Kubernetes REST client, the counterpart of client-go's `rest`, `transport` and
//! `tools/clientcmd`.
//!
//! Depends on `kclient-apimachinery` only; never on `api`, the client crates or `cache`.
