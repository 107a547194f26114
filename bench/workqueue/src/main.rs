//! The kclient side of the workqueue benchmark (`bench/workqueue/run`): one measurement per
//! process, printed as one JSON line, so that the driver can read each run's CPU time from
//! `getrusage` of the child. `go/main.go` measures the same on client-go's `util/workqueue`.
//!
//! ```text
//! kclient-bench-workqueue drain <blocking|async|tasks> PRODUCERS WORKERS <distinct|repeated> ADDS [busy:US|wait:US]
//! kclient-bench-workqueue delayed <add_after|add_rate_limited> PENDING
//! kclient-bench-workqueue fire ITEMS SPREAD_MS WORKERS
//! kclient-bench-workqueue threads QUEUES
//! kclient-bench-workqueue pingpong ROUND_TRIPS
//! kclient-bench-workqueue merged <thread|task> ADDS
//! ```
//!
//! - `drain`: PRODUCERS threads share ADDS adds (distinct keys, or keys `i % 1000`) while WORKERS
//!   workers loop `get`/`done`. Producers are threads in both modes (kclient's informers call
//!   handlers on threads), so that only the worker API differs: threads calling `get`
//!   (`blocking`), or tokio tasks calling `get` on a runtime with one thread per core
//!   (`async`). A third mode, `tasks`, puts the producers on that runtime too, as tasks that
//!   each spend a unit of tokio's cooperative budget per add (as a task receiving its events
//!   from a tokio channel does): an async program end to end, as client-go's goroutines are.
//!   When the producers are done the main thread calls `shut_down_with_drain_blocking` and the
//!   workers stop at `None`. Reports the wall time from the start
//!   of the adds to the last worker's exit, the items processed, and the add-to-get latency
//!   (from the earliest add not yet served to the `get` that serves it, on every 16th key) at
//!   p50, p99 and its maximum, with the number of samples, and the user and system CPU seconds
//!   the process spent over the same interval (`getrusage`, so not the creation of the
//!   threads, which came before). The last argument gives the workers
//!   something to do with each item before `done`, so that they, not the queue, are the
//!   bottleneck and items wait long enough for repeated adds to merge into them: `busy:US`
//!   keeps the thread busy that many microseconds (a reconcile that computes), `wait:US` sleeps
//!   that long (`thread::sleep` on a thread, `tokio::time::sleep` in a task: a reconcile that
//!   waits for the API server). Every result line ends with the program's peak RSS.
//! - `delayed`: fills a rate-limiting queue (client-go's default controller rate limiter) with
//!   PENDING items waiting an hour (`add_after`) or their limiter's delay (`add_rate_limited`),
//!   then times PENDING more calls of new items: ns per call with PENDING to 2 x PENDING waiting.
//! - `fire`: ITEMS `add_after` calls with delays spread evenly over SPREAD_MS, WORKERS threads
//!   consuming: time until the last item was processed and lateness after the ready time.
//! - `threads`: QUEUES delaying queues, each with an item waiting, and the process's thread count.
//! - `merged`: the producer's side of a `repeated` drain alone. 1,000 keys are added and left
//!   waiting (nothing gets), then one producer times ADDS more adds cycling through them, each
//!   of which merges into its waiting item: from a thread, or from a task on the `tasks` mode's
//!   runtime spending a unit of tokio's cooperative budget per add, as a `tasks` producer does.
//!   The time such a producer takes bounds how many items a worker computing beside it can
//!   take, so it sets the items processed of `tasks 1 1 repeated ... busy:20`.
//! - `pingpong`: two threads pass a token back and forth through one atomic, ROUND_TRIPS times:
//!   the ns per round trip is about twice what moving a cache line between the two cores costs.
//!   On the 2-vCPU machines of bench/RESULTS.md it moved between about 100 and 700 ns from one
//!   minute to the next (where the hypervisor placed the vCPUs), and every drain with distinct
//!   keys moved with it, so the driver measures it before each run.
//!
//! Built with `RUSTFLAGS="--cfg tokio_unstable"`, the harness turns off the LIFO slot of the
//! runtime of `async` and `tasks` drains when `KCLIENT_WQ_NO_LIFO` is set (tokio's
//! `Builder::disable_lifo_slot`, unstable): a measurement of what that slot does to a producer
//! task and the worker it wakes (bench/RESULTS.md, issue 21, session 60). kclient's queue does
//! not depend on it.
//!
//! `KCLIENT_WQ_MERGE_WINDOW_US` sets the drain's queue's merge window
//! (`QueueConfig::merge_window`; 0 never holds), in any build: a measurement of what holding
//! does to a row (bench/RESULTS.md, issue 21, sessions 60 and 62). `bench/workqueue/run` leaves
//! it unset, so the record measures the default window.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use kclient_workqueue::{
    DelayingQueue, Queue, QueueConfig, RateLimitingQueue, default_controller_rate_limiter,
};

/// The number of keys in the repeated-keys runs.
const REPEATED_KEYS: u64 = 1_000;

/// Latency is sampled on the keys divisible by this (reading the clock twice per item would
/// cost more than the queue does).
const SAMPLE_EVERY: u64 = 16;

fn usage() -> ! {
    eprintln!(
        "usage: kclient-bench-workqueue drain <blocking|async|tasks> PRODUCERS WORKERS <distinct|repeated> ADDS [busy:US|wait:US]\n\
         \x20      kclient-bench-workqueue delayed <add_after|add_rate_limited> PENDING\n\
         \x20      kclient-bench-workqueue fire ITEMS SPREAD_MS WORKERS\n\
         \x20      kclient-bench-workqueue threads QUEUES\n\
         \x20      kclient-bench-workqueue pingpong ROUND_TRIPS\n\
         \x20      kclient-bench-workqueue merged <thread|task> ADDS"
    );
    std::process::exit(2)
}

fn number(arg: Option<&String>) -> u64 {
    arg.and_then(|a| a.parse().ok()).unwrap_or_else(|| usage())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("drain") => {
            let api = args.get(1).map(String::as_str).unwrap_or_else(|| usage());
            let producers = number(args.get(2)) as usize;
            let workers = number(args.get(3)) as usize;
            let keys = args.get(4).map(String::as_str).unwrap_or_else(|| usage());
            let adds = number(args.get(5));
            let work = args.get(6).map_or(Work::None, |arg| Work::parse(arg));
            let repeated = match keys {
                "distinct" => false,
                "repeated" => true,
                _ => usage(),
            };
            let mode = match api {
                "blocking" => Mode::Threads,
                "async" => Mode::AsyncWorkers(runtime()),
                "tasks" => Mode::AllTasks(runtime()),
                _ => usage(),
            };
            let result = drain(producers, workers, repeated, adds, work, mode);
            emit(format!(
                "{{\"bench\":\"drain\",\"impl\":\"kclient\",\"api\":\"{api}\",\"producers\":{producers},\
                 \"workers\":{workers},\"keys\":\"{keys}\",\"adds\":{adds},\"work\":\"{work}\",{result}}}"
            ));
        }
        Some("merged") => {
            let from = args.get(1).map(String::as_str).unwrap_or_else(|| usage());
            let adds = number(args.get(2));
            let runtime = match from {
                "thread" => None,
                "task" => Some(runtime()),
                _ => usage(),
            };
            let elapsed = merged(adds, runtime);
            emit(format!(
                "{{\"bench\":\"merged\",\"impl\":\"kclient\",\"from\":\"{from}\",\"adds\":{adds},\
                 \"elapsed_s\":{:.6},\"ns_per_add\":{:.2}}}",
                elapsed.as_secs_f64(),
                elapsed.as_nanos() as f64 / adds.max(1) as f64
            ));
        }
        Some("delayed") => {
            let kind = args.get(1).map(String::as_str).unwrap_or_else(|| usage());
            let pending = number(args.get(2));
            let ns = delayed(kind, pending);
            emit(format!(
                "{{\"bench\":\"delayed\",\"impl\":\"kclient\",\"kind\":\"{kind}\",\"pending\":{pending},\
                 \"ns_per_call\":{ns:.1}}}"
            ));
        }
        Some("fire") => {
            let items = number(args.get(1));
            let spread = Duration::from_millis(number(args.get(2)));
            let workers = number(args.get(3)) as usize;
            let result = fire(items, spread, workers);
            emit(format!(
                "{{\"bench\":\"fire\",\"impl\":\"kclient\",\"items\":{items},\"spread_ms\":{},\
                 \"workers\":{workers},{result}}}",
                spread.as_millis()
            ));
        }
        Some("threads") => {
            let queues = number(args.get(1));
            let before = thread_count();
            let held: Vec<DelayingQueue<u64>> = (0..queues)
                .map(|i| {
                    let queue = DelayingQueue::new();
                    queue.add_after(i, Duration::from_secs(3600));
                    queue
                })
                .collect();
            // Give lazily started threads a moment to appear.
            thread::sleep(Duration::from_millis(200));
            let after = thread_count();
            emit(format!(
                "{{\"bench\":\"threads\",\"impl\":\"kclient\",\"queues\":{queues},\
                 \"threads_before\":{before},\"threads_with_queues\":{after}}}"
            ));
            drop(held);
        }
        Some("pingpong") => {
            let round_trips = number(args.get(1)).max(1);
            let ns = pingpong(round_trips);
            emit(format!(
                "{{\"bench\":\"pingpong\",\"round_trips\":{round_trips},\"ns_per_round_trip\":{ns:.1}}}"
            ));
        }
        _ => usage(),
    }
}

/// Prints one result line: `json` (one JSON object) with the process's peak resident set size
/// added as `peak_rss_kb`, read from the kernel's high-water mark of this program's memory
/// (`VmHWM`). The driver's `getrusage` figure cannot serve: Linux keeps the larger peak of the
/// process from before `exec`, the Python driver that forked it.
fn emit(json: String) {
    let object = json.strip_suffix('}').expect("a JSON object");
    match peak_rss_kb() {
        Some(kb) => println!("{object},\"peak_rss_kb\":{kb}}}"),
        None => println!("{json}"),
    }
}

/// `VmHWM` from `/proc/self/status`, in KiB (Linux only).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Two threads hand a token back and forth through one atomic `round_trips` times; returns the
/// nanoseconds per round trip. A waiting thread yields after a while, so that two threads that
/// share one core still finish (slowly: the figure then says so).
fn pingpong(round_trips: u64) -> f64 {
    let token = Arc::new(AtomicU64::new(0));
    let wait_for = |token: &AtomicU64, value: u64| {
        let mut spins = 0u32;
        while token.load(Ordering::Acquire) != value {
            // No spin hint: it would add its own pause to every hand-over.
            spins += 1;
            if spins.is_multiple_of(1 << 16) {
                thread::yield_now();
            }
        }
    };
    let other = {
        let token = token.clone();
        thread::spawn(move || {
            for i in 0..round_trips {
                wait_for(&token, 2 * i + 1);
                token.store(2 * i + 2, Ordering::Release);
            }
        })
    };
    let start = Instant::now();
    for i in 0..round_trips {
        wait_for(&token, 2 * i);
        token.store(2 * i + 1, Ordering::Release);
    }
    wait_for(&token, 2 * round_trips);
    let elapsed = start.elapsed();
    other.join().expect("pingpong thread");
    elapsed.as_nanos() as f64 / round_trips as f64
}

/// The runtime of the `async` and `tasks` drains (and of `merged task`): tokio's default, one
/// worker thread per core.
fn runtime() -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    // Only in a build with RUSTFLAGS="--cfg tokio_unstable" (see `build.rs`).
    #[cfg(tokio_unstable)]
    if std::env::var_os("KCLIENT_WQ_NO_LIFO").is_some() {
        builder.disable_lifo_slot();
    }
    builder.build().expect("tokio runtime")
}

/// `merged`: the time of `adds` adds from one producer, each merging into one of
/// [`REPEATED_KEYS`] waiting items; from a task on `runtime` if given, else from this thread.
fn merged(adds: u64, runtime: Option<tokio::runtime::Runtime>) -> Duration {
    let queue = Queue::<u64>::new();
    for key in 0..REPEATED_KEYS {
        queue.add(key);
    }
    let Some(runtime) = runtime else {
        let start = Instant::now();
        for i in 0..adds {
            queue.add(i % REPEATED_KEYS);
        }
        return start.elapsed();
    };
    let producer = runtime.spawn(async move {
        let start = Instant::now();
        for i in 0..adds {
            queue.add(i % REPEATED_KEYS);
            tokio::task::coop::consume_budget().await;
        }
        start.elapsed()
    });
    runtime.block_on(producer).expect("producer task")
}

/// The process's OS threads (Linux).
fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

/// Nanoseconds since `epoch`, never 0 (0 marks an empty stamp).
fn stamp(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64 + 1
}

/// What a worker does with each item it gets: records the latency since the earliest add not
/// yet served, and counts it.
struct Served<'a> {
    stamps: &'a [AtomicU64],
    epoch: Instant,
    latencies: Vec<u64>,
}

impl Served<'_> {
    fn got(&mut self, key: u64) {
        if !key.is_multiple_of(SAMPLE_EVERY) {
            return;
        }
        let now = stamp(self.epoch);
        let added = self.stamps[key as usize].swap(0, Ordering::Relaxed);
        if added != 0 {
            self.latencies.push(now.saturating_sub(added));
        }
    }
}

/// Where the producers and the workers of a `drain` run.
enum Mode {
    /// Both on threads; workers call `get_blocking`.
    Threads,
    /// Producers on threads, workers as tasks awaiting `get` on this runtime.
    AsyncWorkers(tokio::runtime::Runtime),
    /// Both as tasks on this runtime.
    AllTasks(tokio::runtime::Runtime),
}

impl Mode {
    fn runtime(&self) -> Option<&tokio::runtime::Runtime> {
        match self {
            Mode::Threads => None,
            Mode::AsyncWorkers(runtime) | Mode::AllTasks(runtime) => Some(runtime),
        }
    }
}

fn drain(
    producers: usize,
    workers: usize,
    repeated: bool,
    adds: u64,
    work: Work,
    mode: Mode,
) -> String {
    let runtime = mode.runtime();
    let queue = match merge_window() {
        Some(window) => Queue::with_config(QueueConfig::new().merge_window(window)),
        None => Queue::<u64>::new(),
    };
    let key_space = if repeated { REPEATED_KEYS } else { adds };
    let stamps: Arc<Vec<AtomicU64>> = Arc::new((0..key_space).map(|_| AtomicU64::new(0)).collect());
    let epoch = Instant::now();
    let processed = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));

    // Workers first, waiting on the empty queue as a controller's do.
    let mut worker_threads = Vec::new();
    let mut worker_tasks = Vec::new();
    for _ in 0..workers {
        let (queue, stamps, processed, latencies) = (
            queue.clone(),
            stamps.clone(),
            processed.clone(),
            latencies.clone(),
        );
        match runtime {
            None => worker_threads.push(thread::spawn(move || {
                let mut served = Served {
                    stamps: &stamps,
                    epoch,
                    latencies: Vec::new(),
                };
                let mut n = 0;
                while let Some(key) = queue.get_blocking() {
                    served.got(key);
                    work.do_blocking();
                    n += 1;
                    queue.done(&key);
                }
                processed.fetch_add(n, Ordering::Relaxed);
                latencies.lock().unwrap().extend(served.latencies);
            })),
            Some(runtime) => worker_tasks.push(runtime.spawn(async move {
                let mut served = Served {
                    stamps: &stamps,
                    epoch,
                    latencies: Vec::new(),
                };
                let mut n = 0;
                while let Some(key) = queue.get().await {
                    served.got(key);
                    work.do_async().await;
                    n += 1;
                    queue.done(&key);
                }
                processed.fetch_add(n, Ordering::Relaxed);
                latencies.lock().unwrap().extend(served.latencies);
            })),
        }
    }
    // Producer p adds p, p + P, p + 2P...: distinct over all producers, or cycling through the
    // repeated keys.
    let produce = {
        let (queue, stamps) = (queue.clone(), stamps.clone());
        move |p: u64, i: u64| {
            let key = (p + i * producers as u64) % key_space;
            if key.is_multiple_of(SAMPLE_EVERY) {
                let _ = stamps[key as usize].compare_exchange(
                    0,
                    stamp(epoch),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            queue.add(key);
        }
    };
    let share = move |p: u64| adds / producers as u64 + u64::from(p < adds % producers as u64);
    let (start, cpu_before);
    if let Mode::AllTasks(runtime) = &mode {
        let gate = Arc::new(tokio::sync::Barrier::new(producers + 1));
        let producer_tasks: Vec<_> = (0..producers as u64)
            .map(|p| {
                let (gate, produce) = (gate.clone(), produce.clone());
                runtime.spawn(async move {
                    gate.wait().await;
                    for i in 0..share(p) {
                        produce(p, i);
                        tokio::task::coop::consume_budget().await;
                    }
                })
            })
            .collect();
        cpu_before = cpu_seconds();
        start = Instant::now();
        runtime.block_on(async {
            gate.wait().await;
            for task in producer_tasks {
                task.await.expect("producer task");
            }
        });
    } else {
        let start_gate = Arc::new(Barrier::new(producers + 1));
        let producer_threads: Vec<_> = (0..producers as u64)
            .map(|p| {
                let (gate, produce) = (start_gate.clone(), produce.clone());
                thread::spawn(move || {
                    gate.wait();
                    for i in 0..share(p) {
                        produce(p, i);
                    }
                })
            })
            .collect();
        cpu_before = cpu_seconds();
        start = Instant::now();
        start_gate.wait();
        for producer in producer_threads {
            producer.join().expect("producer thread");
        }
    }
    queue.shut_down_with_drain_blocking();
    for worker in worker_threads {
        worker.join().expect("worker thread");
    }
    if let Some(runtime) = runtime {
        runtime.block_on(async {
            for task in worker_tasks {
                task.await.expect("worker task");
            }
        });
    }
    let elapsed = start.elapsed();
    // The drain's CPU: left out of the line if getrusage failed (it does not on Linux).
    let cpu = match cpu_before.zip(cpu_seconds()) {
        Some((before, after)) => format!(
            ",\"drain_user_s\":{:.6},\"drain_sys_s\":{:.6}",
            after.0 - before.0,
            after.1 - before.1
        ),
        None => String::new(),
    };
    let mut latencies = std::mem::take(&mut *latencies.lock().unwrap());
    latencies.sort_unstable();
    format!(
        "\"seconds\":{:.6},\"processed\":{},\"p50_us\":{:.2},\"p99_us\":{:.2},\
         \"max_us\":{:.2},\"samples\":{}{}",
        elapsed.as_secs_f64(),
        processed.load(Ordering::Relaxed),
        percentile(&latencies, 0.50) as f64 / 1e3,
        percentile(&latencies, 0.99) as f64 / 1e3,
        percentile(&latencies, 1.0) as f64 / 1e3,
        latencies.len(),
        cpu,
    )
}

/// The merge window `KCLIENT_WQ_MERGE_WINDOW_US` asks for, if set (see the crate's docs).
fn merge_window() -> Option<Duration> {
    let value = std::env::var("KCLIENT_WQ_MERGE_WINDOW_US").ok()?;
    match value.parse() {
        Ok(us) => Some(Duration::from_micros(us)),
        Err(_) => {
            eprintln!(
                "KCLIENT_WQ_MERGE_WINDOW_US must be a whole number of microseconds, not {value:?}"
            );
            std::process::exit(2)
        }
    }
}

/// The user and system CPU seconds this process has spent so far, all its threads included
/// (those that have ended too): `getrusage(RUSAGE_SELF)`.
fn cpu_seconds() -> Option<(f64, f64)> {
    use nix::sys::time::TimeValLike;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).ok()?;
    let seconds = |t: nix::sys::time::TimeVal| t.num_microseconds() as f64 / 1e6;
    Some((seconds(usage.user_time()), seconds(usage.system_time())))
}

/// What a drain's workers do with each item between `get` and `done`.
#[derive(Clone, Copy)]
enum Work {
    /// Nothing: the queue is the bottleneck.
    None,
    /// Keep the thread busy this long, as a reconcile that computes would.
    Busy(Duration),
    /// Sleep this long, as a reconcile that waits for the API server would.
    Wait(Duration),
}

impl Work {
    /// `busy:US` or `wait:US`.
    fn parse(arg: &str) -> Work {
        let micros = |us: &str| Duration::from_micros(us.parse().unwrap_or_else(|_| usage()));
        match arg.split_once(':') {
            Some(("busy", us)) => Work::Busy(micros(us)),
            Some(("wait", us)) => Work::Wait(micros(us)),
            _ => usage(),
        }
    }

    fn do_blocking(self) {
        match self {
            Work::None => {}
            Work::Busy(d) => spin_for(d),
            Work::Wait(d) => thread::sleep(d),
        }
    }

    async fn do_async(self) {
        match self {
            Work::None => {}
            Work::Busy(d) => spin_for(d),
            Work::Wait(d) => tokio::time::sleep(d).await,
        }
    }
}

impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Work::None => f.write_str("none"),
            Work::Busy(d) => write!(f, "busy:{}", d.as_micros()),
            Work::Wait(d) => write!(f, "wait:{}", d.as_micros()),
        }
    }
}

/// Keeps the thread busy for `d`.
fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

fn delayed(kind: &str, pending: u64) -> f64 {
    let queue: RateLimitingQueue<u64> = RateLimitingQueue::new(default_controller_rate_limiter());
    let call = |key: u64| match kind {
        "add_after" => queue.add_after(key, Duration::from_secs(3600)),
        "add_rate_limited" => queue.add_rate_limited(key),
        _ => usage(),
    };
    for key in 0..pending {
        call(key);
    }
    let start = Instant::now();
    for key in pending..2 * pending {
        call(key);
    }
    let ns = start.elapsed().as_nanos() as f64 / pending as f64;
    queue.shut_down();
    ns
}

fn fire(items: u64, spread: Duration, workers: usize) -> String {
    let queue = DelayingQueue::<u64>::new();
    let start = Instant::now();
    let ready_at: Arc<Vec<AtomicU64>> = Arc::new((0..items).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, ready_at, done) = (queue.clone(), ready_at.clone(), done.clone());
            thread::spawn(move || {
                let mut late = Vec::new();
                while let Some(key) = queue.get_blocking() {
                    let now = start.elapsed().as_nanos() as u64;
                    late.push(now.saturating_sub(ready_at[key as usize].load(Ordering::Relaxed)));
                    queue.done(&key);
                    if done.fetch_add(1, Ordering::Relaxed) + 1 == items as usize {
                        queue.shut_down();
                    }
                }
                late
            })
        })
        .collect();
    // Item i waits spread * i / items, added in a shuffled order (a multiplicative hash of i).
    let step = spread.as_nanos() as u64 / items.max(1);
    for n in 0..items {
        let key = (n.wrapping_mul(2_654_435_761)) % items;
        let delay = Duration::from_nanos(step * key);
        let at = start.elapsed() + delay;
        ready_at[key as usize].store(at.as_nanos() as u64, Ordering::Relaxed);
        queue.add_after(key, delay);
    }
    let mut late: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("worker thread"))
        .collect();
    let elapsed = start.elapsed();
    late.sort_unstable();
    format!(
        "\"seconds\":{:.6},\"processed\":{},\"late_p50_us\":{:.1},\"late_p99_us\":{:.1}",
        elapsed.as_secs_f64(),
        late.len(),
        percentile(&late, 0.50) as f64 / 1e3,
        percentile(&late, 0.99) as f64 / 1e3,
    )
}
