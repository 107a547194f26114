//! [`QueueWakeup`]: how the FIFOs' consumers wait for work, whether they are tasks (`pop`) or
//! threads (`pop_blocking`), and the pop both FIFOs share.

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

use crate::delta_fifo::PopError;

/// What the shared pop asks of a FIFO's locked state.
pub(crate) trait PopState {
    /// Whether an item is queued.
    fn has_item(&self) -> bool;
    /// Whether the queue was closed.
    fn is_closed(&self) -> bool;
}

/// Wakes both kinds of consumers of a queue guarded by a `Mutex<S>`: threads blocked on a
/// condition variable and tasks awaiting a `Notify`.
pub(crate) struct QueueWakeup {
    cond: Condvar,
    notify: Notify,
}

impl QueueWakeup {
    pub(crate) fn new() -> Self {
        QueueWakeup {
            cond: Condvar::new(),
            notify: Notify::new(),
        }
    }

    /// Wakes every waiting consumer to look at the queue again.
    pub(crate) fn wake_all(&self) {
        self.cond.notify_all();
        self.notify.notify_waiters();
    }

    /// Blocks the thread until `take` returns a value; `take` runs under the lock each time the
    /// queue may have changed.
    pub(crate) fn wait<S, R>(
        &self,
        state: &Mutex<S>,
        mut take: impl FnMut(&mut S) -> Option<R>,
    ) -> R {
        let mut guard = state.lock();
        loop {
            if let Some(taken) = take(&mut guard) {
                return taken;
            }
            self.cond.wait(&mut guard);
        }
    }

    /// [`wait`](Self::wait) for tasks. The lock is never held across an await: the wake-up is
    /// registered before `take` looks, so a wake between the look and the await is not missed.
    pub(crate) async fn wait_async<S, R>(
        &self,
        state: &Mutex<S>,
        mut take: impl FnMut(&mut S) -> Option<R>,
    ) -> R {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(taken) = take(&mut state.lock()) {
                return taken;
            }
            notified.await;
        }
    }

    /// [`pop`](Self::pop) blocking the thread: the FIFOs' `pop_blocking`, which is `what`,
    /// and panics (naming `instead`) where blocking would hang a runtime.
    pub(crate) fn pop_blocking<S: PopState, T, E>(
        &self,
        state: &Mutex<S>,
        pop_locked: impl FnOnce(&mut S) -> Result<T, PopError<E>>,
        what: &str,
        instead: &str,
    ) -> Result<T, PopError<E>> {
        kclient_flowcontrol::assert_can_block(what, instead);
        let mut pop_locked = Some(pop_locked);
        self.wait(state, |state| try_pop(state, &mut pop_locked))
    }

    /// Waits until an item is queued, then runs `pop_locked` once under the lock; a closed
    /// queue with nothing left answers [`PopError::Closed`]. The FIFOs' `pop`.
    pub(crate) async fn pop<S: PopState, T, E>(
        &self,
        state: &Mutex<S>,
        pop_locked: impl FnOnce(&mut S) -> Result<T, PopError<E>>,
    ) -> Result<T, PopError<E>> {
        let mut pop_locked = Some(pop_locked);
        self.wait_async(state, |state| try_pop(state, &mut pop_locked))
            .await
    }
}

/// Pops if an item is queued (`None` means wait), or reports a closed queue.
fn try_pop<S: PopState, T, E>(
    state: &mut S,
    pop_locked: &mut Option<impl FnOnce(&mut S) -> Result<T, PopError<E>>>,
) -> Option<Result<T, PopError<E>>> {
    if state.has_item() {
        // `pop_locked` is taken once: the first time there is an item, the wait ends.
        return pop_locked.take().map(|pop| pop(state));
    }
    state.is_closed().then_some(Err(PopError::Closed))
}
