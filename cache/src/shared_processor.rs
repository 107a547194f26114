//! Fans an informer's notifications out to its listeners (client-go's `sharedProcessor`).
//!
//! It keeps, per listener, whether the listener is due for a resync in the current resync
//! round: resync notifications (updates whose resource version did not change) go only to
//! those, every other notification goes to all.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use tokio::time::Instant;

use crate::done_signal::DoneSignal;
use crate::processor_listener::{Notification, ProcessorListener, determine_resync_period};

pub(crate) struct SharedProcessor<K> {
    state: RwLock<State<K>>,
}

struct State<K> {
    /// Each listener, with whether it is syncing in the current resync round.
    listeners: Vec<(Arc<ProcessorListener<K>>, bool)>,
    started: bool,
}

impl<K: Send + Sync + 'static> SharedProcessor<K> {
    pub(crate) fn new() -> Self {
        SharedProcessor {
            state: RwLock::new(State {
                listeners: Vec::new(),
                started: false,
            }),
        }
    }

    /// Adds a listener, starting its delivery if the processor runs; returns whether it does.
    ///
    /// A new listener counts as syncing (client-go's `addListener` does the same): until a
    /// resync check recomputes it, which happens only when some listener asked for a resync
    /// period, it receives the updates a relist makes for unchanged objects.
    pub(crate) fn add_listener(&self, listener: Arc<ProcessorListener<K>>) -> bool {
        let mut state = self.state.write();
        if state.started {
            listener.run();
        }
        state.listeners.push((listener, true));
        state.started
    }

    /// Removes a listener (idempotent); its delivery ends after the notification in hand.
    pub(crate) fn remove_listener(&self, id: u64) {
        let mut state = self.state.write();
        if let Some(pos) = state.listeners.iter().position(|(l, _)| l.id == id) {
            let (listener, _) = state.listeners.remove(pos);
            listener.stop();
        }
    }

    /// Delivers `notification` to every listener, or only to those due for a resync if `sync`.
    pub(crate) fn distribute(&self, notification: &Notification<K>, sync: bool) {
        let state = self.state.read();
        for (listener, syncing) in &state.listeners {
            if !sync || *syncing {
                listener.add(notification.clone());
            }
        }
    }

    /// Starts every listener's delivery.
    pub(crate) fn run(&self) {
        let mut state = self.state.write();
        for (listener, _) in &state.listeners {
            listener.run();
        }
        state.started = true;
    }

    /// Stops every listener and forgets them; returns the signals of their deliveries' ends.
    pub(crate) fn stop(&self) -> Vec<DoneSignal> {
        let mut state = self.state.write();
        state.started = false;
        state
            .listeners
            .drain(..)
            .map(|(listener, _)| {
                listener.stop();
                listener.run_finished.clone()
            })
            .collect()
    }

    /// Tells every listener's sync tracker that the informer has synced.
    pub(crate) fn upstream_has_synced(&self) {
        let state = self.state.read();
        for (listener, _) in &state.listeners {
            listener.tracker.upstream_has_synced();
        }
    }

    /// Marks which listeners are due for a resync now; true if any is (client-go's
    /// `shouldResync`, the reflector's `should_resync` hook).
    pub(crate) fn should_resync(&self) -> bool {
        let mut state = self.state.write();
        let now = Instant::now();
        let mut needed = false;
        for (listener, syncing) in &mut state.listeners {
            *syncing = listener.should_resync(now);
            if *syncing {
                needed = true;
                listener.determine_next_resync(now);
            }
        }
        needed
    }

    /// Recomputes each listener's period after the informer's check period changed.
    pub(crate) fn resync_check_period_changed(&self, check: Duration) {
        let state = self.state.read();
        for (listener, _) in &state.listeners {
            listener.set_resync_period(determine_resync_period(
                listener.requested_resync_period(),
                check,
            ));
        }
    }

    /// Each listener's resync period in force, in the order they were added.
    #[cfg(test)]
    pub(crate) fn resync_periods(&self) -> Vec<Duration> {
        self.state
            .read()
            .listeners
            .iter()
            .map(|(l, _)| l.resync_period())
            .collect()
    }

    /// The notifications buffered for each listener, by listener id.
    pub(crate) fn pending(&self) -> Vec<(u64, usize)> {
        self.state
            .read()
            .listeners
            .iter()
            .map(|(l, _)| (l.id, l.pending()))
            .collect()
    }
}
