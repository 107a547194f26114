//! Leader election, client-go's `tools/leaderelection`: candidates compete for a lock object;
//! one leads and renews it, the others take over when it stops. See [`LeaderElector`] for
//! the timing rules.

mod config;
mod elector;
mod healthz;
mod lease_lock;
mod record;
mod resource_lock;

pub use config::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, JITTER_FACTOR,
    LeaderCallbacks, LeaderElectionConfig,
};
pub use elector::LeaderElector;
pub use healthz::HealthzAdaptor;
pub use lease_lock::LeaseLock;
pub use record::LeaderElectionRecord;
pub use resource_lock::{LockFuture, ResourceLock};
