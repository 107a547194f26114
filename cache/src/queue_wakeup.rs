//! [`QueueWakeup`]: how the FIFOs' consumers wait for work, whether they are threads (`pop`) or
//! tasks (`pop_async`).

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

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
}
