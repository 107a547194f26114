//! Typed Kubernetes clients, the counterpart of client-go's `kubernetes` package.
//!
//! Depends on `rest`, `apimachinery` and `api`; never on `cache` or `informers`.
