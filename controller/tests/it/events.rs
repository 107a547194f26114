//! The EventRecorder of `ControllerEvents` in a reconcile's context writes Events about the
//! reconciled objects.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, Event};
use kclient_apimachinery::ListOptions;
use kclient_cache::CancellationToken;
use kclient_clientset::Api;
use kclient_controller::{Action, ControllerBuilder, ControllerEvents};
use kclient_tools::{EventRecorder, EventType};

use crate::Setup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciles_record_events_about_their_objects() {
    let s = Setup::new().await;
    s.create_config_map("noted", &[]).await;
    let events = ControllerEvents::new(s.client.clone(), "events-test");
    let controller = ControllerBuilder::new("events-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile(
            |cm: Arc<ConfigMap>, recorder: Arc<EventRecorder>| async move {
                recorder.event(
                    &*cm,
                    EventType::Normal,
                    "Reconciled",
                    "seen by the test controller",
                );
                Ok::<_, String>(Action::done())
            },
        );
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::new(events.recorder()), shutdown.clone()));

    let api: Api<Event> = Api::namespaced(s.client.clone(), s.ns.name());
    let mut found = None;
    for _ in 0..300 {
        let list = api.list(&ListOptions::default()).await.unwrap();
        found = list.items.into_iter().find(|e| {
            e.reason.as_deref() == Some("Reconciled")
                && e.involved_object.name.as_deref() == Some("noted")
        });
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let event = found.expect("no Reconciled event about the ConfigMap within 30s");
    assert_eq!(event.involved_object.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(
        event.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("events-test")
    );
    shutdown.cancel();
    run.await.unwrap().unwrap();
    events.shutdown().await;
}
