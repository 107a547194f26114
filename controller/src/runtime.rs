//! [`Runtime`]: a running controller's workers and how each reconcile's result moves its key
//! on the queue.
//!
//! A *term* is one stretch of reconciling (the whole run, or one leadership): a fresh
//! rate-limited queue named after the controller is put under the sources, every primary
//! object is enqueued, and `workers` tasks take keys until the term's stop signal:
//!
//! ```text
//!  sources --> Intake --> RateLimitingQueue --get--> worker 1..N --> reconcile(obj, ctx)
//!                              ^                        |           or on_deleted(key, ctx)
//!                              |  forget / add_after /  |
//!                              +-- add_rate_limited ----+ then done(key)
//! ```
//!
//! The queue never hands out a key that a worker holds (its processing set), so one key is
//! never reconciled twice at once; an event for it meanwhile makes it come back once after
//! `done`. When the term stops, the sources are cut off (no event enqueues anything) and the
//! queue is shut down (no requeue either: keys waiting for a delay are dropped). Then, when
//! the controller drains ([`drain_on_shutdown`](crate::ControllerBuilder::drain_on_shutdown),
//! the default), workers reconcile the keys already queued until the queue is empty;
//! otherwise they finish the reconcile in hand and take no other. A term *abandoned* (its
//! leadership lost) never drains. After the shutdown timeout the workers still running are
//! aborted, cancelling their reconciles at their next `.await`.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use kclient_apimachinery::split_meta_namespace_key;
use kclient_cache::{CancellationToken, Indexer};
use kclient_workqueue::{MetricsProvider, QueueConfig, RateLimiter, RateLimitingQueue};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::action::{Action, ActionKind};
use crate::controller::{DeletedFn, ErrorPolicyFn, ReconcileFn};
use crate::metrics::{ControllerMetrics, ReconcileResult};
use crate::object_ref::ObjectRef;
use crate::source::Intake;

/// Everything the workers of a controller share.
pub(crate) struct Runtime<K, Ctx, E> {
    pub(crate) name: String,
    pub(crate) indexer: Indexer<K>,
    pub(crate) reconcile: ReconcileFn<K, Ctx, E>,
    pub(crate) on_deleted: Option<DeletedFn<Ctx, E>>,
    pub(crate) error_policy: Option<ErrorPolicyFn<Ctx, E>>,
    pub(crate) ctx: Arc<Ctx>,
    pub(crate) intake: Arc<Intake>,
    pub(crate) rate_limiter: Arc<dyn RateLimiter<ObjectRef>>,
    pub(crate) provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) metrics: ControllerMetrics,
    pub(crate) workers: usize,
    pub(crate) shutdown_timeout: Duration,
    /// The queue's merge window (`ControllerBuilder::merge_window`).
    pub(crate) merge_window: Duration,
    pub(crate) drain: bool,
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
        let mut config = QueueConfig::new()
            .name(self.name.clone())
            .merge_window(self.merge_window)
            .shared_rate_limiter(Arc::clone(&self.rate_limiter));
        if let Some(provider) = &self.provider {
            config = config.metrics_provider(Arc::clone(provider));
        }
        let queue = RateLimitingQueue::with_config(config);
        self.intake.set(Some(queue.clone()));
        for key in self.indexer.list_keys() {
            if let Ok((namespace, name)) = split_meta_namespace_key(&key) {
                queue.add(ObjectRef::new(namespace.unwrap_or_default(), name));
            }
        }
        let mut workers = JoinSet::new();
        for _ in 0..self.workers {
            workers.spawn(Arc::clone(self).worker(queue.clone(), stop.clone(), abandon.clone()));
        }
        stop.cancelled().await;

        self.intake.set(None);
        queue.shut_down();
        let drained = tokio::time::timeout(self.shutdown_timeout, async {
            while workers.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                controller = %self.name,
                timeout = ?self.shutdown_timeout,
                "reconciles still running after the shutdown timeout; cancelling them"
            );
            workers.abort_all();
            while workers.join_next().await.is_some() {}
        }
    }

    /// Takes keys until `stop` (or, when draining, until the queue is shut down and empty);
    /// never starts a reconcile once `abandon` is seen, nor once `stop` is seen unless
    /// draining.
    async fn worker(
        self: Arc<Self>,
        queue: RateLimitingQueue<ObjectRef>,
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
            let Some(key) = key else { return };
            if halted() {
                queue.done(&key);
                return;
            }
            self.process(&queue, &key).await;
            queue.done(&key);
        }
    }

    /// Reconciles one key and moves it on the queue according to the result.
    async fn process(&self, queue: &RateLimitingQueue<ObjectRef>, key: &ObjectRef) {
        let span = tracing::info_span!("reconcile", controller = %self.name, key = %key);
        let ctx = Arc::clone(&self.ctx);
        let call = match self.indexer.get_by_key(&key.cache_key()) {
            Some(obj) => Some((self.reconcile)(obj, ctx)),
            None => self
                .on_deleted
                .as_ref()
                .map(|on_deleted| on_deleted(key.clone(), ctx)),
        };
        let started = Instant::now();
        self.metrics.started();
        let outcome = match call {
            Some(call) => {
                AssertUnwindSafe(call)
                    .catch_unwind()
                    .instrument(span.clone())
                    .await
            }
            None => Ok(Ok(Action::done())),
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
                let action = match &self.error_policy {
                    Some(policy) => policy(key, &error, retries, &self.ctx),
                    None => Action::requeue(),
                };
                if action.kind == ActionKind::Done {
                    queue.forget(key);
                }
                (ReconcileResult::Error, action)
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-string panic".to_owned());
                tracing::error!(parent: &span, panic = %message, "reconcile panicked; retrying with backoff");
                (ReconcileResult::Error, Action::requeue())
            }
        };
        self.metrics.finished(result, started.elapsed());
        match action.kind {
            ActionKind::Done => {}
            ActionKind::RequeueAfter(delay) => queue.add_after(key.clone(), delay),
            ActionKind::RequeueRateLimited => queue.add_rate_limited(key.clone()),
        }
    }
}
