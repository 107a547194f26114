//! [`RetryWatcher`]: a watch that survives the end of its connections, resuming from the last
//! resource version it delivered (client-go's `tools/watch.RetryWatcher`).
//!
//! The rules are documented on the type.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{BoxStream, Stream, StreamExt};
use kclient_apimachinery::{Error, ListOptions, Object, WatchEvent};
use kclient_cache::{ListerWatcher, WatchStream};
use tokio::time::Instant;

use crate::retry::Backoff;

/// The backoff between a [`RetryWatcher`]'s attempts: 1 s (client-go's `minRestartDelay`),
/// doubling on consecutive failures up to 30 s, with 10 % jitter.
pub const RETRY_WATCHER_BACKOFF: Backoff = Backoff {
    duration: Duration::from_secs(1),
    factor: 2.0,
    jitter: 0.1,
    steps: u32::MAX,
    cap: Duration::from_secs(30),
};

/// A stream of watch events that resumes through reconnects and bookmarks, and ends with an
/// error on `410 Gone` (client-go's `RetryWatcher`).
///
/// # Semantics
///
/// - Each watch asks for bookmarks and starts from the last resource version seen: that of the
///   last object event delivered, or of the last bookmark. No event is lost or repeated across
///   a reconnect, because the server replays every change after that version.
/// - A watch the server ends normally (its `timeoutSeconds`) is reopened at once, but no sooner
///   than the backoff's first delay after the previous one opened (client-go's one-second
///   `minRestartDelay`, non-sliding), so a server that closes watches at once is not hammered.
/// - A failure (the connection cut, refused, a decode error, a 5xx or 429 status) reopens the
///   watch after the next delay of the [`Backoff`]; the sequence starts again after a watch
///   that delivered events. A status asking for a delay (`retryAfterSeconds`) is waited at
///   least that long.
/// - `410 Gone` / `Expired` (the version is no longer in the server's window), whether as the
///   watch's HTTP answer or as an `ERROR` event, is the one error that ends the stream: it is
///   yielded as the last item, as client-go's sends its last `Error` event. The caller must
///   list again and start a new watcher from the list's version.
/// - An object event without a resource version cannot be resumed from: it ends the stream
///   with an error, as in client-go.
/// - Bookmarks move the resume point and are not yielded.
/// - A watch the server refuses with `401 Unauthorized` or `403 Forbidden` also ends the
///   stream with that error, as client-go's has since 1.31: missing credentials or grants are
///   not fixed by retrying, and the caller should tell the user. The same codes inside an
///   open watch (as an `ERROR` event) are retried like other failures, as in client-go.
///
/// It yields only `Added`, `Modified` and `Deleted` events; an `Err` item is final (the stream
/// ends after it).
///
/// ```no_run
/// use futures_util::StreamExt;
/// use kclient_api::core::v1::ConfigMap;
/// use kclient_informers::RestListWatch;
/// use kclient_tools::watch::RetryWatcher;
///
/// # async fn run(client: kclient_rest::Client) -> Result<(), kclient_apimachinery::Error> {
/// let lw = RestListWatch::<ConfigMap>::for_resource(client, Some("default"));
/// let mut events = RetryWatcher::new("12345", lw)?;
/// while let Some(event) = events.next().await {
///     match event {
///         Ok(event) => println!("{event:?}"),
///         Err(e) if e.is_resource_expired() => break, // list again, then watch from there
///         Err(e) => return Err(e),
///     }
/// }
/// # Ok(()) }
/// ```
pub struct RetryWatcher<K> {
    events: BoxStream<'static, Result<WatchEvent<K>, Error>>,
}

impl<K: Object> RetryWatcher<K> {
    /// Watches `lister_watcher` from `initial_resource_version`, with
    /// [`RETRY_WATCHER_BACKOFF`].
    ///
    /// The version must be a real one (from a list or an object): `""` and `"0"` are refused,
    /// as in client-go, because a watch from them starts with synthetic events for every
    /// existing object and cannot be resumed faithfully.
    pub fn new(
        initial_resource_version: &str,
        lister_watcher: impl ListerWatcher<K>,
    ) -> Result<Self, Error> {
        Self::with_backoff(
            initial_resource_version,
            lister_watcher,
            RETRY_WATCHER_BACKOFF,
        )
    }

    /// [`new`](Self::new) with another backoff. Its first `duration` is also the shortest time
    /// between the starts of two watches.
    pub fn with_backoff(
        initial_resource_version: &str,
        lister_watcher: impl ListerWatcher<K>,
        backoff: Backoff,
    ) -> Result<Self, Error> {
        if initial_resource_version.is_empty() || initial_resource_version == "0" {
            return Err(Error::invalid_request(format!(
                "a RetryWatcher cannot start from resourceVersion {initial_resource_version:?}: \
                 start it from the resourceVersion of a list or of an object"
            )));
        }
        let state = State {
            lister_watcher: Arc::new(lister_watcher),
            last_resource_version: initial_resource_version.to_owned(),
            current: None,
            opened: None,
            delivered: false,
            config: backoff,
            backoff,
            delay: Duration::ZERO,
            done: false,
        };
        let events = futures_util::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        })
        .boxed();
        Ok(RetryWatcher { events })
    }
}

impl<K> Stream for RetryWatcher<K> {
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx)
    }
}

impl<K> std::fmt::Debug for RetryWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryWatcher").finish_non_exhaustive()
    }
}

/// The watcher's state between events.
struct State<K> {
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    last_resource_version: String,
    current: Option<WatchStream<K>>,
    /// When the current (or last) watch was opened.
    opened: Option<Instant>,
    /// Whether the current watch delivered an object event.
    delivered: bool,
    config: Backoff,
    backoff: Backoff,
    /// How long to wait before opening the next watch.
    delay: Duration,
    done: bool,
}

impl<K: Object> State<K> {
    /// The next item, or `None` once the stream has ended.
    async fn next(&mut self) -> Option<Result<WatchEvent<K>, Error>> {
        loop {
            if self.done {
                return None;
            }
            let Some(stream) = self.current.as_mut() else {
                if let Some(failure) = self.open().await {
                    return Some(Err(failure));
                }
                continue;
            };
            match stream.next().await {
                None => self.ended_normally(),
                // A watch source may report the server's ERROR event as an `Err` item (the
                // REST client does) or as a `WatchEvent::Error`: both are handled alike.
                Some(Err(e)) => {
                    if e.is_resource_expired() {
                        self.done = true;
                        self.current = None;
                        return Some(Err(e));
                    }
                    tracing::debug!(error = %e, resource_version = %self.last_resource_version,
                        "RetryWatcher: the watch failed; resuming");
                    self.failed(e.retry_after());
                }
                Some(Ok(event)) => match event {
                    WatchEvent::Added(ref obj)
                    | WatchEvent::Modified(ref obj)
                    | WatchEvent::Deleted(ref obj) => {
                        let rv = obj.resource_version();
                        if rv.is_empty() {
                            self.done = true;
                            return Some(Err(Error::invalid_request(format!(
                                "RetryWatcher: object {:?} in a watch event has no \
                                 resourceVersion, so the watch cannot be resumed",
                                obj.name()
                            ))));
                        }
                        self.last_resource_version = rv.to_owned();
                        self.delivered = true;
                        return Some(Ok(event));
                    }
                    WatchEvent::Bookmark(bookmark) => {
                        if !bookmark.resource_version.is_empty() {
                            self.last_resource_version = bookmark.resource_version;
                        }
                    }
                    WatchEvent::Error(status) => {
                        let e = Error::from_status(*status);
                        if e.is_resource_expired() {
                            self.done = true;
                            self.current = None;
                            return Some(Err(e));
                        }
                        tracing::debug!(error = %e, resource_version = %self.last_resource_version,
                            "RetryWatcher: the watch sent an error; resuming");
                        self.failed(e.retry_after());
                    }
                },
            }
        }
    }

    /// Waits the delay and opens a watch from the last version; returns the error that ends
    /// the stream, if the server answered 410, 401 or 403.
    async fn open(&mut self) -> Option<Error> {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let options = ListOptions::default()
            .resource_version(self.last_resource_version.clone())
            .allow_watch_bookmarks(true);
        self.opened = Some(Instant::now());
        self.delivered = false;
        let lister_watcher = Arc::clone(&self.lister_watcher);
        match lister_watcher.watch(options).await {
            Ok(stream) => {
                self.current = Some(stream);
                None
            }
            Err(e) if e.is_resource_expired() => {
                self.done = true;
                Some(e)
            }
            Err(e) if e.is_forbidden() || e.is_unauthorized() => {
                tracing::warn!(error = %e, "RetryWatcher: the watch was refused; check the \
                    client's credentials and its permission to watch the resource");
                self.done = true;
                Some(e)
            }
            Err(e) => {
                tracing::debug!(error = %e, "RetryWatcher: opening the watch failed");
                self.failed(e.retry_after());
                None
            }
        }
    }

    /// The server ended the watch: reopen it once the shortest restart interval has passed
    /// since it opened.
    fn ended_normally(&mut self) {
        self.current = None;
        let lasted = self.opened.map_or(Duration::ZERO, |at| at.elapsed());
        if self.delivered || lasted >= self.config.duration {
            self.backoff = self.config;
        }
        self.delay = self.config.duration.saturating_sub(lasted);
    }

    /// The watch failed: wait the next backoff delay (at least `retry_after`), starting the
    /// sequence again if this watch had delivered events.
    fn failed(&mut self, retry_after: Option<Duration>) {
        self.current = None;
        if self.delivered {
            self.backoff = self.config;
        }
        self.delay = self
            .backoff
            .step()
            .max(retry_after.unwrap_or(Duration::ZERO));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use kclient_apimachinery::meta::v1::ObjectMeta;
    use kclient_apimachinery::{Bookmark, ObjectList, Status, StatusReason};
    use kclient_cache::ListWatch;
    use parking_lot::Mutex;

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

    type Script = VecDeque<Result<Vec<Result<WatchEvent<Thing>, Error>>, Error>>;

    /// A source whose watches follow a script: each entry is one watch (its events, then the
    /// end of the stream) or the error opening it returns. Records each watch's options.
    fn scripted(script: Script) -> (ListWatch<Thing>, Arc<Mutex<Vec<ListOptions>>>) {
        let script = Arc::new(Mutex::new(script));
        let seen: Arc<Mutex<Vec<ListOptions>>> = Arc::default();
        let recorded = Arc::clone(&seen);
        let lw = ListWatch::new(
            |_| async { Ok(ObjectList::<Thing>::default()) },
            move |opts: ListOptions| {
                recorded.lock().push(opts);
                let next = script.lock().pop_front();
                async move {
                    match next {
                        Some(Ok(events)) => Ok(futures_util::stream::iter(events).boxed()),
                        Some(Err(e)) => Err(e),
                        // The script is over: a watch that never ends.
                        None => Ok(futures_util::stream::pending().boxed()),
                    }
                }
            },
        );
        (lw, seen)
    }

    fn gone() -> Status {
        Status::failure(
            410,
            StatusReason::Expired,
            "too old resource version: 1 (5)",
        )
    }

    #[tokio::test(start_paused = true)]
    async fn resumes_from_the_last_event_and_bookmark_and_ends_on_gone() {
        let (lw, seen) = scripted(VecDeque::from([
            Ok(vec![
                Ok(WatchEvent::Added(thing("a", "11"))),
                Ok(WatchEvent::Bookmark(Bookmark {
                    resource_version: "15".into(),
                    ..Bookmark::default()
                })),
            ]),
            Err(Error::new_internal_error("etcd is busy")),
            Ok(vec![
                Ok(WatchEvent::Modified(thing("a", "16"))),
                Err(Error::invalid_request("connection reset")),
            ]),
            Ok(vec![Ok(WatchEvent::Error(Box::new(gone())))]),
        ]));
        let mut watcher = RetryWatcher::new("10", lw).expect("a real version");
        let first = watcher.next().await.unwrap().unwrap();
        assert_eq!(first, WatchEvent::Added(thing("a", "11")));
        let second = watcher.next().await.unwrap().unwrap();
        assert_eq!(second, WatchEvent::Modified(thing("a", "16")));
        let last = watcher.next().await.unwrap().unwrap_err();
        assert!(last.is_resource_expired(), "{last}");
        assert!(watcher.next().await.is_none());
        let versions: Vec<(Option<String>, bool)> = seen
            .lock()
            .iter()
            .map(|o| (o.resource_version.clone(), o.allow_watch_bookmarks))
            .collect();
        assert_eq!(
            versions,
            [
                (Some("10".into()), true),
                (Some("15".into()), true), // after the bookmark
                (Some("15".into()), true), // the failed open
                (Some("16".into()), true), // after the cut
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn backs_off_between_failures_and_restarts_closed_watches_after_the_minimum() {
        let (lw, _) = scripted(VecDeque::from([
            Err(Error::new_internal_error("down")),
            Err(Error::new_internal_error("down")),
            Err(Error::new_internal_error("down")),
            Ok(vec![]),
            Ok(vec![]),
            Ok(vec![Ok(WatchEvent::Added(thing("b", "20")))]),
        ]));
        let backoff = Backoff {
            jitter: 0.0,
            ..RETRY_WATCHER_BACKOFF
        };
        let start = Instant::now();
        let mut watcher = RetryWatcher::with_backoff("10", lw, backoff).unwrap();
        let event = watcher.next().await.unwrap().unwrap();
        assert_eq!(event, WatchEvent::Added(thing("b", "20")));
        // Three failures: 1 + 2 + 4 s; then two watches closed at once, each reopened 1 s
        // after it opened.
        assert_eq!(start.elapsed(), Duration::from_secs(1 + 2 + 4 + 1 + 1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_gone_error_item_or_a_gone_answer_ends_the_stream() {
        for script in [
            // The REST client reports the server's ERROR event as an error item.
            Ok(vec![Err(Error::from_status(gone()))]),
            // The watch request itself answered 410.
            Err(Error::from_status(gone())),
        ] {
            let (lw, seen) = scripted(VecDeque::from([script]));
            let mut watcher = RetryWatcher::new("3", lw).unwrap();
            let err = watcher.next().await.unwrap().unwrap_err();
            assert!(err.is_resource_expired(), "{err}");
            assert!(watcher.next().await.is_none());
            assert_eq!(seen.lock().len(), 1, "no retry after 410");
        }
    }

    #[test]
    fn refuses_versions_it_cannot_resume_from() {
        for rv in ["", "0"] {
            let (lw, _) = scripted(VecDeque::new());
            let err = RetryWatcher::new(rv, lw).unwrap_err();
            assert!(err.to_string().contains("cannot start"), "{err}");
        }
    }
}
