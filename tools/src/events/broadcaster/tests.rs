//! Unit tests of series folding and finishing against an in-memory sink.

use std::sync::atomic::AtomicUsize;

use serde_json::Value;

use super::*;
use crate::record::{EventType, SinkFuture};

#[derive(Default)]
struct MemorySink {
    creates: Arc<Mutex<Vec<Event>>>,
    patches: Arc<Mutex<Vec<(String, Value)>>>,
    calls: Arc<AtomicUsize>,
}

impl EventsV1Sink for MemorySink {
    fn create(&self, event: &Event) -> SinkFuture<'_, Event> {
        let event = event.clone();
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.creates.lock().push(event.clone());
            Ok(event)
        })
    }

    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_, Event> {
        let event = event.clone();
        let patch = patch.clone();
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.patches.lock().push((event.name().to_string(), patch));
            Ok(event)
        })
    }
}

fn pod() -> ObjectReference {
    ObjectReference {
        kind: Some("Pod".into()),
        api_version: Some("v1".into()),
        name: Some("web".into()),
        namespace: Some("ns".into()),
        ..Default::default()
    }
}

fn queued(rx: &Mutex<Option<mpsc::Receiver<Event>>>) -> Event {
    rx.lock()
        .as_mut()
        .expect("receiver")
        .try_recv()
        .expect("a queued event")
}

#[tokio::test]
async fn isomorphic_events_become_a_series_that_finishes() {
    let sink = MemorySink::default();
    let creates = sink.creates.clone();
    let patches = sink.patches.clone();
    let calls = sink.calls.clone();
    let broadcaster = EventsV1Broadcaster::new(sink);
    let inner = broadcaster.inner.clone();
    let recorder = broadcaster.new_recorder("example.com/ctl", "ctl-1");
    let t0 = SystemTime::now();

    for note in ["first", "second", "third"] {
        recorder.event(pod(), None, EventType::Warning, "Failed", "Sync", note);
    }
    let first = observe(&inner.cache, queued(&inner.rx), t0).expect("written");
    assert!(first.series.is_none());
    assert!(
        !record_event(&*inner.sink, &first).await.1,
        "written, no retry"
    );
    let second = observe(&inner.cache, queued(&inner.rx), t0).expect("written");
    assert_eq!(second.series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(
        second.name(),
        first.name(),
        "the series lives on the first Event"
    );
    record_event(&*inner.sink, &second).await;
    assert!(
        observe(&inner.cache, queued(&inner.rx), t0).is_none(),
        "the third only counts"
    );

    assert_eq!(creates.lock().len(), 1);
    let created = creates.lock()[0].clone();
    assert_eq!(
        created.reporting_controller.as_deref(),
        Some("example.com/ctl")
    );
    assert_eq!(created.reporting_instance.as_deref(), Some("ctl-1"));
    assert_eq!(created.action.as_deref(), Some("Sync"));
    assert_eq!(created.namespace(), "ns");
    assert!(created.event_time.is_some());
    let (name, patch) = patches.lock()[0].clone();
    assert_eq!(name, first.name());
    assert_eq!(patch["series"]["count"], 2, "{patch}");

    // Not quiet long enough yet: nothing happens.
    finish_series(&inner, t0 + Duration::from_secs(60)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Quiet for more than 6 minutes: the final count (3) is written and the series forgotten.
    finish_series(&inner, t0 + Duration::from_secs(7 * 60)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(patches.lock()[1].1["series"]["count"], 3);
    assert!(inner.cache.lock().is_empty());
}

#[tokio::test]
async fn a_different_reason_is_a_different_event_and_singles_expire() {
    let sink = MemorySink::default();
    let calls = sink.calls.clone();
    let broadcaster = EventsV1Broadcaster::new(sink);
    let inner = broadcaster.inner.clone();
    let recorder = broadcaster.new_recorder("example.com/ctl", "ctl-1");
    recorder.event(pod(), None, EventType::Normal, "A", "Sync", "n");
    recorder.event(pod(), None, EventType::Normal, "B", "Sync", "n");
    let now = SystemTime::now();
    for _ in 0..2 {
        let e = observe(&inner.cache, queued(&inner.rx), now).expect("written");
        assert!(e.series.is_none());
    }
    assert_eq!(inner.cache.lock().len(), 2);
    finish_series(&inner, now + Duration::from_secs(7 * 60)).await;
    assert!(inner.cache.lock().is_empty(), "single events are forgotten");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "and not written again");
}

#[tokio::test]
async fn a_full_queue_drops_and_counts() {
    let broadcaster = EventsV1Broadcaster::with_options(
        MemorySink::default(),
        EventsV1Options {
            queue_length: 3,
            ..EventsV1Options::default()
        },
    );
    let recorder = broadcaster.new_recorder("c", "i");
    for i in 0..5 {
        recorder.event(pod(), None, EventType::Normal, "R", "A", &format!("{i}"));
    }
    assert_eq!(broadcaster.dropped_events(), 2);
}

#[tokio::test]
async fn the_event_name_is_valid_whatever_the_object_is_named() {
    let broadcaster = EventsV1Broadcaster::new(MemorySink::default());
    let inner = broadcaster.inner.clone();
    let recorder = broadcaster.new_recorder("example.com/ctl", "ctl-1");
    let long = "a".repeat(250);
    for object in ["system:controller:job-controller", long.as_str(), "web"] {
        let regarding = ObjectReference {
            name: Some(object.into()),
            ..pod()
        };
        recorder.event(regarding, None, EventType::Normal, "Synced", "Sync", "n");
        let event = queued(&inner.rx);
        assert!(
            crate::event_name::is_valid_event_name(event.name()),
            "{object:?} -> {:?}",
            event.name()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn open_series_are_refreshed_whatever_the_periods() {
    // A zero period means the default (a refresh every 30 minutes), and one the clock
    // cannot add means never: neither may stop the task that refreshes and finishes series.
    for (refresh, finish) in [
        (Duration::ZERO, Duration::ZERO),
        (Duration::from_secs(60), Duration::MAX),
    ] {
        let sink = MemorySink::default();
        let patches = sink.patches.clone();
        let options = EventsV1Options::default()
            .refresh_period(refresh)
            .finish_time(finish);
        let broadcaster = EventsV1Broadcaster::with_options(sink, options);
        broadcaster.start_recording_to_sink();
        let recorder = broadcaster.new_recorder("example.com/ctl", "ctl-1");
        for note in ["first", "second"] {
            recorder.event(pod(), None, EventType::Warning, "Failed", "Sync", note);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(patches.lock().len(), 1, "the series' first write");
        tokio::time::sleep(Duration::from_secs(31 * 60)).await;
        let count = patches.lock().len();
        assert!(
            count >= 2,
            "refresh {refresh:?}, finish {finish:?}: the series was never refreshed"
        );
        broadcaster.shutdown();
    }
}

/// A sink whose writes never finish (an API server that accepts connections and never
/// answers), counting the writes in flight.
#[derive(Default)]
struct StalledSink {
    in_flight: Arc<AtomicUsize>,
}

impl EventsV1Sink for StalledSink {
    fn create(&self, _event: &Event) -> SinkFuture<'_, Event> {
        Box::pin(async move {
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            std::future::pending().await
        })
    }

    fn patch(&self, event: &Event, _patch: &Value) -> SinkFuture<'_, Event> {
        self.create(event)
    }
}

#[tokio::test(start_paused = true)]
async fn a_stalled_sink_holds_a_bounded_number_of_events() {
    // client-go writes with 8 workers from a queue of 1000 and drops (logging) what does not
    // fit; a task per event would hold every distinct event recorded while the server stalls.
    let sink = StalledSink::default();
    let in_flight = sink.in_flight.clone();
    let broadcaster = EventsV1Broadcaster::new(sink);
    broadcaster.start_recording_to_sink();
    let recorder = broadcaster.new_recorder("example.com/ctl", "ctl-1");
    let recorded = 5000;
    for i in 0..recorded {
        // Distinct reasons: no two events fold into one series.
        recorder.event(
            pod(),
            None,
            EventType::Normal,
            &format!("R{i}"),
            "Sync",
            "n",
        );
        if i % 100 == 99 {
            // Paused time advances only once every task is idle: the recording task has
            // taken everything queued so far.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        in_flight.load(Ordering::SeqCst),
        RECORD_WORKERS,
        "writes in flight"
    );
    let queue_length = EventsV1Options::default().queue_length;
    assert_eq!(
        broadcaster.dropped_events(),
        (recorded - RECORD_WORKERS - queue_length) as u64,
        "every event that found no room is counted"
    );
    broadcaster.shutdown();
}
