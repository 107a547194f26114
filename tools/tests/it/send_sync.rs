//! Compile-time checks that the public types can cross threads and tasks as intended.

use kclient_tools::{
    BroadcasterOptions, ClientEventSink, CorrelatorOptions, Error, EventBroadcaster,
    EventCorrelator, EventRecorder, EventWatcher, HealthzAdaptor, LeaderCallbacks,
    LeaderElectionConfig, LeaderElector, LeaseLock,
};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

#[test]
fn public_types_are_send_and_sync() {
    send_sync::<LeaderElector>();
    send_sync::<LeaderElectionConfig>();
    send_sync::<LeaderCallbacks>();
    send_sync::<LeaseLock>();
    send_sync::<HealthzAdaptor>();
    send_sync::<EventBroadcaster>();
    send_sync::<EventRecorder>();
    send_sync::<EventWatcher>();
    send_sync::<ClientEventSink>();
    send_sync::<kclient_tools::EventsV1Broadcaster>();
    send_sync::<kclient_tools::EventsV1Recorder>();
    send_sync::<kclient_tools::ClientEventsV1Sink>();
    send_sync::<BroadcasterOptions>();
    send_sync::<CorrelatorOptions>();
    send_sync::<Error>();
    send::<EventCorrelator>();
    send::<kclient_tools::watch::RetryWatcher<kclient_api::core::v1::ConfigMap>>();
    send_sync::<kclient_tools::watch::UntilError>();
    send_sync::<kclient_tools::watch::Stop>();
}

/// The until functions' futures can be spawned on a multi-threaded runtime.
#[allow(dead_code)]
fn until_futures_are_send(
    lw: std::sync::Arc<dyn kclient_cache::ListerWatcher<kclient_api::core::v1::ConfigMap>>,
) {
    fn spawnable<F: std::future::Future + Send + 'static>(_: F) {}
    spawnable(kclient_tools::watch::until_with_sync(
        std::time::Duration::from_secs(1),
        lw.clone(),
        None,
        Vec::new(),
    ));
    spawnable(kclient_tools::watch::list_watch_until(
        std::time::Duration::from_secs(1),
        lw,
        Vec::new(),
    ));
}

/// `LeaderElector::run` can be spawned on a multi-threaded runtime.
#[allow(dead_code)]
fn run_future_is_send(elector: std::sync::Arc<LeaderElector>) {
    fn spawnable<F: std::future::Future + Send + 'static>(_: F) {}
    spawnable(async move {
        elector
            .run(tokio_util::sync::CancellationToken::new())
            .await
    });
}
