//! [`HealthzAdaptor`], client-go's `leaderelection.HealthzAdaptor`: a health check of the
//! leader election that can be made (and served) before the elector exists.
//!
//! A leader whose renew loop is stuck (a deadlock, a starved runtime, an API server it cannot
//! reach while nothing makes the process exit) still believes it leads while others may have
//! taken over. The check reports that, so that a liveness probe restarts the process; it
//! does not report followers, nor a leader whose last renewal is recent enough.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::elector::{ElectorHealth, LeaderElector};
use crate::error::Error;

/// A leader election health check to serve from a `/healthz` endpoint (client-go's
/// `HealthzAdaptor`, named `"leaderElection"`).
///
/// Make it with the longest time a lease may stay expired before this candidate, still
/// believing it leads, is reported unhealthy (client-go's `NewLeaderHealthzAdaptor(timeout)`),
/// and put it in [`LeaderElectionConfig::watch_dog`](crate::LeaderElectionConfig::watch_dog)
/// (client-go's `WatchDog`): [`LeaderElector::new`] attaches itself to it. Until then, and
/// whenever this candidate does not lead, [`check`](Self::check) passes; it fails once this
/// candidate leads but has not renewed the lease for `lease_duration +
/// max_tolerable_expired_lease` ([`LeaderElector::check`]). Clones share the one check, so a
/// clone can be handed to the HTTP server before the elector is built.
///
/// ```no_run
/// # fn run(clientset: kclient_clientset::Clientset, callbacks: kclient_tools::LeaderCallbacks) {
/// use std::time::Duration;
/// use kclient_tools::{HealthzAdaptor, LeaderElectionConfig, LeaderElector, LeaseLock};
///
/// // Before the elector: give a clone to whatever serves /healthz.
/// let healthz = HealthzAdaptor::new(Duration::from_secs(20));
/// let served = healthz.clone();
/// let probe = move || match served.check() {
///     Ok(()) => (200, format!("[+]{} ok", served.name())),
///     Err(e) => (500, format!("[-]{} failed: {e}", served.name())),
/// };
///
/// let lock = LeaseLock::new(clientset.coordination_v1().leases("default"), "my-lock", "pod-1");
/// let config = LeaderElectionConfig::new(lock, callbacks).watch_dog(healthz);
/// let elector = LeaderElector::new(config); // the check now reports this elector
/// # let _ = (probe, elector);
/// # }
/// ```
#[derive(Clone)]
pub struct HealthzAdaptor {
    inner: Arc<Inner>,
}

struct Inner {
    elector: Mutex<Option<ElectorHealth>>,
    max_tolerable_expired_lease: Duration,
}

impl HealthzAdaptor {
    /// The check's name, client-go's: `"leaderElection"`.
    pub const NAME: &'static str = "leaderElection";

    /// A check with no elector yet, which tolerates a lease expired for up to
    /// `max_tolerable_expired_lease` (client-go's `NewLeaderHealthzAdaptor`).
    pub fn new(max_tolerable_expired_lease: Duration) -> Self {
        HealthzAdaptor {
            inner: Arc::new(Inner {
                elector: Mutex::new(None),
                max_tolerable_expired_lease,
            }),
        }
    }

    /// The check's name, `"leaderElection"` (client-go's `Name`).
    pub fn name(&self) -> &'static str {
        Self::NAME
    }

    /// How long a lease may stay expired before a candidate that still believes it leads is
    /// reported.
    pub fn max_tolerable_expired_lease(&self) -> Duration {
        self.inner.max_tolerable_expired_lease
    }

    /// Passes when no elector is attached yet or this candidate does not lead; fails
    /// ([`Error::is_lease_expired`](crate::Error::is_lease_expired)) when it leads but has not
    /// renewed the lease for `lease_duration + max_tolerable_expired_lease` (client-go's
    /// `Check`).
    pub fn check(&self) -> Result<(), Error> {
        match &*self.inner.elector.lock() {
            Some(elector) => elector.check(self.inner.max_tolerable_expired_lease),
            None => Ok(()),
        }
    }

    /// Reports `elector` from now on, in place of any attached before (client-go's
    /// `SetLeaderElection`). [`LeaderElector::new`] calls it for the adaptor of its
    /// configuration's `watch_dog`.
    pub fn set_leader_election(&self, elector: &LeaderElector) {
        *self.inner.elector.lock() = Some(elector.health());
    }
}

impl fmt::Debug for HealthzAdaptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HealthzAdaptor")
            .field("name", &Self::NAME)
            .field(
                "max_tolerable_expired_lease",
                &self.inner.max_tolerable_expired_lease,
            )
            .field("elector", &self.inner.elector.lock().is_some())
            .finish()
    }
}
