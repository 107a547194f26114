//! The traits and types a controller needs in scope: `use kclient::prelude::*;`.
//!
//! It brings the object traits ([`Object`], [`Resource`]) whose methods every object has,
//! the clients (`Client`, `Config`, `Clientset`, `Api`, `Patch`) and discovery's
//! `DiscoveryInterface` trait, the request options, the informer pieces
//! (`SharedInformerFactory`, `SharedIndexInformer`, `Lister`, the event handler types and
//! `DeletedObject`), the workqueue (`RateLimitingQueue`, `default_controller_rate_limiter`),
//! the `namespace/name` key functions, the owner helpers ([`get_controller_of`],
//! [`is_controlled_by`]), the status condition helpers ([`set_status_condition`],
//! [`find_status_condition`], [`is_status_condition_true`], [`is_status_condition_false`] and
//! the [`CONDITION_TRUE`]/[`CONDITION_FALSE`]/[`CONDITION_UNKNOWN`] statuses), the custom
//! resource macro and trait (`custom_resource!`, `CustomResource`), and the
//! `CancellationToken` that stops them all, with `shutdown_on_signal` to cancel it; with
//! `tools`, the controller runtime's `ControllerBuilder`, `Action`, `ObjectRef`, `Predicate`,
//! and the `Manager` with its `Runnable`s. Items appear with the feature of their layer
//! (`client`, `runtime` or `tools`).
//!
//! ```
//! # #[cfg(feature = "client")]
//! # mod with_client {
//! use kclient::prelude::*;
//!
//! /// A custom resource whose status carries conditions.
//! #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
//! pub struct Backup {
//!     pub metadata: ObjectMeta,
//!     pub status: Option<BackupStatus>,
//! }
//!
//! #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
//! pub struct BackupStatus {
//!     pub conditions: Vec<kclient::apimachinery::meta::v1::Condition>,
//! }
//!
//! custom_resource!(Backup {
//!     group: "example.com",
//!     version: "v1",
//!     kind: "Backup",
//!     plural: "backups",
//!     singular: "backup",
//!     scope: Namespaced,
//! });
//!
//! pub fn check() {
//!     assert_eq!(<Backup as Resource>::API_VERSION, "example.com/v1");
//!     let mut backup = Backup::default();
//!     let status = backup.status.get_or_insert_default();
//!     let ready = kclient::apimachinery::meta::v1::Condition {
//!         type_: "Ready".into(),
//!         status: CONDITION_TRUE.into(),
//!         reason: "Done".into(),
//!         ..Default::default()
//!     };
//!     assert!(set_status_condition(&mut status.conditions, ready));
//!     assert!(is_status_condition_true(&status.conditions, "Ready"));
//! }
//! # }
//! # #[cfg(feature = "client")]
//! # with_client::check();
//! ```
//!
//! Names that two crates use for different things (`Error`, `RateLimiter`, `WatchStream`,
//! `Backoff`) stay out of the prelude; reach them through their module
//! (`kclient::cache::Error`, `kclient::workqueue::RateLimiter`).

pub use kclient_apimachinery::meta::v1::ObjectMeta;
pub use kclient_apimachinery::{
    CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN, CreateOptions, DeleteOptions, GetOptions,
    ListOptions, Object, PatchOptions, PropagationPolicy, Resource, Selector, UpdateOptions,
    WatchEvent, find_status_condition, get_controller_of, is_controlled_by,
    is_status_condition_false, is_status_condition_true, meta_namespace_key, set_status_condition,
    split_meta_namespace_key,
};

#[cfg(feature = "client")]
pub use kclient_clientset::{Api, Clientset, CustomResource, Patch, custom_resource};
#[cfg(feature = "client")]
pub use kclient_discovery::DiscoveryInterface;
#[cfg(feature = "client")]
pub use kclient_rest::{Client, Config};
#[cfg(feature = "client")]
pub use tokio_util::sync::CancellationToken;

#[cfg(feature = "client")]
pub use crate::signal::shutdown_on_signal;

#[cfg(feature = "runtime")]
pub use kclient_cache::{
    DeletedObject, IndexFunc, Indexers, Lister, ResourceEventHandler, ResourceEventHandlerFuncs,
    SharedIndexInformer,
};
#[cfg(feature = "runtime")]
pub use kclient_informers::SharedInformerFactory;
#[cfg(feature = "runtime")]
pub use kclient_workqueue::{RateLimitingQueue, default_controller_rate_limiter};

#[cfg(feature = "tools")]
pub use kclient_controller::manager::{Manager, Runnable};
#[cfg(feature = "tools")]
pub use kclient_controller::{Action, ControllerBuilder, ObjectRef, Predicate};
