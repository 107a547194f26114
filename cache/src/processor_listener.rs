//! One registered handler and its private buffer (client-go's `processorListener`).
//!
//! Notifications are pushed into an unbounded buffer (client-go's growing ring buffer), so
//! pushing never blocks and a slow handler never holds up the DeltaFIFO. While notifications
//! wait, the listener is queued on the process's [handler pool](crate::handler_pool), whose
//! threads call the handler, in order and from one thread at a time per listener; a handler
//! that blocks holds a pool thread, and the pool adds threads so the other handlers go on.
//! The listener also keeps its own resync schedule and its sync tracker.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::done_signal::DoneSignal;
use crate::handler::ResourceEventHandler;
use crate::handler_pool::{self, PoolJob};
use crate::synctrack::SingleFileTracker;
use crate::tombstone::DeletedObject;

/// What a listener delivers to its handler.
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete(DeletedObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notification::Add {
                obj: Arc::clone(obj),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Notification::Delete(d) => Notification::Delete(d.clone()),
        }
    }
}

/// Buffered notifications above which a slow handler is logged (client-go's initial buffer).
const SLOW_HANDLER_BACKLOG: usize = 1024;

/// Notifications one listener delivers before the pool thread moves on to the next waiting
/// listener (its own rest is queued again at the back).
const BATCH: usize = 64;

/// The resync schedule of one listener.
struct Resync {
    /// The period the handler asked for (after the 1 s minimum).
    requested: Duration,
    /// The period in force; zero means never.
    period: Duration,
    /// When the handler is next due; `None` when that is beyond what the clock can represent
    /// (a period such as `Duration::MAX`): never.
    next: Option<Instant>,
}

pub(crate) struct ProcessorListener<K> {
    pub(crate) id: u64,
    delivery: Arc<Delivery<K>>,
    pub(crate) tracker: Arc<SingleFileTracker>,
    pub(crate) run_finished: DoneSignal,
    resync: Mutex<Resync>,
}

/// A listener's buffer and handler: the job the [handler pool](crate::handler_pool) runs.
struct Delivery<K> {
    name: String,
    buffer: Mutex<Buffer<K>>,
    /// Taken only by the one pool thread delivering for this listener at a time.
    handler: Mutex<Box<dyn ResourceEventHandler<K>>>,
    tracker: Arc<SingleFileTracker>,
    run_finished: DoneSignal,
}

/// The notifications waiting for the handler and where the listener is in its life.
struct Buffer<K> {
    /// Unbounded: a slow handler's backlog grows rather than losing notifications.
    pending: VecDeque<Notification<K>>,
    /// `run` was called: notifications are delivered.
    started: bool,
    /// The listener is queued in the pool or a pool thread is delivering for it.
    scheduled: bool,
    /// `stop` was called: nothing more is delivered.
    stopped: bool,
}

impl<K: Send + Sync + 'static> ProcessorListener<K> {
    pub(crate) fn new(
        id: u64,
        name: String,
        handler: Box<dyn ResourceEventHandler<K>>,
        requested_resync: Duration,
        resync: Duration,
    ) -> Self {
        let tracker = Arc::new(SingleFileTracker::new());
        let run_finished = DoneSignal::new();
        ProcessorListener {
            id,
            delivery: Arc::new(Delivery {
                name,
                buffer: Mutex::new(Buffer {
                    pending: VecDeque::new(),
                    started: false,
                    scheduled: false,
                    stopped: false,
                }),
                handler: Mutex::new(handler),
                tracker: tracker.clone(),
                run_finished: run_finished.clone(),
            }),
            tracker,
            run_finished,
            resync: Mutex::new(Resync {
                requested: requested_resync,
                period: resync,
                next: Instant::now().checked_add(resync),
            }),
        }
    }

    /// Queues a notification; never blocks.
    pub(crate) fn add(&self, notification: Notification<K>) {
        if let Notification::Add {
            is_in_initial_list: true,
            ..
        } = notification
        {
            self.tracker.start();
        }
        let mut buffer = self.delivery.buffer.lock();
        if buffer.stopped {
            tracing::debug!(
                handler = self.delivery.name,
                "notification for a stopped handler dropped"
            );
            return;
        }
        buffer.pending.push_back(notification);
        if buffer.started && !buffer.scheduled {
            buffer.scheduled = true;
            drop(buffer);
            handler_pool::pool().submit(self.delivery.clone());
        }
    }

    /// The number of notifications waiting for the handler.
    pub(crate) fn pending(&self) -> usize {
        self.delivery.buffer.lock().pending.len()
    }

    /// Starts delivering notifications on the handler pool (once).
    pub(crate) fn run(&self) {
        let mut buffer = self.delivery.buffer.lock();
        if buffer.started || buffer.stopped {
            return;
        }
        buffer.started = true;
        if !buffer.pending.is_empty() {
            buffer.scheduled = true;
            drop(buffer);
            handler_pool::pool().submit(self.delivery.clone());
        }
    }

    /// Stops delivering before the next notification; pending ones are dropped.
    /// [`run_finished`](Self::run_finished) is set once no handler call is under way.
    pub(crate) fn stop(&self) {
        let mut buffer = self.delivery.buffer.lock();
        if buffer.stopped {
            return;
        }
        buffer.stopped = true;
        let dropped = std::mem::take(&mut buffer.pending);
        // A listener that is not queued or delivering has nothing to finish; otherwise the
        // pool thread that takes it sets the signal.
        if !buffer.scheduled {
            self.run_finished.set();
        }
        drop(buffer);
        drop(dropped);
    }

    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let resync = self.resync.lock();
        !resync.period.is_zero() && resync.next.is_some_and(|next| now >= next)
    }

    pub(crate) fn determine_next_resync(&self, now: Instant) {
        let mut resync = self.resync.lock();
        resync.next = now.checked_add(resync.period);
    }

    pub(crate) fn requested_resync_period(&self) -> Duration {
        self.resync.lock().requested
    }

    #[cfg(test)]
    pub(crate) fn resync_period(&self) -> Duration {
        self.resync.lock().period
    }

    pub(crate) fn set_resync_period(&self, period: Duration) {
        self.resync.lock().period = period;
    }
}

impl<K: Send + Sync + 'static> PoolJob for Delivery<K> {
    fn run_batch(&self) -> bool {
        let mut handler = self.handler.lock();
        for _ in 0..BATCH {
            let notification = {
                let mut buffer = self.buffer.lock();
                if buffer.stopped {
                    buffer.scheduled = false;
                    self.run_finished.set();
                    return false;
                }
                let Some(notification) = buffer.pending.pop_front() else {
                    buffer.scheduled = false;
                    return false;
                };
                if buffer.pending.len() > SLOW_HANDLER_BACKLOG
                    && buffer.pending.len().is_multiple_of(SLOW_HANDLER_BACKLOG)
                {
                    tracing::debug!(
                        handler = self.name,
                        backlog = buffer.pending.len(),
                        "event handler is behind"
                    );
                }
                notification
            };
            deliver(handler.as_mut(), notification, &self.tracker, &self.name);
        }
        let mut buffer = self.buffer.lock();
        if buffer.stopped {
            buffer.scheduled = false;
            self.run_finished.set();
            return false;
        }
        if buffer.pending.is_empty() {
            buffer.scheduled = false;
            return false;
        }
        true
    }
}

/// Calls the handler for one notification. A panicking handler is logged and the listener
/// goes on with the next notification (client-go logs the crash too), so its buffer does not
/// grow forever and its sync tracking still completes.
fn deliver<K: 'static>(
    handler: &mut dyn ResourceEventHandler<K>,
    notification: Notification<K>,
    tracker: &SingleFileTracker,
    name: &str,
) {
    let initial = matches!(
        notification,
        Notification::Add {
            is_in_initial_list: true,
            ..
        }
    );
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match notification {
        Notification::Add {
            obj,
            is_in_initial_list,
        } => handler.on_add(&obj, is_in_initial_list),
        Notification::Update { old, new } => handler.on_update(&old, &new),
        Notification::Delete(obj) => handler.on_delete(obj),
    }));
    if result.is_err() {
        tracing::error!(
            handler = name,
            "event handler panicked; continuing with the next event"
        );
    }
    if initial {
        tracker.finished();
    }
}

/// The resync period a handler gets given the informer's check period (client-go's
/// `determineResyncPeriod`): zero stays zero, a zero check period disables resync, and a period
/// shorter than the check period is raised to it.
pub(crate) fn determine_resync_period(desired: Duration, check: Duration) -> Duration {
    if desired.is_zero() {
        return desired;
    }
    if check.is_zero() {
        tracing::warn!(
            ?desired,
            "resync period ignored: this informer does not resync"
        );
        return Duration::ZERO;
    }
    if desired < check {
        tracing::warn!(
            ?desired,
            ?check,
            "resync period raised to the informer's resync check period"
        );
        return check;
    }
    desired
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example_object::Pod;
    use crate::handler::ResourceEventHandlerFuncs;

    /// Both places that add a resync period to the clock: at creation and after each resync.
    #[test]
    fn a_resync_period_the_clock_cannot_add_is_never_due() {
        let listener = ProcessorListener::<Pod>::new(
            1,
            "never".into(),
            Box::new(ResourceEventHandlerFuncs::new()),
            Duration::MAX,
            Duration::MAX,
        );
        let now = Instant::now();
        assert!(!listener.should_resync(now));
        listener.determine_next_resync(now);
        assert!(!listener.should_resync(now + Duration::from_secs(100 * 365 * 24 * 3600)));
    }
}
