//! Watch streams: newline-delimited JSON events, or length-prefixed protobuf frames, decoded
//! incrementally from a chunked body.
//!
//! [`Frames`] splits the body into frames as chunks arrive (JSON lines, or protobuf frames of a
//! four-byte big-endian length and a `WatchEvent` message), keeping only the bytes of the
//! event being received (never the whole body), so a chunk boundary may fall anywhere,
//! including inside a multi-byte character or a length prefix. [`WatchStream`] decodes each
//! frame as a [`WatchEvent<T>`]; [`RawWatchStream`] leaves the object undecoded (JSON only).
//!
//! - An `ERROR` event (for example `410 Expired`) is yielded as `Err` with the server's
//!   `Status`; the server closes the stream after it.
//! - When the server closes the stream (as when `timeoutSeconds` elapses), it ends cleanly
//!   with `None`. When the connection breaks instead (a reset, an unexpected EOF, the HTTP/2
//!   health check finding a dead peer), the complete events received are delivered, a
//!   partial last one is dropped, and the break is yielded once as a transport error before
//!   the stream ends. client-go's `StreamWatcher` ends silently there; kclient reports it so
//!   an informer's watch-error handler can tell that it was cut off. Any other transport
//!   error is yielded once too, then the stream ends. A body that ends cleanly inside an
//!   event (half a JSON line, part of a protobuf frame) ends the stream like a close, after
//!   the complete events, the partial one dropped: client-go's frame readers return
//!   `io.ErrUnexpectedEOF` there, which its `StreamWatcher` treats as the end of the watch,
//!   so a reflector re-watches from the last version rather than relisting.
//! - A frame that is not a valid event yields a decode error and ends the stream.
//! - An event longer than [`Config::max_object_size`](crate::Config::max_object_size) (64 MiB
//!   by default) yields a decode error naming the limit and ends the stream, as soon as the
//!   event being received passes the limit (for protobuf, as soon as its length prefix
//!   arrives): an event without end is never buffered whole (client-go's frame readers refuse
//!   oversized frames too).
//! - Dropping the stream cancels the request.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use kclient_apimachinery::{Error, RawWatchEvent, Status, WatchEvent, WatchEventType, decode_json};
use serde::de::DeserializeOwned;

#[cfg(feature = "protobuf")]
use kclient_apimachinery::protobuf::ProtobufCodec;

use crate::body::{ObjectPart, ObjectTooLarge};
use crate::byte_stream::ByteStream;

/// Chunks of a body as received (`Bytes`, shared with the transport), from which whole frames
/// are taken: a frame inside one chunk is a slice of it, and only a frame that spans chunks is
/// joined, once, when it is complete.
///
/// Small chunks that arrive while others wait (a frame trickling in a few bytes at a time) are
/// copied together instead of kept one by one: each kept chunk costs a `Bytes` and can pin a
/// transport buffer far larger than its bytes, so a frame in tiny chunks would otherwise cost
/// many times its size.
#[derive(Debug, Default)]
pub(crate) struct ChunkQueue {
    chunks: VecDeque<Bytes>,
    /// Small chunks copied together; their bytes come after those of `chunks`.
    tail: BytesMut,
    /// Bytes in `chunks` and `tail`.
    len: usize,
}

/// A chunk smaller than this, arriving while others wait, is copied into the tail.
const SMALL_CHUNK: usize = 4 << 10;

/// The tail becomes a chunk of its own at this size.
const GATHERED: usize = 64 << 10;

impl ChunkQueue {
    fn push(&mut self, chunk: Bytes) {
        let waiting = self.len > 0;
        self.len += chunk.len();
        if waiting && chunk.len() < SMALL_CHUNK {
            self.tail.extend_from_slice(&chunk);
            if self.tail.len() >= GATHERED {
                self.seal_tail();
            }
            return;
        }
        self.seal_tail();
        self.chunks.push_back(chunk);
    }

    /// Moves the tail's bytes to a chunk of their own, so that a chunk can follow them.
    fn seal_tail(&mut self) {
        if !self.tail.is_empty() {
            self.chunks.push_back(self.tail.split().freeze());
        }
    }

    /// How many pieces (chunks, then the tail) hold the bytes.
    fn piece_count(&self) -> usize {
        self.chunks.len() + 1
    }

    /// Piece `i`: a chunk, or the tail after the last one.
    fn piece(&self, i: usize) -> &[u8] {
        self.chunks.get(i).map_or(&self.tail[..], |c| &c[..])
    }

    /// Removes and returns the first `n` bytes: a slice of the first piece when they lie in
    /// it, else the pieces they span joined once.
    fn take(&mut self, n: usize) -> Bytes {
        let n = n.min(self.len);
        self.len -= n;
        let Some(first) = self.chunks.front_mut() else {
            return self.tail.split_to(n).freeze();
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
            let want = n - joined.len();
            let Some(mut chunk) = self.chunks.pop_front() else {
                let from_tail = self.tail.split_to(want.min(self.tail.len()));
                joined.extend_from_slice(&from_tail);
                break;
            };
            if chunk.len() > want {
                joined.extend_from_slice(&chunk.split_to(want));
                self.chunks.push_front(chunk);
            } else {
                joined.extend_from_slice(&chunk);
            }
        }
        joined.freeze()
    }

    /// The first `N` bytes, if that many are held, without removing them.
    #[cfg(feature = "protobuf")]
    fn peek<const N: usize>(&self) -> Option<[u8; N]> {
        if self.len < N {
            return None;
        }
        let mut out = [0; N];
        let mut filled = 0;
        for i in 0..self.piece_count() {
            let piece = self.piece(i);
            let n = piece.len().min(N - filled);
            out[filled..filled + n].copy_from_slice(&piece[..n]);
            filled += n;
            if filled == N {
                break;
            }
        }
        Some(out)
    }

    fn clear(&mut self) {
        self.chunks.clear();
        self.tail.clear();
        self.len = 0;
    }

    /// Buffers held.
    #[cfg(test)]
    fn pieces(&self) -> usize {
        self.chunks.len() + usize::from(!self.tail.is_empty())
    }
}

/// Splits pushed chunks into `\n`-terminated lines, refusing a line longer than its limit as
/// soon as a chunk proves it too long.
///
/// A line being received costs its own bytes, and a complete one at most twice its length
/// while it is joined ([`ChunkQueue`]), never the reallocation copies of a growing buffer.
#[derive(Debug)]
pub(crate) struct LineBuffer {
    queue: ChunkQueue,
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
            queue: ChunkQueue::default(),
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
        if self.scanned == self.queue.len {
            let line_end = memchr::memchr(b'\n', &chunk).unwrap_or(chunk.len());
            if self.queue.len + line_end > self.limit {
                self.overflowed = true;
                self.clear();
                return;
            }
        }
        self.queue.push(chunk);
    }

    /// The next complete line, without its terminator; an error when the line (complete or
    /// not) is longer than the limit, so at most the limit and one chunk are ever held.
    pub(crate) fn next_line(&mut self) -> Result<Option<Bytes>, ObjectTooLarge> {
        if self.overflowed {
            self.overflowed = false;
            return Err(self.too_large());
        }
        let Some(end) = self.find_newline() else {
            self.scanned = self.queue.len;
            if self.queue.len > self.limit {
                return Err(self.too_large());
            }
            return Ok(None);
        };
        let mut line = self.queue.take(end);
        self.queue.take(1); // the newline
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
        let queue = &self.queue;
        // The piece holding byte `scanned`, found from the back: the pieces before it were
        // looked at already, and walking them on every chunk would cost quadratic time for a
        // line in many pieces.
        let (mut i, mut offset) = (queue.piece_count(), queue.len);
        while i > 0 && offset > self.scanned {
            i -= 1;
            offset -= queue.piece(i).len();
        }
        while i < queue.piece_count() {
            let piece = queue.piece(i);
            let from = self.scanned.saturating_sub(offset).min(piece.len());
            if let Some(at) = memchr::memchr(b'\n', &piece[from..]) {
                return Some(offset + from + at);
            }
            offset += piece.len();
            i += 1;
        }
        None
    }

    fn clear(&mut self) {
        self.queue.clear();
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
        (self.queue.len > 0).then(|| self.queue.take(self.queue.len))
    }

    /// Bytes held.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.queue.len
    }
}

/// Splits pushed chunks into the length-prefixed frames of a protobuf watch (a four-byte
/// big-endian length, then that many bytes), refusing a frame longer than its limit as soon
/// as its length prefix arrives, so that a huge prefix never reserves memory.
#[cfg(feature = "protobuf")]
#[derive(Debug)]
pub(crate) struct LengthPrefixed {
    queue: ChunkQueue,
    limit: usize,
}

#[cfg(feature = "protobuf")]
impl LengthPrefixed {
    pub(crate) fn new(limit: usize) -> Self {
        LengthPrefixed {
            queue: ChunkQueue::default(),
            limit,
        }
    }

    pub(crate) fn push(&mut self, chunk: Bytes) {
        if !chunk.is_empty() {
            self.queue.push(chunk);
        }
    }

    /// The next complete frame, without its length prefix.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Bytes>, ObjectTooLarge> {
        let Some(prefix) = self.queue.peek::<4>() else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(prefix) as usize;
        if len > self.limit {
            self.queue.clear();
            return Err(ObjectTooLarge {
                limit: self.limit,
                what: ObjectPart::WatchEvent,
            });
        }
        if self.queue.len < 4 + len {
            return Ok(None);
        }
        self.queue.take(4);
        Ok(Some(self.queue.take(len)))
    }

    /// Bytes of an incomplete frame left after the body ended.
    pub(crate) fn pending(&self) -> usize {
        self.queue.len
    }
}

/// How a watch body is framed.
#[derive(Debug)]
pub(crate) enum Framing {
    /// Newline-delimited JSON; blank lines are skipped.
    Lines(LineBuffer),
    /// Length-prefixed protobuf frames.
    #[cfg(feature = "protobuf")]
    LengthPrefixed(LengthPrefixed),
}

impl Framing {
    fn push(&mut self, chunk: Bytes) {
        match self {
            Framing::Lines(lines) => lines.push(chunk),
            #[cfg(feature = "protobuf")]
            Framing::LengthPrefixed(frames) => frames.push(chunk),
        }
    }

    /// The next complete frame (never a blank line).
    fn next(&mut self) -> Result<Option<Bytes>, ObjectTooLarge> {
        match self {
            Framing::Lines(lines) => loop {
                match lines.next_line()? {
                    Some(line) if is_blank(&line) => continue,
                    other => return Ok(other),
                }
            },
            #[cfg(feature = "protobuf")]
            Framing::LengthPrefixed(frames) => frames.next_frame(),
        }
    }

    /// After a clean end of the body: a last JSON line without a newline, if it is whole.
    /// What the end cut short (a JSON value the body stops inside, a partial protobuf frame)
    /// is dropped, and its size returned: client-go's frame readers return
    /// `io.ErrUnexpectedEOF` there, and its `StreamWatcher` ends the watch as a normal close.
    fn rest_at_end(&mut self) -> Result<Option<Bytes>, usize> {
        match self {
            Framing::Lines(lines) => match lines.take_rest().filter(|rest| !is_blank(rest)) {
                Some(rest) if is_cut_short_json(&rest) => Err(rest.len()),
                rest => Ok(rest),
            },
            #[cfg(feature = "protobuf")]
            Framing::LengthPrefixed(_) => match self.drop_partial() {
                0 => Ok(None),
                n => Err(n),
            },
        }
    }

    /// Bytes of a partial frame dropped after the connection was cut.
    fn drop_partial(&mut self) -> usize {
        match self {
            Framing::Lines(lines) => lines.take_rest().map_or(0, |rest| rest.len()),
            #[cfg(feature = "protobuf")]
            Framing::LengthPrefixed(frames) => {
                let n = frames.pending();
                frames.queue.clear();
                n
            }
        }
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

/// The frames of a streamed body: JSON lines (blank ones skipped) or protobuf frames.
pub(crate) struct Frames {
    body: ByteStream,
    framing: Framing,
    state: State,
    /// Names the request in errors.
    what: String,
}

impl Frames {
    pub(crate) fn new(body: ByteStream, max_line: usize, what: String) -> Self {
        Self::with_framing(body, Framing::Lines(LineBuffer::new(max_line)), what)
    }

    pub(crate) fn with_framing(body: ByteStream, framing: Framing, what: String) -> Self {
        Frames {
            body,
            framing,
            state: State::Reading,
            what,
        }
    }

    /// The next frame from the buffer; a frame past the limit ends the stream with an error.
    fn next_frame(&mut self) -> Result<Option<Bytes>, Error> {
        self.framing.next().map_err(|e| {
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

/// Whether `text` is the start of a JSON value that the end of the input interrupts (Go's
/// `io.ErrUnexpectedEOF`), rather than a whole value or text that is not JSON.
fn is_cut_short_json(text: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(text)
        .is_err_and(|e| e.classify() == serde_json::error::Category::Eof)
}

impl Stream for Frames {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match this.state {
                State::Done => return Poll::Ready(None),
                State::Draining | State::DrainingCut(_) => {
                    match this.next_frame() {
                        Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                        Ok(None) => {}
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    }
                    match std::mem::replace(&mut this.state, State::Done) {
                        State::DrainingCut(e) => {
                            let dropped = this.framing.drop_partial();
                            if dropped > 0 {
                                tracing::debug!(
                                    bytes = dropped,
                                    "watch stream cut inside an event; the partial event is dropped"
                                );
                            }
                            return Poll::Ready(Some(Err(e)));
                        }
                        _ => match this.framing.rest_at_end() {
                            Ok(Some(rest)) => return Poll::Ready(Some(Ok(rest))),
                            Ok(None) => return Poll::Ready(None),
                            Err(dropped) => {
                                tracing::debug!(
                                    bytes = dropped,
                                    "watch stream ended inside an event; the partial event is dropped"
                                );
                                return Poll::Ready(None);
                            }
                        },
                    }
                }
                State::Reading => {}
            }
            match this.next_frame() {
                Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                Ok(None) => {}
                Err(e) => return Poll::Ready(Some(Err(e))),
            }
            match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => this.framing.push(chunk),
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
/// The body is newline-delimited JSON, or, for a watch opened with
/// `Request::watch_protobuf` (feature `protobuf`) that the server answered with
/// protobuf, length-prefixed protobuf frames: the same events either way.
///
/// `ERROR` events arrive as `Err` holding the server's `Status`.
pub struct WatchStream<T> {
    frames: Frames,
    what: String,
    decoder: EventDecoder<T>,
    /// The `apiVersion` and `kind` objects must have, if set ([`WatchStream::expect_kind`]).
    expected: Option<ExpectedKind>,
}

/// The type a watch's objects must name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExpectedKind {
    api_version: String,
    kind: String,
    /// `"kind":"<kind>","apiVersion":"<apiVersion>"`: how the API server's JSON starts an
    /// object of this type (`None` if either name would need escaping).
    json_head: Option<Vec<u8>>,
}

impl ExpectedKind {
    fn new(api_version: String, kind: String) -> Self {
        let plain =
            |s: &str| !s.is_empty() && !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
        let json_head = (plain(&api_version) && plain(&kind))
            .then(|| format!(r#""kind":"{kind}","apiVersion":"{api_version}""#).into_bytes());
        ExpectedKind {
            api_version,
            kind,
            json_head,
        }
    }

    /// Whether the JSON event `frame` is written the way the API server writes an event of
    /// this type, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1",...`: then
    /// it needs no parse before its decode. Any other form (another kind, another order of
    /// the members, an `ERROR`) is read in full by [`EventDecoder::other_kind`].
    fn json_starts_as_expected(&self, frame: &[u8]) -> bool {
        const OBJECT: &[u8] = b"\",\"object\":{";
        let Some(head) = &self.json_head else {
            return false;
        };
        // The type (`BOOKMARK` the longest) comes first: the object starts within a few bytes.
        let window = &frame[..frame.len().min(32)];
        let Some(at) = memchr::memmem::find(window, OBJECT) else {
            return false;
        };
        let object = &frame[at + OBJECT.len()..];
        object.starts_with(head) && matches!(object.get(head.len()), Some(b',' | b'}'))
    }

    /// `Some("apiVersion/kind")` of an object that names another type; an object that names
    /// none (or only one of the two, which must then match) passes.
    fn other(&self, api_version: Option<&str>, kind: Option<&str>) -> Option<String> {
        let differs = |actual: Option<&str>, expected: &str| {
            !expected.is_empty() && actual.is_some_and(|a| a != expected)
        };
        (differs(api_version, &self.api_version) || differs(kind, &self.kind)).then(|| {
            format!(
                "{}, kind={}",
                api_version.unwrap_or_default(),
                kind.unwrap_or_default()
            )
        })
    }
}

/// The event type and the object's `apiVersion` and `kind` of a JSON watch event, read
/// without decoding the rest of the object.
#[derive(serde::Deserialize)]
struct JsonTypeMeta<'a> {
    #[serde(rename = "type")]
    event_type: WatchEventType,
    #[serde(default, borrow)]
    object: Option<JsonObjectTypeMeta<'a>>,
}

#[derive(serde::Deserialize)]
struct JsonObjectTypeMeta<'a> {
    #[serde(rename = "apiVersion", default, borrow)]
    api_version: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// How each frame of a watch is decoded.
enum EventDecoder<T> {
    Json(PhantomData<fn() -> T>),
    #[cfg(feature = "protobuf")]
    Protobuf(ProtobufCodec<T>),
}

impl<T> WatchStream<T> {
    /// Decodes `body`, refusing events longer than `max_line`; `what` names the request in
    /// decode errors.
    pub(crate) fn new(body: ByteStream, max_line: usize, what: String) -> Self {
        WatchStream {
            frames: Frames::new(body, max_line, what.clone()),
            what,
            decoder: EventDecoder::Json(PhantomData),
            expected: None,
        }
    }

    /// Decodes `body` as length-prefixed protobuf frames of `codec`'s kind, refusing frames
    /// longer than `max_frame`.
    #[cfg(feature = "protobuf")]
    pub(crate) fn protobuf(
        body: ByteStream,
        max_frame: usize,
        what: String,
        codec: ProtobufCodec<T>,
    ) -> Self {
        let framing = Framing::LengthPrefixed(LengthPrefixed::new(max_frame));
        WatchStream {
            frames: Frames::with_framing(body, framing, what.clone()),
            what,
            decoder: EventDecoder::Protobuf(codec),
            expected: None,
        }
    }
}

impl<T> WatchStream<T> {
    /// Skips the events whose object names another `apiVersion` or `kind` than these, as
    /// client-go's reflector drops an event whose object is not of its expected type or
    /// GroupVersionKind: each one skipped is logged at `error` level (client-go's
    /// `HandleError`), and the stream goes on with the next event. An object that names no
    /// type passes, an empty expected value is not checked, and `ERROR` events are not
    /// checked. Informers' lister-watchers set it, so that
    /// an object of another kind (from a broken proxy or aggregated API) is never decoded
    /// into the informer's type.
    pub fn expect_kind(mut self, api_version: impl Into<String>, kind: impl Into<String>) -> Self {
        self.expected = Some(ExpectedKind::new(api_version.into(), kind.into()));
        self
    }

    /// Whether the server sends this watch as protobuf (it answered a
    /// `Request::watch_protobuf` with a protobuf stream);
    /// `false` for JSON.
    pub fn is_protobuf(&self) -> bool {
        match self.decoder {
            EventDecoder::Json(_) => false,
            #[cfg(feature = "protobuf")]
            EventDecoder::Protobuf(_) => true,
        }
    }
}

impl<T> std::fmt::Debug for WatchStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream")
            .field("protobuf", &self.is_protobuf())
            .finish_non_exhaustive()
    }
}

impl<T> EventDecoder<T> {
    /// `Some("apiVersion, kind=...")` when the frame's object names another type than
    /// `expected`; `None` when it matches, names none, is an `ERROR`, or the frame cannot be
    /// read (decoding it then reports the error).
    fn other_kind(&self, frame: &[u8], expected: &ExpectedKind) -> Option<String> {
        match self {
            EventDecoder::Json(_) => {
                if expected.json_starts_as_expected(frame) {
                    return None;
                }
                let head = decode_json::<JsonTypeMeta<'_>>(frame).ok()?;
                let object = head.object?;
                (head.event_type != WatchEventType::Error)
                    .then(|| expected.other(object.api_version.as_deref(), object.kind.as_deref()))
                    .flatten()
            }
            #[cfg(feature = "protobuf")]
            EventDecoder::Protobuf(_) => {
                let (event_type, envelope) =
                    kclient_apimachinery::protobuf::split_watch_event(frame).ok()?;
                let api_version = Some(envelope.api_version).filter(|s| !s.is_empty());
                let kind = Some(envelope.kind).filter(|s| !s.is_empty());
                (event_type != "ERROR")
                    .then(|| expected.other(api_version, kind))
                    .flatten()
            }
        }
    }
}

impl<T: DeserializeOwned> EventDecoder<T> {
    fn decode(&self, frame: &[u8], what: &str) -> Result<WatchEvent<T>, Error> {
        match self {
            EventDecoder::Json(_) => {
                decode_json::<WatchEvent<T>>(frame).map_err(|e| Error::decode(what, e))
            }
            #[cfg(feature = "protobuf")]
            EventDecoder::Protobuf(codec) => codec
                .decode_watch_event(frame)
                .map_err(|e| Error::decode(what, e)),
        }
    }
}

impl<T: DeserializeOwned> Stream for WatchStream<T> {
    type Item = Result<WatchEvent<T>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            let frame = match Pin::new(&mut this.frames).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => frame,
            };
            if let Some(expected) = &this.expected
                && let Some(actual) = this.decoder.other_kind(&frame, expected)
            {
                tracing::error!(
                    watch = %this.what,
                    expected = %format_args!("{}, kind={}", expected.api_version, expected.kind),
                    actual = %actual,
                    "unexpected watch event object type; the event is skipped"
                );
                continue;
            }
            return Poll::Ready(Some(match this.decoder.decode(&frame, &this.what) {
                Ok(WatchEvent::Error(status)) => Err(Error::from_status(*status)),
                Ok(event) => Ok(event),
                Err(e) => {
                    this.frames.end();
                    Err(e)
                }
            }));
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

    /// A body that ends cleanly in the middle of its last event (a server or proxy that closed
    /// the stream properly after half a line) ends the watch after the complete events, as
    /// client-go's `StreamWatcher` ends on `io.ErrUnexpectedEOF`: no decode error, so the
    /// caller re-watches from the last version instead of relisting. A last line that is
    /// whole but not an event is still a decode error.
    #[tokio::test]
    async fn a_clean_end_inside_an_event_ends_the_stream_after_the_complete_events() {
        let ev = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},\"data\":{\"k\":\"héllo\"}}}\n";
        let partial = &ev.as_bytes()[..ev.len() - 1];
        // Cut after every byte of the second event (the last one inside the `é`, too).
        for cut in 1..partial.len() {
            let mut text = ev.as_bytes().to_vec();
            text.extend_from_slice(&partial[..cut]);
            for raw in [false, true] {
                let events: Vec<Result<(), Error>> = if raw {
                    RawWatchStream::new(body(vec![Ok(text.clone().into())]), 1 << 20, "w".into())
                        .map(|r| r.map(drop))
                        .collect()
                        .await
                } else {
                    WatchStream::<Obj>::new(
                        body(vec![Ok(text.clone().into())]),
                        1 << 20,
                        "w".into(),
                    )
                    .map(|r| r.map(drop))
                    .collect()
                    .await
                };
                assert_eq!(events.len(), 1, "cut at {cut} (raw: {raw}): {events:?}");
                assert!(events[0].is_ok());
            }
        }
        // A whole last line that is not an event, or not JSON, is still an error.
        for last in [
            &b"{\"type\":\"ADDED\"}"[..],
            b"{\"type\":\"ADDED\" oops",
            b"<html>",
        ] {
            let mut text = ev.as_bytes().to_vec();
            text.extend_from_slice(last);
            let events = collect(vec![Ok(text.into())]).await;
            assert_eq!(events.len(), 2, "{events:?}");
            assert!(events[1].as_ref().unwrap_err().is_decode(), "{events:?}");
        }
    }

    /// A clean end inside an event whose object nests deeper than `serde_json` reads (the
    /// apiserver stores objects 10,000 levels deep) is a cut too, not a decode error; the
    /// whole deep event before it is delivered.
    #[tokio::test]
    async fn a_clean_end_inside_a_deep_event_ends_the_stream_after_the_complete_events() {
        let deep = |depth: usize| {
            format!(
                "{{\"type\":\"ADDED\",\"object\":{{\"metadata\":{{\"name\":\"a\",\"resourceVersion\":\"1\"}},\"spec\":{}{}}}}}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        for depth in [200, 5_000] {
            let ev = deep(depth);
            let mut text = ev.clone().into_bytes();
            // The second event stops inside its deepest arrays, and on its way out of them.
            for cut in [ev.len() / 2 - 10, ev.len() / 2 + 10] {
                text.truncate(ev.len());
                text.extend_from_slice(&ev.as_bytes()[..cut]);
                let events: Vec<Result<(), Error>> =
                    RawWatchStream::new(body(vec![Ok(text.clone().into())]), 1 << 20, "w".into())
                        .map(|r| r.map(drop))
                        .collect()
                        .await;
                assert_eq!(events.len(), 1, "{depth} levels, cut at {cut}: {events:?}");
                assert!(events[0].is_ok(), "{events:?}");
            }
        }
    }

    /// A JSON watch event line whose object starts with `type_meta` (its members up to and
    /// including a trailing comma), named `a` at resource version `rv`.
    fn event_line(t: &str, type_meta: &str, rv: &str) -> String {
        format!(
            "{{\"type\":\"{t}\",\"object\":{{{type_meta}\"metadata\":{{\"name\":\"a\",\"resourceVersion\":\"{rv}\"}},\"data\":{{\"k\":\"v\"}}}}}}\n"
        )
    }

    /// The events of `text` on a watch that expects ConfigMaps, summarized.
    async fn configmaps_of(text: String) -> Vec<String> {
        let events: Vec<_> =
            WatchStream::<Obj>::new(body(vec![Ok(text.into())]), 1 << 20, "w".into())
                .expect_kind("v1", "ConfigMap")
                .collect()
                .await;
        summarize(&events)
    }

    /// With an expected kind, an event whose object names another apiVersion or kind is
    /// skipped (client-go's reflector drops it) and the next one delivered; objects that name
    /// no type, or the expected one, pass, and ERROR events are not checked.
    #[tokio::test]
    async fn events_of_another_kind_are_skipped_when_a_kind_is_expected() {
        let text = [
            event_line("ADDED", r#""apiVersion":"v1","kind":"Pod","#, "1"),
            event_line("ADDED", r#""apiVersion":"v1","kind":"ConfigMap","#, "2"),
            event_line("MODIFIED", r#""kind":"ConfigMap","apiVersion":"v2","#, "3"),
            event_line("MODIFIED", "", "4"),
            event_line("DELETED", r#""kind":"Secret","#, "5"),
            event_line("BOOKMARK", r#""apiVersion":"meta.k8s.io/v1","kind":"Table","#, "6"),
            event_line("DELETED", r#""kind":"ConfigMap","#, "7"),
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"gone","reason":"Expired","code":410}}"#.to_owned(),
        ]
        .concat();
        assert_eq!(
            configmaps_of(text).await,
            ["ADDED 2 v", "MODIFIED 4", "DELETED 7", "ERR gone=true gone"]
        );
    }

    /// Events written as the API server writes them (`"kind"` then `"apiVersion"` at the start
    /// of the object) pass without a parse when they name the expected type; every other form
    /// is parsed, so a near miss (a longer kind, another version, a member before the type)
    /// is still skipped.
    #[tokio::test]
    async fn events_in_the_servers_form_are_checked_by_their_start() {
        let expected = ExpectedKind::new("v1".into(), "ConfigMap".into());
        let server = event_line("BOOKMARK", r#""kind":"ConfigMap","apiVersion":"v1","#, "1");
        assert!(expected.json_starts_as_expected(server.as_bytes()));
        let near_misses = [
            event_line("ADDED", r#""kind":"ConfigMapX","apiVersion":"v1","#, "2"),
            event_line(
                "ADDED",
                r#""kind":"ConfigMap","apiVersion":"v1beta1","#,
                "3",
            ),
            event_line("ADDED", r#""kind":"Config","apiVersion":"v1","#, "4"),
            event_line("ADDED", r#""apiVersion":"v1","kind":"ConfigMap","#, "5"),
            event_line(
                "ADDED",
                r#""x":1,"kind":"ConfigMap","apiVersion":"v1","#,
                "6",
            ),
        ];
        for miss in &near_misses {
            assert!(!expected.json_starts_as_expected(miss.as_bytes()), "{miss}");
        }
        // A name that would need escaping never takes the short way.
        let odd = ExpectedKind::new("v1".into(), "Config\"Map".into());
        assert!(!odd.json_starts_as_expected(server.as_bytes()));

        let text = [
            event_line("ADDED", r#""kind":"ConfigMap","apiVersion":"v1","#, "1"),
            near_misses.concat(),
            event_line("MODIFIED", r#""kind":"ConfigMap","apiVersion":"v1","#, "7"),
        ]
        .concat();
        assert_eq!(
            configmaps_of(text).await,
            ["ADDED 1 v", "ADDED 5 v", "ADDED 6 v", "MODIFIED 7"]
        );
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

    /// A line trickling in tiny chunks (a progress bar without newlines, a server writing a
    /// few bytes at a time) is held at about its own size: the pieces are gathered, not kept
    /// as one buffer each (each costing a `Bytes` and able to pin a far larger transport
    /// buffer), and looking for the newline does not rescan every piece held.
    #[test]
    fn a_line_in_tiny_chunks_is_held_at_about_its_own_size() {
        const TOTAL: usize = 512 << 10;
        let mut lines = LineBuffer::new(4 << 20);
        // Slices of one larger buffer, as a transport hands them out.
        let buffer = Bytes::from(vec![b'x'; 64 << 10]);
        for i in 0..TOTAL / 16 {
            let at = (i * 16) % buffer.len();
            lines.push(buffer.slice(at..at + 16));
            assert_eq!(lines.next_line().unwrap(), None);
        }
        assert_eq!(lines.held(), TOTAL);
        let pieces = lines.queue.pieces();
        assert!(
            pieces <= TOTAL / 4096 + 2,
            "{pieces} buffers hold {TOTAL} bytes"
        );
        lines.push(Bytes::from_static(b"y\n"));
        let line = lines.next_line().unwrap().expect("the line");
        assert_eq!(line.len(), TOTAL + 1);
        assert!(line[..TOTAL].iter().all(|b| *b == b'x') && line[TOTAL] == b'y');
        assert_eq!(lines.held(), 0);

        // Small and large chunks mixed, split anywhere: the lines come out whole, in order.
        let text: Vec<u8> = (0..200u32)
            .flat_map(|i| {
                let mut line = vec![b'a' + (i % 26) as u8; (i as usize * 997) % 90_000];
                line.push(b'\n');
                line
            })
            .collect();
        let expected: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
        let sizes = [1, 5_000, 3, 70_000, 2, 4_095, 4_096, 17, 100_000, 9];
        let mut lines = LineBuffer::new(1 << 20);
        let (mut at, mut got) = (0, Vec::new());
        for size in sizes.iter().cycle() {
            if at == text.len() {
                break;
            }
            let end = (at + size).min(text.len());
            lines.push(Bytes::copy_from_slice(&text[at..end]));
            at = end;
            while let Some(line) = lines.next_line().unwrap() {
                got.push(line);
            }
        }
        assert_eq!(got.len(), expected.len() - 1);
        for (i, line) in got.iter().enumerate() {
            assert!(line[..] == *expected[i], "line {i}");
        }
        assert_eq!(lines.held(), 0);
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

    /// Protobuf watch streams: the same events as the JSON ones, in length-prefixed frames.
    #[cfg(feature = "protobuf")]
    mod protobuf {
        use super::*;
        use kclient_apimachinery::Object as _;
        use kclient_apimachinery::meta::PartialObjectMetadata;
        use kclient_apimachinery::meta::v1::ObjectMeta;
        use kclient_apimachinery::protobuf::{ProtobufCodec, encode, encode_watch_frame};

        fn thing(name: &str, rv: &str) -> Vec<u8> {
            let t = PartialObjectMetadata {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    resource_version: Some(rv.into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            encode("v1", "ConfigMap", &t)
        }

        /// ADDED, MODIFIED, an initial-events-end BOOKMARK, DELETED and a 410 ERROR, of objects
        /// read as metadata only.
        fn recorded() -> Vec<u8> {
            let mut bookmark = ObjectMeta {
                resource_version: Some("12".into()),
                ..Default::default()
            };
            bookmark.annotations = Some(kclient_apimachinery::meta::StrMap::from([(
                "k8s.io/initial-events-end".into(),
                "true".into(),
            )]));
            let expired = kclient_apimachinery::Status {
                status: "Failure".into(),
                message: "too old resource version: 1 (13)".into(),
                reason: "Expired".into(),
                code: 410,
                ..Default::default()
            };
            let mut out = Vec::new();
            out.extend(encode_watch_frame("ADDED", &thing("a", "10")));
            out.extend(encode_watch_frame("MODIFIED", &thing("a", "11")));
            out.extend(encode_watch_frame(
                "BOOKMARK",
                &encode(
                    "v1",
                    "ConfigMap",
                    &PartialObjectMetadata {
                        metadata: bookmark,
                        ..Default::default()
                    },
                ),
            ));
            out.extend(encode_watch_frame("DELETED", &thing("a", "13")));
            out.extend(encode_watch_frame(
                "ERROR",
                &encode("v1", "Status", &expired),
            ));
            out
        }

        async fn collect(chunks: Vec<Result<Bytes, Error>>, limit: usize) -> Vec<String> {
            WatchStream::protobuf(
                body(chunks),
                limit,
                "test".into(),
                ProtobufCodec::partial_object_metadata(),
            )
            .map(|e| match e {
                Ok(WatchEvent::Added(t)) => format!("ADDED {}", t.resource_version()),
                Ok(WatchEvent::Modified(t)) => format!("MODIFIED {}", t.resource_version()),
                Ok(WatchEvent::Deleted(t)) => format!("DELETED {}", t.resource_version()),
                Ok(WatchEvent::Bookmark(b)) => {
                    format!(
                        "BOOKMARK {} {}",
                        b.resource_version,
                        b.is_initial_events_end()
                    )
                }
                Ok(WatchEvent::Error(_)) => "unexpected error event".into(),
                Err(e) => format!(
                    "ERR gone={} transport={} decode={} {e}",
                    e.is_resource_expired(),
                    e.is_transport(),
                    e.is_decode()
                ),
            })
            .collect()
            .await
        }

        fn expected() -> Vec<String> {
            vec![
                "ADDED 10".into(),
                "MODIFIED 11".into(),
                "BOOKMARK 12 true".into(),
                "DELETED 13".into(),
                "ERR gone=true transport=false decode=false too old resource version: 1 (13)"
                    .into(),
            ]
        }

        #[tokio::test]
        async fn every_split_point_and_every_chunk_size_give_the_same_events() {
            let bytes = recorded();
            for at in 0..=bytes.len() {
                let chunks = vec![
                    Ok(Bytes::copy_from_slice(&bytes[..at])),
                    Ok(Bytes::copy_from_slice(&bytes[at..])),
                ];
                assert_eq!(collect(chunks, 1 << 20).await, expected(), "split at {at}");
            }
            for size in 1..=9 {
                let chunks = bytes
                    .chunks(size)
                    .map(|c| Ok(Bytes::copy_from_slice(c)))
                    .collect();
                assert_eq!(
                    collect(chunks, 1 << 20).await,
                    expected(),
                    "chunks of {size}"
                );
            }
        }

        #[tokio::test]
        async fn a_length_prefix_past_the_limit_ends_the_stream_before_its_bytes_arrive() {
            let frame = encode_watch_frame("ADDED", &thing("a", "10"));
            let limit = frame.len() - 4;
            // Exactly at the limit: accepted.
            assert_eq!(
                collect(vec![Ok(frame.clone().into())], limit).await,
                ["ADDED 10"]
            );
            // One byte over: refused as soon as the prefix is in, naming the limit.
            let events = collect(vec![Ok(frame.clone().into())], limit - 1).await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert!(events[0].contains("decode=true"), "{events:?}");
            assert!(events[0].contains(&(limit - 1).to_string()), "{events:?}");
            // A huge prefix with nothing behind it: refused, nothing reserved for it.
            let events = collect(
                vec![Ok(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 1]))],
                64 << 20,
            )
            .await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert!(events[0].contains("decode=true"), "{events:?}");
        }

        #[tokio::test]
        async fn a_cut_inside_a_frame_delivers_the_whole_frames_then_the_transport_error() {
            let bytes = recorded();
            let first = encode_watch_frame("ADDED", &thing("a", "10")).len();
            let chunks = vec![
                Ok(Bytes::copy_from_slice(&bytes[..first + 7])),
                Err(Error::transport(
                    TransportErrorKind::ConnectionReset,
                    "reset by peer",
                )),
            ];
            let events = collect(chunks, 1 << 20).await;
            assert_eq!(events.len(), 2, "{events:?}");
            assert_eq!(events[0], "ADDED 10");
            assert!(events[1].contains("transport=true"), "{events:?}");
        }

        /// A body that ends cleanly inside a frame (or inside its length prefix) ends the
        /// watch after the whole frames, as client-go's `StreamWatcher` ends on
        /// `io.ErrUnexpectedEOF`: the caller re-watches from the last version, not relists.
        #[tokio::test]
        async fn a_clean_end_inside_a_frame_ends_the_stream_after_the_whole_frames() {
            let bytes = recorded();
            let first = encode_watch_frame("ADDED", &thing("a", "10")).len();
            for cut in [first + 2, first + 7] {
                let chunks = vec![Ok(Bytes::copy_from_slice(&bytes[..cut]))];
                assert_eq!(collect(chunks, 1 << 20).await, ["ADDED 10"], "cut at {cut}");
            }
        }

        /// An event whose envelope names another kind is skipped when a kind is expected.
        #[tokio::test]
        async fn events_of_another_kind_are_skipped_when_a_kind_is_expected() {
            let secret = encode(
                "v1",
                "Secret",
                &PartialObjectMetadata {
                    metadata: ObjectMeta {
                        name: Some("s".into()),
                        resource_version: Some("9".into()),
                        ..Default::default()
                    },
                    ..Default::default()
                },
            );
            let mut bytes = encode_watch_frame("ADDED", &secret);
            bytes.extend(recorded());
            let events: Vec<String> = WatchStream::protobuf(
                body(vec![Ok(bytes.into())]),
                1 << 20,
                "test".into(),
                ProtobufCodec::partial_object_metadata(),
            )
            .expect_kind("v1", "ConfigMap")
            .map(|e| match e {
                Ok(e) => format!(
                    "{:?} {}",
                    e.event_type(),
                    e.object().map_or("", |o| o.resource_version())
                ),
                Err(e) => format!("ERR {e}"),
            })
            .collect()
            .await;
            assert_eq!(events.len(), 5, "{events:?}");
            assert_eq!(events[0], "Added 10", "{events:?}");
        }

        /// Bit flips, truncations and overwritten length prefixes, a bounded number of cases:
        /// the stream yields events or one error and ends, and never panics.
        #[tokio::test]
        async fn mutated_streams_never_panic_and_end_after_an_error() {
            let bytes = recorded();
            let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for case in 0..300 {
                let mut b = bytes.clone();
                match case % 3 {
                    0 => {
                        let i = next() as usize % b.len();
                        b[i] ^= 1 << (next() % 8);
                    }
                    1 => b.truncate(next() as usize % b.len()),
                    _ => {
                        let i = next() as usize % b.len().saturating_sub(4);
                        b[i..i + 4].copy_from_slice(&(next() as u32).to_be_bytes());
                    }
                }
                let chunks = b.chunks(5).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
                let events = collect(chunks, 1 << 20).await;
                let errors = events.iter().filter(|e| e.starts_with("ERR")).count();
                let last_is_error = events.last().is_some_and(|e| e.starts_with("ERR"));
                assert!(
                    errors == 0 || (errors == 1 && last_is_error),
                    "case {case}: an error must end the stream: {events:?}"
                );
            }
        }
    }
}
