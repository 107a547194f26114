//! `kclient-fuzz`: a fuzz runner for kclient on the stable toolchain (no libFuzzer, no
//! sanitizers). See `fuzz/README.md` for how to run it, reproduce a finding, and what each
//! target covers; `scripts/fuzz SECONDS [TARGET...]` builds and runs it.
//!
//! ```text
//! kclient-fuzz run [--seconds N] [--seed S] [--corpus DIR] [--findings DIR]
//!                  [--mem-mb M] [--hang-seconds H] [TARGET...]
//! kclient-fuzz replay TARGET FILE...   # run inputs once, panics uncaught (with backtraces)
//! kclient-fuzz list                    # the targets and what they cover
//! kclient-fuzz worker TARGET ...       # internal: one target's fuzz loop (spawned by `run`)
//! ```

mod mutate;
mod rng;
mod supervisor;
mod targets;
mod worker;

use std::path::PathBuf;
use std::process::ExitCode;

use supervisor::{RunOptions, target_seed};
use worker::WorkerOptions;

const USAGE: &str = "usage:
  kclient-fuzz run [--seconds N] [--seed S] [--corpus DIR] [--findings DIR] [--mem-mb M] [--hang-seconds H] [TARGET...]
  kclient-fuzz replay TARGET FILE...
  kclient-fuzz list";

/// Parsed `--flag value` options and the remaining words.
struct Args {
    flags: Vec<(String, String)>,
    switches: Vec<String>,
    words: Vec<String>,
}

fn parse_args(args: impl Iterator<Item = String>) -> Args {
    let mut out = Args {
        flags: Vec::new(),
        switches: Vec::new(),
        words: Vec::new(),
    };
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        if a == "--trace" {
            out.switches.push(a);
        } else if let Some(name) = a.strip_prefix("--") {
            let value = args.next().unwrap_or_default();
            out.flags.push((name.to_owned(), value));
        } else {
            out.words.push(a);
        }
    }
    out
}

impl Args {
    fn get(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: {v:?} is not a number")),
        }
    }
    fn path(&self, name: &str, default: &str) -> PathBuf {
        self.get(name).map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(default),
            PathBuf::from,
        )
    }
}

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let Some(command) = argv.next() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let args = parse_args(argv);
    let result = match command.as_str() {
        "run" => cmd_run(&args),
        "worker" => cmd_worker(&args),
        "replay" => cmd_replay(&args),
        "list" => {
            for t in targets::all() {
                println!(
                    "{:<22} {}",
                    t.name,
                    t.about.split_whitespace().collect::<Vec<_>>().join(" ")
                );
            }
            Ok(0)
        }
        _ => Err(format!("unknown command {command:?}\n{USAGE}")),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("kclient-fuzz: {message}");
            ExitCode::from(2)
        }
    }
}

fn cmd_run(args: &Args) -> Result<u8, String> {
    let all = targets::all();
    let names: Vec<&'static str> = if args.words.is_empty() {
        all.iter().map(|t| t.name).collect()
    } else {
        args.words
            .iter()
            .map(|w| {
                all.iter()
                    .find(|t| t.name == w)
                    .map(|t| t.name)
                    .ok_or_else(|| format!("unknown target {w:?} (see `kclient-fuzz list`)"))
            })
            .collect::<Result<_, _>>()?
    };
    let default_seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_007);
    let opts = RunOptions {
        seconds: args.number("seconds", 60.0)?,
        seed: args.number("seed", default_seed)?,
        corpus_dir: args.path("corpus", "corpus"),
        findings_dir: args.path("findings", "findings"),
        mem_mb: args.number("mem-mb", 4096)?,
        hang_seconds: args.number("hang-seconds", 30)?,
    };
    Ok(supervisor::run(&opts, &names) as u8)
}

fn cmd_worker(args: &Args) -> Result<u8, String> {
    let name = args.words.first().ok_or("worker: which target?")?;
    let target = targets::find(name).ok_or_else(|| format!("unknown target {name:?}"))?;
    let seed: u64 = args.number("seed", 1)?;
    let opts = WorkerOptions {
        seconds: args.number("seconds", 10.0)?,
        seed: target_seed(seed, target.name),
        corpus_dir: args.path("corpus", "corpus"),
        findings_dir: args.path("findings", "findings"),
        hang_seconds: args.number("hang-seconds", 30)?,
        trace: args.switches.iter().any(|s| s == "--trace"),
    };
    let stats = worker::run(&target, &opts);
    println!(
        "STATS execs={} replayed={} corpus={} panics={} unique={} seconds={:.3} slowest_ms={}",
        stats.execs,
        stats.replayed,
        stats.corpus,
        stats.panics,
        stats.unique_panics,
        stats.seconds,
        stats.slowest_ms
    );
    Ok(u8::from(stats.panics > 0))
}

fn cmd_replay(args: &Args) -> Result<u8, String> {
    let (name, files) = args.words.split_first().ok_or("replay: which target?")?;
    let target = targets::find(name).ok_or_else(|| format!("unknown target {name:?}"))?;
    let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    worker::replay(&target, &files)?;
    Ok(0)
}
