//! One registered handler and its private buffer (client-go's `processorListener`).
//!
//! Notifications are pushed into an unbounded crossbeam channel (client-go's growing ring
//! buffer) and consumed by a dedicated thread that calls the handler, so pushing never blocks
//! and a slow handler never holds up the DeltaFIFO or the other handlers. The listener also
//! keeps its own resync schedule and its sync tracker.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::done_signal::DoneSignal;
use crate::handler::ResourceEventHandler;
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

/// The resync schedule of one listener.
struct Resync {
    /// The period the handler asked for (after the 1 s minimum).
    requested: Duration,
    /// The period in force; zero means never.
    period: Duration,
    next: Instant,
}

type Startable<K> = (Receiver<Notification<K>>, Box<dyn ResourceEventHandler<K>>);

pub(crate) struct ProcessorListener<K> {
    pub(crate) id: u64,
    name: String,
    /// The sending side of the buffer; taken on stop so the thread wakes up and exits.
    tx: Mutex<Option<Sender<Notification<K>>>>,
    /// The receiver and handler, until the listener's thread takes them.
    startable: Mutex<Option<Startable<K>>>,
    pub(crate) tracker: Arc<SingleFileTracker>,
    stop: Arc<AtomicBool>,
    pub(crate) run_finished: DoneSignal,
    resync: Mutex<Resync>,
}

impl<K: Send + Sync + 'static> ProcessorListener<K> {
    pub(crate) fn new(
        id: u64,
        name: String,
        handler: Box<dyn ResourceEventHandler<K>>,
        requested_resync: Duration,
        resync: Duration,
    ) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        ProcessorListener {
            id,
            name,
            tx: Mutex::new(Some(tx)),
            startable: Mutex::new(Some((rx, handler))),
            tracker: Arc::new(SingleFileTracker::new()),
            stop: Arc::new(AtomicBool::new(false)),
            run_finished: DoneSignal::new(),
            resync: Mutex::new(Resync {
                requested: requested_resync,
                period: resync,
                next: Instant::now() + resync,
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
        let tx = self.tx.lock();
        let sent = tx.as_ref().is_some_and(|tx| tx.send(notification).is_ok());
        if !sent {
            tracing::debug!(
                handler = self.name,
                "notification for a stopped handler dropped"
            );
        }
    }

    /// The number of notifications waiting for the handler.
    pub(crate) fn pending(&self) -> usize {
        self.tx.lock().as_ref().map_or(0, Sender::len)
    }

    /// Starts the handler's thread (once).
    pub(crate) fn run(&self) {
        let Some((rx, mut handler)) = self.startable.lock().take() else {
            return;
        };
        let stop = Arc::clone(&self.stop);
        let tracker = Arc::clone(&self.tracker);
        let finished = self.run_finished.clone();
        let name = self.name.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("kclient-handler-{}", self.id))
            .spawn(move || {
                for notification in rx.iter() {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    if rx.len() > SLOW_HANDLER_BACKLOG {
                        tracing::debug!(
                            handler = name,
                            backlog = rx.len(),
                            "event handler is behind"
                        );
                    }
                    deliver(handler.as_mut(), notification, &tracker, &name);
                }
                finished.set();
            });
        if let Err(e) = spawned {
            tracing::error!(handler = self.name, error = %e, "cannot start event handler thread");
            self.run_finished.set();
        }
    }

    /// Tells the thread to stop before its next notification; pending ones are dropped.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        // Dropping the sender wakes a thread waiting on an empty buffer.
        self.tx.lock().take();
        // A listener that never started has no thread to wait for.
        if self.startable.lock().take().is_some() {
            self.run_finished.set();
        }
    }

    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let resync = self.resync.lock();
        !resync.period.is_zero() && now >= resync.next
    }

    pub(crate) fn determine_next_resync(&self, now: Instant) {
        let mut resync = self.resync.lock();
        resync.next = now + resync.period;
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
