//! [`Controller`]: a built controller with its reconcile function; [`run`](Controller::run)
//! registers its event handlers, waits for the caches, and reconciles until shutdown.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kclient_apimachinery::Object;
use kclient_cache::{CancellationToken, ResourceEventHandlerRegistration};
use kclient_workqueue::{
    ItemExponentialFailureRateLimiter, QueueConfig, default_controller_rate_limiter,
    global_metrics_provider,
};

use crate::action::Action;
use crate::builder::{Options, PrimaryInformer, Remover};
use crate::error::Error;
use crate::leader;
use crate::metrics::ControllerMetrics;
use crate::object_ref::ObjectRef;
use crate::queue::WorkQueue;
use crate::runtime::Runtime;
use crate::source::Intake;

/// The boxed reconcile function.
pub(crate) type ReconcileFn<K, Ctx, E> =
    Arc<dyn Fn(Arc<K>, Arc<Ctx>) -> BoxFuture<'static, Result<Action, E>> + Send + Sync>;
/// The boxed function called for keys whose object is gone.
pub(crate) type DeletedFn<Ctx, E> =
    Arc<dyn Fn(ObjectRef, Arc<Ctx>) -> BoxFuture<'static, Result<Action, E>> + Send + Sync>;
/// The boxed error policy.
pub(crate) type ErrorPolicyFn<Ctx, E> =
    Arc<dyn Fn(&ObjectRef, &E, usize, &Ctx) -> Action + Send + Sync>;

/// A controller ready to run: its sources, options and reconcile function. Made by
/// [`ControllerBuilder::reconcile`](crate::ControllerBuilder::reconcile).
pub struct Controller<K, Ctx, E> {
    name: String,
    /// The primary resource's informers, one per factory.
    informers: Vec<PrimaryInformer<K>>,
    options: Options<K>,
    reconcile: ReconcileFn<K, Ctx, E>,
    on_deleted: Option<DeletedFn<Ctx, E>>,
    error_policy: Option<ErrorPolicyFn<Ctx, E>>,
}

impl<K, Ctx, E> fmt::Debug for Controller<K, Ctx, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("sources", &self.options.described)
            .field("workers", &self.options.workers)
            .field("shutdown_timeout", &self.options.shutdown_timeout)
            .field("priority_queue", &self.options.priority_queue)
            .field("leader_election", &self.options.leader_election.is_some())
            .field("on_deleted", &self.on_deleted.is_some())
            .field("error_policy", &self.error_policy.is_some())
            .finish()
    }
}

impl<K, Ctx, E> Controller<K, Ctx, E>
where
    K: Object,
    Ctx: Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    pub(crate) fn new(
        name: String,
        informers: Vec<PrimaryInformer<K>>,
        options: Options<K>,
        reconcile: ReconcileFn<K, Ctx, E>,
    ) -> Self {
        Controller {
            name,
            informers,
            options,
            reconcile,
            on_deleted: None,
            error_policy: None,
        }
    }

    /// Decides what happens to a key whose reconcile failed, from the key, the error, how
    /// many times the key was requeued by the rate limiter since its last success, and the
    /// context (controller-runtime has no such hook; kube-runtime's `error_policy`).
    ///
    /// Without one, every error is [`Action::requeue`]: retried after the rate limiter's
    /// delay, with no limit. [`Action::done`] gives up on the key until its next event (and
    /// forgets its failures): controller-runtime's `TerminalError`, counted in its terminal
    /// errors metric. [`Action::requeue_after`] retries after a fixed delay. The error is
    /// logged either way.
    pub fn error_policy(
        mut self,
        policy: impl Fn(&ObjectRef, &E, usize, &Ctx) -> Action + Send + Sync + 'static,
    ) -> Self {
        self.error_policy = Some(Arc::new(policy));
        self
    }

    /// Called, instead of the reconcile function, for a key whose primary object is not in
    /// the cache: it was deleted (or a watched object mapped to a name that does not exist).
    /// Without it such keys are dropped (counted as successes).
    ///
    /// To act *before* an object goes, use a finalizer ([`finalizer`](crate::finalizer)).
    pub fn on_deleted<F, Fut>(mut self, on_deleted: F) -> Self
    where
        F: Fn(ObjectRef, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        self.on_deleted = Some(Arc::new(move |key, ctx| on_deleted(key, ctx).boxed()));
        self
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Takes out the configuration error `run` would return (a manager returns it from
    /// `add`).
    pub(crate) fn take_invalid(&mut self) -> Option<Error> {
        self.options.invalid.take()
    }

    /// Whether it has a leader election of its own.
    pub(crate) fn has_leader_election(&self) -> bool {
        self.options.leader_election.is_some()
    }

    /// Runs the controller until `shutdown` is cancelled.
    ///
    /// It adds its event handlers to the informers, waits until they have delivered their
    /// initial lists (every factory must be started: `factory.start()`), then reconciles: with
    /// leader election, only while leading. When reconciling starts, each source's cached
    /// objects are taken as adds (controller-runtime's initial Create events): the primary
    /// objects that pass the primary predicates, the owners of the owned children, the keys the
    /// watched objects map to, each through its source's predicates.
    ///
    /// At shutdown it stops taking events, with
    /// [`drain_on_shutdown(true)`](crate::ControllerBuilder::drain_on_shutdown) drains the
    /// queue (reconciles the keys already queued; keys waiting for a delay are dropped, and a
    /// later run enqueues every object again), waits for the reconciles in progress, all within the shutdown timeout, cancels what
    /// still runs then, removes its event handlers and returns. No reconcile runs once it has
    /// returned. The informers are not stopped: they belong to the factory.
    ///
    /// Dropping the returned future (a `select!`, a timeout, an aborted task) stops the
    /// controller too, without the grace: its reconciles are cancelled at their next
    /// `.await`, its event handlers removed, and with leader election the lease released.
    ///
    /// Fails only when an informer refuses the handlers (it was already stopped), when an
    /// informer stops before its cache synced (its task panicked in a transform or an index
    /// function, or its factory was shut down: [`Error::is_cache_sync`](crate::Error::is_cache_sync)),
    /// when its caches do not sync within the cache sync timeout (a factory never started),
    /// when the leader election configuration is invalid, or when the factories of
    /// [`with_factory`](crate::ControllerBuilder::with_factory) overlap
    /// ([`Error::is_overlapping_factories`](crate::Error::is_overlapping_factories)).
    pub async fn run(self, ctx: Arc<Ctx>, shutdown: CancellationToken) -> Result<(), Error> {
        let Controller {
            name,
            informers,
            options,
            reconcile,
            on_deleted,
            error_policy,
        } = self;
        if let Some(invalid) = options.invalid {
            return Err(invalid);
        }
        // The elector checks its configuration: before the caches are waited for, which can
        // take minutes on a large cluster.
        let election = options
            .leader_election
            .map(|config| leader::Election::new(&name, config))
            .transpose()?;
        let intake = Arc::new(Intake::with_filters(options.event_filters));
        let mut registrations = Vec::new();
        // Removes the handlers however this future ends: returning, failing, or dropped.
        let mut handlers = RemoveOnDrop(Vec::new());
        let mut replays = Vec::new();
        for source in options.sources {
            let registered = source(&intake)?;
            registrations.extend(registered.registration);
            handlers.0.push(registered.remover);
            replays.push(registered.replay);
        }
        let provider = options.metrics_provider.or_else(global_metrics_provider);
        // One queue for every term of the run: a term abandoned (leadership lost) leaves its
        // pending keys in it for the next. The priority queue ignores the merge window.
        let mut queue_config = QueueConfig::new()
            .name(name.clone())
            .merge_window(options.merge_window)
            .shared_rate_limiter(options.rate_limiter.unwrap_or_else(|| {
                // controller-runtime's defaults, queue by queue.
                if options.priority_queue {
                    Arc::new(ItemExponentialFailureRateLimiter::new(
                        Duration::from_millis(5),
                        Duration::from_secs(1000),
                    ))
                } else {
                    Arc::new(default_controller_rate_limiter())
                }
            }));
        if let Some(provider) = &provider {
            queue_config = queue_config.metrics_provider(Arc::clone(provider));
        }
        let runtime = Arc::new(Runtime {
            metrics: ControllerMetrics::new(provider.as_ref(), &name, options.workers),
            primary_caches: informers
                .iter()
                .map(|(namespace, informer)| (namespace.clone(), informer.get_indexer()))
                .collect(),
            replays,
            triggers: parking_lot::Mutex::new(options.triggers),
            reconcile,
            on_deleted,
            error_policy,
            ctx,
            intake,
            queue: WorkQueue::new(queue_config, options.priority_queue),
            workers: options.workers,
            shutdown_timeout: options.shutdown_timeout,
            reconcile_timeout: options.reconcile_timeout,
            drain: options.drain,
            name,
        });
        let result = async {
            if !wait_for_sync(
                &runtime.name,
                &registrations,
                options.cache_sync_timeout,
                &shutdown,
            )
            .await?
            {
                return Ok(());
            }
            runtime.intake.mark_caches_synced();
            tracing::info!(controller = %runtime.name, workers = runtime.workers, "caches synced, starting");
            match election {
                None => {
                    runtime
                        .reconcile_until(&shutdown, &CancellationToken::new())
                        .await;
                    Ok(())
                }
                Some(election) => leader::run(&runtime, election, &shutdown).await,
            }
        }
        .await;
        // Whatever a last abandoned term left pending goes with the run.
        runtime.queue.shut_down();
        drop(handlers);
        tracing::info!(controller = %runtime.name, "stopped");
        result
    }
}

/// The event handlers a running controller added, removed from their informers when dropped.
struct RemoveOnDrop(Vec<Remover>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for remove in self.0.drain(..) {
            remove();
        }
    }
}

/// How often a controller still waiting for its caches says so.
const SYNC_WARNING_PERIOD: Duration = Duration::from_secs(10);

/// Waits until every handler has received its informer's initial list; false if `shutdown`
/// comes first, an error if an informer stops before (its task panicked, or its factory was
/// shut down): it would never sync; or if `timeout` passes first.
async fn wait_for_sync(
    controller: &str,
    registrations: &[ResourceEventHandlerRegistration],
    timeout: Duration,
    shutdown: &CancellationToken,
) -> Result<bool, Error> {
    let all_synced = async {
        for registration in registrations {
            if !registration.wait_for_sync_or_stop().await {
                return Err(Error::cache_sync(controller));
            }
        }
        Ok(true)
    };
    let warn = async {
        loop {
            tokio::time::sleep(SYNC_WARNING_PERIOD).await;
            tracing::warn!(
                controller,
                "still waiting for the informer caches to sync; was the informer factory \
                 started (factory.start()) after the controller was built?"
            );
        }
    };
    let timed_out = async {
        match tokio::time::Instant::now().checked_add(timeout) {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = shutdown.cancelled() => Ok(false),
        synced = all_synced => synced,
        () = timed_out => Err(Error::cache_sync_timeout(controller, timeout)),
        _ = warn => Ok(false),
    }
}
