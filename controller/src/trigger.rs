//! Triggers: streams from outside the controller's watches that wake it, for changes the
//! informers cannot see (an external system, a file, a timer), as kube-runtime's
//! `reconcile_on` and `reconcile_all_on` and controller-runtime's `WatchesRawSource` with a
//! `source.Channel` do.
//!
//! A trigger is polled only while the controller reconciles (a term: the whole run, or each
//! leadership), as controller-runtime starts a channel source only once its controller runs
//! and kube-runtime polls a trigger only as part of its controller's stream. Between terms
//! (before the caches have synced, or while another candidate leads) nothing reads it, so what
//! its sender sends waits in the stream (a bounded channel makes the sender wait in turn) and
//! none of it is lost. When a term stops, each trigger stops being polled at once and is kept
//! for the next term; what it yields after that stays in it. A trigger whose stream ends is
//! dropped; the controller goes on with its other sources.

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use kclient_cache::CancellationToken;

use crate::builder::{Replay, replay_catching};
use crate::object_ref::ObjectRef;
use crate::queue::{NORMAL_PRIORITY, WorkQueue};

/// What a trigger's item asks for.
pub(crate) enum Wake {
    /// The key to reconcile, at [`NORMAL_PRIORITY`].
    Key(ObjectRef),
    /// Every cached primary object that passes the primary predicates and the event filters
    /// (the primary source's replay, at [`LOW_PRIORITY`](crate::LOW_PRIORITY)).
    All,
}

/// One trigger of a controller, kept by the controller between terms: its stream, with each
/// item made a [`Wake`] (by `reconcile_on` or `reconcile_all_on`).
pub(crate) struct Trigger(pub(crate) BoxStream<'static, Wake>);

impl fmt::Debug for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Trigger")
    }
}

impl Trigger {
    /// Takes the trigger's items into `queue` until `stop` is cancelled; returns the trigger
    /// then, to be polled again in the next term, or `None` once its stream has ended.
    /// `stop` is checked before each item is taken, so no item is taken after it.
    pub(crate) async fn poll_until(
        mut self,
        queue: WorkQueue,
        replay_primary: Replay,
        stop: CancellationToken,
        controller: Arc<str>,
    ) -> Option<Trigger> {
        loop {
            let wake = tokio::select! {
                biased;
                () = stop.cancelled() => return Some(self),
                wake = self.0.next() => wake,
            };
            match wake {
                Some(Wake::Key(key)) => queue.add(key, NORMAL_PRIORITY),
                // A panic skips this item, not the trigger.
                Some(Wake::All) => replay_catching(
                    &replay_primary,
                    &queue,
                    &controller,
                    "every primary object for a trigger",
                ),
                None => {
                    tracing::debug!(%controller, "trigger stream ended");
                    return None;
                }
            }
            // A unit of the task's cooperative budget per item, as a channel's receive spends:
            // a stream that is always ready gives its runtime thread back now and then.
            tokio::task::coop::consume_budget().await;
        }
    }
}
