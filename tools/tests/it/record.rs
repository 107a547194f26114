//! The event recorder writing core/v1 Events through the real API server.

use std::time::Duration;

use kclient_api::core::v1::{Event, EventSource};
use kclient_apimachinery::{ListOptions, Object};
use kclient_testenv::{Identity, TestEnv};
use kclient_tools::{ClientEventSink, EventBroadcaster, EventType};

fn source() -> EventSource {
    EventSource {
        component: Some("kclient-tools-test".into()),
        host: Some("test-host".into()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_events_are_listed_and_repeats_count_up_on_one_object() {
    let env = TestEnv::connect().await;
    let (ns, cs, cm) = crate::event_subject(&env, &[("k", "v")]).await;

    let broadcaster = EventBroadcaster::new();
    let watcher =
        broadcaster.start_recording_to_sink(ClientEventSink::new(env.client(Identity::Admin)));
    let recorder = broadcaster.new_recorder(source());
    for _ in 0..3 {
        recorder.event(
            &cm,
            EventType::Warning,
            "Misconfigured",
            "key k is deprecated",
        );
    }
    recorder.event(&cm, EventType::Normal, "Synced", "synced");
    broadcaster.shutdown();
    watcher.wait().await;
    assert_eq!(broadcaster.dropped_events(), 0);

    let events = cs
        .core_v1()
        .events(ns.name())
        .list(&ListOptions::default())
        .await
        .expect("list events");
    let mut events: Vec<Event> = events.items.into_iter().collect();
    events.sort_by(|a, b| a.reason.cmp(&b.reason));
    assert_eq!(events.len(), 2, "repeats share one Event: {events:?}");

    let warning = &events[0];
    assert_eq!(warning.reason.as_deref(), Some("Misconfigured"));
    assert_eq!(warning.count, Some(3), "count went up on the same object");
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.message.as_deref(), Some("key k is deprecated"));
    assert!(warning.name().starts_with("subject."));
    assert!(warning.last_timestamp >= warning.first_timestamp);
    let o = &warning.involved_object;
    assert_eq!(o.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(o.api_version.as_deref(), Some("v1"));
    assert_eq!(o.name.as_deref(), Some("subject"));
    assert_eq!(o.namespace.as_deref(), Some(ns.name()));
    assert_eq!(o.uid.as_deref(), Some(cm.uid()));
    assert_eq!(
        warning.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("kclient-tools-test")
    );
    assert_eq!(
        warning.reporting_component.as_deref(),
        Some("kclient-tools-test")
    );

    let normal = &events[1];
    assert_eq!(normal.reason.as_deref(), Some("Synced"));
    assert_eq!(normal.count, Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeat_of_a_deleted_event_is_created_again() {
    let env = TestEnv::connect().await;
    let (ns, cs, cm) = crate::event_subject(&env, &[]).await;
    let events = cs.core_v1().events(ns.name());

    let broadcaster = EventBroadcaster::new();
    let watcher =
        broadcaster.start_recording_to_sink(ClientEventSink::new(env.client(Identity::Admin)));
    let recorder = broadcaster.new_recorder(source());
    recorder.event(&cm, EventType::Normal, "Tick", "tick");
    let first = crate::eventually(Duration::from_secs(10), "the first event", || async {
        let list = events.list(&ListOptions::default()).await.ok()?;
        list.items.into_iter().next()
    })
    .await;
    events
        .delete(first.name(), &Default::default())
        .await
        .expect("delete the event");

    // The correlator wants to patch count 2 onto the deleted object: the patch gets 404, so
    // the sink creates the event again.
    recorder.event(&cm, EventType::Normal, "Tick", "tick");
    broadcaster.shutdown();
    watcher.wait().await;
    let list = events.list(&ListOptions::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].reason.as_deref(), Some("Tick"));
    assert_eq!(list.items[0].count, Some(2));
}

/// client-go's spam filter keys its token bucket on the event type too (`getSpamKey`, since
/// Kubernetes 1.31): a component that used up its 25 Normal events about an object can still
/// report a Warning about it.
#[tokio::test(flavor = "multi_thread")]
async fn a_warning_is_not_throttled_by_normal_events_about_the_same_object() {
    let env = TestEnv::connect().await;
    let (ns, cs, cm) = crate::event_subject(&env, &[]).await;

    let broadcaster = EventBroadcaster::new();
    let watcher =
        broadcaster.start_recording_to_sink(ClientEventSink::new(env.client(Identity::Admin)));
    let recorder = broadcaster.new_recorder(source());
    // Distinct reasons, so nothing is aggregated or counted: 25 Normal events use the burst.
    for i in 0..25 {
        recorder.event(&cm, EventType::Normal, &format!("Step{i}"), "done");
    }
    // The 26th Normal event is throttled; the Warning has its own bucket.
    recorder.event(&cm, EventType::Normal, "Step25", "done");
    recorder.event(&cm, EventType::Warning, "Failed", "it broke");
    broadcaster.shutdown();
    watcher.wait().await;

    let list = cs
        .core_v1()
        .events(ns.name())
        .list(&ListOptions::default())
        .await
        .expect("list events");
    let reasons: Vec<&str> = list
        .items
        .iter()
        .filter_map(|e| e.reason.as_deref())
        .collect();
    assert_eq!(list.items.len(), 26, "{reasons:?}");
    assert!(
        reasons.contains(&"Failed"),
        "the Warning was throttled: {reasons:?}"
    );
    assert!(!reasons.contains(&"Step25"), "{reasons:?}");
}
