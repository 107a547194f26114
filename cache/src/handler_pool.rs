//! The process-wide pool of threads that call event handlers, instead of one thread per
//! handler.
//!
//! Handlers ([`ResourceEventHandler`](crate::ResourceEventHandler)) are plain blocking
//! functions, so they cannot run on the async runtime's workers. Every listener with
//! notifications waiting is queued here as a [`PoolJob`]; a pool thread takes it, delivers up to
//! a batch of its notifications, and queues it again at the back if more are waiting. A listener
//! is in the queue or on a thread at most once at a time (its own flag sees to that), so one
//! handler's notifications stay in order, and the batch limit lets every waiting listener have
//! its turn.
//!
//! **A slow handler does not hold back the others.** The pool keeps up to [`core_threads`]
//! threads, started on demand. A monitor thread watches the queue: when work has waited for
//! [`STALL`] while no thread took anything from the queue (every thread is inside a handler that
//! blocks), it adds a thread, up to [`MAX_THREADS`]. Threads beyond the core ones end after
//! [`KEEP_ALIVE`] without work. So a handler that blocks costs one thread while it blocks, and a
//! process with many quick handlers runs on a few threads.
//!
//! The threads and the monitor start with the first job and then live as long as the process.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

/// How long queued work may wait with no thread taking any before the pool adds a thread.
pub(crate) const STALL: Duration = Duration::from_millis(50);

/// How long a thread beyond the core ones stays without work before it ends.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The most threads the pool runs at once: as many handlers may block at the same time
/// before the rest wait for one of them.
pub(crate) const MAX_THREADS: usize = 256;

/// Work the pool runs: one listener's pending notifications.
pub(crate) trait PoolJob: Send + Sync {
    /// Delivers up to a batch of the pending work; true if more is waiting and the job should
    /// be queued again.
    fn run_batch(&self) -> bool;
}

/// The threads the pool keeps even without work: the machine's parallelism, between 2 and 4.
/// Handlers normally return at once (they add a key to a workqueue), so a few threads serve
/// any number of them.
pub(crate) fn core_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, 4)
}

/// The pool of the process.
pub(crate) struct HandlerPool {
    state: Mutex<PoolState>,
    /// Idle threads wait here for work.
    work: Condvar,
    /// The monitor waits here for work to appear.
    monitor: Condvar,
    core: usize,
}

struct PoolState {
    queue: VecDeque<Arc<dyn PoolJob>>,
    /// Threads running (idle or not), without the monitor.
    threads: usize,
    /// Threads waiting for work.
    idle: usize,
    /// Jobs taken from the queue so far: the monitor's measure of progress.
    taken: u64,
    monitor_started: bool,
    /// Threads ever started, for their names.
    started: u64,
}

/// The pool every listener of the process submits to.
pub(crate) fn pool() -> &'static HandlerPool {
    static POOL: OnceLock<HandlerPool> = OnceLock::new();
    POOL.get_or_init(|| HandlerPool {
        state: Mutex::new(PoolState {
            queue: VecDeque::new(),
            threads: 0,
            idle: 0,
            taken: 0,
            monitor_started: false,
            started: 0,
        }),
        work: Condvar::new(),
        monitor: Condvar::new(),
        core: core_threads(),
    })
}

impl HandlerPool {
    /// Queues `job` to be run on a pool thread.
    pub(crate) fn submit(&'static self, job: Arc<dyn PoolJob>) {
        let mut state = self.state.lock();
        self.push(&mut state, job);
        if !state.monitor_started {
            state.monitor_started = true;
            let spawned = std::thread::Builder::new()
                .name("kclient-handler-monitor".into())
                .spawn(move || self.monitor());
            if let Err(e) = spawned {
                state.monitor_started = false;
                tracing::error!(error = %e, "cannot start the event handler pool's monitor thread");
            }
        }
        if state.idle > 0 {
            self.work.notify_one();
        } else if state.threads < self.core {
            self.spawn_worker(&mut state);
        }
    }

    /// The number of threads running handlers or waiting for them (without the monitor).
    #[cfg(test)]
    pub(crate) fn threads(&self) -> usize {
        self.state.lock().threads
    }

    fn push(&self, state: &mut PoolState, job: Arc<dyn PoolJob>) {
        if state.queue.is_empty() {
            self.monitor.notify_one();
        }
        state.queue.push_back(job);
    }

    fn spawn_worker(&'static self, state: &mut MutexGuard<'_, PoolState>) {
        state.started += 1;
        let spawned = std::thread::Builder::new()
            .name(format!("kclient-handler-{}", state.started))
            .spawn(move || self.worker());
        match spawned {
            Ok(_) => state.threads += 1,
            Err(e) => {
                tracing::error!(error = %e, "cannot start an event handler thread");
            }
        }
    }

    /// A pool thread: runs jobs until it has been idle for [`KEEP_ALIVE`] while the pool has
    /// more than its core threads.
    fn worker(&'static self) {
        let mut state = self.state.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                state.taken += 1;
                let more = MutexGuard::unlocked(&mut state, || job.run_batch());
                if more {
                    self.push(&mut state, job);
                }
                continue;
            }
            state.idle += 1;
            let timed_out = self.work.wait_for(&mut state, KEEP_ALIVE).timed_out();
            state.idle -= 1;
            if timed_out && state.queue.is_empty() && state.threads > self.core {
                state.threads -= 1;
                return;
            }
        }
    }

    /// The monitor thread: adds a thread when queued work waits while every thread is busy.
    fn monitor(&'static self) {
        let mut state = self.state.lock();
        loop {
            while state.queue.is_empty() {
                self.monitor.wait(&mut state);
            }
            let taken = state.taken;
            let deadline = Instant::now() + STALL;
            while Instant::now() < deadline {
                self.monitor.wait_until(&mut state, deadline);
            }
            if state.queue.is_empty() || state.taken != taken {
                continue;
            }
            if state.idle > 0 {
                // Idle threads exist but none took the work yet: wake them all.
                self.work.notify_all();
            } else if state.threads < MAX_THREADS {
                tracing::debug!(
                    threads = state.threads + 1,
                    "every event handler thread is busy; adding one"
                );
                self.spawn_worker(&mut state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A job that blocks until released, counting its runs.
    struct Blocking {
        runs: AtomicUsize,
        release: crossbeam_channel::Receiver<()>,
    }

    impl PoolJob for Blocking {
        fn run_batch(&self) -> bool {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let _ = self.release.recv();
            false
        }
    }

    #[test]
    fn blocked_threads_do_not_starve_queued_work() {
        let pool = pool();
        let (release_tx, release_rx) = crossbeam_channel::unbounded();
        // More blocking jobs than core threads: each must still get a thread.
        let jobs: Vec<Arc<Blocking>> = (0..core_threads() + 3)
            .map(|_| {
                Arc::new(Blocking {
                    runs: AtomicUsize::new(0),
                    release: release_rx.clone(),
                })
            })
            .collect();
        for job in &jobs {
            pool.submit(job.clone());
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while jobs.iter().any(|j| j.runs.load(Ordering::SeqCst) == 0) {
            assert!(
                std::time::Instant::now() < deadline,
                "a queued job never got a thread while the others blocked"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(pool.threads() >= jobs.len());
        drop(release_tx);
    }
}
