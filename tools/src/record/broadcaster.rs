//! [`EventBroadcaster`], client-go's `record.EventBroadcaster`: fans events from
//! [`EventRecorder`]s out to watchers, one of which writes them to an [`EventSink`] through an
//! [`EventCorrelator`].
//!
//! # Queueing and dropping
//!
//! Recording never blocks and never fails the caller. Each watcher has a queue of
//! [`BroadcasterOptions::queue_length`] (1000) events; an event that finds a watcher's queue
//! full is dropped for that watcher and counted in [`EventBroadcaster::dropped_events`]
//! (client-go drops at its shared incoming queue of 1000 instead; the bound is the same).
//!
//! # Writing to a sink
//!
//! A sink watcher handles one event at a time: correlate, then create (or patch, for a
//! repeat; create again if the patched Event is gone). A failure to reach the server is
//! retried up to [`BroadcasterOptions::max_tries`] (12) times, sleeping
//! [`BroadcasterOptions::sleep_duration`] (10 s) between tries, the first sleep a random part
//! of it so that many clients do not retry in step. An error the server answered with
//! (invalid, forbidden, already exists, namespace terminating, ...) is not retried: the same
//! request would fail again. After [`EventBroadcaster::shutdown`], queued events are still
//! written but each is tried only once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kclient_api::core::v1::{Event, EventSource};
use kclient_apimachinery::Object;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::correlator::{Correlation, CorrelatorOptions, EventCorrelator};
use super::recorder::EventRecorder;
use super::sink::EventSink;
use crate::event_write::{Retries, WriteOutcome, write_event};

/// Settings of an [`EventBroadcaster`]; the defaults are client-go's.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BroadcasterOptions {
    /// How many events each watcher may have queued before new ones are dropped: 1000.
    pub queue_length: usize,
    /// The sleep between tries to write an event (the first one randomized): 10 s.
    pub sleep_duration: Duration,
    /// How many times a sink tries to write one event: 12.
    pub max_tries: u32,
    /// The correlator settings of each sink watcher.
    pub correlator: CorrelatorOptions,
}

impl BroadcasterOptions {
    /// How many events each watcher may have queued before new ones are dropped: 1000.
    pub fn queue_length(mut self, queue_length: usize) -> Self {
        self.queue_length = queue_length;
        self
    }

    /// The sleep between tries to write an event (the first one randomized): 10 s.
    pub fn sleep_duration(mut self, sleep_duration: Duration) -> Self {
        self.sleep_duration = sleep_duration;
        self
    }

    /// How many times a sink tries to write one event: 12.
    pub fn max_tries(mut self, max_tries: u32) -> Self {
        self.max_tries = max_tries;
        self
    }

    /// The correlator settings of each sink watcher.
    pub fn correlator(mut self, correlator: CorrelatorOptions) -> Self {
        self.correlator = correlator;
        self
    }
}

impl Default for BroadcasterOptions {
    fn default() -> Self {
        BroadcasterOptions {
            queue_length: 1000,
            sleep_duration: Duration::from_secs(10),
            max_tries: 12,
            correlator: CorrelatorOptions::default(),
        }
    }
}

/// Distributes recorded events to watchers; see the module documentation.
///
/// Cheap to clone; clones share the watchers. Starting a watcher spawns a tokio task, so it
/// must be called within a tokio runtime.
///
/// ```no_run
/// # async fn run(client: kclient_rest::Client, pod: kclient_api::core::v1::Pod) {
/// use kclient_api::core::v1::EventSource;
/// use kclient_tools::{ClientEventSink, EventBroadcaster, EventType};
///
/// let broadcaster = EventBroadcaster::new();
/// broadcaster.start_structured_logging();
/// broadcaster.start_recording_to_sink(ClientEventSink::new(client));
/// let recorder = broadcaster.new_recorder(EventSource {
///     component: Some("my-controller".into()),
///     host: None,
/// });
/// recorder.event(&pod, EventType::Normal, "Synced", "pod synced successfully");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct EventBroadcaster {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    options: BroadcasterOptions,
    watchers: Mutex<Watchers>,
    dropped: AtomicU64,
    /// Cancelled by `shutdown`: sinks stop retrying.
    shutdown: CancellationToken,
}

#[derive(Debug, Default)]
struct Watchers {
    next_id: u64,
    shut_down: bool,
    senders: Vec<(u64, mpsc::Sender<Arc<Event>>)>,
}

impl Inner {
    /// Queues `event` for every watcher, dropping it for those whose queue is full
    /// (client-go's `ActionOrDrop`).
    pub(crate) fn action_or_drop(&self, event: Event) {
        let event = Arc::new(event);
        let mut watchers = self.watchers.lock();
        if watchers.shut_down {
            tracing::error!("unable to record event: the broadcaster is shut down");
            return;
        }
        watchers
            .senders
            .retain(|(_, tx)| match tx.try_send(event.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(
                        event = %event.name(),
                        "unable to record event: too many queued events, dropped event"
                    );
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            });
    }

    fn remove_watcher(&self, id: u64) {
        self.watchers.lock().senders.retain(|(i, _)| *i != id);
    }
}

/// A running watcher of an [`EventBroadcaster`] (client-go returns a `watch.Interface`).
/// Dropping it leaves the watcher running; [`stop`](EventWatcher::stop) ends it.
#[derive(Debug)]
pub struct EventWatcher {
    inner: Arc<Inner>,
    id: u64,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl EventWatcher {
    /// Stops delivering new events to this watcher; the events already queued are still
    /// handled.
    pub fn stop(&self) {
        self.inner.remove_watcher(self.id);
    }

    /// Waits until the watcher has handled everything queued after being stopped (by
    /// [`stop`](EventWatcher::stop) or [`EventBroadcaster::shutdown`]).
    pub async fn wait(&self) {
        let task = self.task.lock().take();
        if let Some(task) = task
            && let Err(e) = task.await
        {
            tracing::error!(error = %e, "event watcher task failed");
        }
    }
}

impl Default for EventBroadcaster {
    fn default() -> Self {
        EventBroadcaster::new()
    }
}

impl EventBroadcaster {
    /// A broadcaster with client-go's defaults (client-go's `NewBroadcaster`).
    pub fn new() -> Self {
        EventBroadcaster::with_options(BroadcasterOptions::default())
    }

    /// A broadcaster with `options` (client-go's `NewBroadcasterWithCorrelatorOptions` and
    /// `NewBroadcasterForTests`).
    pub fn with_options(options: BroadcasterOptions) -> Self {
        EventBroadcaster {
            inner: Arc::new(Inner {
                options,
                watchers: Mutex::new(Watchers::default()),
                dropped: AtomicU64::new(0),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// A recorder whose events carry `source` (component and host) and go to this
    /// broadcaster's watchers.
    pub fn new_recorder(&self, source: EventSource) -> EventRecorder {
        EventRecorder::new(self.inner.clone(), source)
    }

    /// How many events were dropped because a watcher's queue was full.
    pub fn dropped_events(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Starts writing events to `sink` through a fresh [`EventCorrelator`] (client-go's
    /// `StartRecordingToSink`).
    pub fn start_recording_to_sink(&self, sink: impl EventSink) -> EventWatcher {
        let sink = Arc::new(sink);
        let options = self.inner.options.clone();
        let shutdown = self.inner.shutdown.clone();
        let mut correlator = EventCorrelator::new(options.correlator.clone());
        self.start(move |mut rx| async move {
            while let Some(event) = rx.recv().await {
                record_to_sink(&*sink, &event, &mut correlator, &options, &shutdown).await;
            }
        })
    }

    /// Starts calling `handler` with every event (client-go's `StartEventWatcher`).
    pub fn start_event_watcher<F>(&self, mut handler: F) -> EventWatcher
    where
        F: FnMut(&Event) + Send + 'static,
    {
        self.start(move |mut rx| async move {
            while let Some(event) = rx.recv().await {
                handler(&event);
            }
        })
    }

    /// Starts logging every event with `tracing` at INFO (client-go's
    /// `StartStructuredLogging`).
    pub fn start_structured_logging(&self) -> EventWatcher {
        self.start_event_watcher(|e| {
            let o = &e.involved_object;
            tracing::info!(
                object = %format!(
                    "{}/{}",
                    o.namespace.as_deref().unwrap_or(""),
                    o.name.as_deref().unwrap_or("")
                ),
                field_path = o.field_path.as_deref().unwrap_or(""),
                kind = o.kind.as_deref().unwrap_or(""),
                api_version = o.api_version.as_deref().unwrap_or(""),
                r#type = e.type_.as_deref().unwrap_or(""),
                reason = e.reason.as_deref().unwrap_or(""),
                message = e.message.as_deref().unwrap_or(""),
                "event occurred"
            );
        })
    }

    /// Stops accepting events, lets every watcher handle what it has queued (sinks try each
    /// remaining event once), and ends the watchers (client-go's `Shutdown`).
    pub fn shutdown(&self) {
        let mut watchers = self.inner.watchers.lock();
        watchers.shut_down = true;
        watchers.senders.clear();
        drop(watchers);
        self.inner.shutdown.cancel();
    }

    fn start<F, Fut>(&self, run: F) -> EventWatcher
    where
        F: FnOnce(mpsc::Receiver<Arc<Event>>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(self.inner.options.queue_length.max(1));
        let id = {
            let mut watchers = self.inner.watchers.lock();
            watchers.next_id += 1;
            let id = watchers.next_id;
            if !watchers.shut_down {
                watchers.senders.push((id, tx));
            }
            id
        };
        let task = tokio::spawn(run(rx));
        EventWatcher {
            inner: self.inner.clone(),
            id,
            task: Mutex::new(Some(task)),
        }
    }
}

/// Correlates `event` and writes it, retrying transport failures (client-go's
/// `recordToSink`). The first sleep is a random part of `sleep_duration`, so that clients do
/// not all retry in step.
async fn record_to_sink(
    sink: &dyn EventSink,
    event: &Event,
    correlator: &mut EventCorrelator,
    options: &BroadcasterOptions,
    shutdown: &CancellationToken,
) {
    let Correlation::Send { event, patch } = correlator.correlate(event) else {
        return;
    };
    let first_sleep = options.sleep_duration.mul_f64(rand::random::<f64>());
    let mut retries = Retries::new(event.name(), options.max_tries, shutdown);
    while record_event(sink, &event, patch.as_ref(), correlator).await
        && retries
            .again(|tries| {
                if tries == 1 {
                    first_sleep
                } else {
                    options.sleep_duration
                }
            })
            .await
    {}
}

/// One try to write `event`, a repeat as `patch`: whether to try again (client-go's
/// `recordEvent`). An error the server answered with is final; already-exists and a
/// terminating namespace are expected, so they are logged at debug only.
async fn record_event(
    sink: &dyn EventSink,
    event: &Event,
    patch: Option<&serde_json::Value>,
    correlator: &mut EventCorrelator,
) -> bool {
    let update_existing = event.count.unwrap_or(0) > 1;
    let patch = patch
        .filter(|_| update_existing)
        .map(|patch| sink.patch(event, patch));
    match write_event(event, patch, |fresh| sink.create(fresh)).await {
        WriteOutcome::Written(stored) => {
            correlator.update_state(&stored);
            false
        }
        WriteOutcome::Invalid => false,
        WriteOutcome::Rejected(e) => {
            if e.is_already_exists() || e.has_status_cause("NamespaceTerminating") {
                tracing::debug!(event = %event.name(), error = %e, "server rejected event (will not retry)");
            } else {
                tracing::error!(event = %event.name(), error = %e, "server rejected event (will not retry)");
            }
            false
        }
        WriteOutcome::Unreachable => true,
    }
}

#[cfg(test)]
mod tests;
