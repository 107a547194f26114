//! Concurrency stress: many producers, many workers (threads and tokio tasks on one queue).
//! Every key must be processed at least once after its last add, and never by two workers at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use kclient_workqueue::{ItemExponentialFailureRateLimiter, Queue, QueueConfig, RateLimitingQueue};

pub(crate) const KEYS: usize = 64;

/// Per-key bookkeeping shared by producers and workers.
pub(crate) struct Ledger {
    /// Bumped by a producer just before each add of the key.
    adds: Vec<AtomicU64>,
    /// The highest add count a worker had seen when it started processing the key.
    processed: Vec<AtomicU64>,
    /// Set while a worker processes the key.
    running: Vec<AtomicBool>,
    pub(crate) passes: AtomicUsize,
    /// Set when a key was seen processing twice at once. Recorded rather than panicking, so that
    /// the worker still calls `done` and a broken queue fails the test instead of hanging it.
    overlapped: AtomicBool,
}

impl Ledger {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Ledger {
            adds: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            processed: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            running: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            passes: AtomicUsize::new(0),
            overlapped: AtomicBool::new(false),
        })
    }

    pub(crate) fn before_add(&self, key: usize) {
        self.adds[key].fetch_add(1, Ordering::SeqCst);
    }

    /// A worker's pass over `key`.
    pub(crate) fn process(&self, key: usize, work: impl FnOnce()) {
        let already = self.running[key].swap(true, Ordering::SeqCst);
        let seen = self.adds[key].load(Ordering::SeqCst);
        self.processed[key].fetch_max(seen, Ordering::SeqCst);
        work();
        if already {
            self.overlapped.store(true, Ordering::SeqCst);
        } else {
            self.running[key].store(false, Ordering::SeqCst);
        }
        self.passes.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn check(&self) {
        assert!(
            !self.overlapped.load(Ordering::SeqCst),
            "a key was processed by two workers at once"
        );
        for key in 0..KEYS {
            let adds = self.adds[key].load(Ordering::SeqCst);
            let processed = self.processed[key].load(Ordering::SeqCst);
            assert_eq!(processed, adds, "key {key}: last add not processed");
        }
    }
}

/// A small deterministic generator (xorshift), so the test needs no crate.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Forces a queue down a minute after shutdown began (or after two, if it never does), so that
/// a queue whose drain never ends fails the test instead of hanging it. Returns whether it had to:
/// a test asserts after its drain that it did not ([`assert_drained_unforced`]). `shutting_down`
/// and `shut_down` are the queue's methods of those names.
pub(crate) fn watchdog<Q: Send + 'static>(
    queue: Q,
    shutting_down: fn(&Q) -> bool,
    shut_down: fn(&Q),
) -> Arc<AtomicBool> {
    let forced = Arc::new(AtomicBool::new(false));
    let flag = forced.clone();
    thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline && !shutting_down(&queue) {
            thread::sleep(Duration::from_millis(10));
        }
        thread::sleep(Duration::from_secs(60));
        flag.store(true, Ordering::SeqCst);
        shut_down(&queue);
    });
    forced
}

/// Fails if the watchdog had to force the queue down: its drain did not end by itself.
pub(crate) fn assert_drained_unforced(forced: &AtomicBool) {
    assert!(
        !forced.load(Ordering::SeqCst),
        "the drain did not end: the watchdog shut the queue down"
    );
}

pub(crate) fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn many_producers_many_worker_threads() {
    let queue = Queue::<usize>::new();
    let forced = watchdog(queue.clone(), Queue::shutting_down, Queue::shut_down);
    let ledger = Ledger::new();
    let producers: Vec<_> = (0..8u64)
        .map(|p| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                let mut rng = Rng(p * 7919 + 1);
                for i in 0..20_000 {
                    let key = (rng.next() % KEYS as u64) as usize;
                    ledger.before_add(key);
                    queue.add(key);
                    if i % 500 == 0 {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    ledger.process(key, thread::yield_now);
                    queue.done(&key);
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    queue.shut_down_with_drain_blocking();
    assert_drained_unforced(&forced);
    for worker in workers {
        worker.join().unwrap();
    }
    ledger.check();
    assert!(ledger.passes.load(Ordering::SeqCst) >= KEYS);
}

#[test]
fn delayed_and_rate_limited_adds_with_thread_and_task_workers() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queue: RateLimitingQueue<usize> = RateLimitingQueue::with_config(
        QueueConfig::new().rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_micros(50),
            Duration::from_millis(2),
        )),
    );
    let forced = watchdog(Queue::clone(&queue), Queue::shutting_down, Queue::shut_down);
    let ledger = Ledger::new();

    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            runtime.spawn(async move {
                while let Some(key) = queue.get().await {
                    ledger.process(key, || {});
                    tokio::task::yield_now().await;
                    queue.done(&key);
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    ledger.process(key, thread::yield_now);
                    queue.forget(&key);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..6u64)
        .map(|p| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                let mut rng = Rng(p * 104_729 + 3);
                for _ in 0..10_000 {
                    let key = (rng.next() % KEYS as u64) as usize;
                    ledger.before_add(key);
                    match rng.next() % 3 {
                        0 => queue.add(key),
                        1 => queue.add_after(key, Duration::from_micros(rng.next() % 2_000)),
                        _ => queue.add_rate_limited(key),
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    // Every delayed add has reached the queue and every queued key was taken...
    wait_until("the queue is idle", || {
        queue.waiting_len() == 0 && queue.is_empty()
    });
    // ...and the drain waits for the keys being processed (and their second passes).
    queue.shut_down_with_drain_blocking();
    assert_drained_unforced(&forced);
    for thread in threads {
        thread.join().unwrap();
    }
    runtime.block_on(async {
        for task in tasks {
            task.await.unwrap();
        }
    });
    ledger.check();
}

/// Thirty-two producer threads against thirty-two worker threads and eight tokio tasks on one
/// queue, over the 64 keys: the contended path of the waking protocol (one wake-up in flight,
/// chains, a spinning getter) with both kinds of getter at once.
#[test]
fn thirty_two_producers_against_threads_and_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queue = Queue::<usize>::new();
    let forced = watchdog(queue.clone(), Queue::shutting_down, Queue::shut_down);
    let ledger = Ledger::new();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            runtime.spawn(async move {
                while let Some(key) = queue.get().await {
                    ledger.process(key, || {});
                    queue.done(&key);
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..32)
        .map(|w| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    // Some workers hold their key a little, so that adds land while processing.
                    ledger.process(key, || {
                        if w % 4 == 0 {
                            thread::yield_now();
                        }
                    });
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..32u64)
        .map(|p| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                let mut rng = Rng(p * 6_151 + 11);
                for _ in 0..5_000 {
                    let key = (rng.next() % KEYS as u64) as usize;
                    ledger.before_add(key);
                    queue.add(key);
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    wait_until("the queue is empty", || queue.is_empty());
    queue.shut_down_with_drain_blocking();
    assert_drained_unforced(&forced);
    for thread in threads {
        thread.join().unwrap();
    }
    runtime.block_on(async {
        for task in tasks {
            task.await.unwrap();
        }
    });
    ledger.check();
}

/// Distinct keys from sixteen producers, sixteen workers: every key is handed out exactly once.
#[test]
fn distinct_keys_are_each_handed_out_exactly_once() {
    const PER_PRODUCER: usize = 20_000;
    const PRODUCERS: usize = 16;
    let queue = Queue::<usize>::new();
    let forced = watchdog(queue.clone(), Queue::shutting_down, Queue::shut_down);
    let handed: Arc<Vec<AtomicUsize>> = Arc::new(
        (0..PER_PRODUCER * PRODUCERS)
            .map(|_| AtomicUsize::new(0))
            .collect(),
    );
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let (queue, handed) = (queue.clone(), handed.clone());
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    handed[key].fetch_add(1, Ordering::SeqCst);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let queue = queue.clone();
            thread::spawn(move || {
                for i in 0..PER_PRODUCER {
                    queue.add(i * PRODUCERS + p);
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    queue.shut_down_with_drain_blocking();
    assert_drained_unforced(&forced);
    for worker in workers {
        worker.join().unwrap();
    }
    let wrong: Vec<(usize, usize)> = handed
        .iter()
        .enumerate()
        .map(|(key, n)| (key, n.load(Ordering::SeqCst)))
        .filter(|&(_, n)| n != 1)
        .take(5)
        .collect();
    assert!(
        wrong.is_empty(),
        "keys handed out other than once (key, times): {wrong:?}"
    );
}

/// `shut_down_with_drain_delayed_blocking` while producers' delayed adds are still waiting: every key's
/// last add is processed, none is handed back (they are all due within the bound), none runs
/// twice at once.
#[test]
fn drain_with_delayed_loses_no_delayed_add() {
    let queue: RateLimitingQueue<usize> = RateLimitingQueue::with_config(
        QueueConfig::new().rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_micros(100),
            Duration::from_millis(5),
        )),
    );
    let forced = watchdog(Queue::clone(&queue), Queue::shutting_down, Queue::shut_down);
    let ledger = Ledger::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    ledger.process(key, thread::yield_now);
                    queue.forget(&key);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..4u64)
        .map(|p| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                let mut rng = Rng(p * 31 + 5);
                for _ in 0..5_000 {
                    let key = (rng.next() % KEYS as u64) as usize;
                    ledger.before_add(key);
                    match rng.next() % 3 {
                        0 => queue.add(key),
                        1 => queue.add_after(key, Duration::from_micros(rng.next() % 5_000)),
                        _ => queue.add_rate_limited(key),
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    // No waiting for the delayed adds here: the drain does it.
    let handed_back = queue.shut_down_with_drain_delayed_blocking(Duration::from_secs(3600));
    assert_drained_unforced(&forced);
    assert_eq!(handed_back, Vec::<usize>::new());
    assert_eq!(queue.waiting_len(), 0);
    for worker in workers {
        worker.join().unwrap();
    }
    ledger.check();
}
