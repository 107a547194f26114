//! [`MisbehavingServer`]: a scripted HTTP/1.1 server on loopback that answers what a broken
//! apiserver, proxy or aggregated API can answer (truncated and invalid bodies, wrong content
//! types, endless lines, stalls, garbage in a watch) so tests can hold kclient to clear errors,
//! bounded memory and bounded request rates. Every request is recorded with its arrival time.
//!
//! It is not an API server: a test gives it one function from request to [`Reply`] and
//! changes what that function answers as the scenario goes on ("now behave").

use std::sync::Arc;
use std::time::Duration;

use kclient_rest::{Client, Config};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The largest request head the server reads; clients send far less.
const MAX_HEAD: usize = 64 * 1024;

/// Bytes written per write when a reply generates its body.
const GENERATED_CHUNK: usize = 64 * 1024;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string, without `?`; empty if none.
    pub query: String,
    /// When the request head arrived.
    pub at: Instant,
}

impl SeenRequest {
    /// Whether the query asks for a watch (`watch=true` or `watch=1`).
    pub fn is_watch(&self) -> bool {
        self.query
            .split('&')
            .any(|kv| kv == "watch=true" || kv == "watch=1")
    }

    /// The value of query parameter `name`, still percent-encoded.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k == name).then_some(v)
        })
    }
}

/// How a streamed body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The body ends properly.
    Finish,
    /// The connection is closed in the middle of the body.
    Close,
    /// Nothing more is sent and the connection stays open (a stall).
    Hang,
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with a `Content-Length`.
    Body {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The body.
        body: Vec<u8>,
    },
    /// A chunked response whose parts are written one after another, each after its delay;
    /// then it ends as `end` says. Watches are answered this way.
    Stream {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The parts with the delay before each.
        parts: Vec<(Duration, Vec<u8>)>,
        /// How the body ends.
        end: StreamEnd,
    },
    /// A chunked response of `prefix`, then `len` bytes of `fill` generated as they are sent
    /// (never held in memory), then `suffix`: an endless line, a huge string, a huge body.
    Generated {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// Bytes before the generated run.
        prefix: Vec<u8>,
        /// The byte repeated.
        fill: u8,
        /// How many times.
        len: u64,
        /// Bytes after the generated run.
        suffix: Vec<u8>,
        /// How the body ends.
        end: StreamEnd,
    },
    /// Headers promising `Content-Length: promised`, then only `body`, then `end` (a body
    /// cut short by a proxy, or a server that stalls after its headers).
    Truncated {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The length the headers promise.
        promised: u64,
        /// What is actually sent.
        body: Vec<u8>,
        /// [`StreamEnd::Close`] or [`StreamEnd::Hang`].
        end: StreamEnd,
    },
    /// The connection is closed without an answer.
    Close,
}

impl Reply {
    /// A 200 `application/json` body.
    pub fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Body {
            status: 200,
            content_type: "application/json".to_owned(),
            body: body.into(),
        }
    }

    /// A finished watch stream: each line is one `application/json` watch event.
    pub fn watch_lines(lines: impl IntoIterator<Item = Vec<u8>>, end: StreamEnd) -> Reply {
        Reply::Stream {
            status: 200,
            content_type: "application/json".to_owned(),
            parts: lines
                .into_iter()
                .map(|mut line| {
                    line.push(b'\n');
                    (Duration::ZERO, line)
                })
                .collect(),
            end,
        }
    }
}

type Handler = dyn Fn(&SeenRequest) -> Reply + Send + Sync;

struct Shared {
    handler: Mutex<Arc<Handler>>,
    requests: Mutex<Vec<SeenRequest>>,
}

/// A scripted HTTP/1.1 server on `127.0.0.1` (plain HTTP, one request per connection).
///
/// ```no_run
/// # async fn example() {
/// use kclient_testenv::{MisbehavingServer, Reply};
///
/// let server = MisbehavingServer::start(|_req| Reply::Body {
///     status: 200,
///     content_type: "text/html".into(),
///     body: b"<html>a proxy's login page</html>".to_vec(),
/// })
/// .await;
/// let err = server
///     .client()
///     .get()
///     .group_version("", "v1")
///     .resource("pods")
///     .send::<serde_json::Value>()
///     .await
///     .unwrap_err();
/// println!("{err}");
/// assert_eq!(server.requests().len(), 1);
/// # }
/// ```
pub struct MisbehavingServer {
    url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for MisbehavingServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MisbehavingServer")
            .field("url", &self.url)
            .field("requests", &self.shared.requests.lock().len())
            .finish()
    }
}

impl Drop for MisbehavingServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MisbehavingServer {
    /// Starts the server on a free loopback port, answering with `handler`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start(handler: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for the misbehaving server");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("the bound address")
        );
        let shared = Arc::new(Shared {
            handler: Mutex::new(Arc::new(handler)),
            requests: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(serve(stream, Arc::clone(&shared)));
                }
            }
        });
        MisbehavingServer { url, shared, task }
    }

    /// Replaces what the server answers from now on.
    pub fn set_handler(&self, handler: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static) {
        *self.shared.handler.lock() = Arc::new(handler);
    }

    /// The server's base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A config for the server with no credentials.
    pub fn config(&self) -> Config {
        Config::new(self.url.clone())
    }

    /// A client for the server with no credentials.
    ///
    /// # Panics
    ///
    /// When the client cannot be built (it always can for a plain loopback URL).
    pub fn client(&self) -> Client {
        Client::new(self.config()).expect("a client for the misbehaving server")
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.shared.requests.lock().clone()
    }

    /// The most requests matching `filter` that arrived within any `window` (the request-rate
    /// guard: a retry loop that ignores its backoff shows up here).
    pub fn max_requests_in(
        &self,
        window: Duration,
        filter: impl Fn(&SeenRequest) -> bool,
    ) -> usize {
        let times: Vec<Instant> = self
            .shared
            .requests
            .lock()
            .iter()
            .filter(|r| filter(r))
            .map(|r| r.at)
            .collect();
        most_within(&times, window)
    }
}

/// The most of `times` (in ascending order) that fall within any one `window`: the measure of
/// the request-rate guards in fault tests.
pub fn most_within(times: &[Instant], window: Duration) -> usize {
    let mut most = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end].duration_since(times[start]) >= window {
            start += 1;
        }
        most = most.max(end - start + 1);
    }
    most
}

/// Reads one request head, records it, writes the reply.
async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let Some(request) = read_head(&mut stream).await else {
        return;
    };
    shared.requests.lock().push(request.clone());
    let handler = Arc::clone(&shared.handler.lock());
    let reply = handler(&request);
    // A write fails once the client has gone: the reply ends there.
    let _ = write_reply(&mut stream, reply).await;
}

async fn read_head(stream: &mut TcpStream) -> Option<SeenRequest> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let at = Instant::now();
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next()?.split(' ');
    let method = words.next()?.to_owned();
    let target = words.next()?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Some(SeenRequest {
        method,
        path: path.to_owned(),
        query: query.to_owned(),
        at,
    })
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Close => Ok(()),
        Reply::Body {
            status,
            content_type,
            body,
        } => {
            let head = head(status, &content_type, Some(body.len() as u64));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            stream.flush().await
        }
        Reply::Truncated {
            status,
            content_type,
            promised,
            body,
            end,
        } => {
            let head = head(status, &content_type, Some(promised));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            stream.flush().await?;
            finish(stream, end, false).await
        }
        Reply::Stream {
            status,
            content_type,
            parts,
            end,
        } => {
            stream
                .write_all(head(status, &content_type, None).as_bytes())
                .await?;
            stream.flush().await?;
            for (delay, part) in parts {
                tokio::time::sleep(delay).await;
                write_chunk(stream, &part).await?;
            }
            finish(stream, end, true).await
        }
        Reply::Generated {
            status,
            content_type,
            prefix,
            fill,
            len,
            suffix,
            end,
        } => {
            stream
                .write_all(head(status, &content_type, None).as_bytes())
                .await?;
            write_chunk(stream, &prefix).await?;
            let block = vec![fill; GENERATED_CHUNK];
            let mut left = len;
            while left > 0 {
                let n = left.min(GENERATED_CHUNK as u64) as usize;
                write_chunk(stream, &block[..n]).await?;
                left -= n as u64;
            }
            write_chunk(stream, &suffix).await?;
            finish(stream, end, true).await
        }
    }
}

fn head(status: u16, content_type: &str, length: Option<u64>) -> String {
    let framing = match length {
        Some(n) => format!("Content-Length: {n}"),
        None => "Transfer-Encoding: chunked".to_owned(),
    };
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\n{framing}\r\nConnection: close\r\n\r\n",
        reason(status)
    )
}

async fn write_chunk(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    stream
        .write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    stream.write_all(data).await?;
    stream.write_all(b"\r\n").await?;
    stream.flush().await
}

async fn finish(stream: &mut TcpStream, end: StreamEnd, chunked: bool) -> std::io::Result<()> {
    match end {
        StreamEnd::Finish => {
            if chunked {
                stream.write_all(b"0\r\n\r\n").await?;
            }
            stream.flush().await
        }
        StreamEnd::Close => stream.shutdown().await,
        StreamEnd::Hang => {
            // Keep the connection open until the client goes away.
            let mut buf = [0u8; 64];
            while stream.read(&mut buf).await.is_ok_and(|n| n > 0) {}
            Ok(())
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
