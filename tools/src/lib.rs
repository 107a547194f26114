//! Controller tools, the counterpart of client-go's `tools/leaderelection`, `tools/record`,
//! `tools/watch` and `util/retry`.
//!
//! - **Leader election**: [`LeaderElector`] competes for a [`LeaseLock`] (a
//!   `coordination.k8s.io/v1` Lease) and runs [`LeaderCallbacks`] as leadership changes; a
//!   [`HealthzAdaptor`] reports a leader whose renewals are stuck to a `/healthz` endpoint.
//! - **Events**: an [`EventRecorder`] from an [`EventBroadcaster`] records core/v1 Events about
//!   any object; the broadcaster's sink correlates them (spam filter, aggregation, counting)
//!   and writes them with retries.
//! - **Events, `events.k8s.io/v1`**: [`EventsV1Broadcaster`] and [`EventsV1Recorder`]
//!   (client-go's `tools/events`), where repeats become a series on one Event.
//! - **Retry**: [`retry_on_conflict`] and [`on_error`] re-run an operation with a [`Backoff`].
//! - **Wait** ([`wait`]): apimachinery's `util/wait` polls and loops:
//!   [`poll_until_timeout`](wait::poll_until_timeout), [`poll_until_cancelled`](wait::poll_until_cancelled),
//!   [`exponential_backoff`](wait::exponential_backoff), [`until`](wait::until) and
//!   [`jitter_until`](wait::jitter_until).
//! - **Watch** ([`watch`]): [`RetryWatcher`](watch::RetryWatcher), a watch that resumes through
//!   reconnects, and [`until_with_sync`](watch::until_with_sync), [`until`](watch::until) and
//!   [`list_watch_until`](watch::list_watch_until), which wait until conditions hold over a
//!   resource's events.
//! - **Rollout** ([`rollout`]): [`wait_for_deployment_rollout`](rollout::wait_for_deployment_rollout)
//!   waits until a Deployment is rolled out and available, as `kubectl rollout status` does.
//!
//! Depends on `rest`, `clientset`, `cache`, `api` and `apimachinery`; nothing below depends on
//! it.
//!
//! ```no_run
//! use std::sync::Arc;
//! use kclient_api::core::v1::EventSource;
//! use kclient_clientset::Clientset;
//! use kclient_tools::{
//!     ClientEventSink, EventBroadcaster, LeaderCallbacks, LeaderElectionConfig, LeaderElector,
//!     LeaseLock,
//! };
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let clientset = Clientset::try_default()?;
//! let broadcaster = EventBroadcaster::new();
//! broadcaster.start_recording_to_sink(ClientEventSink::new(clientset.rest_client().clone()));
//! let recorder = broadcaster.new_recorder(EventSource {
//!     component: Some("my-controller".into()),
//!     host: None,
//! });
//!
//! let identity = std::env::var("POD_NAME")?;
//! let lock = LeaseLock::new(clientset.coordination_v1().leases("default"), "my-controller", identity)
//!     .with_event_recorder(recorder);
//! let callbacks = LeaderCallbacks::new()
//!     .on_started_leading(|leading| async move {
//!         // Run the controller until `leading` is cancelled.
//!         leading.cancelled().await;
//!     })
//!     .on_stopped_leading(|| eprintln!("leadership lost"));
//! let mut config = LeaderElectionConfig::new(lock, callbacks);
//! config.release_on_cancel = true;
//! let elector = Arc::new(LeaderElector::new(config)?);
//! elector.run(CancellationToken::new()).await;
//! # Ok(()) }
//! ```

mod error;
mod event_name;
mod event_write;
mod events;
mod leaderelection;
mod record;
mod retry;
pub mod rollout;
pub mod wait;
pub mod watch;

pub use error::Error;
pub use events::{
    ClientEventsV1Sink, EventsV1Broadcaster, EventsV1Options, EventsV1Recorder, EventsV1Sink,
};
pub use leaderelection::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, HealthzAdaptor,
    JITTER_FACTOR, LeaderCallbacks, LeaderElectionConfig, LeaderElectionRecord, LeaderElector,
    LeaseLock, LockFuture, ResourceLock,
};
pub use record::{
    BroadcasterOptions, ClientEventSink, Clock, Correlation, CorrelatorOptions, EventBroadcaster,
    EventCorrelator, EventRecorder, EventSink, EventType, EventWatcher, IntoObjectReference,
    SinkFuture, object_reference,
};
pub use retry::{Backoff, DEFAULT_BACKOFF, DEFAULT_RETRY, jitter, on_error, retry_on_conflict};
