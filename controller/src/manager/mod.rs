//! The manager, controller-runtime's `manager.Manager`: one object that runs several
//! controllers and other [`Runnable`]s over one shared informer factory, with one leader
//! election for all of them, health and readiness probes, a metrics endpoint and an ordered
//! graceful shutdown.

mod builder;
mod controller_manager;
mod election;
mod group;
mod healthz;
mod metrics;
mod runnable;
mod server;

pub use builder::{DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use controller_manager::{INFORMER_SYNC_CHECK, Manager};
pub use election::DEFAULT_LEADER_HEALTHZ_TIMEOUT;
pub use healthz::Checker;
pub use metrics::{MetricsRenderer, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE};
pub use runnable::Runnable;
