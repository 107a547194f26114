//! The fuzz loop for one target, run in its own process (`kclient-fuzz worker`).
//!
//! 1. Replays every file of the target's corpus folder (seeds and regression cases).
//! 2. Until the time is up, takes a corpus entry, mutates it ([`crate::mutate`]) and runs it.
//!    An input whose outcome signature is new joins the in-memory corpus, a poor man's
//!    coverage feedback (stable Rust has no sanitizer coverage).
//!
//! A panic is caught with `catch_unwind`; the input is minimised, saved under the findings
//! folder with its message and backtrace, and the loop goes on (one file per panic location).
//! A watchdog thread saves the input and exits the process with status 3 when one run takes
//! longer than the hang limit. What cannot be caught in-process (a stack overflow, an
//! allocation over the memory limit) kills the worker; the supervisor then replays the same
//! seed with `--trace`, which writes each input to `<findings>/<target>/last-input` before
//! running it, to recover the input.

use std::collections::HashSet;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mutate::mutate;
use crate::rng::{Rng, fnv1a};
use crate::targets::Target;

/// Settings of one worker run.
pub(crate) struct WorkerOptions {
    pub(crate) seconds: f64,
    pub(crate) seed: u64,
    pub(crate) corpus_dir: PathBuf,
    pub(crate) findings_dir: PathBuf,
    pub(crate) hang_seconds: u64,
    pub(crate) trace: bool,
}

/// The most inputs kept in memory beside the corpus files.
const MAX_DISCOVERED: usize = 4096;

/// The message and backtrace of the last panic, filled by the panic hook.
static LAST_PANIC: Mutex<Option<PanicReport>> = Mutex::new(None);
/// Panic locations already reported: their backtraces are not captured again.
static SEEN_LOCATIONS: Mutex<Option<HashSet<String>>> = Mutex::new(None);
/// While minimising, panics are expected: the hook stays quiet.
static QUIET: AtomicBool = AtomicBool::new(false);

#[derive(Clone)]
struct PanicReport {
    location: String,
    message: String,
    backtrace: String,
}

fn install_panic_hook() {
    panic::set_hook(Box::new(|info| {
        let location = info.location().map_or_else(
            || "unknown".to_owned(),
            |l| format!("{}:{}:{}", l.file(), l.line(), l.column()),
        );
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string panic payload)".to_owned());
        let first = SEEN_LOCATIONS
            .lock()
            .map(|mut seen| {
                seen.get_or_insert_with(HashSet::new)
                    .insert(location.clone())
            })
            .unwrap_or(false);
        let backtrace = if first && !QUIET.load(Ordering::Relaxed) {
            std::backtrace::Backtrace::force_capture().to_string()
        } else {
            String::new()
        };
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(PanicReport {
                location,
                message,
                backtrace,
            });
        }
    }));
}

/// What one run of an input gave.
enum Outcome {
    Signature(u64),
    Panic(PanicReport),
}

/// Shared with the watchdog: the input being run and since when.
struct Current {
    input: Mutex<Vec<u8>>,
    started_ms: AtomicU64,
    running: AtomicBool,
}

/// Counts of one worker run.
#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) execs: u64,
    pub(crate) replayed: u64,
    pub(crate) corpus: usize,
    pub(crate) panics: u64,
    pub(crate) unique_panics: usize,
    pub(crate) seconds: f64,
    /// The longest one input ran, in milliseconds.
    pub(crate) slowest_ms: u64,
}

struct Worker<'a> {
    target: &'a Target,
    opts: &'a WorkerOptions,
    current: Arc<Current>,
    epoch: Instant,
    trace_file: Option<PathBuf>,
    findings: PathBuf,
    saved_locations: HashSet<String>,
    stats: Stats,
}

impl Worker<'_> {
    fn run_one(&mut self, input: &[u8]) -> Outcome {
        if let Some(path) = &self.trace_file {
            // Survives an abort: the supervisor reads it if this process dies.
            let _ = fs::write(path, input);
        }
        {
            let mut slot = self.current.input.lock().expect("current input lock");
            slot.clear();
            slot.extend_from_slice(input);
        }
        self.current
            .started_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.current.running.store(true, Ordering::Release);
        let started = Instant::now();
        let result = panic::catch_unwind(AssertUnwindSafe(|| (self.target.run)(input)));
        let took = started.elapsed().as_millis() as u64;
        self.current.running.store(false, Ordering::Release);
        self.stats.execs += 1;
        if took > self.stats.slowest_ms {
            self.stats.slowest_ms = took;
            if took >= 1000 {
                // Not a finding, but worth a look: kept as the target's slowest input.
                let _ = fs::create_dir_all(&self.findings);
                let _ = fs::write(self.findings.join("slowest-input"), input);
            }
        }
        match result {
            Ok(sig) => Outcome::Signature(sig),
            Err(_) => {
                let report =
                    LAST_PANIC
                        .lock()
                        .ok()
                        .and_then(|mut l| l.take())
                        .unwrap_or(PanicReport {
                            location: "unknown".into(),
                            message: "unknown".into(),
                            backtrace: String::new(),
                        });
                Outcome::Panic(report)
            }
        }
    }

    /// Runs `input`; on a panic, reports it. Returns the outcome's signature.
    fn exec(&mut self, input: &[u8]) -> u64 {
        match self.run_one(input) {
            Outcome::Signature(sig) => sig,
            Outcome::Panic(report) => {
                self.stats.panics += 1;
                let sig = fnv1a(report.location.as_bytes());
                if self.saved_locations.insert(report.location.clone()) {
                    self.save_panic(input, &report);
                }
                sig
            }
        }
    }

    /// Shrinks an input while it still panics at the same place (bounded effort).
    fn minimise(&mut self, input: &[u8], location: &str) -> Vec<u8> {
        QUIET.store(true, Ordering::Relaxed);
        let mut best = input.to_vec();
        let mut tries = 0;
        let mut chunk = best.len() / 2;
        let started = Instant::now();
        let budget = |tries: u32| tries < 2000 && started.elapsed() < Duration::from_secs(20);
        while chunk > 0 && budget(tries) {
            let mut at = 0;
            let mut shrunk = false;
            while at < best.len() && budget(tries) {
                let mut candidate = best.clone();
                candidate.drain(at..(at + chunk).min(best.len()));
                tries += 1;
                match self.run_one(&candidate) {
                    Outcome::Panic(r) if r.location == location => {
                        best = candidate;
                        shrunk = true;
                    }
                    _ => at += chunk,
                }
            }
            if !shrunk {
                chunk /= 2;
            }
        }
        QUIET.store(false, Ordering::Relaxed);
        best
    }

    fn save_panic(&mut self, input: &[u8], report: &PanicReport) {
        let small = self.minimise(input, &report.location);
        let name = format!("panic-{:016x}", fnv1a(report.location.as_bytes()));
        let _ = fs::create_dir_all(&self.findings);
        let bin = self.findings.join(format!("{name}.bin"));
        let original = self.findings.join(format!("{name}.orig.bin"));
        let txt = self.findings.join(format!("{name}.txt"));
        let _ = fs::write(&bin, &small);
        let _ = fs::write(&original, input);
        let text = format!(
            "target: {}\nseed: {}\nlocation: {}\nmessage: {}\ninput ({} bytes, minimised from {}): {:?}\n\nbacktrace:\n{}\n",
            self.target.name,
            self.opts.seed,
            report.location,
            report.message,
            small.len(),
            input.len(),
            String::from_utf8_lossy(&small[..small.len().min(4000)]),
            report.backtrace,
        );
        let _ = fs::write(&txt, &text);
        eprintln!(
            "FINDING target={} panic at {}: {}\n  input: {}\n  details: {}",
            self.target.name,
            report.location,
            report.message.lines().next().unwrap_or(""),
            bin.display(),
            txt.display()
        );
    }
}

/// Reads the target's corpus files, sorted by name.
pub(crate) fn load_corpus(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}

/// Starts the watchdog: if one run lasts longer than `limit`, saves the input and exits 3.
fn start_watchdog(
    current: Arc<Current>,
    epoch: Instant,
    limit: Duration,
    findings: PathBuf,
    target: &'static str,
) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if !current.running.load(Ordering::Acquire) {
                continue;
            }
            let started = current.started_ms.load(Ordering::Relaxed);
            let now = epoch.elapsed().as_millis() as u64;
            if now.saturating_sub(started) > limit.as_millis() as u64
                && current.running.load(Ordering::Acquire)
            {
                let input = current.input.lock().map(|i| i.clone()).unwrap_or_default();
                let _ = fs::create_dir_all(&findings);
                let path = findings.join(format!("hang-{:016x}.bin", fnv1a(&input)));
                let _ = fs::write(&path, &input);
                eprintln!(
                    "FINDING target={target} hang: one input ran over {limit:?}\n  input: {}",
                    path.display()
                );
                std::process::exit(3);
            }
        }
    });
}

/// Fuzzes `target` for the configured time; returns the counts.
pub(crate) fn run(target: &Target, opts: &WorkerOptions) -> Stats {
    install_panic_hook();
    let findings = opts.findings_dir.join(target.name);
    let epoch = Instant::now();
    let current = Arc::new(Current {
        input: Mutex::new(Vec::new()),
        started_ms: AtomicU64::new(0),
        running: AtomicBool::new(false),
    });
    start_watchdog(
        current.clone(),
        epoch,
        Duration::from_secs(opts.hang_seconds),
        findings.clone(),
        target.name,
    );
    let trace_file = opts.trace.then(|| {
        let _ = fs::create_dir_all(&findings);
        findings.join("last-input")
    });
    let mut w = Worker {
        target,
        opts,
        current,
        epoch,
        trace_file,
        findings,
        saved_locations: HashSet::new(),
        stats: Stats::default(),
    };

    let files = load_corpus(&opts.corpus_dir.join(target.name));
    let mut corpus: Vec<Vec<u8>> = Vec::with_capacity(files.len() + 64);
    let mut seen = HashSet::new();
    for (_, bytes) in &files {
        seen.insert(w.exec(bytes));
        w.stats.replayed += 1;
        corpus.push(bytes.clone());
    }
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let seeds = corpus.len();

    let mut rng = Rng::new(opts.seed);
    let deadline = Duration::from_secs_f64(opts.seconds);
    let mut n: u64 = 0;
    loop {
        if n.is_multiple_of(32) && epoch.elapsed() >= deadline {
            break;
        }
        n += 1;
        let base = rng.below(corpus.len());
        let input = mutate(
            &mut rng,
            &corpus[base],
            &corpus,
            target.kind,
            target.dict,
            target.max_len,
        );
        let sig = w.exec(&input);
        if seen.insert(sig) && corpus.len() < seeds + MAX_DISCOVERED {
            corpus.push(input);
        }
    }
    w.stats.corpus = corpus.len();
    w.stats.unique_panics = w.saved_locations.len();
    w.stats.seconds = epoch.elapsed().as_secs_f64();
    if let Some(path) = &w.trace_file {
        let _ = fs::remove_file(path);
    }
    w.stats
}

/// Runs each file once without catching panics, so a panic prints its message and backtrace
/// (set `RUST_BACKTRACE=1`) and the process exits with Rust's panic status.
pub(crate) fn replay(target: &Target, files: &[PathBuf]) -> Result<(), String> {
    for file in files {
        let input = fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
        let sig = (target.run)(&input);
        println!("{}: ok (outcome {sig:016x})", file.display());
    }
    Ok(())
}
