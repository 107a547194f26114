//! The informer machinery, the counterpart of client-go's `tools/cache`.
//!
//! Depends on `apimachinery` only: it knows nothing about HTTP and sees the API server through
//! a `ListerWatcher` trait that client crates implement.
