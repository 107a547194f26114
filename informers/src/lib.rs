//! Shared informer factories, the counterpart of client-go's `informers` and
//! `dynamic/dynamicinformer` packages.
//!
//! - [`SharedInformerFactory`]: one [`SharedIndexInformer`](kclient_cache::SharedIndexInformer)
//!   per resource type (or per resource, for [`Unstructured`](kclient_apimachinery::Unstructured)
//!   objects), shared by every caller, started and stopped together.
//! - [`RestListWatch`] and [`new_list_watch_from_client`]: the
//!   [`ListerWatcher`](kclient_cache::ListerWatcher)s that connect the cache to the API server
//!   through the REST client.
//!
//! Depends on `cache`, `rest` and `apimachinery`; it is the first layer that sees both the
//! cache and HTTP, so the adapters between them live here.
//!
//! ```no_run
//! use std::time::Duration;
//! use kclient_apimachinery::{ApiResource, GroupVersionKind};
//! use kclient_informers::SharedInformerFactory;
//! use kclient_rest::{Client, Config};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(Config::infer()?)?;
//! let factory = SharedInformerFactory::new(client, Duration::ZERO);
//! let gvk = GroupVersionKind::new("", "v1", "ConfigMap");
//! let configmaps = factory.dynamic_informer(&ApiResource::new(&gvk, "configmaps", true));
//! factory.start();
//! factory.wait_for_cache_sync().await;
//! println!("{} ConfigMaps cached", configmaps.get_store().list().len());
//! factory.shutdown().await;
//! # Ok(()) }
//! ```

mod factory;
mod list_watch;

pub use factory::SharedInformerFactory;
pub use list_watch::{RestListWatch, new_list_watch_from_client};
