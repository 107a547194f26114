//! The reconcile log both Rust contenders of the controller benchmark keep (included with
//! `#[path]` by `bench/controller/kclient` and `bench/kube-rs`'s controller binary, as
//! `alloc.rs` is): every reconcile's key and start time, the `all_reconciled` line once every
//! Parent has been seen, and the log file written at the end.

use std::collections::HashSet;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Every reconcile's key and start time, and whether every Parent has been seen.
pub(crate) struct ReconcileLog {
    started: Instant,
    want: usize,
    state: Mutex<State>,
}

/// The log itself.
#[derive(Default)]
struct State {
    entries: Vec<(String, u128)>,
    seen: HashSet<String>,
}

impl ReconcileLog {
    /// A log that reports once `want` distinct keys have been reconciled, timed from
    /// `started`.
    pub(crate) fn new(started: Instant, want: usize) -> Self {
        ReconcileLog {
            started,
            want,
            state: Mutex::default(),
        }
    }

    pub(crate) fn record(&self, key: String) {
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let all = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let new = state.seen.insert(key.clone());
            state.entries.push((key, at));
            new && state.seen.len() == self.want
        };
        if all {
            println!(
                "{{\"event\":\"all_reconciled\",\"seconds\":{}}}",
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    pub(crate) fn write(&self, path: &str) -> std::io::Result<usize> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for (key, at) in &state.entries {
            writeln!(out, "{key} {at}")?;
        }
        out.flush()?;
        Ok(state.entries.len())
    }
}
