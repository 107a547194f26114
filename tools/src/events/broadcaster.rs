//! [`EventsV1Broadcaster`], client-go's `events.EventBroadcaster`: queues recorded
//! `events.k8s.io/v1` events and writes them to an [`EventsV1Sink`], folding isomorphic
//! events into series (see the [module documentation](super)).
//!
//! Recorded events wait in a queue of [`EventsV1Options::queue_length`] (1000) until they are
//! folded into series; those to write then wait in a second queue of the same length for one
//! of 8 writers (client-go's `recordWorkers`). An event that finds either queue full is
//! dropped, logged and counted ([`EventsV1Broadcaster::dropped_events`]), so a server that
//! stalls holds at most 8 writes and two full queues, however many events are recorded.
//! Each write is retried on transport failures up to [`EventsV1Options::max_tries`] (12)
//! times with sleeps of [`EventsV1Options::sleep_duration`] (10 s) plus up to 25% jitter.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use kclient_api::core::v1::ObjectReference;
use kclient_api::events::v1::{Event, EventSeries};
use kclient_apimachinery::meta::{MicroTime, PatchMeta};
use kclient_apimachinery::{Object, create_two_way_merge_patch};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::recorder::EventsV1Recorder;
use super::sink::EventsV1Sink;
use crate::event_write::{Retries, WriteOutcome, write_event};
use crate::retry::jitter;

/// How many events are written at once (client-go's `recordWorkers`).
pub(crate) const RECORD_WORKERS: usize = 8;

/// Settings of an [`EventsV1Broadcaster`]; the defaults are client-go's.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EventsV1Options {
    /// How many events may wait to be written before new ones are dropped: 1000.
    pub queue_length: usize,
    /// The sleep between tries to write an event (plus up to 25% jitter): 10 s.
    pub sleep_duration: Duration,
    /// How many times one event is tried: 12.
    pub max_tries: u32,
    /// How often open series are written with their current count: 30 minutes (also for
    /// zero).
    pub refresh_period: Duration,
    /// How long a series (or single event) stays open without a repeat, and how often quiet
    /// ones are looked for: 6 minutes (also for zero).
    pub finish_time: Duration,
}

impl EventsV1Options {
    /// How many events may wait to be written before new ones are dropped: 1000.
    pub fn queue_length(mut self, queue_length: usize) -> Self {
        self.queue_length = queue_length;
        self
    }

    /// The sleep between tries to write an event (plus up to 25% jitter): 10 s.
    pub fn sleep_duration(mut self, sleep_duration: Duration) -> Self {
        self.sleep_duration = sleep_duration;
        self
    }

    /// How many times one event is tried: 12.
    pub fn max_tries(mut self, max_tries: u32) -> Self {
        self.max_tries = max_tries;
        self
    }

    /// How often open series are written with their current count: 30 minutes.
    pub fn refresh_period(mut self, refresh_period: Duration) -> Self {
        self.refresh_period = refresh_period;
        self
    }

    /// How long a series (or single event) stays open without a repeat: 6 minutes.
    pub fn finish_time(mut self, finish_time: Duration) -> Self {
        self.finish_time = finish_time;
        self
    }
}

impl Default for EventsV1Options {
    fn default() -> Self {
        EventsV1Options {
            queue_length: 1000,
            sleep_duration: Duration::from_secs(10),
            max_tries: 12,
            refresh_period: Duration::from_secs(30 * 60),
            finish_time: Duration::from_secs(6 * 60),
        }
    }
}

/// Writes `events.k8s.io/v1` events to a sink, with series for repeats.
///
/// ```no_run
/// # async fn run(client: kclient_rest::Client, pod: kclient_api::core::v1::Pod) {
/// use kclient_tools::{ClientEventsV1Sink, EventType, EventsV1Broadcaster};
///
/// let broadcaster = EventsV1Broadcaster::new(ClientEventsV1Sink::new(client));
/// broadcaster.start_recording_to_sink();
/// let recorder = broadcaster.new_recorder("example.com/my-controller", "my-controller-pod-1");
/// recorder.event(&pod, None, EventType::Normal, "Scaled", "Scale", "scaled to 3 replicas");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct EventsV1Broadcaster {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    sink: Arc<dyn EventsV1Sink>,
    options: EventsV1Options,
    tx: mpsc::Sender<Event>,
    rx: Mutex<Option<mpsc::Receiver<Event>>>,
    /// The last event of each isomorphic key, with its series.
    cache: Mutex<HashMap<String, Event>>,
    dropped: AtomicU64,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventsV1Broadcaster")
            .field("options", &self.options)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl Inner {
    pub(crate) fn action_or_drop(&self, event: Event) {
        if self.shutdown.is_cancelled() {
            return;
        }
        if let Err(mpsc::error::TrySendError::Full(e)) = self.tx.try_send(event) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            tracing::error!(event = %e.name(), "unable to record event: too many queued events, dropped event");
        }
    }
}

impl EventsV1Broadcaster {
    /// A broadcaster writing to `sink` with client-go's defaults.
    pub fn new(sink: impl EventsV1Sink) -> Self {
        EventsV1Broadcaster::with_options(sink, EventsV1Options::default())
    }

    /// A broadcaster writing to `sink` with `options`.
    pub fn with_options(sink: impl EventsV1Sink, options: EventsV1Options) -> Self {
        let (tx, rx) = mpsc::channel(options.queue_length.max(1));
        EventsV1Broadcaster {
            inner: Arc::new(Inner {
                sink: Arc::new(sink),
                options,
                tx,
                rx: Mutex::new(Some(rx)),
                cache: Mutex::new(HashMap::new()),
                dropped: AtomicU64::new(0),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// A recorder for `reporting_controller` (such as `example.com/my-controller`) running as
    /// `reporting_instance` (client-go uses `<controller>-<hostname>`).
    pub fn new_recorder(
        &self,
        reporting_controller: &str,
        reporting_instance: &str,
    ) -> EventsV1Recorder {
        EventsV1Recorder::new(self.inner.clone(), reporting_controller, reporting_instance)
    }

    /// How many events were dropped because a queue was full (see the module documentation).
    pub fn dropped_events(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Starts writing queued events, refreshing series and finishing quiet ones, until
    /// [`shutdown`](EventsV1Broadcaster::shutdown) (client-go's
    /// `StartRecordingToSinkWithContext`). Must run within a tokio runtime; a second call does
    /// nothing.
    pub fn start_recording_to_sink(&self) {
        let Some(mut rx) = self.inner.rx.lock().take() else {
            return;
        };
        // The events to write, taken by a fixed number of writers (client-go's `eventQueue`).
        let (to_write, writes) = mpsc::channel::<Event>(self.inner.options.queue_length.max(1));
        let writes = Arc::new(tokio::sync::Mutex::new(writes));
        let inner = self.inner.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    biased;
                    _ = inner.shutdown.cancelled() => return,
                    event = rx.recv() => match event {
                        Some(event) => event,
                        None => return,
                    },
                };
                if let Some(to_record) = observe(&inner.cache, event, SystemTime::now())
                    && let Err(mpsc::error::TrySendError::Full(e)) = to_write.try_send(to_record)
                {
                    inner.dropped.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(event = %e.name(), "unable to record event: too many queued events, dropped event");
                }
            }
        });
        for _ in 0..RECORD_WORKERS {
            let (inner, writes) = (self.inner.clone(), writes.clone());
            tokio::spawn(async move {
                loop {
                    let event = tokio::select! {
                        biased;
                        _ = inner.shutdown.cancelled() => return,
                        event = async { writes.lock().await.recv().await } => match event {
                            Some(event) => event,
                            None => return,
                        },
                    };
                    attempt_recording(&inner, event).await;
                }
            });
        }
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let defaults = EventsV1Options::default();
            let refresh_period = non_zero_or(inner.options.refresh_period, defaults.refresh_period);
            let finish_period = non_zero_or(inner.options.finish_time, defaults.finish_time);
            // Each runs at once, then `period` after it last finished (client-go's
            // `wait.Until`); a period past what the clock can represent means never again.
            let now = Instant::now();
            let (mut next_refresh, mut next_finish) = (Some(now), Some(now));
            loop {
                tokio::select! {
                    biased;
                    _ = inner.shutdown.cancelled() => return,
                    _ = sleep_until(next_refresh) => {
                        refresh_series(&inner).await;
                        next_refresh = Instant::now().checked_add(refresh_period);
                    }
                    _ = sleep_until(next_finish) => {
                        finish_series(&inner, SystemTime::now()).await;
                        next_finish = Instant::now().checked_add(finish_period);
                    }
                }
            }
        });
    }

    /// Stops recording: queued events are dropped, writes in flight stop retrying.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }
}

/// `period`, or `default` for zero (a zero period would spin).
fn non_zero_or(period: Duration, default: Duration) -> Duration {
    if period.is_zero() { default } else { period }
}

/// Waits until `at`, or forever for `None`.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The isomorphic key: everything but the note and the timestamps.
fn isomorphic_key(event: &Event) -> String {
    fn reference(r: Option<&ObjectReference>) -> [&str; 7] {
        match r {
            Some(r) => [
                r.kind.as_deref().unwrap_or(""),
                r.namespace.as_deref().unwrap_or(""),
                r.name.as_deref().unwrap_or(""),
                r.uid.as_deref().unwrap_or(""),
                r.api_version.as_deref().unwrap_or(""),
                r.resource_version.as_deref().unwrap_or(""),
                r.field_path.as_deref().unwrap_or(""),
            ],
            None => [""; 7],
        }
    }
    let mut fields = vec![
        event.type_.as_deref().unwrap_or(""),
        event.action.as_deref().unwrap_or(""),
        event.reason.as_deref().unwrap_or(""),
        event.reporting_controller.as_deref().unwrap_or(""),
        event.reporting_instance.as_deref().unwrap_or(""),
    ];
    fields.extend(reference(event.regarding.as_deref()));
    fields.extend(reference(event.related.as_deref()));
    fields.join("\u{1f}")
}

/// Folds `event` into the cache; returns what to write now, if anything (client-go's
/// `recordToSink` before the write).
fn observe(cache: &Mutex<HashMap<String, Event>>, event: Event, now: SystemTime) -> Option<Event> {
    let key = isomorphic_key(&event);
    let mut cache = cache.lock();
    if let Some(existing) = cache.get_mut(&key) {
        let now = MicroTime::from(now);
        if let Some(series) = existing.series.as_mut() {
            series.count = series.count.saturating_add(1);
            series.last_observed_time = now;
            return None;
        }
        existing.series = Some(Box::new(EventSeries {
            count: 2,
            last_observed_time: now,
        }));
        return Some(existing.clone());
    }
    cache.insert(key, event.clone());
    Some(event)
}

/// Writes `event`, retrying while that is worth it, each sleep `sleep_duration` plus up to
/// 25 % (client-go's `attemptRecording`).
async fn attempt_recording(inner: &Inner, event: Event) {
    let mut retries = Retries::new(event.name(), inner.options.max_tries, &inner.shutdown);
    while record_event(&*inner.sink, &event).await.1
        && retries
            .again(|_| jitter(inner.options.sleep_duration, 0.25))
            .await
    {}
}

/// One write: a series is patched (created if the Event is gone), a single event created.
/// Returns the server's copy and whether to retry (client-go's `recordEvent`).
async fn record_event(sink: &dyn EventsV1Sink, event: &Event) -> (Option<Event>, bool) {
    let is_series = event.series.is_some();
    let patch = if is_series {
        match series_patch(event) {
            Ok(patch) => Some(patch),
            Err(e) => {
                tracing::error!(error = %e, "unable to calculate the series patch");
                return (None, false);
            }
        }
    } else {
        None
    };
    let patch = patch.as_ref().map(|patch| sink.patch(event, patch));
    match write_event(event, patch, |fresh| sink.create(fresh)).await {
        WriteOutcome::Written(stored) => (Some(stored), false),
        WriteOutcome::Invalid => (None, false),
        // Creating a series' Event raced with its own first creation: retry the patch.
        WriteOutcome::Rejected(e) if e.is_already_exists() && is_series => (None, true),
        WriteOutcome::Rejected(e) => {
            tracing::error!(event = %event.name(), error = %e, "server rejected event (will not retry)");
            (None, false)
        }
        WriteOutcome::Unreachable => (None, true),
    }
}

/// The strategic merge patch from `event` without its series to `event`.
fn series_patch(event: &Event) -> Result<serde_json::Value, String> {
    let mut base = event.clone();
    base.series = None;
    let old = serde_json::to_value(&base).map_err(|e| e.to_string())?;
    let new = serde_json::to_value(event).map_err(|e| e.to_string())?;
    create_two_way_merge_patch(&old, &new, Event::patch_fields()).map_err(|e| e.to_string())
}

/// Writes every open series with its current count (client-go's `refreshExistingEventSeries`).
async fn refresh_series(inner: &Inner) {
    let open: Vec<(String, Event)> = inner
        .cache
        .lock()
        .iter()
        .filter(|(_, e)| e.series.is_some())
        .map(|(k, e)| (k.clone(), e.clone()))
        .collect();
    for (key, event) in open {
        if let (Some(stored), false) = record_event(&*inner.sink, &event).await {
            let mut cache = inner.cache.lock();
            if let Some(cached) = cache.get_mut(&key) {
                // Keep counts observed while the write was in flight.
                let series = cached.series.take();
                *cached = stored;
                if series.is_some() {
                    cached.series = series;
                }
            }
        }
    }
}

/// Writes the final count of series quiet for `finish_time` and forgets them, and forgets
/// single events older than that (client-go's `finishSeries`).
async fn finish_series(inner: &Inner, now: SystemTime) {
    let finish_time = non_zero_or(
        inner.options.finish_time,
        EventsV1Options::default().finish_time,
    );
    let cutoff = MicroTime::from(
        now.checked_sub(finish_time)
            .unwrap_or(SystemTime::UNIX_EPOCH),
    );
    let mut finished = Vec::new();
    {
        let mut cache = inner.cache.lock();
        cache.retain(|key, event| match &event.series {
            Some(series) => {
                if series.last_observed_time < cutoff {
                    finished.push((key.clone(), event.clone()));
                }
                true
            }
            None => event.event_time.is_some_and(|t| t >= cutoff),
        });
    }
    for (key, event) in finished {
        let (_, retry) = record_event(&*inner.sink, &event).await;
        if !retry {
            let mut cache = inner.cache.lock();
            // Forget it unless it was repeated meanwhile.
            if cache
                .get(&key)
                .and_then(|e| e.series.as_ref())
                .is_some_and(|s| s.last_observed_time < cutoff)
            {
                cache.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests;
