//! A scripted in-memory [`ListerWatcher`] for unit tests: it answers lists and watches from
//! queues the test fills, and records every call with its options and time.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use kclient_apimachinery::{
    Bookmark, Error, INITIAL_EVENTS_END_ANNOTATION, ListMeta, ListOptions, ObjectList, WatchEvent,
};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::example_object::Pod;
use crate::listwatch::{ListerWatcher, WatchStream};

pub(crate) type Event = Result<WatchEvent<Pod>, Error>;

/// A scripted watch: its opening result, then its events and tail.
type ScriptedWatch = Result<(Vec<Event>, Tail), Error>;

/// How a scripted watch behaves after its events.
pub(crate) enum Tail {
    /// The stream ends (a server timeout).
    End,
    /// The stream stays open and silent.
    Hang,
    /// The stream goes on with what the test sends.
    Channel(mpsc::UnboundedReceiver<Event>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    List(ListOptions),
    Watch(ListOptions),
}

#[derive(Default)]
pub(crate) struct Scripted {
    lists: Mutex<VecDeque<Result<ObjectList<Pod>, Error>>>,
    watches: Mutex<VecDeque<ScriptedWatch>>,
    calls: Mutex<Vec<(Call, Instant)>>,
    pub(crate) no_watch_list: bool,
}

impl Scripted {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Scripted::default())
    }

    pub(crate) fn without_watch_list() -> Arc<Self> {
        Arc::new(Scripted {
            no_watch_list: true,
            ..Scripted::default()
        })
    }

    pub(crate) fn push_list(&self, list: Result<ObjectList<Pod>, Error>) {
        self.lists.lock().push_back(list);
    }

    pub(crate) fn push_watch(&self, events: Vec<Event>, tail: Tail) {
        self.watches.lock().push_back(Ok((events, tail)));
    }

    pub(crate) fn push_watch_error(&self, e: Error) {
        self.watches.lock().push_back(Err(e));
    }

    /// Pushes a watch fed by the returned sender.
    pub(crate) fn push_live_watch(&self, events: Vec<Event>) -> mpsc::UnboundedSender<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.push_watch(events, Tail::Channel(rx));
        tx
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.lock().iter().map(|(c, _)| c.clone()).collect()
    }

    pub(crate) fn call_times(&self) -> Vec<Instant> {
        self.calls.lock().iter().map(|(_, t)| *t).collect()
    }
}

impl ListerWatcher<Pod> for Scripted {
    fn list(&self, options: ListOptions) -> BoxFuture<'_, Result<ObjectList<Pod>, Error>> {
        self.calls
            .lock()
            .push((Call::List(options), Instant::now()));
        let next = self.lists.lock().pop_front();
        Box::pin(async move {
            match next {
                Some(result) => result,
                None => std::future::pending().await,
            }
        })
    }

    fn watch(&self, options: ListOptions) -> BoxFuture<'_, Result<WatchStream<Pod>, Error>> {
        self.calls
            .lock()
            .push((Call::Watch(options), Instant::now()));
        let next = self.watches.lock().pop_front();
        Box::pin(async move {
            let (events, tail) = match next {
                Some(result) => result?,
                None => (Vec::new(), Tail::Hang),
            };
            let head = stream::iter(events);
            let stream: WatchStream<Pod> = match tail {
                Tail::End => head.boxed(),
                Tail::Hang => head.chain(stream::pending()).boxed(),
                Tail::Channel(rx) => head
                    .chain(stream::unfold(rx, |mut rx| async move {
                        rx.recv().await.map(|event| (event, rx))
                    }))
                    .boxed(),
            };
            Ok(stream)
        })
    }

    fn supports_watch_list(&self) -> bool {
        !self.no_watch_list
    }
}

/// A list page.
pub(crate) fn page(rv: &str, continue_token: &str, items: Vec<Pod>) -> ObjectList<Pod> {
    ObjectList {
        metadata: ListMeta {
            resource_version: rv.into(),
            continue_token: continue_token.into(),
            ..ListMeta::default()
        },
        items,
    }
}

pub(crate) fn pod(name: &str, rv: &str) -> Pod {
    Pod::new("ns", name).with_rv(rv)
}

pub(crate) fn added(name: &str, rv: &str) -> Event {
    Ok(WatchEvent::Added(pod(name, rv)))
}

pub(crate) fn modified(name: &str, rv: &str) -> Event {
    Ok(WatchEvent::Modified(pod(name, rv)))
}

pub(crate) fn deleted(name: &str, rv: &str) -> Event {
    Ok(WatchEvent::Deleted(pod(name, rv)))
}

pub(crate) fn bookmark(rv: &str) -> Event {
    Ok(WatchEvent::Bookmark(Bookmark {
        resource_version: rv.into(),
        annotations: BTreeMap::new(),
    }))
}

pub(crate) fn initial_events_end(rv: &str) -> Event {
    let mut annotations = BTreeMap::new();
    annotations.insert(INITIAL_EVENTS_END_ANNOTATION.to_owned(), "true".to_owned());
    Ok(WatchEvent::Bookmark(Bookmark {
        resource_version: rv.into(),
        annotations,
    }))
}

pub(crate) fn error_event(e: Error) -> Event {
    let status = e.status().cloned().expect("an API error");
    Ok(WatchEvent::Error(Box::new(status)))
}

pub(crate) fn gone() -> Error {
    Error::new_resource_expired("too old resource version: 1 (5)")
}
