//! How many TCP connections 100 concurrent watches of one client use, against the local
//! kube-apiserver. A test binary of its own: it counts every connection this process holds, so
//! no other test may run beside it.

#[path = "../it/connections.rs"]
mod connections;
#[path = "../it/support.rs"]
mod support;

use support::{configmaps, create_cm};
