//! Running workers over a queue until it shuts down: [`run_workers_blocking`] with threads and
//! [`run_workers`] with tokio tasks (client-go controllers write this loop by hand with
//! `wait.Until(worker, ...)`).

use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::thread;

use crate::queue::Queue;

/// Calls `done` for its item when dropped, so that a panicking handler does not leave the item
/// processing forever.
struct DoneGuard<'q, T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    queue: &'q Queue<T>,
    item: T,
}

impl<T> Drop for DoneGuard<'_, T>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    fn drop(&mut self) {
        self.queue.done(&self.item);
    }
}

/// Runs `workers` threads that each take items from `queue`, call `handler` on them and mark them
/// done, until the queue is shut down and empty; returns when every worker has stopped.
///
/// The handler decides about retries through the queue it captured (for a
/// [`RateLimitingQueue`](crate::RateLimitingQueue): `forget` or `add_rate_limited`); `done` is
/// called for it, also when it panics. A panic ends that worker only, and is raised again here
/// once the other workers have stopped. At least one worker runs.
///
/// The blocking twin of [`run_workers`], whose workers are tasks; it panics where blocking
/// would hang a runtime (see [`Queue::get_blocking`]).
///
/// ```
/// use kclient_workqueue::{run_workers_blocking, Queue};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let queue = Queue::new();
/// for key in 0..100 {
///     queue.add(key);
/// }
/// queue.shut_down(); // the workers drain what is queued, then stop
/// let processed = AtomicUsize::new(0);
/// run_workers_blocking(&queue, 4, |_key: &u32| {
///     processed.fetch_add(1, Ordering::Relaxed);
/// });
/// assert_eq!(processed.load(Ordering::Relaxed), 100);
/// ```
pub fn run_workers_blocking<T, F>(queue: &Queue<T>, workers: usize, handler: F)
where
    T: Clone + Eq + Hash + Send + 'static,
    F: Fn(&T) + Sync,
{
    kclient_flowcontrol::assert_can_block("run_workers_blocking", "run_workers(..).await");
    let worker = || {
        while let Some(item) = queue.get_blocking() {
            let guard = DoneGuard { queue, item };
            handler(&guard.item);
        }
    };
    run_scoped(workers, worker);
}

/// Runs `worker` on the calling thread and on `workers - 1` scoped threads (at least the calling
/// one), and returns once every one has returned. A panic is raised again then, with its own
/// payload (the calling thread's if it panicked, else the first spawned thread's to be joined):
/// `thread::scope` alone would raise a spawned thread's panic as "a scoped thread panicked".
pub(crate) fn run_scoped(workers: usize, worker: impl Fn() + Sync) {
    thread::scope(|scope| {
        let spawned: Vec<_> = (1..workers.max(1)).map(|_| scope.spawn(&worker)).collect();
        let mut panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&worker)).err();
        for thread in spawned {
            if let Err(payload) = thread.join() {
                panic.get_or_insert(payload);
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    });
}

/// Runs `workers` tokio tasks that each take items from `queue`, await `handler` on them and mark
/// them done, until the queue is shut down and empty; completes when every task has stopped.
///
/// The async twin of [`run_workers_blocking`], with the same contract. It must be awaited inside a tokio
/// runtime. A panic in a handler ends that task only and is raised again here once the others
/// have stopped.
///
/// ```
/// use kclient_workqueue::{run_workers, Queue};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = Queue::new();
/// for key in ["a", "b", "c"] {
///     queue.add(key.to_string());
/// }
/// queue.shut_down();
/// let processed = Arc::new(AtomicUsize::new(0));
/// let counter = processed.clone();
/// run_workers(&queue, 2, move |key: String| {
///     let counter = counter.clone();
///     async move {
///         assert!(!key.is_empty());
///         counter.fetch_add(1, Ordering::Relaxed);
///     }
/// })
/// .await;
/// assert_eq!(processed.load(Ordering::Relaxed), 3);
/// # }
/// ```
pub async fn run_workers<T, F, Fut>(queue: &Queue<T>, workers: usize, handler: F)
where
    T: Clone + Eq + Hash + Send + 'static,
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let handler = Arc::new(handler);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers.max(1) {
        let (queue, handler) = (queue.clone(), handler.clone());
        tasks.spawn(async move {
            while let Some(item) = queue.get().await {
                let guard = DoneGuard {
                    queue: &queue,
                    item: item.clone(),
                };
                handler(item).await;
                drop(guard);
            }
        });
    }
    let mut panic = None;
    while let Some(joined) = tasks.join_next().await {
        if let Err(error) = joined
            && error.is_panic()
            && panic.is_none()
        {
            panic = Some(error.into_panic());
        }
    }
    if let Some(panic) = panic {
        std::panic::resume_unwind(panic);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn workers_stop_at_shutdown_and_handle_every_item() {
        let queue = Queue::new();
        let seen = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| {
                for key in 0..500u32 {
                    queue.add(key);
                }
                while !queue.is_empty() {
                    thread::sleep(Duration::from_millis(1));
                }
                queue.shut_down_with_drain_blocking();
            });
            run_workers_blocking(&queue, 3, |_: &u32| {
                seen.fetch_add(1, Ordering::SeqCst);
            });
        });
        assert_eq!(seen.load(Ordering::SeqCst), 500);
    }

    #[test]
    fn a_panicking_handler_still_marks_its_item_done() {
        let queue = Queue::new();
        queue.add("boom");
        queue.add("fine");
        queue.shut_down();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_workers_blocking(&queue, 1, |item: &&str| {
                assert_ne!(*item, "boom", "handler failed");
            });
        }));
        assert!(result.is_err());
        // The panicking item was marked done, so a drain does not wait for it.
        queue.shut_down_with_drain_blocking();
    }

    /// The message of a panic payload.
    pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
            .unwrap_or_default()
    }

    /// A handler's panic on a spawned worker thread reaches the caller as it was raised, as
    /// the one on the caller's own thread does, not as `thread::scope`'s "a scoped thread
    /// panicked".
    #[test]
    fn a_panic_on_a_spawned_worker_is_raised_again_with_its_message() {
        let queue = Queue::new();
        queue.add(1u32);
        queue.add(2u32);
        queue.shut_down();
        let caller = thread::current().id();
        // Both workers hold an item before either handler goes on.
        let both = std::sync::Barrier::new(2);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_workers_blocking(&queue, 2, |item: &u32| {
                both.wait();
                if thread::current().id() != caller {
                    panic!("reconcile of {item} failed");
                }
            });
        }));
        let payload = result.expect_err("the worker's panic was swallowed");
        let text = panic_text(&*payload);
        assert!(text.starts_with("reconcile of "), "raised as {text:?}");
        queue.shut_down_with_drain_blocking();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_workers_handle_every_item() {
        let queue = Queue::new();
        for key in 0..300u32 {
            queue.add(key);
        }
        let seen = Arc::new(AtomicUsize::new(0));
        let runner = {
            let (queue, seen) = (queue.clone(), seen.clone());
            tokio::spawn(async move {
                run_workers(&queue, 4, move |_key: u32| {
                    let seen = seen.clone();
                    async move {
                        tokio::task::yield_now().await;
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .await
            })
        };
        queue.shut_down_with_drain().await;
        runner.await.unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 300);
    }
}
