//! [`Implementation`] and [`AnyNetworkController`]: one of the two Network controllers, chosen
//! at run time, so that the demo and the integration tests run either through one interface.

use kclient::cache::CancellationToken;
use kclient::rest::Client;
use tokio::sync::broadcast;

use crate::error::Error;
use crate::network::controller::NetworkController;
use crate::network::options::NetworkControllerOptions;
use crate::network::sample_controller::SampleController;
use crate::network::sync_event::SyncEvent;

/// Which Network controller to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Implementation {
    /// [`NetworkController`], on kclient's controller runtime (the flagship).
    #[default]
    Runtime,
    /// [`SampleController`], written by hand on client-go's parts.
    HandWritten,
}

impl Implementation {
    /// Both, the flagship first.
    pub const ALL: [Implementation; 2] = [Implementation::Runtime, Implementation::HandWritten];
}

/// A [`NetworkController`] or a [`SampleController`]; cheap to clone.
#[derive(Debug, Clone)]
pub enum AnyNetworkController {
    /// The runtime version.
    Runtime(NetworkController),
    /// The hand-written version.
    HandWritten(SampleController),
}

impl AnyNetworkController {
    /// The controller `implementation` with these options; nothing runs until
    /// [`run`](Self::run).
    pub fn new(
        implementation: Implementation,
        client: Client,
        options: NetworkControllerOptions,
    ) -> Result<Self, Error> {
        Ok(match implementation {
            Implementation::Runtime => {
                AnyNetworkController::Runtime(NetworkController::new(client, options)?)
            }
            Implementation::HandWritten => {
                AnyNetworkController::HandWritten(SampleController::new(client, options)?)
            }
        })
    }

    /// Runs it until `shutdown` is cancelled (see each controller's `run`).
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), Error> {
        match self {
            AnyNetworkController::Runtime(c) => c.run(shutdown).await,
            AnyNetworkController::HandWritten(c) => c.run(shutdown).await,
        }
    }

    /// Whether its informer caches have synced.
    pub fn has_synced(&self) -> bool {
        match self {
            AnyNetworkController::Runtime(c) => c.has_synced(),
            AnyNetworkController::HandWritten(c) => c.has_synced(),
        }
    }

    /// A receiver of every reconcile's [`SyncEvent`] from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<SyncEvent> {
        match self {
            AnyNetworkController::Runtime(c) => c.subscribe(),
            AnyNetworkController::HandWritten(c) => c.subscribe(),
        }
    }

    /// Where the flagship's manager serves `/healthz` and `/readyz` while running, if it
    /// was asked to ([`NetworkController::with_health_probes`]); the hand-written controller
    /// has no manager.
    pub fn health_probe_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            AnyNetworkController::Runtime(c) => c.health_probe_addr(),
            AnyNetworkController::HandWritten(_) => None,
        }
    }

    /// Where the flagship's manager serves `/metrics` while running, if it was asked to
    /// ([`NetworkController::with_metrics`]).
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            AnyNetworkController::Runtime(c) => c.metrics_addr(),
            AnyNetworkController::HandWritten(_) => None,
        }
    }

    /// How many times `key` has been requeued with backoff since its last success.
    pub fn num_requeues(&self, key: &str) -> usize {
        match self {
            AnyNetworkController::Runtime(c) => c.num_requeues(key),
            AnyNetworkController::HandWritten(c) => c.num_requeues(key),
        }
    }
}
