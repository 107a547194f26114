//! [`LeaderElectionConfig`] and [`LeaderCallbacks`], client-go's `LeaderElectionConfig` and
//! `LeaderCallbacks`, with the checks of `NewLeaderElector`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::healthz::HealthzAdaptor;
use super::resource_lock::ResourceLock;
use crate::error::Error;

/// How much a candidate's retry period is stretched at most by jitter (client-go's
/// `JitterFactor`): each acquire attempt waits `retry_period * (1 + rand[0,1) * 1.2)`.
pub const JITTER_FACTOR: f64 = 1.2;

/// The lease duration core Kubernetes components use: 15 s.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// The renew deadline core Kubernetes components use: 10 s.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// The retry period core Kubernetes components use: 2 s.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

type StartedFn =
    Arc<dyn Fn(CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;
type StoppedFn = Arc<dyn Fn() + Send + Sync>;
type NewLeaderFn = Arc<dyn Fn(&str) + Send + Sync>;

/// What a [`LeaderElector`](crate::LeaderElector) calls as leadership changes (client-go's
/// `LeaderCallbacks`). `on_started_leading` and `on_stopped_leading` are required.
///
/// ```
/// use kclient_tools::LeaderCallbacks;
///
/// let callbacks = LeaderCallbacks::new()
///     .on_started_leading(|leading| async move {
///         // Do the leader's work until `leading` is cancelled.
///         leading.cancelled().await;
///     })
///     .on_stopped_leading(|| eprintln!("no longer leading"))
///     .on_new_leader(|identity| eprintln!("the leader is now {identity}"));
/// ```
#[derive(Clone, Default)]
pub struct LeaderCallbacks {
    pub(crate) on_started_leading: Option<StartedFn>,
    pub(crate) on_stopped_leading: Option<StoppedFn>,
    pub(crate) on_new_leader: Option<NewLeaderFn>,
}

impl LeaderCallbacks {
    /// No callbacks yet; set at least the two required ones.
    pub fn new() -> Self {
        LeaderCallbacks::default()
    }

    /// Called when this candidate starts leading. The returned future is spawned as its own
    /// task; the token is cancelled when leadership ends (lost, or the elector cancelled), and
    /// the future should then stop the leader's work.
    pub fn on_started_leading<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_started_leading = Some(Arc::new(move |token| Box::pin(f(token))));
        self
    }

    /// Called when [`LeaderElector::run`](crate::LeaderElector::run) returns, whether or not
    /// this candidate ever led (as client-go does).
    pub fn on_stopped_leading<F>(mut self, f: F) -> Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_stopped_leading = Some(Arc::new(f));
        self
    }

    /// Called with the new leader's identity whenever this candidate observes a leader other
    /// than the one it last reported, including the first one (and `""` after a release).
    /// Called on the elector's task: it must not block.
    pub fn on_new_leader<F>(mut self, f: F) -> Self
    where
        F: Fn(&str) + Send + Sync + 'static,
    {
        self.on_new_leader = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderCallbacks")
            .field("on_started_leading", &self.on_started_leading.is_some())
            .field("on_stopped_leading", &self.on_stopped_leading.is_some())
            .field("on_new_leader", &self.on_new_leader.is_some())
            .finish()
    }
}

/// How a [`LeaderElector`](crate::LeaderElector) competes for a lock (client-go's
/// `LeaderElectionConfig`).
///
/// The durations must satisfy `lease_duration > renew_deadline > JITTER_FACTOR *
/// retry_period`, all above zero, and `lease_duration` fits the Lease's `leaseDurationSeconds`
/// (at most `i32::MAX` seconds). [`LeaderElectionConfig::new`] starts from the durations
/// core Kubernetes components use: 15 s, 10 s and 2 s.
///
/// ```no_run
/// # fn run(clientset: kclient_clientset::Clientset, callbacks: kclient_tools::LeaderCallbacks) {
/// use std::time::Duration;
/// use kclient_tools::{LeaderElectionConfig, LeaderElector, LeaseLock};
///
/// let lock = LeaseLock::new(clientset.coordination_v1().leases("default"), "my-lock", "pod-1");
/// let mut config = LeaderElectionConfig::new(lock, callbacks);
/// config.lease_duration = Duration::from_secs(30);
/// config.renew_deadline = Duration::from_secs(20);
/// config.retry_period = Duration::from_secs(5);
/// config.release_on_cancel = true;
/// // Rejected if the durations break the rules above or a required callback is missing.
/// let elector = LeaderElector::new(config);
/// # }
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct LeaderElectionConfig {
    /// Where the election record lives, and this candidate's identity.
    pub lock: Arc<dyn ResourceLock>,
    /// How long a candidate waits without seeing the record change before it takes over,
    /// measured on its own clock from when it last saw a change. Also written to the record
    /// (in whole seconds) for other candidates.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failed renewal before it gives up leadership.
    pub renew_deadline: Duration,
    /// How long candidates wait between attempts (jittered by [`JITTER_FACTOR`] while
    /// acquiring).
    pub retry_period: Duration,
    /// What to call as leadership changes.
    pub callbacks: LeaderCallbacks,
    /// Whether to release the lock when `run` is cancelled: write an empty holder with a
    /// one-second lease, so another candidate takes over at once instead of waiting out the
    /// lease. Everything guarded by the lease must be finished before cancelling.
    pub release_on_cancel: bool,
    /// A name for logs.
    pub name: String,
    /// A health check that reports the elector built from this configuration (client-go's
    /// `WatchDog`): [`LeaderElector::new`](crate::LeaderElector::new) attaches itself to it.
    pub watch_dog: Option<HealthzAdaptor>,
}

impl LeaderElectionConfig {
    /// How long a candidate waits without seeing the record change before it takes over,
    /// measured on its own clock from when it last saw a change. Also written to the record
    /// (in whole seconds) for other candidates.
    pub fn lease_duration(mut self, lease_duration: Duration) -> Self {
        self.lease_duration = lease_duration;
        self
    }

    /// How long the leader keeps retrying a failed renewal before it gives up leadership.
    pub fn renew_deadline(mut self, renew_deadline: Duration) -> Self {
        self.renew_deadline = renew_deadline;
        self
    }

    /// How long candidates wait between attempts (jittered by [`JITTER_FACTOR`] while
    /// acquiring).
    pub fn retry_period(mut self, retry_period: Duration) -> Self {
        self.retry_period = retry_period;
        self
    }

    /// Whether to release the lock when `run` is cancelled: write an empty holder with a
    /// one-second lease, so another candidate takes over at once instead of waiting out the
    /// lease. Everything guarded by the lease must be finished before cancelling.
    pub fn release_on_cancel(mut self, release_on_cancel: bool) -> Self {
        self.release_on_cancel = release_on_cancel;
        self
    }

    /// A name for logs.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// A health check that reports the elector built from this configuration (client-go's
    /// `WatchDog`): keep a clone of `watch_dog` to serve it from `/healthz`.
    pub fn watch_dog(mut self, watch_dog: HealthzAdaptor) -> Self {
        self.watch_dog = Some(watch_dog);
        self
    }
}

impl LeaderElectionConfig {
    /// A configuration with the default durations (15 s, 10 s, 2 s) and no release on cancel.
    pub fn new(lock: impl ResourceLock, callbacks: LeaderCallbacks) -> Self {
        LeaderElectionConfig {
            lock: Arc::new(lock),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            callbacks,
            release_on_cancel: false,
            name: String::new(),
            watch_dog: None,
        }
    }

    /// Checks the rules of client-go's `NewLeaderElector`.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.lease_duration <= self.renew_deadline {
            return Err(Error::invalid_config(
                "lease_duration must be greater than renew_deadline",
            ));
        }
        // In floating point: `Duration::mul_f64` panics past `Duration::MAX`.
        if self.renew_deadline.as_secs_f64() <= self.retry_period.as_secs_f64() * JITTER_FACTOR {
            return Err(Error::invalid_config(
                "renew_deadline must be greater than retry_period * JITTER_FACTOR",
            ));
        }
        if self.lease_duration.is_zero() {
            return Err(Error::invalid_config(
                "lease_duration must be greater than zero",
            ));
        }
        // The Lease holds it in whole seconds as an int32 (client-go's conversion wraps).
        if self.lease_duration.as_secs() > i32::MAX as u64 {
            return Err(Error::invalid_config(
                "lease_duration must be at most 2147483647 s (the Lease's leaseDurationSeconds)",
            ));
        }
        if self.renew_deadline.is_zero() {
            return Err(Error::invalid_config(
                "renew_deadline must be greater than zero",
            ));
        }
        if self.retry_period.is_zero() {
            return Err(Error::invalid_config(
                "retry_period must be greater than zero",
            ));
        }
        if self.callbacks.on_started_leading.is_none() {
            return Err(Error::invalid_config(
                "the on_started_leading callback is required",
            ));
        }
        if self.callbacks.on_stopped_leading.is_none() {
            return Err(Error::invalid_config(
                "the on_stopped_leading callback is required",
            ));
        }
        if self.lock.identity().is_empty() {
            return Err(Error::invalid_config("the lock identity is empty"));
        }
        Ok(())
    }
}

impl fmt::Debug for LeaderElectionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElectionConfig")
            .field("lock", &self.lock.describe())
            .field("identity", &self.lock.identity())
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("callbacks", &self.callbacks)
            .field("release_on_cancel", &self.release_on_cancel)
            .field("name", &self.name)
            .field("watch_dog", &self.watch_dog)
            .finish()
    }
}
