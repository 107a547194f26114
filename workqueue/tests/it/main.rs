//! The integration tests of kclient-workqueue: one binary, one module per concern. The queue
//! needs no API server, so these run anywhere.

#[cfg(workqueue_loom)]
mod loom;
#[cfg(not(workqueue_loom))]
mod priority_stress;
#[cfg(not(workqueue_loom))]
mod send_sync;
#[cfg(not(workqueue_loom))]
mod stress;
