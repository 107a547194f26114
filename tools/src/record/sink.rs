//! [`EventSink`], client-go's `record.EventSink`: where a broadcaster writes events, and
//! [`ClientEventSink`], the sink that writes them to the API server (client-go's
//! `typedcorev1.EventSinkImpl`).

use std::future::Future;
use std::pin::Pin;

use kclient_api::core::v1::Event;
use kclient_apimachinery::{CreateOptions, Error, PatchOptions};
use kclient_clientset::{AllNamespaces, Api};
use kclient_rest::Client;
use serde_json::Value;

/// The future an [`EventSink`] (or [`EventsV1Sink`](crate::EventsV1Sink)) operation returns:
/// the server's copy of the event.
pub type SinkFuture<'a, E = Event> = Pin<Box<dyn Future<Output = Result<E, Error>> + Send + 'a>>;

/// Stores events. Each event goes to its own `metadata.namespace`.
pub trait EventSink: Send + Sync + 'static {
    /// Creates `event`, returning the server's copy.
    fn create(&self, event: &Event) -> SinkFuture<'_>;

    /// Applies the strategic merge patch `patch` to the Event object named like `event`,
    /// returning the server's copy.
    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_>;
}

/// Writes core/v1 Events through the API server: with the all-namespaces events client's
/// `create_with_event_namespace` and `patch_with_event_namespace`, as client-go's
/// `EventSinkImpl` writes with `Events("")`. An event without a namespace is refused before
/// sending (and so not retried).
#[derive(Debug, Clone)]
pub struct ClientEventSink {
    events: Api<Event, AllNamespaces>,
}

impl ClientEventSink {
    /// A sink writing with `client`.
    pub fn new(client: Client) -> Self {
        ClientEventSink {
            events: Api::all(client),
        }
    }
}

impl EventSink for ClientEventSink {
    fn create(&self, event: &Event) -> SinkFuture<'_> {
        let event = event.clone();
        Box::pin(async move {
            self.events
                .create_with_event_namespace(&event, &CreateOptions::default())
                .await
        })
    }

    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_> {
        let event = event.clone();
        let patch = patch.clone();
        Box::pin(async move {
            self.events
                .patch_with_event_namespace(&event, &patch, &PatchOptions::default())
                .await
        })
    }
}
