//! Runnable kclient programs, one per scenario, under `examples/src/bin/` (see
//! `examples/README.md`), and the library half of the flagship, the Network controller, which
//! the `network-controller` and `sample-controller` binaries and the integration tests share.
//!
//! The controller reconciles each `Network` custom resource of the seed article into a
//! ConfigMap it owns and reports in the Network's status subresource. It exists twice:
//! [`NetworkController`], the flagship, on kclient's controller runtime (`kclient::controller`)
//! under its manager (leader election, probes, metrics), and [`SampleController`], written by
//! hand the way client-go's sample-controller is (informers, handlers that enqueue
//! `namespace/name` keys, a rate-limited workqueue, workers).
//! Both take [`NetworkControllerOptions`] and report [`SyncEvent`]s.
//!
//! ```no_run
//! use std::time::Duration;
//! use kclient::kubernetes::Clientset;
//! use kclient_examples::{NetworkController, NetworkControllerOptions, install_crd};
//! use kclient::rest::{Client, Config};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // SIGINT or SIGTERM stops gracefully; a second one exits at once.
//! let shutdown = kclient::signal::shutdown_on_signal();
//! let client = Client::new(Config::infer()?)?;
//! install_crd(&Clientset::new(client.clone()), Duration::from_secs(30)).await?;
//! let controller = NetworkController::new(client, NetworkControllerOptions::default())?;
//! controller.run(shutdown).await?;
//! # Ok(()) }
//! ```

mod api_resources;
mod container;
mod error;
mod explain;
mod network;
pub mod stdout;
mod tabwriter;
mod wait;

pub use api_resources::{
    API_RESOURCES_USAGE, ApiResourcesOptions, OutputFormat, SortBy, render_resources,
    select_resources,
};

pub use container::{DEFAULT_CONTAINER_ANNOTATION, default_container};
pub use error::Error;
pub use explain::{match_group_resource, render_explain, render_explain_header, wrap_words};
pub use network::command_line::{ControllerArgs, controller_usage, parse_controller_args};
pub use network::config_map::{
    CONFIG_MAP_PREFIX, CONTROLLER_NAME, MANAGED_BY_LABEL, config_map_name, controlling_network,
    desired_config_map, drift_patch, is_controlled_by, network_name_of,
};
pub use network::controller::{NetworkController, RECONCILE_TIMEOUT, metrics_registry};
pub use network::crd::{CrdInstall, crd_name, install_crd, network_crd};
pub use network::demo::{DemoOptions, run_demo};
pub use network::http_get::{HttpAnswer, http_get};
pub use network::implementation::{AnyNetworkController, Implementation};
pub use network::options::{NetworkControllerOptions, apply_controller_rate_limits};
pub use network::sample_controller::SampleController;
pub use network::sync_event::{SyncEvent, SyncOutcome, error_chain};
pub use network::types::{Network, NetworkPhase, NetworkSpec, NetworkStatus, READY_CONDITION};
pub use network::validation::{Cidr, InvalidSpec, validate_spec};
pub use tabwriter::{KUBECTL_MIN_WIDTH, KUBECTL_PADDING, TabWriter};
pub use wait::wait_out_namespace_deletion;
