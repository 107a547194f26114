//! Unit tests of the broadcaster and sink loop against an in-memory sink, on tokio's paused
//! clock.

use std::sync::atomic::AtomicUsize;

use kclient_api::core::v1::ObjectReference;
use kclient_apimachinery::{Error, TransportErrorKind};
use serde_json::Value;

use super::*;
use crate::record::reference::EventType;
use crate::record::sink::SinkFuture;

#[derive(Debug, Clone, PartialEq)]
enum Call {
    Create { name: String, count: i32 },
    Patch { name: String, patch: Value },
}

/// A sink that stores events by name, failing the first `fail_first` calls with `failure`.
#[derive(Default)]
struct MemorySink {
    calls: Arc<Mutex<Vec<Call>>>,
    stored: Arc<Mutex<Vec<Event>>>,
    fail_first: usize,
    failure: Option<fn() -> Error>,
    attempts: Arc<AtomicUsize>,
    block: bool,
}

impl MemorySink {
    fn fail(&self) -> Option<Error> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        match self.failure {
            Some(f) if n < self.fail_first => Some(f()),
            _ => None,
        }
    }
}

impl EventSink for MemorySink {
    fn create(&self, event: &Event) -> SinkFuture<'_> {
        let event = event.clone();
        Box::pin(async move {
            if self.block {
                std::future::pending::<()>().await;
            }
            if let Some(e) = self.fail() {
                return Err(e);
            }
            self.calls.lock().push(Call::Create {
                name: event.name().to_string(),
                count: event.count.unwrap_or(0),
            });
            let mut stored = event.clone();
            stored.set_resource_version("1");
            self.stored.lock().push(stored.clone());
            Ok(stored)
        })
    }

    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_> {
        let name = event.name().to_string();
        let patch = patch.clone();
        Box::pin(async move {
            if let Some(e) = self.fail() {
                return Err(e);
            }
            self.calls.lock().push(Call::Patch {
                name: name.clone(),
                patch: patch.clone(),
            });
            let mut stored = self.stored.lock();
            let Some(event) = stored.iter_mut().find(|e| e.name() == name) else {
                return Err(Error::new_not_found("", "events", &name));
            };
            event.count = patch["count"].as_i64().and_then(|c| i32::try_from(c).ok());
            Ok(event.clone())
        })
    }
}

fn pod(name: &str) -> ObjectReference {
    ObjectReference {
        kind: Some("Pod".into()),
        api_version: Some("v1".into()),
        name: Some(name.into()),
        namespace: Some("ns".into()),
        uid: Some("u1".into()),
        ..Default::default()
    }
}

fn source() -> EventSource {
    EventSource {
        component: Some("unit".into()),
        host: Some("node-1".into()),
    }
}

fn quick_options() -> BroadcasterOptions {
    BroadcasterOptions {
        sleep_duration: Duration::from_millis(100),
        ..BroadcasterOptions::default()
    }
}

#[tokio::test(start_paused = true)]
async fn records_create_then_patch_repeats() {
    let broadcaster = EventBroadcaster::with_options(quick_options());
    let sink = MemorySink::default();
    let calls = sink.calls.clone();
    let stored = sink.stored.clone();
    let watcher = broadcaster.start_recording_to_sink(sink);
    let recorder = broadcaster.new_recorder(source());
    for _ in 0..3 {
        recorder.event(pod("web"), EventType::Warning, "BackOff", "restarting");
    }
    broadcaster.shutdown();
    watcher.wait().await;

    let calls = calls.lock().clone();
    assert_eq!(calls.len(), 3, "{calls:?}");
    let Call::Create { name, count: 1 } = &calls[0] else {
        panic!("first call {:?}", calls[0]);
    };
    assert!(name.starts_with("web."));
    for (i, call) in calls[1..].iter().enumerate() {
        let Call::Patch {
            name: patched,
            patch,
        } = call
        else {
            panic!("call {call:?}");
        };
        assert_eq!(patched, name);
        assert_eq!(patch["count"], i + 2);
    }
    let stored = stored.lock();
    assert_eq!(stored.len(), 1);
    let event = &stored[0];
    assert_eq!(event.count, Some(3));
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.namespace(), "ns");
    assert_eq!(event.reporting_component.as_deref(), Some("unit"));
    assert_eq!(event.reporting_instance.as_deref(), Some("node-1"));
    assert_eq!(
        event.source.as_ref().and_then(|s| s.host.as_deref()),
        Some("node-1")
    );
}

#[tokio::test(start_paused = true)]
async fn transport_failures_are_retried_with_sleeps() {
    let broadcaster = EventBroadcaster::with_options(quick_options());
    let sink = MemorySink {
        fail_first: 3,
        failure: Some(|| Error::transport(TransportErrorKind::ConnectionRefused, "refused")),
        ..MemorySink::default()
    };
    let attempts = sink.attempts.clone();
    let calls = sink.calls.clone();
    let watcher = broadcaster.start_recording_to_sink(sink);
    let start = tokio::time::Instant::now();
    broadcaster
        .new_recorder(source())
        .event(pod("web"), EventType::Normal, "Pulled", "pulled");
    // Stop the watcher (not the broadcaster: that would end the retries).
    watcher.stop();
    watcher.wait().await;
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
    assert_eq!(calls.lock().len(), 1);
    let waited = start.elapsed();
    // A random part of the first sleep, then two full ones.
    assert!(
        waited >= Duration::from_millis(200) && waited <= Duration::from_millis(300),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_stop_after_max_tries() {
    let broadcaster = EventBroadcaster::with_options(quick_options());
    let sink = MemorySink {
        fail_first: usize::MAX,
        failure: Some(|| Error::transport(TransportErrorKind::Timeout, "timeout")),
        ..MemorySink::default()
    };
    let attempts = sink.attempts.clone();
    let watcher = broadcaster.start_recording_to_sink(sink);
    broadcaster
        .new_recorder(source())
        .event(pod("web"), EventType::Normal, "Pulled", "pulled");
    watcher.stop();
    watcher.wait().await;
    assert_eq!(attempts.load(Ordering::SeqCst), 12);
}

#[tokio::test(start_paused = true)]
async fn server_rejections_are_not_retried() {
    let broadcaster = EventBroadcaster::with_options(quick_options());
    let sink = MemorySink {
        fail_first: usize::MAX,
        failure: Some(|| Error::new_bad_request("invalid event")),
        ..MemorySink::default()
    };
    let attempts = sink.attempts.clone();
    let watcher = broadcaster.start_recording_to_sink(sink);
    broadcaster
        .new_recorder(source())
        .event(pod("web"), EventType::Normal, "Pulled", "pulled");
    watcher.stop();
    watcher.wait().await;
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_retrying() {
    let broadcaster = EventBroadcaster::with_options(BroadcasterOptions::default());
    let sink = MemorySink {
        fail_first: usize::MAX,
        failure: Some(|| Error::transport(TransportErrorKind::Other, "down")),
        ..MemorySink::default()
    };
    let attempts = sink.attempts.clone();
    let watcher = broadcaster.start_recording_to_sink(sink);
    broadcaster
        .new_recorder(source())
        .event(pod("web"), EventType::Normal, "Pulled", "pulled");
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    broadcaster.shutdown();
    watcher.wait().await;
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    // Events after shutdown go nowhere and do not count as queue drops.
    broadcaster
        .new_recorder(source())
        .event(pod("web"), EventType::Normal, "Late", "late");
    assert_eq!(broadcaster.dropped_events(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_drops_and_counts() {
    let broadcaster = EventBroadcaster::with_options(BroadcasterOptions {
        queue_length: 5,
        ..BroadcasterOptions::default()
    });
    let sink = MemorySink {
        block: true,
        ..MemorySink::default()
    };
    let _watcher = broadcaster.start_recording_to_sink(sink);
    let recorder = broadcaster.new_recorder(source());
    recorder.event(pod("web"), EventType::Normal, "R", "first");
    // Let the sink take the first event and block on it.
    tokio::task::yield_now().await;
    for i in 0..10 {
        recorder.event(pod("web"), EventType::Normal, "R", &format!("m{i}"));
    }
    assert_eq!(broadcaster.dropped_events(), 5, "5 queued, 5 dropped");
}

#[tokio::test]
async fn event_watchers_see_every_event_with_its_fields() {
    let broadcaster = EventBroadcaster::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watcher = {
        let seen = seen.clone();
        broadcaster.start_event_watcher(move |e| seen.lock().push(e.clone()))
    };
    let recorder = broadcaster.new_recorder(source());
    let mut annotations = std::collections::BTreeMap::new();
    annotations.insert("a".to_string(), "b".to_string());
    recorder.annotated_event(
        pod("web"),
        annotations,
        EventType::Normal,
        "Scheduled",
        "ok",
    );
    recorder.event(
        ObjectReference {
            name: Some("node-1".into()),
            kind: Some("Node".into()),
            ..Default::default()
        },
        EventType::Warning,
        "NotReady",
        "node is not ready",
    );
    broadcaster.shutdown();
    watcher.wait().await;
    let seen = seen.lock();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0]
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("a").map(|v| v.to_string())),
        Some("b".to_string())
    );
    assert_eq!(seen[0].count, Some(1));
    assert_eq!(seen[0].first_timestamp, seen[0].last_timestamp);
    assert_eq!(
        seen[1].namespace(),
        "default",
        "cluster-scoped objects' events go to default"
    );
    assert!(seen[1].name().starts_with("node-1."));
}
