//! [`LogCapture`]: what kclient logs, captured in memory for a test to assert on.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;

/// A `tracing` subscriber for the current thread that writes its lines into memory, for a test
/// that asserts on what was logged (and, if asked, on the spans that closed, with their
/// fields).
///
/// It is the thread's default until dropped, so a test on a current-thread runtime
/// (`#[tokio::test]`) captures its tasks too.
///
/// ```
/// use kclient_testenv::LogCapture;
///
/// let logs = LogCapture::start(tracing::Level::INFO);
/// tracing::info!(queue = "orders", "shut down");
/// assert!(logs.text().contains("queue=\"orders\""));
/// ```
pub struct LogCapture {
    written: Written,
    _default: DefaultGuard,
    /// A second registered dispatcher, with no subscriber, kept while the capture lives (see
    /// `with_spans`).
    _second: tracing::Dispatch,
}

impl LogCapture {
    /// Captures events up to `level`.
    pub fn start(level: tracing::Level) -> Self {
        Self::with_spans(level, false)
    }

    /// Captures events up to `level` and, when `closed_spans` is true, a line for each span
    /// that closes, with its fields.
    pub fn with_spans(level: tracing::Level, closed_spans: bool) -> Self {
        let written = Written::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_span_events(if closed_spans {
                FmtSpan::CLOSE
            } else {
                FmtSpan::NONE
            })
            .with_ansi(false)
            .with_writer(written.clone())
            .finish();
        let default = tracing::subscriber::set_default(subscriber);
        // While only one dispatcher is registered, tracing-core asks a callsite met for the
        // first time only the default of the thread that meets it: another test's thread,
        // with no subscriber, would mark the callsite "never" for every thread, and this
        // capture would miss it (kclient's request span, when a test beside this one sends
        // the process's first request). With a second one registered, tracing-core asks
        // every registered dispatcher instead, this capture's among them.
        let second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
        // A callsite that another thread was registering as this subscriber arrived keeps
        // the interest it computed without it: tracing-core registers the subscriber and
        // rebuilds the callsites it knows, and that one is not yet among them. Once such
        // registrations are done, every callsite's interest is rebuilt.
        std::thread::sleep(Duration::from_millis(20));
        tracing::callsite::rebuild_interest_cache();
        LogCapture {
            written,
            _default: default,
            _second: second,
        }
    }

    /// Everything written so far, one line per event or closed span.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.written.0.lock()).into_owned()
    }
}

impl std::fmt::Debug for LogCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogCapture")
            .field("bytes", &self.written.0.lock().len())
            .finish_non_exhaustive()
    }
}

/// The memory the subscriber writes into.
#[derive(Clone, Default)]
struct Written(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Written {
    type Writer = Written;
    fn make_writer(&'a self) -> Written {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::LogCapture;

    /// A span or event first met on another thread, one without a subscriber of its own, is
    /// still captured on the test's thread afterwards: as kclient's request span is when a
    /// test beside this one sends the first request of the process.
    #[test]
    fn a_callsite_first_met_on_another_thread_is_captured() {
        fn traced() {
            let _span = tracing::info_span!("first met elsewhere").entered();
            tracing::info!("an event first met elsewhere");
        }
        let logs = LogCapture::with_spans(tracing::Level::INFO, true);
        std::thread::spawn(traced).join().expect("the other thread");
        traced();
        let text = logs.text();
        assert!(
            text.lines()
                .any(|l| l.contains(" first met elsewhere: ") && l.contains(": close time.")),
            "the span is missing:\n{text}"
        );
        assert!(
            text.contains("an event first met elsewhere"),
            "the event is missing:\n{text}"
        );
    }
}
