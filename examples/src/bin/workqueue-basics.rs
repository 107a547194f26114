//! The rate-limited workqueue on its own, no cluster needed: worker threads blocking on
//! `get`, the "stingy" deduplication of keys added while they wait, per-key exponential
//! backoff for failures with `add_rate_limited`, `forget` on success, a bounded number of
//! retries, and `shut_down_with_drain_blocking` to stop once the work in hand is done.
//!
//! ```sh
//! cargo run -p kclient-examples --bin workqueue-basics
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use kclient::workqueue::{QueueConfig, RateLimitingQueue, default_controller_rate_limiter};
use kclient_examples::outln;
use parking_lot::Mutex;

/// How many times a failing key is retried before it is dropped.
const MAX_RETRIES: usize = 4;

fn main() {
    let queue: RateLimitingQueue<String> = RateLimitingQueue::with_config(
        QueueConfig::new()
            .name("workqueue-basics")
            .rate_limiter(default_controller_rate_limiter()),
    );
    let started = Instant::now();
    // "flaky" fails twice then succeeds; "broken" always fails; the others succeed.
    let attempts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();

    outln!("1. Stingy: adding default/web five times while no worker runs");
    for _ in 0..5 {
        queue.add("default/web".to_owned());
    }
    outln!("   queue length: {} (one entry per key)", queue.len());
    for key in ["default/db", "default/flaky", "default/broken"] {
        queue.add(key.to_owned());
    }
    outln!("   queue length after three more keys: {}", queue.len());

    outln!("2. Two worker threads take keys with the blocking get()");
    let workers: Vec<_> = (1..=2)
        .map(|id| {
            let (queue, attempts) = (queue.clone(), Arc::clone(&attempts));
            thread::spawn(move || {
                while let Some(key) = queue.get_blocking() {
                    let attempt = {
                        let mut attempts = attempts.lock();
                        let n = attempts.entry(key.clone()).or_insert(0);
                        *n += 1;
                        *n
                    };
                    let result = process(&key, attempt);
                    let at = started.elapsed().as_millis();
                    match result {
                        Ok(()) => {
                            outln!("   [{at:>4} ms] worker {id}: {key} done (attempt {attempt})");
                            queue.forget(&key);
                        }
                        Err(e) if queue.num_requeues(&key) < MAX_RETRIES => {
                            outln!(
                                "   [{at:>4} ms] worker {id}: {key} failed ({e}); retry {} after backoff",
                                queue.num_requeues(&key) + 1
                            );
                            queue.add_rate_limited(key.clone());
                        }
                        Err(e) => {
                            outln!(
                                "   [{at:>4} ms] worker {id}: {key} failed ({e}); giving up after {MAX_RETRIES} retries"
                            );
                            queue.forget(&key);
                        }
                    }
                    queue.done(&key);
                }
                outln!("   worker {id}: the queue shut down; stopping");
            })
        })
        .collect();

    // Let the retries play out (5 ms, 10 ms, 20 ms, 40 ms of backoff for "broken").
    thread::sleep(Duration::from_millis(300));
    outln!(
        "3. Shutting down with drain (queue length {}, waiting {})",
        queue.len(),
        queue.waiting_len()
    );
    queue.shut_down_with_drain_blocking();
    for worker in workers {
        if worker.join().is_err() {
            eprintln!("a worker panicked");
        }
    }
    let attempts = attempts.lock();
    let mut summary: Vec<_> = attempts.iter().collect();
    summary.sort();
    outln!("Summary (attempts per key):");
    for (key, n) in summary {
        outln!("   {key}: {n}");
    }
}

/// The work: pretend to reconcile `key`.
fn process(key: &str, attempt: usize) -> Result<(), String> {
    match key {
        "default/flaky" if attempt <= 2 => Err("the API server said 409 Conflict".into()),
        "default/broken" => Err("the spec can never be satisfied".into()),
        _ => {
            thread::sleep(Duration::from_millis(10));
            Ok(())
        }
    }
}
