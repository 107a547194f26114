//! The mutex, condition variable and atomics the queue core synchronises with: parking_lot's and
//! std's, or loom's when the
//! crate is built with `RUSTFLAGS="--cfg workqueue_loom"`, so that the model tests in
//! `tests/it/loom.rs` can explore every interleaving of the core. Both offer the same small API,
//! with std's by-value `Condvar::wait`. (A custom cfg rather than `loom`, because tokio reacts to
//! `--cfg loom` itself.)

#[cfg(not(workqueue_loom))]
pub(crate) use parking_lot::{Mutex, MutexGuard};
#[cfg(not(workqueue_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize};

#[cfg(workqueue_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize};

#[cfg(workqueue_loom)]
pub(crate) use loom::sync::MutexGuard;

/// A condition variable.
pub(crate) struct Condvar(
    #[cfg(not(workqueue_loom))] parking_lot::Condvar,
    #[cfg(workqueue_loom)] loom::sync::Condvar,
);

#[cfg(not(workqueue_loom))]
impl Condvar {
    pub(crate) fn new() -> Self {
        Condvar(parking_lot::Condvar::new())
    }

    /// Releases the lock, waits for a notification, and takes the lock again.
    pub(crate) fn wait<'a, T>(&self, mut guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0.wait(&mut guard);
        guard
    }

    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
}

#[cfg(workqueue_loom)]
impl Condvar {
    pub(crate) fn new() -> Self {
        Condvar(loom::sync::Condvar::new())
    }

    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
}

/// loom's mutex with parking_lot's `lock` (no poisoning to handle).
#[cfg(workqueue_loom)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(workqueue_loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
