//! [`parallelize_until`]: split N independent pieces of work over a few threads (client-go's
//! `workqueue.ParallelizeUntil`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Options of [`parallelize_until`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParallelizeOptions {
    chunk_size: usize,
}

impl ParallelizeOptions {
    /// The defaults: pieces handed out one at a time.
    pub fn new() -> Self {
        ParallelizeOptions::default()
    }

    /// Hands out pieces `chunk_size` at a time (client-go's `WithChunkSize`): worth it when there
    /// are many more pieces than workers and each piece is small. Values below 1 mean 1.
    pub fn chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }
}

/// Calls `do_work_piece(i)` for every `i` in `0..pieces` on up to `workers` threads (the calling
/// thread is one of them), and returns when all are done or, once `stop` is set, as soon as
/// every worker has finished the piece in hand. At least one worker runs.
///
/// Pieces are handed out in chunks of [`ParallelizeOptions::chunk_size`]. A panic in a piece is
/// raised again here once the other workers have stopped.
///
/// ```
/// use kclient_workqueue::{parallelize_until, ParallelizeOptions};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let sum = AtomicU64::new(0);
/// parallelize_until(None, 4, 1000, |piece| {
///     sum.fetch_add(piece as u64, Ordering::Relaxed);
/// }, ParallelizeOptions::new().chunk_size(10));
/// assert_eq!(sum.into_inner(), 999 * 1000 / 2);
/// ```
pub fn parallelize_until<F>(
    stop: Option<&AtomicBool>,
    workers: usize,
    pieces: usize,
    do_work_piece: F,
    options: ParallelizeOptions,
) where
    F: Fn(usize) + Sync,
{
    if pieces == 0 {
        return;
    }
    let chunk_size = options.chunk_size.max(1);
    let chunks = pieces.div_ceil(chunk_size);
    let workers = workers.clamp(1, chunks);
    let next_chunk = AtomicUsize::new(0);
    let stopped = || stop.is_some_and(|stop| stop.load(Ordering::Relaxed));
    let worker = || {
        loop {
            let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks {
                return;
            }
            let start = chunk * chunk_size;
            for piece in start..(start + chunk_size).min(pieces) {
                if stopped() {
                    return;
                }
                do_work_piece(piece);
            }
        }
    };
    crate::workers::run_scoped(workers, worker);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread;

    #[test]
    fn every_piece_once_for_many_shapes() {
        // (workers, pieces, chunk size)
        let cases = [
            (1, 1000, 1),
            (10, 1000, 1),
            (1, 1000, 10),
            (10, 1000, 10),
            (10, 1000, 100),
            (10, 1000, 1000),
            (10, 1000, 2000),
            (3, 7, 0),
            (0, 5, 1),
            (10, 0, 1),
        ];
        for (workers, pieces, chunk) in cases {
            let seen = Mutex::new(Vec::new());
            parallelize_until(
                None,
                workers,
                pieces,
                |piece| seen.lock().unwrap().push(piece),
                ParallelizeOptions::new().chunk_size(chunk),
            );
            let mut seen = seen.into_inner().unwrap();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..pieces).collect::<Vec<_>>(),
                "{workers} workers, {pieces} pieces, chunk {chunk}"
            );
        }
    }

    #[test]
    fn stop_ends_the_work_early() {
        let stop = AtomicBool::new(false);
        let done = Mutex::new(HashSet::new());
        parallelize_until(
            Some(&stop),
            4,
            10_000,
            |piece| {
                done.lock().unwrap().insert(piece);
                if piece == 10 {
                    stop.store(true, Ordering::Relaxed);
                }
            },
            ParallelizeOptions::new(),
        );
        let done = done.into_inner().unwrap();
        assert!(done.contains(&10));
        assert!(done.len() < 10_000, "stop was ignored");
    }

    /// A piece's panic on a spawned thread reaches the caller as it was raised, not as
    /// `thread::scope`'s "a scoped thread panicked".
    #[test]
    fn a_panic_on_a_spawned_worker_is_raised_again_with_its_message() {
        let caller = thread::current().id();
        let both = std::sync::Barrier::new(2);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parallelize_until(
                None,
                2,
                2,
                |piece| {
                    both.wait();
                    if thread::current().id() != caller {
                        panic!("piece {piece} failed");
                    }
                },
                ParallelizeOptions::new(),
            );
        }));
        let payload = result.expect_err("the piece's panic was swallowed");
        let text = crate::workers::tests::panic_text(&*payload);
        assert!(text.starts_with("piece "), "raised as {text:?}");
    }

    #[test]
    fn already_stopped_does_nothing() {
        let stop = AtomicBool::new(true);
        parallelize_until(
            Some(&stop),
            2,
            10,
            |_| panic!("ran after stop"),
            ParallelizeOptions::new(),
        );
    }
}
