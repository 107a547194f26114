//! The `events.k8s.io/v1` recorder against the real API server: repeats become a series.

use std::time::Duration;

use kclient_apimachinery::{ListOptions, Object};
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{ClientEventsV1Sink, EventType, EventsV1Broadcaster};

#[tokio::test(flavor = "multi_thread")]
async fn isomorphic_events_become_a_series_on_one_event() {
    let env = TestEnv::connect().await;
    let (ns, cs, cm) = crate::event_subject(&env, &[]).await;

    let broadcaster =
        EventsV1Broadcaster::new(ClientEventsV1Sink::new(env.client(Identity::Admin)));
    broadcaster.start_recording_to_sink();
    let recorder = broadcaster.new_recorder("kclient.dev/tools-test", "tools-test-1");
    recorder.event(
        &cm,
        None,
        EventType::Warning,
        "Invalid",
        "Validate",
        "bad key",
    );
    let events = cs.events_v1().events(ns.name());
    let first = crate::eventually(Duration::from_secs(10), "the first event", || async {
        events
            .list(&ListOptions::default())
            .await
            .ok()?
            .items
            .into_iter()
            .next()
    })
    .await;
    assert!(first.series.is_none());
    assert_eq!(
        first.reporting_controller.as_deref(),
        Some("kclient.dev/tools-test")
    );
    assert_eq!(first.action.as_deref(), Some("Validate"));
    let regarding = first.regarding.as_deref().expect("regarding");
    assert_eq!(regarding.uid.as_deref(), Some(cm.uid()));

    recorder.event(
        &cm,
        None,
        EventType::Warning,
        "Invalid",
        "Validate",
        "bad key again",
    );
    let series = crate::eventually(Duration::from_secs(10), "the series", || async {
        let list = events.list(&ListOptions::default()).await.ok()?;
        assert_eq!(list.items.len(), 1, "repeats stay on one Event");
        let event = list.items.into_iter().next()?;
        event.series.clone().map(|s| (event, s))
    })
    .await;
    assert_eq!(series.1.count, 2);
    assert_eq!(series.0.name(), first.name());
    assert_eq!(broadcaster.dropped_events(), 0);
    broadcaster.shutdown();
}
