//! Watching until something happens, client-go's `tools/watch`.
//!
//! - [`RetryWatcher`]: a watch that does not end when a connection does. It resumes from the
//!   last resource version it delivered (asking the server for bookmarks, so that version
//!   keeps moving on quiet resources), waits between attempts with a [`Backoff`](crate::Backoff),
//!   and ends with an error only when the server no longer has that version (`410 Gone`),
//!   where the caller must list again, or refuses the watch (`401`, `403`).
//! - [`until`], [`until_without_retry`], [`until_with_sync`] and [`list_watch_until`]: wait
//!   until a sequence of conditions holds over the events of a resource, a timeout passes or a
//!   token is cancelled ([`Stop`]).
//!
//! Conditions are closures over events ([`condition`]); each returns `Ok(true)` when it is
//! met, `Ok(false)` to wait for the next event, or an error, which ends the wait with
//! [`UntilError::Condition`]. With several conditions, they are met in order: the next one is
//! first tried on the event that met the previous one, then on later events. Conditions see
//! only object events (`Added`, `Modified`, `Deleted`); bookmarks are used for resuming and
//! never reach them, and a watch error ends the wait.
//!
//! ```no_run
//! use std::time::Duration;
//! use kclient_api::apiextensions::v1::CustomResourceDefinition;
//! use kclient_apimachinery::{Object, WatchEvent};
//! use kclient_informers::new_list_watch_from_client;
//! use kclient_tools::watch::{condition, until_with_sync};
//!
//! # async fn run(client: kclient_rest::Client) -> Result<(), Box<dyn std::error::Error>> {
//! // Wait up to 30 s until the CRD `networks.samplecrd.k8s.io` is Established.
//! let lw = new_list_watch_from_client::<CustomResourceDefinition>(
//!     client,
//!     None,
//!     "metadata.name=networks.samplecrd.k8s.io",
//! );
//! until_with_sync(
//!     Duration::from_secs(30),
//!     std::sync::Arc::new(lw),
//!     None,
//!     vec![condition(|event: &WatchEvent<std::sync::Arc<CustomResourceDefinition>>| {
//!         Ok::<_, std::convert::Infallible>(match event {
//!             WatchEvent::Added(crd) | WatchEvent::Modified(crd) => crd
//!                 .status
//!                 .as_ref()
//!                 .and_then(|s| s.conditions.as_ref())
//!                 .is_some_and(|c| c.iter().any(|c| c.type_ == "Established" && c.status == "True")),
//!             _ => false,
//!         })
//!     })],
//! )
//! .await?;
//! # Ok(()) }
//! ```

mod error;
mod retry_watcher;
mod stop;
mod until;

pub use error::{BoxError, UntilError};
pub use retry_watcher::{RETRY_WATCHER_BACKOFF, RetryWatcher};
pub use stop::Stop;
pub use until::{
    ConditionFunc, PreconditionFunc, condition, list_watch_until, precondition, until,
    until_with_sync, until_without_retry,
};
