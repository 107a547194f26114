//! Discovery of API groups and resources, the counterpart of client-go's `discovery` and
//! `restmapper` packages.
//!
//! Depends on `rest` and `apimachinery`; never on `api`, `cache` or `informers`.
