//! [`Items`]: what a [`PriorityQueue`](crate::PriorityQueue) knows about its items, as plain
//! data (no lock, no clock, no metrics): one entry per item, the ready items ordered by
//! priority and then by the order in which they became ready, the delayed items ordered by
//! ready time, and which items workers are processing.
//!
//! Each item has at most one entry, and the entry exists only while the item is queued (ready or
//! delayed) or being processed, so memory follows the live items. An item being processed that
//! is added again is *parked*: it is queued (it counts in [`len`](Items::len) and keeps its
//! priority and place) but is not in the ready order until its worker calls
//! [`done`](Items::done), so no item is ever handed to two workers.
//!
//! Ordering: a ready item's key is `(Reverse(priority), seq)`, `seq` a counter bumped each time an
//! item becomes ready or its priority rises, so the first key is the highest priority's oldest
//! item. A delayed item's key is `(ready_at, seq)`.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::hash::Hash;
use std::time::Instant;

use foldhash::fast::RandomState;
use hashbrown::HashMap;
use hashbrown::hash_map::Entry as MapEntry;

/// The place of a ready item: higher priorities first, then first come, first served.
type ReadyKey = (Reverse<i32>, u64);

/// The place of a delayed item: earliest ready time first.
type WaitingKey = (Instant, u64);

/// The items of one priority queue.
pub(super) struct Items<T> {
    entries: HashMap<T, Entry, RandomState>,
    /// Ready items that no worker is processing, in the order getters take them.
    ready: BTreeMap<ReadyKey, T>,
    /// Delayed items, processed or not, in the order they come due.
    waiting: BTreeMap<WaitingKey, T>,
    /// Ready items whose worker has not called `done` yet.
    parked: usize,
    /// Items handed out and not done.
    processing: usize,
    next_seq: u64,
}

struct Entry {
    /// A worker got it and has not called `done`.
    processing: bool,
    /// Its place in the queue, if it is queued.
    queued: Option<Queued>,
    /// When the worker got it (only with metrics).
    started_at: Option<Instant>,
}

#[derive(Clone, Copy)]
struct Queued {
    priority: i32,
    seq: u64,
    /// `Some` while it waits for this time (in `waiting`); `None` once ready (in `ready`, or
    /// parked while it is processed).
    ready_at: Option<Instant>,
    /// When it became ready (only with metrics: the queue latency).
    ready_since: Option<Instant>,
}

/// What an add did, for the caller's metrics, wake-ups and timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Added {
    /// Nothing a getter or the timer must hear about: merged into the item already queued.
    Merged,
    /// The item became ready at `priority`; a getter may take it now unless it is processed.
    Ready { priority: i32, takeable: bool },
    /// The item was ready already, and its priority rose from `from` to `to`.
    Raised { from: i32, to: i32 },
    /// The item waits for its ready time; `earliest` if it is now the first to come due.
    Waiting { earliest: bool },
}

/// What a `done` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Done {
    /// The item was not being processed: nothing to do.
    NotProcessing,
    /// The worker finished an item it got at `started_at` (with metrics); `requeued` if the
    /// item was added while processed and is now ready for a getter.
    Finished {
        started_at: Option<Instant>,
        requeued: bool,
    },
}

/// An item handed to a worker.
pub(super) struct Taken<T> {
    pub(super) item: T,
    pub(super) priority: i32,
    /// When it became ready (with metrics).
    pub(super) ready_since: Option<Instant>,
}

impl<T> Items<T>
where
    T: Clone + Eq + Hash,
{
    pub(super) fn new() -> Self {
        Items {
            entries: HashMap::with_hasher(RandomState::default()),
            ready: BTreeMap::new(),
            waiting: BTreeMap::new(),
            parked: 0,
            processing: 0,
            next_seq: 0,
        }
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Adds `item` at `priority`, ready at `ready_at` (`None`: now). `now` is the time with
    /// metrics, recorded as the item's ready time.
    ///
    /// An item already queued keeps the higher of the two priorities and the earlier of the two
    /// ready times; if its priority rises, it goes behind the items already at its new priority.
    /// An item that becomes ready goes behind the items already ready at its priority.
    pub(super) fn add(
        &mut self,
        item: T,
        priority: i32,
        ready_at: Option<Instant>,
        now: Option<Instant>,
    ) -> Added {
        let (processing, old) = match self.entries.get(&item) {
            Some(entry) => (entry.processing, entry.queued),
            None => {
                self.entries.insert(
                    item.clone(),
                    Entry {
                        processing: false,
                        queued: None,
                        started_at: None,
                    },
                );
                (false, None)
            }
        };
        let Some(old) = old else {
            // Not queued (new, or being processed): it takes its place now.
            let seq = self.next_seq();
            return match ready_at {
                None => {
                    self.make_ready(&item, processing, priority, seq, now);
                    Added::Ready {
                        priority,
                        takeable: !processing,
                    }
                }
                Some(at) => {
                    self.waiting.insert((at, seq), item.clone());
                    self.set_queued(
                        &item,
                        Queued {
                            priority,
                            seq,
                            ready_at: Some(at),
                            ready_since: None,
                        },
                    );
                    Added::Waiting {
                        earliest: self.is_earliest((at, seq)),
                    }
                }
            };
        };
        let raised = priority > old.priority;
        let priority = priority.max(old.priority);
        match (old.ready_at, ready_at) {
            // Ready already: it stays ready (the earlier time), moving back only if raised.
            (None, _) => {
                if !raised {
                    return Added::Merged;
                }
                let seq = self.next_seq();
                if !processing {
                    self.ready.remove(&(Reverse(old.priority), old.seq));
                    self.ready.insert((Reverse(priority), seq), item.clone());
                }
                self.set_queued(
                    &item,
                    Queued {
                        priority,
                        seq,
                        ..old
                    },
                );
                Added::Raised {
                    from: old.priority,
                    to: priority,
                }
            }
            // Delayed, and now ready: it goes behind the items ready at its priority.
            (Some(old_at), None) => {
                self.waiting.remove(&(old_at, old.seq));
                let seq = self.next_seq();
                self.make_ready(&item, processing, priority, seq, now);
                Added::Ready {
                    priority,
                    takeable: !processing,
                }
            }
            // Delayed both times: the earlier time wins.
            (Some(old_at), Some(new_at)) => {
                let at = old_at.min(new_at);
                if at == old_at && !raised {
                    return Added::Merged;
                }
                self.waiting.remove(&(old_at, old.seq));
                let seq = if raised { self.next_seq() } else { old.seq };
                self.waiting.insert((at, seq), item.clone());
                self.set_queued(
                    &item,
                    Queued {
                        priority,
                        seq,
                        ready_at: Some(at),
                        ready_since: None,
                    },
                );
                if at < old_at {
                    Added::Waiting {
                        earliest: self.is_earliest((at, seq)),
                    }
                } else {
                    Added::Merged
                }
            }
        }
    }

    fn is_earliest(&self, key: WaitingKey) -> bool {
        self.waiting.first_key_value().map(|(first, _)| *first) == Some(key)
    }

    fn set_queued(&mut self, item: &T, queued: Queued) {
        if let Some(entry) = self.entries.get_mut(item) {
            entry.queued = Some(queued);
        }
    }

    /// Puts `item` (whose entry exists, not queued or delayed) in the ready order, or parks it
    /// while it is processed.
    fn make_ready(
        &mut self,
        item: &T,
        processing: bool,
        priority: i32,
        seq: u64,
        now: Option<Instant>,
    ) {
        if processing {
            self.parked += 1;
        } else {
            self.ready.insert((Reverse(priority), seq), item.clone());
        }
        self.set_queued(
            item,
            Queued {
                priority,
                seq,
                ready_at: None,
                ready_since: now,
            },
        );
    }

    /// Takes the ready item of the highest priority that came first, and marks it processing.
    pub(super) fn take(&mut self, started_at: Option<Instant>) -> Option<Taken<T>> {
        let (priority, item, entry) = loop {
            let ((Reverse(priority), _), item) = self.ready.pop_first()?;
            // Every ready item has an entry, unless the item's `Hash` or `Eq` changed while it
            // was queued: such an item cannot be found again, so it is skipped rather than
            // trusted.
            if let Some(entry) = self.entries.get_mut(&item) {
                break (priority, item, entry);
            }
        };
        let ready_since = entry.queued.take().and_then(|queued| queued.ready_since);
        entry.processing = true;
        entry.started_at = started_at;
        self.processing += 1;
        Some(Taken {
            item,
            priority,
            ready_since,
        })
    }

    /// A worker finished `item`. If it was added (and became ready) while processed, it joins
    /// the ready order at the place it was given then.
    pub(super) fn done(&mut self, item: &T) -> Done {
        let Some(entry) = self.entries.get_mut(item) else {
            return Done::NotProcessing;
        };
        if !entry.processing {
            return Done::NotProcessing;
        }
        entry.processing = false;
        self.processing = self.processing.saturating_sub(1);
        let started_at = entry.started_at.take();
        match entry.queued {
            None => {
                self.entries.remove(item);
                Done::Finished {
                    started_at,
                    requeued: false,
                }
            }
            Some(queued) if queued.ready_at.is_none() => {
                self.parked = self.parked.saturating_sub(1);
                self.ready
                    .insert((Reverse(queued.priority), queued.seq), item.clone());
                Done::Finished {
                    started_at,
                    requeued: true,
                }
            }
            // Still delayed: the timer moves it when it comes due.
            Some(_) => Done::Finished {
                started_at,
                requeued: false,
            },
        }
    }

    /// Makes every delayed item due at `now` ready (all of them with `None`), in the order they
    /// came due. Returns the priorities of the items that became ready, and how many of them a
    /// getter can take now (the others are processed).
    pub(super) fn move_due(&mut self, now: Option<Instant>) -> (Vec<i32>, usize) {
        let mut priorities = Vec::new();
        let mut takeable = 0;
        while let Some(entry) = self.waiting.first_entry() {
            if now.is_some_and(|now| entry.key().0 > now) {
                break;
            }
            let item = entry.remove();
            let Some(entry) = self.entries.get(&item) else {
                continue;
            };
            let (processing, priority) = (
                entry.processing,
                entry.queued.map_or(0, |queued| queued.priority),
            );
            let seq = self.next_seq();
            self.make_ready(&item, processing, priority, seq, now);
            priorities.push(priority);
            takeable += usize::from(!processing);
        }
        (priorities, takeable)
    }

    /// Forgets every delayed item (a shutdown). Returns how many there were.
    pub(super) fn drop_waiting(&mut self) -> usize {
        let waiting = std::mem::take(&mut self.waiting);
        let dropped = waiting.len();
        for item in waiting.into_values() {
            if let MapEntry::Occupied(mut entry) = self.entries.entry(item) {
                if entry.get().processing {
                    entry.get_mut().queued = None;
                } else {
                    entry.remove();
                }
            }
        }
        dropped
    }

    /// The earliest ready time of a delayed item.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.waiting.first_key_value().map(|((at, _), _)| *at)
    }

    /// Ready items, those waiting for their processing to end included.
    pub(super) fn len(&self) -> usize {
        self.ready.len() + self.parked
    }

    /// Ready items a getter can take now.
    pub(super) fn takeable(&self) -> usize {
        self.ready.len()
    }

    /// Delayed items.
    pub(super) fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    /// Items handed out and not done.
    pub(super) fn processing(&self) -> usize {
        self.processing
    }

    /// When the items being processed were handed out (with metrics).
    pub(super) fn started_times(&self) -> impl Iterator<Item = Instant> + '_ {
        self.entries.values().filter_map(|entry| entry.started_at)
    }

    /// How many entries exist (tests: memory follows the live items).
    #[cfg(test)]
    pub(super) fn entries(&self) -> usize {
        self.entries.len()
    }
}
