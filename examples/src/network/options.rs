//! [`NetworkControllerOptions`], shared by both Network controllers, and the client-side rate
//! limits a controller should run with.

use std::time::Duration;

/// How a Network controller runs: [`NetworkController`](crate::NetworkController) (on the
/// runtime) and [`SampleController`](crate::SampleController) (hand-written) take the same.
#[derive(Debug, Clone)]
pub struct NetworkControllerOptions {
    /// Watch and reconcile only this namespace; `None` means every namespace.
    pub namespace: Option<String>,
    /// How many worker tasks reconcile keys concurrently (at least one runs).
    pub workers: usize,
    /// The informers' resync period (zero: never). Resyncs are skipped by the handlers, as
    /// the seed explains; they exist here to show that.
    pub resync: Duration,
    /// How many times a failing key is retried with backoff before it is dropped (until its
    /// next change).
    pub max_retries: usize,
}

impl Default for NetworkControllerOptions {
    fn default() -> Self {
        NetworkControllerOptions {
            namespace: None,
            workers: 2,
            resync: Duration::from_secs(30),
            max_retries: 5,
        }
    }
}

/// Client-side rate limits for a controller, kube-controller-manager's defaults
/// (`--kube-api-qps=20`, `--kube-api-burst=30`), applied where `config` leaves them unset.
///
/// client-go's defaults (5 QPS, burst 10) are meant for kubectl-like tools; a controller that
/// also writes status and Events hits them quickly and its reconciles wait on its own limiter.
pub fn apply_controller_rate_limits(config: &mut kclient::rest::Config) {
    if config.qps == 0.0 {
        config.qps = 20.0;
    }
    if config.burst == 0 {
        config.burst = 30;
    }
}
