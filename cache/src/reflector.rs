//! The Reflector: keeps a store in step with the API server by listing, then watching
//! (client-go's `reflector.go` and the list half of `tools/pager`).
//!
//! The full semantics are documented on the public type.

mod retry_with_deadline;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{
    Error, ListOptions, Object, ResourceVersionMatch, StatusCause, WatchEvent,
};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::listing::Listing;
use crate::listwatch::{ListerWatcher, WatchStream};
use crate::object_key::object_key;
use crate::pager::{DEFAULT_PAGE_SIZE, ListPager, Listed, PagedList};
use crate::reflector_metrics::{self, RELIST_ERROR, RELIST_EXPIRED};
use crate::store::ReflectorStore;
use kclient_flowcontrol::{Backoff, DelayWithReset};
use retry_with_deadline::RetryWithDeadline;

/// A watch shorter than this with no event is a failure (client-go's `VeryShortWatchError`).
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// How long a watch-list may go without an event before a warning (client-go's
/// `initialEventsEndBookmarkTicker`).
const INITIAL_EVENTS_WARNING: Duration = Duration::from_secs(10);

/// The smallest server-side watch timeout; the actual one is random in [min, 2 min).
const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// A watch that the server ends normally after at least this long is re-opened at once; a
/// shorter one (a server shutting down, a proxy cutting streams) waits the backoff delay, so
/// no server can make the reflector loop. The apiserver itself ends a watch only at its
/// `timeoutSeconds`, never under 5 minutes.
const HEALTHY_WATCH: Duration = Duration::from_secs(60);

/// Internal errors further apart than this are separate outages: each starts its own
/// `max_internal_error_retry_duration` (the minute client-go's reflector gives its
/// `RetryWithDeadline`).
const INTERNAL_ERROR_RESET_PERIOD: Duration = Duration::from_secs(60);

/// A function that adjusts each object once, as it is decoded and before it is shared
/// (client-go's `TransformFunc`, typically dropping `managedFields` to save memory).
pub type TransformFunc<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// Called with the reflector's name and the error of each failed list-and-watch round
/// (client-go's `WatchErrorHandler`).
pub type WatchErrorHandler = Arc<dyn Fn(&str, &Error) + Send + Sync>;

/// Decides at each resync tick whether to resync (client-go's `ShouldResync`).
pub type ShouldResyncFunc = Arc<dyn Fn() -> bool + Send + Sync>;

/// How a [`Reflector`] lists, watches and retries (client-go's `ReflectorOptions`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReflectorOptions {
    /// A name for logs and the watch-error handler.
    pub name: String,
    /// How often to call the store's `resync` while watching; zero turns it off.
    pub resync_period: Duration,
    /// Get the initial state from a `sendInitialEvents` watch rather than a LIST (client-go's
    /// `WatchListClient` gate, on by default since 1.35). Falls back to LIST on any error, and
    /// is ignored for sources that do not support it.
    pub use_watch_list: bool,
    /// The smallest server-side watch timeout; values under 5 minutes are ignored. The actual
    /// timeout is random in [min, 2 min).
    pub min_watch_timeout: Duration,
    /// The list page size; 0 means the default (500, and no pagination when listing at a
    /// specific resource version). client-go's `WatchListPageSize`.
    pub page_size: i64,
    /// The retry delays: client-go's reflector backoff by default, 800 ms doubling up to
    /// 30 s, each stretched by up to 100 % jitter, so a capped delay lies in [30 s, 60 s).
    /// Its `steps` only matter until the cap is reached; after that the delay stays capped.
    pub backoff: Backoff,
    /// How long without a failure starts the delays again from the first: 2 minutes, as in
    /// client-go.
    pub backoff_reset_after: Duration,
    /// How long to keep re-watching after internal errors (500) before relisting; zero means
    /// relist at once, as client-go's default. The time runs from the first of a series of
    /// internal errors each less than a minute after the previous one; a later one, or the
    /// first after a relist, starts a new series (client-go's `RetryWithDeadline`).
    pub max_internal_error_retry_duration: Duration,
    /// After each list or watch-list, compare what was received with a fresh LIST at exactly
    /// the synced resource version, and report any difference loudly: an `error` log naming
    /// the missing, extra and different keys, and the watch-error handler (client-go's
    /// `CheckDataConsistency`). It costs one more LIST per sync, so it is meant for tests.
    /// Defaults to whether the `KUBE_WATCHLIST_INCONSISTENCY_DETECTOR` environment variable is
    /// `true`, the variable client-go reads for the same check.
    pub check_data_consistency: bool,
}

impl ReflectorOptions {
    /// A name for logs and the watch-error handler.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How often to call the store's `resync` while watching; zero turns it off.
    pub fn resync_period(mut self, resync_period: Duration) -> Self {
        self.resync_period = resync_period;
        self
    }

    /// Get the initial state from a `sendInitialEvents` watch rather than a LIST (client-go's
    /// `WatchListClient` gate, on by default since 1.35). Falls back to LIST on any error, and
    /// is ignored for sources that do not support it.
    pub fn use_watch_list(mut self, use_watch_list: bool) -> Self {
        self.use_watch_list = use_watch_list;
        self
    }

    /// The smallest server-side watch timeout; values under 5 minutes are ignored. The actual
    /// timeout is random in [min, 2 min).
    pub fn min_watch_timeout(mut self, min_watch_timeout: Duration) -> Self {
        self.min_watch_timeout = min_watch_timeout;
        self
    }

    /// The list page size; 0 means the default (500, and no pagination when listing at a
    /// specific resource version). client-go's `WatchListPageSize`.
    pub fn page_size(mut self, page_size: i64) -> Self {
        self.page_size = page_size;
        self
    }

    /// The retry delays: client-go's reflector backoff by default, 800 ms doubling up to
    /// 30 s, each stretched by up to 100 % jitter, so a capped delay lies in [30 s, 60 s).
    /// Its `steps` only matter until the cap is reached; after that the delay stays capped.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// How long without a failure starts the delays again from the first: 2 minutes, as in
    /// client-go.
    pub fn backoff_reset_after(mut self, backoff_reset_after: Duration) -> Self {
        self.backoff_reset_after = backoff_reset_after;
        self
    }

    /// How long to keep re-watching after internal errors (500) before relisting; zero means
    /// relist at once, as client-go's default. The time runs from the first of a series of
    /// internal errors each less than a minute after the previous one; a later one, or the
    /// first after a relist, starts a new series (client-go's `RetryWithDeadline`).
    pub fn max_internal_error_retry_duration(
        mut self,
        max_internal_error_retry_duration: Duration,
    ) -> Self {
        self.max_internal_error_retry_duration = max_internal_error_retry_duration;
        self
    }

    /// After each list or watch-list, compare what was received with a fresh LIST at exactly
    /// the synced resource version, and report any difference loudly: an `error` log naming
    /// the missing, extra and different keys, and the watch-error handler (client-go's
    /// `CheckDataConsistency`). It costs one more LIST per sync, so it is meant for tests.
    /// Defaults to whether the `KUBE_WATCHLIST_INCONSISTENCY_DETECTOR` environment variable is
    /// `true`, the variable client-go reads for the same check.
    pub fn check_data_consistency(mut self, check_data_consistency: bool) -> Self {
        self.check_data_consistency = check_data_consistency;
        self
    }
}

/// The reflector's default retry delays (client-go's): 800 ms doubling up to a 30 s cap,
/// with up to 100 % jitter.
pub const REFLECTOR_BACKOFF: Backoff = Backoff {
    duration: Duration::from_millis(800),
    factor: 2.0,
    jitter: 1.0,
    steps: u32::MAX,
    cap: Duration::from_secs(30),
};

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            name: "reflector".to_owned(),
            resync_period: Duration::ZERO,
            use_watch_list: true,
            min_watch_timeout: MIN_WATCH_TIMEOUT,
            page_size: 0,
            backoff: REFLECTOR_BACKOFF,
            backoff_reset_after: Duration::from_secs(120),
            max_internal_error_retry_duration: Duration::ZERO,
            check_data_consistency: std::env::var("KUBE_WATCHLIST_INCONSISTENCY_DETECTOR")
                .is_ok_and(|v| v == "true"),
        }
    }
}

/// The resource version bookkeeping, under one lock.
#[derive(Debug, Default)]
struct Versions {
    /// The version of the last list, watch event or bookmark.
    last_sync: String,
    /// The last version proved unusable (410 or too large): the next list uses `""`.
    unavailable: bool,
}

/// Lists and watches one kind of object into a [`ReflectorStore`] (client-go's `Reflector`).
///
/// # Behaviour
///
/// - **Initial state.** With `use_watch_list` (and a source that supports it) the reflector
///   opens a watch with `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan` and
///   bookmarks, collects the initial events until the bookmark annotated
///   `k8s.io/initial-events-end: "true"`, replaces the store with them and keeps reading the
///   same stream. A 429 or a refused connection (on opening, or as an ERROR event in the
///   stream) waits the backoff delay and tries again, a 410 or a "too large resource
///   version" tries again once at the latest version; any other failure (an error, an event that
///   does not decode, a stream that ends before the bookmark) falls back to a LIST at once,
///   as client-go does. Otherwise it LISTs: the first list at
///   resourceVersion `"0"` (the watch cache), later ones at the last synced version, paginated
///   by `limit=500` and continue tokens. Pagination is off for a list at a specific version
///   unless the first list came back paginated or `page_size` is set. A 410 on a continue page
///   falls back to one full list at the original version; a 410 (or "too large resource
///   version") on the list marks the version unusable and lists again at once with `""`
///   (a quorum read).
/// - **Watch.** From the list's resource version, with bookmarks and a random server timeout
///   in [5 min, 10 min). ADDED/MODIFIED/DELETED feed the store, BOOKMARK only advances the
///   resource version, ERROR ends the watch with its status as the error. A watch that the
///   server ends normally after running a minute or more is reopened at the last seen version
///   at once; a shorter one, or one whose connection broke, is reopened after the backoff
///   delay. On 410 Expired the reflector relists at the last version (after the backoff
///   delay). On 429 or connection refused it backs off and re-watches without relisting. On
///   an internal error (500) it backs off and re-watches while
///   [`max_internal_error_retry_duration`](ReflectorOptions::max_internal_error_retry_duration)
///   allows (zero by default), then relists. An
///   event that does not decode ends the watch with an internal error (client-go's
///   `StreamWatcher` does the same): it is reported, and the reflector relists after the
///   backoff delay, so one bad object costs one list per backoff period, not a request loop.
///   A watch that ends within a second with no event is a failure too (relist after
///   backoff). An event whose object is of another kind than the informer's is dropped
///   before it is decoded, with an `error` log, and the watch goes on (client-go's reflector
///   checks `expectedType` / `expectedGVK`); the reflector only sees objects, so this check
///   is the lister-watcher's: informers' `RestListWatch` asks its watch stream for it
///   (`kclient_rest::WatchStream::expect_kind`).
/// - **Backoff.** Every path that lists or watches again after a failure waits the one
///   [`Backoff`](crate::Backoff) (800 ms doubling to 30 s with jitter, reset after 2 min
///   without failure): failed lists, watches that could not open or failed, 429s, broken
///   connections and short watches. In steady failure that is at most one request every
///   30–60 s.
/// - **Resync.** While watching, every `resync_period` (when non-zero) it calls the store's
///   `resync` if the `should_resync` hook (if any) agrees.
/// - **Errors.** Every failure (a failed list, a watch that could not open, a watch that
///   ended with an error other than the routine 410, a broken connection, an event that does
///   not decode, a failed watch-list) goes to the watch-error handler, which logs it by
///   default; client-go calls
///   its handler only for failed rounds, kclient for each failure, so an application can tell
///   that its informer is cut off. [`last_successful_sync`](Reflector::last_successful_sync)
///   says when the server was last heard from.
///
/// # Memory
///
/// Objects are decoded once by the [`ListerWatcher`], transformed in place (the informer's
/// transform, e.g. dropping managedFields) and wrapped in an `Arc` as each page arrives; the
/// page's own buffer is freed before the next page is fetched. Until the last page the
/// reflector holds the `Arc`s in one vector (8 bytes per object beyond the objects, which the
/// store keeps anyway), then hands that vector to the store's `replace`: a relist can only
/// be applied once it is complete, because the objects missing from it are the deletions.
/// A listed object that the store already holds at the same resource version is swapped for
/// the held `Arc` as its page is consumed (see [`ReflectorStore::get_known`]), so a relist
/// keeps a second copy only of the objects that changed, and only until the DeltaFIFO hands
/// them to the cache.
///
/// # State machine
///
/// [`Reflector::run`] drives a private `State` through one `step` function; the resync timer
/// runs beside it.
///
/// # Example
///
/// A reflector feeding an [`Indexer`](crate::Indexer) directly (no handlers) from an
/// in-memory source:
///
/// ```
/// use std::sync::Arc;
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_apimachinery::{ListMeta, ListOptions, ObjectList};
/// use kclient_cache::{CancellationToken, Indexer, Indexers, ListWatch, Reflector, ReflectorOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let lw = ListWatch::new(
///     |_opts: ListOptions| async {
///         Ok(ObjectList {
///             metadata: ListMeta { resource_version: "7".into(), ..ListMeta::default() },
///             items: vec![pod("default", "web", "7")],
///         })
///     },
///     |_opts: ListOptions| async { Ok(futures_util::stream::pending()) },
/// );
/// let cache = Indexer::<Pod>::new(Indexers::new());
/// let options = ReflectorOptions::default().use_watch_list(false);
/// let reflector = Arc::new(Reflector::new(Arc::new(lw), Arc::new(cache.clone()), options));
///
/// let cancel = CancellationToken::new();
/// let task = tokio::spawn({
///     let (reflector, cancel) = (reflector.clone(), cancel.clone());
///     async move { reflector.run(cancel).await }
/// });
/// while cache.is_empty() {
///     tokio::task::yield_now().await;
/// }
/// assert_eq!(reflector.last_sync_resource_version(), "7");
/// cancel.cancel();
/// task.await.unwrap();
/// # }
/// ```
pub struct Reflector<K> {
    options: ReflectorOptions,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    store: Arc<dyn ReflectorStore<K>>,
    should_resync: Option<ShouldResyncFunc>,
    watch_error_handler: Option<WatchErrorHandler>,
    transform: Option<TransformFunc<K>>,
    versions: Mutex<Versions>,
    /// The first (RV "0") list came back paginated: keep paginating later lists.
    paginated_result: AtomicBool,
    /// True while watching: resync ticks only act then.
    watching: AtomicBool,
    backoff: Mutex<DelayWithReset<std::time::Instant>>,
    /// When a list completed, an event arrived or a watch ended well last (`last_successful_sync`).
    last_success: Mutex<Option<Instant>>,
    /// Whether a watch that failed with an internal error is re-opened rather than relisted;
    /// a new window after each list, as client-go makes one per watch loop.
    internal_error_retry: Mutex<RetryWithDeadline>,
}

/// Where the list-and-watch loop is.
enum State<K> {
    /// Get the full state: a watch-list stream if enabled, else a LIST.
    Sync,
    /// Open a watch at the last synced resource version.
    Watch,
    /// Read the next event of an open watch.
    Watching(OpenWatch<K>),
    /// Wait the backoff delay, then go on with `Sync` (relist) or `Watch` (re-watch).
    Backoff { relist: bool },
}

struct OpenWatch<K> {
    stream: WatchStream<K>,
    started: Instant,
    events: usize,
    /// Whether the watch started at a real version, so ADDED events may advance it.
    propagate_rv_from_start: bool,
    /// Whether an event other than ADDED was seen (client-go's `eventReceivedBesidesAdded`).
    seen_non_add: bool,
}

/// What ended a watch.
enum WatchEnd {
    /// The server closed the stream (its timeout, or shutting down).
    Closed,
    /// The connection broke.
    Broken(Error),
    /// An error: an ERROR event, an event that does not decode, or a failed stream.
    Failed(Error),
}

impl<K: Object> Reflector<K> {
    /// A reflector feeding `store` from `lister_watcher`.
    pub fn new(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn ReflectorStore<K>>,
        options: ReflectorOptions,
    ) -> Self {
        let backoff = options
            .backoff
            .delay_with_reset(options.backoff_reset_after);
        let internal_error_retry = RetryWithDeadline::new(
            options.max_internal_error_retry_duration,
            INTERNAL_ERROR_RESET_PERIOD,
            Error::is_internal_error,
        );
        Reflector {
            options,
            lister_watcher,
            store,
            should_resync: None,
            watch_error_handler: None,
            transform: None,
            versions: Mutex::new(Versions::default()),
            paginated_result: AtomicBool::new(false),
            watching: AtomicBool::new(false),
            backoff: Mutex::new(backoff),
            last_success: Mutex::new(None),
            internal_error_retry: Mutex::new(internal_error_retry),
        }
    }

    /// Sets the hook asked at each resync tick.
    pub fn with_should_resync(mut self, should_resync: ShouldResyncFunc) -> Self {
        self.should_resync = Some(should_resync);
        self
    }

    /// Sets the handler of list-and-watch errors (the default logs them).
    pub fn with_watch_error_handler(mut self, handler: WatchErrorHandler) -> Self {
        self.watch_error_handler = Some(handler);
        self
    }

    /// Sets the transform applied to each object before it is stored.
    pub fn with_transform(mut self, transform: TransformFunc<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// The reflector's name.
    pub fn name(&self) -> &str {
        &self.options.name
    }

    /// The resource version of the last list, event or bookmark seen (client-go's
    /// `LastSyncResourceVersion`).
    pub fn last_sync_resource_version(&self) -> String {
        self.versions.lock().last_sync.clone()
    }

    /// When the server was last heard from successfully: a list or watch-list completed, an
    /// event or bookmark arrived, or the server ended a watch that lasted a second or more (a
    /// watch answered with only an in-stream `ERROR` is not a success). `None` before the first success. A value that stops
    /// advancing while errors reach the watch-error handler means the reflector is cut off
    /// (the apiserver sends a bookmark about once a minute on an idle watch).
    pub fn last_successful_sync(&self) -> Option<std::time::Instant> {
        self.last_success.lock().map(Instant::into_std)
    }

    fn mark_success(&self) {
        *self.last_success.lock() = Some(Instant::now());
    }

    /// Lists and watches until `cancel` fires.
    pub async fn run(&self, cancel: CancellationToken) {
        tracing::debug!(reflector = self.name(), "starting reflector");
        let main = async {
            let mut state = State::Sync;
            loop {
                state = self.step(state).await;
            }
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {}
            () = main => {}
            () = self.resync_loop() => {}
        }
        self.watching.store(false, Ordering::Release);
        tracing::debug!(reflector = self.name(), "stopping reflector");
    }

    /// Advances the list-and-watch loop by one step.
    async fn step(&self, state: State<K>) -> State<K> {
        match state {
            State::Sync => {
                let span = if self.last_sync_resource_version().is_empty() {
                    tracing::info_span!(
                        "reflector.list",
                        reflector = self.name(),
                        resource = resource_of::<K>(),
                        resource_version = tracing::field::Empty,
                    )
                } else {
                    tracing::info_span!(
                        "reflector.relist",
                        reflector = self.name(),
                        resource = resource_of::<K>(),
                        resource_version = tracing::field::Empty,
                    )
                };
                self.sync().instrument(span).await
            }
            State::Watch => {
                let span = tracing::info_span!(
                    "reflector.watch",
                    reflector = self.name(),
                    resource = resource_of::<K>(),
                    resource_version = %self.rewatch_resource_version(),
                );
                match self.open_watch().instrument(span).await {
                    // Not a success yet: a server can answer 200 and then only an ERROR.
                    Ok(open) => State::Watching(open),
                    Err(e) => {
                        self.report(&e);
                        let relist = !is_watch_error_retriable(&e);
                        if relist {
                            self.count_relist(&e);
                        }
                        State::Backoff { relist }
                    }
                }
            }
            State::Watching(mut open) => match self.next_event(&mut open).await {
                None => State::Watching(open),
                Some(end) => {
                    let lasted = open.started.elapsed();
                    let short = matches!(end, WatchEnd::Closed)
                        && open.events == 0
                        && lasted < VERY_SHORT_WATCH;
                    if let Some(m) = reflector_metrics::provider() {
                        m.watch_ended(self.name(), lasted, open.events, short);
                    }
                    self.after_watch_end(end, &open)
                }
            },
            State::Backoff { relist } => {
                self.backoff().await;
                if relist { State::Sync } else { State::Watch }
            }
        }
    }

    /// Gets the full state (the `Sync` step): a watch-list if enabled, else a LIST.
    async fn sync(&self) -> State<K> {
        self.watching.store(false, Ordering::Release);
        // The watches that follow are a new watch loop (client-go's `watch`, which makes its
        // own `RetryWithDeadline`).
        self.internal_error_retry.lock().reset();
        if self.options.use_watch_list && self.lister_watcher.supports_watch_list() {
            match self.watch_list().await {
                Ok(open) => return self.start_watching(open),
                Err(e) => {
                    self.report(&e);
                    tracing::debug!(
                        reflector = self.name(),
                        "watch-list failed, falling back to a list"
                    );
                }
            }
        }
        match self.list().await {
            Ok(()) => {
                tracing::debug!(reflector = self.name(), "caches populated");
                self.mark_success();
                self.watching.store(true, Ordering::Release);
                State::Watch
            }
            Err(e) => {
                self.report(&e);
                State::Backoff { relist: true }
            }
        }
    }

    /// Where to go after a watch ended.
    fn after_watch_end(&self, end: WatchEnd, open: &OpenWatch<K>) -> State<K> {
        match end {
            WatchEnd::Closed => {
                let lasted = open.started.elapsed();
                if open.events == 0 && lasted < VERY_SHORT_WATCH {
                    self.report(&Error::new_internal_error(
                            "very short watch: the watch lasted less than a second and received no event",
                        ));
                    if let Some(m) = reflector_metrics::provider() {
                        m.relist(self.name(), RELIST_ERROR);
                    }
                    State::Backoff { relist: true }
                } else {
                    // The server ended a watch that lasted: it was heard from.
                    self.mark_success();
                    if lasted < HEALTHY_WATCH {
                        tracing::debug!(
                            reflector = self.name(),
                            ?lasted,
                            "watch ended early, re-watching after the backoff delay"
                        );
                        State::Backoff { relist: false }
                    } else {
                        State::Watch
                    }
                }
            }
            WatchEnd::Broken(e) => {
                self.report(&e);
                State::Backoff { relist: false }
            }
            WatchEnd::Failed(e) => {
                // A 410 on a running watch is routine (the server's history moved on):
                // the relist answers it, and it is logged at debug level only.
                if !e.is_resource_expired() {
                    self.report(&e);
                }
                self.after_watch_error(&e)
            }
        }
    }

    /// Counts a relist caused by `e`.
    fn count_relist(&self, e: &Error) {
        if let Some(m) = reflector_metrics::provider() {
            let reason = if e.is_resource_expired() || is_too_large_resource_version(e) {
                RELIST_EXPIRED
            } else {
                RELIST_ERROR
            };
            m.relist(self.name(), reason);
        }
    }

    /// Waits the next delay of the one backoff sequence.
    async fn backoff(&self) {
        // On tokio's clock, so that a paused test clock moves it.
        let delay = self.backoff.lock().next_delay(Instant::now().into_std());
        tokio::time::sleep(delay).await;
    }

    /// Where to go after a watch failed (client-go's switch at the end of `watch`).
    fn after_watch_error(&self, e: &Error) -> State<K> {
        let internal_error_retry = {
            let now = Instant::now();
            let mut retry = self.internal_error_retry.lock();
            retry.after(e, now);
            e.is_internal_error() && retry.should_retry(now)
        };
        if e.is_resource_expired() {
            tracing::debug!(reflector = self.name(), error = %e, "watch closed: relisting");
            self.count_relist(e);
            State::Backoff { relist: true }
        } else if e.is_too_many_requests() {
            tracing::debug!(reflector = self.name(), "watch returned 429, backing off");
            State::Backoff { relist: false }
        } else if internal_error_retry {
            tracing::debug!(reflector = self.name(), error = %e, "retrying watch after internal error");
            State::Backoff { relist: false }
        } else {
            tracing::warn!(reflector = self.name(), error = %e, "watch ended with error");
            self.count_relist(e);
            State::Backoff { relist: true }
        }
    }

    fn start_watching(&self, open: OpenWatch<K>) -> State<K> {
        self.watching.store(true, Ordering::Release);
        State::Watching(open)
    }

    /// Hands a failure to the watch-error handler, or logs it with its whole cause chain.
    fn report(&self, e: &Error) {
        match &self.watch_error_handler {
            Some(handler) => handler(self.name(), e),
            None if e.is_resource_expired() => {
                tracing::debug!(reflector = self.name(), error = %ErrorChain(e), "watch closed")
            }
            None => tracing::warn!(
                reflector = self.name(),
                error = %ErrorChain(e),
                "failed to list and watch"
            ),
        }
    }

    /// Calls the store's resync while watching, one period after the previous check.
    ///
    /// The timer is re-armed after each check, as client-go's `resyncChan()` is, rather than
    /// ticking on a fixed schedule: a listener is due at `its last check + its period`, and a
    /// fixed tick that fires a hair before that would skip the whole round.
    async fn resync_loop(&self) {
        let period = self.options.resync_period;
        if period.is_zero() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(period).await;
            if !self.watching.load(Ordering::Acquire) {
                continue;
            }
            if self.should_resync.as_ref().is_none_or(|f| f()) {
                tracing::trace!(reflector = self.name(), "forcing resync");
                self.store.resync();
            }
        }
    }

    fn watch_timeout_seconds(&self) -> i64 {
        let min = self
            .options
            .min_watch_timeout
            .max(MIN_WATCH_TIMEOUT)
            .as_secs_f64();
        (min + rand::random::<f64>() * min) as i64
    }

    fn relist_resource_version(&self) -> String {
        let v = self.versions.lock();
        if v.unavailable {
            String::new()
        } else if v.last_sync.is_empty() {
            "0".to_owned()
        } else {
            v.last_sync.clone()
        }
    }

    fn rewatch_resource_version(&self) -> String {
        let v = self.versions.lock();
        if v.unavailable {
            String::new()
        } else {
            v.last_sync.clone()
        }
    }

    fn set_last_sync_resource_version(&self, rv: &str) {
        self.versions.lock().last_sync = rv.to_owned();
        if let Some(m) = reflector_metrics::provider() {
            m.last_resource_version(self.name(), rv);
        }
    }

    fn set_unavailable(&self, unavailable: bool) {
        self.versions.lock().unavailable = unavailable;
    }

    fn prepare(&self, mut obj: K) -> Arc<K> {
        if let Some(transform) = &self.transform {
            transform(&mut obj);
        }
        Arc::new(obj)
    }

    /// [`prepare`](Self::prepare) for listed objects: an object the store already holds at
    /// the same resource version is replaced by the held `Arc`, and the fresh copy is freed
    /// now rather than after the relist is applied.
    fn prepare_listed(&self, obj: K) -> Arc<K> {
        let rv = obj.resource_version();
        if !rv.is_empty()
            && let Some(known) = self.store.get_known(&self.store.key_of(&obj))
            && known.resource_version() == rv
        {
            return known;
        }
        self.prepare(obj)
    }

    /// LISTs everything and replaces the store (client-go's `Reflector.list`).
    async fn list(&self) -> Result<(), Error> {
        let rv = self.relist_resource_version();
        let page_size = if self.options.page_size != 0 {
            self.options.page_size
        } else if self.paginated_result.load(Ordering::Acquire) || rv.is_empty() || rv == "0" {
            DEFAULT_PAGE_SIZE
        } else {
            0
        };
        tracing::Span::current().record("resource_version", rv.as_str());
        let started = Instant::now();
        // Dropped unfinished if the list fails: a store's replacement is then abandoned.
        let mut listing = Listing::begin(&*self.store, false, self.options.check_data_consistency);
        let listed = match self.list_all(&rv, page_size, &mut listing).await {
            Err(e) if e.is_resource_expired() || is_too_large_resource_version(&e) => {
                tracing::debug!(reflector = self.name(), error = %e, "list at {rv:?} failed, listing at the latest version");
                self.count_relist(&e);
                self.set_unavailable(true);
                listing.restart();
                self.list_all(&self.relist_resource_version(), page_size, &mut listing)
                    .await
            }
            other => other,
        };
        let listed = listed?;
        if rv == "0" && listed.paginated {
            self.paginated_result.store(true, Ordering::Release);
        }
        self.set_unavailable(false);
        if let Some(m) = reflector_metrics::provider() {
            m.list(self.name(), started.elapsed(), listing.len());
        }
        let received = listing.finish(&listed.resource_version);
        self.set_last_sync_resource_version(&listed.resource_version);
        if let Some(received) = received {
            self.check_data_consistency(received, &listed.resource_version)
                .await;
        }
        Ok(())
    }

    /// Lists every page through the [`ListPager`], preparing each object as its page
    /// arrives and adding it to `listing`; an expired continue token falls back to one full
    /// list at the same version (and `listing` starts again).
    async fn list_all(
        &self,
        rv: &str,
        page_size: i64,
        listing: &mut Listing<'_, K>,
    ) -> Result<PagedList<()>, Error> {
        let mut options = ListOptions::default();
        options.resource_version = Some(rv.to_owned()).filter(|rv| !rv.is_empty());
        ListPager::new(Arc::clone(&self.lister_watcher))
            .with_page_size(page_size)
            .list_each(options, |listed| match listed {
                Listed::Page(len) => listing.reserve(len),
                Listed::Item(obj) => listing.add(self.prepare_listed(obj)),
                Listed::Restart => listing.restart(),
            })
            .await
    }

    /// Opens a watch at the last synced version.
    async fn open_watch(&self) -> Result<OpenWatch<K>, Error> {
        let rv = self.rewatch_resource_version();
        let propagate_rv_from_start = !rv.is_empty() && rv != "0";
        let mut options = ListOptions::default()
            .timeout_seconds(self.watch_timeout_seconds())
            .allow_watch_bookmarks(true);
        options.resource_version = Some(rv).filter(|rv| !rv.is_empty());
        let started = Instant::now();
        let stream = self.lister_watcher.watch(options).await?;
        if let Some(m) = reflector_metrics::provider() {
            m.watch_started(self.name());
        }
        Ok(OpenWatch {
            stream,
            started,
            events: 0,
            propagate_rv_from_start,
            seen_non_add: false,
        })
    }

    /// Reads one event into the store. `None`: keep reading; `Some`: the watch ended.
    async fn next_event(&self, open: &mut OpenWatch<K>) -> Option<WatchEnd> {
        let event = match open.stream.next().await {
            None => return Some(WatchEnd::Closed),
            Some(Err(e)) if e.is_decode() => {
                return Some(WatchEnd::Failed(undecodable_event(&e)));
            }
            Some(Err(e)) if e.is_transport() => return Some(WatchEnd::Broken(e)),
            Some(Err(e)) => return Some(WatchEnd::Failed(e)),
            Some(Ok(event)) => event,
        };
        if let Some(m) = reflector_metrics::provider() {
            m.watch_event(self.name());
        }
        let rv = match event {
            WatchEvent::Error(status) => {
                return Some(WatchEnd::Failed(Error::from_status(*status)));
            }
            // The version is read before the transform, which may leave it out of the object
            // it keeps (as client-go reads it before its store transforms).
            WatchEvent::Added(obj) => {
                let rv = obj.resource_version().to_owned();
                self.store.add(self.prepare(obj));
                rv
            }
            WatchEvent::Modified(obj) => {
                open.seen_non_add = true;
                let rv = obj.resource_version().to_owned();
                self.store.update(self.prepare(obj));
                rv
            }
            WatchEvent::Deleted(obj) => {
                open.seen_non_add = true;
                let rv = obj.resource_version().to_owned();
                self.store.delete(self.prepare(obj));
                rv
            }
            WatchEvent::Bookmark(bookmark) => {
                open.seen_non_add = true;
                self.store.bookmark(&bookmark.resource_version);
                bookmark.resource_version
            }
        };
        // An in-stream ERROR (returned above) is not a success.
        self.mark_success();
        if open.propagate_rv_from_start || open.seen_non_add {
            self.set_last_sync_resource_version(&rv);
        }
        open.events += 1;
        None
    }

    /// Gets the initial state from a `sendInitialEvents` watch (client-go's `watchList`).
    /// On success the store holds the initial state and the open stream is returned; an
    /// error means "fall back to LIST".
    async fn watch_list(&self) -> Result<OpenWatch<K>, Error> {
        loop {
            let rv = self.rewatch_resource_version();
            let mut options = ListOptions::default()
                .resource_version_match(ResourceVersionMatch::NotOlderThan)
                .send_initial_events(true)
                .allow_watch_bookmarks(true)
                .timeout_seconds(self.watch_timeout_seconds());
            options.resource_version = Some(rv).filter(|rv| !rv.is_empty());
            let started = Instant::now();
            let mut stream = match self.lister_watcher.watch(options).await {
                Ok(stream) => stream,
                Err(e) => {
                    if self.retry_watch_list_after(&e).await {
                        continue;
                    }
                    return Err(e);
                }
            };
            // The initial events, by key, until the end bookmark.
            let mut initial =
                Listing::begin(&*self.store, true, self.options.check_data_consistency);
            let mut events = 0usize;
            let end_rv = loop {
                let next = match tokio::time::timeout(INITIAL_EVENTS_WARNING, stream.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        // client-go warns, and keeps waiting, when the end bookmark is late.
                        tracing::warn!(
                            reflector = self.name(),
                            events,
                            waited = ?started.elapsed(),
                            "awaiting the bookmark that ends the initial events: no event for 10s"
                        );
                        continue;
                    }
                };
                let event = match next {
                    None => {
                        return Err(Error::new_internal_error(format!(
                            "the watch-list stream ended after {events} events, before the bookmark that ends the initial events"
                        )));
                    }
                    Some(Err(e)) if e.is_decode() => return Err(undecodable_event(&e)),
                    // An ERROR event, as the REST client's streams yield it: an `Err` holding
                    // the server's status. Handled as `WatchEvent::Error` below.
                    Some(Err(e)) => {
                        if self.retry_watch_list_after(&e).await {
                            break None;
                        }
                        return Err(e);
                    }
                    Some(Ok(event)) => event,
                };
                events += 1;
                if let Some(m) = reflector_metrics::provider() {
                    m.watch_event(self.name());
                }
                match event {
                    WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                        initial.add(self.prepare_listed(obj));
                    }
                    WatchEvent::Deleted(obj) => initial.remove(&obj),
                    WatchEvent::Bookmark(bookmark) => {
                        if bookmark.is_initial_events_end() {
                            break Some(bookmark.resource_version);
                        }
                    }
                    // As in client-go, the status decides: a 410, or a version the server has
                    // not reached, asks again at the latest version; a 429 backs off and asks
                    // again; anything else falls back to a LIST.
                    WatchEvent::Error(status) => {
                        let e = Error::from_status(*status);
                        if self.retry_watch_list_after(&e).await {
                            break None;
                        }
                        return Err(e);
                    }
                }
            };
            // An ERROR the server asked us to retry: open the watch-list again.
            let Some(end_rv) = end_rv else {
                continue;
            };
            self.mark_success();
            self.set_unavailable(false);
            tracing::Span::current().record("resource_version", end_rv.as_str());
            if let Some(m) = reflector_metrics::provider() {
                m.list(self.name(), started.elapsed(), initial.len());
                m.watch_started(self.name());
            }
            let received = initial.finish(&end_rv);
            self.set_last_sync_resource_version(&end_rv);
            if let Some(received) = received {
                self.check_data_consistency(received, &end_rv).await;
            }
            return Ok(OpenWatch {
                stream,
                started,
                events,
                propagate_rv_from_start: true,
                seen_non_add: true,
            });
        }
    }

    /// Whether a watch-list attempt should be retried after `e`, sleeping or marking the
    /// version unusable as client-go does.
    async fn retry_watch_list_after(&self, e: &Error) -> bool {
        if is_watch_error_retriable(e) {
            self.report(e);
            self.backoff().await;
            return true;
        }
        let unavailable = self.versions.lock().unavailable;
        if !unavailable && (e.is_resource_expired() || is_too_large_resource_version(e)) {
            // Once: the next attempt asks for the latest version, which cannot be too old.
            self.count_relist(e);
            self.set_unavailable(true);
            return true;
        }
        false
    }
}

impl<K: Object> Reflector<K> {
    /// Compares what a sync received with a LIST at exactly `rv` (client-go's
    /// `CheckDataConsistency`); a difference is logged as an error and reported.
    async fn check_data_consistency(&self, received: HashMap<String, String>, rv: &str) {
        let options = ListOptions::default()
            .resource_version(rv.to_owned())
            .resource_version_match(ResourceVersionMatch::Exact);
        let listed = ListPager::new(Arc::clone(&self.lister_watcher))
            .list_map(options, |o| {
                (object_key(&o), o.resource_version().to_owned())
            })
            .await;
        let listed: HashMap<String, String> = match listed {
            Ok(listed) => listed.items.into_iter().collect(),
            Err(e) => {
                tracing::warn!(reflector = self.name(), error = %ErrorChain(&e), "cannot run the data consistency check");
                return;
            }
        };
        let Some(difference) = ConsistencyDifference::between(&received, &listed) else {
            tracing::debug!(
                reflector = self.name(),
                rv,
                items = listed.len(),
                "data consistency check passed"
            );
            return;
        };
        tracing::error!(reflector = self.name(), rv, %difference, "data consistency check failed");
        self.report(&Error::new_internal_error(format!(
            "data consistency check failed at resource version {rv}: {difference}"
        )));
    }
}

/// How a synced state differs from a LIST at the same version.
#[derive(Debug, PartialEq)]
struct ConsistencyDifference {
    /// Keys the LIST has and the sync lacks.
    missing: Vec<String>,
    /// Keys the sync has and the LIST lacks.
    extra: Vec<String>,
    /// Keys at another resource version.
    different: Vec<String>,
}

impl ConsistencyDifference {
    fn between(
        received: &HashMap<String, String>,
        listed: &HashMap<String, String>,
    ) -> Option<Self> {
        let mut missing: Vec<String> = listed
            .keys()
            .filter(|k| !received.contains_key(*k))
            .cloned()
            .collect();
        let mut extra: Vec<String> = received
            .keys()
            .filter(|k| !listed.contains_key(*k))
            .cloned()
            .collect();
        let mut different: Vec<String> = received
            .iter()
            .filter(|(k, rv)| listed.get(*k).is_some_and(|l| l != *rv))
            .map(|(k, _)| k.clone())
            .collect();
        if missing.is_empty() && extra.is_empty() && different.is_empty() {
            return None;
        }
        missing.sort();
        extra.sort();
        different.sort();
        Some(ConsistencyDifference {
            missing,
            extra,
            different,
        })
    }
}

impl std::fmt::Display for ConsistencyDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// At most this many keys of each kind are named.
        const SHOWN: usize = 10;
        let mut first = true;
        for (what, keys) in [
            ("missing", &self.missing),
            ("extra", &self.extra),
            ("at another version", &self.different),
        ] {
            if keys.is_empty() {
                continue;
            }
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            write!(f, "{} {what}: ", keys.len())?;
            let shown: Vec<&str> = keys.iter().take(SHOWN).map(String::as_str).collect();
            f.write_str(&shown.join(", "))?;
            if keys.len() > SHOWN {
                f.write_str(", ...")?;
            }
        }
        Ok(())
    }
}

/// 429 and connection refused: back off and re-watch without relisting.
/// The object type's name without its path (`ConfigMap`), for spans.
fn resource_of<K>() -> &'static str {
    let name = std::any::type_name::<K>();
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name)
}

fn is_watch_error_retriable(e: &Error) -> bool {
    e.is_too_many_requests() || e.is_connection_refused()
}

/// The server has not caught up with the requested version (client-go's
/// `isTooLargeResourceVersionError`).
fn is_too_large_resource_version(e: &Error) -> bool {
    if e.has_status_cause(StatusCause::RESOURCE_VERSION_TOO_LARGE) {
        return true;
    }
    if !e.is_timeout() {
        return false;
    }
    let Some(status) = e.status() else {
        return false;
    };
    const TOO_LARGE: &str = "Too large resource version";
    let in_causes = status
        .details
        .as_ref()
        .is_some_and(|d| d.causes.iter().any(|c| c.message == TOO_LARGE));
    in_causes || status.message.contains(TOO_LARGE)
}

/// The error a watch ends with when one of its events does not decode (client-go's
/// `StreamWatcher` reports "unable to decode an event from the watch stream" as an internal
/// error).
fn undecodable_event(e: &Error) -> Error {
    Error::new_internal_error(format!(
        "unable to decode an event from the watch stream: {}",
        ErrorChain(e)
    ))
}

/// Displays an error followed by each of its causes.
struct ErrorChain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut written = self.0.to_string();
        let mut source = self.0.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            // An error whose Display already names its cause is not repeated.
            if !written.contains(&text) {
                written.push_str(": ");
                written.push_str(&text);
            }
            source = cause.source();
        }
        f.write_str(&written)
    }
}

impl<K> std::fmt::Debug for Reflector<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.options.name)
            .field(
                "last_sync_resource_version",
                &self.versions.lock().last_sync,
            )
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use kclient_apimachinery::TransportErrorKind;

    use super::*;
    use crate::delta_fifo::{DeltaFIFO, DeltaFIFOOptions, DeltaType};
    use crate::index::Indexers;
    use crate::indexer::Indexer;
    use crate::scripted::*;

    fn list_options(rv: &str, limit: i64) -> Call {
        let mut options = ListOptions::default().limit(limit);
        options.resource_version = Some(rv.to_owned()).filter(|rv| !rv.is_empty());
        Call::List(options)
    }

    fn is_watch_at(call: &Call, rv: &str) -> bool {
        match call {
            Call::Watch(o) => {
                o.resource_version.as_deref().unwrap_or("") == rv
                    && o.allow_watch_bookmarks
                    && o.send_initial_events.is_none()
                    && o.timeout_seconds.is_some_and(|t| (300..600).contains(&t))
            }
            Call::List(_) => false,
        }
    }

    struct Running {
        lw: Arc<Scripted>,
        store: Indexer<crate::example_object::Pod>,
        reflector: Arc<Reflector<crate::example_object::Pod>>,
        cancel: CancellationToken,
        task: tokio::task::JoinHandle<()>,
    }

    fn start(lw: Arc<Scripted>, options: ReflectorOptions) -> Running {
        start_with(lw, options, |r| r)
    }

    fn start_with(
        lw: Arc<Scripted>,
        options: ReflectorOptions,
        customize: impl FnOnce(
            Reflector<crate::example_object::Pod>,
        ) -> Reflector<crate::example_object::Pod>,
    ) -> Running {
        let store = Indexer::new(Indexers::new());
        let reflector = Arc::new(customize(Reflector::new(
            lw.clone(),
            Arc::new(store.clone()),
            options,
        )));
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (reflector, cancel) = (reflector.clone(), cancel.clone());
            async move { reflector.run(cancel).await }
        });
        Running {
            lw,
            store,
            reflector,
            cancel,
            task,
        }
    }

    fn list_first() -> ReflectorOptions {
        ReflectorOptions {
            use_watch_list: false,
            ..ReflectorOptions::default()
        }
    }

    /// Lets the reflector run until it waits on something that never comes.
    async fn settle() {
        tokio::time::sleep(Duration::from_secs(120)).await;
    }

    impl Running {
        async fn stop(self) {
            self.cancel.cancel();
            self.task.await.unwrap();
        }
        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = self.store.list().iter().map(|p| p.name.clone()).collect();
            names.sort();
            names
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lists_at_rv_zero_then_watches_from_the_list_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("b", "6")])));
        lw.push_watch(
            vec![added("c", "11"), modified("a", "12"), deleted("b", "13")],
            Tail::Hang,
        );
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[0], list_options("0", 500));
        assert!(is_watch_at(&calls[1], "10"), "{:?}", calls[1]);
        assert_eq!(calls.len(), 2);
        assert_eq!(r.names(), vec!["a", "c"]);
        assert_eq!(r.store.get_by_key("ns/a").unwrap().resource_version, "12");
        assert_eq!(r.reflector.last_sync_resource_version(), "13");
        r.stop().await;
    }

    /// An in-stream ERROR is not news from a healthy server: the time of the last success stays
    /// that of the list.
    #[tokio::test(start_paused = true)]
    async fn an_error_event_is_not_a_success() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        let tx = lw.push_live_watch(vec![]);
        lw.push_watch(vec![], Tail::Hang);
        let r = start(lw, list_first());
        tokio::time::sleep(Duration::from_secs(10)).await;
        let listed = r
            .reflector
            .last_successful_sync()
            .expect("the list succeeded");
        tx.send(error_event(Error::new_internal_error("etcd is down")))
            .unwrap();
        settle().await;
        assert_eq!(r.lw.calls().len(), 3, "re-watched after the error");
        assert_eq!(r.reflector.last_successful_sync(), Some(listed));
        r.stop().await;
    }

    /// A transform that leaves the version out of the object it keeps does not lose the
    /// version the watch resumes from (client-go reads it before its store transforms).
    #[tokio::test(start_paused = true)]
    async fn the_version_is_read_before_the_transform() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        lw.push_watch(vec![added("c", "11"), modified("a", "12")], Tail::End);
        lw.push_watch(vec![], Tail::Hang);
        let r = start_with(lw, list_first(), |reflector| {
            reflector.with_transform(Arc::new(|pod: &mut crate::example_object::Pod| {
                pod.resource_version.clear();
            }))
        });
        settle().await;
        let calls = r.lw.calls();
        assert!(is_watch_at(&calls[2], "12"), "{:?}", calls[2]);
        assert_eq!(r.reflector.last_sync_resource_version(), "12");
        assert_eq!(r.store.get_by_key("ns/a").unwrap().resource_version, "");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn follows_continue_tokens_clearing_the_version_on_later_pages() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "t1", vec![pod("a", "1")])));
        lw.push_list(Ok(page("10", "t2", vec![pod("b", "1")])));
        lw.push_list(Ok(page("10", "", vec![pod("c", "1")])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[0], list_options("0", 500));
        let Call::List(second) = &calls[1] else {
            panic!("{calls:?}")
        };
        assert_eq!(second.continue_token.as_deref(), Some("t1"));
        assert_eq!(second.resource_version, None);
        assert_eq!(second.limit, 500);
        assert!(is_watch_at(&calls[3], "10"));
        assert_eq!(r.names(), vec!["a", "b", "c"]);
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_continue_token_falls_back_to_one_full_list_at_the_original_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "t1", vec![pod("a", "1")])));
        lw.push_list(Err(gone()));
        lw.push_list(Ok(page("11", "", vec![pod("a", "1"), pod("b", "2")])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[2], list_options("0", 0));
        assert!(is_watch_at(&calls[3], "11"));
        assert_eq!(r.names(), vec!["a", "b"]);
        r.stop().await;
    }

    /// A store that takes syncs object by object (`begin_replace`) and logs what it is
    /// given, with the number of LIST calls made by then.
    struct Stepwise {
        lw: Arc<Scripted>,
        log: Arc<Mutex<Vec<String>>>,
    }

    struct Step {
        lw: Arc<Scripted>,
        log: Arc<Mutex<Vec<String>>>,
        committed: bool,
    }

    impl ReflectorStore<crate::example_object::Pod> for Stepwise {
        fn add(&self, obj: Arc<crate::example_object::Pod>) {
            self.log.lock().push(format!("add {}", obj.name));
        }
        fn update(&self, obj: Arc<crate::example_object::Pod>) {
            self.log.lock().push(format!("update {}", obj.name));
        }
        fn delete(&self, obj: Arc<crate::example_object::Pod>) {
            self.log.lock().push(format!("delete {}", obj.name));
        }
        fn replace(&self, _: Vec<Arc<crate::example_object::Pod>>, _: &str) {
            self.log.lock().push("replace".into());
        }
        fn resync(&self) {}
        fn begin_replace(
            &self,
        ) -> Option<Box<dyn crate::store::Replacement<crate::example_object::Pod> + '_>> {
            self.log.lock().push("begin".into());
            Some(Box::new(Step {
                lw: self.lw.clone(),
                log: self.log.clone(),
                committed: false,
            }))
        }
    }

    impl crate::store::Replacement<crate::example_object::Pod> for Step {
        fn insert(&mut self, key: String, _: Arc<crate::example_object::Pod>) {
            let lists = self
                .lw
                .calls()
                .iter()
                .filter(|c| matches!(c, Call::List(_)))
                .count();
            self.log
                .lock()
                .push(format!("insert {key} after {lists} lists"));
        }
        fn remove(&mut self, key: &str) {
            self.log.lock().push(format!("remove {key}"));
        }
        fn commit(mut self: Box<Self>, resource_version: &str) {
            self.committed = true;
            self.log.lock().push(format!("commit {resource_version}"));
        }
    }

    impl Drop for Step {
        fn drop(&mut self) {
            if !self.committed {
                self.log.lock().push("abandoned".into());
            }
        }
    }

    /// Runs a reflector into a [`Stepwise`] store until it settles; returns the store's log.
    async fn run_stepwise(lw: Arc<Scripted>, options: ReflectorOptions) -> Vec<String> {
        let log = Arc::new(Mutex::new(Vec::new()));
        let store = Stepwise {
            lw: lw.clone(),
            log: log.clone(),
        };
        let reflector = Arc::new(Reflector::new(lw, Arc::new(store), options));
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (reflector, cancel) = (reflector.clone(), cancel.clone());
            async move { reflector.run(cancel).await }
        });
        settle().await;
        cancel.cancel();
        task.await.unwrap();
        log.lock().clone()
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_takes_a_relist_object_by_object_gets_each_page_as_it_arrives() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "t1", vec![pod("a", "1"), pod("b", "2")])));
        lw.push_list(Ok(page("", "", vec![pod("c", "3")])));
        let log = run_stepwise(lw, list_first()).await;
        assert_eq!(
            log,
            [
                "begin",
                "insert ns/a after 1 lists",
                "insert ns/b after 1 lists",
                "insert ns/c after 2 lists",
                "commit 10",
            ]
        );
    }

    /// A page that fails ends the relist (the next one, after the backoff, begins afresh); an
    /// expired continue token restarts it at once with the full list: either way the store
    /// sees the partial replacement abandoned before a new one begins.
    #[tokio::test(start_paused = true)]
    async fn a_relist_that_fails_or_expires_midway_is_abandoned_before_the_next_begins() {
        for second_page in [Error::new_internal_error("the second page failed"), gone()] {
            let lw = Scripted::new();
            lw.push_list(Ok(page("10", "t1", vec![pod("a", "1")])));
            lw.push_list(Err(second_page));
            lw.push_list(Ok(page("11", "", vec![pod("b", "2")])));
            let log = run_stepwise(lw, list_first()).await;
            assert_eq!(
                log,
                [
                    "begin",
                    "insert ns/a after 1 lists",
                    "abandoned",
                    "begin",
                    "insert ns/b after 3 lists",
                    "commit 11",
                ]
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_list_gives_its_initial_events_to_the_replacement_and_commits_at_the_end() {
        let lw = Scripted::new();
        let tx = lw.push_live_watch(vec![
            added("a", "5"),
            added("b", "6"),
            deleted("b", "7"),
            initial_events_end("9"),
            modified("a", "10"),
        ]);
        let log = run_stepwise(lw, ReflectorOptions::default()).await;
        drop(tx);
        assert_eq!(
            log,
            [
                "begin",
                "insert ns/a after 0 lists",
                "insert ns/b after 0 lists",
                "remove ns/b",
                "commit 9",
                "update a",
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn watch_gone_relists_at_the_last_version_without_pagination() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        lw.push_watch(vec![modified("a", "12"), error_event(gone())], Tail::Hang);
        lw.push_list(Ok(page("20", "", vec![pod("b", "15")])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[2], list_options("12", 0));
        assert!(is_watch_at(&calls[3], "20"));
        assert_eq!(r.names(), vec!["b"]);
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn list_gone_at_the_last_version_relists_at_once_with_an_empty_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        lw.push_watch(vec![bookmark("12"), error_event(gone())], Tail::Hang);
        lw.push_list(Err(gone()));
        lw.push_list(Ok(page("30", "", vec![pod("z", "29")])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[2], list_options("12", 0));
        // The retry asks for the latest state (no resource version) with the same page size,
        // as client-go reuses its pager.
        assert_eq!(calls[3], list_options("", 0));
        let times = r.lw.call_times();
        assert_eq!(times[3], times[2], "the retry is immediate");
        assert!(is_watch_at(&calls[4], "30"));
        assert_eq!(r.names(), vec!["z"]);
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn too_large_resource_version_also_relists_with_an_empty_version() {
        let mut status = kclient_apimachinery::Status::failure(
            504,
            kclient_apimachinery::StatusReason::Timeout,
            "Too large resource version",
        );
        status.details = Some(kclient_apimachinery::StatusDetails {
            causes: vec![kclient_apimachinery::StatusCause {
                cause_type: StatusCause::RESOURCE_VERSION_TOO_LARGE.into(),
                message: "Too large resource version".into(),
                field: String::new(),
            }],
            ..Default::default()
        });
        let too_large = Error::from_status(status);
        assert!(is_too_large_resource_version(&too_large));
        let lw = Scripted::new();
        lw.push_list(Err(too_large));
        lw.push_list(Ok(page("30", "", vec![])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[0], list_options("0", 500));
        assert_eq!(calls[1], list_options("", 500));
        assert!(is_watch_at(&calls[2], "30"));
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn too_many_requests_and_connection_refused_back_off_and_rewatch_without_relisting() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "1")])));
        lw.push_watch_error(Error::new_too_many_requests("slow down", 1));
        lw.push_watch_error(Error::transport(
            TransportErrorKind::ConnectionRefused,
            "refused",
        ));
        lw.push_watch(
            vec![
                modified("a", "11"),
                error_event(Error::new_too_many_requests("again", 1)),
            ],
            Tail::End,
        );
        lw.push_watch(vec![], Tail::Hang);
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(
            calls.iter().filter(|c| matches!(c, Call::List(_))).count(),
            1,
            "{calls:?}"
        );
        assert!(is_watch_at(&calls[1], "10"));
        assert!(is_watch_at(&calls[2], "10"));
        assert!(is_watch_at(&calls[3], "10"));
        assert!(is_watch_at(&calls[4], "11"));
        let t = r.lw.call_times();
        // Backoff: [0.8, 1.6) s, then [1.6, 3.2) s, then [3.2, 6.4) s.
        for (i, base) in [(2, 0.8), (3, 1.6), (4, 3.2)] {
            let gap = (t[i] - t[i - 1]).as_secs_f64();
            assert!(is_backoff_gap(gap, base), "gap {i}: {gap}");
        }
        r.stop().await;
    }

    /// Whether `gap` seconds between two calls is a backoff delay of `base` seconds: `base`
    /// plus up to (not including) `base` of jitter. Tokio's timer rounds a deadline up to its
    /// next millisecond, so with a jitter close to 100 % the gap can be `2 * base` itself or a
    /// millisecond more.
    fn is_backoff_gap(gap: f64, base: f64) -> bool {
        gap >= base && gap <= 2.0 * base + 0.001
    }

    fn internal_error() -> Event {
        error_event(Error::new_internal_error("etcd leader changed"))
    }

    fn retrying_internal_errors_for(window: Duration) -> ReflectorOptions {
        ReflectorOptions {
            max_internal_error_retry_duration: window,
            ..list_first()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn internal_errors_re_watch_until_the_retry_duration_has_passed_then_relist() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        // Each watch fails at once; the backoff (0.8, 1.6, 3.2 s, ... with jitter) spaces them
        // well under a minute apart, so they are one series.
        for _ in 0..8 {
            lw.push_watch(vec![internal_error()], Tail::End);
        }
        lw.push_list(Ok(page("20", "", vec![])));
        let r = start(lw, retrying_internal_errors_for(Duration::from_secs(5)));
        settle().await;
        let calls = r.lw.calls();
        let t = r.lw.call_times();
        let relist = 1 + calls[1..]
            .iter()
            .position(|c| matches!(c, Call::List(_)))
            .expect("a relist");
        assert!(relist > 2, "{calls:?}");
        assert!(
            calls[1..relist].iter().all(|c| is_watch_at(c, "10")),
            "{calls:?}"
        );
        // The last watch before the relist failed more than 5 s after the first failure, the
        // one before it within 5 s.
        let since_first = |i: usize| t[i] - t[1];
        assert!(since_first(relist - 1) > Duration::from_secs(5), "{t:?}");
        assert!(since_first(relist - 2) <= Duration::from_secs(5), "{t:?}");
        // The relist starts a new window: the next internal error is re-watched again.
        assert!(is_watch_at(&calls[relist + 1], "20"), "{calls:?}");
        assert!(is_watch_at(&calls[relist + 2], "20"), "{calls:?}");
        r.stop().await;
    }

    /// client-go's `RetryWithDeadline`: an internal error a minute or more after the previous
    /// one starts a new retry window rather than counting from the first error ever seen.
    #[tokio::test(start_paused = true)]
    async fn an_internal_error_long_after_the_previous_one_is_retried_again() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        lw.push_watch(vec![internal_error()], Tail::End);
        let healthy = lw.push_live_watch(vec![]);
        let r = start(lw, retrying_internal_errors_for(Duration::from_secs(30)));
        // The first 500 is retried; then the watch stays healthy for 10 minutes.
        tokio::time::sleep(Duration::from_secs(600)).await;
        healthy.send(internal_error()).unwrap();
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(
            calls.iter().filter(|c| matches!(c, Call::List(_))).count(),
            1,
            "{calls:?}"
        );
        assert_eq!(calls.len(), 4, "{calls:?}");
        assert!(calls[1..].iter().all(|c| is_watch_at(c, "10")), "{calls:?}");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn failed_lists_back_off_exponentially_and_reach_the_error_handler() {
        let lw = Scripted::new();
        for _ in 0..4 {
            lw.push_list(Err(Error::new_internal_error("etcd is sad")));
        }
        lw.push_list(Ok(page("10", "", vec![])));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let seen = errors.clone();
        let r = start_with(lw, list_first(), move |r| {
            r.with_watch_error_handler(Arc::new(move |name: &str, e: &Error| {
                seen.lock().push(format!("{name}: {e}"))
            }))
        });
        settle().await;
        assert_eq!(errors.lock().len(), 4);
        assert!(
            errors.lock()[0].starts_with("reflector: "),
            "{:?}",
            errors.lock()
        );
        let t = r.lw.call_times();
        let gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
        for (gap, base) in gaps.iter().zip([0.8, 1.6, 3.2, 6.4]) {
            assert!(is_backoff_gap(*gap, base), "{gaps:?}");
        }
        assert!(is_watch_at(&r.lw.calls()[5], "10"));
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn bookmarks_advance_the_version_and_deliver_nothing() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "1")])));
        lw.push_watch(vec![bookmark("50")], Tail::Hang);
        let store = Arc::new(DeltaFIFO::new(DeltaFIFOOptions::default()));
        let reflector = Arc::new(Reflector::new(lw.clone(), store.clone(), list_first()));
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (reflector, cancel) = (reflector.clone(), cancel.clone());
            async move { reflector.run(cancel).await }
        });
        settle().await;
        assert_eq!(reflector.last_sync_resource_version(), "50");
        // Only the listed object is queued; the bookmark added nothing.
        assert_eq!(store.list_keys(), vec!["ns/a"]);
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_that_ends_normally_is_reopened_at_the_last_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        lw.push_watch(vec![added("a", "11")], Tail::End);
        lw.push_watch(vec![], Tail::Hang);
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls.len(), 3);
        assert!(is_watch_at(&calls[2], "11"));
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_very_short_empty_watch_relists_after_backoff() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        lw.push_watch(vec![], Tail::End);
        lw.push_list(Ok(page("11", "", vec![])));
        let r = start(lw, list_first());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[2], list_options("10", 0));
        let t = r.lw.call_times();
        assert!((t[2] - t[1]).as_secs_f64() >= 0.8);
        r.stop().await;
    }

    /// A reflector recording what reached its watch-error handler.
    fn start_recording(
        lw: Arc<Scripted>,
        options: ReflectorOptions,
    ) -> (Running, Arc<Mutex<Vec<String>>>) {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let seen = errors.clone();
        let r = start_with(lw, options, move |r| {
            r.with_watch_error_handler(Arc::new(move |_: &str, e: &Error| {
                seen.lock().push(e.to_string())
            }))
        });
        (r, errors)
    }

    fn decode_failure() -> Event {
        let bad = serde_json::from_str::<u8>("\"x\"").unwrap_err();
        Err(Error::decode("Pod", bad))
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_that_does_not_decode_ends_the_watch_is_reported_and_relists_after_backoff() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        lw.push_watch(vec![decode_failure(), added("never", "11")], Tail::Hang);
        lw.push_list(Ok(page("12", "", vec![pod("a", "5"), pod("b", "12")])));
        let (r, errors) = start_recording(lw, list_first());
        settle().await;
        // The event after the bad one was not applied; the relist brought the state.
        assert_eq!(r.names(), vec!["a", "b"]);
        let calls = r.lw.calls();
        assert_eq!(calls.len(), 4, "{calls:?}");
        assert_eq!(calls[2], list_options("10", 0));
        assert!(is_watch_at(&calls[3], "12"));
        let t = r.lw.call_times();
        let gap = (t[2] - t[1]).as_secs_f64();
        assert!(is_backoff_gap(gap, 0.8), "relisted after {gap} s");
        {
            let errors = errors.lock();
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains("unable to decode an event from the watch stream"),
                "{errors:?}"
            );
        }
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_undecodable_initial_event_falls_back_to_a_list_and_backs_off_while_it_fails() {
        // A custom resource whose stored objects no longer match the Rust type: every
        // watch-list and every list fails to decode. client-go falls back to LIST and backs
        // off; so must this, rather than loop on the watch-list.
        let lw = Scripted::new();
        for _ in 0..6 {
            lw.push_watch(vec![added("a", "5"), decode_failure()], Tail::Hang);
            let bad = serde_json::from_str::<u8>("\"x\"").unwrap_err();
            lw.push_list(Err(Error::decode("PodList", bad)));
        }
        let (r, errors) = start_recording(lw, ReflectorOptions::default());
        // 30 s of failure: delays 0.8-1.6, 1.6-3.2, 3.2-6.4, 6.4-12.8, 12.8-25.6 s, so the
        // fifth round starts by 24 s and a sixth one (in about 4 % of runs) by 30 s, when
        // the jitter stays low; a retry loop would make hundreds.
        tokio::time::sleep(Duration::from_secs(30)).await;
        let calls = r.lw.calls();
        let rounds = calls.len() / 2;
        assert!(
            (4..=6).contains(&rounds),
            "{rounds} rounds in 30 s: {calls:?}"
        );
        for pair in calls.chunks(2) {
            assert!(matches!(&pair[0], Call::Watch(o) if o.send_initial_events == Some(true)));
            if let Some(list) = pair.get(1) {
                assert!(matches!(list, Call::List(_)), "{calls:?}");
            }
        }
        // Each round reports the watch-list's failure and the list's.
        {
            let errors = errors.lock();
            assert!(errors.len() >= 2 * rounds - 1, "{errors:?}");
            assert!(errors[0].contains("unable to decode"), "{errors:?}");
        }
        assert!(r.store.is_empty(), "nothing decodes, so nothing is cached");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn watches_that_keep_breaking_reopen_through_the_backoff_and_are_reported() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![])));
        let cut = || {
            Err(Error::transport(
                TransportErrorKind::ConnectionReset,
                "connection reset",
            ))
        };
        for i in 0..10 {
            lw.push_watch(
                vec![added(&format!("p{i}"), &format!("{}", 11 + i)), cut()],
                Tail::End,
            );
        }
        let (r, errors) = start_recording(lw, list_first());
        tokio::time::sleep(Duration::from_secs(20)).await;
        let watches = r.lw.calls().len() - 1;
        // Without backoff this is ten watches at once; with it, delays of 0.8-1.6, 1.6-3.2,
        // 3.2-6.4 and 6.4-12.8 s leave room for at most five in 20 s.
        assert!((3..=5).contains(&watches), "{watches} watches in 20 s");
        assert_eq!(errors.lock().len(), watches, "{:?}", errors.lock());
        // Each re-watch resumed at the last version: nothing was relisted.
        assert!(
            r.lw.calls()[1..]
                .iter()
                .all(|c| matches!(c, Call::Watch(_)))
        );
        assert!(r.reflector.last_successful_sync().is_some());
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn watch_list_streams_the_initial_state_and_keeps_the_stream() {
        let lw = Scripted::new();
        let tx = lw.push_live_watch(vec![
            added("a", "5"),
            added("b", "6"),
            deleted("b", "7"),
            bookmark("8"),
            initial_events_end("9"),
        ]);
        let r = start(lw, ReflectorOptions::default());
        settle().await;
        assert_eq!(r.names(), vec!["a"]);
        assert_eq!(r.reflector.last_sync_resource_version(), "9");
        tx.send(modified("a", "10")).unwrap();
        settle().await;
        assert_eq!(r.store.get_by_key("ns/a").unwrap().resource_version, "10");
        let calls = r.lw.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        let Call::Watch(o) = &calls[0] else { panic!() };
        assert_eq!(o.send_initial_events, Some(true));
        assert_eq!(
            o.resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!(o.resource_version, None);
        assert!(o.allow_watch_bookmarks);
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn watch_list_keeps_waiting_for_a_late_end_bookmark() {
        let lw = Scripted::new();
        let tx = lw.push_live_watch(vec![added("a", "5")]);
        let r = start(lw, ReflectorOptions::default());
        tokio::time::sleep(Duration::from_secs(25)).await;
        assert!(
            r.store.is_empty(),
            "nothing is stored before the end bookmark"
        );
        tx.send(initial_events_end("6")).unwrap();
        settle().await;
        assert_eq!(r.names(), vec!["a"]);
        assert_eq!(r.lw.calls().len(), 1, "no fallback, no second watch");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn watch_list_falls_back_to_list_on_error() {
        let lw = Scripted::new();
        lw.push_watch_error(Error::new_bad_request("sendInitialEvents is forbidden"));
        lw.push_list(Ok(page("10", "", vec![pod("a", "1")])));
        let r = start(lw, ReflectorOptions::default());
        settle().await;
        let calls = r.lw.calls();
        assert_eq!(calls[1], list_options("0", 500));
        assert!(is_watch_at(&calls[2], "10"));
        assert_eq!(r.names(), vec!["a"]);
        r.stop().await;
    }

    /// An ERROR event among the initial events, as the REST client yields it (an `Err` with
    /// the server's status) or as a `WatchEvent::Error`: a 410 asks again at the latest
    /// version, a 429 backs off and asks again; neither lists.
    #[tokio::test(start_paused = true)]
    async fn watch_list_error_events_are_retried_as_client_go_does() {
        for as_err in [true, false] {
            let event = |e: Error| if as_err { Err(e) } else { error_event(e) };
            let lw = Scripted::new();
            lw.push_watch(vec![added("a", "5"), event(gone())], Tail::Hang);
            lw.push_watch(
                vec![event(Error::new_too_many_requests("slow down", 1))],
                Tail::Hang,
            );
            let _open = lw.push_live_watch(vec![added("b", "7"), initial_events_end("8")]);
            let r = start(lw, ReflectorOptions::default());
            settle().await;
            let calls = r.lw.calls();
            assert_eq!(calls.len(), 3, "as_err={as_err}: {calls:?}");
            for call in &calls {
                let Call::Watch(o) = call else {
                    panic!("as_err={as_err}: a list: {calls:?}")
                };
                assert_eq!(o.send_initial_events, Some(true));
                assert_eq!(o.resource_version, None, "{calls:?}");
            }
            let times = r.lw.call_times();
            assert_eq!(times[1], times[0], "a 410 asks again at once");
            assert!(times[2] > times[1], "a 429 waits the backoff delay");
            assert_eq!(r.names(), vec!["b"]);
            assert_eq!(r.reflector.last_sync_resource_version(), "8");
            r.stop().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn sources_without_watch_list_semantics_are_listed() {
        let lw = Scripted::without_watch_list();
        lw.push_list(Ok(page("10", "", vec![])));
        let r = start(lw, ReflectorOptions::default());
        settle().await;
        assert_eq!(r.lw.calls()[0], list_options("0", 500));
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn resync_runs_every_period_while_watching_when_allowed() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "1")])));
        let known = Indexer::new(Indexers::new());
        known.add(Arc::new(pod("a", "1")));
        let fifo = Arc::new(DeltaFIFO::new(DeltaFIFOOptions {
            known_objects: Some(Arc::new(known.clone())),
            emit_delta_type_replaced: true,
            key_function: None,
        }));
        let allow = Arc::new(AtomicBool::new(false));
        let gate = allow.clone();
        let options = ReflectorOptions {
            resync_period: Duration::from_secs(30),
            ..list_first()
        };
        let reflector = Arc::new(
            Reflector::new(lw.clone(), fifo.clone(), options)
                .with_should_resync(Arc::new(move || gate.load(Ordering::SeqCst))),
        );
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (reflector, cancel) = (reflector.clone(), cancel.clone());
            async move { reflector.run(cancel).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        // Drain the list's Replaced delta.
        fifo.pop(|_, _| Ok::<(), crate::ProcessError<Infallible>>(()))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(40)).await;
        assert!(fifo.is_empty(), "should_resync said no");
        allow.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(30)).await;
        let deltas = fifo
            .pop(|_, _| Ok::<(), crate::ProcessError<Infallible>>(()))
            .await
            .unwrap();
        assert_eq!(deltas.newest().unwrap().delta_type(), DeltaType::Sync);
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_relist_reuses_the_held_arc_of_unchanged_objects() {
        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5"), pod("b", "6")])));
        lw.push_watch(vec![bookmark("12"), error_event(gone())], Tail::Hang);
        lw.push_list(Ok(page("20", "", vec![pod("a", "5"), pod("b", "7")])));
        let r = start(lw, list_first());
        tokio::time::sleep(Duration::from_millis(1)).await;
        let (a, b) = (
            r.store.get_by_key("ns/a").unwrap(),
            r.store.get_by_key("ns/b").unwrap(),
        );
        settle().await;
        assert_eq!(r.lw.calls().len(), 4, "{:?}", r.lw.calls());
        assert!(
            Arc::ptr_eq(&a, &r.store.get_by_key("ns/a").unwrap()),
            "unchanged: same Arc"
        );
        let new_b = r.store.get_by_key("ns/b").unwrap();
        assert!(!Arc::ptr_eq(&b, &new_b));
        assert_eq!(new_b.resource_version, "7");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn transform_runs_before_objects_are_stored() {
        let lw = Scripted::new();
        lw.push_list(Ok(page(
            "10",
            "",
            vec![pod("a", "1").with_label("noise", "x")],
        )));
        let r = start_with(lw, list_first(), |r| {
            r.with_transform(Arc::new(|p: &mut crate::example_object::Pod| {
                p.labels.clear()
            }))
        });
        settle().await;
        assert!(r.store.get_by_key("ns/a").unwrap().labels.is_empty());
        r.stop().await;
    }

    /// Every reflector measurement of this test binary, one line each.
    #[derive(Default)]
    struct Recorded(parking_lot::Mutex<Vec<String>>);

    impl crate::reflector_metrics::ReflectorMetricsProvider for Recorded {
        fn list(&self, name: &str, _: Duration, items: usize) {
            self.0.lock().push(format!("{name} list {items}"));
        }
        fn watch_started(&self, name: &str) {
            self.0.lock().push(format!("{name} watch"));
        }
        fn watch_ended(&self, name: &str, _: Duration, events: usize, short: bool) {
            self.0
                .lock()
                .push(format!("{name} watch ended events={events} short={short}"));
        }
        fn watch_event(&self, name: &str) {
            self.0.lock().push(format!("{name} event"));
        }
        fn relist(&self, name: &str, reason: &str) {
            self.0.lock().push(format!("{name} relist {reason}"));
        }
        fn last_resource_version(&self, name: &str, rv: &str) {
            self.0.lock().push(format!("{name} rv {rv}"));
        }
    }

    fn recorded() -> &'static Recorded {
        static RECORDED: std::sync::OnceLock<Arc<Recorded>> = std::sync::OnceLock::new();
        RECORDED.get_or_init(|| {
            let r = Arc::new(Recorded::default());
            assert!(crate::reflector_metrics::set_reflector_metrics_provider(
                r.clone()
            ));
            r
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_410_relist_is_measured_and_list_watch_and_relist_have_spans() {
        let logs = kclient_testenv::LogCapture::with_spans(tracing::Level::TRACE, true);
        let recorded = recorded();

        let lw = Scripted::new();
        lw.push_list(Ok(page("10", "", vec![pod("a", "5")])));
        lw.push_watch(vec![modified("a", "12"), error_event(gone())], Tail::Hang);
        lw.push_list(Ok(page("20", "", vec![pod("b", "15"), pod("c", "16")])));
        let name = "measured-410";
        let r = start(
            lw,
            ReflectorOptions {
                name: name.into(),
                ..list_first()
            },
        );
        settle().await;
        r.stop().await;

        let lines: Vec<String> = recorded
            .0
            .lock()
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("{name} ")).map(str::to_owned))
            .collect();
        // The watch after the relist (at 20) has nothing scripted, so the run ends there.
        assert_eq!(
            lines[..10],
            [
                "list 1",
                "rv 10",
                "watch",
                "event",
                "rv 12",
                "event",
                "watch ended events=1 short=false",
                "relist expired",
                "list 2",
                "rv 20",
            ],
            "{lines:?}"
        );

        let text = logs.text();
        for (span, fields) in [
            ("reflector.list{", "resource=\"Pod\" resource_version=\"0\""),
            ("reflector.watch{", "resource=\"Pod\" resource_version=10"),
            (
                "reflector.relist{",
                "resource=\"Pod\" resource_version=\"12\"",
            ),
        ] {
            assert!(
                text.lines().any(|l| l.contains(span)
                    && l.contains(&format!("reflector=\"{name}\""))
                    && l.contains(fields)),
                "no {span} span with {fields} in:\n{text}"
            );
        }
    }
}
