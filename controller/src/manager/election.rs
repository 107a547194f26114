//! The manager's one leader election, over kclient-tools' [`LeaderElector`]
//! (controller-runtime's `initLeaderElector`).
//!
//! The elector runs once on its own task. Winning the lease is an [`Event::Leading`], on which
//! the manager starts its leader runnables; the elector returning while not cancelled means
//! the lease was lost: an [`Event::LeadershipLost`], on which the manager stops (a
//! controller-runtime manager returns "leader election lost" then, and its process exits).
//! Cancelling the elector releases the lease when the configuration says
//! `release_on_cancel`; the manager cancels it only once its leader runnables have stopped.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt as _;
use kclient_cache::CancellationToken;
use kclient_tools::{HealthzAdaptor, LeaderElectionConfig, LeaderElector};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::manager::group::Event;

/// How long a lease may stay expired while this candidate believes it leads before the
/// `leaderElection` health check fails, when the configuration brings no `watch_dog` of its
/// own (kube-controller-manager's `NewLeaderHealthzAdaptor(20 * time.Second)`).
pub const DEFAULT_LEADER_HEALTHZ_TIMEOUT: Duration = Duration::from_secs(20);

/// The elector, built (and its configuration checked) when the manager is built.
pub(crate) struct Election {
    elector: Arc<LeaderElector>,
    /// Set when the manager stops the elector itself: the leadership that ends then is not
    /// lost.
    stopping: Arc<AtomicBool>,
    /// The lease, for the error saying it was lost.
    pub(crate) lease: String,
    /// What the elector's release may take past the shutdown deadline.
    pub(crate) renew_deadline: Duration,
    /// The health check that reports this elector.
    pub(crate) healthz: HealthzAdaptor,
}

/// The elector running on its task.
pub(crate) struct RunningElection {
    electing: CancellationToken,
    stopping: Arc<AtomicBool>,
    task: JoinHandle<()>,
}

impl Election {
    /// Takes `config`, replacing its `on_started_leading` and `on_stopped_leading` callbacks
    /// (its `on_new_leader` is kept) and giving it a `watch_dog` if it has none.
    pub(crate) fn new(
        mut config: LeaderElectionConfig,
        events: UnboundedSender<Event>,
    ) -> Result<Self, Error> {
        // The builder methods replace these two and keep the rest (`on_new_leader`).
        let stopping = Arc::new(AtomicBool::new(false));
        let stopped_by_manager = Arc::clone(&stopping);
        config.callbacks = std::mem::take(&mut config.callbacks)
            .on_started_leading(move |leading| {
                // The receivers are gone only once the manager's run is over.
                let _ = events.send(Event::Leading);
                let (events, stopping) = (events.clone(), Arc::clone(&stopped_by_manager));
                // The leading token is cancelled as soon as the renewals give up, before the
                // elector tries to release the lease (which may take up to the renew
                // deadline): the leader runnables stop then, not once `run` has returned.
                async move {
                    leading.cancelled().await;
                    if !stopping.load(Ordering::SeqCst) {
                        let _ = events.send(Event::LeadershipLost);
                    }
                }
            })
            .on_stopped_leading(|| {});
        let healthz = config
            .watch_dog
            .get_or_insert_with(|| HealthzAdaptor::new(DEFAULT_LEADER_HEALTHZ_TIMEOUT))
            .clone();
        let lease = config.lock.describe();
        let renew_deadline = config.renew_deadline;
        let elector = LeaderElector::new(config).map_err(Error::manager_leader_election)?;
        Ok(Election {
            elector: Arc::new(elector),
            stopping,
            lease,
            renew_deadline,
            healthz,
        })
    }

    /// Starts competing; `events` hears of the lease lost.
    pub(crate) fn start(&self, events: UnboundedSender<Event>) -> RunningElection {
        let electing = CancellationToken::new();
        let elector = Arc::clone(&self.elector);
        let cancelled = electing.clone();
        let task = tokio::spawn(async move {
            // A panic (in the `on_new_leader` callback, or a custom lock) ends the elector: no
            // one renews the lease any more, so it counts as the lease lost.
            let outcome = AssertUnwindSafe(elector.run(cancelled.clone()))
                .catch_unwind()
                .await;
            if let Err(panic) = &outcome {
                tracing::error!(
                    panic = %kclient_flowcontrol::panic_message(&**panic),
                    "the leader elector panicked; leadership is lost"
                );
            }
            if outcome.is_err() || !cancelled.is_cancelled() {
                let _ = events.send(Event::LeadershipLost);
            }
        });
        RunningElection {
            electing,
            stopping: Arc::clone(&self.stopping),
            task,
        }
    }
}

impl RunningElection {
    /// Cancels the elector (which releases the lease if configured to) and waits for it until
    /// `deadline`; false if it had not ended then (it is aborted).
    pub(crate) async fn stop(mut self, deadline: tokio::time::Instant) -> bool {
        self.stopping.store(true, Ordering::SeqCst);
        self.electing.cancel();
        let ended = tokio::time::timeout_at(deadline, &mut self.task)
            .await
            .is_ok();
        if !ended {
            self.task.abort();
        }
        ended
    }
}

/// Dropped while still running (the manager's `run` future dropped): stops competing, which
/// releases the lease if configured to.
impl Drop for RunningElection {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.electing.cancel();
    }
}
