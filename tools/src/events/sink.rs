//! [`EventsV1Sink`], client-go's `events.EventSink`, and [`ClientEventsV1Sink`], which writes
//! `events.k8s.io/v1` Events through the API server (client-go's `events.EventSinkImpl`).

use kclient_api::events::v1::Event;
use kclient_apimachinery::{CreateOptions, Error, Object, PatchOptions};
use kclient_clientset::{Api, Patch};
use kclient_rest::Client;
use serde_json::Value;

use crate::record::SinkFuture;

/// Stores `events.k8s.io/v1` Events, each in its own `metadata.namespace`.
pub trait EventsV1Sink: Send + Sync + 'static {
    /// Creates `event`, returning the server's copy.
    fn create(&self, event: &Event) -> SinkFuture<'_, Event>;

    /// Applies the strategic merge patch `patch` to the Event named like `event`.
    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_, Event>;
}

/// Writes `events.k8s.io/v1` Events through the API server.
#[derive(Debug, Clone)]
pub struct ClientEventsV1Sink {
    client: Client,
}

impl ClientEventsV1Sink {
    /// A sink writing with `client`.
    pub fn new(client: Client) -> Self {
        ClientEventsV1Sink { client }
    }

    fn api(&self, event: &Event) -> Result<Api<Event>, Error> {
        if event.namespace().is_empty() {
            return Err(Error::invalid_request(
                "can't write an event with empty namespace",
            ));
        }
        Ok(Api::namespaced(self.client.clone(), event.namespace()))
    }
}

impl EventsV1Sink for ClientEventsV1Sink {
    fn create(&self, event: &Event) -> SinkFuture<'_, Event> {
        let api = self.api(event);
        let event = event.clone();
        Box::pin(async move { api?.create(&event, &CreateOptions::default()).await })
    }

    fn patch(&self, event: &Event, patch: &Value) -> SinkFuture<'_, Event> {
        let api = self.api(event);
        let name = event.name().to_string();
        let patch = Patch::StrategicMerge(patch.clone());
        Box::pin(async move { api?.patch(&name, &patch, &PatchOptions::default()).await })
    }
}
