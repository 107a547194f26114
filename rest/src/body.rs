//! Reading a whole response body: the read-idle timeout, the per-object size limit, and the
//! check that a body to decode is JSON.
//!
//! - **Read-idle timeout** ([`Config::read_idle_timeout`](crate::Config::read_idle_timeout),
//!   60 s by default): a non-streaming body that sends no byte for that long fails, naming the
//!   setting. It is the only guard against a server or proxy that keeps an HTTP/1.1 connection
//!   open and stops sending; over HTTP/2 the connection's ping usually finds it first. The
//!   body of an error response (any non-2xx, read to find the server's `Status`) is one of
//!   these too, whatever the request: a watch or a stream whose server answers 500 and stalls
//!   fails the same way, the error naming the status.
//! - **The request's timeout** ([`Request::timeout`](crate::Request::timeout) or
//!   [`Config::timeout`](crate::Config::timeout)), where one is set, bounds reading the body of
//!   a non-streaming request and the error body of any request: [`ReadLimits`] holds both
//!   limits, and the error says which one ended the read.
//! - **Object size limit** ([`Config::max_object_size`](crate::Config::max_object_size),
//!   64 MiB by default), checked as the bytes arrive, so an oversized object is refused after
//!   at most the limit plus one chunk, never buffered whole. What is capped: each element of
//!   the top-level `items` array separately, and everything else of the body together (for a
//!   single object, the whole body; for a list, its `kind`, `metadata` and the brackets). A
//!   list as a whole is never capped: 50,000 Pods read as before. The same limit caps a watch
//!   line (one event: an object and its envelope), in [`crate::watch`].
//!
//! Bodies read as bytes ([`Request::bytes`](crate::Request::bytes): pod logs, OpenAPI
//! documents) get the read-idle timeout but no size limit: they are not objects.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt as _;
use kclient_apimachinery::{Error, TransportErrorKind};
use tokio::time::Instant;

/// The default of [`Config::max_object_size`](crate::Config::max_object_size): 64 MiB.
///
/// etcd stores values of at most about 1.5 MiB (its default request limit), so no object a
/// real API server sends comes near this; a watch line or list item this large is a broken or
/// hostile server, and refusing it bounds the memory one object can take. Tens of MiB also
/// leave room for aggregated API servers, which do not go through etcd.
pub const DEFAULT_MAX_OBJECT_SIZE: usize = 64 << 20;

/// The default of [`Config::read_idle_timeout`](crate::Config::read_idle_timeout): 60 s.
///
/// A healthy API server never pauses a response body this long (its own request timeout is
/// 60 s, and it writes a response once it is computed); client-go's transport finds a dead
/// HTTP/2 connection in about 45 s (a ping after 30 s idle, 15 s to answer), which this
/// matches in order while covering HTTP/1.1 too.
pub const DEFAULT_READ_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A JSON object larger than the configured limit.
#[derive(Debug, Clone)]
pub(crate) struct ObjectTooLarge {
    pub(crate) limit: usize,
    pub(crate) what: ObjectPart,
}

/// Which part of a body was too large.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ObjectPart {
    /// The element at this index of the list's `items`.
    Item(usize),
    /// The body outside the list's items (the whole body of a single object).
    Body,
    /// A watch event (one line).
    WatchEvent,
    /// A line of a text stream (a pod log).
    Line,
}

impl fmt::Display for ObjectTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.what {
            ObjectPart::Item(i) => write!(f, "item {i} of the list's items")?,
            ObjectPart::Body => f.write_str("the object")?,
            ObjectPart::WatchEvent => f.write_str("a watch event")?,
            ObjectPart::Line => f.write_str("a line")?,
        }
        write!(
            f,
            " is larger than {}, the limit set by Config::max_object_size; raise it if the \
             server really sends objects this large (etcd stores at most about 1.5 MiB)",
            size_text(self.limit)
        )
    }
}

impl std::error::Error for ObjectTooLarge {}

/// Holds a protobuf body (the `k8s\0` envelope) to the object size limit as a JSON body is
/// held: each element of a list's `items` (field 2 of a `...List` message) separately, and a
/// single object whole. It runs on the body read whole (the envelope's length prefixes give
/// every size at once), before the decoder reserves anything for it. A body that does not
/// parse passes: the decoder names what is wrong with it.
#[cfg(feature = "protobuf")]
pub(crate) fn check_protobuf_sizes(body: &[u8], limit: usize) -> Result<(), ObjectTooLarge> {
    use kclient_apimachinery::protobuf::{Reader, Unknown, WireType};
    let Ok(envelope) = Unknown::decode(body) else {
        return Ok(());
    };
    let too_large = |what| Err(ObjectTooLarge { limit, what });
    if !envelope.kind.ends_with("List") {
        return if envelope.raw.len() > limit {
            too_large(ObjectPart::Body)
        } else {
            Ok(())
        };
    }
    let mut list = Reader::new(envelope.raw);
    let mut item = 0;
    while let Ok(Some((field, wire))) = list.next_field() {
        if wire != WireType::Len {
            if list.skip(wire).is_err() {
                break;
            }
            continue;
        }
        let Ok(bytes) = list.bytes() else { break };
        if field == 2 {
            if bytes.len() > limit {
                return too_large(ObjectPart::Item(item));
            }
            item += 1;
        } else if bytes.len() > limit {
            return too_large(ObjectPart::Body);
        }
    }
    Ok(())
}

/// `64 MiB (67108864 bytes)`, or `1000 bytes`.
fn size_text(bytes: usize) -> String {
    const MIB: usize = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB ({bytes} bytes)", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A 2xx body whose `Content-Type` says it is not JSON (an HTML page from a proxy or a login
/// portal).
#[derive(Debug)]
pub(crate) struct NotJson {
    content_type: String,
}

impl fmt::Display for NotJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the response has Content-Type {:?}, not JSON: is the server URL right, or is a \
             proxy answering instead of the API server?",
            self.content_type
        )
    }
}

impl std::error::Error for NotJson {}

/// Refuses a `Content-Type` that is present and is not JSON (`application/json` with any
/// parameters, or a `+json` type). A missing one is taken as JSON, as client-go takes it as
/// the client's own content type.
pub(crate) fn check_json_content_type(content_type: Option<&str>) -> Result<(), NotJson> {
    let Some(content_type) = content_type else {
        return Ok(());
    };
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if media.is_empty() || media == "application/json" || media.ends_with("+json") {
        Ok(())
    } else {
        Err(NotJson {
            content_type: content_type.to_string(),
        })
    }
}

/// A request's timeout as the moment it ends (on tokio's clock), with the timeout itself to
/// name it in errors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    pub(crate) at: Instant,
    pub(crate) timeout: Duration,
}

impl Deadline {
    /// The deadline `timeout` from now; none when the clock cannot represent it (a timeout
    /// of centuries is no timeout).
    pub(crate) fn after(timeout: Duration) -> Option<Self> {
        Some(Deadline {
            at: Instant::now().checked_add(timeout)?,
            timeout,
        })
    }

    /// Whether it has passed.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    /// The time left until it passes (zero once it has).
    pub(crate) fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }
}

/// How long reading one body may take: `idle` bounds each wait for a chunk
/// ([`Config::read_idle_timeout`](crate::Config::read_idle_timeout)), `deadline` the whole
/// read (the request's timeout).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReadLimits {
    pub(crate) idle: Option<Duration>,
    pub(crate) deadline: Option<Deadline>,
}

/// Which of [`ReadLimits`] ends a wait for a chunk.
enum Limit {
    Idle(Duration),
    Deadline(Duration),
}

/// The next chunk of `chunks` (`None` at the end), within `limits`; `what` names the response
/// in errors ("the body of {what}").
pub(crate) async fn next_chunk<S>(
    chunks: &mut S,
    limits: ReadLimits,
    what: &str,
) -> Result<Option<Bytes>, Error>
where
    S: Stream<Item = Result<Bytes, Error>> + Unpin,
{
    let deadline_error = |t: Duration| {
        Error::transport(
            TransportErrorKind::Timeout,
            format!(
                "request timed out: the request's timeout of {t:?} passed while reading the \
                 body of {what}"
            ),
        )
    };
    // The limit that ends the wait first (the deadline when both end together).
    let idle_at = limits
        .idle
        .and_then(|idle| Some((Instant::now().checked_add(idle)?, idle)));
    let first = match (idle_at, limits.deadline) {
        (Some((at, idle)), Some(d)) if at < d.at => Some((at, Limit::Idle(idle))),
        (Some((at, idle)), None) => Some((at, Limit::Idle(idle))),
        (_, Some(d)) => Some((d.at, Limit::Deadline(d.timeout))),
        (None, None) => None,
    };
    let next = match first {
        None => chunks.next().await,
        Some((at, limit)) => match tokio::time::timeout_at(at, chunks.next()).await {
            Ok(next) => next,
            Err(_) => {
                return Err(match limit {
                    Limit::Deadline(t) => deadline_error(t),
                    Limit::Idle(idle) => Error::transport(
                        TransportErrorKind::Timeout,
                        format!(
                            "request timed out: no data for {idle:?} while reading the body of \
                             {what} (Config::read_idle_timeout)"
                        ),
                    ),
                });
            }
        },
    };
    match next {
        None => Ok(None),
        Some(Ok(chunk)) => Ok(Some(chunk)),
        // The transport's own timer for the same timeout (reqwest's, for a whole request) can
        // fire before ours: the same error either way.
        Some(Err(e)) if e.is_transport_timeout() => match limits.deadline {
            Some(d) if d.passed() => Err(deadline_error(d.timeout)),
            _ => Err(e),
        },
        Some(Err(e)) => Err(while_reading(e, what)),
    }
}

/// `e`, a failure of the connection while the body of `what` was read, told with `what` (the
/// transport's own error for a body cut short names no request), in the same class.
fn while_reading(e: Error, what: &str) -> Error {
    let kind = if e.is_connection_reset() {
        TransportErrorKind::ConnectionReset
    } else if e.is_transport_timeout() {
        TransportErrorKind::Timeout
    } else if e.is_connection_refused() {
        TransportErrorKind::ConnectionRefused
    } else if e.is_transport() {
        TransportErrorKind::Other
    } else {
        return e;
    };
    Error::transport(
        kind,
        BodyReadFailure {
            what: what.to_owned(),
            source: e,
        },
    )
}

/// A transport failure while reading the body of `what`.
#[derive(Debug)]
struct BodyReadFailure {
    what: String,
    source: Error,
}

impl fmt::Display for BodyReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (while reading the body of {})",
            self.source, self.what
        )
    }
}

impl std::error::Error for BodyReadFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Reads `chunks` to the end within `limits` (see [`next_chunk`]), and with `max_object` the
/// body is held to the object size limit as it arrives. `what` names the response in errors.
pub(crate) async fn read_body<S>(
    mut chunks: S,
    size_hint: Option<u64>,
    limits: ReadLimits,
    max_object: Option<usize>,
    what: &str,
) -> Result<Bytes, Error>
where
    S: Stream<Item = Result<Bytes, Error>> + Unpin,
{
    let mut check = max_object.map(ObjectSizeCheck::new);
    // A body no longer than the limit cannot hold an object longer than it: the structure is
    // followed only once the body grows past the limit (from its start), so bodies of usual
    // sizes cost nothing to check.
    let mut checked = 0;
    // The length a server announces is a hint, not a promise: never reserve more than this
    // from it (memory it does not fill costs nothing on Linux, but a lie costs nothing too).
    const MAX_RESERVE: u64 = 256 << 20;
    let reserve = size_hint.unwrap_or(0).min(MAX_RESERVE);
    let mut body = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
    loop {
        let Some(chunk) = next_chunk(&mut chunks, limits, what).await? else {
            return Ok(Bytes::from(body));
        };
        body.extend_from_slice(&chunk);
        if let Some(check) = &mut check
            && body.len() > check.limit
        {
            check
                .push(&body[checked..])
                .map_err(|e| Error::decode(what.to_string(), e))?;
            checked = body.len();
        }
    }
}

/// Follows a JSON body's structure as its bytes arrive, as far as the size limit needs: the
/// strings (so brackets inside them do not count), the nesting depth, the keys of the top
/// object (to find `items`), and the elements of `items`. It checks no other grammar; the
/// decoder does that.
#[derive(Debug)]
pub(crate) struct ObjectSizeCheck {
    limit: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1 (in the top object), whether the next string is a key.
    expect_key: bool,
    /// The key being read at depth 1, while it is short enough to be `items`.
    key: Option<Vec<u8>>,
    /// The last key of the top object was `items`.
    key_is_items: bool,
    /// Inside the top object's `items` array.
    in_items: bool,
    item: usize,
    /// Bytes of the current element of `items`.
    item_bytes: usize,
    /// Bytes of everything else.
    rest_bytes: usize,
}

impl ObjectSizeCheck {
    pub(crate) fn new(limit: usize) -> Self {
        ObjectSizeCheck {
            limit,
            depth: 0,
            in_string: false,
            escaped: false,
            expect_key: false,
            key: None,
            key_is_items: false,
            in_items: false,
            item: 0,
            item_bytes: 0,
            rest_bytes: 0,
        }
    }

    /// Counts `n` bytes against the part they belong to.
    fn count(&mut self, n: usize) -> Result<(), ObjectTooLarge> {
        let (bytes, what) = if self.in_items {
            (&mut self.item_bytes, ObjectPart::Item(self.item))
        } else {
            (&mut self.rest_bytes, ObjectPart::Body)
        };
        *bytes += n;
        if *bytes > self.limit {
            return Err(ObjectTooLarge {
                limit: self.limit,
                what,
            });
        }
        Ok(())
    }

    /// Follows the next bytes of the body. Bytes are counted in runs, at the boundaries
    /// between parts and at the end of `chunk`.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<(), ObjectTooLarge> {
        // `chunk[counted..i]` is not yet counted.
        let mut counted = 0;
        let mut i = 0;
        while i < chunk.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Jump to the next quote or backslash.
                let rest = &chunk[i..];
                let run = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                if let Some(key) = &mut self.key {
                    if key.len() + run <= 8 {
                        key.extend_from_slice(&rest[..run]);
                    } else {
                        self.key = None;
                    }
                }
                i += run;
                let Some(&b) = chunk.get(i) else {
                    break;
                };
                i += 1;
                if b == b'\\' {
                    self.escaped = true;
                    // A key with escapes is not `items` as written.
                    self.key = None;
                } else {
                    self.in_string = false;
                    if let Some(key) = self.key.take() {
                        self.key_is_items = key == b"items";
                    }
                }
                continue;
            }
            // Jump to the next byte that matters outside strings.
            let Some(at) = chunk[i..]
                .iter()
                .position(|b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']' | b','))
            else {
                break;
            };
            i += at;
            let b = chunk[i];
            i += 1;
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && self.expect_key {
                        self.expect_key = false;
                        self.key = Some(Vec::new());
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.expect_key = b == b'{';
                    } else if self.depth == 2 && b == b'[' && self.key_is_items {
                        // The `[` counts with the rest; the items start after it.
                        self.count(i - counted)?;
                        counted = i;
                        self.in_items = true;
                        self.item = 0;
                        self.item_bytes = 0;
                    }
                }
                b'}' | b']' => {
                    if self.depth == 2 && self.in_items {
                        // The last item ends before the `]`.
                        self.count(i - 1 - counted)?;
                        counted = i - 1;
                        self.in_items = false;
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b',' if self.depth == 2 && self.in_items => {
                    self.count(i - 1 - counted)?;
                    counted = i;
                    self.item += 1;
                    self.item_bytes = 0;
                }
                b',' if self.depth == 1 => {
                    self.expect_key = true;
                    self.key_is_items = false;
                }
                _ => {}
            }
        }
        self.count(chunk.len() - counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(limit: usize, chunks: &[&[u8]]) -> Result<(), ObjectTooLarge> {
        let mut c = ObjectSizeCheck::new(limit);
        for chunk in chunks {
            c.push(chunk)?;
        }
        Ok(())
    }

    #[test]
    fn items_are_capped_one_by_one_and_the_rest_together() {
        let item = |n: usize| format!(r#"{{"metadata":{{"name":"{}"}}}}"#, "x".repeat(n));
        let list = |items: &[String]| {
            format!(
                r#"{{"kind":"List","metadata":{{"resourceVersion":"1"}},"items":[{}]}}"#,
                items.join(",")
            )
        };
        // 1,000 items of ~125 bytes under a limit of 200: the list (125 KB) is fine.
        let many: Vec<String> = (0..1000).map(|_| item(100)).collect();
        let body = list(&many);
        assert!(body.len() > 100_000);
        check(200, &[body.as_bytes()]).unwrap();
        // Byte by byte too.
        let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        check(200, &bytes).unwrap();
        // One item over the limit is named.
        let mut some = many.clone();
        some[500] = item(300);
        let err = check(200, &[list(&some).as_bytes()]).unwrap_err();
        assert!(matches!(err.what, ObjectPart::Item(500)), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("item 500 of the list's items is larger than 200 bytes"),
            "{err}"
        );
        // Brackets, commas and escaped quotes inside strings change nothing.
        let tricky = format!(
            r#"{{"items":[{{"a":"],[{{\",\\"}},{},{{"b":"\"items\""}}]}}"#,
            item(10)
        );
        check(200, &[tricky.as_bytes()]).unwrap();
        // A single object is capped whole, including a huge string or array inside it.
        let big = format!(r#"{{"data":{{"k":"{}"}}}}"#, "y".repeat(300));
        let err = check(200, &[big.as_bytes()]).unwrap_err();
        assert!(matches!(err.what, ObjectPart::Body), "{err:?}");
        let array = format!(r#"{{"spec":{{"list":[{}1]}}}}"#, "1,".repeat(200));
        assert!(check(200, &[array.as_bytes()]).is_err());
        // `items` below the top object is not a list's items; an escaped key is not `items`.
        let nested = format!(r#"{{"spec":{{"items":[{}]}}}}"#, many[..10].join(","));
        assert!(check(200, &[nested.as_bytes()]).is_err());
        let escaped = format!(r#"{{"\u0069tems":[{}]}}"#, many[..10].join(","));
        assert!(check(200, &[escaped.as_bytes()]).is_err());
        // The rest of a list counts together: huge metadata is refused.
        let meta = format!(r#"{{"metadata":{{"x":"{}"}},"items":[]}}"#, "z".repeat(300));
        assert!(check(200, &[meta.as_bytes()]).is_err());
    }

    #[test]
    fn content_types() {
        for ok in [
            None,
            Some("application/json"),
            Some("application/json; charset=utf-8"),
            Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
            Some("APPLICATION/JSON"),
            Some("application/merge-patch+json"),
            Some(""),
        ] {
            assert!(check_json_content_type(ok).is_ok(), "{ok:?}");
        }
        for bad in [
            "text/html",
            "text/html; charset=utf-8",
            "text/plain",
            "application/yaml",
        ] {
            let err = check_json_content_type(Some(bad)).unwrap_err();
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    /// A connection cut while the body is read (hyper's "end of file before message length
    /// reached" names no request) is told with the response it cut, in the same class.
    #[tokio::test]
    async fn a_body_cut_short_names_the_response() {
        let cut = || {
            futures_util::stream::iter([
                Ok(Bytes::from_static(b"{\"kind\":")),
                Err(Error::transport(
                    TransportErrorKind::ConnectionReset,
                    "end of file before message length reached",
                )),
            ])
        };
        let limits = ReadLimits {
            idle: None,
            deadline: None,
        };
        let err = read_body(cut(), None, limits, None, "GET /apis response")
            .await
            .unwrap_err();
        assert!(err.is_connection_reset(), "{err:?}");
        assert_eq!(
            err.to_string(),
            "connection reset or closed early: end of file before message length reached \
             (while reading the body of GET /apis response)"
        );
        // Not a transport error: passed on as it is.
        let other = futures_util::stream::iter([Err::<Bytes, _>(Error::new_internal_error("x"))]);
        let err = read_body(other, None, limits, None, "GET /apis response")
            .await
            .unwrap_err();
        assert!(!err.to_string().contains("/apis"), "{err}");
    }

    /// A body that never sends ends on whichever limit comes first, and the error names it.
    #[tokio::test(start_paused = true)]
    async fn a_silent_body_ends_on_the_first_limit() {
        let silent = || futures_util::stream::pending::<Result<Bytes, Error>>();
        let read = |limits| async move {
            read_body(silent(), None, limits, None, "GET /x response")
                .await
                .unwrap_err()
        };
        let idle = Some(Duration::from_secs(1));
        let err = read(ReadLimits {
            idle,
            deadline: Deadline::after(Duration::from_secs(5)),
        })
        .await;
        assert!(err.is_transport_timeout(), "{err:?}");
        assert!(
            err.to_string().contains(
                "no data for 1s while reading the body of GET /x response (Config::read_idle_timeout)"
            ),
            "{err}"
        );
        let err = read(ReadLimits {
            idle,
            deadline: Deadline::after(Duration::from_millis(500)),
        })
        .await;
        assert!(err.is_transport_timeout(), "{err:?}");
        assert_eq!(
            err.to_string(),
            "request timed out: the request's timeout of 500ms passed while reading the body of \
             GET /x response"
        );
        let err = read(ReadLimits {
            idle: None,
            deadline: Deadline::after(Duration::from_secs(2)),
        })
        .await;
        assert!(err.to_string().contains("timeout of 2s passed"), "{err}");
    }

    /// An endless body (one object whose string never ends) is refused after the limit, having
    /// read at most a chunk more: it is never buffered whole.
    #[tokio::test]
    async fn an_endless_object_is_refused_after_the_limit_without_buffering_it() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        for head in [
            &br#"{"kind":"PodList","items":[{"metadata":{"name":""#[..],
            &br#"{"kind":"ConfigMap","data":{"k":""#[..],
        ] {
            let pulled = Arc::new(AtomicUsize::new(0));
            let counter = pulled.clone();
            let chunk = Bytes::from(vec![b'a'; 64 << 10]);
            let first = Bytes::from_static(head);
            let endless = futures_util::stream::iter(std::iter::once(first).chain(
                std::iter::repeat(chunk).inspect(move |_| {
                    counter.fetch_add(1, Ordering::Relaxed);
                }),
            ))
            .map(Ok);
            let limit = 1 << 20;
            let err = read_body(
                Box::pin(endless),
                None,
                ReadLimits::default(),
                Some(limit),
                "GET /x response",
            )
            .await
            .unwrap_err();
            assert!(err.is_decode(), "{err:?}");
            assert!(
                err.to_string()
                    .contains("1 MiB (1048576 bytes), the limit set by Config::max_object_size"),
                "{err}"
            );
            let pulled = pulled.load(Ordering::Relaxed);
            assert!(
                pulled <= limit / (64 << 10) + 1,
                "{pulled} chunks of 64 KiB read"
            );
        }
    }
}

#[cfg(all(test, feature = "protobuf"))]
mod protobuf_tests {
    use kclient_apimachinery::protobuf::{MAGIC, WireType, Writer};

    use super::*;

    /// A `k8s\0` envelope of `kind` around `raw`.
    fn envelope(kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut type_meta = Writer::new();
        type_meta.tag(1, WireType::Len);
        type_meta.bytes(b"v1");
        type_meta.tag(2, WireType::Len);
        type_meta.bytes(kind.as_bytes());
        let mut w = Writer::from_vec(MAGIC.to_vec());
        w.tag(1, WireType::Len);
        w.bytes(&type_meta.into_vec());
        w.tag(2, WireType::Len);
        w.bytes(raw);
        w.into_vec()
    }

    /// A list message: a small ListMeta, then items of these sizes.
    fn list(items: &[usize]) -> Vec<u8> {
        let mut w = Writer::new();
        w.tag(1, WireType::Len);
        w.bytes(b"\x12\x0242");
        for &size in items {
            w.tag(2, WireType::Len);
            w.bytes(&vec![0u8; size]);
        }
        w.into_vec()
    }

    #[test]
    fn a_single_object_is_held_whole_and_a_list_item_by_item() {
        let limit = 1000;
        let check = |body: Vec<u8>| check_protobuf_sizes(&body, limit).map_err(|e| e.to_string());
        assert!(check(envelope("Pod", &vec![0; 1000])).is_ok());
        let too_large = check(envelope("Pod", &vec![0; 1001])).unwrap_err();
        assert!(
            too_large.starts_with("the object is larger than 1000 bytes"),
            "{too_large}"
        );
        // Items under the limit, the list far over it: read.
        assert!(check(envelope("PodList", &list(&[900; 10]))).is_ok());
        let item = check(envelope("PodList", &list(&[10, 900, 1001]))).unwrap_err();
        assert!(
            item.starts_with("item 2 of the list's items is larger"),
            "{item}"
        );
        // Not an envelope, or cut short: left to the decoder.
        assert!(check(b"{\"kind\":\"Pod\"}".to_vec()).is_ok());
        let mut cut = envelope("PodList", &list(&[10, 2000]));
        cut.truncate(cut.len() - 100);
        assert!(check(cut).is_ok());
    }
}
