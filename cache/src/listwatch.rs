//! The one door between the cache and the API server: list a page, open a watch
//! (client-go's `ListerWatcher` and `ListWatch`).
//!
//! The cache knows nothing about HTTP. Typed and dynamic clients implement [`ListerWatcher`];
//! tests and examples build a [`ListWatch`] from two closures over in-memory data.

use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, Stream, StreamExt};
use kclient_apimachinery::{Error, ListOptions, ObjectList, WatchEvent};

/// An open watch: events until the server ends it. An `Err` item is a transport or decode
/// failure, or an `ERROR` event holding the server's `Status` (as `kclient-rest`'s watch
/// streams yield it); an in-memory source may send a [`WatchEvent::Error`] instead. The
/// reflector treats the two alike.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// Lists and watches one kind of object (client-go's `ListerWatcher`).
///
/// `list` returns one page: the caller sets `limit` and `continue_token` and follows the
/// continue tokens itself. `watch` opens a stream with the given options (`resource_version`,
/// `allow_watch_bookmarks`, `timeout_seconds`, `send_initial_events`, ...); it should not set
/// `watch=true` in the caller's options itself, the implementation knows it is watching.
pub trait ListerWatcher<K>: Send + Sync + 'static {
    /// Lists one page of objects.
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>>;

    /// Opens a watch.
    fn watch(&self, options: ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>>;

    /// Whether the source understands `sendInitialEvents` watches ("WatchList") and ends their
    /// initial events with the annotated bookmark. A source that does not (a fake) returns
    /// false and reflectors use LIST instead (client-go's
    /// `IsWatchListSemanticsUnSupported`, inverted).
    fn supports_watch_list(&self) -> bool {
        true
    }
}

impl<K, L: ListerWatcher<K> + ?Sized> ListerWatcher<K> for Arc<L> {
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        (**self).list(options)
    }
    fn watch(&self, options: ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        (**self).watch(options)
    }
    fn supports_watch_list(&self) -> bool {
        (**self).supports_watch_list()
    }
}

type ListFn<K> =
    dyn Fn(ListOptions) -> BoxFuture<'static, Result<ObjectList<K>, Error>> + Send + Sync;
type WatchFn<K> =
    dyn Fn(ListOptions) -> BoxFuture<'static, Result<WatchStream<K>, Error>> + Send + Sync;
type TweakFn = dyn Fn(&mut ListOptions) + Send + Sync;

/// A [`ListerWatcher`] made of two closures (client-go's `ListWatch`), with an optional hook
/// that adjusts every request's options (label or field selectors, client-go's
/// `TweakListOptionsFunc`).
///
/// ```
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_apimachinery::{ListOptions, ObjectList};
/// use kclient_cache::ListWatch;
///
/// let lw = ListWatch::new(
///     |_opts: ListOptions| async { Ok(ObjectList::<Pod>::default()) },
///     |_opts: ListOptions| async { Ok(futures_util::stream::empty()) },
/// )
/// .with_tweak_list_options(|opts| opts.label_selector = Some("app=web".into()));
/// # let _ = lw;
/// ```
pub struct ListWatch<K> {
    list_fn: Arc<ListFn<K>>,
    watch_fn: Arc<WatchFn<K>>,
    tweak: Option<Arc<TweakFn>>,
    supports_watch_list: bool,
}

impl<K> Clone for ListWatch<K> {
    fn clone(&self) -> Self {
        ListWatch {
            list_fn: Arc::clone(&self.list_fn),
            watch_fn: Arc::clone(&self.watch_fn),
            tweak: self.tweak.clone(),
            supports_watch_list: self.supports_watch_list,
        }
    }
}

impl<K: Send + 'static> ListWatch<K> {
    /// A lister-watcher from a list closure and a watch closure.
    pub fn new<LF, LFut, WF, WFut, S>(list: LF, watch: WF) -> Self
    where
        LF: Fn(ListOptions) -> LFut + Send + Sync + 'static,
        LFut: Future<Output = Result<ObjectList<K>, Error>> + Send + 'static,
        WF: Fn(ListOptions) -> WFut + Send + Sync + 'static,
        WFut: Future<Output = Result<S, Error>> + Send + 'static,
        S: Stream<Item = Result<WatchEvent<K>, Error>> + Send + 'static,
    {
        ListWatch {
            list_fn: Arc::new(move |opts| list(opts).boxed()),
            watch_fn: Arc::new(move |opts| watch(opts).map(|r| r.map(StreamExt::boxed)).boxed()),
            tweak: None,
            supports_watch_list: true,
        }
    }

    /// Adjusts the options of every list and watch, after the reflector set its own.
    pub fn with_tweak_list_options(
        mut self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// Declares that the watch closure does not implement `sendInitialEvents` watches, so
    /// reflectors always LIST first.
    pub fn without_watch_list_semantics(mut self) -> Self {
        self.supports_watch_list = false;
        self
    }

    fn tweaked(&self, mut options: ListOptions) -> ListOptions {
        if let Some(tweak) = &self.tweak {
            tweak(&mut options);
        }
        options
    }
}

impl<K: Send + 'static> ListerWatcher<K> for ListWatch<K> {
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<K>, Error>> {
        (self.list_fn)(self.tweaked(options))
    }
    fn watch(&self, options: ListOptions) -> BoxFuture<'_, Result<WatchStream<K>, Error>> {
        (self.watch_fn)(self.tweaked(options))
    }
    fn supports_watch_list(&self) -> bool {
        self.supports_watch_list
    }
}

impl<K> std::fmt::Debug for ListWatch<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListWatch")
            .field("tweak", &self.tweak.is_some())
            .field("supports_watch_list", &self.supports_watch_list)
            .finish()
    }
}
