//! Watch streams: newline-delimited JSON events decoded incrementally from a chunked body.
//!
//! [`Frames`] splits the body into lines as chunks arrive, keeping only the bytes of the
//! event being received (never the whole body), so a chunk boundary may fall anywhere,
//! including inside a multi-byte character. [`WatchStream`] decodes each line as a
//! [`WatchEvent<T>`]; [`RawWatchStream`] leaves the object undecoded.
//!
//! - An `ERROR` event (for example `410 Expired`) is yielded as `Err` with the server's
//!   `Status`; the server closes the stream after it.
//! - When the server closes the stream (as when `timeoutSeconds` elapses), it ends cleanly
//!   with `None`. When the connection breaks instead (a reset, an unexpected EOF, the HTTP/2
//!   health check finding a dead peer), the complete events received are delivered, a
//!   partial last one is dropped, and the break is yielded once as a transport error before
//!   the stream ends. client-go's `StreamWatcher` ends silently there; kclient reports it so
//!   an informer's watch-error handler can tell that it was cut off. Any other transport
//!   error is yielded once too, then the stream ends.
//! - A line that is not a valid event yields a decode error and ends the stream.
//! - A line longer than [`Config::max_object_size`](crate::Config::max_object_size) (64 MiB
//!   by default) yields a decode error naming the limit and ends the stream, as soon as the
//!   line being received passes the limit: a line without end is never buffered whole
//!   (client-go's frame readers refuse oversized frames too).
//! - Dropping the stream cancels the request.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use kclient_apimachinery::{Error, RawWatchEvent, Status, WatchEvent, WatchEventType, decode_json};
use serde::de::DeserializeOwned;

use crate::body::{ObjectPart, ObjectTooLarge};
use crate::byte_stream::ByteStream;

/// Splits pushed chunks into `\n`-terminated lines, refusing a line longer than its limit as
/// soon as a chunk proves it too long.
///
/// Chunks are kept as received (`Bytes`, shared with the transport, never copied while a line
/// is incomplete): a line inside one chunk is a slice of it, and only a line that spans chunks
/// is joined, once, when its newline arrives. A line being received therefore costs its own
/// bytes, and a complete one at most twice its length while it is joined, never the
/// reallocation copies of a growing buffer.
#[derive(Debug)]
pub(crate) struct LineBuffer {
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    len: usize,
    /// Leading bytes known to hold no newline.
    scanned: usize,
    limit: usize,
    /// The line being received is already known to pass the limit.
    overflowed: bool,
    /// What a line is, for the error of one too long.
    part: ObjectPart,
}

impl LineBuffer {
    pub(crate) fn new(limit: usize) -> Self {
        Self::of(limit, ObjectPart::WatchEvent)
    }

    /// A buffer whose too-long lines are named as `part` in errors.
    pub(crate) fn of(limit: usize, part: ObjectPart) -> Self {
        LineBuffer {
            chunks: VecDeque::new(),
            len: 0,
            scanned: 0,
            limit,
            overflowed: false,
            part,
        }
    }

    pub(crate) fn push(&mut self, chunk: Bytes) {
        if self.overflowed || chunk.is_empty() {
            return;
        }
        // When everything buffered has been scanned it is one partial line (complete lines
        // are taken by `next_line` before the next chunk arrives). If this chunk brings that
        // line past the limit, refuse it now rather than hold it.
        if self.scanned == self.len {
            let line_end = memchr::memchr(b'\n', &chunk).unwrap_or(chunk.len());
            if self.len + line_end > self.limit {
                self.overflowed = true;
                self.clear();
                return;
            }
        }
        self.len += chunk.len();
        self.chunks.push_back(chunk);
    }

    /// The next complete line, without its terminator; an error when the line (complete or
    /// not) is longer than the limit, so at most the limit and one chunk are ever held.
    pub(crate) fn next_line(&mut self) -> Result<Option<Bytes>, ObjectTooLarge> {
        if self.overflowed {
            self.overflowed = false;
            return Err(self.too_large());
        }
        let Some(end) = self.find_newline() else {
            self.scanned = self.len;
            if self.len > self.limit {
                return Err(self.too_large());
            }
            return Ok(None);
        };
        let mut line = self.take(end);
        self.take(1); // the newline
        self.scanned = 0;
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if line.len() > self.limit {
            return Err(self.too_large());
        }
        Ok(Some(line))
    }

    /// The position of the first newline at or after `scanned`.
    fn find_newline(&self) -> Option<usize> {
        let mut offset = 0;
        for chunk in &self.chunks {
            let from = self.scanned.saturating_sub(offset).min(chunk.len());
            if let Some(i) = memchr::memchr(b'\n', &chunk[from..]) {
                return Some(offset + from + i);
            }
            offset += chunk.len();
        }
        None
    }

    /// Removes and returns the first `n` bytes: a slice of the first chunk when they lie in
    /// it, else the chunks they span joined once.
    fn take(&mut self, n: usize) -> Bytes {
        self.len -= n;
        let Some(first) = self.chunks.front_mut() else {
            return Bytes::new();
        };
        if n <= first.len() {
            let taken = first.split_to(n);
            if first.is_empty() {
                self.chunks.pop_front();
            }
            return taken;
        }
        let mut joined = BytesMut::with_capacity(n);
        while joined.len() < n {
            let Some(mut chunk) = self.chunks.pop_front() else {
                break;
            };
            let want = n - joined.len();
            if chunk.len() > want {
                joined.extend_from_slice(&chunk.split_to(want));
                self.chunks.push_front(chunk);
            } else {
                joined.extend_from_slice(&chunk);
            }
        }
        joined.freeze()
    }

    fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
        self.scanned = 0;
    }

    fn too_large(&mut self) -> ObjectTooLarge {
        self.clear();
        ObjectTooLarge {
            limit: self.limit,
            what: self.part,
        }
    }

    /// What is left after the body ended (a last event without a newline).
    pub(crate) fn take_rest(&mut self) -> Option<Bytes> {
        self.scanned = 0;
        (self.len > 0).then(|| self.take(self.len))
    }

    /// Bytes held.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.len
    }
}

enum State {
    Reading,
    /// The body ended: deliver the complete lines left, then a last line without a newline.
    Draining,
    /// The connection was cut: deliver the complete lines left and drop a partial last line
    /// (it is half an event, not one without a newline).
    DrainingCut(Error),
    Done,
}

/// The lines of a streamed body; blank lines are skipped.
pub(crate) struct Frames {
    body: ByteStream,
    lines: LineBuffer,
    state: State,
    /// Names the request in errors.
    what: String,
}

impl Frames {
    pub(crate) fn new(body: ByteStream, max_line: usize, what: String) -> Self {
        Frames {
            body,
            lines: LineBuffer::new(max_line),
            state: State::Reading,
            what,
        }
    }

    /// The next line from the buffer; a line past the limit ends the stream with an error.
    fn next_line(&mut self) -> Result<Option<Bytes>, Error> {
        self.lines.next_line().map_err(|e| {
            self.state = State::Done;
            Error::decode(self.what.clone(), e)
        })
    }

    fn end(&mut self) {
        self.state = State::Done;
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

impl Stream for Frames {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match this.state {
                State::Done => return Poll::Ready(None),
                State::Draining | State::DrainingCut(_) => {
                    let next = match this.next_line() {
                        Ok(next) => next,
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    };
                    if let Some(line) = next {
                        if !is_blank(&line) {
                            return Poll::Ready(Some(Ok(line)));
                        }
                        continue;
                    }
                    let cut = match std::mem::replace(&mut this.state, State::Done) {
                        State::DrainingCut(e) => Some(e),
                        _ => None,
                    };
                    if let Some(rest) = this.lines.take_rest() {
                        if cut.is_some() {
                            tracing::debug!(
                                bytes = rest.len(),
                                "watch stream cut inside an event; the partial event is dropped"
                            );
                        } else if !is_blank(&rest) {
                            return Poll::Ready(Some(Ok(rest)));
                        }
                    }
                    if let Some(e) = cut {
                        return Poll::Ready(Some(Err(e)));
                    }
                    continue;
                }
                State::Reading => {}
            }
            match this.next_line() {
                Ok(Some(line)) if is_blank(&line) => continue,
                Ok(Some(line)) => return Poll::Ready(Some(Ok(line))),
                Ok(None) => {}
                Err(e) => return Poll::Ready(Some(Err(e))),
            }
            match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => this.lines.push(chunk),
                Poll::Ready(None) => this.state = State::Draining,
                Poll::Ready(Some(Err(e))) => {
                    if e.is_connection_reset() || e.is_transport_timeout() {
                        tracing::debug!(error = %e, "watch stream cut by the connection");
                        this.state = State::DrainingCut(e);
                    } else {
                        this.end();
                        return Poll::Ready(Some(Err(e)));
                    }
                }
            }
        }
    }
}

/// A watch: a stream of `Result<WatchEvent<T>, Error>`, typed or `Unstructured`-like
/// (`T` is any `DeserializeOwned`).
///
/// `ERROR` events arrive as `Err` holding the server's `Status`.
pub struct WatchStream<T> {
    frames: Frames,
    what: String,
    _type: PhantomData<fn() -> T>,
}

impl<T> WatchStream<T> {
    /// Decodes `body`, refusing events longer than `max_line`; `what` names the request in
    /// decode errors.
    pub(crate) fn new(body: ByteStream, max_line: usize, what: String) -> Self {
        WatchStream {
            frames: Frames::new(body, max_line, what.clone()),
            what,
            _type: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for WatchStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream").finish_non_exhaustive()
    }
}

fn decode_event<T: DeserializeOwned>(line: &[u8], what: &str) -> Result<WatchEvent<T>, Error> {
    decode_json::<WatchEvent<T>>(line).map_err(|e| Error::decode(what, e))
}

impl<T: DeserializeOwned> Stream for WatchStream<T> {
    type Item = Result<WatchEvent<T>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.frames).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(Some(Ok(line))) => {
                Poll::Ready(Some(match decode_event::<T>(&line, &this.what) {
                    Ok(WatchEvent::Error(status)) => Err(Error::from_status(*status)),
                    Ok(event) => Ok(event),
                    Err(e) => {
                        this.frames.end();
                        Err(e)
                    }
                }))
            }
        }
    }
}

/// A watch whose objects are left undecoded ([`RawWatchEvent`]); `ERROR` events arrive as
/// `Err` holding the server's `Status`.
pub struct RawWatchStream {
    frames: Frames,
    what: String,
}

impl RawWatchStream {
    /// Splits `body` into events, refusing events longer than `max_line`; `what` names the
    /// request in decode errors.
    pub(crate) fn new(body: ByteStream, max_line: usize, what: String) -> Self {
        RawWatchStream {
            frames: Frames::new(body, max_line, what.clone()),
            what,
        }
    }
}

impl std::fmt::Debug for RawWatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawWatchStream").finish_non_exhaustive()
    }
}

impl Stream for RawWatchStream {
    type Item = Result<RawWatchEvent, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.frames).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(Some(Ok(line))) => {
                let decoded = decode_json::<RawWatchEvent>(&line)
                    .map_err(|e| Error::decode(this.what.clone(), e))
                    .and_then(|ev| {
                        if ev.event_type == WatchEventType::Error {
                            let status: Status = serde_json::from_str(ev.object.get())
                                .map_err(|e| Error::decode("watch error status", e))?;
                            Err(Error::from_status(status))
                        } else {
                            Ok(ev)
                        }
                    });
                if decoded.as_ref().is_err_and(Error::is_decode) {
                    this.frames.end();
                }
                Poll::Ready(Some(decoded))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;
    use kclient_apimachinery::TransportErrorKind;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Obj {
        metadata: Meta,
        #[serde(default)]
        data: std::collections::BTreeMap<String, String>,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        name: String,
        resource_version: String,
    }

    /// A recorded stream: every event type, a multi-byte character, CRLF, a blank line and a
    /// last event without a newline.
    const RECORDED: &str = concat!(
        r#"{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"10"},"data":{"k":"héllo ✓"}}}"#,
        "\n",
        r#"{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"11"},"data":{"k":"v2"}}}"#,
        "\r\n\n",
        r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
        "\n",
        r#"{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"13"}}}"#,
        "\n",
        r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (13)","reason":"Expired","code":410}}"#,
    );

    fn body(chunks: Vec<Result<Bytes, Error>>) -> ByteStream {
        ByteStream::new(futures_util::stream::iter(chunks))
    }

    async fn collect(chunks: Vec<Result<Bytes, Error>>) -> Vec<Result<WatchEvent<Obj>, Error>> {
        WatchStream::<Obj>::new(body(chunks), 1 << 20, "test".into())
            .collect()
            .await
    }

    fn summarize(events: &[Result<WatchEvent<Obj>, Error>]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Ok(WatchEvent::Added(o)) => {
                    format!("ADDED {} {}", o.metadata.resource_version, o.data["k"])
                }
                Ok(WatchEvent::Modified(o)) => format!("MODIFIED {}", o.metadata.resource_version),
                Ok(WatchEvent::Deleted(o)) => format!("DELETED {}", o.metadata.resource_version),
                Ok(WatchEvent::Bookmark(b)) => {
                    format!(
                        "BOOKMARK {} {}",
                        b.resource_version,
                        b.is_initial_events_end()
                    )
                }
                Ok(WatchEvent::Error(_)) => "unexpected error event".into(),
                Err(e) => format!("ERR gone={} {e}", e.is_resource_expired()),
            })
            .collect()
    }

    fn expected() -> Vec<String> {
        vec![
            "ADDED 10 héllo ✓".into(),
            "MODIFIED 11".into(),
            "BOOKMARK 12 true".into(),
            "DELETED 13".into(),
            "ERR gone=true too old resource version: 1 (13)".into(),
        ]
    }

    #[tokio::test]
    async fn every_single_split_point() {
        let bytes = RECORDED.as_bytes();
        for at in 0..=bytes.len() {
            let chunks = vec![
                Ok(Bytes::copy_from_slice(&bytes[..at])),
                Ok(Bytes::copy_from_slice(&bytes[at..])),
            ];
            assert_eq!(
                summarize(&collect(chunks).await),
                expected(),
                "split at {at}"
            );
        }
    }

    #[tokio::test]
    async fn every_pair_of_split_points_and_byte_by_byte() {
        let bytes = RECORDED.as_bytes();
        // All pairs on a stride (the full square is ~250k streams), plus one byte per chunk.
        for a in (0..=bytes.len()).step_by(7) {
            for b in (a..=bytes.len()).step_by(5) {
                let chunks = vec![
                    Ok(Bytes::copy_from_slice(&bytes[..a])),
                    Ok(Bytes::copy_from_slice(&bytes[a..b])),
                    Ok(Bytes::copy_from_slice(&bytes[b..])),
                ];
                assert_eq!(
                    summarize(&collect(chunks).await),
                    expected(),
                    "split {a},{b}"
                );
            }
        }
        let chunks = bytes
            .iter()
            .map(|b| Ok(Bytes::copy_from_slice(&[*b])))
            .collect();
        assert_eq!(summarize(&collect(chunks).await), expected());
    }

    #[tokio::test]
    async fn garbage_ends_the_stream_with_a_decode_error() {
        let chunks = vec![
            Ok(Bytes::from_static(b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n")),
            Ok(Bytes::from_static(b"<html>oops</html>\n")),
            Ok(Bytes::from_static(b"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}}\n")),
        ];
        let events = collect(chunks).await;
        assert_eq!(events.len(), 2);
        assert!(events[0].is_ok());
        assert!(events[1].as_ref().unwrap_err().is_decode());
    }

    #[tokio::test]
    async fn transport_errors_are_reported_after_the_events_received() {
        let ev = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n";
        let reset = vec![
            Ok(Bytes::from_static(ev)),
            Err(Error::transport(TransportErrorKind::ConnectionReset, "eof")),
        ];
        let events = collect(reset).await;
        assert_eq!(events.len(), 2);
        assert!(events[0].is_ok());
        assert!(events[1].as_ref().unwrap_err().is_connection_reset());
        let other = vec![
            Ok(Bytes::from_static(ev)),
            Err(Error::transport(TransportErrorKind::Other, "boom")),
            Ok(Bytes::from_static(ev)),
        ];
        let events = collect(other).await;
        assert_eq!(events.len(), 2);
        assert!(events[1].as_ref().unwrap_err().is_transport());
    }

    #[tokio::test]
    async fn a_cut_inside_an_event_drops_the_partial_event_and_reports_the_cut() {
        let ev = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n";
        let chunks = vec![
            Ok(Bytes::from_static(ev)),
            Ok(Bytes::from_static(b"{\"type\":\"MODIFIED\",\"obj")),
            Err(Error::transport(TransportErrorKind::ConnectionReset, "eof")),
        ];
        let events = collect(chunks).await;
        assert_eq!(
            events.len(),
            2,
            "the half event is not delivered; the cut is reported"
        );
        assert!(events[0].is_ok());
        assert!(events[1].as_ref().unwrap_err().is_connection_reset());
        // At a normal end of the body a last event without its newline is still delivered.
        let chunks = vec![Ok(Bytes::from_static(&ev[..ev.len() - 1]))];
        let events = collect(chunks).await;
        assert_eq!(events.len(), 1);
        assert!(events[0].is_ok());
    }

    /// A long line is held as received, refused as soon as a chunk proves it too long (never
    /// more than the limit held), and lines at the limit still pass when they arrive in many
    /// chunks; lines split anywhere come out whole.
    #[test]
    fn the_line_buffer_never_grows_past_the_limit() {
        let limit = 4 << 20;
        let chunk = Bytes::from(vec![b'x'; 100_000]);
        let mut lines = LineBuffer::new(limit);
        let mut pushed = 0;
        loop {
            lines.push(chunk.clone());
            pushed += chunk.len();
            assert!(
                lines.held() <= limit,
                "{} bytes held at {pushed}",
                lines.held()
            );
            match lines.next_line() {
                Ok(None) => assert!(pushed <= limit, "{pushed} bytes held past the limit"),
                Ok(Some(_)) => panic!("no newline was sent"),
                Err(e) => {
                    assert_eq!(e.limit, limit);
                    assert!(pushed > limit && pushed <= limit + chunk.len());
                    break;
                }
            }
        }
        // The buffer is usable again, and a line of exactly the limit passes in pieces.
        let mut exact = vec![b'y'; limit];
        exact.push(b'\n');
        for piece in exact.chunks(65_536) {
            lines.push(Bytes::copy_from_slice(piece));
        }
        let line = lines.next_line().unwrap().expect("a line at the limit");
        assert_eq!(line.len(), limit);
        assert!(lines.next_line().unwrap().is_none());
        // Three lines split at every position across two chunks, with CRLF in the middle.
        let text = b"first\nsecond\r\nthird\n";
        for cut in 0..=text.len() {
            let mut lines = LineBuffer::new(limit);
            lines.push(Bytes::copy_from_slice(&text[..cut]));
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().unwrap() {
                got.push(line);
            }
            lines.push(Bytes::copy_from_slice(&text[cut..]));
            while let Some(line) = lines.next_line().unwrap() {
                got.push(line);
            }
            assert_eq!(
                got,
                ["first", "second", "third"].map(|l| Bytes::from_static(l.as_bytes())),
                "cut at {cut}"
            );
            assert_eq!(lines.held(), 0);
        }
    }

    /// A line without end (3 GiB in the issue) is refused once it passes the limit, having
    /// read at most one chunk more: never buffered whole. Lines up to the limit still pass.
    #[tokio::test]
    async fn a_line_past_the_limit_is_refused_without_buffering_it_whole() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let ev = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n";
        let pulled = Arc::new(AtomicUsize::new(0));
        let endless = |counter: Arc<AtomicUsize>| {
            let chunk = Bytes::from(vec![b'x'; 16 << 10]);
            let head = [
                Bytes::from_static(ev),
                Bytes::from_static(b"{\"type\":\"ADDED\",\"object\":\""),
            ];
            ByteStream::new(
                futures_util::stream::iter(head.into_iter().chain(
                    std::iter::repeat(chunk).inspect(move |_| {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }),
                ))
                .map(Ok),
            )
        };
        let limit = 256 << 10;
        for raw in [false, true] {
            pulled.store(0, Ordering::Relaxed);
            let stream = endless(pulled.clone());
            let results: Vec<Result<(), Error>> = if raw {
                RawWatchStream::new(stream, limit, "watch event of /w".into())
                    .map(|r| r.map(drop))
                    .collect()
                    .await
            } else {
                WatchStream::<Obj>::new(stream, limit, "watch event of /w".into())
                    .map(|r| r.map(drop))
                    .collect()
                    .await
            };
            assert_eq!(results.len(), 2, "one event, then the error, then the end");
            assert!(results[0].is_ok());
            let err = results[1].as_ref().unwrap_err();
            assert!(err.is_decode(), "{err:?}");
            let text = err.to_string();
            assert!(
                text.contains("watch event of /w: a watch event is larger than 262144 bytes, the limit set by Config::max_object_size"),
                "{text}"
            );
            let pulled = pulled.load(Ordering::Relaxed);
            assert!(
                pulled <= limit / (16 << 10) + 1,
                "{pulled} chunks of 16 KiB read"
            );
        }
        // A line of exactly the limit passes; one byte more does not.
        let line = |n: usize| {
            let head = br#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"},"data":{"k":""#;
            let tail = br#""}}}"#;
            let mut v = head.to_vec();
            v.extend(std::iter::repeat_n(b'v', n - head.len() - tail.len()));
            v.extend_from_slice(tail);
            v.push(b'\n');
            Bytes::from(v)
        };
        for (len, ok) in [(1000, true), (1001, false)] {
            let events: Vec<_> =
                WatchStream::<Obj>::new(body(vec![Ok(line(len))]), 1000, "w".into())
                    .collect()
                    .await;
            assert_eq!(events[0].is_ok(), ok, "{len}: {:?}", events[0]);
        }
    }

    #[tokio::test]
    async fn raw_events_keep_the_object() {
        let bytes = RECORDED.as_bytes();
        let chunks = bytes
            .chunks(13)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let events: Vec<_> = RawWatchStream::new(body(chunks), 1 << 20, "test".into())
            .collect()
            .await;
        assert_eq!(events.len(), 5);
        let first = events[0].as_ref().unwrap();
        assert_eq!(first.event_type, WatchEventType::Added);
        assert!(first.object.get().contains("héllo"));
        assert!(events[4].as_ref().unwrap_err().is_resource_expired());
    }
}
