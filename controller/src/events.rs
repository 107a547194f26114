//! [`ControllerEvents`]: an [`EventRecorder`] for a controller's context, writing core/v1
//! Events to the API server through kclient-tools' broadcaster (client-go's
//! `record.NewBroadcaster` + `StartRecordingToSink` + `NewRecorder`, set up in one call).

use kclient_api::core::v1::EventSource;
use kclient_rest::Client;
use kclient_tools::{ClientEventSink, EventBroadcaster, EventRecorder, EventWatcher};

/// The event pipeline of one controller: put [`recorder`](Self::recorder) in the reconcile
/// context, and call [`shutdown`](Self::shutdown) when the controller has stopped so that the
/// events still queued are written.
///
/// Recording never blocks a reconcile: events are correlated (repeats become a count, floods
/// are aggregated and rate limited, as client-go does) and written by a background task.
///
/// ```no_run
/// # async fn run(client: kclient_rest::Client, cm: kclient_api::core::v1::ConfigMap) {
/// use kclient_controller::ControllerEvents;
/// use kclient_tools::EventType;
///
/// let events = ControllerEvents::new(client, "configmap-mirror");
/// let recorder = events.recorder(); // in the context of the reconcile
/// recorder.event(&cm, EventType::Normal, "Mirrored", "the Secret matches the ConfigMap");
/// // ... after Controller::run returned:
/// events.shutdown().await;
/// # }
/// ```
#[derive(Debug)]
pub struct ControllerEvents {
    broadcaster: EventBroadcaster,
    watcher: EventWatcher,
    recorder: EventRecorder,
}

impl ControllerEvents {
    /// Events from `component` (the `source.component` of each Event, usually the
    /// controller's name), written with `client`.
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime (the writer is a tokio task).
    pub fn new(client: Client, component: &str) -> Self {
        let broadcaster = EventBroadcaster::new();
        let watcher = broadcaster.start_recording_to_sink(ClientEventSink::new(client));
        let recorder = broadcaster.new_recorder(EventSource {
            component: Some(component.into()),
            host: None,
        });
        ControllerEvents {
            broadcaster,
            watcher,
            recorder,
        }
    }

    /// A recorder of this pipeline (cheap to clone).
    pub fn recorder(&self) -> EventRecorder {
        self.recorder.clone()
    }

    /// Stops taking events and waits until the ones queued are written (or given up on, after
    /// client-go's retries).
    pub async fn shutdown(self) {
        self.broadcaster.shutdown();
        self.watcher.wait().await;
    }
}
