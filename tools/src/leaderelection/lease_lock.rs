//! [`LeaseLock`], client-go's `resourcelock.LeaseLock`: a [`ResourceLock`] on a
//! `coordination.k8s.io/v1` Lease.
//!
//! The lock keeps the Lease it last read or wrote; an update sends that object with the new
//! spec, so its `metadata.resourceVersion` makes the write a compare-and-swap. Two candidates
//! that both saw the same expired Lease cannot both win: the second update gets a Conflict.

use std::collections::BTreeMap;

use kclient_api::coordination::v1::Lease;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{CreateOptions, Error, GetOptions, UpdateOptions};
use kclient_clientset::Api;
use parking_lot::Mutex;

use super::record::LeaderElectionRecord;
use super::resource_lock::{LockFuture, ResourceLock};
use crate::record::{EventRecorder, EventType};

/// A leader election lock stored in a Lease object.
///
/// ```no_run
/// # fn run(clientset: kclient_clientset::Clientset) {
/// use kclient_tools::LeaseLock;
///
/// let lock = LeaseLock::new(clientset.coordination_v1().leases("kube-system"), "my-controller", "pod-abc");
/// # }
/// ```
pub struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
    labels: BTreeMap<String, String>,
    recorder: Option<EventRecorder>,
    /// The Lease last read or written; its resourceVersion guards the next update.
    lease: Mutex<Option<Lease>>,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("namespace", &self.api.namespace())
            .field("name", &self.name)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// A lock on the Lease `name` in the namespace of `api`, held as `identity`.
    ///
    /// `identity` must be unique among candidates (a pod name, or hostname plus a UUID).
    pub fn new(api: Api<Lease>, name: impl Into<String>, identity: impl Into<String>) -> Self {
        LeaseLock {
            api,
            name: name.into(),
            identity: identity.into(),
            labels: BTreeMap::new(),
            recorder: None,
            lease: Mutex::new(None),
        }
    }

    /// Labels to set on the Lease when this lock creates or updates it, keeping any other
    /// labels it has (client-go's `LeaseLock.Labels`).
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    /// Records `LeaderElection` events about the Lease ("became leader", "stopped leading")
    /// with `recorder` (client-go's `ResourceLockConfig.EventRecorder`).
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The Lease's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lease's namespace.
    pub fn namespace(&self) -> &str {
        self.api.namespace()
    }
}

impl ResourceLock for LeaseLock {
    fn get(&self) -> LockFuture<'_, LeaderElectionRecord> {
        Box::pin(async move {
            let lease = self.api.get(&self.name, &GetOptions::default()).await?;
            let record = LeaderElectionRecord::from_lease_spec(lease.spec.as_deref());
            *self.lease.lock() = Some(lease);
            Ok(record)
        })
    }

    fn create(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()> {
        Box::pin(async move {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.as_str().into()),
                    namespace: Some(self.api.namespace().into()),
                    labels: (!self.labels.is_empty()).then(|| {
                        self.labels
                            .iter()
                            .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                            .collect()
                    }),
                    ..ObjectMeta::default()
                },
                spec: Some(Box::new(record.to_lease_spec())),
            };
            let created = self.api.create(&lease, &CreateOptions::default()).await?;
            *self.lease.lock() = Some(created);
            Ok(())
        })
    }

    fn update(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()> {
        Box::pin(async move {
            let current = self.lease.lock().clone();
            let Some(mut lease) = current else {
                return Err(Error::invalid_request(
                    "lease not initialized, call get or create first",
                ));
            };
            lease.spec = Some(Box::new(record.to_lease_spec()));
            // Set this lock's labels, keeping the Lease's others (client-go's `Update`): a
            // Lease created before the labels were configured, or by another candidate, gets
            // them too.
            if !self.labels.is_empty() {
                let labels = lease.metadata.labels.get_or_insert_with(Default::default);
                for (k, v) in &self.labels {
                    labels.insert(k.as_str(), v.as_str().into());
                }
            }
            let updated = self.api.update(&lease, &UpdateOptions::default()).await?;
            *self.lease.lock() = Some(updated);
            Ok(())
        })
    }

    fn record_event(&self, event: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        // The event is about the Lease as last seen (client-go records a Lease with only its
        // metadata; the reference needs no more).
        let lease = self.lease.lock().clone();
        let Some(lease) = lease else {
            return;
        };
        recorder.event(
            &lease,
            EventType::Normal,
            "LeaderElection",
            &format!("{} {event}", self.identity),
        );
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.api.namespace(), self.name)
    }
}
