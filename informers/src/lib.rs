//! Shared informer factories, the counterpart of client-go's `informers` package.
//!
//! Depends on `cache`, `clientset`, `dynamic` and `rest`.
