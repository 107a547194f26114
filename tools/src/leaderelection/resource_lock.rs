//! [`ResourceLock`], client-go's `resourcelock.Interface`: where a [`LeaderElector`]
//! reads and writes its [`LeaderElectionRecord`].
//!
//! client-go keeps only the Lease lock ([`LeaseLock`](crate::LeaseLock)); the Endpoints and
//! ConfigMap locks were removed, and so are absent here. The trait stays so that other
//! stores (and tests) can plug in.
//!
//! [`LeaderElector`]: crate::LeaderElector

use std::future::Future;
use std::pin::Pin;

use kclient_apimachinery::Error;

use super::record::LeaderElectionRecord;

/// The future a [`ResourceLock`] operation returns.
pub type LockFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// A store for a [`LeaderElectionRecord`] with optimistic concurrency.
///
/// The contract the elector relies on: [`update`](ResourceLock::update) writes over the
/// version last returned by [`get`](ResourceLock::get), [`create`](ResourceLock::create) or
/// a successful `update`, and fails with a Conflict if the stored object changed meanwhile;
/// `create` fails with AlreadyExists if the object exists; `get` fails with NotFound if not.
pub trait ResourceLock: Send + Sync + 'static {
    /// Reads the current record, remembering the version for the next update.
    fn get(&self) -> LockFuture<'_, LeaderElectionRecord>;

    /// Creates the lock object holding `record`.
    fn create(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()>;

    /// Replaces the record, conditional on the version last read or written.
    fn update(&self, record: LeaderElectionRecord) -> LockFuture<'_, ()>;

    /// Records an event about the lock ("became leader", "stopped leading"); optional.
    fn record_event(&self, _event: &str) {}

    /// This candidate's identity: what it writes as `holderIdentity`.
    fn identity(&self) -> &str;

    /// A description of the lock for logs, such as `namespace/name`.
    fn describe(&self) -> String;
}
