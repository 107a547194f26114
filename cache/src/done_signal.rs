//! A one-shot "it happened" flag that both async tasks and plain threads can wait on: the
//! Rust stand-in for a closed Go channel (`synced`, `runFinished`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

/// A flag that goes from unset to set once and wakes every waiter.
#[derive(Clone, Default)]
pub(crate) struct DoneSignal {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    done: AtomicBool,
    notify: Notify,
    lock: Mutex<()>,
    cond: Condvar,
}

impl DoneSignal {
    pub(crate) fn new() -> Self {
        DoneSignal::default()
    }

    /// Sets the flag and wakes every waiter; later calls do nothing.
    pub(crate) fn set(&self) {
        if !self.inner.done.swap(true, Ordering::AcqRel) {
            self.inner.notify.notify_waiters();
            let _guard = self.inner.lock.lock();
            self.inner.cond.notify_all();
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.inner.done.load(Ordering::Acquire)
    }

    /// Waits until the flag is set.
    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Register before checking so a `set` between the check and the await is not lost.
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }

    /// Blocks the thread until the flag is set or `timeout` passes; returns whether it is set.
    pub(crate) fn wait_blocking(&self, timeout: Option<Duration>) -> bool {
        // A timeout past what the clock can represent waits without one.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut guard = self.inner.lock.lock();
        while !self.is_set() {
            match deadline {
                Some(deadline) => {
                    if self.inner.cond.wait_until(&mut guard, deadline).timed_out() {
                        return self.is_set();
                    }
                }
                None => self.inner.cond.wait(&mut guard),
            }
        }
        true
    }
}

impl std::fmt::Debug for DoneSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DoneSignal").field(&self.is_set()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_async_and_thread_waiters() {
        let signal = DoneSignal::new();
        let thread_signal = signal.clone();
        let thread = std::thread::spawn(move || thread_signal.wait_blocking(None));
        let task_signal = signal.clone();
        let task = tokio::spawn(async move { task_signal.wait().await });
        assert!(!signal.wait_blocking(Some(Duration::from_millis(10))));
        signal.set();
        task.await.unwrap();
        assert!(thread.join().unwrap());
        assert!(signal.is_set());
    }

    #[test]
    fn a_timeout_past_the_clock_waits_without_one() {
        let signal = DoneSignal::new();
        let setter = signal.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            setter.set();
        });
        assert!(signal.wait_blocking(Some(Duration::MAX)));
        thread.join().unwrap();
    }
}
