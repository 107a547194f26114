//! Throughput of the work queue: the add/get/done cycle with 1, 2 and 8 workers over 10,000 keys
//! (worker threads with `get`, and tokio tasks with `get`), and `add_after` with random
//! delays (cost of the call, and how late items reach the queue).
//!
//! Run: `cargo bench -p kclient-workqueue --bench throughput` (a plain binary, `harness = false`).
//! Each figure is the best of a few runs, to damp the noise of a shared machine.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use kclient_workqueue::{DelayingQueue, Queue};

const KEYS: usize = 10_000;
/// Each key goes through the queue this many times per run.
const ROUNDS: u32 = 20;
const RUNS: usize = 5;

/// Fills the queue with every key, then has `workers` threads take keys and add each back
/// (after `done`) until it has been processed `ROUNDS` times. Returns the time per processed item.
fn cycle_threads(workers: usize) -> Duration {
    let queue = Queue::<u32>::new();
    let passes: Arc<Vec<AtomicU32>> = Arc::new((0..KEYS).map(|_| AtomicU32::new(0)).collect());
    let remaining = Arc::new(AtomicUsize::new(KEYS));
    for key in 0..KEYS as u32 {
        queue.add(key);
    }
    let start = Instant::now();
    thread::scope(|s| {
        for _ in 0..workers {
            let (queue, passes, remaining) = (&queue, &passes, &remaining);
            s.spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    let pass = passes[key as usize].fetch_add(1, Ordering::Relaxed) + 1;
                    queue.done(&key);
                    if pass < ROUNDS {
                        queue.add(black_box(key));
                    } else if remaining.fetch_sub(1, Ordering::Relaxed) == 1 {
                        queue.shut_down();
                    }
                }
            });
        }
    });
    start.elapsed() / (KEYS as u32 * ROUNDS)
}

/// The same cycle with `workers` tokio tasks on a 2-thread runtime.
fn cycle_tasks(runtime: &tokio::runtime::Runtime, workers: usize) -> Duration {
    let queue = Queue::<u32>::new();
    let passes: Arc<Vec<AtomicU32>> = Arc::new((0..KEYS).map(|_| AtomicU32::new(0)).collect());
    let remaining = Arc::new(AtomicUsize::new(KEYS));
    for key in 0..KEYS as u32 {
        queue.add(key);
    }
    let start = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..workers)
            .map(|_| {
                let (queue, passes, remaining) = (queue.clone(), passes.clone(), remaining.clone());
                tokio::spawn(async move {
                    while let Some(key) = queue.get().await {
                        let pass = passes[key as usize].fetch_add(1, Ordering::Relaxed) + 1;
                        queue.done(&key);
                        if pass < ROUNDS {
                            queue.add(black_box(key));
                        } else if remaining.fetch_sub(1, Ordering::Relaxed) == 1 {
                            queue.shut_down();
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("worker task");
        }
    });
    start.elapsed() / (KEYS as u32 * ROUNDS)
}

/// Producers add random keys while `workers` threads consume: contended adds, many collapsed.
/// Returns (time per add, items processed).
fn contended_adds(producers: usize, workers: usize) -> (Duration, usize) {
    const ADDS_PER_PRODUCER: usize = 100_000;
    let queue = Queue::<u32>::new();
    let processed = AtomicUsize::new(0);
    let start = Instant::now();
    thread::scope(|s| {
        let consumers: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    while let Some(key) = queue.get_blocking() {
                        processed.fetch_add(1, Ordering::Relaxed);
                        queue.done(&key);
                    }
                })
            })
            .collect();
        let adders: Vec<_> = (0..producers)
            .map(|p| {
                let queue = &queue;
                s.spawn(move || {
                    let mut rng = Rng(p as u64 * 7919 + 17);
                    for _ in 0..ADDS_PER_PRODUCER {
                        queue.add((rng.next() % KEYS as u64) as u32);
                    }
                })
            })
            .collect();
        for adder in adders {
            adder.join().expect("producer");
        }
        queue.shut_down();
        for consumer in consumers {
            consumer.join().expect("consumer");
        }
    });
    let adds = (producers * ADDS_PER_PRODUCER) as u32;
    (start.elapsed() / adds, processed.into_inner())
}

/// Adds `KEYS` items with random delays up to `max_delay` from one thread while two workers
/// consume. Returns (time per add_after call, total time until the last item was processed,
/// median and 99th percentile lateness of items relative to their ready time).
fn add_after_random(max_delay: Duration) -> (Duration, Duration, Duration, Duration) {
    let queue = DelayingQueue::<u32>::new();
    let ready_at: Vec<std::sync::OnceLock<Instant>> =
        (0..KEYS).map(|_| std::sync::OnceLock::new()).collect();
    let lateness = parking_lot::Mutex::new(Vec::with_capacity(KEYS));
    let got = AtomicUsize::new(0);
    let start = Instant::now();
    let mut per_call = Duration::ZERO;
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(key) = queue.get_blocking() {
                    let now = Instant::now();
                    if let Some(ready) = ready_at[key as usize].get() {
                        lateness.lock().push(now.saturating_duration_since(*ready));
                    }
                    queue.done(&key);
                    if got.fetch_add(1, Ordering::Relaxed) + 1 == KEYS {
                        queue.shut_down();
                    }
                }
            });
        }
        let mut rng = Rng(42);
        let max = max_delay.as_nanos() as u64;
        let calls = Instant::now();
        for key in 0..KEYS as u32 {
            let delay = Duration::from_nanos(rng.next() % max);
            let _ = ready_at[key as usize].set(Instant::now() + delay);
            queue.add_after(key, delay);
        }
        per_call = calls.elapsed() / KEYS as u32;
    });
    let total = start.elapsed();
    let mut lateness = lateness.into_inner();
    lateness.sort_unstable();
    let pick = |q: f64| lateness[((lateness.len() - 1) as f64 * q) as usize];
    (per_call, total, pick(0.5), pick(0.99))
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T, key: impl Fn(&T) -> Duration) -> T {
    (0..runs)
        .map(|_| f())
        .min_by_key(|result| key(result))
        .expect("at least one run")
}

fn per_second(per_item: Duration) -> f64 {
    1.0 / per_item.as_secs_f64()
}

fn main() {
    println!(
        "kclient-workqueue throughput ({} cores, best of {RUNS} runs)",
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("add/get/done cycle, {KEYS} keys x {ROUNDS} rounds:");
    for workers in [1, 2, 8] {
        let per_item = best(RUNS, || cycle_threads(workers), |d| *d);
        println!(
            "  {workers} worker thread(s): {:>7.0} ns/item  {:>10.0} items/s",
            per_item.as_nanos() as f64,
            per_second(per_item)
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    for workers in [1, 2, 8] {
        let per_item = best(RUNS, || cycle_tasks(&runtime, workers), |d| *d);
        println!(
            "  {workers} tokio task(s):    {:>7.0} ns/item  {:>10.0} items/s",
            per_item.as_nanos() as f64,
            per_second(per_item)
        );
    }
    println!();
    println!("contended adds of random keys (of {KEYS}), 2 producers:");
    for workers in [1, 2, 8] {
        let (per_add, processed) = best(RUNS, || contended_adds(2, workers), |r| r.0);
        println!(
            "  {workers} worker thread(s): {:>7.0} ns/add  {:>10.0} adds/s  ({processed} items processed of 200000 adds)",
            per_add.as_nanos() as f64,
            per_second(per_add)
        );
    }
    println!();
    println!("add_after, {KEYS} keys with random delays, 2 worker threads:");
    for max_delay in [Duration::from_millis(10), Duration::from_millis(100)] {
        let (per_call, total, p50, p99) = best(RUNS, || add_after_random(max_delay), |r| r.0);
        println!(
            "  delays < {max_delay:?}: {:>5.0} ns/add_after  all done in {:.1} ms  lateness p50 {:.0} us, p99 {:.0} us",
            per_call.as_nanos() as f64,
            total.as_secs_f64() * 1e3,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
        );
    }
}
