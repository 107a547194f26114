//! The manager, controller-runtime's `manager.Manager`: one object that runs several
//! controllers and other [`Runnable`]s over one shared informer factory, with one leader
//! election for all of them, health and readiness probes, a metrics endpoint and an ordered
//! graceful shutdown.
//!
//! [`Manager::builder`] takes the [`SharedInformerFactory`](kclient_informers::SharedInformerFactory)
//! (by value or as an `Arc` shared with the rest of the program) and the options
//! ([`ManagerBuilder`]): a leader election configuration, the graceful shutdown timeout, the
//! health probe and metrics addresses. Build the controllers from
//! [`Manager::factory`], add them with [`Manager::add_controller`] (or any async function with
//! [`Manager::add`] and [`Runnable::new`]), add probe checks, then [`Manager::run`] until a
//! shutdown token fires.
//!
//! # Runnables and leader election
//!
//! A runnable *needs leader election* unless it says otherwise
//! ([`Runnable::needs_leader_election`]), as in controller-runtime, where controllers and
//! plain runnables go to the leader election group. With an election configured
//! ([`ManagerBuilder::leader_election`]), the manager competes for the lease once its caches
//! have synced and starts those runnables when it wins; without one it starts them at once.
//! The runnables that need no election run on every replica.
//!
//! One election stands for every runnable of a manager, so a controller added to a manager
//! must not have an election of its own: [`Manager::add`] refuses a controller built with
//! [`ControllerBuilder::leader_election`](crate::ControllerBuilder::leader_election)
//! ([`Error::is_leader_election`](crate::Error::is_leader_election)).
//!
//! # Start
//!
//! In controller-runtime's order of runnable groups:
//!
//! 1. the HTTP servers (health probes, metrics): they answer while the caches fill, `/readyz`
//!    failing; with them the runnables that
//!    [`starts_before_caches`](Runnable::starts_before_caches) (webhook servers, which a
//!    conversion webhook's caches need);
//! 2. the caches: the factory (and those of [`ManagerBuilder::with_factory`]) is started and
//!    its informers' sync waited for (then the [`INFORMER_SYNC_CHECK`] readiness check
//!    passes);
//! 3. the runnables that need no leader election;
//! 4. the leader election;
//! 5. once elected (at once without an election), the runnables that need it; then
//!    [`Manager::elected`]'s [`Elected`] resolves.
//!
//! # Stop
//!
//! The manager stops when the shutdown token fires, when a runnable returns an error or
//! panics, or when the lease is lost. Then, all within the graceful shutdown timeout
//! ([`DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT`], 30 s, as controller-runtime's):
//!
//! 1. the leader election runnables are cancelled and waited for (after a lost lease they are
//!    aborted at once instead: another replica may lead already);
//! 2. the elector is cancelled, which releases the lease if the configuration says
//!    `release_on_cancel`, so a successor starts only after this leader's work ended;
//! 3. the other runnables are cancelled and waited for;
//! 4. the caches (the factories' informers) are shut down;
//! 5. the HTTP servers and the runnables started with them stop, last: probes and metrics
//!    answer until the end.
//!
//! What has not stopped when the timeout passes is cancelled at its next `.await`, and
//! [`Manager::run`] fails with [`Error::is_shutdown_timeout`](crate::Error::is_shutdown_timeout),
//! [`Error::still_running`](crate::Error::still_running) naming it. A runnable's error is
//! returned after the shutdown ([`Error::is_runnable`](crate::Error::is_runnable), with the
//! runnable's error as its `source()`); a lost lease as
//! [`Error::is_leader_election_lost`](crate::Error::is_leader_election_lost).
//!
//! # Probes and metrics
//!
//! With [`ManagerBuilder::health_probe_bind_address`], `/healthz` and `/readyz` answer as
//! controller-runtime's `pkg/healthz` does, byte for byte: the aggregated endpoint (`ok`, or
//! one `[+]name ok` / `[-]name failed: reason withheld` line per check, always on failure and
//! with `?verbose`), `?exclude=name` (repeatable), each check at `/readyz/<name>` with its
//! reason, and a `ping` check standing in when an endpoint has none. Checks are
//! [`Checker`]s added with [`Manager::add_healthz_check`] and [`Manager::add_readyz_check`];
//! the manager adds [`INFORMER_SYNC_CHECK`] to readiness and, with an election, the lease's
//! [`HealthzAdaptor`](kclient_tools::HealthzAdaptor) as the `leaderElection` liveness check.
//! With [`ManagerBuilder::metrics_bind_address`], `/metrics` serves what a
//! [`MetricsRenderer`] renders (the facade's `kclient::metrics` registry, or any other).
//!
//! # Where this differs from controller-runtime, and why
//!
//! - **Stop order.** controller-runtime stops the other runnables first, then the leader
//!   runnables, caches, webhooks and servers, and cancels the election last, after all of
//!   them. Here the leader runnables stop first and the lease is released right after them:
//!   the lease guards only the leader runnables, so a successor can take over as soon as they
//!   have stopped instead of after the whole process wound down. The rest keeps the order.
//! - **Lost lease.** controller-runtime skips the graceful shutdown (its process exits). Here
//!   the leader runnables are aborted at once, but the other runnables, caches and servers
//!   still stop gracefully: `run` returns to the program, which decides to exit. A lease
//!   lost while a requested stop drains the leader runnables cuts their grace short the same
//!   way (logged as an error; `run` still answers for the stop that was asked for).
//! - **Panics** in a runnable are errors that stop the manager, as returned errors do (in Go
//!   a panicking goroutine ends the process).
//! - **No `Add` after start.** [`Manager::run`] takes the manager, so everything is added
//!   before; controller-runtime also starts runnables added later.
//! - **Addresses** are bound by [`ManagerBuilder::build`] (an address in use fails there, as
//!   controller-runtime's `New`); the metrics endpoint is off unless an address is given
//!   (controller-runtime serves `:8080` by default), and serves only `/metrics`, without
//!   TLS, authentication or extra handlers. Both probe endpoints are served whenever the probe
//!   address is set (controller-runtime serves one only once a check was added to it).
//! - **Built-in checks.** The `informer-sync` readiness check (kube-apiserver's name) and the
//!   `leaderElection` liveness check are added by the manager; controller-runtime leaves both
//!   to the program.
//! - **Webhook servers are runnables.** controller-runtime's manager owns a webhook server
//!   and starts it in a group of its own, before the caches. Here kclient-webhook's server is
//!   added as a runnable marked [`starts_before_caches`](Runnable::starts_before_caches),
//!   which puts it in the HTTP servers' group: started before the caches, stopped last. There
//!   is no warm-up group (controller-runtime's `EnableWarmup`): a kclient controller's
//!   informers are the factory's, synced before any runnable starts.
//! - **Timeouts.** `Duration::ZERO` waits for nothing (controller-runtime's 0) and
//!   `Duration::MAX` waits for ever (its negative value). The lease's release is given the
//!   election's renew deadline even when the shutdown timeout has passed, so a successor is
//!   not kept waiting for the lease duration.
//!
//! # Example
//!
//! Two controllers under one manager, elected together, with probes;
//! `examples/manager.rs` is the runnable program (`cargo run -p kclient-controller --example
//! manager -- --namespace default --demo`).
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use kclient_api::coordination::v1::Lease;
//! use kclient_api::core::v1::{ConfigMap, Secret};
//! use kclient_cache::CancellationToken;
//! use kclient_clientset::Api;
//! use kclient_controller::manager::{Checker, Manager, Runnable};
//! use kclient_controller::{Action, ControllerBuilder};
//! use kclient_informers::SharedInformerFactory;
//! use kclient_rest::Client;
//! use kclient_tools::{LeaderCallbacks, LeaderElectionConfig, LeaseLock};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default()?;
//! let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
//! let election = LeaderElectionConfig::new(
//!     LeaseLock::new(leases, "my-operator", std::env::var("POD_NAME")?),
//!     LeaderCallbacks::new(), // the manager sets its own
//! )
//! .release_on_cancel(true);
//! let factory = SharedInformerFactory::new(client, Duration::ZERO);
//! let mut manager = Manager::builder(factory)
//!     .leader_election(election)
//!     .health_probe_bind_address(SocketAddr::from(([0, 0, 0, 0], 8081)))
//!     .build()?;
//!
//! let config_maps = ControllerBuilder::new("configmaps", manager.factory())
//!     .for_::<ConfigMap>()
//!     .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async {
//!         Ok::<_, kclient_apimachinery::Error>(Action::done())
//!     });
//! manager.add_controller(config_maps, Arc::new(()))?;
//! let secrets = ControllerBuilder::new("secrets", manager.factory())
//!     .for_::<Secret>()
//!     .reconcile(|_s: Arc<Secret>, _ctx: Arc<()>| async {
//!         Ok::<_, kclient_apimachinery::Error>(Action::done())
//!     });
//! manager.add_controller(secrets, Arc::new(()))?;
//! manager.add(
//!     Runnable::new("on-every-replica", |stop| async move {
//!         stop.cancelled().await;
//!         Ok::<_, std::io::Error>(())
//!     })
//!     .needs_leader_election(false),
//! )?;
//! manager.add_healthz_check("ping", Checker::ping());
//!
//! let shutdown = CancellationToken::new(); // cancel it on SIGTERM (kclient::signal)
//! manager.run(shutdown).await?;
//! # Ok(()) }
//! ```

mod builder;
mod controller_manager;
mod elected;
mod election;
mod group;
mod healthz;
mod metrics;
mod runnable;
mod server;

pub use builder::{DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use controller_manager::{INFORMER_SYNC_CHECK, Manager};
pub use elected::Elected;
pub use election::DEFAULT_LEADER_HEALTHZ_TIMEOUT;
pub use healthz::Checker;
pub use metrics::{MetricsRenderer, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE};
pub use runnable::Runnable;
