//! Per-handler sync tracking (client-go's `synctrack.SingleFileTracker`).
//!
//! A handler registration has synced when the informer has synced (its first list is in the
//! cache) **and** the handler has been called for every object of that initial list. The
//! listener counts initial-list adds as they are queued ([`start`](SingleFileTracker::start))
//! and as the handler returns from them ([`finished`](SingleFileTracker::finished)).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use crate::done_signal::DoneSignal;

/// Counts the initial-list notifications a handler has not finished yet.
#[derive(Debug, Default)]
pub(crate) struct SingleFileTracker {
    count: AtomicI64,
    upstream_has_synced: AtomicBool,
    synced: DoneSignal,
}

impl SingleFileTracker {
    pub(crate) fn new() -> Self {
        SingleFileTracker::default()
    }

    /// An initial-list notification was queued for the handler.
    pub(crate) fn start(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// The handler returned from an initial-list notification.
    pub(crate) fn finished(&self) {
        let left = self.count.fetch_sub(1, Ordering::SeqCst) - 1;
        debug_assert!(left >= 0, "synctrack: negative counter");
        if left <= 0 && self.upstream_has_synced.load(Ordering::SeqCst) {
            self.synced.set();
        }
    }

    /// The informer has synced; no new initial-list notification will be started.
    pub(crate) fn upstream_has_synced(&self) {
        self.upstream_has_synced.store(true, Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) <= 0 {
            self.synced.set();
        }
    }

    pub(crate) fn has_synced(&self) -> bool {
        self.synced.is_set()
    }

    pub(crate) fn signal(&self) -> &DoneSignal {
        &self.synced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_only_after_upstream_and_every_started_item_finished() {
        let t = SingleFileTracker::new();
        t.start();
        t.start();
        t.upstream_has_synced();
        assert!(!t.has_synced());
        t.finished();
        assert!(!t.has_synced());
        t.finished();
        assert!(t.has_synced());

        let empty = SingleFileTracker::new();
        assert!(!empty.has_synced());
        empty.upstream_has_synced();
        assert!(empty.has_synced());
    }
}
