//! Work queues for controllers, the counterpart of client-go's `util/workqueue`.
//!
//! It depends on no other kclient crate: the queues are useful outside Kubernetes.
