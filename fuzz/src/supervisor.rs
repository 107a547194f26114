//! `kclient-fuzz run`: runs each target in its own worker process, one after the other, for
//! its share of the time, under a memory limit (`ulimit -v`, through `sh`), and prints
//! executions per target. A worker that dies (stack overflow, allocation over the limit) is
//! run again with the same seed in trace mode to recover the input that killed it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::rng::fnv1a;

/// Settings of `kclient-fuzz run`.
pub(crate) struct RunOptions {
    pub(crate) seconds: f64,
    pub(crate) seed: u64,
    pub(crate) corpus_dir: PathBuf,
    pub(crate) findings_dir: PathBuf,
    pub(crate) mem_mb: u64,
    pub(crate) hang_seconds: u64,
}

/// One target's result.
struct Row {
    name: String,
    seed: u64,
    execs: u64,
    replayed: u64,
    corpus: u64,
    panics: u64,
    unique: u64,
    seconds: f64,
    slowest_ms: u64,
    status: String,
}

/// The seed of one target: the run's seed mixed with the target's name, so that running one
/// target alone replays exactly what it did in a full run.
pub(crate) fn target_seed(seed: u64, name: &str) -> u64 {
    seed ^ fnv1a(name.as_bytes())
}

/// Spawns the worker for `name` under the memory limit.
fn worker(exe: &Path, opts: &RunOptions, name: &str, seconds: f64, trace: bool) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v \"$1\" || exit 125; shift; exec \"$@\"")
        .arg("sh")
        .arg((opts.mem_mb * 1024).to_string())
        .arg(exe)
        .arg("worker")
        .arg(name)
        .arg("--seconds")
        .arg(format!("{seconds:.3}"))
        .arg("--seed")
        .arg(opts.seed.to_string())
        .arg("--corpus")
        .arg(&opts.corpus_dir)
        .arg("--findings")
        .arg(&opts.findings_dir)
        .arg("--hang-seconds")
        .arg(opts.hang_seconds.to_string());
    if trace {
        cmd.arg("--trace");
    }
    cmd
}

/// Parses the worker's `STATS key=value ...` line.
fn parse_stats(stdout: &str, row: &mut Row) {
    for line in stdout.lines().filter(|l| l.starts_with("STATS ")) {
        for kv in line.split_whitespace().skip(1) {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            match k {
                "execs" => row.execs = v.parse().unwrap_or(0),
                "replayed" => row.replayed = v.parse().unwrap_or(0),
                "corpus" => row.corpus = v.parse().unwrap_or(0),
                "panics" => row.panics = v.parse().unwrap_or(0),
                "unique" => row.unique = v.parse().unwrap_or(0),
                "slowest_ms" => row.slowest_ms = v.parse().unwrap_or(0),
                "seconds" => row.seconds = v.parse().unwrap_or(0.0),
                _ => {}
            }
        }
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "ended".to_owned(),
    }
}

/// After a worker died: replays its seed in trace mode to find the input that kills it, and
/// saves that input with what the replay prints.
fn recover_crash(exe: &Path, opts: &RunOptions, name: &str, seconds: f64) -> String {
    let findings = opts.findings_dir.join(name);
    let last = findings.join("last-input");
    let _ = std::fs::remove_file(&last);
    eprintln!(
        "fuzz: {name}: the worker died; replaying seed {} in trace mode to find the input",
        opts.seed
    );
    let status = worker(exe, opts, name, seconds * 2.0 + 10.0, true)
        .stdout(Stdio::null())
        .status();
    let died = status
        .as_ref()
        .is_ok_and(|s| !s.success() && s.code() != Some(1) && s.code() != Some(3));
    let Ok(input) = std::fs::read(&last) else {
        return "crash (input not recovered)".to_owned();
    };
    if !died {
        let _ = std::fs::remove_file(&last);
        return format!(
            "crash (did not recur with seed {}; not deterministic)",
            opts.seed
        );
    }
    let stem = format!("crash-{:016x}", fnv1a(&input));
    let bin = findings.join(format!("{stem}.bin"));
    let _ = std::fs::rename(&last, &bin);
    // Replay the one input to record what it prints as it dies.
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v \"$1\"; shift; exec \"$@\"")
        .arg("sh")
        .arg((opts.mem_mb * 1024).to_string())
        .arg(exe)
        .arg("replay")
        .arg(name)
        .arg(&bin)
        .env("RUST_BACKTRACE", "1");
    let out = cmd.output();
    let text = match out {
        Ok(o) => format!(
            "target: {name}\nseed: {}\ninput: {}\nreplay: {}\n{}",
            opts.seed,
            bin.display(),
            describe(o.status),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("replay failed to start: {e}"),
    };
    let _ = std::fs::write(findings.join(format!("{stem}.txt")), &text);
    eprintln!(
        "FINDING target={name} crash: {}\n  input: {}",
        text.lines().nth(3).unwrap_or(""),
        bin.display()
    );
    format!("CRASH {}", bin.display())
}

/// Runs every selected target; returns the process exit code (0 when nothing was found).
pub(crate) fn run(opts: &RunOptions, names: &[&'static str]) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fuzz: cannot find the runner's own path: {e}");
            return 2;
        }
    };
    let share = opts.seconds / names.len().max(1) as f64;
    println!(
        "fuzz: {} target(s), {:.1} s each, seed {} (reproduce: FUZZ_SEED={} scripts/fuzz {} {}), memory limit {} MiB, hang limit {} s",
        names.len(),
        share,
        opts.seed,
        opts.seed,
        opts.seconds,
        names.join(" "),
        opts.mem_mb,
        opts.hang_seconds
    );
    let mut rows = Vec::new();
    for name in names {
        let seed = target_seed(opts.seed, name);
        let mut row = Row {
            name: (*name).to_owned(),
            seed,
            execs: 0,
            replayed: 0,
            corpus: 0,
            panics: 0,
            unique: 0,
            seconds: 0.0,
            slowest_ms: 0,
            status: String::new(),
        };
        let output = worker(&exe, opts, name, share, false)
            .stderr(Stdio::inherit())
            .output();
        match output {
            Err(e) => row.status = format!("could not start: {e}"),
            Ok(out) => {
                parse_stats(&String::from_utf8_lossy(&out.stdout), &mut row);
                row.status = match out.status.code() {
                    Some(0) => "ok".to_owned(),
                    Some(1) => format!("PANIC ({} unique)", row.unique),
                    Some(3) => "HANG".to_owned(),
                    _ => format!(
                        "{}: {}",
                        describe(out.status),
                        recover_crash(&exe, opts, name, share)
                    ),
                };
            }
        }
        println!(
            "fuzz: {:<22} {:>10} execs {:>9.0}/s  corpus {:>5}  slowest {:>5} ms  panics {:>4}  {}",
            row.name,
            row.execs,
            row.execs as f64 / row.seconds.max(1e-9),
            row.corpus,
            row.slowest_ms,
            row.panics,
            row.status
        );
        rows.push(row);
    }
    let total: u64 = rows.iter().map(|r| r.execs).sum();
    let secs: f64 = rows.iter().map(|r| r.seconds).sum();
    println!(
        "\n| target | seed | seconds | executions | exec/s | corpus files replayed | corpus at end | slowest input (ms) | panics | result |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.1} | {} | {:.0} | {} | {} | {} | {} | {} |",
            r.name,
            r.seed,
            r.seconds,
            r.execs,
            r.execs as f64 / r.seconds.max(1e-9),
            r.replayed,
            r.corpus,
            r.slowest_ms,
            r.panics,
            r.status
        );
    }
    println!(
        "| total | {} | {:.1} | {} | {:.0} | | | | {} | |",
        opts.seed,
        secs,
        total,
        total as f64 / secs.max(1e-9),
        rows.iter().map(|r| r.panics).sum::<u64>()
    );
    let bad = rows.iter().filter(|r| r.status != "ok").count();
    if bad == 0 {
        println!("fuzz: no findings");
        0
    } else {
        println!(
            "fuzz: {bad} target(s) with findings; inputs and reports are in {}",
            opts.findings_dir.display()
        );
        1
    }
}
