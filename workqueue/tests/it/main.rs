//! The integration tests of kclient-workqueue: one binary, one module per concern. The queue
//! needs no API server, so these run anywhere.

mod send_sync;
mod stress;
