//! [`assert_can_block`]: the check every `*_blocking` function makes before it waits, so that
//! a call that would hang a runtime panics with a message naming the async form instead.

use std::panic::{self, AssertUnwindSafe};

use tokio::runtime::{Handle, RuntimeFlavor};

/// Panics when the calling thread drives a current-thread tokio runtime: a blocking wait there
/// stops every task of that runtime, so whatever it waits for (an item a watch delivers, a
/// worker task finishing) never comes. The message names `what` was called and the async
/// form to await `instead`.
///
/// Anywhere else it returns: on a thread outside any runtime, on a `spawn_blocking` thread,
/// and on a multi-thread runtime's worker, where the other workers keep the tasks moving
/// (blocking one still costs a worker; the async form is better there too).
///
/// ```
/// // Outside a runtime, blocking is fine.
/// kclient_flowcontrol::assert_can_block("Queue::get_blocking", "Queue::get().await");
///
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let hang = std::panic::catch_unwind(|| {
///     rt.block_on(async {
///         kclient_flowcontrol::assert_can_block("Queue::get_blocking", "Queue::get().await")
///     })
/// });
/// assert!(hang.is_err());
/// ```
pub fn assert_can_block(what: &str, instead: &str) {
    let Ok(handle) = Handle::try_current() else {
        return;
    };
    if handle.runtime_flavor() != RuntimeFlavor::CurrentThread {
        return;
    }
    // The runtime's own thread, or one of its `spawn_blocking` threads, where blocking is
    // fine? tokio tells the two apart only in `block_in_place`, which refuses (panics) on the
    // former. Its panic message is printed before ours.
    let drives_the_runtime =
        panic::catch_unwind(AssertUnwindSafe(|| tokio::task::block_in_place(|| ()))).is_err();
    if drives_the_runtime {
        panic!(
            "{what} blocks the thread, and this thread drives a current-thread tokio runtime: \
             what it waits for could never happen, so it would hang. Await {instead} instead, \
             or call {what} from a thread of its own (std::thread::spawn or \
             tokio::task::spawn_blocking)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn panics(f: impl FnOnce() + Send + 'static) -> Option<String> {
        std::thread::spawn(f).join().err().map(|payload| {
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
    }

    #[test]
    fn blocking_is_refused_only_where_it_would_hang() {
        // No runtime.
        assert_eq!(panics(|| assert_can_block("a", "b")), None);
        // The thread that drives a current-thread runtime.
        let message = panics(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            rt.block_on(async { assert_can_block("Queue::get_blocking", "Queue::get()") });
        })
        .expect("a current-thread runtime's own thread must be refused");
        assert!(
            message.contains("Queue::get_blocking blocks the thread")
                && message.contains("Await Queue::get() instead"),
            "{message}"
        );
        // A spawn_blocking thread of that runtime, and a multi-thread runtime's worker.
        assert_eq!(
            panics(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    tokio::task::spawn_blocking(|| assert_can_block("a", "b"))
                        .await
                        .unwrap()
                });
            }),
            None
        );
        assert_eq!(
            panics(|| {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_time()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    tokio::spawn(async {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        assert_can_block("a", "b");
                    })
                    .await
                    .unwrap()
                });
            }),
            None
        );
    }
}
