//! Finalizers: run cleanup before an object goes (kube-runtime's `finalizer` helper), and
//! controller-runtime's `controllerutil.AddFinalizer`, `RemoveFinalizer` and
//! `ContainsFinalizer`, which edit an object's finalizer list in memory
//! ([`add_finalizer`], [`remove_finalizer`], [`contains_finalizer`]) for a program that writes
//! the object itself. Both work on typed objects and on dynamic ones ([`Unstructured`],
//! metadata-only): [`finalizer_dynamic`] takes the object's resource at run time.
//!
//! [`Unstructured`]: kclient_apimachinery::Unstructured
//!
//! [`finalizer`] wraps a reconcile:
//!
//! | the object                                  | what happens                                               |
//! |---------------------------------------------|------------------------------------------------------------|
//! | not being deleted, finalizer missing        | the finalizer is added, then `Apply` runs on the patched object |
//! | not being deleted, finalizer present        | `Apply`                                                    |
//! | being deleted (deletionTimestamp), finalizer present | `Cleanup`; when it succeeds the finalizer is removed and the API server deletes the object |
//! | being deleted, finalizer absent             | nothing (another finalizer holds the object)               |
//!
//! Before `Cleanup` the object is read from the server: the informer's cache can still hold a
//! version from before the finalizer was removed, and cleanup is not run again for it; nor for
//! an object that took the deleted one's name (another UID). So
//! cleanup runs once per deletion, unless removing the finalizer fails after it succeeded;
//! then it runs again on the retry, which is why it should be idempotent.
//!
//! The finalizer list is written with a JSON merge patch that carries the resourceVersion it
//! was computed from, so a concurrent change (another controller's finalizer, a label) makes
//! it fail with 409 Conflict instead of overwriting it; the helper then reads the object
//! again and recomputes, with client-go's `retry.DefaultRetry` backoff
//! ([`retry_on_conflict`](kclient_tools::retry_on_conflict)).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use kclient_apimachinery::{ApiResource, Object, Resource};
use kclient_rest::{Client, Verb};
use kclient_tools::{DEFAULT_RETRY, retry_on_conflict};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::action::Action;

/// What [`finalizer`] asks the wrapped reconcile to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object lives (and carries the finalizer): reconcile it as usual.
    Apply(Arc<K>),
    /// The object is being deleted: clean up what it owns outside Kubernetes; the finalizer
    /// is removed when this succeeds.
    Cleanup(Arc<K>),
}

/// Why [`finalizer`] failed.
#[derive(Debug)]
pub enum FinalizerError<E> {
    /// The wrapped reconcile (`Apply` or `Cleanup`) failed.
    Reconcile(E),
    /// Adding or removing the finalizer, or reading the object before cleanup, failed.
    Patch {
        /// The finalizer.
        finalizer: String,
        /// The object's key.
        object: String,
        /// The API error.
        source: kclient_apimachinery::Error,
    },
}

/// So that `?` works in a function returning the API error (`kclient::Error`): a failed
/// finalizer patch is that request's error (its `is_*()` answers kept), a failed reconcile
/// an [`Error::other`](kclient_apimachinery::Error::other) holding the reconcile's error.
impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<FinalizerError<E>>
    for kclient_apimachinery::Error
{
    fn from(error: FinalizerError<E>) -> Self {
        match error {
            FinalizerError::Reconcile(e) => kclient_apimachinery::Error::other(e),
            FinalizerError::Patch { source, .. } => source,
        }
    }
}

impl<E: fmt::Display> fmt::Display for FinalizerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FinalizerError::Reconcile(e) => e.fmt(f),
            FinalizerError::Patch {
                finalizer,
                object,
                source,
            } => write!(f, "updating finalizer {finalizer} of {object}: {source}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for FinalizerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FinalizerError::Reconcile(e) => Some(e),
            FinalizerError::Patch { source, .. } => Some(source),
        }
    }
}

/// Whether `obj`'s metadata lists `finalizer` (controller-runtime's `ContainsFinalizer`).
pub fn contains_finalizer<K: Object + ?Sized>(obj: &K, finalizer: &str) -> bool {
    obj.finalizers().contains(&finalizer)
}

/// Appends `finalizer` to `obj`'s finalizer list unless it is there already, in memory
/// (controller-runtime's `AddFinalizer`); returns whether the list changed. Update or patch
/// the object afterwards to store it.
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
/// use kclient_controller::{add_finalizer, contains_finalizer, remove_finalizer};
///
/// let mut cm = ConfigMap::default();
/// assert!(add_finalizer(&mut cm, "example.com/cleanup"));
/// assert!(!add_finalizer(&mut cm, "example.com/cleanup"), "listed once");
/// assert!(contains_finalizer(&cm, "example.com/cleanup"));
/// assert!(remove_finalizer(&mut cm, "example.com/cleanup"));
/// assert!(!contains_finalizer(&cm, "example.com/cleanup"));
/// assert!(cm.metadata.finalizers.is_none(), "an emptied list is left out");
/// ```
pub fn add_finalizer<K: Object + ?Sized>(obj: &mut K, finalizer: &str) -> bool {
    if contains_finalizer(obj, finalizer) {
        return false;
    }
    let mut list = owned_finalizers(obj);
    list.push(finalizer.to_owned());
    obj.set_finalizers(list);
    true
}

/// Removes every occurrence of `finalizer` from `obj`'s finalizer list, in memory
/// (controller-runtime's `RemoveFinalizer`); returns whether the list changed. A list left
/// empty is removed, so that the object encodes without it, as Go's `omitempty` leaves it out.
pub fn remove_finalizer<K: Object + ?Sized>(obj: &mut K, finalizer: &str) -> bool {
    if !contains_finalizer(obj, finalizer) {
        return false;
    }
    let mut list = owned_finalizers(obj);
    list.retain(|f| f != finalizer);
    obj.set_finalizers(list);
    true
}

fn owned_finalizers<K: Object + ?Sized>(obj: &K) -> Vec<String> {
    obj.finalizers().into_iter().map(str::to_owned).collect()
}

/// Runs `reconcile` under the finalizer `name` (a qualified name such as
/// `example.com/cleanup`), as the module doc's table says; `client` writes the finalizer list.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use kclient_api::core::v1::ConfigMap;
/// use kclient_controller::{Action, FinalizerEvent, finalizer};
///
/// async fn reconcile(cm: Arc<ConfigMap>, client: Arc<kclient_rest::Client>)
///     -> Result<Action, kclient_controller::FinalizerError<kclient_apimachinery::Error>> {
///     finalizer(&client, "example.com/cleanup", cm, |event| async move {
///         match event {
///             FinalizerEvent::Apply(_cm) => Ok(Action::done()),
///             FinalizerEvent::Cleanup(_cm) => Ok(Action::done()), // delete external state
///         }
///     })
///     .await
/// }
/// ```
pub async fn finalizer<K, E, F, Fut>(
    client: &Client,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Resource,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
{
    finalizer_dynamic(client, &ApiResource::of::<K>(), name, obj, reconcile).await
}

/// [`finalizer`] for an object whose resource is known at run time: an
/// [`Unstructured`](kclient_apimachinery::Unstructured) one that a
/// [`for_dynamic`](crate::ControllerBuilder::for_dynamic) controller reconciles, or a
/// [`PartialObjectMetadata`](kclient_apimachinery::meta::PartialObjectMetadata) of
/// [`for_metadata`](crate::ControllerBuilder::for_metadata). `resource` says where the object
/// lives, as the controller's `for_dynamic` took it.
///
/// ```no_run
/// # use std::sync::Arc;
/// use kclient_apimachinery::{ApiResource, Unstructured};
/// use kclient_controller::{Action, FinalizerEvent, finalizer_dynamic};
///
/// async fn reconcile(widget: Arc<Unstructured>, client: Arc<kclient_rest::Client>)
///     -> Result<Action, kclient_controller::FinalizerError<kclient_apimachinery::Error>> {
///     let gvk = kclient_apimachinery::GroupVersionKind::new("example.com", "v1", "Widget");
///     let widgets = ApiResource::new(&gvk, "widgets", true);
///     finalizer_dynamic(&client, &widgets, "example.com/cleanup", widget, |event| async move {
///         match event {
///             FinalizerEvent::Apply(_widget) => Ok(Action::done()),
///             FinalizerEvent::Cleanup(_widget) => Ok(Action::done()),
///         }
///     })
///     .await
/// }
/// ```
pub async fn finalizer_dynamic<K, E, F, Fut>(
    client: &Client,
    resource: &ApiResource,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Object + Clone + DeserializeOwned,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
{
    let has = obj.finalizers().contains(&name);
    match (obj.is_being_deleted(), has) {
        (false, true) => reconcile(FinalizerEvent::Apply(obj))
            .await
            .map_err(FinalizerError::Reconcile),
        (false, false) => {
            let patched = update_finalizers(client, resource, &*obj, name, true)
                .await
                .map_err(|e| patch_error(name, &*obj, e))?;
            match patched {
                Some(patched) => reconcile(FinalizerEvent::Apply(Arc::new(patched)))
                    .await
                    .map_err(FinalizerError::Reconcile),
                // Gone meanwhile: nothing to reconcile.
                None => Ok(Action::done()),
            }
        }
        (true, true) => {
            // The cache may lag behind a removal this helper already made (an older version
            // of the object can still be delivered after it), so the server decides whether
            // the cleanup is still due.
            let live = match request(client, resource, Verb::Get, &*obj)
                .send::<K>()
                .await
            {
                Ok(live) => live,
                Err(e) if e.is_not_found() => return Ok(Action::done()),
                Err(e) => return Err(patch_error(name, &*obj, e)),
            };
            // Not the object being deleted: it went, and another of the same name (which may
            // carry the finalizer too) came in its place. Cleanup is not the new one's due.
            let replaced = !obj.uid().is_empty() && live.uid() != obj.uid();
            if replaced || !live.is_being_deleted() {
                return Ok(Action::done());
            }
            if !live.finalizers().contains(&name) {
                return Ok(Action::done());
            }
            let obj = Arc::new(live);
            let action = reconcile(FinalizerEvent::Cleanup(Arc::clone(&obj)))
                .await
                .map_err(FinalizerError::Reconcile)?;
            update_finalizers(client, resource, &*obj, name, false)
                .await
                .map_err(|e| patch_error(name, &*obj, e))?;
            Ok(action)
        }
        (true, false) => Ok(Action::done()),
    }
}

/// Adds (`add`) or removes the finalizer `name`, starting from `obj` and re-reading the
/// object after each conflict. `None` when the object no longer exists, or when a re-read
/// finds another object (another UID) of its name: the finalizers of that one are not this
/// call's to change.
async fn update_finalizers<K: Object + Clone + DeserializeOwned>(
    client: &Client,
    resource: &ApiResource,
    obj: &K,
    name: &str,
    add: bool,
) -> Result<Option<K>, kclient_apimachinery::Error> {
    let mut first = Some(obj.clone());
    let result = retry_on_conflict(DEFAULT_RETRY, || {
        let known = first.take();
        async move {
            let current = match known {
                Some(current) => current,
                None => {
                    let current = request(client, resource, Verb::Get, obj)
                        .send::<K>()
                        .await?;
                    if !obj.uid().is_empty() && current.uid() != obj.uid() {
                        return Err(kclient_apimachinery::Error::new_not_found(
                            &resource.group,
                            &resource.plural,
                            obj.name(),
                        ));
                    }
                    current
                }
            };
            let mut wanted = current.clone();
            let changed = if add {
                add_finalizer(&mut wanted, name)
            } else {
                remove_finalizer(&mut wanted, name)
            };
            if !changed {
                return Ok(current);
            }
            let patch = json!({"metadata": {
                "resourceVersion": current.resource_version(),
                "finalizers": wanted.finalizers(),
            }});
            request(client, resource, Verb::Patch, &current)
                .content_type("application/merge-patch+json")
                .json(&patch)
                .send::<K>()
                .await
        }
    })
    .await;
    match result {
        Ok(obj) => Ok(Some(obj)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

fn patch_error<E, K: Object>(
    finalizer: &str,
    obj: &K,
    source: kclient_apimachinery::Error,
) -> FinalizerError<E> {
    FinalizerError::Patch {
        finalizer: finalizer.to_owned(),
        object: kclient_apimachinery::meta_namespace_key(obj),
        source,
    }
}

/// A request for `obj` itself, an object of `resource`.
fn request<K: Object>(
    client: &Client,
    resource: &ApiResource,
    verb: Verb,
    obj: &K,
) -> kclient_rest::Request {
    client
        .verb(verb)
        .group_version(&resource.group, &resource.version)
        .namespace(obj.namespace())
        .resource(&resource.plural)
        .name(obj.name())
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::v1::ObjectMeta;

    use super::*;

    fn meta(finalizers: &[&str]) -> ObjectMeta {
        serde_json::from_value(json!({"name": "x", "finalizers": finalizers})).unwrap()
    }

    #[test]
    fn remove_finalizer_removes_every_occurrence_and_keeps_the_others_in_order() {
        let mut m = meta(&["a", "b", "a", "c"]);
        assert!(remove_finalizer(&mut m, "a"));
        assert_eq!(m.finalizers(), ["b", "c"]);
        assert!(!remove_finalizer(&mut m, "missing"));
        assert_eq!(m.finalizers(), ["b", "c"]);
        let mut none = ObjectMeta::default();
        assert!(!remove_finalizer(&mut none, "a"));
        assert!(none.finalizers.is_none());
    }

    #[test]
    fn the_helpers_edit_an_unstructured_object_as_a_typed_one() {
        let mut obj = kclient_apimachinery::Unstructured::from_value(json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "finalizers": ["b"]},
        }))
        .unwrap();
        assert!(add_finalizer(&mut obj, "a"));
        assert!(!add_finalizer(&mut obj, "a"));
        assert_eq!(obj.finalizers(), ["b", "a"]);
        assert!(contains_finalizer(&obj, "b"));
        assert!(remove_finalizer(&mut obj, "b"));
        assert!(remove_finalizer(&mut obj, "a"));
        assert!(!remove_finalizer(&mut obj, "a"));
        // An emptied list is left out, as from a typed object.
        assert_eq!(obj.as_map()["metadata"], json!({"name": "w"}));
    }

    #[test]
    fn add_finalizer_appends_once() {
        let mut m = meta(&["b"]);
        assert!(add_finalizer(&mut m, "a"));
        assert!(!add_finalizer(&mut m, "b"));
        assert_eq!(m.finalizers(), ["b", "a"]);
        assert!(contains_finalizer(&m, "a"));
        assert!(!contains_finalizer(&m, "c"));
    }
}
