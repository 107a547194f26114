//! kclient: client-go's architecture in Rust, behind one dependency.
//!
//! This crate is a facade. It re-exports kclient's crates under the names client-go users
//! know, chosen by cargo features, and adds a [`prelude`] and the `signal` helper (feature `client`) a
//! controller needs. The crates stay usable alone (`kclient-rest`, `kclient-cache`, ...); use
//! them directly to depend on less.
//!
//! | kclient                  | client-go                               | crate                  |
//! |--------------------------|-----------------------------------------|------------------------|
//! | [`apimachinery`]         | `k8s.io/apimachinery`                   | `kclient-apimachinery` |
//! | [`api`]                  | `k8s.io/api`                            | `kclient-api`          |
//! | `rest`                   | `rest`, `transport`, `tools/clientcmd`  | `kclient-rest`         |
//! | `kubernetes`             | `kubernetes` (the typed clientset)      | `kclient-clientset`    |
//! | `dynamic`                | `dynamic`, `metadata`                   | `kclient-dynamic`      |
//! | `discovery`              | `discovery`, `restmapper`               | `kclient-discovery`    |
//! | `flowcontrol`            | `util/flowcontrol`, `wait.Backoff`      | `kclient-flowcontrol`  |
//! | `cache`                  | `tools/cache`                           | `kclient-cache`        |
//! | `informers`              | `informers`, `dynamic/dynamicinformer`  | `kclient-informers`    |
//! | `workqueue`              | `util/workqueue`                        | `kclient-workqueue`    |
//! | `tools`                  | `tools/leaderelection`, `tools/record`, `tools/events`, `util/retry`, `util/wait` | `kclient-tools` |
//! | `controller`             | controller-runtime's `builder`, `reconcile`, `predicate`, `controllerutil` (finalizers, owner references, create-or-update), `manager` (several controllers, one election, probes, metrics endpoint: `controller::manager`) | `kclient-controller` |
//! | `webhook`                | controller-runtime's `webhook`, `webhook/admission`, `webhook/conversion` (admission and conversion webhooks and their server) | `kclient-webhook` |
//! | `signal`                 | `sample-controller/pkg/signals`, controller-runtime's `SetupSignalHandler` | this crate |
//! | `metrics`                | `tools/metrics` registered with Prometheus, as a Kubernetes component does | this crate |
//! | `testing`                | `testing`, `kubernetes/fake`            | `kclient-testing`      |
//! | `envtest`                | controller-runtime's `envtest`          | `kclient-testenv`      |
//!
//! # Cargo features
//!
//! Features choose the layers and the API groups that get compiled. The default is
//! `runtime`, `core` and `rustls-ring`: typed clients, informers and workqueues for core/v1
//! (Pods, ConfigMaps, Secrets, Services, ...).
//!
//! | Feature      | Turns on                                                                     |
//! |--------------|------------------------------------------------------------------------------|
//! | `client`     | `rest`, `kubernetes`, `dynamic`, `discovery`, `flowcontrol`, `signal`        |
//! | `runtime`    | `client` + `cache`, `informers`, `workqueue`                                 |
//! | `registry`   | `runtime` + the informer registry of the enabled groups' types, so that `SharedInformerFactory::for_resource` of a built-in resource shares the typed informer; costly to compile, not in `default` |
//! | `tools`      | `runtime` + `tools` and `controller` (and the `coordination`, `core` and `events` groups they need) |
//! | `webhook`    | `webhook`: admission and conversion webhooks, the review types, typed validating and defaulting handlers, CRD converters and their HTTPS server (and the `authentication` group) |
//! | `prometheus` | `runtime` + `metrics`: the request (`rest_client_*`), reflector and workqueue metrics in one `prometheus-client` registry |
//! | `protobuf`   | protobuf on the wire for built-in kinds, as client-go's clientset and informers (patches, custom resources, the dynamic client and discovery stay JSON); not in `default` |
//! | `apply`      | server-side apply configurations of the enabled groups in `api::applyconfigurations` (client-go's `applyconfigurations`), which `Api::apply` takes; about triples `kclient-api`'s build time, not in `default` |
//! | `schema`     | `client` + CRD schemas from Rust types: `kubernetes::structural_schema` and `CustomResource::crd_from_type` turn a `#[derive(JsonSchema)]` (schemars, re-exported as `kubernetes::schemars`: give the derive `#[schemars(crate = "kclient::kubernetes::schemars")]` or depend on schemars yourself) into the structural schema the API server requires, as controller-gen does for Go types, and gives `api`'s types their schemas (a spec can embed a `PodTemplateSpec`); not in `default` |
//! | `testing`    | `client` + `testing`: client-go's `kubernetes/fake`, an in-memory API server under the real clients (compiles every API group) |
//! | `testing-cel` | `testing`, whose fake also evaluates custom resources' CEL rules (`x-kubernetes-validations`; the `cel` crate) |
//! | `envtest`    | `client` + `envtest`: controller-runtime's envtest, a real local kube-apiserver started from tests |
//! | `core`, `apps`, `batch`, ... | one API group each, named after its Go package: its types in `api::<group>` and, with `client`, its clients (`Clientset::apps_v1`) |
//! | `all`        | every API group (their GA versions)                                          |
//! | `all-beta`, `all-alpha` | every beta or alpha group version and, with `client`, its clients; opt-in (one version at a time through kclient-api's features, such as `resource-v1beta2`) |
//! | `rustls-ring`, `rustls-aws-lc` | the TLS crypto provider: ring (in `default`) or aws-lc-rs; with `default-features = false` choose one, or install a rustls default provider before building a client |
//!
//! The groups are `admissionregistration`, `apiextensions`, `apiregistration`, `apps`,
//! `authentication`, `authorization`, `autoscaling`, `batch`, `certificates`,
//! `coordination`, `core`, `discovery`, `events`, `flowcontrol`, `networking`, `node`,
//! `policy`, `rbac`, `resource`, `scheduling` and `storage`. Some groups' types refer to
//! core/v1 types and turn on `core` themselves (`apps`, `batch`, ...). A typed subresource
//! needs the group of what it sends: `get_scale` needs `autoscaling`, `evict` needs `policy`,
//! `create_token` needs `authentication`, and `CustomResource::crd` needs `apiextensions`.
//! The [README](https://github.com/kclient-rs/kclient/tree/main/kclient#build-time) has
//! the build times and binary sizes of `core` against `all`.
//!
//! ```toml
//! [dependencies]
//! kclient = "0.2"                                                      # runtime + core
//! kclient = { version = "0.2", features = ["apps", "batch"] }          # ... + apps/v1, batch/v1
//! kclient = { version = "0.2", default-features = false, features = ["client", "core"] }
//! kclient = { version = "0.2", features = ["tools", "all"] }           # everything
//! ```
//!
//! # Example
//!
//! List the Pods of a namespace (features `client` and `core`):
//!
//! ```no_run
//! # #[cfg(all(feature = "client", feature = "core"))]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kclient::prelude::*;
//!
//! let clientset = Clientset::try_default()?;
//! let pods = clientset.core_v1().pods("default").list(&ListOptions::default()).await?;
//! for pod in &pods.items {
//!     println!("{}", pod.name());
//! }
//! # Ok(()) }
//! ```
//!
//! A controller's skeleton (features `runtime` and `core`): an informer and its lister, a
//! rate-limited workqueue fed by the event handlers, a worker, and shutdown on Ctrl-C or
//! SIGTERM.
//!
//! ```no_run
//! # #[cfg(all(feature = "runtime", feature = "core"))]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use kclient::api::core::v1::ConfigMap;
//! use kclient::prelude::*;
//!
//! let shutdown = kclient::signal::shutdown_on_signal();
//! let client = Client::try_default()?;
//! let factory = SharedInformerFactory::new(client, Duration::ZERO);
//! let informer = factory.informer::<ConfigMap>();
//! let lister = informer.lister();
//!
//! let queue = Arc::new(RateLimitingQueue::new(default_controller_rate_limiter::<String>()));
//! let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
//! informer.add_event_handler(
//!     ResourceEventHandlerFuncs::new()
//!         .add_func(move |cm: &Arc<ConfigMap>, _initial| on_add.add(meta_namespace_key(cm)))
//!         .update_func(move |_old: &Arc<ConfigMap>, cm: &Arc<ConfigMap>| {
//!             on_update.add(meta_namespace_key(cm))
//!         })
//!         .delete_func(move |deleted: DeletedObject<ConfigMap>| on_delete.add(deleted.key())),
//! )?;
//! factory.start();
//! // A signal while the caches sync (a server that cannot be reached) stops the wait too.
//! let synced = tokio::select! {
//!     synced = factory.wait_for_cache_sync_all() => synced,
//!     () = shutdown.cancelled() => false,
//! };
//! if !synced {
//!     factory.shutdown().await;
//!     return Err("the caches did not sync".into());
//! }
//!
//! let worker_queue = queue.clone();
//! let worker = tokio::spawn(async move {
//!     while let Some(key) = worker_queue.get().await {
//!         let Ok((namespace, name)) = split_meta_namespace_key(&key) else {
//!             // A key no handler makes: nothing to retry.
//!             worker_queue.forget(&key);
//!             worker_queue.done(&key);
//!             continue;
//!         };
//!         match lister.namespace(namespace.unwrap_or_default()).get(name) {
//!             Ok(cm) => println!("reconcile {key}: {} entries", cm.data.as_ref().map_or(0, |d| d.len())),
//!             Err(e) if e.is_not_found() => println!("{key} is gone"),
//!             Err(e) => {
//!                 // Retried later, with the rate limiter's backoff; every `get` needs its `done`.
//!                 eprintln!("{key}: {e}");
//!                 worker_queue.add_rate_limited(key.clone());
//!                 worker_queue.done(&key);
//!                 continue;
//!             }
//!         }
//!         worker_queue.forget(&key);
//!         worker_queue.done(&key);
//!     }
//! });
//!
//! shutdown.cancelled().await;
//! queue.shut_down();
//! factory.shutdown().await;
//! worker.await?;
//! # Ok(()) }
//! ```

//!
//! # Errors
//!
//! Every crate keeps its own opaque error with `is_*()` checks, and each converts into
//! [`Error`] (the API error, client-go's `StatusError` plus transport and decode failures), as
//! do the narrower errors (a quantity or JSON that does not parse, a rollout or finalizer that
//! failed, an apply configuration that cannot be extracted), so `?` works across layers in a
//! function returning `Result<_, kclient::Error>`:
//! - errors that wrap a failed request (discovery's, a wait's `UntilError::Watch`) become that
//!   request's error and keep its answers (`is_not_found()`, `is_gone()`, ...);
//! - anything else (a kubeconfig's `ConfigError`, a cache index look-up, a RESTMapper miss, a
//!   bad key or selector, a controller that cannot run) becomes [`Error::other`], for which
//!   [`Error::is_other`] is true and [`Error::downcast_ref`] gives the original back.
//!
//! ```
//! # #[cfg(all(feature = "runtime", feature = "core"))]
//! # fn main() {
//! use kclient::api::core::v1::ConfigMap;
//! use kclient::cache::{Indexer, Indexers};
//!
//! fn owners(indexer: &Indexer<ConfigMap>) -> Result<usize, kclient::Error> {
//!     Ok(indexer.by_index("by-owner", "network-a")?.len())
//! }
//!
//! let err = owners(&Indexer::new(Indexers::default())).unwrap_err();
//! let cause = err.downcast_ref::<kclient::cache::Error>().unwrap();
//! assert!(cause.is_index_not_found());
//! # }
//! # #[cfg(not(all(feature = "runtime", feature = "core")))]
//! # fn main() {}
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "client")]
pub mod signal;

pub mod prelude;

#[cfg(feature = "prometheus")]
pub mod metrics;

/// client-go's `k8s.io/apimachinery`: the [`Object`] and [`Resource`] traits every layer
/// codes against, the API [`Error`], options, selectors, watch events, `meta/v1` types,
/// `Unstructured` and the patch algorithms (the `kclient-apimachinery` crate).
pub use kclient_apimachinery as apimachinery;

/// client-go's `k8s.io/api`: the generated Kubernetes API types, one module per enabled group
/// feature (`api::core::v1::Pod`, `api::apps::v1::Deployment`; the `kclient-api` crate).
pub use kclient_api as api;

/// client-go's `rest`, `transport` and `tools/clientcmd`: [`Config`] (kubeconfig, in-cluster),
/// authentication, TLS, the REST [`Client`], requests and watch streams (the `kclient-rest`
/// crate). Feature `client`.
#[cfg(feature = "client")]
pub use kclient_rest as rest;

/// client-go's `kubernetes` package: the typed [`Clientset`] (`core_v1().pods("ns")`), the
/// generic typed client [`Api`], patches, subresources and custom resources (the
/// `kclient-clientset` crate). Feature `client`.
///
/// With feature `schema`, `kubernetes::structural_schema::<T>()` and
/// `CustomResource::crd_from_type()` make a CRD's schema from a `#[derive(JsonSchema)]`.
/// schemars' derive writes paths into `::schemars`, which a program depending only on
/// `kclient` does not have: give each derive
/// `#[schemars(crate = "kclient::kubernetes::schemars")]`, as below, or add `schemars = "1"`
/// to your own dependencies.
///
/// ```
/// # #[cfg(feature = "schema")]
/// # mod with_schema {
/// use kclient::apimachinery::meta::v1::ObjectMeta;
/// use kclient::kubernetes::schemars::JsonSchema;
/// use kclient::kubernetes::{custom_resource, structural_schema};
/// use serde::{Deserialize, Serialize};
///
/// /// A backup of a database.
/// #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[schemars(crate = "kclient::kubernetes::schemars")]
/// struct Backup {
///     /// Standard object metadata.
///     metadata: ObjectMeta,
///     spec: BackupSpec,
/// }
///
/// #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[schemars(crate = "kclient::kubernetes::schemars")]
/// struct BackupSpec {
///     /// How many days a backup is kept.
///     days: u32,
/// }
///
/// custom_resource!(Backup {
///     group: "example.com",
///     version: "v1",
///     kind: "Backup",
///     plural: "backups",
///     singular: "backup",
///     scope: Namespaced,
/// });
///
/// pub fn check() {
///     let schema = structural_schema::<Backup>().unwrap();
///     assert_eq!(schema["properties"]["spec"]["properties"]["days"]["minimum"], 0);
///     // The root's metadata is only `type: object`, whatever its doc comment says.
///     assert_eq!(schema["properties"]["metadata"], serde_json::json!({"type": "object"}));
/// }
/// # }
/// # #[cfg(feature = "schema")]
/// # with_schema::check();
/// ```
#[cfg(feature = "client")]
pub use kclient_clientset as kubernetes;

/// client-go's `dynamic` and `metadata` packages: clients for any resource as
/// `Unstructured` or as object metadata only (the `kclient-dynamic` crate). Feature `client`.
#[cfg(feature = "client")]
pub use kclient_dynamic as dynamic;

/// client-go's `discovery` and `restmapper`: what the server serves, cached in memory or on
/// disk, and the mapping from kinds to resources (the `kclient-discovery` crate). Feature
/// `client`.
#[cfg(feature = "client")]
pub use kclient_discovery as discovery;

/// client-go's `util/flowcontrol` and `wait.Backoff`: the token bucket under every rate
/// limiter and the exponential backoff under every retry (the `kclient-flowcontrol` crate).
/// Feature `client` (the `flowcontrol` feature is the `flowcontrol.apiserver.k8s.io` API
/// group, as client-go's package and that group share the name too).
#[cfg(feature = "client")]
pub use kclient_flowcontrol as flowcontrol;

/// client-go's `tools/cache`: Reflector, DeltaFIFO, Indexer, SharedIndexInformer, Listers and
/// event handlers (the `kclient-cache` crate). Feature `runtime`.
#[cfg(feature = "runtime")]
pub use kclient_cache as cache;

/// client-go's `informers`: the [`SharedInformerFactory`] of typed, dynamic and metadata-only
/// informers (the `kclient-informers` crate). Feature `runtime`.
#[cfg(feature = "runtime")]
pub use kclient_informers as informers;

/// client-go's `util/workqueue`: the fair, stingy queue, the delaying queue, the
/// [`RateLimitingQueue`] and its rate limiters (the `kclient-workqueue` crate). Feature
/// `runtime`.
#[cfg(feature = "runtime")]
pub use kclient_workqueue as workqueue;

/// client-go's `tools/leaderelection`, `tools/record`, `tools/events`, `util/retry` and
/// apimachinery's `util/wait`: leader election, event recording, retry on conflict, and polls
/// and periodic loops (the `kclient-tools` crate). Feature
/// `tools`.
#[cfg(feature = "tools")]
pub use kclient_tools as tools;

/// A controller runtime on the informers and the workqueue, what controller-runtime and
/// kube-runtime give: `ControllerBuilder::new(name, &factory).for_::<K>().owns::<C>()`,
/// predicates, `reconcile(async fn(Arc<K>, Arc<Ctx>) -> Result<Action, E>)` with rate-limited
/// retries, finalizers, leader election, graceful shutdown and metrics, and
/// `controller::manager::Manager` to run several controllers under one election with probes
/// and a metrics endpoint (the `kclient-controller` crate). Feature `tools`.
#[cfg(feature = "tools")]
pub use kclient_controller as controller;

/// Admission and conversion webhooks, controller-runtime's `webhook`, `webhook/admission` and
/// `webhook/conversion` packages: the `AdmissionReview` and `ConversionReview` types, typed
/// `validating` and `defaulting` handlers, CRD `Converter`s and the HTTPS `WebhookServer` the
/// API server calls, whose certificate is read again when it changes (the `kclient-webhook`
/// crate). Feature `webhook`.
#[cfg(feature = "webhook")]
pub use kclient_webhook as webhook;

/// client-go's `testing` and `kubernetes/fake`: `Fake`, an in-memory API server with the
/// server's semantics plugged under `Client`, so the clientset, dynamic client, discovery,
/// informers and listers run unchanged against it; reactors and recorded actions (the
/// `kclient-testing` crate). Feature `testing`, usually in `[dev-dependencies]`.
#[cfg(feature = "testing")]
pub use kclient_testing as testing;

/// controller-runtime's `envtest`: start a real local kube-apiserver from tests (or use an
/// existing cluster), one namespace per test, CRD installation (the `kclient-testenv` crate).
/// Feature `envtest`, usually in `[dev-dependencies]`.
#[cfg(feature = "envtest")]
pub use kclient_testenv as envtest;

/// The API error of every request, with client-go's `apierrors` checks (`is_not_found()`,
/// `is_conflict()`, ...).
pub use kclient_apimachinery::Error;
/// Metadata access common to every Kubernetes object (client-go's `metav1.Object`).
pub use kclient_apimachinery::Object;
/// A type's API identity: group, version, kind, plural and scope.
pub use kclient_apimachinery::Resource;

/// The REST client every other client is built on; cheap to clone.
#[cfg(feature = "client")]
pub use kclient_rest::Client;
/// Where and how to reach the API server (client-go's `rest.Config`).
#[cfg(feature = "client")]
pub use kclient_rest::Config;
/// Why a [`Config`] could not be loaded or a [`Client`] built.
#[cfg(feature = "client")]
pub use kclient_rest::ConfigError;

/// The generic typed client of one resource, with client-go's verbs.
#[cfg(feature = "client")]
pub use kclient_clientset::Api;
/// client-go's `kubernetes.Clientset`: typed clients per group version.
#[cfg(feature = "client")]
pub use kclient_clientset::Clientset;
/// The four patch kinds: JSON, merge, strategic merge and apply.
#[cfg(feature = "client")]
pub use kclient_clientset::Patch;
/// Makes a struct with a `metadata: ObjectMeta` field a resource with a typed client.
#[cfg(feature = "client")]
pub use kclient_clientset::custom_resource;
/// What the server serves (client-go's `discovery.DiscoveryClient`).
#[cfg(feature = "client")]
pub use kclient_discovery::DiscoveryClient;
/// Clients for any resource as `Unstructured` (client-go's `dynamic.Interface`).
#[cfg(feature = "client")]
pub use kclient_dynamic::DynamicClient;

/// One informer per resource type, started and stopped together.
#[cfg(feature = "runtime")]
pub use kclient_informers::SharedInformerFactory;
/// The work queue of a controller: retries with per-item backoff and an overall rate limit.
#[cfg(feature = "runtime")]
pub use kclient_workqueue::RateLimitingQueue;
