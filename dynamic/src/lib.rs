//! The dynamic client, the counterpart of client-go's `dynamic` package.
//!
//! Depends on `rest` and `apimachinery`; never on `api`, `cache` or `informers`.
