//! Waiting until conditions hold over a resource's events (client-go's `tools/watch/until.go`
//! and `informerwatcher.go`): [`until_without_retry`] over any watch stream, [`until`] over a
//! [`RetryWatcher`], [`list_watch_until`] over a list then a watch, and [`until_with_sync`]
//! over an informer, which also survives `410 Gone`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{Stream, StreamExt};
use kclient_apimachinery::{Error, ListOptions, Object, WatchEvent};
use kclient_cache::{
    CancellationToken, DeletedObject, Indexer, Indexers, ListerWatcher, ResourceEventHandlerFuncs,
    SharedIndexInformer,
};
use tokio::sync::mpsc;

use super::error::{BoxError, UntilError};
use super::retry_watcher::RetryWatcher;
use super::stop::{Deadline, Stop};

/// A condition over events: `Ok(true)` when met, `Ok(false)` to wait for the next event, or an
/// error that ends the wait (client-go's `ConditionFunc`). Objects are shared `Arc`s, as an
/// informer holds them. Make one with [`condition`].
pub type ConditionFunc<K> =
    Box<dyn FnMut(&WatchEvent<Arc<K>>) -> Result<bool, BoxError> + Send + 'static>;

/// A check of the informer's synced cache before any event (client-go's `PreconditionFunc`):
/// `Ok(true)` ends the wait at once (the state wanted is already there), `Ok(false)` goes on to
/// the conditions. Make one with [`precondition`].
pub type PreconditionFunc<K> =
    Box<dyn FnOnce(&Indexer<K>) -> Result<bool, BoxError> + Send + 'static>;

/// A [`ConditionFunc`] from a closure with any error type.
pub fn condition<K, E>(
    mut f: impl FnMut(&WatchEvent<Arc<K>>) -> Result<bool, E> + Send + 'static,
) -> ConditionFunc<K>
where
    E: Into<BoxError>,
{
    Box::new(move |event| f(event).map_err(Into::into))
}

/// A [`PreconditionFunc`] from a closure with any error type.
pub fn precondition<K, E>(
    f: impl FnOnce(&Indexer<K>) -> Result<bool, E> + Send + 'static,
) -> PreconditionFunc<K>
where
    E: Into<BoxError>,
{
    Box::new(move |store| f(store).map_err(Into::into))
}

/// Waits until `conditions` hold, in order, over the events of `watch` (client-go's
/// `UntilWithoutRetry`). Returns the event that met the last condition (`None` when there
/// were no conditions).
///
/// The stream is used as it is: when it ends, the wait ends with
/// [`UntilError::WatchClosed`]; an `Err` item or an `ERROR` event ends it with
/// [`UntilError::Watch`]. Use [`until`] to survive reconnects.
pub async fn until_without_retry<K, S>(
    stop: impl Into<Stop>,
    watch: S,
    conditions: Vec<ConditionFunc<K>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError>
where
    S: Stream<Item = Result<WatchEvent<K>, Error>> + Send,
{
    let deadline = stop.into().start();
    let events = watch.map(|item| item.map(share));
    run_conditions(&deadline, events, conditions, None).await
}

/// Waits until `conditions` hold, in order, over the events of `lister_watcher` from
/// `initial_resource_version`, through reconnects (client-go's `Until`, over a
/// [`RetryWatcher`]). `410 Gone` ends the wait with [`UntilError::Watch`]: the version is too
/// old, list again, or use [`until_with_sync`], which does. A watch refused with `401` or
/// `403` ends it the same way.
pub async fn until<K: Object>(
    stop: impl Into<Stop>,
    initial_resource_version: &str,
    lister_watcher: impl ListerWatcher<K>,
    conditions: Vec<ConditionFunc<K>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError> {
    let deadline = stop.into().start();
    until_from(
        &deadline,
        initial_resource_version,
        lister_watcher,
        conditions,
        None,
    )
    .await
}

async fn until_from<K: Object>(
    deadline: &Deadline,
    initial_resource_version: &str,
    lister_watcher: impl ListerWatcher<K>,
    conditions: Vec<ConditionFunc<K>>,
    last: Option<WatchEvent<Arc<K>>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError> {
    let watcher =
        RetryWatcher::new(initial_resource_version, lister_watcher).map_err(UntilError::Watch)?;
    let events = watcher.map(|item| item.map(share));
    run_conditions(deadline, events, conditions, last).await
}

/// Lists `lister_watcher`, tries `conditions` on the listed objects as `Added` events, then
/// waits for the rest over a watch from the list's version (client-go's `ListWatchUntil`).
/// The list is one request without paging.
pub async fn list_watch_until<K: Object>(
    stop: impl Into<Stop>,
    lister_watcher: impl ListerWatcher<K>,
    mut conditions: Vec<ConditionFunc<K>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError> {
    if conditions.is_empty() {
        return Ok(None);
    }
    let deadline = stop.into().start();
    let list = tokio::select! {
        biased;
        reason = deadline.reached() => return Err(reason),
        list = lister_watcher.list(ListOptions::default()) => list.map_err(UntilError::Watch)?,
    };
    let mut items = list.items.into_iter();
    let mut last: Option<WatchEvent<Arc<K>>> = None;
    let mut passed = 0;
    'conditions: for condition in conditions.iter_mut() {
        if let Some(event) = &last
            && condition(event).map_err(UntilError::Condition)?
        {
            passed += 1;
            continue;
        }
        for item in items.by_ref() {
            let event = WatchEvent::Added(Arc::new(item));
            let done = condition(&event).map_err(UntilError::Condition)?;
            last = Some(event);
            if done {
                passed += 1;
                continue 'conditions;
            }
        }
        break;
    }
    if passed == conditions.len() {
        return Ok(last);
    }
    let remaining = conditions.split_off(passed);
    until_from(
        &deadline,
        &list.metadata.resource_version,
        lister_watcher,
        remaining,
        None,
    )
    .await
}

/// Runs an informer over `lister_watcher` and waits until `conditions` hold, in order, over
/// its events (client-go's `UntilWithSync`): first an `Added` event for every object of the
/// initial list, then every change. Because an informer relists when its watch cannot resume,
/// this survives `410 Gone`, unlike [`until`].
///
/// With a `precondition`, the informer's cache is synced first and the precondition checked
/// against it; if it holds, the wait ends at once with `Ok(None)`. Use it to catch a state that
/// is already there (the object already exists, already Established). If the stop comes
/// before the cache syncs, the wait ends with its reason.
///
/// The informer is stopped, and its task awaited, before this returns.
pub async fn until_with_sync<K: Object>(
    stop: impl Into<Stop>,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    precondition: Option<PreconditionFunc<K>>,
    conditions: Vec<ConditionFunc<K>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError> {
    let deadline = stop.into().start();
    let (tx, rx) = mpsc::unbounded_channel::<WatchEvent<Arc<K>>>();
    let (added, updated, deleted) = (tx.clone(), tx.clone(), tx);
    let informer = SharedIndexInformer::new(lister_watcher, Duration::ZERO, Indexers::new());
    let registration = informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func(move |obj: &Arc<K>, _| {
                    let _ = added.send(WatchEvent::Added(Arc::clone(obj)));
                })
                .update_func(move |_old: &Arc<K>, new: &Arc<K>| {
                    let _ = updated.send(WatchEvent::Modified(Arc::clone(new)));
                })
                .delete_func(move |obj: DeletedObject<K>| {
                    // A delete seen only on relist carries the last known state, when any.
                    let last = match obj {
                        DeletedObject::Object(obj) => Some(obj),
                        DeletedObject::Tombstone(tombstone) => tombstone.obj,
                    };
                    if let Some(obj) = last {
                        let _ = deleted.send(WatchEvent::Deleted(obj));
                    }
                }),
        )
        .map_err(UntilError::Informer)?;

    let cancel = CancellationToken::new();
    // Stops the informer if this future is dropped before it returns.
    let _stop_informer = cancel.clone().drop_guard();
    let run = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    let result = async {
        if let Some(precondition) = precondition {
            tokio::select! {
                biased;
                reason = deadline.reached() => return Err(reason),
                () = registration.wait_for_sync() => {}
            }
            if precondition(&informer.get_indexer()).map_err(UntilError::Condition)? {
                return Ok(None);
            }
        }
        let mut rx = rx;
        let events = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)).map(Ok);
        run_conditions(&deadline, events, conditions, None).await
    }
    .await;
    cancel.cancel();
    // The informer task ends once cancelled; a panic in it was reported by tokio.
    let _ = run.await;
    result
}

/// Shares an event's object.
fn share<K>(event: WatchEvent<K>) -> WatchEvent<Arc<K>> {
    match event {
        WatchEvent::Added(obj) => WatchEvent::Added(Arc::new(obj)),
        WatchEvent::Modified(obj) => WatchEvent::Modified(Arc::new(obj)),
        WatchEvent::Deleted(obj) => WatchEvent::Deleted(Arc::new(obj)),
        WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
        WatchEvent::Error(status) => WatchEvent::Error(status),
    }
}

/// The loop of client-go's `UntilWithoutRetry`: each condition in turn, first on the event
/// that met the previous one, then on new events, until all are met.
async fn run_conditions<K>(
    deadline: &Deadline,
    events: impl Stream<Item = Result<WatchEvent<Arc<K>>, Error>> + Send,
    mut conditions: Vec<ConditionFunc<K>>,
    mut last: Option<WatchEvent<Arc<K>>>,
) -> Result<Option<WatchEvent<Arc<K>>>, UntilError> {
    let mut events = std::pin::pin!(events);
    for condition in conditions.iter_mut() {
        if let Some(event) = &last
            && condition(event).map_err(UntilError::Condition)?
        {
            continue;
        }
        loop {
            let next = tokio::select! {
                biased;
                reason = deadline.reached() => return Err(reason),
                next = events.next() => next,
            };
            let event = match next {
                None => return Err(UntilError::WatchClosed),
                Some(Err(e)) => return Err(UntilError::Watch(e)),
                Some(Ok(WatchEvent::Bookmark(_))) => continue,
                Some(Ok(WatchEvent::Error(status))) => {
                    return Err(UntilError::Watch(Error::from_status(*status)));
                }
                Some(Ok(event)) => event,
            };
            let done = condition(&event).map_err(UntilError::Condition)?;
            last = Some(event);
            if done {
                break;
            }
        }
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::v1::ObjectMeta;

    use super::*;

    #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Thing {
        metadata: ObjectMeta,
    }
    kclient_apimachinery::impl_object!(Thing);

    fn thing(name: &str, rv: &str) -> Thing {
        Thing {
            metadata: ObjectMeta {
                name: Some(name.into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
        }
    }

    fn named(name: &'static str) -> ConditionFunc<Thing> {
        condition(move |e: &WatchEvent<Arc<Thing>>| {
            Ok::<_, BoxError>(
                matches!(e, WatchEvent::Added(t) | WatchEvent::Modified(t) if t.name() == name),
            )
        })
    }

    #[tokio::test(start_paused = true)]
    async fn conditions_are_met_in_order_and_the_next_starts_on_the_same_event() {
        let events = futures_util::stream::iter([
            Ok(WatchEvent::Added(thing("a", "1"))),
            Ok(WatchEvent::Added(thing("b", "2"))),
            Ok(WatchEvent::Modified(thing("c", "3"))),
        ])
        .chain(futures_util::stream::pending());
        // "b" then "b" again (met by the same event) then "c".
        let last = until_without_retry(
            Duration::from_secs(5),
            events,
            vec![named("b"), named("b"), named("c")],
        )
        .await
        .expect("met");
        assert_eq!(last, Some(WatchEvent::Modified(Arc::new(thing("c", "3")))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_watch_an_error_and_a_timeout_end_the_wait() {
        let closed = futures_util::stream::iter([Ok(WatchEvent::Added(thing("a", "1")))]);
        let err = until_without_retry(Stop::never(), closed, vec![named("z")])
            .await
            .unwrap_err();
        assert!(matches!(err, UntilError::WatchClosed), "{err}");

        let failing = condition(|_: &WatchEvent<Arc<Thing>>| Err::<bool, _>("no good"));
        let events = futures_util::stream::iter([Ok(WatchEvent::Added(thing("a", "1")))]);
        let err = until_without_retry(Stop::never(), events, vec![failing])
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "the condition failed: no good");

        let silent = futures_util::stream::pending::<Result<WatchEvent<Thing>, Error>>();
        let err = until_without_retry(Duration::from_secs(3), silent, vec![named("a")])
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");

        // A timeout the clock cannot add means none: the watch's end ends the wait.
        let closed = futures_util::stream::iter([Ok(WatchEvent::Added(thing("a", "1")))]);
        let err = until_without_retry(Duration::MAX, closed, vec![named("z")])
            .await
            .unwrap_err();
        assert!(matches!(err, UntilError::WatchClosed), "{err}");

        let token = CancellationToken::new();
        token.cancel();
        let silent = futures_util::stream::pending::<Result<WatchEvent<Thing>, Error>>();
        let err = until_without_retry(&token, silent, vec![named("a")])
            .await
            .unwrap_err();
        assert!(matches!(err, UntilError::Cancelled), "{err}");
    }
}
