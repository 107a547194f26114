//! [`Runtime`]: a running controller's workers and how each reconcile's result moves its key
//! on the queue.
//!
//! A *term* is one stretch of reconciling (the whole run, or one leadership): the controller's
//! queue ([`WorkQueue`]: rate-limited, or by priority), named after it, is put under the
//! sources, each source replays the objects it knows as adds (the primary objects that pass
//! the primary predicates, the owners of the children, the keys of the watched objects; at
//! [`LOW_PRIORITY`](crate::LOW_PRIORITY)), and `workers` tasks take keys until the term's
//! stop signal:
//!
//! ```text
//!  sources --> Intake --> WorkQueue --get--> worker 1..N --> reconcile(obj, ctx)
//!                      ^                        |           or on_deleted(key, ctx)
//!                      |  forget / add_after /  |
//!                      +-- add_rate_limited ----+ then done(key)
//! ```
//!
//! A requeue goes in at the priority its [`Action`] names, else at the one the key was handed
//! out with (controller-runtime's `reconcileHandler`); the default queue ignores both.
//!
//! The queue never hands out a key that a worker holds (its processing set), so one key is
//! never reconciled twice at once; an event for it meanwhile makes it come back once after
//! `done`. When the term stops, the sources are cut off (no event enqueues anything).
//!
//! At shutdown the queue is shut down (no requeue either: keys waiting for a delay are
//! dropped). Then, when the controller drains
//! ([`drain_on_shutdown`](crate::ControllerBuilder::drain_on_shutdown), the default), workers
//! reconcile the keys already queued until the queue is empty; otherwise they finish the
//! reconcile in hand and take no other. After the shutdown timeout the workers still running
//! are aborted, cancelling their reconciles at their next `.await`.
//!
//! A term *abandoned* (its leadership lost, maybe to a candidate that reconciles already)
//! neither drains nor waits: its reconciles in progress are cancelled at once, as losing the
//! lease ends a client-go or controller-runtime process. Its queue is kept for the next term,
//! with every key still pending in it: queued, waiting for a delay or a rate-limited retry,
//! or taken by a reconcile that was cancelled (put back). So the next term reconciles each of
//! them, even one whose object was deleted meanwhile, which no replay would name (it goes to
//! `on_deleted`), and the failure counts the rate limiter keeps are those of keys still queued,
//! each cleared when its key is reconciled for good.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use kclient_cache::{CancellationToken, Indexer};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::action::{Action, ActionKind};
use crate::builder::{Replay, replay_catching};
use crate::controller::{DeletedFn, ErrorPolicyFn, ReconcileFn};
use crate::metrics::{ControllerMetrics, ReconcileResult};
use crate::object_ref::ObjectRef;
use crate::queue::WorkQueue;
use crate::source::Intake;
use crate::trigger::Trigger;

/// Everything the workers of a controller share.
pub(crate) struct Runtime<K, Ctx, E> {
    pub(crate) name: String,
    /// The primary resource's caches, one per factory, with the namespace the factory
    /// watches (`None`: every namespace). As many of the replays, at the front, are theirs.
    pub(crate) primary_caches: Vec<(Option<String>, Indexer<K>)>,
    /// Each source's replay of what it already knows, run at a term's start; the primary
    /// resource's first (one per primary cache).
    pub(crate) replays: Vec<Replay>,
    /// The triggers, between terms; each term polls them until it stops, then puts back
    /// those whose stream has not ended.
    pub(crate) triggers: Mutex<Vec<Trigger>>,
    pub(crate) reconcile: ReconcileFn<K, Ctx, E>,
    pub(crate) on_deleted: Option<DeletedFn<Ctx, E>>,
    pub(crate) error_policy: Option<ErrorPolicyFn<Ctx, E>>,
    pub(crate) ctx: Arc<Ctx>,
    pub(crate) intake: Arc<Intake>,
    /// The controller's queue, one for all its terms: the keys pending when a term is
    /// abandoned stay in it for the next one.
    pub(crate) queue: WorkQueue,
    pub(crate) metrics: ControllerMetrics,
    pub(crate) workers: usize,
    pub(crate) shutdown_timeout: Duration,
    /// A reconcile running longer is cancelled and counts as failed.
    pub(crate) reconcile_timeout: Option<Duration>,
    pub(crate) drain: bool,
}

/// How a reconcile's call ended, when it did not return.
enum Abnormal {
    Panicked(Box<dyn std::any::Any + Send>),
    TimedOut(Duration),
}

impl<K, Ctx, E> Runtime<K, Ctx, E>
where
    K: kclient_apimachinery::Object,
    Ctx: Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    /// Runs one term: reconciles until `stop` is cancelled, then stops as the module doc says;
    /// once `abandon` is cancelled no reconcile starts, drained or not.
    pub(crate) async fn reconcile_until(
        self: &Arc<Self>,
        stop: &CancellationToken,
        abandon: &CancellationToken,
    ) {
        let queue = &self.queue;
        self.intake.set(Some(queue.clone()));
        // What each source's known objects enqueue as adds: the cached primary objects that
        // pass the primary predicates, the owners of the cached children, the keys of the
        // watched objects (controller-runtime starts each source with its initial list as
        // Create events, which go through the source's predicates). The keys a former term
        // left pending are in the queue already; a replayed key among them is merged.
        for replay in &self.replays {
            // Not ending the controller (and, at every restart, again).
            replay_catching(replay, queue, &self.name, "a source's known objects");
        }
        // The triggers, polled until the term stops (see `crate::trigger`).
        let mut triggers = JoinSet::new();
        let replay_primary: Replay = {
            let primaries: Vec<Replay> = self
                .replays
                .iter()
                .take(self.primary_caches.len())
                .cloned()
                .collect();
            Arc::new(move |queue: &WorkQueue| {
                for replay in &primaries {
                    replay(queue);
                }
            })
        };
        let name: Arc<str> = Arc::from(self.name.as_str());
        let between_terms = std::mem::take(&mut *self.triggers.lock());
        for trigger in between_terms {
            triggers.spawn(trigger.poll_until(
                queue.clone(),
                Arc::clone(&replay_primary),
                stop.clone(),
                Arc::clone(&name),
            ));
        }
        let mut workers = JoinSet::new();
        for _ in 0..self.workers {
            workers.spawn(Arc::clone(self).worker(queue.clone(), stop.clone(), abandon.clone()));
        }
        stop.cancelled().await;

        self.intake.set(None);
        // The triggers stop at `stop`; taking them back is raced with a lease lost meanwhile,
        // whose reconciles must be cancelled first (then the rest are taken back).
        if !abandon.is_cancelled() {
            tokio::select! {
                biased;
                () = abandon.cancelled() => {}
                () = self.take_back(&mut triggers) => {}
            }
        }
        if abandon.is_cancelled() {
            // Leadership lost: another candidate may lead by now. The reconciles in progress
            // are cancelled at once, before anything else is waited for; the queue keeps its
            // keys (a cancelled reconcile's key is put back by its worker) for the next term.
            tracing::warn!(
                controller = %self.name,
                "leadership lost; cancelling the reconciles in progress"
            );
            workers.abort_all();
            while workers.join_next().await.is_some() {}
            self.take_back(&mut triggers).await;
            return;
        }
        queue.shut_down();
        // Wait for the workers, but not past the shutdown timeout, and not at all once the
        // term is abandoned: another candidate may lead by now.
        let ended = tokio::select! {
            biased;
            () = abandon.cancelled() => false,
            () = async { while workers.join_next().await.is_some() {} } => true,
            () = tokio::time::sleep(self.shutdown_timeout) => false,
        };
        if !ended {
            if abandon.is_cancelled() {
                tracing::warn!(
                    controller = %self.name,
                    "leadership lost; cancelling the reconciles in progress"
                );
            } else {
                tracing::warn!(
                    controller = %self.name,
                    timeout = ?self.shutdown_timeout,
                    "reconciles still running after the shutdown timeout; cancelling them"
                );
            }
            workers.abort_all();
            while workers.join_next().await.is_some() {}
        }
    }

    /// The primary object of `key` from the cache of its namespace: the one cache, or with
    /// several factories (a namespace each, checked by `with_factory`) the one of the key's
    /// namespace, as controller-runtime's multi-namespace cache routes a read.
    fn cached(&self, key: &ObjectRef) -> Option<Arc<K>> {
        let (_, indexer) = match self.primary_caches.as_slice() {
            [only] => only,
            several => several
                .iter()
                .find(|(namespace, _)| namespace.as_deref() == Some(key.namespace.as_str()))?,
        };
        indexer.get_by_key(&key.cache_key())
    }

    /// Keeps the triggers that a term polled for the next term, once each has stopped (at the
    /// term's `stop`, which has come), less those whose stream ended or panicked.
    async fn take_back(&self, triggers: &mut JoinSet<Option<Trigger>>) {
        while let Some(polled) = triggers.join_next().await {
            match polled {
                Ok(Some(trigger)) => self.triggers.lock().push(trigger),
                Ok(None) => {}
                Err(e) => {
                    let panic = match e.try_into_panic() {
                        Ok(panic) => kclient_flowcontrol::panic_message(&*panic).to_owned(),
                        Err(e) => e.to_string(),
                    };
                    tracing::error!(
                        controller = %self.name,
                        %panic,
                        "a trigger stream panicked; it is no longer polled"
                    );
                }
            }
        }
    }

    /// Takes keys until `stop` (or, when draining, until the queue is shut down and empty);
    /// never starts a reconcile once `abandon` is seen, nor once `stop` is seen unless
    /// draining. A key taken but not reconciled to the end (halted, or the worker aborted
    /// mid-reconcile) is put back, for the next term (a shut-down queue refuses it).
    async fn worker(
        self: Arc<Self>,
        queue: WorkQueue,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) {
        let halted = || abandon.is_cancelled() || (!self.drain && stop.is_cancelled());
        loop {
            let key = tokio::select! {
                biased;
                _ = abandon.cancelled() => return,
                _ = stop.cancelled(), if !self.drain => return,
                key = queue.get() => key,
            };
            let Some((key, priority)) = key else { return };
            let taken = Taken {
                queue: &queue,
                key: &key,
                priority,
                finished: false,
            };
            if halted() {
                return;
            }
            self.process(&queue, &key, priority).await;
            taken.finish();
        }
    }

    /// Reconciles one key, handed out at `priority`, and moves it on the queue according to
    /// the result.
    async fn process(&self, queue: &WorkQueue, key: &ObjectRef, priority: i32) {
        let span = tracing::info_span!("reconcile", controller = %self.name, key = %key);
        let ctx = Arc::clone(&self.ctx);
        let started = Instant::now();
        let active = self.metrics.started();
        // A panic is caught both in the call that makes the reconcile's future (a closure
        // can panic before it returns one) and in the future itself: either way the key is
        // done and retried with backoff, and the worker lives on (controller-runtime's
        // RecoverPanic, on by default).
        let call = panic::catch_unwind(AssertUnwindSafe(|| match self.cached(key) {
            Some(obj) => Some((self.reconcile)(obj, ctx)),
            None => self
                .on_deleted
                .as_ref()
                .map(|on_deleted| on_deleted(key.clone(), ctx)),
        }));
        let outcome = match call {
            Ok(Some(call)) => {
                let call = AssertUnwindSafe(call)
                    .catch_unwind()
                    .instrument(span.clone());
                match self.reconcile_timeout {
                    None => call.await.map_err(Abnormal::Panicked),
                    Some(timeout) => match tokio::time::timeout(timeout, call).await {
                        Ok(ended) => ended.map_err(Abnormal::Panicked),
                        Err(_) => Err(Abnormal::TimedOut(timeout)),
                    },
                }
            }
            Ok(None) => Ok(Ok(Action::done())),
            Err(panic) => Err(Abnormal::Panicked(panic)),
        };
        let (result, action) = match outcome {
            Ok(Ok(action)) => {
                let result = match action.kind {
                    ActionKind::Done => ReconcileResult::Success,
                    ActionKind::RequeueAfter(_) => ReconcileResult::RequeueAfter,
                    ActionKind::RequeueRateLimited => ReconcileResult::Requeue,
                };
                // A success clears the key's failure history, except when it asks for the
                // rate-limited requeue, which builds on it.
                if action.kind != ActionKind::RequeueRateLimited {
                    queue.forget(key);
                }
                (result, action)
            }
            Ok(Err(error)) => {
                let retries = queue.num_requeues(key);
                tracing::error!(parent: &span, error = %error, retries, "reconcile failed");
                let policy = self.error_policy.as_ref().map(|policy| {
                    panic::catch_unwind(AssertUnwindSafe(|| {
                        policy(key, &error, retries, &self.ctx)
                    }))
                });
                let action = match policy {
                    Some(Ok(action)) => action,
                    Some(Err(panic)) => {
                        tracing::error!(
                            parent: &span,
                            panic = %kclient_flowcontrol::panic_message(&*panic),
                            "error policy panicked; retrying with backoff"
                        );
                        Action::requeue()
                    }
                    None => Action::requeue(),
                };
                if action.kind == ActionKind::Done {
                    queue.forget(key);
                    self.metrics.terminal();
                }
                (ReconcileResult::Error, action)
            }
            Err(Abnormal::Panicked(panic)) => {
                tracing::error!(
                    parent: &span,
                    panic = %kclient_flowcontrol::panic_message(&*panic),
                    "reconcile panicked; retrying with backoff"
                );
                self.metrics.panicked();
                (ReconcileResult::Error, Action::requeue())
            }
            Err(Abnormal::TimedOut(timeout)) => {
                tracing::error!(
                    parent: &span,
                    ?timeout,
                    "reconcile timed out and was cancelled; retrying with backoff"
                );
                self.metrics.timed_out();
                (ReconcileResult::Error, Action::requeue())
            }
        };
        drop(active);
        self.metrics.finished(result, started.elapsed());
        let priority = action.priority.unwrap_or(priority);
        match action.kind {
            ActionKind::Done => {}
            ActionKind::RequeueAfter(delay) => queue.add_after(key.clone(), delay, priority),
            ActionKind::RequeueRateLimited => queue.add_rate_limited(key.clone(), priority),
        }
    }
}

/// A key a worker took from the queue: [`finish`](Taken::finish)ed, it is done; dropped
/// before (the worker halted, or its task aborted mid-reconcile), it is put back then done,
/// so that it stays pending rather than being lost with the term, at the priority it was
/// handed out with.
struct Taken<'a> {
    queue: &'a WorkQueue,
    key: &'a ObjectRef,
    priority: i32,
    finished: bool,
}

impl Taken<'_> {
    fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Added while processing, the key goes back into the queue at `done`.
            self.queue.add(self.key.clone(), self.priority);
        }
        self.queue.done(self.key);
    }
}
