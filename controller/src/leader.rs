//! Reconciling only while leading: the controller's glue to kclient-tools'
//! [`LeaderElector`].
//!
//! The elector runs on its own task and hands each won leadership to the controller as a
//! token, cancelled when that leadership ends. Each leadership is one term of the runtime
//! (each source's known objects replayed as adds into the controller's queue). When a term
//! ends because leadership was lost, the controller cancels its reconciles in progress at once
//! (a successor may already lead) and competes again; the keys still pending (queued, waiting
//! for a retry, or whose reconcile was cancelled) stay queued for the next term. At shutdown the order matters: the term stops and its
//! reconciles end *first*, and only then is the elector cancelled, which releases the lease
//! (`release_on_cancel`); so a successor, which can take the lease only once it is released
//! or expired, never reconciles while this one still does. Dropping the controller's `run`
//! future instead cancels the elector with it, so the lease is released then too.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;

use kclient_apimachinery::Object;
use kclient_cache::CancellationToken;
use kclient_tools::{LeaderCallbacks, LeaderElectionConfig, LeaderElector};
use tokio::sync::mpsc;

use crate::error::Error;
use crate::runtime::Runtime;

/// The elector of a controller, built (and its configuration checked) when the controller
/// starts, before it waits for its caches; [`run`] then competes with it.
pub(crate) struct Election {
    elector: Arc<LeaderElector>,
    /// Each won leadership, as a token cancelled when it ends.
    leaderships: mpsc::UnboundedReceiver<CancellationToken>,
    /// How long to wait before competing again after the elector panicked.
    retry_period: std::time::Duration,
}

impl Election {
    /// Sets `config`'s callbacks (any set are replaced) and `release_on_cancel`, and builds
    /// the elector, which its `watch_dog` (if any) reports from then on; an error if the
    /// configuration breaks one of client-go's rules.
    pub(crate) fn new(controller: &str, mut config: LeaderElectionConfig) -> Result<Self, Error> {
        let (won, leaderships) = mpsc::unbounded_channel::<CancellationToken>();
        config.callbacks = LeaderCallbacks::new()
            .on_started_leading(move |leading| {
                // The receiver is gone only once the controller stopped; the elector is then
                // being cancelled too.
                let _ = won.send(leading);
                async {}
            })
            .on_stopped_leading(|| {});
        config.release_on_cancel = true;
        let retry_period = config.retry_period;
        let elector =
            LeaderElector::new(config).map_err(|e| Error::leader_election(controller, e))?;
        Ok(Election {
            elector: Arc::new(elector),
            leaderships,
            retry_period,
        })
    }
}

/// Competes for the lease with `election` and reconciles while leading, until `shutdown`.
pub(crate) async fn run<K, Ctx, E>(
    runtime: &Arc<Runtime<K, Ctx, E>>,
    election: Election,
    shutdown: &CancellationToken,
) -> Result<(), Error>
where
    K: Object,
    Ctx: Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    let Election {
        elector,
        mut leaderships,
        retry_period,
    } = election;
    let electing = CancellationToken::new();
    // Should this future be dropped before it returns (a `select!`, a timeout, an aborted
    // task), the elector stops too and releases the lease; otherwise it would renew the lease
    // for the life of the process while nothing reconciles.
    let _stop_electing = electing.clone().drop_guard();
    let election = tokio::spawn({
        let (elector, electing) = (Arc::clone(&elector), electing.clone());
        let name = runtime.name.clone();
        async move {
            // `run` returns when leadership is lost (compete again) or when cancelled. A panic
            // (an `on_new_leader` callback, a custom lock) ends that run as a lost leadership
            // does: the leading token is cancelled as it unwinds, and the controller competes
            // again after a retry period, rather than idling for good with no elector.
            while !electing.is_cancelled() {
                let outcome = AssertUnwindSafe(elector.run(electing.clone()))
                    .catch_unwind()
                    .await;
                if let Err(panic) = &outcome {
                    tracing::error!(
                        controller = %name,
                        panic = %kclient_flowcontrol::panic_message(&**panic),
                        "the leader elector panicked; competing again"
                    );
                    tokio::select! {
                        _ = electing.cancelled() => {}
                        _ = tokio::time::sleep(retry_period) => {}
                    }
                } else if !electing.is_cancelled() {
                    tracing::warn!(controller = %name, "lost leadership; competing again");
                }
            }
        }
    });

    loop {
        let leading = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            leading = leaderships.recv() => leading,
        };
        let Some(leading) = leading else { break };
        tracing::info!(controller = %runtime.name, "leading: reconciling");
        // The term ends when leadership ends or at shutdown, whichever comes first. A child
        // of the leadership token is cancelled with it, at once (already, if this leadership
        // ended before it was taken up); shutdown is relayed.
        let stop = leading.child_token();
        let relay = async {
            shutdown.cancelled().await;
            stop.cancel();
            std::future::pending::<()>().await;
        };
        // Lost leadership abandons the term: its reconciles are cancelled, not drained.
        tokio::select! {
            () = runtime.reconcile_until(&stop, &leading) => {}
            () = relay => {}
        }
        tracing::info!(controller = %runtime.name, "stopped reconciling");
    }

    electing.cancel();
    // The elector task catches the elector's panics; it cannot panic on its own.
    let _ = election.await;
    Ok(())
}
