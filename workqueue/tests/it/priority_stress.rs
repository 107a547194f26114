//! Concurrency stress of the `PriorityQueue`: producers adding at random priorities, with and
//! without delays and the rate limiter, against worker threads and tokio tasks on one queue.
//! Every key must be processed at least once after its last add and never by two workers at
//! once (the ledger of `stress.rs`); distinct keys must each be handed out exactly once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use kclient_workqueue::{AddOpts, ItemExponentialFailureRateLimiter, PriorityQueue, QueueConfig};

use crate::stress::{self, KEYS, Ledger, Rng, assert_drained_unforced, wait_until};

/// The watchdog of `stress.rs` on a priority queue.
fn watchdog(queue: PriorityQueue<usize>) -> Arc<AtomicBool> {
    stress::watchdog(
        queue,
        PriorityQueue::shutting_down,
        PriorityQueue::shut_down,
    )
}

/// The priority a producer picks: mostly the low and normal ones a controller uses.
fn priority(rng: &mut Rng) -> i32 {
    match rng.next() % 4 {
        0 | 1 => -100,
        2 => 0,
        _ => 10,
    }
}

fn producers(queue: &PriorityQueue<usize>, ledger: &Arc<Ledger>) -> Vec<thread::JoinHandle<()>> {
    (0..6u64)
        .map(|p| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                let mut rng = Rng(p * 104_729 + 3);
                for i in 0..10_000 {
                    let key = (rng.next() % KEYS as u64) as usize;
                    let priority = priority(&mut rng);
                    ledger.before_add(key);
                    match rng.next() % 4 {
                        0 | 1 => queue.add_with_opts(
                            key,
                            AddOpts {
                                priority,
                                ..AddOpts::default()
                            },
                        ),
                        2 => queue.add_with_opts(
                            key,
                            AddOpts {
                                priority,
                                after: Duration::from_micros(rng.next() % 2_000),
                                rate_limited: false,
                            },
                        ),
                        _ => queue.add_rate_limited(key),
                    }
                    if i % 500 == 0 {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect()
}

fn queue_with_fast_backoff() -> PriorityQueue<usize> {
    PriorityQueue::with_config(QueueConfig::new().rate_limiter(
        ItemExponentialFailureRateLimiter::new(Duration::from_micros(50), Duration::from_millis(2)),
    ))
}

/// Waits until every add reached the queue and was taken, drains, and checks the ledger.
fn finish(queue: &PriorityQueue<usize>, ledger: &Ledger, forced: &AtomicBool) {
    wait_until("the queue is idle", || {
        queue.waiting_len() == 0 && queue.is_empty()
    });
    queue.shut_down_with_drain_blocking();
    assert_drained_unforced(forced);
    ledger.check();
}

#[test]
fn priority_queue_producers_against_worker_threads() {
    let queue = queue_with_fast_backoff();
    let forced = watchdog(queue.clone());
    let ledger = Ledger::new();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some((key, _priority)) = queue.get_blocking() {
                    ledger.process(key, thread::yield_now);
                    queue.forget(&key);
                    queue.done(&key);
                }
            })
        })
        .collect();
    for producer in producers(&queue, &ledger) {
        producer.join().unwrap();
    }
    finish(&queue, &ledger, &forced);
    for worker in workers {
        worker.join().unwrap();
    }
    assert!(ledger.passes.load(Ordering::SeqCst) >= KEYS);
}

#[test]
fn priority_queue_producers_against_threads_and_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queue = queue_with_fast_backoff();
    let forced = watchdog(queue.clone());
    let ledger = Ledger::new();
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            runtime.spawn(async move {
                while let Some((key, _priority)) = queue.get().await {
                    ledger.process(key, || {});
                    tokio::task::yield_now().await;
                    queue.forget(&key);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || {
                while let Some((key, _priority)) = queue.get_blocking() {
                    ledger.process(key, thread::yield_now);
                    queue.done(&key);
                }
            })
        })
        .collect();
    for producer in producers(&queue, &ledger) {
        producer.join().unwrap();
    }
    finish(&queue, &ledger, &forced);
    for thread in threads {
        thread.join().unwrap();
    }
    runtime.block_on(async {
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// 80,000 distinct keys at random priorities from 8 producers to 4 threads and 4 tasks: each is
/// handed out exactly once, with the priority it was added at.
#[test]
fn priority_queue_distinct_keys_are_each_handed_out_exactly_once() {
    const PER_PRODUCER: usize = 10_000;
    const PRODUCERS: usize = 8;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queue = PriorityQueue::<usize>::new();
    let forced = watchdog(queue.clone());
    let total = PER_PRODUCER * PRODUCERS;
    let seen: Arc<Vec<AtomicUsize>> = Arc::new((0..total).map(|_| AtomicUsize::new(0)).collect());
    let wrong_priority = Arc::new(Mutex::new(Vec::new()));
    let priority_of = |key: usize| (key % 3) as i32 - 1;
    let record = {
        let (seen, wrong_priority) = (seen.clone(), wrong_priority.clone());
        move |key: usize, priority: i32| {
            seen[key].fetch_add(1, Ordering::SeqCst);
            if priority != priority_of(key) {
                wrong_priority.lock().unwrap().push((key, priority));
            }
        }
    };
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (queue, record) = (queue.clone(), record.clone());
            runtime.spawn(async move {
                while let Some((key, priority)) = queue.get().await {
                    record(key, priority);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (queue, record) = (queue.clone(), record.clone());
            thread::spawn(move || {
                while let Some((key, priority)) = queue.get_blocking() {
                    record(key, priority);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let queue = queue.clone();
            thread::spawn(move || {
                for key in p * PER_PRODUCER..(p + 1) * PER_PRODUCER {
                    queue.add_with_opts(
                        key,
                        AddOpts {
                            priority: priority_of(key),
                            ..AddOpts::default()
                        },
                    );
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().unwrap();
    }
    wait_until("every key was handed out", || {
        seen.iter().all(|count| count.load(Ordering::SeqCst) >= 1)
    });
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
    let twice: Vec<usize> = (0..total)
        .filter(|&key| seen[key].load(Ordering::SeqCst) != 1)
        .collect();
    assert!(
        twice.is_empty(),
        "keys handed out more than once: {twice:?}"
    );
    assert!(wrong_priority.lock().unwrap().is_empty());
}
