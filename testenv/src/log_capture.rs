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
        // A callsite that another thread (another test) was registering as this subscriber
        // arrived keeps the interest it computed without it: tracing-core registers the
        // subscriber and rebuilds the callsites it knows, and that one is not yet among them.
        // Once such registrations are done, every callsite's interest is rebuilt.
        std::thread::sleep(Duration::from_millis(20));
        tracing::callsite::rebuild_interest_cache();
        LogCapture {
            written,
            _default: default,
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
