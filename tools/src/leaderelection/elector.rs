//! [`LeaderElector`], client-go's `leaderelection.LeaderElector`: the acquire and renew loops.
//!
//! # Timing rules
//!
//! - **Acquire**: try at once, then every `retry_period * (1 + rand[0,1) * JITTER_FACTOR)`
//!   until the lock is won or the elector is cancelled.
//! - **Expiry** is judged on this candidate's own clock: the lock is free when the holder is
//!   empty, or when the record has not changed for `leaseDurationSeconds` (the record's
//!   value) since this candidate *observed* it change. The record's `renewTime` is never
//!   compared with the local clock, so clock skew between candidates does not matter; only
//!   skew *rate* does.
//! - **Takeover** writes this candidate as holder with `leaderTransitions + 1`, as a
//!   compare-and-swap on the version it read: of two candidates racing for an expired lock,
//!   one gets a Conflict and stays a follower.
//! - **Renew**: the leader first tries an optimistic update over the version it last wrote
//!   (the fast path); on failure it re-reads the lock (the slow path). A renewal comes
//!   `retry_period` after the last one ended; a failed one is retried on a fixed tick,
//!   `retry_period` after the failed attempt started; if no renewal succeeds within
//!   `renew_deadline`, it stops leading.
//! - **Release** (`release_on_cancel`): on cancellation the leader writes an empty holder
//!   with `leaseDurationSeconds = 1`, retrying on conflict, so others take over at once.

use std::sync::Arc;
use std::time::Duration;

use kclient_apimachinery::meta::MicroTime;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::{JITTER_FACTOR, LeaderElectionConfig};
use super::record::LeaderElectionRecord;
use super::resource_lock::ResourceLock;
use crate::error::Error;
use crate::retry::{DEFAULT_RETRY, jitter, retry_on_conflict};

/// Competes for a [`ResourceLock`](crate::ResourceLock) and runs callbacks as leadership
/// changes (client-go's `LeaderElector`).
///
/// This does not guarantee that only one candidate acts as leader at any instant (no fencing):
/// a leader whose renewals stop succeeding keeps believing it leads until its renew attempts
/// give up, up to `retry_period + renew_deadline` after its last renewal, while others take
/// over `lease_duration` after it. Keep `lease_duration - (retry_period + renew_deadline)`
/// above the worst clock skew and pause you expect. The leading token is cancelled as soon as
/// the renewals give up, before a release (`release_on_cancel`) is tried, so a release that
/// hangs does not stretch the leader's term.
///
/// ```no_run
/// # async fn run(clientset: kclient_clientset::Clientset) -> Result<(), kclient_tools::Error> {
/// use std::sync::Arc;
/// use kclient_tools::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
/// use tokio_util::sync::CancellationToken;
///
/// let lock = LeaseLock::new(clientset.coordination_v1().leases("default"), "my-controller", "pod-1");
/// let callbacks = LeaderCallbacks::new()
///     .on_started_leading(|leading| async move { leading.cancelled().await })
///     .on_stopped_leading(|| println!("stopped leading"));
/// let mut config = LeaderElectionConfig::new(lock, callbacks);
/// config.release_on_cancel = true;
/// let elector = Arc::new(LeaderElector::new(config)?);
/// let cancel = CancellationToken::new();
/// elector.run(cancel.clone()).await; // returns once cancelled or leadership is lost
/// # Ok(()) }
/// ```
pub struct LeaderElector {
    config: LeaderElectionConfig,
    /// Shared with the [`HealthzAdaptor`](crate::HealthzAdaptor) that reports this elector.
    state: Arc<Mutex<State>>,
}

/// What a health check reads of an elector: its state and the lease it renews.
pub(super) struct ElectorHealth {
    state: Arc<Mutex<State>>,
    lock: Arc<dyn ResourceLock>,
    lease_duration: Duration,
    name: String,
}

impl ElectorHealth {
    /// See [`LeaderElector::check`].
    pub(super) fn check(&self, max_tolerable_expired_lease: Duration) -> Result<(), Error> {
        let observed = {
            let state = self.state.lock();
            if state.observed_record.holder_identity != self.lock.identity() {
                return Ok(());
            }
            state.observed_time
        };
        let Some(observed) = observed else {
            return Ok(());
        };
        let tolerated = self
            .lease_duration
            .saturating_add(max_tolerable_expired_lease);
        if observed.elapsed() > tolerated {
            return Err(Error::lease_expired(format!(
                "failed election to renew leadership on lease {}",
                self.name
            )));
        }
        Ok(())
    }
}

/// What this candidate last saw of the record, and when (on its own clock).
#[derive(Debug)]
struct State {
    observed_record: LeaderElectionRecord,
    observed_time: Option<Instant>,
    /// The leader last passed to `on_new_leader`.
    reported_leader: String,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .field("leader", &self.get_leader())
            .finish()
    }
}

impl LeaderElector {
    /// Checks `config` (client-go's `NewLeaderElector`): `lease_duration > renew_deadline >
    /// JITTER_FACTOR * retry_period`, all above zero, both required callbacks set and a
    /// non-empty identity.
    ///
    /// When the configuration has a [`watch_dog`](LeaderElectionConfig::watch_dog), that
    /// health check reports this elector from now on.
    pub fn new(config: LeaderElectionConfig) -> Result<Self, Error> {
        config.validate()?;
        let elector = LeaderElector {
            config,
            state: Arc::new(Mutex::new(State {
                observed_record: LeaderElectionRecord::default(),
                observed_time: None,
                reported_leader: String::new(),
            })),
        };
        if let Some(watch_dog) = &elector.config.watch_dog {
            watch_dog.set_leader_election(&elector);
        }
        Ok(elector)
    }

    /// The configuration this elector runs with.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.config
    }

    /// Competes for the lock until `cancel` is cancelled or leadership, once won, is lost.
    ///
    /// When the lock is won, `on_started_leading` is spawned with a token that is cancelled
    /// when leadership ends; then the lock is renewed until a renewal misses the renew
    /// deadline or `cancel` fires. Then the leading token is cancelled, the lock is released if
    /// `release_on_cancel` is set, and `on_stopped_leading` is called. (client-go cancels its
    /// leader's context after the release, which can take another `renew_deadline` when the
    /// server does not answer, while a successor may already lead.) A candidate that
    /// lost leadership should exit (or call `run` again to compete anew).
    ///
    /// Dropping the returned future (aborting its task, or a `select!` that takes another
    /// branch) stops the renewals, so it also cancels the leading token: the leader's work
    /// never outlives the renew loop. It neither releases the lock nor calls
    /// `on_stopped_leading`; cancel `cancel` and await `run` for those.
    pub async fn run(&self, cancel: CancellationToken) {
        if self.acquire(&cancel).await {
            let leading = cancel.child_token();
            // Cancels the leader's work if this future is dropped mid-renewal.
            let _end_leading = leading.clone().drop_guard();
            if let Some(started) = &self.config.callbacks.on_started_leading {
                tokio::spawn(started(leading.clone()));
            }
            self.renew(&leading).await;
            leading.cancel();
        }
        if let Some(stopped) = &self.config.callbacks.on_stopped_leading {
            stopped();
        }
    }

    /// The identity of the last observed leader, `""` if none was observed yet (or the lock
    /// was released).
    pub fn get_leader(&self) -> String {
        self.state.lock().observed_record.holder_identity.clone()
    }

    /// Whether the last observed leader is this candidate.
    pub fn is_leader(&self) -> bool {
        self.state.lock().observed_record.holder_identity == self.config.lock.identity()
    }

    /// A health check for the leader (client-go's `Check`, behind `HealthzAdaptor`): fails
    /// when this candidate believes it leads but has not renewed for longer than
    /// `lease_duration + max_tolerable_expired_lease`, which means the renew loop is stuck.
    /// [`HealthzAdaptor`](crate::HealthzAdaptor) serves it before the elector exists.
    pub fn check(&self, max_tolerable_expired_lease: Duration) -> Result<(), Error> {
        self.health().check(max_tolerable_expired_lease)
    }

    /// What a health check reads of this elector.
    pub(super) fn health(&self) -> ElectorHealth {
        ElectorHealth {
            state: Arc::clone(&self.state),
            lock: Arc::clone(&self.config.lock),
            lease_duration: self.config.lease_duration,
            name: self.config.name.clone(),
        }
    }

    /// Loops until the lock is won (true) or `cancel` fires (false).
    async fn acquire(&self, cancel: &CancellationToken) -> bool {
        let desc = self.config.lock.describe();
        tracing::info!(lock = %desc, "attempting to acquire leader lease");
        loop {
            let acquired = tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                acquired = self.try_acquire_or_renew() => acquired,
            };
            self.maybe_report_transition();
            if acquired {
                self.config.lock.record_event("became leader");
                tracing::info!(lock = %desc, "successfully acquired lease");
                return true;
            }
            tracing::debug!(lock = %desc, "failed to acquire lease");
            let wait = jitter(self.config.retry_period, JITTER_FACTOR);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Renews every `retry_period` until a renewal misses `renew_deadline` or `leading` fires;
    /// then releases the lock if configured, and records that this candidate stopped leading.
    async fn renew(&self, leading: &CancellationToken) {
        let desc = self.config.lock.describe();
        loop {
            let renewed = self.renew_within_deadline(leading).await;
            self.maybe_report_transition();
            if !renewed {
                tracing::info!(lock = %desc, "failed to renew lease");
                break;
            }
            tracing::trace!(lock = %desc, "successfully renewed lease");
            tokio::select! {
                biased;
                _ = leading.cancelled() => break,
                _ = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
        // The leader's work ends before the release is tried: the lease may be another's
        // already, and the release can take up to the renew deadline.
        leading.cancel();
        if self.config.release_on_cancel {
            self.release().await;
        }
        // Whether the renewals failed or `leading` was cancelled, after any release (as
        // client-go's deferred `RecordEvent`).
        self.config.lock.record_event("stopped leading");
    }

    /// Tries at once and then every `retry_period` until a renewal succeeds (true), the renew
    /// deadline passes or `leading` fires (false). An attempt still in flight at the deadline
    /// is abandoned. The attempts start on a fixed tick, `retry_period` after the start of
    /// the one before (or at once after one that took longer), as client-go's
    /// `PollUntilContextTimeout` runs them.
    async fn renew_within_deadline(&self, leading: &CancellationToken) -> bool {
        let deadline = Instant::now() + self.config.renew_deadline;
        loop {
            let next = Instant::now() + self.config.retry_period;
            let attempt = tokio::time::timeout_at(deadline, self.try_acquire_or_renew());
            let renewed = tokio::select! {
                biased;
                _ = leading.cancelled() => return false,
                result = attempt => match result {
                    Ok(renewed) => renewed,
                    Err(_) => return false,
                },
            };
            if renewed {
                return true;
            }
            tokio::select! {
                biased;
                _ = leading.cancelled() => return false,
                _ = tokio::time::sleep_until(deadline) => return false,
                _ = tokio::time::sleep_until(next) => {}
            }
        }
    }

    /// Gives up the lock if this candidate holds it: an empty holder with a one-second lease,
    /// so that others take over at once. Retries on conflict within `renew_deadline`.
    async fn release(&self) -> bool {
        if !self.is_leader() {
            return true;
        }
        let desc = self.config.lock.describe();
        let lock = &self.config.lock;
        let attempt = retry_on_conflict(DEFAULT_RETRY, || async {
            // Read first: the update must go over the latest version.
            let current = lock.get().await?;
            if current.holder_identity != lock.identity() {
                self.set_observed_record(current);
                return Ok(false);
            }
            let now = Some(MicroTime::now());
            let released = LeaderElectionRecord {
                leader_transitions: current.leader_transitions,
                lease_duration_seconds: 1,
                renew_time: now,
                acquire_time: now,
                ..LeaderElectionRecord::default()
            };
            lock.update(released.clone()).await?;
            self.set_observed_record(released);
            Ok(true)
        });
        match tokio::time::timeout(self.config.renew_deadline, attempt).await {
            Ok(Ok(released)) => {
                if released {
                    tracing::info!(lock = %desc, "released leader lease");
                }
                true
            }
            Ok(Err(e)) => {
                tracing::error!(lock = %desc, error = %e, "failed to release lock");
                false
            }
            Err(_) => {
                tracing::error!(lock = %desc, "failed to release lock: timed out");
                false
            }
        }
    }

    /// One attempt to acquire or renew the lock (client-go's `tryAcquireOrRenew`).
    async fn try_acquire_or_renew(&self) -> bool {
        let lock = &self.config.lock;
        let now = Some(MicroTime::now());
        let lease_seconds = i32::try_from(self.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let mut record = LeaderElectionRecord {
            holder_identity: lock.identity().to_string(),
            lease_duration_seconds: lease_seconds,
            renew_time: now,
            acquire_time: now,
            ..LeaderElectionRecord::default()
        };

        // 1. The leader's fast path: update over the version it last wrote.
        let fast_path = {
            let state = self.state.lock();
            let valid = state.observed_record.holder_identity == lock.identity()
                && lease_still_valid(&state, Instant::now());
            valid.then(|| {
                (
                    state.observed_record.acquire_time,
                    state.observed_record.leader_transitions,
                )
            })
        };
        if let Some((acquire_time, transitions)) = fast_path {
            record.acquire_time = acquire_time;
            record.leader_transitions = transitions;
            match lock.update(record.clone()).await {
                Ok(()) => {
                    self.set_observed_record(record);
                    return true;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "failed to update lock optimistically, falling back to slow path");
                }
            }
        }

        // 2. Read the record, or create it.
        let old = match lock.get().await {
            Ok(old) => old,
            Err(e) if e.is_not_found() => {
                return match lock.create(record.clone()).await {
                    Ok(()) => {
                        self.set_observed_record(record);
                        true
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "error initially creating leader election record");
                        false
                    }
                };
            }
            Err(e) => {
                tracing::error!(lock = %lock.describe(), error = %e, "error retrieving resource lock");
                return false;
            }
        };

        // 3. A changed record restarts the expiry clock; then check identity and expiry.
        let now_instant = Instant::now();
        let (expired, is_leader) = {
            let mut state = self.state.lock();
            if state.observed_record != old {
                state.observed_record = old.clone();
                state.observed_time = Some(now_instant);
            }
            let lease = Duration::from_secs(u64::try_from(old.lease_duration_seconds).unwrap_or(0));
            let expired = state
                .observed_time
                .is_none_or(|observed| observed + lease < now_instant);
            (expired, old.holder_identity == lock.identity())
        };
        if !old.holder_identity.is_empty() && !expired && !is_leader {
            tracing::trace!(holder = %old.holder_identity, "lock is held and has not yet expired");
            return false;
        }

        // 4. Take over (or renew through the slow path).
        if is_leader {
            record.acquire_time = old.acquire_time;
            record.leader_transitions = old.leader_transitions;
        } else {
            record.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        match lock.update(record.clone()).await {
            Ok(()) => {
                self.set_observed_record(record);
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "failed to update lock");
                false
            }
        }
    }

    fn set_observed_record(&self, record: LeaderElectionRecord) {
        let mut state = self.state.lock();
        state.observed_record = record;
        state.observed_time = Some(Instant::now());
    }

    /// Calls `on_new_leader` if the observed holder differs from the last one reported.
    fn maybe_report_transition(&self) {
        let leader = {
            let mut state = self.state.lock();
            if state.observed_record.holder_identity == state.reported_leader {
                return;
            }
            state.reported_leader = state.observed_record.holder_identity.clone();
            state.reported_leader.clone()
        };
        if let Some(on_new_leader) = &self.config.callbacks.on_new_leader {
            on_new_leader(&leader);
        }
    }
}

/// Whether the observed lease has not yet run out (client-go's `isLeaseValid`).
fn lease_still_valid(state: &State, now: Instant) -> bool {
    let lease = Duration::from_secs(
        u64::try_from(state.observed_record.lease_duration_seconds).unwrap_or(0),
    );
    state
        .observed_time
        .is_some_and(|observed| observed + lease > now)
}

#[cfg(test)]
mod tests;
