//! The traits and types a controller needs in scope: `use kclient::prelude::*;`.
//!
//! It brings the object traits ([`Object`], [`Resource`]) whose methods every object has,
//! the clients (`Client`, `Config`, `Clientset`, `Api`, `Patch`) and discovery's
//! `DiscoveryInterface` trait, the request options, the informer pieces
//! (`SharedInformerFactory`, `SharedIndexInformer`, `Lister`, the event handler types and
//! `DeletedObject`), the workqueue (`RateLimitingQueue`, `default_controller_rate_limiter`),
//! the `namespace/name` key functions, the owner helpers ([`get_controller_of`],
//! [`is_controlled_by`]), and the `CancellationToken` that stops them all, with
//! `shutdown_on_signal` to cancel it; with `tools`, the controller runtime's
//! `ControllerBuilder`, `Action`, `ObjectRef` and `Predicate`. Items appear with the feature
//! of their layer (`client`, `runtime` or `tools`).
//!
//! Names that two crates use for different things (`Error`, `RateLimiter`, `WatchStream`,
//! `Backoff`) stay out of the prelude; reach them through their module
//! (`kclient::cache::Error`, `kclient::workqueue::RateLimiter`).

pub use kclient_apimachinery::meta::v1::ObjectMeta;
pub use kclient_apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Object, PatchOptions, PropagationPolicy,
    Resource, Selector, UpdateOptions, WatchEvent, get_controller_of, is_controlled_by,
    meta_namespace_key, split_meta_namespace_key,
};

#[cfg(feature = "client")]
pub use kclient_clientset::{Api, Clientset, Patch};
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
pub use kclient_controller::{Action, ControllerBuilder, ObjectRef, Predicate};
