//! Controller tools, the counterpart of client-go's `tools/leaderelection`, `tools/record` and
//! `util/retry`.
//!
//! Depends on `rest`, `apimachinery` and the client crates; nothing below depends on it.
