//! [`WorkQueue`]: the controller's queue of keys, client-go's [`RateLimitingQueue`] (the
//! default) or controller-runtime's [`PriorityQueue`]
//! ([`priority_queue(true)`](crate::ControllerBuilder::priority_queue)), behind one set of
//! calls so that the sources and the runtime are written once.
//!
//! Every add carries a priority. The rate-limiting queue ignores it (a FIFO with a merge
//! window); the priority queue hands out its ready keys highest priority first. The sources
//! add at [`LOW_PRIORITY`] what is most likely unchanged (the objects of an informer's initial
//! list, a term's replay of the cached objects, updates whose resourceVersion did not change)
//! and everything else at [`NORMAL_PRIORITY`]; a reconcile's requeue goes in at the priority its
//! [`Action`](crate::Action) names, else at the one its key was handed out with.

use std::time::Duration;

use kclient_workqueue::{AddOpts, PriorityQueue, QueueConfig, RateLimitingQueue};

use crate::object_ref::ObjectRef;

/// The priority of the keys of objects most likely unchanged: those of an informer's initial
/// list and of a term's replay of the cached objects, and updates whose resourceVersion did
/// not change (a resync or a relist). controller-runtime's `handler.LowPriority`. Only a
/// controller on the [priority queue](crate::ControllerBuilder::priority_queue) orders keys by
/// it.
pub const LOW_PRIORITY: i32 = -100;

/// The priority of every other key: a created, changed or deleted object.
pub(crate) const NORMAL_PRIORITY: i32 = 0;

/// The controller's queue: one for all the terms of a run. Clones are handles to one queue.
#[derive(Clone)]
pub(crate) enum WorkQueue {
    /// client-go's queue: FIFO with a merge window; priorities are ignored.
    RateLimiting(RateLimitingQueue<ObjectRef>),
    /// controller-runtime's: ready keys by priority, then first come first served.
    Priority(PriorityQueue<ObjectRef>),
}

impl WorkQueue {
    /// The queue `config` describes: a [`PriorityQueue`] if `priority`, else a
    /// [`RateLimitingQueue`].
    pub(crate) fn new(config: QueueConfig<ObjectRef>, priority: bool) -> Self {
        if priority {
            WorkQueue::Priority(PriorityQueue::with_config(config))
        } else {
            WorkQueue::RateLimiting(RateLimitingQueue::with_config(config))
        }
    }

    /// Adds `key`, ready now, at `priority`.
    pub(crate) fn add(&self, key: ObjectRef, priority: i32) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.add(key),
            WorkQueue::Priority(queue) => queue.add_with_opts(
                key,
                AddOpts {
                    priority,
                    ..AddOpts::default()
                },
            ),
        }
    }

    /// Adds `key` after `delay`, at `priority`.
    pub(crate) fn add_after(&self, key: ObjectRef, delay: Duration, priority: i32) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.add_after(key, delay),
            WorkQueue::Priority(queue) => queue.add_with_opts(
                key,
                AddOpts {
                    priority,
                    after: delay,
                    ..AddOpts::default()
                },
            ),
        }
    }

    /// Adds `key` after the rate limiter's delay for it (one more requeue), at `priority`.
    pub(crate) fn add_rate_limited(&self, key: ObjectRef, priority: i32) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.add_rate_limited(key),
            WorkQueue::Priority(queue) => queue.add_with_opts(
                key,
                AddOpts {
                    priority,
                    rate_limited: true,
                    ..AddOpts::default()
                },
            ),
        }
    }

    /// Clears `key`'s failure history in the rate limiter.
    pub(crate) fn forget(&self, key: &ObjectRef) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.forget(key),
            WorkQueue::Priority(queue) => queue.forget(key),
        }
    }

    /// How many rate-limited requeues `key` had since it was last forgotten.
    pub(crate) fn num_requeues(&self, key: &ObjectRef) -> usize {
        match self {
            WorkQueue::RateLimiting(queue) => queue.num_requeues(key),
            WorkQueue::Priority(queue) => queue.num_requeues(key),
        }
    }

    /// Waits for the next key, with the priority it is handed out at ([`NORMAL_PRIORITY`] from
    /// the rate-limiting queue); `None` once the queue is shut down and empty. Cancel-safe.
    pub(crate) async fn get(&self) -> Option<(ObjectRef, i32)> {
        match self {
            WorkQueue::RateLimiting(queue) => queue.get().await.map(|key| (key, NORMAL_PRIORITY)),
            WorkQueue::Priority(queue) => queue.get().await,
        }
    }

    /// Marks `key`, handed out by [`get`](Self::get), as finished.
    pub(crate) fn done(&self, key: &ObjectRef) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.done(key),
            WorkQueue::Priority(queue) => queue.done(key),
        }
    }

    /// Shuts the queue down: later adds are ignored, delayed keys dropped, and getters get
    /// the ready keys left, then `None`.
    pub(crate) fn shut_down(&self) {
        match self {
            WorkQueue::RateLimiting(queue) => queue.shut_down(),
            WorkQueue::Priority(queue) => queue.shut_down(),
        }
    }
}

impl From<RateLimitingQueue<ObjectRef>> for WorkQueue {
    fn from(queue: RateLimitingQueue<ObjectRef>) -> Self {
        WorkQueue::RateLimiting(queue)
    }
}

impl From<PriorityQueue<ObjectRef>> for WorkQueue {
    fn from(queue: PriorityQueue<ObjectRef>) -> Self {
        WorkQueue::Priority(queue)
    }
}
